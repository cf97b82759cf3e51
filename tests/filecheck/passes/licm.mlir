// RUN: zant-opt %s --split-input-file -p licm | filecheck %s

// Invariant pure ops climb out of a uop.range nest, as far as their operands allow; loads,
// stores, accumulators and an integer division by a value that may be 0 stay (the loop may run
// zero times, and the division would then trap where the program did not).

// CHECK-LABEL: func.func @nest()
// CHECK:         %zero = uop.const 0 : i32
// CHECK-NEXT:    %c = uop.const 2 : i32
// CHECK-NEXT:    %k = uop.mul %c, %n : i32
// CHECK-NEXT:    %d = uop.div %k, %c : i32
// CHECK-NEXT:    uop.range %i = 0 to 4 {
// CHECK-NEXT:      %o = uop.gep %y[%i] : !uop.buffer<4xi32>
// CHECK-NEXT:      uop.range %j = 0 to 2 {
// CHECK-NEXT:        %e = uop.div %k, %zero : i32
// CHECK-NEXT:        %acc = uop.define_acc 0 : i32
// CHECK-NEXT:        %q = uop.gep %x[%j] : !uop.buffer<4xi32>
// CHECK-NEXT:        %a = uop.load %q : i32
// CHECK-NEXT:        %s = uop.add %a, %d : i32
// CHECK-NEXT:        %s2 = uop.add %s, %e : i32
// CHECK-NEXT:        uop.mulacc %acc, %s2, %k : !uop.acc<i32>, i32
// CHECK-NEXT:        %g = uop.acc_get %acc : !uop.acc<i32>, i32
// CHECK-NEXT:        uop.store %g, %o : i32
// CHECK-NEXT:      }
// CHECK-NEXT:    }

func.func @nest() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<4xi32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<4xi32>
  %n = uop.const 3 : i32
  %zero = uop.const 0 : i32
  uop.range %i = 0 to 4 {
    uop.range %j = 0 to 2 {
      %c = uop.const 2 : i32
      %k = uop.mul %c, %n : i32
      %d = uop.div %k, %c : i32
      %e = uop.div %k, %zero : i32
      %acc = uop.define_acc 0 : i32
      %q = uop.gep %x[%j] : !uop.buffer<4xi32>
      %a = uop.load %q : i32
      %s = uop.add %a, %d : i32
      %s2 = uop.add %s, %e : i32
      uop.mulacc %acc, %s2, %k : !uop.acc<i32>, i32
      %g = uop.acc_get %acc : !uop.acc<i32>, i32
      %o = uop.gep %y[%i] : !uop.buffer<4xi32>
      uop.store %g, %o : i32
    }
  }
  func.return
}

// -----

// A float division cannot trap (x / 0 is inf or NaN), so it moves; xDSL's scf.for still works.

// CHECK-LABEL: func.func @float_div(%v: f32, %w: f32)
// CHECK-NEXT:    %y = uop.define_global
// CHECK-NEXT:    %r = uop.div %v, %w : f32
// CHECK-NEXT:    uop.range %i = 0 to 4 {
// CHECK:         %s = uop.add %v, %w : f32
// CHECK-NEXT:    scf.for

func.func @float_div(%v : f32, %w : f32) {
  %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
  uop.range %i = 0 to 4 {
    %r = uop.div %v, %w : f32
    %o = uop.gep %y[%i] : !uop.buffer<4xf32>
    uop.store %r, %o : f32
  }
  %lb = arith.constant 0 : index
  %ub = arith.constant 4 : index
  %st = arith.constant 1 : index
  scf.for %k = %lb to %ub step %st {
    %s = uop.add %v, %w : f32
    %o = uop.gep %y[%k] : !uop.buffer<4xf32>
    uop.store %s, %o : f32
  }
  func.return
}
