// RUN: zant-opt %s --split-input-file -p fold-qdq | filecheck %s

// int4 / uint4 weights (onnxruntime's QInt4 / QUInt4, ONNX's int4 DequantizeLinear) fold as
// int8 ones do: a Conv of a DQ'd int8 input with DQ'd int4 weights per output channel becomes
// one QLinearConv whose weight stays the int4 constant (packed two to a byte from here on).

// CHECK-LABEL: func.func @conv_int4
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {kernel_shape = array<i64: 1, 1>, zant.fixed_point} : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<2x2x1x1xi4>, tensor<2xf32>, tensor<2xi4>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
// CHECK-NEXT:    func.return %y
func.func @conv_int4(%x: tensor<1x2x3x3xi8>) -> tensor<1x2x3x3xi8> {
  %xs = onnx.Constant() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1]], [[-8]]], [[[7]], [[-4]]]]> : tensor<2x2x1x1xi4>} : () -> tensor<2x2x1x1xi4>
  %ws = onnx.Constant() {value = dense<[0.25, 0.125]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi4>} : () -> tensor<2xi4>
  %ys = onnx.Constant() {value = dense<0.002> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<1> : tensor<i8>} : () -> tensor<i8>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 0 : i64} : (tensor<2x2x1x1xi4>, tensor<2xf32>, tensor<2xi4>) -> tensor<2x2x1x1xf32>
  %c = onnx.Conv(%xf, %wf) {kernel_shape = array<i64: 1, 1>} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = onnx.QuantizeLinear(%c, %ys, %yz) : (tensor<1x2x3x3xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  func.return %y : tensor<1x2x3x3xi8>
}

// -----

// A Gemm with per-tensor uint4 weights (zero point 8) becomes a 1x1 QLinearConv between two
// Reshapes, the weight transposed to [N, K, 1, 1] at compile time and still uint4.

// CHECK-LABEL: func.func @gemm_uint4
// CHECK:         %weight = onnx.Constant() {value = dense_resource<weight> : tensor<2x3x1x1xui4>}
// CHECK:         onnx.QLinearConv(%{{.*}}, %xs, %xz, %weight, %ws, %wz, %ys, %yz) {zant.fixed_point} : (tensor<1x3x1x1xi8>, tensor<f32>, tensor<i8>, tensor<2x3x1x1xui4>, tensor<f32>, tensor<ui4>, tensor<f32>, tensor<i8>) -> tensor<1x2x1x1xi8>
// CHECK-NOT:     onnx.Gemm
func.func @gemm_uint4(%x: tensor<1x3xi8>) -> tensor<1x2xi8> {
  %xs = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[1, 2], [15, 8], [0, 9]]> : tensor<3x2xui4>} : () -> tensor<3x2xui4>
  %ws = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<8> : tensor<ui4>} : () -> tensor<ui4>
  %ys = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x3xi8>, tensor<f32>, tensor<i8>) -> tensor<1x3xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) : (tensor<3x2xui4>, tensor<f32>, tensor<ui4>) -> tensor<3x2xf32>
  %g = onnx.Gemm(%xf, %wf) : (tensor<1x3xf32>, tensor<3x2xf32>) -> tensor<1x2xf32>
  %y = onnx.QuantizeLinear(%g, %ys, %yz) : (tensor<1x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2xi8>
  func.return %y : tensor<1x2xi8>
}

// -----

// A MatMul with int4 weights per column becomes a QLinearMatMul on the int4 weight.

// CHECK-LABEL: func.func @matmul_int4
// CHECK:         %y = onnx.QLinearMatMul(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {zant.fixed_point} : (tensor<2x3xi8>, tensor<f32>, tensor<i8>, tensor<3x2xi4>, tensor<2xf32>, tensor<2xi4>, tensor<f32>, tensor<i8>) -> tensor<2x2xi8>
func.func @matmul_int4(%x: tensor<2x3xi8>) -> tensor<2x2xi8> {
  %xs = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[1, 2], [-8, 7], [0, -1]]> : tensor<3x2xi4>} : () -> tensor<3x2xi4>
  %ws = onnx.Constant() {value = dense<[0.5, 0.25]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi4>} : () -> tensor<2xi4>
  %ys = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 1 : i64} : (tensor<3x2xi4>, tensor<2xf32>, tensor<2xi4>) -> tensor<3x2xf32>
  %m = onnx.MatMul(%xf, %wf) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %y = onnx.QuantizeLinear(%m, %ys, %yz) : (tensor<2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<2x2xi8>
  func.return %y : tensor<2x2xi8>
}

