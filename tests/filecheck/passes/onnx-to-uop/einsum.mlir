// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// A batched diagonal is a view: the repeated label's strides add up (3 + 1 = 4); no loops of
// its own, only the copy into the graph output.

// CHECK-LABEL: func.func @main()
// CHECK:         [[D:%.*]] = uop.view %a : !uop.buffer<18xf32> -> !uop.view<2x3xf32, strides [9, 4], offset 0>
// CHECK:         uop.range
// CHECK-NOT:     uop.define_acc
func.func @main(%a: tensor<2x3x3xf32>) -> tensor<2x3xf32> attributes {onnx.input_names = ["a"], onnx.output_names = ["y"]} {
  %y = onnx.Einsum(%a) {equation = "bii->bi"} : (tensor<2x3x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// Implicit output ("ij,jk" gives "ik"): an (i, k) nest, j reduced into an accumulator.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[AV:%.*]] = uop.view %a : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
// CHECK-DAG:     [[BV:%.*]] = uop.view %b : !uop.buffer<12xf32> -> !uop.view<3x4xf32, strides [4, 1], offset 0>
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[K:%.*]] = 0 to 4 {
// CHECK-NEXT:        [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:        uop.range [[J:%.*]] = 0 to 3 {
// CHECK-NEXT:          [[PA:%.*]] = uop.gep [[AV]][[[I]], [[J]]]
// CHECK-NEXT:          [[VA:%.*]] = uop.load [[PA]] : f32
// CHECK-NEXT:          [[PB:%.*]] = uop.gep [[BV]][[[J]], [[K]]]
// CHECK-NEXT:          [[VB:%.*]] = uop.load [[PB]] : f32
// CHECK-NEXT:          uop.mulacc [[ACC]], [[VA]], [[VB]] : !uop.acc<f32>, f32
// CHECK-NEXT:        }
// CHECK-NEXT:        [[R:%.*]] = uop.acc_get [[ACC]]
// CHECK-NEXT:        [[PY:%.*]] = uop.gep {{%.*}}[[[I]], [[K]]]
// CHECK-NEXT:        uop.store [[R]], [[PY]] : f32
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.Einsum(%a, %b) {equation = "ij,jk"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

// An ellipsis with a broadcast (size-1, stride-0) dimension, and a full sum of the diagonal of
// each matrix: the output nest walks the ellipsis, the reduction the one label i.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[AV:%.*]] = uop.view %a : !uop.buffer<18xf32> -> !uop.view<2x3xf32, strides [9, 4], offset 0>
// CHECK-DAG:     [[BV:%.*]] = uop.view %b : !uop.buffer<3xf32> -> !uop.view<2x3xf32, strides [0, 1], offset 0>
// CHECK:         uop.range [[E:%.*]] = 0 to 2 {
// CHECK-NEXT:      [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:      uop.range [[I:%.*]] = 0 to 3 {
// CHECK-NEXT:        uop.gep [[AV]][[[E]], [[I]]]
// CHECK-NEXT:        uop.load
// CHECK-NEXT:        uop.gep [[BV]][[[E]], [[I]]]
// CHECK-NEXT:        uop.load
// CHECK-NEXT:        uop.mulacc [[ACC]]
func.func @main(%a: tensor<2x3x3xf32>, %b: tensor<1x3xf32>) -> tensor<2xf32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.Einsum(%a, %b) {equation = "...ii,...i->..."} : (tensor<2x3x3xf32>, tensor<1x3xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
