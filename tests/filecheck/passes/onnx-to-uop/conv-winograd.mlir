// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-lanes=16 conv-tile=6}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-lanes=16 conv-tile=6 conv-winograd=false}' | filecheck %s --check-prefix=DIRECT

// A 3x3 Conv at unit stride over 32 channels in and out takes the Winograd form F(2x2, 3x3)
// (`conv_winograd`): X copied channels-last into an 8x8 zero-bordered buffer (the pads and one
// more row and column: the 5x5 output takes 3x3 tiles of 2x2, whose inputs reach row 7), the
// weights transformed at compile time into 16 groups of 32x32 packed in 16 lanes, and one band
// of the 3 tile rows: the input transform (16 loads of one channel of a 4x4 tile, 16 stores of
// V), the 16 products as a grouped 1x1 Conv over the band's 3x3 tiles (group = block / 32
// channels), the output transform (16 loads of M, then the outputs plus the bias) box by box:
// the whole tiles store 4 outputs, the odd last column's 2, the odd last row's 2, the corner 1.
// Without it (DIRECT), the channel-lane form over the 3x3 taps.

// CHECK-LABEL: func.func @main()
// CHECK:         %y_winograd_weights = uop.define_global "constant" {{.*}} : tensor<32x32x1x1x16xf32>
// CHECK-NEXT:    %y_winograd_v = uop.define_local "y_winograd_v" : !uop.buffer<4608xf32>
// CHECK-NEXT:    %y_winograd_m = uop.define_local "y_winograd_m" : !uop.buffer<4608xf32>
// CHECK:         [[XP:%.*]] = uop.view %y_padded : !uop.buffer<2048xf32> -> !uop.view<1x32x8x8xf32, strides [2048, 1, 256, 32], offset 0>
// CHECK-NEXT:    [[V:%.*]] = uop.view %y_winograd_v : !uop.buffer<4608xf32> -> !uop.view<9x16x32xf32
// CHECK:         [[Y:%.*]] = uop.view %y : !uop.buffer<800xf32> -> !uop.view<1x32x5x5xf32
// CHECK:         uop.range [[BAND:%.*]] = 0 to 3 step 3 {
// CHECK:           uop.range {{%.*}} = 0 to 3 {
// CHECK-NEXT:        uop.range {{%.*}} = 0 to 3 {
// CHECK-NEXT:          uop.range [[C:%.*]] = 0 to 32 {
// CHECK-COUNT-16:        uop.gep [[XP]][{{%.*}}, [[C]], {{%.*}}, {{%.*}}]
// CHECK-COUNT-16:        uop.gep [[V]][{{%.*}}, {{%.*}}, [[C]]]
// CHECK:           uop.range [[BLOCK:%.*]] = 0 to 32 {
// CHECK:             uop.div {{%.*}}, {{%.*}} : index
// CHECK:             uop.range {{%.*}} = 0 to 2 step 2 {
// CHECK-NEXT:          uop.range {{%.*}} = 0 to 3 step 3 {
// CHECK:                 uop.mulacc
// CHECK:           uop.range {{%.*}} = 0 to 2 {
// CHECK-NEXT:        uop.range {{%.*}} = 0 to 2 {
// CHECK-NEXT:          uop.range [[K:%.*]] = 0 to 32 {
// CHECK-COUNT-4:         uop.gep [[Y]][{{%.*}}, [[K]], {{%.*}}, {{%.*}}]
// CHECK-NOT:             uop.gep [[Y]]
// CHECK:           uop.range {{%.*}} = 0 to 2 {
// CHECK-NEXT:        uop.range {{%.*}} = 0 to 1 {
// CHECK-NEXT:          uop.range [[K:%.*]] = 0 to 32 {
// CHECK-COUNT-2:         uop.gep [[Y]][{{%.*}}, [[K]], {{%.*}}, {{%.*}}]
// CHECK-NOT:             uop.gep [[Y]]
// CHECK:           uop.range {{%.*}} = 0 to 1 {
// CHECK-NEXT:        uop.range {{%.*}} = 0 to 2 {
// CHECK-NEXT:          uop.range [[K:%.*]] = 0 to 32 {
// CHECK-COUNT-2:         uop.gep [[Y]][{{%.*}}, [[K]], {{%.*}}, {{%.*}}]
// CHECK-NOT:             uop.gep [[Y]]
// CHECK:           uop.range {{%.*}} = 0 to 1 {
// CHECK-NEXT:        uop.range {{%.*}} = 0 to 1 {
// CHECK-NEXT:          uop.range [[K:%.*]] = 0 to 32 {
// CHECK-COUNT-1:         uop.gep [[Y]][{{%.*}}, [[K]], {{%.*}}, {{%.*}}]
// CHECK-NOT:             uop.gep [[Y]]
// CHECK:         func.return

