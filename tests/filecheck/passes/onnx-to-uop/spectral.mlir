// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

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

// -----

// An f32 inverse DFT takes NumPy's single-precision order (pocketfft): 6 = 2·3, a radix-2 pass
// (l1 = 1, ido = 3: column 0 without twiddles, columns 1..2 times the float twiddles
// e^{2πi·i/6}) then a radix-3 pass (l1 = 2, ido = 1) with the constants -1/2 and
// float(sin(2π/3)), between two scratch buffers, then the scale float32(1/6).

// CHECK-LABEL: func.func @main()
// CHECK:         %y_fft0 = uop.define_local "y_fft0" : !uop.buffer<12xf32>
// CHECK-NEXT:    %y_fft1 = uop.define_local "y_fft1" : !uop.buffer<12xf32>
// CHECK-NEXT:    %y_twiddles0 = uop.define_global "constant" 0 "y_twiddles0" value dense<{{\[\[\[}}0.000000e+00, 0.000000e+00], [5.000000e-01, 0.866025388], [-5.000000e-01, 0.866025388]]]> : tensor<1x3x2xf32>
// CHECK-NOT:     y_twiddles1
// CHECK:         uop.range %{{.*}} = 0 to 1 {
// CHECK:           uop.range %{{.*}} = 0 to 6 {
// CHECK:           uop.range %{{.*}} = 0 to 1 {
// CHECK:             uop.add
// CHECK:             uop.sub
// CHECK:             uop.range %{{.*}} = 1 to 3 {
// CHECK:               uop.gep %{{.*}} : !uop.view<1x3x2xf32, strides [6, 2, 1], offset 0>
// CHECK:           uop.range %{{.*}} = 0 to 2 {
// CHECK:             uop.const -5.000000e-01 : f32
// CHECK-NEXT:        uop.const 0.866025388 : f32
// CHECK:           [[SCALE:%.*]] = uop.const 0.166666672 : f32
// CHECK-NEXT:      uop.range %{{.*}} = 0 to 6 {
// CHECK:             uop.mul %{{.*}}, [[SCALE]] : f32
// CHECK-NOT:     f64
func.func @main(%x: tensor<1x6x2xf32>) -> tensor<1x6x2xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %ax = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %y = onnx.DFT(%x, none, %ax) {inverse = 1 : i64} : (tensor<1x6x2xf32>, none, tensor<i64>) -> tensor<1x6x2xf32>
  func.return %y : tensor<1x6x2xf32>
}

// -----

// The forward DFT keeps the f64 sums (NumPy's forward complex64 transform runs in double).

// CHECK-LABEL: func.func @main(
// CHECK-NOT:     y_fft0
// CHECK:         uop.cos %{{.*}} : f64
func.func @main(%x: tensor<1x6x2xf32>) -> tensor<1x6x2xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %ax = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %y = onnx.DFT(%x, none, %ax) : (tensor<1x6x2xf32>, none, tensor<i64>) -> tensor<1x6x2xf32>
  func.return %y : tensor<1x6x2xf32>
}
