// RUN: %python %inputs/make_model.py old_opset %t.onnx && zant-opt %t.onnx | filecheck %s

// An opset-7 model is converted to the current opset: Clip's min/max attributes become
// constant inputs, and the module records the opset actually used.

// CHECK:      builtin.module attributes {onnx.opset = [[OPSET:[0-9]+]] : i64} {
// CHECK-NOT:  onnx.opset = 7
// CHECK:        func.func @main(%x: tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:     %[[MIN:.*]] = onnx.Constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:     %[[MAX:.*]] = onnx.Constant() {value = dense<6.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:     %c = onnx.Clip(%x, %[[MIN]], %[[MAX]]) {onnx.node_name = "clip"} : (tensor<2x5xf32>, tensor<f32>, tensor<f32>) -> tensor<2x5xf32>
// CHECK-NEXT:     %y = onnx.Softmax(%c) {{{.*}}onnx.node_name = "softmax"} : (tensor<2x5xf32>) -> tensor<2x5xf32>
