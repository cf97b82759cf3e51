// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// Storage floats (bfloat16, float8, float4e2m1) convert through f32: f16 to float8 is widened to
// f32 first, then narrowed, saturating (ONNX's default).

// CHECK-LABEL: func.func @main()
// CHECK:         [[V:%.*]] = uop.load {{%.*}} : f16
// CHECK-NEXT:    [[W:%.*]] = uop.cast [[V]] : f16 to f32
// CHECK-NEXT:    [[C:%.*]] = uop.cast [[W]] : f32 to f8E4M3FN
// CHECK:         uop.store [[C]], {{%.*}} : f8E4M3FN
func.func @main(%x: tensor<4xf16>) -> tensor<4xf8E4M3FN> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.Cast(%x) {to = 17 : i64} : (tensor<4xf16>) -> tensor<4xf8E4M3FN>
  func.return %y : tensor<4xf8E4M3FN>
}

// -----

// saturate = 0: uop.cast_unsaturated (out of range is Inf for e5m2, NaN for the others).

// CHECK-LABEL: func.func @main()
// CHECK:         [[V:%.*]] = uop.load {{%.*}} : f32
// CHECK-NEXT:    [[C:%.*]] = uop.cast_unsaturated [[V]] : f32 to f8E5M2
// CHECK:         uop.store [[C]], {{%.*}} : f8E5M2
func.func @main(%x: tensor<4xf32>) -> tensor<4xf8E5M2> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.Cast(%x) {to = 19 : i64, saturate = 0 : i64} : (tensor<4xf32>) -> tensor<4xf8E5M2>
  func.return %y : tensor<4xf8E5M2>
}

// -----

// A float8 to an integer: exactly to f32, then ONNX's float-to-int cast.

// CHECK-LABEL: func.func @main()
// CHECK:         [[V:%.*]] = uop.load {{%.*}} : f8E4M3FNUZ
// CHECK-NEXT:    [[W:%.*]] = uop.cast [[V]] : f8E4M3FNUZ to f32
// CHECK-NEXT:    [[C:%.*]] = uop.cast [[W]] : f32 to i32
// CHECK:         uop.store [[C]], {{%.*}} : i32
func.func @main(%x: tensor<4xf8E4M3FNUZ>) -> tensor<4xi32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.Cast(%x) {to = 6 : i64} : (tensor<4xf8E4M3FNUZ>) -> tensor<4xi32>
  func.return %y : tensor<4xi32>
}

// -----

// A float to int4 truncates to int32 and wraps to the type (as onnx's reference); the output
// buffer holds 5 int4 elements in 3 bytes (the printer packs them).

// CHECK-LABEL: func.func @main()
// CHECK:         [[V:%.*]] = uop.load {{%.*}} : f32
// CHECK-NEXT:    [[I:%.*]] = uop.cast [[V]] : f32 to i32
// CHECK-NEXT:    [[C:%.*]] = uop.cast [[I]] : i32 to i4
// CHECK:         uop.store [[C]], {{%.*}} : i4
func.func @main(%x: tensor<5xf32>) -> tensor<5xi4> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.Cast(%x) {to = 22 : i64} : (tensor<5xf32>) -> tensor<5xi4>
  func.return %y : tensor<5xi4>
}
