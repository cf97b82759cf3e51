// RUN: zant-opt %s -p 'inline-functions,fold-constants,dce,onnx-to-uop,fuse-loops,dce,plan-arenas' --check-each-pass | filecheck %s

// --check-each-pass sees inline-functions: the ONNX reference evaluates the module with the
// Attention op (before) and with its body's ops (after), and the two must agree, as the uop
// module must after onnx-to-uop. No note means every pass was checked and agreed.

// CHECK:     func.func @main(
// CHECK-NOT: onnx.
// CHECK:     abi.arena

builtin.module attributes {onnx.opset = 23 : i64} {
  func.func @main(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32> {
    %y = onnx.Attention(%q, %k, %v) {is_causal = 1 : i64, scale = 0.25 : f32} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
    func.return %y : tensor<1x2x3x4xf32>
  }
}
