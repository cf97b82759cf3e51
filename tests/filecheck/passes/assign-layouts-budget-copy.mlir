// RUN: zant-opt %s -p 'set-target{target=cortex-m4},assign-layouts{budget=150}' | filecheck %s
// RUN: zant-opt %s -p 'set-target{target=cortex-m4},assign-layouts{budget=150},onnx-to-uop' | filecheck %s --check-prefix=LOWERED
// RUN: zant-opt %s -p 'set-target{target=cortex-m4},assign-layouts{budget=100}' | filecheck %s --check-prefix=TIGHT
// RUN: zant-opt %s -p 'set-target{target=cortex-m4},assign-layouts{budget=200}' | filecheck %s --check-prefix=ROOM

// A stride-2 depthwise Conv (144 B in, 36 B out) and its Clip, then a pointwise Conv (36 B in
// and out). Under 150 B the depthwise Conv writes over its input (`schedule-in-place`, NCHW
// nests only), so its output stays NCHW; the pointwise Conv, within the budget, reads a
// channels-last copy of it (`channels_last_copy`: a one-input Concat marked channels-last; 36 B
// beside the 36 B it copies and beside the pointwise output), in place, instead of copying
// NCHW columns.
// CHECK-LABEL: func.func @main
// CHECK:         %d = onnx.QLinearConv({{.*}}) {group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} :
// CHECK-NEXT:    %r = onnx.Clip(%d, %xz) :
// CHECK-NEXT:    %r_channels_last = onnx.Concat(%r) {axis = 1 : i64, zant.channels_last} :
// CHECK:         %y = onnx.QLinearConv(%r_channels_last, {{.*}}) :

// Lowered: the copy walks its output in memory order (N, H, W, C), reading the NCHW Clip's
// output across its planes, and the pointwise Conv reads it in place: no column buffer.
// LOWERED-LABEL: func.func @main
// LOWERED-NOT:     y_columns
// LOWERED:         %r_channels_last = uop.define_local "r_channels_last" : !uop.buffer<36xi8>
// LOWERED:         %[[TO:.*]] = uop.view %r_channels_last : !uop.buffer<36xi8> -> !uop.view<1x3x3x4xi8, strides [36, 12, 4, 1], offset 0>
// LOWERED-NEXT:    uop.range %[[N:.*]] = 0 to 1 {
// LOWERED-NEXT:      uop.range %[[H:.*]] = 0 to 3 {
// LOWERED-NEXT:        uop.range %[[W:.*]] = 0 to 3 {
// LOWERED-NEXT:          uop.range %[[C:.*]] = 0 to 4 {
// LOWERED-NEXT:            %{{.*}} = uop.gep %{{.*}}[%[[N]], %[[H]], %[[W]], %[[C]]] : !uop.view<1x3x3x4xi8, strides [36, 3, 1, 9], offset 0>
// LOWERED-NEXT:            %[[V:.*]] = uop.load
// LOWERED-NEXT:            %[[AT:.*]] = uop.gep %[[TO]][%[[N]], %[[H]], %[[W]], %[[C]]]
// LOWERED-NEXT:            uop.store %[[V]], %[[AT]] : i8
// LOWERED:         uop.view %r_channels_last : !uop.buffer<36xi8> -> !uop.view<1x9x4xi8, strides [36, 4, 1], offset 0>
// LOWERED:         func.return

// Under 100 B the copy (36 B beside the 36 B it copies and the pointwise output's 36 B) does not
// fit: no copy, nothing channels-last. Within 200 B no Conv writes over its input: the depthwise
// output is channels-last itself, as without a budget, and no copy is made.
// TIGHT-LABEL: func.func @main
// TIGHT-NOT:     onnx.Concat
// TIGHT-NOT:     zant.channels_last
// TIGHT:         func.return
// ROOM-LABEL: func.func @main
// ROOM:          %r = onnx.Clip(%d, %xz) {zant.channels_last}
// ROOM-NOT:      onnx.Concat
// ROOM:          func.return
func.func @main(%x: tensor<1x4x6x6xi8>) -> tensor<1x4x3x3xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %dw = onnx.Constant() {value = dense<[[[[1, -2, 3], [4, 5, -6], [7, 8, 9]]], [[[-1, 2, 0], [3, 1, 1], [2, -4, 5]]], [[[0, 1, 2], [-3, 4, 5], [6, 7, -8]]], [[[9, -9, 1], [2, 2, 2], [-1, 0, 3]]]]> : tensor<4x1x3x3xi8>} : () -> tensor<4x1x3x3xi8>
  %d = onnx.QLinearConv(%x, %xs, %xz, %dw, %ws, %wz, %ys, %xz) {group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x6x6xi8>, tensor<f32>, tensor<i8>, tensor<4x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x3x3xi8>
  %r = onnx.Clip(%d, %xz) : (tensor<1x4x3x3xi8>, tensor<i8>) -> tensor<1x4x3x3xi8>
  %w = onnx.Constant() {value = dense<[[[[1]], [[2]], [[3]], [[4]]], [[[-1]], [[5]], [[0]], [[7]]], [[[2]], [[2]], [[-8]], [[1]]], [[[9]], [[-3]], [[1]], [[1]]]]> : tensor<4x4x1x1xi8>} : () -> tensor<4x4x1x1xi8>
  %y = onnx.QLinearConv(%r, %ys, %xz, %w, %ws, %wz, %xs, %xz) : (tensor<1x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<4x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x3x3xi8>
  func.return %y : tensor<1x4x3x3xi8>
}
