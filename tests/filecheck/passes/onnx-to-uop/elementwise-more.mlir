// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// Cast: one uop.cast to the ONNX result type.

// CHECK-LABEL: func.func @main()
// CHECK:         [[V:%.*]] = uop.load {{%.*}} : f32
// CHECK-NEXT:    [[C:%.*]] = uop.cast [[V]] : f32 to i8
// CHECK-NEXT:    [[P:%.*]] = uop.gep {{%.*}}[{{%.*}}] : !uop.buffer<4xi8>
// CHECK-NEXT:    uop.store [[C]], [[P]] : i8
func.func @main(%x: tensor<4xf32>) -> tensor<4xi8> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.Cast(%x) {to = 3 : i64} : (tensor<4xf32>) -> tensor<4xi8>
  func.return %y : tensor<4xi8>
}

// -----

// CastLike: the second operand only gives the type; it is neither broadcast nor read.

// CHECK-LABEL: func.func @main()
// CHECK-NOT:     uop.view
// CHECK:         [[V:%.*]] = uop.load {{%.*}} : i32
// CHECK-NEXT:    [[C:%.*]] = uop.cast [[V]] : i32 to f16
// CHECK-NOT:     uop.load
// CHECK:         uop.store [[C]], {{%.*}} : f16
func.func @main(%x: tensor<4xi32>, %like: tensor<2xf16>) -> tensor<4xf16> attributes {onnx.input_names = ["x", "like"], onnx.output_names = ["y"]} {
  %y = onnx.CastLike(%x, %like) : (tensor<4xi32>, tensor<2xf16>) -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}

// -----

