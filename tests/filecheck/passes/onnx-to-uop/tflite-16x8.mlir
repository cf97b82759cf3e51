// RUN: zant-opt %s -p 'fold-qdq,requant-rounding{mode=tflite},onnx-to-uop' | filecheck %s

// A 16x8 Conv (int16 x, int8 weights, int16 y) in the tflite mode: TFLite's reference 16x8
// requantization, the int64 sum times the multiplier reduced to 16 bits and one rounding
// shift. M = 0.0005 · 0.01 / 0.0011 (the float32 scales in double) is q = 1249445070, e = -7
// (QuantizeMultiplier); m = (q + 2^15) >> 16 = 19065, t = 15 - e = 22.
// CHECK:     %[[M:.*]] = uop.const 19065 : i64
// CHECK:     %[[T:.*]] = uop.const 22 : i64
// CHECK:     %[[P:.*]] = uop.mul %{{.*}}, %[[M]] : i64
// CHECK:     %[[A:.*]] = uop.add %[[P]], %{{.*}} : i64
// CHECK:     uop.shr %[[A]], %[[T]] : i64
func.func @main(%x: tensor<1x1x3x3xi16>) -> tensor<1x1x3x3xi16> {
  %xs = onnx.Constant() {value = dense<0.0005> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<0> : tensor<i16>} : () -> tensor<i16>
  %w = onnx.Constant() {value = dense<[[[[1, -2, 3], [4, 5, -6], [7, 8, 9]]]]> : tensor<1x1x3x3xi8>} : () -> tensor<1x1x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.01> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.0011> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<0> : tensor<i16>} : () -> tensor<i16>
  %fx = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x1x3x3xi16>, tensor<f32>, tensor<i16>) -> tensor<1x1x3x3xf32>
  %fw = onnx.DequantizeLinear(%w, %ws, %wz) : (tensor<1x1x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x3x3xf32>
  %c = onnx.Conv(%fx, %fw) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %y = onnx.QuantizeLinear(%c, %ys, %yz) : (tensor<1x1x3x3xf32>, tensor<f32>, tensor<i16>) -> tensor<1x1x3x3xi16>
  func.return %y : tensor<1x1x3x3xi16>
}
