// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-word-taps=true}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s --check-prefix=OFF

// With conv-word-taps (the Cortex-M4's pipeline), an int8 3x3 Conv over 4 or more channels with
// constant weights takes the window's column form (conv_columns.window_columns): X padded
// (with its zero point), then per block of 2 output pixels (H·W order) each pixel's window
// copied into the column [2][kh][kw][C], channels innermost as the repacked weights
// W'[m, kh, kw, c]; the 2 x 2 register tiles then reduce over K = 9·C contiguous int8 in both
// operands (word loads for arm-dsp-dot), where NCHW reads gathered X a byte at a time.
// CHECK-LABEL: func.func @window
// CHECK:         %y_columns = uop.define_local "y_columns" : !uop.buffer<72xi8>
// CHECK:         %[[PADDED:.*]] = uop.view %y_padded : !uop.buffer<144xi8> -> !uop.view<1x4x6x6xi8, strides [144, 36, 6, 1], offset 0>
// CHECK-NEXT:    %[[COL:.*]] = uop.view %y_columns : !uop.buffer<72xi8> -> !uop.view<2x3x3x4xi8, strides [36, 12, 4, 1], offset 0>
// CHECK-NEXT:    %[[FLAT:.*]] = uop.view %y_columns : !uop.buffer<72xi8> -> !uop.view<2x36xi8, strides [36, 1], offset 0>
// CHECK-NEXT:    %[[W:.*]] = uop.view %y_channels_last_weights : !uop.buffer<72xi8> -> !uop.view<2x36xi8, strides [36, 1], offset 0>
// CHECK-NEXT:    %[[Y:.*]] = uop.view %y : !uop.buffer<32xi8> -> !uop.view<1x2x16xi8, strides [32, 16, 1], offset 0>
// CHECK:           uop.range %[[B:.*]] = 0 to 8 {
// CHECK-NEXT:        %{{.*}} = uop.const 2 : index
// CHECK-NEXT:        %[[P:.*]] = uop.mul %[[B]], %{{.*}} : index
// CHECK-NEXT:        uop.range %[[J:.*]] = 0 to 2 {
// CHECK-NEXT:          %[[AT:.*]] = uop.add %[[P]], %[[J]] : index
// CHECK-NEXT:          %{{.*}} = uop.const 4 : index
// CHECK-NEXT:          %[[OH:.*]] = uop.div %[[AT]], %{{.*}} : index
// CHECK-NEXT:          %{{.*}} = uop.const 4 : index
// CHECK-NEXT:          %[[OW:.*]] = uop.rem %[[AT]], %{{.*}} : index
// CHECK-NEXT:          uop.range %[[KH:.*]] = 0 to 3 {
// CHECK-NEXT:            uop.range %[[KW:.*]] = 0 to 3 {
// CHECK-NEXT:              uop.range %[[C:.*]] = 0 to 4 {
// CHECK:                     %{{.*}} = uop.gep %[[PADDED]][%[[N:[0-9]+]], %[[C]], %{{.*}}, %{{.*}}]
// CHECK-NEXT:                %[[V:.*]] = uop.load
// CHECK-NEXT:                %[[TO:.*]] = uop.gep %[[COL]][%[[J]], %[[KH]], %[[KW]], %[[C]]]
// CHECK-NEXT:                uop.store %[[V]], %[[TO]] : i8
// CHECK:             uop.range %[[M:.*]] = 0 to 2 step 2 {
// CHECK:               uop.define_acc 0 : i32
// CHECK-NEXT:          uop.define_acc 0 : i32
// CHECK-NEXT:          uop.define_acc 0 : i32
// CHECK-NEXT:          uop.define_acc 0 : i32
// CHECK-NEXT:          uop.range %[[K:.*]] = 0 to 36 {
// CHECK:                 uop.gep %[[FLAT]][%{{.*}}, %[[K]]]
// CHECK:                 uop.gep %[[FLAT]][%{{.*}}, %[[K]]]
// CHECK:                 uop.gep %[[W]][%[[M]], %[[K]]]
// CHECK:                 uop.gep %[[W]][%{{.*}}, %[[K]]]
// CHECK:                 uop.mulacc
// CHECK-NEXT:            uop.mulacc
// CHECK-NEXT:            uop.mulacc
// CHECK-NEXT:            uop.mulacc
// CHECK-NEXT:          }
// CHECK:               uop.gep %[[Y]][%[[N]], %[[M]], %[[P]]]
// CHECK:         func.return

