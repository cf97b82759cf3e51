// RUN: %python %inputs/make_model.py conv %t.onnx && zant-opt %t.onnx | filecheck %s

// Conv without bias, a Constant node, Clip with an absent middle input (`none`), variadic
// Concat and a two-result Split; names with dots become legal SSA name hints.

// CHECK:      func.func @main(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) attributes {onnx.input_names = ["x"], onnx.output_names = ["s0", "s1"], onnx.graph_name = "conv"} {
// CHECK-NEXT:   %conv_weight = onnx.Constant() {value = dense<1.000000e+00> : tensor<1x1x3x3xf32>} : () -> tensor<1x1x3x3xf32>
// CHECK-NEXT:   %c = onnx.Conv(%x, %conv_weight) {pads = array<i64: 1, 1, 1, 1>, onnx.node_name = "conv0"} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
// CHECK-NEXT:   %hi = onnx.Constant() {value = dense<6.000000e+00> : tensor<f32>, onnx.node_name = "k"} : () -> tensor<f32>
// CHECK-NEXT:   %clipped = onnx.Clip(%c, none, %hi) {onnx.node_name = "clip0"} : (tensor<1x1x4x4xf32>, none, tensor<f32>) -> tensor<1x1x4x4xf32>
// CHECK-NEXT:   %cat = onnx.Concat(%clipped, %c) {axis = 1 : i64, onnx.node_name = "cat0"} : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:   %s0, %s1 = onnx.Split(%cat) {axis = 1 : i64, num_outputs = 2 : i64, onnx.node_name = "split0"} : (tensor<1x2x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>)
// CHECK-NEXT:   func.return %s0, %s1 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
