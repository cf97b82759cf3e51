// RUN: zant-opt %s | filecheck %s
// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// arm_dsp.depthwise_step: 4 consecutive outputs of a depthwise row (conv_depthwise.py) from an
// int8 pointer at the first output's first tap and an int32 pointer at the rows' weight words
// ((w0, w2), w1 per row), the sums' start; its stride, rows of taps and X's row stride as
// properties.

// CHECK-LABEL: func.func @step
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = arm_dsp.depthwise_step %px, %pw, %c {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<12>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
func.func @step() {
  %x = uop.define_local "x" : !uop.buffer<144xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<144xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %c = uop.const 0 : i32
  %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %c {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<12>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
  func.return
}

// arm_dsp.depthwise_row: a row's steps, each sum requantized (SMMLA with the multiplier and
// addend, SSAT with the shift) and stored y_step bytes apart through the third pointer.

// CHECK-LABEL: func.func @row
// CHECK:         arm_dsp.depthwise_row %px, %pw, %c, %m, %py {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<12>, steps = #builtin.int<2>, y_step = #builtin.int<16>, addend = #builtin.int<-2040>, shift = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
func.func @row() {
  %x = uop.define_local "x" : !uop.buffer<144xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<128xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<144xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<128xi8>
  %c = uop.const 0 : i32
  %m = uop.const 1518500250 : i32
  arm_dsp.depthwise_row %px, %pw, %c, %m, %py {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<12>, steps = #builtin.int<2>, y_step = #builtin.int<16>, addend = #builtin.int<-2040>, shift = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// arm_dsp.depthwise_short_row: the 6 sums of a 6-wide row (one pad each side) from its first
// byte and its rows' weight words, with the starts of its first output, its interior and its
// last.

// CHECK-LABEL: func.func @short_row
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = arm_dsp.depthwise_short_row %px, %pw, %a, %b, %c {rows = #builtin.int<3>, x_row = #builtin.int<6>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32
func.func @short_row() {
  %x = uop.define_local "x" : !uop.buffer<36xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<36xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %a = uop.const 1 : i32
  %b = uop.const 2 : i32
  %c = uop.const 3 : i32
  %r0, %r1, %r2, %r3, %r4, %r5 = arm_dsp.depthwise_short_row %px, %pw, %a, %b, %c {rows = #builtin.int<3>, x_row = #builtin.int<6>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32
  func.return
}

// arm_dsp.depthwise_short_rows: count such rows x_next bytes apart, each sum requantized and
// stored y_step bytes apart, the rows' outputs y_next apart.

// CHECK-LABEL: func.func @short_rows
// CHECK:         arm_dsp.depthwise_short_rows %px, %pw, [%a, %b, %c], %m, %k, %py {rows = #builtin.int<3>, x_row = #builtin.int<6>, count = #builtin.int<4>, x_next = #builtin.int<6>, y_step = #builtin.int<128>, y_next = #builtin.int<768>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
func.func @short_rows() {
  %x = uop.define_local "x" : !uop.buffer<36xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<4608xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<36xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<4608xi8>
  %a = uop.const 1 : i32
  %b = uop.const 2 : i32
  %c = uop.const 3 : i32
  %m = uop.const 1518500250 : i32
  %k = uop.const -510 : i32
  arm_dsp.depthwise_short_rows %px, %pw, [%a, %b, %c], %m, %k, %py {rows = #builtin.int<3>, x_row = #builtin.int<6>, count = #builtin.int<4>, x_next = #builtin.int<6>, y_step = #builtin.int<128>, y_next = #builtin.int<768>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}
