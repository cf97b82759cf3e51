// RUN: zant-opt %s --split-input-file -p resolve-sequences | filecheck %s
// RUN: zant-opt %s --split-input-file -p resolve-sequences,resolve-sequences | filecheck %s

// Run-time bounded sequences: what only the data decide (a split's sizes, an insert position over
// elements of different shapes, how many iterations a Loop ran) becomes slots at a capacity the
// shapes bound, each slot's run-time extent and the sequence's run-time length in the extents
// array, the last output (zant.output_bounds: the slot's bounded dimension; zant.output_sequences:
// the run-time-length sequence a slot belongs to). Their numerics, compiled and called with
// in-range and out-of-range values: tests/test_resolve_sequences.py.

// SplitToSequence by run-time sizes (1-D, static length 2): two slots at the whole extent 3 along
// the axis, each gathered from its offset (indices clamped into [0, 2]) and zeroed past its size;
// a Guard that each size is in [0, 3] and that they sum to 3.
// CHECK-LABEL: func.func @main(%x: tensor<3x2xf32>, %split: tensor<2xi64>)
// CHECK-SAME:    -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<2xi32>)
// CHECK-SAME:    onnx.output_names = ["pieces.0", "pieces.1", "extents"], zant.output_bounds = array<i64: 0, 0, -1>
// CHECK:         [[FIRST:%[0-9]+]] = onnx.Gather(%split, {{%[0-9]+}}) {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
// CHECK:         [[SUM:%[0-9]+]] = onnx.Equal({{%[0-9]+}}, {{%[0-9]+}}) : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK:         [[ALL:%[0-9]+]] = onnx.And({{%[0-9]+}}, [[SUM]])
// CHECK-NEXT:    onnx.Guard([[ALL]])
// CHECK:         [[LOW:%[0-9]+]] = onnx.Max({{%[0-9]+}}, {{%[0-9]+}}) : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
// CHECK:         [[IDX:%[0-9]+]] = onnx.Min([[LOW]], {{%[0-9]+}}) : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
// CHECK-NEXT:    [[ROWS:%[0-9]+]] = onnx.Gather(%x, [[IDX]]) {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
// CHECK-NEXT:    [[IN:%[0-9]+]] = onnx.Less({{%[0-9]+}}, [[FIRST]]) : (tensor<3x1xi64>, tensor<i64>) -> tensor<3x1xi1>
// CHECK-NEXT:    [[P0:%[0-9]+]] = onnx.Where([[IN]], [[ROWS]], {{%[0-9]+}}) : (tensor<3x1xi1>, tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
// CHECK:         [[EXTENTS:%[0-9]+]] = onnx.Concat({{%[0-9]+}}, {{%[0-9]+}}) {axis = 0 : i64} : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
// CHECK-NEXT:    func.return [[P0]], {{%[0-9]+}}, [[EXTENTS]]
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @main(%x: tensor<3x2xf32>, %split: tensor<2xi64>) -> !onnx.seq<tensor<?x2xf32>> attributes {onnx.output_names = ["pieces"]} {
    %s = onnx.SplitToSequence(%x, %split) {axis = 0 : i64} : (tensor<3x2xf32>, tensor<2xi64>) -> !onnx.seq<tensor<?x2xf32>>
    func.return %s : !onnx.seq<tensor<?x2xf32>>
  }
}

// -----

// A scalar split (chunks of c): E = 4 slots and the run-time length ceil(4 / c) with c clamped
// into [1, 4] after a Guard that c >= 1; SequenceLength is that length. The extents array holds
// the four slots' extents, then the length.
// CHECK-LABEL: func.func @main(%x: tensor<4xf32>, %chunk: tensor<i64>)
// CHECK-SAME:    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<5xi32>)
// CHECK-SAME:    onnx.output_names = ["pieces.0", "pieces.1", "pieces.2", "pieces.3", "n", "extents"]
// CHECK-SAME:    zant.output_bounds = array<i64: 0, 0, 0, 0, -1, -1>, zant.output_sequences = array<i64: 0, 0, 0, 0, -1, -1>
// CHECK:         [[POSITIVE:%[0-9]+]] = onnx.GreaterOrEqual(%chunk, {{%[0-9]+}})
// CHECK-NEXT:    onnx.Guard([[POSITIVE]])
// CHECK:         [[ATLEAST1:%[0-9]+]] = onnx.Max(%chunk, {{%[0-9]+}})
// CHECK:         [[C:%[0-9]+]] = onnx.Min([[ATLEAST1]], {{%[0-9]+}})
// CHECK:         [[UP:%[0-9]+]] = onnx.Add([[C]], {{%[0-9]+}})
// CHECK-NEXT:    %n = onnx.Div([[UP]], [[C]])
// CHECK:         [[LENGTH:%[0-9]+]] = onnx.Cast(%n) {to = 6 : i64}
// CHECK:         onnx.Concat({{.*}}) {axis = 0 : i64} : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<5xi32>
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @main(%x: tensor<4xf32>, %chunk: tensor<i64>) -> (!onnx.seq<tensor<?xf32>>, tensor<i64>) attributes {onnx.output_names = ["pieces", "n"]} {
    %s = onnx.SplitToSequence(%x, %chunk) {axis = 0 : i64} : (tensor<4xf32>, tensor<i64>) -> !onnx.seq<tensor<?xf32>>
    %n = onnx.SequenceLength(%s) : (!onnx.seq<tensor<?xf32>>) -> tensor<i64>
    func.return %s, %n : !onnx.seq<tensor<?xf32>>, tensor<i64>
  }
}

