// RUN: not zant-opt %s -p onnx-to-uop 2>&1 | filecheck %s

// A pattern outside RE2's supported subset is refused, naming the node.
// CHECK: node 'look' (onnx.RegexFullMatch): pattern 'a(?=b)': a group flag or lookaround '(?' at offset 2
func.func @main(%x: tensor<2x!onnx.string<4>>) -> tensor<2xi1> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.RegexFullMatch(%x) {pattern = "a(?=b)", onnx.node_name = "look"} : (tensor<2x!onnx.string<4>>) -> tensor<2xi1>
  func.return %y : tensor<2xi1>
}
