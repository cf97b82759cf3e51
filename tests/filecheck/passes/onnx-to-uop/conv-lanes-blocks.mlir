// RUN: zant-opt %s -p 'onnx-to-uop{conv-lanes=8 conv-tile=4 conv-registers=12}' | filecheck %s
// RUN: zant-opt %s -p 'onnx-to-uop{conv-lanes=8 conv-tile=4}' | filecheck %s --check-prefix=ONE

// With the vector registers known (conv-registers=12: 2 blocks x 3 pixels of accumulators, 2
// weight vectors and a broadcast fit), the channel-lane tile holds two blocks of 8 output
// channels (`VectorConv.lane_tile`): the block loop steps by 2, each step of the reduction loads
// one weight vector per block and each input once for both blocks' accumulators, and each block
// stores its own channels. Without them (ONE), one block per tile, as before.

// CHECK-LABEL: func.func @main()
// CHECK:         [[W:%.*]] = uop.view {{%.*}} : !uop.buffer<32xf32> -> !uop.view<2x2x1x1x8xf32
// CHECK:         uop.range [[BLOCK:%.*]] = 0 to 2 step 2 {
// CHECK:           [[NEXT:%.*]] = uop.add [[BLOCK]], {{%.*}} : index
// CHECK:             uop.range [[LANE:%.*]] = 0 to 8 {
// CHECK-NEXT:          [[M0:%.*]] = uop.add {{%.*}}, [[LANE]] : index
// CHECK-NEXT:          [[M1:%.*]] = uop.add {{%.*}}, [[LANE]] : index
// CHECK-COUNT-6:       uop.define_acc 0.000000e+00 : f32
// CHECK:                   uop.gep [[W]][[[BLOCK]], {{.*}}, [[LANE]]]
// CHECK-NEXT:              [[W0:%.*]] = uop.load
// CHECK-NEXT:              uop.gep [[W]][[[NEXT]], {{.*}}, [[LANE]]]
// CHECK-NEXT:              [[W1:%.*]] = uop.load
// CHECK:                   [[X:%.*]] = uop.load
// CHECK-NEXT:              uop.mulacc {{%.*}}, [[X]], [[W0]]
// CHECK-NEXT:              uop.mulacc {{%.*}}, [[X]], [[W1]]
// CHECK-COUNT-3:       uop.gep {{%.*}}[{{%.*}}, [[M0]], {{.*}}]
// CHECK-COUNT-3:       uop.gep {{%.*}}[{{%.*}}, [[M1]], {{.*}}]

// ONE:         uop.range [[BLOCK:%.*]] = 0 to 2 {
// ONE-NOT:     step 2
// ONE:         func.return
func.func @main(%x: tensor<1x2x5x9xf32>) -> tensor<1x16x3x5xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]], [[[7.0]], [[8.0]]], [[[9.0]], [[10.0]]], [[[11.0]], [[12.0]]], [[[13.0]], [[14.0]]], [[[15.0]], [[16.0]]], [[[17.0]], [[18.0]]], [[[19.0]], [[20.0]]], [[[21.0]], [[22.0]]], [[[23.0]], [[24.0]]], [[[25.0]], [[26.0]]], [[[27.0]], [[28.0]]], [[[29.0]], [[30.0]]], [[[31.0]], [[32.0]]]]> : tensor<16x2x1x1xf32>} : () -> tensor<16x2x1x1xf32>
  %y = onnx.Conv(%x, %w) {strides = array<i64: 2, 2>} : (tensor<1x2x5x9xf32>, tensor<16x2x1x1xf32>) -> tensor<1x16x3x5xf32>
  func.return %y : tensor<1x16x3x5xf32>
}
