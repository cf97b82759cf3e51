// RUN: zant-opt %s -p cse | filecheck %s

// What xDSL's cse learns from the uop memory effects: equal loads merge until a store (or any
// write) comes between; accumulator cells never merge and an acc_get is read again after a
// mulacc; an unused scratch buffer, constant or pure value goes, an unused graph input stays
// (it is part of the C signature).

// CHECK-LABEL: func.func @effects(%i: index)
// CHECK-NEXT:    %x = uop.define_global "input" 0 "x" : !uop.buffer<4xf32>
// CHECK-NEXT:    %unused = uop.define_global "input" 1 "unused" : !uop.buffer<4xf32>
// CHECK-NEXT:    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
// CHECK-NEXT:    %t = uop.define_local "t" : !uop.buffer<4xf32>
// CHECK-NEXT:    %p = uop.gep %t[%i] : !uop.buffer<4xf32>
// CHECK-NEXT:    %a = uop.load %p : f32
// CHECK-NEXT:    uop.store %a, %p : f32
// CHECK-NEXT:    %c = uop.load %p : f32
// CHECK-NEXT:    %s = uop.add %a, %c : f32
// CHECK-NEXT:    %acc = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:    %acc2 = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:    uop.mulacc %acc, %a, %s : !uop.acc<f32>, f32
// CHECK-NEXT:    uop.mulacc %acc2, %a, %s : !uop.acc<f32>, f32
// CHECK-NEXT:    %g1 = uop.acc_get %acc : !uop.acc<f32>, f32
// CHECK-NEXT:    uop.mulacc %acc, %a, %s : !uop.acc<f32>, f32
// CHECK-NEXT:    %g3 = uop.acc_get %acc : !uop.acc<f32>, f32
// CHECK-NEXT:    %h = uop.acc_get %acc2 : !uop.acc<f32>, f32
// CHECK-NEXT:    %q = uop.gep %y[%i] : !uop.buffer<4xf32>
// CHECK-NEXT:    %r1 = uop.add %g1, %g1 : f32
// CHECK-NEXT:    %r2 = uop.add %r1, %g3 : f32
// CHECK-NEXT:    %r3 = uop.add %r2, %h : f32
// CHECK-NEXT:    uop.store %r3, %q : f32
// CHECK-NEXT:    func.return

func.func @effects(%i: index) {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<4xf32>
  %unused = uop.define_global "input" 1 "unused" : !uop.buffer<4xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
  %w = uop.define_global "constant" 0 "w" value dense<1.0> : tensor<4xf32> : !uop.buffer<4xf32>
  %t = uop.define_local "t" : !uop.buffer<4xf32>
  %dead = uop.define_local "dead" : !uop.buffer<4xf32>
  %p = uop.gep %t[%i] : !uop.buffer<4xf32>
  %p2 = uop.gep %t[%i] : !uop.buffer<4xf32>
  %a = uop.load %p : f32
  %b = uop.load %p2 : f32
  uop.store %a, %p : f32
  %c = uop.load %p : f32
  %s = uop.add %b, %c : f32
  %d = uop.div %s, %a : f32
  %acc = uop.define_acc 0.0 : f32
  %acc2 = uop.define_acc 0.0 : f32
  uop.mulacc %acc, %a, %s : !uop.acc<f32>, f32
  uop.mulacc %acc2, %a, %s : !uop.acc<f32>, f32
  %g1 = uop.acc_get %acc : !uop.acc<f32>, f32
  %g2 = uop.acc_get %acc : !uop.acc<f32>, f32
  uop.mulacc %acc, %a, %s : !uop.acc<f32>, f32
  %g3 = uop.acc_get %acc : !uop.acc<f32>, f32
  %h = uop.acc_get %acc2 : !uop.acc<f32>, f32
  %q = uop.gep %y[%i] : !uop.buffer<4xf32>
  %r1 = uop.add %g1, %g2 : f32
  %r2 = uop.add %r1, %g3 : f32
  %r3 = uop.add %r2, %h : f32
  uop.store %r3, %q : f32
  func.return
}