// Where: the condition and both values broadcast (three ways) through stride-0 views.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[CV:%.*]] = uop.view {{%.*}} : !uop.buffer<2xi1> -> !uop.view<2x3xi1, strides [1, 0], offset 0>
// CHECK-DAG:     [[AV:%.*]] = uop.view {{%.*}} : !uop.buffer<3xi64> -> !uop.view<2x3xi64, strides [0, 1], offset 0>
// CHECK-DAG:     [[BV:%.*]] = uop.view {{%.*}} : !uop.buffer<1xi64> -> !uop.view<2x3xi64, strides [0, 0], offset 0>
// CHECK:         [[C:%.*]] = uop.load {{%.*}} : i1
// CHECK:         [[A:%.*]] = uop.load {{%.*}} : i64
// CHECK:         [[B:%.*]] = uop.load {{%.*}} : i64
// CHECK-NEXT:    [[W:%.*]] = uop.where [[C]], [[A]], [[B]] : i64
// CHECK:         uop.store [[W]], {{%.*}} : i64
func.func @main(%c: tensor<2x1xi1>, %a: tensor<3xi64>, %b: tensor<i64>) -> tensor<2x3xi64> attributes {onnx.input_names = ["c", "a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.Where(%c, %a, %b) : (tensor<2x1xi1>, tensor<3xi64>, tensor<i64>) -> tensor<2x3xi64>
  func.return %y : tensor<2x3xi64>
}

// -----

// Greater(a, b) is cmplt(b, a), stored as i1.

// CHECK-LABEL: func.func @main()
// CHECK:         [[A:%.*]] = uop.load {{%.*}} : f32
// CHECK:         [[B:%.*]] = uop.load {{%.*}} : f32
// CHECK-NEXT:    [[R:%.*]] = uop.cmplt [[B]], [[A]] : f32
// CHECK:         uop.store [[R]], {{%.*}} : i1
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.Greater(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return %y : tensor<4xi1>
}

// -----

// Logic on i1: Xor is uop.xor.

// CHECK-LABEL: func.func @main()
// CHECK:         [[R:%.*]] = uop.xor {{%.*}}, {{%.*}} : i1
// CHECK:         uop.store [[R]], {{%.*}} : i1
func.func @main(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.Xor(%a, %b) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return %y : tensor<4xi1>
}

// -----

// Mod (fmod=0) on signed integers: the C remainder, moved to the divisor's sign when they differ.

// CHECK-LABEL: func.func @main()
// CHECK:         [[A:%.*]] = uop.load {{%.*}} : i32
// CHECK:         [[B:%.*]] = uop.load {{%.*}} : i32
// CHECK-NEXT:    [[R:%.*]] = uop.rem [[A]], [[B]] : i32
// CHECK-NEXT:    [[Z:%.*]] = uop.const 0 : i32
// CHECK-NEXT:    [[RN:%.*]] = uop.cmplt [[R]], [[Z]] : i32
// CHECK-NEXT:    [[BN:%.*]] = uop.cmplt [[B]], [[Z]] : i32
// CHECK-NEXT:    [[D:%.*]] = uop.cmpne [[RN]], [[BN]] : i1
// CHECK-NEXT:    [[NZ:%.*]] = uop.cmpne [[R]], [[Z]] : i32
// CHECK-NEXT:    [[F:%.*]] = uop.and [[NZ]], [[D]] : i1
// CHECK-NEXT:    [[S:%.*]] = uop.add [[R]], [[B]] : i32
// CHECK-NEXT:    [[M:%.*]] = uop.where [[F]], [[S]], [[R]] : i32
// CHECK:         uop.store [[M]], {{%.*}} : i32
func.func @main(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.Mod(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %y : tensor<4xi32>
}

// -----

// BitShift direction RIGHT is uop.shr.

// CHECK-LABEL: func.func @main()
// CHECK:         [[R:%.*]] = uop.shr {{%.*}}, {{%.*}} : ui8
// CHECK:         uop.store [[R]], {{%.*}} : ui8
func.func @main(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> attributes {onnx.input_names = ["a", "b"], onnx.output_names = ["y"]} {
  %y = onnx.BitShift(%a, %b) {direction = "RIGHT"} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  func.return %y : tensor<4xui8>
}

// -----

// IsInf with detect_negative=0: one comparison with +inf.

// CHECK-LABEL: func.func @main()
// CHECK:         [[X:%.*]] = uop.load {{%.*}} : f64
// CHECK-NEXT:    [[INF:%.*]] = uop.const 0x7ff0000000000000 : f64
// CHECK-NEXT:    [[R:%.*]] = uop.cmpeq [[X]], [[INF]] : f64
// CHECK-NEXT:    uop.gep
// CHECK-NEXT:    uop.store [[R]], {{%.*}} : i1
func.func @main(%x: tensor<4xf64>) -> tensor<4xi1> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.IsInf(%x) {detect_negative = 0 : i64} : (tensor<4xf64>) -> tensor<4xi1>
  func.return %y : tensor<4xi1>
}

// -----

// Integer Pow: computed in f64 and cast back.

// CHECK-LABEL: func.func @main()
// CHECK:         [[X:%.*]] = uop.load {{%.*}} : i32
// CHECK:         [[E:%.*]] = uop.load {{%.*}} : i32
// CHECK-NEXT:    [[XF:%.*]] = uop.cast [[X]] : i32 to f64
// CHECK-NEXT:    [[EF:%.*]] = uop.cast [[E]] : i32 to f64
// CHECK-NEXT:    [[P:%.*]] = uop.pow [[XF]], [[EF]] : f64
// CHECK-NEXT:    [[R:%.*]] = uop.cast [[P]] : f64 to i32
// CHECK:         uop.store [[R]], {{%.*}} : i32
func.func @main(%x: tensor<4xi32>, %e: tensor<4xi32>) -> tensor<4xi32> attributes {onnx.input_names = ["x", "e"], onnx.output_names = ["y"]} {
  %y = onnx.Pow(%x, %e) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %y : tensor<4xi32>
}

// -----

// Trigonometry: one primitive of the same name.

// CHECK-LABEL: func.func @main()
// CHECK:         [[R:%.*]] = uop.atanh {{%.*}} : f16
// CHECK:         uop.store [[R]], {{%.*}} : f16
func.func @main(%x: tensor<4xf16>) -> tensor<4xf16> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.Atanh(%x) : (tensor<4xf16>) -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}

// -----

// HardSigmoid: max(0, min(1, alpha*x + beta)), the attributes as constants.

// CHECK-LABEL: func.func @main()
// CHECK:         [[X:%.*]] = uop.load {{%.*}} : f32
// CHECK-NEXT:    [[A:%.*]] = uop.const 2.500000e-01 : f32
// CHECK-NEXT:    [[M:%.*]] = uop.mul [[A]], [[X]] : f32
// CHECK-NEXT:    [[B:%.*]] = uop.const 5.000000e-01 : f32
// CHECK-NEXT:    [[L:%.*]] = uop.add [[M]], [[B]] : f32
// CHECK:         [[LO:%.*]] = uop.min {{%.*}}, [[L]] : f32
// CHECK-NEXT:    [[R:%.*]] = uop.max {{%.*}}, [[LO]] : f32
// CHECK:         uop.store [[R]], {{%.*}} : f32
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.HardSigmoid(%x) {alpha = 2.500000e-01 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// PRelu: the slope broadcast to x's shape (stride 0), selected where x < 0.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[SV:%.*]] = uop.view {{%.*}} : !uop.buffer<3xf32> -> !uop.view<2x3xf32, strides [0, 1], offset 0>
// CHECK:         [[X:%.*]] = uop.load {{%.*}} : f32
// CHECK:         [[S:%.*]] = uop.load {{%.*}} : f32
// CHECK-NEXT:    [[Z:%.*]] = uop.const 0.000000e+00 : f32
// CHECK-NEXT:    [[N:%.*]] = uop.cmplt [[X]], [[Z]] : f32
// CHECK-NEXT:    [[P:%.*]] = uop.mul [[S]], [[X]] : f32
// CHECK-NEXT:    [[R:%.*]] = uop.where [[N]], [[P]], [[X]] : f32
// CHECK:         uop.store [[R]], {{%.*}} : f32
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> attributes {onnx.input_names = ["x", "s"], onnx.output_names = ["y"]} {
  %y = onnx.PRelu(%x, %s) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
