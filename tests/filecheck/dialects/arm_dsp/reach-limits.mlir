// RUN: zant-opt %s --split-input-file | filecheck %s

// The asm row ops at their verifiers' reach limits (the largest offset each LDR, STRB or ADD
// immediate encodes): accepted. invalid-reach.mlir: one past each, refused.

// stride 1: its last taps at 2·x_row + 5 (the word at 2·x_row + 2)

// CHECK-LABEL: func.func @step_stride_1
// CHECK: arm_dsp.depthwise_step
func.func @step_stride_1() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %c {stride = #builtin.int<1>, rows = #builtin.int<3>, x_row = #builtin.int<2045>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
  func.return
}

// -----

// stride 2: its last tap at 2·x_row + 8 (LDRSB)

// CHECK-LABEL: func.func @step_stride_2
// CHECK: arm_dsp.depthwise_step
func.func @step_stride_2() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %c {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<2043>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
  func.return
}

// -----

// depthwise_row: as its steps

// CHECK-LABEL: func.func @row_reach
// CHECK: arm_dsp.depthwise_row
func.func @row_reach() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  arm_dsp.depthwise_row %px, %pw, %c, %c, %py {stride = #builtin.int<1>, rows = #builtin.int<3>, x_row = #builtin.int<2045>, steps = #builtin.int<2>, y_step = #builtin.int<1>, addend = #builtin.int<0>, shift = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// depthwise_row: py advances by 4·y_step, an ADD immediate

// CHECK-LABEL: func.func @row_y_step
// CHECK: arm_dsp.depthwise_row
func.func @row_y_step() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  arm_dsp.depthwise_row %px, %pw, %c, %c, %py {stride = #builtin.int<1>, rows = #builtin.int<3>, x_row = #builtin.int<16>, steps = #builtin.int<2>, y_step = #builtin.int<1023>, addend = #builtin.int<0>, shift = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// depthwise_short_row: its rows' last bytes at 2·x_row + 5

// CHECK-LABEL: func.func @short_row_reach
// CHECK: arm_dsp.depthwise_short_row
func.func @short_row_reach() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  %s0, %s1, %s2, %s3, %s4, %s5 = arm_dsp.depthwise_short_row %px, %pw, %c, %c, %c {rows = #builtin.int<3>, x_row = #builtin.int<2045>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32
  func.return
}

// -----

// depthwise_short_rows: as its rows

// CHECK-LABEL: func.func @short_rows_reach
// CHECK: arm_dsp.depthwise_short_rows
func.func @short_rows_reach() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  arm_dsp.depthwise_short_rows %px, %pw, [%c, %c, %c], %c, %c, %py {rows = #builtin.int<3>, x_row = #builtin.int<2045>, count = #builtin.int<2>, x_next = #builtin.int<6>, y_step = #builtin.int<1>, y_next = #builtin.int<6>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// depthwise_short_rows: px advances by x_next (ADD)

// CHECK-LABEL: func.func @short_rows_x_next
// CHECK: arm_dsp.depthwise_short_rows
func.func @short_rows_x_next() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  arm_dsp.depthwise_short_rows %px, %pw, [%c, %c, %c], %c, %c, %py {rows = #builtin.int<3>, x_row = #builtin.int<6>, count = #builtin.int<2>, x_next = #builtin.int<4095>, y_step = #builtin.int<1>, y_next = #builtin.int<6>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// depthwise_short_rows: py advances by y_next (ADD)

// CHECK-LABEL: func.func @short_rows_y_next
// CHECK: arm_dsp.depthwise_short_rows
func.func @short_rows_y_next() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  arm_dsp.depthwise_short_rows %px, %pw, [%c, %c, %c], %c, %c, %py {rows = #builtin.int<3>, x_row = #builtin.int<6>, count = #builtin.int<2>, x_next = #builtin.int<6>, y_step = #builtin.int<1>, y_next = #builtin.int<4095>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// depthwise_short_rows: its last output at 5·y_step (STRB)

// CHECK-LABEL: func.func @short_rows_y_step
// CHECK: arm_dsp.depthwise_short_rows
func.func @short_rows_y_step() {
  %x = uop.define_local "x" : !uop.buffer<8192xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<8192xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  %c = uop.const 0 : i32
  arm_dsp.depthwise_short_rows %px, %pw, [%c, %c, %c], %c, %c, %py {rows = #builtin.int<3>, x_row = #builtin.int<6>, count = #builtin.int<2>, x_next = #builtin.int<6>, y_step = #builtin.int<819>, y_next = #builtin.int<6>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}
