// RUN: zant-opt %s -p 'set-target{target=cortex-m4},arm-dsp-dot' | filecheck %s

// 16x8 dot products (int16 activations, int8 weights): the int8 operand is a word and its
// sxtb16 pair, elements (0, 2) and (1, 3); a contiguous int16 operand is two words of 2
// elements each, repacked into those halves (PKHBT / PKHTB); a strided one its 4 elements
// packed alike. Two int16 operands take their words as they are: pairs (0, 1) and (2, 3).

builtin.module {
  // CHECK-LABEL: func.func @contiguous()
  // CHECK:         uop.range %[[K:.*]] = 0 to 8 step 4 {
  // CHECK:           %[[XP:.*]] = uop.gep inbounds %x[%[[K]]] : !uop.buffer<10xi16>
  // CHECK:           %[[WP:.*]] = uop.gep inbounds %w[%[[K]]] : !uop.buffer<10xi8>
  // CHECK:           %[[X01:.*]] = arm_dsp.load_word %[[XP]] : !uop.ptr<i16>
  // CHECK-NEXT:      %[[C2:.*]] = uop.const 2 : index
  // CHECK-NEXT:      %[[I2:.*]] = uop.add %[[K]], %[[C2]] : index
  // CHECK-NEXT:      %[[XP2:.*]] = uop.gep inbounds %x[%[[I2]]] : !uop.buffer<10xi16>
  // CHECK-NEXT:      %[[X23:.*]] = arm_dsp.load_word %[[XP2]] : !uop.ptr<i16>
  // CHECK-NEXT:      %[[LO:.*]] = uop.const 65535 : i32
  // CHECK-NEXT:      %[[HI:.*]] = uop.const -65536 : i32
  // CHECK-NEXT:      %[[S16:.*]] = uop.const 16 : i32
  // CHECK-NEXT:      %[[A:.*]] = uop.and %[[X01]], %[[LO]] : i32
  // CHECK-NEXT:      %[[B:.*]] = uop.shl %[[X23]], %[[S16]] : i32
  // CHECK-NEXT:      %[[EVEN:.*]] = uop.or %[[A]], %[[B]] : i32
  // CHECK-NEXT:      %[[C:.*]] = uop.shr %[[X01]], %[[S16]] : i32
  // CHECK-NEXT:      %[[D:.*]] = uop.and %[[C]], %[[LO]] : i32
  // CHECK-NEXT:      %[[E:.*]] = uop.and %[[X23]], %[[HI]] : i32
  // CHECK-NEXT:      %[[ODD:.*]] = uop.or %[[D]], %[[E]] : i32
  // CHECK-NEXT:      %[[W:.*]] = arm_dsp.load_word %[[WP]] : !uop.ptr<i8>
  // CHECK-NEXT:      %[[WE:.*]] = arm_dsp.sxtb16 %[[W]] : i32
  // CHECK-NEXT:      %[[WO:.*]] = arm_dsp.sxtb16 %[[W]] ror 8 : i32
  // CHECK-NEXT:      %[[ACC:.*]] = uop.acc_get %acc : !uop.acc<i32>, i32
  // CHECK-NEXT:      %[[R1:.*]] = arm_dsp.smlad %[[EVEN]], %[[WE]], %[[ACC]] : i32
  // CHECK-NEXT:      %[[R2:.*]] = arm_dsp.smlad %[[ODD]], %[[WO]], %[[R1]] : i32
  // CHECK-NEXT:      uop.acc_set %acc, %[[R2]] : !uop.acc<i32>, i32
  // CHECK-NEXT:    }
  // CHECK-NEXT:    uop.range %{{.*}} = 8 to 10 {
  // CHECK:           uop.mulacc %acc
  func.func @contiguous() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<10xi16>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<10xi8>
    %acc = uop.define_acc 0 : i32
    uop.range %k = 0 to 10 {
      %xp = uop.gep inbounds %x[%k] : !uop.buffer<10xi16>
      %xv = uop.load %xp : i16
      %xc = uop.cast %xv : i16 to i32
      %wp = uop.gep inbounds %w[%k] : !uop.buffer<10xi8>
      %wv = uop.load %wp : i8
      %wc = uop.cast %wv : i8 to i32
      uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
    }
    func.return
  }

  // CHECK-LABEL: func.func @strided()
  // CHECK:         uop.range %[[K:.*]] = 0 to 4 step 4 {
  // CHECK:           uop.load %{{.*}} : i16
  // CHECK:           uop.load %{{.*}} : i16
  // CHECK:           uop.load %{{.*}} : i16
  // CHECK:           uop.load %{{.*}} : i16
  // CHECK:           arm_dsp.load_word %{{.*}} : !uop.ptr<i8>
  // CHECK-NOT:       arm_dsp.load_word %{{.*}} : !uop.ptr<i16>
  // CHECK:           arm_dsp.smlad
  // CHECK-NEXT:      arm_dsp.smlad
  // CHECK-NOT:     uop.mulacc
  func.func @strided() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<20xi16>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<4xi8>
    %acc = uop.define_acc 0 : i32
    %five = uop.const 5 : index
    uop.range %k = 0 to 4 {
      %xi = uop.mul %k, %five : index
      %xp = uop.gep inbounds %x[%xi] : !uop.buffer<20xi16>
      %xv = uop.load %xp : i16
      %xc = uop.cast %xv : i16 to i32
      %wp = uop.gep inbounds %w[%k] : !uop.buffer<4xi8>
      %wv = uop.load %wp : i8
      %wc = uop.cast %wv : i8 to i32
      uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
    }
    func.return
  }

  // CHECK-LABEL: func.func @both_int16()
  // CHECK:         uop.range %[[K:.*]] = 0 to 4 step 4 {
  // CHECK:           %[[A01:.*]] = arm_dsp.load_word %{{.*}} : !uop.ptr<i16>
  // CHECK:           %[[A23:.*]] = arm_dsp.load_word %{{.*}} : !uop.ptr<i16>
  // CHECK-NEXT:      %[[B01:.*]] = arm_dsp.load_word %{{.*}} : !uop.ptr<i16>
  // CHECK:           %[[B23:.*]] = arm_dsp.load_word %{{.*}} : !uop.ptr<i16>
  // CHECK-NEXT:      %[[ACC:.*]] = uop.acc_get %acc : !uop.acc<i32>, i32
  // CHECK-NEXT:      %[[R1:.*]] = arm_dsp.smlad %[[A01]], %[[B01]], %[[ACC]] : i32
  // CHECK-NEXT:      %[[R2:.*]] = arm_dsp.smlad %[[A23]], %[[B23]], %[[R1]] : i32
  func.func @both_int16() {
    %a = uop.define_global "input" 0 "a" : !uop.buffer<4xi16>
    %b = uop.define_global "input" 1 "b" : !uop.buffer<4xi16>
    %acc = uop.define_acc 0 : i32
    uop.range %k = 0 to 4 {
      %ap = uop.gep inbounds %a[%k] : !uop.buffer<4xi16>
      %av = uop.load %ap : i16
      %ac = uop.cast %av : i16 to i32
      %bp = uop.gep inbounds %b[%k] : !uop.buffer<4xi16>
      %bv = uop.load %bp : i16
      %bc = uop.cast %bv : i16 to i32
      uop.mulacc %acc, %ac, %bc : !uop.acc<i32>, i32
    }
    func.return
  }
}
