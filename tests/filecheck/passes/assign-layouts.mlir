// RUN: zant-opt %s --split-input-file -p 'set-target{target=cortex-m4},assign-layouts' | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'set-target{target=cortex-m55},assign-layouts' | filecheck %s --check-prefix=HELIUM
// RUN: zant-opt %s --split-input-file -p 'set-target{target=cortex-m4},assign-layouts,onnx-to-uop' | filecheck %s --check-prefix=LOWERED
// RUN: zant-opt %s --split-input-file -p 'set-target{target=cortex-m4},assign-layouts,onnx-to-uop{weight-cache-bytes=8}' | filecheck %s --check-prefix=STAGED
// RUN: zant-opt %s --split-input-file -p 'set-target{target=cortex-m4},assign-layouts{budget=72}' | filecheck %s --check-prefix=ROOM
// RUN: zant-opt %s --split-input-file -p 'set-target{target=cortex-m4},assign-layouts{budget=71}' | filecheck %s --check-prefix=TIGHT

// A depthwise Conv, its Relu (an int8 Clip), then a pointwise Conv, as in MobileNet. The
// depthwise output's only reader is the pointwise Conv, whose column form reads channels-last in
// place (NCHW: a copy of every byte into columns): the depthwise Conv and its Clip are marked
// channels-last. The pointwise output is the graph's output (the ONNX layout): not marked; the
// graph input is not an op's result: untouched. On the Cortex-M55 (Helium: no column form) the
// pass marks nothing.

// CHECK-LABEL: func.func @main
// CHECK:         %d = onnx.QLinearConv({{.*}}) {group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, zant.channels_last}
// CHECK-NEXT:    %r = onnx.Clip(%d, %xz) {zant.channels_last}
// CHECK:         %y = onnx.QLinearConv(%r, {{.*}}) : (
// HELIUM-LABEL:  func.func @main
// HELIUM-NOT:    zant.channels_last

// Under a RAM budget (`assign-layouts{budget=B}`, `with_in_place_layouts`): each Conv's input
// and output take 72 B together. Within 72 B the layouts are as without a budget; under 71 B
// both Convs must write over their inputs (`schedule-in-place`, NCHW nests only), so the
// depthwise output stays NCHW.
// ROOM-LABEL:    func.func @main
// ROOM:          %r = onnx.Clip(%d, %xz) {zant.channels_last}
// TIGHT-LABEL:   func.func @main
// TIGHT-NOT:     zant.channels_last
// TIGHT-LABEL:   func.func @shared

// Lowered: the depthwise output is a buffer of (N, H, W, C) = 1x3x3x4 published as a view
// indexed (N, C, H, W), strides [36, 1, 12, 4]; the Clip's result likewise, walked channels
// innermost through the memory-order views (N, H, W, C) of both at the identity index. The pointwise Conv reads it in place, (N, H·W, C) with channels contiguous, no
// column buffer: output channel pairs outermost, then the pixel pairs (the last one overlapping,
// min(2p, 7)), and its own output stays row-major NCHW.
// LOWERED-LABEL: func.func @main
// LOWERED-NOT:     y_columns
// LOWERED:         %d = uop.define_local "d" : !uop.buffer<36xi8>
// LOWERED:         uop.view %d : !uop.buffer<36xi8> -> !uop.view<1x4x3x3xi8, strides [36, 1, 12, 4], offset 0>
// LOWERED:         %r = uop.define_local "r" : !uop.buffer<36xi8>
// LOWERED:         %[[R:.*]] = uop.view %r : !uop.buffer<36xi8> -> !uop.view<1x3x3x4xi8, strides [36, 12, 4, 1], offset 0>
// LOWERED:         uop.range %[[N:.*]] = 0 to 1 {
// LOWERED-NEXT:      uop.range %[[H:.*]] = 0 to 3 {
// LOWERED-NEXT:        uop.range %[[W:.*]] = 0 to 3 {
// LOWERED-NEXT:          uop.range %[[C:.*]] = 0 to 4 {
// LOWERED:                 uop.gep %[[R]][%[[N]], %[[H]], %[[W]], %[[C]]]
// LOWERED:         %[[ROWS:.*]] = uop.view %r : !uop.buffer<36xi8> -> !uop.view<1x9x4xi8, strides [36, 4, 1], offset 0>
// LOWERED:         %[[Y:.*]] = uop.view %y : !uop.buffer<36xi8> -> !uop.view<1x4x9xi8, strides [36, 9, 1], offset 0>
// LOWERED:         uop.range %{{.*}} = 0 to 1 {
// LOWERED-NEXT:      uop.range %[[M:.*]] = 0 to 4 step 2 {
// LOWERED-NEXT:        uop.range %[[P:.*]] = 0 to 5 {
// LOWERED:               uop.min {{.*}} : index
// LOWERED:               uop.range %[[K:.*]] = 0 to 4 {
// LOWERED:                 uop.gep %[[ROWS]][%{{.*}}, %{{.*}}, %[[K]]]
// LOWERED:                 uop.gep %[[ROWS]][%{{.*}}, %{{.*}}, %[[K]]]
// LOWERED:               uop.gep %[[Y]][%{{.*}}, %[[M]], %{{.*}}]
// LOWERED:         func.return

