// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-lanes=8 conv-tile=2}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'set-target{target=host cpu=x86-sse},onnx-to-uop' | filecheck %s
// (A 32-bit x86 host with SSE: 8 lanes, tiles of 2, read from the module's #zant.target.)

// The column-lane form of a Gemm with a constant B (transB: W is 20x3): B' = (W^T)[k, j]
// repacked as B'[j / 8, k, j % 8] (2 whole blocks). Column groups are the outer loop, rows
// inside it (a group's B' stays in the cache while every row reads it); the one row times 2
// blocks at once: two accumulators over k share the load of A[i, k] (vectorize{width=8} makes
// them two 8-lane FMA chains); C is added per output. The last 20 mod 8 = 4 columns are one
// more block, W's last columns padded with zeros to 8 (1x3x8), computed the same way into a
// scratch row of 8 and copied out with C added: each column the same FMA chain (W itself is no
// longer read, so it is not stored).

// CHECK-LABEL: func.func @main()
// CHECK:         %matmul_packed = uop.define_global "constant" 0 "matmul_packed" value dense_resource<matmul_packed> : tensor<2x3x8xf32>
// CHECK:         [[A:%.*]] = uop.view %a : {{.*}} -> !uop.view<1x3xf32, strides [3, 1], offset 0>
// CHECK-NEXT:    [[B:%.*]] = uop.view %matmul_packed : !uop.buffer<48xf32> -> !uop.view<2x3x8xf32, strides [24, 8, 1], offset 0>
// CHECK:         %matmul_tail = uop.define_local "matmul_tail" : !uop.buffer<8xf32>
// CHECK-NEXT:    {{%.*}} = uop.define_global "constant" 1 "matmul_packed" value dense_resource<{{.*}}> : tensor<1x3x8xf32>
// CHECK:         uop.range [[G:%.*]] = 0 to 1 {
// CHECK:             uop.range [[RG:%.*]] = 0 to 1 {
// CHECK-NEXT:          uop.range [[L:%.*]] = 0 to 8 {
// CHECK:                 [[ACC0:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:          [[ACC1:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:          uop.range [[K:%.*]] = 0 to 3 {
// CHECK-NEXT:            [[PA:%.*]] = uop.gep [[A]][[[I:%.*]], [[K]]]
// CHECK-NEXT:            [[X:%.*]] = uop.load [[PA]] : f32
// CHECK-NEXT:            [[PB0:%.*]] = uop.gep [[B]][[[B0:%.*]], [[K]], [[L]]]
// CHECK-NEXT:            [[W0:%.*]] = uop.load [[PB0]] : f32
// CHECK-NEXT:            uop.mulacc [[ACC0]], [[X]], [[W0]] : !uop.acc<f32>, f32
// CHECK-NEXT:            [[PB1:%.*]] = uop.gep [[B]][[[B1:%.*]], [[K]], [[L]]]
// CHECK-NEXT:            [[W1:%.*]] = uop.load [[PB1]] : f32
// CHECK-NEXT:            uop.mulacc [[ACC1]], [[X]], [[W1]] : !uop.acc<f32>, f32
// CHECK-NEXT:          }
// CHECK:               uop.acc_get [[ACC0]]
// CHECK:               uop.acc_get [[ACC1]]
// CHECK:         uop.range {{%.*}} = 0 to 3 {
// CHECK:           uop.mulacc
// CHECK:         uop.range [[J:%.*]] = 16 to 20 {
// CHECK-NEXT:      [[C16:%.*]] = uop.const 16 : index
// CHECK-NEXT:      [[T:%.*]] = uop.sub [[J]], [[C16]] : index
// CHECK:           uop.load
// CHECK:           uop.add
// CHECK:           uop.store
func.func @main(%a: tensor<1x3xf32>, %c: tensor<20xf32>) -> tensor<1x20xf32> attributes {onnx.input_names = ["a", "c"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<0.5> : tensor<20x3xf32>} : () -> tensor<20x3xf32>
  %y = onnx.Gemm(%a, %w, %c) {transB = 1 : i64} : (tensor<1x3xf32>, tensor<20x3xf32>, tensor<20xf32>) -> tensor<1x20xf32>
  func.return %y : tensor<1x20xf32>
}

// -----

// A B known only at run time whose columns are consecutive (attention's probabilities times V)
// keeps the plain nest, vectorized along the columns: no packed copy.

// CHECK-LABEL: func.func @main()
// CHECK-NOT:     matmul_packed
// CHECK:         uop.range {{%.*}} = 0 to 16 {
func.func @main(%a: tensor<2x4xf32>, %b: tensor<4x16xf32>) -> tensor<2x16xf32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.MatMul(%a, %b) : (tensor<2x4xf32>, tensor<4x16xf32>) -> tensor<2x16xf32>
  func.return %y : tensor<2x16xf32>
}

// -----

// Several rows per register tile: 4 rows by 2 blocks of a 2-accumulator tile (conv-tile=2) is
// least costly as 2 rows x 1 block (register_tile: the same FMA steps as 1 x 2, fewer loads):
// each k loads B'[block, k, lane] once for both rows' accumulators.

