// RUN: zant-opt %s -p 'onnx-to-uop{conv-lanes=16 conv-tile=14 conv-registers=32 conv-streamed-weights=1024 conv-winograd=false}' | filecheck %s
// RUN: zant-opt %s -p 'onnx-to-uop{conv-lanes=16 conv-tile=14 conv-registers=32 conv-winograd=false}' | filecheck %s --check-prefix=CACHED

// Weights beyond the caches (here: beyond conv-streamed-weights=1024 bytes) on a 32-register
// target: `VectorConv.lane_plan` takes one 16-lane block by 4x7 pixels (two tiles over the 7x7
// outputs), and `reduction_chunk` splits the reduction (taps outermost, then the 128 channels)
// into chunks of 64 channels (4 KB of weights): both tiles run each chunk, their sums kept in
// y_partial between chunks (zeroed first, loaded into the accumulators, stored back), then Y
// from the sums. Weights in the caches (CACHED): no chunks, the accumulators start at 0. The
// direct form throughout (conv-winograd=false: 128 -> 16 channels would take Winograd).

// CHECK-LABEL: func.func @main()
// CHECK:         %y_partial = uop.define_local "y_partial" : !uop.buffer<784xf32>
// CHECK-NEXT:    [[P:%.*]] = uop.view %y_partial : !uop.buffer<784xf32> -> !uop.view<7x7x1x16xf32
// CHECK:         [[W:%.*]] = uop.view %y_packed_weights : !uop.buffer<18432xf32> -> !uop.view<1x128x3x3x16xf32
// CHECK:         uop.range {{%.*}} = 0 to 7 {
// CHECK:           uop.range {{%.*}} = 0 to 16 {
// CHECK:             uop.gep [[P]]
// CHECK-NEXT:        uop.store
// CHECK:         uop.range [[KY:%.*]] = 0 to 3 {
// CHECK-NEXT:      uop.range [[KX:%.*]] = 0 to 3 {
// CHECK-NEXT:        uop.range [[C0:%.*]] = 0 to 128 step 64 {
// CHECK-NEXT:          uop.range {{%.*}} = 0 to 4 step 4 {
// CHECK-NEXT:            uop.range {{%.*}} = 0 to 7 step 7 {
// CHECK:                   uop.range [[LANE:%.*]] = 0 to 16 {
// CHECK:                     [[ACC:%.*]] = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:                uop.gep [[P]]
// CHECK-NEXT:                [[SUM:%.*]] = uop.load
// CHECK-NEXT:                uop.acc_set [[ACC]], [[SUM]]
// CHECK-COUNT-27:            uop.acc_set
// CHECK:                     uop.range [[STEP:%.*]] = 0 to 64 {
// CHECK-NEXT:                  [[C:%.*]] = uop.add [[C0]], [[STEP]] : index
// CHECK-NEXT:                  uop.gep [[W]][{{%.*}}, [[C]], [[KY]], [[KX]], [[LANE]]]
// CHECK-COUNT-28:              uop.mulacc
// CHECK:                     uop.acc_get [[ACC]]
// CHECK-NEXT:                uop.gep [[P]]
// CHECK-NEXT:                uop.store
// CHECK:                 uop.range {{%.*}} = 4 to 7 step 3 {
// CHECK:         uop.range {{%.*}} = 0 to 7 {
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 7 {
// CHECK-NEXT:        uop.range {{%.*}} = 0 to 16 {
// CHECK:               uop.gep [[P]]
// CHECK-NEXT:          uop.load
// CHECK:               uop.gep {{%.*}}[{{.*}}] : !uop.view<1x16x7x7xf32
// CHECK-NEXT:          uop.store
// CHECK:         func.return

// CACHED-NOT:    y_partial
// CACHED-NOT:    uop.acc_set
// CACHED:        func.return
func.func @main(%x: tensor<1x128x7x7xf32>) -> tensor<1x16x7x7xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %w = onnx.Constant() {value = dense<0.5> : tensor<16x128x3x3xf32>} : () -> tensor<16x128x3x3xf32>
  %y = onnx.Conv(%x, %w) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x128x7x7xf32>, tensor<16x128x3x3xf32>) -> tensor<1x16x7x7xf32>
  func.return %y : tensor<1x16x7x7xf32>
}
