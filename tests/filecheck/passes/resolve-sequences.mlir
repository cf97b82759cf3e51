// RUN: zant-opt %s --split-input-file -p resolve-sequences | filecheck %s
// RUN: zant-opt %s --split-input-file -p resolve-sequences,resolve-sequences | filecheck %s
// RUN: %python %inputs/make_model.py sequences %t.onnx
// RUN: zant-opt %t.onnx -p resolve-sequences | filecheck %s --check-prefix=MODEL
// RUN: zant-opt %t.onnx -p resolve-sequences,fold-constants,dce,onnx-to-uop,fuse-loops,dce,plan-arenas,verify-arena-plan --check-each-pass 2>&1 >/dev/null | filecheck %s --check-prefix=CHECKED

// A sequence is followed as its elements: SequenceInsert at a constant position, SequenceLength
// a constant; a sequence result is its elements, named s.0, s.1 ... in onnx.output_names.
// CHECK-LABEL: func.func @construct_insert_length
// CHECK-SAME:    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x3xf32>, tensor<i64>)
// CHECK-SAME:    onnx.output_names = ["s.0", "s.1", "s.2", "n"]
// CHECK-NOT:     onnx.Sequence
// CHECK:         %n = onnx.Constant() {value = dense<3> : tensor<i64>}
// CHECK:         [[COPY:%.*]] = onnx.Identity(%a)
// CHECK-NEXT:    func.return %a, [[COPY]], %b, %n
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @construct_insert_length(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> (!onnx.seq<tensor<?x3xf32>>, tensor<i64>) attributes {onnx.output_names = ["s", "n"]} {
    %s = onnx.SequenceConstruct(%a, %b) : (tensor<2x3xf32>, tensor<4x3xf32>) -> !onnx.seq<tensor<?x3xf32>>
    %p = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %t = onnx.SequenceInsert(%s, %a, %p) : (!onnx.seq<tensor<?x3xf32>>, tensor<2x3xf32>, tensor<i64>) -> !onnx.seq<tensor<?x3xf32>>
    %n = onnx.SequenceLength(%t) : (!onnx.seq<tensor<?x3xf32>>) -> tensor<i64>
    func.return %t, %n : !onnx.seq<tensor<?x3xf32>>, tensor<i64>
  }
}

// -----

