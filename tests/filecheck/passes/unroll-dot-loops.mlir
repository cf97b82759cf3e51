// RUN: zant-opt %s -p unroll-dot-loops | filecheck %s
// RUN: zant-opt %s -p "unroll-dot-loops{max-factor=2}" | filecheck %s --check-prefix=TWO
// RUN: zant-opt %s -p "unroll-dot-loops{pair-max-factor=8}" | filecheck %s --check-prefix=PAIR8

// A 64-long row (16 steps of 4) unrolled by 4, keeping 4 iterations: copy j reads at %k + 4j and
// accumulates into the same cell after the copy before it.
// CHECK-LABEL: func.func @row()
// CHECK:         uop.range %k = 0 to 64 step 16 {
// CHECK-NEXT:      %xp = uop.gep inbounds %x[%k] : !uop.buffer<64xi8>
// CHECK-NEXT:      %w = arm_dsp.load_word %xp : !uop.ptr<i8>
// CHECK-NEXT:      %s = uop.acc_get %acc : !uop.acc<i32>, i32
// CHECK-NEXT:      %r = arm_dsp.smlad_bytes %e, %o, %w, %s : i32
// CHECK-NEXT:      uop.acc_set %acc, %r : !uop.acc<i32>, i32
// CHECK-NEXT:      %[[C1:.*]] = uop.const 4 : index
// CHECK-NEXT:      %[[K1:.*]] = uop.add %k, %[[C1]] : index
// CHECK-NEXT:      %[[P1:.*]] = uop.gep inbounds %x[%[[K1]]] : !uop.buffer<64xi8>
// CHECK-NEXT:      %[[W1:.*]] = arm_dsp.load_word %[[P1]] : !uop.ptr<i8>
// CHECK-NEXT:      %[[S1:.*]] = uop.acc_get %acc : !uop.acc<i32>, i32
// CHECK-NEXT:      %[[R1:.*]] = arm_dsp.smlad_bytes %e, %o, %[[W1]], %[[S1]] : i32
// CHECK-NEXT:      uop.acc_set %acc, %[[R1]] : !uop.acc<i32>, i32
// CHECK-NEXT:      %[[C2:.*]] = uop.const 8 : index
// CHECK:           %[[C3:.*]] = uop.const 12 : index
// CHECK:           uop.acc_set %acc
// CHECK-NEXT:    }
// TWO-LABEL: func.func @row()
// TWO:         uop.range %k = 0 to 64 step 8 {

// A 640-long row: 160 steps, by 8 (20 iterations).
// CHECK-LABEL: func.func @long_row()
// CHECK:         uop.range %k = 0 to 640 step 32 {
// CHECK-COUNT-7:   uop.add %k

// A 640-long row of 2 x 2 tiles (smlad_bytes_pair: twice the code of a step) by at most
// pair-max-factor = 4 (40 iterations), so that the nest around it stays within a flash
// accelerator's instruction cache; by 8 when allowed.
// CHECK-LABEL: func.func @pair_row()
// CHECK:         uop.range %k = 0 to 640 step 16 {
// CHECK-COUNT-3:   uop.add %k
// CHECK-NOT:       uop.add %k
// CHECK:         }
// PAIR8-LABEL: func.func @pair_row()
// PAIR8:         uop.range %k = 0 to 640 step 32 {

// A 48-long row of 2 x 2 tiles (12 steps: a 3x3 window's run of 3 taps x 16 channels) by 4,
// keeping 3 iterations.
// CHECK-LABEL: func.func @pair_run()
// CHECK:         uop.range %k = 0 to 48 step 16 {
// CHECK-COUNT-3:   uop.add %k
// CHECK-NOT:       uop.add %k
// CHECK:         }

// Left alone: 8 steps keep at least 3 iterations only by 2; 3 steps do not divide; a loop
// without SMLAD; a loop around another loop; a loop of whole outputs, its sums SSA values
// stored each iteration (a depthwise Conv's channels over a straight-line row), no
// accumulator of the code around it.
// CHECK-LABEL: func.func @left_alone()
// CHECK:         uop.range %k = 0 to 32 step 8 {
// CHECK:         uop.range %k3 = 0 to 12 step 4 {
// CHECK:         uop.range %i = 0 to 64 step 4 {
// CHECK:         uop.range %t = 0 to 64 step 4 {
// CHECK-NEXT:      uop.range %u = 0 to 1 {
// CHECK:         uop.range %c = 0 to 64 {
// CHECK-NOT:       uop.add %c
func.func @row() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<64xi8>
  %e = uop.const 1 : i32
  %o = uop.const 2 : i32
  %acc = uop.define_acc 0 : i32
  uop.range %k = 0 to 64 step 4 {
    %xp = uop.gep inbounds %x[%k] : !uop.buffer<64xi8>
    %w = arm_dsp.load_word %xp : !uop.ptr<i8>
    %s = uop.acc_get %acc : !uop.acc<i32>, i32
    %r = arm_dsp.smlad_bytes %e, %o, %w, %s : i32
    uop.acc_set %acc, %r : !uop.acc<i32>, i32
  }
  func.return
}