// -----

// SequenceInsert at a run-time position among elements of different lengths: each slot at the
// largest (3), the shorter element padded with zeros, value and extent chosen by the position.
// CHECK-LABEL: func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>, %p: tensor<i64>)
// CHECK-SAME:    -> (tensor<3xf32>, tensor<3xf32>, tensor<2xi32>)
// CHECK-SAME:    zant.output_bounds = array<i64: 0, 0, -1>
// CHECK:         [[ZEROS:%[0-9]+]] = onnx.Constant() {value = dense<0.000000e+00> : tensor<1xf32>}
// CHECK-NEXT:    [[A:%[0-9]+]] = onnx.Concat(%a, [[ZEROS]]) {axis = 0 : i64} : (tensor<2xf32>, tensor<1xf32>) -> tensor<3xf32>
// CHECK:         onnx.Guard
// CHECK:         [[FIRST:%[0-9]+]] = onnx.Where({{%[0-9]+}}, [[A]], %b) : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:         onnx.Where({{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK:         [[SECOND:%[0-9]+]] = onnx.Where({{%[0-9]+}}, %b, [[A]]) : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:         func.return [[FIRST]], [[SECOND]], {{%[0-9]+}}
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>, %p: tensor<i64>) -> !onnx.seq<tensor<?xf32>> attributes {onnx.output_names = ["s"]} {
    %s = onnx.SequenceConstruct(%a) : (tensor<2xf32>) -> !onnx.seq<tensor<?xf32>>
    %t = onnx.SequenceInsert(%s, %b, %p) : (!onnx.seq<tensor<?xf32>>, tensor<3xf32>, tensor<i64>) -> !onnx.seq<tensor<?xf32>>
    func.return %t : !onnx.seq<tensor<?xf32>>
  }
}

// -----

// The unroller's SequenceSelect (a Loop that appended one element per iteration, chosen after n
// iterations): the slots are the longest sequence's elements, which the shorter ones share, and
// the length 0, 1 or 2 is chosen by n at run time.
// CHECK-LABEL: func.func @main(%a: tensor<1xf32>, %b: tensor<2xf32>, %n: tensor<i64>)
// CHECK-SAME:    -> (tensor<1xf32>, tensor<2xf32>, tensor<1xi32>)
// CHECK-SAME:    zant.output_bounds = array<i64: -1, -1, -1>, zant.output_sequences = array<i64: 0, 0, -1>
// CHECK:         [[ONE:%[0-9]+]] = onnx.Where({{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK:         [[TWO:%[0-9]+]] = onnx.Where({{%[0-9]+}}, {{%[0-9]+}}, [[ONE]]) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT:    onnx.Cast([[TWO]])
// CHECK:         func.return %a, %b, {{%[0-9]+}}
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @main(%a: tensor<1xf32>, %b: tensor<2xf32>, %n: tensor<i64>) -> !onnx.seq<tensor<?xf32>> attributes {onnx.output_names = ["s"]} {
    %e = onnx.SequenceEmpty() {dtype = 1 : i64} : () -> !onnx.seq<tensor<f32>>
    %s1 = onnx.SequenceInsert(%e, %a) : (!onnx.seq<tensor<f32>>, tensor<1xf32>) -> !onnx.seq<tensor<?xf32>>
    %s2 = onnx.SequenceInsert(%s1, %b) : (!onnx.seq<tensor<?xf32>>, tensor<2xf32>) -> !onnx.seq<tensor<?xf32>>
    %r = onnx.SequenceSelect(%n, %e, %s1, %s2) : (tensor<i64>, !onnx.seq<tensor<f32>>, !onnx.seq<tensor<?xf32>>, !onnx.seq<tensor<?xf32>>) -> !onnx.seq<tensor<?xf32>>
    func.return %r : !onnx.seq<tensor<?xf32>>
  }
}
