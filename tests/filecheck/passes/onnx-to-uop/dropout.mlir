// RUN: not zant-opt %s --split-input-file -p onnx-to-uop 2>&1 | filecheck %s

// Dropout in training mode with a seed: the draws of NumPy's RandomState(0).uniform(0, 1,
// [2, 3]) are a constant. Seed 0's are 0.5488135039, 0.7151893663, 0.6027633760,
// 0.5448831830, 0.4236547993, 0.6458941131.

// A run-time float32 ratio and training_mode: each draw rounded down to float32 (0.5488135039
// is not one: 0.548813462 below it, not 0.548813522 above), compared with the loaded ratio;
// the scale 1 / (1 - r) only when training, a false training_mode keeps everything.
// CHECK-LABEL: func.func @main()
// CHECK:         %y_draws = uop.define_global "constant" 0 "y_draws" value dense<{{\[\[}}0.548813462, 0.715189338, 0.602763355], [0.544883132, 0.423654795, 0.64589411]]> : tensor<2x3xf32> : !uop.buffer<6xf32>
// CHECK:         [[R:%.*]] = uop.load {{%.*}} : f32
// CHECK-NEXT:    [[ONE:%.*]] = uop.const 1.000000e+00 : f32
// CHECK-NEXT:    [[KEPT:%.*]] = uop.sub [[ONE]], [[R]] : f32
// CHECK-NEXT:    [[SCALE:%.*]] = uop.div [[ONE]], [[KEPT]] : f32
// CHECK:         [[T:%.*]] = uop.load {{%.*}} : i1
// CHECK:         [[S:%.*]] = uop.where [[T]], [[SCALE]], {{%.*}} : f32
// CHECK-NOT:     abi.check
// CHECK:         uop.range
// CHECK:           uop.range
// CHECK:             [[U:%.*]] = uop.load {{%.*}} : f32
// CHECK-NEXT:        [[DRAWN:%.*]] = uop.cmple [[R]], [[U]] : f32
// CHECK-NEXT:        [[OFF:%.*]] = uop.not [[T]] : i1
// CHECK-NEXT:        [[KEEP:%.*]] = uop.or [[OFF]], [[DRAWN]] : i1
// CHECK:             [[X:%.*]] = uop.load {{%.*}} : f32
// CHECK-NEXT:        [[M:%.*]] = uop.where [[KEEP]], {{%.*}}, {{%.*}} : f32
// CHECK-NEXT:        [[XM:%.*]] = uop.mul [[X]], [[M]] : f32
// CHECK-NEXT:        [[Y:%.*]] = uop.mul [[XM]], [[S]] : f32
// CHECK:             uop.store [[Y]], {{%.*}} : f32
// CHECK:             uop.store [[KEEP]], {{%.*}} : i1
func.func @main(%x: tensor<2x3xf32>, %r: tensor<f32>, %t: tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xi1>) attributes {onnx.input_names = ["x", "r", "t"], onnx.output_names = ["y", "z"]} {
  %y, %z = onnx.Dropout(%x, %r, %t) {seed = 0 : i64} : (tensor<2x3xf32>, tensor<f32>, tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  func.return %y, %z : tensor<2x3xf32>, tensor<2x3xi1>
}

// -----

// A float64 ratio tells float64 draws apart where a float32 could not: they stay float64.
// CHECK-LABEL: func.func @main()
// CHECK:         %y_draws = uop.define_global "constant" 0 "y_draws" value dense<{{\[\[}}0.54881350392732475, {{.*}}]]> : tensor<2x3xf64> : !uop.buffer<6xf64>
// CHECK:             uop.cmple {{%.*}}, {{%.*}} : f64
func.func @main(%x: tensor<2x3xf32>, %r: tensor<f64>) -> tensor<2x3xf32> attributes {onnx.input_names = ["x", "r"], onnx.output_names = ["y"]} {
  %t = onnx.Constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %y = onnx.Dropout(%x, %r, %t) {seed = 0 : i64} : (tensor<2x3xf32>, tensor<f64>, tensor<i1>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// Constant ratio 0.5 and training_mode: the mask itself is the constant (u >= 0.5 drops only
// 0.4236547993), the scale 2; nothing is compared at run time.
// CHECK-LABEL: func.func @main()
// CHECK:         %y_keep = uop.define_global "constant" 0 "y_keep" value dense<{{\[\[}}true, true, true], [true, false, true]]> : tensor<2x3xi1> : !uop.buffer<6xi1>
// CHECK:         [[S:%.*]] = uop.const 2.000000e+00 : f32
// CHECK-NOT:     uop.cmple
// CHECK:             [[KEEP:%.*]] = uop.load {{%.*}} : i1
// CHECK:             uop.where [[KEEP]], {{%.*}}, {{%.*}} : f32
// CHECK:             uop.mul {{%.*}}, [[S]] : f32
// CHECK:             uop.store [[KEEP]], {{%.*}} : i1
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>) attributes {onnx.input_names = ["x"], onnx.output_names = ["y", "z"]} {
  %r = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %t = onnx.Constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %y, %z = onnx.Dropout(%x, %r, %t) {seed = 0 : i64} : (tensor<2x3xf32>, tensor<f32>, tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  func.return %y, %z : tensor<2x3xf32>, tensor<2x3xi1>
}

// -----

// Without a seed, a run-time training_mode must be false or the ratio 0 (STATUS_BAD_PARAMETER
// otherwise), and the output is the input.
// CHECK-LABEL: func.func @main()
// CHECK-NOT:     "constant"
// CHECK:         abi.check {{%.*}}, 4
// CHECK-NOT:     uop.mul
// CHECK:         func.return
func.func @main(%x: tensor<2x3xf32>, %r: tensor<f32>, %t: tensor<i1>) -> tensor<2x3xf32> attributes {onnx.input_names = ["x", "r", "t"], onnx.output_names = ["y"]} {
  %y = onnx.Dropout(%x, %r, %t) : (tensor<2x3xf32>, tensor<f32>, tensor<i1>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// Without a seed, a constant true training_mode cannot compile: the mask is fresh on every call.
// CHECK: error: node 'drop' (onnx.Dropout): Dropout in training mode without a seed attribute draws a fresh random mask on every call, which compiled code cannot reproduce
func.func @main(%x: tensor<2x3xf32>, %r: tensor<f32>) -> tensor<2x3xf32> attributes {onnx.input_names = ["x", "r"], onnx.output_names = ["y"]} {
  %t = onnx.Constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %y = onnx.Dropout(%x, %r, %t) {onnx.node_name = "drop"} : (tensor<2x3xf32>, tensor<f32>, tensor<i1>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
