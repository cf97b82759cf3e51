// RUN: zant-opt %s -p onnx-to-uop | filecheck %s

// Slice (negative steps, clamped ends), Split and Expand are all views: the chain becomes one
// strided, broadcast view of x (rows 3, 1; column 2, repeated), read by the Neg's only loop nest.

// CHECK-LABEL: func.func @main()
// CHECK:         [[V:%.*]] = uop.view %x : !uop.buffer<20xf32> -> !uop.view<2x3xf32, strides [-10, 0], offset 17>
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 3 {
// CHECK-NEXT:        {{%.*}} = uop.gep [[V]][[[I]], [[J]]] : !uop.view<2x3xf32, strides [-10, 0], offset 17>
// CHECK:             uop.neg
// CHECK-NOT:     uop.range
func.func @main(%x: tensor<4x5xf32>) -> tensor<2x3xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %b = onnx.Constant() {value = dense<[-1, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %e = onnx.Constant() {value = dense<[-100, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a = onnx.Constant() {value = dense<[0, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %s = onnx.Constant() {value = dense<[-2, -2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %v = onnx.Slice(%x, %b, %e, %a, %s) : (tensor<4x5xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2xf32>
  %shape = onnx.Constant() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %p, %q = onnx.Split(%v) {axis = 1 : i64, num_outputs = 2 : i64} : (tensor<2x2xf32>) -> (tensor<2x1xf32>, tensor<2x1xf32>)
  %w = onnx.Expand(%q, %shape) : (tensor<2x1xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %y = onnx.Neg(%w) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
