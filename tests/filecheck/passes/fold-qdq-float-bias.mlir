// RUN: zant-opt %s -p fold-qdq | filecheck %s

// A float bias (PyTorch's exporter leaves it unquantized) is quantized at compile time to int32
// in the scale x_scale · w_scale: 0.3 / (0.1 · 0.5) = 6, -0.26 / (0.1 · 0.25) = -10.4 → -10.

// CHECK-LABEL: func.func @main
// CHECK:         %[[B:.*]] = onnx.Constant() {value = dense<[6, -10]> : tensor<2xi32>}
// CHECK:         %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %xs, %xz, %[[B]]) {zant.fixed_point} : (tensor<1x1x2x2xi8>, tensor<f32>, tensor<i8>, tensor<2x1x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i8>, tensor<2xi32>) -> tensor<1x2x2x2xi8>
func.func @main(%x: tensor<1x1x2x2xi8>) -> tensor<1x2x2x2xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[3]]], [[[-5]]]]> : tensor<2x1x1x1xi8>} : () -> tensor<2x1x1x1xi8>
  %ws = onnx.Constant() {value = dense<[0.5, 0.25]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %b = onnx.Constant() {value = dense<[0.3, -0.26]> : tensor<2xf32>} : () -> tensor<2xf32>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x1x2x2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x2x2xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 0 : i64} : (tensor<2x1x1x1xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x1x1x1xf32>
  %c = onnx.Conv(%xf, %wf, %b) : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %y = onnx.QuantizeLinear(%c, %xs, %xz) : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
  func.return %y : tensor<1x2x2x2xi8>
}
