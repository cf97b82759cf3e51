// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// MaxPool with pads and strides: padded taps read -inf, so they never win the max. As in the
// ONNX reference, the accumulator starts at the window's first tap inside X (per dimension
// tap max(0, pad - o*stride)) and takes a tap only when it compares greater (compare and
// select, no NaN-propagating max): a NaN first tap stays, a later NaN is skipped.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range [[N:%.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range [[C:%.*]] = 0 to 2 {
// CHECK-NEXT:        uop.range [[OH:%.*]] = 0 to 3 {
// CHECK-NEXT:          uop.range [[OW:%.*]] = 0 to 3 {
// CHECK-NEXT:            [[ACC:%.*]] = uop.define_acc 0xff800000 : f32
// CHECK-NEXT:            [[S:%.*]] = uop.const 2 : index
// CHECK-NEXT:            [[START:%.*]] = uop.mul [[OH]], [[S]] : index
// CHECK-NEXT:            [[PAD:%.*]] = uop.const 1 : index
// CHECK-NEXT:            [[BEFORE:%.*]] = uop.sub [[PAD]], [[START]] : index
// CHECK-NEXT:            [[Z:%.*]] = uop.const 0 : index
// CHECK-NEXT:            [[K0:%.*]] = uop.max [[BEFORE]], [[Z]] : index
// CHECK:                 [[FIRST:%.*]] = uop.where {{%.*}}, {{%.*}}, {{%.*}} : f32
// CHECK-NEXT:            uop.acc_set [[ACC]], [[FIRST]] : !uop.acc<f32>, f32
// CHECK-NEXT:            uop.range [[KH:%.*]] = 0 to 3 {
// CHECK-NEXT:              uop.range [[KW:%.*]] = 0 to 3 {
// CHECK:                     uop.and
// CHECK:                     [[PX:%.*]] = uop.gep {{%.*}}[[[N]], [[C]], {{%.*}}, {{%.*}}]
// CHECK-NEXT:                [[XL:%.*]] = uop.load [[PX]] : f32
// CHECK-NEXT:                [[NINF:%.*]] = uop.const 0xff800000 : f32
// CHECK-NEXT:                [[X:%.*]] = uop.where {{%.*}}, [[XL]], [[NINF]] : f32
// CHECK-NEXT:                [[OLD:%.*]] = uop.acc_get [[ACC]] : !uop.acc<f32>, f32
// CHECK-NEXT:                [[GT:%.*]] = uop.cmplt [[OLD]], [[X]] : f32
// CHECK-NEXT:                [[OLD2:%.*]] = uop.acc_get [[ACC]] : !uop.acc<f32>, f32
// CHECK-NEXT:                [[NEW:%.*]] = uop.where [[GT]], [[X]], [[OLD2]] : f32
// CHECK-NEXT:                uop.acc_set [[ACC]], [[NEW]] : !uop.acc<f32>, f32
// CHECK-NEXT:              }
// CHECK-NEXT:            }
// CHECK-NEXT:            [[R:%.*]] = uop.acc_get [[ACC]] : !uop.acc<f32>, f32
// CHECK-NEXT:            [[PY:%.*]] = uop.gep {{%.*}}[[[N]], [[C]], [[OH]], [[OW]]]
// CHECK-NEXT:            uop.store [[R]], [[PY]] : f32
func.func @main(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.MaxPool(%x) {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// -----

// MaxPool with ceil_mode: the last window hangs past the end, so only the upper bound is checked.

// CHECK-LABEL: func.func @main()
// CHECK:                     [[H:%.*]] = uop.const 5 : index
// CHECK-NEXT:                {{%.*}} = uop.cmplt {{%.*}}, [[H]] : index
// CHECK-NOT:                 uop.cmple
// CHECK:                     uop.min
// CHECK-NOT:                 uop.max {{.*}} : index
// CHECK:                     uop.where
func.func @main(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.MaxPool(%x) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  func.return %y : tensor<1x1x3x3xf32>
}

// -----

// AveragePool without padding: a sum, then a division by the constant kernel size.

// CHECK-LABEL: func.func @main()
// CHECK:                 [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:            uop.range [[KH:%.*]] = 0 to 2 {
// CHECK-NEXT:              uop.range [[KW:%.*]] = 0 to 2 {
// CHECK-NOT:                 uop.where
// CHECK:                     [[X:%.*]] = uop.load
// CHECK-NEXT:                [[OLD:%.*]] = uop.acc_get [[ACC]]
// CHECK-NEXT:                [[NEW:%.*]] = uop.add [[OLD]], [[X]] : f32
// CHECK-NEXT:                uop.acc_set [[ACC]], [[NEW]]
// CHECK-NEXT:              }
// CHECK-NEXT:            }
// CHECK-NEXT:            [[S:%.*]] = uop.acc_get [[ACC]]
// CHECK-NEXT:            [[K:%.*]] = uop.const 4.000000e+00 : f32
// CHECK-NEXT:            [[R:%.*]] = uop.div [[S]], [[K]] : f32
func.func @main(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.AveragePool(%x) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  func.return %y : tensor<1x1x2x2xf32>
}

// -----

// AveragePool with pads, count_include_pad = 0: a second accumulator counts the in-bounds taps.

// CHECK-LABEL: func.func @main()
// CHECK:                 [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:            [[CNT:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK:                     uop.where [[VALID:%.*]], {{%.*}}, {{%.*}} : f32
// CHECK:                     uop.acc_set [[ACC]]
// CHECK-NEXT:                [[ONE:%.*]] = uop.const 1.000000e+00 : f32
// CHECK-NEXT:                [[ZERO:%.*]] = uop.const 0.000000e+00 : f32
// CHECK-NEXT:                [[INC:%.*]] = uop.where [[VALID]], [[ONE]], [[ZERO]] : f32
// CHECK-NEXT:                [[OLD:%.*]] = uop.acc_get [[CNT]]
// CHECK-NEXT:                [[NEW:%.*]] = uop.add [[OLD]], [[INC]] : f32
// CHECK-NEXT:                uop.acc_set [[CNT]], [[NEW]]
// CHECK:                 [[S:%.*]] = uop.acc_get [[ACC]]
// CHECK-NEXT:            [[N:%.*]] = uop.acc_get [[CNT]]
// CHECK-NEXT:            {{%.*}} = uop.div [[S]], [[N]] : f32
func.func @main(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.AveragePool(%x) {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  func.return %y : tensor<1x1x3x3xf32>
}

// -----

// AveragePool with count_include_pad = 1 and windows inside input + pads: constant divisor 9.

// CHECK-LABEL: func.func @main()
// CHECK:                 [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NOT:             uop.define_acc
// CHECK:                 [[K:%.*]] = uop.const 9.000000e+00 : f32
// CHECK-NEXT:            uop.div {{%.*}}, [[K]] : f32
func.func @main(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.AveragePool(%x) {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, count_include_pad = 1 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  func.return %y : tensor<1x1x3x3xf32>
}

// -----

// GlobalAveragePool: one window over the whole 3x4 plane, no checks, divisor 12.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range [[N:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[C:%.*]] = 0 to 3 {
// CHECK-NEXT:        uop.range [[OH:%.*]] = 0 to 1 {
// CHECK-NEXT:          uop.range [[OW:%.*]] = 0 to 1 {
// CHECK-NEXT:            [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:            uop.range [[KH:%.*]] = 0 to 3 {
// CHECK-NEXT:              uop.range [[KW:%.*]] = 0 to 4 {
// CHECK-NEXT:                [[IH:%.*]] = uop.add [[OH]], [[KH]] : index
// CHECK-NEXT:                [[IW:%.*]] = uop.add [[OW]], [[KW]] : index
// CHECK-NEXT:                uop.gep {{%.*}}[[[N]], [[C]], [[IH]], [[IW]]]
// CHECK:                 uop.const 1.200000e+01 : f32
func.func @main(%x: tensor<2x3x3x4xf32>) -> tensor<2x3x1x1xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.GlobalAveragePool(%x) : (tensor<2x3x3x4xf32>) -> tensor<2x3x1x1xf32>
  func.return %y : tensor<2x3x1x1xf32>
}

// -----

// GlobalMaxPool: the same nest combining with max from -inf.

// CHECK-LABEL: func.func @main()
// CHECK:                 uop.define_acc 0xff800000 : f32
// CHECK:                     uop.max {{%.*}}, {{%.*}} : f32
func.func @main(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.GlobalMaxPool(%x) : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32>
  func.return %y : tensor<1x2x1x1xf32>
}
