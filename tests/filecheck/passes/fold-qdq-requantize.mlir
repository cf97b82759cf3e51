// RUN: zant-opt %s --split-input-file -p fold-qdq | filecheck %s

// Q(DQ(x)) with different parameters requantizes, ties to even as QuantizeLinear rounds: a
// window sum of one element (count 1, weight scale 1) over x viewed as [1, 6, 1], which
// onnx-to-uop requantizes by the exact x_scale / y_scale (not QLinearLeakyRelu: half up).

// CHECK-LABEL: func.func @main
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %[[COLUMN:.*]] = onnx.Reshape(%x, %shape) : (tensor<2x3xi8>, tensor<3xi64>) -> tensor<1x6x1xi8>
// CHECK:         %[[W:.*]] = onnx.QLinearConv(%[[COLUMN]], %xs, %xz, %ones, %window, %zero, %ys, %yz) {group = 6 : i64, zant.fixed_point, zant.average_count = 1 : i64}
// CHECK-NEXT:    %shape_1 = onnx.Constant() {value = dense<[2, 3]> : tensor<2xi64>}
// CHECK-NEXT:    %y = onnx.Reshape(%[[W]], %shape_1) : (tensor<1x6x1xi8>, tensor<2xi64>) -> tensor<2x3xi8>
// CHECK-NEXT:    func.return %y
func.func @main(%x: tensor<2x3xi8>) -> tensor<2x3xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  %y = onnx.QuantizeLinear(%f, %ys, %yz) : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  func.return %y : tensor<2x3xi8>
}

// -----

// ReLU6 (Clip(0, 6)) between a DQ and a Q of different parameters: requantize (ties to even: the
// one-element window sum), then an int8 Clip with bounds quantized in y's parameters
// (0 → -128, 6 → 6 / 0.05 - 128 = -8).

// CHECK-LABEL: func.func @main
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK-NOT:     onnx.QLinearLeakyRelu
// CHECK:         %[[W:.*]] = onnx.QLinearConv({{.*}}, %xs, %xz, %ones, %window, %zero, %ys, %yz) {group = 8 : i64, zant.fixed_point, zant.average_count = 1 : i64}
// CHECK:         %[[R:.*]] = onnx.Reshape(%[[W]], %{{.*}}) : (tensor<1x8x1xi8>, tensor<4xi64>) -> tensor<1x2x2x2xi8>
// CHECK-DAG:     %[[LO:.*]] = onnx.Constant() {value = dense<-128> : tensor<i8>}
// CHECK-DAG:     %[[HI:.*]] = onnx.Constant() {value = dense<-8> : tensor<i8>}
// CHECK:         %[[C:.*]] = onnx.Clip(%[[R]], %[[LO]], %[[HI]]) : (tensor<1x2x2x2xi8>, tensor<i8>, tensor<i8>) -> tensor<1x2x2x2xi8>
// CHECK-NEXT:    func.return %[[C]]
func.func @main(%x: tensor<1x2x2x2xi8>) -> tensor<1x2x2x2xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %lo = onnx.Constant() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %hi = onnx.Constant() {value = dense<6.0> : tensor<f32>} : () -> tensor<f32>
  %f = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x2x2x2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xf32>
  %c = onnx.Clip(%f, %lo, %hi) : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %y = onnx.QuantizeLinear(%c, %ys, %yz) : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
  func.return %y : tensor<1x2x2x2xi8>
}

// -----

// DQ → Mul → Q of uint8 tensors becomes com.microsoft's QLinearMul.

// CHECK-LABEL: func.func @main
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK-NOT:     onnx.Mul
// CHECK:         %y = onnx.QLinearMul(%a, %as, %az, %b, %bs, %bz, %ys, %yz) : (tensor<4xui8>, tensor<f32>, tensor<ui8>, tensor<4xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
// CHECK-NEXT:    func.return %y
func.func @main(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %as = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %az = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %bs = onnx.Constant() {value = dense<0.02> : tensor<f32>} : () -> tensor<f32>
  %bz = onnx.Constant() {value = dense<0> : tensor<ui8>} : () -> tensor<ui8>
  %ys = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<10> : tensor<ui8>} : () -> tensor<ui8>
  %af = onnx.DequantizeLinear(%a, %as, %az) : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  %bf = onnx.DequantizeLinear(%b, %bs, %bz) : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  %m = onnx.Mul(%af, %bf) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = onnx.QuantizeLinear(%m, %ys, %yz) : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  func.return %y : tensor<4xui8>
}

// -----

// QOperator form: ReLU6's float output feeds both a QuantizeLinear and a residual Add. The Add
// reads the DQ of an int8 Clip in the activation's own parameters (x's: 6 → 6 / 0.1 + 3 = 63)
// and becomes a QLinearAdd; ReLU6 under its Q requantizes and clips; no float op is left.

// CHECK-LABEL: func.func @main
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK-NOT:     onnx.Add(
// CHECK-DAG:     %[[OWN:.*]] = onnx.Clip(%x, %{{.*}}, %{{.*}}) : (tensor<4xi8>, tensor<i8>, tensor<i8>) -> tensor<4xi8>
// CHECK-DAG:     %[[W:.*]] = onnx.QLinearConv({{.*}}, %xs, %xz, %{{.*}}, %{{.*}}, %{{.*}}, %ys, %yz) {group = 4 : i64, zant.fixed_point, zant.average_count = 1 : i64}
// CHECK-DAG:     %[[R:.*]] = onnx.Reshape(%[[W]], %{{.*}}) : (tensor<1x4x1xi8>, tensor<1xi64>) -> tensor<4xi8>
// CHECK-DAG:     %[[Q:.*]] = onnx.Clip(%[[R]], %{{.*}}, %{{.*}}) : (tensor<4xi8>, tensor<i8>, tensor<i8>) -> tensor<4xi8>
// CHECK-DAG:     %[[SUM:.*]] = onnx.QLinearAdd(%[[OWN]], %xs, %xz, %r, %rs, %rz, %ss, %sz)
// CHECK:         func.return %[[Q]], %[[SUM]]
func.func @main(%x: tensor<4xi8>, %r: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi8>) {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %rs = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %rz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ss = onnx.Constant() {value = dense<0.3> : tensor<f32>} : () -> tensor<f32>
  %sz = onnx.Constant() {value = dense<1> : tensor<i8>} : () -> tensor<i8>
  %lo = onnx.Constant() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %hi = onnx.Constant() {value = dense<6.0> : tensor<f32>} : () -> tensor<f32>
  %f = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  %c = onnx.Clip(%f, %lo, %hi) : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  %q = onnx.QuantizeLinear(%c, %ys, %yz) : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  %rf = onnx.DequantizeLinear(%r, %rs, %rz) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  %a = onnx.Add(%c, %rf) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = onnx.QuantizeLinear(%a, %ss, %sz) : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  func.return %q, %s : tensor<4xi8>, tensor<4xi8>
}
