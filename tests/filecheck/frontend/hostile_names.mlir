// RUN: %python %inputs/make_model.py hostile %t.onnx && zant-opt %t.onnx | zant-opt | filecheck %s

// Quotes, newlines, backslashes and non-ASCII names survive printing and re-parsing verbatim;
// SSA name hints are sanitized copies.

// CHECK:      func.func @main(%in__x: tensor<2xf32>) -> tensor<2xf32> attributes {onnx.input_names = ["in \22x\22\0A\\"], onnx.output_names = ["out \C3\BC \E2\82\AC"], onnx.graph_name = "graph \22g\22\0A"} {
// CHECK-NEXT:   %out = onnx.Relu(%in__x) {onnx.node_name = "node \220\22\0A\\\C3\A9"} : (tensor<2xf32>) -> tensor<2xf32>
