// RUN: zant-opt %s -p fold-qdq | filecheck %s

// A fused activation, Conv → Relu → Q with no Q between (PyTorch's conv2d_relu, TFLite's fused
// RELU as tf2onnx writes it): the Conv folds into the Q's parameters, then an int8 Clip at the
// Q's zero point (Q_y(relu(v)) = max(Q_y(v), Q_y(0))).

// CHECK-LABEL: func.func @main
// CHECK-NOT:     onnx.Conv(
// CHECK-NOT:     onnx.Relu
// CHECK:         %[[C:.*]] = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {zant.fixed_point}
// CHECK:         %[[ZERO:.*]] = onnx.Constant() {value = dense<-7> : tensor<i8>}
// CHECK-NEXT:    %y = onnx.Clip(%[[C]], %[[ZERO]]) : (tensor<1x2x2x2xi8>, tensor<i8>) -> tensor<1x2x2x2xi8>
// CHECK-NEXT:    func.return %y
func.func @main(%x: tensor<1x1x2x2xi8>) -> tensor<1x2x2x2xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[3]]], [[[-5]]]]> : tensor<2x1x1x1xi8>} : () -> tensor<2x1x1x1xi8>
  %ws = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-7> : tensor<i8>} : () -> tensor<i8>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x1x2x2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x2x2xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) : (tensor<2x1x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<2x1x1x1xf32>
  %c = onnx.Conv(%xf, %wf) : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %r = onnx.Relu(%c) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y = onnx.QuantizeLinear(%r, %ys, %yz) : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
  func.return %y : tensor<1x2x2x2xi8>
}
