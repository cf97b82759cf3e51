// RUN: zant-opt %s --split-input-file --verify-diagnostics

// QLinearAdd's constraints: A, B and C of one 8-bit integer type; per-tensor f32 scales and
// zero points of that type; all eight inputs (fold-qdq gives every zero point).

%a, %s, %z = "test.op"() : () -> (tensor<3xi8>, tensor<f32>, tensor<i8>)
// expected-error@+1 {{onnx.QLinearAdd: input 7 ('C_zero_point') is required}}
%c = onnx.QLinearAdd(%a, %s, %z, %a, %s, %z, %s) : (tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<f32>) -> tensor<3xi8>

// -----

%a, %b, %s, %z = "test.op"() : () -> (tensor<3xi8>, tensor<3xui8>, tensor<f32>, tensor<i8>)
// expected-error@+1 {{onnx.QLinearAdd: A, B and C must have one element type, i8 or ui8 or i16 or ui16}}
%c = onnx.QLinearAdd(%a, %s, %z, %b, %s, %z, %s, %z) : (tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<3xui8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<3xi8>

// -----

%a, %s, %z = "test.op"() : () -> (tensor<3xi32>, tensor<f32>, tensor<i32>)
// expected-error@+1 {{onnx.QLinearAdd: A, B and C must have one element type, i8 or ui8 or i16 or ui16}}
%c = onnx.QLinearAdd(%a, %s, %z, %a, %s, %z, %s, %z) : (tensor<3xi32>, tensor<f32>, tensor<i32>, tensor<3xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<3xi32>

// -----

%a, %s, %ps, %z = "test.op"() : () -> (tensor<3xi8>, tensor<f32>, tensor<3xf32>, tensor<i8>)
// expected-error@+1 {{onnx.QLinearAdd: 'A_scale' and 'A_zero_point' must be one-element tensors of f32 and of i8}}
%c = onnx.QLinearAdd(%a, %ps, %z, %a, %s, %z, %s, %z) : (tensor<3xi8>, tensor<3xf32>, tensor<i8>, tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<3xi8>

// -----

%a, %s, %z, %uz = "test.op"() : () -> (tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<ui8>)
// expected-error@+1 {{onnx.QLinearAdd: 'C_scale' and 'C_zero_point' must be one-element tensors of f32 and of i8}}
%c = onnx.QLinearAdd(%a, %s, %z, %a, %s, %z, %s, %uz) : (tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<3xi8>

// -----

%a, %s, %z = "test.op"() : () -> (tensor<3xi8>, tensor<f64>, tensor<i8>)
// expected-error@+1 {{onnx.QLinearAdd: 'A_scale' and 'A_zero_point' must be one-element tensors of f32 and of i8}}
%c = onnx.QLinearAdd(%a, %s, %z, %a, %s, %z, %s, %z) : (tensor<3xi8>, tensor<f64>, tensor<i8>, tensor<3xi8>, tensor<f64>, tensor<i8>, tensor<f64>, tensor<i8>) -> tensor<3xi8>

// -----

// LookupTable's constraints: an 8-bit X, a [256] table of Y's 8-bit type, Y of X's shape.

%x, %t = "test.op"() : () -> (tensor<3xi16>, tensor<256xi8>)
// expected-error@+1 {{onnx.LookupTable: X must be a tensor of i8 or ui8}}
%y = onnx.LookupTable(%x, %t) : (tensor<3xi16>, tensor<256xi8>) -> tensor<3xi8>

// -----

%x, %t = "test.op"() : () -> (tensor<3xi8>, tensor<256xui8>)
// expected-error@+1 {{onnx.LookupTable: Table and Y must have one element type, i8 or ui8}}
%y = onnx.LookupTable(%x, %t) : (tensor<3xi8>, tensor<256xui8>) -> tensor<3xi8>

// -----

%x, %t = "test.op"() : () -> (tensor<3xi8>, tensor<128xi8>)
// expected-error@+1 {{onnx.LookupTable: Table must have shape [256], got [128]}}
%y = onnx.LookupTable(%x, %t) : (tensor<3xi8>, tensor<128xi8>) -> tensor<3xi8>

// -----

%x, %t = "test.op"() : () -> (tensor<3xi8>, tensor<256xi8>)
// expected-error@+1 {{onnx.LookupTable: X and Y must have one shape}}
%y = onnx.LookupTable(%x, %t) : (tensor<3xi8>, tensor<256xi8>) -> tensor<1x3xi8>

// -----

// QLinearSoftmax: QLinearLeakyRelu's constraints.

%x, %s, %z = "test.op"() : () -> (tensor<3xi8>, tensor<f32>, tensor<ui8>)
// expected-error@+1 {{onnx.QLinearSoftmax: 'X_scale' and 'X_zero_point' must be one-element tensors of f32 and of i8}}
%y = onnx.QLinearSoftmax(%x, %s, %z, %s, %z) : (tensor<3xi8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<3xi8>

// -----

%x, %s, %z = "test.op"() : () -> (tensor<3xi8>, tensor<f32>, tensor<i8>)
// expected-error@+1 {{onnx.QLinearSoftmax: X and Y must have one element type, i8 or ui8 or i16 or ui16}}
%y = onnx.QLinearSoftmax(%x, %s, %z, %s, %z) : (tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<3xui8>

// -----

%x, %s, %z = "test.op"() : () -> (tensor<1x1x2x2xi8>, tensor<f32>, tensor<i8>)
// expected-error@+1 {{onnx.QLinearAveragePool: missing required attribute 'kernel_shape'}}
%y = onnx.QLinearAveragePool(%x, %s, %z, %s, %z) : (tensor<1x1x2x2xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x1x1x1xi8>

// -----

// Guard's condition: one element of i1.

%c = "test.op"() : () -> (tensor<2xi1>)
// expected-error@+1 {{onnx.Guard: Condition must be a one-element tensor of i1}}
onnx.Guard(%c) : (tensor<2xi1>) -> ()

// -----

%c = "test.op"() : () -> (tensor<i64>)
// expected-error@+1 {{onnx.Guard: Condition must be a one-element tensor of i1}}
onnx.Guard(%c) : (tensor<i64>) -> ()

// -----

// QLinearConcat: (X, X_scale, X_zero_point) triples after Y's scale and zero point, every X of
// Y's 8-bit type, per-tensor f32 scales and zero points of that type.

%x, %s, %z = "test.op"() : () -> (tensor<3xi8>, tensor<f32>, tensor<i8>)
// expected-error@+1 {{onnx.QLinearConcat: expected Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) triples}}
%c = onnx.QLinearConcat(%s, %z, %x, %s) {axis = 0 : i64} : (tensor<f32>, tensor<i8>, tensor<3xi8>, tensor<f32>) -> tensor<3xi8>

// -----

%x, %s, %z, %u = "test.op"() : () -> (tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<3xui8>)
// expected-error@+1 {{onnx.QLinearConcat: input 5 must be a tensor of Y's type i8}}
%c = onnx.QLinearConcat(%s, %z, %x, %s, %z, %u, %s, %z) {axis = 0 : i64} : (tensor<f32>, tensor<i8>, tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<3xui8>, tensor<f32>, tensor<i8>) -> tensor<6xi8>

// -----

%x, %s, %z, %ps = "test.op"() : () -> (tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<3xf32>)
// expected-error@+1 {{onnx.QLinearConcat: inputs 3 and 4 must be one-element tensors of f32 and of i8}}
%c = onnx.QLinearConcat(%s, %z, %x, %ps, %z) {axis = 0 : i64} : (tensor<f32>, tensor<i8>, tensor<3xi8>, tensor<3xf32>, tensor<i8>) -> tensor<3xi8>

// -----

// QGemm: A, B and their zero points 8-bit; C i32; with y_scale an 8-bit Y of its zero point's
// type, without it an f32 Y and no zero point.

%a, %s, %z, %b, %bs, %bz = "test.op"() : () -> (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<4x3xi8>, tensor<f32>, tensor<i8>)
// expected-error@+1 {{onnx.QGemm: without 'y_scale', Y is f32 and 'y_zero_point' absent}}
%y = onnx.QGemm(%a, %s, %z, %b, %bs, %bz) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<4x3xi8>, tensor<f32>, tensor<i8>) -> tensor<1x3xi8>

// -----

%a, %s, %z, %b, %bs, %bz, %c = "test.op"() : () -> (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<4x3xi8>, tensor<f32>, tensor<i8>, tensor<3xf32>)
// expected-error@+1 {{onnx.QGemm: C must be a tensor of i32}}
%y = onnx.QGemm(%a, %s, %z, %b, %bs, %bz, %c) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<4x3xi8>, tensor<f32>, tensor<i8>, tensor<3xf32>) -> tensor<1x3xf32>

// -----

%a, %s, %z, %b, %bs, %bz, %uz = "test.op"() : () -> (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<4x3xi8>, tensor<f32>, tensor<i8>, tensor<ui8>)
// expected-error@+1 {{onnx.QGemm: 'y_scale' and 'y_zero_point' must be one-element tensors of f32 and of Y's type, i8 or ui8}}
%y = onnx.QGemm(%a, %s, %z, %b, %bs, %bz, none, %s, %uz) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<4x3xi8>, tensor<f32>, tensor<i8>, none, tensor<f32>, tensor<ui8>) -> tensor<1x3xi8>

// -----

%a, %s, %z, %b, %bs, %bz = "test.op"() : () -> (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<4x3xi8>, tensor<3xf32>, tensor<i8>)
// expected-error@+1 {{onnx.QGemm: 'b_scale' must be a tensor of f32 of the shape of 'b_zero_point'}}
%y = onnx.QGemm(%a, %s, %z, %b, %bs, %bz) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<4x3xi8>, tensor<3xf32>, tensor<i8>) -> tensor<1x3xf32>

// -----

// QLinearMul stays 8-bit (QLinearAdd takes 16-bit too).
%a, %s, %z = "test.op"() : () -> (tensor<3xi16>, tensor<f32>, tensor<i16>)
// expected-error@+1 {{onnx.QLinearMul: A, B and C must have one element type, i8 or ui8}}
%c = onnx.QLinearMul(%a, %s, %z, %a, %s, %z, %s, %z) : (tensor<3xi16>, tensor<f32>, tensor<i16>, tensor<3xi16>, tensor<f32>, tensor<i16>, tensor<f32>, tensor<i16>) -> tensor<3xi16>
