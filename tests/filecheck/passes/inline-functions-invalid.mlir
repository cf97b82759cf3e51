// RUN: not zant-opt %s -p inline-functions 2>&1 | filecheck %s

// A body ONNX's inference refuses (the target's 5 columns against the input's 3) is an error
// naming the op, not a traceback.
// CHECK: zant-opt: error: inline-functions: ONNX's inference of the body of 'loss' (onnx.NegativeLogLikelihoodLoss) fails: {{.*}}Dimension mismatch in unification between 3 and 5
builtin.module attributes {onnx.opset = 22 : i64} {
  func.func @main(%x: tensor<2x4x3xf32>, %t: tensor<2x5xi64>) -> tensor<f32> {
    %l = onnx.NegativeLogLikelihoodLoss(%x, %t) {onnx.node_name = "loss"} : (tensor<2x4x3xf32>, tensor<2x5xi64>) -> tensor<f32>
    func.return %l : tensor<f32>
  }
}
