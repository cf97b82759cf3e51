// RUN: zant-opt %s --split-input-file --verify-diagnostics

%x = "test.op"() : () -> tensor<1x1x5x5xf32>
// expected-error@+1 {{onnx.Conv: unknown attribute 'foo'}}
%y = onnx.Conv(%x, %x) {foo = 1 : i64} : (tensor<1x1x5x5xf32>, tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>

// -----

%x = "test.op"() : () -> tensor<1x1x5x5xf32>
// expected-error@+1 {{onnx.Conv: unknown attribute 'foo'}}
%y = "onnx.Conv"(%x, %x) <{foo = 1 : i64}> : (tensor<1x1x5x5xf32>, tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>

// -----

%x = "test.op"() : () -> tensor<1x1x5x5xf32>
// expected-error@+1 {{onnx.Conv: attribute 'strides' must be array<i64: ...>}}
%y = onnx.Conv(%x, %x) {strides = [1, 1]} : (tensor<1x1x5x5xf32>, tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>

// -----

%x = "test.op"() : () -> tensor<2xf32>
// expected-error@+1 {{onnx.LeakyRelu: attribute 'alpha' must be a float `X : f32`}}
%y = onnx.LeakyRelu(%x) {alpha = 1 : i64} : (tensor<2xf32>) -> tensor<2xf32>

// -----

%x = "test.op"() : () -> tensor<2xf32>
// expected-error@+1 {{onnx.Softmax: attribute 'axis' must be an integer `N : i64`}}
%y = onnx.Softmax(%x) {axis = 1 : i32} : (tensor<2xf32>) -> tensor<2xf32>

// -----

%x = "test.op"() : () -> tensor<2xf32>
// expected-error@+1 {{onnx.Resize: attribute 'mode' must be a string "..."}}
%y = onnx.Resize(%x) {mode = 3 : i64} : (tensor<2xf32>) -> tensor<2xf32>

// -----

%x = "test.op"() : () -> tensor<1x1x5x5xf32>
// expected-error@+1 {{onnx.Cast: missing required attribute 'to'}}
%y = onnx.Cast(%x) : (tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>

// -----

%x = "test.op"() : () -> tensor<1x1x5x5xf32>
// expected-error@+1 {{onnx.Conv: expected 2 to 3 inputs, got 1}}
%y = "onnx.Conv"(%x) : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>

// -----

%x = "test.op"() : () -> tensor<2xf32>
// expected-error@+1 {{onnx.Concat: expected at least 1 inputs, got 0}}
%y = "onnx.Concat"() <{axis = 0 : i64}> : () -> tensor<2xf32>

// -----

%x = "test.op"() : () -> tensor<2xf32>
// expected-error@+1 {{onnx.Relu: expected 1 outputs, got 2}}
%y, %z = "onnx.Relu"(%x) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)

// -----

%x = "test.op"() : () -> i32
// expected-error@+1 {{operand 'X' at position 0 does not verify:}}
%y = onnx.Relu(%x) : (i32) -> i32

// -----

%x = "test.op"() : () -> tensor<1x1x5x5xf32>
// expected-error@+1 {{onnx.Conv: input 1 ('W') is required}}
%y = onnx.Conv(%x, none) : (tensor<1x1x5x5xf32>, none) -> tensor<1x1x3x3xf32>

// -----

%x = "test.op"() : () -> tensor<2xf32>
// expected-error@+1 {{onnx.Clip: an absent input is written `none` and has type `none`}}
%y = onnx.Clip(%x, none) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
