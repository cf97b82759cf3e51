// RUN: zant-opt %s --split-input-file --verify-diagnostics

// onnx.call names an onnx.function of the module, with its operand and result types.

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{onnx.call: @custom.Missing is not an onnx.function of the module}}
  %y = onnx.call @custom.Missing(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{onnx.call: @helper is not an onnx.function of the module}}
  %y = onnx.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

onnx.function @custom.F(%x: tensor<4xf32>) -> tensor<4xf32> attributes {domain = "custom", op_type = "F"} {
  onnx.return %x : tensor<4xf32>
}
func.func @main(%x: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{onnx.call @custom.F: operand types [tensor<2xf32>], the function takes [tensor<4xf32>]}}
  %y = onnx.call @custom.F(%x) : (tensor<2xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

onnx.function @custom.F(%x: tensor<4xf32>) -> tensor<4xf32> attributes {domain = "custom", op_type = "F"} {
  onnx.return %x : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error@+1 {{onnx.call @custom.F: result types [tensor<4xi32>], the function gives [tensor<4xf32>]}}
  %y = onnx.call @custom.F(%x) : (tensor<4xf32>) -> tensor<4xi32>
  func.return %y : tensor<4xi32>
}

// -----

onnx.function @custom.F(%x: tensor<4xf32>) -> tensor<4xi32> attributes {domain = "custom", op_type = "F"} {
  // expected-error@+1 {{onnx.return: the results' types [tensor<4xf32>] are not those of @custom.F, [tensor<4xi32>]}}
  onnx.return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{onnx.function: expected a string 'op_type' in its attributes}}
onnx.function @custom.F(%x: tensor<4xf32>) -> tensor<4xf32> attributes {domain = "custom"} {
  onnx.return %x : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'onnx.return' expects parent op 'onnx.function'}}
  onnx.return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{its block's argument types [tensor<2xf32>] are not its inputs' [tensor<4xf32>]}}
"onnx.function"() <{sym_name = "custom.F", function_type = (tensor<4xf32>) -> (), domain = "custom", op_type = "F"}> ({
^bb0(%x: tensor<2xf32>):
  "onnx.return"() : () -> ()
}) : () -> ()
