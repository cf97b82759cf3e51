// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-mve=true}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s --check-prefix=OFF

// On Helium cores (conv-mve, the Cortex-M55's pipeline) an int8 depthwise Conv at stride 1
// takes conv_depthwise_mve's form: four outputs of a channel in a vector<4xi32>.
//
// 12 rows of 5 columns: the vectors run down the columns (the longer way), so the plane buffer
// is X's channel transposed and padded, 7 columns (5 + 2 pads) of 14 (12 + 2), filled with X's
// zero point (3) once; per channel each column of X is copied into it 8 bytes at a time at
// X's row stride (5: mve-gather makes these gathers), at 0 and at 12 - 8 = 4 (the last block
// overlaps). The 9 weights are loaded once per channel; per output column (5) and block of 4
// rows (0, 4, 8: no last block), the sum starts at the channel's bias and each tap adds 4
// contiguous bytes of the plane, widened, times the tap's weight broadcast; the tap (i, j)
// reads the plane's column ox + j from row oy + i. The four sums leave by vmov_lane into the
// scalar requantization and store of each output, one row apart.

// CHECK-LABEL: func.func @columns
// CHECK:         %y_plane = uop.define_local "y_plane" : !uop.buffer<98xi8>
// CHECK:         %[[P:.*]] = uop.view %y_plane : !uop.buffer<98xi8> -> !uop.view<7x14xi8, strides [14, 1], offset 0>
// CHECK:         %[[FILL:.*]] = uop.const 3 : i8
// CHECK-NEXT:    uop.range %[[A:.*]] = 0 to 7 {
// CHECK-NEXT:      uop.range %[[B:.*]] = 0 to 14 {
// CHECK-NEXT:        %[[AT:.*]] = uop.gep %[[P]][%[[A]], %[[B]]]
// CHECK-NEXT:        uop.store %[[FILL]], %[[AT]] : i8
// CHECK:         uop.range %[[C:.*]] = 0 to 8 {
// CHECK-NEXT:      uop.range %[[COL:.*]] = 0 to 5 {
// CHECK-NEXT:        uop.range %[[ROW:.*]] = 0 to 8 step 8 {
// CHECK:               %[[FROM:.*]] = uop.gep %{{.*}}[%{{.*}}, %[[C]], %[[ROW]], %[[COL]]]
// CHECK-NEXT:          %[[LINE:.*]] = uop.vload %[[FROM]] stride 5 : vector<8xi8>
// CHECK-NEXT:          %[[TO:.*]] = uop.gep %[[P]]
// CHECK-NEXT:          uop.vstore %[[LINE]], %[[TO]] : vector<8xi8>
// CHECK:             %[[FOUR:.*]] = uop.const 4 : index
// CHECK:             uop.gep %{{.*}}[%{{.*}}, %[[C]], %[[FOUR]], %[[COL]]]
// CHECK-NEXT:        uop.vload %{{.*}} stride 5 : vector<8xi8>
// CHECK-COUNT-9:   uop.cast %{{.*}} : i8 to i32
// CHECK:           %[[BIASAT:.*]] = uop.gep %y_bias[%[[C]]] : !uop.buffer<8xi32>
// CHECK-NEXT:      %[[BIAS:.*]] = uop.load %[[BIASAT]] : i32
// CHECK-NEXT:      uop.range %[[OX:.*]] = 0 to 5 {
// CHECK-NEXT:        uop.range %[[OY:.*]] = 0 to 12 step 4 {
// CHECK-NEXT:          %[[START:.*]] = uop.broadcast %[[BIAS]] : i32 to vector<4xi32>
// CHECK-COUNT-9:       uop.vload %{{.*}} : vector<4xi8>
// CHECK:               %[[SUM:.*]] = uop.add %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK-NEXT:          %[[S0:.*]] = arm_mve.vmov_lane %[[SUM]], 0 : vector<4xi32>
// CHECK-NEXT:          %{{.*}} = arm_mve.vmov_lane %[[SUM]], 1 : vector<4xi32>
// CHECK-NEXT:          %{{.*}} = arm_mve.vmov_lane %[[SUM]], 2 : vector<4xi32>
// CHECK-NEXT:          %{{.*}} = arm_mve.vmov_lane %[[SUM]], 3 : vector<4xi32>
// CHECK-COUNT-4:       uop.store
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK:         func.return

// Elsewhere the generic nest, border regions and all.
// OFF-LABEL: func.func @columns
// OFF-NOT:       y_plane
// OFF-NOT:       arm_mve
// OFF:           func.return
func.func @columns(%x: tensor<1x8x12x5xi8>) -> tensor<1x8x12x5xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[-5, -4, -3], [-2, -1, 0], [1, 2, 3]]], [[[4, 5, -5], [-4, -3, -2], [-1, 0, 1]]], [[[2, 3, 4], [5, -5, -4], [-3, -2, -1]]], [[[0, 1, 2], [3, 4, 5], [-5, -4, -3]]], [[[-2, -1, 0], [1, 2, 3], [4, 5, -5]]], [[[-4, -3, -2], [-1, 0, 1], [2, 3, 4]]], [[[5, -5, -4], [-3, -2, -1], [0, 1, 2]]], [[[3, 4, 5], [-5, -4, -3], [-2, -1, 0]]]]> : tensor<8x1x3x3xi8>} : () -> tensor<8x1x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {group = 8 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x12x5xi8>, tensor<f32>, tensor<i8>, tensor<8x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x8x12x5xi8>
  func.return %y : tensor<1x8x12x5xi8>
}

