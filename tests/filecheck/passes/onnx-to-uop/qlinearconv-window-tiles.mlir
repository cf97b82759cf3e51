// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-word-taps=true}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-word-taps=true weight-cache-bytes=64}' | filecheck %s

// With conv-word-taps (the Cortex-M4's pipeline), an int8 3x3 Conv over a channels-last padded
// copy of X whose runs of taps are whole words (4 | 3·C; here C = 4: 12 bytes, 3 words) takes
// conv_window._window_tiles, whatever the weight cache: per pair of output channels, its two
// rows (W' in `window_weights`' order: per word, each channel's bytes 0, 2, 1, 3) widened into
// an int16 scratch buffer [2·9·C], then per pair of pixels one arm_dsp.smlad_window over the
// window's 3 rows of 3 words (x_row: the padded row, 7·4 bytes; x_next: the second pixel's run,
// stride·C bytes on), its 4 sums requantized (channel i, pixel j as r_ij: r00, r10, r01, r11).
// CHECK-LABEL: func.func @window
// CHECK-DAG:     %[[SOURCE:.*]] = uop.define_global "constant" {{[0-9]+}} "y_columns_window_weights" value dense_resource<y_columns_window_weights> : tensor<144xi8> : !uop.buffer<144xi8>
// CHECK-DAG:     %[[PAIR:.*]] = uop.define_local "y_columns_weights" : !uop.buffer<72xi16>
// CHECK-DAG:     %[[ROWS:.*]] = uop.view %y_padded : !uop.buffer<168xi8> -> !uop.view<1x6x28xi8, strides [168, 28, 1], offset 0>
// CHECK-DAG:     %[[Y:.*]] = uop.view %y : !uop.buffer<80xi8> -> !uop.view<1x4x4x5xi8, strides [80, 20, 5, 1], offset 0>
// CHECK-NOT:     y_channels_last_weights
// CHECK:         %[[ZERO:.*]] = uop.const 0 : i32
// CHECK:         uop.range %[[N:.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range %[[M:.*]] = 0 to 4 step 2 {
// CHECK:             %[[M1:.*]] = uop.add %[[M]], %{{.*}} : index
// CHECK:             %[[BASE:.*]] = uop.mul %[[M]], %{{.*}} : index
// CHECK-NEXT:        uop.range %[[K:.*]] = 0 to 72 {
// CHECK-NEXT:          %[[AT:.*]] = uop.add %[[BASE]], %[[K]] : index
// CHECK-NEXT:          %[[SRC:.*]] = uop.gep %[[SOURCE]][%[[AT]]] : !uop.buffer<144xi8>
// CHECK-NEXT:          %[[B:.*]] = uop.load %[[SRC]] : i8
// CHECK-NEXT:          %[[H:.*]] = uop.cast %[[B]] : i8 to i16
// CHECK-NEXT:          %[[DST:.*]] = uop.gep %[[PAIR]][%[[K]]] : !uop.buffer<72xi16>
// CHECK-NEXT:          uop.store %[[H]], %[[DST]] : i16
// CHECK-NEXT:        }
// CHECK-NEXT:        uop.range %[[OH:.*]] = 0 to 4 {
// CHECK-NEXT:          uop.range %{{.*}} = 0 to 3 {
// CHECK:                 %[[Q:.*]] = uop.min %{{.*}}, %{{.*}} : index
// CHECK:                 %[[Q1:.*]] = uop.add %[[Q]], %{{.*}} : index
// CHECK:                 %[[PX:.*]] = uop.gep %[[ROWS]][%[[N]], %{{.*}}, %{{.*}}] : !uop.view<1x6x28xi8, strides [168, 28, 1], offset 0>
// CHECK:                 %[[PW:.*]] = uop.gep %[[PAIR]][%{{.*}}] : !uop.buffer<72xi16>
// CHECK-NEXT:            %[[R00:.*]], %[[R10:.*]], %[[R01:.*]], %[[R11:.*]] = arm_dsp.smlad_window %[[PX]], %[[PW]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]] {rows = #builtin.int<3>, steps = #builtin.int<3>, x_row = #builtin.int<28>, x_next = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i16>
// CHECK:                 uop.add %[[R00]], %{{.*}} : i32
// CHECK:                 uop.gep %[[Y]][%[[N]], %[[M]], %[[OH]], %[[Q]]]
// CHECK:                 uop.add %[[R01]], %{{.*}} : i32
// CHECK:                 uop.gep %[[Y]][%[[N]], %[[M]], %[[OH]], %[[Q1]]]
// CHECK:                 uop.add %[[R10]], %{{.*}} : i32
// CHECK:                 uop.gep %[[Y]][%[[N]], %[[M1]], %[[OH]], %[[Q]]]
// CHECK:                 uop.add %[[R11]], %{{.*}} : i32
// CHECK:                 uop.gep %[[Y]][%[[N]], %[[M1]], %[[OH]], %[[Q1]]]
// CHECK-NOT:             uop.mulacc
// CHECK:         func.return
func.func @window(%x: tensor<1x4x4x5xi8>) -> tensor<1x4x4x5xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[-6, -1, 4], [-4, 1, 6], [-2, 3, -5]], [[0, 5, -3], [2, -6, -1], [4, -4, 1]], [[6, -2, 3], [-5, 0, 5], [-3, 2, -6]], [[-1, 4, -4], [1, 6, -2], [3, -5, 0]]], [[[5, -3, 2], [-6, -1, 4], [-4, 1, 6]], [[-2, 3, -5], [0, 5, -3], [2, -6, -1]], [[4, -4, 1], [6, -2, 3], [-5, 0, 5]], [[-3, 2, -6], [-1, 4, -4], [1, 6, -2]]], [[[3, -5, 0], [5, -3, 2], [-6, -1, 4]], [[-4, 1, 6], [-2, 3, -5], [0, 5, -3]], [[2, -6, -1], [4, -4, 1], [6, -2, 3]], [[-5, 0, 5], [-3, 2, -6], [-1, 4, -4]]], [[[1, 6, -2], [3, -5, 0], [5, -3, 2]], [[-6, -1, 4], [-4, 1, 6], [-2, 3, -5]], [[0, 5, -3], [2, -6, -1], [4, -4, 1]], [[6, -2, 3], [-5, 0, 5], [-3, 2, -6]]]]> : tensor<4x4x3x3xi8>} : () -> tensor<4x4x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x5xi8>, tensor<f32>, tensor<i8>, tensor<4x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x4x5xi8>
  func.return %y : tensor<1x4x4x5xi8>
}

