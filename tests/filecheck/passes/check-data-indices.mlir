// RUN: zant-opt %s --split-input-file -p check-data-indices | filecheck %s

// Gather(x: 4x3, i: int64[2] graph input, axis 0): the index is checked before any kernel, by a
// copy of the one loop it depends on (2 iterations, not the kernel's 2 x 3), folding
// -4 <= i < 4 (i + 4 < 8 unsigned) into an i1 accumulator; a false one ends the function with
// status 6. In the kernel, the index's low 32 bits are wrapped (negative from the end) and
// clamped to [0, 3] by one unsigned min (a negative value is a large unsigned one).
// CHECK-LABEL: func.func @gather
// CHECK:         %y = uop.define_global "output" 0 "y" : !uop.buffer<6xf32>
// CHECK-NEXT:    [[ACC:%.*]] = uop.define_acc true
// CHECK-NEXT:    uop.range [[J:%.*]] = 0 to 2 {
// CHECK-NEXT:      [[P:%.*]] = uop.gep %i[[[J]]] : !uop.buffer<2xi64>
// CHECK-NEXT:      [[V:%.*]] = uop.load [[P]] : i64
// CHECK-NEXT:      [[LOW:%.*]] = uop.const -4 : i64
// CHECK-NEXT:      [[SHIFTED:%.*]] = uop.sub [[V]], [[LOW]] : i64
// CHECK-NEXT:      [[U:%.*]] = uop.cast [[SHIFTED]] : i64 to ui64
// CHECK-NEXT:      [[SPAN:%.*]] = uop.const 8 : ui64
// CHECK-NEXT:      [[OK:%.*]] = uop.cmplt [[U]], [[SPAN]] : ui64
// CHECK-NEXT:      [[ALL:%.*]] = uop.acc_get [[ACC]] : !uop.acc<i1>, i1
// CHECK-NEXT:      [[AND:%.*]] = uop.and [[ALL]], [[OK]] : i1
// CHECK-NEXT:      uop.acc_set [[ACC]], [[AND]] : !uop.acc<i1>, i1
// CHECK-NEXT:    }
// CHECK-NEXT:    [[RESULT:%.*]] = uop.acc_get [[ACC]] : !uop.acc<i1>, i1
// CHECK-NEXT:    abi.check [[RESULT]], 6
// CHECK-NEXT:    %xv = uop.view %x
// CHECK:         uop.range
// CHECK-NEXT:      uop.range
// CHECK-NEXT:        [[P2:%.*]] = uop.gep %i
// CHECK-NEXT:        [[V2:%.*]] = uop.load [[P2]] : i64
// CHECK-NEXT:        [[LOW32:%.*]] = uop.cast [[V2]] : i64 to i32
// CHECK-NEXT:        [[ZERO:%.*]] = uop.const 0 : i32
// CHECK-NEXT:        [[NEG:%.*]] = uop.cmplt [[LOW32]], [[ZERO]] : i32
// CHECK-NEXT:        [[N:%.*]] = uop.const 4 : i32
// CHECK-NEXT:        [[UP:%.*]] = uop.add [[LOW32]], [[N]] : i32
// CHECK-NEXT:        [[W:%.*]] = uop.where [[NEG]], [[UP]], [[LOW32]] : i32
// CHECK-NEXT:        [[U:%.*]] = uop.cast [[W]] : i32 to ui32
// CHECK-NEXT:        [[LAST:%.*]] = uop.const 3 : ui32
// CHECK-NEXT:        [[MIN:%.*]] = uop.min [[U]], [[LAST]] : ui32
// CHECK-NEXT:        [[IX:%.*]] = uop.cast [[MIN]] : ui32 to index
// CHECK-NEXT:        uop.gep %xv[[[IX]], {{%.*}}]
// CHECK-NOT:     uop.bound_index
func.func @gather() {
  %i = uop.define_global "input" 0 "i" : !uop.buffer<2xi64>
  %x = uop.define_global "input" 1 "x" : !uop.buffer<12xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<6xf32>
  %xv = uop.view %x : !uop.buffer<12xf32> -> !uop.view<4x3xf32, strides [3, 1], offset 0>
  %yv = uop.view %y : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
  uop.range %a = 0 to 2 {
    uop.range %b = 0 to 3 {
      %p = uop.gep %i[%a] : !uop.buffer<2xi64>
      %v = uop.load %p : i64
      %ix = uop.bound_index %v, 4 : i64
      %q = uop.gep %xv[%ix, %b] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      %e = uop.load %q : f32
      %r = uop.gep %yv[%a, %b] : !uop.view<2x3xf32, strides [3, 1], offset 0>
      uop.store %e, %r : f32
    }
  }
  func.return
}

// -----

