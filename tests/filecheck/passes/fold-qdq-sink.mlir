// RUN: zant-opt %s --split-input-file -p fold-qdq | filecheck %s

// tf2onnx's NHWC edge: the input's DQ feeds a Transpose to NCHW, then the Conv. The DQ sinks
// below the Transpose (which then runs on int8) and the Conv folds; a per-channel weight DQ
// sinks through its Transpose with its axis permuted (3 → 0), the constant transposed at
// compile time.

// CHECK-LABEL: func.func @nhwc
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK-DAG:     %[[X:.*]] = onnx.Transpose(%x) {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x2x2x3xi8>) -> tensor<1x3x2x2xi8>
// CHECK-DAG:     %[[W:.*]] = onnx.Constant() {value = dense<{{\[\[\[\[}}1]], {{\[\[}}3]], {{\[\[}}5]]], {{\[\[\[}}2]], {{\[\[}}4]], {{\[\[}}6]]]]> : tensor<2x3x1x1xi8>}
// CHECK:         %y = onnx.QLinearConv(%[[X]], %xs, %xz, %[[W]], %ws, %wz, %xs, %xz) {zant.fixed_point} : (tensor<1x3x2x2xi8>, tensor<f32>, tensor<i8>, tensor<2x3x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
// CHECK-NEXT:    func.return %y
func.func @nhwc(%x: tensor<1x2x2x3xi8>) -> tensor<1x2x2x2xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1, 2]]], [[[3, 4]]], [[[5, 6]]]]> : tensor<3x1x1x2xi8>} : () -> tensor<3x1x1x2xi8>
  %ws = onnx.Constant() {value = dense<[0.5, 0.25]> : tensor<2xf32>} : () -> tensor<2xf32>
  %wz = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x2x2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x3xf32>
  %xt = onnx.Transpose(%xf) {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x2x2x3xf32>) -> tensor<1x3x2x2xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %wz) {axis = 3 : i64} : (tensor<3x1x1x2xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<3x1x1x2xf32>
  %wt = onnx.Transpose(%wf) {perm = array<i64: 3, 0, 1, 2>} : (tensor<3x1x1x2xf32>) -> tensor<2x3x1x1xf32>
  %c = onnx.Conv(%xt, %wt) : (tensor<1x3x2x2xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x2x2xf32>
  %y = onnx.QuantizeLinear(%c, %xs, %xz) : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
  func.return %y : tensor<1x2x2x2xi8>
}

// -----

// TFLite's FULLY_CONNECTED as tf2onnx writes it: MatMul of DQ'd operands, then Add of an int32
// bias DQ'd in x_scale · w_scale → the Gemm fold (a 1×1 QLinearConv between Reshapes).

// CHECK-LABEL: func.func @fully_connected
// CHECK-NOT:     onnx.MatMul
// CHECK-NOT:     onnx.Add
// CHECK:         onnx.QLinearConv({{.*}}, %b) {zant.fixed_point} : (tensor<2x3x1x1xi8>, tensor<f32>, tensor<i8>, tensor<4x3x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>, tensor<4xi32>) -> tensor<2x4x1x1xi8>
// CHECK:         onnx.Reshape
// CHECK-NEXT:    func.return
func.func @fully_connected(%x: tensor<2x3xi8>) -> tensor<2x4xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]> : tensor<3x4xi8>} : () -> tensor<3x4xi8>
  %ws = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %b = onnx.Constant() {value = dense<[1, 2, 3, 4]> : tensor<4xi32>} : () -> tensor<4xi32>
  %bs = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %bz = onnx.Constant() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %xf = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  %wf = onnx.DequantizeLinear(%w, %ws, %xz) : (tensor<3x4xi8>, tensor<f32>, tensor<i8>) -> tensor<3x4xf32>
  %bf = onnx.DequantizeLinear(%b, %bs, %bz) : (tensor<4xi32>, tensor<f32>, tensor<i32>) -> tensor<4xf32>
  %m = onnx.MatMul(%xf, %wf) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %a = onnx.Add(%m, %bf) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %y = onnx.QuantizeLinear(%a, %xs, %xz) : (tensor<2x4xf32>, tensor<f32>, tensor<i8>) -> tensor<2x4xi8>
  func.return %y : tensor<2x4xi8>
}

// -----

// Split (several results) between a DQ and Qs: the DQ sinks below it, one per part, and each
// Q(DQ) then cancels or requantizes (ties to even: a one-element window sum).

// CHECK-LABEL: func.func @split
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %[[A:.*]], %[[B:.*]] = onnx.Split(%x, %sizes) {axis = 1 : i64} : (tensor<1x4xi8>, tensor<2xi64>) -> (tensor<1x1xi8>, tensor<1x3xi8>)
// CHECK-NEXT:    %shape = onnx.Constant() {value = dense<[1, 3, 1]> : tensor<3xi64>}
// CHECK-NEXT:    %[[COLUMN:.*]] = onnx.Reshape(%[[B]], %shape) : (tensor<1x3xi8>, tensor<3xi64>) -> tensor<1x3x1xi8>
// CHECK:         %[[W:.*]] = onnx.QLinearConv(%[[COLUMN]], %s, %z, %ones, %window, %zero, %s2, %z) {group = 3 : i64, zant.fixed_point, zant.average_count = 1 : i64}
// CHECK-NEXT:    %shape_1 = onnx.Constant() {value = dense<[1, 3]> : tensor<2xi64>}
// CHECK-NEXT:    %qb = onnx.Reshape(%[[W]], %shape_1) : (tensor<1x3x1xi8>, tensor<2xi64>) -> tensor<1x3xi8>
// CHECK-NEXT:    func.return %[[A]], %qb
func.func @split(%x: tensor<1x4xi8>) -> (tensor<1x1xi8>, tensor<1x3xi8>) {
  %s = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %s2 = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %sizes = onnx.Constant() {value = dense<[1, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4xf32>
  %a, %b = onnx.Split(%f, %sizes) {axis = 1 : i64} : (tensor<1x4xf32>, tensor<2xi64>) -> (tensor<1x1xf32>, tensor<1x3xf32>)
  %qa = onnx.QuantizeLinear(%a, %s, %z) : (tensor<1x1xf32>, tensor<f32>, tensor<i8>) -> tensor<1x1xi8>
  %qb = onnx.QuantizeLinear(%b, %s2, %z) : (tensor<1x3xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3xi8>
  func.return %qa, %qb : tensor<1x1xi8>, tensor<1x3xi8>
}
