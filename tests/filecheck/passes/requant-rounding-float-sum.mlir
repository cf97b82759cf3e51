// RUN: zant-opt %s --split-input-file -p 'requant-rounding{mode=onnxruntime}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'requant-rounding{mode=onnxruntime},requant-rounding' | filecheck %s --check-prefix=EXACT
// RUN: zant-opt %s --split-input-file -p 'requant-rounding{mode=tflite}' | filecheck %s --check-prefix=TFL
// RUN: zant-opt %s --split-input-file -p 'requant-rounding{mode=onnxruntime},onnx-to-uop' | filecheck %s --check-prefix=LOWER
// RUN: zant-opt %s --split-input-file -p 'requant-rounding{mode=onnxruntime},onnx-to-uop' | filecheck %s --check-prefix=SCRATCH

// 16-bit layers in the onnxruntime mode: onnxruntime runs their DQ -> op -> Q in float32 (no
// integer kernel for int16), so each gets the MLAS form that computes it (`zant.float_sum`):
// a Conv the SGEMM kernels' fused chain, a depthwise Conv (M = 1) and a one-row MatMul the
// one-row kernel, a one-row Gemm with transB (fold-qdq's mark) and a Conv with one output pixel
// (N = 1) the one-row kernel of a transposed B, a whole-input pool (fold-qdq's mark) the global
// pooling kernel, an Add the float Add; a sum of 130 terms over 81 output pixels keeps the
// integer requantization (MLAS's K block is 128 there, and where it cuts depends on onnxruntime's
// threads), as do an average pool of several windows and the other modes.

