// RUN: zant-opt %s --split-input-file -p inline-functions | filecheck %s
// RUN: zant-opt %s --split-input-file -p inline-functions,inline-functions | filecheck %s

// An op without a lowering that ONNX defines by a function body becomes the body's ops; a body
// calling another function (SoftmaxCrossEntropyLoss → NegativeLogLikelihoodLoss) is inlined
// through, each op located at its node, `Outer/Inner_k`.
// CHECK-LABEL: func.func @softmax_cross_entropy
// CHECK-NOT:     onnx.SoftmaxCrossEntropyLoss
// CHECK-NOT:     onnx.NegativeLogLikelihoodLoss
// CHECK:         onnx.LogSoftmax({{.*}}) {axis = 2 : i64, onnx.node_name = "sce/LogSoftmax_3"} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK:         onnx.GatherElements({{.*}}onnx.node_name = "sce/NegativeLogLikelihoodLoss_7/GatherElements_4"
// CHECK:         %l = onnx.ReduceMean({{.*}}) {keepdims = 0 : i64, {{.*}}} : (tensor<2x3xf32>) -> tensor<f32>
// CHECK-NEXT:    func.return %l : tensor<f32>
builtin.module attributes {onnx.opset = 22 : i64} {
  func.func @softmax_cross_entropy(%x: tensor<2x4x3xf32>, %t: tensor<2x3xi64>) -> tensor<f32> {
    %l = onnx.SoftmaxCrossEntropyLoss(%x, %t) {reduction = "mean", onnx.node_name = "sce"} : (tensor<2x4x3xf32>, tensor<2x3xi64>) -> tensor<f32>
    func.return %l : tensor<f32>
  }
}

// -----

// An attribute the op leaves out is the schema's default (reduction "mean"); the weight is a
// constant operand, which the body reads as it is (no copy).
// CHECK-LABEL: func.func @nll_default_reduction
// CHECK:         %w = onnx.Constant()
// CHECK-NOT:     onnx.NegativeLogLikelihoodLoss
// CHECK:         onnx.Gather(%w, %t)
// CHECK:         %l = onnx.Div({{.*}}) {{.*}} : (tensor<f32>, tensor<f32>) -> tensor<f32>
builtin.module attributes {onnx.opset = 22 : i64} {
  func.func @nll_default_reduction(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
    %w = onnx.Constant() {value = dense<[1.0, 2.0, 0.5, 1.0]> : tensor<4xf32>} : () -> tensor<4xf32>
    %l = onnx.NegativeLogLikelihoodLoss(%x, %t, %w) : (tensor<2x4xf32>, tensor<2xi64>, tensor<4xf32>) -> tensor<f32>
    func.return %l : tensor<f32>
  }
}

// -----

// Attention's body computes the shapes of its reshapes from its inputs' (Shape → Slice →
// Concat): they are folded to constants so that every body value gets a static type.
// CHECK-LABEL: func.func @attention
// CHECK-NOT:     onnx.Attention
// CHECK:         onnx.Softmax({{.*}}) {onnx.node_name = "Attention/Softmax_{{[0-9]+}}"} : (tensor<1x2x3x5xf32>) -> tensor<1x2x3x5xf32>
// CHECK:         %y = onnx.{{[A-Za-z]+}}({{.*}} -> tensor<1x2x3x4xf32>
// CHECK-NEXT:    func.return %y
builtin.module attributes {onnx.opset = 23 : i64} {
  func.func @attention(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32> {
    %y = onnx.Attention(%q, %k, %v) {is_causal = 1 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
    func.return %y : tensor<1x2x3x4xf32>
  }
}

// -----

// An op with a lowering is kept even when ONNX defines it by a body: its kernel is better code.
// CHECK-LABEL: func.func @layer_norm
// CHECK-NEXT:    %y = onnx.LayerNormalization(%x, %s)
// CHECK-NEXT:    func.return %y
builtin.module attributes {onnx.opset = 22 : i64} {
  func.func @layer_norm(%x: tensor<2x4xf32>, %s: tensor<4xf32>) -> tensor<2x4xf32> {
    %y = onnx.LayerNormalization(%x, %s) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    func.return %y : tensor<2x4xf32>
  }
}

// -----

// An f16 op is one operator: its body runs in f32 between casts of its inputs and its result.
// CHECK-LABEL: func.func @attention_f16
// CHECK:         onnx.Cast(%q) {to = 1 : i64, onnx.node_name = "Attention/f32/cast_input0"} : (tensor<1x2x3x4xf16>) -> tensor<1x2x3x4xf32>
// CHECK:         onnx.Softmax({{.*}} : (tensor<1x2x3x5xf32>) -> tensor<1x2x3x5xf32>
// CHECK:         %y = onnx.Cast({{.*}}) {to = 10 : i64, {{.*}}} : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf16>
// CHECK-NEXT:    func.return %y
builtin.module attributes {onnx.opset = 23 : i64} {
  func.func @attention_f16(%q: tensor<1x2x3x4xf16>, %k: tensor<1x2x5x4xf16>, %v: tensor<1x2x5x4xf16>) -> tensor<1x2x3x4xf16> {
    %y = onnx.Attention(%q, %k, %v) : (tensor<1x2x3x4xf16>, tensor<1x2x5x4xf16>, tensor<1x2x5x4xf16>) -> tensor<1x2x3x4xf16>
    func.return %y : tensor<1x2x3x4xf16>
  }
}