// -----

// Stride 2: the pair's second pixel is 2·C bytes on (x_next = 8), each window's first row at
// 2·oh of the padded copy (7 rows of 7·4 bytes).
// CHECK-LABEL: func.func @strided
// CHECK:         %[[ROWS:.*]] = uop.view %y_padded : !uop.buffer<196xi8> -> !uop.view<1x7x28xi8, strides [196, 28, 1], offset 0>
// CHECK:         uop.range %[[OH:.*]] = 0 to 3 {
// CHECK:           %[[ROW:.*]] = uop.mul %[[OH]], %{{.*}} : index
// CHECK-NEXT:      %[[PX:.*]] = uop.gep %[[ROWS]][%{{.*}}, %[[ROW]], %{{.*}}]
// CHECK:           arm_dsp.smlad_window %[[PX]], %{{.*}} {rows = #builtin.int<3>, steps = #builtin.int<3>, x_row = #builtin.int<28>, x_next = #builtin.int<8>} : !uop.ptr<i8>, !uop.ptr<i16>
// CHECK:         func.return

func.func @strided(%x: tensor<1x4x5x5xi8>) -> tensor<1x4x3x3xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[-6, -1, 4], [-4, 1, 6], [-2, 3, -5]], [[0, 5, -3], [2, -6, -1], [4, -4, 1]], [[6, -2, 3], [-5, 0, 5], [-3, 2, -6]], [[-1, 4, -4], [1, 6, -2], [3, -5, 0]]], [[[5, -3, 2], [-6, -1, 4], [-4, 1, 6]], [[-2, 3, -5], [0, 5, -3], [2, -6, -1]], [[4, -4, 1], [6, -2, 3], [-5, 0, 5]], [[-3, 2, -6], [-1, 4, -4], [1, 6, -2]]], [[[3, -5, 0], [5, -3, 2], [-6, -1, 4]], [[-4, 1, 6], [-2, 3, -5], [0, 5, -3]], [[2, -6, -1], [4, -4, 1], [6, -2, 3]], [[-5, 0, 5], [-3, 2, -6], [-1, 4, -4]]], [[[1, 6, -2], [3, -5, 0], [5, -3, 2]], [[-6, -1, 4], [-4, 1, 6], [-2, 3, -5]], [[0, 5, -3], [2, -6, -1], [4, -4, 1]], [[6, -2, 3], [-5, 0, 5], [-3, 2, -6]]]]> : tensor<4x4x3x3xi8>} : () -> tensor<4x4x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xi8>, tensor<f32>, tensor<i8>, tensor<4x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x3x3xi8>
  func.return %y : tensor<1x4x3x3xi8>
}
