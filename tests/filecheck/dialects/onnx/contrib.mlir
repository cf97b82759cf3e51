// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: zant-opt %s -p dce | filecheck %s

// com.microsoft's QLinearAdd, which `fold-qdq` makes of DQ → Add → Q: registered in the onnx
// dialect like the generated ops, so a folded module prints and parses back. B broadcasts;
// scales and zero points are one-element tensors of any rank.

// CHECK-LABEL: func.func @qlinear_add
func.func @qlinear_add(%a: tensor<1x4x2xi8>, %b: tensor<4x1xi8>, %s: tensor<f32>, %z: tensor<i8>, %cs: tensor<1xf32>, %cz: tensor<1xi8>) -> tensor<1x4x2xi8> {
  // CHECK-NEXT: %c = onnx.QLinearAdd(%a, %s, %z, %b, %s, %z, %cs, %cz) {onnx.node_name = "add"} : (tensor<1x4x2xi8>, tensor<f32>, tensor<i8>, tensor<4x1xi8>, tensor<f32>, tensor<i8>, tensor<1xf32>, tensor<1xi8>) -> tensor<1x4x2xi8>
  // GENERIC: "onnx.QLinearAdd"(%a, %s, %z, %b, %s, %z, %cs, %cz) {onnx.node_name = "add"}
  %c = onnx.QLinearAdd(%a, %s, %z, %b, %s, %z, %cs, %cz) {onnx.node_name = "add"} : (tensor<1x4x2xi8>, tensor<f32>, tensor<i8>, tensor<4x1xi8>, tensor<f32>, tensor<i8>, tensor<1xf32>, tensor<1xi8>) -> tensor<1x4x2xi8>
  // CHECK-NEXT: func.return %c : tensor<1x4x2xi8>
  func.return %c : tensor<1x4x2xi8>
}

