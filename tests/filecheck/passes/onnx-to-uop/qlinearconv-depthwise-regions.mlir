// RUN: zant-opt %s -p 'onnx-to-uop{conv-word-taps=true}' | filecheck %s
// RUN: zant-opt %s -p onnx-to-uop | filecheck %s --check-prefix=OFF

// On DSP cores without Helium (conv-word-taps, the Cortex-M4's pipeline) an int8 depthwise
// Conv loops over the channels inside each region of its output (the top rows, the bottom
// rows, the left and right columns, the interior), so one region's code runs
// for every channel before the next region's: the regions together outgrow a flash
// accelerator's instruction cache, one alone does not (VWW's depthwise layers on the L4R5).
// (Two pads above and below: the paired form leaves the border to these regions.)
// CHECK-LABEL: func.func @depthwise
// CHECK:         uop.range %[[N:.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range %{{.*}} = 0 to 4 {
// CHECK-NEXT:        uop.range %{{.*}} = 0 to 2 {
// CHECK-NEXT:          uop.range %{{.*}} = 0 to 4 {
// CHECK:           uop.range %{{.*}} = 0 to 4 {
// CHECK-NEXT:        uop.range %{{.*}} = 4 to 6 {
// CHECK-NEXT:          uop.range %{{.*}} = 0 to 4 {
// CHECK:           uop.range %{{.*}} = 0 to 4 {
// CHECK-NEXT:        uop.range %{{.*}} = 2 to 4 {
// CHECK-NEXT:          uop.range %{{.*}} = 0 to 1 {
// CHECK:           uop.range %{{.*}} = 0 to 4 {
// CHECK-NEXT:        uop.range %{{.*}} = 2 to 4 {
// CHECK-NEXT:          uop.range %{{.*}} = 3 to 4 {
// The interior (rows 2 to 4, outputs 1 and 2: one word per row) is the paired-tap form's
// (qlinearconv-depthwise-paired.mlir), its channel loop outermost as well.
// CHECK:           uop.range %{{.*}} = 0 to 4 {
// CHECK:             uop.range %{{.*}} = 2 to 4 {
// CHECK:               arm_dsp.load_word
// CHECK:         func.return

// Elsewhere one loop over the channels holds every region: the second region stores at the
// first one's channel.
// OFF-LABEL: func.func @depthwise
// OFF:           uop.range %[[N:.*]] = 0 to 1 {
// OFF-NEXT:        uop.range %[[M:.*]] = 0 to 4 {
// OFF-NEXT:          uop.range %{{.*}} = 0 to 2 {
// OFF:               uop.range %{{.*}} = 4 to 6 {
// OFF:               uop.gep %{{.*}}[%[[N]], %[[M]], %{{.*}}, %{{.*}}]
// OFF:           func.return
func.func @depthwise(%x: tensor<1x4x4x4xi8>) -> tensor<1x4x6x4xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[1, 0, 1], [0, 1, 0], [1, 0, 1]]], [[[2, -2, 2], [2, 2, 2], [-2, 2, 2]]], [[[1, 2, 1], [2, 4, 2], [1, 2, 1]]]]> : tensor<4x1x3x3xi8>} : () -> tensor<4x1x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {group = 4 : i64, pads = array<i64: 2, 1, 2, 1>} : (tensor<1x4x4x4xi8>, tensor<f32>, tensor<i8>, tensor<4x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x6x4xi8>
  func.return %y : tensor<1x4x6x4xi8>
}
