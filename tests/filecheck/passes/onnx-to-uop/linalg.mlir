// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// MatMul of 2-D operands: an (i, j) nest with a k reduction into an accumulator.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[AV:%.*]] = uop.view %a : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
// CHECK-DAG:     [[BV:%.*]] = uop.view %b : !uop.buffer<12xf32> -> !uop.view<3x4xf32, strides [4, 1], offset 0>
// CHECK-DAG:     [[YV:%.*]] = uop.view %y : !uop.buffer<8xf32> -> !uop.view<2x4xf32, strides [4, 1], offset 0>
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 4 {
// CHECK-NEXT:        [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:        uop.range [[K:%.*]] = 0 to 3 {
// CHECK-NEXT:          [[PA:%.*]] = uop.gep [[AV]][[[I]], [[K]]]
// CHECK-NEXT:          [[VA:%.*]] = uop.load [[PA]] : f32
// CHECK-NEXT:          [[PB:%.*]] = uop.gep [[BV]][[[K]], [[J]]]
// CHECK-NEXT:          [[VB:%.*]] = uop.load [[PB]] : f32
// CHECK-NEXT:          uop.mulacc [[ACC]], [[VA]], [[VB]] : !uop.acc<f32>, f32
// CHECK-NEXT:        }
// CHECK-NEXT:        [[R:%.*]] = uop.acc_get [[ACC]] : !uop.acc<f32>, f32
// CHECK-NEXT:        [[PY:%.*]] = uop.gep [[YV]][[[I]], [[J]]]
// CHECK-NEXT:        uop.store [[R]], [[PY]] : f32
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.MatMul(%a, %b) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

// Batched MatMul: B's size-1 batch dimension broadcasts as a stride-0 view.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[AV:%.*]] = uop.view %a : !uop.buffer<30xf32> -> !uop.view<3x2x5xf32, strides [10, 5, 1], offset 0>
// CHECK-DAG:     [[BV:%.*]] = uop.view %b : !uop.buffer<20xf32> -> !uop.view<3x5x4xf32, strides [0, 4, 1], offset 0>
// CHECK:         uop.range [[N:%.*]] = 0 to 3 {
// CHECK-NEXT:      uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:        uop.range [[J:%.*]] = 0 to 4 {
// CHECK-NEXT:          [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:          uop.range [[K:%.*]] = 0 to 5 {
// CHECK-NEXT:            {{%.*}} = uop.gep [[AV]][[[N]], [[I]], [[K]]]
// CHECK-NEXT:            uop.load
// CHECK-NEXT:            {{%.*}} = uop.gep [[BV]][[[N]], [[K]], [[J]]]
// CHECK-NEXT:            uop.load
// CHECK-NEXT:            uop.mulacc [[ACC]]
func.func @main(%a: tensor<3x2x5xf32>, %b: tensor<1x5x4xf32>) -> tensor<3x2x4xf32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.MatMul(%a, %b) : (tensor<3x2x5xf32>, tensor<1x5x4xf32>) -> tensor<3x2x4xf32>
  func.return %y : tensor<3x2x4xf32>
}

// -----

// A 1-D A is read as a 1x3 matrix; the 4-element result is written through a 1x4 view.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[AV:%.*]] = uop.view %a : !uop.buffer<3xf32> -> !uop.view<1x3xf32, strides [0, 1], offset 0>
// CHECK-DAG:     [[YV:%.*]] = uop.view %y : !uop.buffer<4xf32> -> !uop.view<1x4xf32, strides [0, 1], offset 0>
// CHECK:         uop.range [[I:%.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 4 {
// CHECK:             {{%.*}} = uop.gep [[AV]][[[I]], {{%.*}}]
// CHECK:           {{%.*}} = uop.gep [[YV]][[[I]], [[J]]]
func.func @main(%a: tensor<3xf32>, %b: tensor<3x4xf32>) -> tensor<4xf32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.MatMul(%a, %b) : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// Gemm with transB (B read through a transposed view), alpha, beta, and a C row broadcast
// over M as a stride-0 view; alpha and beta scale in the epilogue.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[BT:%.*]] = uop.view %b : !uop.buffer<12xf32> -> !uop.view<3x4xf32, strides [1, 3], offset 0>
// CHECK-DAG:     [[CV:%.*]] = uop.view %c : !uop.buffer<4xf32> -> !uop.view<2x4xf32, strides [0, 1], offset 0>
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 4 {
// CHECK-NEXT:        [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:        uop.range [[K:%.*]] = 0 to 3 {
// CHECK:               {{%.*}} = uop.gep [[BT]][[[K]], [[J]]]
// CHECK:             }
// CHECK-NEXT:        [[S:%.*]] = uop.acc_get [[ACC]] : !uop.acc<f32>, f32
// CHECK-NEXT:        [[ALPHA:%.*]] = uop.const 2.000000e+00 : f32
// CHECK-NEXT:        [[AS:%.*]] = uop.mul [[S]], [[ALPHA]] : f32
// CHECK-NEXT:        [[PC:%.*]] = uop.gep [[CV]][[[I]], [[J]]]
// CHECK-NEXT:        [[C:%.*]] = uop.load [[PC]] : f32
// CHECK-NEXT:        [[BETA:%.*]] = uop.const 5.000000e-01 : f32
// CHECK-NEXT:        [[BC:%.*]] = uop.mul [[C]], [[BETA]] : f32
// CHECK-NEXT:        [[R:%.*]] = uop.add [[AS]], [[BC]] : f32
// CHECK-NEXT:        [[PY:%.*]] = uop.gep {{%.*}}[[[I]], [[J]]]
// CHECK-NEXT:        uop.store [[R]], [[PY]] : f32
func.func @main(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>, %c: tensor<4xf32>) -> tensor<2x4xf32> attributes {onnx.input_names = ["a", "b", "c"], onnx.output_names = ["y"]} {
  %y = onnx.Gemm(%a, %b, %c) {transB = 1 : i64, alpha = 2.0 : f32, beta = 0.5 : f32} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

// Gemm with transA and no C: A is read transposed and the accumulator is stored as is.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[AT:%.*]] = uop.view %a : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [1, 2], offset 0>
// CHECK:             {{%.*}} = uop.gep [[AT]][{{%.*}}, {{%.*}}]
// CHECK:           [[R:%.*]] = uop.acc_get
// CHECK-NEXT:      [[PY:%.*]] = uop.gep
// CHECK-NEXT:      uop.store [[R]], [[PY]] : f32
func.func @main(%a: tensor<3x2xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.Gemm(%a, %b) {transA = 1 : i64} : (tensor<3x2xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
