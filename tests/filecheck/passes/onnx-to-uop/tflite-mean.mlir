// RUN: zant-opt %s -p 'fold-qdq,requant-rounding{mode=tflite},onnx-to-uop' | filecheck %s
// RUN: zant-opt %s -p 'fold-qdq,onnx-to-uop' | filecheck %s --check-prefix=EXACT

// DQ → GlobalAveragePool → Q between different parameters (tf2onnx's form of TFLite's MEAN):
// in the tflite modes, TFLite's QuantizedMeanOrSum. x_scale / y_scale (the float32 scales in
// double: 4.99999992549...) is q = 1342177260, e = 3 (QuantizeMultiplier); n = 36:
// s = min(floor(log2 36), 32, 31 + 3) = 5, q' = (q << 5) // 36 = 1193046453, e' = 3 - 5 = -2. The centered sum (plus 36 · 128: the
// folded input zero point) times q', plus 2^30, >> 31, then the rounding divide by 2^2.
// CHECK:     %[[Q:.*]] = uop.const 1193046453 : i64
// CHECK:     %[[R:.*]] = uop.const 2 : i32
// CHECK:     uop.mulacc
// CHECK:     uop.mul %{{.*}}, %[[Q]] : i64
// CHECK:     uop.shr %{{.*}}, %[[R]] : i32

// The exact mode keeps ONNX's value, 5 / 36 rounded half to even: no TFLite multiplier.
// EXACT-NOT: 1193046453
func.func @main(%x: tensor<1x2x6x6xi8>) -> tensor<1x2x1x1xi8> {
  %xs = onnx.Constant() {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-100> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x2x6x6xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x6x6xf32>
  %p = onnx.GlobalAveragePool(%f) : (tensor<1x2x6x6xf32>) -> tensor<1x2x1x1xf32>
  %y = onnx.QuantizeLinear(%p, %ys, %yz) : (tensor<1x2x1x1xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x1x1xi8>
  func.return %y : tensor<1x2x1x1xi8>
}
