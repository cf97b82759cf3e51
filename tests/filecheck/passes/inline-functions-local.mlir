// RUN: zant-opt %s -p inline-functions --print-debuginfo | filecheck %s
// RUN: zant-opt %s -p inline-functions,inline-functions | filecheck %s --check-prefix=TWICE

// Each onnx.call of a model-local function becomes a copy of the callee's body (the body's own
// calls inlined in turn), each op at `call/inner` (onnx.node_name too); the functions then go.
// Loss's SoftmaxCrossEntropyLoss has no lowering but a schema body, which the pass inlines next.

// CHECK-NOT:   onnx.function
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %a = onnx.Constant() {value = dense<2.000000e+00> : tensor<f32>, onnx.node_name = "sa1/alpha"} : () -> tensor<f32> loc("sa1/alpha")
// CHECK-NEXT:    %t = onnx.Mul(%x, %a) {onnx.node_name = "sa1/Mul_1"} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32> loc("sa1/Mul_1")
// CHECK-NEXT:    %y = onnx.Relu(%t) {onnx.node_name = "sa1/act/Relu_0"} : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("sa1/act/Relu_0")
// CHECK-NEXT:    %r = onnx.Add(%y, %b) {onnx.node_name = "sa1/Add_3"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("sa1/Add_3")
// CHECK-NEXT:    %a_1 = onnx.Constant() {{.*}} loc("sa2/alpha")
// CHECK-NEXT:    %t_1 = onnx.Mul(%r, %a_1) {{.*}} loc("sa2/Mul_1")
// CHECK-NEXT:    %y_1 = onnx.Relu(%t_1) {{.*}} loc("sa2/act/Relu_0")
// CHECK-NEXT:    %s = onnx.Add(%y_1, %b) {{.*}} loc("sa2/Add_3")
// CHECK-NOT:     onnx.SoftmaxCrossEntropyLoss
// CHECK:         onnx.LogSoftmax({{.*}}) {axis = 2 : i64, onnx.node_name = "loss/sce/LogSoftmax_3"}
// CHECK:         func.return %s, %l

// TWICE-NOT:   onnx.function
// TWICE-NOT:   onnx.call
// TWICE-LABEL: func.func @main

builtin.module attributes {onnx.opset = 22 : i64} {
  onnx.function @custom.ScaleAdd(%x: tensor<2x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> attributes {domain = "custom", op_type = "ScaleAdd"} {
    %a = onnx.Constant() {value = dense<2.000000e+00> : tensor<f32>, onnx.node_name = "alpha"} : () -> tensor<f32> loc("alpha")
    %t = onnx.Mul(%x, %a) : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32> loc("Mul_1")
    %y = onnx.call @custom.Act(%t) {onnx.node_name = "act"} : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("act")
    %u = onnx.Add(%y, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("Add_3")
    onnx.return %u : tensor<2x4xf32>
  }
  onnx.function @custom.Act(%x: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {domain = "custom", op_type = "Act"} {
    %y = onnx.Relu(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("Relu_0")
    onnx.return %y : tensor<2x4xf32>
  }
  onnx.function @custom.Loss(%x: tensor<2x4x3xf32>, %t: tensor<2x3xi64>) -> tensor<f32> attributes {domain = "custom", op_type = "Loss"} {
    %l = onnx.SoftmaxCrossEntropyLoss(%x, %t) {reduction = "mean", onnx.node_name = "sce"} : (tensor<2x4x3xf32>, tensor<2x3xi64>) -> tensor<f32> loc("sce")
    onnx.return %l : tensor<f32>
  }
  func.func @main(%x: tensor<2x4xf32>, %b: tensor<4xf32>, %p: tensor<2x4x3xf32>, %q: tensor<2x3xi64>) -> (tensor<2x4xf32>, tensor<f32>) {
    %r = onnx.call @custom.ScaleAdd(%x, %b) {onnx.node_name = "sa1"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("sa1")
    %s = onnx.call @custom.ScaleAdd(%r, %b) {onnx.node_name = "sa2"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("sa2")
    %l = onnx.call @custom.Loss(%p, %q) {onnx.node_name = "loss"} : (tensor<2x4x3xf32>, tensor<2x3xi64>) -> tensor<f32> loc("loss")
    func.return %s, %l : tensor<2x4xf32>, tensor<f32>
  }
}
