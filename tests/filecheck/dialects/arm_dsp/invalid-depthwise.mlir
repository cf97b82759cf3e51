// RUN: zant-opt %s --split-input-file --verify-diagnostics

// arm_dsp.depthwise_step reads int8 taps and int32 weight words.

func.func @int8_weights() {
  %x = uop.define_local "x" : !uop.buffer<144xi8>
  %w = uop.define_local "w" : !uop.buffer<24xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<144xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<24xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{arm_dsp.depthwise_step's pw points to i32, got a pointer to i8}}
  %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %c {stride = #builtin.int<1>, rows = #builtin.int<3>, x_row = #builtin.int<12>} : !uop.ptr<i8>, !uop.ptr<i8> -> i32, i32, i32, i32
  func.return
}

// -----

// Rows at stride 1 or 2 only.

func.func @stride_3() {
  %x = uop.define_local "x" : !uop.buffer<144xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<144xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %c = uop.const 0 : i32
  // expected-error@+1 {{arm_dsp.depthwise_step reads rows at stride 1 or 2, got 3}}
  %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %c {stride = #builtin.int<3>, rows = #builtin.int<3>, x_row = #builtin.int<12>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
  func.return
}

// -----

// 4 sums.

func.func @two_sums() {
  %x = uop.define_local "x" : !uop.buffer<144xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<144xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %c = uop.const 0 : i32
  // expected-error@+1 {{depthwise_step has 4 sums, got 2}}
  %r0, %r1 = arm_dsp.depthwise_step %px, %pw, %c {stride = #builtin.int<1>, rows = #builtin.int<3>, x_row = #builtin.int<12>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32
  func.return
}

// -----

// 1 to 3 rows of taps.

func.func @four_rows() {
  %x = uop.define_local "x" : !uop.buffer<144xi8>
  %w = uop.define_local "w" : !uop.buffer<8xi32>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<144xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<8xi32>
  %c = uop.const 0 : i32
  // expected-error@+1 {{arm_dsp.depthwise_step takes 1 to 3 rows of taps, got 4}}
  %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %c {stride = #builtin.int<1>, rows = #builtin.int<4>, x_row = #builtin.int<12>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
  func.return
}

// -----

// The taps lie within an LDR immediate of px.

func.func @far_rows() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %c = uop.const 0 : i32
  // expected-error@+1 {{arm_dsp.depthwise_step's taps lie within 4095 bytes of px, rows at least 1 byte apart, got x_row = 2048}}
  %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %c {stride = #builtin.int<1>, rows = #builtin.int<3>, x_row = #builtin.int<2048>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
  func.return
}

// -----

// arm_dsp.depthwise_row: at least one step, outputs 1 to 1023 bytes apart.

func.func @no_steps() {
  %x = uop.define_local "x" : !uop.buffer<144xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<128xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<144xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<128xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{arm_dsp.depthwise_row's steps is at least 1, got 0}}
  arm_dsp.depthwise_row %px, %pw, %c, %c, %py {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<12>, steps = #builtin.int<0>, y_step = #builtin.int<16>, addend = #builtin.int<0>, shift = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

func.func @far_outputs() {
  %x = uop.define_local "x" : !uop.buffer<144xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<144xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{depthwise_row's outputs are 1 to 1023 bytes apart, got 1024}}
  arm_dsp.depthwise_row %px, %pw, %c, %c, %py {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<12>, steps = #builtin.int<1>, y_step = #builtin.int<1024>, addend = #builtin.int<0>, shift = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

func.func @wide_shift() {
  %x = uop.define_local "x" : !uop.buffer<144xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<128xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<144xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<128xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{arm_dsp.depthwise_row's SSAT shifts right by 0 to 31 bits, got 32}}
  arm_dsp.depthwise_row %px, %pw, %c, %c, %py {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<12>, steps = #builtin.int<1>, y_step = #builtin.int<16>, addend = #builtin.int<0>, shift = #builtin.int<32>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// arm_dsp.depthwise_short_row takes 3 starts (the first output's, the interior's, the last's).

func.func @short_row_two_starts() {
  %x = uop.define_local "x" : !uop.buffer<36xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<36xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %a = uop.const 1 : i32
  // expected-error@+1 {{depthwise_short_row takes 3 starts and has 6 sums}}
  %r0, %r1, %r2, %r3, %r4, %r5 = arm_dsp.depthwise_short_row %px, %pw, %a, %a {rows = #builtin.int<3>, x_row = #builtin.int<6>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32
  func.return
}

// -----

// Its outputs' offsets from py are STRB immediates.

func.func @short_rows_far_outputs() {
  %x = uop.define_local "x" : !uop.buffer<36xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<36xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %a = uop.const 1 : i32
  // expected-error@+1 {{depthwise_short_rows' outputs lie within 4095 bytes of py}}
  arm_dsp.depthwise_short_rows %px, %pw, [%a, %a, %a], %a, %a, %py {rows = #builtin.int<3>, x_row = #builtin.int<6>, count = #builtin.int<4>, x_next = #builtin.int<6>, y_step = #builtin.int<1024>, y_next = #builtin.int<768>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}