// Indices an earlier kernel computes (an int32 Cast of them): the check goes right after that
// kernel, before the indexed one, and reads the scratch buffer it wrote.
// CHECK-LABEL: func.func @computed
// CHECK:         uop.range {{%.*}} = 0 to 3 {
// CHECK:           uop.store {{%.*}}, {{%.*}} : i32
// CHECK-NEXT:    }
// CHECK-NEXT:    [[ACC:%.*]] = uop.define_acc true
// CHECK-NEXT:    uop.range {{%.*}} = 0 to 3 {
// CHECK-NEXT:      uop.gep %c
// CHECK-NEXT:      uop.load {{%.*}} : i32
// CHECK-NEXT:      [[V:%.*]] = uop.cast {{%.*}} : i32 to i64
// CHECK:         abi.check {{%.*}}, 6
// CHECK-NEXT:    uop.range {{%.*}} = 0 to 3 {
func.func @computed() {
  %i = uop.define_global "input" 0 "i" : !uop.buffer<3xi64>
  %x = uop.define_global "input" 1 "x" : !uop.buffer<5xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<3xf32>
  %c = uop.define_local "c" : !uop.buffer<3xi32>
  uop.range %a = 0 to 3 {
    %p = uop.gep %i[%a] : !uop.buffer<3xi64>
    %v = uop.load %p : i64
    %w = uop.cast %v : i64 to i32
    %q = uop.gep %c[%a] : !uop.buffer<3xi32>
    uop.store %w, %q : i32
  }
  uop.range %b = 0 to 3 {
    %p = uop.gep %c[%b] : !uop.buffer<3xi32>
    %v = uop.load %p : i32
    %ix = uop.bound_index %v, 5 : i32
    %q = uop.gep %x[%ix] : !uop.buffer<5xf32>
    %e = uop.load %q : f32
    %r = uop.gep %y[%b] : !uop.buffer<3xf32>
    uop.store %e, %r : f32
  }
  func.return
}

// -----

// Two indices of one tuple in one kernel (GatherND's, MaxUnpool's `nonnegative` one): one
// copied nest checks both; a nonnegative index is only clamped, not wrapped.
// CHECK-LABEL: func.func @pair
// CHECK:         uop.define_acc true
// CHECK-NEXT:    uop.range {{%.*}} = 0 to 2 {
// CHECK:           uop.const -4 : i64
// CHECK:           uop.const 8 : ui64
// CHECK:           uop.acc_set
// CHECK-NOT:       uop.sub
// CHECK:           uop.const 3 : ui64
// CHECK:           uop.acc_set
// CHECK-NEXT:    }
// CHECK:         abi.check {{%.*}}, 6
// CHECK:         uop.range {{%.*}} = 0 to 2 {
// CHECK:           uop.where
// CHECK-NOT:       uop.where
// CHECK:           uop.gep %xv
func.func @pair() {
  %i = uop.define_global "input" 0 "i" : !uop.buffer<4xi64>
  %x = uop.define_global "input" 1 "x" : !uop.buffer<12xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<2xf32>
  %iv = uop.view %i : !uop.buffer<4xi64> -> !uop.view<2x2xi64, strides [2, 1], offset 0>
  %xv = uop.view %x : !uop.buffer<12xf32> -> !uop.view<4x3xf32, strides [3, 1], offset 0>
  uop.range %a = 0 to 2 {
    %c0 = uop.const 0 : index
    %c1 = uop.const 1 : index
    %p = uop.gep %iv[%a, %c0] : !uop.view<2x2xi64, strides [2, 1], offset 0>
    %v = uop.load %p : i64
    %ix = uop.bound_index %v, 4 : i64
    %p1 = uop.gep %iv[%a, %c1] : !uop.view<2x2xi64, strides [2, 1], offset 0>
    %v1 = uop.load %p1 : i64
    %jx = uop.bound_index nonnegative %v1, 3 : i64
    %q = uop.gep %xv[%ix, %jx] : !uop.view<4x3xf32, strides [3, 1], offset 0>
    %e = uop.load %q : f32
    %r = uop.gep %y[%a] : !uop.buffer<2xf32>
    uop.store %e, %r : f32
  }
  func.return
}

// -----

// An index outside any loop (a scalar Gather): checked where it is, with no accumulator.
// CHECK-LABEL: func.func @scalar
// CHECK:         [[V:%.*]] = uop.load {{%.*}} : i64
// CHECK-NEXT:    [[LOW:%.*]] = uop.const -7 : i64
// CHECK-NEXT:    [[SHIFTED:%.*]] = uop.sub [[V]], [[LOW]] : i64
// CHECK-NEXT:    [[U:%.*]] = uop.cast [[SHIFTED]] : i64 to ui64
// CHECK-NEXT:    [[SPAN:%.*]] = uop.const 14 : ui64
// CHECK-NEXT:    [[OK:%.*]] = uop.cmplt [[U]], [[SPAN]] : ui64
// CHECK-NEXT:    abi.check [[OK]], 6
// CHECK-NOT:     uop.define_acc
// CHECK:         uop.gep %x
func.func @scalar() {
  %i = uop.define_global "input" 0 "i" : !uop.buffer<1xi64>
  %x = uop.define_global "input" 1 "x" : !uop.buffer<7xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<1xf32>
  %c0 = uop.const 0 : index
  %p = uop.gep %i[%c0] : !uop.buffer<1xi64>
  %v = uop.load %p : i64
  %ix = uop.bound_index %v, 7 : i64
  %q = uop.gep %x[%ix] : !uop.buffer<7xf32>
  %e = uop.load %q : f32
  %r = uop.gep %y[%c0] : !uop.buffer<1xf32>
  uop.store %e, %r : f32
  func.return
}
