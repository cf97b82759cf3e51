// RUN: zant-opt %s --split-input-file -p "schedule-patches{tiles=2}" | filecheck %s
// RUN: zant-opt %s --split-input-file -p "schedule-patches{tiles=2},set-target{target=cortex-m4},onnx-to-uop,plan-arenas,verify-arena-plan" | filecheck %s --check-prefix=PLAN
// RUN: zant-opt %s --split-input-file -p "schedule-patches" | filecheck %s --check-prefix=SMALLEST
// RUN: zant-opt %s --split-input-file -p "schedule-patches{budget=1000}" | filecheck %s --check-prefix=BUDGET

// Conv 3x3 -> Relu -> Conv 3x3 stride 2 from a graph input, 2x2 tiles of the 4x4 output. Tile
// (0, 0) (output rows and columns 0..1) reads rows and columns 0..3 of the Relu, which read
// 0..4 of the input: each tile's Convs pad only where the tile touches the tensor's border
// (begins at the top-left, ends at the bottom-right; the stride-2 Conv's last window never
// reaches its end padding). Each row of tiles is one Concat along W, the rows one along H.

// CHECK:       builtin.module attributes {zant.patches = [{schedule = "patches", output = "y", layers = 3 : i64, first = "onnx.Conv", tiles = [2 : i64, 2 : i64], macs = 8136 : i64, layer_macs = 6912 : i64, estimated_peak_bytes = 992 : i64}]}
// CHECK-LABEL: func.func @stage
// CHECK:         [[X00:%.*]] = onnx.Slice(%x, {{.*}}) {zant.patch = "0,0 of 2x2"} : {{.*}} -> tensor<1x2x5x5xf32>
// CHECK-NEXT:    %a_r0c0 = onnx.Conv([[X00]], %w0) {pads = array<i64: 1, 1, 0, 0>, zant.patch = "0,0 of 2x2"} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT:    %r_r0c0 = onnx.Relu(%a_r0c0) {zant.patch = "0,0 of 2x2"} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT:    %y_r0c0 = onnx.Conv(%r_r0c0, %w1) {pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>, zant.patch = "0,0 of 2x2"} : (tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x2x2xf32>
// CHECK:         onnx.Slice(%x, {{.*}}) {zant.patch = "0,1 of 2x2"} : {{.*}} -> tensor<1x2x5x6xf32>
// CHECK-NEXT:    %a_r0c1 = onnx.Conv({{.*}}) {pads = array<i64: 1, 0, 0, 1>, zant.patch = "0,1 of 2x2"} : {{.*}} -> tensor<1x4x4x5xf32>
// CHECK:         %y_r0c1 = onnx.Conv(%r_r0c1, %w1) {pads = array<i64: 1, 0, 0, 0>, strides = array<i64: 2, 2>, zant.patch = "0,1 of 2x2"}
// CHECK-NEXT:    %y_row0 = onnx.Concat(%y_r0c0, %y_r0c1) {axis = 3 : i64, zant.concat_destination, zant.patch = "row 0 of 2x2"} : {{.*}} -> tensor<1x4x2x4xf32>
// CHECK:         %a_r1c1 = onnx.Conv({{.*}}) {pads = array<i64: 0, 0, 1, 1>, zant.patch = "1,1 of 2x2"} : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x5x5xf32>
// CHECK:         %y_r1c1 = onnx.Conv(%r_r1c1, %w1) {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>, zant.patch = "1,1 of 2x2"}
// CHECK-NEXT:    %y_row1 = onnx.Concat(%y_r1c0, %y_r1c1) {axis = 3 : i64, zant.concat_destination, zant.patch = "row 1 of 2x2"}
// CHECK-NEXT:    %y = onnx.Concat(%y_row0, %y_row1) {axis = 2 : i64, zant.concat_destination, zant.patch_stage = "2x2 tiles of 1x4x4x4, 3 layers (onnx.Conv .. onnx.Conv): 8,136 MACs (+1,224, 17.7% recomputed halo), ~992 B live at once"} : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT:    func.return %y
// CHECK-NOT:     onnx.Conv(%x

// Planned and verified: 800 B of scratch against the layer-by-layer plan's 1,824 B (the 8x8x4
// Conv output and its Relu, in place, beside the 4x4x4 output); each tile's buffers reuse the
// bytes of the tile before. The Concats are marked `zant.concat_destination`: each tile's last
// Conv stores into its slice of the stage output (here the graph output), so neither the tiles'
// outputs nor the rows have buffers of their own (992 B with them).
// PLAN:          abi.arena "scratch" size 800 align 16 lower_bound 800
// PLAN-NOT:      uop.define_local "y_
// PLAN:          %a_r0c0 = uop.define_local "a_r0c0" at 0
// PLAN-NOT:      uop.define_local "y_
// PLAN:          %y = uop.define_global "output" 0
// PLAN-NOT:      uop.define_local "y_
// PLAN:          %a_r0c1 = uop.define_local "a_r0c1" at 0
// PLAN-NOT:      uop.define_local "y_
// PLAN:          func.return

