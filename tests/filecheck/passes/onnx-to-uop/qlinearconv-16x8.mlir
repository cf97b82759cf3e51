// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// 16x8 QLinearConv (int16 x, int8 weights, int16 y): a 1x1 window over 64 channels with
// x_zp = -32768 sums at most 64 · 65535 · 127 + |bias| < 2^31 (from the constant weights'
// Σ|w| · span): int32 accumulators, as for int8.

// CHECK-LABEL: func.func @narrow()
// CHECK:         uop.define_acc 0 : i32
// CHECK-NOT:     uop.define_acc 0 : i64
// CHECK:         uop.cast {{%.*}} : i16 to i32
func.func @narrow(%x: tensor<1x64x2x2xi16>) -> tensor<1x2x2x2xi16> {
  %xs = onnx.Constant() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-32768> : tensor<i16>} : () -> tensor<i16>
  %w = onnx.Constant() {value = dense<127> : tensor<2x64x1x1xi8>} : () -> tensor<2x64x1x1xi8>
  %ws = onnx.Constant() {value = dense<[0.01, 0.02]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %ys = onnx.Constant() {value = dense<40.0> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-32768> : tensor<i16>} : () -> tensor<i16>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {zant.fixed_point} : (tensor<1x64x2x2xi16>, tensor<f32>, tensor<i16>, tensor<2x64x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i16>) -> tensor<1x2x2x2xi16>
  func.return %y : tensor<1x2x2x2xi16>
}

// -----

// The same over 1024 channels: sums up to 1024 · 65535 · 127 ≈ 2^33 need int64 accumulators
// (`needs_64_bit_sum`); the folded bias (-x_zp · Σw = 32768 · 127 · 1024, one value: a
// literal) is an int64 constant, not wrapped to int32, and the requantization multiplies the
// int64 sum by an m0 narrowed by 2 bits (2^28, shifts 50 and 49) to keep sum · m0 within int64
// (no high-word form).

// CHECK-LABEL: func.func @wide()
// CHECK-DAG:     uop.define_global "constant" {{[0-9]+}} "requant_multiplier" value dense<281474984>
// CHECK-DAG:     uop.define_global "constant" {{[0-9]+}} "requant_shift" value dense<[50, 49]>
// CHECK-DAG:     [[BIAS:%.*]] = uop.const 4261412864 : i64
// CHECK:         [[ACC:%.*]] = uop.define_acc 0 : i64
// CHECK-NOT:     uop.define_acc 0 : i32
// CHECK:         uop.mulacc [[ACC]], {{.*}} : !uop.acc<i64>, i64
// CHECK:         [[SUM:%.*]] = uop.acc_get [[ACC]] : !uop.acc<i64>, i64
// CHECK-NEXT:    {{%.*}} = uop.add [[SUM]], [[BIAS]] : i64
// CHECK-NOT:     uop.cast {{%.*}} : i64 to i32
// CHECK:         uop.cast {{%.*}} : i64 to i16
func.func @wide(%x: tensor<1x1024x2x2xi16>) -> tensor<1x2x2x2xi16> {
  %xs = onnx.Constant() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-32768> : tensor<i16>} : () -> tensor<i16>
  %w = onnx.Constant() {value = dense<127> : tensor<2x1024x1x1xi8>} : () -> tensor<2x1024x1x1xi8>
  %ws = onnx.Constant() {value = dense<[0.01, 0.02]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %ys = onnx.Constant() {value = dense<40.0> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-32768> : tensor<i16>} : () -> tensor<i16>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {zant.fixed_point} : (tensor<1x1024x2x2xi16>, tensor<f32>, tensor<i16>, tensor<2x1024x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i16>) -> tensor<1x2x2x2xi16>
  func.return %y : tensor<1x2x2x2xi16>
}
