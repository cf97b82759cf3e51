// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The ai.onnx.preview.training optimizers live in the onnx dialect under `onnx.training.`:
// R and T, then every X, every G and every tensor of each state (one variadic operand list);
// the updated X, then each updated state.

// CHECK-LABEL: func.func @adagrad
func.func @adagrad(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2x3xf32>, %g: tensor<2x3xf32>, %h: tensor<2x3xf32>) {
  // CHECK-NEXT: %x_new, %h_new = onnx.training.Adagrad(%r, %t, %x, %g, %h) {decay_factor = 1.000000e-01 : f32, onnx.node_name = "step"} : (tensor<f32>, tensor<i64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  // GENERIC: "onnx.training.Adagrad"(%r, %t, %x, %g, %h) <{decay_factor = 1.000000e-01 : f32}> {onnx.node_name = "step"}
  %x_new, %h_new = onnx.training.Adagrad(%r, %t, %x, %g, %h) {decay_factor = 0.1 : f32, onnx.node_name = "step"} : (tensor<f32>, tensor<i64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  func.return
}

// Two optimized tensors of different shapes: (X1, X2, G1, G2, V1, V2, H1, H2).

// CHECK-LABEL: func.func @adam_two
func.func @adam_two(%r: tensor<f32>, %t: tensor<i64>, %x1: tensor<1xf64>, %x2: tensor<3xf32>) {
  // CHECK-NEXT: %0, %1, %2, %3, %4, %5 = onnx.training.Adam(%r, %t, %x1, %x2, %x1, %x2, %x1, %x2, %x1, %x2) {alpha = 8.500000e-01 : f32, norm_coefficient_post = 1.000000e-02 : f32} : (tensor<f32>, tensor<i64>, tensor<1xf64>, tensor<3xf32>, tensor<1xf64>, tensor<3xf32>, tensor<1xf64>, tensor<3xf32>, tensor<1xf64>, tensor<3xf32>) -> (tensor<1xf64>, tensor<3xf32>, tensor<1xf64>, tensor<3xf32>, tensor<1xf64>, tensor<3xf32>)
  %0, %1, %2, %3, %4, %5 = onnx.training.Adam(%r, %t, %x1, %x2, %x1, %x2, %x1, %x2, %x1, %x2) {alpha = 0.85 : f32, norm_coefficient_post = 0.01 : f32} : (tensor<f32>, tensor<i64>, tensor<1xf64>, tensor<3xf32>, tensor<1xf64>, tensor<3xf32>, tensor<1xf64>, tensor<3xf32>, tensor<1xf64>, tensor<3xf32>) -> (tensor<1xf64>, tensor<3xf32>, tensor<1xf64>, tensor<3xf32>, tensor<1xf64>, tensor<3xf32>)
  func.return
}

// CHECK-LABEL: func.func @momentum
func.func @momentum(%r: tensor<1xf32>, %t: tensor<1xi64>, %x: tensor<4xf32>) {
  // CHECK-NEXT: %x_new, %v_new = onnx.training.Momentum(%r, %t, %x, %x, %x) {alpha = 9.000000e-01 : f32, beta = 1.000000e+00 : f32, mode = "nesterov", norm_coefficient = 0.000000e+00 : f32} : (tensor<1xf32>, tensor<1xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %x_new, %v_new = onnx.training.Momentum(%r, %t, %x, %x, %x) {alpha = 0.9 : f32, beta = 1.0 : f32, mode = "nesterov", norm_coefficient = 0.0 : f32} : (tensor<1xf32>, tensor<1xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return
}
