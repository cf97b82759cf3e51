// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// Unique at its bound (the frontend left Y, indices and counts symbolic and compiled them at the
// input's 4 rows, `zant.bounded_results`): three scratch tables (first occurrence, count, rank),
// pass 1 compares every pair of rows element by element (lexicographic state: 0 equal, 1
// before, 2 after), pass 2 ranks the first occurrences by value (sorted), then the inverse
// indices, then each output row r gathers the first occurrence of rank r by a scan: its load
// index is clamped to [0, 3], and rows past the count are zero. No abi.check: nothing is
// declared to check against.

// CHECK-LABEL: func.func @main()
// CHECK-DAG:     [[FIRST:%.*]] = uop.define_local "unique_first" : !uop.buffer<4xi64>
// CHECK-DAG:     [[COUNT:%.*]] = uop.define_local "unique_count" : !uop.buffer<4xi64>
// CHECK-DAG:     [[RANK:%.*]] = uop.define_local "unique_rank" : !uop.buffer<4xi64>
// pass 1
// CHECK:         uop.range [[I:%.*]] = 0 to 4 {
// CHECK:           uop.range [[J:%.*]] = 0 to 4 {
// CHECK:             uop.range {{%.*}} = 0 to 2 {
// CHECK:               uop.cmplt {{.*}} : f32
// CHECK:             uop.min
// CHECK:           uop.gep [[FIRST]][[[I]]]
// CHECK:           uop.gep [[COUNT]][[[I]]]
// pass 2: by value
// CHECK:         uop.range {{%.*}} = 0 to 4 {
// CHECK:           uop.range {{%.*}} = 0 to 4 {
// CHECK:             uop.range {{%.*}} = 0 to 2 {
// CHECK:           uop.gep [[RANK]]
// CHECK-NOT:     abi.check
// inverse indices
// CHECK:         uop.range {{%.*}} = 0 to 4 {
// CHECK:           uop.load
// CHECK:           uop.store
// gather
// CHECK:         uop.range [[R:%.*]] = 0 to 4 {
// CHECK:           uop.range {{%.*}} = 0 to 4 {
// CHECK:             uop.where
// CHECK:           [[N:%.*]] = uop.const 4 : i64
// CHECK-NEXT:      [[FOUND:%.*]] = uop.cmplt [[PICK:%.*]], [[N]] : i64
// CHECK-NEXT:      [[LAST:%.*]] = uop.const 3 : i64
// CHECK-NEXT:      [[AT:%.*]] = uop.min [[PICK]], [[LAST]] : i64
// CHECK-NEXT:      [[ATI:%.*]] = uop.cast [[AT]] : i64 to index
// CHECK-NEXT:      [[ZERO:%.*]] = uop.const 0.000000e+00 : f32
// CHECK-NEXT:      uop.range [[E:%.*]] = 0 to 2 {
// CHECK:             [[V:%.*]] = uop.load
// CHECK-NEXT:        uop.where [[FOUND]], [[V]], [[ZERO]] : f32
func.func @main(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) attributes {onnx.input_names = ["x"], onnx.output_names = ["y", "indices", "inverse", "counts"]} {
  %y, %indices, %inverse, %counts = onnx.Unique(%x) {axis = 0 : i64, sorted = 1 : i64, zant.bounded_results = array<i64: 0, 1, 3>} : (tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>)
  func.return %y, %indices, %inverse, %counts : tensor<4x2xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
}

// -----

// A declared size (Y [2], not bounded): compiled for 2 entries; once the distinct elements
// are counted, abi.check ends NAME_predict with STATUS_OUTPUT_SIZE (5) unless there are 2,
// before any output is written. Not sorted: a first occurrence j precedes i's when j < first(i).

// CHECK-LABEL: func.func @main()
// CHECK-COUNT-4: uop.range {{%.*}} = 0 to 4 {
// CHECK-NOT:     uop.range
// CHECK:             uop.cmplt {{.*}} : i64
// CHECK:         [[TWO:%.*]] = uop.const 2 : i64
// CHECK-NEXT:    [[OK:%.*]] = uop.cmpeq {{%.*}}, [[TWO]] : i64
// CHECK-NEXT:    abi.check [[OK]], 5
// CHECK-NOT:     uop.store
// CHECK:         uop.range {{%.*}} = 0 to 2 {
func.func @main(%x: tensor<4xi32>) -> tensor<2xi32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.Unique(%x) {sorted = 0 : i64} : (tensor<4xi32>) -> tensor<2xi32>
  func.return %y : tensor<2xi32>
}
