// RUN: zant-opt %s --split-input-file -p fold-pads | filecheck %s

// A zero Pad of the spatial axes joins the Conv's pads (begins, then ends, per axis).
// CHECK-LABEL: func.func @conv
// CHECK-NOT:     onnx.Pad
// CHECK:         %y = onnx.Conv(%x, %w) {pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
func.func @conv(%x: tensor<1x3x9x9xf32>) -> tensor<1x4x6x6xf32> {
  %w = onnx.Constant() {value = dense<1.0> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %pads = onnx.Constant() {value = dense<[0, 0, 1, 2, 0, 0, 2, 1]> : tensor<8xi64>} : () -> tensor<8xi64>
  %xp = onnx.Pad(%x, %pads) : (tensor<1x3x9x9xf32>, tensor<8xi64>) -> tensor<1x3x12x12xf32>
  %y = onnx.Conv(%xp, %w) {pads = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x12x12xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}

// -----

// int8: the Pad's value is the QLinearConv's x zero point, what it pads with itself.
// CHECK-LABEL: func.func @qlinear_conv
// CHECK-NOT:     onnx.Pad
// CHECK:         onnx.QLinearConv(%x, {{.*}}) {pads = array<i64: 1, 1, 1, 1>}
func.func @qlinear_conv(%x: tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xi8> {
  %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %zp = onnx.Constant() {value = dense<-3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<1> : tensor<2x2x3x3xi8>} : () -> tensor<2x2x3x3xi8>
  %wzp = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %pads = onnx.Constant() {value = dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>} : () -> tensor<8xi64>
  %value = onnx.Constant() {value = dense<-3> : tensor<i8>} : () -> tensor<i8>
  %xp = onnx.Pad(%x, %pads, %value) : (tensor<1x2x4x4xi8>, tensor<8xi64>, tensor<i8>) -> tensor<1x2x6x6xi8>
  %y = onnx.QLinearConv(%xp, %s, %zp, %w, %s, %wzp, %s, %zp) : (tensor<1x2x6x6xi8>, tensor<f32>, tensor<i8>, tensor<2x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xi8>
  func.return %y : tensor<1x2x4x4xi8>
}

// -----

// Left alone: a value other than the zero point, padding of the channels, a second use, an
// AveragePool that does not count the padding.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: onnx.Pad
func.func @kept(%x: tensor<1x2x4x4xi8>, %f: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xi8>, tensor<1x2x4x4xf32>, tensor<1x2x6x6xf32>, tensor<1x2x4x4xf32>) {
  %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %zp = onnx.Constant() {value = dense<-3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<1> : tensor<2x2x3x3xi8>} : () -> tensor<2x2x3x3xi8>
  %wf = onnx.Constant() {value = dense<1.0> : tensor<2x4x3x3xf32>} : () -> tensor<2x4x3x3xf32>
  %wzp = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %pads = onnx.Constant() {value = dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>} : () -> tensor<8xi64>
  %cpads = onnx.Constant() {value = dense<[0, 1, 1, 1, 0, 1, 1, 1]> : tensor<8xi64>} : () -> tensor<8xi64>
  %zero = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %xp = onnx.Pad(%x, %pads, %zero) : (tensor<1x2x4x4xi8>, tensor<8xi64>, tensor<i8>) -> tensor<1x2x6x6xi8>
  %y = onnx.QLinearConv(%xp, %s, %zp, %w, %s, %wzp, %s, %zp) : (tensor<1x2x6x6xi8>, tensor<f32>, tensor<i8>, tensor<2x2x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xi8>
  %fc = onnx.Pad(%f, %cpads) : (tensor<1x2x4x4xf32>, tensor<8xi64>) -> tensor<1x4x6x6xf32>
  %c = onnx.Conv(%fc, %wf) : (tensor<1x4x6x6xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x4x4xf32>
  %fp = onnx.Pad(%f, %pads) : (tensor<1x2x4x4xf32>, tensor<8xi64>) -> tensor<1x2x6x6xf32>
  %p = onnx.AveragePool(%fp) {kernel_shape = array<i64: 3, 3>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  %fq = onnx.Pad(%f, %pads) : (tensor<1x2x4x4xf32>, tensor<8xi64>) -> tensor<1x2x6x6xf32>
  %wf2 = onnx.Constant() {value = dense<1.0> : tensor<2x2x3x3xf32>} : () -> tensor<2x2x3x3xf32>
  %q = onnx.Conv(%fq, %wf2) : (tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  func.return %y, %c, %fq, %q : tensor<1x2x4x4xi8>, tensor<1x2x4x4xf32>, tensor<1x2x6x6xf32>, tensor<1x2x4x4xf32>
}

// -----

// An AveragePool counting its padding takes a zero Pad.
// CHECK-LABEL: func.func @average_pool
// CHECK-NOT:     onnx.Pad
// CHECK:         onnx.AveragePool(%f) {count_include_pad = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>}
func.func @average_pool(%f: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %pads = onnx.Constant() {value = dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>} : () -> tensor<8xi64>
  %fp = onnx.Pad(%f, %pads) : (tensor<1x2x4x4xf32>, tensor<8xi64>) -> tensor<1x2x6x6xf32>
  %p = onnx.AveragePool(%fp) {count_include_pad = 1 : i64, kernel_shape = array<i64: 3, 3>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  func.return %p : tensor<1x2x4x4xf32>
}
