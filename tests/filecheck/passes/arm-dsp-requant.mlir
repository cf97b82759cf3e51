// RUN: zant-opt %s --split-input-file -p arm-dsp-requant | filecheck %s

// A fully connected block's sum requantized with a per-channel multiplier table and one shift of
// 43 (fully_connected.py's epilogue from quant.py's common shift), zero point -4 (an i8 literal
// widened): one smmla whose addend is 2^10 + (-4)·2^11 = -7168, then ssat to 8 bits shifting by
// 11. The table's widening to i64 goes with the multiply.
// CHECK-LABEL: func.func @table
// CHECK:         %[[S:.*]], %{{.*}}, %{{.*}}, %{{.*}} = arm_dsp.smlad_rows
// CHECK:         %[[M:.*]] = uop.load %{{.*}} : i32
// CHECK-NEXT:    %[[C:.*]] = uop.const -7168 : i32
// CHECK-NEXT:    %[[R:.*]] = arm_dsp.smmla %[[S]], %[[M]], %[[C]] : i32
// CHECK-NEXT:    %[[Y:.*]] = arm_dsp.ssat %[[R]] {bits = #builtin.int<8>, shift = #builtin.int<11>} : i32
// CHECK-NEXT:    %{{.*}} = uop.cast %[[Y]] : i32 to i8
// CHECK-NOT:     uop.shr
// CHECK-NOT:     i64
func.func @table(%x : !uop.buffer<16xi16>, %w : !uop.buffer<64xi8>, %mt : !uop.buffer<4xi32>, %y : !uop.buffer<4xi8>) {
  %half = uop.const 4398046511104 : i64
  %by = uop.const 43 : i64
  %zp8 = uop.const -4 : i8
  %zp = uop.cast %zp8 : i8 to i32
  %lo = uop.const -128 : i32
  %hi = uop.const 127 : i32
  %zero = uop.const 0 : index
  %c = uop.const 0 : i32
  %pa = uop.gep %x[%zero] : !uop.buffer<16xi16>
  %pb = uop.gep %w[%zero] : !uop.buffer<64xi8>
  %s0, %s1, %s2, %s3 = arm_dsp.smlad_rows %pa, %pb, %c {steps = #builtin.int<4>, rows = #builtin.int<4>} : !uop.ptr<i16>, !uop.ptr<i8> -> i32, i32, i32, i32
  %w0 = uop.cast %s0 : i32 to i64
  %pm = uop.gep %mt[%zero] : !uop.buffer<4xi32>
  %m = uop.load %pm : i32
  %m64 = uop.cast %m : i32 to i64
  %p = uop.mul %w0, %m64 : i64
  %q = uop.add %p, %half : i64
  %v = uop.shr %q, %by : i64
  %n = uop.cast %v : i64 to i32
  %z = uop.add %n, %zp : i32
  %a = uop.max %z, %lo : i32
  %b = uop.min %a, %hi : i32
  %out = uop.cast %b : i32 to i8
  %py = uop.gep %y[%zero] : !uop.buffer<4xi8>
  uop.store %out, %py : i8
  func.return
}

// -----

// A constant multiplier, the sums' arithmetic left in i64 (quant.py's wide case), and a ReLU's
// lower bound 5 above the type's minimum: the multiplier an i32 literal, the addend 2^0 + 5·2^1,
// the ReLU's bound a max after the ssat, back to i64 for the cast that reads it.
// CHECK-LABEL: func.func @literal
// CHECK:         %[[S:.*]], %{{.*}}, %{{.*}}, %{{.*}} = arm_dsp.smlad_rows
// CHECK-NEXT:    %[[M:.*]] = uop.const 1462485120 : i32
// CHECK-NEXT:    %[[C:.*]] = uop.const 11 : i32
// CHECK-NEXT:    %[[R:.*]] = arm_dsp.smmla %[[S]], %[[M]], %[[C]] : i32
// CHECK-NEXT:    %[[Y:.*]] = arm_dsp.ssat %[[R]] {bits = #builtin.int<8>, shift = #builtin.int<1>} : i32
// CHECK-NEXT:    %[[L:.*]] = uop.const 5 : i32
// CHECK-NEXT:    %[[Z:.*]] = uop.max %[[Y]], %[[L]] : i32
// CHECK-NEXT:    %[[W:.*]] = uop.cast %[[Z]] : i32 to i64
// CHECK-NEXT:    %{{.*}} = uop.cast %[[W]] : i64 to i8
func.func @literal(%x : !uop.buffer<16xi16>, %w : !uop.buffer<64xi8>, %y : !uop.buffer<4xi8>) {
  %m = uop.const 1462485120 : i64
  %half = uop.const 4294967296 : i64
  %by = uop.const 33 : i64
  %zp = uop.const 5 : i64
  %lo = uop.const 5 : i64
  %hi = uop.const 127 : i64
  %zero = uop.const 0 : index
  %c = uop.const 0 : i32
  %pa = uop.gep %x[%zero] : !uop.buffer<16xi16>
  %pb = uop.gep %w[%zero] : !uop.buffer<64xi8>
  %s0, %s1, %s2, %s3 = arm_dsp.smlad_rows %pa, %pb, %c {steps = #builtin.int<4>, rows = #builtin.int<4>} : !uop.ptr<i16>, !uop.ptr<i8> -> i32, i32, i32, i32
  %w0 = uop.cast %s0 : i32 to i64
  %p = uop.mul %m, %w0 : i64
  %q = uop.add %half, %p : i64
  %v = uop.shr %q, %by : i64
  %z = uop.add %v, %zp : i64
  %a = uop.max %z, %lo : i64
  %b = uop.min %a, %hi : i64
  %out = uop.cast %b : i64 to i8
  %py = uop.gep %y[%zero] : !uop.buffer<4xi8>
  uop.store %out, %py : i8
  func.return
}

// -----

// Unchanged: a shift of 32 (its addend 2^31 is not a multiple of 2^32, so SMMLA's floor of the
// high word would round differently), and a sum that no smlad_rows made.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     arm_dsp.smmla
// CHECK-NOT:     arm_dsp.ssat
// CHECK:         func.return
func.func @kept(%x : !uop.buffer<16xi16>, %w : !uop.buffer<64xi8>, %s : i32) -> (i32, i32) {
  %m = uop.const 1462485120 : i64
  %half = uop.const 2147483648 : i64
  %by = uop.const 32 : i64
  %half2 = uop.const 4294967296 : i64
  %by2 = uop.const 33 : i64
  %lo = uop.const -128 : i32
  %hi = uop.const 127 : i32
  %zero = uop.const 0 : index
  %c = uop.const 0 : i32
  %pa = uop.gep %x[%zero] : !uop.buffer<16xi16>
  %pb = uop.gep %w[%zero] : !uop.buffer<64xi8>
  %s0, %s1, %s2, %s3 = arm_dsp.smlad_rows %pa, %pb, %c {steps = #builtin.int<4>, rows = #builtin.int<4>} : !uop.ptr<i16>, !uop.ptr<i8> -> i32, i32, i32, i32
  %w0 = uop.cast %s0 : i32 to i64
  %p = uop.mul %w0, %m : i64
  %q = uop.add %p, %half : i64
  %v = uop.shr %q, %by : i64
  %n = uop.cast %v : i64 to i32
  %a = uop.max %n, %lo : i32
  %b = uop.min %a, %hi : i32
  %w1 = uop.cast %s : i32 to i64
  %p1 = uop.mul %w1, %m : i64
  %q1 = uop.add %p1, %half2 : i64
  %v1 = uop.shr %q1, %by2 : i64
  %n1 = uop.cast %v1 : i64 to i32
  %a1 = uop.max %n1, %lo : i32
  %b1 = uop.min %a1, %hi : i32
  func.return %b, %b1 : i32, i32
}

// -----

// A layer's loop over its 3 blocks of 5 rows, each block's sums requantized with one literal
// multiplier and addend and stored at y[5·block + r] (a ReLU at -128 on the way, nothing to
// do): one arm_dsp.smlad_layer before the loop, from the blocks' first pointers and the layer's
// first output; the loop gone.
// CHECK-LABEL: func.func @layer
// CHECK:         %[[Y:.*]] = uop.gep inbounds %y[%{{.*}}] : !uop.buffer<15xi8>
// CHECK:         %[[PA:.*]] = uop.gep inbounds %x[%{{.*}}] : !uop.buffer<16xi16>
// CHECK-NEXT:    %[[PB:.*]] = uop.gep inbounds %w[%{{.*}}] : !uop.buffer<300xi8>
// CHECK-NEXT:    arm_dsp.smlad_layer %[[PA]], %[[PB]], %shared, %[[Y]] {steps = #builtin.int<4>, blocks = #builtin.int<3>, multiplier = #builtin.int<1462485120>, addend = #builtin.int<-7168>, shift = #builtin.int<11>} : !uop.ptr<i16>, !uop.ptr<i8>, !uop.ptr<i8>
// CHECK-NOT:     uop.range
// CHECK-NOT:     arm_dsp.smlad_rows
// CHECK:         func.return
func.func @layer(%x : !uop.buffer<16xi16>, %w : !uop.buffer<300xi8>, %y : !uop.buffer<15xi8>, %shared : i32) {
  %m = uop.const 1462485120 : i64
  %half = uop.const 4398046511104 : i64
  %by = uop.const 43 : i64
  %zp8 = uop.const -4 : i8
  %zp = uop.cast %zp8 : i8 to i32
  %lo = uop.const -128 : i32
  %hi = uop.const 127 : i32
  %relu = uop.const -128 : i8
  uop.range %b = 0 to 3 {
    %five = uop.const 5 : index
    %first = uop.mul %b, %five : index
    %zero = uop.const 0 : index
    %pa = uop.gep inbounds %x[%zero] : !uop.buffer<16xi16>
    %stride = uop.const 100 : index
    %at = uop.mul %b, %stride : index
    %pb = uop.gep inbounds %w[%at] : !uop.buffer<300xi8>
    %s0, %s1, %s2, %s3, %s4 = arm_dsp.smlad_rows %pa, %pb, %shared {steps = #builtin.int<4>, rows = #builtin.int<5>} : !uop.ptr<i16>, !uop.ptr<i8> -> i32, i32, i32, i32, i32
    %w0 = uop.cast %s0 : i32 to i64
    %p0 = uop.mul %w0, %m : i64
    %q0 = uop.add %p0, %half : i64
    %v0 = uop.shr %q0, %by : i64
    %n0 = uop.cast %v0 : i64 to i32
    %z0 = uop.add %n0, %zp : i32
    %a0 = uop.max %z0, %lo : i32
    %c0 = uop.min %a0, %hi : i32
    %o0 = uop.cast %c0 : i32 to i8
    %r0 = uop.max %o0, %relu : i8
    %g0 = uop.gep inbounds %y[%first] : !uop.buffer<15xi8>
    uop.store %r0, %g0 : i8
    %w1 = uop.cast %s1 : i32 to i64
    %p1 = uop.mul %w1, %m : i64
    %q1 = uop.add %p1, %half : i64
    %v1 = uop.shr %q1, %by : i64
    %n1 = uop.cast %v1 : i64 to i32
    %z1 = uop.add %n1, %zp : i32
    %a1 = uop.max %z1, %lo : i32
    %c1 = uop.min %a1, %hi : i32
    %o1 = uop.cast %c1 : i32 to i8
    %one = uop.const 1 : index
    %i1 = uop.add %first, %one : index
    %g1 = uop.gep inbounds %y[%i1] : !uop.buffer<15xi8>
    uop.store %o1, %g1 : i8
    %w2 = uop.cast %s2 : i32 to i64
    %p2 = uop.mul %w2, %m : i64
    %q2 = uop.add %p2, %half : i64
    %v2 = uop.shr %q2, %by : i64
    %n2 = uop.cast %v2 : i64 to i32
    %z2 = uop.add %n2, %zp : i32
    %a2 = uop.max %z2, %lo : i32
    %c2 = uop.min %a2, %hi : i32
    %o2 = uop.cast %c2 : i32 to i8
    %two = uop.const 2 : index
    %i2 = uop.add %first, %two : index
    %g2 = uop.gep inbounds %y[%i2] : !uop.buffer<15xi8>
    uop.store %o2, %g2 : i8
    %w3 = uop.cast %s3 : i32 to i64
    %p3 = uop.mul %w3, %m : i64
    %q3 = uop.add %p3, %half : i64
    %v3 = uop.shr %q3, %by : i64
    %n3 = uop.cast %v3 : i64 to i32
    %z3 = uop.add %n3, %zp : i32
    %a3 = uop.max %z3, %lo : i32
    %c3 = uop.min %a3, %hi : i32
    %o3 = uop.cast %c3 : i32 to i8
    %three = uop.const 3 : index
    %i3 = uop.add %first, %three : index
    %g3 = uop.gep inbounds %y[%i3] : !uop.buffer<15xi8>
    uop.store %o3, %g3 : i8
    %w4 = uop.cast %s4 : i32 to i64
    %p4 = uop.mul %w4, %m : i64
    %q4 = uop.add %p4, %half : i64
    %v4 = uop.shr %q4, %by : i64
    %n4 = uop.cast %v4 : i64 to i32
    %z4 = uop.add %n4, %zp : i32
    %a4 = uop.max %z4, %lo : i32
    %c4 = uop.min %a4, %hi : i32
    %o4 = uop.cast %c4 : i32 to i8
    %four = uop.const 4 : index
    %i4 = uop.add %first, %four : index
    %g4 = uop.gep inbounds %y[%i4] : !uop.buffer<15xi8>
    uop.store %o4, %g4 : i8
  }
  func.return
}

// -----

// Unchanged: a shift of 57 with zero point 40, whose addend 2^24 + 40·2^25 fits int32 but not
// [-2^30, 2^30): SMMLA's high word (up to 2^30) plus it would wrap, and an output that saturates
// at 127 would come out -128.
// CHECK-LABEL: func.func @wraps
// CHECK-NOT:     arm_dsp.smmla
// CHECK:         func.return
func.func @wraps(%x : !uop.buffer<16xi16>, %w : !uop.buffer<64xi8>) -> i32 {
  %m = uop.const 1462485120 : i64
  %half = uop.const 72057594037927936 : i64
  %by = uop.const 57 : i64
  %zp = uop.const 40 : i32
  %lo = uop.const -128 : i32
  %hi = uop.const 127 : i32
  %zero = uop.const 0 : index
  %c = uop.const 0 : i32
  %pa = uop.gep %x[%zero] : !uop.buffer<16xi16>
  %pb = uop.gep %w[%zero] : !uop.buffer<64xi8>
  %s0, %s1, %s2, %s3 = arm_dsp.smlad_rows %pa, %pb, %c {steps = #builtin.int<4>, rows = #builtin.int<4>} : !uop.ptr<i16>, !uop.ptr<i8> -> i32, i32, i32, i32
  %w0 = uop.cast %s0 : i32 to i64
  %p = uop.mul %w0, %m : i64
  %q = uop.add %p, %half : i64
  %v = uop.shr %q, %by : i64
  %n = uop.cast %v : i64 to i32
  %z = uop.add %n, %zp : i32
  %a = uop.max %z, %lo : i32
  %b = uop.min %a, %hi : i32
  func.return %b : i32
}
