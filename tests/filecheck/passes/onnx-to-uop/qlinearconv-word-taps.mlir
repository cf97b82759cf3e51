// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-word-taps=true}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s --check-prefix=OFF
// RUN: zant-opt %s --split-input-file -p 'set-target{target=cortex-m4},onnx-to-uop' | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'set-target{target=cortex-m55},onnx-to-uop' | filecheck %s --check-prefix=OFF
// RUN: zant-opt %s --split-input-file -p 'set-target{target=cortex-m4},onnx-to-uop{conv-word-taps=false}' | filecheck %s --check-prefix=OFF

// With conv-word-taps (the Cortex-M4's pipeline), an int8 Conv over too few input channels to
// read a word along the channels, with constant weights and rows of 3 taps: each row of taps
// gets a 4th tap of weight 0, W stored as [m, c, kh, 4], so arm-dsp-dot reads one word of X
// and one of W per row (the extra product adds 0). The window reaches one input further: X is
// copied into a frame padded 2 on the right instead of 1 (8 + 1 + 2 = 11 wide), whose extra
// column holds the zero point like the rest of the border. The outputs are register tiles of
// 2 channels x 2 pixels: each weight word is read (from flash) and widened once for two
// pixels, and the unrolled rows stay small enough for a flash accelerator's instruction cache.

// Without it (the Helium cores vectorize the 3-tap rows better), W as it is and X unpadded.
// OFF-LABEL: func.func @two_channels
// OFF-NOT:       word_tap
// OFF-NOT:       y_padded
// OFF:           func.return

// CHECK-LABEL: func.func @two_channels
// CHECK:         %y_padded = uop.define_local "y_padded" : !uop.buffer<220xi8>
// CHECK:         %y_word_tap_weights = uop.define_global "constant" {{[0-9]+}} "y_word_tap_weights" value dense_resource<[[W:.*]]> : tensor<2x2x3x4xi8>
// CHECK:         %[[PADDED:.*]] = uop.view %y_padded : !uop.buffer<220xi8> -> !uop.view<1x2x10x11xi8
// CHECK:         %[[WORDS:.*]] = uop.view %y_word_tap_weights : !uop.buffer<48xi8> -> !uop.view<2x2x3x4xi8, strides [24, 12, 4, 1], offset 0>
// CHECK-NOT:     uop.where
// CHECK:         uop.range %{{.*}} = 0 to 2 step 2 {
// CHECK:           uop.range %{{.*}} = 0 to 8 {
// CHECK-NEXT:        uop.range %{{.*}} = 0 to 8 step 2 {
// CHECK:               uop.define_acc
// CHECK-NEXT:          uop.define_acc
// CHECK-NEXT:          uop.define_acc
// CHECK-NEXT:          uop.define_acc
// CHECK-NEXT:          uop.range %[[C:.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range %[[KH:.*]] = 0 to 3 {
// CHECK-NEXT:        uop.range %[[KW:.*]] = 0 to 4 {
// CHECK:               uop.gep %[[PADDED]][%{{.*}}, %[[C]], %{{.*}}, %{{.*}}]
// CHECK:               uop.gep %[[WORDS]][%{{.*}}, %[[C]], %[[KH]], %[[KW]]]
// CHECK:               uop.mulacc
// CHECK-NOT:     uop.where
// CHECK:         func.return

// W's rows of 3 taps with a 0 after each: 1 2 3 0, 4 5 6 0, 7 8 9 0, 1 0 1 0 …
// CHECK:         [[W]]: "0x10000000010203000405060007080900010001000001000001000100020202000202020002020200010201000204020001020100"
func.func @two_channels(%x: tensor<1x2x8x8xi8>) -> tensor<1x2x8x8xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 0, 1], [0, 1, 0], [1, 0, 1]]], [[[2, 2, 2], [2, 2, 2], [2, 2, 2]], [[1, 2, 1], [2, 4, 2], [1, 2, 1]]]]> : tensor<2x2x3x3xi8>} : () -> tensor<2x2x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8xi8>, tensor<f32>, tensor<i8>, tensor<2x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x8x8xi8>
  func.return %y : tensor<1x2x8x8xi8>
}


