// RUN: zant-opt %s --split-input-file -p fold-qdq | filecheck %s

// 16x8 quantization (onnxruntime's QInt16 activations, QInt8 weights): a Conv of a DQ'd int16
// input with DQ'd int8 weights and an int32 bias, into an int16 Q, becomes one QLinearConv on
// the int16 / int8 tensors (a type beyond ONNX's 8-bit QLinearConv, which onnx-to-uop lowers
// with an int32 or int64 sum), its zero points as they are (int16, non-zero here).

// CHECK-LABEL: func.func @conv_16x8
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b) {kernel_shape = array<i64: 1, 1>, zant.fixed_point} : (tensor<1x2x3x3xi16>, tensor<f32>, tensor<i16>, tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i16>, tensor<2xi32>) -> tensor<1x2x3x3xi16>
// CHECK-NEXT:    func.return %y
func.func @conv_16x8(%x: tensor<1x2x3x3xi16>) -> tensor<1x2x3x3xi16> {
  %xs = onnx.Constant() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-911> : tensor<i16>} : () -> tensor<i16>
  %w = onnx.Constant() {value = dense<[[[[1]], [[2]]], [[[3]], [[-4]]]]> : tensor<2x2x1x1xi8>} : () -> tensor<2x2x1x1xi8>
  %ws = onnx.Constant() {value = dense<[0.25, 0.125]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %b = onnx.Constant() {value = dense<[5, -7]> : tensor<2xi32>} : () -> tensor<2xi32>
  %bs = onnx.Constant() {value = dense<[0.00025, 0.000125]> : tensor<2xf32>} : () -> tensor<2xf32>
  %bz = onnx.Constant() {value = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %ys = onnx.Constant() {value = dense<0.002> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-32768> : tensor<i16>} : () -> tensor<i16>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x2x3x3xi16>, tensor<f32>, tensor<i16>) -> tensor<1x2x3x3xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 0 : i64} : (tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x2x1x1xf32>
  %bf = onnx.DequantizeLinear(%b, %bs, %bz) {axis = 0 : i64} : (tensor<2xi32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  %c = onnx.Conv(%xf, %wf, %bf) {kernel_shape = array<i64: 1, 1>} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %y = onnx.QuantizeLinear(%c, %ys, %yz) : (tensor<1x2x3x3xf32>, tensor<f32>, tensor<i16>) -> tensor<1x2x3x3xi16>
  func.return %y : tensor<1x2x3x3xi16>
}

// -----

// int16 weights (16x16) do not fold: the weights must be 8-bit.

// CHECK-LABEL: func.func @conv_16x16
// CHECK:         onnx.Conv
// CHECK-NOT:     onnx.QLinearConv
func.func @conv_16x16(%x: tensor<1x2x3x3xi16>) -> tensor<1x2x3x3xi16> {
  %xs = onnx.Constant() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<i16>} : () -> tensor<i16>
  %w = onnx.Constant() {value = dense<[[[[1]], [[2]]], [[[3]], [[-4]]]]> : tensor<2x2x1x1xi16>} : () -> tensor<2x2x1x1xi16>
  %ws = onnx.Constant() {value = dense<[0.25, 0.125]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi16>} : () -> tensor<2xi16>
  %ys = onnx.Constant() {value = dense<0.002> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i16>} : () -> tensor<i16>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x2x3x3xi16>, tensor<f32>, tensor<i16>) -> tensor<1x2x3x3xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 0 : i64} : (tensor<2x2x1x1xi16>, tensor<2xf32>, tensor<2xi16>) -> tensor<2x2x1x1xf32>
  %c = onnx.Conv(%xf, %wf) {kernel_shape = array<i64: 1, 1>} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = onnx.QuantizeLinear(%c, %ys, %yz) : (tensor<1x2x3x3xf32>, tensor<f32>, tensor<i16>) -> tensor<1x2x3x3xi16>
  func.return %y : tensor<1x2x3x3xi16>
}

// -----

// The rest of the KWS 16x8 graph: Gemm (a 1x1 QLinearConv between Reshapes, transB marked), a counted
// AveragePool (the depthwise window sum of ones), Flatten on the int16 codes, Softmax
// (QLinearSoftmax of int16; its exp from two 256-entry tables in onnx-to-uop).

