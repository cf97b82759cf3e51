// RUN: zant-opt %s --split-input-file -p recognize-quantize | filecheck %s

// PT2E / dynamo: Div → Round → Add → Clip(type range) → Cast(int8) is QuantizeLinear; Cast(float)
// → Sub → Mul is DequantizeLinear.
// CHECK-LABEL: func.func @div_chain
// CHECK-NOT:     onnx.Round
// CHECK:         %q = onnx.QuantizeLinear(%x, %scale, %zero_point) : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
// CHECK:         %y = onnx.DequantizeLinear(%q, %{{.*}}, %{{.*}}) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
// CHECK-NOT:     onnx.Cast
func.func @div_chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %zp = onnx.Constant() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %lo = onnx.Constant() {value = dense<-128.0> : tensor<f32>} : () -> tensor<f32>
  %hi = onnx.Constant() {value = dense<127.0> : tensor<f32>} : () -> tensor<f32>
  %d = onnx.Div(%x, %s) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %r = onnx.Round(%d) : (tensor<4xf32>) -> tensor<4xf32>
  %a = onnx.Add(%r, %zp) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %c = onnx.Clip(%a, %lo, %hi) : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  %q = onnx.Cast(%c) {to = 3 : i64} : (tensor<4xf32>) -> tensor<4xi8>
  %f = onnx.Cast(%q) {to = 1 : i64} : (tensor<4xi8>) -> tensor<4xf32>
  %u = onnx.Sub(%f, %zp) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %y = onnx.Mul(%u, %s) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// Mul by a power of two (1 / 0.25) and Max/Min bounds narrower than uint8: a QuantizeLinear
// and an integer Clip to [0, 15].
// CHECK-LABEL: func.func @mul_power_of_two
// CHECK:         %[[Q:.*]] = onnx.QuantizeLinear(%x, %scale, %zero_point) : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
// CHECK:         %q = onnx.Clip(%[[Q]], %lo, %hi) : (tensor<4xui8>, tensor<ui8>, tensor<ui8>) -> tensor<4xui8>
// CHECK-NOT:     onnx.Round
func.func @mul_power_of_two(%x: tensor<4xf32>) -> tensor<4xui8> {
  %c = onnx.Constant() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
  %lo = onnx.Constant() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %hi = onnx.Constant() {value = dense<15.0> : tensor<f32>} : () -> tensor<f32>
  %m = onnx.Mul(%x, %c) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %r = onnx.Round(%m) : (tensor<4xf32>) -> tensor<4xf32>
  %a = onnx.Max(%r, %lo) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = onnx.Min(%a, %hi) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %q = onnx.Cast(%b) {to = 2 : i64} : (tensor<4xf32>) -> tensor<4xui8>
  func.return %q : tensor<4xui8>
}

// -----

// Left alone: Mul by 1/0.05 (not a power of two: x·c can differ from x / s by an ulp), a
// zero point that is not an integer, bounds outside int8.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     onnx.QuantizeLinear
// CHECK-COUNT-3: onnx.Round
func.func @kept(%x: tensor<4xf32>) -> (tensor<4xi8>, tensor<4xi8>, tensor<4xi8>) {
  %c = onnx.Constant() {value = dense<20.0> : tensor<f32>} : () -> tensor<f32>
  %zp = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %lo = onnx.Constant() {value = dense<-128.0> : tensor<f32>} : () -> tensor<f32>
  %hi = onnx.Constant() {value = dense<127.0> : tensor<f32>} : () -> tensor<f32>
  %wide = onnx.Constant() {value = dense<300.0> : tensor<f32>} : () -> tensor<f32>
  %m = onnx.Mul(%x, %c) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %r = onnx.Round(%m) : (tensor<4xf32>) -> tensor<4xf32>
  %k = onnx.Clip(%r, %lo, %hi) : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  %q1 = onnx.Cast(%k) {to = 3 : i64} : (tensor<4xf32>) -> tensor<4xi8>
  %d = onnx.Div(%x, %c) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %r2 = onnx.Round(%d) : (tensor<4xf32>) -> tensor<4xf32>
  %a2 = onnx.Add(%r2, %zp) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %k2 = onnx.Clip(%a2, %lo, %hi) : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  %q2 = onnx.Cast(%k2) {to = 3 : i64} : (tensor<4xf32>) -> tensor<4xi8>
  %r3 = onnx.Round(%d) : (tensor<4xf32>) -> tensor<4xf32>
  %k3 = onnx.Clip(%r3, %lo, %wide) : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  %q3 = onnx.Cast(%k3) {to = 3 : i64} : (tensor<4xf32>) -> tensor<4xi8>
  func.return %q1, %q2, %q3 : tensor<4xi8>, tensor<4xi8>, tensor<4xi8>
}

