// RUN: zant-opt %s --split-input-file -p fold-batchnorm | filecheck %s

// Conv (no bias) → BatchNormalization: s = gamma / sqrt(var + eps) = [1, 2, 2],
// t = beta - mean·s = [-0.5, -2, -5]; W' = W·s per output channel, a bias appears.

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %w_folded = onnx.Constant() {value = dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}6.000000e+00]], {{\[\[}}8.000000e+00]]], {{\[\[\[}}1.000000e+01]], {{\[\[}}1.200000e+01]]]]> : tensor<3x2x1x1xf32>}
// CHECK-NEXT:    %w_bias_folded = onnx.Constant() {value = dense<[-5.000000e-01, -2.000000e+00, -5.000000e+00]> : tensor<3xf32>}
// CHECK-NEXT:    %bn = onnx.Conv(%x, %w_folded, %w_bias_folded) {kernel_shape = array<i64: 1, 1>, onnx.node_name = "conv0"}
// CHECK-NEXT:    func.return %bn
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %w = onnx.Constant() {value = dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]]]> : tensor<3x2x1x1xf32>} : () -> tensor<3x2x1x1xf32>
  %gamma = onnx.Constant() {value = dense<[1.0, 2.0, 4.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %beta = onnx.Constant() {value = dense<[0.5, 0.0, -1.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %mean = onnx.Constant() {value = dense<[1.0, 1.0, 2.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %var = onnx.Constant() {value = dense<[1.0, 1.0, 4.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %conv = onnx.Conv(%x, %w) {kernel_shape = array<i64: 1, 1>, onnx.node_name = "conv0"} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %bn = onnx.BatchNormalization(%conv, %gamma, %beta, %mean, %var) {epsilon = 0.0 : f32} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  func.return %bn : tensor<1x3x4x4xf32>
}

// -----

// Depthwise Conv (group 2) with a bias, 1-D: B' = B·s + t.

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %w_folded = onnx.Constant() {value = dense<{{\[\[\[}}2.000000e+00, 4.000000e+00, 6.000000e+00]], {{\[\[}}2.000000e+00, 2.500000e+00, 3.000000e+00]]]> : tensor<2x1x3xf32>}
// CHECK-NEXT:    %b_folded = onnx.Constant() {value = dense<[3.000000e+00, 0.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT:    %bn = onnx.Conv(%x, %w_folded, %b_folded) {group = 2 : i64, kernel_shape = array<i64: 3>}
// CHECK-NEXT:    func.return %bn
func.func @main(%x: tensor<1x2x5xf32>) -> tensor<1x2x3xf32> {
  %w = onnx.Constant() {value = dense<[[[1.0, 2.0, 3.0]], [[4.0, 5.0, 6.0]]]> : tensor<2x1x3xf32>} : () -> tensor<2x1x3xf32>
  %b = onnx.Constant() {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %gamma = onnx.Constant() {value = dense<[2.0, 0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %beta = onnx.Constant() {value = dense<[1.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = onnx.Constant() {value = dense<[0.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %var = onnx.Constant() {value = dense<[1.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %conv = onnx.Conv(%x, %w, %b) {group = 2 : i64, kernel_shape = array<i64: 3>} : (tensor<1x2x5xf32>, tensor<2x1x3xf32>, tensor<2xf32>) -> tensor<1x2x3xf32>
  %bn = onnx.BatchNormalization(%conv, %gamma, %beta, %mean, %var) {epsilon = 0.0 : f32} : (tensor<1x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3xf32>
  func.return %bn : tensor<1x2x3xf32>
}

// -----

// ConvTranspose, group 2: W is [C=2, M/group=2, k], so W[ci, j] feeds output channel
// 2·ci + j and is scaled by s[2·ci + j] with s = [1, 2, 3, 4].

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %w_folded = onnx.Constant() {value = dense<{{\[\[\[}}1.000000e+00], [2.000000e+00]], {{\[\[}}3.000000e+00], [4.000000e+00]]]> : tensor<2x2x1xf32>}
// CHECK-NEXT:    %bn = onnx.ConvTranspose(%x, %w_folded) {group = 2 : i64}
// CHECK-NEXT:    func.return %bn
func.func @main(%x: tensor<1x2x3xf32>) -> tensor<1x4x3xf32> {
  %w = onnx.Constant() {value = dense<1.0> : tensor<2x2x1xf32>} : () -> tensor<2x2x1xf32>
  %gamma = onnx.Constant() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %beta = onnx.Constant() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %mean = onnx.Constant() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %var = onnx.Constant() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %y = onnx.ConvTranspose(%x, %w) {group = 2 : i64} : (tensor<1x2x3xf32>, tensor<2x2x1xf32>) -> tensor<1x4x3xf32>
  %bn = onnx.BatchNormalization(%y, %gamma, %beta, %mean, %var) {epsilon = 0.0 : f32} : (tensor<1x4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x3xf32>
  func.return %bn : tensor<1x4x3xf32>
}

// -----

// Gemm (transB = 1, alpha, beta, a broadcast [1, 2] C) → rank-2 BatchNormalization:
// B' rows scaled by s = [2, 3]; C' = beta·C·s + t = 2·[1, 1]·[2, 3] + [1, -1] = [5, 5]; beta' = 1.

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %w_folded = onnx.Constant() {value = dense<{{\[\[}}2.000000e+00, 4.000000e+00, 6.000000e+00], [1.200000e+01, 1.500000e+01, 1.800000e+01]]> : tensor<2x3xf32>}
// CHECK-NEXT:    %c_folded = onnx.Constant() {value = dense<5.000000e+00> : tensor<1x2xf32>}
// CHECK-NEXT:    %bn = onnx.Gemm(%x, %w_folded, %c_folded) {alpha = 5.000000e-01 : f32, beta = 1.000000e+00 : f32, transB = 1 : i64}
// CHECK-NEXT:    func.return %bn
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = onnx.Constant() {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %c = onnx.Constant() {value = dense<1.0> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %gamma = onnx.Constant() {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %beta = onnx.Constant() {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = onnx.Constant() {value = dense<0.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %var = onnx.Constant() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %fc = onnx.Gemm(%x, %w, %c) {alpha = 0.5 : f32, beta = 2.0 : f32, transB = 1 : i64} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<1x2xf32>) -> tensor<4x2xf32>
  %bn = onnx.BatchNormalization(%fc, %gamma, %beta, %mean, %var) {epsilon = 0.0 : f32} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  func.return %bn : tensor<4x2xf32>
}

// -----

// Gemm (transB = 0, no C) → Mul by a [2] constant → Add of a [1, 2] constant: the Mul scales
// the columns of B; the Add becomes C.

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %w_folded = onnx.Constant() {value = dense<{{\[\[}}1.000000e+01, -2.000000e+00], [3.000000e+01, -4.000000e+00], [5.000000e+01, -6.000000e+00]]> : tensor<3x2xf32>}
// CHECK-NEXT:    %w_bias_folded = onnx.Constant() {value = dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>}
// CHECK-NEXT:    %a = onnx.Gemm(%x, %w_folded, %w_bias_folded) {beta = 1.000000e+00 : f32}
// CHECK-NEXT:    func.return %a
func.func @main(%x: tensor<1x3xf32>) -> tensor<1x2xf32> {
  %w = onnx.Constant() {value = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %k = onnx.Constant() {value = dense<[10.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %d = onnx.Constant() {value = dense<[[0.5, 0.25]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %fc = onnx.Gemm(%x, %w) : (tensor<1x3xf32>, tensor<3x2xf32>) -> tensor<1x2xf32>
  %m = onnx.Mul(%k, %fc) : (tensor<2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %a = onnx.Add(%m, %d) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  func.return %a : tensor<1x2xf32>
}

// -----

// Conv → Add of a [C, 1, 1] constant → Mul by a [1, C, 1, 1] constant: one Conv.

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %w_folded = onnx.Constant() {value = dense<{{\[\[\[\[}}3.000000e+00]]], {{\[\[\[}}1.000000e+00]]]]> : tensor<2x1x1x1xf32>}
// CHECK-NEXT:    %b_folded = onnx.Constant() {value = dense<[6.000000e+00, 0.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT:    %m = onnx.Conv(%x, %w_folded, %b_folded)
// CHECK-NEXT:    func.return %m
func.func @main(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = onnx.Constant() {value = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %b = onnx.Constant() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %d = onnx.Constant() {value = dense<[[[1.0]], [[-2.0]]]> : tensor<2x1x1xf32>} : () -> tensor<2x1x1xf32>
  %k = onnx.Constant() {value = dense<[[[[3.0]], [[0.5]]]]> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
  %conv = onnx.Conv(%x, %w, %b) : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %a = onnx.Add(%conv, %d) : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %m = onnx.Mul(%a, %k) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %m : tensor<1x2x3x3xf32>
}

// -----

// MatMul (2-D A, constant 2-D B) → Add of a [2] constant: a Gemm with that C, into which the
// following BatchNormalization then folds (s = [2, 1], t = [0, 1]; C' = [1, 2]·s + t = [2, 3]).

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %w_folded = onnx.Constant() {value = dense<{{\[\[}}2.000000e+00, 2.000000e+00], [6.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}
// CHECK-NEXT:    %c_folded = onnx.Constant() {value = dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT:    %bn = onnx.Gemm(%x, %w_folded, %c_folded) {beta = 1.000000e+00 : f32, onnx.node_name = "mm"}
// CHECK-NEXT:    func.return %bn
func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = onnx.Constant() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %c = onnx.Constant() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %gamma = onnx.Constant() {value = dense<[2.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %beta = onnx.Constant() {value = dense<[0.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = onnx.Constant() {value = dense<0.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %var = onnx.Constant() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %mm = onnx.MatMul(%x, %w) {onnx.node_name = "mm"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %a = onnx.Add(%mm, %c) : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %bn = onnx.BatchNormalization(%a, %gamma, %beta, %mean, %var) {epsilon = 0.0 : f32} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  func.return %bn : tensor<2x2xf32>
}

// -----

// Not folded: weights that are not constants, a Conv result with two uses, a training-mode
// BatchNormalization (three results), an Add whose constant varies along the width, and a
// MatMul whose A is 3-D. An unused op stays: erasing dead code is the `dce` pass's job.

// CHECK-LABEL: func.func @main
// CHECK-NOT:     _folded
// CHECK:         %dyn = onnx.Conv(%x, %wx)
// CHECK-NEXT:    %bn_dyn = onnx.BatchNormalization(%dyn,
// CHECK-NEXT:    %shared = onnx.Conv(%x, %w)
// CHECK-NEXT:    %bn_shared = onnx.BatchNormalization(%shared,
// CHECK-NEXT:    %train_in = onnx.Conv(%x, %w)
// CHECK-NEXT:    %bn_train, %run_mean, %run_var = onnx.BatchNormalization(%train_in,
// CHECK-NEXT:    %wide_in = onnx.Conv(%x, %w)
// CHECK-NEXT:    %wide = onnx.Add(%wide_in, %row)
// CHECK-NEXT:    %mm = onnx.MatMul(%a3, %m2)
// CHECK-NEXT:    %mm_add = onnx.Add(%mm, %c2)
// CHECK-NEXT:    %unused = onnx.Relu(%x)
// CHECK-NOT:     onnx.Gemm
func.func @main(%x: tensor<1x2x4x4xf32>, %wx: tensor<2x2x1x1xf32>, %a3: tensor<2x2x2xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<2x2x2xf32>) {
  %w = onnx.Constant() {value = dense<1.0> : tensor<2x2x1x1xf32>} : () -> tensor<2x2x1x1xf32>
  %gamma = onnx.Constant() {value = dense<2.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %beta = onnx.Constant() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = onnx.Constant() {value = dense<0.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %var = onnx.Constant() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %row = onnx.Constant() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %m2 = onnx.Constant() {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %c2 = onnx.Constant() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %dyn = onnx.Conv(%x, %wx) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %bn_dyn = onnx.BatchNormalization(%dyn, %gamma, %beta, %mean, %var) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %shared = onnx.Conv(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %bn_shared = onnx.BatchNormalization(%shared, %gamma, %beta, %mean, %var) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %train_in = onnx.Conv(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %bn_train, %run_mean, %run_var = onnx.BatchNormalization(%train_in, %gamma, %beta, %mean, %var) {training_mode = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>)
  %wide_in = onnx.Conv(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %wide = onnx.Add(%wide_in, %row) : (tensor<1x2x4x4xf32>, tensor<4xf32>) -> tensor<1x2x4x4xf32>
  %mm = onnx.MatMul(%a3, %m2) : (tensor<2x2x2xf32>, tensor<2x2xf32>) -> tensor<2x2x2xf32>
  %mm_add = onnx.Add(%mm, %c2) : (tensor<2x2x2xf32>, tensor<2xf32>) -> tensor<2x2x2xf32>
  %unused = onnx.Relu(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %bn_dyn, %shared, %bn_shared, %bn_train, %wide, %mm_add : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<2x2x2xf32>
}
