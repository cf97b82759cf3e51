// RUN: zant-opt %s --split-input-file --verify-diagnostics

// arm_dsp.smlad_tile_row's SSAT shifts by 0 to 31.

func.func @shift(%c : i32, %m : i32) {
  %w = uop.define_local "w" : !uop.buffer<16xi8>
  %y = uop.define_local "y" : !uop.buffer<12xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %w[%zero] : !uop.buffer<16xi8>
  %py = uop.gep %y[%zero] : !uop.buffer<12xi8>
  // expected-error@+1 {{arm_dsp.smlad_tile_row's SSAT shifts right by 0 to 31 bits, got 32}}
  arm_dsp.smlad_tile_row %pa, %pa, %py, %c, %c, %m, %m {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<8>, pairs = #builtin.int<3>, b_pair = #builtin.int<16>, y_pair = #builtin.int<2>, y_next = #builtin.int<6>, y_pixel = #builtin.int<1>, addend = #builtin.int<-4080>, shift = #builtin.int<32>} : !uop.ptr<i8>, !uop.ptr<i8>, !uop.ptr<i8>
  func.return
}

// -----

// It writes int8.

func.func @wide_output(%c : i32, %m : i32) {
  %w = uop.define_local "w" : !uop.buffer<16xi8>
  %y = uop.define_local "y" : !uop.buffer<12xi16>
  %zero = uop.const 0 : index
  %pa = uop.gep %w[%zero] : !uop.buffer<16xi8>
  %py = uop.gep %y[%zero] : !uop.buffer<12xi16>
  // expected-error@+1 {{arm_dsp.smlad_tile_row's py points to i8, got a pointer to i16}}
  arm_dsp.smlad_tile_row %pa, %pa, %py, %c, %c, %m, %m {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<8>, pairs = #builtin.int<3>, b_pair = #builtin.int<16>, y_pair = #builtin.int<2>, y_next = #builtin.int<6>, y_pixel = #builtin.int<1>, addend = #builtin.int<-4080>, shift = #builtin.int<5>} : !uop.ptr<i8>, !uop.ptr<i8>, !uop.ptr<i16>
  func.return
}
