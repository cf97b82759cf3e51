// RUN: not zant-opt %s --split-input-file -p resolve-sequences 2>&1 | filecheck %s

// A position computed at run time is an error naming the node.
// CHECK: zant-opt: error: resolve-sequences: the position of 'at' (onnx.SequenceAt) is computed at run time
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @main(%a: tensor<2xf32>, %p: tensor<i64>) -> tensor<2xf32> {
    %s = onnx.SequenceConstruct(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> !onnx.seq<tensor<2xf32>>
    %x = onnx.SequenceAt(%s, %p) {onnx.node_name = "at"} : (!onnx.seq<tensor<2xf32>>, tensor<i64>) -> tensor<2xf32>
    func.return %x : tensor<2xf32>
  }
}
