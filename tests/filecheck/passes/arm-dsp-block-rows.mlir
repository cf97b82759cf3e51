// RUN: zant-opt %s -p arm-dsp-block-rows --split-input-file | filecheck %s
// RUN: zant-opt %s -p arm-dsp-block-rows --split-input-file | zant-opt --split-input-file | filecheck %s

// A first conv's row of 4 x 2 blocks (conv_first, after arm-dsp-requant-sums): per pair of
// pixels q, a smlad_block of the column's words for pixels 2q, 2q + 1 (3 words each: 6 words
// on per pair) and the weights' 4 rows (fixed), the sums from 0, each plus its row's bias,
// requantized (SMMLA by its row's multiplier, SSAT) and stored in NCHW (rows 6 bytes apart,
// pixels 1). The loop becomes one smlad_block_row before it, from its first iteration's
// addresses, the biases and the multipliers loaded once.
// CHECK-LABEL: func.func @row(
// CHECK-NOT:     uop.range
// CHECK:         %[[PA:.*]] = uop.gep inbounds %col[%{{.*}}] : !uop.buffer<24xi32>
// CHECK:         %[[PY:.*]] = uop.gep inbounds %y[%{{.*}}] : !uop.buffer<24xi8>
// CHECK:         %[[M0:.*]] = uop.load %{{.*}} : i32
// CHECK:         %[[M1:.*]] = uop.load %{{.*}} : i32
// CHECK:         %[[M2:.*]] = uop.load %{{.*}} : i32
// CHECK:         %[[M3:.*]] = uop.load %{{.*}} : i32
// CHECK-NEXT:    arm_dsp.smlad_block_row %[[PA]], %pb, %[[PY]], %b0, %b1, %b2, %b3, %[[M0]], %[[M1]], %[[M2]], %[[M3]] {steps = #builtin.int<3>, a_next = #builtin.int<3>, b_next = #builtin.int<3>, pairs = #builtin.int<3>, a_pair = #builtin.int<6>, y_pair = #builtin.int<2>, y_next = #builtin.int<6>, y_pixel = #builtin.int<1>, addend = #builtin.int<-1280>, shift = #builtin.int<9>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
// CHECK-NOT:     uop.range
// CHECK:         func.return
func.func @row(%bias: !uop.buffer<4xi32>, %col: !uop.buffer<24xi32>, %w: !uop.buffer<12xi32>, %mult: !uop.buffer<4xi32>, %y: !uop.buffer<24xi8>) {
  %zp = uop.const -1280 : i32
  %zero = uop.const 0 : i32
  %i0 = uop.const 0 : index
  %m0 = uop.const 0 : index
  %gb0 = uop.gep inbounds %bias[%m0] : !uop.buffer<4xi32>
  %b0 = uop.load %gb0 : i32
  %m1 = uop.const 1 : index
  %gb1 = uop.gep inbounds %bias[%m1] : !uop.buffer<4xi32>
  %b1 = uop.load %gb1 : i32
  %m2 = uop.const 2 : index
  %gb2 = uop.gep inbounds %bias[%m2] : !uop.buffer<4xi32>
  %b2 = uop.load %gb2 : i32
  %m3 = uop.const 3 : index
  %gb3 = uop.gep inbounds %bias[%m3] : !uop.buffer<4xi32>
  %b3 = uop.load %gb3 : i32
  %pb = uop.gep inbounds %w[%i0] : !uop.buffer<12xi32>
  uop.range %q = 0 to 3 {
    %two = uop.const 2 : index
    %p = uop.mul %q, %two : index
    %one = uop.const 1 : index
    %p1 = uop.add %p, %one : index
    %three = uop.const 3 : index
    %ci = uop.mul %p, %three : index
    %pa = uop.gep inbounds %col[%ci] : !uop.buffer<24xi32>
    %r00, %r01, %r10, %r11, %r20, %r21, %r30, %r31 = arm_dsp.smlad_block %pa, %pb, %zero, %zero, %zero, %zero, %zero, %zero, %zero, %zero {steps = #builtin.int<3>, a_next = #builtin.int<3>, b_next = #builtin.int<3>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32, i32, i32
    %six = uop.const 6 : index
    %row0 = uop.mul %m0, %six : index
    %s00 = uop.add %r00, %b0 : i32
    %k00 = uop.gep inbounds %mult[%m0] : !uop.buffer<4xi32>
    %n00 = uop.load %k00 : i32
    %h00 = arm_dsp.smmla %s00, %n00, %zp : i32
    %t00 = arm_dsp.ssat %h00 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v00 = uop.cast %t00 : i32 to i8
    %i00 = uop.add %row0, %p : index
    %y00 = uop.gep inbounds %y[%i00] : !uop.buffer<24xi8>
    uop.store %v00, %y00 : i8
    %s01 = uop.add %r01, %b0 : i32
    %k01 = uop.gep inbounds %mult[%m0] : !uop.buffer<4xi32>
    %n01 = uop.load %k01 : i32
    %h01 = arm_dsp.smmla %s01, %n01, %zp : i32
    %t01 = arm_dsp.ssat %h01 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v01 = uop.cast %t01 : i32 to i8
    %i01 = uop.add %row0, %p1 : index
    %y01 = uop.gep inbounds %y[%i01] : !uop.buffer<24xi8>
    uop.store %v01, %y01 : i8
    %row1 = uop.mul %m1, %six : index
    %s10 = uop.add %r10, %b1 : i32
    %k10 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
    %n10 = uop.load %k10 : i32
    %h10 = arm_dsp.smmla %s10, %n10, %zp : i32
    %t10 = arm_dsp.ssat %h10 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v10 = uop.cast %t10 : i32 to i8
    %i10 = uop.add %row1, %p : index
    %y10 = uop.gep inbounds %y[%i10] : !uop.buffer<24xi8>
    uop.store %v10, %y10 : i8
    %s11 = uop.add %r11, %b1 : i32
    %k11 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
    %n11 = uop.load %k11 : i32
    %h11 = arm_dsp.smmla %s11, %n11, %zp : i32
    %t11 = arm_dsp.ssat %h11 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v11 = uop.cast %t11 : i32 to i8
    %i11 = uop.add %row1, %p1 : index
    %y11 = uop.gep inbounds %y[%i11] : !uop.buffer<24xi8>
    uop.store %v11, %y11 : i8
    %row2 = uop.mul %m2, %six : index
    %s20 = uop.add %r20, %b2 : i32
    %k20 = uop.gep inbounds %mult[%m2] : !uop.buffer<4xi32>
    %n20 = uop.load %k20 : i32
    %h20 = arm_dsp.smmla %s20, %n20, %zp : i32
    %t20 = arm_dsp.ssat %h20 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v20 = uop.cast %t20 : i32 to i8
    %i20 = uop.add %row2, %p : index
    %y20 = uop.gep inbounds %y[%i20] : !uop.buffer<24xi8>
    uop.store %v20, %y20 : i8
    %s21 = uop.add %r21, %b2 : i32
    %k21 = uop.gep inbounds %mult[%m2] : !uop.buffer<4xi32>
    %n21 = uop.load %k21 : i32
    %h21 = arm_dsp.smmla %s21, %n21, %zp : i32
    %t21 = arm_dsp.ssat %h21 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v21 = uop.cast %t21 : i32 to i8
    %i21 = uop.add %row2, %p1 : index
    %y21 = uop.gep inbounds %y[%i21] : !uop.buffer<24xi8>
    uop.store %v21, %y21 : i8
    %row3 = uop.mul %m3, %six : index
    %s30 = uop.add %r30, %b3 : i32
    %k30 = uop.gep inbounds %mult[%m3] : !uop.buffer<4xi32>
    %n30 = uop.load %k30 : i32
    %h30 = arm_dsp.smmla %s30, %n30, %zp : i32
    %t30 = arm_dsp.ssat %h30 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v30 = uop.cast %t30 : i32 to i8
    %i30 = uop.add %row3, %p : index
    %y30 = uop.gep inbounds %y[%i30] : !uop.buffer<24xi8>
    uop.store %v30, %y30 : i8
    %s31 = uop.add %r31, %b3 : i32
    %k31 = uop.gep inbounds %mult[%m3] : !uop.buffer<4xi32>
    %n31 = uop.load %k31 : i32
    %h31 = arm_dsp.smmla %s31, %n31, %zp : i32
    %t31 = arm_dsp.ssat %h31 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v31 = uop.cast %t31 : i32 to i8
    %i31 = uop.add %row3, %p1 : index
    %y31 = uop.gep inbounds %y[%i31] : !uop.buffer<24xi8>
    uop.store %v31, %y31 : i8
  }
  func.return
}

// -----

// Sums that do not start at 0 (the form adds the biases itself): unchanged.
// CHECK-LABEL: func.func @addend(
// CHECK:         uop.range
// CHECK:           arm_dsp.smlad_block %
// CHECK-NOT:     arm_dsp.smlad_block_row
func.func @addend(%bias: !uop.buffer<4xi32>, %col: !uop.buffer<24xi32>, %w: !uop.buffer<12xi32>, %mult: !uop.buffer<4xi32>, %y: !uop.buffer<24xi8>) {
  %zp = uop.const -1280 : i32
  %zero = uop.const 1 : i32
  %i0 = uop.const 0 : index
  %m0 = uop.const 0 : index
  %gb0 = uop.gep inbounds %bias[%m0] : !uop.buffer<4xi32>
  %b0 = uop.load %gb0 : i32
  %m1 = uop.const 1 : index
  %gb1 = uop.gep inbounds %bias[%m1] : !uop.buffer<4xi32>
  %b1 = uop.load %gb1 : i32
  %m2 = uop.const 2 : index
  %gb2 = uop.gep inbounds %bias[%m2] : !uop.buffer<4xi32>
  %b2 = uop.load %gb2 : i32
  %m3 = uop.const 3 : index
  %gb3 = uop.gep inbounds %bias[%m3] : !uop.buffer<4xi32>
  %b3 = uop.load %gb3 : i32
  %pb = uop.gep inbounds %w[%i0] : !uop.buffer<12xi32>
  uop.range %q = 0 to 3 {
    %two = uop.const 2 : index
    %p = uop.mul %q, %two : index
    %one = uop.const 1 : index
    %p1 = uop.add %p, %one : index
    %three = uop.const 3 : index
    %ci = uop.mul %p, %three : index
    %pa = uop.gep inbounds %col[%ci] : !uop.buffer<24xi32>
    %r00, %r01, %r10, %r11, %r20, %r21, %r30, %r31 = arm_dsp.smlad_block %pa, %pb, %zero, %zero, %zero, %zero, %zero, %zero, %zero, %zero {steps = #builtin.int<3>, a_next = #builtin.int<3>, b_next = #builtin.int<3>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32, i32, i32
    %six = uop.const 6 : index
    %row0 = uop.mul %m0, %six : index
    %s00 = uop.add %r00, %b0 : i32
    %k00 = uop.gep inbounds %mult[%m0] : !uop.buffer<4xi32>
    %n00 = uop.load %k00 : i32
    %h00 = arm_dsp.smmla %s00, %n00, %zp : i32
    %t00 = arm_dsp.ssat %h00 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v00 = uop.cast %t00 : i32 to i8
    %i00 = uop.add %row0, %p : index
    %y00 = uop.gep inbounds %y[%i00] : !uop.buffer<24xi8>
    uop.store %v00, %y00 : i8
    %s01 = uop.add %r01, %b0 : i32
    %k01 = uop.gep inbounds %mult[%m0] : !uop.buffer<4xi32>
    %n01 = uop.load %k01 : i32
    %h01 = arm_dsp.smmla %s01, %n01, %zp : i32
    %t01 = arm_dsp.ssat %h01 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v01 = uop.cast %t01 : i32 to i8
    %i01 = uop.add %row0, %p1 : index
    %y01 = uop.gep inbounds %y[%i01] : !uop.buffer<24xi8>
    uop.store %v01, %y01 : i8
    %row1 = uop.mul %m1, %six : index
    %s10 = uop.add %r10, %b1 : i32
    %k10 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
    %n10 = uop.load %k10 : i32
    %h10 = arm_dsp.smmla %s10, %n10, %zp : i32
    %t10 = arm_dsp.ssat %h10 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v10 = uop.cast %t10 : i32 to i8
    %i10 = uop.add %row1, %p : index
    %y10 = uop.gep inbounds %y[%i10] : !uop.buffer<24xi8>
    uop.store %v10, %y10 : i8
    %s11 = uop.add %r11, %b1 : i32
    %k11 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
    %n11 = uop.load %k11 : i32
    %h11 = arm_dsp.smmla %s11, %n11, %zp : i32
    %t11 = arm_dsp.ssat %h11 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v11 = uop.cast %t11 : i32 to i8
    %i11 = uop.add %row1, %p1 : index
    %y11 = uop.gep inbounds %y[%i11] : !uop.buffer<24xi8>
    uop.store %v11, %y11 : i8
    %row2 = uop.mul %m2, %six : index
    %s20 = uop.add %r20, %b2 : i32
    %k20 = uop.gep inbounds %mult[%m2] : !uop.buffer<4xi32>
    %n20 = uop.load %k20 : i32
    %h20 = arm_dsp.smmla %s20, %n20, %zp : i32
    %t20 = arm_dsp.ssat %h20 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v20 = uop.cast %t20 : i32 to i8
    %i20 = uop.add %row2, %p : index
    %y20 = uop.gep inbounds %y[%i20] : !uop.buffer<24xi8>
    uop.store %v20, %y20 : i8
    %s21 = uop.add %r21, %b2 : i32
    %k21 = uop.gep inbounds %mult[%m2] : !uop.buffer<4xi32>
    %n21 = uop.load %k21 : i32
    %h21 = arm_dsp.smmla %s21, %n21, %zp : i32
    %t21 = arm_dsp.ssat %h21 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v21 = uop.cast %t21 : i32 to i8
    %i21 = uop.add %row2, %p1 : index
    %y21 = uop.gep inbounds %y[%i21] : !uop.buffer<24xi8>
    uop.store %v21, %y21 : i8
    %row3 = uop.mul %m3, %six : index
    %s30 = uop.add %r30, %b3 : i32
    %k30 = uop.gep inbounds %mult[%m3] : !uop.buffer<4xi32>
    %n30 = uop.load %k30 : i32
    %h30 = arm_dsp.smmla %s30, %n30, %zp : i32
    %t30 = arm_dsp.ssat %h30 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v30 = uop.cast %t30 : i32 to i8
    %i30 = uop.add %row3, %p : index
    %y30 = uop.gep inbounds %y[%i30] : !uop.buffer<24xi8>
    uop.store %v30, %y30 : i8
    %s31 = uop.add %r31, %b3 : i32
    %k31 = uop.gep inbounds %mult[%m3] : !uop.buffer<4xi32>
    %n31 = uop.load %k31 : i32
    %h31 = arm_dsp.smmla %s31, %n31, %zp : i32
    %t31 = arm_dsp.ssat %h31 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v31 = uop.cast %t31 : i32 to i8
    %i31 = uop.add %row3, %p1 : index
    %y31 = uop.gep inbounds %y[%i31] : !uop.buffer<24xi8>
    uop.store %v31, %y31 : i8
  }
  func.return
}

// -----

// A row whose two pixels add different biases: unchanged.
// CHECK-LABEL: func.func @two_biases(
// CHECK:         uop.range
// CHECK:           arm_dsp.smlad_block %
// CHECK-NOT:     arm_dsp.smlad_block_row
func.func @two_biases(%bias: !uop.buffer<4xi32>, %col: !uop.buffer<24xi32>, %w: !uop.buffer<12xi32>, %mult: !uop.buffer<4xi32>, %y: !uop.buffer<24xi8>) {
  %zp = uop.const -1280 : i32
  %zero = uop.const 0 : i32
  %i0 = uop.const 0 : index
  %m0 = uop.const 0 : index
  %gb0 = uop.gep inbounds %bias[%m0] : !uop.buffer<4xi32>
  %b0 = uop.load %gb0 : i32
  %m1 = uop.const 1 : index
  %gb1 = uop.gep inbounds %bias[%m1] : !uop.buffer<4xi32>
  %b1 = uop.load %gb1 : i32
  %m2 = uop.const 2 : index
  %gb2 = uop.gep inbounds %bias[%m2] : !uop.buffer<4xi32>
  %b2 = uop.load %gb2 : i32
  %m3 = uop.const 3 : index
  %gb3 = uop.gep inbounds %bias[%m3] : !uop.buffer<4xi32>
  %b3 = uop.load %gb3 : i32
  %pb = uop.gep inbounds %w[%i0] : !uop.buffer<12xi32>
  uop.range %q = 0 to 3 {
    %two = uop.const 2 : index
    %p = uop.mul %q, %two : index
    %one = uop.const 1 : index
    %p1 = uop.add %p, %one : index
    %three = uop.const 3 : index
    %ci = uop.mul %p, %three : index
    %pa = uop.gep inbounds %col[%ci] : !uop.buffer<24xi32>
    %r00, %r01, %r10, %r11, %r20, %r21, %r30, %r31 = arm_dsp.smlad_block %pa, %pb, %zero, %zero, %zero, %zero, %zero, %zero, %zero, %zero {steps = #builtin.int<3>, a_next = #builtin.int<3>, b_next = #builtin.int<3>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32, i32, i32
    %six = uop.const 6 : index
    %row0 = uop.mul %m0, %six : index
    %s00 = uop.add %r00, %b0 : i32
    %k00 = uop.gep inbounds %mult[%m0] : !uop.buffer<4xi32>
    %n00 = uop.load %k00 : i32
    %h00 = arm_dsp.smmla %s00, %n00, %zp : i32
    %t00 = arm_dsp.ssat %h00 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v00 = uop.cast %t00 : i32 to i8
    %i00 = uop.add %row0, %p : index
    %y00 = uop.gep inbounds %y[%i00] : !uop.buffer<24xi8>
    uop.store %v00, %y00 : i8
    %s01 = uop.add %r01, %b0 : i32
    %k01 = uop.gep inbounds %mult[%m0] : !uop.buffer<4xi32>
    %n01 = uop.load %k01 : i32
    %h01 = arm_dsp.smmla %s01, %n01, %zp : i32
    %t01 = arm_dsp.ssat %h01 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v01 = uop.cast %t01 : i32 to i8
    %i01 = uop.add %row0, %p1 : index
    %y01 = uop.gep inbounds %y[%i01] : !uop.buffer<24xi8>
    uop.store %v01, %y01 : i8
    %row1 = uop.mul %m1, %six : index
    %s10 = uop.add %r10, %b1 : i32
    %k10 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
    %n10 = uop.load %k10 : i32
    %h10 = arm_dsp.smmla %s10, %n10, %zp : i32
    %t10 = arm_dsp.ssat %h10 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v10 = uop.cast %t10 : i32 to i8
    %i10 = uop.add %row1, %p : index
    %y10 = uop.gep inbounds %y[%i10] : !uop.buffer<24xi8>
    uop.store %v10, %y10 : i8
    %s11 = uop.add %r11, %b1 : i32
    %k11 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
    %n11 = uop.load %k11 : i32
    %h11 = arm_dsp.smmla %s11, %n11, %zp : i32
    %t11 = arm_dsp.ssat %h11 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v11 = uop.cast %t11 : i32 to i8
    %i11 = uop.add %row1, %p1 : index
    %y11 = uop.gep inbounds %y[%i11] : !uop.buffer<24xi8>
    uop.store %v11, %y11 : i8
    %row2 = uop.mul %m2, %six : index
    %s20 = uop.add %r20, %b2 : i32
    %k20 = uop.gep inbounds %mult[%m2] : !uop.buffer<4xi32>
    %n20 = uop.load %k20 : i32
    %h20 = arm_dsp.smmla %s20, %n20, %zp : i32
    %t20 = arm_dsp.ssat %h20 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v20 = uop.cast %t20 : i32 to i8
    %i20 = uop.add %row2, %p : index
    %y20 = uop.gep inbounds %y[%i20] : !uop.buffer<24xi8>
    uop.store %v20, %y20 : i8
    %s21 = uop.add %r21, %b2 : i32
    %k21 = uop.gep inbounds %mult[%m2] : !uop.buffer<4xi32>
    %n21 = uop.load %k21 : i32
    %h21 = arm_dsp.smmla %s21, %n21, %zp : i32
    %t21 = arm_dsp.ssat %h21 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v21 = uop.cast %t21 : i32 to i8
    %i21 = uop.add %row2, %p1 : index
    %y21 = uop.gep inbounds %y[%i21] : !uop.buffer<24xi8>
    uop.store %v21, %y21 : i8
    %row3 = uop.mul %m3, %six : index
    %s30 = uop.add %r30, %b3 : i32
    %k30 = uop.gep inbounds %mult[%m3] : !uop.buffer<4xi32>
    %n30 = uop.load %k30 : i32
    %h30 = arm_dsp.smmla %s30, %n30, %zp : i32
    %t30 = arm_dsp.ssat %h30 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v30 = uop.cast %t30 : i32 to i8
    %i30 = uop.add %row3, %p : index
    %y30 = uop.gep inbounds %y[%i30] : !uop.buffer<24xi8>
    uop.store %v30, %y30 : i8
    %s31 = uop.add %r31, %b0 : i32
    %k31 = uop.gep inbounds %mult[%m3] : !uop.buffer<4xi32>
    %n31 = uop.load %k31 : i32
    %h31 = arm_dsp.smmla %s31, %n31, %zp : i32
    %t31 = arm_dsp.ssat %h31 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v31 = uop.cast %t31 : i32 to i8
    %i31 = uop.add %row3, %p1 : index
    %y31 = uop.gep inbounds %y[%i31] : !uop.buffer<24xi8>
    uop.store %v31, %y31 : i8
  }
  func.return
}

// -----

// The pair form of a pointwise Conv written over its input (conv_columns._quads_of, after
// arm-dsp-requant-sums): per quad of pixels q, a smlad_block whose pa is the pair of weight
// rows (fixed: 3 words each, 3 apart) and whose pb is the quad's 4 pixels of the widened block
// (3 words each: 12 words on per quad), so its sum (r, k) is pixel r's output channel k: each
// plus its channel's bias (one per column, the same for the 4 pixels), requantized by its
// channel's multiplier and stored in NCHW (channels 12 bytes apart, pixels 1). The loop becomes
// one smlad_quad_row before it, the biases and multipliers loaded once.
// CHECK-LABEL: func.func @quads(
// CHECK-NOT:     uop.range
// CHECK:         %[[PB:.*]] = uop.gep inbounds %x[%{{.*}}] : !uop.buffer<36xi32>
// CHECK:         %[[PY:.*]] = uop.gep inbounds %y[%{{.*}}] : !uop.buffer<24xi8>
// CHECK:         %[[M0:.*]] = uop.load %{{.*}} : i32
// CHECK:         %[[M1:.*]] = uop.load %{{.*}} : i32
// CHECK-NEXT:    arm_dsp.smlad_quad_row %pa, %[[PB]], %[[PY]], %b0, %b1, %[[M0]], %[[M1]] {steps = #builtin.int<3>, a_next = #builtin.int<3>, b_next = #builtin.int<3>, quads = #builtin.int<3>, b_quad = #builtin.int<12>, y_quad = #builtin.int<4>, y_next = #builtin.int<12>, y_pixel = #builtin.int<1>, addend = #builtin.int<-1280>, shift = #builtin.int<9>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
// CHECK-NOT:     uop.range
// CHECK:         func.return
func.func @quads(%bias: !uop.buffer<2xi32>, %x: !uop.buffer<36xi32>, %w: !uop.buffer<6xi32>, %mult: !uop.buffer<2xi32>, %y: !uop.buffer<24xi8>) {
  %zp = uop.const -1280 : i32
  %zero = uop.const 0 : i32
  %i0 = uop.const 0 : index
  %k0 = uop.const 0 : index
  %gb0 = uop.gep inbounds %bias[%k0] : !uop.buffer<2xi32>
  %b0 = uop.load %gb0 : i32
  %k1 = uop.const 1 : index
  %gb1 = uop.gep inbounds %bias[%k1] : !uop.buffer<2xi32>
  %b1 = uop.load %gb1 : i32
  %pa = uop.gep inbounds %w[%i0] : !uop.buffer<6xi32>
  uop.range %q = 0 to 3 {
    %four = uop.const 4 : index
    %p = uop.mul %q, %four : index
    %three = uop.const 3 : index
    %xi = uop.mul %p, %three : index
    %pb = uop.gep inbounds %x[%xi] : !uop.buffer<36xi32>
    %r00, %r01, %r10, %r11, %r20, %r21, %r30, %r31 = arm_dsp.smlad_block %pa, %pb, %zero, %zero, %zero, %zero, %zero, %zero, %zero, %zero {steps = #builtin.int<3>, a_next = #builtin.int<3>, b_next = #builtin.int<3>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32, i32, i32
    %twelve = uop.const 12 : index
    %s00 = uop.add %r00, %b0 : i32
    %g00 = uop.gep inbounds %mult[%k0] : !uop.buffer<2xi32>
    %n00 = uop.load %g00 : i32
    %h00 = arm_dsp.smmla %s00, %n00, %zp : i32
    %t00 = arm_dsp.ssat %h00 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v00 = uop.cast %t00 : i32 to i8
    %o00 = uop.const 0 : index
    %pr00 = uop.add %p, %o00 : index
    %row00 = uop.mul %k0, %twelve : index
    %i00 = uop.add %row00, %pr00 : index
    %y00 = uop.gep inbounds %y[%i00] : !uop.buffer<24xi8>
    uop.store %v00, %y00 : i8
    %s01 = uop.add %r01, %b1 : i32
    %g01 = uop.gep inbounds %mult[%k1] : !uop.buffer<2xi32>
    %n01 = uop.load %g01 : i32
    %h01 = arm_dsp.smmla %s01, %n01, %zp : i32
    %t01 = arm_dsp.ssat %h01 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v01 = uop.cast %t01 : i32 to i8
    %o01 = uop.const 0 : index
    %pr01 = uop.add %p, %o01 : index
    %row01 = uop.mul %k1, %twelve : index
    %i01 = uop.add %row01, %pr01 : index
    %y01 = uop.gep inbounds %y[%i01] : !uop.buffer<24xi8>
    uop.store %v01, %y01 : i8
    %s10 = uop.add %r10, %b0 : i32
    %g10 = uop.gep inbounds %mult[%k0] : !uop.buffer<2xi32>
    %n10 = uop.load %g10 : i32
    %h10 = arm_dsp.smmla %s10, %n10, %zp : i32
    %t10 = arm_dsp.ssat %h10 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v10 = uop.cast %t10 : i32 to i8
    %o10 = uop.const 1 : index
    %pr10 = uop.add %p, %o10 : index
    %row10 = uop.mul %k0, %twelve : index
    %i10 = uop.add %row10, %pr10 : index
    %y10 = uop.gep inbounds %y[%i10] : !uop.buffer<24xi8>
    uop.store %v10, %y10 : i8
    %s11 = uop.add %r11, %b1 : i32
    %g11 = uop.gep inbounds %mult[%k1] : !uop.buffer<2xi32>
    %n11 = uop.load %g11 : i32
    %h11 = arm_dsp.smmla %s11, %n11, %zp : i32
    %t11 = arm_dsp.ssat %h11 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v11 = uop.cast %t11 : i32 to i8
    %o11 = uop.const 1 : index
    %pr11 = uop.add %p, %o11 : index
    %row11 = uop.mul %k1, %twelve : index
    %i11 = uop.add %row11, %pr11 : index
    %y11 = uop.gep inbounds %y[%i11] : !uop.buffer<24xi8>
    uop.store %v11, %y11 : i8
    %s20 = uop.add %r20, %b0 : i32
    %g20 = uop.gep inbounds %mult[%k0] : !uop.buffer<2xi32>
    %n20 = uop.load %g20 : i32
    %h20 = arm_dsp.smmla %s20, %n20, %zp : i32
    %t20 = arm_dsp.ssat %h20 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v20 = uop.cast %t20 : i32 to i8
    %o20 = uop.const 2 : index
    %pr20 = uop.add %p, %o20 : index
    %row20 = uop.mul %k0, %twelve : index
    %i20 = uop.add %row20, %pr20 : index
    %y20 = uop.gep inbounds %y[%i20] : !uop.buffer<24xi8>
    uop.store %v20, %y20 : i8
    %s21 = uop.add %r21, %b1 : i32
    %g21 = uop.gep inbounds %mult[%k1] : !uop.buffer<2xi32>
    %n21 = uop.load %g21 : i32
    %h21 = arm_dsp.smmla %s21, %n21, %zp : i32
    %t21 = arm_dsp.ssat %h21 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v21 = uop.cast %t21 : i32 to i8
    %o21 = uop.const 2 : index
    %pr21 = uop.add %p, %o21 : index
    %row21 = uop.mul %k1, %twelve : index
    %i21 = uop.add %row21, %pr21 : index
    %y21 = uop.gep inbounds %y[%i21] : !uop.buffer<24xi8>
    uop.store %v21, %y21 : i8
    %s30 = uop.add %r30, %b0 : i32
    %g30 = uop.gep inbounds %mult[%k0] : !uop.buffer<2xi32>
    %n30 = uop.load %g30 : i32
    %h30 = arm_dsp.smmla %s30, %n30, %zp : i32
    %t30 = arm_dsp.ssat %h30 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v30 = uop.cast %t30 : i32 to i8
    %o30 = uop.const 3 : index
    %pr30 = uop.add %p, %o30 : index
    %row30 = uop.mul %k0, %twelve : index
    %i30 = uop.add %row30, %pr30 : index
    %y30 = uop.gep inbounds %y[%i30] : !uop.buffer<24xi8>
    uop.store %v30, %y30 : i8
    %s31 = uop.add %r31, %b1 : i32
    %g31 = uop.gep inbounds %mult[%k1] : !uop.buffer<2xi32>
    %n31 = uop.load %g31 : i32
    %h31 = arm_dsp.smmla %s31, %n31, %zp : i32
    %t31 = arm_dsp.ssat %h31 {bits = #builtin.int<8>, shift = #builtin.int<9>} : i32
    %v31 = uop.cast %t31 : i32 to i8
    %o31 = uop.const 3 : index
    %pr31 = uop.add %p, %o31 : index
    %row31 = uop.mul %k1, %twelve : index
    %i31 = uop.add %row31, %pr31 : index
    %y31 = uop.gep inbounds %y[%i31] : !uop.buffer<24xi8>
    uop.store %v31, %y31 : i8
  }
  func.return
}
