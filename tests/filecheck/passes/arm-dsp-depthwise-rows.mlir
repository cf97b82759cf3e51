// RUN: zant-opt %s --split-input-file -p arm-dsp-depthwise-rows | filecheck %s

// A depthwise row's loop of steps at stride 2 (outputs 0 to 7 of a channel c, 16 channels
// channels-last), each sum requantized with the channel's multiplier (a table's element, the
// same in every step), a literal addend and shift, and stored 16 bytes apart: one
// arm_dsp.depthwise_row before the loop, from the first step's pointers, the multiplier
// loaded once; the loop gone.
// CHECK-LABEL: func.func @row
// CHECK:         %[[PX:.*]] = uop.gep inbounds %x[%{{.*}}] : !uop.buffer<1152xi8>
// CHECK:         %[[PW:.*]] = uop.gep inbounds %w[%{{.*}}] : !uop.buffer<96xi32>
// CHECK:         %[[PY:.*]] = uop.gep inbounds %y[%{{.*}}] : !uop.buffer<2304xi8>
// CHECK-NEXT:    %[[PM:.*]] = uop.gep inbounds %mt[%c] : !uop.buffer<16xi32>
// CHECK-NEXT:    %[[M:.*]] = uop.load %[[PM]] : i32
// CHECK-NEXT:    arm_dsp.depthwise_row %[[PX]], %[[PW]], %start, %[[M]], %[[PY]] {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<24>, steps = #builtin.int<2>, y_step = #builtin.int<16>, addend = #builtin.int<-2040>, shift = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
// CHECK-NOT:     uop.range
// CHECK-NOT:     arm_dsp.depthwise_step
// CHECK:         func.return
func.func @row(%x : !uop.buffer<1152xi8>, %w : !uop.buffer<96xi32>, %mt : !uop.buffer<16xi32>, %y : !uop.buffer<2304xi8>, %c : index, %start : i32) {
  %addend = uop.const -2040 : i32
  uop.range %o = 0 to 8 step 4 {
    %xrow = uop.const 48 : index
    %cx = uop.mul %c, %xrow : index
    %two = uop.const 2 : index
    %ox = uop.mul %o, %two : index
    %at = uop.add %cx, %ox : index
    %px = uop.gep inbounds %x[%at] : !uop.buffer<1152xi8>
    %six = uop.const 6 : index
    %cw = uop.mul %c, %six : index
    %pw = uop.gep inbounds %w[%cw] : !uop.buffer<96xi32>
    %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %start {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<24>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
    %pm0 = uop.gep inbounds %mt[%c] : !uop.buffer<16xi32>
    %m0 = uop.load %pm0 : i32
    %s0 = arm_dsp.smmla %r0, %m0, %addend : i32
    %t0 = arm_dsp.ssat %s0 {bits = #builtin.int<8>, shift = #builtin.int<4>} : i32
    %n0 = uop.cast %t0 : i32 to i8
    %sixteen0 = uop.const 16 : index
    %oy0 = uop.mul %o, %sixteen0 : index
    %q0 = uop.add %oy0, %c : index
    %py0 = uop.gep inbounds %y[%q0] : !uop.buffer<2304xi8>
    uop.store %n0, %py0 : i8
    %pm1 = uop.gep inbounds %mt[%c] : !uop.buffer<16xi32>
    %m1 = uop.load %pm1 : i32
    %s1 = arm_dsp.smmla %r1, %m1, %addend : i32
    %t1 = arm_dsp.ssat %s1 {bits = #builtin.int<8>, shift = #builtin.int<4>} : i32
    %n1 = uop.cast %t1 : i32 to i8
    %k1 = uop.const 1 : index
    %o1 = uop.add %o, %k1 : index
    %sixteen1 = uop.const 16 : index
    %oy1 = uop.mul %o1, %sixteen1 : index
    %q1 = uop.add %oy1, %c : index
    %py1 = uop.gep inbounds %y[%q1] : !uop.buffer<2304xi8>
    uop.store %n1, %py1 : i8
    %pm2 = uop.gep inbounds %mt[%c] : !uop.buffer<16xi32>
    %m2 = uop.load %pm2 : i32
    %s2 = arm_dsp.smmla %r2, %m2, %addend : i32
    %t2 = arm_dsp.ssat %s2 {bits = #builtin.int<8>, shift = #builtin.int<4>} : i32
    %n2 = uop.cast %t2 : i32 to i8
    %k2 = uop.const 2 : index
    %o2 = uop.add %o, %k2 : index
    %sixteen2 = uop.const 16 : index
    %oy2 = uop.mul %o2, %sixteen2 : index
    %q2 = uop.add %oy2, %c : index
    %py2 = uop.gep inbounds %y[%q2] : !uop.buffer<2304xi8>
    uop.store %n2, %py2 : i8
    %pm3 = uop.gep inbounds %mt[%c] : !uop.buffer<16xi32>
    %m3 = uop.load %pm3 : i32
    %s3 = arm_dsp.smmla %r3, %m3, %addend : i32
    %t3 = arm_dsp.ssat %s3 {bits = #builtin.int<8>, shift = #builtin.int<4>} : i32
    %n3 = uop.cast %t3 : i32 to i8
    %k3 = uop.const 3 : index
    %o3 = uop.add %o, %k3 : index
    %sixteen3 = uop.const 16 : index
    %oy3 = uop.mul %o3, %sixteen3 : index
    %q3 = uop.add %oy3, %c : index
    %py3 = uop.gep inbounds %y[%q3] : !uop.buffer<2304xi8>
    uop.store %n3, %py3 : i8
  }
  func.return
}

// -----

// A ReLU of the int8 outputs at -128 changes nothing: fused as well.
// CHECK-LABEL: func.func @relu
// CHECK:         arm_dsp.depthwise_row
// CHECK-NOT:     uop.range
func.func @relu(%x : !uop.buffer<1152xi8>, %w : !uop.buffer<96xi32>, %mt : !uop.buffer<16xi32>, %y : !uop.buffer<2304xi8>, %c : index, %start : i32) {
  %addend = uop.const -2040 : i32
  %relu = uop.const -128 : i8
  uop.range %o = 0 to 8 step 4 {
    %xrow = uop.const 48 : index
    %cx = uop.mul %c, %xrow : index
    %two = uop.const 2 : index
    %ox = uop.mul %o, %two : index
    %at = uop.add %cx, %ox : index
    %px = uop.gep inbounds %x[%at] : !uop.buffer<1152xi8>
    %six = uop.const 6 : index
    %cw = uop.mul %c, %six : index
    %pw = uop.gep inbounds %w[%cw] : !uop.buffer<96xi32>
    %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %start {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<24>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
    %pm0 = uop.gep inbounds %mt[%c] : !uop.buffer<16xi32>
    %m0 = uop.load %pm0 : i32
    %s0 = arm_dsp.smmla %r0, %m0, %addend : i32
    %t0 = arm_dsp.ssat %s0 {bits = #builtin.int<8>, shift = #builtin.int<4>} : i32
    %n0 = uop.cast %t0 : i32 to i8
    %u0 = uop.max %n0, %relu : i8
    %sixteen0 = uop.const 16 : index
    %oy0 = uop.mul %o, %sixteen0 : index
    %q0 = uop.add %oy0, %c : index
    %py0 = uop.gep inbounds %y[%q0] : !uop.buffer<2304xi8>
    uop.store %u0, %py0 : i8
    %pm1 = uop.gep inbounds %mt[%c] : !uop.buffer<16xi32>
    %m1 = uop.load %pm1 : i32
    %s1 = arm_dsp.smmla %r1, %m1, %addend : i32
    %t1 = arm_dsp.ssat %s1 {bits = #builtin.int<8>, shift = #builtin.int<4>} : i32
    %n1 = uop.cast %t1 : i32 to i8
    %u1 = uop.max %n1, %relu : i8
    %k1 = uop.const 1 : index
    %o1 = uop.add %o, %k1 : index
    %sixteen1 = uop.const 16 : index
    %oy1 = uop.mul %o1, %sixteen1 : index
    %q1 = uop.add %oy1, %c : index
    %py1 = uop.gep inbounds %y[%q1] : !uop.buffer<2304xi8>
    uop.store %u1, %py1 : i8
    %pm2 = uop.gep inbounds %mt[%c] : !uop.buffer<16xi32>
    %m2 = uop.load %pm2 : i32
    %s2 = arm_dsp.smmla %r2, %m2, %addend : i32
    %t2 = arm_dsp.ssat %s2 {bits = #builtin.int<8>, shift = #builtin.int<4>} : i32
    %n2 = uop.cast %t2 : i32 to i8
    %u2 = uop.max %n2, %relu : i8
    %k2 = uop.const 2 : index
    %o2 = uop.add %o, %k2 : index
    %sixteen2 = uop.const 16 : index
    %oy2 = uop.mul %o2, %sixteen2 : index
    %q2 = uop.add %oy2, %c : index
    %py2 = uop.gep inbounds %y[%q2] : !uop.buffer<2304xi8>
    uop.store %u2, %py2 : i8
    %pm3 = uop.gep inbounds %mt[%c] : !uop.buffer<16xi32>
    %m3 = uop.load %pm3 : i32
    %s3 = arm_dsp.smmla %r3, %m3, %addend : i32
    %t3 = arm_dsp.ssat %s3 {bits = #builtin.int<8>, shift = #builtin.int<4>} : i32
    %n3 = uop.cast %t3 : i32 to i8
    %u3 = uop.max %n3, %relu : i8
    %k3 = uop.const 3 : index
    %o3 = uop.add %o, %k3 : index
    %sixteen3 = uop.const 16 : index
    %oy3 = uop.mul %o3, %sixteen3 : index
    %q3 = uop.add %oy3, %c : index
    %py3 = uop.gep inbounds %y[%q3] : !uop.buffer<2304xi8>
    uop.store %u3, %py3 : i8
  }
  func.return
}

// -----

// Anything else in the loop (here a store of the first sum's int8 elsewhere) keeps it.
// CHECK-LABEL: func.func @other
// CHECK:         uop.range
// CHECK:         arm_dsp.depthwise_step
// CHECK-NOT:     arm_dsp.depthwise_row
func.func @other(%x : !uop.buffer<1152xi8>, %w : !uop.buffer<96xi32>, %mt : !uop.buffer<16xi32>, %y : !uop.buffer<2304xi8>, %c : index, %start : i32) {
  %addend = uop.const -2040 : i32
  uop.range %o = 0 to 8 step 4 {
    %xrow = uop.const 48 : index
    %cx = uop.mul %c, %xrow : index
    %two = uop.const 2 : index
    %ox = uop.mul %o, %two : index
    %at = uop.add %cx, %ox : index
    %px = uop.gep inbounds %x[%at] : !uop.buffer<1152xi8>
    %six = uop.const 6 : index
    %cw = uop.mul %c, %six : index
    %pw = uop.gep inbounds %w[%cw] : !uop.buffer<96xi32>
    %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %start {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<24>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
    %pm0 = uop.gep inbounds %mt[%c] : !uop.buffer<16xi32>
    %m0 = uop.load %pm0 : i32
    %s0 = arm_dsp.smmla %r0, %m0, %addend : i32
    %t0 = arm_dsp.ssat %s0 {bits = #builtin.int<8>, shift = #builtin.int<4>} : i32
    %n0 = uop.cast %t0 : i32 to i8
    %sixteen0 = uop.const 16 : index
    %oy0 = uop.mul %o, %sixteen0 : index
    %q0 = uop.add %oy0, %c : index
    %py0 = uop.gep inbounds %y[%q0] : !uop.buffer<2304xi8>
    uop.store %n0, %py0 : i8
    %pm1 = uop.gep inbounds %mt[%c] : !uop.buffer<16xi32>
    %m1 = uop.load %pm1 : i32
    %s1 = arm_dsp.smmla %r1, %m1, %addend : i32
    %t1 = arm_dsp.ssat %s1 {bits = #builtin.int<8>, shift = #builtin.int<4>} : i32
    %n1 = uop.cast %t1 : i32 to i8
    %k1 = uop.const 1 : index
    %o1 = uop.add %o, %k1 : index
    %sixteen1 = uop.const 16 : index
    %oy1 = uop.mul %o1, %sixteen1 : index
    %q1 = uop.add %oy1, %c : index
    %py1 = uop.gep inbounds %y[%q1] : !uop.buffer<2304xi8>
    uop.store %n1, %py1 : i8
    %pm2 = uop.gep inbounds %mt[%c] : !uop.buffer<16xi32>
    %m2 = uop.load %pm2 : i32
    %s2 = arm_dsp.smmla %r2, %m2, %addend : i32
    %t2 = arm_dsp.ssat %s2 {bits = #builtin.int<8>, shift = #builtin.int<4>} : i32
    %n2 = uop.cast %t2 : i32 to i8
    %k2 = uop.const 2 : index
    %o2 = uop.add %o, %k2 : index
    %sixteen2 = uop.const 16 : index
    %oy2 = uop.mul %o2, %sixteen2 : index
    %q2 = uop.add %oy2, %c : index
    %py2 = uop.gep inbounds %y[%q2] : !uop.buffer<2304xi8>
    uop.store %n2, %py2 : i8
    %pm3 = uop.gep inbounds %mt[%c] : !uop.buffer<16xi32>
    %m3 = uop.load %pm3 : i32
    %s3 = arm_dsp.smmla %r3, %m3, %addend : i32
    %t3 = arm_dsp.ssat %s3 {bits = #builtin.int<8>, shift = #builtin.int<4>} : i32
    %n3 = uop.cast %t3 : i32 to i8
    %k3 = uop.const 3 : index
    %o3 = uop.add %o, %k3 : index
    %sixteen3 = uop.const 16 : index
    %oy3 = uop.mul %o3, %sixteen3 : index
    %q3 = uop.add %oy3, %c : index
    %py3 = uop.gep inbounds %y[%q3] : !uop.buffer<2304xi8>
    uop.store %n3, %py3 : i8
    %far = uop.const 2000 : index
    %pf = uop.gep inbounds %y[%far] : !uop.buffer<2304xi8>
    uop.store %n0, %pf : i8
  }
  func.return
}


// -----

// The interior rows of a 6x6 depthwise channel c (128 channels, X NCHW, Y channels-last): a
// loop of arm_dsp.depthwise_short_row from each row's first tap row, each sum requantized
// (SMMLA with the channel's multiplier, a uop.shr by 2, SSAT) and stored 128 bytes apart, the
// rows 768 apart: one arm_dsp.depthwise_short_rows before the loop from its first row's
// pointers, the shift in it, the multiplier loaded once; the loop gone.
// CHECK-LABEL: func.func @short_rows
// CHECK:         %[[PX:.*]] = uop.gep inbounds %x[%{{.*}}] : !uop.buffer<4608xi8>
// CHECK:         %[[PW:.*]] = uop.gep inbounds %w[%{{.*}}] : !uop.buffer<768xi32>
// CHECK:         %[[PY:.*]] = uop.gep inbounds %y[%{{.*}}] : !uop.buffer<4608xi8>
// CHECK-NEXT:    %[[PM:.*]] = uop.gep inbounds %mt[%c] : !uop.buffer<128xi32>
// CHECK-NEXT:    %[[M:.*]] = uop.load %[[PM]] : i32
// CHECK-NEXT:    arm_dsp.depthwise_short_rows %[[PX]], %[[PW]], [%a, %b, %e], %[[M]], %addend, %[[PY]] {rows = #builtin.int<3>, x_row = #builtin.int<6>, count = #builtin.int<4>, x_next = #builtin.int<6>, y_step = #builtin.int<128>, y_next = #builtin.int<768>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
// CHECK-NOT:     uop.range
// CHECK-NOT:     arm_dsp.depthwise_short_row 
// CHECK:         func.return
func.func @short_rows(%x : !uop.buffer<4608xi8>, %w : !uop.buffer<768xi32>, %mt : !uop.buffer<128xi32>, %y : !uop.buffer<4608xi8>, %c : index, %a : i32, %b : i32, %e : i32) {
  %addend = uop.const -510 : i32
  %two = uop.const 2 : i32
  uop.range %oy = 1 to 5 step 1 {
    %plane = uop.const 36 : index
    %cx = uop.mul %c, %plane : index
    %six = uop.const 6 : index
    %ox = uop.mul %oy, %six : index
    %at0 = uop.add %cx, %ox : index
    %back = uop.const -6 : index
    %at = uop.add %at0, %back : index
    %px = uop.gep inbounds %x[%at] : !uop.buffer<4608xi8>
    %cw = uop.mul %c, %six : index
    %pw = uop.gep inbounds %w[%cw] : !uop.buffer<768xi32>
    %r0, %r1, %r2, %r3, %r4, %r5 = arm_dsp.depthwise_short_row %px, %pw, %a, %b, %e {rows = #builtin.int<3>, x_row = #builtin.int<6>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32
    %ystride = uop.const 768 : index
    %yrow = uop.mul %oy, %ystride : index
    %pm0 = uop.gep inbounds %mt[%c] : !uop.buffer<128xi32>
    %m0 = uop.load %pm0 : i32
    %s0 = arm_dsp.smmla %r0, %m0, %addend : i32
    %h0 = uop.shr %s0, %two : i32
    %t0 = arm_dsp.ssat %h0 {bits = #builtin.int<8>, shift = #builtin.int<0>} : i32
    %n0 = uop.cast %t0 : i32 to i8
    %q0k = uop.const 0 : index
    %q0a = uop.add %yrow, %q0k : index
    %q0 = uop.add %q0a, %c : index
    %py0 = uop.gep inbounds %y[%q0] : !uop.buffer<4608xi8>
    uop.store %n0, %py0 : i8
    %pm1 = uop.gep inbounds %mt[%c] : !uop.buffer<128xi32>
    %m1 = uop.load %pm1 : i32
    %s1 = arm_dsp.smmla %r1, %m1, %addend : i32
    %h1 = uop.shr %s1, %two : i32
    %t1 = arm_dsp.ssat %h1 {bits = #builtin.int<8>, shift = #builtin.int<0>} : i32
    %n1 = uop.cast %t1 : i32 to i8
    %q1k = uop.const 128 : index
    %q1a = uop.add %yrow, %q1k : index
    %q1 = uop.add %q1a, %c : index
    %py1 = uop.gep inbounds %y[%q1] : !uop.buffer<4608xi8>
    uop.store %n1, %py1 : i8
    %pm2 = uop.gep inbounds %mt[%c] : !uop.buffer<128xi32>
    %m2 = uop.load %pm2 : i32
    %s2 = arm_dsp.smmla %r2, %m2, %addend : i32
    %h2 = uop.shr %s2, %two : i32
    %t2 = arm_dsp.ssat %h2 {bits = #builtin.int<8>, shift = #builtin.int<0>} : i32
    %n2 = uop.cast %t2 : i32 to i8
    %q2k = uop.const 256 : index
    %q2a = uop.add %yrow, %q2k : index
    %q2 = uop.add %q2a, %c : index
    %py2 = uop.gep inbounds %y[%q2] : !uop.buffer<4608xi8>
    uop.store %n2, %py2 : i8
    %pm3 = uop.gep inbounds %mt[%c] : !uop.buffer<128xi32>
    %m3 = uop.load %pm3 : i32
    %s3 = arm_dsp.smmla %r3, %m3, %addend : i32
    %h3 = uop.shr %s3, %two : i32
    %t3 = arm_dsp.ssat %h3 {bits = #builtin.int<8>, shift = #builtin.int<0>} : i32
    %n3 = uop.cast %t3 : i32 to i8
    %q3k = uop.const 384 : index
    %q3a = uop.add %yrow, %q3k : index
    %q3 = uop.add %q3a, %c : index
    %py3 = uop.gep inbounds %y[%q3] : !uop.buffer<4608xi8>
    uop.store %n3, %py3 : i8
    %pm4 = uop.gep inbounds %mt[%c] : !uop.buffer<128xi32>
    %m4 = uop.load %pm4 : i32
    %s4 = arm_dsp.smmla %r4, %m4, %addend : i32
    %h4 = uop.shr %s4, %two : i32
    %t4 = arm_dsp.ssat %h4 {bits = #builtin.int<8>, shift = #builtin.int<0>} : i32
    %n4 = uop.cast %t4 : i32 to i8
    %q4k = uop.const 512 : index
    %q4a = uop.add %yrow, %q4k : index
    %q4 = uop.add %q4a, %c : index
    %py4 = uop.gep inbounds %y[%q4] : !uop.buffer<4608xi8>
    uop.store %n4, %py4 : i8
    %pm5 = uop.gep inbounds %mt[%c] : !uop.buffer<128xi32>
    %m5 = uop.load %pm5 : i32
    %s5 = arm_dsp.smmla %r5, %m5, %addend : i32
    %h5 = uop.shr %s5, %two : i32
    %t5 = arm_dsp.ssat %h5 {bits = #builtin.int<8>, shift = #builtin.int<0>} : i32
    %n5 = uop.cast %t5 : i32 to i8
    %q5k = uop.const 640 : index
    %q5a = uop.add %yrow, %q5k : index
    %q5 = uop.add %q5a, %c : index
    %py5 = uop.gep inbounds %y[%q5] : !uop.buffer<4608xi8>
    uop.store %n5, %py5 : i8
  }
  func.return
}

// -----

// A requantization of another width (16 bits) keeps the loop.
// CHECK-LABEL: func.func @short_rows_kept
// CHECK:         uop.range
// CHECK:         arm_dsp.depthwise_short_row %
// CHECK-NOT:     arm_dsp.depthwise_short_rows
func.func @short_rows_kept(%x : !uop.buffer<4608xi8>, %w : !uop.buffer<768xi32>, %mt : !uop.buffer<128xi32>, %y : !uop.buffer<4608xi8>, %c : index, %a : i32, %b : i32, %e : i32) {
  %addend = uop.const -510 : i32
  %two = uop.const 2 : i32
  uop.range %oy = 1 to 5 step 1 {
    %plane = uop.const 36 : index
    %cx = uop.mul %c, %plane : index
    %six = uop.const 6 : index
    %ox = uop.mul %oy, %six : index
    %at0 = uop.add %cx, %ox : index
    %back = uop.const -6 : index
    %at = uop.add %at0, %back : index
    %px = uop.gep inbounds %x[%at] : !uop.buffer<4608xi8>
    %cw = uop.mul %c, %six : index
    %pw = uop.gep inbounds %w[%cw] : !uop.buffer<768xi32>
    %r0, %r1, %r2, %r3, %r4, %r5 = arm_dsp.depthwise_short_row %px, %pw, %a, %b, %e {rows = #builtin.int<3>, x_row = #builtin.int<6>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32
    %ystride = uop.const 768 : index
    %yrow = uop.mul %oy, %ystride : index
    %pm0 = uop.gep inbounds %mt[%c] : !uop.buffer<128xi32>
    %m0 = uop.load %pm0 : i32
    %s0 = arm_dsp.smmla %r0, %m0, %addend : i32
    %h0 = uop.shr %s0, %two : i32
    %t0 = arm_dsp.ssat %h0 {bits = #builtin.int<16>, shift = #builtin.int<0>} : i32
    %n0 = uop.cast %t0 : i32 to i8
    %q0k = uop.const 0 : index
    %q0a = uop.add %yrow, %q0k : index
    %q0 = uop.add %q0a, %c : index
    %py0 = uop.gep inbounds %y[%q0] : !uop.buffer<4608xi8>
    uop.store %n0, %py0 : i8
    %pm1 = uop.gep inbounds %mt[%c] : !uop.buffer<128xi32>
    %m1 = uop.load %pm1 : i32
    %s1 = arm_dsp.smmla %r1, %m1, %addend : i32
    %h1 = uop.shr %s1, %two : i32
    %t1 = arm_dsp.ssat %h1 {bits = #builtin.int<8>, shift = #builtin.int<0>} : i32
    %n1 = uop.cast %t1 : i32 to i8
    %q1k = uop.const 128 : index
    %q1a = uop.add %yrow, %q1k : index
    %q1 = uop.add %q1a, %c : index
    %py1 = uop.gep inbounds %y[%q1] : !uop.buffer<4608xi8>
    uop.store %n1, %py1 : i8
    %pm2 = uop.gep inbounds %mt[%c] : !uop.buffer<128xi32>
    %m2 = uop.load %pm2 : i32
    %s2 = arm_dsp.smmla %r2, %m2, %addend : i32
    %h2 = uop.shr %s2, %two : i32
    %t2 = arm_dsp.ssat %h2 {bits = #builtin.int<8>, shift = #builtin.int<0>} : i32
    %n2 = uop.cast %t2 : i32 to i8
    %q2k = uop.const 256 : index
    %q2a = uop.add %yrow, %q2k : index
    %q2 = uop.add %q2a, %c : index
    %py2 = uop.gep inbounds %y[%q2] : !uop.buffer<4608xi8>
    uop.store %n2, %py2 : i8
    %pm3 = uop.gep inbounds %mt[%c] : !uop.buffer<128xi32>
    %m3 = uop.load %pm3 : i32
    %s3 = arm_dsp.smmla %r3, %m3, %addend : i32
    %h3 = uop.shr %s3, %two : i32
    %t3 = arm_dsp.ssat %h3 {bits = #builtin.int<8>, shift = #builtin.int<0>} : i32
    %n3 = uop.cast %t3 : i32 to i8
    %q3k = uop.const 384 : index
    %q3a = uop.add %yrow, %q3k : index
    %q3 = uop.add %q3a, %c : index
    %py3 = uop.gep inbounds %y[%q3] : !uop.buffer<4608xi8>
    uop.store %n3, %py3 : i8
    %pm4 = uop.gep inbounds %mt[%c] : !uop.buffer<128xi32>
    %m4 = uop.load %pm4 : i32
    %s4 = arm_dsp.smmla %r4, %m4, %addend : i32
    %h4 = uop.shr %s4, %two : i32
    %t4 = arm_dsp.ssat %h4 {bits = #builtin.int<8>, shift = #builtin.int<0>} : i32
    %n4 = uop.cast %t4 : i32 to i8
    %q4k = uop.const 512 : index
    %q4a = uop.add %yrow, %q4k : index
    %q4 = uop.add %q4a, %c : index
    %py4 = uop.gep inbounds %y[%q4] : !uop.buffer<4608xi8>
    uop.store %n4, %py4 : i8
    %pm5 = uop.gep inbounds %mt[%c] : !uop.buffer<128xi32>
    %m5 = uop.load %pm5 : i32
    %s5 = arm_dsp.smmla %r5, %m5, %addend : i32
    %h5 = uop.shr %s5, %two : i32
    %t5 = arm_dsp.ssat %h5 {bits = #builtin.int<8>, shift = #builtin.int<0>} : i32
    %n5 = uop.cast %t5 : i32 to i8
    %q5k = uop.const 640 : index
    %q5a = uop.add %yrow, %q5k : index
    %q5 = uop.add %q5a, %c : index
    %py5 = uop.gep inbounds %y[%q5] : !uop.buffer<4608xi8>
    uop.store %n5, %py5 : i8
  }
  func.return
}
