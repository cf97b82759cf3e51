// RUN: zant-opt %s --split-input-file -p fuse-loops | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'fuse-loops{elementwise=false}' | filecheck %s --check-prefix=NOEW
// RUN: zant-opt %s --split-input-file -p 'fuse-loops{epilogue=false}' | filecheck %s --check-prefix=NOEPI
// RUN: zant-opt %s --split-input-file -p 'fuse-loops{reduction=false}' | filecheck %s --check-prefix=NORED
// RUN: zant-opt %s --split-input-file -p fuse-loops,plan-arenas,verify-arena-plan | filecheck %s --check-prefix=PLAN

// Element-wise chain: s = a + b, r = relu(s), y = r * a becomes one nest; s and r disappear.

// CHECK-LABEL: func.func @chain()
// CHECK-NOT:     uop.define_local
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 3 {
// CHECK:             [[S:%.*]] = uop.add
// CHECK-NEXT:        [[Z:%.*]] = uop.const 0.000000e+00 : f32
// CHECK-NEXT:        [[R:%.*]] = uop.max [[S]], [[Z]] : f32
// CHECK-NEXT:        [[A:%.*]] = uop.gep %{{.*}}[[[I]], [[J]]]
// CHECK-NEXT:        [[AV:%.*]] = uop.load [[A]] : f32
// CHECK-NEXT:        [[M:%.*]] = uop.mul [[R]], [[AV]] : f32
// CHECK-NEXT:        [[P:%.*]] = uop.gep %{{.*}}[[[I]], [[J]]]
// CHECK-NEXT:        uop.store [[M]], [[P]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// Without element-wise fusion the three nests stay.
// NOEW-LABEL:  func.func @chain()
// NOEW-COUNT-3:  uop.range {{.*}} = 0 to 2

// PLAN-LABEL:  func.func @chain()
// PLAN-NEXT:     abi.arena "scratch" size 0 align 16 lower_bound 0
func.func @chain() {
  %b = uop.define_global "input" 1 "b" : !uop.buffer<6xf32>
  %a = uop.define_global "input" 0 "a" : !uop.buffer<6xf32>
  %s = uop.define_local "s" : !uop.buffer<6xf32>
  %av = uop.view %a : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
  %bv = uop.view %b : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
  %sv = uop.view %s : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
  uop.range %i = 0 to 2 {
    uop.range %j = 0 to 3 {
      %0 = uop.gep %av[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
      %1 = uop.load %0 : f32
      %2 = uop.gep %bv[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
      %3 = uop.load %2 : f32
      %4 = uop.add %1, %3 : f32
      %5 = uop.gep %sv[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
      uop.store %4, %5 : f32
    }
  }
  %r = uop.define_local "r" : !uop.buffer<6xf32>
  %rv = uop.view %r : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
  uop.range %i = 0 to 2 {
    uop.range %j = 0 to 3 {
      %0 = uop.gep %sv[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
      %1 = uop.load %0 : f32
      %2 = uop.const 0.0 : f32
      %3 = uop.max %1, %2 : f32
      %4 = uop.gep %rv[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
      uop.store %3, %4 : f32
    }
  }
  %y = uop.define_global "output" 0 "y" : !uop.buffer<6xf32>
  %yv = uop.view %y : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
  uop.range %i = 0 to 2 {
    uop.range %j = 0 to 3 {
      %0 = uop.gep %rv[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
      %1 = uop.load %0 : f32
      %2 = uop.gep %av[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
      %3 = uop.load %2 : f32
      %4 = uop.mul %1, %3 : f32
      %5 = uop.gep %yv[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
      uop.store %4, %5 : f32
    }
  }
  func.return
}

// -----

// Epilogue: a Gemm-like kernel (blocked over its rows: a loop step 2 and a `+ 1` row) stores
// each element after its accumulation; Relu with a broadcast bias (a stride-0 read of another
// buffer is fine) runs at each store, with the store's indices. The 1x… view of c in the
// consumer matches the producer's 2-D view once the extent-1 dimension is dropped.

// CHECK-LABEL: func.func @epilogue()
// CHECK-NOT:     uop.define_local
// CHECK:         uop.range [[I:%.*]] = 0 to 4 step 2 {
// CHECK:           [[I1:%.*]] = uop.add [[I]], %{{.*}} : index
// CHECK:           uop.range [[J:%.*]] = 0 to 3 {
// CHECK:             [[V0:%.*]] = uop.acc_get
// CHECK-NEXT:        [[Z0:%.*]] = uop.const 0 : index
// CHECK-NEXT:        [[B0:%.*]] = uop.gep %{{.*}}[[[Z0]], [[I]], [[J]]] : !uop.view<1x4x3xf32, strides [0, 0, 1], offset 0>
// CHECK-NEXT:        [[BV0:%.*]] = uop.load [[B0]] : f32
// CHECK-NEXT:        [[S0:%.*]] = uop.add [[V0]], [[BV0]] : f32
// CHECK-NEXT:        [[C0:%.*]] = uop.const 0.000000e+00 : f32
// CHECK-NEXT:        [[R0:%.*]] = uop.max [[S0]], [[C0]] : f32
// CHECK-NEXT:        [[Y0:%.*]] = uop.gep %{{.*}}[[[Z0]], [[I]], [[J]]] : !uop.view<1x4x3xf32, strides [12, 3, 1], offset 0>
// CHECK-NEXT:        uop.store [[R0]], [[Y0]] : f32
// CHECK:             [[V1:%.*]] = uop.acc_get
// CHECK:             uop.gep %{{.*}}[%{{.*}}, [[I1]], [[J]]] : !uop.view<1x4x3xf32, strides [0, 0, 1], offset 0>
// CHECK:             uop.store
// CHECK-NOT:     uop.range

// NOEPI-LABEL: func.func @epilogue()
// NOEPI:         uop.define_local "c"
// NOEPI:         uop.range {{.*}} = 0 to 1

// PLAN-LABEL:  func.func @epilogue()
// PLAN-NEXT:     abi.arena "scratch" size 0 align 16 lower_bound 0
func.func @epilogue() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<8xf32>
  %bias = uop.define_global "input" 1 "bias" : !uop.buffer<3xf32>
  %c = uop.define_local "c" : !uop.buffer<12xf32>
  %xv = uop.view %x : !uop.buffer<8xf32> -> !uop.view<4x2xf32, strides [2, 1], offset 0>
  %cv = uop.view %c : !uop.buffer<12xf32> -> !uop.view<4x3xf32, strides [3, 1], offset 0>
  uop.range %i = 0 to 4 step 2 {
    %one = uop.const 1 : index
    %i1 = uop.add %i, %one : index
    uop.range %j = 0 to 3 {
      %acc0 = uop.define_acc 0.0 : f32
      %acc1 = uop.define_acc 0.0 : f32
      uop.range %k = 0 to 2 {
        %0 = uop.gep %xv[%i, %k] : !uop.view<4x2xf32, strides [2, 1], offset 0>
        %1 = uop.load %0 : f32
        uop.mulacc %acc0, %1, %1 : !uop.acc<f32>, f32
        %2 = uop.gep %xv[%i1, %k] : !uop.view<4x2xf32, strides [2, 1], offset 0>
        %3 = uop.load %2 : f32
        uop.mulacc %acc1, %3, %3 : !uop.acc<f32>, f32
      }
      %4 = uop.acc_get %acc0 : !uop.acc<f32>, f32
      %5 = uop.gep %cv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %4, %5 : f32
      %6 = uop.acc_get %acc1 : !uop.acc<f32>, f32
      %7 = uop.gep %cv[%i1, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %6, %7 : f32
    }
  }
  %y = uop.define_global "output" 0 "y" : !uop.buffer<12xf32>
  %c3 = uop.view %c : !uop.buffer<12xf32> -> !uop.view<1x4x3xf32, strides [0, 3, 1], offset 0>
  %bv = uop.view %bias : !uop.buffer<3xf32> -> !uop.view<1x4x3xf32, strides [0, 0, 1], offset 0>
  %yv = uop.view %y : !uop.buffer<12xf32> -> !uop.view<1x4x3xf32, strides [12, 3, 1], offset 0>
  uop.range %n = 0 to 1 {
    uop.range %i = 0 to 4 {
      uop.range %j = 0 to 3 {
        %0 = uop.gep %c3[%n, %i, %j] : !uop.view<1x4x3xf32, strides [0, 3, 1], offset 0>
        %1 = uop.load %0 : f32
        %2 = uop.gep %bv[%n, %i, %j] : !uop.view<1x4x3xf32, strides [0, 0, 1], offset 0>
        %3 = uop.load %2 : f32
        %4 = uop.add %1, %3 : f32
        %5 = uop.const 0.0 : f32
        %6 = uop.max %4, %5 : f32
        %7 = uop.gep %yv[%n, %i, %j] : !uop.view<1x4x3xf32, strides [12, 3, 1], offset 0>
        uop.store %6, %7 : f32
      }
    }
  }
  func.return
}

// -----

// Reduction: Exp is computed at the ReduceSum's load, which reads each element once.

// CHECK-LABEL: func.func @reduction()
// CHECK-NOT:     uop.define_local
// CHECK:         uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      [[ACC:%.*]] = uop.define_acc
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 3 {
// CHECK-NEXT:        [[P:%.*]] = uop.gep %{{.*}}[[[I]], [[J]]]
// CHECK-NEXT:        [[X:%.*]] = uop.load [[P]] : f32
// CHECK-NEXT:        [[E:%.*]] = uop.exp [[X]] : f32
// CHECK-NEXT:        [[OLD:%.*]] = uop.acc_get [[ACC]]
// CHECK-NEXT:        [[NEW:%.*]] = uop.add [[OLD]], [[E]] : f32
// CHECK-NEXT:        uop.acc_set [[ACC]], [[NEW]]
// CHECK-NOT:     uop.range

// NORED-LABEL: func.func @reduction()
// NORED:         uop.define_local "e"
// NORED-COUNT-2: uop.range {{.*}} = 0 to 2
func.func @reduction() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<6xf32>
  %e = uop.define_local "e" : !uop.buffer<6xf32>
  %xv = uop.view %x : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
  %ev = uop.view %e : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
  uop.range %i = 0 to 2 {
    uop.range %j = 0 to 3 {
      %0 = uop.gep %xv[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
      %1 = uop.load %0 : f32
      %2 = uop.exp %1 : f32
      %3 = uop.gep %ev[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
      uop.store %2, %3 : f32
    }
  }
  %y = uop.define_global "output" 0 "y" : !uop.buffer<2xf32>
  uop.range %i = 0 to 2 {
    %acc = uop.define_acc 0.0 : f32
    uop.range %j = 0 to 3 {
      %0 = uop.gep %ev[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
      %1 = uop.load %0 : f32
      %2 = uop.acc_get %acc : !uop.acc<f32>, f32
      %3 = uop.add %2, %1 : f32
      uop.acc_set %acc, %3 : !uop.acc<f32>, f32
    }
    %4 = uop.acc_get %acc : !uop.acc<f32>, f32
    %5 = uop.gep %y[%i] : !uop.buffer<2xf32>
    uop.store %4, %5 : f32
  }
  func.return
}

// -----

// B has a second reader: the consumer is fused but the producer still stores B for it.

// CHECK-LABEL: func.func @kept()
// CHECK:         uop.define_local "b"
// CHECK:         uop.range
// CHECK:           uop.neg
// CHECK-NEXT:      uop.gep
// CHECK-NEXT:      uop.store
// CHECK-NEXT:      uop.exp
// CHECK-NEXT:      uop.gep %y
// CHECK-NEXT:      uop.store
// CHECK:         uop.range
// CHECK:           uop.gep %rev
// CHECK:           uop.gep %z
// CHECK-NOT:     uop.range
func.func @kept() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<4xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
  %z = uop.define_global "output" 1 "z" : !uop.buffer<4xf32>
  %b = uop.define_local "b" : !uop.buffer<4xf32>
  uop.range %i = 0 to 4 {
    %0 = uop.gep %x[%i] : !uop.buffer<4xf32>
    %1 = uop.load %0 : f32
    %2 = uop.neg %1 : f32
    %3 = uop.gep %b[%i] : !uop.buffer<4xf32>
    uop.store %2, %3 : f32
  }
  uop.range %i = 0 to 4 {
    %0 = uop.gep %b[%i] : !uop.buffer<4xf32>
    %1 = uop.load %0 : f32
    %2 = uop.exp %1 : f32
    %3 = uop.gep %y[%i] : !uop.buffer<4xf32>
    uop.store %2, %3 : f32
  }
  %rev = uop.view %b : !uop.buffer<4xf32> -> !uop.view<4xf32, strides [-1], offset 3>
  uop.range %i = 0 to 4 {
    %0 = uop.gep %rev[%i] : !uop.view<4xf32, strides [-1], offset 3>
    %1 = uop.load %0 : f32
    %2 = uop.gep %z[%i] : !uop.buffer<4xf32>
    uop.store %1, %2 : f32
  }
  func.return
}

// -----

// No fusion: the consumer reads B through a broadcast (B[i] for every j).

// CHECK-LABEL: func.func @broadcast_read()
// CHECK:         uop.define_local "b"
// CHECK-COUNT-2: uop.range {{.*}} = 0 to
func.func @broadcast_read() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<2xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<6xf32>
  %b = uop.define_local "b" : !uop.buffer<2xf32>
  uop.range %i = 0 to 2 {
    %0 = uop.gep %x[%i] : !uop.buffer<2xf32>
    %1 = uop.load %0 : f32
    %2 = uop.neg %1 : f32
    %3 = uop.gep %b[%i] : !uop.buffer<2xf32>
    uop.store %2, %3 : f32
  }
  %bv = uop.view %b : !uop.buffer<2xf32> -> !uop.view<2x3xf32, strides [1, 0], offset 0>
  %yv = uop.view %y : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
  uop.range %i = 0 to 2 {
    uop.range %j = 0 to 3 {
      %0 = uop.gep %bv[%i, %j] : !uop.view<2x3xf32, strides [1, 0], offset 0>
      %1 = uop.load %0 : f32
      %2 = uop.gep %yv[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
      uop.store %1, %2 : f32
    }
  }
  func.return
}

// -----

// No fusion: the consumer reads B transposed.

// CHECK-LABEL: func.func @transposed_read()
// CHECK:         uop.define_local "b"
// CHECK-COUNT-2: uop.range {{.*}} = 0 to
func.func @transposed_read() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<6xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<6xf32>
  %b = uop.define_local "b" : !uop.buffer<6xf32>
  uop.range %i = 0 to 6 {
    %0 = uop.gep %x[%i] : !uop.buffer<6xf32>
    %1 = uop.load %0 : f32
    %2 = uop.neg %1 : f32
    %3 = uop.gep %b[%i] : !uop.buffer<6xf32>
    uop.store %2, %3 : f32
  }
  %bt = uop.view %b : !uop.buffer<6xf32> -> !uop.view<3x2xf32, strides [1, 3], offset 0>
  %yv = uop.view %y : !uop.buffer<6xf32> -> !uop.view<3x2xf32, strides [2, 1], offset 0>
  uop.range %i = 0 to 3 {
    uop.range %j = 0 to 2 {
      %0 = uop.gep %bt[%i, %j] : !uop.view<3x2xf32, strides [1, 3], offset 0>
      %1 = uop.load %0 : f32
      %2 = uop.gep %yv[%i, %j] : !uop.view<3x2xf32, strides [2, 1], offset 0>
      uop.store %1, %2 : f32
    }
  }
  func.return
}

// -----

// No fusion: the consumer reads B twice, at its own element and at the mirrored one.

// CHECK-LABEL: func.func @read_twice()
// CHECK:         uop.define_local "b"
// CHECK-COUNT-2: uop.range {{.*}} = 0 to
func.func @read_twice() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<4xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
  %b = uop.define_local "b" : !uop.buffer<4xf32>
  uop.range %i = 0 to 4 {
    %0 = uop.gep %x[%i] : !uop.buffer<4xf32>
    %1 = uop.load %0 : f32
    %2 = uop.neg %1 : f32
    %3 = uop.gep %b[%i] : !uop.buffer<4xf32>
    uop.store %2, %3 : f32
  }
  %rev = uop.view %b : !uop.buffer<4xf32> -> !uop.view<4xf32, strides [-1], offset 3>
  uop.range %i = 0 to 4 {
    %0 = uop.gep %b[%i] : !uop.buffer<4xf32>
    %1 = uop.load %0 : f32
    %2 = uop.gep %rev[%i] : !uop.view<4xf32, strides [-1], offset 3>
    %3 = uop.load %2 : f32
    %4 = uop.add %1, %3 : f32
    %5 = uop.gep %y[%i] : !uop.buffer<4xf32>
    uop.store %4, %5 : f32
  }
  func.return
}

// -----

// No fusion: the producer reads B (a running sum over B's previous element).

// CHECK-LABEL: func.func @producer_reads_b()
// CHECK:         uop.define_local "b"
// CHECK-COUNT-2: uop.range {{.*}} = {{[01]}} to 4
func.func @producer_reads_b() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<4xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
  %b = uop.define_local "b" : !uop.buffer<4xf32>
  uop.range %i = 1 to 4 {
    %one = uop.const 1 : index
    %prev = uop.sub %i, %one : index
    %0 = uop.gep %b[%prev] : !uop.buffer<4xf32>
    %1 = uop.load %0 : f32
    %2 = uop.gep %x[%i] : !uop.buffer<4xf32>
    %3 = uop.load %2 : f32
    %4 = uop.add %1, %3 : f32
    %5 = uop.gep %b[%i] : !uop.buffer<4xf32>
    uop.store %4, %5 : f32
  }
  uop.range %i = 0 to 4 {
    %0 = uop.gep %b[%i] : !uop.buffer<4xf32>
    %1 = uop.load %0 : f32
    %2 = uop.exp %1 : f32
    %3 = uop.gep %y[%i] : !uop.buffer<4xf32>
    uop.store %2, %3 : f32
  }
  func.return
}

// -----

// No fusion: the consumer divides by a sum computed between producer and consumer, so it
// may not move ahead of that sum.

// CHECK-LABEL: func.func @state_between()
// CHECK:         uop.define_local "b"
// CHECK-COUNT-3: uop.range {{.*}} = 0 to 4
func.func @state_between() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<4xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
  %b = uop.define_local "b" : !uop.buffer<4xf32>
  uop.range %i = 0 to 4 {
    %0 = uop.gep %x[%i] : !uop.buffer<4xf32>
    %1 = uop.load %0 : f32
    %2 = uop.neg %1 : f32
    %3 = uop.gep %b[%i] : !uop.buffer<4xf32>
    uop.store %2, %3 : f32
  }
  %acc = uop.define_acc 0.0 : f32
  uop.range %i = 0 to 4 {
    %0 = uop.gep %b[%i] : !uop.buffer<4xf32>
    %1 = uop.load %0 : f32
    %2 = uop.acc_get %acc : !uop.acc<f32>, f32
    %3 = uop.add %2, %1 : f32
    uop.acc_set %acc, %3 : !uop.acc<f32>, f32
  }
  %sum = uop.acc_get %acc : !uop.acc<f32>, f32
  uop.range %i = 0 to 4 {
    %0 = uop.gep %b[%i] : !uop.buffer<4xf32>
    %1 = uop.load %0 : f32
    %2 = uop.div %1, %sum : f32
    %3 = uop.gep %y[%i] : !uop.buffer<4xf32>
    uop.store %2, %3 : f32
  }
  func.return
}

// -----

// A abi.check between producer and consumer: the consumer writes an output, which must stay
// untouched when the check fails, so it is not moved into the producer ahead of the check.

// CHECK-LABEL: func.func @check_between()
// CHECK:         uop.range
// CHECK:         abi.check
// CHECK-NEXT:    uop.range
func.func @check_between() {
  %a = uop.define_global "input" 0 "a" : !uop.buffer<4xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
  %s = uop.define_local "s" : !uop.buffer<4xf32>
  uop.range %i = 0 to 4 {
    %0 = uop.gep %a[%i] : !uop.buffer<4xf32>
    %1 = uop.load %0 : f32
    %2 = uop.gep %s[%i] : !uop.buffer<4xf32>
    uop.store %1, %2 : f32
  }
  %ok = uop.const 1 : i1
  abi.check %ok, 5
  uop.range %i = 0 to 4 {
    %0 = uop.gep %s[%i] : !uop.buffer<4xf32>
    %1 = uop.load %0 : f32
    %2 = uop.add %1, %1 : f32
    %3 = uop.gep %y[%i] : !uop.buffer<4xf32>
    uop.store %2, %3 : f32
  }
  func.return
}

// -----

// Siblings: the producer's epilogue stores c and s = -c (as a Conv's stores x and sigmoid(x)
// once Sigmoid fused into it), and y = c · s reads both at the identity index. Each store of c
// has a store of s at the same indices beside it: the multiply runs after the later of the
// two, on the stored values, and c and s, read by nothing else, disappear.

// CHECK-LABEL: func.func @siblings()
// CHECK-NOT:     uop.define_local
// CHECK:         uop.range [[I:%.*]] = 0 to 4 step 2 {
// CHECK:           uop.range [[J:%.*]] = 0 to 3 {
// CHECK:             [[V0:%.*]] = uop.acc_get
// CHECK-NEXT:        [[N0:%.*]] = uop.neg [[V0]] : f32
// CHECK-NEXT:        [[M0:%.*]] = uop.mul [[V0]], [[N0]] : f32
// CHECK-NEXT:        [[Y0:%.*]] = uop.gep %{{.*}}[[[I]], [[J]]] : !uop.view<4x3xf32, strides [3, 1], offset 0>
// CHECK-NEXT:        uop.store [[M0]], [[Y0]] : f32
// CHECK:             [[V1:%.*]] = uop.acc_get
// CHECK-NEXT:        [[N1:%.*]] = uop.neg [[V1]] : f32
// CHECK:             uop.mul [[V1]], [[N1]] : f32
// CHECK-NOT:     uop.range

// Stores paired by element, not by position: with s's rows swapped, s[i + 1, j] (= -c[i, j])
// is stored second and s[i, j] (= -c[i + 1, j]) last, so y[i + 1, j] is computed after the
// third store and y[i, j] after the last, each from the two values stored at its element.

// CHECK-LABEL: func.func @swapped_siblings()
// CHECK-NOT:     uop.define_local
// CHECK:             [[V0:%.*]] = uop.acc_get %acc0
// CHECK-NEXT:        [[N0:%.*]] = uop.neg [[V0]] : f32
// CHECK-NEXT:        [[V1:%.*]] = uop.acc_get %acc1
// CHECK-NEXT:        [[M1:%.*]] = uop.mul [[V1]], [[N0]] : f32
// CHECK-NEXT:        [[Y1:%.*]] = uop.gep %yv[%i1, %j]
// CHECK-NEXT:        uop.store [[M1]], [[Y1]] : f32
// CHECK-NEXT:        [[N1:%.*]] = uop.neg [[V1]] : f32
// CHECK-NEXT:        [[M0:%.*]] = uop.mul [[V0]], [[N1]] : f32
// CHECK-NEXT:        [[Y0:%.*]] = uop.gep %yv[%i, %j]
// CHECK-NEXT:        uop.store [[M0]], [[Y0]] : f32
// CHECK-NOT:     uop.range

// A sibling the producer does not store at every element the consumer reads (s[i, j] twice,
// s[i + 1, j] never): no fusion.

// CHECK-LABEL: func.func @partial_sibling()
// CHECK:         uop.define_local "c"
// CHECK:         uop.define_local "s"
// CHECK:         uop.range {{%.*}} = 0 to 4 step 2
// CHECK:         uop.range {{%.*}} = 0 to 4 {
func.func @siblings() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<8xf32>
  %c = uop.define_local "c" : !uop.buffer<12xf32>
  %s = uop.define_local "s" : !uop.buffer<12xf32>
  %xv = uop.view %x : !uop.buffer<8xf32> -> !uop.view<4x2xf32, strides [2, 1], offset 0>
  %cv = uop.view %c : !uop.buffer<12xf32> -> !uop.view<4x3xf32, strides [3, 1], offset 0>
  %sv = uop.view %s : !uop.buffer<12xf32> -> !uop.view<4x3xf32, strides [3, 1], offset 0>
  uop.range %i = 0 to 4 step 2 {
    %one = uop.const 1 : index
    %i1 = uop.add %i, %one : index
    uop.range %j = 0 to 3 {
      %acc0 = uop.define_acc 0.0 : f32
      %acc1 = uop.define_acc 0.0 : f32
      uop.range %k = 0 to 2 {
        %0 = uop.gep %xv[%i, %k] : !uop.view<4x2xf32, strides [2, 1], offset 0>
        %1 = uop.load %0 : f32
        uop.mulacc %acc0, %1, %1 : !uop.acc<f32>, f32
        %2 = uop.gep %xv[%i1, %k] : !uop.view<4x2xf32, strides [2, 1], offset 0>
        %3 = uop.load %2 : f32
        uop.mulacc %acc1, %3, %3 : !uop.acc<f32>, f32
      }
      %4 = uop.acc_get %acc0 : !uop.acc<f32>, f32
      %5 = uop.gep %cv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %4, %5 : f32
      %6 = uop.neg %4 : f32
      %7 = uop.gep %sv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %6, %7 : f32
      %8 = uop.acc_get %acc1 : !uop.acc<f32>, f32
      %9 = uop.gep %cv[%i1, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %8, %9 : f32
      %10 = uop.neg %8 : f32
      %11 = uop.gep %sv[%i1, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %10, %11 : f32
    }
  }
  %y = uop.define_global "output" 0 "y" : !uop.buffer<12xf32>
  %yv = uop.view %y : !uop.buffer<12xf32> -> !uop.view<4x3xf32, strides [3, 1], offset 0>
  uop.range %i = 0 to 4 {
    uop.range %j = 0 to 3 {
      %0 = uop.gep %cv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      %1 = uop.load %0 : f32
      %2 = uop.gep %sv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      %3 = uop.load %2 : f32
      %4 = uop.mul %1, %3 : f32
      %5 = uop.gep %yv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %4, %5 : f32
    }
  }
  func.return
}
func.func @swapped_siblings() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<8xf32>
  %c = uop.define_local "c" : !uop.buffer<12xf32>
  %s = uop.define_local "s" : !uop.buffer<12xf32>
  %xv = uop.view %x : !uop.buffer<8xf32> -> !uop.view<4x2xf32, strides [2, 1], offset 0>
  %cv = uop.view %c : !uop.buffer<12xf32> -> !uop.view<4x3xf32, strides [3, 1], offset 0>
  %sv = uop.view %s : !uop.buffer<12xf32> -> !uop.view<4x3xf32, strides [3, 1], offset 0>
  uop.range %i = 0 to 4 step 2 {
    %one = uop.const 1 : index
    %i1 = uop.add %i, %one : index
    uop.range %j = 0 to 3 {
      %acc0 = uop.define_acc 0.0 : f32
      %acc1 = uop.define_acc 0.0 : f32
      uop.range %k = 0 to 2 {
        %0 = uop.gep %xv[%i, %k] : !uop.view<4x2xf32, strides [2, 1], offset 0>
        %1 = uop.load %0 : f32
        uop.mulacc %acc0, %1, %1 : !uop.acc<f32>, f32
        %2 = uop.gep %xv[%i1, %k] : !uop.view<4x2xf32, strides [2, 1], offset 0>
        %3 = uop.load %2 : f32
        uop.mulacc %acc1, %3, %3 : !uop.acc<f32>, f32
      }
      %4 = uop.acc_get %acc0 : !uop.acc<f32>, f32
      %5 = uop.gep %cv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %4, %5 : f32
      %6 = uop.neg %4 : f32
      %7 = uop.gep %sv[%i1, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %6, %7 : f32
      %8 = uop.acc_get %acc1 : !uop.acc<f32>, f32
      %9 = uop.gep %cv[%i1, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %8, %9 : f32
      %10 = uop.neg %8 : f32
      %11 = uop.gep %sv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %10, %11 : f32
    }
  }
  %y = uop.define_global "output" 0 "y" : !uop.buffer<12xf32>
  %yv = uop.view %y : !uop.buffer<12xf32> -> !uop.view<4x3xf32, strides [3, 1], offset 0>
  uop.range %i = 0 to 4 {
    uop.range %j = 0 to 3 {
      %0 = uop.gep %cv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      %1 = uop.load %0 : f32
      %2 = uop.gep %sv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      %3 = uop.load %2 : f32
      %4 = uop.mul %1, %3 : f32
      %5 = uop.gep %yv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %4, %5 : f32
    }
  }
  func.return
}
func.func @partial_sibling() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<8xf32>
  %c = uop.define_local "c" : !uop.buffer<12xf32>
  %s = uop.define_local "s" : !uop.buffer<12xf32>
  %xv = uop.view %x : !uop.buffer<8xf32> -> !uop.view<4x2xf32, strides [2, 1], offset 0>
  %cv = uop.view %c : !uop.buffer<12xf32> -> !uop.view<4x3xf32, strides [3, 1], offset 0>
  %sv = uop.view %s : !uop.buffer<12xf32> -> !uop.view<4x3xf32, strides [3, 1], offset 0>
  uop.range %i = 0 to 4 step 2 {
    %one = uop.const 1 : index
    %i1 = uop.add %i, %one : index
    uop.range %j = 0 to 3 {
      %acc0 = uop.define_acc 0.0 : f32
      %acc1 = uop.define_acc 0.0 : f32
      uop.range %k = 0 to 2 {
        %0 = uop.gep %xv[%i, %k] : !uop.view<4x2xf32, strides [2, 1], offset 0>
        %1 = uop.load %0 : f32
        uop.mulacc %acc0, %1, %1 : !uop.acc<f32>, f32
        %2 = uop.gep %xv[%i1, %k] : !uop.view<4x2xf32, strides [2, 1], offset 0>
        %3 = uop.load %2 : f32
        uop.mulacc %acc1, %3, %3 : !uop.acc<f32>, f32
      }
      %4 = uop.acc_get %acc0 : !uop.acc<f32>, f32
      %5 = uop.gep %cv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %4, %5 : f32
      %6 = uop.neg %4 : f32
      %7 = uop.gep %sv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %6, %7 : f32
      %8 = uop.acc_get %acc1 : !uop.acc<f32>, f32
      %9 = uop.gep %cv[%i1, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %8, %9 : f32
      %10 = uop.neg %8 : f32
      %11 = uop.gep %sv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %10, %11 : f32
    }
  }
  %y = uop.define_global "output" 0 "y" : !uop.buffer<12xf32>
  %yv = uop.view %y : !uop.buffer<12xf32> -> !uop.view<4x3xf32, strides [3, 1], offset 0>
  uop.range %i = 0 to 4 {
    uop.range %j = 0 to 3 {
      %0 = uop.gep %cv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      %1 = uop.load %0 : f32
      %2 = uop.gep %sv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      %3 = uop.load %2 : f32
      %4 = uop.mul %1, %3 : f32
      %5 = uop.gep %yv[%i, %j] : !uop.view<4x3xf32, strides [3, 1], offset 0>
      uop.store %4, %5 : f32
    }
  }
  func.return
}
