// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-word-taps=true}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s --check-prefix=OFF
// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-word-taps=true weight-cache-bytes=64}' | filecheck %s --check-prefix=STAGED

// With conv-word-taps (the Cortex-M4's pipeline), an int8 3x3 Conv over 4 or more channels with
// constant weights takes the window's column form over a channels-last copy of X
// (conv_window._window_channels_last): X padded (with its zero point) into a (N, H, W, C)
// buffer, read as (N, H, W·C), where each window's row of 3 taps is one run of 3·C int8 in the
// order of the repacked weights W'[m, kh, kw, c]. The pairs of output channels are outermost;
// the 2 x 2 register tiles (2 pixels side by side along W) reduce each of the 3 runs in place
// (word loads for arm-dsp-dot): no column is copied. (Runs of whole words, 4 | 3·C, take
// `smlad_window` instead: qlinearconv-window-tiles.mlir; here 3·6 bytes.)
// CHECK-LABEL: func.func @window
// CHECK-NOT:     y_columns
// CHECK:         %[[TO:.*]] = uop.view %y_padded : !uop.buffer<216xi8> -> !uop.view<1x6x4x4xi8, strides [216, 1, 36, 6], offset 42>
// CHECK-DAG:     %[[ROWS:.*]] = uop.view %y_padded : !uop.buffer<216xi8> -> !uop.view<1x6x36xi8, strides [216, 36, 1], offset 0>
// CHECK-DAG:     %[[W:.*]] = uop.view %y_channels_last_weights : !uop.buffer<108xi8> -> !uop.view<2x54xi8, strides [54, 1], offset 0>
// CHECK-DAG:     %[[Y:.*]] = uop.view %y : !uop.buffer<32xi8> -> !uop.view<1x2x4x4xi8, strides [32, 16, 4, 1], offset 0>
// CHECK:         uop.gep %[[TO]]
// CHECK:           uop.range %[[M:.*]] = 0 to 2 step 2 {
// CHECK:             uop.range %[[OH:.*]] = 0 to 4 {
// CHECK-NEXT:          uop.range %[[PAIR:.*]] = 0 to 2 {
// CHECK:                 %[[Q:.*]] = uop.mul %[[PAIR]], %{{.*}} : index
// CHECK:                 uop.define_acc 0 : i32
// CHECK-NEXT:            uop.define_acc 0 : i32
// CHECK-NEXT:            uop.define_acc 0 : i32
// CHECK-NEXT:            uop.define_acc 0 : i32
// CHECK-NEXT:            uop.range %[[KH:.*]] = 0 to 3 {
// CHECK:                   uop.range %[[K:.*]] = 0 to 18 {
// CHECK:                     uop.gep %[[ROWS]][%[[N:[0-9]+]], %{{.*}}, %{{.*}}]
// CHECK:                     uop.gep %[[ROWS]][%[[N]], %{{.*}}, %{{.*}}]
// CHECK:                     uop.gep %[[W]][%[[M]], %{{.*}}]
// CHECK:                     uop.gep %[[W]][%{{.*}}, %{{.*}}]
// CHECK:                     uop.mulacc
// CHECK-NEXT:                uop.mulacc
// CHECK-NEXT:                uop.mulacc
// CHECK-NEXT:                uop.mulacc
// CHECK-NEXT:              }
// CHECK-NEXT:            }
// CHECK:                 uop.gep %[[Y]][%[[N]], %[[M]], %[[OH]], %[[Q]]]
// CHECK:         func.return

// With a cache in front of slow weight memory smaller than twice a pair of weight rows (2 x 54
// bytes against 64 / 2), each pair is copied into a scratch buffer [2][54] before its pixels.
// STAGED-LABEL: func.func @window
// STAGED:         %y_columns_weights = uop.define_local "y_columns_weights" : !uop.buffer<108xi8>
// STAGED:         %[[W:.*]] = uop.view %y_channels_last_weights : !uop.buffer<108xi8> -> !uop.view<2x54xi8, strides [54, 1], offset 0>
// STAGED-NEXT:    %[[LOCAL:.*]] = uop.view %y_columns_weights : !uop.buffer<108xi8> -> !uop.view<2x54xi8, strides [54, 1], offset 0>
// STAGED:         uop.range %{{.*}} = 0 to 2 step 2 {
// STAGED:           uop.range %[[I:.*]] = 0 to 2 {
// STAGED-NEXT:        uop.range %[[C:.*]] = 0 to 54 {
// STAGED:               uop.gep %[[W]]
// STAGED:               uop.gep %[[LOCAL]][%[[I]], %[[C]]]
// STAGED:           uop.range %{{.*}} = 0 to 4 {
// STAGED:             uop.range %{{.*}} = 0 to 18 {
// STAGED-NOT:           uop.gep %[[W]]
// STAGED:               uop.gep %[[LOCAL]]
// STAGED:               uop.gep %[[LOCAL]]
// STAGED:             uop.mulacc
// STAGED:         func.return

// Elsewhere the taps over the channels read X where it is (no column).
// OFF-LABEL: func.func @window
// OFF-NOT:       columns
// OFF:           func.return
func.func @window(%x: tensor<1x6x4x4xi8>) -> tensor<1x2x4x4xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[-5, 2, -2], [5, 1, -3], [4, 0, -4]], [[3, -1, -5], [2, -2, 5], [1, -3, 4]], [[0, -4, 3], [-1, -5, 2], [-2, 5, 1]], [[-3, 4, 0], [-4, 3, -1], [-5, 2, -2]], [[5, 1, -3], [4, 0, -4], [3, -1, -5]], [[2, -2, 5], [1, -3, 4], [0, -4, 3]]], [[[-1, -5, 2], [-2, 5, 1], [-3, 4, 0]], [[-4, 3, -1], [-5, 2, -2], [5, 1, -3]], [[4, 0, -4], [3, -1, -5], [2, -2, 5]], [[1, -3, 4], [0, -4, 3], [-1, -5, 2]], [[-2, 5, 1], [-3, 4, 0], [-4, 3, -1]], [[-5, 2, -2], [5, 1, -3], [4, 0, -4]]]]> : tensor<2x6x3x3xi8>} : () -> tensor<2x6x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x6x4x4xi8>, tensor<f32>, tensor<i8>, tensor<2x6x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xi8>
  func.return %y : tensor<1x2x4x4xi8>
}

// -----

// A strided 1x1 Conv (not the pointwise column form, which reads X's pixels in order) takes the
// window's columns (conv_window.window_columns) over its NCHW X: each pixel's 4 channels
// gathered from its strided position into a column [2][C].
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