// Elsewhere the taps over the channels read X where it is (no column).
// OFF-LABEL: func.func @window
// OFF-NOT:       columns
// OFF:           func.return
func.func @window(%x: tensor<1x4x4x4xi8>) -> tensor<1x2x4x4xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[-5, -4, -3], [-3, -2, -1], [-1, 0, 1]], [[-2, -1, 0], [0, 1, 2], [2, 3, 4]], [[1, 2, 3], [3, 4, 5], [5, -5, -4]], [[4, 5, -5], [-5, -4, -3], [-3, -2, -1]]], [[[0, 1, 2], [2, 3, 4], [4, 5, -5]], [[3, 4, 5], [5, -5, -4], [-4, -3, -2]], [[-5, -4, -3], [-3, -2, -1], [-1, 0, 1]], [[-2, -1, 0], [0, 1, 2], [2, 3, 4]]]]> : tensor<2x4x3x3xi8>} : () -> tensor<2x4x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4xi8>, tensor<f32>, tensor<i8>, tensor<2x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xi8>
  func.return %y : tensor<1x2x4x4xi8>
}

// -----

// A strided 1x1 Conv (not the pointwise column form, which reads X's pixels in order) takes the
// window's columns too: each pixel's 4 channels gathered from its strided position.
// CHECK-LABEL: func.func @strided_pointwise
// CHECK:         %y_columns = uop.define_local "y_columns" : !uop.buffer<8xi8>
// CHECK:         uop.div
// CHECK:         uop.rem
// CHECK:         uop.range %{{.*}} = 0 to 2 step 2 {
// CHECK:           uop.range %{{.*}} = 0 to 4 {
// CHECK:         func.return
// OFF-LABEL: func.func @strided_pointwise
// OFF-NOT:       columns
// OFF:           func.return
func.func @strided_pointwise(%x: tensor<1x4x4x4xi8>) -> tensor<1x2x2x2xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1]], [[-2]], [[3]], [[4]]], [[[5]], [[0]], [[-7]], [[2]]]]> : tensor<2x4x1x1xi8>} : () -> tensor<2x4x1x1xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {strides = array<i64: 2, 2>} : (tensor<1x4x4x4xi8>, tensor<f32>, tensor<i8>, tensor<2x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
  func.return %y : tensor<1x2x2x2xi8>
}

// -----

// One output pixel: no block of 2 to fill, the channels-innermost form (no column).
// CHECK-LABEL: func.func @one_pixel
// CHECK-NOT:     columns
// CHECK:         func.return
// OFF-LABEL: func.func @one_pixel
// OFF-NOT:       columns
// OFF:           func.return
func.func @one_pixel(%x: tensor<1x4x3x3xi8>) -> tensor<1x2x1x1xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 0, 1], [0, 1, 0], [1, 0, 1]], [[2, -2, 2], [2, 2, 2], [-2, 2, 2]], [[1, 2, 1], [2, 4, 2], [1, 2, 1]]], [[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 0, 1], [0, 1, 0], [1, 0, 1]], [[2, -2, 2], [2, 2, 2], [-2, 2, 2]], [[1, 2, 1], [2, 4, 2], [1, -2, 1]]]]> : tensor<2x4x3x3xi8>} : () -> tensor<2x4x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) : (tensor<1x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<2x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x1x1xi8>
  func.return %y : tensor<1x2x1x1xi8>
}