// SequenceAt (negative position) is that element; SequenceErase drops one; SequenceEmpty and
// an Optional holding nothing give no result at all.
// CHECK-LABEL: func.func @at_erase_empty
// CHECK-SAME:    -> (tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK-SAME:    onnx.output_names = ["last", "rest.0"]
// CHECK:         [[COPY:%.*]] = onnx.Identity(%b)
// CHECK-NEXT:    func.return %b, [[COPY]]
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @at_erase_empty(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> (tensor<?x3xf32>, !onnx.seq<tensor<?x3xf32>>, !onnx.seq<tensor<f32>>, !onnx.opt<tensor<f32>>) attributes {onnx.output_names = ["last", "rest", "none", "absent"]} {
    %s = onnx.SequenceConstruct(%a, %b) : (tensor<2x3xf32>, tensor<4x3xf32>) -> !onnx.seq<tensor<?x3xf32>>
    %m1 = onnx.Constant() {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
    %last = onnx.SequenceAt(%s, %m1) : (!onnx.seq<tensor<?x3xf32>>, tensor<i64>) -> tensor<?x3xf32>
    %zero = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %rest = onnx.SequenceErase(%s, %zero) : (!onnx.seq<tensor<?x3xf32>>, tensor<i64>) -> !onnx.seq<tensor<?x3xf32>>
    %none = onnx.SequenceEmpty() {dtype = 1 : i64} : () -> !onnx.seq<tensor<f32>>
    %absent = onnx.Optional(none) : (none) -> !onnx.opt<tensor<f32>>
    func.return %last, %rest, %none, %absent : tensor<?x3xf32>, !onnx.seq<tensor<?x3xf32>>, !onnx.seq<tensor<f32>>, !onnx.opt<tensor<f32>>
  }
}

// -----

// SplitToSequence into a constant split's pieces is one Split; ConcatFromSequence with new_axis
// unsqueezes each element, then one Concat.
// CHECK-LABEL: func.func @split_concat
// CHECK:         [[SIZES:%[0-9]+]] = onnx.Constant() {value = dense<[1, 2]> : tensor<2xi64>}
// CHECK-NEXT:    %first, %second = onnx.Split(%x, [[SIZES]]) {axis = 0 : i64} : (tensor<3x2xf32>, tensor<2xi64>) -> (tensor<1x2xf32>, tensor<2x2xf32>)
// CHECK:         %y = onnx.Concat(%second, %first) {axis = 0 : i64} : (tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
// CHECK:         [[U0:%.*]] = onnx.Unsqueeze(%first, {{.*}}) : (tensor<1x2xf32>, tensor<1xi64>) -> tensor<1x1x2xf32>
// CHECK:         %z = onnx.Concat([[U0]], {{.*}}) {axis = 1 : i64} : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<1x2x2xf32>
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @split_concat(%x: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<1x2x2xf32>) {
    %sizes = onnx.Constant() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
    %s = onnx.SplitToSequence(%x, %sizes) {axis = 0 : i64} : (tensor<3x2xf32>, tensor<2xi64>) -> !onnx.seq<tensor<?x2xf32>>
    %one = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %second = onnx.SequenceAt(%s, %one) : (!onnx.seq<tensor<?x2xf32>>, tensor<i64>) -> tensor<?x2xf32>
    %zero = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %first = onnx.SequenceAt(%s, %zero) : (!onnx.seq<tensor<?x2xf32>>, tensor<i64>) -> tensor<?x2xf32>
    %r = onnx.SequenceConstruct(%second, %first) : (tensor<?x2xf32>, tensor<?x2xf32>) -> !onnx.seq<tensor<?x2xf32>>
    %y = onnx.ConcatFromSequence(%r) {axis = 0 : i64} : (!onnx.seq<tensor<?x2xf32>>) -> tensor<3x2xf32>
    %t = onnx.SequenceConstruct(%first, %first) : (tensor<?x2xf32>, tensor<?x2xf32>) -> !onnx.seq<tensor<?x2xf32>>
    %z = onnx.ConcatFromSequence(%t) {axis = 1 : i64, new_axis = 1 : i64} : (!onnx.seq<tensor<?x2xf32>>) -> tensor<1x2x2xf32>
    func.return %y, %z : tensor<3x2xf32>, tensor<1x2x2xf32>
  }
}

// -----

// A result the graph declares with an open dimension (ONNX's inference leaves ConcatFromSequence's
// axis open) takes the static type of the tensor it becomes, in the function type too.
// CHECK-LABEL: func.func @open_result
// CHECK-SAME:    -> tensor<2x9x4xf32>
// CHECK:         %out = onnx.Concat(%x, %y, %z) {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x9x4xf32>
// CHECK-NEXT:    func.return %out : tensor<2x9x4xf32>
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @open_result(%x: tensor<2x3x4xf32>, %y: tensor<2x3x4xf32>, %z: tensor<2x3x4xf32>) -> tensor<2x?x4xf32> {
    %s = onnx.SequenceConstruct(%x, %y, %z) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> !onnx.seq<tensor<2x3x4xf32>>
    %out = onnx.ConcatFromSequence(%s) {axis = 1 : i64} : (!onnx.seq<tensor<2x3x4xf32>>) -> tensor<2x?x4xf32>
    func.return %out : tensor<2x?x4xf32>
  }
}

// -----

