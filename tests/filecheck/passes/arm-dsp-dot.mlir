// RUN: zant-opt %s -p arm-dsp-dot | filecheck %s
// RUN: zant-opt %s -p 'set-target{target=cortex-m4},arm-dsp-dot' | filecheck %s
// RUN: not zant-opt %s -p 'set-target{target=cortex-m0plus},arm-dsp-dot' 2>&1 | filecheck %s --check-prefix=NODSP
// NODSP: zant-opt: error: pass 'arm-dsp-dot' failed: the module's target #zant.target<"cortex-m0plus"> has no DSP extension (SXTB16, SMLAD); its pipeline does not run arm-dsp-dot

// An int8 dot product over k (contiguous in both operands, inbounds) becomes a loop of step 4:
// one word load and two sxtb16 per operand (each made just before its first smlad), two smlad
// per multiply-accumulate, through the single-iteration loop around the body; 10 = 8 + 2 leaves
// a remainder loop from 8.

// CHECK-LABEL: func.func @dot()
// CHECK:         %acc = uop.define_acc 0 : i32
// CHECK-NEXT:    %acc2 = uop.define_acc 0 : i32
// CHECK:         uop.range %[[K:.*]] = 0 to 8 step 4 {
// CHECK-NEXT:      %[[J:.*]] = uop.const 0 : index
// CHECK-NEXT:      %[[XI:.*]] = uop.add %[[K]], %[[J]] : index
// CHECK-NEXT:      %[[XP:.*]] = uop.gep inbounds %x[%[[XI]]] : !uop.buffer<10xi8>
// CHECK-NEXT:      %[[WI:.*]] = uop.add %{{.*}}, %[[K]] : index
// CHECK-NEXT:      %[[WP:.*]] = uop.gep inbounds %w[%[[WI]]] : !uop.buffer<20xi8>
// CHECK-NEXT:      %[[W2I:.*]] = uop.add %[[WI]], %{{.*}} : index
// CHECK-NEXT:      %[[W2P:.*]] = uop.gep inbounds %w[%[[W2I]]] : !uop.buffer<20xi8>
// CHECK-NEXT:      %[[XW:.*]] = arm_dsp.load_word %[[XP]] : !uop.ptr<i8>
// CHECK-NEXT:      %[[XE:.*]] = arm_dsp.sxtb16 %[[XW]] : i32
// CHECK-NEXT:      %[[XO:.*]] = arm_dsp.sxtb16 %[[XW]] ror 8 : i32
// CHECK-NEXT:      %[[WW:.*]] = arm_dsp.load_word %[[WP]] : !uop.ptr<i8>
// CHECK-NEXT:      %[[WE:.*]] = arm_dsp.sxtb16 %[[WW]] : i32
// CHECK-NEXT:      %[[WO:.*]] = arm_dsp.sxtb16 %[[WW]] ror 8 : i32
// CHECK-NEXT:      %[[A:.*]] = uop.acc_get %acc : !uop.acc<i32>, i32
// CHECK-NEXT:      %[[A1:.*]] = arm_dsp.smlad %[[XE]], %[[WE]], %[[A]] : i32
// CHECK-NEXT:      %[[A2:.*]] = arm_dsp.smlad %[[XO]], %[[WO]], %[[A1]] : i32
// CHECK-NEXT:      uop.acc_set %acc, %[[A2]] : !uop.acc<i32>, i32
// CHECK-NEXT:      %[[W2W:.*]] = arm_dsp.load_word %[[W2P]] : !uop.ptr<i8>
// CHECK-NEXT:      %[[W2E:.*]] = arm_dsp.sxtb16 %[[W2W]] : i32
// CHECK-NEXT:      %[[W2O:.*]] = arm_dsp.sxtb16 %[[W2W]] ror 8 : i32
// CHECK-NEXT:      %[[B:.*]] = uop.acc_get %acc2 : !uop.acc<i32>, i32
// CHECK-NEXT:      %[[B1:.*]] = arm_dsp.smlad %[[XE]], %[[W2E]], %[[B]] : i32
// CHECK-NEXT:      %[[B2:.*]] = arm_dsp.smlad %[[XO]], %[[W2O]], %[[B1]] : i32
// CHECK-NEXT:      uop.acc_set %acc2, %[[B2]] : !uop.acc<i32>, i32
// CHECK-NEXT:    }
// CHECK-NEXT:    uop.range %{{.*}} = 8 to 10 {
// CHECK:           uop.mulacc %acc, %{{.*}}, %{{.*}} : !uop.acc<i32>, i32
// CHECK:           uop.mulacc %acc2, %{{.*}}, %{{.*}} : !uop.acc<i32>, i32
// CHECK-NOT:     arm_dsp

// CHECK-LABEL: func.func @left_alone()
// CHECK-NOT:     arm_dsp
// CHECK:         func.return

