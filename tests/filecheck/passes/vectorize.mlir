// RUN: zant-opt %s --split-input-file -p 'coalesce-loops,split-index-sets{width=8},vectorize{width=8}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'coalesce-loops,split-index-sets{width=4 only-innermost=true},vectorize{width=4 only-innermost=true}' | filecheck %s --check-prefix=WIDTH4
// RUN: zant-opt %s --split-input-file -p 'coalesce-loops,vectorize' | filecheck %s --check-prefix=NOSPLIT

// CHECK-LABEL: func.func @elementwise
// CHECK:         uop.range %i = 0 to 8 step 8 {
// CHECK-NEXT:      %p = uop.gep %x[%i] : !uop.buffer<12xf32>
// CHECK-NEXT:      %a = uop.vload %p : vector<8xf32>
// CHECK-NEXT:      %ps = uop.gep %s[%zero] : !uop.buffer<1xf32>
// CHECK-NEXT:      %b = uop.load %ps : f32
// CHECK-NEXT:      %[[B:.*]] = uop.broadcast %b : f32 to vector<8xf32>
// CHECK-NEXT:      %c = uop.mul %a, %[[B]] : vector<8xf32>
// CHECK-NEXT:      %q = uop.gep %y[%i] : !uop.buffer<12xf32>
// CHECK-NEXT:      uop.vstore %c, %q : vector<8xf32>
// CHECK-NEXT:    }
// The tail: the last 8 lanes again (idempotent), no scalar loop.
// CHECK-NEXT:    uop.range %[[T:.*]] = 4 to 12 step 8 {
// CHECK:           uop.vstore %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// WIDTH4-LABEL: func.func @elementwise
// WIDTH4:         uop.range %i = 0 to 12 step 4 {
// WIDTH4:           uop.vstore %c, %q : vector<4xf32>
// WIDTH4-NEXT:    }
// WIDTH4-NEXT:    func.return

builtin.module {
  func.func @elementwise() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<12xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<12xf32>
    %s = uop.define_global "input" 1 "s" : !uop.buffer<1xf32>
    %zero = uop.const 0 : index
    uop.range %i = 0 to 12 {
      %p = uop.gep %x[%i] : !uop.buffer<12xf32>
      %a = uop.load %p : f32
      %ps = uop.gep %s[%zero] : !uop.buffer<1xf32>
      %b = uop.load %ps : f32
      %c = uop.mul %a, %b : f32
      %q = uop.gep %y[%i] : !uop.buffer<12xf32>
      uop.store %c, %q : f32
    }
    func.return
  }
}

// -----

// A reduction: a vector accumulator, summed into the scalar one; a scalar tail loop.
// CHECK-LABEL: func.func @dot
// CHECK:         %acc = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:    %[[V:.*]] = uop.define_acc 0.000000e+00 : f32 to vector<8xf32>
// CHECK-NEXT:    uop.range %k = 0 to 8 step 8 {
// CHECK-NEXT:      %pa = uop.gep %a[%k] : !uop.buffer<10xf16>
// CHECK-NEXT:      %va = uop.vload %pa : vector<8xf16>
// CHECK-NEXT:      %pb = uop.gep %b[%k] : !uop.buffer<10xf16>
// CHECK-NEXT:      %vb = uop.vload %pb : vector<8xf16>
// CHECK-NEXT:      %fa = uop.cast %va : vector<8xf16> to vector<8xf32>
// CHECK-NEXT:      %fb = uop.cast %vb : vector<8xf16> to vector<8xf32>
// CHECK-NEXT:      uop.mulacc %[[V]], %fa, %fb : !uop.acc<vector<8xf32>>, vector<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[VS:.*]] = uop.acc_get %[[V]] : !uop.acc<vector<8xf32>>, vector<8xf32>
// CHECK-NEXT:    %[[S:.*]] = uop.reduce_add %[[VS]] : vector<8xf32> to f32
// CHECK-NEXT:    %[[OLD:.*]] = uop.acc_get %acc : !uop.acc<f32>, f32
// CHECK-NEXT:    %[[NEW:.*]] = uop.add %[[OLD]], %[[S]] : f32
// CHECK-NEXT:    uop.acc_set %acc, %[[NEW]] : !uop.acc<f32>, f32
// CHECK-NEXT:    uop.range %{{.*}} = 8 to 10 {
// CHECK-NEXT:      %{{.*}} = uop.gep %a[%{{.*}}] : !uop.buffer<10xf16>
// CHECK-NEXT:      %{{.*}} = uop.load %{{.*}} : f16
// CHECK:           uop.mulacc %acc, %{{.*}}, %{{.*}} : !uop.acc<f32>, f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %r = uop.acc_get %acc : !uop.acc<f32>, f32
// WIDTH4-LABEL: func.func @dot
// WIDTH4:         uop.range %k = 0 to 8 step 4 {
// WIDTH4:         uop.range %{{.*}} = 8 to 10 {

