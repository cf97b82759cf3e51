// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// ReduceL2 over axis -2 of 2x3x4 with keepdims: the input is read with the reduced axis
// innermost (2x4x3), the 2x1x4 output as 2x4; one accumulator per output element sums x·x over
// the reduced axis, then sqrt.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[XV:%.*]] = uop.view %x : !uop.buffer<24xf32> -> !uop.view<2x4x3xf32, strides [12, 1, 4], offset 0>
// CHECK-DAG:     [[YV:%.*]] = uop.view %y : !uop.buffer<8xf32> -> !uop.view<2x4xf32, strides [4, 1], offset 0>
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 4 {
// CHECK-NEXT:        [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:        uop.range [[K:%.*]] = 0 to 3 {
// CHECK-NEXT:          [[P:%.*]] = uop.gep [[XV]][[[I]], [[J]], [[K]]]
// CHECK-NEXT:          [[X:%.*]] = uop.load [[P]] : f32
// CHECK-NEXT:          [[OLD:%.*]] = uop.acc_get [[ACC]]
// CHECK-NEXT:          [[SQ:%.*]] = uop.mul [[X]], [[X]] : f32
// CHECK-NEXT:          [[NEW:%.*]] = uop.add [[OLD]], [[SQ]] : f32
// CHECK-NEXT:          uop.acc_set [[ACC]], [[NEW]]
// CHECK-NEXT:        }
// CHECK-NEXT:        [[SUM:%.*]] = uop.acc_get [[ACC]]
// CHECK-NEXT:        [[Y:%.*]] = uop.sqrt [[SUM]] : f32
// CHECK-NEXT:        [[Q:%.*]] = uop.gep [[YV]][[[I]], [[J]]]
// CHECK-NEXT:        uop.store [[Y]], [[Q]] : f32
func.func @main(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %axes = onnx.Constant() {value = dense<[-2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %y = onnx.ReduceL2(%x, %axes) {keepdims = 1 : i64} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x1x4xf32>
  func.return %y : tensor<2x1x4xf32>
}

// -----

// ReduceMax with no axes and keepdims=0: every axis is reduced into one scalar; the
// accumulator starts at -inf.

// CHECK-LABEL: func.func @main()
// CHECK:         [[ACC:%.*]] = uop.define_acc 0xff800000 : f32
// CHECK-NEXT:    uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 3 {
// CHECK:             uop.max
// CHECK:         uop.store
func.func @main(%x: tensor<2x3xf32>) -> tensor<f32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.ReduceMax(%x) {keepdims = 0 : i64} : (tensor<2x3xf32>) -> tensor<f32>
  func.return %y : tensor<f32>
}

// -----

// ArgMax along axis 0 with select_last_index: the axis is moved last; per column the best
// value is seeded with the first element and a later one wins when best <= value; its index
// (cast to i64) goes to a second accumulator.

// CHECK-LABEL: func.func @main()
// CHECK:         [[XV:%.*]] = uop.view %x : !uop.buffer<12xf32> -> !uop.view<4x3xf32, strides [1, 4], offset 0>
// CHECK:         uop.range [[I:%.*]] = 0 to 4 {
// CHECK-NEXT:      [[BEST:%.*]] = uop.define_acc
// CHECK:           uop.acc_set [[BEST]]
// CHECK-NEXT:      [[IDX:%.*]] = uop.define_acc 0 : i64
// CHECK-NEXT:      uop.range [[K:%.*]] = 1 to 3 {
// CHECK-NEXT:        [[P:%.*]] = uop.gep [[XV]][[[I]], [[K]]]
// CHECK-NEXT:        [[V:%.*]] = uop.load [[P]] : f32
// CHECK-NEXT:        [[B:%.*]] = uop.acc_get [[BEST]]
// CHECK-NEXT:        [[C:%.*]] = uop.cmple [[B]], [[V]] : f32
// CHECK-NEXT:        [[NB:%.*]] = uop.where [[C]], [[V]], [[B]] : f32
// CHECK-NEXT:        uop.acc_set [[BEST]], [[NB]]
// CHECK-NEXT:        [[KI:%.*]] = uop.cast [[K]] : index to i64
// CHECK-NEXT:        [[OI:%.*]] = uop.acc_get [[IDX]]
// CHECK-NEXT:        [[NI:%.*]] = uop.where [[C]], [[KI]], [[OI]] : i64
// CHECK-NEXT:        uop.acc_set [[IDX]], [[NI]]
// CHECK-NEXT:      }
// CHECK-NEXT:      [[R:%.*]] = uop.acc_get [[IDX]]
// CHECK-NEXT:      [[Q:%.*]] = uop.gep %y[[[I]]]
// CHECK-NEXT:      uop.store [[R]], [[Q]] : i64
func.func @main(%x: tensor<3x4xf32>) -> tensor<4xi64> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.ArgMax(%x) {axis = 0 : i64, keepdims = 0 : i64, select_last_index = 1 : i64} : (tensor<3x4xf32>) -> tensor<4xi64>
  func.return %y : tensor<4xi64>
}

// -----

// Exclusive reverse CumSum along axis 1: both layouts are reversed views (stride -1, offset
// 4); the running sum is stored before the element is added.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[XV:%.*]] = uop.view %x : !uop.buffer<10xi32> -> !uop.view<2x5xi32, strides [5, -1], offset 4>
// CHECK-DAG:     [[YV:%.*]] = uop.view %y : !uop.buffer<10xi32> -> !uop.view<2x5xi32, strides [5, -1], offset 4>
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      [[ACC:%.*]] = uop.define_acc 0 : i32
// CHECK-NEXT:      uop.range [[K:%.*]] = 0 to 5 {
// CHECK-NEXT:        [[P:%.*]] = uop.gep [[XV]][[[I]], [[K]]]
// CHECK-NEXT:        [[X:%.*]] = uop.load [[P]] : i32
// CHECK-NEXT:        [[S:%.*]] = uop.acc_get [[ACC]]
// CHECK-NEXT:        [[Q:%.*]] = uop.gep [[YV]][[[I]], [[K]]]
// CHECK-NEXT:        uop.store [[S]], [[Q]] : i32
// CHECK-NEXT:        [[S2:%.*]] = uop.acc_get [[ACC]]
// CHECK-NEXT:        [[N:%.*]] = uop.add [[S2]], [[X]] : i32
// CHECK-NEXT:        uop.acc_set [[ACC]], [[N]]
func.func @main(%x: tensor<2x5xi32>) -> tensor<2x5xi32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %axis = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %y = onnx.CumSum(%x, %axis) {exclusive = 1 : i64, reverse = 1 : i64} : (tensor<2x5xi32>, tensor<i64>) -> tensor<2x5xi32>
  func.return %y : tensor<2x5xi32>
}
