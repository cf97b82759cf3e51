// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @nn
func.func @nn(%x: tensor<1x1x5x5xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  // Conv without and with its optional bias.
  // CHECK-NEXT: %y = onnx.Conv(%x, %w) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, onnx.node_name = "conv \22a\22\0A\E2\82\AC"} : (tensor<1x1x5x5xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  // GENERIC: "onnx.Conv"(%x, %w) <{strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}> {onnx.node_name = "conv \22a\22\0A\E2\82\AC"}
  %y = onnx.Conv(%x, %w) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, onnx.node_name = "conv \"a\"\n€"} : (tensor<1x1x5x5xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  // CHECK-NEXT: %yb = onnx.Conv(%x, %w, %b) {auto_pad = "NOTSET", group = 1 : i64} : (tensor<1x1x5x5xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %yb = onnx.Conv(%x, %w, %b) {auto_pad = "NOTSET", group = 1 : i64} : (tensor<1x1x5x5xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  // CHECK-NEXT: %r = onnx.Relu(%yb) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %r = onnx.Relu(%yb) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  // CHECK-NEXT: %p = onnx.MaxPool(%r) {kernel_shape = array<i64: 2, 2>} : (tensor<1x2x3x3xf32>) -> tensor<1x2x2x2xf32>
  %p = onnx.MaxPool(%r) {kernel_shape = array<i64: 2, 2>} : (tensor<1x2x3x3xf32>) -> tensor<1x2x2x2xf32>
  // Optional results: Dropout with its mask, BatchNormalization-style `none` in the middle.
  // CHECK-NEXT: %d, %mask = onnx.Dropout(%r) : (tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi1>)
  %d, %mask = onnx.Dropout(%r) : (tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi1>)
  // CHECK-NEXT: %mp, %idx = onnx.MaxPool(%r) {kernel_shape = array<i64: 2, 2>} : (tensor<1x2x3x3xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
  %mp, %idx = onnx.MaxPool(%r) {kernel_shape = array<i64: 2, 2>} : (tensor<1x2x3x3xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
  // CHECK-NEXT: %bn, %var = onnx.BatchNormalization(%yb, %b, %b, %b, %b) {training_mode = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x3x3xf32>, none, tensor<2xf32>)
  // GENERIC: "onnx.BatchNormalization"(%yb, %b, %b, %b, %b) <{training_mode = 1 : i64, resultSegmentSizes = array<i32: 1, 0, 1>}>
  %bn, %var = onnx.BatchNormalization(%yb, %b, %b, %b, %b) {training_mode = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x3x3xf32>, none, tensor<2xf32>)
  // CHECK-NEXT: func.return %y : tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @tensor_ops
func.func @tensor_ops(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>, %s: tensor<f32>) {
  // CHECK-NEXT: %g = onnx.Gemm(%a, %b) {transB = 1 : i64, alpha = 1.000000e+00 : f32} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %g = onnx.Gemm(%a, %b) {transB = 1 : i64, alpha = 1.0 : f32} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  // Variadic inputs.
  // CHECK-NEXT: %c = onnx.Concat(%a, %b, %a) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<8x3xf32>
  %c = onnx.Concat(%a, %b, %a) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<8x3xf32>
  // CHECK-NEXT: %sum = onnx.Sum(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %sum = onnx.Sum(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // Variadic results.
  // CHECK-NEXT: %s0, %s1, %s2 = onnx.Split(%c) {axis = 0 : i64, num_outputs = 3 : i64} : (tensor<8x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<2x3xf32>)
  %s0, %s1, %s2 = onnx.Split(%c) {axis = 0 : i64, num_outputs = 3 : i64} : (tensor<8x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<2x3xf32>)
  // Optional inputs: absent in the middle, absent at the end, all present.
  // CHECK-NEXT: %c1 = onnx.Clip(%a, none, %s) : (tensor<2x3xf32>, none, tensor<f32>) -> tensor<2x3xf32>
  // GENERIC: "onnx.Clip"(%a, %s) <{operandSegmentSizes = array<i32: 1, 0, 1>}>
  %c1 = onnx.Clip(%a, none, %s) : (tensor<2x3xf32>, none, tensor<f32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %c2 = onnx.Clip(%a, %s) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  // GENERIC: "onnx.Clip"(%a, %s) <{operandSegmentSizes = array<i32: 1, 1, 0>}>
  %c2 = onnx.Clip(%a, %s) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %c3 = onnx.Clip(%a, %s, %s) : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
  %c3 = onnx.Clip(%a, %s, %s) : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %t = onnx.Transpose(%a) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %t = onnx.Transpose(%a) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // CHECK-NEXT: %cast = onnx.Cast(%a) {to = 7 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi64>
  %cast = onnx.Cast(%a) {to = 7 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi64>
  // CHECK-NEXT: %lr = onnx.LeakyRelu(%a) {alpha = 1.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %lr = onnx.LeakyRelu(%a) {alpha = 0.1 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %rs = onnx.Resize(%a) {mode = "linear"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %rs = onnx.Resize(%a) {mode = "linear"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %sn = onnx.StringNormalizer(%a) {stopwords = ["a", "b"]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %sn = onnx.StringNormalizer(%a) {stopwords = ["a", "b"]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<2xf32>, tensor<2x2xf32>) {
  // CHECK-NEXT: %k = onnx.Constant() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
  %k = onnx.Constant() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  // CHECK-NEXT: %w = onnx.Constant() {value = dense_resource<weights> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %w = onnx.Constant() {value = dense_resource<weights> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  // CHECK-NEXT: %z = onnx.ConstantOfShape(%k) {value = dense<0.000000e+00> : tensor<1xf32>} : (tensor<2xf32>) -> tensor<2x2xf32>
  %z = onnx.ConstantOfShape(%k) {value = dense<0.0> : tensor<1xf32>} : (tensor<2xf32>) -> tensor<2x2xf32>
  func.return %k, %w : tensor<2xf32>, tensor<2x2xf32>
}

// CHECK:      {-#
// CHECK-NEXT:   dialect_resources: {
// CHECK-NEXT:     builtin: {
// CHECK-NEXT:       weights: "0x100000000000803F0000004000004040000080C0"
{-#
  dialect_resources: {
    builtin: {
      weights: "0x100000000000803F0000004000004040000080C0"
    }
  }
#-}
