// RUN: zant-opt %s -p onnx-to-uop | filecheck %s

// MelWeightMatrix of constants is a constant table computed by the pass (3 mel bins over the
// 5 bins of an 8-point DFT at 8 kHz); the graph output is a copy of it.

// CHECK-LABEL: func.func @main()
// CHECK-NEXT:    %w = uop.define_global "constant" 0 "w" value dense<{{\[\[}}1.000000e+00, 1.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 1.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<5x3xf32>
// CHECK-NEXT:    uop.define_global "output" 0 "w" : !uop.buffer<15xf32>
// CHECK-NOT:     onnx.
func.func @main() -> tensor<5x3xf32> attributes {onnx.input_names = [], onnx.output_names = ["w"]} {
  %n = onnx.Constant() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %d = onnx.Constant() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
  %r = onnx.Constant() {value = dense<8000> : tensor<i64>} : () -> tensor<i64>
  %lo = onnx.Constant() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %hi = onnx.Constant() {value = dense<4000.0> : tensor<f32>} : () -> tensor<f32>
  %w = onnx.MelWeightMatrix(%n, %d, %r, %lo, %hi) : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<5x3xf32>
  func.return %w : tensor<5x3xf32>
}
