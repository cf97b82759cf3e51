// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s
// Known bug in elementwise.py `_clip`: absent optional inputs are dropped before the scalar
// function sees them, so Clip(x, none, hi) takes `hi` as the *low* bound; and Clip(x) asks for
// the opset < 11 `min`/`max` attributes the latest schema no longer has (KeyError). Remove the
// XFAIL line once fixed.

// Clip with only the high bound: a single min, no max.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range
// CHECK:           [[X:%.*]] = uop.load {{%.*}} : f32
// CHECK:           [[H:%.*]] = uop.load {{%.*}} : f32
// CHECK-NEXT:      [[N:%.*]] = uop.min [[X]], [[H]] : f32
// CHECK-NEXT:      [[P:%.*]] = uop.gep
// CHECK-NEXT:      uop.store [[N]], [[P]] : f32
func.func @main(%x: tensor<4xf32>, %hi: tensor<f32>) -> tensor<4xf32> attributes {onnx.input_names = ["x", "hi"], onnx.output_names = ["y"]} {
  %y = onnx.Clip(%x, none, %hi) : (tensor<4xf32>, none, tensor<f32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// Clip without bounds is a copy.

// CHECK-LABEL: func.func @main()
// CHECK:         [[X:%.*]] = uop.load {{%.*}} : f32
// CHECK-NEXT:    [[P:%.*]] = uop.gep
// CHECK-NEXT:    uop.store [[X]], [[P]] : f32
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.Clip(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