// With no budget the cost model takes the smallest estimated peak (4x4 tiles of one output
// pixel, 59% of the MACs again); within a budget of 1,000 B the fewest MACs (2x2).
// SMALLEST:      zant.patch_stage = "4x4 tiles of 1x4x4x4, 3 layers (onnx.Conv .. onnx.Conv): 11,016 MACs (+4,104, 59.4% recomputed halo), ~528 B live at once"
// BUDGET:        zant.patch_stage = "2x2 tiles of 1x4x4x4, 3 layers (onnx.Conv .. onnx.Conv): 8,136 MACs (+1,224, 17.7% recomputed halo), ~992 B live at once"

func.func @stage(%x: tensor<1x2x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %w0 = onnx.Constant() {value = dense<0.5> : tensor<4x2x3x3xf32>} : () -> tensor<4x2x3x3xf32>
  %w1 = onnx.Constant() {value = dense<0.25> : tensor<4x4x3x3xf32>} : () -> tensor<4x4x3x3xf32>
  %a = onnx.Conv(%x, %w0) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x8x8xf32>
  %r = onnx.Relu(%a) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %y = onnx.Conv(%r, %w1) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// -----

// A channels-last int8 input: the layout Transpose joins the stage, each tile sliced from the
// NHWC input along its axes 1 and 2 (a view) and transposed on its own; the QLinearConv pads
// with its zero point as before, only at the borders.

// CHECK-LABEL: func.func @nhwc_int8
// CHECK:         [[T00:%.*]] = onnx.Slice(%x, {{.*}}) {zant.patch = "0,0 of 2x2"} : (tensor<1x8x8x3xi8>, {{.*}}) -> tensor<1x4x4x3xi8>
// CHECK-NEXT:    %t_r0c0 = onnx.Transpose([[T00]]) {perm = array<i64: 0, 3, 1, 2>, zant.patch = "0,0 of 2x2"} : (tensor<1x4x4x3xi8>) -> tensor<1x3x4x4xi8>
// CHECK-NEXT:    %y_r0c0 = onnx.QLinearConv(%t_r0c0, {{.*}}) {pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>, zant.patch = "0,0 of 2x2"} : {{.*}} -> tensor<1x4x2x2xi8>
// CHECK:         %y = onnx.Concat(%y_row0, %y_row1) {axis = 2 : i64
// CHECK-NOT:     onnx.Transpose(%x)
// PLAN-LABEL:  func.func @nhwc_int8
// PLAN:          abi.arena "scratch" size 80 align 16 lower_bound 80

func.func @nhwc_int8(%x: tensor<1x8x8x3xi8>) -> tensor<1x4x4x4xi8> {
  %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %zp = onnx.Constant() {value = dense<-3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<1> : tensor<4x3x3x3xi8>} : () -> tensor<4x3x3x3xi8>
  %wzp = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %t = onnx.Transpose(%x) {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x3xi8>) -> tensor<1x3x8x8xi8>
  %y = onnx.QLinearConv(%t, %s, %zp, %w, %s, %wzp, %s, %zp) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xi8>, tensor<f32>, tensor<i8>, tensor<4x3x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x4x4xi8>
  func.return %y : tensor<1x4x4x4xi8>
}

// -----

// A residual block inside the stage: %r is read by the next Conv (with a halo) and by the Add
// (without), so each tile computes %r over the union, and the Add reads a Slice of that tile.
// Scratch 496 B against 1,024 B layer by layer (592 B when the tiles had buffers of their own).

// CHECK-LABEL: func.func @residual
// CHECK:         %r_r0c0 = onnx.Relu(%a_r0c0) {zant.patch = "0,0 of 2x2"} : (tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
// CHECK-NEXT:    %b_r0c0 = onnx.Conv(%r_r0c0, %w1) {pads = array<i64: 1, 1, 0, 0>, zant.patch = "0,0 of 2x2"} : (tensor<1x2x5x5xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
// CHECK:         [[SKIP:%.*]] = onnx.Slice(%r_r0c0, {{.*}}) {zant.patch = "0,0 of 2x2"} : (tensor<1x2x5x5xf32>, {{.*}}) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %s_r0c0 = onnx.Add(%b_r0c0, [[SKIP]]) {zant.patch = "0,0 of 2x2"} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %y_r0c0 = onnx.Conv(%s_r0c0, %w1) {pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>, zant.patch = "0,0 of 2x2"}
// CHECK:         %y = onnx.Concat(%y_row0, %y_row1)
// PLAN-LABEL:  func.func @residual
// PLAN:          abi.arena "scratch" size 496 align 16 lower_bound 496

func.func @residual(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> {
  %w0 = onnx.Constant() {value = dense<0.5> : tensor<2x2x3x3xf32>} : () -> tensor<2x2x3x3xf32>
  %w1 = onnx.Constant() {value = dense<0.25> : tensor<2x2x3x3xf32>} : () -> tensor<2x2x3x3xf32>
  %a = onnx.Conv(%x, %w0) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x8x8xf32>
  %r = onnx.Relu(%a) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %b = onnx.Conv(%r, %w1) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x8x8xf32>
  %s = onnx.Add(%b, %r) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %y = onnx.Conv(%s, %w1) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x8x8xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}

// -----

// A stage ending in an int8 ReLU whose zero point is -128: Clip(y, -128) is the identity, so
// the tiles end with the QLinearConv, which stores into its slice of the stage output (no
// Clip, no copy: only the padded copy of the input's tile has a buffer). A Clip that does
// clamp (at -3) stays in every tile.

// CHECK-LABEL: func.func @identity_relu
// CHECK-NOT:     = onnx.Clip(
// CHECK:         %y_r0c0 = onnx.QLinearConv({{.*}}) {{.*}}zant.patch = "0,0 of 2x2"
// CHECK-NOT:     = onnx.Clip(
// CHECK:         %r_row0 = onnx.Concat(%y_r0c0, %y_r0c1) {axis = 3 : i64, zant.concat_destination
// CHECK-NOT:     = onnx.Clip(
// CHECK:         func.return %r
// PLAN-LABEL:  func.func @identity_relu
// PLAN:          abi.arena "scratch" size 80 align 16
// PLAN-NOT:      uop.define_local "y_r0c0"
// PLAN-NOT:      uop.define_local "r_
// PLAN:          func.return

// CHECK-LABEL: func.func @clamping_relu
// CHECK:         %y_r0c0 = onnx.QLinearConv
// CHECK-NEXT:    %r_r0c0 = onnx.Clip(%y_r0c0, %lo) {zant.patch = "0,0 of 2x2"}
// CHECK:         %r_row0 = onnx.Concat(%r_r0c0, %r_r0c1) {axis = 3 : i64, zant.concat_destination
// PLAN-LABEL:  func.func @clamping_relu
// PLAN:          abi.arena "scratch" size 96 align 16
// PLAN:          %y_r0c0 = uop.define_local "y_r0c0"

func.func @identity_relu(%x: tensor<1x3x8x8xi8>) -> tensor<1x4x4x4xi8> {
  %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %zp = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<1> : tensor<4x3x3x3xi8>} : () -> tensor<4x3x3x3xi8>
  %wzp = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %s, %zp, %w, %s, %wzp, %s, %zp) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xi8>, tensor<f32>, tensor<i8>, tensor<4x3x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x4x4xi8>
  %r = onnx.Clip(%y, %zp) : (tensor<1x4x4x4xi8>, tensor<i8>) -> tensor<1x4x4x4xi8>
  func.return %r : tensor<1x4x4x4xi8>
}

