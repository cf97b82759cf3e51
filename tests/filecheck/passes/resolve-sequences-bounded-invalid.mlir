// RUN: not zant-opt %s -p resolve-sequences 2>&1 | filecheck %s

// A run-time-length sequence (SplitToSequence by a run-time chunk size) is only a graph output or
// counted by SequenceLength: ConcatFromSequence would concatenate as many elements as the data say.
// CHECK: zant-opt: error: resolve-sequences: 'cat' (onnx.ConcatFromSequence) reads a sequence whose length only the data decide
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @main(%x: tensor<4xf32>, %chunk: tensor<i64>) -> tensor<?xf32> {
    %s = onnx.SplitToSequence(%x, %chunk) {axis = 0 : i64} : (tensor<4xf32>, tensor<i64>) -> !onnx.seq<tensor<?xf32>>
    %y = onnx.ConcatFromSequence(%s) {axis = 0 : i64, onnx.node_name = "cat"} : (!onnx.seq<tensor<?xf32>>) -> tensor<?xf32>
    func.return %y : tensor<?xf32>
  }
}
