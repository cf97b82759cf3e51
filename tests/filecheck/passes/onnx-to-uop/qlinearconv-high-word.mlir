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

// The same with y_scale 0.2: 0.05 / 0.2 is exactly 1/4, so both channels' m0 · 2^-shift are M
// exactly and a sum can land on a half: the int64 form stays, with its tie-to-even check on the
// low shift bits (`even_at_ties`).

// CHECK-LABEL: func.func @main()
// CHECK-NOT:     "requant_round"
// CHECK:         [[P:%.*]] = uop.mul {{%.*}}, {{%.*}} : i64
// CHECK-NEXT:    [[X:%.*]] = uop.add [[P]], {{%.*}} : i64
// CHECK-NEXT:    [[Q:%.*]] = uop.shr [[X]], {{%.*}} : i64
// CHECK:         uop.cmplt {{%.*}}, {{%.*}} : i64
func.func @main(%x: tensor<1x2x3x3xi8>, %w: tensor<2x2x1x1xi8>) -> tensor<1x2x3x3xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ws = onnx.Constant() {value = dense<[0.001, 0.0003]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %y = onnx.QLinearConv(%x, %s, %z, %w, %ws, %wz, %ys, %z) {kernel_shape = array<i64: 1, 1>, zant.fixed_point} : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  func.return %y : tensor<1x2x3x3xi8>
}
