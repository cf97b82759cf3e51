// RUN: zant-opt %s --split-input-file -p fold-qdq | filecheck %s

// Reductions and global pools between a DequantizeLinear and a QuantizeLinear stay integer.

// ReduceMean over the spatial axes with keepdims (timm's squeeze-excitation `x.mean((2, 3),
// keepdim=True)`): GlobalAveragePool's window sum, a depthwise QLinearConv of ones marked with the
// window size, so the lowering requantizes the int32 sum by the exact x_scale / (y_scale · 25).

// CHECK-LABEL: func.func @mean_spatial
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %window = onnx.Constant() {value = dense<4.000000e-02> : tensor<f32>}
// CHECK:         %y = onnx.QLinearConv(%x, %s, %z, %ones, %window, %zero, %ys, %z) {group = 8 : i64, zant.fixed_point, zant.average_count = 25 : i64} : {{.*}} -> tensor<1x8x1x1xi8>
// CHECK-NEXT:    func.return %y
func.func @mean_spatial(%x: tensor<1x8x5x5xi8>) -> tensor<1x8x1x1xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %ys = onnx.Constant() {value = dense<0.04> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %axes = onnx.Constant() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x8x5x5xi8>, tensor<f32>, tensor<i8>) -> tensor<1x8x5x5xf32>
  %r = onnx.ReduceMean(%f, %axes) {keepdims = 1 : i64} : (tensor<1x8x5x5xf32>, tensor<2xi64>) -> tensor<1x8x1x1xf32>
  %y = onnx.QuantizeLinear(%r, %ys, %z) : (tensor<1x8x1x1xf32>, tensor<f32>, tensor<i8>) -> tensor<1x8x1x1xi8>
  func.return %y : tensor<1x8x1x1xi8>
}

// -----

// ReduceMean over the last axis without keepdims (a Conv1d keyword model's `x.mean(-1)`),
// uint8: the window sum over [1, 16, 25], then a Reshape dropping the reduced axis.

// CHECK-LABEL: func.func @mean_last
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %[[SUM:.*]] = onnx.QLinearConv(%x, %s, %z, %ones, %window, %zero, %ys, %yz) {group = 16 : i64, zant.fixed_point, zant.average_count = 25 : i64} : {{.*}} -> tensor<1x16x1xui8>
// CHECK:         %y = onnx.Reshape(%[[SUM]], %shape) : (tensor<1x16x1xui8>, tensor<2xi64>) -> tensor<1x16xui8>
// CHECK-NEXT:    func.return %y
func.func @mean_last(%x: tensor<1x16x25xui8>) -> tensor<1x16xui8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %ys = onnx.Constant() {value = dense<0.02> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %yz = onnx.Constant() {value = dense<120> : tensor<ui8>} : () -> tensor<ui8>
  %axes = onnx.Constant() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x16x25xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x16x25xf32>
  %r = onnx.ReduceMean(%f, %axes) {keepdims = 0 : i64} : (tensor<1x16x25xf32>, tensor<1xi64>) -> tensor<1x16xf32>
  %y = onnx.QuantizeLinear(%r, %ys, %yz) : (tensor<1x16xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x16xui8>
  func.return %y : tensor<1x16xui8>
}

// -----

// ReduceSum over a middle axis: a Transpose takes it last (the lowering's view, no copy), the
// kept axes become [B, K] = [5, 5], and the window sum has a weight scale of 1 and a count of 1:
// requantized by x_scale / y_scale.

// CHECK-LABEL: func.func @sum_channels
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %[[T:.*]] = onnx.Transpose(%x) {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x5x5xi8>) -> tensor<1x5x5x8xi8>
// CHECK:         %[[R:.*]] = onnx.Reshape(%[[T]], %shape) : (tensor<1x5x5x8xi8>, tensor<3xi64>) -> tensor<5x5x8xi8>
// CHECK:         %window = onnx.Constant() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK:         %[[SUM:.*]] = onnx.QLinearConv(%[[R]], %s, %z, %ones, %window, %zero, %ys, %z) {group = 5 : i64, zant.fixed_point, zant.average_count = 1 : i64} : {{.*}} -> tensor<5x5x1xi8>
// CHECK:         %y = onnx.Reshape(%[[SUM]], %shape_1) : (tensor<5x5x1xi8>, tensor<4xi64>) -> tensor<1x1x5x5xi8>
func.func @sum_channels(%x: tensor<1x8x5x5xi8>) -> tensor<1x1x5x5xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %axes = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x8x5x5xi8>, tensor<f32>, tensor<i8>) -> tensor<1x8x5x5xf32>
  %r = onnx.ReduceSum(%f, %axes) {keepdims = 1 : i64} : (tensor<1x8x5x5xf32>, tensor<1xi64>) -> tensor<1x1x5x5xf32>
  %y = onnx.QuantizeLinear(%r, %ys, %z) : (tensor<1x1x5x5xf32>, tensor<f32>, tensor<i8>) -> tensor<1x1x5x5xi8>
  func.return %y : tensor<1x1x5x5xi8>
}

