// RUN: zant-opt %s --split-input-file -p normalize-exports | filecheck %s

// dynamo's adaptive average pool and flatten (ReduceMean over the spatial axes, Reshape to
// [1, -1]) become the legacy exporter's GlobalAveragePool and Flatten; their constants go.
// CHECK-LABEL: func.func @dynamo_head
// CHECK-NOT:     onnx.Constant
// CHECK:         %mean = onnx.GlobalAveragePool(%x) : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32>
// CHECK-NEXT:    %view = onnx.Flatten(%mean) {axis = 1 : i64} : (tensor<1x8x1x1xf32>) -> tensor<1x8xf32>
// CHECK-NEXT:    func.return %view
func.func @dynamo_head(%x: tensor<1x8x7x7xf32>) -> tensor<1x8xf32> {
  %axes = onnx.Constant() {value = dense<[-1, -2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %shape = onnx.Constant() {value = dense<[1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %mean = onnx.ReduceMean(%x, %axes) {keepdims = 1 : i64} : (tensor<1x8x7x7xf32>, tensor<2xi64>) -> tensor<1x8x1x1xf32>
  %view = onnx.Reshape(%mean, %shape) : (tensor<1x8x1x1xf32>, tensor<2xi64>) -> tensor<1x8xf32>
  func.return %view : tensor<1x8xf32>
}

// -----

// keepdims = 0: the pool, then a Flatten to the [N, C] result; a volume (rank 5) alike.
// CHECK-LABEL: func.func @no_keepdims
// CHECK:         %m_pooled = onnx.GlobalAveragePool(%x) : (tensor<2x8x5x3xf32>) -> tensor<2x8x1x1xf32>
// CHECK-NEXT:    %m = onnx.Flatten(%m_pooled) {axis = 1 : i64} : (tensor<2x8x1x1xf32>) -> tensor<2x8xf32>
// CHECK:         %v = onnx.GlobalAveragePool(%y) : (tensor<1x4x3x3x3xf32>) -> tensor<1x4x1x1x1xf32>
func.func @no_keepdims(%x: tensor<2x8x5x3xf32>, %y: tensor<1x4x3x3x3xf32>) -> (tensor<2x8xf32>, tensor<1x4x1x1x1xf32>) {
  %axes = onnx.Constant() {value = dense<[3, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %m = onnx.ReduceMean(%x, %axes) {keepdims = 0 : i64} : (tensor<2x8x5x3xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  %axes3 = onnx.Constant() {value = dense<[4, 2, -2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %v = onnx.ReduceMean(%y, %axes3) : (tensor<1x4x3x3x3xf32>, tensor<3xi64>) -> tensor<1x4x1x1x1xf32>
  func.return %m, %v : tensor<2x8xf32>, tensor<1x4x1x1x1xf32>
}

// -----

// Flatten at the axis whose leading extents make the first dimension: [2, 3, 4, 5] -> [6, 20].
// CHECK-LABEL: func.func @reshape_at_axis
// CHECK:         onnx.Flatten(%x) {axis = 2 : i64} : (tensor<2x3x4x5xf32>) -> tensor<6x20xf32>
func.func @reshape_at_axis(%x: tensor<2x3x4x5xf32>) -> tensor<6x20xf32> {
  %shape = onnx.Constant() {value = dense<[6, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %r = onnx.Reshape(%x, %shape) : (tensor<2x3x4x5xf32>, tensor<2xi64>) -> tensor<6x20xf32>
  func.return %r : tensor<6x20xf32>
}

// -----

// Left alone: a mean over the channels too, over a spatial axis only, of integers, with
// run-time axes, over the last axis of a rank-3 tensor (a LayerNorm's); a Reshape to rank 3,
// one that does not split at an axis ([2, 6] -> [3, 4]), one whose shape is a run-time input
// (its values are checked at the call).
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     onnx.GlobalAveragePool
// CHECK-NOT:     onnx.Flatten
// CHECK-COUNT-5: onnx.ReduceMean
// CHECK-COUNT-3: onnx.Reshape
func.func @kept(%x: tensor<1x8x7x7xf32>, %i: tensor<1x8x7x7xi32>, %a: tensor<2xi64>, %z: tensor<2x6xf32>, %t: tensor<1x16x64xf32>, %rs: tensor<2xi64>) -> (tensor<1x1x1x1xf32>, tensor<1x8x1x7xf32>, tensor<1x8x1x1xi32>, tensor<1x8x1x1xf32>, tensor<1x16x1xf32>, tensor<1x8x49xf32>, tensor<3x4xf32>, tensor<8x49xf32>) {
  %all = onnx.Constant() {value = dense<[1, 2, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
  %one = onnx.Constant() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %hw = onnx.Constant() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %s3 = onnx.Constant() {value = dense<[1, 8, 49]> : tensor<3xi64>} : () -> tensor<3xi64>
  %s2 = onnx.Constant() {value = dense<[3, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %m1 = onnx.ReduceMean(%x, %all) : (tensor<1x8x7x7xf32>, tensor<3xi64>) -> tensor<1x1x1x1xf32>
  %m2 = onnx.ReduceMean(%x, %one) : (tensor<1x8x7x7xf32>, tensor<1xi64>) -> tensor<1x8x1x7xf32>
  %m3 = onnx.ReduceMean(%i, %hw) : (tensor<1x8x7x7xi32>, tensor<2xi64>) -> tensor<1x8x1x1xi32>
  %m4 = onnx.ReduceMean(%x, %a) : (tensor<1x8x7x7xf32>, tensor<2xi64>) -> tensor<1x8x1x1xf32>
  %last = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %m5 = onnx.ReduceMean(%t, %last) : (tensor<1x16x64xf32>, tensor<1xi64>) -> tensor<1x16x1xf32>
  %r1 = onnx.Reshape(%x, %s3) : (tensor<1x8x7x7xf32>, tensor<3xi64>) -> tensor<1x8x49xf32>
  %r2 = onnx.Reshape(%z, %s2) : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  %r3 = onnx.Reshape(%x, %rs) : (tensor<1x8x7x7xf32>, tensor<2xi64>) -> tensor<8x49xf32>
  func.return %m1, %m2, %m3, %m4, %m5, %r1, %r2, %r3 : tensor<1x1x1x1xf32>, tensor<1x8x1x7xf32>, tensor<1x8x1x1xi32>, tensor<1x8x1x1xf32>, tensor<1x16x1xf32>, tensor<1x8x49xf32>, tensor<3x4xf32>, tensor<8x49xf32>
}
