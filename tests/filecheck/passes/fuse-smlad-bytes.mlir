// RUN: zant-opt %s -p fuse-smlad-bytes | filecheck %s

// Two rows of a dot product share the input word %x (its halves read by 4 SMLAD); each weight
// word's two SXTB16, read once, and its two SMLAD become one smlad_bytes of the input's halves.
// CHECK-LABEL: func.func @two_rows(
// CHECK:         %xe = arm_dsp.sxtb16 %x : i32
// CHECK-NEXT:    %xo = arm_dsp.sxtb16 %x ror 8 : i32
// CHECK-NEXT:    %[[R0:.*]] = arm_dsp.smlad_bytes %xe, %xo, %w0, %c0 : i32
// CHECK-NEXT:    %[[R1:.*]] = arm_dsp.smlad_bytes %xe, %xo, %w1, %c1 : i32
// CHECK-NEXT:    "test.op"(%[[R0]], %[[R1]]) : (i32, i32) -> ()
// CHECK-NOT:     arm_dsp.smlad
func.func @two_rows(%x: i32, %w0: i32, %w1: i32, %c0: i32, %c1: i32) {
  %xe = arm_dsp.sxtb16 %x : i32
  %xo = arm_dsp.sxtb16 %x ror 8 : i32
  %we0 = arm_dsp.sxtb16 %w0 : i32
  %wo0 = arm_dsp.sxtb16 %w0 ror 8 : i32
  %s0 = arm_dsp.smlad %xe, %we0, %c0 : i32
  %r0 = arm_dsp.smlad %xo, %wo0, %s0 : i32
  %we1 = arm_dsp.sxtb16 %w1 : i32
  %wo1 = arm_dsp.sxtb16 %w1 ror 8 : i32
  %s1 = arm_dsp.smlad %we1, %xe, %c1 : i32
  %r1 = arm_dsp.smlad %wo1, %xo, %s1 : i32
  "test.op"(%r0, %r1) : (i32, i32) -> ()
  func.return
}

// Left alone: the first sum is read elsewhere too; the halves come from two words; a half is
// read by another op; the rotations are swapped.
// CHECK-LABEL: func.func @not_fused(
// CHECK-NOT:     arm_dsp.smlad_bytes
// CHECK:         func.return
func.func @not_fused(%x: i32, %w: i32, %v: i32, %c: i32) {
  %xe = arm_dsp.sxtb16 %x : i32
  %xo = arm_dsp.sxtb16 %x ror 8 : i32
  %a0 = arm_dsp.sxtb16 %w : i32
  %a1 = arm_dsp.sxtb16 %w ror 8 : i32
  %s = arm_dsp.smlad %xe, %a0, %c : i32
  %r = arm_dsp.smlad %xo, %a1, %s : i32
  "test.op"(%s, %r) : (i32, i32) -> ()
  %b0 = arm_dsp.sxtb16 %w : i32
  %b1 = arm_dsp.sxtb16 %v ror 8 : i32
  %t = arm_dsp.smlad %xe, %b0, %c : i32
  %u = arm_dsp.smlad %xo, %b1, %t : i32
  %d0 = arm_dsp.sxtb16 %w : i32
  %d1 = arm_dsp.sxtb16 %w ror 8 : i32
  %e = arm_dsp.smlad %xe, %d0, %c : i32
  %f = arm_dsp.smlad %xo, %d1, %e : i32
  "test.op"(%d1) : (i32) -> ()
  %g0 = arm_dsp.sxtb16 %w ror 8 : i32
  %g1 = arm_dsp.sxtb16 %w : i32
  %h = arm_dsp.smlad %xe, %g0, %c : i32
  %i = arm_dsp.smlad %xo, %g1, %h : i32
  "test.op"(%u, %f, %i) : (i32, i32, i32) -> ()
  func.return
}

