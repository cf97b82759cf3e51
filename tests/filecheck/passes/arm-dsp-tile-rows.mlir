// RUN: zant-opt %s -p arm-dsp-tile-rows --split-input-file | filecheck %s
// RUN: zant-opt %s -p arm-dsp-tile-rows --split-input-file | zant-opt --split-input-file | filecheck %s

// A pointwise Conv's row of 2 x 2 tiles (conv_columns over a channels-last X of 8 channels,
// after arm-dsp-tile-loops and arm-dsp-requant-sums): per pair of pixels q, a smlad_tile of
// the rows m, m + 1 (w, fixed) and the pixels 2q, 2q + 1 (x, 16 bytes on per pair), the sums
// from the biases, each requantized (SMMLA by its row's multiplier, SSAT) and stored in NCHW
// (the rows 6 bytes apart, the pixels 1). The loop becomes one smlad_tile_row before it, from
// its first iteration's addresses and the biases and multipliers loaded once.
// CHECK-LABEL: func.func @row(
// CHECK:         uop.range %{{.*}} = 0 to 4 step 2 {
// CHECK-NOT:       uop.range
// CHECK:           %[[PA:.*]] = uop.gep inbounds %w[%{{.*}}] : !uop.buffer<32xi8>
// CHECK:           %[[PB:.*]] = uop.gep inbounds %x[%{{.*}}] : !uop.buffer<48xi8>
// CHECK:           %[[PY:.*]] = uop.gep inbounds %y[%{{.*}}] : !uop.buffer<24xi8>
// CHECK:           %[[C0:.*]] = uop.load %{{.*}} : i32
// CHECK:           %[[C1:.*]] = uop.load %{{.*}} : i32
// CHECK:           %[[M0:.*]] = uop.load %{{.*}} : i32
// CHECK:           %[[M1:.*]] = uop.load %{{.*}} : i32
// CHECK-NEXT:      arm_dsp.smlad_tile_row %[[PA]], %[[PB]], %[[PY]], %[[C0]], %[[C1]], %[[M0]], %[[M1]] {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<8>, pairs = #builtin.int<3>, b_pair = #builtin.int<16>, y_pair = #builtin.int<2>, y_next = #builtin.int<6>, y_pixel = #builtin.int<1>, addend = #builtin.int<-4080>, shift = #builtin.int<5>} : !uop.ptr<i8>, !uop.ptr<i8>, !uop.ptr<i8>
// CHECK-NEXT:    }
func.func @row(%bias: !uop.buffer<4xi32>, %w: !uop.buffer<32xi8>, %x: !uop.buffer<48xi8>, %mult: !uop.buffer<4xi32>, %y: !uop.buffer<24xi8>) {
  %zp = uop.const -4080 : i32
  uop.range %m = 0 to 4 step 2 {
    uop.range %q = 0 to 3 {
      %two = uop.const 2 : index
      %p = uop.mul %q, %two : index
      %one = uop.const 1 : index
      %p1 = uop.add %p, %one : index
      %m1 = uop.add %m, %one : index
      %a00 = uop.define_acc 0 : i32
      %g00 = uop.gep inbounds %bias[%m] : !uop.buffer<4xi32>
      %b00 = uop.load %g00 : i32
      uop.acc_set %a00, %b00 : !uop.acc<i32>, i32
      %a01 = uop.define_acc 0 : i32
      %g01 = uop.gep inbounds %bias[%m] : !uop.buffer<4xi32>
      %b01 = uop.load %g01 : i32
      uop.acc_set %a01, %b01 : !uop.acc<i32>, i32
      %a10 = uop.define_acc 0 : i32
      %g10 = uop.gep inbounds %bias[%m1] : !uop.buffer<4xi32>
      %b10 = uop.load %g10 : i32
      uop.acc_set %a10, %b10 : !uop.acc<i32>, i32
      %a11 = uop.define_acc 0 : i32
      %g11 = uop.gep inbounds %bias[%m1] : !uop.buffer<4xi32>
      %b11 = uop.load %g11 : i32
      uop.acc_set %a11, %b11 : !uop.acc<i32>, i32
      %eight = uop.const 8 : index
      %wi = uop.mul %m, %eight : index
      %pa = uop.gep inbounds %w[%wi] : !uop.buffer<32xi8>
      %xi = uop.mul %p, %eight : index
      %pb = uop.gep inbounds %x[%xi] : !uop.buffer<48xi8>
      %c00 = uop.acc_get %a00 : !uop.acc<i32>, i32
      %c10 = uop.acc_get %a10 : !uop.acc<i32>, i32
      %c01 = uop.acc_get %a01 : !uop.acc<i32>, i32
      %c11 = uop.acc_get %a11 : !uop.acc<i32>, i32
      %r00, %r10, %r01, %r11 = arm_dsp.smlad_tile %pa, %pb, %c00, %c10, %c01, %c11 {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<8>} : !uop.ptr<i8>, !uop.ptr<i8>
      uop.acc_set %a00, %r00 : !uop.acc<i32>, i32
      uop.acc_set %a10, %r10 : !uop.acc<i32>, i32
      uop.acc_set %a01, %r01 : !uop.acc<i32>, i32
      uop.acc_set %a11, %r11 : !uop.acc<i32>, i32
      %six = uop.const 6 : index
      %row0 = uop.mul %m, %six : index
      %row1 = uop.mul %m1, %six : index
      %s00 = uop.acc_get %a00 : !uop.acc<i32>, i32
      %k00 = uop.gep inbounds %mult[%m] : !uop.buffer<4xi32>
      %n00 = uop.load %k00 : i32
      %h00 = arm_dsp.smmla %s00, %n00, %zp : i32
      %t00 = arm_dsp.ssat %h00 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v00 = uop.cast %t00 : i32 to i8
      %i00 = uop.add %row0, %p : index
      %y00 = uop.gep inbounds %y[%i00] : !uop.buffer<24xi8>
      uop.store %v00, %y00 : i8
      %s01 = uop.acc_get %a01 : !uop.acc<i32>, i32
      %k01 = uop.gep inbounds %mult[%m] : !uop.buffer<4xi32>
      %n01 = uop.load %k01 : i32
      %h01 = arm_dsp.smmla %s01, %n01, %zp : i32
      %t01 = arm_dsp.ssat %h01 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v01 = uop.cast %t01 : i32 to i8
      %i01 = uop.add %row0, %p1 : index
      %y01 = uop.gep inbounds %y[%i01] : !uop.buffer<24xi8>
      uop.store %v01, %y01 : i8
      %s10 = uop.acc_get %a10 : !uop.acc<i32>, i32
      %k10 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
      %n10 = uop.load %k10 : i32
      %h10 = arm_dsp.smmla %s10, %n10, %zp : i32
      %t10 = arm_dsp.ssat %h10 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v10 = uop.cast %t10 : i32 to i8
      %i10 = uop.add %row1, %p : index
      %y10 = uop.gep inbounds %y[%i10] : !uop.buffer<24xi8>
      uop.store %v10, %y10 : i8
      %s11 = uop.acc_get %a11 : !uop.acc<i32>, i32
      %k11 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
      %n11 = uop.load %k11 : i32
      %h11 = arm_dsp.smmla %s11, %n11, %zp : i32
      %t11 = arm_dsp.ssat %h11 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v11 = uop.cast %t11 : i32 to i8
      %i11 = uop.add %row1, %p1 : index
      %y11 = uop.gep inbounds %y[%i11] : !uop.buffer<24xi8>
      uop.store %v11, %y11 : i8
    }
  }
  func.return
}


