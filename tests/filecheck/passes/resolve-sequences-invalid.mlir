// RUN: not zant-opt %s --split-input-file -p resolve-sequences 2>&1 | filecheck %s

// A position computed at run time over elements of different shapes is an error naming the node
// where an op reads the result (its shape would depend on it; returned as a graph output, it is
// a bounded output: resolve-sequences-bounded.mlir).
// CHECK: zant-opt: error: resolve-sequences: the position of 'at' (onnx.SequenceAt) is computed at run time over elements of different shapes
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>, %p: tensor<i64>) -> tensor<?xf32> {
    %s = onnx.SequenceConstruct(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> !onnx.seq<tensor<?xf32>>
    %x = onnx.SequenceAt(%s, %p) {onnx.node_name = "at"} : (!onnx.seq<tensor<?xf32>>, tensor<i64>) -> tensor<?xf32>
    %y = onnx.Relu(%x) : (tensor<?xf32>) -> tensor<?xf32>
    func.return %y : tensor<?xf32>
  }
}
