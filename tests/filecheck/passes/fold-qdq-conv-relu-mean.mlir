// RUN: zant-opt %s --split-input-file -p fold-qdq | filecheck %s

// PyTorch PT2E (X86InductorQuantizer, torch.onnx.export(dynamo=True)) leaves no QuantizeLinear
// between a Conv → Relu and the mean after it: DQ(x), DQ(w) → Conv (float bias) → Relu →
// ReduceMean over the spatial axes → Q. It folds to integers: the conv's int32 accumulators
// (ConvInteger, unit x_scale · w_scale[c]) scaled by 2^f (here f = 16: the int32 room above the
// sums) so that the float bias keeps f fraction bits (0.3 / (0.1 · 0.5) = 6 units → 6 · 2^16),
// Relu on int32, and one depthwise window sum of the int32 values requantized per channel by
// x_scale · (w_scale[c] / (n · 2^f)) / y_scale.

// CHECK-LABEL: func.func @conv_relu_mean
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         [[ACC:%.*]] = onnx.ConvInteger(%x, %w, %xz, %wz) {kernel_shape = array<i64: 1, 1>} : (tensor<1x1x2x2xui8>, tensor<2x1x1x1xi8>, tensor<ui8>, tensor<2xi8>) -> tensor<1x2x2x2xi32>
// CHECK:         %fraction = onnx.Constant() {value = dense<65536> : tensor<1x1x1xi32>}
// CHECK-NEXT:    [[SCALED:%.*]] = onnx.Mul([[ACC]], %fraction)
// CHECK:         %bias = onnx.Constant() {value = dense<{{\[\[\[}}393216]], {{\[\[}}-262144]]]> : tensor<2x1x1xi32>}
// CHECK-NEXT:    [[BIASED:%.*]] = onnx.Add([[SCALED]], %bias) : (tensor<1x2x2x2xi32>, tensor<2x1x1xi32>) -> tensor<1x2x2x2xi32>
// CHECK-NEXT:    [[RELU:%.*]] = onnx.Relu([[BIASED]]) : (tensor<1x2x2x2xi32>) -> tensor<1x2x2x2xi32>
// CHECK:         %window = onnx.Constant() {value = dense<[1.90734863e-06, 9.53674316e-07]> : tensor<2xf32>}
// CHECK:         [[SUM:%.*]] = onnx.QLinearConv([[RELU]], %xs, %{{.*}}, %ones, %window, %{{.*}}, %ys, %yz) {group = 2 : i64, kernel_shape = array<i64: 2, 2>, zant.fixed_point} : (tensor<1x2x2x2xi32>, {{.*}}) -> tensor<1x2x1x1xui8>
// CHECK:         %y = onnx.Reshape([[SUM]], %shape) : (tensor<1x2x1x1xui8>, tensor<2xi64>) -> tensor<1x2xui8>
// CHECK-NEXT:    func.return %y
func.func @conv_relu_mean(%x: tensor<1x1x2x2xui8>) -> tensor<1x2xui8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %w = onnx.Constant() {value = dense<[[[[3]]], [[[-2]]]]> : tensor<2x1x1x1xi8>} : () -> tensor<2x1x1x1xi8>
  %ws = onnx.Constant() {value = dense<[0.5, 0.25]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %b = onnx.Constant() {value = dense<[0.3, -0.1]> : tensor<2xf32>} : () -> tensor<2xf32>
  %axes = onnx.Constant() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %ys = onnx.Constant() {value = dense<0.02> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<ui8>} : () -> tensor<ui8>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x1x2x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x1x2x2xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 0 : i64} : (tensor<2x1x1x1xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x1x1x1xf32>
  %c = onnx.Conv(%xf, %wf, %b) {kernel_shape = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %r = onnx.Relu(%c) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %m = onnx.ReduceMean(%r, %axes) {keepdims = 0 : i64} : (tensor<1x2x2x2xf32>, tensor<2xi64>) -> tensor<1x2xf32>
  %y = onnx.QuantizeLinear(%m, %ys, %yz) : (tensor<1x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2xui8>
  func.return %y : tensor<1x2xui8>
}

// -----

// The same with GlobalAveragePool (PyTorch's AdaptiveAvgPool2d(1)) and no Relu; a zero bias
// adds nothing.

// CHECK-LABEL: func.func @conv_global_average_pool
// CHECK:         onnx.ConvInteger
// CHECK-NOT:     onnx.Add
// CHECK-NOT:     onnx.Relu
// CHECK:         %y = onnx.QLinearConv(%{{.*}}, %xs, %{{.*}}, %ones, %window, %{{.*}}, %ys, %yz) {group = 2 : i64, kernel_shape = array<i64: 2, 2>, zant.fixed_point} : (tensor<1x2x2x2xi32>, {{.*}}) -> tensor<1x2x1x1xi8>
// CHECK-NEXT:    func.return %y
func.func @conv_global_average_pool(%x: tensor<1x1x2x2xi8>) -> tensor<1x2x1x1xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[3]]], [[[-2]]]]> : tensor<2x1x1x1xi8>} : () -> tensor<2x1x1x1xi8>
  %ws = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.02> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x1x2x2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x2x2xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) : (tensor<2x1x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<2x1x1x1xf32>
  %c = onnx.Conv(%xf, %wf) {kernel_shape = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %m = onnx.GlobalAveragePool(%c) : (tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32>
  %y = onnx.QuantizeLinear(%m, %ys, %yz) : (tensor<1x2x1x1xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x1x1xi8>
  func.return %y : tensor<1x2x1x1xi8>
}

// -----

// A mean over the channels (axis 1) is no per-channel window sum: it stays float.

// CHECK-LABEL: func.func @conv_relu_mean_over_channels
// CHECK:         onnx.Conv(
// CHECK:         onnx.ReduceMean
// CHECK-NOT:     onnx.ConvInteger
func.func @conv_relu_mean_over_channels(%x: tensor<1x1x2x2xui8>) -> tensor<1x2x2xui8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %w = onnx.Constant() {value = dense<[[[[3]]], [[[-2]]]]> : tensor<2x1x1x1xi8>} : () -> tensor<2x1x1x1xi8>
  %ws = onnx.Constant() {value = dense<[0.5, 0.25]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %axes = onnx.Constant() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %ys = onnx.Constant() {value = dense<0.02> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<ui8>} : () -> tensor<ui8>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x1x2x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x1x2x2xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 0 : i64} : (tensor<2x1x1x1xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x1x1x1xf32>
  %c = onnx.Conv(%xf, %wf) {kernel_shape = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %r = onnx.Relu(%c) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %m = onnx.ReduceMean(%r, %axes) {keepdims = 0 : i64} : (tensor<1x2x2x2xf32>, tensor<1xi64>) -> tensor<1x2x2xf32>
  %y = onnx.QuantizeLinear(%m, %ys, %yz) : (tensor<1x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x2xui8>
  func.return %y : tensor<1x2x2xui8>
}

// -----

// PT2E's last Linear: quantized inputs, a float output. A Gemm of DQ'd operands whose result
// is a graph output becomes MatMulInteger (the weight laid out [K, N] at compile time), the sums
// times 2^f plus the bias in units of x_scale · w_scale[n] / 2^f, and one DequantizeLinear of
// them writing the output (scale x_scale · w_scale[n] / 2^f per column): no float scratch.

// CHECK-LABEL: func.func @gemm_float_output
// CHECK:         %weight = onnx.Constant() {value = dense<{{\[\[}}1, 3, 5], [2, -4, -6]]> : tensor<2x3xi8>}
// CHECK:         [[ACC:%.*]] = onnx.MatMulInteger(%x, %weight, %xz, %weight_zero_point) : (tensor<1x2xui8>, tensor<2x3xi8>, tensor<ui8>, tensor<3xi8>) -> tensor<1x3xi32>
// CHECK:         [[SCALED:%.*]] = onnx.Mul([[ACC]], %fraction)
// CHECK:         %bias = onnx.Constant() {value = dense<[65536, -65536, 0]> : tensor<3xi32>}
// CHECK-NEXT:    [[BIASED:%.*]] = onnx.Add([[SCALED]], %bias)
// CHECK:         %y = onnx.DequantizeLinear([[BIASED]], %scale, %zero) {axis = 1 : i64} : (tensor<1x3xi32>, tensor<3xf32>, tensor<3xi32>) -> tensor<1x3xf32>
// CHECK-NEXT:    func.return %y
func.func @gemm_float_output(%x: tensor<1x2xui8>) -> tensor<1x3xf32> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %w = onnx.Constant() {value = dense<[[1, 2], [3, -4], [5, -6]]> : tensor<3x2xi8>} : () -> tensor<3x2xi8>
  %ws = onnx.Constant() {value = dense<[0.5, 0.25, 0.125]> : tensor<3xf32>} : () -> tensor<3xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<3xi8>} : () -> tensor<3xi8>
  %b = onnx.Constant() {value = dense<[0.05, -0.025, 0.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 0 : i64} : (tensor<3x2xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x2xf32>
  %y = onnx.Gemm(%xf, %wf, %b) {transB = 1 : i64} : (tensor<1x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  func.return %y : tensor<1x3xf32>
}
