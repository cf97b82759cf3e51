// RUN: zant-opt %s -p 'onnx-to-uop{conv-lanes=16 conv-tile=4}' | filecheck %s

// A unit-stride 1x1 Conv with rows of at least L outputs takes pixel lanes, unless its result
// (here through a Relu) is the X of a Conv that copies X channels-last (the strided depthwise
// Conv: depthwise lanes): then each L-pixel vector would be stored as L scalars into that copy,
// and it takes channel lanes (weights packed by blocks of 16 output channels), whose L-channel
// vectors store whole once fuse-loops moves the copy into its stores (`_read_channels_last`).
// The same Conv read by a Relu that is a graph output keeps pixel lanes (no packed weights).

// CHECK-LABEL: func.func @main()
// CHECK:         %y = uop.define_local "y" : !uop.buffer<768xf32>
// CHECK-NEXT:    %y_packed_weights = uop.define_global "constant" 1 "y_packed_weights" {{.*}} : tensor<1x4x1x1x16xf32>
// CHECK:         %d_padded = uop.define_local "d_padded"
// CHECK:         %d_packed_weights = uop.define_global
// CHECK:         %y2 = uop.define_local "y2" : !uop.buffer<768xf32>
// CHECK-NOT:     y2_packed_weights
// CHECK:         func.return
func.func @main(%x: tensor<1x4x3x16xf32>) -> (tensor<1x16x2x8xf32>, tensor<1x16x3x16xf32>) attributes {onnx.input_names = ["x"], onnx.output_names = ["d", "r"]} {
  %w = onnx.Constant() {value = dense<0.25> : tensor<16x4x1x1xf32>} : () -> tensor<16x4x1x1xf32>
  %dw = onnx.Constant() {value = dense<0.5> : tensor<16x1x3x3xf32>} : () -> tensor<16x1x3x3xf32>
  %y = onnx.Conv(%x, %w) : (tensor<1x4x3x16xf32>, tensor<16x4x1x1xf32>) -> tensor<1x16x3x16xf32>
  %c = onnx.Relu(%y) : (tensor<1x16x3x16xf32>) -> tensor<1x16x3x16xf32>
  %d = onnx.Conv(%c, %dw) {group = 16 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x3x16xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x2x8xf32>
  %y2 = onnx.Conv(%x, %w) : (tensor<1x4x3x16xf32>, tensor<16x4x1x1xf32>) -> tensor<1x16x3x16xf32>
  %r = onnx.Relu(%y2) : (tensor<1x16x3x16xf32>) -> tensor<1x16x3x16xf32>
  func.return %d, %r : tensor<1x16x2x8xf32>, tensor<1x16x3x16xf32>
}