// -----

// No axes: every axis reduced, one window over [1, 1, 2, 3, 4] and a scalar result.

// CHECK-LABEL: func.func @mean_all
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         onnx.Reshape(%x, %shape) : (tensor<2x3x4xi8>, tensor<5xi64>) -> tensor<1x1x2x3x4xi8>
// CHECK:         onnx.QLinearConv({{.*}}) {group = 1 : i64, zant.fixed_point, zant.average_count = 24 : i64} : {{.*}} -> tensor<1x1x1x1x1xi8>
// CHECK:         %y = onnx.Reshape({{.*}}) : (tensor<1x1x1x1x1xi8>, tensor<0xi64>) -> tensor<i8>
func.func @mean_all(%x: tensor<2x3x4xi8>) -> tensor<i8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<2x3x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3x4xf32>
  %r = onnx.ReduceMean(%f) {keepdims = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<f32>
  %y = onnx.QuantizeLinear(%r, %s, %z) : (tensor<f32>, tensor<f32>, tensor<i8>) -> tensor<i8>
  func.return %y : tensor<i8>
}

// -----

// noop_with_empty_axes and no axes: the op is the identity, so only the requantization is left,
// exact (a window sum of one element each).

// CHECK-LABEL: func.func @noop
// CHECK-NOT:     onnx.ReduceSum
// CHECK:         onnx.Reshape(%x, %shape) : (tensor<2x3xi8>, tensor<3xi64>) -> tensor<1x6x1xi8>
// CHECK:         onnx.QLinearConv({{.*}}) {group = 6 : i64, zant.fixed_point, zant.average_count = 1 : i64}
// CHECK:         %y = onnx.Reshape({{.*}}) : (tensor<1x6x1xi8>, tensor<2xi64>) -> tensor<2x3xi8>
// CHECK-NEXT:    func.return %y
func.func @noop(%x: tensor<2x3xi8>) -> tensor<2x3xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %ys = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  %r = onnx.ReduceSum(%f) {noop_with_empty_axes = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = onnx.QuantizeLinear(%r, %ys, %z) : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  func.return %y : tensor<2x3xi8>
}

// -----

// Axes known only at run time: the reduction stays float between its DQ and Q.

// CHECK-LABEL: func.func @runtime_axes
// CHECK:         onnx.DequantizeLinear
// CHECK:         onnx.ReduceMean
// CHECK:         onnx.QuantizeLinear
func.func @runtime_axes(%x: tensor<1x8x5xi8>, %axes: tensor<1xi64>) -> tensor<1x8x1xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x8x5xi8>, tensor<f32>, tensor<i8>) -> tensor<1x8x5xf32>
  %r = onnx.ReduceMean(%f, %axes) : (tensor<1x8x5xf32>, tensor<1xi64>) -> tensor<1x8x1xf32>
  %y = onnx.QuantizeLinear(%r, %s, %z) : (tensor<1x8x1xf32>, tensor<f32>, tensor<i8>) -> tensor<1x8x1xi8>
  func.return %y : tensor<1x8x1xi8>
}

