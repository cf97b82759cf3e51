// RUN: zant-opt %s --split-input-file -p fold-qdq | filecheck %s

// Softmax between a per-tensor DQ and a Q of the same 8-bit type → com.microsoft's
// QLinearSoftmax (opset-13 semantics, its axis kept), lowered integer only.

// CHECK-LABEL: func.func @softmax
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %y = onnx.QLinearSoftmax(%x, %xs, %xz, %ys, %yz) {axis = 1 : i64} : (tensor<2x5xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<2x5xi8>
// CHECK-NEXT:    func.return %y
func.func @softmax(%x: tensor<2x5xi8>) -> tensor<2x5xi8> {
  %xs = onnx.Constant() {value = dense<0.08> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.00390625> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<2x5xi8>, tensor<f32>, tensor<i8>) -> tensor<2x5xf32>
  %s = onnx.Softmax(%f) {axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %y = onnx.QuantizeLinear(%s, %ys, %yz) : (tensor<2x5xf32>, tensor<f32>, tensor<i8>) -> tensor<2x5xi8>
  func.return %y : tensor<2x5xi8>
}

// -----

// An int8 input quantized to a uint8 output: no single-type QLinearSoftmax, Softmax stays float.

// CHECK-LABEL: func.func @softmax_mixed_types
// CHECK:         onnx.DequantizeLinear
// CHECK-NEXT:    onnx.Softmax
// CHECK-NOT:     onnx.QLinearSoftmax
func.func @softmax_mixed_types(%x: tensor<2x5xi8>) -> tensor<2x5xui8> {
  %xs = onnx.Constant() {value = dense<0.08> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.00390625> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<ui8>} : () -> tensor<ui8>
  %f = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<2x5xi8>, tensor<f32>, tensor<i8>) -> tensor<2x5xf32>
  %s = onnx.Softmax(%f) : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %y = onnx.QuantizeLinear(%s, %ys, %yz) : (tensor<2x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x5xui8>
  func.return %y : tensor<2x5xui8>
}