// CHECK-LABEL: func.func @kws_tail
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         onnx.QLinearConv({{.*}}) {kernel_shape = array<i64: 2, 2>, group = 2 : i64, zant.fixed_point, zant.average_count = 4 : i64, zant.global_pool} : (tensor<1x2x2x2xi16>
// CHECK:         onnx.Flatten({{.*}}) {axis = 1 : i64} : (tensor<1x2x1x1xi16>) -> tensor<1x2xi16>
// CHECK:         onnx.QLinearConv({{.*}}) {zant.fixed_point, zant.transposed_b} : (tensor<1x2x1x1xi16>, tensor<f32>, tensor<i16>, tensor<3x2x1x1xi8>
// CHECK:         onnx.QLinearSoftmax({{.*}}) {axis = 1 : i64} : (tensor<1x3xi16>, tensor<f32>, tensor<i16>, tensor<f32>, tensor<i16>) -> tensor<1x3xi16>
// CHECK-NOT:     onnx.Gemm
// CHECK-NOT:     onnx.Softmax
func.func @kws_tail(%x: tensor<1x2x2x2xi16>) -> tensor<1x3xi16> {
  %s = onnx.Constant() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<-32768> : tensor<i16>} : () -> tensor<i16>
  %fs = onnx.Constant() {value = dense<0.0005> : tensor<f32>} : () -> tensor<f32>
  %fz = onnx.Constant() {value = dense<-1407> : tensor<i16>} : () -> tensor<i16>
  %ps = onnx.Constant() {value = dense<1.5259e-05> : tensor<f32>} : () -> tensor<f32>
  %w = onnx.Constant() {value = dense<[[1, -2], [3, 4], [-5, 6]]> : tensor<3x2xi8>} : () -> tensor<3x2xi8>
  %ws = onnx.Constant() {value = dense<[0.25, 0.125, 0.5]> : tensor<3xf32>} : () -> tensor<3xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<3xi8>} : () -> tensor<3xi8>
  %a = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x2x2x2xi16>, tensor<f32>, tensor<i16>) -> tensor<1x2x2x2xf32>
  %p = onnx.AveragePool(%a) {kernel_shape = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32>
  %pq = onnx.QuantizeLinear(%p, %s, %z) : (tensor<1x2x1x1xf32>, tensor<f32>, tensor<i16>) -> tensor<1x2x1x1xi16>
  %pd = onnx.DequantizeLinear(%pq, %s, %z) : (tensor<1x2x1x1xi16>, tensor<f32>, tensor<i16>) -> tensor<1x2x1x1xf32>
  %fl = onnx.Flatten(%pd) {axis = 1 : i64} : (tensor<1x2x1x1xf32>) -> tensor<1x2xf32>
  %flq = onnx.QuantizeLinear(%fl, %s, %z) : (tensor<1x2xf32>, tensor<f32>, tensor<i16>) -> tensor<1x2xi16>
  %fld = onnx.DequantizeLinear(%flq, %s, %z) : (tensor<1x2xi16>, tensor<f32>, tensor<i16>) -> tensor<1x2xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 0 : i64} : (tensor<3x2xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x2xf32>
  %g = onnx.Gemm(%fld, %wf) {transB = 1 : i64} : (tensor<1x2xf32>, tensor<3x2xf32>) -> tensor<1x3xf32>
  %gq = onnx.QuantizeLinear(%g, %fs, %fz) : (tensor<1x3xf32>, tensor<f32>, tensor<i16>) -> tensor<1x3xi16>
  %gd = onnx.DequantizeLinear(%gq, %fs, %fz) : (tensor<1x3xi16>, tensor<f32>, tensor<i16>) -> tensor<1x3xf32>
  %sm = onnx.Softmax(%gd) {axis = 1 : i64} : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %y = onnx.QuantizeLinear(%sm, %ps, %z) : (tensor<1x3xf32>, tensor<f32>, tensor<i16>) -> tensor<1x3xi16>
  func.return %y : tensor<1x3xi16>
}

// -----

// A 16x8 graph's residual Add (two int16 tensors of other parameters) → QLinearAdd of int16;
// a Relu after it (no Q between: a fused activation) → an int16 Clip at the output's zero
// point; MaxPool on the int16 codes.

// CHECK-LABEL: func.func @residual
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %[[ADD:.*]] = onnx.QLinearAdd(%a, %sa, %za, %b, %sb, %zb, %sy, %zy) : (tensor<1x2x4x4xi16>, tensor<f32>, tensor<i16>, tensor<1x2x4x4xi16>, tensor<f32>, tensor<i16>, tensor<f32>, tensor<i16>) -> tensor<1x2x4x4xi16>
// CHECK:         %[[CLIP:.*]] = onnx.Clip(%[[ADD]], %{{.*}}) : (tensor<1x2x4x4xi16>, tensor<i16>) -> tensor<1x2x4x4xi16>
// CHECK:         onnx.MaxPool(%[[CLIP]]) {{.*}} : (tensor<1x2x4x4xi16>) -> tensor<1x2x2x2xi16>
// CHECK-NOT:     onnx.QuantizeLinear
func.func @residual(%a: tensor<1x2x4x4xi16>, %b: tensor<1x2x4x4xi16>) -> tensor<1x2x2x2xi16> {
  %sa = onnx.Constant() {value = dense<0.0007> : tensor<f32>} : () -> tensor<f32>
  %za = onnx.Constant() {value = dense<-911> : tensor<i16>} : () -> tensor<i16>
  %sb = onnx.Constant() {value = dense<0.0011> : tensor<f32>} : () -> tensor<f32>
  %zb = onnx.Constant() {value = dense<37> : tensor<i16>} : () -> tensor<i16>
  %sy = onnx.Constant() {value = dense<0.0013> : tensor<f32>} : () -> tensor<f32>
  %zy = onnx.Constant() {value = dense<-120> : tensor<i16>} : () -> tensor<i16>
  %af = onnx.DequantizeLinear(%a, %sa, %za) : (tensor<1x2x4x4xi16>, tensor<f32>, tensor<i16>) -> tensor<1x2x4x4xf32>
  %bf = onnx.DequantizeLinear(%b, %sb, %zb) : (tensor<1x2x4x4xi16>, tensor<f32>, tensor<i16>) -> tensor<1x2x4x4xf32>
  %s = onnx.Add(%af, %bf) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = onnx.Relu(%s) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %rq = onnx.QuantizeLinear(%r, %sy, %zy) : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<i16>) -> tensor<1x2x4x4xi16>
  %rd = onnx.DequantizeLinear(%rq, %sy, %zy) : (tensor<1x2x4x4xi16>, tensor<f32>, tensor<i16>) -> tensor<1x2x4x4xf32>
  %p = onnx.MaxPool(%rd) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %y = onnx.QuantizeLinear(%p, %sy, %zy) : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<i16>) -> tensor<1x2x2x2xi16>
  func.return %y : tensor<1x2x2x2xi16>
}
