// RUN: %python %inputs/make_model.py big %t.onnx && zant-opt %t.onnx | filecheck %s
// XFAIL: *
// Expected to fail until tools/zant_opt.py loads the builtin dialect into its context for .onnx
// input (the printer only prints resources of loaded dialects). Remove XFAIL then.

// CHECK: %w = onnx.Constant() {value = dense_resource<w> : tensor<512x512xf32>} : () -> tensor<512x512xf32>
// CHECK: dialect_resources: {
// CHECK-NEXT: builtin: {
// CHECK-NEXT: w: "0x10000000
