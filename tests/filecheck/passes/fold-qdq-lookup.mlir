// RUN: zant-opt %s --split-input-file -p fold-qdq | filecheck %s

// An element-wise float op between a per-tensor DQ and Q becomes `onnx.LookupTable`: the 256
// values Q_y(op(DQ_x(v))), v = -128 … 127, computed at compile time by the ONNX reference.
// Sigmoid: DQ(-128) = -6.55, sigmoid = 0.0014 → q = 0 - 128 = 0x80; the blob begins with
// MLIR's 4-byte alignment (16).

// CHECK-LABEL: func.func @sigmoid
// CHECK-NOT:     onnx.DequantizeLinear
// CHECK:         %table = onnx.Constant() {value = dense_resource<table> : tensor<256xi8>{{.*}}} : () -> tensor<256xi8>
// CHECK-NEXT:    %y = onnx.LookupTable(%x, %table) {onnx.node_name = "sig"} : (tensor<1x8xi8>, tensor<256xi8>) -> tensor<1x8xi8>
// CHECK-NEXT:    func.return %y
// CHECK:         table: "0x1000000080808080
func.func @sigmoid(%x: tensor<1x8xi8>) -> tensor<1x8xi8> {
  %xs = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.00390625> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %xs, %xz) : (tensor<1x8xi8>, tensor<f32>, tensor<i8>) -> tensor<1x8xf32>
  %s = onnx.Sigmoid(%f) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %y = onnx.QuantizeLinear(%s, %ys, %yz) {onnx.node_name = "sig"} : (tensor<1x8xf32>, tensor<f32>, tensor<i8>) -> tensor<1x8xi8>
  func.return %y : tensor<1x8xi8>
}

// -----

// uint8, an op with attributes (LeakyRelu, alpha 0.5): DQ(0) = (0 - 128)·0.1 = -12.8, · 0.5 =
// -6.4 → -6.4 / 0.1 + 128 = 64 = 0x40; DQ(1) = -12.7 → 64.5 → 64 (half to even) = 0x40.

// CHECK-LABEL: func.func @leaky_relu_uint8
// CHECK:         %table = onnx.Constant() {value = dense_resource<table{{.*}}> : tensor<256xui8>}
// CHECK-NEXT:    %y = onnx.LookupTable(%x, %table) : (tensor<4xui8>, tensor<256xui8>) -> tensor<4xui8>
// CHECK:         table{{.*}}: "0x10000000404041
func.func @leaky_relu_uint8(%x: tensor<4xui8>) -> tensor<4xui8> {
  %s = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  %l = onnx.LeakyRelu(%f) {alpha = 0.5 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %y = onnx.QuantizeLinear(%l, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  func.return %y : tensor<4xui8>
}

// -----

// A binary op with a constant one-element operand (Div by 2) is element-wise too.

// CHECK-LABEL: func.func @divide_by_constant
// CHECK-NOT:     onnx.Div
// CHECK:         onnx.LookupTable(%x, %table) : (tensor<4xi8>, tensor<256xi8>) -> tensor<4xi8>
func.func @divide_by_constant(%x: tensor<4xi8>) -> tensor<4xi8> {
  %s = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %two = onnx.Constant() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  %d = onnx.Div(%f, %two) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %y = onnx.QuantizeLinear(%d, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  func.return %y : tensor<4xi8>
}

// -----

// Not a table: the second operand is computed at run time, so Div stays float.

// CHECK-LABEL: func.func @divide_by_input
// CHECK:         onnx.DequantizeLinear
// CHECK:         onnx.Div
// CHECK-NOT:     onnx.LookupTable
func.func @divide_by_input(%x: tensor<4xi8>, %d: tensor<f32>) -> tensor<4xi8> {
  %s = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  %q = onnx.Div(%f, %d) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %y = onnx.QuantizeLinear(%q, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  func.return %y : tensor<4xi8>
}

// -----

// Several element-wise ops between one DQ and one Q (SiLU spelled x · sigmoid(x)) are one table.

// CHECK-LABEL: func.func @silu
// CHECK-NOT:     onnx.Sigmoid
// CHECK-NOT:     onnx.Mul
// CHECK:         %y = onnx.LookupTable(%x, %table) : (tensor<4xi8>, tensor<256xi8>) -> tensor<4xi8>
// CHECK-NEXT:    func.return %y
func.func @silu(%x: tensor<4xi8>) -> tensor<4xi8> {
  %s = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  %g = onnx.Sigmoid(%f) : (tensor<4xf32>) -> tensor<4xf32>
  %m = onnx.Mul(%f, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = onnx.QuantizeLinear(%m, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  func.return %y : tensor<4xi8>
}

// -----

// Not one table: the Sigmoid's value is also returned, so it must be computed anyway.

// CHECK-LABEL: func.func @silu_shared
// CHECK:         onnx.Sigmoid
// CHECK-NOT:     onnx.LookupTable
func.func @silu_shared(%x: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xf32>) {
  %s = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %f = onnx.DequantizeLinear(%x, %s, %z) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  %g = onnx.Sigmoid(%f) : (tensor<4xf32>) -> tensor<4xf32>
  %m = onnx.Mul(%f, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = onnx.QuantizeLinear(%m, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  func.return %y, %g : tensor<4xi8>, tensor<4xf32>
}
