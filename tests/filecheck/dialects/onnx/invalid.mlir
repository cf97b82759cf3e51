// RUN: zant-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

%x = "test.op"() : () -> tensor<1x1x5x5xf32>
%y = onnx.Conv(%x, %x) {foo = 1 : i64} : (tensor<1x1x5x5xf32>, tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
// CHECK: Operation does not verify: onnx.Conv: unknown attribute 'foo'

// -----

%x = "test.op"() : () -> tensor<1x1x5x5xf32>
%y = "onnx.Conv"(%x, %x) <{foo = 1 : i64}> : (tensor<1x1x5x5xf32>, tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
// CHECK: Operation does not verify: onnx.Conv: unknown attribute 'foo'

// -----

%x = "test.op"() : () -> tensor<1x1x5x5xf32>
%y = onnx.Conv(%x, %x) {strides = [1, 1]} : (tensor<1x1x5x5xf32>, tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
// CHECK: Operation does not verify: onnx.Conv: attribute 'strides' must be array<i64: ...>

// -----

%x = "test.op"() : () -> tensor<2xf32>
%y = onnx.LeakyRelu(%x) {alpha = 1 : i64} : (tensor<2xf32>) -> tensor<2xf32>
// CHECK: Operation does not verify: onnx.LeakyRelu: attribute 'alpha' must be a float `X : f32`

// -----

%x = "test.op"() : () -> tensor<2xf32>
%y = onnx.Softmax(%x) {axis = 1 : i32} : (tensor<2xf32>) -> tensor<2xf32>
// CHECK: Operation does not verify: onnx.Softmax: attribute 'axis' must be an integer `N : i64`

// -----

%x = "test.op"() : () -> tensor<2xf32>
%y = onnx.Resize(%x) {mode = 3 : i64} : (tensor<2xf32>) -> tensor<2xf32>
// CHECK: Operation does not verify: onnx.Resize: attribute 'mode' must be a string "..."

// -----

%x = "test.op"() : () -> tensor<1x1x5x5xf32>
%y = onnx.Cast(%x) : (tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
// CHECK: Operation does not verify: onnx.Cast: missing required attribute 'to'

// -----

%x = "test.op"() : () -> tensor<1x1x5x5xf32>
%y = "onnx.Conv"(%x) : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
// CHECK: Operation does not verify: onnx.Conv: expected 2 to 3 inputs, got 1

// -----

%x = "test.op"() : () -> tensor<2xf32>
%y = "onnx.Concat"() <{axis = 0 : i64}> : () -> tensor<2xf32>
// CHECK: Operation does not verify: onnx.Concat: expected at least 1 inputs, got 0

// -----

%x = "test.op"() : () -> tensor<2xf32>
%y, %z = "onnx.Relu"(%x) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK: Operation does not verify: onnx.Relu: expected 1 outputs, got 2

// -----

%x = "test.op"() : () -> i32
%y = onnx.Relu(%x) : (i32) -> i32
// CHECK: Operation does not verify: operand 'X' at position 0 does not verify:

// -----

%x = "test.op"() : () -> tensor<1x1x5x5xf32>
%y = onnx.Conv(%x, none) : (tensor<1x1x5x5xf32>, none) -> tensor<1x1x3x3xf32>
// CHECK: {{^ +}}onnx.Conv: input 1 ('W') is required

// -----

%x = "test.op"() : () -> tensor<2xf32>
%y = onnx.Clip(%x, none) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK: {{^ +}}onnx.Clip: an absent input is written `none` and has type `none`
