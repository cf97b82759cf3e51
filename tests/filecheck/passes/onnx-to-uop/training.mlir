// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// Adam: R and T are read once, at run time, and the learning rate is bias-corrected once,
// R·sqrt(1 - beta^T) / (1 - alpha^T) when T > 0, else R; then one loop updates X, V and H,
// each written straight into its output.

// CHECK-LABEL: func.func @main()
// CHECK:         %x_new = uop.define_global "output" 0 "x_new" : !uop.buffer<2xf32>
// CHECK-NEXT:    %v_new = uop.define_global "output" 1 "v_new" : !uop.buffer<2xf32>
// CHECK-NEXT:    %h_new = uop.define_global "output" 2 "h_new" : !uop.buffer<2xf32>
// CHECK:         [[R:%.*]] = uop.load {{%.*}} : f32
// CHECK:         [[TI:%.*]] = uop.load {{%.*}} : i64
// CHECK-NEXT:    [[T:%.*]] = uop.cast [[TI]] : i64 to f32
// CHECK:         [[BETA:%.*]] = uop.const 9.900000e-01 : f32
// CHECK-NEXT:    uop.pow [[BETA]], [[T]] : f32
// CHECK:         [[ALPHA:%.*]] = uop.const 9.000000e-01 : f32
// CHECK-NEXT:    uop.pow [[ALPHA]], [[T]] : f32
// CHECK:         [[CORRECTED:%.*]] = uop.div
// CHECK:         [[FIRST:%.*]] = uop.cmplt {{%.*}}, [[T]] : f32
// CHECK-NEXT:    [[RATE:%.*]] = uop.where [[FIRST]], [[CORRECTED]], [[R]] : f32
// CHECK-NEXT:    uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NOT:       uop.pow
// CHECK:           uop.sqrt
// CHECK:           uop.mul [[RATE]], {{%.*}} : f32
// CHECK:           uop.gep %x_new[[[I]]]
// CHECK:           uop.gep %v_new[[[I]]]
// CHECK:           uop.gep %h_new[[[I]]]
// CHECK-NEXT:      uop.store
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @main(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>, %g: tensor<2xf32>, %v: tensor<2xf32>, %h: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) attributes {onnx.input_names = ["r", "t", "x", "g", "v", "h"], onnx.output_names = ["x_new", "v_new", "h_new"]} {
  %x_new, %v_new, %h_new = onnx.training.Adam(%r, %t, %x, %g, %v, %h) {alpha = 0.9 : f32, beta = 0.99 : f32, epsilon = 1.0e-7 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  func.return %x_new, %v_new, %h_new : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Nesterov momentum on two tensors of different shapes: the gradient's coefficient (1 at the
// first update, beta after) is chosen once; then one loop nest per tensor, of its shape.

// CHECK-LABEL: func.func @main()
// CHECK:         [[R:%.*]] = uop.load {{%.*}} : f32
// CHECK:         [[BETA:%.*]] = uop.const 2.500000e-01 : f32
// CHECK-NEXT:    [[ONE:%.*]] = uop.const 1.000000e+00 : f32
// CHECK:         [[COEFFICIENT:%.*]] = uop.where {{%.*}}, [[BETA]], [[ONE]] : f32
// CHECK-NOT:     uop.where
// CHECK:         uop.range {{%.*}} = 0 to 3 {
// CHECK:           [[G:%.*]] = uop.add
// CHECK:           [[V:%.*]] = uop.add {{%.*}}, {{%.*}} : f32
// CHECK:           [[LOOKAHEAD:%.*]] = uop.add {{%.*}}, [[G]] : f32
// CHECK-NEXT:      [[STEP:%.*]] = uop.mul [[R]], [[LOOKAHEAD]] : f32
// CHECK-NEXT:      [[X:%.*]] = uop.sub {{%.*}}, [[STEP]] : f32
// CHECK-NEXT:      uop.gep %x1_new
// CHECK-NEXT:      uop.store [[X]]
// CHECK-NEXT:      uop.gep %v1_new
// CHECK-NEXT:      uop.store [[V]]
// CHECK:         uop.range {{%.*}} = 0 to 2 {
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 2 {
// CHECK:             uop.mul [[COEFFICIENT]], {{%.*}} : f32
// CHECK:             uop.store {{%.*}}, {{%.*}} : f32
// CHECK:             uop.store {{%.*}}, {{%.*}} : f32
func.func @main(%r: tensor<f32>, %t: tensor<i64>, %x1: tensor<3xf32>, %x2: tensor<2x2xf32>, %g1: tensor<3xf32>, %g2: tensor<2x2xf32>, %v1: tensor<3xf32>, %v2: tensor<2x2xf32>) -> (tensor<3xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<2x2xf32>) attributes {onnx.input_names = ["r", "t", "x1", "x2", "g1", "g2", "v1", "v2"], onnx.output_names = ["x1_new", "x2_new", "v1_new", "v2_new"]} {
  %x1_new, %x2_new, %v1_new, %v2_new = onnx.training.Momentum(%r, %t, %x1, %x2, %g1, %g2, %v1, %v2) {alpha = 0.5 : f32, beta = 0.25 : f32, mode = "nesterov", norm_coefficient = 0.125 : f32} : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<2x2xf32>) -> (tensor<3xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<2x2xf32>)
  func.return %x1_new, %x2_new, %v1_new, %v2_new : tensor<3xf32>, tensor<2x2xf32>, tensor<3xf32>, tensor<2x2xf32>
}

// -----

// Adagrad on f64 tensors with an f32 learning rate: R and T are converted to X's type; the
// rate decays as R / (1 + T·decay_factor).

// CHECK-LABEL: func.func @main()
// CHECK:         [[RF:%.*]] = uop.load {{%.*}} : f32
// CHECK:         [[TI:%.*]] = uop.load {{%.*}} : i64
// CHECK-NEXT:    [[R:%.*]] = uop.cast [[RF]] : f32 to f64
// CHECK-NEXT:    [[T:%.*]] = uop.cast [[TI]] : i64 to f64
// CHECK-NEXT:    [[ONE:%.*]] = uop.const 1.000000e+00 : f64
// CHECK-NEXT:    [[DECAY:%.*]] = uop.const 5.000000e-01 : f64
// CHECK-NEXT:    [[SCALED:%.*]] = uop.mul [[DECAY]], [[T]] : f64
// CHECK-NEXT:    [[DENOMINATOR:%.*]] = uop.add [[SCALED]], [[ONE]] : f64
// CHECK-NEXT:    [[RATE:%.*]] = uop.div [[R]], [[DENOMINATOR]] : f64
// CHECK-NEXT:    uop.range
// CHECK:           uop.sqrt {{%.*}} : f64
// CHECK:           uop.mul [[RATE]], {{%.*}} : f64
func.func @main(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<4xf64>, %g: tensor<4xf64>, %h: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) attributes {onnx.input_names = ["r", "t", "x", "g", "h"], onnx.output_names = ["x_new", "h_new"]} {
  %x_new, %h_new = onnx.training.Adagrad(%r, %t, %x, %g, %h) {decay_factor = 0.5 : f32} : (tensor<f32>, tensor<i64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>)
  func.return %x_new, %h_new : tensor<4xf64>, tensor<4xf64>
}
