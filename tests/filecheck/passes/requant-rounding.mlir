// RUN: zant-opt %s --split-input-file -p 'requant-rounding{mode=tflite}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'requant-rounding{mode=tflite},requant-rounding' | filecheck %s --check-prefix=EXACT
// RUN: zant-opt %s --split-input-file -p 'requant-rounding{mode=onnxruntime},onnx-to-uop' | filecheck %s --check-prefix=ORT
// RUN: zant-opt %s --split-input-file -p 'requant-rounding{mode=tflite},onnx-to-uop' | filecheck %s --check-prefix=TFL
// RUN: zant-opt %s --split-input-file -p 'requant-rounding{mode=tflite-single},onnx-to-uop' | filecheck %s --check-prefix=SINGLE

// The fixed-point QLinearConv (fold-qdq's mark) and the QLinearAdd get the mode; a QLinearConv
// without the mark (the reference's float requantization) does not. `exact` removes the marks.

// CHECK-LABEL: func.func @main
// CHECK:         %y = onnx.QLinearConv{{.*}} {kernel_shape = array<i64: 1, 1>, zant.fixed_point, zant.rounding = "tflite"}
// CHECK:         %n = onnx.QLinearConv{{.*}} {kernel_shape = array<i64: 1, 1>} :
// CHECK:         %s = onnx.QLinearAdd{{.*}} {zant.rounding = "tflite"}
// EXACT-NOT:     zant.rounding
func.func @main(%x: tensor<1x2x3x3xi8>, %a: tensor<1x2x3x3xi8>) -> (tensor<1x2x3x3xi8>, tensor<1x2x3x3xi8>, tensor<1x2x3x3xi8>) {
  %xs = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1]], [[2]]], [[[3]], [[-4]]]]> : tensor<2x2x1x1xi8>} : () -> tensor<2x2x1x1xi8>
  %ws = onnx.Constant() {value = dense<[0.25, 0.125]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %ys = onnx.Constant() {value = dense<0.75> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {kernel_shape = array<i64: 1, 1>, zant.fixed_point} : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  %n = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {kernel_shape = array<i64: 1, 1>} : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  %s = onnx.QLinearAdd(%x, %xs, %xz, %a, %ys, %xz, %ys, %yz) : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  func.return %y, %n, %s : tensor<1x2x3x3xi8>, tensor<1x2x3x3xi8>, tensor<1x2x3x3xi8>
}

// -----

// Lowered: onnxruntime's float32 scale per channel, (0.5 · w_scale) / 0.75 rounded to float32,
// times the int32 sum converted to float32, rounded to nearest even by the 1.5 · 2^23 add.
// TFLite's Q31 multiplier (one for both channels: 2/3 and 1/3 share a significand) and
// per-channel right shifts; the doubling high multiply's + 2^30 >> 31 (a constant 64-bit shift),
// then the rounding shift in int32 (ties away from zero: less 1 for a negative value); single
// rounding (every r > 0 here): the product >> 31 with no nudge, then + 2^(r-1) >> r in int32.

// ORT-LABEL:   func.func @main
// ORT:           %requant_scale = uop.define_global "constant" {{.*}} value dense<[0.166666672, 0.0833333358]> : tensor<2xf32>
// ORT:           [[SUM:%.*]] = uop.cast %{{.*}} : i32 to f32
// ORT:           [[SCALE:%.*]] = uop.load %{{.*}} : f32
// ORT-NEXT:      [[PRODUCT:%.*]] = uop.mul [[SUM]], [[SCALE]] : f32
// ORT-NEXT:      [[ROUNDER:%.*]] = uop.const 0x4B400000 : f32
// ORT-NEXT:      %{{.*}} = uop.add [[PRODUCT]], [[ROUNDER]] : f32

// TFL-LABEL:   func.func @main
// TFL:           %requant_shift = uop.define_global "constant" {{.*}} value dense<[2, 3]> : tensor<2xi32>
// TFL:           [[Q:%.*]] = uop.const 1431655765 : i64
// TFL:           [[BY31:%.*]] = uop.const 31 : i64
// TFL-NEXT:      [[NUDGE:%.*]] = uop.const 1073741824 : i64
// TFL:           [[PRODUCT:%.*]] = uop.mul %{{.*}}, [[Q]] : i64
// TFL-NEXT:      [[NUDGED:%.*]] = uop.add [[PRODUCT]], [[NUDGE]] : i64
// TFL-NEXT:      [[HIGH64:%.*]] = uop.shr [[NUDGED]], [[BY31]] : i64
// TFL-NEXT:      [[HIGH:%.*]] = uop.cast [[HIGH64]] : i64 to i32
// TFL:           [[NEGATIVE:%.*]] = uop.cmplt [[HIGH]], %{{.*}} : i32
// TFL:           %{{.*}} = uop.add [[HIGH]], %{{.*}} : i32

// SINGLE-LABEL: func.func @main
// SINGLE:         [[Q:%.*]] = uop.const 1431655765 : i64
// SINGLE:         [[BY31:%.*]] = uop.const 31 : i64
// SINGLE:         [[PRODUCT:%.*]] = uop.mul %{{.*}}, [[Q]] : i64
// SINGLE-NEXT:    [[HIGH64:%.*]] = uop.shr [[PRODUCT]], [[BY31]] : i64
// SINGLE-NEXT:    [[HIGH:%.*]] = uop.cast [[HIGH64]] : i64 to i32
// SINGLE:         [[HALF:%.*]] = uop.shr %{{.*}}, %{{.*}} : i32
// SINGLE-NEXT:    [[ROUNDED:%.*]] = uop.add [[HIGH]], [[HALF]] : i32
// SINGLE-NEXT:    %{{.*}} = uop.shr [[ROUNDED]], %{{.*}} : i32
func.func @main(%x: tensor<1x2x3x3xi8>) -> tensor<1x2x3x3xi8> {
  %xs = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1]], [[2]]], [[[3]], [[-4]]]]> : tensor<2x2x1x1xi8>} : () -> tensor<2x2x1x1xi8>
  %ws = onnx.Constant() {value = dense<[0.25, 0.125]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %ys = onnx.Constant() {value = dense<0.75> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {kernel_shape = array<i64: 1, 1>, zant.fixed_point} : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  func.return %y : tensor<1x2x3x3xi8>
}

// -----

// litert: per op. The 1x1 QLinearConv of a 2-D input reshaped to [rows, depth, 1, 1] (a Gemm, as
// fold-qdq makes it) and a QLinearMatMul are fully connected layers: tflite-single. Another conv
// (a 4-D input): tflite.

// RUN: zant-opt %s --split-input-file -p 'requant-rounding{mode=litert}' | filecheck %s --check-prefix=LITERT
// LITERT-LABEL: func.func @fully_connected
// LITERT:         %fc = onnx.QLinearConv{{.*}} {zant.fixed_point, zant.rounding = "tflite-single"}
// LITERT:         %mm = onnx.QLinearMatMul{{.*}} {zant.fixed_point, zant.rounding = "tflite-single"}
// LITERT:         %conv = onnx.QLinearConv{{.*}} {zant.fixed_point, zant.rounding = "tflite"}
func.func @fully_connected(%x: tensor<2x4xi8>, %image: tensor<2x4x1x1xi8>) -> (tensor<2x3x1x1xi8>, tensor<2x3xi8>, tensor<2x3x1x1xi8>) {
  %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<1> : tensor<3x4x1x1xi8>} : () -> tensor<3x4x1x1xi8>
  %m = onnx.Constant() {value = dense<1> : tensor<4x3xi8>} : () -> tensor<4x3xi8>
  %shape = onnx.Constant() {value = dense<[2, 4, 1, 1]> : tensor<4xi64>} : () -> tensor<4xi64>
  %r = onnx.Reshape(%x, %shape) : (tensor<2x4xi8>, tensor<4xi64>) -> tensor<2x4x1x1xi8>
  %fc = onnx.QLinearConv(%r, %s, %z, %w, %s, %z, %s, %z) {zant.fixed_point} : (tensor<2x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<3x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<2x3x1x1xi8>
  %mm = onnx.QLinearMatMul(%x, %s, %z, %m, %s, %z, %s, %z) {zant.fixed_point} : (tensor<2x4xi8>, tensor<f32>, tensor<i8>, tensor<4x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  %conv = onnx.QLinearConv(%image, %s, %z, %w, %s, %z, %s, %z) {zant.fixed_point} : (tensor<2x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<3x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<2x3x1x1xi8>
  func.return %fc, %mm, %conv : tensor<2x3x1x1xi8>, tensor<2x3xi8>, tensor<2x3x1x1xi8>
}
