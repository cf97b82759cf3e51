// RUN: zant-opt %s --split-input-file --verify-diagnostics

// The optimizers' verifier: R a one-element float, T a one-element integer, the other inputs
// whole (X, G, states) groups, each group and its updates of one type.

%r, %t, %x = "test.op"() : () -> (tensor<f32>, tensor<i64>, tensor<2xf32>)
// expected-error@+1 {{onnx.training.Adam: 3 inputs after R and T and 2 outputs do not make groups of (X, G, V, H)}}
%a, %b = onnx.training.Adam(%r, %t, %x, %x, %x) : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)

// -----

%r, %t, %x = "test.op"() : () -> (tensor<f32>, tensor<i64>, tensor<2xf32>)
// expected-error@+1 {{onnx.training.Adagrad: 3 inputs after R and T and 3 outputs do not make groups of (X, G, H)}}
%a, %b, %c = onnx.training.Adagrad(%r, %t, %x, %x, %x) : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)

// -----

%r, %t, %x = "test.op"() : () -> (tensor<2xf32>, tensor<i64>, tensor<2xf32>)
// expected-error@+1 {{onnx.training.Adagrad: R must be a one-element float tensor}}
%a, %b = onnx.training.Adagrad(%r, %t, %x, %x, %x) : (tensor<2xf32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)

// -----

%r, %t, %x = "test.op"() : () -> (tensor<f32>, tensor<f32>, tensor<2xf32>)
// expected-error@+1 {{onnx.training.Adagrad: T must be a one-element integer tensor}}
%a, %b = onnx.training.Adagrad(%r, %t, %x, %x, %x) : (tensor<f32>, tensor<f32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)

// -----

%r, %t, %x, %y = "test.op"() : () -> (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<3xf32>)
// expected-error@+1 {{onnx.training.Momentum: group 1's X, G, states and their updates must have one float tensor type}}
%a, %b, %c, %d = onnx.training.Momentum(%r, %t, %x, %y, %x, %y, %x, %x) {alpha = 0.9 : f32, beta = 1.0 : f32, mode = "standard", norm_coefficient = 0.0 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>)

// -----

%r, %t, %x = "test.op"() : () -> (tensor<f32>, tensor<i64>, tensor<2xi32>)
// expected-error@+1 {{onnx.training.Adagrad: group 0's X, G, states and their updates must have one float tensor type}}
%a, %b = onnx.training.Adagrad(%r, %t, %x, %x, %x) : (tensor<f32>, tensor<i64>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>)

// -----

%r, %t, %x = "test.op"() : () -> (tensor<f32>, tensor<i64>, tensor<2xf32>)
// expected-error@+1 {{onnx.training.Momentum: missing required attribute 'mode'}}
%a, %b = onnx.training.Momentum(%r, %t, %x, %x, %x) {alpha = 0.9 : f32, beta = 1.0 : f32, norm_coefficient = 0.0 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
