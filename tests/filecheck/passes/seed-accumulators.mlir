// RUN: zant-opt %s -p seed-accumulators | filecheck %s

// A Conv epilogue: the sum of output channel %m plus its constant bias. Seeded, the bias is
// loaded right after the accumulator is defined and set as its first value; the add is gone
// and the acc_get is the result.

// CHECK-LABEL: func.func @bias()
// CHECK:         uop.range %[[M:.*]] = 0 to 4 {
// CHECK-NEXT:      %acc = uop.define_acc 0 : i32
// CHECK-NEXT:      %[[P:.*]] = uop.gep inbounds %bias[%[[M]]] : !uop.buffer<4xi32>
// CHECK-NEXT:      %[[B:.*]] = uop.load %[[P]] : i32
// CHECK-NEXT:      uop.acc_set %acc, %[[B]] : !uop.acc<i32>, i32
// CHECK-NEXT:      uop.range %k = 0 to 8 {
// CHECK:             uop.mulacc %acc, %xc, %xc : !uop.acc<i32>, i32
// CHECK-NEXT:      }
// CHECK-NEXT:      %s = uop.acc_get %acc : !uop.acc<i32>, i32
// CHECK-NEXT:      %y = uop.gep inbounds %out[%[[M]]] : !uop.buffer<4xi32>
// CHECK-NEXT:      uop.store %s, %y : i32
// CHECK-NOT:       uop.add

// Left alone: the addend is not a constant buffer's (the input), the accumulator does not start
// at 0, and the bias index is computed after the accumulator is defined.
// CHECK-LABEL: func.func @left_alone()
// CHECK-COUNT-3: uop.add %s{{.*}}, %b{{.*}} : i32

builtin.module {
  func.func @bias() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
    %bias = uop.define_global "constant" 0 "bias" value dense<[1, 2, 3, 4]> : tensor<4xi32> : !uop.buffer<4xi32>
    %out = uop.define_global "output" 0 "y" : !uop.buffer<4xi32>
    uop.range %m = 0 to 4 {
      %acc = uop.define_acc 0 : i32
      uop.range %k = 0 to 8 {
        %xp = uop.gep inbounds %x[%k] : !uop.buffer<8xi8>
        %xv = uop.load %xp : i8
        %xc = uop.cast %xv : i8 to i32
        uop.mulacc %acc, %xc, %xc : !uop.acc<i32>, i32
      }
      %s = uop.acc_get %acc : !uop.acc<i32>, i32
      %p = uop.gep inbounds %bias[%m] : !uop.buffer<4xi32>
      %b = uop.load %p : i32
      %t = uop.add %s, %b : i32
      %y = uop.gep inbounds %out[%m] : !uop.buffer<4xi32>
      uop.store %t, %y : i32
    }
    func.return
  }

  func.func @left_alone() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<8xi32>
    %bias = uop.define_global "constant" 0 "bias" value dense<[1, 2, 3, 4]> : tensor<4xi32> : !uop.buffer<4xi32>
    %out = uop.define_global "output" 0 "y" : !uop.buffer<4xi32>
    %one = uop.const 1 : index
    uop.range %m = 0 to 4 {
      %acc = uop.define_acc 0 : i32
      %acc1 = uop.define_acc 1 : i32
      %acc2 = uop.define_acc 0 : i32
      uop.range %k = 0 to 8 {
        %xp = uop.gep inbounds %x[%k] : !uop.buffer<8xi32>
        %xv = uop.load %xp : i32
        uop.mulacc %acc, %xv, %xv : !uop.acc<i32>, i32
        uop.mulacc %acc1, %xv, %xv : !uop.acc<i32>, i32
        uop.mulacc %acc2, %xv, %xv : !uop.acc<i32>, i32
      }
      %s = uop.acc_get %acc : !uop.acc<i32>, i32
      %q = uop.gep inbounds %x[%m] : !uop.buffer<8xi32>
      %bx = uop.load %q : i32
      %t = uop.add %s, %bx : i32
      %s1 = uop.acc_get %acc1 : !uop.acc<i32>, i32
      %p = uop.gep inbounds %bias[%m] : !uop.buffer<4xi32>
      %b = uop.load %p : i32
      %t1 = uop.add %s1, %b : i32
      %s2 = uop.acc_get %acc2 : !uop.acc<i32>, i32
      %m1 = uop.add %m, %one : index
      %p2 = uop.gep inbounds %bias[%m1] : !uop.buffer<4xi32>
      %b2 = uop.load %p2 : i32
      %t2 = uop.add %s2, %b2 : i32
      %y = uop.gep inbounds %out[%m] : !uop.buffer<4xi32>
      %u = uop.add %t, %t1 : i32
      %v = uop.add %u, %t2 : i32
      uop.store %v, %y : i32
    }
    func.return
  }
}
