// RUN: zant-opt %s --split-input-file --verify-diagnostics

// The asm row ops one past their verifiers' reach limits (reach-limits.mlir: at them).

// stride 1: its last taps at 2·x_row + 5 (the word at 2·x_row + 2)

func.func @step_stride_1() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{arm_dsp.depthwise_step's taps lie within 4095 bytes of px, rows at least 1 byte apart, got x_row = 2046}}
  %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %c {stride = #builtin.int<1>, rows = #builtin.int<3>, x_row = #builtin.int<2046>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
  func.return
}

// -----

// stride 2: its last tap at 2·x_row + 8 (LDRSB)

func.func @step_stride_2() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{arm_dsp.depthwise_step's taps lie within 4095 bytes of px, rows at least 1 byte apart, got x_row = 2044}}
  %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %c {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<2044>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
  func.return
}

// -----

// depthwise_row: as its steps

func.func @row_reach() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{arm_dsp.depthwise_row's taps lie within 4095 bytes of px, rows at least 1 byte apart, got x_row = 2046}}
  arm_dsp.depthwise_row %px, %pw, %c, %c, %py {stride = #builtin.int<1>, rows = #builtin.int<3>, x_row = #builtin.int<2046>, steps = #builtin.int<2>, y_step = #builtin.int<1>, addend = #builtin.int<0>, shift = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// depthwise_row: py advances by 4·y_step, an ADD immediate

func.func @row_y_step() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{depthwise_row's outputs are 1 to 1023 bytes apart, got 1024}}
  arm_dsp.depthwise_row %px, %pw, %c, %c, %py {stride = #builtin.int<1>, rows = #builtin.int<3>, x_row = #builtin.int<16>, steps = #builtin.int<2>, y_step = #builtin.int<1024>, addend = #builtin.int<0>, shift = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// depthwise_short_row: its rows' last bytes at 2·x_row + 5

func.func @short_row_reach() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{depthwise_short_row's taps lie within 4095 bytes of px, rows at least 1 byte apart, got x_row = 2046}}
  %s0, %s1, %s2, %s3, %s4, %s5 = arm_dsp.depthwise_short_row %px, %pw, %c, %c, %c {rows = #builtin.int<3>, x_row = #builtin.int<2046>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32
  func.return
}

// -----

// depthwise_short_rows: as its rows

func.func @short_rows_reach() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{depthwise_short_rows' taps lie within 4095 bytes of px}}
  arm_dsp.depthwise_short_rows %px, %pw, [%c, %c, %c], %c, %c, %py {rows = #builtin.int<3>, x_row = #builtin.int<2046>, count = #builtin.int<2>, x_next = #builtin.int<6>, y_step = #builtin.int<1>, y_next = #builtin.int<6>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// depthwise_short_rows: px advances by x_next (ADD)

func.func @short_rows_x_next() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{1 to 4095 bytes apart}}
  arm_dsp.depthwise_short_rows %px, %pw, [%c, %c, %c], %c, %c, %py {rows = #builtin.int<3>, x_row = #builtin.int<6>, count = #builtin.int<2>, x_next = #builtin.int<4096>, y_step = #builtin.int<1>, y_next = #builtin.int<6>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// depthwise_short_rows: py advances by y_next (ADD)

func.func @short_rows_y_next() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{1 to 4095 bytes apart}}
  arm_dsp.depthwise_short_rows %px, %pw, [%c, %c, %c], %c, %c, %py {rows = #builtin.int<3>, x_row = #builtin.int<6>, count = #builtin.int<2>, x_next = #builtin.int<6>, y_step = #builtin.int<1>, y_next = #builtin.int<4096>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// depthwise_short_rows: its last output at 5·y_step (STRB)

func.func @short_rows_y_step() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  // expected-error@+1 {{depthwise_short_rows' outputs lie within 4095 bytes of py}}
  arm_dsp.depthwise_short_rows %px, %pw, [%c, %c, %c], %c, %c, %py {rows = #builtin.int<3>, x_row = #builtin.int<6>, count = #builtin.int<2>, x_next = #builtin.int<6>, y_step = #builtin.int<820>, y_next = #builtin.int<6>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}