// A register tile's weight word read by two pixels' sums (conv_columns): its halves are each
// read by two SMLAD, so the four SMLAD become one smlad_bytes_pair, the word widened once;
// the first pixel's acc_set moves after the pair.
// CHECK-LABEL: func.func @two_pixels(
// CHECK:         %c0 = uop.acc_get %a0 : !uop.acc<i32>, i32
// CHECK-NEXT:    %xe1 = arm_dsp.sxtb16 %x1 : i32
// CHECK-NEXT:    %xo1 = arm_dsp.sxtb16 %x1 ror 8 : i32
// CHECK-NEXT:    %c1 = uop.acc_get %a1 : !uop.acc<i32>, i32
// CHECK-NEXT:    %[[R0:.*]], %[[R1:.*]] = arm_dsp.smlad_bytes_pair %xe0, %xo0, %xe1, %xo1, %w, %c0, %c1 : i32
// CHECK-NEXT:    uop.acc_set %a0, %[[R0]] : !uop.acc<i32>, i32
// CHECK-NEXT:    uop.acc_set %a1, %[[R1]] : !uop.acc<i32>, i32
// CHECK-NOT:     arm_dsp.smlad
// CHECK:         func.return
func.func @two_pixels(%x0: i32, %x1: i32, %w: i32, %a0: !uop.acc<i32>, %a1: !uop.acc<i32>) {
  %xe0 = arm_dsp.sxtb16 %x0 : i32
  %xo0 = arm_dsp.sxtb16 %x0 ror 8 : i32
  %we = arm_dsp.sxtb16 %w : i32
  %wo = arm_dsp.sxtb16 %w ror 8 : i32
  %c0 = uop.acc_get %a0 : !uop.acc<i32>, i32
  %s0 = arm_dsp.smlad %xe0, %we, %c0 : i32
  %r0 = arm_dsp.smlad %xo0, %wo, %s0 : i32
  uop.acc_set %a0, %r0 : !uop.acc<i32>, i32
  %xe1 = arm_dsp.sxtb16 %x1 : i32
  %xo1 = arm_dsp.sxtb16 %x1 ror 8 : i32
  %c1 = uop.acc_get %a1 : !uop.acc<i32>, i32
  %s1 = arm_dsp.smlad %we, %xe1, %c1 : i32
  %r1 = arm_dsp.smlad %wo, %xo1, %s1 : i32
  uop.acc_set %a1, %r1 : !uop.acc<i32>, i32
  func.return
}

// Left alone: the first pixel's accumulator is read again before the second sum ends (its
// acc_set cannot move after the pair), and a word whose even half has a third reader.
// CHECK-LABEL: func.func @not_paired(
// CHECK-NOT:     arm_dsp.smlad_bytes_pair
// CHECK:         func.return
func.func @not_paired(%x0: i32, %x1: i32, %w: i32, %v: i32, %a0: !uop.acc<i32>, %a1: !uop.acc<i32>) {
  %xe0 = arm_dsp.sxtb16 %x0 : i32
  %xo0 = arm_dsp.sxtb16 %x0 ror 8 : i32
  %xe1 = arm_dsp.sxtb16 %x1 : i32
  %xo1 = arm_dsp.sxtb16 %x1 ror 8 : i32
  %we = arm_dsp.sxtb16 %w : i32
  %wo = arm_dsp.sxtb16 %w ror 8 : i32
  %c0 = uop.acc_get %a0 : !uop.acc<i32>, i32
  %s0 = arm_dsp.smlad %xe0, %we, %c0 : i32
  %r0 = arm_dsp.smlad %xo0, %wo, %s0 : i32
  uop.acc_set %a0, %r0 : !uop.acc<i32>, i32
  %c1 = uop.acc_get %a0 : !uop.acc<i32>, i32
  %s1 = arm_dsp.smlad %xe1, %we, %c1 : i32
  %r1 = arm_dsp.smlad %xo1, %wo, %s1 : i32
  uop.acc_set %a1, %r1 : !uop.acc<i32>, i32
  %ve = arm_dsp.sxtb16 %v : i32
  %vo = arm_dsp.sxtb16 %v ror 8 : i32
  %t0 = arm_dsp.smlad %xe0, %ve, %c0 : i32
  %u0 = arm_dsp.smlad %xo0, %vo, %t0 : i32
  %t1 = arm_dsp.smlad %xe1, %ve, %c1 : i32
  %u1 = arm_dsp.smlad %xo1, %vo, %t1 : i32
  %t2 = arm_dsp.smlad %xe1, %ve, %u1 : i32
  "test.op"(%u0, %t2) : (i32, i32) -> ()
  func.return
}
