// RUN: zant-opt %s --split-input-file -p fold-qdq | filecheck %s

// A Conv between DequantizeLinear of its int8 input, weight and int32 bias (bias scale =
// x_scale · w_scale, zero point 0) and a QuantizeLinear becomes one QLinearConv on the int8
// tensors, marked for fixed-point requantization; the DQ ops and the bias's scale go.

// CHECK-LABEL: func.func @main
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK-NOT:     %bs = onnx.Constant
// CHECK:         %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b) {kernel_shape = array<i64: 1, 1>, zant.fixed_point}
// CHECK-NEXT:    func.return %y
func.func @main(%x: tensor<1x2x3x3xi8>) -> tensor<1x2x3x3xi8> {
  %xs = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1]], [[2]]], [[[3]], [[-4]]]]> : tensor<2x2x1x1xi8>} : () -> tensor<2x2x1x1xi8>
  %ws = onnx.Constant() {value = dense<[0.25, 0.125]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %b = onnx.Constant() {value = dense<[5, -7]> : tensor<2xi32>} : () -> tensor<2xi32>
  %bs = onnx.Constant() {value = dense<[0.125, 0.0625]> : tensor<2xf32>} : () -> tensor<2xf32>
  %bz = onnx.Constant() {value = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %ys = onnx.Constant() {value = dense<0.75> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 0 : i64} : (tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x2x1x1xf32>
  %bf = onnx.DequantizeLinear(%b, %bs, %bz) {axis = 0 : i64} : (tensor<2xi32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  %c = onnx.Conv(%xf, %wf, %bf) {kernel_shape = array<i64: 1, 1>} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %y = onnx.QuantizeLinear(%c, %ys, %yz) : (tensor<1x2x3x3xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  func.return %y : tensor<1x2x3x3xi8>
}

// -----

// The same Conv with a bias whose scale is not x_scale · w_scale does not fold: it stays in
// float between its DQ and Q ops.

// CHECK-LABEL: func.func @main
// CHECK:         onnx.DequantizeLinear
// CHECK:         onnx.Conv
// CHECK:         onnx.QuantizeLinear
// CHECK-NOT:     onnx.QLinearConv
func.func @main(%x: tensor<1x2x3x3xi8>) -> tensor<1x2x3x3xi8> {
  %xs = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1]], [[2]]], [[[3]], [[-4]]]]> : tensor<2x2x1x1xi8>} : () -> tensor<2x2x1x1xi8>
  %ws = onnx.Constant() {value = dense<[0.25, 0.125]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %b = onnx.Constant() {value = dense<[5, -7]> : tensor<2xi32>} : () -> tensor<2xi32>
  %bs = onnx.Constant() {value = dense<[0.125, 0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %bz = onnx.Constant() {value = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %ys = onnx.Constant() {value = dense<0.75> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x2x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 0 : i64} : (tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x2x1x1xf32>
  %bf = onnx.DequantizeLinear(%b, %bs, %bz) {axis = 0 : i64} : (tensor<2xi32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  %c = onnx.Conv(%xf, %wf, %bf) {kernel_shape = array<i64: 1, 1>} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %y = onnx.QuantizeLinear(%c, %ys, %yz) : (tensor<1x2x3x3xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  func.return %y : tensor<1x2x3x3xi8>
}

// -----

// Relu and Clip between DQ and Q of equal parameters become Clip on the int8 tensor, with the
// bounds quantized (0 → the zero point -10; 6 / 0.05 - 10 = 110). Q(DQ(x)) with equal
// parameters is x. Softmax becomes QLinearSoftmax (fold-qdq-softmax.mlir).

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %s = onnx.Constant() {value = dense<5.000000e-02> : tensor<f32>}
// CHECK-NEXT:    %z = onnx.Constant() {value = dense<-10> : tensor<i8>}
// CHECK-NEXT:    [[ZERO:%.*]] = onnx.Constant() {value = dense<-10> : tensor<i8>}
// CHECK-NEXT:    %r = onnx.Clip(%x, [[ZERO]])
// CHECK-NEXT:    [[LOW:%.*]] = onnx.Constant() {value = dense<-10> : tensor<i8>}
// CHECK-NEXT:    [[HIGH:%.*]] = onnx.Constant() {value = dense<110> : tensor<i8>}
// CHECK-NEXT:    %c = onnx.Clip(%r, [[LOW]], [[HIGH]])
// CHECK-NEXT:    %q = onnx.QLinearSoftmax(%c, %s, %z, %s, %z) {axis = -1 : i64}
// CHECK-NEXT:    func.return %q
func.func @main(%x: tensor<1x4xi8>) -> tensor<1x4xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<-10> : tensor<i8>} : () -> tensor<i8>
  %zero = onnx.Constant() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %six = onnx.Constant() {value = dense<6.0> : tensor<f32>} : () -> tensor<f32>
  %xf = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4xf32>
  %rf = onnx.Relu(%xf) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %r = onnx.QuantizeLinear(%rf, %s, %z) : (tensor<1x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x4xi8>
  %rd = onnx.DequantizeLinear(%r, %s, %z) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4xf32>
  %cl = onnx.Clip(%rd, %zero, %six) : (tensor<1x4xf32>, tensor<f32>, tensor<f32>) -> tensor<1x4xf32>
  %c = onnx.QuantizeLinear(%cl, %s, %z) : (tensor<1x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x4xi8>
  %cd = onnx.DequantizeLinear(%c, %s, %z) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4xf32>
  %cq = onnx.QuantizeLinear(%cd, %s, %z) : (tensor<1x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x4xi8>
  %cf = onnx.DequantizeLinear(%cq, %s, %z) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4xf32>
  %sm = onnx.Softmax(%cf) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %q = onnx.QuantizeLinear(%sm, %s, %z) : (tensor<1x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x4xi8>
  func.return %q : tensor<1x4xi8>
}

// -----

// A QLinearMatMul already in the graph (QOperator format) is marked fixed-point when its
// scales are constants, and left as the reference computes it when a scale is an argument.

// CHECK-LABEL: func.func @main
// CHECK:         %y = onnx.QLinearMatMul(%a, %s, %z, %b, %s, %z, %s, %z) {zant.fixed_point}
// CHECK-NEXT:    %v = onnx.QLinearMatMul(%a, %t, %z, %b, %s, %z, %s, %z) :
func.func @main(%a: tensor<2x3xi8>, %b: tensor<3x2xi8>, %t: tensor<f32>) -> (tensor<2x2xi8>, tensor<2x2xi8>) {
  %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<1> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearMatMul(%a, %s, %z, %b, %s, %z, %s, %z) : (tensor<2x3xi8>, tensor<f32>, tensor<i8>, tensor<3x2xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<2x2xi8>
  %v = onnx.QLinearMatMul(%a, %t, %z, %b, %s, %z, %s, %z) : (tensor<2x3xi8>, tensor<f32>, tensor<i8>, tensor<3x2xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<2x2xi8>
  func.return %y, %v : tensor<2x2xi8>, tensor<2x2xi8>
}

// -----

// An AveragePool whose padded windows divide by fewer elements (count_include_pad = 0) has no
// depthwise-conv form: it becomes QLinearAveragePool (fold-qdq-pool.mlir). A GlobalAveragePool
// becomes a depthwise QLinearConv with a weight of ones and a weight scale of 1/4, marked with
// its window size (zant.average_count): the lowering requantizes by the exact ratio, ties to even.

// CHECK-LABEL: func.func @main
// CHECK:         %a0 = onnx.QLinearAveragePool(%x, %s, %z, %s, %z) {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
// CHECK:         %ones = onnx.Constant() {value = dense<1> : tensor<2x1x2x2xi8>}
// CHECK-NEXT:    %window = onnx.Constant() {value = dense<2.500000e-01> : tensor<f32>}
// CHECK-NEXT:    %zero = onnx.Constant() {value = dense<0> : tensor<i8>}
// CHECK-NEXT:    %g = onnx.QLinearConv(%x, %s, %z, %ones, %window, %zero, %s, %z) {group = 2 : i64, zant.fixed_point, zant.average_count = 4 : i64}
func.func @main(%x: tensor<1x2x2x2xi8>) -> (tensor<1x2x1x1xi8>, tensor<1x2x1x1xi8>) {
  %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<1> : tensor<i8>} : () -> tensor<i8>
  %xf = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x2x2x2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xf32>
  %af = onnx.AveragePool(%xf) {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32>
  %a0 = onnx.QuantizeLinear(%af, %s, %z) : (tensor<1x2x1x1xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x1x1xi8>
  %gf = onnx.GlobalAveragePool(%xf) : (tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32>
  %g = onnx.QuantizeLinear(%gf, %s, %z) : (tensor<1x2x1x1xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x1x1xi8>
  func.return %a0, %g : tensor<1x2x1x1xi8>, tensor<1x2x1x1xi8>
}