// CHECK-LABEL: func.func @main()
// CHECK:         [[A:%.*]] = uop.view %a : {{.*}} -> !uop.view<4x3xf32, strides [3, 1], offset 0>
// CHECK-NEXT:    [[B:%.*]] = uop.view %matmul_packed : !uop.buffer<48xf32> -> !uop.view<2x3x8xf32, strides [24, 8, 1], offset 0>
// CHECK:         uop.range [[G:%.*]] = 0 to 2 {
// CHECK:           uop.range [[RG:%.*]] = 0 to 2 {
// CHECK-NEXT:        uop.range [[L:%.*]] = 0 to 8 {
// CHECK:               [[ACC0:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:          [[ACC1:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:          uop.range [[K:%.*]] = 0 to 3 {
// CHECK-NEXT:            [[PA0:%.*]] = uop.gep [[A]][[[I0:%.*]], [[K]]]
// CHECK-NEXT:            [[X0:%.*]] = uop.load [[PA0]] : f32
// CHECK-NEXT:            [[PA1:%.*]] = uop.gep [[A]][[[I1:%.*]], [[K]]]
// CHECK-NEXT:            [[X1:%.*]] = uop.load [[PA1]] : f32
// CHECK-NEXT:            [[PB:%.*]] = uop.gep [[B]][{{%.*}}, [[K]], [[L]]]
// CHECK-NEXT:            [[W:%.*]] = uop.load [[PB]] : f32
// CHECK-NEXT:            uop.mulacc [[ACC0]], [[X0]], [[W]] : !uop.acc<f32>, f32
// CHECK-NEXT:            uop.mulacc [[ACC1]], [[X1]], [[W]] : !uop.acc<f32>, f32
// CHECK-NEXT:          }
// CHECK:               uop.acc_get [[ACC0]]
// CHECK-NEXT:          uop.gep {{%.*}}[[[I0]], {{%.*}}]
// CHECK:               uop.acc_get [[ACC1]]
// CHECK-NEXT:          uop.gep {{%.*}}[[[I1]], {{%.*}}]
// CHECK-NOT:     uop.range
func.func @main(%a: tensor<4x3xf32>) -> tensor<4x16xf32> attributes {onnx.input_names = ["a"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<0.5> : tensor<3x16xf32>} : () -> tensor<3x16xf32>
  %y = onnx.MatMul(%a, %w) : (tensor<4x3xf32>, tensor<3x16xf32>) -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// A B known only at run time whose columns are not consecutive (attention's Q·Kᵀ: a transposed
// view) is repacked first, per batch index, into scratch B'[b, j / 8, k, j % 8] (the lane loop
// innermost: one gather of 8 columns per k), then multiplied in the column-lane form.

// CHECK-LABEL: func.func @main()
// CHECK:         %matmul_packed = uop.define_local "matmul_packed" : !uop.buffer<128xf32>
// CHECK:         [[KT:%.*]] = uop.view %k : !uop.buffer<128xf32> -> !uop.view<2x4x16xf32, strides [64, 1, 4], offset 0>
// CHECK-NEXT:    [[P:%.*]] = uop.view %matmul_packed : !uop.buffer<128xf32> -> !uop.view<2x2x4x8xf32, strides [64, 32, 8, 1], offset 0>
// CHECK:         uop.range [[B:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[BLOCK:%.*]] = 0 to 2 {
// CHECK-NEXT:        uop.range [[K:%.*]] = 0 to 4 {
// CHECK-NEXT:          uop.range [[L:%.*]] = 0 to 8 {
// CHECK:                 [[J:%.*]] = uop.add {{%.*}}, [[L]] : index
// CHECK-NEXT:            [[PK:%.*]] = uop.gep [[KT]][[[B]], [[K]], [[J]]]
// CHECK-NEXT:            [[V:%.*]] = uop.load [[PK]] : f32
// CHECK-NEXT:            [[PP:%.*]] = uop.gep [[P]][[[B]], [[BLOCK]], [[K]], [[L]]]
// CHECK-NEXT:            uop.store [[V]], [[PP]] : f32
// CHECK:         uop.range {{%.*}} = 0 to 1 {
// CHECK-NEXT:      uop.range [[B2:%.*]] = 0 to 2 {
// CHECK:             uop.range {{%.*}} = 0 to 3 {
// CHECK-NEXT:          uop.range [[L2:%.*]] = 0 to 8 {
// CHECK:                 uop.range [[K2:%.*]] = 0 to 4 {
// CHECK:                   uop.gep [[P]][[[B2]], {{%.*}}, [[K2]], [[L2]]]
// CHECK-NOT:     uop.range
func.func @main(%a: tensor<2x3x4xf32>, %k: tensor<2x16x4xf32>) -> tensor<2x3x16xf32> attributes {onnx.input_names = ["a", "k"], onnx.output_names = ["y"]} {
  %kt = onnx.Transpose(%k) {perm = array<i64: 0, 2, 1>} : (tensor<2x16x4xf32>) -> tensor<2x4x16xf32>
  %y = onnx.MatMul(%a, %kt) : (tensor<2x3x4xf32>, tensor<2x4x16xf32>) -> tensor<2x3x16xf32>
  func.return %y : tensor<2x3x16xf32>
}