// -----

// Rows of 4 taps (KWS's first Conv, 10x4 over 1 channel at stride 2) are a word each already:
// W as it is, no tap added, in the same 2 x 2 tiles (a channel loop of one: X's 4 bytes and
// W's 4 per row of taps).
// OFF-LABEL: func.func @four_taps
// OFF-NOT:       word_tap
// OFF:           func.return

// CHECK-LABEL: func.func @four_taps
// CHECK:         %y_padded = uop.define_local "y_padded" : !uop.buffer<80xi8>
// CHECK:         %y_word_tap_weights = uop.define_global "constant" {{[0-9]+}} "y_word_tap_weights" value dense<{{\[}}[{{\[}}[1, 2, 3, 4], [5, 6, 7, 8]]], [{{\[}}[-1, 0, 1, 0], [0, 1, 0, -128]]]]> : tensor<2x1x2x4xi8>
// CHECK:         %[[PADDED:.*]] = uop.view %y_padded : !uop.buffer<80xi8> -> !uop.view<1x1x10x8xi8
// CHECK:         uop.range %{{.*}} = 0 to 2 step 2 {
// CHECK:               uop.define_acc
// CHECK-NEXT:          uop.define_acc
// CHECK-NEXT:          uop.define_acc
// CHECK-NEXT:          uop.define_acc
// CHECK-NEXT:          uop.range %{{.*}} = 0 to 1 {
// CHECK-NEXT:      uop.range %{{.*}} = 0 to 2 {
// CHECK-NEXT:        uop.range %{{.*}} = 0 to 4 {
// CHECK:               uop.mulacc
// CHECK:         func.return

func.func @four_taps(%x: tensor<1x1x9x6xi8>) -> tensor<1x2x5x3xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1, 2, 3, 4], [5, 6, 7, 8]]], [[[-1, 0, 1, 0], [0, 1, 0, -128]]]]> : tensor<2x1x2x4xi8>} : () -> tensor<2x1x2x4xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {pads = array<i64: 0, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x9x6xi8>, tensor<f32>, tensor<i8>, tensor<2x1x2x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x5x3xi8>
  func.return %y : tensor<1x2x5x3xi8>
}

// -----

// Three channels (an RGB input) read their windows from a channels-last copy of X instead
// (conv_window's channels-last form): a row of taps is one run of 3 x 3 bytes in the order of
// W'[m, kh, kw, c], so no tap of weight 0 is added (a quarter of a 3x3x3 window's products).
// OFF-LABEL: func.func @rgb
// OFF-NOT:       channels_last
// OFF:           func.return

// CHECK-LABEL: func.func @rgb
// CHECK-NOT:     word_tap
// CHECK:         %y_padded = uop.define_local "y_padded" : !uop.buffer<300xi8>
// CHECK:         uop.view %y_padded : !uop.buffer<300xi8> -> !uop.view<1x3x8x8xi8, strides [300, 1, 30, 3], offset 33>
// CHECK:         %y_channels_last_weights = uop.define_global "constant" {{[0-9]+}} "y_channels_last_weights" {{.*}} : tensor<2x3x3x3xi8>
// CHECK:         uop.view %y_padded : !uop.buffer<300xi8> -> !uop.view<1x10x30xi8, strides [300, 30, 1], offset 0>
// CHECK:               uop.define_acc
// CHECK-NEXT:          uop.define_acc
// CHECK-NEXT:          uop.define_acc
// CHECK-NEXT:          uop.define_acc
// CHECK-NOT:     word_tap
// CHECK:         func.return
func.func @rgb(%x: tensor<1x3x8x8xi8>) -> tensor<1x2x8x8xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 0, 1], [0, 1, 0], [1, 0, 1]], [[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[2, 2, 2], [2, 2, 2], [2, 2, 2]], [[1, 2, 1], [2, 4, 2], [1, 2, 1]], [[2, 2, 2], [2, 2, 2], [2, 2, 2]]]]> : tensor<2x3x3x3xi8>} : () -> tensor<2x3x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xi8>, tensor<f32>, tensor<i8>, tensor<2x3x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x8x8xi8>
  func.return %y : tensor<1x2x8x8xi8>
}
