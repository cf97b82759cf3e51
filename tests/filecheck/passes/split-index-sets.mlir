// RUN: zant-opt %s --split-input-file -p 'split-index-sets{width=8}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'split-index-sets{width=8},vectorize{width=8}' | filecheck %s --check-prefix=VECTOR

// A padded read whose bounds checks depend on %i: iterations 1 to 10 read inside x. The loop
// becomes three: before (0 to 1) and after (11 to 12) keep their checks; in the middle the
// compares are constants and the clamps are gone, so `vectorize` takes it (and only it).
// CHECK-LABEL: func.func @split
// CHECK:         uop.range %i = 0 to 1 {
// CHECK:           uop.cmple
// CHECK:           uop.max
// CHECK:         uop.range %[[M:.*]] = 1 to 11 {
// CHECK-NEXT:      %[[ONE:.*]] = uop.const 1 : index
// CHECK-NEXT:      %[[POS:.*]] = uop.sub %[[M]], %[[ONE]] : index
// CHECK-NOT:       uop.cmp
// CHECK:           uop.const true
// CHECK-NOT:       uop.max
// CHECK-NOT:       uop.min
// CHECK:           uop.gep %x[%[[POS]]] : !uop.buffer<10xf32>
// CHECK:         uop.range %{{.*}} = 11 to 12 {
// CHECK:           uop.cmple
// CHECK:           uop.min
// CHECK:         func.return
// VECTOR-LABEL: func.func @split
// VECTOR:         uop.range %i = 0 to 1 {
// VECTOR-NOT:       vector
// VECTOR:         uop.range %{{.*}} = 1 to 9 step 8 {
// VECTOR:           uop.vload
// VECTOR:         uop.range %{{.*}} = 3 to 11 step 8 {
// VECTOR:         uop.range %{{.*}} = 11 to 12 {
// VECTOR-NOT:       vector
// VECTOR:         func.return

builtin.module {
  func.func @split() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<10xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<12xf32>
    uop.range %i = 0 to 12 {
      %one = uop.const 1 : index
      %pos = uop.sub %i, %one : index
      %zero = uop.const 0 : index
      %lo = uop.cmple %zero, %pos : index
      %ten = uop.const 10 : index
      %hi = uop.cmplt %pos, %ten : index
      %valid = uop.and %lo, %hi : i1
      %c0 = uop.max %pos, %zero : index
      %nine = uop.const 9 : index
      %c1 = uop.min %c0, %nine : index
      %p = uop.gep %x[%c1] : !uop.buffer<10xf32>
      %a = uop.load %p : f32
      %fill = uop.const 0.0 : f32
      %v = uop.where %valid, %a, %fill : f32
      %q = uop.gep %y[%i] : !uop.buffer<12xf32>
      uop.store %v, %q : f32
    }
    func.return
  }
}

// -----

// Not split: with its checks decided, the middle would still be refused (its load moves -1
// element per lane), so the loop is left as it is.
// CHECK-LABEL: func.func @middle_refused
// CHECK:         uop.range %i = 0 to 12 {
// CHECK-NOT:     uop.range
// CHECK:         func.return

builtin.module {
  func.func @middle_refused() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<10xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<12xf32>
    uop.range %i = 0 to 12 {
      %one = uop.const 1 : index
      %eleven = uop.const 11 : index
      %pos = uop.sub %eleven, %i : index
      %zero = uop.const 0 : index
      %lo = uop.cmple %zero, %pos : index
      %ten = uop.const 10 : index
      %hi = uop.cmplt %pos, %ten : index
      %valid = uop.and %lo, %hi : i1
      %c0 = uop.max %pos, %zero : index
      %nine = uop.const 9 : index
      %c1 = uop.min %c0, %nine : index
      %p = uop.gep %x[%c1] : !uop.buffer<10xf32>
      %a = uop.load %p : f32
      %fill = uop.const 0.0 : f32
      %v = uop.where %valid, %a, %fill : f32
      %q = uop.gep %y[%i] : !uop.buffer<12xf32>
      uop.store %v, %q : f32
    }
    func.return
  }
}

// -----

// Not split: 4 iterations, fewer than the 4-lane minimum once the border ones are set aside.
// CHECK-LABEL: func.func @too_short
// CHECK:         uop.range %i = 0 to 4 {
// CHECK-NOT:     uop.range
// CHECK:         func.return

builtin.module {
  func.func @too_short() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<2xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
    uop.range %i = 0 to 4 {
      %one = uop.const 1 : index
      %pos = uop.sub %i, %one : index
      %zero = uop.const 0 : index
      %lo = uop.cmple %zero, %pos : index
      %ten = uop.const 2 : index
      %hi = uop.cmplt %pos, %ten : index
      %valid = uop.and %lo, %hi : i1
      %c0 = uop.max %pos, %zero : index
      %nine = uop.const 1 : index
      %c1 = uop.min %c0, %nine : index
      %p = uop.gep %x[%c1] : !uop.buffer<2xf32>
      %a = uop.load %p : f32
      %fill = uop.const 0.0 : f32
      %v = uop.where %valid, %a, %fill : f32
      %q = uop.gep %y[%i] : !uop.buffer<4xf32>
      uop.store %v, %q : f32
    }
    func.return
  }
}
