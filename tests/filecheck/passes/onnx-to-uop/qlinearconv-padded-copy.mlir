// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// An int8 3x3 Conv over 4x4 with 1-pixel pads: the unchecked interior holds 4 of 16 outputs,
// so the input is copied into a zero-point-filled 6x6 frame (bigger than the 2x4x4 output,
// padded anyway) and every output reads it unchecked: no clamped index, no select.

// CHECK-LABEL: func.func @main
// CHECK:         %y_padded = uop.define_local "y_padded" : !uop.buffer<72xi8>
// CHECK-NOT:     uop.where
// CHECK:         func.return
func.func @main(%x: tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 0, 1], [0, 1, 0], [1, 0, 1]]], [[[2, 2, 2], [2, 2, 2], [2, 2, 2]], [[1, 2, 1], [2, 4, 2], [1, 2, 1]]]]> : tensor<2x2x3x3xi8>} : () -> tensor<2x2x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<2x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xi8>
  func.return %y : tensor<1x2x4x4xi8>
}

// -----

// The same window depthwise (group 2) keeps its border regions: no copy, the border's loads
// checked (uop.where picks the zero point outside the input).

// CHECK-LABEL: func.func @main
// CHECK-NOT:     y_padded
// CHECK:         uop.where
func.func @main(%x: tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[1, 2, 1], [2, 4, 2], [1, 2, 1]]]]> : tensor<2x1x3x3xi8>} : () -> tensor<2x1x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<2x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xi8>
  func.return %y : tensor<1x2x4x4xi8>
}