// -----

// Blocked quantization (block_size) whose scales and zero points vary along the output
// channels only (blocks of 2 along axis 1, each output channel one scale): the DQ becomes a
// per-axis one (axis 0) of the same values, and the Conv folds.

// CHECK-LABEL: func.func @blocked_per_channel
// CHECK-DAG:     [[S:%.*]] = onnx.Constant() {value = dense<[2.500000e-01, 1.250000e-01]> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK-DAG:     [[Z:%.*]] = onnx.Constant() {value = dense_resource<zero_point> : tensor<2xi4>} : () -> tensor<2xi4>
// CHECK:         onnx.QLinearConv(%x, %xs, %xz, %w, [[S]], [[Z]], %ys, %yz)
// CHECK-NOT:     onnx.Conv
func.func @blocked_per_channel(%x: tensor<1x4x3x3xi8>) -> tensor<1x2x3x3xi8> {
  %xs = onnx.Constant() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1]], [[-8]], [[2]], [[3]]], [[[7]], [[-4]], [[0]], [[1]]]]> : tensor<2x4x1x1xi4>} : () -> tensor<2x4x1x1xi4>
  %ws = onnx.Constant() {value = dense<[[[[0.25]], [[0.25]]], [[[0.125]], [[0.125]]]]> : tensor<2x2x1x1xf32>} : () -> tensor<2x2x1x1xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2x2x1x1xi4>} : () -> tensor<2x2x1x1xi4>
  %ys = onnx.Constant() {value = dense<0.002> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x4x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4x3x3xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 1 : i64, block_size = 2 : i64} : (tensor<2x4x1x1xi4>, tensor<2x2x1x1xf32>, tensor<2x2x1x1xi4>) -> tensor<2x4x1x1xf32>
  %c = onnx.Conv(%xf, %wf) {kernel_shape = array<i64: 1, 1>} : (tensor<1x4x3x3xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = onnx.QuantizeLinear(%c, %ys, %yz) : (tensor<1x2x3x3xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  func.return %y : tensor<1x2x3x3xi8>
}

// -----

// Blocked scales that change along the reduction (input channels 0-1 and 2-3 of one output
// channel differ) cannot requantize one int32 sum: the DQ and the float Conv stay.

// CHECK-LABEL: func.func @blocked_along_reduction
// CHECK:         onnx.DequantizeLinear(%w, %ws, %wz) {axis = 1 : i64, block_size = 2 : i64}
// CHECK:         onnx.Conv
// CHECK-NOT:     onnx.QLinearConv
func.func @blocked_along_reduction(%x: tensor<1x4x3x3xi8>) -> tensor<1x2x3x3xi8> {
  %xs = onnx.Constant() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1]], [[-8]], [[2]], [[3]]], [[[7]], [[-4]], [[0]], [[1]]]]> : tensor<2x4x1x1xi4>} : () -> tensor<2x4x1x1xi4>
  %ws = onnx.Constant() {value = dense<[[[[0.25]], [[0.5]]], [[[0.125]], [[0.125]]]]> : tensor<2x2x1x1xf32>} : () -> tensor<2x2x1x1xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2x2x1x1xi4>} : () -> tensor<2x2x1x1xi4>
  %ys = onnx.Constant() {value = dense<0.002> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x4x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4x3x3xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 1 : i64, block_size = 2 : i64} : (tensor<2x4x1x1xi4>, tensor<2x2x1x1xf32>, tensor<2x2x1x1xi4>) -> tensor<2x4x1x1xf32>
  %c = onnx.Conv(%xf, %wf) {kernel_shape = array<i64: 1, 1>} : (tensor<1x4x3x3xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = onnx.QuantizeLinear(%c, %ys, %yz) : (tensor<1x2x3x3xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  func.return %y : tensor<1x2x3x3xi8>
}
