// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// LayerNormalization over the last axis with the Mean output: per row, one accumulator for the
// sum of the differences from the row's first value (→ mean = first + sum / n, exact for a
// constant row), one for the squared deviations (→ 1/sqrt(var + eps)), then a pass writing
// (x - mean)·invstd·scale, the scale read through a stride-0 view; the mean goes to output 1.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[XV:%.*]] = uop.view %x : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
// CHECK-DAG:     [[SV:%.*]] = uop.view %s : !uop.buffer<3xf32> -> !uop.view<2x3xf32, strides [0, 1], offset 0>
// CHECK-DAG:     [[N:%.*]] = uop.const 3.000000e+00 : f32
// CHECK-DAG:     [[EPS:%.*]] = uop.const 1.000000e-05 : f32
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      [[ZERO:%.*]] = uop.const 0 : index
// CHECK-NEXT:      {{%.*}} = uop.gep [[XV]][[[I]], [[ZERO]]]
// CHECK-NEXT:      [[FIRST:%.*]] = uop.load
// CHECK-NEXT:      [[SUM:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 3 {
// CHECK:             uop.sub {{%.*}}, [[FIRST]] : f32
// CHECK:             uop.acc_set [[SUM]]
// CHECK:           [[TOTAL:%.*]] = uop.acc_get [[SUM]]
// CHECK-NEXT:      [[SHIFT:%.*]] = uop.div [[TOTAL]], [[N]] : f32
// CHECK-NEXT:      [[MEAN:%.*]] = uop.add [[FIRST]], [[SHIFT]] : f32
// CHECK-NEXT:      [[SQ:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 3 {
// CHECK:             uop.sub {{%.*}}, [[MEAN]] : f32
// CHECK:             uop.acc_set [[SQ]]
// CHECK:           [[SS:%.*]] = uop.acc_get [[SQ]]
// CHECK-NEXT:      [[VAR:%.*]] = uop.div [[SS]], [[N]] : f32
// CHECK-NEXT:      [[VE:%.*]] = uop.add [[VAR]], [[EPS]] : f32
// CHECK-NEXT:      [[STD:%.*]] = uop.sqrt [[VE]] : f32
// CHECK-NEXT:      [[INV:%.*]] = uop.recip [[STD]] : f32
// CHECK-NEXT:      uop.range [[K:%.*]] = 0 to 3 {
// CHECK-NEXT:        {{%.*}} = uop.gep [[XV]][[[I]], [[K]]]
// CHECK-NEXT:        [[X:%.*]] = uop.load
// CHECK-NEXT:        [[C:%.*]] = uop.sub [[X]], [[MEAN]] : f32
// CHECK-NEXT:        [[XN:%.*]] = uop.mul [[C]], [[INV]] : f32
// CHECK-NEXT:        {{%.*}} = uop.gep [[SV]][[[I]], [[K]]]
// CHECK-NEXT:        [[S:%.*]] = uop.load
// CHECK-NEXT:        [[Y:%.*]] = uop.mul [[XN]], [[S]] : f32
// CHECK-NEXT:        [[P:%.*]] = uop.gep
// CHECK-NEXT:        uop.store [[Y]], [[P]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      [[Q:%.*]] = uop.gep %m[[[I]]]
// CHECK-NEXT:      uop.store [[MEAN]], [[Q]] : f32
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>) attributes {onnx.input_names = ["x", "s"], onnx.output_names = ["y", "m"]} {
  %y, %m = onnx.LayerNormalization(%x, %s) {axis = -1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>)
  func.return %y, %m : tensor<2x3xf32>, tensor<2x1xf32>
}

// -----

// GroupNormalization with 2 groups of 4 channels: x (1x4x3), the output and the per-channel
// scale/bias are split into (N, G, C/G, D) views by strides alone; one group per (n, g).

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     uop.view %x : !uop.buffer<12xf32> -> !uop.view<1x2x2x3xf32, strides [12, 6, 3, 1], offset 0>
// CHECK-DAG:     uop.view %s : !uop.buffer<4xf32> -> !uop.view<1x2x2x3xf32, strides [0, 2, 1, 0], offset 0>
// CHECK:         uop.range {{%.*}} = 0 to 1 {
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 2 {
// CHECK:             uop.load
// CHECK-NEXT:        uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:        uop.range {{%.*}} = 0 to 2 {
// CHECK-NEXT:          uop.range {{%.*}} = 0 to 3 {
func.func @main(%x: tensor<1x4x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4x3xf32> attributes {onnx.input_names = ["x", "s", "b"], onnx.output_names = ["y"]} {
  %y = onnx.GroupNormalization(%x, %s, %b) {num_groups = 2 : i64} : (tensor<1x4x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x3xf32>
  func.return %y : tensor<1x4x3xf32>
}
