// RUN: zant-opt %s -p 'onnx-to-uop{conv-word-taps=true}' | filecheck %s
// RUN: zant-opt %s -p onnx-to-uop | filecheck %s --check-prefix=OFF
// RUN: zant-opt %s -p 'set-target{target=cortex-m4},onnx-to-uop' | filecheck %s
// RUN: zant-opt %s -p 'set-target{target=cortex-m55},onnx-to-uop' | filecheck %s --check-prefix=OFF
// RUN: zant-opt %s -p 'set-target{target=cortex-m4},onnx-to-uop{conv-word-taps=false}' | filecheck %s --check-prefix=OFF

// With conv-word-taps (the Cortex-M4's pipeline), an int8 3x3 Conv over 3 input channels (too few to read a word along the channels) with
// constant weights: each row of taps gets a 4th tap of weight 0, W stored as [m, c, kh, 4], so
// arm-dsp-dot reads one word of X and one of W per row (the extra product adds 0). The window
// reaches one input further: X is copied into a frame padded 2 on the right instead of 1
// (8 + 1 + 2 = 11 wide), whose extra column holds the zero point like the rest of the border.
// The outputs are register tiles of 2 channels x 2 pixels: each weight word is read (from
// flash) and widened once for two pixels, and the unrolled rows stay small enough for a
// flash accelerator's instruction cache (VWW's first layer on the L4R5).

// Without it (the Helium cores vectorize the 3-tap rows better), W as it is and X unpadded.
// OFF-LABEL: func.func @main
// OFF-NOT:       word_tap
// OFF-NOT:       y_padded
// OFF:           func.return

// CHECK-LABEL: func.func @main
// CHECK:         %y_padded = uop.define_local "y_padded" : !uop.buffer<330xi8>
// CHECK:         %y_word_tap_weights = uop.define_global "constant" {{[0-9]+}} "y_word_tap_weights" value dense_resource<[[W:.*]]> : tensor<2x3x3x4xi8>
// CHECK:         %[[PADDED:.*]] = uop.view %y_padded : !uop.buffer<330xi8> -> !uop.view<1x3x10x11xi8
// CHECK:         %[[WORDS:.*]] = uop.view %y_word_tap_weights : !uop.buffer<72xi8> -> !uop.view<2x3x3x4xi8, strides [36, 12, 4, 1], offset 0>
// CHECK-NOT:     uop.where
// CHECK:         uop.range %{{.*}} = 0 to 2 step 2 {
// CHECK:           uop.range %{{.*}} = 0 to 8 {
// CHECK-NEXT:        uop.range %{{.*}} = 0 to 8 step 2 {
// CHECK:               uop.define_acc
// CHECK-NEXT:          uop.define_acc
// CHECK-NEXT:          uop.define_acc
// CHECK-NEXT:          uop.define_acc
// CHECK-NEXT:          uop.range %[[C:.*]] = 0 to 3 {
// CHECK-NEXT:      uop.range %[[KH:.*]] = 0 to 3 {
// CHECK-NEXT:        uop.range %[[KW:.*]] = 0 to 4 {
// CHECK:               uop.gep %[[PADDED]][%{{.*}}, %[[C]], %{{.*}}, %{{.*}}]
// CHECK:               uop.gep %[[WORDS]][%{{.*}}, %[[C]], %[[KH]], %[[KW]]]
// CHECK:               uop.mulacc
// CHECK-NOT:     uop.where
// CHECK:         func.return

// W's rows of 3 taps with a 0 after each: 1 2 3 0, 4 5 6 0, 7 8 9 0, 1 0 1 0 …
// CHECK:         [[W]]: "0x100000000102030004050600070809000100010000010000010001000102030004050600070809000202020002020200020202000102010002040200010201000202020002020200020202
func.func @main(%x: tensor<1x3x8x8xi8>) -> tensor<1x2x8x8xi8> {
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
