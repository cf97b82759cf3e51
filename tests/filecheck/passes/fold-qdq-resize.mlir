// RUN: zant-opt %s --split-input-file -p fold-qdq | filecheck %s

// DQ → Resize (linear or cubic) → Q with constant scales or sizes: the Resize runs on the
// 8-bit tensor, marked zant.requantize = [x zero point, y zero point, x scale / y scale];
// onnx-to-uop interpolates the zero-point-shifted codes with fixed-point weights in int32 and
// requantizes once. The interpolation weights sum to 1, so the zero point passes through.

// CHECK-LABEL: func.func @linear_half_pixel_uint8
// CHECK-NEXT:    %sizes = onnx.Constant() {value = dense<[1, 2, 7, 6]> : tensor<4xi64>} : () -> tensor<4xi64>
// CHECK-NEXT:    %y = onnx.Resize(%x, none, none, %sizes) {mode = "linear", zant.requantize = [131 : i64, 121 : i64, 1.6666667461395264 : f64]} : (tensor<1x2x4x4xui8>, none, none, tensor<4xi64>) -> tensor<1x2x7x6xui8>
// CHECK-NEXT:    func.return %y : tensor<1x2x7x6xui8>
func.func @linear_half_pixel_uint8(%x: tensor<1x2x4x4xui8>) -> tensor<1x2x7x6xui8> {
  %xs = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<131> : tensor<ui8>} : () -> tensor<ui8>
  %ys = onnx.Constant() {value = dense<0.03> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<121> : tensor<ui8>} : () -> tensor<ui8>
  %sizes = onnx.Constant() {value = dense<[1, 2, 7, 6]> : tensor<4xi64>} : () -> tensor<4xi64>
  %f = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %r = onnx.Resize(%f, none, none, %sizes) {mode = "linear"} : (tensor<1x2x4x4xf32>, none, none, tensor<4xi64>) -> tensor<1x2x7x6xf32>
  %y = onnx.QuantizeLinear(%r, %ys, %yz) : (tensor<1x2x7x6xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x7x6xui8>
  func.return %y : tensor<1x2x7x6xui8>
}

// -----

// CHECK-LABEL: func.func @cubic_align_corners_int8
// CHECK-NEXT:    %scales = onnx.Constant() {value = dense<[1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<4xf32>} : () -> tensor<4xf32>
// CHECK-NEXT:    %y = onnx.Resize(%x, none, %scales) {mode = "cubic", coordinate_transformation_mode = "align_corners", zant.requantize = [3 : i64, -7 : i64, 1.6666667461395264 : f64]} : (tensor<1x1x4x4xi8>, none, tensor<4xf32>) -> tensor<1x1x8x8xi8>
// CHECK-NEXT:    func.return %y : tensor<1x1x8x8xi8>
func.func @cubic_align_corners_int8(%x: tensor<1x1x4x4xi8>) -> tensor<1x1x8x8xi8> {
  %xs = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.03> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-7> : tensor<i8>} : () -> tensor<i8>
  %scales = onnx.Constant() {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %f = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x1x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x4x4xf32>
  %r = onnx.Resize(%f, none, %scales) {mode = "cubic", coordinate_transformation_mode = "align_corners"} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>) -> tensor<1x1x8x8xf32>
  %y = onnx.QuantizeLinear(%r, %ys, %yz) : (tensor<1x1x8x8xf32>, tensor<f32>, tensor<i8>) -> tensor<1x1x8x8xi8>
  func.return %y : tensor<1x1x8x8xi8>
}

// -----

// Stays float: tf_crop_and_resize (its extrapolated positions take a float value), and scales
// known only at run time.

// CHECK-LABEL: func.func @stays_float
// CHECK:         onnx.DequantizeLinear
// CHECK-NEXT:    onnx.Resize({{.*}}) {mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x1x4x4xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<1x1x8x8xf32>
// CHECK:         onnx.DequantizeLinear
// CHECK-NEXT:    onnx.Resize({{.*}}) {mode = "linear"} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>) -> tensor<1x1x8x8xf32>
// CHECK-NOT:     zant.requantize
func.func @stays_float(%x: tensor<1x1x4x4xi8>, %runtime: tensor<4xf32>) -> (tensor<1x1x8x8xi8>, tensor<1x1x8x8xi8>) {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %roi = onnx.Constant() {value = dense<[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.2, 1.2]> : tensor<8xf32>} : () -> tensor<8xf32>
  %scales = onnx.Constant() {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x1x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x4x4xf32>
  %c = onnx.Resize(%f, %roi, %scales) {mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x1x4x4xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<1x1x8x8xf32>
  %a = onnx.QuantizeLinear(%c, %s, %z) : (tensor<1x1x8x8xf32>, tensor<f32>, tensor<i8>) -> tensor<1x1x8x8xi8>
  %f2 = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x1x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x4x4xf32>
  %r = onnx.Resize(%f2, none, %runtime) {mode = "linear"} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>) -> tensor<1x1x8x8xf32>
  %b = onnx.QuantizeLinear(%r, %s, %z) : (tensor<1x1x8x8xf32>, tensor<f32>, tensor<i8>) -> tensor<1x1x8x8xi8>
  func.return %a, %b : tensor<1x1x8x8xi8>, tensor<1x1x8x8xi8>
}