func.func @clamping_relu(%x: tensor<1x3x8x8xi8>) -> tensor<1x4x4x4xi8> {
  %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %zp = onnx.Constant() {value = dense<-128> : tensor<i8>} : () -> tensor<i8>
  %lo = onnx.Constant() {value = dense<-3> : tensor<i8>} : () -> tensor<i8>
  %w = onnx.Constant() {value = dense<1> : tensor<4x3x3x3xi8>} : () -> tensor<4x3x3x3xi8>
  %wzp = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearConv(%x, %s, %zp, %w, %s, %wzp, %s, %zp) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xi8>, tensor<f32>, tensor<i8>, tensor<4x3x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x4x4x4xi8>
  %r = onnx.Clip(%y, %lo) : (tensor<1x4x4x4xi8>, tensor<i8>) -> tensor<1x4x4x4xi8>
  func.return %r : tensor<1x4x4x4xi8>
}

// -----

// Nothing to run patch by patch: the input's one user is element-wise (no window), or the
// input has two users.

// CHECK-LABEL: func.func @no_window
// CHECK-NOT:     zant.patch
// CHECK:         onnx.Relu(%x) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
func.func @no_window(%x: tensor<1x2x8x8xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) {
  %r = onnx.Relu(%x) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  func.return %r, %x : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
}