// DIRECT-LABEL: func.func @main()
// DIRECT-NOT:   winograd
// DIRECT:       %y_packed_weights = {{.*}} : tensor<2x3x3x32x16xf32>
// DIRECT-NOT:   winograd
// DIRECT:       func.return
func.func @main(%x: tensor<1x32x5x5xf32>) -> tensor<1x32x5x5xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<0.5> : tensor<32x32x3x3xf32>} : () -> tensor<32x32x3x3xf32>
  %b = onnx.Constant() {value = dense<1.0> : tensor<32xf32>} : () -> tensor<32xf32>
  %y = onnx.Conv(%x, %w, %b) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x5x5xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>) -> tensor<1x32x5x5xf32>
  func.return %y : tensor<1x32x5x5xf32>
}

// -----

// 64 channels in and out: a tile's 16x64 values of V (and of M) are 4 KB, so one tile's and
// the next's would share their L1 sets, and the products' register tile reads one broadcast
// from V and stores one vector into M per tile; the tiles lie 1040 values apart instead
// (`tile_buffer`: one 64-byte line between them), in the buffers and in the grouped 1x1
// Conv's views.

// CHECK-LABEL: func.func @main()
// CHECK:         %y_winograd_v = uop.define_local "y_winograd_v" : !uop.buffer<4160xf32>
// CHECK-NEXT:    %y_winograd_m = uop.define_local "y_winograd_m" : !uop.buffer<4160xf32>
// CHECK:         uop.view %y_winograd_v : !uop.buffer<4160xf32> -> !uop.view<4x16x64xf32, strides [1040, 64, 1], offset 0>
// CHECK:         uop.view %y_winograd_v : !uop.buffer<4160xf32> -> !uop.view<1x1024x2x2xf32, strides [0, 1, 2080, 1040], offset 0>
// CHECK-NEXT:    uop.view %y_winograd_m : !uop.buffer<4160xf32> -> !uop.view<1x2x2x1024xf32, strides [0, 2080, 1040, 1], offset 0>
// CHECK-NEXT:    uop.view %y_winograd_m : !uop.buffer<4160xf32> -> !uop.view<4x16x64xf32, strides [1040, 64, 1], offset 0>
// CHECK:         func.return
func.func @main(%x: tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<0.5> : tensor<64x64x3x3xf32>} : () -> tensor<64x64x3x3xf32>
  %y = onnx.Conv(%x, %w) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x4x4xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x4x4xf32>
  func.return %y : tensor<1x64x4x4xf32>
}

// -----

// The direct form: an image's 3 channels (the transforms cost more than the products saved,
// `winograd_share` 1.34), 16 channels at 32x32 whose direct form stores rows of 32 pixels
// (ResNet-8's: Y's 4 KB planes would put the output transform's channel vectors in one L1
// set, `PLANE_SETS`), a stride of 2.

// CHECK-LABEL: func.func @main()
// CHECK-NOT:     winograd
// CHECK:         func.return
func.func @main(%x: tensor<1x3x9x9xf32>, %x2: tensor<1x32x9x9xf32>, %x3: tensor<1x16x32x32xf32>) -> (tensor<1x32x9x9xf32>, tensor<1x32x5x5xf32>, tensor<1x16x32x32xf32>) attributes {onnx.input_names = ["x", "x2", "x3"], onnx.output_names = ["y", "y2", "y3"]} {
  %w = onnx.Constant() {value = dense<0.5> : tensor<32x3x3x3xf32>} : () -> tensor<32x3x3x3xf32>
  %y = onnx.Conv(%x, %w) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x9x9xf32>, tensor<32x3x3x3xf32>) -> tensor<1x32x9x9xf32>
  %w2 = onnx.Constant() {value = dense<0.5> : tensor<32x32x3x3xf32>} : () -> tensor<32x32x3x3xf32>
  %y2 = onnx.Conv(%x2, %w2) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x32x9x9xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x5x5xf32>
  %w3 = onnx.Constant() {value = dense<0.5> : tensor<16x16x3x3xf32>} : () -> tensor<16x16x3x3xf32>
  %y3 = onnx.Conv(%x3, %w3) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x32x32xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x32x32xf32>
  func.return %y, %y2, %y3 : tensor<1x32x9x9xf32>, tensor<1x32x5x5xf32>, tensor<1x16x32x32xf32>
}

// -----

// 16 input channels over a 9x9 output (`winograd_share` 0.80): the Winograd form, one 16-lane
// vector of V per tile and ξ.

// CHECK-LABEL: func.func @main()
// CHECK:         %y_winograd_weights = uop.define_global "constant" {{.*}} : tensor<32x16x1x1x16xf32>
// CHECK-NEXT:    %y_winograd_v = uop.define_local "y_winograd_v" : !uop.buffer<6400xf32>
func.func @main(%x: tensor<1x16x9x9xf32>) -> tensor<1x32x9x9xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<0.5> : tensor<32x16x3x3xf32>} : () -> tensor<32x16x3x3xf32>
  %y = onnx.Conv(%x, %w) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x9x9xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x9x9xf32>
  func.return %y : tensor<1x32x9x9xf32>
}
