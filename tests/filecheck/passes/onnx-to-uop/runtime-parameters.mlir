// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// A parameter input that is a graph input stays a run-time value: the lowering loads it at
// the top of the function, and `abi.check` (status 4, STATUS_BAD_PARAMETER) ends the function
// before any kernel when it contradicts the compiled shapes.

// ReduceSum over [2, 3] -> [2, 1]: the shapes say axis 1; the value must name it (1 or -1).
// CHECK-LABEL: func.func @main()
// CHECK:         %axes = uop.define_global "input" 1 "axes" : !uop.buffer<1xi64>
// CHECK:         [[P:%.*]] = uop.gep %axes[{{%.*}}] : !uop.buffer<1xi64>
// CHECK-NEXT:    [[A:%.*]] = uop.load [[P]] : i64
// CHECK:         uop.cmpeq [[A]], {{%.*}} : i64
// CHECK:         abi.check [[OK:%.*]], 4
// CHECK-NEXT:    uop.range {{%.*}} = 0 to 2 {
// CHECK:           uop.range {{%.*}} = 0 to 3 {
func.func @main(%x: tensor<2x3xf32>, %axes: tensor<1xi64>) -> tensor<2x1xf32> attributes {onnx.input_names = ["x", "axes"], onnx.output_names = ["y"]} {
  %y = onnx.ReduceSum(%x, %axes) {keepdims = 1 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  func.return %y : tensor<2x1xf32>
}

// -----

// Trilu's k is any integer: loaded and clamped to [-rows, cols] (no check), then compared
// with j - i in the loop.
// CHECK-LABEL: func.func @main()
// CHECK:         [[K:%.*]] = uop.load {{%.*}} : i64
// CHECK:         [[LO:%.*]] = uop.max [[K]], {{%.*}} : i64
// CHECK:         [[CLAMPED:%.*]] = uop.min [[LO]], {{%.*}} : i64
// CHECK-NOT:     abi.check
// CHECK:         uop.range
// CHECK:           uop.add {{%.*}}, [[CLAMPED]] : i64
func.func @main(%x: tensor<3x4xf32>, %k: tensor<i64>) -> tensor<3x4xf32> attributes {onnx.input_names = ["x", "k"], onnx.output_names = ["y"]} {
  %y = onnx.Trilu(%x, %k) {upper = 1 : i64} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// -----

// Slice with run-time starts: a copy whose address is base + i·step per dimension, computed
// from the clamped values; the check compares each dimension's length with the compiled one.
// CHECK-LABEL: func.func @main()
// CHECK:         abi.check {{%.*}}, 4
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK:           [[G:%.*]] = uop.gep %x[{{%.*}}] : !uop.buffer<5xf32>
// CHECK-NEXT:      uop.load [[G]] : f32
func.func @main(%x: tensor<5xf32>, %starts: tensor<1xi64>) -> tensor<2xf32> attributes {onnx.input_names = ["x", "starts"], onnx.output_names = ["y"]} {
  %ends = onnx.Constant() {value = dense<100> : tensor<1xi64>} : () -> tensor<1xi64>
  %y = onnx.Slice(%x, %starts, %ends) : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
