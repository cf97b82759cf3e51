// RUN: zant-opt %s --split-input-file -p 'set-target{target=host cpu=x86-64-avx512},assign-host-layouts' | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'set-target{target=cortex-m4},assign-host-layouts' | filecheck %s --check-prefix=SCALAR
// RUN: zant-opt %s --split-input-file -p 'set-target{target=host cpu=x86-64-avx512},assign-host-layouts,onnx-to-uop' | filecheck %s --check-prefix=LOWERED
// RUN: zant-opt %s --split-input-file -p 'set-target{target=host cpu=x86-64-avx512},assign-host-layouts{forms-by-layout=false}' | filecheck %s --check-prefix=ASIS

// A residual block as ResNet has it: Conv 3x3 -> Relu -> Conv 3x3, the Add of the second Conv and
// the Relu, a MaxPool and a GlobalAveragePool. Both Convs take the channel-lane form (vectors of
// 16 output channels) and the second copies its X channels-last; the Add and the Relu tie the
// tensors they read and write into one group with the MaxPool (which ties its X and result) and
// the Convs' results. Channels-last, every Conv stores its channel vectors whole and the second
// Conv's copy reads front to back: the whole group is marked. The GlobalAveragePool reads either
// layout; its result is the graph's output (ONNX's layout): not marked. On a target without
// vector registers (the Cortex-M4) the pass marks nothing.

// CHECK-LABEL: func.func @block
// CHECK:         %c1 = onnx.Conv(%x, %w1) {pads = array<i64: 1, 1, 1, 1>, zant.channels_last}
// CHECK-NEXT:    %r1 = onnx.Relu(%c1) {zant.channels_last}
// CHECK-NEXT:    %c2 = onnx.Conv(%r1, %w2) {pads = array<i64: 1, 1, 1, 1>, zant.channels_last}
// CHECK-NEXT:    %a = onnx.Add(%c2, %r1) {zant.channels_last}
// CHECK-NEXT:    %p = onnx.MaxPool(%a) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, zant.channels_last}
// CHECK-NEXT:    %g = onnx.GlobalAveragePool(%p) :
// SCALAR-LABEL:  func.func @block
// SCALAR-NOT:    zant.channels_last