// -----

// 4 rows of 6 columns: the vectors run along the rows, the plane is X's channel padded as it
// is (6 rows of 8); rows of 6 bytes, shorter than a vector, are copied a byte at a time. Per
// row, the vectors start at 0 and at 6 - 4 = 2 (overlapping: outputs 2 and 3 are stored
// twice, with one value); the tap (i, j) reads the plane's row oy + i from column ox + j.

// CHECK-LABEL: func.func @rows
// CHECK:         uop.define_local "y_plane" : !uop.buffer<48xi8>
// CHECK:         %[[P:.*]] = uop.view %y_plane : !uop.buffer<48xi8> -> !uop.view<6x8xi8, strides [8, 1], offset 0>
// CHECK:         uop.range %{{.*}} = 0 to 6 {
// CHECK-NEXT:      uop.range %{{.*}} = 0 to 8 {
// CHECK:         uop.range %{{.*}} = 0 to 1 {
// CHECK-NEXT:      uop.range %{{.*}} = 0 to 8 {
// CHECK-NEXT:        uop.range %{{.*}} = 0 to 4 {
// CHECK-COUNT-6:       uop.load %{{.*}} : i8
// CHECK-NOT:         uop.vload
// CHECK:           uop.range %[[OY:.*]] = 0 to 4 {
// CHECK-NEXT:        uop.range %[[OX:.*]] = 0 to 4 step 4 {
// CHECK-COUNT-9:       uop.vload
// CHECK-COUNT-4:       arm_mve.vmov_lane
// CHECK-COUNT-4:       uop.store
// CHECK:             }
// CHECK-NEXT:        %[[TWO:.*]] = uop.const 2 : index
// CHECK-NEXT:        %{{.*}} = uop.broadcast
// CHECK-NEXT:        %{{.*}} = uop.const 0 : index
// CHECK-NEXT:        %{{.*}} = uop.add %[[OY]], %{{.*}} : index
// CHECK-NEXT:        %{{.*}} = uop.const 0 : index
// CHECK-NEXT:        %{{.*}} = uop.add %[[TWO]], %{{.*}} : index
// CHECK-COUNT-9:     uop.vload
// CHECK-COUNT-4:     arm_mve.vmov_lane
// CHECK:         func.return
func.func @rows(%x: tensor<1x8x4x6xi8>) -> tensor<1x8x4x6xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[-5, -4, -3], [-2, -1, 0], [1, 2, 3]]], [[[4, 5, -5], [-4, -3, -2], [-1, 0, 1]]], [[[2, 3, 4], [5, -5, -4], [-3, -2, -1]]], [[[0, 1, 2], [3, 4, 5], [-5, -4, -3]]], [[[-2, -1, 0], [1, 2, 3], [4, 5, -5]]], [[[-4, -3, -2], [-1, 0, 1], [2, 3, 4]]], [[[5, -5, -4], [-3, -2, -1], [0, 1, 2]]], [[[3, 4, 5], [-5, -4, -3], [-2, -1, 0]]]]> : tensor<8x1x3x3xi8>} : () -> tensor<8x1x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {group = 8 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x4x6xi8>, tensor<f32>, tensor<i8>, tensor<8x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x8x4x6xi8>
  func.return %y : tensor<1x8x4x6xi8>
}

// -----

// Not taken: stride 2 (the taps of 4 outputs are not 4 contiguous bytes), and a plane larger
// than a quarter of X (2 channels of 12x5: 98 bytes of plane for 120 of X).

// CHECK-LABEL: func.func @strided
// CHECK-NOT:     y_plane
// CHECK-NOT:     arm_mve
// CHECK:         func.return
func.func @strided(%x: tensor<1x8x12x5xi8>) -> tensor<1x8x6x3xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[-5, -4, -3], [-2, -1, 0], [1, 2, 3]]], [[[4, 5, -5], [-4, -3, -2], [-1, 0, 1]]], [[[2, 3, 4], [5, -5, -4], [-3, -2, -1]]], [[[0, 1, 2], [3, 4, 5], [-5, -4, -3]]], [[[-2, -1, 0], [1, 2, 3], [4, 5, -5]]], [[[-4, -3, -2], [-1, 0, 1], [2, 3, 4]]], [[[5, -5, -4], [-3, -2, -1], [0, 1, 2]]], [[[3, 4, 5], [-5, -4, -3], [-2, -1, 0]]]]> : tensor<8x1x3x3xi8>} : () -> tensor<8x1x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {group = 8 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x12x5xi8>, tensor<f32>, tensor<i8>, tensor<8x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x8x6x3xi8>
  func.return %y : tensor<1x8x6x3xi8>
}

// -----

// CHECK-LABEL: func.func @large_plane
// CHECK-NOT:     y_plane
// CHECK-NOT:     arm_mve
// CHECK:         func.return
func.func @large_plane(%x: tensor<1x2x12x5xi8>) -> tensor<1x2x12x5xi8> {
  %xs = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %xz = onnx.Constant() {value = dense<3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, 0, -128], [0, 1, 0], [1, 0, 1]]]]> : tensor<2x1x3x3xi8>} : () -> tensor<2x1x3x3xi8>
  %ws = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %wz = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %ys = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<-5> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz) {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x12x5xi8>, tensor<f32>, tensor<i8>, tensor<2x1x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x12x5xi8>
  func.return %y : tensor<1x2x12x5xi8>
}
