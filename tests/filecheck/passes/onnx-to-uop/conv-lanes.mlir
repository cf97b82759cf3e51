// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-lanes=8 conv-tile=4}' | filecheck %s

// The output-channel-lane form of a strided 1x1 Conv with constant weights: W (8x2x1x1) is
// repacked as W'[m / 8, c, kh, kw, m % 8] (the 8 output channels of a block innermost). The 3x5
// outputs go in tiles of 3 rows x 1 column (`best_tile` with at most 4 outputs: 5 tiles of 3
// cover them exactly). Around a tile, the loop over the block's 8 channels holds the 3
// accumulators, the reduction (taps outside, input channels inside; one weight load
// W'[.., lane] shared by the tile) and the 3 stores: the loop `vectorize` turns into lanes.

// CHECK-LABEL: func.func @main()
// CHECK:         [[PACKED:%.*]] = uop.define_global "constant" 0 "y_packed_weights" value dense<{{\[\[\[\[\[}}1.000000e+00, 3.000000e+00, 5.000000e+00, {{.*}}]]], {{\[\[\[}}2.000000e+00, 4.000000e+00, {{.*}} : tensor<1x2x1x1x8xf32>
// CHECK:         [[W:%.*]] = uop.view [[PACKED]] : !uop.buffer<16xf32> -> !uop.view<1x2x1x1x8xf32, strides [16, 8, 8, 8, 1], offset 0>
// CHECK:         uop.range [[N:%.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range [[BLOCK:%.*]] = 0 to 1 {
// CHECK-NEXT:        [[EIGHT:%.*]] = uop.const 8 : index
// CHECK-NEXT:        [[FIRST:%.*]] = uop.mul [[BLOCK]], [[EIGHT]] : index
// CHECK-NEXT:        uop.range [[OH:%.*]] = 0 to 3 step 3 {
// CHECK-NEXT:          uop.range [[OW:%.*]] = 0 to 5 {
// CHECK:                 [[OH1:%.*]] = uop.add [[OH]], {{%.*}} : index
// CHECK:                 [[OH2:%.*]] = uop.add [[OH]], {{%.*}} : index
// CHECK-NEXT:            uop.range [[LANE:%.*]] = 0 to 8 {
// CHECK-NEXT:              [[M:%.*]] = uop.add [[FIRST]], [[LANE]] : index
// CHECK-COUNT-3:           uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:              uop.range [[KH:%.*]] = 0 to 1 {
// CHECK-NEXT:                uop.range [[KW:%.*]] = 0 to 1 {
// CHECK-NEXT:                  uop.range [[C:%.*]] = 0 to 2 {
// CHECK-NEXT:                    [[PW:%.*]] = uop.gep [[W]][[[BLOCK]], [[C]], [[KH]], [[KW]], [[LANE]]]
// CHECK-NEXT:                    [[WV:%.*]] = uop.load [[PW]] : f32
// CHECK-COUNT-3:                 uop.mulacc {{%.*}}, {{%.*}}, [[WV]] : !uop.acc<f32>, f32
// CHECK:                   uop.gep {{%.*}}[[[N]], [[M]], [[OH]], [[OW]]]
// CHECK:                   uop.gep {{%.*}}[[[N]], [[M]], [[OH1]], [[OW]]]
// CHECK:                   uop.gep {{%.*}}[[[N]], [[M]], [[OH2]], [[OW]]]
// CHECK-NOT:       uop.range
// CHECK:           func.return
func.func @main(%x: tensor<1x2x5x9xf32>) -> tensor<1x8x3x5xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]], [[[7.0]], [[8.0]]], [[[9.0]], [[10.0]]], [[[11.0]], [[12.0]]], [[[13.0]], [[14.0]]], [[[15.0]], [[16.0]]]]> : tensor<8x2x1x1xf32>} : () -> tensor<8x2x1x1xf32>
  %y = onnx.Conv(%x, %w) {strides = array<i64: 2, 2>} : (tensor<1x2x5x9xf32>, tensor<8x2x1x1xf32>) -> tensor<1x8x3x5xf32>
  func.return %y : tensor<1x8x3x5xf32>
}

// -----

// Weights that are not constant keep the scalar form: output channels in blocks of the
// `step`, no packed weights; so do depthwise Convs with run-time weights (depthwise rows).

// CHECK-LABEL: func.func @main()
// CHECK-NOT:     packed_weights
// CHECK:         uop.range {{%.*}} = 0 to 8 step 8 {
// CHECK-LABEL: func.func @depthwise_runtime_weights()
// CHECK-NOT:     packed_weights
// CHECK:         func.return
func.func @main(%x: tensor<1x2x3x5xf32>, %w: tensor<8x2x1x1xf32>) -> tensor<1x8x3x5xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
  %y = onnx.Conv(%x, %w) : (tensor<1x2x3x5xf32>, tensor<8x2x1x1xf32>) -> tensor<1x8x3x5xf32>
  func.return %y : tensor<1x8x3x5xf32>
}
func.func @depthwise_runtime_weights(%x: tensor<1x8x3x5xf32>, %w: tensor<8x1x1x1xf32>) -> tensor<1x8x3x5xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
  %y = onnx.Conv(%x, %w) {group = 8 : i64} : (tensor<1x8x3x5xf32>, tensor<8x1x1x1xf32>) -> tensor<1x8x3x5xf32>
  func.return %y : tensor<1x8x3x5xf32>
}

// -----

