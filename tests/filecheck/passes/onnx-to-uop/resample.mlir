// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// Resize (linear, align_corners) ×1.5 along the last axis: the pass precomputes which input
// positions each output position reads and their weights as constant tables; the loop gathers.

// CHECK-LABEL: func.func @main()
// CHECK:         [[IDX:%.*]] = uop.define_global "constant" 0 "y_axis1_index" value dense<{{\[\[}}0, 0], [0, 1], [0, 1]]> : tensor<3x2xi32>
// CHECK-NEXT:    [[W:%.*]] = uop.define_global "constant" 1 "y_axis1_weight" value dense<{{\[\[}}0.000000e+00, 1.000000e+00], [5.000000e-01, 5.000000e-01], [0.000000e+00, 1.000000e+00]]> : tensor<3x2xf32>
// CHECK:         uop.range [[R:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[O:%.*]] = 0 to 3 {
// CHECK-NEXT:        [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:        uop.range [[K:%.*]] = 0 to 2 {
// CHECK-NEXT:          [[PI:%.*]] = uop.gep {{%.*}}[[[O]], [[K]]]
// CHECK-NEXT:          [[I:%.*]] = uop.load [[PI]] : i32
// CHECK-NEXT:          [[IX:%.*]] = uop.cast [[I]] : i32 to index
// CHECK-NEXT:          [[PW:%.*]] = uop.gep {{%.*}}[[[O]], [[K]]]
// CHECK-NEXT:          [[WK:%.*]] = uop.load [[PW]] : f32
// CHECK-NEXT:          [[PX:%.*]] = uop.gep {{%.*}}[[[R]], [[IX]]]
// CHECK-NEXT:          [[X:%.*]] = uop.load [[PX]] : f32
// CHECK-NEXT:          uop.mulacc [[ACC]], [[X]], [[WK]]
// CHECK-NEXT:        }
// CHECK-NEXT:        [[V:%.*]] = uop.acc_get [[ACC]]
// CHECK-NEXT:        [[PY:%.*]] = uop.gep {{%.*}}[[[R]], [[O]]]
// CHECK-NEXT:        uop.store [[V]], [[PY]] : f32
func.func @main(%x: tensor<2x2xf32>) -> tensor<2x3xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %s = onnx.Constant() {value = dense<[1.0, 1.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = onnx.Resize(%x, none, %s) {mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<2x2xf32>, none, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// GridSample (nearest, border, align_corners): the grid is read at run time, so the tap of each
// output position is computed in scalar code — coordinate y (grid[..., 1]) first, then x — once,
// outside the channel loop, and clamped into the input before it indexes.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range [[N:%.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range [[OH:%.*]] = 0 to 1 {
// CHECK-NEXT:        uop.range [[OW:%.*]] = 0 to 5 {
// CHECK-NEXT:          [[ONE:%.*]] = uop.const 1 : index
// CHECK-NEXT:          [[PG:%.*]] = uop.gep {{%.*}}[[[N]], [[OH]], [[OW]], [[ONE]]]
// CHECK-NEXT:          [[G:%.*]] = uop.load [[PG]] : f32
// CHECK:               [[R:%.*]] = uop.round {{%.*}} : f32
// CHECK:               uop.where
// CHECK:               uop.max
// CHECK:               uop.min
// CHECK-NEXT:          [[H:%.*]] = uop.cast {{%.*}} : f32 to index
// CHECK:               [[W:%.*]] = uop.cast {{%.*}} : f32 to index
// CHECK-NEXT:          uop.range [[C:%.*]] = 0 to 2 {
// CHECK-NEXT:            [[PX:%.*]] = uop.gep {{%.*}}[[[N]], [[C]], [[H]], [[W]]]
// CHECK-NEXT:            [[V:%.*]] = uop.load [[PX]] : f32
// CHECK-NEXT:            [[PY:%.*]] = uop.gep {{%.*}}[[[N]], [[C]], [[OH]], [[OW]]]
// CHECK-NEXT:            uop.store [[V]], [[PY]] : f32
func.func @main(%x: tensor<1x2x3x4xf32>, %g: tensor<1x1x5x2xf32>) -> tensor<1x2x1x5xf32> attributes {onnx.input_names = ["x", "grid"], onnx.output_names = ["y"]} {
  %y = onnx.GridSample(%x, %g) {mode = "nearest", padding_mode = "border", align_corners = 1 : i64} : (tensor<1x2x3x4xf32>, tensor<1x1x5x2xf32>) -> tensor<1x2x1x5xf32>
  func.return %y : tensor<1x2x1x5xf32>
}

// -----

// Upsample (linear) is a Resize with asymmetric coordinates: x = o / 2, the last position
// reads past the end, which the clamped index table turns into the edge pixel.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.define_global "constant" 0 "y_axis1_index" value dense<{{\[\[}}0, 0], [0, 1], [0, 1], [1, 2], [1, 2], [2, 2]]>
// CHECK-NEXT:    uop.define_global "constant" 1 "y_axis1_weight" value dense<{{\[\[}}0.000000e+00, 1.000000e+00], [5.000000e-01, 5.000000e-01], [0.000000e+00, 1.000000e+00], [5.000000e-01, 5.000000e-01], [0.000000e+00, 1.000000e+00], [5.000000e-01, 5.000000e-01]]>
// CHECK:         uop.mulacc
func.func @main(%x: tensor<1x3xf32>) -> tensor<1x6xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %s = onnx.Constant() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = onnx.Upsample(%x, %s) {mode = "linear"} : (tensor<1x3xf32>, tensor<2xf32>) -> tensor<1x6xf32>
  func.return %y : tensor<1x6xf32>
}
