// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-channel-block=4 conv-float-registers=32}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-channel-block=4}' | filecheck %s --check-prefix=BLOCK
// RUN: zant-opt %s --split-input-file -p 'set-target{target=cortex-m4},onnx-to-uop' | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'set-target{target=cortex-m0plus},onnx-to-uop' | filecheck %s --check-prefix=BLOCK

// conv-float-registers=32 (the FPU Cortex-Ms, RV32F): an ungrouped f32 Conv takes the register
// tile conv_tiling.register_tile chooses for it. 8 output channels over 5-wide rows: 4 channels
// x 5 pixels (20 accumulators + 4 weights + 5 inputs = 29 registers), each step loading the 5
// inputs and the 4 weights once for 20 multiply-adds. Without the option: 4 channels x 1 pixel.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range [[N:%.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range [[M:%.*]] = 0 to 8 step 4 {
// CHECK:             uop.range [[OH:%.*]] = 0 to 2 {
// CHECK-NEXT:          uop.range [[OW:%.*]] = 0 to 5 step 5 {
// CHECK-COUNT-20:        uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:            uop.range [[C:%.*]] = 0 to 8 {
// CHECK-COUNT-5:           uop.load {{%.*}} : f32
// CHECK-COUNT-4:           uop.load {{%.*}} : f32
// CHECK-COUNT-20:          uop.mulacc
// CHECK-NOT:               uop.load
// CHECK:                 }
// CHECK-COUNT-20:        uop.store

// BLOCK-LABEL: func.func @main()
// BLOCK:         uop.range {{%.*}} = 0 to 8 step 4 {
// BLOCK:             uop.range {{%.*}} = 0 to 2 {
// BLOCK-NEXT:          uop.range {{%.*}} = 0 to 5 {
// BLOCK-COUNT-4:         uop.define_acc 0.000000e+00 : f32
// BLOCK-NEXT:            uop.range {{%.*}} = 0 to 8 {
func.func @main(%x: tensor<1x8x2x5xf32>, %w: tensor<8x8x1x1xf32>) -> tensor<1x8x2x5xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
  %y = onnx.Conv(%x, %w) : (tensor<1x8x2x5xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x2x5xf32>
  func.return %y : tensor<1x8x2x5xf32>
}

// -----

// A padded 3x3 Conv of a small input (a first layer): X is copied into a zero-bordered buffer
// (36 -> 64 values, no more than the 576 outputs), so every output takes the unchecked loops,
// tiled 8 channels x 2 pixels over the 6-wide rows (3 tiles a row, 26 registers; 4 x 5 would
// leave a 1-pixel remainder). No load is checked.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range {{%.*}} = 0 to 6 {
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 6 {
// CHECK:         uop.range [[M:%.*]] = 0 to 16 step 8 {
// CHECK:             uop.range [[OH:%.*]] = 0 to 6 {
// CHECK-NEXT:          uop.range [[OW:%.*]] = 0 to 6 step 2 {
// CHECK-COUNT-16:        uop.define_acc 0.000000e+00 : f32
// CHECK-NOT:             uop.where
// CHECK-COUNT-16:        uop.mulacc
// CHECK-NOT:             uop.where
// CHECK:                 uop.store

// BLOCK-LABEL: func.func @main()
// BLOCK:                 uop.where
func.func @main(%x: tensor<1x1x6x6xf32>, %w: tensor<16x1x3x3xf32>) -> tensor<1x16x6x6xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
  %y = onnx.Conv(%x, %w) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x6x6xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %y : tensor<1x16x6x6xf32>
}

// -----

// Depthwise and integer Convs keep their forms: a depthwise Conv blocks 4 pixels of its
// interior (one weight load each tap), one accumulator per pixel.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range {{%.*}} = 0 to 4 {
// CHECK:             uop.range {{%.*}} = 0 to 8 step 4 {
// CHECK-COUNT-4:         uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:            uop.range {{%.*}} = 0 to 1 {
func.func @main(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x1x1xf32>) -> tensor<1x4x8x8xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
  %y = onnx.Conv(%x, %w) {group = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<4x1x1x1xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}
