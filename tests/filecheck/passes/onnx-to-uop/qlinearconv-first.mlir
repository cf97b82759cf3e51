// RUN: zant-opt %s -p 'onnx-to-uop{conv-word-taps=true layer-bound=4096}' | filecheck %s
// RUN: zant-opt %s -p 'onnx-to-uop{conv-word-taps=true}' | filecheck %s --check-prefix=BOUND

// With conv-word-taps (the Cortex-M4's pipeline), an int8 Conv over fewer than 4 input channels
// under a 2-D window (here VWW's first Conv on a 5x6 image: 3x3x3 -> 4, stride 2, pads 0 before
// and 1 after) takes conv_first's form: X copied channels-last into a padded buffer (each row's
// 6·3 bytes four at a time, the border with X's zero point 3), W's taps paired into words once
// (4 rows x 14 words, in the column's order, from W as stored), then per output row each pixel's window gathered into the column (per
// row of taps two load_words and their sxtb16 halves, then the rows' last bytes two to a word,
// the third alone), and per block of 4 output channels and pair of pixels one
// arm_dsp.smlad_block of 14 steps from the biases, whose 8 sums are requantized and stored
// row-major: the whole pairs (one here) in one loop, the odd width's last pair (pixels 1, 2,
// overlapping the one before) in another, each pair's pixels a constant step on.

// The form's scratch (the padded copy: 126 B, the staged weights: 224 B, the column: 168 B)
// beside Y (24 B) exceeds this graph's own layer bound (the Clip's 180 B): the window form.
// BOUND-LABEL: func.func @first
// BOUND-NOT:     arm_dsp.smlad_block
// BOUND-NOT:     y_first_column
// BOUND:         func.return

