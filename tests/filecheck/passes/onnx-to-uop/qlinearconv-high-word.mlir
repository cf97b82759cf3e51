// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// Per-channel fixed-point requantization (the weights unknown, so no common shift): M =
// 0.05 · w_scale / 0.3 is m0 · 2^-shift with shifts 43 and 45, and 0.3 makes neither channel's
// m0 exact (no sum can tie). The value (sum · m0 + 2^(shift-1)) >> shift is taken from the
// product's high word: hi = (sum · m0) >> 32, (hi + 2^(r-1)) >> r with r = shift - 32 from
// two int32 tables; the zero point and the clamp in int32. No 64-bit shift by a channel's
// shift, no 64-bit add or clamp.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     uop.define_global "constant" {{[0-9]+}} "requant_multiplier" value dense<[1466015488, 1759218560]>
// CHECK-DAG:     uop.define_global "constant" {{[0-9]+}} "requant_round" value dense<[1024, 4096]>
// CHECK-DAG:     uop.define_global "constant" {{[0-9]+}} "requant_shift" value dense<[11, 13]>
// CHECK-DAG:     [[WORD:%.*]] = uop.const 32 : i64
// CHECK:         [[SUM:%.*]] = uop.acc_get
// CHECK:         [[WIDE:%.*]] = uop.cast [[SUM]] : i32 to i64
// CHECK:         [[P:%.*]] = uop.mul [[WIDE]], {{%.*}} : i64
// CHECK-NEXT:    [[HI64:%.*]] = uop.shr [[P]], [[WORD]] : i64
// CHECK-NEXT:    [[HI:%.*]] = uop.cast [[HI64]] : i64 to i32
// CHECK:         [[X:%.*]] = uop.add [[HI]], {{%.*}} : i32
// CHECK:         [[Q:%.*]] = uop.shr [[X]], {{%.*}} : i32
// CHECK-NEXT:    [[Y:%.*]] = uop.add [[Q]], {{%.*}} : i32
// CHECK-NEXT:    {{%.*}} = uop.max [[Y]], {{%.*}} : i32
// CHECK-NOT:     uop.cmplt
// CHECK-NOT:     uop.add {{.*}} : i64
func.func @main(%x: tensor<1x2x3x3xi8>, %w: tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ws = onnx.Constant() {value = dense<[0.001, 0.0003]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %ys = onnx.Constant() {value = dense<0.3> : tensor<f32>} : () -> tensor<f32>
  %y = onnx.QLinearConv(%x, %s, %z, %w, %ws, %wz, %ys, %z) {kernel_shape = array<i64: 1, 1>, zant.fixed_point} : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  func.return %y : tensor<1x2x3x3xi8>
}

// -----

// y_scale 0.2 and w_scale 0.5, 0.25: M = 1/8 and 1/16, m0 = 2^30 with shifts 33 and 34, exact,
// and a sum of 2^2 (2^3) lands on a half: the int64 form stays, with its tie-to-even check on
// the low shift bits (`even_at_ties`).

// CHECK-LABEL: func.func @main()
// CHECK-NOT:     "requant_round"
// CHECK:         [[P:%.*]] = uop.mul {{%.*}}, {{%.*}} : i64
// CHECK-NEXT:    [[X:%.*]] = uop.add [[P]], {{%.*}} : i64
// CHECK-NEXT:    [[Q:%.*]] = uop.shr [[X]], {{%.*}} : i64
// CHECK:         uop.cmplt {{%.*}}, {{%.*}} : i64
func.func @main(%x: tensor<1x2x3x3xi8>, %w: tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ws = onnx.Constant() {value = dense<[0.5, 0.25]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %y = onnx.QLinearConv(%x, %s, %z, %w, %ws, %wz, %ys, %z) {kernel_shape = array<i64: 1, 1>, zant.fixed_point} : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  func.return %y : tensor<1x2x3x3xi8>
}

// -----

// y_scale 0.2 with w_scale 0.001, 0.0003: M = w_scale / 4 is exactly m0 · 2^-shift (shifts 42
// and 44), but m0 = m' · 2^7 (2^8) with m' odd, so only a sum that is an odd multiple of
// 2^34 (2^35) could land on a half (`ties_reachable`), far beyond int32: no tie check, and the
// high-word form of the first case.

// CHECK-LABEL: func.func @main()
// CHECK-NOT:     "requant_ties"
// CHECK-DAG:     uop.define_global "constant" {{[0-9]+}} "requant_round" value dense<[512, 2048]>
// CHECK-DAG:     uop.define_global "constant" {{[0-9]+}} "requant_shift" value dense<[10, 12]>
// CHECK:         [[P:%.*]] = uop.mul {{%.*}}, {{%.*}} : i64
// CHECK-NEXT:    [[HI64:%.*]] = uop.shr [[P]], {{%.*}} : i64
// CHECK-NEXT:    {{%.*}} = uop.cast [[HI64]] : i64 to i32
// CHECK-NOT:     uop.cmplt
func.func @main(%x: tensor<1x2x3x3xi8>, %w: tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ws = onnx.Constant() {value = dense<[0.001, 0.0003]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %y = onnx.QLinearConv(%x, %s, %z, %w, %ws, %wz, %ys, %z) {kernel_shape = array<i64: 1, 1>, zant.fixed_point} : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  func.return %y : tensor<1x2x3x3xi8>
}
