// RUN: zant-opt %s --split-input-file --verify-diagnostics

// arm_dsp.smlad_rows takes 1 to 5 rows, and has a sum for each of max(4, rows).

func.func @too_many_rows() {
  %x = uop.define_local "x" : !uop.buffer<12xi16>
  %w = uop.define_local "w" : !uop.buffer<96xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<12xi16>
  %pb = uop.gep %w[%zero] : !uop.buffer<96xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{smlad_rows takes 1 to 5 rows and at least one step}}
  %r0, %r1, %r2, %r3, %r4, %r5 = arm_dsp.smlad_rows %pa, %pb, %c {steps = #builtin.int<3>, rows = #builtin.int<6>} : !uop.ptr<i16>, !uop.ptr<i8> -> i32, i32, i32, i32, i32, i32
  func.return
}

// -----

func.func @five_rows_four_sums() {
  %x = uop.define_local "x" : !uop.buffer<12xi16>
  %w = uop.define_local "w" : !uop.buffer<80xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<12xi16>
  %pb = uop.gep %w[%zero] : !uop.buffer<80xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{smlad_rows of 5 rows has 5 sums}}
  %r0, %r1, %r2, %r3 = arm_dsp.smlad_rows %pa, %pb, %c {steps = #builtin.int<3>, rows = #builtin.int<5>} : !uop.ptr<i16>, !uop.ptr<i8> -> i32, i32, i32, i32
  func.return
}