// With a cache of 8 bytes in front of the weights (`weight-cache-bytes`, a board's flash cache:
// here smaller than a pair of 4-byte rows can take), each pair of rows m, m + 1 is copied into
// y_columns_weights [2][4] before its pixel pairs, and the tiles read the copy.
// STAGED-LABEL: func.func @main
// STAGED:         %y_columns_weights = uop.define_local "y_columns_weights" : !uop.buffer<8xi8>
// STAGED-NEXT:    %[[W:.*]] = uop.view %w : !uop.buffer<16xi8> -> !uop.view<4x4xi8, strides [4, 1], offset 0>
// STAGED-NEXT:    %[[LOCAL:.*]] = uop.view %y_columns_weights : !uop.buffer<8xi8> -> !uop.view<2x4xi8, strides [4, 1], offset 0>
// STAGED:         uop.range %[[M:.*]] = 0 to 4 step 2 {
// STAGED-NEXT:      uop.range %[[I:.*]] = 0 to 2 {
// STAGED-NEXT:        uop.range %[[C:.*]] = 0 to 4 {
// STAGED-NEXT:          %[[ROW:.*]] = uop.add %[[M]], %[[I]] : index
// STAGED-NEXT:          %{{.*}} = uop.gep %[[W]][%[[ROW]], %[[C]]]
// STAGED-NEXT:          %[[B:.*]] = uop.load
// STAGED-NEXT:          %[[TO:.*]] = uop.gep %[[LOCAL]][%[[I]], %[[C]]]
// STAGED-NEXT:          uop.store %[[B]], %[[TO]] : i8
// STAGED:           uop.range %{{.*}} = 0 to 5 {
// STAGED:             uop.range %[[K:.*]] = 0 to 4 {
// STAGED:               uop.gep %[[LOCAL]][%{{.*}}, %[[K]]]
// STAGED:               uop.gep %[[LOCAL]][%{{.*}}, %[[K]]]
// STAGED:         func.return
func.func @main(%x: tensor<1x4x3x3xi8>, %dw: tensor<4x1x3x3xi8>) -> tensor<1x4x3x3xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %d = onnx.QLinearConv(%x, %xs, %xz, %dw, %ws, %wz, %ys, %xz) {group = 4 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<4x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x3x3xi8>
  %r = onnx.Clip(%d, %xz) : (tensor<1x4x3x3xi8>, tensor<i8>) -> tensor<1x4x3x3xi8>
  %w = onnx.Constant() {value = dense<[[[[1]], [[2]], [[3]], [[4]]], [[[-1]], [[5]], [[0]], [[7]]], [[[2]], [[2]], [[-8]], [[1]]], [[[9]], [[-3]], [[1]], [[1]]]]> : tensor<4x4x1x1xi8>} : () -> tensor<4x4x1x1xi8>
  %y = onnx.QLinearConv(%r, %ys, %xz, %w, %ws, %wz, %xs, %xz) : (tensor<1x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<4x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x3x3xi8>
  func.return %y : tensor<1x4x3x3xi8>
}

// -----

// A depthwise output also read by something without a channels-last kernel (here the graph's
// output): the NCHW readers' cost is infinite channels-last, so the group stays NCHW.

// CHECK-LABEL: func.func @shared
// CHECK-NOT:     zant.channels_last
// CHECK:         func.return
func.func @shared(%x: tensor<1x4x3x3xi8>, %dw: tensor<4x1x3x3xi8>) -> (tensor<1x4x3x3xi8>, tensor<1x4x3x3xi8>) {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %d = onnx.QLinearConv(%x, %xs, %xz, %dw, %ws, %wz, %ys, %xz) {group = 4 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<4x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x3x3xi8>
  %w = onnx.Constant() {value = dense<[[[[1]], [[2]], [[3]], [[4]]], [[[-1]], [[5]], [[0]], [[7]]], [[[2]], [[2]], [[-8]], [[1]]], [[[9]], [[-3]], [[1]], [[1]]]]> : tensor<4x4x1x1xi8>} : () -> tensor<4x4x1x1xi8>
  %y = onnx.QLinearConv(%d, %ys, %xz, %w, %ws, %wz, %xs, %xz) : (tensor<1x4x3x3xi8>, tensor<f32>, tensor<i8>, tensor<4x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x3x3xi8>
  func.return %d, %y : tensor<1x4x3x3xi8>, tensor<1x4x3x3xi8>
}
