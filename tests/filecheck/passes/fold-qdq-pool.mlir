// RUN: zant-opt %s --split-input-file -p fold-qdq | filecheck %s

// An AveragePool that does not count its padding divides by a number of taps that varies at the
// borders: com.microsoft's QLinearAveragePool (integer only, the divisor counted per position).

// CHECK-LABEL: func.func @uncounted_padding
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %y = onnx.QLinearAveragePool(%x, %s, %z, %ys, %z) {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xi8>
// CHECK-NEXT:    func.return %y
func.func @uncounted_padding(%x: tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %ys = onnx.Constant() {value = dense<0.03> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xf32>
  %p = onnx.AveragePool(%f) {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = onnx.QuantizeLinear(%p, %ys, %z) : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xi8>
  func.return %y : tensor<1x2x4x4xi8>
}

// -----

// Counted padding keeps the constant divisor: a depthwise window sum (QLinearConv of ones).

// CHECK-LABEL: func.func @counted_padding
// CHECK:         onnx.QLinearConv
// CHECK-NOT:     onnx.QLinearAveragePool
func.func @counted_padding(%x: tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xf32>
  %p = onnx.AveragePool(%f) {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = 1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = onnx.QuantizeLinear(%p, %s, %z) : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xi8>
  func.return %y : tensor<1x2x4x4xi8>
}
