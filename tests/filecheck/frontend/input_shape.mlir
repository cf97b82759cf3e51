// RUN: %python %inputs/make_model.py symbolic %t.onnx && zant-opt %t.onnx --input-shape x=4x3 | filecheck %s

// --input-shape fixes a symbolic dimension; shape inference then propagates it.

// CHECK: func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK:   %y = onnx.Relu(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32>
