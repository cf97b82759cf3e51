// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// QLinearAdd's exact form sums in int32 where it fits (quant.narrow_sum_multipliers): the Q31
// multipliers of the scale ratios 0.0625 / 0.25 and 0.375 / 0.25 share trailing zero bits,
// dropped with the shift, and 255 times each narrowed multiplier plus the rounding half stays
// below 2^31.
// CHECK-LABEL: func.func @int32_sum
// CHECK:         uop.range
// CHECK:           %[[A:.*]] = uop.cast %{{.*}} : i8 to i32
// CHECK:           uop.sub %[[A]], %{{.*}} : i32
// CHECK:           uop.mul %{{.*}}, %{{.*}} : i32
// CHECK:           uop.shr %{{.*}}, %{{.*}} : i32
// CHECK-NOT:       i64
// CHECK:         func.return
func.func @int32_sum(%x: tensor<1x4x3x3xi8>, %y: tensor<1x4x3x3xi8>) -> tensor<1x4x3x3xi8> {
  %xs = onnx.Constant() {value = dense<6.250000e-02> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<3.750000e-01> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-7> : tensor<i8>} : () -> tensor<i8>
  %cs = onnx.Constant() {value = dense<2.500000e-01> : tensor<f32>} : () -> tensor<f32>
  %cz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %c = onnx.QLinearAdd(%x, %xs, %xz, %y, %ys, %yz, %cs, %cz) : (tensor<1x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<1x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x3x3xi8>
  func.return %c : tensor<1x4x3x3xi8>
}

// -----

// Ratios whose multipliers keep 24 significant bits (0.05 / 0.07 and 0.09 / 0.07 in float32):
// 255 times the narrowed multiplier of 1.29 passes 2^31, so each multiplier is split at bit 16
// (quant.split_sum_multipliers: 0.71 as 11702·2^16 + 56192, 1.29 as 21065·2^16 + 9472, shift
// 30): the high halves' products and the low halves' plus the rounding half sum in int32, then
// (H + (L >> 16)) >> 14, all int32 (the int64 sum's value).
// CHECK-LABEL: func.func @wide_sum
// CHECK-DAG:     %[[HA:.*]] = uop.const 11702 : i32
// CHECK-DAG:     %[[HB:.*]] = uop.const 21065 : i32
// CHECK-DAG:     %[[LA:.*]] = uop.const 56192 : i32
// CHECK-DAG:     %[[LB:.*]] = uop.const 9472 : i32
// CHECK-DAG:     %[[HALF:.*]] = uop.const 536870912 : i32
// CHECK-DAG:     %[[SIXTEEN:.*]] = uop.const 16 : i32
// CHECK-DAG:     %[[REST:.*]] = uop.const 14 : i32
// CHECK:         uop.range
// CHECK:         %[[L:.*]] = uop.load %{{.*}} : i8
// CHECK-NEXT:    %[[X:.*]] = uop.cast %[[L]] : i8 to i32
// CHECK-NEXT:    %[[CX:.*]] = uop.sub %[[X]], %{{.*}} : i32
// CHECK-NEXT:    %[[XH:.*]] = uop.mul %[[CX]], %[[HA]] : i32
// CHECK-NEXT:    %[[XL:.*]] = uop.mul %[[CX]], %[[LA]] : i32
// CHECK-NEXT:    %[[L0:.*]] = uop.add %[[HALF]], %[[XL]] : i32
// CHECK:         %[[CY:.*]] = uop.sub %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    %[[YH:.*]] = uop.mul %[[CY]], %[[HB]] : i32
// CHECK-NEXT:    %[[H:.*]] = uop.add %[[XH]], %[[YH]] : i32
// CHECK-NEXT:    %[[YL:.*]] = uop.mul %[[CY]], %[[LB]] : i32
// CHECK-NEXT:    %[[L1:.*]] = uop.add %[[L0]], %[[YL]] : i32
// CHECK-NEXT:    %[[LS:.*]] = uop.shr %[[L1]], %[[SIXTEEN]] : i32
// CHECK-NEXT:    %[[T:.*]] = uop.add %[[H]], %[[LS]] : i32
// CHECK-NEXT:    %[[V:.*]] = uop.shr %[[T]], %[[REST]] : i32
// CHECK-NEXT:    uop.add %[[V]], %{{.*}} : i32
// CHECK-NOT:     i64
// CHECK:         func.return
func.func @wide_sum(%x: tensor<1x4xi8>, %y: tensor<1x4xi8>) -> tensor<1x4xi8> {
  %xs = onnx.Constant() {value = dense<5.000000e-02> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<9.000000e-02> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-7> : tensor<i8>} : () -> tensor<i8>
  %cs = onnx.Constant() {value = dense<7.000000e-02> : tensor<f32>} : () -> tensor<f32>
  %cz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %c = onnx.QLinearAdd(%x, %xs, %xz, %y, %ys, %yz, %cs, %cz) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4xi8>
  func.return %c : tensor<1x4xi8>
}

// -----

// Small ratios with 24 significant bits (0.013 / 0.3 and 0.017 / 0.3): no narrowing, and the
// shift (35) passes 31, so the rounding half alone passes int32 and no split is taken; the products of the int32 centered inputs and their sum
// are int64 (one SMULL / SMLAL each), the shifted sum, within int32, requantized in int32.
// CHECK-LABEL: func.func @wide_products
// CHECK:         uop.range
// CHECK:         %[[L:.*]] = uop.load %{{.*}} : i8
// CHECK-NEXT:    %[[X:.*]] = uop.cast %[[L]] : i8 to i32
// CHECK-NEXT:    %[[CX:.*]] = uop.sub %[[X]], %{{.*}} : i32
// CHECK-NEXT:    %[[WX:.*]] = uop.cast %[[CX]] : i32 to i64
// CHECK-NEXT:    uop.mul %[[WX]], %{{.*}} : i64
// CHECK:         %[[S:.*]] = uop.shr %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    %[[V:.*]] = uop.cast %[[S]] : i64 to i32
// CHECK-NEXT:    uop.add %[[V]], %{{.*}} : i32
// CHECK:         func.return
func.func @wide_products(%x: tensor<1x4xi8>, %y: tensor<1x4xi8>) -> tensor<1x4xi8> {
  %xs = onnx.Constant() {value = dense<1.300000e-02> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<1.700000e-02> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-7> : tensor<i8>} : () -> tensor<i8>
  %cs = onnx.Constant() {value = dense<3.000000e-01> : tensor<f32>} : () -> tensor<f32>
  %cz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %c = onnx.QLinearAdd(%x, %xs, %xz, %y, %ys, %yz, %cs, %cz) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4xi8>
  func.return %c : tensor<1x4xi8>
}

// -----

// A zero point given at run time bounds nothing: all of it stays int64.
// CHECK-LABEL: func.func @run_time_zero_point
// CHECK:         uop.range
// CHECK:         %[[L:.*]] = uop.load %{{.*}} : i8
// CHECK-NEXT:    %[[X:.*]] = uop.cast %[[L]] : i8 to i64
// CHECK-NEXT:    uop.sub %[[X]], %{{.*}} : i64
// CHECK:         uop.mul %{{.*}}, %{{.*}} : i64
// CHECK:         uop.shr %{{.*}}, %{{.*}} : i64
// CHECK:         func.return
func.func @run_time_zero_point(%x: tensor<1x4xi8>, %y: tensor<1x4xi8>, %xz: tensor<i8>) -> tensor<1x4xi8> {
  %xs = onnx.Constant() {value = dense<5.000000e-02> : tensor<f32>} : () -> tensor<f32>
  %ys = onnx.Constant() {value = dense<9.000000e-02> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-7> : tensor<i8>} : () -> tensor<i8>
  %cs = onnx.Constant() {value = dense<7.000000e-02> : tensor<f32>} : () -> tensor<f32>
  %cz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %c = onnx.QLinearAdd(%x, %xs, %xz, %y, %ys, %yz, %cs, %cz) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4xi8>
  func.return %c : tensor<1x4xi8>
}