// CHECK-LABEL: func.func @qlinear_add_unsigned
func.func @qlinear_add_unsigned(%a: tensor<3xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<3xui8> {
  // CHECK-NEXT: %c = onnx.QLinearAdd(%a, %s, %z, %a, %s, %z, %s, %z) : (tensor<3xui8>, tensor<f32>, tensor<ui8>, tensor<3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<3xui8>
  %c = onnx.QLinearAdd(%a, %s, %z, %a, %s, %z, %s, %z) : (tensor<3xui8>, tensor<f32>, tensor<ui8>, tensor<3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<3xui8>
  func.return %c : tensor<3xui8>
}

// Zant's LookupTable, which `fold-qdq` makes of DQ → an element-wise op → Q: Y = Table[X - lowest(X)];
// X and Y may differ in signedness (the table has Y's type).

// CHECK-LABEL: func.func @lookup_table
func.func @lookup_table(%x: tensor<2x3xi8>, %t: tensor<256xui8>) -> tensor<2x3xui8> {
  // CHECK-NEXT: %y = onnx.LookupTable(%x, %t) {onnx.node_name = "sigmoid"} : (tensor<2x3xi8>, tensor<256xui8>) -> tensor<2x3xui8>
  // GENERIC: "onnx.LookupTable"(%x, %t) {onnx.node_name = "sigmoid"}
  %y = onnx.LookupTable(%x, %t) {onnx.node_name = "sigmoid"} : (tensor<2x3xi8>, tensor<256xui8>) -> tensor<2x3xui8>
  // CHECK-NEXT: func.return %y : tensor<2x3xui8>
  func.return %y : tensor<2x3xui8>
}

// com.microsoft's QLinearSoftmax, which `fold-qdq` makes of DQ → Softmax → Q.

// CHECK-LABEL: func.func @qlinear_softmax
func.func @qlinear_softmax(%x: tensor<2x5xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<2x5xui8> {
  // CHECK-NEXT: %y = onnx.QLinearSoftmax(%x, %s, %z, %s, %z) {axis = 1 : i64, opset = 13 : i64} : (tensor<2x5xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x5xui8>
  // GENERIC: "onnx.QLinearSoftmax"(%x, %s, %z, %s, %z) <{axis = 1 : i64, opset = 13 : i64}>
  %y = onnx.QLinearSoftmax(%x, %s, %z, %s, %z) {axis = 1 : i64, opset = 13 : i64} : (tensor<2x5xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x5xui8>
  // CHECK-NEXT: func.return %y : tensor<2x5xui8>
  func.return %y : tensor<2x5xui8>
}

// com.microsoft's QLinearAveragePool, which `fold-qdq` makes of an AveragePool whose divisor varies.

// CHECK-LABEL: func.func @qlinear_average_pool
func.func @qlinear_average_pool(%x: tensor<1x2x4x4xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<1x2x2x2xi8> {
  // CHECK-NEXT: %y = onnx.QLinearAveragePool(%x, %s, %z, %s, %z) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64} : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
  // GENERIC: "onnx.QLinearAveragePool"(%x, %s, %z, %s, %z) <{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64}>
  %y = onnx.QLinearAveragePool(%x, %s, %z, %s, %z) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64} : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
  // CHECK-NEXT: func.return %y : tensor<1x2x2x2xi8>
  func.return %y : tensor<1x2x2x2xi8>
}

// Zant's Guard, which the control-flow unroller makes of a Loop unrolled for its declared
// extent: no result (its effect is NAME_predict's return), so `dce` keeps it.

// CHECK-LABEL: func.func @guard
func.func @guard(%t: tensor<i64>, %k: tensor<i64>, %c: tensor<1xi1>) {
  // CHECK-NEXT: %ok = onnx.Equal(%t, %k) : (tensor<i64>, tensor<i64>) -> tensor<i1>
  // CHECK-NEXT: onnx.Guard(%ok) {onnx.node_name = "loop/guard"} : (tensor<i1>) -> ()
  // GENERIC: "onnx.Guard"(%ok) {onnx.node_name = "loop/guard"} : (tensor<i1>) -> ()
  %ok = onnx.Equal(%t, %k) : (tensor<i64>, tensor<i64>) -> tensor<i1>
  onnx.Guard(%ok) {onnx.node_name = "loop/guard"} : (tensor<i1>) -> ()
  // CHECK-NEXT: onnx.Guard(%c) : (tensor<1xi1>) -> ()
  onnx.Guard(%c) : (tensor<1xi1>) -> ()
  // CHECK-NEXT: func.return
  func.return
}

// onnxruntime's QOperator ops that the importer reads and `fold-qoperator` rewrites:
// QLinearSigmoid and QLinearGlobalAveragePool (QLinearLeakyRelu's operands), QLinearConcat
// (Y's scale and zero point, then one (X, X_scale, X_zero_point) triple per input) and QGemm,
// whose C, y_scale and y_zero_point are optional (without y_scale, Y is f32) and whose B may be
// quantized per column.

// CHECK-LABEL: func.func @qoperator
func.func @qoperator(%x: tensor<1x2x3x3xi8>, %s: tensor<f32>, %z: tensor<i8>, %a: tensor<1x4xi8>, %b: tensor<3x4xi8>, %bs: tensor<3xf32>, %bz: tensor<3xi8>, %c: tensor<3xi32>) -> (tensor<1x2x3x3xi8>, tensor<1x2x1x1xi8>, tensor<2x2x3x3xi8>, tensor<1x3xi8>, tensor<1x3xf32>) {
  // CHECK-NEXT: %sig = onnx.QLinearSigmoid(%x, %s, %z, %s, %z) : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  %sig = onnx.QLinearSigmoid(%x, %s, %z, %s, %z) : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  // CHECK-NEXT: %gap = onnx.QLinearGlobalAveragePool(%x, %s, %z, %s, %z) {channels_last = 0 : i64} : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x1x1xi8>
  %gap = onnx.QLinearGlobalAveragePool(%x, %s, %z, %s, %z) {channels_last = 0 : i64} : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x1x1xi8>
  // CHECK-NEXT: %cat = onnx.QLinearConcat(%s, %z, %x, %s, %z, %sig, %s, %z) {axis = 0 : i64} : (tensor<f32>, tensor<i8>, tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x2x3x3xi8>
  // GENERIC: "onnx.QLinearConcat"(%s, %z, %x, %s, %z, %sig, %s, %z) <{axis = 0 : i64}>
  %cat = onnx.QLinearConcat(%s, %z, %x, %s, %z, %sig, %s, %z) {axis = 0 : i64} : (tensor<f32>, tensor<i8>, tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x2x3x3xi8>
  // CHECK-NEXT: %q = onnx.QGemm(%a, %s, %z, %b, %bs, %bz, %c, %s, %z) {transB = 1 : i64} : (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<3x4xi8>, tensor<3xf32>, tensor<3xi8>, tensor<3xi32>, tensor<f32>, tensor<i8>) -> tensor<1x3xi8>
  // GENERIC: "onnx.QGemm"(%a, %s, %z, %b, %bs, %bz, %c, %s, %z) <{transB = 1 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1>}>
  %q = onnx.QGemm(%a, %s, %z, %b, %bs, %bz, %c, %s, %z) {transB = 1 : i64} : (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<3x4xi8>, tensor<3xf32>, tensor<3xi8>, tensor<3xi32>, tensor<f32>, tensor<i8>) -> tensor<1x3xi8>
  // CHECK-NEXT: %f = onnx.QGemm(%a, %s, %z, %b, %bs, %bz) {transB = 1 : i64} : (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<3x4xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<1x3xf32>
  // GENERIC: "onnx.QGemm"(%a, %s, %z, %b, %bs, %bz) <{transB = 1 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0>}>
  %f = onnx.QGemm(%a, %s, %z, %b, %bs, %bz) {transB = 1 : i64} : (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<3x4xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<1x3xf32>
  // CHECK-NEXT: func.return %sig, %gap, %cat, %q, %f
  func.return %sig, %gap, %cat, %q, %f : tensor<1x2x3x3xi8>, tensor<1x2x1x1xi8>, tensor<2x2x3x3xi8>, tensor<1x3xi8>, tensor<1x3xf32>
}
