// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-lanes=16 conv-tile=14 conv-registers=32}' | filecheck %s

// A 3x3 depthwise Conv in the depthwise-row form whose output rows (20) hold one whole 16-lane
// vector: `VectorConv.row_block` takes 4 rows per step (FMA_LATENCY independent sums), so the
// padded interior's rows loop steps by 4 over the first 8 rows, each step 4 accumulators and
// their 4 stores; the 2 rows left take a loop of their own, one row a step.

// CHECK-LABEL: func.func @main()
// CHECK:           uop.range [[OH:%.*]] = 0 to 8 step 4 {
// CHECK-NEXT:        uop.range [[OW:%.*]] = 0 to 20 {
// CHECK-COUNT-4:       uop.define_acc 0.000000e+00 : f32
// CHECK:               uop.range {{%.*}} = 0 to 3 {
// CHECK-NEXT:            uop.range {{%.*}} = 0 to 3 {
// CHECK-COUNT-4:           uop.mulacc
// CHECK-NOT:               uop.mulacc
// CHECK:               }
// CHECK-COUNT-4:       uop.store
// CHECK:           uop.range {{%.*}} = 8 to 10 {
// CHECK-NEXT:        uop.range {{%.*}} = 0 to 20 {
// CHECK:               uop.define_acc 0.000000e+00 : f32
// CHECK-NOT:           uop.define_acc
// CHECK:         func.return
func.func @main(%x: tensor<1x16x10x20xf32>) -> tensor<1x16x10x20xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<0.5> : tensor<16x1x3x3xf32>} : () -> tensor<16x1x3x3xf32>
  %y = onnx.Conv(%x, %w) {group = 16 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x10x20xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x10x20xf32>
  func.return %y : tensor<1x16x10x20xf32>
}

// -----

// A 1x1 Conv of 16 output channels in the pixel-lane form: one tile of 16 channels
// (`VectorConv.pixel_tile`), 16 accumulators, where the target's tile of 14 left a rest of 2.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range {{%.*}} = 0 to 16 step 16 {
// CHECK:           uop.range {{%.*}} = 0 to 20 {
// CHECK-COUNT-16:    uop.define_acc 0.000000e+00 : f32
// CHECK-NOT:         uop.define_acc
// CHECK:         func.return
func.func @main(%x: tensor<1x32x4x20xf32>) -> tensor<1x16x4x20xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<0.5> : tensor<16x32x1x1xf32>} : () -> tensor<16x32x1x1xf32>
  %y = onnx.Conv(%x, %w) : (tensor<1x32x4x20xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x4x20xf32>
  func.return %y : tensor<1x16x4x20xf32>
}
