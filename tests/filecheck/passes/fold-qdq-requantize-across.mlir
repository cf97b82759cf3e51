// RUN: zant-opt %s --split-input-file -p fold-qdq | filecheck %s

// Q(DQ(x)) from uint8 to int8 (Brevitas: a QuantReLU's unsigned codes into the next
// QuantIdentity's signed ones; QONNX's Trunc into an unsigned Quant): the one-element window
// sum, reading uint8 and writing int8, requantized by the exact x_scale / y_scale, ties to even.

// CHECK-LABEL: func.func @main
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %[[COLUMN:.*]] = onnx.Reshape(%x, %shape) : (tensor<2x3xui8>, tensor<3xi64>) -> tensor<1x6x1xui8>
// CHECK:         %[[W:.*]] = onnx.QLinearConv(%[[COLUMN]], %xs, %xz, %ones, %window, %zero, %ys, %yz) {group = 6 : i64, zant.fixed_point, zant.average_count = 1 : i64}
// CHECK-SAME:      -> tensor<1x6x1xi8>
// CHECK:         %y = onnx.Reshape(%[[W]], %{{.*}}) : (tensor<1x6x1xi8>, tensor<2xi64>) -> tensor<2x3xi8>
// CHECK-NEXT:    func.return %y
func.func @main(%x: tensor<2x3xui8>) -> tensor<2x3xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<ui8>} : () -> tensor<ui8>
  %ys = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  %y = onnx.QuantizeLinear(%f, %ys, %yz) : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  func.return %y : tensor<2x3xi8>
}

// -----

// int8 to uint8, and left float where the output scale is a run-time value.

// CHECK-LABEL: func.func @main
// CHECK:         onnx.QLinearConv
// CHECK-SAME:      -> tensor<1x4x1xui8>
// CHECK:         %[[F:.*]] = onnx.DequantizeLinear(%x, %xs, %xz)
// CHECK-NEXT:    %z = onnx.QuantizeLinear(%[[F]], %s, %yz)
func.func @main(%x: tensor<4xi8>, %s: tensor<f32>) -> (tensor<4xui8>, tensor<4xui8>) {
  %xs = onnx.Constant() {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-3> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %f = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  %y = onnx.QuantizeLinear(%f, %ys, %yz) : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  %f_1 = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  %z = onnx.QuantizeLinear(%f_1, %s, %yz) : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  func.return %y, %z : tensor<4xui8>, tensor<4xui8>
}