// CHECK-LABEL: func.func @first
// CHECK:         %y_padded = uop.define_local "y_padded" : !uop.buffer<126xi8>
// CHECK:         %[[PADDED:.*]] = uop.view %y_padded : !uop.buffer<126xi8> -> !uop.view<1x6x21xi8, strides [126, 21, 1], offset 0>
// CHECK:         %y_first_weights = uop.define_local "y_first_weights" : !uop.buffer<56xi32>
// CHECK:         %y_first_column = uop.define_local "y_first_column" : !uop.buffer<42xi32>
// CHECK:         %[[STAGED:.*]] = uop.view %y_first_weights : !uop.buffer<56xi32> -> !uop.view<4x14xi32, strides [14, 1], offset 0>
// CHECK:         %[[COLUMN:.*]] = uop.view %y_first_column : !uop.buffer<42xi32> -> !uop.view<3x14xi32, strides [14, 1], offset 0>
// CHECK:         %[[ZP:.*]] = uop.const 3 : i8
// CHECK:         uop.range %{{.*}} = 5 to 6 {
// CHECK-NEXT:      uop.range %{{.*}} = 0 to 21 {
// CHECK:             uop.store %[[ZP]], %{{.*}} : i8
// CHECK:         uop.range %{{.*}} = 18 to 21 {
// CHECK:           uop.store %[[ZP]], %{{.*}} : i8
// CHECK:         uop.range %{{.*}} = 0 to 16 step 4 {
// CHECK-COUNT-4:   uop.load %{{.*}} : i8
// CHECK-COUNT-4:   uop.store %{{.*}}, %{{.*}} : i8
// CHECK:         uop.range %{{.*}} = 16 to 18 {
// CHECK:         uop.range %[[M:.*]] = 0 to 4 {
// CHECK:           %[[W0:.*]] = uop.gep %[[W:.*]][%[[M]], %[[C0:.*]], %[[C0B:.*]], %[[C0C:.*]]] : !uop.view<4x3x3x3xi8, strides [27, 9, 3, 1], offset 0>
// CHECK-NEXT:      %[[W0V:.*]] = uop.load %[[W0]] : i8
// CHECK-NEXT:      %[[W0I:.*]] = uop.cast %[[W0V]] : i8 to i32
// CHECK:           %[[W2:.*]] = uop.gep %[[W]][%[[M]], %{{.*}}, %{{.*}}, %{{.*}}] : !uop.view<4x3x3x3xi8, strides [27, 9, 3, 1], offset 0>
// CHECK-NEXT:      %[[W2V:.*]] = uop.load %[[W2]] : i8
// CHECK-NEXT:      %[[W2I:.*]] = uop.cast %[[W2V]] : i8 to i32
// CHECK:           %[[LOWW:.*]] = uop.and %[[W0I]], %{{.*}} : i32
// CHECK:           %[[HIGHW:.*]] = uop.shl %[[W2I]], %{{.*}} : i32
// CHECK-NEXT:      %[[WORD0:.*]] = uop.or %[[LOWW]], %[[HIGHW]] : i32
// CHECK:           %[[S0:.*]] = uop.gep %[[STAGED]][%[[M]], %{{.*}}] : !uop.view<4x14xi32, strides [14, 1], offset 0>
// CHECK-NEXT:      uop.store %[[WORD0]], %[[S0]] : i32
// The lone last tap's word has weight 0 in its upper half: masked, nothing or-ed in.
// CHECK:           %[[TWELVE:.*]] = uop.const 12 : index
// CHECK-NEXT:      %[[S12:.*]] = uop.gep %[[STAGED]][%[[M]], %[[TWELVE]]] : !uop.view<4x14xi32, strides [14, 1], offset 0>
// CHECK-NEXT:      uop.store %{{.*}}, %[[S12]] : i32
// CHECK:           %[[LAST:.*]] = uop.and %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:      %[[THIRTEEN:.*]] = uop.const 13 : index
// CHECK-NEXT:      %[[S13:.*]] = uop.gep %[[STAGED]][%[[M]], %[[THIRTEEN]]] : !uop.view<4x14xi32, strides [14, 1], offset 0>
// CHECK-NEXT:      uop.store %[[LAST]], %[[S13]] : i32
// CHECK-NEXT:    }
// CHECK:         uop.range %[[N:.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range %[[O:.*]] = 0 to 2 {
// CHECK:             uop.range %[[P:.*]] = 0 to 3 {
// CHECK:               %[[WORD:.*]] = arm_dsp.load_word %{{.*}} : !uop.ptr<i8>
// CHECK-NEXT:          %[[EVEN:.*]] = arm_dsp.sxtb16 %[[WORD]] : i32
// CHECK:               uop.store %[[EVEN]], %{{.*}} : i32
// CHECK-NEXT:          %[[ODD:.*]] = arm_dsp.sxtb16 %[[WORD]] ror 8 : i32
// CHECK:               uop.store %[[ODD]], %{{.*}} : i32
// CHECK-COUNT-5:       arm_dsp.load_word
// CHECK:               %[[LOW:.*]] = uop.load %{{.*}} : i8
// CHECK-NEXT:          %[[LOW32:.*]] = uop.cast %[[LOW]] : i8 to i32
// CHECK:               %[[HIGH:.*]] = uop.load %{{.*}} : i8
// CHECK-NEXT:          %[[HIGH32:.*]] = uop.cast %[[HIGH]] : i8 to i32
// CHECK:               %[[MASKED:.*]] = uop.and %[[LOW32]], %{{.*}} : i32
// CHECK:               %[[SHIFTED:.*]] = uop.shl %[[HIGH32]], %{{.*}} : i32
// CHECK-NEXT:          %[[PAIR:.*]] = uop.or %[[MASKED]], %[[SHIFTED]] : i32
// CHECK:               uop.store %[[PAIR]], %{{.*}} : i32
// CHECK:               %[[LONE:.*]] = uop.load %{{.*}} : i8
// CHECK-NEXT:          %[[LONE32:.*]] = uop.cast %[[LONE]] : i8 to i32
// CHECK:               uop.store %[[LONE32]], %{{.*}} : i32
// CHECK:             uop.range %[[B:.*]] = 0 to 1 {
// CHECK:               %[[PB:.*]] = uop.gep %[[STAGED]][%{{.*}}, %{{.*}}] : !uop.view<4x14xi32, strides [14, 1], offset 0>
// CHECK-NEXT:          uop.range %[[Q:.*]] = 0 to 1 {
// CHECK-NOT:               uop.min
// CHECK:                 %[[PA:.*]] = uop.gep %[[COLUMN]][%{{.*}}, %{{.*}}] : !uop.view<3x14xi32, strides [14, 1], offset 0>
// CHECK-NEXT:            %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = arm_dsp.smlad_block %[[PA]], %[[PB]], %[[B0:.*]], %[[B0]], %[[B1:.*]], %[[B1]], %[[B2:.*]], %[[B2]], %[[B3:.*]], %[[B3]] {steps = #builtin.int<14>, a_next = #builtin.int<14>, b_next = #builtin.int<14>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32, i32, i32
// CHECK-COUNT-8:         uop.store %{{.*}}, %{{.*}} : i8
// CHECK:               uop.range %[[R:.*]] = 0 to 1 {
// CHECK:                 %[[TWO:.*]] = uop.const 2 : index
// CHECK-NEXT:            %[[EVEN:.*]] = uop.mul %[[R]], %[[TWO]] : index
// CHECK-NEXT:            %[[ONE:.*]] = uop.const 1 : index
// CHECK-NEXT:            %[[LAST:.*]] = uop.add %[[EVEN]], %[[ONE]] : index
// CHECK:                 %[[PA2:.*]] = uop.gep %[[COLUMN]][%[[LAST]], %{{.*}}] : !uop.view<3x14xi32, strides [14, 1], offset 0>
// CHECK-NEXT:            %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = arm_dsp.smlad_block %[[PA2]], %[[PB]],
// CHECK-COUNT-8:         uop.store %{{.*}}, %{{.*}} : i8
// CHECK:         func.return
func.func @first(%x: tensor<1x3x5x6xi8>) -> tensor<1x4x2x3xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %lo = onnx.Constant() {value = dense<-100> : tensor<i8>} : () -> tensor<i8>
  %r = onnx.Clip(%x, %lo) {zant.channels_last} : (tensor<1x3x5x6xi8>, tensor<i8>) -> tensor<1x3x5x6xi8>
  %w = onnx.Constant() {value = dense<[[[[12, -17, -13], [-11, -13, 12], [14, 3, -19]], [[-17, -7, -3], [4, -1, -10], [-14, 7, 9]], [[-19, -16, -2], [-5, 15, 0], [-4, -3, 6]]], [[[3, -14, 9], [10, 18, 11], [-9, -8, 5]], [[6, 7, 14], [-9, 17, -20], [-17, 18, 17]], [[-9, -15, -8], [-19, 15, 6], [3, -11, -2]]], [[[-13, 10, -2], [-19, -10, 8], [0, -6, -10]], [[-17, 4, 6], [0, 17, 17], [-12, 4, 5]], [[-11, -9, -1], [9, -9, 8], [6, -12, -5]]], [[[13, 13, 6], [-20, 7, -11], [12, 16, -3]], [[18, 10, -7], [15, -5, -16], [3, 13, 6]], [[-5, 16, -1], [-5, -15, -12], [7, 11, -9]]]]> : tensor<4x3x3x3xi8>} : () -> tensor<4x3x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%r, %xs, %xz, %w, %ws, %wz, %ys, %yz) {pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x5x6xi8>, tensor<f32>, tensor<i8>, tensor<4x3x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x2x3xi8>
  func.return %y : tensor<1x4x2x3xi8>
}
