// RUN: zant-opt %s --split-input-file -p fold-qdq | filecheck %s

// tf2onnx's TFLite 16x8 FULLY_CONNECTED without a bias: MatMul of a DQ'd int16 x [M, K] and a
// DQ'd constant int8 W [K, N] (per column, axis 1) into an int16 Q. QLinearMatMul is 8-bit
// only, so it takes the Gemm fold: a 1x1 QLinearConv on the int16 codes between Reshapes, the
// weight laid out as [N, K, 1, 1] at compile time.

// CHECK-LABEL: func.func @matmul_16x8
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK-NOT:     onnx.MatMul
// CHECK:         [[X:%.*]] = onnx.Reshape(%x, %{{.*}}) : (tensor<1x2xi16>, tensor<4xi64>) -> tensor<1x2x1x1xi16>
// CHECK:         [[C:%.*]] = onnx.QLinearConv([[X]], %xs, %xz, %{{.*}}, %ws, %wz, %ys, %yz) {zant.fixed_point} : (tensor<1x2x1x1xi16>, tensor<f32>, tensor<i16>, tensor<3x2x1x1xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<i16>) -> tensor<1x3x1x1xi16>
// CHECK:         [[Y:%.*]] = onnx.Reshape([[C]], %{{.*}}) : (tensor<1x3x1x1xi16>, tensor<2xi64>) -> tensor<1x3xi16>
// CHECK-NEXT:    func.return [[Y]]
func.func @matmul_16x8(%x: tensor<1x2xi16>) -> tensor<1x3xi16> {
  %xs = onnx.Constant() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<i16>} : () -> tensor<i16>
  %w = onnx.Constant() {value = dense<[[1, 2, 3], [-4, 5, -6]]> : tensor<2x3xi8>} : () -> tensor<2x3xi8>
  %ws = onnx.Constant() {value = dense<[0.25, 0.125, 0.5]> : tensor<3xf32>} : () -> tensor<3xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<3xi8>} : () -> tensor<3xi8>
  %ys = onnx.Constant() {value = dense<0.002> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i16>} : () -> tensor<i16>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x2xi16>, tensor<f32>, tensor<i16>) -> tensor<1x2xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 1 : i64} : (tensor<2x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xf32>
  %m = onnx.MatMul(%xf, %wf) : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  %y = onnx.QuantizeLinear(%m, %ys, %yz) : (tensor<1x3xf32>, tensor<f32>, tensor<i16>) -> tensor<1x3xi16>
  func.return %y : tensor<1x3xi16>
}

// -----

// A MatMul of two 16-bit activations (no constant weight) stays float.

// CHECK-LABEL: func.func @matmul_16x16_activations
// CHECK:         onnx.MatMul
// CHECK-NOT:     onnx.QLinear
func.func @matmul_16x16_activations(%x: tensor<1x2xi16>, %v: tensor<2x3xi16>) -> tensor<1x3xi16> {
  %xs = onnx.Constant() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<i16>} : () -> tensor<i16>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x2xi16>, tensor<f32>, tensor<i16>) -> tensor<1x2xf32>
  %vf = onnx.DequantizeLinear(%v, %xs, %xz) : (tensor<2x3xi16>, tensor<f32>, tensor<i16>) -> tensor<2x3xf32>
  %m = onnx.MatMul(%xf, %vf) : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  %y = onnx.QuantizeLinear(%m, %xs, %xz) : (tensor<1x3xf32>, tensor<f32>, tensor<i16>) -> tensor<1x3xi16>
  func.return %y : tensor<1x3xi16>
}
