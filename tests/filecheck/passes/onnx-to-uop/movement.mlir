// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// Transpose is a permuted view of its input: no loops; the Relu after it reads x through
// strides [1, 3] (the only loop nest is the Relu's).

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range [[I:%.*]] = 0 to 3 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 2 {
// CHECK-NEXT:        {{%.*}} = uop.gep {{%.*}}[[[I]], [[J]]] : !uop.view<3x2xf32, strides [1, 3], offset 0>
// CHECK:             uop.max
// CHECK-NOT:     uop.range
func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %t = onnx.Transpose(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %y = onnx.Relu(%t) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}

// -----

// Reshape (shape from a constant, with 0 and -1) and Flatten of contiguous data are views:
// the consumer reads the input buffer under the new shape, and nothing else loops.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range {{%.*}} = 0 to 6 {
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 4 {
// CHECK-NEXT:        {{%.*}} = uop.gep {{%.*}} : !uop.view<6x4xf32, strides [4, 1], offset 0>
// CHECK:             uop.neg
// CHECK-NOT:     uop.range
func.func @main(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %s = onnx.Constant() {value = dense<[0, 3, -1]> : tensor<3xi64>} : () -> tensor<3xi64>
  %r = onnx.Reshape(%x, %s) : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  %f = onnx.Flatten(%r) {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %y = onnx.Neg(%f) : (tensor<6x4xf32>) -> tensor<6x4xf32>
  func.return %y : tensor<6x4xf32>
}

// -----

// Unsqueeze and Squeeze only add or drop size-1 dimensions, so they stay views even of a
// transposed (non-contiguous) layout: the new dimension gets stride 0.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range {{%.*}} = 0 to 3 {
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 1 {
// CHECK-NEXT:        uop.range {{%.*}} = 0 to 2 {
// CHECK-NEXT:          {{%.*}} = uop.gep {{%.*}} : !uop.view<3x1x2xf32, strides [1, 0, 3], offset 0>
// CHECK:               uop.abs
// CHECK-NOT:     uop.range
func.func @main(%x: tensor<2x3xf32>) -> tensor<3x1x2xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %axes = onnx.Constant() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %t = onnx.Transpose(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %u = onnx.Unsqueeze(%t, %axes) : (tensor<3x2xf32>, tensor<1xi64>) -> tensor<3x1x2xf32>
  %y = onnx.Abs(%u) : (tensor<3x1x2xf32>) -> tensor<3x1x2xf32>
  func.return %y : tensor<3x1x2xf32>
}

// -----

// A Reshape the strides cannot express (merging the dimensions of a transpose) copies the
// transposed input into a row-major buffer once; that buffer is then read as 6.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range [[I:%.*]] = 0 to 3 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 2 {
// CHECK-NEXT:        {{%.*}} = uop.gep {{%.*}}[[[I]], [[J]]] : !uop.view<3x2xf32, strides [1, 3], offset 0>
// CHECK-NEXT:        [[V:%.*]] = uop.load
// CHECK-NEXT:        {{%.*}} = uop.gep {{%.*}}[[[I]], [[J]]] : !uop.view<3x2xf32, strides [2, 1], offset 0>
// CHECK-NEXT:        uop.store [[V]]
// CHECK-NOT:     uop.range
func.func @main(%x: tensor<2x3xf32>) -> tensor<6xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %s = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %t = onnx.Transpose(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %y = onnx.Reshape(%t, %s) : (tensor<3x2xf32>, tensor<1xi64>) -> tensor<6xf32>
  func.return %y : tensor<6xf32>
}

// -----

// Concat along the last axis: each input is copied into its slice of the output, a view with
// the output's strides and the slice's offset.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[Y:%.*]] = uop.define_global "output" 0 "y" : !uop.buffer<10xf32>
// CHECK-DAG:     [[YA:%.*]] = uop.view [[Y]] : !uop.buffer<10xf32> -> !uop.view<2x3xf32, strides [5, 1], offset 0>
// CHECK-DAG:     [[YB:%.*]] = uop.view [[Y]] : !uop.buffer<10xf32> -> !uop.view<2x2xf32, strides [5, 1], offset 3>
// CHECK:         uop.range {{%.*}} = 0 to 2 {
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 3 {
// CHECK:             [[P:%.*]] = uop.gep [[YA]]
// CHECK-NEXT:        uop.store {{%.*}}, [[P]] : f32
// CHECK:         uop.range {{%.*}} = 0 to 2 {
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 2 {
// CHECK:             [[Q:%.*]] = uop.gep [[YB]]
// CHECK-NEXT:        uop.store {{%.*}}, [[Q]] : f32
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) -> tensor<2x5xf32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.Concat(%a, %b) {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// -----

// Concat along axis 0 of three inputs: offsets 0, 2·3 and 3·3 in the output.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     uop.view {{%.*}} : !uop.buffer<15xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
// CHECK-DAG:     uop.view {{%.*}} : !uop.buffer<15xf32> -> !uop.view<1x3xf32, strides [3, 1], offset 6>
// CHECK-DAG:     uop.view {{%.*}} : !uop.buffer<15xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 9>
func.func @main(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> tensor<5x3xf32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.Concat(%a, %b, %a) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  func.return %y : tensor<5x3xf32>
}

// -----

// Concat marked channels-last (assign-host-layouts): the result is stored N, H, W, C (a pixel's
// five channels one run) and each input is copied into its channel slice in that memory order,
// channels innermost, through the memory-order views of both sides at the identity index; the
// graph output is copied back to ONNX's layout.

// CHECK-LABEL: func.func @main()
// CHECK:         [[Y:%.*]] = uop.define_local "y" : !uop.buffer<60xf32>
// CHECK-DAG:     [[A:%.*]] = uop.view %a : !uop.buffer<24xf32> -> !uop.view<1x3x4x2xf32, strides [24, 4, 1, 12], offset 0>
// CHECK-DAG:     [[YA:%.*]] = uop.view [[Y]] : !uop.buffer<60xf32> -> !uop.view<1x3x4x2xf32, strides [60, 20, 5, 1], offset 0>
// CHECK-DAG:     [[YB:%.*]] = uop.view [[Y]] : !uop.buffer<60xf32> -> !uop.view<1x3x4x3xf32, strides [60, 20, 5, 1], offset 2>
// CHECK:         uop.range [[N:%.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range [[H:%.*]] = 0 to 3 {
// CHECK-NEXT:        uop.range [[W:%.*]] = 0 to 4 {
// CHECK-NEXT:          uop.range [[C:%.*]] = 0 to 2 {
// CHECK-NEXT:            uop.gep [[A]][[[N]], [[H]], [[W]], [[C]]]
// CHECK-NEXT:            uop.load
// CHECK-NEXT:            uop.gep [[YA]][[[N]], [[H]], [[W]], [[C]]]
// CHECK:               uop.range {{%.*}} = 0 to 3 {
// CHECK:                 uop.gep [[YB]]
// CHECK:         uop.view [[Y]] : !uop.buffer<60xf32> -> !uop.view<1x5x3x4xf32, strides [60, 1, 20, 5], offset 0>
func.func @main(%a: tensor<1x2x3x4xf32>, %b: tensor<1x3x3x4xf32>) -> tensor<1x5x3x4xf32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.Concat(%a, %b) {axis = 1 : i64, zant.channels_last} : (tensor<1x2x3x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x5x3x4xf32>
  func.return %y : tensor<1x5x3x4xf32>
}

// -----

// Identity of a graph input: the output is a copy (an input buffer cannot become the output).

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range
// CHECK-NEXT:      uop.gep %x
// CHECK:           uop.store
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.Identity(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