// Depthwise lanes: a strided depthwise 3x3 over 8 channels (constant weights). X is copied
// into a channels-last padded buffer (5x7x8), W packed as W'[m / 8, 1, kh, kw, m % 8]; around
// each tile of 3 outputs the loop over the block's 8 lanes reads, per tap, the lane's weight
// and the lane's own channel (m + c) of X: consecutive across lanes, one vector load each.

// CHECK-LABEL: func.func @depthwise()
// CHECK:         uop.define_local "y_padded" : !uop.buffer<280xf32>
// CHECK:         uop.define_global "constant" 0 "y_packed_weights" {{.*}} : tensor<1x1x3x3x8xf32>
// CHECK:         [[W:%.*]] = uop.view {{%.*}} : !uop.buffer<72xf32> -> !uop.view<1x1x3x3x8xf32, strides [72, 72, 24, 8, 1], offset 0>
// CHECK:         [[X:%.*]] = uop.view {{%.*}} : !uop.buffer<280xf32> -> !uop.view<1x8x5x7xf32, strides [280, 1, 56, 8], offset 0>
// CHECK:         [[EIGHT:%.*]] = uop.const 8 : index
// CHECK-NEXT:    uop.mul [[BLOCK:%.*]], [[EIGHT]] : index
// CHECK:         uop.range {{%.*}} = 0 to 3 step 3 {
// CHECK:             uop.range [[LANE:%.*]] = 0 to 8 {
// CHECK-NEXT:          [[M:%.*]] = uop.add {{%.*}}, [[LANE]] : index
// CHECK-COUNT-3:       uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:          uop.range [[C:%.*]] = 0 to 1 {
// CHECK-NEXT:            uop.range [[KH:%.*]] = 0 to 3 {
// CHECK-NEXT:              uop.range [[KW:%.*]] = 0 to 3 {
// CHECK-NEXT:                [[CHANNEL:%.*]] = uop.add [[M]], [[C]] : index
// CHECK-NEXT:                uop.gep [[W]][[[BLOCK]], [[C]], [[KH]], [[KW]], [[LANE]]]
// CHECK:                     uop.gep [[X]][{{%.*}}, [[CHANNEL]], {{%.*}}, {{%.*}}]
func.func @depthwise(%x: tensor<1x8x3x5xf32>) -> tensor<1x8x2x3xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<1.0> : tensor<8x1x3x3xf32>} : () -> tensor<8x1x3x3xf32>
  %y = onnx.Conv(%x, %w) {group = 8 : i64, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x3x5xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x2x3xf32>
  func.return %y : tensor<1x8x2x3xf32>
}

// -----

// A window of 9 taps over 9 input channels (at least as many channels as taps): the reduction
// runs the channels innermost, so X is copied into a channels-last padded buffer (6x6x9, the
// view keeps NCHW indices with strides [324, 1, 54, 9]) and W is packed taps-major as
// W'[m / 8, kh, kw, c, m % 8] (viewed as [m / 8, c, kh, kw, m % 8]): each step reads the next 8
// weights and the next channel of the same pixel. The border slabs are zeroed channels innermost.

// CHECK-LABEL: func.func @main()
// CHECK:         [[PADDED:%.*]] = uop.define_local "y_padded" : !uop.buffer<324xf32>
// CHECK:         [[INTERIOR:%.*]] = uop.view [[PADDED]] : !uop.buffer<324xf32> -> !uop.view<1x9x4x4xf32, strides [324, 1, 54, 9], offset 63>
// CHECK:         [[TOP:%.*]] = uop.view [[PADDED]] : !uop.buffer<324xf32> -> !uop.view<1x9x1x6xf32, strides [324, 1, 54, 9], offset 0>
// CHECK:         [[PACKED:%.*]] = uop.define_global "constant" 0 "y_packed_weights" {{.*}} : tensor<1x3x3x9x8xf32> : !uop.buffer<648xf32>
// CHECK:         [[W:%.*]] = uop.view [[PACKED]] : !uop.buffer<648xf32> -> !uop.view<1x9x3x3x8xf32, strides [648, 8, 216, 72, 1], offset 0>
// CHECK:         [[X:%.*]] = uop.view [[PADDED]] : !uop.buffer<324xf32> -> !uop.view<1x9x6x6xf32, strides [324, 1, 54, 9], offset 0>
// CHECK:         uop.gep [[INTERIOR]][{{.*}}] : !uop.view<1x9x4x4xf32, strides [324, 1, 54, 9], offset 63>
// CHECK:         uop.range [[N:%.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range [[H:%.*]] = 0 to 1 {
// CHECK-NEXT:        uop.range [[W0:%.*]] = 0 to 6 {
// CHECK-NEXT:          uop.range [[C0:%.*]] = 0 to 9 {
// CHECK-NEXT:            uop.gep [[TOP]][[[N]], [[C0]], [[H]], [[W0]]]
// CHECK:                 uop.range [[LANE:%.*]] = 0 to 8 {
// CHECK:                   uop.range [[KH:%.*]] = 0 to 3 {
// CHECK-NEXT:                uop.range [[KW:%.*]] = 0 to 3 {
// CHECK-NEXT:                  uop.range [[C:%.*]] = 0 to 9 {
// CHECK-NEXT:                    uop.gep [[W]][{{%.*}}, [[C]], [[KH]], [[KW]], [[LANE]]]
// CHECK:                         uop.gep [[X]][{{%.*}}, [[C]], {{%.*}}, {{%.*}}]
func.func @main(%x: tensor<1x9x4x4xf32>) -> tensor<1x8x4x4xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<0.5> : tensor<8x9x3x3xf32>} : () -> tensor<8x9x3x3xf32>
  %y = onnx.Conv(%x, %w) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x9x4x4xf32>, tensor<8x9x3x3xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
