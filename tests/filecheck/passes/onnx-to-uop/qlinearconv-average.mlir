// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// The QLinearConv of ones fold-qdq makes of an average pool (zant.average_count = its window
// size) requantizes by the exact x_scale / (y_scale · 4) = 1/4, ties to even as QuantizeLinear
// after the float pool: X = S · 1 + 2, q = X >> 2, and where X's two low bits are 0 (S / 4
// was a half) an odd q steps down by one. All in int32 (zant.analysis.rounding picks the form).

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[M:%.*]] = uop.const 1 : i32
// CHECK-DAG:     [[ADD:%.*]] = uop.const 2 : i32
// CHECK-DAG:     [[BY:%.*]] = uop.const 2 : i32
// CHECK-DAG:     [[MASK:%.*]] = uop.const 3 : i32
// CHECK-DAG:     [[BELOW:%.*]] = uop.const 1 : i32
// CHECK:         [[SUM:%.*]] = uop.add {{%.*}}, {{%.*}} : i32
// CHECK:         [[P:%.*]] = uop.mul [[SUM]], [[M]] : i32
// CHECK-NEXT:    [[X:%.*]] = uop.add [[P]], [[ADD]] : i32
// CHECK-NEXT:    [[Q:%.*]] = uop.shr [[X]], [[BY]] : i32
// CHECK-NEXT:    [[LOW:%.*]] = uop.and [[X]], [[MASK]] : i32
// CHECK-NEXT:    [[TIE:%.*]] = uop.cmplt [[LOW]], [[BELOW]] : i32
// CHECK-NEXT:    [[ODD:%.*]] = uop.and [[Q]], {{%.*}} : i32
// CHECK-NEXT:    [[DOWN:%.*]] = uop.where [[TIE]], [[ODD]], {{%.*}} : i32
// CHECK-NEXT:    [[EVEN:%.*]] = uop.sub [[Q]], [[DOWN]] : i32
// CHECK-NEXT:    {{%.*}} = uop.add [[EVEN]], {{%.*}} : i32
// CHECK-NOT:     i64
func.func @main(%x: tensor<1x2x4x4xi8>) -> tensor<1x2x2x2xi8> {
  %s = onnx.Constant() {value = dense<0.125> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ones = onnx.Constant() {value = dense<1> : tensor<2x1x2x2xi8>} : () -> tensor<2x1x2x2xi8>
  %window = onnx.Constant() {value = dense<2.500000e-01> : tensor<f32>} : () -> tensor<f32>
  %zero = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %s, %z, %ones, %window, %zero, %s, %z) {group = 2 : i64, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, zant.fixed_point, zant.average_count = 4 : i64} : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<2x1x2x2xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
  func.return %y : tensor<1x2x2x2xi8>
}

// -----

// A 3x3 window at equal scales: S / 9 is never a half (an odd count), so no tie check, only
// X = S · 3641 + 16512 and q = X >> 15 (exact for every sum of nine int8 codes around zero
// point 0): what the fixed point costs, rounded by the exact ratio instead of f32(1/9).

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[M:%.*]] = uop.const 3641 : i32
// CHECK-DAG:     [[ADD:%.*]] = uop.const 16512 : i32
// CHECK-DAG:     [[BY:%.*]] = uop.const 15 : i32
// CHECK:         [[P:%.*]] = uop.mul {{%.*}}, [[M]] : i32
// CHECK-NEXT:    [[X:%.*]] = uop.add [[P]], [[ADD]] : i32
// CHECK-NEXT:    [[Q:%.*]] = uop.shr [[X]], [[BY]] : i32
// CHECK-NEXT:    {{%.*}} = uop.max [[Q]], {{%.*}} : i32
// CHECK-NOT:     uop.cmplt
func.func @main(%x: tensor<1x2x3x3xi8>) -> tensor<1x2x1x1xi8> {
  %s = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ones = onnx.Constant() {value = dense<1> : tensor<2x1x3x3xi8>} : () -> tensor<2x1x3x3xi8>
  %window = onnx.Constant() {value = dense<0.111111112> : tensor<f32>} : () -> tensor<f32>
  %y = onnx.QLinearConv(%x, %s, %z, %ones, %window, %z, %s, %z) {group = 2 : i64, kernel_shape = array<i64: 3, 3>, zant.fixed_point, zant.average_count = 9 : i64} : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<2x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x1x1xi8>
  func.return %y : tensor<1x2x1x1xi8>
}
