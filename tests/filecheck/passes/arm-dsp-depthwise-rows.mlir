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