builtin.module {
  func.func @dot() {
    %a = uop.define_global "input" 0 "a" : !uop.buffer<10xf16>
    %b = uop.define_global "input" 1 "b" : !uop.buffer<10xf16>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<1xf32>
    %acc = uop.define_acc 0.0 : f32
    uop.range %k = 0 to 10 {
      %pa = uop.gep %a[%k] : !uop.buffer<10xf16>
      %va = uop.load %pa : f16
      %pb = uop.gep %b[%k] : !uop.buffer<10xf16>
      %vb = uop.load %pb : f16
      %fa = uop.cast %va : f16 to f32
      %fb = uop.cast %vb : f16 to f32
      uop.mulacc %acc, %fa, %fb : !uop.acc<f32>, f32
    }
    %r = uop.acc_get %acc : !uop.acc<f32>, f32
    %zero = uop.const 0 : index
    %q = uop.gep %y[%zero] : !uop.buffer<1xf32>
    uop.store %r, %q : f32
    func.return
  }
}

// -----

// An outer loop with a reduction nested inside: the accumulator becomes a vector, the
// weights are broadcast. only-innermost leaves it alone.
// CHECK-LABEL: func.func @outer
// CHECK:         uop.range %o = 0 to 8 step 8 {
// CHECK-NEXT:      %acc = uop.define_acc 0.000000e+00 : f32 to vector<8xf32>
// CHECK-NEXT:      uop.range %c = 0 to 2 {
// CHECK-NEXT:        %px = uop.gep %xv[%c, %o] : !uop.view<2x9xf32, strides [9, 1], offset 0>
// CHECK-NEXT:        %vx = uop.vload %px : vector<8xf32>
// CHECK-NEXT:        %pw = uop.gep %w[%c] : !uop.buffer<2xf32>
// CHECK-NEXT:        %vw = uop.load %pw : f32
// CHECK-NEXT:        %[[W:.*]] = uop.broadcast %vw : f32 to vector<8xf32>
// CHECK-NEXT:        uop.mulacc %acc, %vx, %[[W]] : !uop.acc<vector<8xf32>>, vector<8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %r = uop.acc_get %acc : !uop.acc<vector<8xf32>>, vector<8xf32>
// CHECK-NEXT:      %q = uop.gep %y[%o] : !uop.buffer<9xf32>
// CHECK-NEXT:      uop.vstore %r, %q : vector<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    uop.range %{{.*}} = 1 to 9 step 8 {
// WIDTH4-LABEL: func.func @outer
// WIDTH4:         uop.range %o = 0 to 9 {
// WIDTH4-NEXT:      %acc = uop.define_acc 0.000000e+00 : f32
// WIDTH4-NEXT:      uop.range %c = 0 to 2 {
// WIDTH4-NEXT:        %px = uop.gep %xv[%c, %o]
// WIDTH4-NEXT:        %vx = uop.load %px : f32

builtin.module {
  func.func @outer() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<18xf32>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<2xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<9xf32>
    %xv = uop.view %x : !uop.buffer<18xf32> -> !uop.view<2x9xf32, strides [9, 1], offset 0>
    uop.range %o = 0 to 9 {
      %acc = uop.define_acc 0.0 : f32
      uop.range %c = 0 to 2 {
        %px = uop.gep %xv[%c, %o] : !uop.view<2x9xf32, strides [9, 1], offset 0>
        %vx = uop.load %px : f32
        %pw = uop.gep %w[%c] : !uop.buffer<2xf32>
        %vw = uop.load %pw : f32
        uop.mulacc %acc, %vx, %vw : !uop.acc<f32>, f32
      }
      %r = uop.acc_get %acc : !uop.acc<f32>, f32
      %q = uop.gep %y[%o] : !uop.buffer<9xf32>
      uop.store %r, %q : f32
    }
    func.return
  }
}

// -----

// A load that moves 2 elements per lane is a strided vector load (a gather).
// CHECK-LABEL: func.func @strided
// CHECK:         uop.range %i = 0 to 8 step 8 {
// CHECK-NEXT:      %j = uop.mul %i, %two : index
// CHECK-NEXT:      %p = uop.gep %x[%j] : !uop.buffer<24xf32>
// CHECK-NEXT:      %a = uop.vload %p stride 2 : vector<8xf32>
// CHECK-NEXT:      %q = uop.gep %y[%i] : !uop.buffer<12xf32>
// CHECK-NEXT:      uop.vstore %a, %q : vector<8xf32>

builtin.module {
  func.func @strided() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<24xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<12xf32>
    %two = uop.const 2 : index
    uop.range %i = 0 to 12 {
      %j = uop.mul %i, %two : index
      %p = uop.gep %x[%j] : !uop.buffer<24xf32>
      %a = uop.load %p : f32
      %q = uop.gep %y[%i] : !uop.buffer<12xf32>
      uop.store %a, %q : f32
    }
    func.return
  }
}

// -----

// Refused: y is loaded one element ahead of where it is stored (a loop-carried dependence).
// CHECK-LABEL: func.func @refused_in_place_shift
// CHECK:         uop.range %i = 0 to 12 {
// CHECK-NOT:     vector
// CHECK:         func.return