// -----

// A ReLU above -128 after one sum's cast: not nothing, the loop stays.
// CHECK-LABEL: func.func @relu(
// CHECK:         uop.range %{{.*}} = 0 to 3 {
// CHECK:           arm_dsp.smlad_tile
// CHECK-NOT:     arm_dsp.smlad_tile_row

func.func @relu(%bias: !uop.buffer<4xi32>, %w: !uop.buffer<32xi8>, %x: !uop.buffer<48xi8>, %mult: !uop.buffer<4xi32>, %y: !uop.buffer<24xi8>) {
  %zp = uop.const -4080 : i32
  uop.range %m = 0 to 4 step 2 {
    uop.range %q = 0 to 3 {
      %two = uop.const 2 : index
      %p = uop.mul %q, %two : index
      %one = uop.const 1 : index
      %p1 = uop.add %p, %one : index
      %m1 = uop.add %m, %one : index
      %a00 = uop.define_acc 0 : i32
      %g00 = uop.gep inbounds %bias[%m] : !uop.buffer<4xi32>
      %b00 = uop.load %g00 : i32
      uop.acc_set %a00, %b00 : !uop.acc<i32>, i32
      %a01 = uop.define_acc 0 : i32
      %g01 = uop.gep inbounds %bias[%m] : !uop.buffer<4xi32>
      %b01 = uop.load %g01 : i32
      uop.acc_set %a01, %b01 : !uop.acc<i32>, i32
      %a10 = uop.define_acc 0 : i32
      %g10 = uop.gep inbounds %bias[%m1] : !uop.buffer<4xi32>
      %b10 = uop.load %g10 : i32
      uop.acc_set %a10, %b10 : !uop.acc<i32>, i32
      %a11 = uop.define_acc 0 : i32
      %g11 = uop.gep inbounds %bias[%m1] : !uop.buffer<4xi32>
      %b11 = uop.load %g11 : i32
      uop.acc_set %a11, %b11 : !uop.acc<i32>, i32
      %eight = uop.const 8 : index
      %wi = uop.mul %m, %eight : index
      %pa = uop.gep inbounds %w[%wi] : !uop.buffer<32xi8>
      %xi = uop.mul %p, %eight : index
      %pb = uop.gep inbounds %x[%xi] : !uop.buffer<48xi8>
      %c00 = uop.acc_get %a00 : !uop.acc<i32>, i32
      %c10 = uop.acc_get %a10 : !uop.acc<i32>, i32
      %c01 = uop.acc_get %a01 : !uop.acc<i32>, i32
      %c11 = uop.acc_get %a11 : !uop.acc<i32>, i32
      %r00, %r10, %r01, %r11 = arm_dsp.smlad_tile %pa, %pb, %c00, %c10, %c01, %c11 {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<8>} : !uop.ptr<i8>, !uop.ptr<i8>
      uop.acc_set %a00, %r00 : !uop.acc<i32>, i32
      uop.acc_set %a10, %r10 : !uop.acc<i32>, i32
      uop.acc_set %a01, %r01 : !uop.acc<i32>, i32
      uop.acc_set %a11, %r11 : !uop.acc<i32>, i32
      %six = uop.const 6 : index
      %row0 = uop.mul %m, %six : index
      %row1 = uop.mul %m1, %six : index
      %s00 = uop.acc_get %a00 : !uop.acc<i32>, i32
      %k00 = uop.gep inbounds %mult[%m] : !uop.buffer<4xi32>
      %n00 = uop.load %k00 : i32
      %h00 = arm_dsp.smmla %s00, %n00, %zp : i32
      %t00 = arm_dsp.ssat %h00 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v00 = uop.cast %t00 : i32 to i8
      %i00 = uop.add %row0, %p : index
      %y00 = uop.gep inbounds %y[%i00] : !uop.buffer<24xi8>
      uop.store %v00, %y00 : i8
      %s01 = uop.acc_get %a01 : !uop.acc<i32>, i32
      %k01 = uop.gep inbounds %mult[%m] : !uop.buffer<4xi32>
      %n01 = uop.load %k01 : i32
      %h01 = arm_dsp.smmla %s01, %n01, %zp : i32
      %t01 = arm_dsp.ssat %h01 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v01 = uop.cast %t01 : i32 to i8
      %i01 = uop.add %row0, %p1 : index
      %y01 = uop.gep inbounds %y[%i01] : !uop.buffer<24xi8>
      uop.store %v01, %y01 : i8
      %s10 = uop.acc_get %a10 : !uop.acc<i32>, i32
      %k10 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
      %n10 = uop.load %k10 : i32
      %h10 = arm_dsp.smmla %s10, %n10, %zp : i32
      %t10 = arm_dsp.ssat %h10 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v10 = uop.cast %t10 : i32 to i8
      %i10 = uop.add %row1, %p : index
      %y10 = uop.gep inbounds %y[%i10] : !uop.buffer<24xi8>
      uop.store %v10, %y10 : i8
      %s11 = uop.acc_get %a11 : !uop.acc<i32>, i32
      %k11 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
      %n11 = uop.load %k11 : i32
      %h11 = arm_dsp.smmla %s11, %n11, %zp : i32
      %t11 = arm_dsp.ssat %h11 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %w11 = uop.cast %t11 : i32 to i8
      %lo = uop.const -100 : i8
      %v11 = uop.max %w11, %lo : i8
      %i11 = uop.add %row1, %p1 : index
      %y11 = uop.gep inbounds %y[%i11] : !uop.buffer<24xi8>
      uop.store %v11, %y11 : i8
    }
  }
  func.return
}


