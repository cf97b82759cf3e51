// RUN: zant-opt %s --split-input-file --allow-unregistered-dialect -p canonicalize | filecheck %s

// Identities of integer and index arithmetic; only the exact ones for floats.

// CHECK-LABEL: func.func @identities(%i: index, %x: f32, %n: i32)
// CHECK-NEXT:    %fzero = uop.const 0.000000e+00 : f32
// CHECK-NEXT:    %fnegzero = uop.const -0.000000e+00 : f32
// CHECK-NEXT:    %t = uop.define_local "t" : !uop.buffer<64xf32>
// CHECK-NEXT:    %p = uop.gep %t[%i] : !uop.buffer<64xf32>
// CHECK-NEXT:    uop.store %x, %p : f32
// CHECK-NEXT:    %fadd = uop.add %x, %fzero : f32
// CHECK-NEXT:    uop.store %fadd, %p : f32
// CHECK-NEXT:    %fmul0 = uop.mul %x, %fzero : f32
// CHECK-NEXT:    uop.store %fmul0, %p : f32
// CHECK-NEXT:    %fsubn = uop.sub %x, %fnegzero : f32
// CHECK-NEXT:    uop.store %fsubn, %p : f32
// CHECK-NEXT:    %k = uop.const 0 : index
// CHECK-NEXT:    %q = uop.gep %t[%k] : !uop.buffer<64xf32>
// CHECK-NEXT:    uop.store %x, %q : f32
// CHECK-NEXT:    uop.store %x, %p : f32
// CHECK-NEXT:    func.return

func.func @identities(%i: index, %x: f32, %n: i32) {
  %zero = uop.const 0 : index
  %one = uop.const 1 : index
  %fzero = uop.const 0.0 : f32
  %fnegzero = uop.const -0.0 : f32
  %fone = uop.const 1.0 : f32
  %izero = uop.const 0 : i32
  %t = uop.define_local "t" : !uop.buffer<64xf32>
  %a = uop.add %i, %zero : index
  %b = uop.sub %a, %zero : index
  %c = uop.mul %b, %one : index
  %d = uop.div %c, %one : index
  %e = uop.add %zero, %d : index
  %p = uop.gep %t[%e] : !uop.buffer<64xf32>
  %fsub = uop.sub %x, %fzero : f32
  %fmul = uop.mul %fone, %fsub : f32
  %fdiv = uop.div %fmul, %fone : f32
  uop.store %fdiv, %p : f32
  // Not folded: -0.0 + 0.0 is +0.0, NaN * 0.0 is NaN, -0.0 - (-0.0) is +0.0.
  %fadd = uop.add %x, %fzero : f32
  uop.store %fadd, %p : f32
  %fmul0 = uop.mul %x, %fzero : f32
  uop.store %fmul0, %p : f32
  %fsubn = uop.sub %x, %fnegzero : f32
  uop.store %fsubn, %p : f32
  // Integer x * 0 is 0 (wrapping arithmetic has no NaN).
  %m = uop.mul %n, %izero : i32
  %k = uop.mul %zero, %i : index
  %q = uop.gep %t[%k] : !uop.buffer<64xf32>
  uop.store %x, %q : f32
  %nz = uop.cast %m : i32 to f32
  %same = uop.cast %x : f32 to f32
  uop.store %same, %p : f32
  func.return
}

// -----

// Integer and index literals fold, wrapping to their type; a division by 0 or -1 stays (it
// traps at run time); comparisons, where and exact casts of literals fold (a cast that would
// saturate or wrap stays).

// CHECK-LABEL: func.func @literals()
// CHECK-NEXT:    %c = uop.const 14 : index
// CHECK-NEXT:    %q = uop.const -2 : index
// CHECK-NEXT:    %r = uop.const -1 : index
// CHECK-NEXT:    %wrap = uop.const -128 : i8
// CHECK-NEXT:    %uwrap = uop.const 44 : ui8
// CHECK-NEXT:    %i6 = uop.const 6 : i32
// CHECK-NEXT:    %izero = uop.const 0 : i32
// CHECK-NEXT:    %iminus = uop.const -1 : i32
// CHECK-NEXT:    %mx = uop.const 6 : i32
// CHECK-NEXT:    %lt = uop.const true
// CHECK-NEXT:    %f2 = uop.const 2.000000e+00 : f32
// CHECK-NEXT:    %tofloat = uop.const 3.000000e+00 : f32
// CHECK-NEXT:    %big_f = uop.const 3.000000e+02 : f32
// CHECK-NEXT:    %toint = uop.const 2 : i32
// CHECK-NEXT:    %sat = uop.cast %big_f : f32 to i8
// CHECK-NEXT:    %i300 = uop.const 300 : i32
// CHECK-NEXT:    %narrow = uop.cast %i300 : i32 to i8
// CHECK-NEXT:    %byzero = uop.div %i6, %izero : i32
// CHECK-NEXT:    %byminus = uop.rem %i6, %iminus : i32
// CHECK-NEXT:    %or = uop.const 2 : i32
// CHECK-NEXT:    "test.use"(%c, %q, %r, %wrap, %uwrap, %mx, %or, %lt, %f2, %tofloat, %toint, %byzero, %byminus, %sat, %narrow)

