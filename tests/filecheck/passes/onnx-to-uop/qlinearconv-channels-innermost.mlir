// RUN: zant-opt %s -p onnx-to-uop | filecheck %s

// An int8 3x3 Conv over 4 input channels with constant weights: the reduction loops over the
// taps outside the channels, and reads the weights repacked channels last, W'[m, kh, kw, c], so
// consecutive channels are consecutive bytes (arm-dsp-dot's word loads). The 8x8 input is
// copied into a zero-point-filled 10x10 frame although it is larger than the output: no output
// takes a checked border region, so the word loads are W''s only readers.

// CHECK-LABEL: func.func @main
// CHECK:         %y_padded = uop.define_local "y_padded" : !uop.buffer<400xi8>
// CHECK:         %y_channels_last_weights = uop.define_global "constant" {{[0-9]+}} "y_channels_last_weights" value dense_resource<[[W:.*]]> : tensor<2x3x3x4xi8>
// CHECK-NOT:     "w"
// CHECK:         %[[PADDED:.*]] = uop.view %y_padded : !uop.buffer<400xi8> -> !uop.view<1x4x10x10xi8
// CHECK:         %[[REPACKED:.*]] = uop.view %y_channels_last_weights : !uop.buffer<72xi8> -> !uop.view<2x3x3x4xi8, strides [36, 12, 4, 1], offset 0>
// CHECK-NOT:     uop.where
// CHECK:         uop.range %[[KH:.*]] = 0 to 3 {
// CHECK-NEXT:      uop.range %[[KW:.*]] = 0 to 3 {
// CHECK-NEXT:        uop.range %[[C:.*]] = 0 to 4 {
// CHECK:               uop.gep %[[PADDED]][%{{.*}}, %[[C]], %{{.*}}, %{{.*}}]
// CHECK:               uop.gep %[[REPACKED]][%{{.*}}, %[[KH]], %[[KW]], %[[C]]]
// CHECK:               uop.mulacc
// CHECK-NOT:     uop.where
// CHECK:         func.return

// W' holds W[m, c, kh, kw] at [m, kh, kw, c]: channel 0's taps 1..9, channel 1's 1 0 1 …
// CHECK:         [[W]]: "0x10000000010101010200020003010301040004000501050106000600070107010800080009010901
func.func @main(%x: tensor<1x4x8x8xi8>) -> tensor<1x2x8x8xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 0, 1], [0, 1, 0], [1, 0, 1]], [[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 0, 1], [0, 1, 0], [1, 0, 1]]], [[[2, 2, 2], [2, 2, 2], [2, 2, 2]], [[1, 2, 1], [2, 4, 2], [1, 2, 1]], [[2, 2, 2], [2, 2, 2], [2, 2, 2]], [[1, 2, 1], [2, 4, 2], [1, 2, 1]]]]> : tensor<2x4x3x3xi8>} : () -> tensor<2x4x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xi8>, tensor<f32>, tensor<i8>, tensor<2x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x8x8xi8>
  func.return %y : tensor<1x2x8x8xi8>
}