// -----

// Brevitas QCDQ weights: a float constant's QuantizeLinear and its int4 Clip become an int8
// constant (-8 ≤ w ≤ 7) fold-qdq takes as a weight.
// CHECK-LABEL: func.func @constant_weight
// CHECK-NOT:     onnx.QuantizeLinear
// CHECK-NOT:     onnx.Clip
// CHECK:         %{{.*}} = onnx.Constant() {value = dense<[-8, -2, 0, 7]> : tensor<4xi8>} : () -> tensor<4xi8>
func.func @constant_weight() -> tensor<4xf32> {
  %w = onnx.Constant() {value = dense<[-1.0, -0.25, 0.025, 1.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %s = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %zp = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %lo = onnx.Constant() {value = dense<-8> : tensor<i8>} : () -> tensor<i8>
  %hi = onnx.Constant() {value = dense<7> : tensor<i8>} : () -> tensor<i8>
  %q = onnx.QuantizeLinear(%w, %s, %zp) : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  %c = onnx.Clip(%q, %lo, %hi) : (tensor<4xi8>, tensor<i8>, tensor<i8>) -> tensor<4xi8>
  %y = onnx.DequantizeLinear(%c, %s, %zp) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// dequantize_per_channel: scales [2, 1] along axis 0 of the int8 weight → DequantizeLinear with
// axis 0 and a 1-D scale; a scalar zero point broadcast to it.
// CHECK-LABEL: func.func @per_channel
// CHECK:         %scale = onnx.Constant() {value = dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK:         %zero_point = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
// CHECK:         %y = onnx.DequantizeLinear(%w, %scale, %zero_point) {axis = 0 : i64} : (tensor<2x3xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x3xf32>
func.func @per_channel() -> tensor<2x3xf32> {
  %w = onnx.Constant() {value = dense<[[1, 2, 3], [-4, 5, -6]]> : tensor<2x3xi8>} : () -> tensor<2x3xi8>
  %s = onnx.Constant() {value = dense<[[0.5], [0.25]]> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %f = onnx.Cast(%w) {to = 1 : i64} : (tensor<2x3xi8>) -> tensor<2x3xf32>
  %y = onnx.Mul(%f, %s) : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// A per-channel QuantizeLinear (axis 0) of a constant weight: each row in its own scale.
// CHECK-LABEL: func.func @constant_per_channel
// CHECK:         onnx.Constant() {value = dense<{{\[\[}}2, -4], [1, -2]]> : tensor<2x2xi8>}
// CHECK-NOT:     onnx.QuantizeLinear
func.func @constant_per_channel() -> tensor<2x2xi8> {
  %w = onnx.Constant() {value = dense<[[1.0, -2.0], [1.0, -2.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %s = onnx.Constant() {value = dense<[0.5, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %zp = onnx.Constant() {value = dense<0> : tensor<2xi8>} : () -> tensor<2xi8>
  %q = onnx.QuantizeLinear(%w, %s, %zp) {axis = 0 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x2xi8>
  func.return %q : tensor<2x2xi8>
}