// -----

// GlobalMaxPool runs on the 8-bit tensor (quantization is monotone); where the Q's parameters
// differ from the DQ's, each maximum is requantized exactly, ties to even: a window sum of one
// element (count 1, weight scale 1) over the maxima viewed as [1, 8, 1].

// CHECK-LABEL: func.func @global_max
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %same = onnx.GlobalMaxPool(%x) : (tensor<1x8x5x5xi8>) -> tensor<1x8x1x1xi8>
// CHECK:         %[[MAX:.*]] = onnx.GlobalMaxPool(%x) : (tensor<1x8x5x5xi8>) -> tensor<1x8x1x1xi8>
// CHECK:         %[[COLUMN:.*]] = onnx.Reshape(%[[MAX]], %shape) : (tensor<1x8x1x1xi8>, tensor<3xi64>) -> tensor<1x8x1xi8>
// CHECK:         %window = onnx.Constant() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK:         %[[SUM:.*]] = onnx.QLinearConv(%[[COLUMN]], %s, %z, %ones, %window, %zero, %ys, %z) {group = 8 : i64, zant.fixed_point, zant.average_count = 1 : i64}
// CHECK:         %other = onnx.Reshape(%[[SUM]], %shape_1) : (tensor<1x8x1xi8>, tensor<4xi64>) -> tensor<1x8x1x1xi8>
// CHECK-NOT:     onnx.QLinearLeakyRelu
// CHECK:         func.return %same, %other
func.func @global_max(%x: tensor<1x8x5x5xi8>) -> (tensor<1x8x1x1xi8>, tensor<1x8x1x1xi8>) {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %ys = onnx.Constant() {value = dense<0.04> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x8x5x5xi8>, tensor<f32>, tensor<i8>) -> tensor<1x8x5x5xf32>
  %r = onnx.GlobalMaxPool(%f) : (tensor<1x8x5x5xf32>) -> tensor<1x8x1x1xf32>
  %same = onnx.QuantizeLinear(%r, %s, %z) : (tensor<1x8x1x1xf32>, tensor<f32>, tensor<i8>) -> tensor<1x8x1x1xi8>
  %g = onnx.GlobalMaxPool(%f) : (tensor<1x8x5x5xf32>) -> tensor<1x8x1x1xf32>
  %other = onnx.QuantizeLinear(%g, %ys, %z) : (tensor<1x8x1x1xf32>, tensor<f32>, tensor<i8>) -> tensor<1x8x1x1xi8>
  func.return %same, %other : tensor<1x8x1x1xi8>, tensor<1x8x1x1xi8>
}

// -----

// ReduceMin with equal DQ and Q parameters: the plain integer minimum.

// CHECK-LABEL: func.func @reduce_min
// CHECK-NEXT:    %axes = onnx.Constant
// CHECK-NEXT:    %y = onnx.ReduceMin(%x, %axes) {keepdims = 0 : i64} : (tensor<1x8x5x5xi8>, tensor<1xi64>) -> tensor<1x5x5xi8>
// CHECK-NEXT:    func.return %y
func.func @reduce_min(%x: tensor<1x8x5x5xi8>) -> tensor<1x5x5xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %axes = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x8x5x5xi8>, tensor<f32>, tensor<i8>) -> tensor<1x8x5x5xf32>
  %r = onnx.ReduceMin(%f, %axes) {keepdims = 0 : i64} : (tensor<1x8x5x5xf32>, tensor<1xi64>) -> tensor<1x5x5xf32>
  %y = onnx.QuantizeLinear(%r, %s, %z) : (tensor<1x5x5xf32>, tensor<f32>, tensor<i8>) -> tensor<1x5x5xi8>
  func.return %y : tensor<1x5x5xi8>
}

