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
