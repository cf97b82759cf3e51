// RUN: zant-opt %s --split-input-file --verify-diagnostics

// arm_dsp.smlad_block reads words of two int16 (widened operands), not int8 bytes.

func.func @bytes() {
  %x = uop.define_local "x" : !uop.buffer<24xi8>
  %w = uop.define_local "w" : !uop.buffer<48xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<24xi8>
  %pb = uop.gep %w[%zero] : !uop.buffer<48xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{smlad_block reads words of two int16, got a pointer to i8}}
  %r00, %r01, %r10, %r11, %r20, %r21, %r30, %r31 = arm_dsp.smlad_block %pa, %pb, %c, %c, %c, %c, %c, %c, %c, %c {steps = #builtin.int<3>, a_next = #builtin.int<3>, b_next = #builtin.int<3>} : !uop.ptr<i8>, !uop.ptr<i8> -> i32, i32, i32, i32, i32, i32, i32, i32
  func.return
}

// -----

// It has 8 sums: 4 rows x 2 pixels.

func.func @four_sums() {
  %x = uop.define_local "x" : !uop.buffer<6xi32>
  %w = uop.define_local "w" : !uop.buffer<12xi32>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<6xi32>
  %pb = uop.gep %w[%zero] : !uop.buffer<12xi32>
  %c = uop.const 0 : i32
  // expected-error@+1 {{smlad_block has 8 sums (and as many addends, or none)}}
  %r0, %r1, %r2, %r3 = arm_dsp.smlad_block %pa, %pb, %c, %c, %c, %c {steps = #builtin.int<3>, a_next = #builtin.int<3>, b_next = #builtin.int<3>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32
  func.return
}

// -----

func.func @four_addends() {
  %x = uop.define_local "x" : !uop.buffer<6xi32>
  %w = uop.define_local "w" : !uop.buffer<12xi32>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<6xi32>
  %pb = uop.gep %w[%zero] : !uop.buffer<12xi32>
  %c = uop.const 0 : i32
  // expected-error@+1 {{smlad_block has 8 sums (and as many addends, or none)}}
  %r00, %r01, %r10, %r11, %r20, %r21, %r30, %r31 = arm_dsp.smlad_block %pa, %pb, %c, %c, %c, %c {steps = #builtin.int<3>, a_next = #builtin.int<3>, b_next = #builtin.int<3>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32, i32, i32
  func.return
}
