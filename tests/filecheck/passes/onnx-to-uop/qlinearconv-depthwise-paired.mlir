// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-word-taps=true}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s --check-prefix=OFF

// On DSP cores without Helium (conv-word-taps, the Cortex-M4's pipeline) an int8 depthwise
// Conv with rows of 3 taps takes the paired-tap form (conv_depthwise.py): per channel, each
// row's (w0, w2) word of 16-bit halves, packed at compile time (channel 0's first row:
// 1 | 3 << 16 = 196609; channel 1's: -1 and -128 as halves), and its middle tap w1 are loaded
// once; then per step of 4 outputs of a row (stride 1), two words of X's row, each one
// load_word and its two sxtb16 halves E, O, feed two outputs: SMLAD(E, (w0, w2)) plus O's low
// half times w1, and SMLAD(O, (w0, w2)) plus E's high half times w1. With one pad each side of
// the rows (and a whole step inside: 7 wide, a step and a single output after it; a short
// row is computed whole, @kws_rows below), the border too: a row's first output from the
// row's first word, its last from its last word (at 7 - 4 = 3), each from a start of its own: the
// bias plus X's zero point (3) times each padded tap's weight, one smla per tap, made once per
// channel and kind of output (the top row's first output: its first row of taps, w1 and the
// (w0, w2) word's halves, then the first taps of rows 1 and 2); the top row, the interior rows
// and the bottom row each loop over the channels.

// CHECK-LABEL: func.func @paired
// CHECK:         %y_paired_tap_weights = uop.define_global "constant" {{[0-9]+}} "y_paired_tap_weights" value dense<{{\[}}[196609, 393220, 589831], [-8323073, 0, 65537]]> : tensor<2x3xi32>
// CHECK-NOT:     padding_sums
// CHECK:         %[[T:.*]] = uop.view %y_paired_tap_weights
// CHECK:           uop.range %{{.*}} = 0 to 2 {
// CHECK:             %[[FILL:.*]] = uop.const 3 : i32
// CHECK-NEXT:        %[[T0:.*]] = arm_dsp.smla %[[FILL]], %[[P0T:.*]], %[[BIAS:.*]] {halves = "bb"} : i32
// CHECK-NEXT:        %[[T1:.*]] = arm_dsp.smla %[[FILL]], %[[M0T:.*]], %[[T0]] {halves = "bb"} : i32
// CHECK-NEXT:        %[[T2:.*]] = arm_dsp.smla %[[FILL]], %[[P0T]], %[[T1]] {halves = "bt"} : i32
// CHECK-NEXT:        %[[T3:.*]] = arm_dsp.smla %[[FILL]], %[[P1T:.*]], %[[T2]] {halves = "bb"} : i32
// CHECK-NEXT:        %{{.*}} = arm_dsp.smla %[[FILL]], %[[P2T:.*]], %[[T3]] {halves = "bb"} : i32
// CHECK:               uop.range %{{.*}} = 1 to 5 step 4 {
// CHECK:           uop.range %[[C:.*]] = 0 to 2 {
// CHECK-NEXT:        %{{.*}} = uop.const 0 : index
// CHECK-NEXT:        %[[G0:.*]] = uop.gep %[[T]][%[[C]], %{{.*}}]
// CHECK-NEXT:        %[[P0:.*]] = uop.load %[[G0]] : i32
// CHECK:             %[[M0:.*]] = uop.cast %{{.*}} : i8 to i32
// CHECK:             uop.range %[[OY:.*]] = 1 to 3 {
// CHECK-NEXT:          %{{.*}} = uop.const -1 : index
// CHECK-NEXT:          %[[IY:.*]] = uop.add %[[OY]], %{{.*}} : index
// CHECK:               %[[ZERO:.*]] = uop.const 0 : index
// CHECK-NEXT:          %[[AT0:.*]] = uop.gep %{{.*}}[%{{.*}}, %[[C]], %[[IY]], %[[ZERO]]]
// CHECK-NEXT:          %{{.*}} = arm_dsp.load_word %[[AT0]] : !uop.ptr<i8>
// CHECK-COUNT-2:       arm_dsp.load_word
// CHECK:               uop.range %[[OX:.*]] = 1 to 5 step 4 {
// CHECK:                 %{{.*}} = uop.const -1 : index
// CHECK-NEXT:            %[[IX:.*]] = uop.add %[[OX]], %{{.*}} : index
// CHECK-NEXT:            %[[AT:.*]] = uop.gep %{{.*}}[%{{.*}}, %[[C]], %[[IY]], %[[IX]]]
// CHECK-NEXT:            %[[WORD:.*]] = arm_dsp.load_word %[[AT]] : !uop.ptr<i8>
// CHECK-NEXT:            %[[E:.*]] = arm_dsp.sxtb16 %[[WORD]] : i32
// CHECK-NEXT:            %[[O:.*]] = arm_dsp.sxtb16 %[[WORD]] ror 8 : i32
// CHECK-NEXT:            %[[O16:.*]] = uop.cast %[[O]] : i32 to i16
// CHECK-NEXT:            %[[OLOW:.*]] = uop.cast %[[O16]] : i16 to i32
// CHECK-NEXT:            %[[A0:.*]] = arm_dsp.smlad %[[E]], %[[P0]], %{{.*}} : i32
// CHECK-NEXT:            %[[B0:.*]] = uop.mul %[[OLOW]], %[[M0]] : i32
// CHECK-NEXT:            %{{.*}} = uop.add %[[A0]], %[[B0]] : i32
// CHECK-NEXT:            %[[SIXTEEN:.*]] = uop.const 16 : i32
// CHECK-NEXT:            %[[EHIGH:.*]] = uop.shr %[[E]], %[[SIXTEEN]] : i32
// CHECK-NEXT:            %[[A1:.*]] = arm_dsp.smlad %[[O]], %[[P0]], %{{.*}} : i32
// CHECK-NEXT:            %[[B1:.*]] = uop.mul %[[EHIGH]], %[[M0]] : i32
// CHECK-NEXT:            %{{.*}} = uop.add %[[A1]], %[[B1]] : i32
// CHECK-COUNT-5:         arm_dsp.load_word
// CHECK:               uop.const 5 : index
// CHECK-COUNT-3:       arm_dsp.load_word
// CHECK:               %[[THREE:.*]] = uop.const 3 : index
// CHECK-NEXT:          %[[AT3:.*]] = uop.gep %{{.*}}[%{{.*}}, %[[C]], %[[IY]], %[[THREE]]]
// CHECK-NEXT:          %{{.*}} = arm_dsp.load_word %[[AT3]] : !uop.ptr<i8>
// CHECK:           uop.range %{{.*}} = 0 to 2 {
// CHECK:         func.return

