// RUN: %python %inputs/make_model.py qoperator %t.onnx
// RUN: zant-opt %t.onnx | filecheck %s

// onnxruntime's com.microsoft QLinear ops import as themselves (Inputs/make_model.py qoperator),
// typed from their definitions (the float op's shape, the output zero point's type; a QGemm
// without an output scale is f32). A zero point the node leaves out (QLinearAdd's C_zero_point,
// QLinearConcat's for `add`) is a constant 0 of its tensor's type. `fold-qoperator` lowers them.

// CHECK:      %add_zero_point = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
// CHECK-NEXT: %add = onnx.QLinearAdd(%sig, %s1, %z1, %leaky, %s2, %z2, %s3, %add_zero_point) {onnx.node_name = "add"} : (tensor<1x4x4x4xi8>, tensor<f32>, tensor<i8>, tensor<1x4x4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x4x4xi8>
// CHECK-NEXT: %cat_zero_point = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
// CHECK-NEXT: %cat = onnx.QLinearConcat(%s4, %z4, %add, %s3, %cat_zero_point, %leaky, %s2, %z2) {axis = 1 : i64, onnx.node_name = "cat"} : {{.*}} -> tensor<1x8x4x4xi8>
// CHECK-NEXT: %pool = onnx.QLinearAveragePool(%cat, %s4, %z4, %s5, %z5) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, onnx.node_name = "pool"} : {{.*}} -> tensor<1x8x2x2xi8>
// CHECK-NEXT: %gap = onnx.QLinearGlobalAveragePool(%pool, %s5, %z5, %s6, %z6) {channels_last = 0 : i64, onnx.node_name = "gap"} : {{.*}} -> tensor<1x8x1x1xi8>
// CHECK-NEXT: %flat = onnx.Flatten(%gap)
// CHECK-NEXT: %gemm = onnx.QGemm(%flat, %s6, %z6, %w, %ws, %wz, %c, %s7, %z7) {transB = 1 : i64, onnx.node_name = "gemm"} : {{.*}} -> tensor<1x3xi8>
// CHECK-NEXT: %logits = onnx.QGemm(%flat, %s6, %z6, %w, %ws, %wz, %c) {transB = 1 : i64, onnx.node_name = "logits"} : {{.*}} -> tensor<1x3xf32>
// CHECK-NEXT: %softmax = onnx.QLinearSoftmax(%gemm, %s7, %z7, %s8, %z8) {axis = -1 : i64, opset = 12 : i64, onnx.node_name = "softmax"}
