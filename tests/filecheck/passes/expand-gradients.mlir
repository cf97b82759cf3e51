// RUN: zant-opt %s --split-input-file -p expand-gradients | filecheck %s
// RUN: zant-opt %s --split-input-file -p expand-gradients,fold-constants,dce,onnx-to-uop --check-each-pass 2>&1 >/dev/null | filecheck %s --check-prefix=CHECKED

// ONNX's test_gradient_of_add_and_mul: d = (a + b) * a. Reverse mode from a seed of ones: the
// Mul gives c its share 1 * a and a its share 1 * c, the Add passes c's share to a and b; a's
// two shares are summed. Y's value is the op's last operand (the importer binds the name y).
// CHECK-LABEL: func.func @add_and_mul
// CHECK-NOT:     onnx.training.Gradient
// CHECK:         [[SEED:%.*]] = onnx.Constant() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %dd_db = onnx.Mul([[SEED]], %a)
// CHECK-NEXT:    [[FROM_MUL:%.*]] = onnx.Mul([[SEED]], %c)
// CHECK-NEXT:    %dd_da = onnx.Add([[FROM_MUL]], %dd_db)
// CHECK-NEXT:    func.return %d, %dd_da, %dd_db
// CHECKED-NOT:   differ
builtin.module attributes {onnx.opset = 12 : i64} {
  func.func @add_and_mul(%a: tensor<f32>, %b: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
    %c = onnx.Add(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %d = onnx.Mul(%c, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %dd_da, %dd_db = onnx.training.Gradient(%a, %b, %d) {xs = ["a", "b"], y = "d"} : (tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
    func.return %d, %dd_da, %dd_db : tensor<f32>, tensor<f32>, tensor<f32>
  }
}

// -----

// A broadcast operand's share is summed over the broadcast dimensions and reshaped to its
// shape; Sub negates the second share; an x that y does not depend on gets zeros; the seed
// is shaped like y (the gradient of the sum of its elements).
// CHECK-LABEL: func.func @broadcast
// CHECK:         %dy_dm = onnx.Constant() {value = dense<1.000000e+00> : tensor<2x3xf32>}
// CHECK-NEXT:    [[NEG:%.*]] = onnx.Neg(%dy_dm) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    [[AXES:%.*]] = onnx.Constant() {value = dense<0> : tensor<1xi64>}
// CHECK-NEXT:    [[SUM:%.*]] = onnx.ReduceSum([[NEG]], [[AXES]]) {keepdims = 1 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<1x3xf32>
// CHECK-NEXT:    [[SHAPE:%.*]] = onnx.Constant() {value = dense<3> : tensor<1xi64>}
// CHECK-NEXT:    %dy_dv = onnx.Reshape([[SUM]], [[SHAPE]]) : (tensor<1x3xf32>, tensor<1xi64>) -> tensor<3xf32>
// CHECK-NEXT:    %dy_dz = onnx.Constant() {value = dense<0.000000e+00> : tensor<4xf32>}
// CHECK-NEXT:    func.return %dy_dm, %dy_dv, %dy_dz
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @broadcast(%m: tensor<2x3xf32>, %v: tensor<3xf32>, %z: tensor<4xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>) {
    %y = onnx.Sub(%m, %v) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %dy_dm, %dy_dv, %dy_dz = onnx.training.Gradient(%m, %v, %z, %y) {xs = ["m", "v", "z"], y = "y"} : (tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>)
    func.return %dy_dm, %dy_dv, %dy_dz : tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>
  }
}