// -----

// A row's two sums requantized by different multipliers: the asm's one per row cannot, the
// loop stays.
// CHECK-LABEL: func.func @mixed(
// CHECK:         uop.range %{{.*}} = 0 to 3 {
// CHECK-NOT:     arm_dsp.smlad_tile_row

func.func @mixed(%bias: !uop.buffer<4xi32>, %w: !uop.buffer<32xi8>, %x: !uop.buffer<48xi8>, %mult: !uop.buffer<4xi32>, %y: !uop.buffer<24xi8>) {
  %zp = uop.const -4080 : i32
  uop.range %m = 0 to 4 step 2 {
    uop.range %q = 0 to 3 {
      %two = uop.const 2 : index
      %p = uop.mul %q, %two : index
      %one = uop.const 1 : index
      %p1 = uop.add %p, %one : index
      %m1 = uop.add %m, %one : index
      %a00 = uop.define_acc 0 : i32
      %g00 = uop.gep inbounds %bias[%m] : !uop.buffer<4xi32>
      %b00 = uop.load %g00 : i32
      uop.acc_set %a00, %b00 : !uop.acc<i32>, i32
      %a01 = uop.define_acc 0 : i32
      %g01 = uop.gep inbounds %bias[%m] : !uop.buffer<4xi32>
      %b01 = uop.load %g01 : i32
      uop.acc_set %a01, %b01 : !uop.acc<i32>, i32
      %a10 = uop.define_acc 0 : i32
      %g10 = uop.gep inbounds %bias[%m1] : !uop.buffer<4xi32>
      %b10 = uop.load %g10 : i32
      uop.acc_set %a10, %b10 : !uop.acc<i32>, i32
      %a11 = uop.define_acc 0 : i32
      %g11 = uop.gep inbounds %bias[%m1] : !uop.buffer<4xi32>
      %b11 = uop.load %g11 : i32
      uop.acc_set %a11, %b11 : !uop.acc<i32>, i32
      %eight = uop.const 8 : index
      %wi = uop.mul %m, %eight : index
      %pa = uop.gep inbounds %w[%wi] : !uop.buffer<32xi8>
      %xi = uop.mul %p, %eight : index
      %pb = uop.gep inbounds %x[%xi] : !uop.buffer<48xi8>
      %c00 = uop.acc_get %a00 : !uop.acc<i32>, i32
      %c10 = uop.acc_get %a10 : !uop.acc<i32>, i32
      %c01 = uop.acc_get %a01 : !uop.acc<i32>, i32
      %c11 = uop.acc_get %a11 : !uop.acc<i32>, i32
      %r00, %r10, %r01, %r11 = arm_dsp.smlad_tile %pa, %pb, %c00, %c10, %c01, %c11 {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<8>} : !uop.ptr<i8>, !uop.ptr<i8>
      uop.acc_set %a00, %r00 : !uop.acc<i32>, i32
      uop.acc_set %a10, %r10 : !uop.acc<i32>, i32
      uop.acc_set %a01, %r01 : !uop.acc<i32>, i32
      uop.acc_set %a11, %r11 : !uop.acc<i32>, i32
      %six = uop.const 6 : index
      %row0 = uop.mul %m, %six : index
      %row1 = uop.mul %m1, %six : index
      %s00 = uop.acc_get %a00 : !uop.acc<i32>, i32
      %k00 = uop.gep inbounds %mult[%m] : !uop.buffer<4xi32>
      %n00 = uop.load %k00 : i32
      %h00 = arm_dsp.smmla %s00, %n00, %zp : i32
      %t00 = arm_dsp.ssat %h00 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v00 = uop.cast %t00 : i32 to i8
      %i00 = uop.add %row0, %p : index
      %y00 = uop.gep inbounds %y[%i00] : !uop.buffer<24xi8>
      uop.store %v00, %y00 : i8
      %s01 = uop.acc_get %a01 : !uop.acc<i32>, i32
      %k01 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
      %n01 = uop.load %k01 : i32
      %h01 = arm_dsp.smmla %s01, %n01, %zp : i32
      %t01 = arm_dsp.ssat %h01 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v01 = uop.cast %t01 : i32 to i8
      %i01 = uop.add %row0, %p1 : index
      %y01 = uop.gep inbounds %y[%i01] : !uop.buffer<24xi8>
      uop.store %v01, %y01 : i8
      %s10 = uop.acc_get %a10 : !uop.acc<i32>, i32
      %k10 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
      %n10 = uop.load %k10 : i32
      %h10 = arm_dsp.smmla %s10, %n10, %zp : i32
      %t10 = arm_dsp.ssat %h10 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v10 = uop.cast %t10 : i32 to i8
      %i10 = uop.add %row1, %p : index
      %y10 = uop.gep inbounds %y[%i10] : !uop.buffer<24xi8>
      uop.store %v10, %y10 : i8
      %s11 = uop.acc_get %a11 : !uop.acc<i32>, i32
      %k11 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
      %n11 = uop.load %k11 : i32
      %h11 = arm_dsp.smmla %s11, %n11, %zp : i32
      %t11 = arm_dsp.ssat %h11 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v11 = uop.cast %t11 : i32 to i8
      %i11 = uop.add %row1, %p1 : index
      %y11 = uop.gep inbounds %y[%i11] : !uop.buffer<24xi8>
      uop.store %v11, %y11 : i8
    }
  }
  func.return
}


