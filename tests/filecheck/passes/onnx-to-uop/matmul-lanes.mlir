// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-lanes=8 conv-tile=2}' | filecheck %s

// The column-lane form of a Gemm with a constant B (transB: W is 20x3): B' = (W^T)[k, j]
// repacked as B'[j / 8, k, j % 8] (2 whole blocks), each row of A times 2 blocks at once: two
// accumulators over k share the load of A[i, k] (vectorize{width=8} makes them two 8-lane FMA
// chains); C is added per output. The last 20 mod 8 = 4 columns keep the plain nest.

// CHECK-LABEL: func.func @main()
// CHECK:         %matmul_packed = uop.define_global "constant" 1 "matmul_packed" value dense_resource<matmul_packed> : tensor<2x3x8xf32>
// CHECK:         [[A:%.*]] = uop.view %a : {{.*}} -> !uop.view<1x3xf32, strides [3, 1], offset 0>
// CHECK-NEXT:    [[B:%.*]] = uop.view %matmul_packed : !uop.buffer<48xf32> -> !uop.view<2x3x8xf32, strides [24, 8, 1], offset 0>
// CHECK:         uop.range [[I:%.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range [[G:%.*]] = 0 to 1 {
// CHECK-NEXT:        uop.range [[L:%.*]] = 0 to 8 {
// CHECK:               [[ACC0:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:          [[ACC1:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:          uop.range [[K:%.*]] = 0 to 3 {
// CHECK-NEXT:            [[PA:%.*]] = uop.gep [[A]][[[I]], [[K]]]
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
// CHECK:         uop.range {{%.*}} = 16 to 20 {
func.func @main(%a: tensor<1x3xf32>, %c: tensor<20xf32>) -> tensor<1x20xf32> attributes {onnx.input_names = ["a", "c"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<0.5> : tensor<20x3xf32>} : () -> tensor<20x3xf32>
  %y = onnx.Gemm(%a, %w, %c) {transB = 1 : i64} : (tensor<1x3xf32>, tensor<20x3xf32>, tensor<20xf32>) -> tensor<1x20xf32>
  func.return %y : tensor<1x20xf32>
}

// -----

// A B known only at run time (attention's Q·Kᵀ) keeps the plain nest: no packed copy.

// CHECK-LABEL: func.func @main()
// CHECK-NOT:     matmul_packed
// CHECK:         uop.range {{%.*}} = 0 to 16 {
func.func @main(%a: tensor<2x4xf32>, %b: tensor<4x16xf32>) -> tensor<2x16xf32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.MatMul(%a, %b) : (tensor<2x4xf32>, tensor<4x16xf32>) -> tensor<2x16xf32>
  func.return %y : tensor<2x16xf32>
}
