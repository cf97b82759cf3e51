// RUN: zant-opt %s -p 'onnx-to-uop{conv-lanes=8 conv-tile=4}' | filecheck %s

// The pixel-lane form of a padded unit-stride Conv whose output rows (9) hold a vector of 8:
// X is first copied into a zero-bordered buffer (zeros everywhere, then X one row and one
// column in), so the Conv reads it with no checks; the 6 output channels go in a tile of 4
// and a tile of the other 2, each output row a plain loop (`vectorize` makes its lanes) with
// one accumulator per channel of the tile.

// CHECK-LABEL: func.func @main()
// CHECK:         [[PADDED:%.*]] = uop.define_local "y_padded" : !uop.buffer<44xf32>
// CHECK:         [[PV:%.*]] = uop.view [[PADDED]] : !uop.buffer<44xf32> -> !uop.view<1x1x4x11xf32, strides [44, 44, 11, 1], offset 0>
// CHECK:         uop.range {{%.*}} = 0 to 4 {
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 11 {
// CHECK-NEXT:        [[ZERO:%.*]] = uop.const 0.000000e+00 : f32
// CHECK-NEXT:        [[P:%.*]] = uop.gep [[PV]]
// CHECK-NEXT:        uop.store [[ZERO]], [[P]] : f32
// CHECK:         uop.range [[IH:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[IW:%.*]] = 0 to 9 {
// CHECK:             [[H:%.*]] = uop.add [[IH]], {{%.*}} : index
// CHECK:             [[W:%.*]] = uop.add [[IW]], {{%.*}} : index
// CHECK:             uop.gep [[PV]][{{%.*}}, {{%.*}}, [[H]], [[W]]]
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
