// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// QuantizeLinear per axis: scale and zero point are stride-0 views over x's shape (one value per
// index of axis 1). An f32 x / scale rounds half to even by adding 1.5·2^23 (no uop.round, no
// float compare): the sum's bits are 0x4B400000 + rint(x / scale); clamped below to
// 0x4B400000 - zp + (-128) (so the subtraction cannot wrap), less 0x4B400000 - zp, then clamped
// to [-128, 127] in i32 before the (truncating) cast to i8.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[ZP:%.*]] = uop.view %zp : !uop.buffer<3xi8> -> !uop.view<2x3xi8, strides [0, 1], offset 0>
// CHECK-DAG:     [[S:%.*]] = uop.view %s : !uop.buffer<3xf32> -> !uop.view<2x3xf32, strides [0, 1], offset 0>
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 3 {
// CHECK-NEXT:        [[PX:%.*]] = uop.gep {{%.*}}[[[I]], [[J]]]
// CHECK-NEXT:        [[X:%.*]] = uop.load [[PX]] : f32
// CHECK-NEXT:        [[PS:%.*]] = uop.gep [[S]][[[I]], [[J]]]
// CHECK-NEXT:        [[SV:%.*]] = uop.load [[PS]] : f32
// CHECK-NEXT:        [[D:%.*]] = uop.div [[X]], [[SV]] : f32
// CHECK-NEXT:        [[PZ:%.*]] = uop.gep [[ZP]][[[I]], [[J]]]
// CHECK-NEXT:        [[Z8:%.*]] = uop.load [[PZ]] : i8
// CHECK-NEXT:        [[Z:%.*]] = uop.cast [[Z8]] : i8 to i32
// CHECK-NEXT:        [[M:%.*]] = uop.const 0x4B400000 : f32
// CHECK-NEXT:        [[R:%.*]] = uop.add [[D]], [[M]] : f32
// CHECK-NEXT:        [[BITS:%.*]] = uop.bitcast [[R]] : f32 to i32
// CHECK-NEXT:        [[MB:%.*]] = uop.const 1262485504 : i32
// CHECK-NEXT:        [[BIAS:%.*]] = uop.sub [[MB]], [[Z]] : i32
// CHECK-NEXT:        [[LOW:%.*]] = uop.const -128 : i32
// CHECK-NEXT:        [[FLOOR:%.*]] = uop.add [[BIAS]], [[LOW]] : i32
// CHECK-NEXT:        [[ABOVE:%.*]] = uop.max [[BITS]], [[FLOOR]] : i32
// CHECK-NEXT:        [[Q:%.*]] = uop.sub [[ABOVE]], [[BIAS]] : i32
// CHECK-NEXT:        [[LOW2:%.*]] = uop.const -128 : i32
// CHECK-NEXT:        [[QL:%.*]] = uop.max [[Q]], [[LOW2]] : i32
// CHECK-NEXT:        [[HIGH:%.*]] = uop.const 127 : i32
// CHECK-NEXT:        [[QH:%.*]] = uop.min [[QL]], [[HIGH]] : i32
// CHECK-NEXT:        [[Y:%.*]] = uop.cast [[QH]] : i32 to i8
// CHECK-NEXT:        [[PY:%.*]] = uop.gep {{%.*}}[[[I]], [[J]]]
// CHECK-NEXT:        uop.store [[Y]], [[PY]] : i8
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %zp: tensor<3xi8>) -> tensor<2x3xi8> attributes {onnx.input_names = ["x", "s", "zp"], onnx.output_names = ["y"]} {
  %y = onnx.QuantizeLinear(%x, %s, %zp) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xi8>
  func.return %y : tensor<2x3xi8>
}

// -----