// CHECK-LABEL: func.func @layers
// CHECK:         %conv = onnx.QLinearConv{{.*}}zant.rounding = "onnxruntime", zant.float_sum = "fma"}
// CHECK:         %depthwise = onnx.QLinearConv{{.*}}zant.rounding = "onnxruntime", zant.float_sum = "m1"}
// CHECK:         %pixel = onnx.QLinearConv{{.*}}zant.rounding = "onnxruntime", zant.float_sum = "m1-transb"}
// CHECK:         %long = onnx.QLinearConv{{.*}} {kernel_shape = array<i64: 1, 1>, zant.fixed_point, zant.rounding = "onnxruntime"} :
// CHECK:         %mean = onnx.QLinearConv{{.*}}zant.rounding = "onnxruntime", zant.float_sum = "mean"}
// CHECK:         %windows = onnx.QLinearConv{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, group = 2 : i64, zant.fixed_point, zant.average_count = 4 : i64} :
// CHECK:         %sum = onnx.QLinearAdd{{.*}} {zant.rounding = "onnxruntime", zant.float_sum = "add"}
// EXACT-NOT:     zant.float_sum
// EXACT-NOT:     zant.rounding
// TFL-NOT:       zant.float_sum
func.func @layers(%x: tensor<1x2x3x3xi16>, %wide: tensor<1x130x9x9xi16>) -> (tensor<1x2x3x3xi16>, tensor<1x2x2x2xi16>, tensor<1x2x1x1xi16>, tensor<1x2x9x9xi16>, tensor<1x2x1x1xi16>, tensor<1x2x2x2xi16>, tensor<1x2x3x3xi16>) {
  %xs = onnx.Constant() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-300> : tensor<i16>} : () -> tensor<i16>
  %w = onnx.Constant() {value = dense<[[[[1, -2], [3, 4]], [[5, 6], [-7, 8]]], [[[9, 10], [11, -12]], [[13, 14], [15, 16]]]]> : tensor<2x2x2x2xi8>} : () -> tensor<2x2x2x2xi8>
  %dw = onnx.Constant() {value = dense<[[[[1, -2], [3, 4]]], [[[5, 6], [-7, 8]]]]> : tensor<2x1x2x2xi8>} : () -> tensor<2x1x2x2xi8>
  %pw = onnx.Constant() {value = dense<3> : tensor<2x2x3x3xi8>} : () -> tensor<2x2x3x3xi8>
  %lw = onnx.Constant() {value = dense<2> : tensor<2x130x1x1xi8>} : () -> tensor<2x130x1x1xi8>
  %ones = onnx.Constant() {value = dense<1> : tensor<2x1x3x3xi8>} : () -> tensor<2x1x3x3xi8>
  %ones2 = onnx.Constant() {value = dense<1> : tensor<2x1x2x2xi8>} : () -> tensor<2x1x2x2xi8>
  %ninth = onnx.Constant() {value = dense<0.111111112> : tensor<f32>} : () -> tensor<f32>
  %quarter = onnx.Constant() {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %ws = onnx.Constant() {value = dense<[0.25, 0.125]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %z8 = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %b = onnx.Constant() {value = dense<[100, -7]> : tensor<2xi32>} : () -> tensor<2xi32>
  %ys = onnx.Constant() {value = dense<0.002> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<5> : tensor<i16>} : () -> tensor<i16>
  %conv = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b) {kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, zant.fixed_point} : (tensor<1x2x3x3xi16>, tensor<f32>, tensor<i16>, tensor<2x2x2x2xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i16>, tensor<2xi32>) -> tensor<1x2x3x3xi16>
  %depthwise = onnx.QLinearConv(%x, %xs, %xz, %dw, %ws, %wz, %ys, %yz, %b) {kernel_shape = array<i64: 2, 2>, group = 2 : i64, zant.fixed_point} : (tensor<1x2x3x3xi16>, tensor<f32>, tensor<i16>, tensor<2x1x2x2xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i16>, tensor<2xi32>) -> tensor<1x2x2x2xi16>
  %pixel = onnx.QLinearConv(%x, %xs, %xz, %pw, %ws, %wz, %ys, %yz, %b) {kernel_shape = array<i64: 3, 3>, zant.fixed_point} : (tensor<1x2x3x3xi16>, tensor<f32>, tensor<i16>, tensor<2x2x3x3xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i16>, tensor<2xi32>) -> tensor<1x2x1x1xi16>
  %long = onnx.QLinearConv(%wide, %xs, %xz, %lw, %ws, %wz, %ys, %yz) {kernel_shape = array<i64: 1, 1>, zant.fixed_point} : (tensor<1x130x9x9xi16>, tensor<f32>, tensor<i16>, tensor<2x130x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i16>) -> tensor<1x2x9x9xi16>
  %mean = onnx.QLinearConv(%x, %xs, %xz, %ones, %ninth, %z8, %ys, %yz) {kernel_shape = array<i64: 3, 3>, group = 2 : i64, zant.fixed_point, zant.average_count = 9 : i64, zant.global_pool} : (tensor<1x2x3x3xi16>, tensor<f32>, tensor<i16>, tensor<2x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i16>) -> tensor<1x2x1x1xi16>
  %windows = onnx.QLinearConv(%x, %xs, %xz, %ones2, %quarter, %z8, %ys, %yz) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, group = 2 : i64, zant.fixed_point, zant.average_count = 4 : i64} : (tensor<1x2x3x3xi16>, tensor<f32>, tensor<i16>, tensor<2x1x2x2xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i16>) -> tensor<1x2x2x2xi16>
  %sum = onnx.QLinearAdd(%x, %xs, %xz, %conv, %ys, %yz, %ys, %yz) : (tensor<1x2x3x3xi16>, tensor<f32>, tensor<i16>, tensor<1x2x3x3xi16>, tensor<f32>, tensor<i16>, tensor<f32>, tensor<i16>) -> tensor<1x2x3x3xi16>
  func.return %conv, %depthwise, %pixel, %long, %mean, %windows, %sum : tensor<1x2x3x3xi16>, tensor<1x2x2x2xi16>, tensor<1x2x1x1xi16>, tensor<1x2x9x9xi16>, tensor<1x2x1x1xi16>, tensor<1x2x2x2xi16>, tensor<1x2x3x3xi16>
}

// Lowered: the fused chain is one uop.fma per tap into a float32 accumulator per output channel
// (a block of channels shares the tap's dequantized x), the dequantized
// weights and bias float32 constants (not scratch), x dequantized in a register; the one-row
// kernel's group of 4 products added left to right, then to the running sum; the global pool's
// 4 lanes; then the division by y_scale and MLAS's rounding (the 1.5 · 2^23 add). Every value
// stays in registers: no scratch buffer (each result here is a graph output).

// LOWER-LABEL:   func.func @layers
// LOWER:           %conv_float_weights = uop.define_global "constant" {{.*}} value dense<[{{\[\[\[}}2.500000e-01, -5.000000e-01], [7.500000e-01, 1.000000e+00]], {{.*}} : tensor<2x2x2x2xf32> : !uop.buffer<16xf32>
// LOWER:           %conv_float_bias = uop.define_global "constant" {{.*}} : tensor<2xf32>
// LOWER:           uop.define_acc 0.000000e+00 : f32
// LOWER:           [[XF:%.*]] = uop.mul %{{.*}}, %{{.*}} : f32
// LOWER:           [[WF:%.*]] = uop.load %{{.*}} : f32
// LOWER:           uop.fma [[XF]], [[WF]], %{{.*}} : f32
// LOWER:           uop.fma [[XF]], %{{.*}}, %{{.*}} : f32
// LOWER:           uop.div %{{.*}}, %{{.*}} : f32
// LOWER:           uop.const 0x4B400000 : f32
// SCRATCH-NOT:     uop.define_local