// -----

// The last pair overlapping the one before (an odd number of pixels): the pixel is a min, no
// constant advance per pair, the loop stays.
// CHECK-LABEL: func.func @last(
// CHECK:         uop.range %{{.*}} = 0 to 3 {
// CHECK-NOT:     arm_dsp.smlad_tile_row

func.func @last(%bias: !uop.buffer<4xi32>, %w: !uop.buffer<32xi8>, %x: !uop.buffer<48xi8>, %mult: !uop.buffer<4xi32>, %y: !uop.buffer<24xi8>) {
  %zp = uop.const -4080 : i32
  uop.range %m = 0 to 4 step 2 {
    uop.range %q = 0 to 3 {
      %two = uop.const 2 : index
      %p2 = uop.mul %q, %two : index
      %five = uop.const 5 : index
      %p = uop.min %p2, %five : index
      %one = uop.const 1 : index
      %p1 = uop.add %p, %one : index
      %m1 = uop.add %m, %one : index
      %a00 = uop.define_acc 0 : i32
      %g00 = uop.gep inbounds %bias[%m] : !uop.buffer<4xi32>
      %b00 = uop.load %g00 : i32
      uop.acc_set %a00, %b00 : !uop.acc<i32>, i32
      %a01 = uop.define_acc 0 : i32
      %g01 = uop.gep inbounds %bias[%m] : !uop.buffer<4xi32>
      %b01 = uop.load %g01 : i32
      uop.acc_set %a01, %b01 : !uop.acc<i32>, i32
      %a10 = uop.define_acc 0 : i32
      %g10 = uop.gep inbounds %bias[%m1] : !uop.buffer<4xi32>
      %b10 = uop.load %g10 : i32
      uop.acc_set %a10, %b10 : !uop.acc<i32>, i32
      %a11 = uop.define_acc 0 : i32
      %g11 = uop.gep inbounds %bias[%m1] : !uop.buffer<4xi32>
      %b11 = uop.load %g11 : i32
      uop.acc_set %a11, %b11 : !uop.acc<i32>, i32
      %eight = uop.const 8 : index
      %wi = uop.mul %m, %eight : index
      %pa = uop.gep inbounds %w[%wi] : !uop.buffer<32xi8>
      %xi = uop.mul %p, %eight : index
      %pb = uop.gep inbounds %x[%xi] : !uop.buffer<48xi8>
      %c00 = uop.acc_get %a00 : !uop.acc<i32>, i32
      %c10 = uop.acc_get %a10 : !uop.acc<i32>, i32
      %c01 = uop.acc_get %a01 : !uop.acc<i32>, i32
      %c11 = uop.acc_get %a11 : !uop.acc<i32>, i32
      %r00, %r10, %r01, %r11 = arm_dsp.smlad_tile %pa, %pb, %c00, %c10, %c01, %c11 {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<8>} : !uop.ptr<i8>, !uop.ptr<i8>
      uop.acc_set %a00, %r00 : !uop.acc<i32>, i32
      uop.acc_set %a10, %r10 : !uop.acc<i32>, i32
      uop.acc_set %a01, %r01 : !uop.acc<i32>, i32
      uop.acc_set %a11, %r11 : !uop.acc<i32>, i32
      %six = uop.const 6 : index
      %row0 = uop.mul %m, %six : index
      %row1 = uop.mul %m1, %six : index
      %s00 = uop.acc_get %a00 : !uop.acc<i32>, i32
      %k00 = uop.gep inbounds %mult[%m] : !uop.buffer<4xi32>
      %n00 = uop.load %k00 : i32
      %h00 = arm_dsp.smmla %s00, %n00, %zp : i32
      %t00 = arm_dsp.ssat %h00 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v00 = uop.cast %t00 : i32 to i8
      %i00 = uop.add %row0, %p : index
      %y00 = uop.gep inbounds %y[%i00] : !uop.buffer<24xi8>
      uop.store %v00, %y00 : i8
      %s01 = uop.acc_get %a01 : !uop.acc<i32>, i32
      %k01 = uop.gep inbounds %mult[%m] : !uop.buffer<4xi32>
      %n01 = uop.load %k01 : i32
      %h01 = arm_dsp.smmla %s01, %n01, %zp : i32
      %t01 = arm_dsp.ssat %h01 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v01 = uop.cast %t01 : i32 to i8
      %i01 = uop.add %row0, %p1 : index
      %y01 = uop.gep inbounds %y[%i01] : !uop.buffer<24xi8>
      uop.store %v01, %y01 : i8
      %s10 = uop.acc_get %a10 : !uop.acc<i32>, i32
      %k10 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
      %n10 = uop.load %k10 : i32
      %h10 = arm_dsp.smmla %s10, %n10, %zp : i32
      %t10 = arm_dsp.ssat %h10 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v10 = uop.cast %t10 : i32 to i8
      %i10 = uop.add %row1, %p : index
      %y10 = uop.gep inbounds %y[%i10] : !uop.buffer<24xi8>
      uop.store %v10, %y10 : i8
      %s11 = uop.acc_get %a11 : !uop.acc<i32>, i32
      %k11 = uop.gep inbounds %mult[%m1] : !uop.buffer<4xi32>
      %n11 = uop.load %k11 : i32
      %h11 = arm_dsp.smmla %s11, %n11, %zp : i32
      %t11 = arm_dsp.ssat %h11 {bits = #builtin.int<8>, shift = #builtin.int<5>} : i32
      %v11 = uop.cast %t11 : i32 to i8
      %i11 = uop.add %row1, %p1 : index
      %y11 = uop.gep inbounds %y[%i11] : !uop.buffer<24xi8>
      uop.store %v11, %y11 : i8
    }
  }
  func.return
}

