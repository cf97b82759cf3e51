// RUN: zant-opt %s -p onnx-to-uop | filecheck %s

// ConvTranspose is a gather over the output: output o and tap k read input
// i = (o + pad_begin - k) / stride where the division is exact (rem == 0) and i is inside X;
// i is clamped before the gep and a rejected tap reads 0. W is (C, M/group, k).

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[XV:%.*]] = uop.view %x : !uop.buffer<6xf32> -> !uop.view<1x2x3xf32, strides [6, 3, 1], offset 0>
// CHECK-DAG:     [[WV:%.*]] = uop.view %w : !uop.buffer<6xf32> -> !uop.view<2x1x3xf32, strides [3, 3, 1], offset 0>
// CHECK:         uop.range [[N:%.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range [[M:%.*]] = 0 to 1 {
// CHECK-NEXT:        uop.range [[O:%.*]] = 0 to 6 {
// CHECK-NEXT:          [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:          uop.range [[C:%.*]] = 0 to 2 {
// CHECK-NEXT:            uop.range [[K:%.*]] = 0 to 3 {
// CHECK-NEXT:              [[PAD:%.*]] = uop.const 1 : index
// CHECK-NEXT:              [[SHIFTED:%.*]] = uop.add [[O]], [[PAD]] : index
// CHECK-NEXT:              [[NUM:%.*]] = uop.sub [[SHIFTED]], [[K]] : index
// CHECK-NEXT:              [[S:%.*]] = uop.const 2 : index
// CHECK-NEXT:              [[REM:%.*]] = uop.rem [[NUM]], [[S]] : index
// CHECK-NEXT:              [[ZERO:%.*]] = uop.const 0 : index
// CHECK-NEXT:              [[EXACT:%.*]] = uop.cmpeq [[REM]], [[ZERO]] : index
// CHECK-NEXT:              [[I:%.*]] = uop.div [[NUM]], [[S]] : index
// CHECK:                   [[LO:%.*]] = uop.cmple {{%.*}}, [[I]] : index
// CHECK:                   [[HI:%.*]] = uop.cmplt [[I]], {{%.*}} : index
// CHECK-NEXT:              [[INSIDE:%.*]] = uop.and [[LO]], [[HI]] : i1
// CHECK-NEXT:              [[VALID:%.*]] = uop.and [[INSIDE]], [[EXACT]] : i1
// CHECK:                   [[CLAMPED:%.*]] = uop.min {{%.*}}, {{%.*}} : index
// CHECK-NEXT:              [[PX:%.*]] = uop.gep [[XV]][[[N]], [[C]], [[CLAMPED]]]
// CHECK-NEXT:              [[XL:%.*]] = uop.load [[PX]] : f32
// CHECK-NEXT:              [[FILL:%.*]] = uop.const 0.000000e+00 : f32
// CHECK-NEXT:              [[X:%.*]] = uop.where [[VALID]], [[XL]], [[FILL]] : f32
// CHECK-NEXT:              [[PW:%.*]] = uop.gep [[WV]][[[C]], [[M]], [[K]]]
// CHECK-NEXT:              [[W:%.*]] = uop.load [[PW]] : f32
// CHECK-NEXT:              uop.mulacc [[ACC]], [[X]], [[W]] : !uop.acc<f32>, f32
func.func @main(%x: tensor<1x2x3xf32>, %w: tensor<2x1x3xf32>) -> tensor<1x1x6xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
  %y = onnx.ConvTranspose(%x, %w) {strides = array<i64: 2>, pads = array<i64: 1, 0>} : (tensor<1x2x3xf32>, tensor<2x1x3xf32>) -> tensor<1x1x6xf32>
  func.return %y : tensor<1x1x6xf32>
}
