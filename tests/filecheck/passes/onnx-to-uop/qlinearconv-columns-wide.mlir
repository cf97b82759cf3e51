// RUN: zant-opt %s -p 'onnx-to-uop{conv-word-taps=true layer-bound=4096}' | filecheck %s
// RUN: zant-opt %s -p 'onnx-to-uop{conv-word-taps=true kernel-scratch=6144}' | filecheck %s
// RUN: zant-opt %s -p 'onnx-to-uop{conv-word-taps=true layer-bound=2944}' | filecheck %s --check-prefix=BLOCKS
// RUN: zant-opt %s -p 'onnx-to-uop{conv-word-taps=true layer-bound=2048}' | filecheck %s --check-prefix=BOUND
// RUN: zant-opt %s -p 'onnx-to-uop{conv-word-taps=true}' | filecheck %s --check-prefix=BOUND

// With conv-word-taps (the Cortex-M4's pipeline), a pointwise Conv over a channels-last int8 X
// of at least 64 channels and 8 pixels takes the widened form (conv_columns._pointwise_wide):
// X's words widened into int16 halves (one load_word and its two sxtb16 per 4 channels, stored
// as two words; four words an iteration), then per block of 4 output channels their weight rows
// widened the same way, then per pair of pixels one arm_dsp.smlad_block over both (32 steps of a
// word, the pixels and the rows 32 words apart; no addends: the sums start at 0), whose 8 sums
// are requantized and stored row-major: rows m … m + 3, pixels p, p + 1.

// The form's scratch (X widened: 2,048 B, a block of rows: 512 B) beside X (1,024 B) and Y
// (128 B) is 3,712 B: within layer-bound=4096 and within this graph's own layer bound (the Clip's
// 2,048 B) and kernel-scratch=6144 more: the whole image at once. By default (the graph's own
// bound, no kernel scratch above it) the Conv keeps its 2 x 2 tiles, as under layer-bound=2048.
// CHECK-LABEL: func.func @wide
// CHECK:         %y_columns_wide = uop.define_local "y_columns_wide" : !uop.buffer<512xi32>
// CHECK:         %y_columns_wide_weights = uop.define_local "y_columns_wide_weights" : !uop.buffer<128xi32>
// CHECK:         uop.range %[[N:.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range %[[B:.*]] = 0 to 1 {
// CHECK:             uop.range %[[P:.*]] = 0 to 16 {
// CHECK-NEXT:          %{{.*}} = uop.add %{{.*}}, %[[P]] : index
// CHECK-NEXT:          uop.range %[[Q:.*]] = 0 to 16 step 4 {
// CHECK:                 %[[WORD:.*]] = arm_dsp.load_word %{{.*}} : !uop.ptr<i8>
// CHECK-NEXT:            %[[NEXT:.*]] = arm_dsp.load_word %{{.*}} : !uop.ptr<i8>
// CHECK:                 %[[EVEN:.*]] = arm_dsp.sxtb16 %[[WORD]] : i32
// CHECK:                 uop.store %[[EVEN]], %{{.*}} : i32
// CHECK:                 %[[ODD:.*]] = arm_dsp.sxtb16 %[[WORD]] ror 8 : i32
// CHECK:                 uop.store %[[ODD]], %{{.*}} : i32
// CHECK:                 arm_dsp.sxtb16 %[[NEXT]] : i32
// CHECK:                 arm_dsp.sxtb16 %[[NEXT]] ror 8 : i32
// CHECK:             uop.range %[[M:.*]] = 0 to 8 step 4 {
// CHECK:               uop.range %[[I:.*]] = 0 to 4 {
// CHECK:                 uop.range %{{.*}} = 0 to 16 step 4 {
// CHECK:                   arm_dsp.load_word %{{.*}} : !uop.ptr<i8>
// CHECK:               uop.range %[[PAIR:.*]] = 0 to 8 {
// CHECK:                 %[[PA:.*]] = uop.gep %{{.*}}[%{{.*}}, %{{.*}}] : !uop.view<16x32xi32
// CHECK:                 %[[PB:.*]] = uop.gep %{{.*}}[%{{.*}}, %{{.*}}] : !uop.view<4x32xi32
// CHECK-NEXT:            %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = arm_dsp.smlad_block %[[PA]], %[[PB]] {steps = #builtin.int<32>, a_next = #builtin.int<32>, b_next = #builtin.int<32>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32, i32, i32
// CHECK-COUNT-8:         uop.store %{{.*}}, %{{.*}} : i8
// CHECK:         func.return

