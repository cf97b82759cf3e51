// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// Conv without padding: every tap is in bounds for the whole loop nest, so the input position
// is plain index arithmetic and the load has no check.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[XV:%.*]] = uop.view %x : !uop.buffer<32xf32> -> !uop.view<1x2x4x4xf32, strides [32, 16, 4, 1], offset 0>
// CHECK-DAG:     [[WV:%.*]] = uop.view %w : !uop.buffer<54xf32> -> !uop.view<3x2x3x3xf32, strides [18, 9, 3, 1], offset 0>
// CHECK-DAG:     [[YV:%.*]] = uop.view %y : !uop.buffer<12xf32> -> !uop.view<1x3x2x2xf32, strides [12, 4, 2, 1], offset 0>
// CHECK:         uop.range [[N:%.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range [[M:%.*]] = 0 to 3 {
// CHECK-NEXT:        uop.range [[OH:%.*]] = 0 to 2 {
// CHECK-NEXT:          uop.range [[OW:%.*]] = 0 to 2 {
// CHECK-NEXT:            [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:            uop.range [[C:%.*]] = 0 to 2 {
// CHECK-NEXT:              uop.range [[KH:%.*]] = 0 to 3 {
// CHECK-NEXT:                uop.range [[KW:%.*]] = 0 to 3 {
// CHECK-NEXT:                  [[IH:%.*]] = uop.add [[OH]], [[KH]] : index
// CHECK-NEXT:                  [[IW:%.*]] = uop.add [[OW]], [[KW]] : index
// CHECK-NEXT:                  [[PX:%.*]] = uop.gep [[XV]][[[N]], [[C]], [[IH]], [[IW]]]
// CHECK-NEXT:                  [[X:%.*]] = uop.load [[PX]] : f32
// CHECK-NEXT:                  [[PW:%.*]] = uop.gep [[WV]][[[M]], [[C]], [[KH]], [[KW]]]
// CHECK-NEXT:                  [[W:%.*]] = uop.load [[PW]] : f32
// CHECK-NEXT:                  uop.mulacc [[ACC]], [[X]], [[W]] : !uop.acc<f32>, f32
// CHECK-NEXT:                }
// CHECK-NEXT:              }
// CHECK-NEXT:            }
// CHECK-NEXT:            [[R:%.*]] = uop.acc_get [[ACC]] : !uop.acc<f32>, f32
// CHECK-NEXT:            [[PY:%.*]] = uop.gep [[YV]][[[N]], [[M]], [[OH]], [[OW]]]
// CHECK-NEXT:            uop.store [[R]], [[PY]] : f32
func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
  %y = onnx.Conv(%x, %w) : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
  func.return %y : tensor<1x3x2x2xf32>
}

// -----

// Pads, strides and a bias: ih = oh*2 + kh - 1 is checked against [0, 5), clamped before the
// gep, and the padded value replaced by 0; the bias is added in the epilogue.