// CHECK-LABEL: func.func @strided()
// CHECK:         uop.range %[[K:.*]] = 0 to 8 step 4 {
// CHECK-NEXT:      %[[XI:.*]] = uop.mul %[[K]], %five : index
// CHECK-NEXT:      %[[XP:.*]] = uop.gep inbounds %x[%[[XI]]] : !uop.buffer<50xi8>
// CHECK-NEXT:      %[[WP:.*]] = uop.gep inbounds %w[%[[K]]] : !uop.buffer<20xi8>
// CHECK-NEXT:      %[[W2I:.*]] = uop.add %[[K]], %ten : index
// CHECK-NEXT:      %[[W2P:.*]] = uop.gep inbounds %w[%[[W2I]]] : !uop.buffer<20xi8>
// CHECK-NEXT:      %[[X0B:.*]] = uop.load %[[XP]] : i8
// CHECK-NEXT:      %[[X0:.*]] = uop.cast %[[X0B]] : i8 to i32
// CHECK-NEXT:      %[[C5:.*]] = uop.const 5 : index
// CHECK-NEXT:      %[[I1:.*]] = uop.add %[[XI]], %[[C5]] : index
// CHECK-NEXT:      %[[P1:.*]] = uop.gep inbounds %x[%[[I1]]] : !uop.buffer<50xi8>
// CHECK-NEXT:      %[[X1B:.*]] = uop.load %[[P1]] : i8
// CHECK-NEXT:      %[[X1:.*]] = uop.cast %[[X1B]] : i8 to i32
// CHECK-NEXT:      %[[C10:.*]] = uop.const 10 : index
// CHECK-NEXT:      %[[I2:.*]] = uop.add %[[XI]], %[[C10]] : index
// CHECK-NEXT:      %[[P2:.*]] = uop.gep inbounds %x[%[[I2]]] : !uop.buffer<50xi8>
// CHECK-NEXT:      %[[X2B:.*]] = uop.load %[[P2]] : i8
// CHECK-NEXT:      %[[X2:.*]] = uop.cast %[[X2B]] : i8 to i32
// CHECK-NEXT:      %[[C15:.*]] = uop.const 15 : index
// CHECK-NEXT:      %[[I3:.*]] = uop.add %[[XI]], %[[C15]] : index
// CHECK-NEXT:      %[[P3:.*]] = uop.gep inbounds %x[%[[I3]]] : !uop.buffer<50xi8>
// CHECK-NEXT:      %[[X3B:.*]] = uop.load %[[P3]] : i8
// CHECK-NEXT:      %[[X3:.*]] = uop.cast %[[X3B]] : i8 to i32
// CHECK-NEXT:      %[[MASK:.*]] = uop.const 65535 : i32
// CHECK-NEXT:      %[[SIXTEEN:.*]] = uop.const 16 : i32
// CHECK-NEXT:      %[[L02:.*]] = uop.and %[[X0]], %[[MASK]] : i32
// CHECK-NEXT:      %[[H02:.*]] = uop.shl %[[X2]], %[[SIXTEEN]] : i32
// CHECK-NEXT:      %[[X02:.*]] = uop.or %[[L02]], %[[H02]] : i32
// CHECK-NEXT:      %[[L13:.*]] = uop.and %[[X1]], %[[MASK]] : i32
// CHECK-NEXT:      %[[H13:.*]] = uop.shl %[[X3]], %[[SIXTEEN]] : i32
// CHECK-NEXT:      %[[X13:.*]] = uop.or %[[L13]], %[[H13]] : i32
// CHECK-NEXT:      %[[WW:.*]] = arm_dsp.load_word %[[WP]] : !uop.ptr<i8>
// CHECK-NEXT:      %[[WE:.*]] = arm_dsp.sxtb16 %[[WW]] : i32
// CHECK-NEXT:      %[[WO:.*]] = arm_dsp.sxtb16 %[[WW]] ror 8 : i32
// CHECK-NEXT:      %[[A:.*]] = uop.acc_get %acc : !uop.acc<i32>, i32
// CHECK-NEXT:      %[[A1:.*]] = arm_dsp.smlad %[[X02]], %[[WE]], %[[A]] : i32
// CHECK-NEXT:      %[[A2:.*]] = arm_dsp.smlad %[[X13]], %[[WO]], %[[A1]] : i32
// CHECK-NEXT:      uop.acc_set %acc, %[[A2]] : !uop.acc<i32>, i32
// CHECK-NEXT:      %[[W2W:.*]] = arm_dsp.load_word %[[W2P]] : !uop.ptr<i8>
// CHECK-NEXT:      %[[W2E:.*]] = arm_dsp.sxtb16 %[[W2W]] : i32
// CHECK-NEXT:      %[[W2O:.*]] = arm_dsp.sxtb16 %[[W2W]] ror 8 : i32
// CHECK-NEXT:      %[[B:.*]] = uop.acc_get %acc2 : !uop.acc<i32>, i32
// CHECK-NEXT:      %[[B1:.*]] = arm_dsp.smlad %[[X02]], %[[W2E]], %[[B]] : i32
// CHECK-NEXT:      %[[B2:.*]] = arm_dsp.smlad %[[X13]], %[[W2O]], %[[B1]] : i32
// CHECK-NEXT:      uop.acc_set %acc2, %[[B2]] : !uop.acc<i32>, i32
// CHECK-NEXT:    }
// CHECK-NEXT:    uop.range %{{.*}} = 8 to 10 {
// CHECK-NOT:     arm_dsp
// CHECK:         func.return

