// RUN: zant-opt %s --split-input-file --verify-diagnostics

// arm_dsp.smlad_window reads int8 words of X and int16 pairs of widened weights.

func.func @int8_weights() {
  %x = uop.define_local "x" : !uop.buffer<144xi8>
  %w = uop.define_local "w" : !uop.buffer<72xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<144xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<72xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{smlad_window reads int16 pairs at its second pointer, got a pointer to i8}}
  %r00, %r10, %r01, %r11 = arm_dsp.smlad_window %px, %pw, %c, %c, %c, %c {rows = #builtin.int<3>, steps = #builtin.int<3>, x_row = #builtin.int<24>, x_next = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i8>
  func.return
}

// -----

func.func @int16_x() {
  %x = uop.define_local "x" : !uop.buffer<144xi16>
  %w = uop.define_local "w" : !uop.buffer<72xi16>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<144xi16>
  %pw = uop.gep %w[%zero] : !uop.buffer<72xi16>
  %c = uop.const 0 : i32
  // expected-error@+1 {{smlad_window reads int8 words at its first pointer, got a pointer to i16}}
  %r00, %r10, %r01, %r11 = arm_dsp.smlad_window %px, %pw, %c, %c, %c, %c {rows = #builtin.int<3>, steps = #builtin.int<3>, x_row = #builtin.int<24>, x_next = #builtin.int<4>} : !uop.ptr<i16>, !uop.ptr<i16>
  func.return
}

// -----

// At least one row and one step.

func.func @no_steps() {
  %x = uop.define_local "x" : !uop.buffer<144xi8>
  %w = uop.define_local "w" : !uop.buffer<72xi16>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<144xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<72xi16>
  %c = uop.const 0 : i32
  // expected-error@+1 {{smlad_window takes at least one row and one step, got 3 and 0}}
  %r00, %r10, %r01, %r11 = arm_dsp.smlad_window %px, %pw, %c, %c, %c, %c {rows = #builtin.int<3>, steps = #builtin.int<0>, x_row = #builtin.int<24>, x_next = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i16>
  func.return
}
