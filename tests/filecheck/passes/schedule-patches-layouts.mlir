// RUN: zant-opt %s --split-input-file -p "schedule-patches{budget=4600}" | filecheck %s

// The cost model counts the bytes the layers after a stage keep live, less what a pointwise or
// depthwise convolution may write over its dying input through `schedule-in-place`, which
// rewrites only the NCHW nests. Within 4,600 B: the pointwise 4 -> 16 after the two-layer
// prefix, NCHW, may write its 4 KiB over its 1 KiB input (~4,096 B after the stage), so that
// prefix, the fewest MACs, is taken.

// CHECK-LABEL: func.func @nchw_after
// CHECK:         zant.patch_stage = "2x2 tiles of 1x4x8x8, 2 layers (onnx.Conv .. onnx.Conv): 30,024 MACs
func.func @nchw_after(%x: tensor<1x2x16x16xf32>) -> tensor<1x4x4x4xf32> {
  %w0 = onnx.Constant() {value = dense<0.5> : tensor<4x2x3x3xf32>} : () -> tensor<4x2x3x3xf32>
  %w1 = onnx.Constant() {value = dense<0.25> : tensor<4x4x3x3xf32>} : () -> tensor<4x4x3x3xf32>
  %w2 = onnx.Constant() {value = dense<0.25> : tensor<16x4x1x1xf32>} : () -> tensor<16x4x1x1xf32>
  %w3 = onnx.Constant() {value = dense<0.25> : tensor<4x16x3x3xf32>} : () -> tensor<4x16x3x3xf32>
  %a = onnx.Conv(%x, %w0) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x16x16xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x16x16xf32>
  %d = onnx.Conv(%a, %w1) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x16x16xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %b = onnx.Conv(%d, %w2) : (tensor<1x4x8x8xf32>, tensor<16x4x1x1xf32>) -> tensor<1x16x8x8xf32>
  %y = onnx.Conv(%b, %w3) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x8x8xf32>, tensor<4x16x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// -----

// The same graph with the pointwise convolution's output channels-last (`zant.channels_last`,
// as `assign-layouts` marks it): no schedule writes it over its input, both stay whole beside
// each other after the two-layer prefix (~5,120 B, over the budget), so the stage runs on
// through the pointwise and the last convolution, more MACs but within the bytes.

// CHECK-LABEL: func.func @channels_last_after
// CHECK:         zant.patch_stage = "2x2 tiles of 1x4x4x4, 4 layers (onnx.Conv .. onnx.Conv): 52,056 MACs
func.func @channels_last_after(%x: tensor<1x2x16x16xf32>) -> tensor<1x4x4x4xf32> {
  %w0 = onnx.Constant() {value = dense<0.5> : tensor<4x2x3x3xf32>} : () -> tensor<4x2x3x3xf32>
  %w1 = onnx.Constant() {value = dense<0.25> : tensor<4x4x3x3xf32>} : () -> tensor<4x4x3x3xf32>
  %w2 = onnx.Constant() {value = dense<0.25> : tensor<16x4x1x1xf32>} : () -> tensor<16x4x1x1xf32>
  %w3 = onnx.Constant() {value = dense<0.25> : tensor<4x16x3x3xf32>} : () -> tensor<4x16x3x3xf32>
  %a = onnx.Conv(%x, %w0) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x16x16xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x16x16xf32>
  %d = onnx.Conv(%a, %w1) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x16x16xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %b = onnx.Conv(%d, %w2) {zant.channels_last} : (tensor<1x4x8x8xf32>, tensor<16x4x1x1xf32>) -> tensor<1x16x8x8xf32>
  %y = onnx.Conv(%b, %w3) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x8x8xf32>, tensor<4x16x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}