// Elsewhere no word loads: the tap-at-a-time rows only.
// OFF-LABEL: func.func @paired
// OFF-NOT:       arm_dsp
// OFF-NOT:       paired_tap_weights
// OFF:           func.return
func.func @paired(%x: tensor<1x2x4x7xi8>) -> tensor<1x2x4x7xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, 0, -128], [0, 1, 0], [1, 0, 1]]]]> : tensor<2x1x3x3xi8>} : () -> tensor<2x1x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x7xi8>, tensor<f32>, tensor<i8>, tensor<2x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x7xi8>
  func.return %y : tensor<1x2x4x7xi8>
}

// -----

// Stride 2 (TensorFlow's SAME pads: none before, one after): the 20-wide row's interior is 0
// to 8 (output 9's last tap is the pad after). Its 2 steps of 4 outputs are each one
// arm_dsp.depthwise_step (two words and a byte of each row of taps, from the first output's
// first tap; arm-dsp-depthwise-rows then makes a row's loop of them one asm loop), whose
// weights' table holds each row's w1 beside its (w0, w2) word (one LDRD: channel 0's rows
// (196609, 2), (393220, 5), (589831, 8)); the last interior output alone (a word per output,
// its 4th byte unused), and the row's last output from its last word (at 20 - 4 = 16).
// CHECK-LABEL: func.func @stride2
// CHECK:         %y_paired_tap_weights = uop.define_global "constant" {{[0-9]+}} "y_paired_tap_weights" value dense<{{\[}}{{\[}}[196609, 2], [393220, 5], [589831, 8]], {{\[}}[-8323073, 0], [0, 1], [65537, 0]]]> : tensor<2x3x2xi32>
// CHECK:         %[[T:.*]] = uop.view %y_paired_tap_weights
// CHECK:           uop.range %[[C:.*]] = 0 to 2 {
// CHECK:             uop.range %[[OY:.*]] = 0 to 2 {
// CHECK:               uop.range %[[OX:.*]] = 0 to 8 step 4 {
// CHECK:                 %[[IX:.*]] = uop.mul %[[OX]], %{{.*}} : index
// CHECK-NEXT:            %[[PX:.*]] = uop.gep %{{.*}}[%{{.*}}, %[[C]], %{{.*}}, %[[IX]]] : !uop.view<1x2x6x20xi8, strides [240, 120, 20, 1], offset 0>
// CHECK-NEXT:            %[[R0:.*]] = uop.const 0 : index
// CHECK-NEXT:            %[[W:.*]] = uop.const 0 : index
// CHECK-NEXT:            %[[PW:.*]] = uop.gep %[[T]][%[[C]], %[[R0]], %[[W]]] : !uop.view<2x3x2xi32, strides [6, 2, 1], offset 0>
// CHECK-NEXT:            %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = arm_dsp.depthwise_step %[[PX]], %[[PW]], %{{.*}} {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<20>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
// CHECK-COUNT-4:         uop.store
// CHECK-NEXT:          }
// CHECK-NEXT:          %[[LAST:.*]] = uop.const 8 : index
// CHECK-COUNT-3:       arm_dsp.load_word
// CHECK:               %[[SIXTEEN:.*]] = uop.const 16 : index
// CHECK-NEXT:          %[[AT:.*]] = uop.gep %{{.*}}[%{{.*}}, %[[C]], %{{.*}}, %[[SIXTEEN]]]
// CHECK-NEXT:          %{{.*}} = arm_dsp.load_word %[[AT]] : !uop.ptr<i8>
// CHECK:         func.return
// OFF-LABEL: func.func @stride2
// OFF-NOT:       arm_dsp
// OFF:           func.return
func.func @stride2(%x: tensor<1x2x6x20xi8>) -> tensor<1x2x3x10xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, 0, -128], [0, 1, 0], [1, 0, 1]]]]> : tensor<2x1x3x3xi8>} : () -> tensor<2x1x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {group = 2 : i64, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x6x20xi8>, tensor<f32>, tensor<i8>, tensor<2x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x10xi8>
  func.return %y : tensor<1x2x3x10xi8>
}

