// RUN: zant-opt %s -p 'onnx-to-uop{conv-lanes=8 conv-tile=4}' | filecheck %s

// The pixel-lane form of a padded unit-stride Conv whose output rows (9) hold a vector of 8:
// X is first copied into a zero-bordered buffer — into its interior view (offset one row and one
// column in) at the identity index, an element-wise copy fuse-loops can move into X's
// producer, then zeros into the four border slabs — so the Conv reads it with no checks; the
// 6 output channels go in a tile of 4 and a tile of the other 2, each output row a plain loop
// (`vectorize` makes its lanes) with one accumulator per channel of the tile.

// CHECK-LABEL: func.func @main()
// CHECK:         [[PADDED:%.*]] = uop.define_local "y_padded" : !uop.buffer<44xf32>
// CHECK:         [[INTERIOR:%.*]] = uop.view [[PADDED]] : !uop.buffer<44xf32> -> !uop.view<1x1x2x9xf32, strides [44, 44, 11, 1], offset 12>
// CHECK:         [[TOP:%.*]] = uop.view [[PADDED]] : !uop.buffer<44xf32> -> !uop.view<1x1x1x11xf32, strides [44, 44, 11, 1], offset 0>
// CHECK:         [[BOTTOM:%.*]] = uop.view [[PADDED]] : !uop.buffer<44xf32> -> !uop.view<1x1x1x11xf32, strides [44, 44, 11, 1], offset 33>
// CHECK:         [[LEFT:%.*]] = uop.view [[PADDED]] : !uop.buffer<44xf32> -> !uop.view<1x1x4x1xf32, strides [44, 44, 11, 1], offset 0>
// CHECK:         [[RIGHT:%.*]] = uop.view [[PADDED]] : !uop.buffer<44xf32> -> !uop.view<1x1x4x1xf32, strides [44, 44, 11, 1], offset 10>
// CHECK:         [[PV:%.*]] = uop.view [[PADDED]] : !uop.buffer<44xf32> -> !uop.view<1x1x4x11xf32, strides [44, 44, 11, 1], offset 0>
// CHECK:         uop.range [[N:%.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range [[C:%.*]] = 0 to 1 {
// CHECK-NEXT:        uop.range [[IH:%.*]] = 0 to 2 {
// CHECK-NEXT:          uop.range [[IW:%.*]] = 0 to 9 {
// CHECK-NEXT:            [[P:%.*]] = uop.gep {{%.*}}[[[N]], [[C]], [[IH]], [[IW]]]
// CHECK-NEXT:            [[V:%.*]] = uop.load [[P]] : f32
// CHECK-NEXT:            [[Q:%.*]] = uop.gep [[INTERIOR]][[[N]], [[C]], [[IH]], [[IW]]]
// CHECK-NEXT:            uop.store [[V]], [[Q]] : f32
// CHECK:         [[ZERO:%.*]] = uop.const 0.000000e+00 : f32
// CHECK-COUNT-4:   uop.store [[ZERO]]
// CHECK:         uop.range [[M:%.*]] = 0 to 4 step 4 {
// CHECK:           uop.range [[OH:%.*]] = 0 to 2 {
// CHECK-NEXT:        uop.range [[OW:%.*]] = 0 to 9 {
// CHECK-COUNT-4:       uop.define_acc 0.000000e+00 : f32
// CHECK-NOT:           uop.where
// CHECK:               uop.gep [[PV]]
// CHECK-COUNT-4:       uop.mulacc
// CHECK-COUNT-4:     uop.store
// CHECK:         uop.range {{%.*}} = 4 to 6 step 2 {
// CHECK:           uop.range {{%.*}} = 0 to 2 {
// CHECK-NEXT:        uop.range {{%.*}} = 0 to 9 {
// CHECK-COUNT-2:       uop.define_acc 0.000000e+00 : f32
// CHECK-NOT:           uop.define_acc
// CHECK:           func.return
func.func @main(%x: tensor<1x1x2x9xf32>) -> tensor<1x6x2x9xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<1.0> : tensor<6x1x3x3xf32>} : () -> tensor<6x1x3x3xf32>
  %y = onnx.Conv(%x, %w) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x2x9xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x2x9xf32>
  func.return %y : tensor<1x6x2x9xf32>
}