// Within layer-bound=2944 only 10 pixels' copy fits beside X, Y and the rows: 2 blocks of 8
// pixels (1,024 B), each widened in turn, every block of rows widened again for each and its
// pairs stored at the block's pixels.
// BLOCKS-LABEL: func.func @wide
// BLOCKS:         %y_columns_wide = uop.define_local "y_columns_wide" : !uop.buffer<256xi32>
// BLOCKS:         uop.range %[[N:.*]] = 0 to 1 {
// BLOCKS-NEXT:      uop.range %[[B:.*]] = 0 to 2 {
// BLOCKS-NEXT:        %[[EIGHT:.*]] = uop.const 8 : index
// BLOCKS-NEXT:        %[[FIRST:.*]] = uop.mul %[[B]], %[[EIGHT]] : index
// BLOCKS-NEXT:        uop.range %[[J:.*]] = 0 to 8 {
// BLOCKS-NEXT:          %{{.*}} = uop.add %[[FIRST]], %[[J]] : index
// BLOCKS:             uop.range %[[M:.*]] = 0 to 8 step 4 {
// BLOCKS:               uop.range %{{.*}} = 0 to 4 {
// BLOCKS:               uop.range %[[PAIR:.*]] = 0 to 4 {
// BLOCKS:                 %[[Q:.*]] = uop.mul %[[PAIR]], %{{.*}} : index
// BLOCKS-NEXT:            %[[P:.*]] = uop.add %[[FIRST]], %[[Q]] : index
// BLOCKS:                 uop.gep %{{.*}}[%[[Q]], %{{.*}}] : !uop.view<8x32xi32
// BLOCKS:                 arm_dsp.smlad_block
// BLOCKS:                 uop.gep %{{.*}}[%[[N]], %[[M]], %[[P]]] : !uop.view<1x8x16xi8
// BLOCKS:         func.return

// Within the graph's own layer bound (the Clip's 2,048 B) not one pair's copy fits: the 2 x 2
// tiles, no copy.
// BOUND-LABEL: func.func @wide
// BOUND-NOT:     arm_dsp.smlad_block
// BOUND-NOT:     y_columns_wide
// BOUND:         func.return
func.func @wide(%x: tensor<1x64x4x4xi8>) -> tensor<1x8x4x4xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %lo = onnx.Constant() {value = dense<-100> : tensor<i8>} : () -> tensor<i8>
  %r = onnx.Clip(%x, %lo) {zant.channels_last} : (tensor<1x64x4x4xi8>, tensor<i8>) -> tensor<1x64x4x4xi8>
  %w = onnx.Constant() {value = dense<[[[[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]]], [[[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]]], [[[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]]], [[[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]]], [[[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]]], [[[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]]], [[[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]]], [[[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]], [[8]], [[-8]], [[-1]], [[6]], [[-10]], [[-3]], [[4]], [[11]], [[-5]], [[2]], [[9]], [[-7]], [[0]], [[7]], [[-9]], [[-2]], [[5]], [[-11]], [[-4]], [[3]], [[10]], [[-6]], [[1]]]]> : tensor<8x64x1x1xi8>} : () -> tensor<8x64x1x1xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%r, %xs, %xz, %w, %ws, %wz, %ys, %yz) : (tensor<1x64x4x4xi8>, tensor<f32>, tensor<i8>, tensor<8x64x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x8x4x4xi8>
  func.return %y : tensor<1x8x4x4xi8>
}
