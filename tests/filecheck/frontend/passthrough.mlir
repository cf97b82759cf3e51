// RUN: %python %inputs/make_model.py passthrough %t.onnx && zant-opt %t.onnx | filecheck %s

// Graph outputs that are directly a graph input or an initializer.

// CHECK:      func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<3xi64>) attributes {onnx.input_names = ["x"], onnx.output_names = ["x", "k"], onnx.graph_name = "pass"} {
// CHECK-NEXT:   %k = onnx.Constant() {value = dense<[1, 2, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
// CHECK-NEXT:   func.return %x, %k : tensor<2xf32>, tensor<3xi64>
