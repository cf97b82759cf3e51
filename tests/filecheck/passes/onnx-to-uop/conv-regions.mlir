// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// A 3x3 Conv with pads 1 on a 4x4 input: rows 0 and 3 are border regions (checked like the
// whole window), then inside rows 1-2 columns 0 and 3 (checked in the columns only), and last
// the interior, rows 1-2 × columns 1-2, whose taps all read inside X: plain strided loads.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range [[N:%.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range [[M:%.*]] = 0 to 1 {
// CHECK-NEXT:        uop.range [[OH:%.*]] = 0 to 1 {
// CHECK-NEXT:          uop.range [[OW:%.*]] = 0 to 4 {
// CHECK:                     uop.cmple
// CHECK:                     uop.where
// CHECK:           uop.range [[OH:%.*]] = 3 to 4 {
// CHECK-NEXT:        uop.range [[OW:%.*]] = 0 to 4 {
// CHECK:                   uop.where
// CHECK:           uop.range [[OH:%.*]] = 1 to 3 {
// CHECK-NEXT:        uop.range [[OW:%.*]] = 0 to 1 {
// CHECK:                   [[T:%.*]] = uop.add [[OW]], {{%.*}} : index
// CHECK-NEXT:              uop.const 1 : index
// CHECK-NEXT:              [[IW:%.*]] = uop.sub [[T]], {{%.*}} : index
// CHECK-NEXT:              uop.const 0 : index
// CHECK-NEXT:              [[LO:%.*]] = uop.cmple {{%.*}}, [[IW]] : index
// CHECK-NEXT:              uop.const 4 : index
// CHECK-NEXT:              [[HI:%.*]] = uop.cmplt [[IW]], {{%.*}} : index
// CHECK-NEXT:              [[VALID:%.*]] = uop.and [[LO]], [[HI]] : i1
// CHECK:                   uop.where [[VALID]]
// CHECK:           uop.range [[OH:%.*]] = 1 to 3 {
// CHECK-NEXT:        uop.range [[OW:%.*]] = 3 to 4 {
// CHECK:                   uop.where
// CHECK:           uop.range [[OH:%.*]] = 1 to 3 {
// CHECK-NEXT:        uop.range [[OW:%.*]] = 1 to 3 {
// CHECK-NEXT:          [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:          uop.range [[C:%.*]] = 0 to 1 {
// CHECK-NEXT:            uop.range [[KH:%.*]] = 0 to 3 {
// CHECK-NEXT:              uop.range [[KW:%.*]] = 0 to 3 {
// CHECK-NEXT:                [[T:%.*]] = uop.add [[OH]], [[KH]] : index
// CHECK-NEXT:                [[PAD:%.*]] = uop.const 1 : index
// CHECK-NEXT:                [[IH:%.*]] = uop.sub [[T]], [[PAD]] : index
// CHECK-NEXT:                [[T2:%.*]] = uop.add [[OW]], [[KW]] : index
// CHECK-NEXT:                [[PAD2:%.*]] = uop.const 1 : index
// CHECK-NEXT:                [[IW:%.*]] = uop.sub [[T2]], [[PAD2]] : index
// CHECK-NEXT:                [[PX:%.*]] = uop.gep {{%.*}}[{{%.*}}, [[C]], [[IH]], [[IW]]]
// CHECK-NEXT:                [[X:%.*]] = uop.load [[PX]] : f32
// CHECK-NEXT:                [[PW:%.*]] = uop.gep {{%.*}}[{{%.*}}, [[C]], [[KH]], [[KW]]]
// CHECK-NEXT:                [[W:%.*]] = uop.load [[PW]] : f32
// CHECK-NEXT:                uop.mulacc [[ACC]], [[X]], [[W]] : !uop.acc<f32>, f32
// CHECK-NEXT:              }
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:          uop.acc_get [[ACC]]
// CHECK-NOT:       uop.range
// CHECK:           func.return
func.func @main(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
  %y = onnx.Conv(%x, %w) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  func.return %y : tensor<1x1x4x4xf32>
}

// -----

// A pointwise Conv has no border: one region. Its 8 output channels are one block, 8
// accumulators fed by one input load each step of the reduction over input channels, whose
// weights W[m + j, c] are contiguous in c.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range [[M:%.*]] = 0 to 8 step 8 {
// CHECK-COUNT-7:   uop.add [[M]], {{%.*}} : index
// CHECK:           uop.range [[OH:%.*]] = 0 to 3 {
// CHECK-NEXT:        uop.range [[OW:%.*]] = 0 to 3 {
// CHECK-COUNT-8:       uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:          uop.range [[C:%.*]] = 0 to 4 {
// CHECK-NOT:             uop.where
// CHECK:                 [[X:%.*]] = uop.load
// CHECK-COUNT-8:         uop.mulacc {{%.*}}, [[X]], {{%.*}} : !uop.acc<f32>, f32
// CHECK-COUNT-8:     uop.store
// CHECK-NOT:       uop.range
// CHECK:           func.return
func.func @main(%x: tensor<1x4x3x3xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<1x8x3x3xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
  %y = onnx.Conv(%x, %w) : (tensor<1x4x3x3xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x3x3xf32>
  func.return %y : tensor<1x8x3x3xf32>
}

// -----

// Depthwise: the channels do not block, so the interior's columns do, 4 per iteration (one
// weight load feeds 4 accumulators); the remainder column 5 has its own loop.

// CHECK-LABEL: func.func @main()
// CHECK:             uop.range [[OW:%.*]] = 6 to 7 {
// CHECK:           uop.range [[OH:%.*]] = 1 to 3 {
// CHECK-NEXT:        uop.range [[OW:%.*]] = 1 to 5 step 4 {
// CHECK-COUNT-3:       uop.add [[OW]], {{%.*}} : index
// CHECK-COUNT-4:       uop.define_acc
// CHECK-NOT:           uop.where
// CHECK:               uop.mulacc {{%.*}}, {{%.*}}, [[W:%.*]] : !uop.acc<f32>, f32
// CHECK-COUNT-3:       uop.mulacc {{%.*}}, {{%.*}}, [[W]] : !uop.acc<f32>, f32
// CHECK:           uop.range [[OH:%.*]] = 1 to 3 {
// CHECK-NEXT:        uop.range [[OW:%.*]] = 5 to 6 {
// CHECK:               uop.define_acc
// CHECK-NEXT:          uop.range
// CHECK-NOT:       uop.where
// CHECK:           func.return
func.func @main(%x: tensor<1x2x4x7xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x4x7xf32> attributes {onnx.input_names = ["x", "w"], onnx.output_names = ["y"]} {
  %y = onnx.Conv(%x, %w) {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x7xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x7xf32>
  func.return %y : tensor<1x2x4x7xf32>
}
