// RUN: zant-opt %s --split-input-file -p fold-qdq | filecheck %s

// Data movement between a DQ and a Q of equal parameters runs on the 8-bit tensor.

// CHECK-LABEL: func.func @transpose
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %y = onnx.Transpose(%x) {perm = array<i64: 0, 2, 1>} : (tensor<1x2x3xi8>) -> tensor<1x3x2xi8>
// CHECK-NEXT:    func.return %y
func.func @transpose(%x: tensor<1x2x3xi8>) -> tensor<1x3x2xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x3xf32>
  %t = onnx.Transpose(%f) {perm = array<i64: 0, 2, 1>} : (tensor<1x2x3xf32>) -> tensor<1x3x2xf32>
  %y = onnx.QuantizeLinear(%t, %s, %z) : (tensor<1x3x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x2xi8>
  func.return %y : tensor<1x3x2xi8>
}

// -----

// Pad's constant value is quantized in x's parameters: 0.37 / 0.05 + 3 = 10.4 → 10; absent,
// it is x's zero point (a float 0).

// CHECK-LABEL: func.func @pad
// CHECK:         %[[V:.*]] = onnx.Constant() {value = dense<10> : tensor<i8>}
// CHECK:         %[[A:.*]] = onnx.Pad(%x, %pads, %[[V]]) : (tensor<1x4xi8>, tensor<4xi64>, tensor<i8>) -> tensor<1x6xi8>
// CHECK:         %[[Z:.*]] = onnx.Constant() {value = dense<3> : tensor<i8>}
// CHECK:         %[[B:.*]] = onnx.Pad(%x, %pads, %[[Z]]) : (tensor<1x4xi8>, tensor<4xi64>, tensor<i8>) -> tensor<1x6xi8>
// CHECK:         func.return %[[A]], %[[B]]
func.func @pad(%x: tensor<1x4xi8>) -> (tensor<1x6xi8>, tensor<1x6xi8>) {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %pads = onnx.Constant() {value = dense<[0, 1, 0, 1]> : tensor<4xi64>} : () -> tensor<4xi64>
  %v = onnx.Constant() {value = dense<0.37> : tensor<f32>} : () -> tensor<f32>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4xf32>
  %p = onnx.Pad(%f, %pads, %v) : (tensor<1x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<1x6xf32>
  %a = onnx.QuantizeLinear(%p, %s, %z) : (tensor<1x6xf32>, tensor<f32>, tensor<i8>) -> tensor<1x6xi8>
  %f2 = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4xf32>
  %p2 = onnx.Pad(%f2, %pads) : (tensor<1x4xf32>, tensor<4xi64>) -> tensor<1x6xf32>
  %b = onnx.QuantizeLinear(%p2, %s, %z) : (tensor<1x6xf32>, tensor<f32>, tensor<i8>) -> tensor<1x6xi8>
  func.return %a, %b : tensor<1x6xi8>, tensor<1x6xi8>
}

// -----

// Different parameters: Slice on uint8, then a requantize that rounds ties to even as DQ → Q
// does: a window sum of one element (count 1, weight scale 1) over the codes viewed as
// [1, 3, 1], not QLinearLeakyRelu (which rounds them half up).

// CHECK-LABEL: func.func @slice_requantized
// CHECK:         %[[S:.*]] = onnx.Slice(%x, %starts, %ends) : (tensor<6xui8>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xui8>
// CHECK-NEXT:    %shape = onnx.Constant() {value = dense<[1, 3, 1]> : tensor<3xi64>}
// CHECK-NEXT:    %[[COLUMN:.*]] = onnx.Reshape(%[[S]], %shape) : (tensor<3xui8>, tensor<3xi64>) -> tensor<1x3x1xui8>
// CHECK-NEXT:    %ones = onnx.Constant() {value = dense<1> : tensor<3x1x1xi8>}
// CHECK-NEXT:    %window = onnx.Constant() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %zero = onnx.Constant() {value = dense<0> : tensor<i8>}
// CHECK-NEXT:    %[[R:.*]] = onnx.QLinearConv(%[[COLUMN]], %xs, %xz, %ones, %window, %zero, %ys, %yz) {group = 3 : i64, zant.fixed_point, zant.average_count = 1 : i64}
// CHECK-NEXT:    %shape_1 = onnx.Constant() {value = dense<3> : tensor<1xi64>}
// CHECK-NEXT:    %y = onnx.Reshape(%[[R]], %shape_1) : (tensor<1x3x1xui8>, tensor<1xi64>) -> tensor<3xui8>
// CHECK-NOT:     onnx.QLinearLeakyRelu
func.func @slice_requantized(%x: tensor<6xui8>) -> tensor<3xui8> {
  %xs = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %ys = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<100> : tensor<ui8>} : () -> tensor<ui8>
  %starts = onnx.Constant() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %ends = onnx.Constant() {value = dense<[4]> : tensor<1xi64>} : () -> tensor<1xi64>
  %f = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<6xui8>, tensor<f32>, tensor<ui8>) -> tensor<6xf32>
  %s = onnx.Slice(%f, %starts, %ends) : (tensor<6xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xf32>
  %y = onnx.QuantizeLinear(%s, %ys, %yz) : (tensor<3xf32>, tensor<f32>, tensor<ui8>) -> tensor<3xui8>
  func.return %y : tensor<3xui8>
}

// -----

// Resize: nearest runs on int8 (the absent roi stays absent); linear interpolates, so it
// is an int8 Resize that requantizes its integer sum (fold-qdq-resize.mlir).