func.func @literals() {
  %two = uop.const 2 : index
  %five = uop.const 5 : index
  %seven = uop.const -7 : index
  %three = uop.const 3 : index
  %a = uop.mul %two, %five : index
  %b = uop.add %a, %two : index
  %c = uop.add %b, %two : index
  %q = uop.div %seven, %three : index
  %r = uop.rem %seven, %three : index
  %big = uop.const 127 : i8
  %one8 = uop.const 1 : i8
  %wrap = uop.add %big, %one8 : i8
  %u200 = uop.const 200 : ui8
  %u100 = uop.const 100 : ui8
  %uwrap = uop.add %u200, %u100 : ui8
  %i6 = uop.const 6 : i32
  %i3 = uop.const 3 : i32
  %izero = uop.const 0 : i32
  %iminus = uop.const -1 : i32
  %mx = uop.max %i6, %i3 : i32
  %an = uop.and %i6, %i3 : i32
  %lt = uop.cmplt %i3, %i6 : i32
  %f1 = uop.const 1.0 : f32
  %f2 = uop.const 2.0 : f32
  %sel = uop.where %lt, %f2, %f1 : f32
  %tofloat = uop.cast %i3 : i32 to f32
  %big_f = uop.const 300.0 : f32
  %toint = uop.cast %f2 : f32 to i32
  %sat = uop.cast %big_f : f32 to i8
  %i300 = uop.const 300 : i32
  %narrow = uop.cast %i300 : i32 to i8
  %byzero = uop.div %i6, %izero : i32
  %byminus = uop.rem %i6, %iminus : i32
  %or = uop.or %an, %izero : i32
  "test.use"(%c, %q, %r, %wrap, %uwrap, %mx, %or, %lt, %sel, %tofloat, %toint, %byzero, %byminus, %sat, %narrow) : (index, index, index, i8, ui8, i32, i32, i1, f32, f32, i32, i32, i32, i8, i8) -> ()
  func.return
}

// -----

// A loop that runs once is inlined with its induction variable a literal (which then folds);
// a loop that never runs goes; others stay.

// CHECK-LABEL: func.func @trip_counts()
// CHECK-NEXT:    %y = uop.define_global "output" 0 "y" : !uop.buffer<8xf32>
// CHECK-NEXT:    %v = uop.const 1.000000e+00 : f32
// CHECK-NEXT:    [[SIX:%.*]] = uop.const 6 : index
// CHECK-NEXT:    %p = uop.gep %y[[[SIX]]] : !uop.buffer<8xf32>
// CHECK-NEXT:    uop.store %v, %p : f32
// CHECK-NEXT:    uop.range %k = 0 to 8 step 4 {
// CHECK-NEXT:      %q = uop.gep %y[%k] : !uop.buffer<8xf32>
// CHECK-NEXT:      uop.store %v, %q : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

func.func @trip_counts() {
  %y = uop.define_global "output" 0 "y" : !uop.buffer<8xf32>
  %v = uop.const 1.0 : f32
  uop.range %i = 4 to 8 step 8 {
    %two = uop.const 2 : index
    %j = uop.add %i, %two : index
    %p = uop.gep %y[%j] : !uop.buffer<8xf32>
    uop.store %v, %p : f32
  }
  uop.range %e = 3 to 3 {
    %p = uop.gep %y[%e] : !uop.buffer<8xf32>
    uop.store %v, %p : f32
  }
  uop.range %k = 0 to 8 step 4 {
    %q = uop.gep %y[%k] : !uop.buffer<8xf32>
    uop.store %v, %q : f32
  }
  func.return
}