// -----

// A negative output scale: the exact requantization needs positive scales, so the mean stays
// float.

// CHECK-LABEL: func.func @negative_scale
// CHECK:         onnx.DequantizeLinear
// CHECK:         onnx.ReduceMean
// CHECK:         onnx.QuantizeLinear
func.func @negative_scale(%x: tensor<1x8x5xi8>) -> tensor<1x8x1xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %ys = onnx.Constant() {value = dense<-0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %axes = onnx.Constant() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x8x5xi8>, tensor<f32>, tensor<i8>) -> tensor<1x8x5xf32>
  %r = onnx.ReduceMean(%f, %axes) : (tensor<1x8x5xf32>, tensor<1xi64>) -> tensor<1x8x1xf32>
  %y = onnx.QuantizeLinear(%r, %ys, %z) : (tensor<1x8x1xf32>, tensor<f32>, tensor<i8>) -> tensor<1x8x1xi8>
  func.return %y : tensor<1x8x1xi8>
}

// -----

// int16 (onnxruntime's QInt16 activations): the reductions fold alike, the 16-bit x summed in
// int32; other 16-bit ops (here a Sigmoid) stay float.

// CHECK-LABEL: func.func @int16
// CHECK:         onnx.QLinearConv(%x, %s, %z, %ones, %window, %zero, %ys, %z) {group = 8 : i64, zant.fixed_point, zant.average_count = 5 : i64} : {{.*}} -> tensor<1x8x1xi16>
// CHECK:         %max = onnx.ReduceMax(%x, %axes) : (tensor<1x8x5xi16>, tensor<1xi64>) -> tensor<1x8x1xi16>
// CHECK:         onnx.DequantizeLinear
// CHECK-NEXT:    onnx.Sigmoid
// CHECK-NEXT:    %other = onnx.QuantizeLinear
func.func @int16(%x: tensor<1x8x5xi16>) -> (tensor<1x8x1xi16>, tensor<1x8x1xi16>, tensor<1x8x5xi16>) {
  %s = onnx.Constant() {value = dense<0.0005> : tensor<f32>} : () -> tensor<f32>
  %ys = onnx.Constant() {value = dense<0.0004> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<30> : tensor<i16>} : () -> tensor<i16>
  %axes = onnx.Constant() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x8x5xi16>, tensor<f32>, tensor<i16>) -> tensor<1x8x5xf32>
  %r = onnx.ReduceMean(%f, %axes) : (tensor<1x8x5xf32>, tensor<1xi64>) -> tensor<1x8x1xf32>
  %mean = onnx.QuantizeLinear(%r, %ys, %z) : (tensor<1x8x1xf32>, tensor<f32>, tensor<i16>) -> tensor<1x8x1xi16>
  %f2 = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x8x5xi16>, tensor<f32>, tensor<i16>) -> tensor<1x8x5xf32>
  %m = onnx.ReduceMax(%f2, %axes) : (tensor<1x8x5xf32>, tensor<1xi64>) -> tensor<1x8x1xf32>
  %max = onnx.QuantizeLinear(%m, %s, %z) : (tensor<1x8x1xf32>, tensor<f32>, tensor<i16>) -> tensor<1x8x1xi16>
  %f3 = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x8x5xi16>, tensor<f32>, tensor<i16>) -> tensor<1x8x5xf32>
  %g = onnx.Sigmoid(%f3) : (tensor<1x8x5xf32>) -> tensor<1x8x5xf32>
  %other = onnx.QuantizeLinear(%g, %ys, %z) : (tensor<1x8x5xf32>, tensor<f32>, tensor<i16>) -> tensor<1x8x5xi16>
  func.return %mean, %max, %other : tensor<1x8x1xi16>, tensor<1x8x1xi16>, tensor<1x8x5xi16>
}
