// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// A data-dependent output is compiled for its declared shape in three steps: a loop counts what
// the data select (writing nothing), `abi.check` (status 5, STATUS_OUTPUT_SIZE) ends the function
// unless the count is the declared extent, then a second loop appends each selected element at
// a running position clamped to the extent, rewriting a slot's own value when the element is not
// selected (uop has no conditional store).

// NonZero of [2, 3] declared [2, 4]: four non-zero elements, each a column of coordinates.
// CHECK-LABEL: func.func @main()
// CHECK:         %y = uop.define_global "output" 0 "y" : !uop.buffer<8xi64>
// CHECK:         [[OUT:%.*]] = uop.view %y : !uop.buffer<8xi64> -> !uop.view<2x4xi64, strides [4, 1], offset 0>
// CHECK:         [[COUNT:%.*]] = uop.define_acc 0 : i64
// CHECK:         uop.range
// CHECK:           uop.range
// CHECK-NOT:         uop.store
// CHECK:             [[NZ:%.*]] = uop.cmpne {{%.*}}, {{%.*}} : f32
// CHECK:             uop.acc_set [[COUNT]]
// CHECK:         [[N:%.*]] = uop.acc_get [[COUNT]] : !uop.acc<i64>, i64
// CHECK-NEXT:    [[FOUR:%.*]] = uop.const 4 : i64
// CHECK-NEXT:    [[OK:%.*]] = uop.cmpeq [[N]], [[FOUR]] : i64
// CHECK-NEXT:    abi.check [[OK]], 5
// CHECK-NEXT:    [[POSITION:%.*]] = uop.define_acc 0 : i64
// CHECK-NEXT:    uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 3 {
// CHECK:             [[SELECTED:%.*]] = uop.cmpne {{%.*}}, {{%.*}} : f32
// CHECK-NEXT:        [[P:%.*]] = uop.acc_get [[POSITION]] : !uop.acc<i64>, i64
// CHECK-NEXT:        [[ZERO:%.*]] = uop.const 0 : i64
// CHECK-NEXT:        [[LAST:%.*]] = uop.const 3 : i64
// CHECK-NEXT:        [[LOW:%.*]] = uop.max [[P]], [[ZERO]] : i64
// CHECK-NEXT:        [[SLOT:%.*]] = uop.min [[LOW]], [[LAST]] : i64
// CHECK-NEXT:        [[COLUMN:%.*]] = uop.cast [[SLOT]] : i64 to index
// CHECK-NEXT:        [[ROW:%.*]] = uop.cast [[I]] : index to i64
// CHECK:             [[OLD_PTR:%.*]] = uop.gep [[OUT]][{{%.*}}, [[COLUMN]]]
// CHECK-NEXT:        [[OLD:%.*]] = uop.load [[OLD_PTR]] : i64
// CHECK-NEXT:        [[NEW:%.*]] = uop.where [[SELECTED]], [[ROW]], [[OLD]] : i64
// CHECK-NEXT:        [[PTR:%.*]] = uop.gep [[OUT]][{{%.*}}, [[COLUMN]]]
// CHECK-NEXT:        uop.store [[NEW]], [[PTR]] : i64
// CHECK:             uop.acc_set [[POSITION]]
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x4xi64> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.NonZero(%x) : (tensor<2x3xf32>) -> tensor<2x4xi64>
  func.return %y : tensor<2x4xi64>
}

// -----

// Compress along axis 0 with a bool condition: the condition is the selection (no compare); the
// selected row's slot is computed once per condition entry, outside the copy of its row.
// CHECK-LABEL: func.func @main()
// CHECK:         uop.range {{%.*}} = 0 to 3 {
// CHECK-NOT:       uop.store
// CHECK:         abi.check {{%.*}}, 5
// CHECK:         uop.range [[I:%.*]] = 0 to 3 {
// CHECK-NEXT:      [[C:%.*]] = uop.gep %c[[[I]]] : !uop.buffer<3xi1>
// CHECK-NEXT:      [[SELECTED:%.*]] = uop.load [[C]] : i1
// CHECK:           [[SLOT:%.*]] = uop.cast {{%.*}} : i64 to index
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 2 {
// CHECK:             uop.where [[SELECTED]], {{%.*}}, {{%.*}} : f32
// CHECK-NEXT:        uop.gep {{%.*}}[[[SLOT]], [[J]]]
// CHECK-NEXT:        uop.store
func.func @main(%x: tensor<3x2xf32>, %c: tensor<3xi1>) -> tensor<2x2xf32> attributes {onnx.input_names = ["x", "c"], onnx.output_names = ["y"]} {
  %y = onnx.Compress(%x, %c) {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3xi1>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}

// -----

// NonMaxSuppression with a constant maximum of 2 boxes per class: per batch and class, the 6
// scores (and 2 sentinels) are ranked in scratch by a bitonic network over 8 (6 stages of 4
// compare-exchanges at data-independent positions), then each of the 6 ranks tests its box's
// IoU against the at most 2 boxes the class kept (a table 2 wide, with their count per class).
// The check comes before the output is written, from the table.
// CHECK-LABEL: func.func @main()
// CHECK:         %selected_kept = uop.define_local "selected_kept" : !uop.buffer<4xi64>
// CHECK-NEXT:    %selected_kept_counts = uop.define_local "selected_kept_counts" : !uop.buffer<2xi64>
// CHECK-NEXT:    %selected_ranked_scores = uop.define_local "selected_ranked_scores" : !uop.buffer<8xf32>
// CHECK-NEXT:    %selected_ranked_boxes = uop.define_local "selected_ranked_boxes" : !uop.buffer<8xi64>
// CHECK:         uop.range [[B:%.*]] = 0 to 1 {
// CHECK-NEXT:      uop.range [[C:%.*]] = 0 to 2 {
// CHECK-NEXT:        uop.range {{%.*}} = 0 to 8 {
// CHECK-COUNT-6:     uop.range {{%.*}} = 0 to 4 {
// CHECK:             uop.range {{%.*}} = 0 to 6 {
// CHECK:               [[SUPPRESSED:%.*]] = uop.define_acc false
// CHECK-NEXT:          uop.range {{%.*}} = 0 to 2 {
// CHECK:               uop.store {{%.*}}, {{%.*}} : i64
// CHECK:             uop.store {{%.*}}, {{%.*}} : i64
// CHECK-NOT:     uop.store
// CHECK:         abi.check {{%.*}}, 5
// CHECK:         uop.range {{%.*}} = 0 to 1 {
// CHECK-NEXT:      uop.range {{%.*}} = 0 to 2 {
// CHECK-NEXT:        uop.range {{%.*}} = 0 to 2 {
func.func @main(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x6xf32>) -> tensor<3x3xi64> attributes {onnx.input_names = ["boxes", "scores"], onnx.output_names = ["selected"]} {
  %max = onnx.Constant() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %iou = onnx.Constant() {value = dense<0.5> : tensor<1xf32>} : () -> tensor<1xf32>
  %selected = onnx.NonMaxSuppression(%boxes, %scores, %max, %iou) : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<3x3xi64>
  func.return %selected : tensor<3x3xi64>
}
