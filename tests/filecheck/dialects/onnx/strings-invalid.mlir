// RUN: zant-opt %s --split-input-file --verify-diagnostics

// A string field holds at least one byte.
// expected-error@+1 {{!onnx.string capacity must be in [1, 65536] bytes, got 0}}
%x = "test.op"() : () -> tensor<2x!onnx.string<0>>

// -----

// expected-error@+1 {{!onnx.string capacity must be in [1, 65536] bytes, got 70000}}
%x = "test.op"() : () -> tensor<2x!onnx.string<70000>>
