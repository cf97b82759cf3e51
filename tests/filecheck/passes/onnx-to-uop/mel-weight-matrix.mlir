// RUN: zant-opt %s -p onnx-to-uop | filecheck %s

// MelWeightMatrix of run-time inputs: the result type fixes num_mel_bins (2) and
// dft_length // 2 + 1 (3), checked first; the mel edges (num_mel_bins + 2) are computed in f64
// into scratch, each counted when its bin leaves [0, 3] (and stored as 0), the count checked;
// then each entry is computed from its filter's three edges.
// CHECK-LABEL: func.func @main()
// CHECK:         %w_edges = uop.define_local "w_edges" : !uop.buffer<4xi64>
// CHECK:         uop.cmpeq {{%.*}}, {{%.*}} : i64
// CHECK:         uop.div {{%.*}}, {{%.*}} : i64
// CHECK:         uop.cmplt {{%.*}}, {{%.*}} : i64
// CHECK:         abi.check {{%.*}}, 4
// CHECK:         uop.log {{%.*}} : f64
// CHECK:         uop.log {{%.*}} : f64
// CHECK:         [[OUTSIDE:%.*]] = uop.define_acc 0 : i64
// CHECK-NEXT:    uop.range {{%.*}} = 0 to 4 {
// CHECK:           uop.exp {{%.*}} : f64
// CHECK:           [[EDGE:%.*]] = uop.floor {{%.*}} : f64
// CHECK:           uop.cmple {{%.*}}, [[EDGE]] : f64
// CHECK:           uop.cmple [[EDGE]], {{%.*}} : f64
// CHECK:           uop.store {{%.*}}, {{%.*}} : i64
// CHECK:         }
// CHECK:         [[COUNT:%.*]] = uop.acc_get [[OUTSIDE]] : !uop.acc<i64>, i64
// CHECK:         [[NONE:%.*]] = uop.cmpeq [[COUNT]], {{%.*}} : i64
// CHECK-NEXT:    abi.check [[NONE]], 4
// CHECK:         uop.range {{%.*}} = 0 to 3 {
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 2 {
// CHECK:             uop.load {{%.*}} : i64
// CHECK:             uop.div {{%.*}}, {{%.*}} : f64
// CHECK:             uop.store {{%.*}}, {{%.*}} : f32
func.func @main(%bins: tensor<i32>, %n: tensor<i32>, %rate: tensor<i32>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<3x2xf32> attributes {onnx.input_names = ["bins", "n", "rate", "lo", "hi"], onnx.output_names = ["w"]} {
  %w = onnx.MelWeightMatrix(%bins, %n, %rate, %lo, %hi) : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<3x2xf32>
  func.return %w : tensor<3x2xf32>
}
