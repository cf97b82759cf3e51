// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// Indices read from the data are marked: each loaded index of a Gather (here a graph input)
// becomes a `uop.bound_index` into the dimension it indexes (4), which check-data-indices
// checks ahead of the kernel and clamps.
// The index is read once per row it selects, in the outer loop; the inner loop copies the row.
// CHECK-LABEL: func.func @main()
// CHECK:         uop.range [[A:%.*]] = 0 to 2 {
// CHECK-NEXT:      [[P:%.*]] = uop.gep %i[[[A]]] : !uop.buffer<2xi64>
// CHECK-NEXT:      [[V:%.*]] = uop.load [[P]] : i64
// CHECK-NEXT:      [[IX:%.*]] = uop.bound_index [[V]], 4 : i64
// CHECK-NEXT:      uop.range [[B:%.*]] = 0 to 3 {
// CHECK-NEXT:        uop.gep {{%.*}}[[[IX]], [[B]]]
func.func @main(%x: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> attributes {onnx.input_names = ["x", "i"], onnx.output_names = ["y"]} {
  %y = onnx.Gather(%x, %i) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// GatherND's index tuple: one bound_index per column, each into its own dimension; MaxUnpool's
// flat indices may not be negative.
// CHECK-LABEL: func.func @main()
// CHECK:         uop.bound_index {{%.*}}, 3 : i64
// CHECK:         uop.bound_index {{%.*}}, 4 : i64
// CHECK:         uop.bound_index nonnegative {{%.*}}, 16 : i64
func.func @main(%x: tensor<3x4xf32>, %i: tensor<2x2xi64>, %u: tensor<1x1x2x2xf32>, %j: tensor<1x1x2x2xi64>) -> (tensor<2xf32>, tensor<1x1x4x4xf32>) attributes {onnx.input_names = ["x", "i", "u", "j"], onnx.output_names = ["y", "z"]} {
  %y = onnx.GatherND(%x, %i) : (tensor<3x4xf32>, tensor<2x2xi64>) -> tensor<2xf32>
  %z = onnx.MaxUnpool(%u, %j) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) -> tensor<1x1x4x4xf32>
  func.return %y, %z : tensor<2xf32>, tensor<1x1x4x4xf32>
}

// -----

// Constant indices were checked when compiling: they are only wrapped, with no bound_index.
// CHECK-LABEL: func.func @main()
// CHECK-NOT:     uop.bound_index
// CHECK:         uop.where
// CHECK-NOT:     uop.bound_index
func.func @main(%x: tensor<4x3xf32>) -> tensor<2x3xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %i = onnx.Constant() {value = dense<[1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %y = onnx.Gather(%x, %i) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
