// RUN: %python %inputs/make_model.py misinferred_extents %t.onnx && zant-opt %t.onnx | filecheck %s

// Nodes whose extents onnx's shape inference gets wrong are rewritten before it runs
// (zant/frontend/inference_fixes.py). A MaxPool over 4x4 with 1x1 windows, strides 2 and
// ceil_mode: ceil mode's third window would start past the input and is dropped (2x2, inferred
// 3x3), so the node is floor mode's. A SAME_UPPER ConvTranspose with output_padding [0, 1]: its
// extent is in·stride (4x9, inferred 4x10), so its SAME pads are written out.

// CHECK:      %p = onnx.MaxPool(%x) {kernel_shape = array<i64: 1, 1>, strides = array<i64: 2, 2>, ceil_mode = 0 : i64, onnx.node_name = "pool"} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT: %y = onnx.Relu(%p) {{.*}} -> tensor<1x1x2x2xf32>
// CHECK-NEXT: %c = onnx.ConvTranspose(%t, %w) {output_padding = array<i64: 0, 1>, strides = array<i64: 1, 3>, auto_pad = "NOTSET", pads = array<i64: 1, 0, 1, 1>, onnx.node_name = "transpose"} : (tensor<1x1x4x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x9xf32>
// CHECK-NEXT: %z = onnx.Relu(%c) {{.*}} -> tensor<1x1x4x9xf32>
