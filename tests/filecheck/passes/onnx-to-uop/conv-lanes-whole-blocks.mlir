// RUN: zant-opt %s --split-input-file -p 'set-target{target=host cpu=x86-64-avx512},onnx-to-uop' | filecheck %s

// A 1x1 Conv 32 -> 96 (6 blocks of 16 output channels) in channel lanes on an AVX-512 host. Into
// a channels-last Y (`zant.channels_last`, as `assign-host-layouts` marks it) each tile's 16-channel
// vectors store whole, so a tile holds up to `MAX_WHOLE_BLOCKS` blocks: all 6 blocks by 4 pixels
// (24 accumulators, one pass over X). Into an NCHW Y, whose vectors scatter, at most `MAX_BLOCKS`:
// 2 blocks per tile, three passes over X.

// CHECK-LABEL: func.func @channels_last
// CHECK:         uop.range %{{.*}} = 0 to 6 step 6 {
// CHECK:           uop.range %{{.*}} = 0 to 8 step 4 {
// CHECK-COUNT-24:    uop.define_acc 0.000000e+00 : f32
// CHECK-NOT:         uop.define_acc
// CHECK:         func.return
func.func @channels_last(%x: tensor<1x32x8x8xf32>) -> tensor<1x96x8x8xf32> {
  %w = onnx.Constant() {value = dense<0.5> : tensor<96x32x1x1xf32>} : () -> tensor<96x32x1x1xf32>
  %c = onnx.Conv(%x, %w) {zant.channels_last} : (tensor<1x32x8x8xf32>, tensor<96x32x1x1xf32>) -> tensor<1x96x8x8xf32>
  %y = onnx.Relu(%c) : (tensor<1x96x8x8xf32>) -> tensor<1x96x8x8xf32>
  func.return %y : tensor<1x96x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @nchw
// CHECK:         uop.range %{{.*}} = 0 to 6 step 2 {
// CHECK:         func.return
func.func @nchw(%x: tensor<1x32x8x8xf32>) -> tensor<1x96x8x8xf32> {
  %w = onnx.Constant() {value = dense<0.5> : tensor<96x32x1x1xf32>} : () -> tensor<96x32x1x1xf32>
  %y = onnx.Conv(%x, %w) : (tensor<1x32x8x8xf32>, tensor<96x32x1x1xf32>) -> tensor<1x96x8x8xf32>
  func.return %y : tensor<1x96x8x8xf32>
}