// CHECK-LABEL: func.func @main()
// CHECK:                   [[TWO:%.*]] = uop.const 2 : index
// CHECK-NEXT:              [[S:%.*]] = uop.mul [[OH:%.*]], [[TWO]] : index
// CHECK-NEXT:              [[T:%.*]] = uop.add [[S]], [[KH:%.*]] : index
// CHECK-NEXT:              [[PAD:%.*]] = uop.const 1 : index
// CHECK-NEXT:              [[IH:%.*]] = uop.sub [[T]], [[PAD]] : index
// CHECK:                   [[ZERO:%.*]] = uop.const 0 : index
// CHECK-NEXT:              [[LO:%.*]] = uop.cmple [[ZERO]], [[IH]] : index
// CHECK-NEXT:              [[H:%.*]] = uop.const 5 : index
// CHECK-NEXT:              [[HI:%.*]] = uop.cmplt [[IH]], [[H]] : index
// CHECK:                   [[V1:%.*]] = uop.and [[LO]], [[HI]] : i1
// CHECK-NEXT:              [[V2:%.*]] = uop.and [[V1]], {{%.*}} : i1
// CHECK-NEXT:              [[VALID:%.*]] = uop.and [[V2]], {{%.*}} : i1
// CHECK:                   [[C0:%.*]] = uop.max [[IH]], {{%.*}} : index
// CHECK-NEXT:              [[LAST:%.*]] = uop.const 4 : index
// CHECK-NEXT:              [[CH:%.*]] = uop.min [[C0]], [[LAST]] : index
// CHECK:                   [[PX:%.*]] = uop.gep {{%.*}}[{{%.*}}, {{%.*}}, [[CH]], {{%.*}}]
// CHECK-NEXT:              [[XL:%.*]] = uop.load [[PX]] : f32
// CHECK-NEXT:              [[FILL:%.*]] = uop.const 0.000000e+00 : f32
// CHECK-NEXT:              [[XV:%.*]] = uop.where [[VALID]], [[XL]], [[FILL]] : f32
// CHECK:                   uop.mulacc {{%.*}}, [[XV]], {{%.*}}
// CHECK:                 [[ACC:%.*]] = uop.acc_get
// CHECK-NEXT:            [[PB:%.*]] = uop.gep %b[[[M:%.*]]] : !uop.buffer<2xf32>
// CHECK-NEXT:            [[B:%.*]] = uop.load [[PB]] : f32
// CHECK-NEXT:            [[R:%.*]] = uop.add [[ACC]], [[B]] : f32
// CHECK-NEXT:            [[PY:%.*]] = uop.gep
// CHECK-NEXT:            uop.store [[R]], [[PY]] : f32
func.func @main(%x: tensor<1x1x5x5xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x3x3xf32> attributes {onnx.input_names = ["x", "w", "b"], onnx.output_names = ["y"]} {
  %y = onnx.Conv(%x, %w, %b) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// -----

// Dilations without padding: ih = oh + kh*2, no checks.

// CHECK-LABEL: func.func @main()
// CHECK:                   [[D:%.*]] = uop.const 2 : index
// CHECK-NEXT:              [[KD:%.*]] = uop.mul [[KH:%.*]], [[D]] : index
// CHECK-NEXT:              [[IH:%.*]] = uop.add [[OH:%.*]], [[KD]] : index
// CHECK-NOT:               uop.cmplt
// CHECK-NOT:               uop.where
// CHECK:                   uop.mulacc
func.func @main(%x: tensor<1x1x7x7xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
  %y = onnx.Conv(%x, %w) {dilations = array<i64: 2, 2>} : (tensor<1x1x7x7xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  func.return %y : tensor<1x1x3x3xf32>
}

// -----

// Depthwise (group = C = M): output channel m reads input channel (m / 1) * 1 + c. The rows,
// 2 outputs wide, are one pixel block of 2: each weight load feeds two accumulators.

// CHECK-LABEL: func.func @main()
// CHECK:             uop.range [[M:%.*]] = 0 to 3 {
// CHECK:               uop.range {{%.*}} = 0 to 2 step 2 {
// CHECK-NEXT:            [[MG:%.*]] = uop.const 1 : index
// CHECK-NEXT:            [[G:%.*]] = uop.div [[M]], [[MG]] : index
// CHECK-NEXT:            [[CG:%.*]] = uop.const 1 : index
// CHECK-NEXT:            [[FIRST:%.*]] = uop.mul [[G]], [[CG]] : index
// CHECK:                 [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:            [[ACC1:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:            uop.range [[C:%.*]] = 0 to 1 {
// CHECK:                       [[CH:%.*]] = uop.add [[FIRST]], [[C]] : index
// CHECK:                       uop.gep {{%.*}}[{{%.*}}, [[CH]], {{%.*}}, {{%.*}}]
// CHECK:                       uop.gep {{%.*}}[[[M]], [[C]], {{%.*}}, {{%.*}}]
func.func @main(%x: tensor<1x3x4x4xf32>, %w: tensor<3x1x3x3xf32>) -> tensor<1x3x2x2xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
  %y = onnx.Conv(%x, %w) {group = 3 : i64} : (tensor<1x3x4x4xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x2x2xf32>
  func.return %y : tensor<1x3x2x2xf32>
}

// -----

// auto_pad SAME_UPPER with a 2x2 kernel: the one pad row/column goes at the end, so only the
// upper bound is checked and only the index's top is clamped.

// CHECK-LABEL: func.func @main()
// CHECK:                   [[IH:%.*]] = uop.add [[OH:%.*]], [[KH:%.*]] : index
// CHECK-NEXT:              [[IW:%.*]] = uop.add [[OW:%.*]], [[KW:%.*]] : index
// CHECK-NEXT:              [[H:%.*]] = uop.const 4 : index
// CHECK-NEXT:              [[VH:%.*]] = uop.cmplt [[IH]], [[H]] : index
// CHECK-NEXT:              [[W:%.*]] = uop.const 4 : index
// CHECK-NEXT:              [[VW:%.*]] = uop.cmplt [[IW]], [[W]] : index
// CHECK-NEXT:              [[VALID:%.*]] = uop.and [[VH]], [[VW]] : i1
// CHECK-NEXT:              [[L:%.*]] = uop.const 3 : index
// CHECK-NEXT:              [[CH:%.*]] = uop.min [[IH]], [[L]] : index
// CHECK-NEXT:              [[L2:%.*]] = uop.const 3 : index
// CHECK-NEXT:              [[CW:%.*]] = uop.min [[IW]], [[L2]] : index
// CHECK-NEXT:              uop.gep {{%.*}}[{{%.*}}, {{%.*}}, [[CH]], [[CW]]]
func.func @main(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
  %y = onnx.Conv(%x, %w) {auto_pad = "SAME_UPPER"} : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  func.return %y : tensor<1x1x4x4xf32>
}

// -----

// 1-D Conv: the same kernel with one spatial dimension.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range [[N:%.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range [[M:%.*]] = 0 to 2 {
// CHECK-NEXT:        uop.range [[O:%.*]] = 0 to 6 {
// CHECK-NEXT:          [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:          uop.range [[C:%.*]] = 0 to 1 {
// CHECK-NEXT:            uop.range [[K:%.*]] = 0 to 3 {
// CHECK-NEXT:              [[I:%.*]] = uop.add [[O]], [[K]] : index
// CHECK-NEXT:              uop.gep {{%.*}}[[[N]], [[C]], [[I]]]
func.func @main(%x: tensor<1x1x8xf32>, %w: tensor<2x1x3xf32>) -> tensor<1x2x6xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
  %y = onnx.Conv(%x, %w) : (tensor<1x1x8xf32>, tensor<2x1x3xf32>) -> tensor<1x2x6xf32>
  func.return %y : tensor<1x2x6xf32>
}
