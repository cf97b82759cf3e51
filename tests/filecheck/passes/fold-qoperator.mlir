// RUN: zant-opt %s --split-input-file -p fold-qoperator | filecheck %s
// RUN: zant-opt %s --split-input-file -p fold-qoperator,fold-qoperator | filecheck %s

// fold-qoperator: onnxruntime's com.microsoft QLinear ops (QOperator models) become the integer
// ops fold-qdq makes of their DQ → op → Q definitions, directly; what has no integer form
// becomes that definition. Running it twice changes nothing (the second RUN line).

// QLinearSigmoid → a LookupTable of its definition: Q(sigmoid(DQ(v))) for the 256 int8 values
// (x scale 1/16, zero point 0; y scale 1/256, zero point -128: entry v + 128).

// CHECK-LABEL: func.func @sigmoid
// CHECK:         %table = onnx.Constant() {value = dense_resource<table> : tensor<256xi8>, onnx.node_name = "sig"} : () -> tensor<256xi8>
// CHECK-NEXT:    %y = onnx.LookupTable(%x, %table) {onnx.node_name = "sig"} : (tensor<2x3xi8>, tensor<256xi8>) -> tensor<2x3xi8>
// CHECK-NEXT:    func.return %y
// The table (after its 4-byte alignment header): -128 up to v = -64 (x = -4), ... -4 at v = -1, 0 at
// v = 0 (sigmoid 1/2), 4 at v = 1 ...
// CHECK:         table: "0x1000000080808080{{[0-9A-F]*}}F4F8FC0004080C10
func.func @sigmoid(%x: tensor<2x3xi8>) -> tensor<2x3xi8> {
  %xs = onnx.Constant() {value = dense<0.0625> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.00390625> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearSigmoid(%x, %xs, %xz, %ys, %yz) {onnx.node_name = "sig"} : (tensor<2x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  func.return %y : tensor<2x3xi8>
}

// -----

// QLinearLeakyRelu with alpha 0.1 → a LookupTable; with alpha 1 it is a requantization (which
// fold-qdq makes too) and stays for onnx-to-uop's integer lowering.

// CHECK-LABEL: func.func @leaky_relu
// CHECK:         %y = onnx.LookupTable(%x, %table) : (tensor<4xui8>, tensor<256xui8>) -> tensor<4xui8>
// CHECK-NEXT:    %r = onnx.QLinearLeakyRelu(%y, %s, %z, %s2, %z) {alpha = 1.000000e+00 : f32} : (tensor<4xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
// CHECK-NEXT:    func.return %r
func.func @leaky_relu(%x: tensor<4xui8>) -> tensor<4xui8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %s2 = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %y = onnx.QLinearLeakyRelu(%x, %s, %z, %s, %z) {alpha = 0.1 : f32} : (tensor<4xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  %r = onnx.QLinearLeakyRelu(%y, %s, %z, %s2, %z) {alpha = 1.0 : f32} : (tensor<4xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  func.return %r : tensor<4xui8>
}

// -----

// QLinearGlobalAveragePool → a depthwise QLinearConv of ones over the whole plane, requantized
// by the exact ratio (zant.average_count, the window size); a QLinearAveragePool whose divisor is
// constant → the same over its window; one whose divisor varies (ceil_mode) stays.

// CHECK-LABEL: func.func @pools
// CHECK:         %ones = onnx.Constant() {value = dense<1> : tensor<2x1x2x2xi8>}
// CHECK:         %p = onnx.QLinearConv(%x, %s, %z, %ones, %window, %zero, %s, %z) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, group = 2 : i64, zant.fixed_point, zant.average_count = 4 : i64}
// CHECK:         %ones_1 = onnx.Constant() {value = dense_resource<ones> : tensor<2x1x4x4xi8>}
// CHECK:         %g = onnx.QLinearConv(%x, %s, %z, %ones_1, %window_1, %zero_1, %s, %z) {group = 2 : i64, zant.fixed_point, zant.average_count = 16 : i64} : {{.*}} -> tensor<1x2x1x1xi8>
// CHECK-NEXT:    %c = onnx.QLinearAveragePool(%x, %s, %z, %s, %z) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64}
// CHECK-NEXT:    func.return %p, %g, %c
func.func @pools(%x: tensor<1x2x4x4xi8>) -> (tensor<1x2x2x2xi8>, tensor<1x2x1x1xi8>, tensor<1x2x2x2xi8>) {
  %s = onnx.Constant() {value = dense<0.0625> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<1> : tensor<i8>} : () -> tensor<i8>
  %p = onnx.QLinearAveragePool(%x, %s, %z, %s, %z) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
  %g = onnx.QLinearGlobalAveragePool(%x, %s, %z, %s, %z) {channels_last = 0 : i64} : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x1x1xi8>
  %c = onnx.QLinearAveragePool(%x, %s, %z, %s, %z) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64} : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
  func.return %p, %g, %c : tensor<1x2x2x2xi8>, tensor<1x2x1x1xi8>, tensor<1x2x2x2xi8>
}

// -----

// QLinearConcat → Concat of the 8-bit inputs, each requantized to the output's parameters
// where its own differ (ties to even, as fold-qdq's Concat: a window sum of one element over
// the codes viewed as [1, 3, 1]); QLinearAdd is already integer and stays.

// CHECK-LABEL: func.func @concat
// CHECK-NEXT:    %s = onnx.Constant
// CHECK-NEXT:    %t = onnx.Constant
// CHECK-NEXT:    %z = onnx.Constant
// CHECK-NEXT:    %a = onnx.QLinearAdd(%x, %s, %z, %w, %s, %z, %t, %z)
// CHECK-NEXT:    %shape = onnx.Constant() {value = dense<[1, 3, 1]> : tensor<3xi64>}
// CHECK-NEXT:    %0 = onnx.Reshape(%a, %shape) : (tensor<3xi8>, tensor<3xi64>) -> tensor<1x3x1xi8>
// CHECK:         %1 = onnx.QLinearConv(%0, %t, %z, %ones, %window, %zero, %s, %z) {group = 3 : i64, zant.fixed_point, zant.average_count = 1 : i64}
// CHECK-NEXT:    %shape_1 = onnx.Constant() {value = dense<3> : tensor<1xi64>}
// CHECK-NEXT:    %2 = onnx.Reshape(%1, %shape_1) : (tensor<1x3x1xi8>, tensor<1xi64>) -> tensor<3xi8>
// CHECK-NEXT:    %c = onnx.Concat(%2, %x) {axis = 0 : i64} : (tensor<3xi8>, tensor<3xi8>) -> tensor<6xi8>
// CHECK-NEXT:    func.return %c
func.func @concat(%x: tensor<3xi8>, %w: tensor<3xi8>) -> tensor<6xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %t = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %a = onnx.QLinearAdd(%x, %s, %z, %w, %s, %z, %t, %z) : (tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<3xi8>
  %c = onnx.QLinearConcat(%s, %z, %a, %t, %z, %x, %s, %z) {axis = 0 : i64} : (tensor<f32>, tensor<i8>, tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<3xi8>, tensor<f32>, tensor<i8>) -> tensor<6xi8>
  func.return %c : tensor<6xi8>
}

// -----

// QLinearSoftmax with opset 12 semantics along the last axis is opset 13's: QLinearSoftmax
// without the attribute, which onnx-to-uop lowers.

// CHECK-LABEL: func.func @softmax
// CHECK:         %y = onnx.QLinearSoftmax(%x, %s, %z, %ys, %yz) {axis = -1 : i64} : (tensor<2x5xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<2x5xi8>
func.func @softmax(%x: tensor<2x5xi8>) -> tensor<2x5xi8> {
  %s = onnx.Constant() {value = dense<0.08> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.00390625> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearSoftmax(%x, %s, %z, %ys, %yz) {axis = -1 : i64, opset = 12 : i64} : (tensor<2x5xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<2x5xi8>
  func.return %y : tensor<2x5xi8>
}

// -----

// QGemm with an output scale → a 1×1 QLinearConv between two Reshapes, B (transposed, per
// channel) laid out as [N, K, 1, 1] at compile time and C its int32 bias. Without an output
// scale the result is float: its definition, DQ(A) · DQ(B)ᵀ + DQ(C) with C in a_scale · b_scale.

// CHECK-LABEL: func.func @gemm
// CHECK:         %0 = onnx.Reshape(%a, %shape) : (tensor<2x4xi8>, tensor<4xi64>) -> tensor<2x4x1x1xi8>
// CHECK-NEXT:    %1 = onnx.QLinearConv(%0, %as, %az, %weight, %bs, %bz, %ys, %yz, %c) {zant.fixed_point} : (tensor<2x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<3x4x1x1xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<3xi32>) -> tensor<2x3x1x1xi8>
// CHECK:         %y = onnx.Reshape(%1, %shape_1) : (tensor<2x3x1x1xi8>, tensor<2xi64>) -> tensor<2x3xi8>
// CHECK-NEXT:    %2 = onnx.DequantizeLinear(%a, %as, %az) : (tensor<2x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4xf32>
// CHECK-NEXT:    %3 = onnx.DequantizeLinear(%b, %bs, %bz) {axis = 0 : i64} : (tensor<3x4xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x4xf32>
// CHECK-NEXT:    %bias_scale = onnx.Constant() {value = dense<[2.000000e-03, 4.000000e-03, 1.000000e-03]> : tensor<3xf32>}
// CHECK-NEXT:    %bias_zero_point = onnx.Constant() {value = dense<0> : tensor<3xi32>}
// CHECK-NEXT:    %4 = onnx.DequantizeLinear(%c, %bias_scale, %bias_zero_point) {axis = 0 : i64} : (tensor<3xi32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
// CHECK-NEXT:    %f = onnx.Gemm(%2, %3, %4) {transB = 1 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %y, %f
func.func @gemm(%a: tensor<2x4xi8>) -> (tensor<2x3xi8>, tensor<2x3xf32>) {
  %as = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %az = onnx.Constant() {value = dense<2> : tensor<i8>} : () -> tensor<i8>
  %b = onnx.Constant() {value = dense<[[1, 2, 3, 4], [-1, -2, -3, -4], [5, 0, 0, 5]]> : tensor<3x4xi8>} : () -> tensor<3x4xi8>
  %bs = onnx.Constant() {value = dense<[0.02, 0.04, 0.01]> : tensor<3xf32>} : () -> tensor<3xf32>
  %bz = onnx.Constant() {value = dense<0> : tensor<3xi8>} : () -> tensor<3xi8>
  %c = onnx.Constant() {value = dense<[10, -20, 30]> : tensor<3xi32>} : () -> tensor<3xi32>
  %ys = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-4> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QGemm(%a, %as, %az, %b, %bs, %bz, %c, %ys, %yz) {transB = 1 : i64} : (tensor<2x4xi8>, tensor<f32>, tensor<i8>, tensor<3x4xi8>, tensor<3xf32>, tensor<3xi8>, tensor<3xi32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  %f = onnx.QGemm(%a, %as, %az, %b, %bs, %bz, %c) {transB = 1 : i64} : (tensor<2x4xi8>, tensor<f32>, tensor<i8>, tensor<3x4xi8>, tensor<3xf32>, tensor<3xi8>, tensor<3xi32>) -> tensor<2x3xf32>
  func.return %y, %f : tensor<2x3xi8>, tensor<2x3xf32>
}

// -----

// Run-time scales leave no integer form: QLinearSigmoid becomes its definition, DQ → Sigmoid → Q.

// CHECK-LABEL: func.func @runtime_scale
// CHECK-NEXT:    %z = onnx.Constant
// CHECK-NEXT:    %0 = onnx.DequantizeLinear(%x, %s, %z) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
// CHECK-NEXT:    %1 = onnx.Sigmoid(%0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %y = onnx.QuantizeLinear(%1, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
// CHECK-NEXT:    func.return %y
func.func @runtime_scale(%x: tensor<4xi8>, %s: tensor<f32>) -> tensor<4xi8> {
  %z = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearSigmoid(%x, %s, %z, %s, %z) : (tensor<4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  func.return %y : tensor<4xi8>
}
