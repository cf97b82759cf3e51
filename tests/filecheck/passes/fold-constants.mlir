// RUN: zant-opt %s --split-input-file -p fold-constants | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'fold-constants{max-elements=8}' | filecheck %s --check-prefix=SMALL

// A shape subgraph: Shape/Size of a statically shaped input, Gather, ReduceProd, Concat, Cast
// and ConstantOfShape of those all fold to onnx.Constant; the Reshape, Add and Mul read the
// graph input, so they stay. Constants left without uses are erased.

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %c = onnx.Constant() {value = dense<[6, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
// CHECK-NEXT:    %f = onnx.Constant() {value = dense<2.400000e+01> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:    %z = onnx.Constant() {value = dense_resource<z> : tensor<6x4xf32>} : () -> tensor<6x4xf32>
// CHECK-NEXT:    %r = onnx.Reshape(%x, %c)
// CHECK-NEXT:    %a = onnx.Add(%r, %z)
// CHECK-NEXT:    %y = onnx.Mul(%a, %f)
// CHECK-NEXT:    func.return %y

// With max-elements=8 the 24-element ConstantOfShape stays an op (its shape operand folds).
// SMALL-LABEL: func.func @main
// SMALL:         %c = onnx.Constant() {value = dense<[6, 4]> : tensor<2xi64>}
// SMALL:         %z = onnx.ConstantOfShape(%c)
func.func @main(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %s = onnx.Shape(%x) : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %idx = onnx.Constant() {value = dense<[0, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %g = onnx.Gather(%s, %idx) {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
  %zero = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %p = onnx.ReduceProd(%g, %zero) {keepdims = 1 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %t = onnx.Shape(%x) {start = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<1xi64>
  %c = onnx.Concat(%p, %t) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %n = onnx.Size(%x) : (tensor<2x3x4xf32>) -> tensor<i64>
  %f = onnx.Cast(%n) {to = 1 : i64} : (tensor<i64>) -> tensor<f32>
  %z = onnx.ConstantOfShape(%c) {value = dense<2.5> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<6x4xf32>
  %r = onnx.Reshape(%x, %c) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  %a = onnx.Add(%r, %z) : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %y = onnx.Mul(%a, %f) : (tensor<6x4xf32>, tensor<f32>) -> tensor<6x4xf32>
  func.return %y : tensor<6x4xf32>
}

// -----

// Range and a multi-output Split of constants fold, one constant per result; Shape honours
// negative start/end. An op reading a graph input (the Add) is never folded.

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %r = onnx.Constant() {value = dense<[1, 3, 5]> : tensor<3xi64>}
// CHECK-NEXT:    %a = onnx.Constant() {value = dense<[1, 3]> : tensor<2xi64>}
// CHECK-NEXT:    %b = onnx.Constant() {value = dense<5> : tensor<1xi64>}
// CHECK-NEXT:    %s = onnx.Constant() {value = dense<[3, 4]> : tensor<2xi64>}
// CHECK-NEXT:    %y = onnx.Add(%x, %r)
// CHECK-NEXT:    func.return %y, %a, %b, %s
func.func @main(%x: tensor<3xi64>, %w: tensor<2x3x4x5xf32>) -> (tensor<3xi64>, tensor<2xi64>, tensor<1xi64>, tensor<2xi64>) {
  %start = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %limit = onnx.Constant() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
  %delta = onnx.Constant() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %r = onnx.Range(%start, %limit, %delta) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  %sizes = onnx.Constant() {value = dense<[2, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a, %b = onnx.Split(%r, %sizes) {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<1xi64>)
  %s = onnx.Shape(%w) {start = -3 : i64, end = -1 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2xi64>
  %y = onnx.Add(%x, %r) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  func.return %y, %a, %b, %s : tensor<3xi64>, tensor<2xi64>, tensor<1xi64>, tensor<2xi64>
}

// -----

// A weight built from constants folds whatever its size: with max-elements=8 the 16-element
// ConstantOfShape and the Mul that scales it still fold, since their only use is a MatMul's B;
// the same value added to the data stays computed.
// SMALL-LABEL: func.func @weight_of_any_size
// SMALL-NOT:     onnx.ConstantOfShape
// SMALL:         %w = onnx.Constant()
// SMALL:         onnx.MatMul(%x, %w)
// SMALL-LABEL: func.func @data_of_that_size
// SMALL:         onnx.ConstantOfShape
func.func @weight_of_any_size(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %shape = onnx.Constant() {value = dense<[4, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %ones = onnx.ConstantOfShape(%shape) {value = dense<1.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<4x4xf32>
  %k = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %w = onnx.Mul(%ones, %k) : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %y = onnx.MatMul(%x, %w) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
func.func @data_of_that_size(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %shape = onnx.Constant() {value = dense<[4, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %ones = onnx.ConstantOfShape(%shape) {value = dense<1.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<4x4xf32>
  %y = onnx.Add(%x, %ones) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}