// A position known only at run time over elements of one type: onnx.Guard checks it is in
// [-3, 2], a negative one is counted from the end, and onnx.Where picks the element.
// CHECK-LABEL: func.func @runtime_at
// CHECK:         [[LOW:%.*]] = onnx.GreaterOrEqual(%p, {{%.*}})
// CHECK:         [[HIGH:%.*]] = onnx.LessOrEqual(%p, {{%.*}})
// CHECK-NEXT:    [[IN:%.*]] = onnx.And([[LOW]], [[HIGH]])
// CHECK-NEXT:    onnx.Guard([[IN]])
// CHECK:         [[NEG:%.*]] = onnx.Less(%p, {{%.*}})
// CHECK:         [[WRAP:%.*]] = onnx.Add(%p, {{%.*}})
// CHECK-NEXT:    [[POS:%.*]] = onnx.Where([[NEG]], [[WRAP]], %p)
// CHECK:         [[IS1:%.*]] = onnx.Equal({{%.*}}, [[POS]])
// CHECK-NEXT:    [[AB:%.*]] = onnx.Where([[IS1]], %b, %a)
// CHECK:         [[IS2:%.*]] = onnx.Equal({{%.*}}, [[POS]])
// CHECK-NEXT:    %x = onnx.Where([[IS2]], %c, [[AB]])
// CHECK-NEXT:    func.return %x
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @runtime_at(%a: tensor<2xf32>, %b: tensor<2xf32>, %c: tensor<2xf32>, %p: tensor<i64>) -> tensor<2xf32> {
    %s = onnx.SequenceConstruct(%a, %b, %c) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> !onnx.seq<tensor<2xf32>>
    %x = onnx.SequenceAt(%s, %p) : (!onnx.seq<tensor<2xf32>>, tensor<i64>) -> tensor<2xf32>
    func.return %x : tensor<2xf32>
  }
}

// -----

// Optional, OptionalHasElement and OptionalGetElement: the content, a constant, the content;
// Identity of a sequence is the same elements.
// CHECK-LABEL: func.func @optional
// CHECK-SAME:    onnx.output_names = ["has", "got.0"]
// CHECK:         %has = onnx.Constant() {value = dense<true> : tensor<i1>}
// CHECK-NEXT:    func.return %has, %a
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @optional(%a: tensor<2xf32>) -> (tensor<i1>, !onnx.seq<tensor<2xf32>>) attributes {onnx.output_names = ["has", "got"]} {
    %s = onnx.SequenceConstruct(%a) : (tensor<2xf32>) -> !onnx.seq<tensor<2xf32>>
    %o = onnx.Optional(%s) : (!onnx.seq<tensor<2xf32>>) -> !onnx.opt<!onnx.seq<tensor<2xf32>>>
    %has = onnx.OptionalHasElement(%o) : (!onnx.opt<!onnx.seq<tensor<2xf32>>>) -> tensor<i1>
    %got = onnx.OptionalGetElement(%o) : (!onnx.opt<!onnx.seq<tensor<2xf32>>>) -> !onnx.seq<tensor<2xf32>>
    %same = onnx.Identity(%got) : (!onnx.seq<tensor<2xf32>>) -> !onnx.seq<tensor<2xf32>>
    func.return %has, %same : tensor<i1>, !onnx.seq<tensor<2xf32>>
  }
}

// From an ONNX file: SequenceMap's body (a Relu) once per element, typed for it and located at
// `Relu_0[i]`; nothing of the sequences is left.
// MODEL-LABEL: func.func @main
// MODEL-NOT:     onnx.Sequence
// MODEL-NOT:     onnx.Optional
// MODEL:         %{{.*}}, %a = onnx.Split(%x, %{{.*}}) {axis = 1 : i64} : (tensor<2x6xf32>, tensor<2xi64>) -> (tensor<2x2xf32>, tensor<2x4xf32>)
// MODEL-NEXT:    onnx.Relu(%{{.*}}) : (tensor<2x2xf32>) -> tensor<2x2xf32>
// MODEL-NEXT:    onnx.Relu(%a) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// MODEL:         %c = onnx.Concat(
// MODEL:         %n = onnx.Constant() {value = dense<1> : tensor<i64>}
// MODEL:         %h = onnx.Constant() {value = dense<true> : tensor<i1>}
// MODEL-NEXT:    func.return %c, %a, %n, %u, %h

// --check-each-pass checks every pass after resolve-sequences (the interpreter holds no sequence).
// CHECKED: could not check the input module: value of type !onnx.seq
// CHECKED-NOT: error