// CHECK-LABEL: func.func @resize
// CHECK:         %[[N:.*]] = onnx.Resize(%x, none, %scales) {mode = "nearest"} : (tensor<1x1x2x2xi8>, none, tensor<4xf32>) -> tensor<1x1x4x4xi8>
// CHECK-NEXT:    onnx.Resize(%x, none, %scales) {mode = "linear", zant.requantize = [3 : i64, 3 : i64, 1.000000e+00 : f64]} : (tensor<1x1x2x2xi8>, none, tensor<4xf32>) -> tensor<1x1x4x4xi8>
// CHECK-NOT:     onnx.DequantizeLinear
func.func @resize(%x: tensor<1x1x2x2xi8>) -> (tensor<1x1x4x4xi8>, tensor<1x1x4x4xi8>) {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %scales = onnx.Constant() {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x1x2x2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x2x2xf32>
  %n = onnx.Resize(%f, none, %scales) {mode = "nearest"} : (tensor<1x1x2x2xf32>, none, tensor<4xf32>) -> tensor<1x1x4x4xf32>
  %a = onnx.QuantizeLinear(%n, %s, %z) : (tensor<1x1x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x1x4x4xi8>
  %f2 = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x1x2x2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x2x2xf32>
  %l = onnx.Resize(%f2, none, %scales) {mode = "linear"} : (tensor<1x1x2x2xf32>, none, tensor<4xf32>) -> tensor<1x1x4x4xf32>
  %b = onnx.QuantizeLinear(%l, %s, %z) : (tensor<1x1x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x1x4x4xi8>
  func.return %a, %b : tensor<1x1x4x4xi8>, tensor<1x1x4x4xi8>
}

// -----

// Concat of inputs with different scales: each input whose parameters differ from the
// output's is requantized to them first (ties to even: a one-element window sum).

// CHECK-LABEL: func.func @concat
// CHECK:         %[[COLUMN:.*]] = onnx.Reshape(%b, %shape) : (tensor<1x2xi8>, tensor<3xi64>) -> tensor<1x2x1xi8>
// CHECK:         %[[W:.*]] = onnx.QLinearConv(%[[COLUMN]], %bs, %z, %ones, %window, %zero, %s, %z) {group = 2 : i64, zant.fixed_point, zant.average_count = 1 : i64}
// CHECK-NEXT:    %shape_1 = onnx.Constant() {value = dense<[1, 2]> : tensor<2xi64>}
// CHECK-NEXT:    %[[R:.*]] = onnx.Reshape(%[[W]], %shape_1) : (tensor<1x2x1xi8>, tensor<2xi64>) -> tensor<1x2xi8>
// CHECK-NEXT:    %y = onnx.Concat(%a, %[[R]]) {axis = 1 : i64} : (tensor<1x2xi8>, tensor<1x2xi8>) -> tensor<1x4xi8>
// CHECK-NEXT:    func.return %y
func.func @concat(%a: tensor<1x2xi8>, %b: tensor<1x2xi8>) -> tensor<1x4xi8> {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %bs = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %fa = onnx.DequantizeLinear(%a, %s, %z) : (tensor<1x2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2xf32>
  %fb = onnx.DequantizeLinear(%b, %bs, %z) : (tensor<1x2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2xf32>
  %c = onnx.Concat(%fa, %fb) {axis = 1 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x4xf32>
  %y = onnx.QuantizeLinear(%c, %s, %z) : (tensor<1x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x4xi8>
  func.return %y : tensor<1x4xi8>
}

// -----

// Sub of two DQ'd tensors: QLinearAdd with B's scale negated; Max of two differently quantized
// tensors: the one off y's parameters requantized, then Max on int8.

// CHECK-LABEL: func.func @sub_max
// CHECK:         %[[NEG:.*]] = onnx.Constant() {value = dense<-2.000000e-01> : tensor<f32>}
// CHECK-NEXT:    %d = onnx.QLinearAdd(%a, %s, %z, %b, %[[NEG]], %z, %s, %z)
// CHECK:         %[[W:.*]] = onnx.QLinearConv(%{{.*}}, %bs, %z, %ones, %window, %zero, %s, %z) {group = 3 : i64, zant.fixed_point, zant.average_count = 1 : i64}
// CHECK:         %[[R:.*]] = onnx.Reshape(%[[W]], %shape_1) : (tensor<1x3x1xi8>, tensor<1xi64>) -> tensor<3xi8>
// CHECK-NEXT:    %m = onnx.Max(%a, %[[R]]) : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
func.func @sub_max(%a: tensor<3xi8>, %b: tensor<3xi8>) -> (tensor<3xi8>, tensor<3xi8>) {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %bs = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %fa = onnx.DequantizeLinear(%a, %s, %z) : (tensor<3xi8>, tensor<f32>, tensor<i8>) -> tensor<3xf32>
  %fb = onnx.DequantizeLinear(%b, %bs, %z) : (tensor<3xi8>, tensor<f32>, tensor<i8>) -> tensor<3xf32>
  %df = onnx.Sub(%fa, %fb) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %d = onnx.QuantizeLinear(%df, %s, %z) : (tensor<3xf32>, tensor<f32>, tensor<i8>) -> tensor<3xi8>
  %mf = onnx.Max(%fa, %fb) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %m = onnx.QuantizeLinear(%mf, %s, %z) : (tensor<3xf32>, tensor<f32>, tensor<i8>) -> tensor<3xi8>
  func.return %d, %m : tensor<3xi8>, tensor<3xi8>
}
