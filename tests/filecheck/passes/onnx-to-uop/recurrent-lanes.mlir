// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-lanes=8 conv-tile=2}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'set-target{target=host cpu=x86-sse},onnx-to-uop' | filecheck %s

// The lane form of a recurrent layer with constant W and R and a hidden size that is a
// multiple of the lanes. The input parts of all 3 steps come first, one column-lane MatMul
// X (3x2) times Wᵀ (2x24, packed as 3 blocks of 8 lanes) into XW (3x24): 2 steps' rows per
// register tile (conv-tile=2), then the last step's row. Each gate's R_g (8x8) is repacked as
// R'[H / 8, K, 8]; each step runs the hidden units as (block, lane), j = block·8 + lane, reads
// its gates' input parts from XW and computes every gate's dot product over H_{t-1} in one loop
// (one accumulator per gate, H_{t-1}[k] loaded once); vectorize{width=8} then vectorizes the
// lane loop, the cell's math included.

// CHECK-LABEL: func.func @main()
// CHECK:         %h_r0_lanes = uop.define_global "constant" 0 "h_r0_lanes" value dense_resource<h_r0_lanes> : tensor<1x8x8xf32>
// CHECK:         %h_r0_lanes_2 = uop.define_global "constant" 2 "h_r0_lanes"
// CHECK:         %h_xw0 = uop.define_local "h_xw0" : !uop.buffer<72xf32>
// CHECK:         %matmul_packed = uop.define_global "constant" 3 "matmul_packed" {{.*}} : tensor<3x2x8xf32>
// CHECK:         [[X:%.*]] = uop.view %x : !uop.buffer<6xf32> -> !uop.view<3x2xf32, strides [2, 1], offset 0>
// CHECK:         [[XW:%.*]] = uop.view %h_xw0 : !uop.buffer<72xf32> -> !uop.view<3x24xf32, strides [24, 1], offset 0>
// CHECK:         [[XW0:%.*]] = uop.view %h_xw0 : !uop.buffer<72xf32> -> !uop.view<3x1x8xf32, strides [24, 24, 1], offset 0>
// CHECK:         [[R0:%.*]] = uop.view %h_r0_lanes : !uop.buffer<64xf32> -> !uop.view<1x8x8xf32, strides [64, 8, 1], offset 0>
// CHECK:         uop.range {{%.*}} = 0 to 3 {
// CHECK:           uop.range {{%.*}} = 0 to 1 {
// CHECK-NEXT:        uop.range {{%.*}} = 0 to 8 {
// CHECK:               uop.range [[KX:%.*]] = 0 to 2 {
// CHECK-NEXT:            uop.gep [[X]][{{%.*}}, [[KX]]]
// CHECK:                 uop.gep [[X]][{{%.*}}, [[KX]]]
// CHECK:               uop.store {{%.*}}, {{%.*}} : f32
// CHECK:               uop.store {{%.*}}, {{%.*}} : f32
// CHECK:           uop.range {{%.*}} = 0 to 1 {
// CHECK-NEXT:        uop.range {{%.*}} = 0 to 8 {
// CHECK:         uop.range [[T:%.*]] = 0 to 3 {
// CHECK-NEXT:      uop.range [[B:%.*]] = 0 to 1 {
// CHECK-NEXT:        uop.range [[BLOCK:%.*]] = 0 to 1 {
// CHECK-NEXT:          uop.range [[LANE:%.*]] = 0 to 8 {
// CHECK-NEXT:            [[L:%.*]] = uop.const 8 : index
// CHECK-NEXT:            [[JB:%.*]] = uop.mul [[BLOCK]], [[L]] : index
// CHECK-NEXT:            [[J:%.*]] = uop.add [[JB]], [[LANE]] : index
// CHECK-NEXT:            [[PZ:%.*]] = uop.gep [[XW0]][[[T]], [[B]], [[J]]]
// CHECK-NEXT:            [[XZ:%.*]] = uop.load [[PZ]] : f32
// CHECK-NEXT:            [[Z:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:            [[R:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:            [[N:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:            uop.range [[K:%.*]] = 0 to 8 {
// CHECK-NEXT:              [[PH:%.*]] = uop.gep {{%.*}}[[[B]], [[K]]]
// CHECK-NEXT:              [[H:%.*]] = uop.load [[PH]] : f32
// CHECK-NEXT:              [[PR:%.*]] = uop.gep [[R0]][[[BLOCK]], [[K]], [[LANE]]]
// CHECK-NEXT:              [[RZ:%.*]] = uop.load [[PR]] : f32
// CHECK-NEXT:              uop.mulacc [[Z]], [[H]], [[RZ]] : !uop.acc<f32>, f32
// CHECK:                   uop.mulacc [[R]], [[H]], {{%.*}} : !uop.acc<f32>, f32
// CHECK:                   uop.mulacc [[N]], [[H]], {{%.*}} : !uop.acc<f32>, f32
// CHECK-NEXT:            }
// CHECK:                 [[GZ:%.*]] = uop.add [[XZ]], {{%.*}} : f32
// CHECK-NOT:             uop.range
// CHECK:                 uop.gep {{%.*}}[[[B]], [[J]]]
func.func @main(%x: tensor<3x1x2xf32>) -> tensor<1x1x8xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["h"]} {
  %w = onnx.Constant() {value = dense<0.25> : tensor<1x24x2xf32>} : () -> tensor<1x24x2xf32>
  %r = onnx.Constant() {value = dense<0.125> : tensor<1x24x8xf32>} : () -> tensor<1x24x8xf32>
  %h = onnx.GRU(%x, %w, %r) {hidden_size = 8 : i64, linear_before_reset = 1 : i64} : (tensor<3x1x2xf32>, tensor<1x24x2xf32>, tensor<1x24x8xf32>) -> (none, tensor<1x1x8xf32>)
  func.return %h : tensor<1x1x8xf32>
}

