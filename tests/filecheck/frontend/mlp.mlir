// RUN: %python %inputs/make_model.py mlp %t.onnx && zant-opt %t.onnx | filecheck %s
// RUN: %python %inputs/make_model.py mlp %t.onnx && zant-opt %t.onnx | zant-opt --print-op-generic | zant-opt | filecheck %s

// Initializers become onnx.Constant ops, in order, before the nodes; node names are kept.

// CHECK:      builtin.module attributes {onnx.opset = [[OPSET:[0-9]+]] : i64} {
// CHECK-NEXT:   func.func @main(%x: tensor<1x3xf32>) -> tensor<1x2xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"], onnx.graph_name = "mlp"} {
// CHECK-NEXT:     %w1 = onnx.Constant() {value = dense<{{.*}}> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
// CHECK-NEXT:     %b1 = onnx.Constant() {value = dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<4xf32>} : () -> tensor<4xf32>
// CHECK-NEXT:     %w2 = onnx.Constant() {value = dense<{{.*}}> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
// CHECK-NEXT:     %h = onnx.Gemm(%x, %w1, %b1) {transB = 1 : i64, onnx.node_name = "gemm0"} : (tensor<1x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:     %r = onnx.Relu(%h) {onnx.node_name = "relu0"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:     %y = onnx.Gemm(%r, %w2) {transB = 1 : i64, onnx.node_name = "gemm1"} : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<1x2xf32>
// CHECK-NEXT:     func.return %y : tensor<1x2xf32>