builtin.module {
  func.func @refused_in_place_shift() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<13xf32>
    %one = uop.const 1 : index
    uop.range %i = 0 to 12 {
      %n = uop.add %i, %one : index
      %p = uop.gep %y[%n] : !uop.buffer<13xf32>
      %a = uop.load %p : f32
      %q = uop.gep %y[%i] : !uop.buffer<13xf32>
      uop.store %a, %q : f32
    }
    func.return
  }
}

// -----

// Index-set splitting: a padded read whose bounds checks depend on %i. Iterations 1 to 10 read
// inside x: there the checks are constants and the clamps are gone, so that part is vectorized;
// iterations 0 and 11 keep their checks in scalar loops.
// CHECK-LABEL: func.func @split
// CHECK:         uop.range %i = 0 to 1 {
// CHECK:           uop.cmple
// CHECK:           uop.store
// CHECK:         uop.range %[[V:.*]] = 1 to 9 step 8 {
// CHECK:           %[[POS:.*]] = uop.sub %[[V]], %{{.*}} : index
// CHECK:           uop.const true
// CHECK-NOT:       uop.max
// CHECK:           %[[P:.*]] = uop.gep %x[%[[POS]]] : !uop.buffer<10xf32>
// CHECK-NEXT:      %{{.*}} = uop.vload %[[P]] : vector<8xf32>
// CHECK:           uop.where %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         uop.range %{{.*}} = 3 to 11 step 8 {
// CHECK:         uop.range %{{.*}} = 11 to 12 {
// CHECK:           uop.cmple
// CHECK:           uop.min
// CHECK:           uop.store %{{.*}}, %{{.*}} : f32
// NOSPLIT-LABEL: func.func @split
// NOSPLIT:         uop.range %i = 0 to 12 {
// NOSPLIT-NOT:     vector

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

// Refused: the load moves -1 element per lane.
// CHECK-LABEL: func.func @refused_reversed
// CHECK:         uop.range %i = 0 to 12 {
// CHECK-NOT:     vector
// CHECK:         func.return

builtin.module {
  func.func @refused_reversed() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<12xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<12xf32>
    %last = uop.const 11 : index
    uop.range %i = 0 to 12 {
      %j = uop.sub %last, %i : index
      %p = uop.gep %x[%j] : !uop.buffer<12xf32>
      %a = uop.load %p : f32
      %q = uop.gep %y[%i] : !uop.buffer<12xf32>
      uop.store %a, %q : f32
    }
    func.return
  }
}

// -----

// Loop coalescing: rows of 5 as one loop of 10 (every address moves 5 per row); the row-
// broadcast bias of @no_coalesce does not (it moves 0 per row but 1 per column).
// CHECK-LABEL: func.func @coalesce
// CHECK:         uop.range %j = 0 to 8 step 8 {
// CHECK-NEXT:      %[[ZERO:.*]] = uop.const 0 : index
// CHECK-NEXT:      %p = uop.gep %xv[%[[ZERO]], %j] : !uop.view<2x5xf32, strides [5, 1], offset 0>
// CHECK-NEXT:      %a = uop.vload %p : vector<8xf32>
// CHECK:         uop.range %{{.*}} = 2 to 10 step 8 {
// CHECK-LABEL: func.func @no_coalesce
// CHECK:         uop.range %i = 0 to 2 {
// CHECK-NEXT:      uop.range %j = 0 to 4 step 4 {
// NOSPLIT-LABEL: func.func @coalesce
// NOSPLIT:         uop.range %j = 0 to 8 step 8 {

builtin.module {
  func.func @coalesce() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<10xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<10xf32>
    %xv = uop.view %x : !uop.buffer<10xf32> -> !uop.view<2x5xf32, strides [5, 1], offset 0>
    %yv = uop.view %y : !uop.buffer<10xf32> -> !uop.view<2x5xf32, strides [5, 1], offset 0>
    uop.range %i = 0 to 2 {
      uop.range %j = 0 to 5 {
        %p = uop.gep %xv[%i, %j] : !uop.view<2x5xf32, strides [5, 1], offset 0>
        %a = uop.load %p : f32
        %b = uop.add %a, %a : f32
        %q = uop.gep %yv[%i, %j] : !uop.view<2x5xf32, strides [5, 1], offset 0>
        uop.store %b, %q : f32
      }
    }
    func.return
  }
  func.func @no_coalesce() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<5xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<10xf32>
    %xv = uop.view %x : !uop.buffer<5xf32> -> !uop.view<2x5xf32, strides [0, 1], offset 0>
    %yv = uop.view %y : !uop.buffer<10xf32> -> !uop.view<2x5xf32, strides [5, 1], offset 0>
    uop.range %i = 0 to 2 {
      uop.range %j = 0 to 5 {
        %p = uop.gep %xv[%i, %j] : !uop.view<2x5xf32, strides [0, 1], offset 0>
        %a = uop.load %p : f32
        %q = uop.gep %yv[%i, %j] : !uop.view<2x5xf32, strides [5, 1], offset 0>
        uop.store %a, %q : f32
      }
    }
    func.return
  }
}
