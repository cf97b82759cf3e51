// RUN: zant-opt %s -p 'onnx-to-uop{conv-lanes=16 conv-tile=4}' | filecheck %s

// 24 output channels do not split into 16-lane blocks: `VectorConv.channel_spans` gives one
// block of 16 lanes and an 8-lane rest (cheaper than three 8-lane blocks). Each part has its
// own packed weights, reads its slice of the bias and writes its slice of Y (channels 16..23 at
// offset 16 x 15 = 240), and its lane loop is its own width.

// CHECK-LABEL: func.func @main()
// CHECK:         [[W16:%.*]] = uop.view %y_packed_weights : !uop.buffer<32xf32> -> !uop.view<1x2x1x1x16xf32
// CHECK:         [[B16:%.*]] = uop.view %b : !uop.buffer<24xf32> -> !uop.view<16xf32, strides [1], offset 0>
// CHECK:         [[Y16:%.*]] = uop.view %y : !uop.buffer<360xf32> -> !uop.view<1x16x3x5xf32, strides [360, 15, 5, 1], offset 0>
// CHECK:         %y_packed_weights_from = uop.define_global "constant" 2 "y_packed_weights_from_16" value dense<{{\[\[\[\[\[}}3.300000e+01, 3.500000e+01
// CHECK-SAME:      : tensor<1x2x1x1x8xf32>
// CHECK:         [[W8:%.*]] = uop.view %y_packed_weights_from : !uop.buffer<16xf32> -> !uop.view<1x2x1x1x8xf32
// CHECK:         [[B8:%.*]] = uop.view %b : !uop.buffer<24xf32> -> !uop.view<8xf32, strides [1], offset 16>
// CHECK:         [[Y8:%.*]] = uop.view %y : !uop.buffer<360xf32> -> !uop.view<1x8x3x5xf32, strides [360, 15, 5, 1], offset 240>
// CHECK:         uop.range [[L16:%.*]] = 0 to 16 {
// CHECK:           uop.gep [[W16]][{{.*}}, [[L16]]]
// CHECK:           uop.gep [[B16]]
// CHECK:           uop.gep [[Y16]]
// CHECK:         uop.range [[L8:%.*]] = 0 to 8 {
// CHECK:           uop.gep [[W8]][{{.*}}, [[L8]]]
// CHECK:           uop.gep [[B8]]
// CHECK:           uop.gep [[Y8]]
// CHECK:         func.return
func.func @main(%x: tensor<1x2x5x9xf32>) -> tensor<1x24x3x5xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]], [[[7.0]], [[8.0]]], [[[9.0]], [[10.0]]], [[[11.0]], [[12.0]]], [[[13.0]], [[14.0]]], [[[15.0]], [[16.0]]], [[[17.0]], [[18.0]]], [[[19.0]], [[20.0]]], [[[21.0]], [[22.0]]], [[[23.0]], [[24.0]]], [[[25.0]], [[26.0]]], [[[27.0]], [[28.0]]], [[[29.0]], [[30.0]]], [[[31.0]], [[32.0]]], [[[33.0]], [[34.0]]], [[[35.0]], [[36.0]]], [[[37.0]], [[38.0]]], [[[39.0]], [[40.0]]], [[[41.0]], [[42.0]]], [[[43.0]], [[44.0]]], [[[45.0]], [[46.0]]], [[[47.0]], [[48.0]]]]> : tensor<24x2x1x1xf32>} : () -> tensor<24x2x1x1xf32>
  %b = onnx.Constant() {value = dense<[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5]> : tensor<24xf32>} : () -> tensor<24xf32>
  %y = onnx.Conv(%x, %w, %b) {strides = array<i64: 2, 2>} : (tensor<1x2x5x9xf32>, tensor<24x2x1x1xf32>, tensor<24xf32>) -> tensor<1x24x3x5xf32>
  func.return %y : tensor<1x24x3x5xf32>
}
