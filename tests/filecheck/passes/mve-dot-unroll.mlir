// RUN: zant-opt %s -p mve-dot | filecheck %s
// RUN: zant-opt %s -p 'mve-dot{max-unrolled-steps=2}' | filecheck %s --check-prefix=TWO

// A dot product over 64 contiguous int8 (4 steps of 16 lanes): written straight-line, each
// step's index a constant, the accumulator cell carrying the sum from one VMLAVA to the next.
// With max-unrolled-steps=2 the 4 steps stay a loop.

// CHECK-LABEL: func.func @dot()
// CHECK-NOT:     uop.range
// CHECK:         %[[K0:.*]] = uop.const 0 : index
// CHECK-NEXT:    %[[XP0:.*]] = uop.gep inbounds %x[%[[K0]]] : !uop.buffer<64xi8>
// CHECK-NEXT:    %[[WP0:.*]] = uop.gep inbounds %w[%[[K0]]] : !uop.buffer<64xi8>
// CHECK-NEXT:    %[[X0:.*]] = uop.vload %[[XP0]] : vector<16xi8>
// CHECK-NEXT:    %[[W0:.*]] = uop.vload %[[WP0]] : vector<16xi8>
// CHECK-NEXT:    %[[A0:.*]] = uop.acc_get %acc : !uop.acc<i32>, i32
// CHECK-NEXT:    %[[S0:.*]] = arm_mve.vmlava %[[A0]], %[[X0]], %[[W0]] : vector<16xi8>
// CHECK-NEXT:    uop.acc_set %acc, %[[S0]] : !uop.acc<i32>, i32
// CHECK-NEXT:    %[[K1:.*]] = uop.const 16 : index
// CHECK-NEXT:    %[[XP1:.*]] = uop.gep inbounds %x[%[[K1]]] : !uop.buffer<64xi8>
// CHECK:         arm_mve.vmlava
// CHECK:         %{{.*}} = uop.const 32 : index
// CHECK:         arm_mve.vmlava
// CHECK:         %{{.*}} = uop.const 48 : index
// CHECK:         arm_mve.vmlava
// CHECK-NOT:     uop.range
// CHECK:         func.return

// TWO-LABEL: func.func @dot()
// TWO:         uop.range %{{.*}} = 0 to 64 step 16 {
// TWO-COUNT-1:   arm_mve.vmlava
// TWO:         }
// TWO-NEXT:    func.return

builtin.module {
  func.func @dot() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<64xi8>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<64xi8>
    %acc = uop.define_acc 0 : i32
    uop.range %k = 0 to 64 {
      %xp = uop.gep inbounds %x[%k] : !uop.buffer<64xi8>
      %xv = uop.load %xp : i8
      %xc = uop.cast %xv : i8 to i32
      %wp = uop.gep inbounds %w[%k] : !uop.buffer<64xi8>
      %wv = uop.load %wp : i8
      %wc = uop.cast %wv : i8 to i32
      uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
    }
    func.return
  }
}
