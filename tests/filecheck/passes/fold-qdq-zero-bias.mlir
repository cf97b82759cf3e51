// RUN: zant-opt %s -p fold-qdq | filecheck %s

// A Conv whose bias is the DequantizeLinear of int32 zeros in a scale other than x_scale ·
// w_scale (tf2onnx shares one zero-bias DQ, in the first layer's scale, among the layers of a
// Keras model with zero biases): zero in any scale, so the Conv folds; a non-zero bias in that
// scale would not.
// CHECK-LABEL: func.func @main
// CHECK:         onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b)
// CHECK-NOT:     onnx.Conv(
func.func @main(%x: tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xi8> {
  %xs = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<1> : tensor<2x2x1x1xi8>} : () -> tensor<2x2x1x1xi8>
  %ws = onnx.Constant() {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %b = onnx.Constant() {value = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %bs = onnx.Constant() {value = dense<[0.3, 0.7]> : tensor<2xf32>} : () -> tensor<2xf32>
  %bz = onnx.Constant() {value = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %ys = onnx.Constant() {value = dense<0.125> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %fx = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xf32>
  %fw = onnx.DequantizeLinear(%w, %ws, %wz) : (tensor<2x2x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<2x2x1x1xf32>
  %fb = onnx.DequantizeLinear(%b, %bs, %bz) {axis = 0 : i64} : (tensor<2xi32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  %c = onnx.Conv(%fx, %fw, %fb) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = onnx.QuantizeLinear(%c, %ys, %yz) : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xi8>
  func.return %y : tensor<1x2x4x4xi8>
}
