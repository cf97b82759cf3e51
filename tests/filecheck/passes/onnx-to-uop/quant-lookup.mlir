// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// LookupTable: a gather from the constant table, the int8 index offset by 128 (uint8: by 0).

// CHECK-LABEL: func.func @main()
// CHECK:         %t = uop.define_global "constant" 0 "t" {{.*}} : !uop.buffer<256xui8>
// CHECK:         [[OFFSET:%.*]] = uop.const 128 : i32
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 3 {
// CHECK-NEXT:        [[PX:%.*]] = uop.gep {{%.*}}[[[I]], [[J]]]
// CHECK-NEXT:        [[X:%.*]] = uop.load [[PX]] : i8
// CHECK-NEXT:        [[W:%.*]] = uop.cast [[X]] : i8 to i32
// CHECK-NEXT:        [[K:%.*]] = uop.add [[W]], [[OFFSET]] : i32
// CHECK-NEXT:        [[IDX:%.*]] = uop.cast [[K]] : i32 to index
// CHECK-NEXT:        [[PT:%.*]] = uop.gep %t[[[IDX]]] : !uop.buffer<256xui8>
// CHECK-NEXT:        [[Y:%.*]] = uop.load [[PT]] : ui8
// CHECK-NEXT:        [[PY:%.*]] = uop.gep {{%.*}}[[[I]], [[J]]]
// CHECK-NEXT:        uop.store [[Y]], [[PY]] : ui8
func.func @main(%x: tensor<2x3xi8>) -> tensor<2x3xui8> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %t = onnx.Constant() {value = dense<7> : tensor<256xui8>} : () -> tensor<256xui8>
  %y = onnx.LookupTable(%x, %t) : (tensor<2x3xi8>, tensor<256xui8>) -> tensor<2x3xui8>
  func.return %y : tensor<2x3xui8>
}

// -----

// QLinearSoftmax, integer only, per row: the maximum in i32, exp values from an int32 table
// indexed by max - x, their sum S, then round(e · R / (S · 2^16)) + zero point with
// R = round(2^16 / y_scale) = 2^24 for y_scale 1/256, clamped to int8. A row of 5 fits int32
// (`softmax_fits_int32`): S in i32, the quotient floor(((e · R + S · 2^15) >> 16) / S) an i32
// division of an i64 numerator narrowed (no 64-bit division).

// CHECK-LABEL: func.func @main()
// CHECK:         uop.define_global "constant" {{.*}} : !uop.buffer<256xi32>
// CHECK-DAG:     [[R:%.*]] = uop.const 16777216 : i64
// CHECK-DAG:     [[BITS:%.*]] = uop.const 16 : i64
// CHECK:         uop.range {{%.*}} = 0 to 2 {
// CHECK:           [[MAX:%.*]] = uop.define_acc
// CHECK:           uop.range {{%.*}} = 1 to 5 {
// CHECK:             uop.max
// CHECK:           [[SUM:%.*]] = uop.define_acc 0 : i32
// CHECK:           uop.range {{%.*}} = 0 to 5 {
// CHECK:             uop.sub
// CHECK:             uop.cast {{%.*}} : i32 to index
// CHECK:             [[E:%.*]] = uop.load {{%.*}} : i32
// CHECK-NEXT:        [[S:%.*]] = uop.add {{%.*}}, [[E]] : i32
// CHECK-NEXT:        uop.acc_set [[SUM]], [[S]]
// CHECK:           uop.range {{%.*}} = 0 to 5 {
// CHECK:             [[HALF:%.*]] = uop.shl {{%.*}}, {{%.*}} : i64
// CHECK:             [[P:%.*]] = uop.mul {{%.*}}, [[R]] : i64
// CHECK-NEXT:        [[N:%.*]] = uop.add [[P]], [[HALF]] : i64
// CHECK-NEXT:        [[T:%.*]] = uop.shr [[N]], [[BITS]] : i64
// CHECK-NEXT:        [[T32:%.*]] = uop.cast [[T]] : i64 to i32
// CHECK-NEXT:        [[D:%.*]] = uop.acc_get [[SUM]]
// CHECK-NEXT:        uop.div [[T32]], [[D]] : i32
// CHECK-NOT:         uop.div {{.*}} : i64
// CHECK-NOT:     f32
func.func @main(%x: tensor<2x5xi8>) -> tensor<2x5xi8> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %xs = onnx.Constant() {value = dense<0.08> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.00390625> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearSoftmax(%x, %xs, %xz, %ys, %yz) {axis = 1 : i64} : (tensor<2x5xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<2x5xi8>
  func.return %y : tensor<2x5xi8>
}

// -----

// QLinearAveragePool, integer only: the centered sum and the count of the taps inside the
// input in i32 accumulators, then round_half_even(sum · x_scale / (y_scale · count)) exactly,
// without a division: the count picks a row of three constant tables (multiplier, addend, tie
// threshold: zant.analysis.rounding), X = sum · m + a, q = X >> k (one k for every count), and
// an odd q at a tie (X's low k bits below the threshold) steps down by one; all in i32 here.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[M:%.*]] = uop.define_global "constant" {{[0-9]+}} "y_multiplier" value dense<{{.*}}> : tensor<9xi32>
// CHECK-DAG:     [[A:%.*]] = uop.define_global "constant" {{[0-9]+}} "y_addend" value dense<{{.*}}> : tensor<9xi32>
// CHECK-DAG:     [[T:%.*]] = uop.define_global "constant" {{[0-9]+}} "y_tie_below" value dense<{{.*}}> : tensor<9xi32>
// CHECK:         [[SUM:%.*]] = uop.define_acc 0 : i32
// CHECK-NEXT:    [[COUNT:%.*]] = uop.define_acc 0 : i32
// CHECK:         [[I:%.*]] = uop.cast {{%.*}} : i32 to index
// CHECK-NEXT:    {{%.*}} = uop.gep [[M]][[[I]]]
// CHECK:         {{%.*}} = uop.gep [[A]][[[I]]]
// CHECK:         {{%.*}} = uop.gep [[T]][[[I]]]
// CHECK:         uop.shr {{%.*}} : i32
// CHECK:         uop.cmplt {{%.*}} : i32
// CHECK-NOT:     uop.div
// CHECK-NOT:     i64
// CHECK-NOT:     f32
func.func @main(%x: tensor<1x1x3x3xi8>) -> tensor<1x1x3x3xi8> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearAveragePool(%x, %s, %z, %s, %z) {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x1x3x3xi8>
  func.return %y : tensor<1x1x3x3xi8>
}
