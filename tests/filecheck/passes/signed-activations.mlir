// RUN: zant-opt %s --split-input-file -p signed-activations | filecheck %s

// A uint8 chain between a float input and a float output: every code and zero point moves by
// -128 (128 -> 0, 3 -> -125), Clip's bounds and LookupTable's table with them; uint8 weights of
// zero point 128 become int8 of zero point 0; scales and the int32 bias stay.
// CHECK-LABEL: func.func @chain
// CHECK-DAG:     %[[ZP:.*]] = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
// CHECK-DAG:     %[[YZP:.*]] = onnx.Constant() {value = dense<-125> : tensor<i8>} : () -> tensor<i8>
// CHECK-DAG:     %[[W:.*]] = onnx.Constant() {value = dense<{{\[\[\[\[}}1]], {{\[\[}}-128]]], {{\[\[\[}}0]], {{\[\[}}127]]]]> : tensor<2x2x1x1xi8>}
// CHECK-DAG:     %[[LO:.*]] = onnx.Constant() {value = dense<-125> : tensor<i8>} : () -> tensor<i8>
// CHECK-DAG:     %[[TABLE:.*]] = onnx.Constant() {value = dense_resource<table> : tensor<256xi8>} : () -> tensor<256xi8>
// CHECK:         %[[Q:.*]] = onnx.QuantizeLinear(%x, %s, %[[ZP]]) : (tensor<1x2x1x1xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x1x1xi8>
// CHECK:         %[[C:.*]] = onnx.QLinearConv(%[[Q]], %s, %[[ZP]], %{{.*}}, %s, %[[ZP]], %s, %[[YZP]], %bias) : ({{.*}}xi8>, tensor<f32>, tensor<i8>, tensor<2x2x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>, tensor<2xi32>) -> tensor<1x2x1x1xi8>
// CHECK:         %[[M:.*]] = onnx.Reshape(%[[C]], %shape) : (tensor<1x2x1x1xi8>, tensor<2xi64>) -> tensor<1x2xi8>
// CHECK:         %[[K:.*]] = onnx.Clip(%[[M]], %[[LO]], %{{.*}}) : (tensor<1x2xi8>, tensor<i8>, tensor<i8>) -> tensor<1x2xi8>
// CHECK:         %[[T:.*]] = onnx.LookupTable(%[[K]], %[[TABLE]]) : (tensor<1x2xi8>, tensor<256xi8>) -> tensor<1x2xi8>
// CHECK:         onnx.DequantizeLinear(%[[T]], %s, %[[YZP]]) : (tensor<1x2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2xf32>
// CHECK-NOT:     ui8
// The table's blob (after its alignment word): 0, 1, 255, 7 ... as -128, -127, 127, -121 ...
// CHECK:         table: "0x1000000080817F87
func.func @chain(%x: tensor<1x2x1x1xf32>) -> tensor<1x2xf32> {
  %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %zp = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %yzp = onnx.Constant() {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
  %w = onnx.Constant() {value = dense<[[[[129]], [[0]]], [[[128]], [[255]]]]> : tensor<2x2x1x1xui8>} : () -> tensor<2x2x1x1xui8>
  %bias = onnx.Constant() {value = dense<[5, -5]> : tensor<2xi32>} : () -> tensor<2xi32>
  %shape = onnx.Constant() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %lo = onnx.Constant() {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
  %hi = onnx.Constant() {value = dense<200> : tensor<ui8>} : () -> tensor<ui8>
  %table = onnx.Constant() {value = dense<[0, 1, 255, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7]> : tensor<256xui8>} : () -> tensor<256xui8>
  %q = onnx.QuantizeLinear(%x, %s, %zp) : (tensor<1x2x1x1xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x1x1xui8>
  %c = onnx.QLinearConv(%q, %s, %zp, %w, %s, %zp, %s, %yzp, %bias) : (tensor<1x2x1x1xui8>, tensor<f32>, tensor<ui8>, tensor<2x2x1x1xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>, tensor<2xi32>) -> tensor<1x2x1x1xui8>
  %m = onnx.Reshape(%c, %shape) : (tensor<1x2x1x1xui8>, tensor<2xi64>) -> tensor<1x2xui8>
  %k = onnx.Clip(%m, %lo, %hi) : (tensor<1x2xui8>, tensor<ui8>, tensor<ui8>) -> tensor<1x2xui8>
  %t = onnx.LookupTable(%k, %table) : (tensor<1x2xui8>, tensor<256xui8>) -> tensor<1x2xui8>
  %y = onnx.DequantizeLinear(%t, %s, %yzp) : (tensor<1x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2xf32>
  func.return %y : tensor<1x2xf32>
}

// -----

// The graph's own uint8 input and output keep their type, and with them every value tied to
// them (the zero points they share, the Concat's other input); the QLinearConv's output, read
// only by the DequantizeLinear, is a class of its own and becomes int8.
// CHECK-LABEL: func.func @edges
// CHECK:         %[[YZP:.*]] = onnx.Constant() {value = dense<-118> : tensor<i8>}
// CHECK:         %[[C:.*]] = onnx.QLinearConv(%x, %s, %zp, %w, %s, %wzp, %s, %[[YZP]]) : (tensor<1x2x2x2xui8>, tensor<f32>, tensor<ui8>, tensor<2x2x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
// CHECK:         onnx.DequantizeLinear(%[[C]], %s, %[[YZP]]) : (tensor<1x2x2x2xi8>, tensor<f32>, tensor<i8>)
// CHECK:         %[[Q:.*]] = onnx.QuantizeLinear(%f, %s, %zp) : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x2x2xui8>
// CHECK:         onnx.Concat(%[[Q]], %x) {axis = 1 : i64} : (tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>) -> tensor<1x4x2x2xui8>
func.func @edges(%x: tensor<1x2x2x2xui8>, %f: tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x4x2x2xui8>) {
  %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %zp = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %yzp = onnx.Constant() {value = dense<10> : tensor<ui8>} : () -> tensor<ui8>
  %w = onnx.Constant() {value = dense<1> : tensor<2x2x1x1xi8>} : () -> tensor<2x2x1x1xi8>
  %wzp = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %c = onnx.QLinearConv(%x, %s, %zp, %w, %s, %wzp, %s, %yzp) : (tensor<1x2x2x2xui8>, tensor<f32>, tensor<ui8>, tensor<2x2x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x2x2xui8>
  %y = onnx.DequantizeLinear(%c, %s, %yzp) : (tensor<1x2x2x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x2x2xf32>
  %q = onnx.QuantizeLinear(%f, %s, %zp) : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x2x2xui8>
  %cat = onnx.Concat(%q, %x) {axis = 1 : i64} : (tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>) -> tensor<1x4x2x2xui8>
  func.return %y, %cat : tensor<1x2x2x2xf32>, tensor<1x4x2x2xui8>
}

// -----

// Kept uint8: a QuantizeLinear without a zero point (its uint8 0 has no int8 spelling there),
// and a class read by an op that takes codes for numbers (Cast), with the MaxPool before it.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     xi8>
// CHECK-NOT:     tensor<i8>
func.func @kept(%f: tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x1x1xi32>) {
  %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %zp = onnx.Constant() {value = dense<7> : tensor<ui8>} : () -> tensor<ui8>
  %q = onnx.QuantizeLinear(%f, %s) : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2x2x2xui8>
  %y = onnx.DequantizeLinear(%q, %s) : (tensor<1x2x2x2xui8>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %r = onnx.QuantizeLinear(%f, %s, %zp) : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x2x2xui8>
  %p = onnx.MaxPool(%r) {kernel_shape = array<i64: 2, 2>} : (tensor<1x2x2x2xui8>) -> tensor<1x2x1x1xui8>
  %i = onnx.Cast(%p) {to = 6 : i64} : (tensor<1x2x1x1xui8>) -> tensor<1x2x1x1xi32>
  func.return %y, %i : tensor<1x2x2x2xf32>, tensor<1x2x1x1xi32>
}