// QLinearMatMul with a per-column scale and zero point of b: per-tensor parameters are loaded
// once ahead of the loops; an int32 accumulator sums centered products; requantization forms
// M = a_scale · b_scale / y_scale in f32 as the reference does, the product and the zero point in
// f64, rounds half to even and saturates in the cast.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[BZP:%.*]] = uop.view %bzp : !uop.buffer<3xui8> -> !uop.view<4x3xui8, strides [0, 1], offset 0>
// CHECK-DAG:     [[BS:%.*]] = uop.view %bs : !uop.buffer<3xf32> -> !uop.view<2x3xf32, strides [0, 1], offset 0>
// CHECK:         [[AS:%.*]] = uop.load {{%.*}} : f32
// CHECK:         [[YS:%.*]] = uop.load {{%.*}} : f32
// CHECK:         [[YZPL:%.*]] = uop.load {{%.*}} : ui8
// CHECK-NEXT:    [[YZP:%.*]] = uop.cast [[YZPL]] : ui8 to f64
// CHECK:         [[AZPL:%.*]] = uop.load {{%.*}} : ui8
// CHECK-NEXT:    [[AZP:%.*]] = uop.cast [[AZPL]] : ui8 to i32
// CHECK-NEXT:    uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 3 {
// CHECK-NEXT:        [[ACC:%.*]] = uop.define_acc 0 : i32
// CHECK-NEXT:        uop.range [[K:%.*]] = 0 to 4 {
// CHECK:               [[AI:%.*]] = uop.cast {{%.*}} : ui8 to i32
// CHECK-NEXT:          [[A:%.*]] = uop.sub [[AI]], [[AZP]] : i32
// CHECK:               uop.gep [[BZP]][[[K]], [[J]]]
// CHECK:               [[B:%.*]] = uop.sub {{%.*}}, {{%.*}} : i32
// CHECK-NEXT:          uop.mulacc [[ACC]], [[A]], [[B]] : !uop.acc<i32>, i32
// CHECK-NEXT:        }
// CHECK-NEXT:        [[SUM:%.*]] = uop.acc_get [[ACC]] : !uop.acc<i32>, i32
// CHECK-NEXT:        [[SUMF:%.*]] = uop.cast [[SUM]] : i32 to f64
// CHECK-NEXT:        [[PBS:%.*]] = uop.gep [[BS]][[[I]], [[J]]]
// CHECK-NEXT:        [[BSV:%.*]] = uop.load [[PBS]] : f32
// CHECK-NEXT:        [[AB:%.*]] = uop.mul [[AS]], [[BSV]] : f32
// CHECK-NEXT:        [[M:%.*]] = uop.div [[AB]], [[YS]] : f32
// CHECK-NEXT:        [[MF:%.*]] = uop.cast [[M]] : f32 to f64
// CHECK-NEXT:        [[P:%.*]] = uop.mul [[SUMF]], [[MF]] : f64
// CHECK-NEXT:        [[V:%.*]] = uop.add [[P]], [[YZP]] : f64
// CHECK-NEXT:        [[R:%.*]] = uop.round [[V]] : f64
// CHECK-NEXT:        [[Y:%.*]] = uop.cast [[R]] : f64 to ui8
// CHECK-NEXT:        [[PY:%.*]] = uop.gep {{%.*}}[[[I]], [[J]]]
// CHECK-NEXT:        uop.store [[Y]], [[PY]] : ui8
func.func @main(%a: tensor<2x4xui8>, %as: tensor<f32>, %azp: tensor<ui8>, %b: tensor<4x3xui8>, %bs: tensor<3xf32>, %bzp: tensor<3xui8>, %ys: tensor<f32>, %yzp: tensor<ui8>) -> tensor<2x3xui8> attributes {onnx.input_names = ["a", "as", "azp", "b", "bs", "bzp", "ys", "yzp"], onnx.output_names = ["y"]} {
  %y = onnx.QLinearMatMul(%a, %as, %azp, %b, %bs, %bzp, %ys, %yzp) : (tensor<2x4xui8>, tensor<f32>, tensor<ui8>, tensor<4x3xui8>, tensor<3xf32>, tensor<3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  func.return %y : tensor<2x3xui8>
}