// -----

// KWS's rows (5 wide, one pad each side): a short row (no whole step), computed whole with
// its border: per row of taps 2 words, at 0 and 1, and 3 halves, E0 = (x0, x2), O0 = (x1, x3)
// and O1 = (x2, x4), serve the 5 outputs' 15 products: output 0 x0.w1 + x1.w2, output 1
// SMLAD(E0, (w0, w2)) + x1.w1, output 2 SMLAD(O0, (w0, w2)) + x2.w1, output 3 SMLAD(O1, (w0,
// w2)) + x3.w1, output 4 x3.w0 + x4.w1, each single product one smla of a half of the data and
// one of w1 or the (w0, w2) word; the ends' sums start with what their padded taps add. The
// top row, the interior rows and the bottom row each loop over the channels; no tap-at-a-time
// border is left.
// CHECK-LABEL: func.func @kws_rows
// CHECK-NOT:     padding_sums
// CHECK:             uop.range %[[OY:.*]] = 1 to 3 {
// CHECK:               %[[ZERO:.*]] = uop.const 0 : index
// CHECK-NEXT:          %[[AT0:.*]] = uop.gep %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]]]
// CHECK-NEXT:          %[[W0:.*]] = arm_dsp.load_word %[[AT0]] : !uop.ptr<i8>
// CHECK-NEXT:          %[[E0:.*]] = arm_dsp.sxtb16 %[[W0]] : i32
// CHECK-NEXT:          %{{.*}} = arm_dsp.smla %[[E0]], %[[M:.*]], %{{.*}} {halves = "bb"} : i32
// CHECK-NEXT:          %[[O0:.*]] = arm_dsp.sxtb16 %[[W0]] ror 8 : i32
// CHECK-NEXT:          %{{.*}} = arm_dsp.smla %[[O0]], %[[P:.*]], %{{.*}} {halves = "bt"} : i32
// CHECK-NEXT:          %[[S1:.*]] = arm_dsp.smlad %[[E0]], %[[P]], %[[B:.*]] : i32
// CHECK-NEXT:          %{{.*}} = arm_dsp.smla %[[O0]], %[[M]], %[[S1]] {halves = "bb"} : i32
// CHECK-NEXT:          %[[S2:.*]] = arm_dsp.smlad %[[O0]], %[[P]], %[[B]] : i32
// CHECK-NEXT:          %{{.*}} = arm_dsp.smla %[[E0]], %[[M]], %[[S2]] {halves = "tb"} : i32
// CHECK:               %[[ONE:.*]] = uop.const 1 : index
// CHECK-NEXT:          %[[AT1:.*]] = uop.gep %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]]]
// CHECK-NEXT:          %[[W1:.*]] = arm_dsp.load_word %[[AT1]] : !uop.ptr<i8>
// CHECK-NEXT:          %[[O1:.*]] = arm_dsp.sxtb16 %[[W1]] ror 8 : i32
// CHECK-NEXT:          %[[S3:.*]] = arm_dsp.smlad %[[O1]], %[[P]], %[[B]] : i32
// CHECK-NEXT:          %{{.*}} = arm_dsp.smla %[[O0]], %[[M]], %[[S3]] {halves = "tb"} : i32
// CHECK-NEXT:          %[[S4:.*]] = arm_dsp.smla %[[O0]], %[[P]], %{{.*}} {halves = "tb"} : i32
// CHECK-NEXT:          %{{.*}} = arm_dsp.smla %[[O1]], %[[M]], %[[S4]] {halves = "tb"} : i32
// CHECK-NOT:           arm_dsp.sxtb16 %[[W1]] :
// CHECK-COUNT-4:       arm_dsp.load_word
// CHECK-NOT:           arm_dsp.load_word
// CHECK:           uop.range %{{.*}} = 0 to 2 {
// CHECK-COUNT-4:     arm_dsp.load_word
// CHECK-NOT:         arm_dsp.load_word
// CHECK:         func.return
// OFF-LABEL: func.func @kws_rows
// OFF-NOT:       arm_dsp
// OFF:           func.return
func.func @kws_rows(%x: tensor<1x2x4x5xi8>) -> tensor<1x2x4x5xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, 0, -128], [0, 1, 0], [1, 0, 1]]]]> : tensor<2x1x3x3xi8>} : () -> tensor<2x1x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x5xi8>, tensor<f32>, tensor<i8>, tensor<2x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x5xi8>
  func.return %y : tensor<1x2x4x5xi8>
}
