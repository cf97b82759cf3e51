// RUN: zant-opt %s --split-input-file -p resolve-sequences | filecheck %s
// RUN: zant-opt %s --split-input-file -p resolve-sequences,resolve-sequences | filecheck %s

// A run-time If's optionals (ONNX's if_opt, as the control-flow unroller writes it): the
// SequenceSelect of an optional sequence and an empty one by the condition is an optional whose
// presence is a run-time flag. OptionalHasElement is the flag; the graph output is returned as
// a sequence of its tensors whose length, the extents array's entry, is 1 present and 0 empty.

// CHECK-LABEL: func.func @main(%c: tensor<i1>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<i1>, tensor<1xi32>)
// CHECK-SAME:    onnx.output_names = ["o.0", "has", "extents"], zant.output_bounds = array<i64: -1, -1, -1>, zant.output_sequences = array<i64: 0, -1, -1>
// CHECK:         [[INDEX:%.*]] = onnx.Cast(%c) {to = 7 : i64}
// CHECK-DAG:     [[TRUE:%.*]] = onnx.Constant() {value = dense<true> : tensor<i1>}
// CHECK-DAG:     [[FALSE:%.*]] = onnx.Constant() {value = dense<false> : tensor<i1>}
// CHECK:         [[IS_THEN:%.*]] = onnx.Equal(%{{.*}}, [[INDEX]])
// CHECK-NEXT:    %has = onnx.Where([[IS_THEN]], [[FALSE]], [[TRUE]]) : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1>
// CHECK:         [[LENGTH:%.*]] = onnx.Where(%has, %{{.*}}, %{{.*}}) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK:         [[EXTENTS:%.*]] = onnx.Reshape
// CHECK-NEXT:    func.return %x, %has, [[EXTENTS]] : tensor<2xf32>, tensor<i1>, tensor<1xi32>
func.func @main(%c: tensor<i1>, %x: tensor<2xf32>) -> (!onnx.opt<!onnx.seq<tensor<2xf32>>>, tensor<i1>) attributes {onnx.input_names = ["c", "x"], onnx.output_names = ["o", "has"]} {
  %none = onnx.Optional() : () -> !onnx.opt<!onnx.seq<tensor<2xf32>>>
  %xs = onnx.SequenceConstruct(%x) : (tensor<2xf32>) -> !onnx.seq<tensor<2xf32>>
  %some = onnx.Optional(%xs) : (!onnx.seq<tensor<2xf32>>) -> !onnx.opt<!onnx.seq<tensor<2xf32>>>
  %index = onnx.Cast(%c) {to = 7 : i64} : (tensor<i1>) -> tensor<i64>
  %o = onnx.SequenceSelect(%index, %some, %none) : (tensor<i64>, !onnx.opt<!onnx.seq<tensor<2xf32>>>, !onnx.opt<!onnx.seq<tensor<2xf32>>>) -> !onnx.opt<!onnx.seq<tensor<2xf32>>>
  %has = onnx.OptionalHasElement(%o) : (!onnx.opt<!onnx.seq<tensor<2xf32>>>) -> tensor<i1>
  func.return %o, %has : !onnx.opt<!onnx.seq<tensor<2xf32>>>, tensor<i1>
}

// -----

// Two present optional tensors: the content chosen by a Where, the presence known (a plain
// tensor output); OptionalGetElement of a run-time-present one is behind a Guard of the flag.

// CHECK-LABEL: func.func @main(%c: tensor<i1>, %x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK-SAME:    onnx.output_names = ["o", "got"]
// CHECK:         [[BOTH:%.*]] = onnx.Where(%{{.*}}, %y, %x) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK:         [[FLAG:%.*]] = onnx.Where(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1>
// CHECK-NEXT:    onnx.Guard([[FLAG]])
// CHECK-NOT:     extents
// CHECK:         func.return [[BOTH]], %x : tensor<2xf32>, tensor<2xf32>
func.func @main(%c: tensor<i1>, %x: tensor<2xf32>, %y: tensor<2xf32>) -> (!onnx.opt<tensor<2xf32>>, tensor<2xf32>) attributes {onnx.input_names = ["c", "x", "y"], onnx.output_names = ["o", "got"]} {
  %some_x = onnx.Optional(%x) : (tensor<2xf32>) -> !onnx.opt<tensor<2xf32>>
  %some_y = onnx.Optional(%y) : (tensor<2xf32>) -> !onnx.opt<tensor<2xf32>>
  %none = onnx.Optional() : () -> !onnx.opt<tensor<2xf32>>
  %index = onnx.Cast(%c) {to = 7 : i64} : (tensor<i1>) -> tensor<i64>
  %o = onnx.SequenceSelect(%index, %some_x, %some_y) : (tensor<i64>, !onnx.opt<tensor<2xf32>>, !onnx.opt<tensor<2xf32>>) -> !onnx.opt<tensor<2xf32>>
  %maybe = onnx.SequenceSelect(%index, %some_x, %none) : (tensor<i64>, !onnx.opt<tensor<2xf32>>, !onnx.opt<tensor<2xf32>>) -> !onnx.opt<tensor<2xf32>>
  %got = onnx.OptionalGetElement(%maybe) : (!onnx.opt<tensor<2xf32>>) -> tensor<2xf32>
  func.return %o, %got : !onnx.opt<tensor<2xf32>>, tensor<2xf32>
}
