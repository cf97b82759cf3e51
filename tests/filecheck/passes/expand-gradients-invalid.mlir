// RUN: not zant-opt %s --split-input-file -p expand-gradients 2>&1 | filecheck %s

// An op on the way from x to y without a derivative rule is an error naming both nodes.
// CHECK: zant-opt: error: expand-gradients: 'grad' (onnx.training.Gradient) differentiates through 'relu' (onnx.Relu), which has no derivative rule
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %y = onnx.Relu(%x) {onnx.node_name = "relu"} : (tensor<2xf32>) -> tensor<2xf32>
    %g = onnx.training.Gradient(%x, %y) {xs = ["x"], y = "y", onnx.node_name = "grad"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    func.return %g : tensor<2xf32>
  }
}
