// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// A unary op: one loop nest over the output, f(x[i]) stored into the output buffer.

// CHECK-LABEL: func.func @main()
// CHECK-NEXT:    [[X:%.*]] = uop.define_global "input" 0 "x" : !uop.buffer<4xf32>
// CHECK-NEXT:    [[Y:%.*]] = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
// CHECK-NEXT:    uop.range [[I:%.*]] = 0 to 4 {
// CHECK-NEXT:      [[P:%.*]] = uop.gep [[X]][[[I]]] : !uop.buffer<4xf32>
// CHECK-NEXT:      [[V:%.*]] = uop.load [[P]] : f32
// CHECK-NEXT:      [[R:%.*]] = uop.exp [[V]] : f32
// CHECK-NEXT:      [[Q:%.*]] = uop.gep [[Y]][[[I]]] : !uop.buffer<4xf32>
// CHECK-NEXT:      uop.store [[R]], [[Q]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.Exp(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// Binary broadcasting: the (3,) operand is read through a stride-0 view of shape 2x3.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[B:%.*]] = uop.define_global "input" 1 "b" : !uop.buffer<3xf32>
// CHECK-DAG:     [[A:%.*]] = uop.define_global "input" 0 "a" : !uop.buffer<6xf32>
// CHECK-DAG:     [[AV:%.*]] = uop.view [[A]] : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
// CHECK-DAG:     [[BV:%.*]] = uop.view [[B]] : !uop.buffer<3xf32> -> !uop.view<2x3xf32, strides [0, 1], offset 0>
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 3 {
// CHECK-NEXT:        [[PA:%.*]] = uop.gep [[AV]][[[I]], [[J]]]
// CHECK-NEXT:        [[VA:%.*]] = uop.load [[PA]] : f32
// CHECK-NEXT:        [[PB:%.*]] = uop.gep [[BV]][[[I]], [[J]]]
// CHECK-NEXT:        [[VB:%.*]] = uop.load [[PB]] : f32
// CHECK-NEXT:        [[S:%.*]] = uop.sub [[VA]], [[VB]] : f32
// CHECK-NEXT:        [[PY:%.*]] = uop.gep {{%.*}}[[[I]], [[J]]]
// CHECK-NEXT:        uop.store [[S]], [[PY]] : f32
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.Sub(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// Clip with both optional bounds present: max with the low bound, then min with the high one,
// each scalar bound broadcast with stride 0.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[LO:%.*]] = uop.view {{%.*}} : !uop.buffer<1xf32> -> !uop.view<4xf32, strides [0], offset 0>
// CHECK:         uop.range [[I:%.*]] = 0 to 4 {
// CHECK:           [[X:%.*]] = uop.load {{%.*}} : f32
// CHECK:           [[L:%.*]] = uop.load {{%.*}} : f32
// CHECK:           [[H:%.*]] = uop.load {{%.*}} : f32
// CHECK-NEXT:      [[M:%.*]] = uop.max [[X]], [[L]] : f32
// CHECK-NEXT:      [[N:%.*]] = uop.min [[M]], [[H]] : f32
// CHECK-NEXT:      [[P:%.*]] = uop.gep {{%.*}}[[[I]]] : !uop.buffer<4xf32>
// CHECK-NEXT:      uop.store [[N]], [[P]] : f32
func.func @main(%x: tensor<4xf32>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<4xf32> attributes {onnx.input_names = ["x", "lo", "hi"], onnx.output_names = ["y"]} {
  %y = onnx.Clip(%x, %lo, %hi) : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// Variadic Max: a left fold over the three (broadcast) operands.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[CV:%.*]] = uop.view {{%.*}} : !uop.buffer<2xf32> -> !uop.view<2x3xf32, strides [1, 0], offset 0>
// CHECK:         uop.range
// CHECK-NEXT:      uop.range
// CHECK-NEXT:        {{%.*}} = uop.gep
// CHECK-NEXT:        [[A:%.*]] = uop.load
// CHECK-NEXT:        {{%.*}} = uop.gep
// CHECK-NEXT:        [[B:%.*]] = uop.load
// CHECK-NEXT:        {{%.*}} = uop.gep [[CV]]
// CHECK-NEXT:        [[C:%.*]] = uop.load
// CHECK-NEXT:        [[AB:%.*]] = uop.max [[A]], [[B]] : f32
// CHECK-NEXT:        [[ABC:%.*]] = uop.max [[AB]], [[C]] : f32
// CHECK-NEXT:        [[P:%.*]] = uop.gep
// CHECK-NEXT:        uop.store [[ABC]], [[P]] : f32
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xf32>) -> tensor<2x3xf32> attributes {onnx.input_names = ["a", "b", "c"], onnx.output_names = ["y"]} {
  %y = onnx.Max(%a, %b, %c) : (tensor<2x3xf32>, tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// Integer Add: the same loop on i32 values.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[A:%.*]] = uop.define_global "input" 0 "a" : !uop.buffer<4xi32>
// CHECK-DAG:     [[BV:%.*]] = uop.view {{%.*}} : !uop.buffer<1xi32> -> !uop.view<4xi32, strides [0], offset 0>
// CHECK:         uop.range [[I:%.*]] = 0 to 4 {
// CHECK-NEXT:      {{%.*}} = uop.gep [[A]][[[I]]] : !uop.buffer<4xi32>
// CHECK-NEXT:      [[VA:%.*]] = uop.load {{%.*}} : i32
// CHECK-NEXT:      {{%.*}} = uop.gep [[BV]][[[I]]]
// CHECK-NEXT:      [[VB:%.*]] = uop.load {{%.*}} : i32
// CHECK-NEXT:      [[S:%.*]] = uop.add [[VA]], [[VB]] : i32
func.func @main(%a: tensor<4xi32>, %b: tensor<i32>) -> tensor<4xi32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.Add(%a, %b) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  func.return %y : tensor<4xi32>
}
