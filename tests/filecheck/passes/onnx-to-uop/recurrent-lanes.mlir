// RUN: zant-opt %s -p 'onnx-to-uop{conv-lanes=8 conv-tile=2}' | filecheck %s

// The lane form of a recurrent layer with constant W and R and a hidden size that is a
// multiple of the lanes: each gate's W_g (8x2) and R_g (8x8) repacked as W'[H / 8, K, 8]; each
// step runs the hidden units as (block, lane), j = block·8 + lane, with every gate's dot
// product over X_t in one loop (one accumulator per gate, X_t[k] loaded once) and likewise
// over H_{t-1}; vectorize{width=8} then vectorizes the lane loop, the cell's math included.

// CHECK-LABEL: func.func @main()
// CHECK:         %h_w0_lanes = uop.define_global "constant" 0 "h_w0_lanes" value dense<2.500000e-01> : tensor<1x2x8xf32>
// CHECK:         %h_r0_lanes_2 = uop.define_global "constant" 5 "h_r0_lanes"
// CHECK:         [[W0:%.*]] = uop.view %h_w0_lanes : !uop.buffer<16xf32> -> !uop.view<1x2x8xf32, strides [16, 8, 1], offset 0>
// CHECK:         uop.range [[T:%.*]] = 0 to 3 {
// CHECK-NEXT:      uop.range [[B:%.*]] = 0 to 1 {
// CHECK-NEXT:        uop.range [[BLOCK:%.*]] = 0 to 1 {
// CHECK-NEXT:          uop.range [[LANE:%.*]] = 0 to 8 {
// CHECK-NEXT:            [[L:%.*]] = uop.const 8 : index
// CHECK-NEXT:            [[JB:%.*]] = uop.mul [[BLOCK]], [[L]] : index
// CHECK-NEXT:            [[J:%.*]] = uop.add [[JB]], [[LANE]] : index
// CHECK-NEXT:            [[Z:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:            [[R:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:            [[N:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:            uop.range [[K:%.*]] = 0 to 2 {
// CHECK-NEXT:              [[PX:%.*]] = uop.gep {{%.*}}[[[T]], [[B]], [[K]]]
// CHECK-NEXT:              [[X:%.*]] = uop.load [[PX]] : f32
// CHECK-NEXT:              [[PW:%.*]] = uop.gep [[W0]][[[BLOCK]], [[K]], [[LANE]]]
// CHECK-NEXT:              [[WZ:%.*]] = uop.load [[PW]] : f32
// CHECK-NEXT:              uop.mulacc [[Z]], [[X]], [[WZ]] : !uop.acc<f32>, f32
// CHECK:                   uop.mulacc [[R]], [[X]], {{%.*}} : !uop.acc<f32>, f32
// CHECK:                   uop.mulacc [[N]], [[X]], {{%.*}} : !uop.acc<f32>, f32
// CHECK-NEXT:            }
// CHECK:                 uop.range {{%.*}} = 0 to 8 {
// CHECK:                 uop.gep {{%.*}}[[[B]], [[J]]]
func.func @main(%x: tensor<3x1x2xf32>) -> tensor<1x1x8xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["h"]} {
  %w = onnx.Constant() {value = dense<0.25> : tensor<1x24x2xf32>} : () -> tensor<1x24x2xf32>
  %r = onnx.Constant() {value = dense<0.125> : tensor<1x24x8xf32>} : () -> tensor<1x24x8xf32>
  %h = onnx.GRU(%x, %w, %r) {hidden_size = 8 : i64, linear_before_reset = 1 : i64} : (tensor<3x1x2xf32>, tensor<1x24x2xf32>, tensor<1x24x8xf32>) -> (none, tensor<1x1x8xf32>)
  func.return %h : tensor<1x1x8xf32>
}