// -----

// A sequence longer than XW_CHUNK (64) steps runs in chunks: XW holds 64 steps' input parts;
// a loop over the 2 whole chunks computes a chunk's (X seen as 2 chunks of 64 rows, XW as the
// same rows for each: stride 0) and then runs its 64 steps, reading XW at the step's row; the
// last 2 steps are a chunk of their own (X's rows from step 128).

// CHECK-LABEL: func.func @main()
// CHECK:         %h_xw0 = uop.define_local "h_xw0" : !uop.buffer<1536xf32>
// CHECK:         [[XC:%.*]] = uop.view %x : !uop.buffer<260xf32> -> !uop.view<2x64x2xf32, strides [128, 2, 1], offset 0>
// CHECK:         [[XWC:%.*]] = uop.view %h_xw0 : !uop.buffer<1536xf32> -> !uop.view<2x64x24xf32, strides [0, 24, 1], offset 0>
// CHECK:         [[XW0:%.*]] = uop.view %h_xw0 : !uop.buffer<1536xf32> -> !uop.view<64x1x8xf32, strides [24, 24, 1], offset 0>
// CHECK:         [[XR:%.*]] = uop.view %x : !uop.buffer<260xf32> -> !uop.view<2x2xf32, strides [2, 1], offset 256>
// CHECK:         uop.range [[C:%.*]] = 0 to 2 {
// CHECK:               uop.gep [[XC]][[[C]], {{%.*}}, {{%.*}}]
// CHECK:               uop.gep [[XWC]][[[C]], {{%.*}}, {{%.*}}]
// CHECK:           uop.range [[S:%.*]] = 0 to 64 {
// CHECK:                 uop.gep [[XW0]][[[S]], {{%.*}}, {{%.*}}]
// CHECK:         uop.gep [[XR]]
// CHECK:         uop.range {{%.*}} = 0 to 2 {
// CHECK:             uop.gep [[XW0]]
func.func @main(%x: tensor<130x1x2xf32>) -> tensor<1x1x8xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["h"]} {
  %w = onnx.Constant() {value = dense<0.25> : tensor<1x24x2xf32>} : () -> tensor<1x24x2xf32>
  %r = onnx.Constant() {value = dense<0.125> : tensor<1x24x8xf32>} : () -> tensor<1x24x8xf32>
  %h = onnx.GRU(%x, %w, %r) {hidden_size = 8 : i64, linear_before_reset = 1 : i64} : (tensor<130x1x2xf32>, tensor<1x24x2xf32>, tensor<1x24x8xf32>) -> (none, tensor<1x1x8xf32>)
  func.return %h : tensor<1x1x8xf32>
}