builtin.module {
  func.func @dot() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<10xi8>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<20xi8>
    %acc = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %ten = uop.const 10 : index
    uop.range %k = 0 to 10 {
      uop.range %j = 0 to 1 {
        %xi = uop.add %k, %j : index
        %xp = uop.gep inbounds %x[%xi] : !uop.buffer<10xi8>
        %xv = uop.load %xp : i8
        %xc = uop.cast %xv : i8 to i32
        %wi = uop.add %ten, %k : index
        %wp = uop.gep inbounds %w[%wi] : !uop.buffer<20xi8>
        %wv = uop.load %wp : i8
        %wc = uop.cast %wv : i8 to i32
        %w2i = uop.add %wi, %ten : index
        %w2p = uop.gep inbounds %w[%w2i] : !uop.buffer<20xi8>
        %w2v = uop.load %w2p : i8
        %w2c = uop.cast %w2v : i8 to i32
        uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
        uop.mulacc %acc2, %xc, %w2c : !uop.acc<i32>, i32
      }
    }
    func.return
  }

  // Not rewritten: two strided operands (%w[2k] and %w[2k+2]), an invariant operand (%x[0]), a gep not proven in bounds, a
  // trip count below 4, and a multiply-accumulate of a value that is not a loaded int8.
  func.func @left_alone() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<16xi8>
    %acc = uop.define_acc 0 : i32
    %two = uop.const 2 : index
    uop.range %k = 0 to 8 {
      %xi = uop.mul %k, %two : index
      %xp = uop.gep inbounds %w[%xi] : !uop.buffer<16xi8>
      %xv = uop.load %xp : i8
      %xc = uop.cast %xv : i8 to i32
      %wi = uop.add %xi, %two : index
      %wp = uop.gep inbounds %w[%wi] : !uop.buffer<16xi8>
      %wv = uop.load %wp : i8
      %wc = uop.cast %wv : i8 to i32
      uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
    }
    uop.range %k2 = 0 to 8 {
      %xp = uop.gep %x[%k2] : !uop.buffer<8xi8>
      %xv = uop.load %xp : i8
      %xc = uop.cast %xv : i8 to i32
      uop.mulacc %acc, %xc, %xc : !uop.acc<i32>, i32
    }
    uop.range %k4 = 0 to 3 {
      %xp = uop.gep inbounds %x[%k4] : !uop.buffer<8xi8>
      %xv = uop.load %xp : i8
      %xc = uop.cast %xv : i8 to i32
      uop.mulacc %acc, %xc, %xc : !uop.acc<i32>, i32
    }
    %z = uop.const 0 : index
    uop.range %k6 = 0 to 8 {
      %xp = uop.gep inbounds %x[%k6] : !uop.buffer<8xi8>
      %xv = uop.load %xp : i8
      %xc = uop.cast %xv : i8 to i32
      %zp = uop.gep inbounds %x[%z] : !uop.buffer<8xi8>
      %zv = uop.load %zp : i8
      %zc = uop.cast %zv : i8 to i32
      uop.mulacc %acc, %xc, %zc : !uop.acc<i32>, i32
    }
    %c = uop.const 3 : i32
    uop.range %k5 = 0 to 8 {
      %xp = uop.gep inbounds %x[%k5] : !uop.buffer<8xi8>
      %xv = uop.load %xp : i8
      %xc = uop.cast %xv : i8 to i32
      uop.mulacc %acc, %xc, %c : !uop.acc<i32>, i32
    }
    func.return
  }

  // x strided (x[5k], as an NCHW activation along its channels), w contiguous: the 4 x bytes
  // of a step are loaded one by one (k, k+5, k+10, k+15) and packed as (x0, x2) and (x1, x3),
  // the lanes of sxtb16 and sxtb16 ror 8 of the w word; the packs are shared by both
  // accumulators.
  func.func @strided() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<50xi8>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<20xi8>
    %acc = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %five = uop.const 5 : index
    %ten = uop.const 10 : index
    uop.range %k = 0 to 10 {
      %xi = uop.mul %k, %five : index
      %xp = uop.gep inbounds %x[%xi] : !uop.buffer<50xi8>
      %xv = uop.load %xp : i8
      %xc = uop.cast %xv : i8 to i32
      %wp = uop.gep inbounds %w[%k] : !uop.buffer<20xi8>
      %wv = uop.load %wp : i8
      %wc = uop.cast %wv : i8 to i32
      %w2i = uop.add %k, %ten : index
      %w2p = uop.gep inbounds %w[%w2i] : !uop.buffer<20xi8>
      %w2v = uop.load %w2p : i8
      %w2c = uop.cast %w2v : i8 to i32
      uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
      uop.mulacc %acc2, %xc, %w2c : !uop.acc<i32>, i32
    }
    func.return
  }
}
