// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// Inference BatchNormalization: the per-channel operands are (3,) buffers read as 2x3x2 views
// with stride 0 everywhere but the channel dimension; y = scale·(x - mean)/sqrt(var + eps) + B.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[S:%.*]] = uop.view %s : !uop.buffer<3xf32> -> !uop.view<2x3x2xf32, strides [0, 1, 0], offset 0>
// CHECK-DAG:     [[B:%.*]] = uop.view %b : !uop.buffer<3xf32> -> !uop.view<2x3x2xf32, strides [0, 1, 0], offset 0>
// CHECK-DAG:     [[M:%.*]] = uop.view %m : !uop.buffer<3xf32> -> !uop.view<2x3x2xf32, strides [0, 1, 0], offset 0>
// CHECK-DAG:     [[V:%.*]] = uop.view %v : !uop.buffer<3xf32> -> !uop.view<2x3x2xf32, strides [0, 1, 0], offset 0>
// CHECK-DAG:     [[EPS:%.*]] = uop.const 1.000000e-03 : f32
// CHECK:         uop.range [[N:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[C:%.*]] = 0 to 3 {
// CHECK-NEXT:        uop.range [[D:%.*]] = 0 to 2 {
// CHECK-NEXT:          {{%.*}} = uop.gep [[V]][[[N]], [[C]], [[D]]]
// CHECK-NEXT:          [[VAR:%.*]] = uop.load
// CHECK-NEXT:          [[VE:%.*]] = uop.add [[VAR]], [[EPS]] : f32
// CHECK-NEXT:          [[STD:%.*]] = uop.sqrt [[VE]] : f32
// CHECK-NEXT:          {{%.*}} = uop.gep
// CHECK-NEXT:          [[X:%.*]] = uop.load
// CHECK-NEXT:          {{%.*}} = uop.gep [[M]]
// CHECK-NEXT:          [[MEAN:%.*]] = uop.load
// CHECK-NEXT:          [[XC:%.*]] = uop.sub [[X]], [[MEAN]] : f32
// CHECK-NEXT:          {{%.*}} = uop.gep [[S]]
// CHECK-NEXT:          [[SCALE:%.*]] = uop.load
// CHECK-NEXT:          [[XS:%.*]] = uop.mul [[SCALE]], [[XC]] : f32
// CHECK-NEXT:          [[XN:%.*]] = uop.div [[XS]], [[STD]] : f32
// CHECK-NEXT:          {{%.*}} = uop.gep [[B]]
// CHECK-NEXT:          [[BIAS:%.*]] = uop.load
// CHECK-NEXT:          [[Y:%.*]] = uop.add [[XN]], [[BIAS]] : f32
// CHECK-NEXT:          [[P:%.*]] = uop.gep
// CHECK-NEXT:          uop.store [[Y]], [[P]] : f32
func.func @main(%x: tensor<2x3x2xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x2xf32> attributes {onnx.input_names = ["x", "s", "b", "m", "v"], onnx.output_names = ["y"]} {
  %y = onnx.BatchNormalization(%x, %s, %b, %m, %v) {epsilon = 1.0e-3 : f32} : (tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x2xf32>
  func.return %y : tensor<2x3x2xf32>
}

// -----

// Softmax along axis 1 of 2x3x4: both layouts are permuted so the axis is innermost; per row,
// an accumulator for the maximum (seeded with the first element), one for the sum of
// exponentials (written to the output as they are computed; f16 ones would be summed in f32;
// a multiply-add by 1, the same sum, which `vectorize` takes as a reduction), read once, then a
// normalizing pass.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[XR:%.*]] = uop.view %x : !uop.buffer<24xf32> -> !uop.view<2x4x3xf32, strides [12, 1, 4], offset 0>
// CHECK-DAG:     [[YR:%.*]] = uop.view %y : !uop.buffer<24xf32> -> !uop.view<2x4x3xf32, strides [12, 1, 4], offset 0>
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 4 {
// CHECK-NEXT:        [[MAX:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:        [[ZERO:%.*]] = uop.const 0 : index
// CHECK-NEXT:        {{%.*}} = uop.gep [[XR]][[[I]], [[J]], [[ZERO]]]
// CHECK-NEXT:        [[FIRST:%.*]] = uop.load
// CHECK-NEXT:        uop.acc_set [[MAX]], [[FIRST]]
// CHECK-NEXT:        uop.range [[K:%.*]] = 1 to 3 {
// CHECK:               uop.max
// CHECK-NEXT:          uop.acc_set [[MAX]]
// CHECK-NEXT:        }
// CHECK-NEXT:        [[SUM:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:        uop.range [[K2:%.*]] = 0 to 3 {
// CHECK-NEXT:          {{%.*}} = uop.gep [[XR]][[[I]], [[J]], [[K2]]]
// CHECK-NEXT:          [[XV:%.*]] = uop.load
// CHECK-NEXT:          [[M:%.*]] = uop.acc_get [[MAX]]
// CHECK-NEXT:          [[SH:%.*]] = uop.sub [[XV]], [[M]] : f32
// CHECK-NEXT:          [[E:%.*]] = uop.exp [[SH]] : f32
// CHECK-NEXT:          [[P:%.*]] = uop.gep [[YR]][[[I]], [[J]], [[K2]]]
// CHECK-NEXT:          uop.store [[E]], [[P]] : f32
// CHECK-NEXT:          [[ONE:%.*]] = uop.const 1.000000e+00 : f32
// CHECK-NEXT:          uop.mulacc [[SUM]], [[E]], [[ONE]] : !uop.acc<f32>, f32
// CHECK-NEXT:        }
// CHECK-NEXT:        [[TOT:%.*]] = uop.acc_get [[SUM]]
// CHECK-NEXT:        uop.range [[K3:%.*]] = 0 to 3 {
// CHECK-NEXT:          {{%.*}} = uop.gep [[YR]][[[I]], [[J]], [[K3]]]
// CHECK-NEXT:          [[EV:%.*]] = uop.load
// CHECK-NEXT:          [[Q:%.*]] = uop.div [[EV]], [[TOT]] : f32
// CHECK-NEXT:          [[P2:%.*]] = uop.gep [[YR]][[[I]], [[J]], [[K3]]]
// CHECK-NEXT:          uop.store [[Q]], [[P2]] : f32
func.func @main(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.Softmax(%x) {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}

// -----

// LogSoftmax along the default last axis: no permutation (plain row-major views); the last pass
// computes x - max - log(sum).

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[XR:%.*]] = uop.view %x : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK:           [[MAX:%.*]] = uop.define_acc
// CHECK:           [[SUM:%.*]] = uop.define_acc
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 3 {
// CHECK-NOT:         uop.store
// CHECK:           }
// CHECK-NEXT:      [[T:%.*]] = uop.acc_get [[SUM]]
// CHECK-NEXT:      uop.range [[K:%.*]] = 0 to 3 {
// CHECK-NEXT:        {{%.*}} = uop.gep [[XR]][[[I]], [[K]]]
// CHECK-NEXT:        [[XV:%.*]] = uop.load
// CHECK-NEXT:        [[M:%.*]] = uop.acc_get [[MAX]]
// CHECK-NEXT:        [[SH:%.*]] = uop.sub [[XV]], [[M]] : f32
// CHECK-NEXT:        [[L:%.*]] = uop.log [[T]] : f32
// CHECK-NEXT:        [[Y:%.*]] = uop.sub [[SH]], [[L]] : f32
// CHECK-NEXT:        [[P:%.*]] = uop.gep
// CHECK-NEXT:        uop.store [[Y]], [[P]] : f32
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.LogSoftmax(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
