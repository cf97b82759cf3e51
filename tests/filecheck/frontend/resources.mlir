// RUN: %python %inputs/make_model.py big %t.onnx && zant-opt %t.onnx | filecheck %s
// RUN: %python %inputs/make_model.py big %t.onnx && zant-opt %t.onnx | zant-opt | filecheck %s

// Weights are dense_resource handles; their bytes are one hex blob in the resource section
// (MLIR's format: 4-byte little-endian alignment, then the raw little-endian data).

// CHECK: %w = onnx.Constant() {value = dense_resource<w> : tensor<512x512xf32>} : () -> tensor<512x512xf32>
// CHECK: %y = onnx.MatMul(%x, %w) : (tensor<1x512xf32>, tensor<512x512xf32>) -> tensor<1x512xf32>
// CHECK:      dialect_resources: {
// CHECK-NEXT:   builtin: {
// CHECK-NEXT:     w: "0x10000000{{[0-9A-F]+}}"