// Lowered: the first Conv's result is a buffer of (N, H, W, C) = 1x8x8x32, its channel vectors
// stored through that memory-order view; the Relu walks the same view channels innermost at the
// identity index (so fuse-loops can join it to the Conv's stores); the second Conv's padded copy
// of it is channels-last and walked in memory order too; the MaxPool reads its X through the
// (N, C, H, W)-indexed view of the channels-last buffer and walks its own result channels
// innermost.
// LOWERED-LABEL: func.func @block
// LOWERED:         %c1 = uop.define_local "c1" : !uop.buffer<2048xf32>
// LOWERED:         %[[C1:.*]] = uop.view %c1 : !uop.buffer<2048xf32> -> !uop.view<1x8x8x32xf32, strides [2048, 256, 32, 1], offset 0>
// LOWERED:         uop.gep %[[C1]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : !uop.view<1x8x8x32xf32, strides [2048, 256, 32, 1], offset 0>
// LOWERED:         %r1 = uop.define_local "r1" : !uop.buffer<2048xf32>
// LOWERED-NEXT:    %[[IN:.*]] = uop.view %c1 : !uop.buffer<2048xf32> -> !uop.view<1x8x8x32xf32, strides [0, 256, 32, 1], offset 0>
// LOWERED-NEXT:    %[[OUT:.*]] = uop.view %r1 : !uop.buffer<2048xf32> -> !uop.view<1x8x8x32xf32, strides [2048, 256, 32, 1], offset 0>
// LOWERED-NEXT:    uop.range %[[N:.*]] = 0 to 1 {
// LOWERED-NEXT:      uop.range %[[H:.*]] = 0 to 8 {
// LOWERED-NEXT:        uop.range %[[W:.*]] = 0 to 8 {
// LOWERED-NEXT:          uop.range %[[C:.*]] = 0 to 32 {
// LOWERED-NEXT:            uop.gep %[[IN]][%[[N]], %[[H]], %[[W]], %[[C]]]
// LOWERED:                 uop.gep %[[OUT]][%[[N]], %[[H]], %[[W]], %[[C]]]
// LOWERED:         %c2_padded = uop.define_local "c2_padded" : !uop.buffer<3200xf32>
// LOWERED:         %[[FROM:.*]] = uop.view %r1 : !uop.buffer<2048xf32> -> !uop.view<1x8x8x32xf32, strides [2048, 256, 32, 1], offset 0>
// LOWERED-NEXT:    %[[TO:.*]] = uop.view %c2_padded : !uop.buffer<3200xf32> -> !uop.view<1x8x8x32xf32, strides [3200, 320, 32, 1], offset 352>
// LOWERED:         %p = uop.define_local "p" : !uop.buffer<512xf32>
// LOWERED-NEXT:    %[[X:.*]] = uop.view %a : !uop.buffer<2048xf32> -> !uop.view<1x32x8x8xf32, strides [2048, 1, 256, 32], offset 0>
// LOWERED-NEXT:    %[[Y:.*]] = uop.view %p : !uop.buffer<512xf32> -> !uop.view<1x4x4x32xf32, strides [512, 128, 32, 1], offset 0>
// LOWERED-NEXT:    uop.range %[[PN:.*]] = 0 to 1 {
// LOWERED-NEXT:      uop.range %{{.*}} = 0 to 4 {
// LOWERED-NEXT:        uop.range %{{.*}} = 0 to 4 {
// LOWERED-NEXT:          uop.range %[[PC:.*]] = 0 to 32 {
// LOWERED:                 uop.gep %[[X]][%[[PN]], %[[PC]], %{{.*}}, %{{.*}}]
// LOWERED:         func.return
func.func @block(%x: tensor<1x32x8x8xf32>) -> tensor<1x32x1x1xf32> {
  %w1 = onnx.Constant() {value = dense<0.01> : tensor<32x32x3x3xf32>} : () -> tensor<32x32x3x3xf32>
  %w2 = onnx.Constant() {value = dense<0.02> : tensor<32x32x3x3xf32>} : () -> tensor<32x32x3x3xf32>
  %c1 = onnx.Conv(%x, %w1) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x8x8xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x8x8xf32>
  %r1 = onnx.Relu(%c1) : (tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %c2 = onnx.Conv(%r1, %w2) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x8x8xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x8x8xf32>
  %a = onnx.Add(%c2, %r1) : (tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %p = onnx.MaxPool(%a) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x32x8x8xf32>) -> tensor<1x32x4x4xf32>
  %g = onnx.GlobalAveragePool(%p) : (tensor<1x32x4x4xf32>) -> tensor<1x32x1x1xf32>
  func.return %g : tensor<1x32x1x1xf32>
}

// -----

// The same Conv -> Relu, whose result is also the graph's output (ONNX's layout: no kernel reads
// it channels-last) and the X of a Conv in pixel lanes (1x1 over rows of 16: vectors of pixels):
// the group stays NCHW. The first Conv's X is the graph's input: never marked.

// CHECK-LABEL: func.func @edges
// CHECK-NOT:     zant.channels_last
// CHECK:         func.return
func.func @edges(%x: tensor<1x32x16x16xf32>) -> (tensor<1x32x16x16xf32>, tensor<1x32x16x16xf32>) {
  %w1 = onnx.Constant() {value = dense<0.01> : tensor<32x32x3x3xf32>} : () -> tensor<32x32x3x3xf32>
  %w2 = onnx.Constant() {value = dense<0.02> : tensor<32x32x1x1xf32>} : () -> tensor<32x32x1x1xf32>
  %c1 = onnx.Conv(%x, %w1) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x16x16xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x16x16xf32>
  %r1 = onnx.Relu(%c1) : (tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %c2 = onnx.Conv(%r1, %w2) : (tensor<1x32x16x16xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x16x16xf32>
  func.return %r1, %c2 : tensor<1x32x16x16xf32>, tensor<1x32x16x16xf32>
}

// -----

// An element-wise op whose operand is not a float activation (a Cast from int32, the graph's
// input): the operand takes no part in the choice (it is read through its own view) and the
// Cast's result groups with the Add that reads it, channels-last with the Conv's.

// CHECK-LABEL: func.func @cast
// CHECK:         %f = onnx.Cast(%i) {to = 1 : i64, zant.channels_last}
// CHECK:         %a = onnx.Add(%r, %f) {zant.channels_last}
// CHECK:         %g = onnx.GlobalAveragePool(%a) :
func.func @cast(%i: tensor<1x32x8x8xi32>) -> tensor<1x32x1x1xf32> {
  %w = onnx.Constant() {value = dense<0.01> : tensor<32x32x3x3xf32>} : () -> tensor<32x32x3x3xf32>
  %f = onnx.Cast(%i) {to = 1 : i64} : (tensor<1x32x8x8xi32>) -> tensor<1x32x8x8xf32>
  %c = onnx.Conv(%f, %w) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x8x8xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x8x8xf32>
  %r = onnx.Relu(%c) : (tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %a = onnx.Add(%r, %f) : (tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %g = onnx.GlobalAveragePool(%a) : (tensor<1x32x8x8xf32>) -> tensor<1x32x1x1xf32>
  func.return %g : tensor<1x32x1x1xf32>
}

// -----

// ResNet-8's first stage: an image's stem Conv (3 -> 16 over 32x32), then a residual block of
// two 16 -> 16 3x3 Convs whose first reads the stem's Relu beside the Add. As they stand the
// stem's rows of 32 take pixel lanes and so do the 16-channel Convs (the Winograd form is kept
// from an NCHW Y whose 4 KB planes put a channel vector's stores in one L1 set): nothing is
// marked (ASIS, `forms-by-layout=false`). Weighed in the form each Conv takes for the layout
// weighed, channels-last the stem takes channel lanes (3 input channels) and the 16-channel
// Convs the Winograd form, which copies X channels-last: the whole stage is marked, the Relu
// read by both the block's first Conv and the Add included.

// CHECK-LABEL: func.func @stem
// CHECK:         %s = onnx.Conv(%x, %w0) {pads = array<i64: 1, 1, 1, 1>, zant.channels_last}
// CHECK-NEXT:    %r0 = onnx.Relu(%s) {zant.channels_last}
// CHECK-NEXT:    %c1 = onnx.Conv(%r0, %w1) {pads = array<i64: 1, 1, 1, 1>, zant.channels_last}
// CHECK-NEXT:    %r1 = onnx.Relu(%c1) {zant.channels_last}
// CHECK-NEXT:    %c2 = onnx.Conv(%r1, %w2) {pads = array<i64: 1, 1, 1, 1>, zant.channels_last}
// CHECK-NEXT:    %a = onnx.Add(%c2, %r0) {zant.channels_last}
// CHECK-NEXT:    %r2 = onnx.Relu(%a) {zant.channels_last}
// CHECK-NEXT:    %g = onnx.GlobalAveragePool(%r2) :
// ASIS-LABEL:    func.func @stem
// ASIS-NOT:      zant.channels_last
// ASIS:          func.return

// Lowered: the stem's channel vectors are stored through the (N, H, W, C) view of its result, and
// both 16-channel Convs take the Winograd form (their transformed inputs V).
// LOWERED-LABEL: func.func @stem
// LOWERED:         %s = uop.define_local "s" : !uop.buffer<16384xf32>
// LOWERED:         uop.view %s : !uop.buffer<16384xf32> -> !uop.view<1x32x32x16xf32, strides [16384, 512, 16, 1], offset 0>
// LOWERED:         %c1_winograd_v = uop.define_local "c1_winograd_v"
// LOWERED:         %c2_winograd_v = uop.define_local "c2_winograd_v"
// LOWERED:         func.return
func.func @stem(%x: tensor<1x3x32x32xf32>) -> tensor<1x16x1x1xf32> {
  %w0 = onnx.Constant() {value = dense<0.01> : tensor<16x3x3x3xf32>} : () -> tensor<16x3x3x3xf32>
  %w1 = onnx.Constant() {value = dense<0.02> : tensor<16x16x3x3xf32>} : () -> tensor<16x16x3x3xf32>
  %w2 = onnx.Constant() {value = dense<0.03> : tensor<16x16x3x3xf32>} : () -> tensor<16x16x3x3xf32>
  %s = onnx.Conv(%x, %w0) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x32x32xf32>
  %r0 = onnx.Relu(%s) : (tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
  %c1 = onnx.Conv(%r0, %w1) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x32x32xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x32x32xf32>
  %r1 = onnx.Relu(%c1) : (tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
  %c2 = onnx.Conv(%r1, %w2) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x32x32xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x32x32xf32>
  %a = onnx.Add(%c2, %r0) : (tensor<1x16x32x32xf32>, tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
  %r2 = onnx.Relu(%a) : (tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
  %g = onnx.GlobalAveragePool(%r2) : (tensor<1x16x32x32xf32>) -> tensor<1x16x1x1xf32>
  func.return %g : tensor<1x16x1x1xf32>
}

// -----

// A SqueezeNet Fire module behind an image's stem: the stem Conv (3 -> 64, 3x3/2, channel lanes),
// its Relu, a 1x1 squeeze Conv (64 -> 16) and Relu read by a 1x1 expand (16 -> 32) and a 3x3
// expand (Winograd), joined by a Concat. As they stand the 1x1 Convs take pixel lanes over rows of
// 32, which would gather from a channels-last X: nothing is marked (ASIS). A 1x1 Conv in pixel
// lanes ties its X and Y to one layout (pixel lanes NCHW, channel lanes channels-last), weighed
// by the estimated cycles of its two forms (`VectorConv.pointwise_cycles`: about the same here),
// and a Concat ties its inputs to its result: channels-last, the stem stores its channel vectors
// whole, the Winograd form's copy of X reads front to back and the expands store into their
// slices of the Concat, so the whole module is marked.

// CHECK-LABEL: func.func @fire
// CHECK:         %s = onnx.Conv(%x, %w0) {strides = array<i64: 2, 2>, zant.channels_last}
// CHECK-NEXT:    %r = onnx.Relu(%s) {zant.channels_last}
// CHECK-NEXT:    %q = onnx.Conv(%r, %ws) {zant.channels_last}
// CHECK-NEXT:    %rq = onnx.Relu(%q) {zant.channels_last}
// CHECK-NEXT:    %e1 = onnx.Conv(%rq, %we1) {zant.channels_last}
// CHECK-NEXT:    %e3 = onnx.Conv(%rq, %we3) {pads = array<i64: 1, 1, 1, 1>, zant.channels_last}
// CHECK-NEXT:    %c = onnx.Concat(%e1, %e3) {axis = 1 : i64, zant.channels_last}
// CHECK-NEXT:    %g = onnx.GlobalAveragePool(%c) :
// ASIS-LABEL:    func.func @fire
// ASIS-NOT:      zant.channels_last
// ASIS:          func.return

// Lowered: the 1x1 Convs take channel lanes (their weights packed by blocks of 16 output
// channels), and the Concat's two halves are the channels 0-31 and 32-63 of each pixel.
// LOWERED-LABEL: func.func @fire
// LOWERED:         %q_packed_weights = uop.define_global "constant" {{[0-9]+}} "q_packed_weights"
// LOWERED:         %e1_packed_weights = uop.define_global "constant" {{[0-9]+}} "e1_packed_weights"
// LOWERED:         %e3_winograd_v = uop.define_local "e3_winograd_v"
// LOWERED:         %c = uop.define_local "c" : !uop.buffer<65536xf32>
// LOWERED:         uop.view %c : !uop.buffer<65536xf32> -> !uop.view<1x32x32x32xf32, strides [65536, 2048, 64, 1], offset 0>
// LOWERED:         uop.view %c : !uop.buffer<65536xf32> -> !uop.view<1x32x32x32xf32, strides [65536, 2048, 64, 1], offset 32>
// LOWERED:         func.return
func.func @fire(%x: tensor<1x3x66x66xf32>) -> tensor<1x64x1x1xf32> {
  %w0 = onnx.Constant() {value = dense<0.01> : tensor<64x3x3x3xf32>} : () -> tensor<64x3x3x3xf32>
  %ws = onnx.Constant() {value = dense<0.02> : tensor<16x64x1x1xf32>} : () -> tensor<16x64x1x1xf32>
  %we1 = onnx.Constant() {value = dense<0.03> : tensor<32x16x1x1xf32>} : () -> tensor<32x16x1x1xf32>
  %we3 = onnx.Constant() {value = dense<0.04> : tensor<32x16x3x3xf32>} : () -> tensor<32x16x3x3xf32>
  %s = onnx.Conv(%x, %w0) {strides = array<i64: 2, 2>} : (tensor<1x3x66x66xf32>, tensor<64x3x3x3xf32>) -> tensor<1x64x32x32xf32>
  %r = onnx.Relu(%s) : (tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32>
  %q = onnx.Conv(%r, %ws) : (tensor<1x64x32x32xf32>, tensor<16x64x1x1xf32>) -> tensor<1x16x32x32xf32>
  %rq = onnx.Relu(%q) : (tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
  %e1 = onnx.Conv(%rq, %we1) : (tensor<1x16x32x32xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x32x32xf32>
  %e3 = onnx.Conv(%rq, %we3) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x32x32xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x32x32xf32>
  %c = onnx.Concat(%e1, %e3) {axis = 1 : i64} : (tensor<1x32x32x32xf32>, tensor<1x32x32x32xf32>) -> tensor<1x64x32x32xf32>
  %g = onnx.GlobalAveragePool(%c) : (tensor<1x64x32x32xf32>) -> tensor<1x64x1x1xf32>
  func.return %g : tensor<1x64x1x1xf32>
}

// -----

// MobileNetV2's first stage: an image's stem Conv (3 -> 32, 3x3/2, channel lanes), a 3x3
// depthwise Conv at unit stride over rows of 16 (depthwise rows, as it stands) and a 1x1
// projection (32 -> 16, pixel lanes). As they stand the depthwise rows read and write NCHW, so
// the stem scatters its channel vectors into an NCHW result: nothing is marked (ASIS). A
// depthwise Conv in rows ties its X and Y as a 1x1 Conv in pixel lanes does (rows NCHW to NCHW,
// depthwise lanes channels-last to channels-last), weighed at `DEPTHWISE_LANE_CYCLES` per output
// beyond the rows: channels-last, the stem stores its vectors whole and the whole stage is marked.

// CHECK-LABEL: func.func @inverted
// CHECK:         %s = onnx.Conv(%x, %w0) {strides = array<i64: 2, 2>, zant.channels_last}
// CHECK-NEXT:    %r0 = onnx.Relu(%s) {zant.channels_last}
// CHECK-NEXT:    %d = onnx.Conv(%r0, %wd) {group = 32 : i64, pads = array<i64: 1, 1, 1, 1>, zant.channels_last}
// CHECK-NEXT:    %r1 = onnx.Relu(%d) {zant.channels_last}
// CHECK-NEXT:    %p = onnx.Conv(%r1, %wp) {zant.channels_last}
// CHECK-NEXT:    %g = onnx.GlobalAveragePool(%p) :
// ASIS-LABEL:    func.func @inverted
// ASIS-NOT:      zant.channels_last
// ASIS:          func.return

// Lowered: the depthwise Conv takes depthwise lanes (its weights packed by blocks of 16
// channels) over a channels-last padded copy of its X, 18x18 pixels of 32 channels.
// LOWERED-LABEL: func.func @inverted
// LOWERED:         %d_padded = uop.define_local "d_padded" : !uop.buffer<10368xf32>
// LOWERED:         uop.view %d_padded : !uop.buffer<10368xf32> -> !uop.view<1x16x16x32xf32, strides [10368, 576, 32, 1], offset 608>
// LOWERED:         %d_packed_weights = uop.define_global "constant" {{[0-9]+}} "d_packed_weights"
// LOWERED:         %p_packed_weights = uop.define_global "constant" {{[0-9]+}} "p_packed_weights"
// LOWERED:         func.return
func.func @inverted(%x: tensor<1x3x33x33xf32>) -> tensor<1x16x1x1xf32> {
  %w0 = onnx.Constant() {value = dense<0.01> : tensor<32x3x3x3xf32>} : () -> tensor<32x3x3x3xf32>
  %wd = onnx.Constant() {value = dense<0.02> : tensor<32x1x3x3xf32>} : () -> tensor<32x1x3x3xf32>
  %wp = onnx.Constant() {value = dense<0.03> : tensor<16x32x1x1xf32>} : () -> tensor<16x32x1x1xf32>
  %s = onnx.Conv(%x, %w0) {strides = array<i64: 2, 2>} : (tensor<1x3x33x33xf32>, tensor<32x3x3x3xf32>) -> tensor<1x32x16x16xf32>
  %r0 = onnx.Relu(%s) : (tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %d = onnx.Conv(%r0, %wd) {group = 32 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x16x16xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x16x16xf32>
  %r1 = onnx.Relu(%d) : (tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %p = onnx.Conv(%r1, %wp) : (tensor<1x32x16x16xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x16x16xf32>
  %g = onnx.GlobalAveragePool(%p) : (tensor<1x16x16x16xf32>) -> tensor<1x16x1x1xf32>
  func.return %g : tensor<1x16x1x1xf32>
}