func.func @long_row() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<640xi8>
  %e = uop.const 1 : i32
  %acc = uop.define_acc 0 : i32
  uop.range %k = 0 to 640 step 4 {
    %xp = uop.gep inbounds %x[%k] : !uop.buffer<640xi8>
    %w = arm_dsp.load_word %xp : !uop.ptr<i8>
    %s = uop.acc_get %acc : !uop.acc<i32>, i32
    %r = arm_dsp.smlad %e, %w, %s : i32
    uop.acc_set %acc, %r : !uop.acc<i32>, i32
  }
  func.return
}

func.func @pair_row() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<640xi8>
  %e = uop.const 1 : i32
  %o = uop.const 2 : i32
  %a0 = uop.define_acc 0 : i32
  %a1 = uop.define_acc 0 : i32
  uop.range %k = 0 to 640 step 4 {
    %xp = uop.gep inbounds %x[%k] : !uop.buffer<640xi8>
    %w = arm_dsp.load_word %xp : !uop.ptr<i8>
    %s0 = uop.acc_get %a0 : !uop.acc<i32>, i32
    %s1 = uop.acc_get %a1 : !uop.acc<i32>, i32
    %r0, %r1 = arm_dsp.smlad_bytes_pair %e, %o, %o, %e, %w, %s0, %s1 : i32
    uop.acc_set %a0, %r0 : !uop.acc<i32>, i32
    uop.acc_set %a1, %r1 : !uop.acc<i32>, i32
  }
  func.return
}

func.func @pair_run() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<48xi8>
  %e = uop.const 1 : i32
  %o = uop.const 2 : i32
  %a0 = uop.define_acc 0 : i32
  %a1 = uop.define_acc 0 : i32
  uop.range %k = 0 to 48 step 4 {
    %xp = uop.gep inbounds %x[%k] : !uop.buffer<48xi8>
    %w = arm_dsp.load_word %xp : !uop.ptr<i8>
    %s0 = uop.acc_get %a0 : !uop.acc<i32>, i32
    %s1 = uop.acc_get %a1 : !uop.acc<i32>, i32
    %r0, %r1 = arm_dsp.smlad_bytes_pair %e, %o, %o, %e, %w, %s0, %s1 : i32
    uop.acc_set %a0, %r0 : !uop.acc<i32>, i32
    uop.acc_set %a1, %r1 : !uop.acc<i32>, i32
  }
  func.return
}

func.func @left_alone() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<64xi8>
  %e = uop.const 1 : i32
  %acc = uop.define_acc 0 : i32
  uop.range %k = 0 to 32 step 4 {
    %xp = uop.gep inbounds %x[%k] : !uop.buffer<64xi8>
    %w = arm_dsp.load_word %xp : !uop.ptr<i8>
    %s = uop.acc_get %acc : !uop.acc<i32>, i32
    %r = arm_dsp.smlad %e, %w, %s : i32
    uop.acc_set %acc, %r : !uop.acc<i32>, i32
  }
  uop.range %k3 = 0 to 12 step 4 {
    %xp = uop.gep inbounds %x[%k3] : !uop.buffer<64xi8>
    %w = arm_dsp.load_word %xp : !uop.ptr<i8>
    %s = uop.acc_get %acc : !uop.acc<i32>, i32
    %r = arm_dsp.smlad %e, %w, %s : i32
    uop.acc_set %acc, %r : !uop.acc<i32>, i32
  }
  uop.range %i = 0 to 64 step 4 {
    %xp = uop.gep inbounds %x[%i] : !uop.buffer<64xi8>
    %w = arm_dsp.load_word %xp : !uop.ptr<i8>
    %s = uop.acc_get %acc : !uop.acc<i32>, i32
    %r = uop.add %w, %s : i32
    uop.acc_set %acc, %r : !uop.acc<i32>, i32
  }
  uop.range %t = 0 to 64 step 4 {
    uop.range %u = 0 to 1 {
      %xp = uop.gep inbounds %x[%t] : !uop.buffer<64xi8>
      %w = arm_dsp.load_word %xp : !uop.ptr<i8>
      %s = uop.acc_get %acc : !uop.acc<i32>, i32
      %r = arm_dsp.smlad %e, %w, %s : i32
      uop.acc_set %acc, %r : !uop.acc<i32>, i32
    }
  }
  %y = uop.define_global "output" 0 "y" : !uop.buffer<64xi32>
  uop.range %c = 0 to 64 {
    %xp = uop.gep inbounds %x[%c] : !uop.buffer<64xi8>
    %w = arm_dsp.load_word %xp : !uop.ptr<i8>
    %r = arm_dsp.smlad %e, %w, %e : i32
    %yp = uop.gep inbounds %y[%c] : !uop.buffer<64xi32>
    uop.store %r, %yp : i32
  }
  func.return
}
