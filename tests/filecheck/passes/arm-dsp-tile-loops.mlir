// RUN: zant-opt %s -p arm-dsp-tile-loops | filecheck %s
// RUN: zant-opt %s -p arm-dsp-tile-loops | zant-opt | filecheck %s

// A 2 x 2 tile over 64 channels (conv_columns after fuse-smlad-bytes): the rows' words (w, two
// rows interleaved word by word: 8 bytes per step, the second row 4 bytes after the first) and
// the pixels' words (x, channels-last: 4 bytes per step, the second pixel 64 bytes after the
// first). The loop becomes one smlad_tile of 16 steps, its pointers the first step's addresses,
// its sums read from and written back to the four accumulators.
// CHECK-LABEL: func.func @tile(
// CHECK-NOT:     uop.range
// CHECK:         %[[PA:.*]] = uop.gep inbounds %w[%wi] : !uop.buffer<256xi8>
// CHECK:         %[[PB:.*]] = uop.gep inbounds %x[%xi] : !uop.buffer<256xi8>
// CHECK-NEXT:    %[[C00:.*]] = uop.acc_get %a00 : !uop.acc<i32>, i32
// CHECK-NEXT:    %[[C10:.*]] = uop.acc_get %a10 : !uop.acc<i32>, i32
// CHECK-NEXT:    %[[C01:.*]] = uop.acc_get %a01 : !uop.acc<i32>, i32
// CHECK-NEXT:    %[[C11:.*]] = uop.acc_get %a11 : !uop.acc<i32>, i32
// CHECK-NEXT:    %[[R00:.*]], %[[R10:.*]], %[[R01:.*]], %[[R11:.*]] = arm_dsp.smlad_tile %[[PA]], %[[PB]], %[[C00]], %[[C10]], %[[C01]], %[[C11]] {steps = #builtin.int<16>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<64>} : !uop.ptr<i8>, !uop.ptr<i8>
// CHECK-NEXT:    uop.acc_set %a00, %[[R00]] : !uop.acc<i32>, i32
// CHECK-NEXT:    uop.acc_set %a10, %[[R10]] : !uop.acc<i32>, i32
// CHECK-NEXT:    uop.acc_set %a01, %[[R01]] : !uop.acc<i32>, i32
// CHECK-NEXT:    uop.acc_set %a11, %[[R11]] : !uop.acc<i32>, i32
// CHECK-NEXT:    func.return
func.func @tile(%m: index, %p: index) {
  %w = uop.define_global "input" 1 "w" : !uop.buffer<256xi8>
  %x = uop.define_global "input" 0 "x" : !uop.buffer<256xi8>
  %a00 = uop.define_acc 0 : i32
  %a10 = uop.define_acc 0 : i32
  %a01 = uop.define_acc 0 : i32
  %a11 = uop.define_acc 0 : i32
  %c64 = uop.const 64 : index
  %one = uop.const 1 : index
  %p1 = uop.add %p, %one : index
  uop.range %k = 0 to 64 step 4 {
    %mk = uop.mul %m, %c64 : index
    %two = uop.const 2 : index
    %k2 = uop.mul %k, %two : index
    %wi = uop.add %mk, %k2 : index
    %four = uop.const 4 : index
    %wi1 = uop.add %wi, %four : index
    %pk = uop.mul %p, %c64 : index
    %xi = uop.add %pk, %k : index
    %pk1 = uop.mul %p1, %c64 : index
    %xi1 = uop.add %pk1, %k : index
    %wp0 = uop.gep inbounds %w[%wi] : !uop.buffer<256xi8>
    %wp1 = uop.gep inbounds %w[%wi1] : !uop.buffer<256xi8>
    %xp0 = uop.gep inbounds %x[%xi] : !uop.buffer<256xi8>
    %xp1 = uop.gep inbounds %x[%xi1] : !uop.buffer<256xi8>
    %x0 = arm_dsp.load_word %xp0 : !uop.ptr<i8>
    %w0 = arm_dsp.load_word %wp0 : !uop.ptr<i8>
    %e0 = arm_dsp.sxtb16 %w0 : i32
    %o0 = arm_dsp.sxtb16 %w0 ror 8 : i32
    %c00 = uop.acc_get %a00 : !uop.acc<i32>, i32
    %x1 = arm_dsp.load_word %xp1 : !uop.ptr<i8>
    %c01 = uop.acc_get %a01 : !uop.acc<i32>, i32
    %w1 = arm_dsp.load_word %wp1 : !uop.ptr<i8>
    %e1 = arm_dsp.sxtb16 %w1 : i32
    %o1 = arm_dsp.sxtb16 %w1 ror 8 : i32
    %c10 = uop.acc_get %a10 : !uop.acc<i32>, i32
    %r00, %r10 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %x0, %c00, %c10 : i32
    uop.acc_set %a00, %r00 : !uop.acc<i32>, i32
    uop.acc_set %a10, %r10 : !uop.acc<i32>, i32
    %c11 = uop.acc_get %a11 : !uop.acc<i32>, i32
    %r01, %r11 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %x1, %c01, %c11 : i32
    uop.acc_set %a01, %r01 : !uop.acc<i32>, i32
    uop.acc_set %a11, %r11 : !uop.acc<i32>, i32
  }
  func.return
}

// Two steps (8 channels): the same op, straight-line code in the target (at most
// SMLAD_TILE_STRAIGHT steps); 9 to 15 steps stay LLVM's loop (left alone, below).
// CHECK-LABEL: func.func @short_tile(
// CHECK-NOT:     uop.range
// CHECK:         arm_dsp.smlad_tile {{.*}} {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<64>}
// CHECK-NOT:     arm_dsp.smlad_bytes_pair
func.func @short_tile(%m: index, %p: index) {
  %w = uop.define_global "input" 1 "w" : !uop.buffer<256xi8>
  %x = uop.define_global "input" 0 "x" : !uop.buffer<256xi8>
  %a00 = uop.define_acc 0 : i32
  %a10 = uop.define_acc 0 : i32
  %a01 = uop.define_acc 0 : i32
  %a11 = uop.define_acc 0 : i32
  %c64 = uop.const 64 : index
  %one = uop.const 1 : index
  %p1 = uop.add %p, %one : index
  uop.range %k = 0 to 8 step 4 {
    %mk = uop.mul %m, %c64 : index
    %two = uop.const 2 : index
    %k2 = uop.mul %k, %two : index
    %wi = uop.add %mk, %k2 : index
    %four = uop.const 4 : index
    %wi1 = uop.add %wi, %four : index
    %pk = uop.mul %p, %c64 : index
    %xi = uop.add %pk, %k : index
    %pk1 = uop.mul %p1, %c64 : index
    %xi1 = uop.add %pk1, %k : index
    %wp0 = uop.gep inbounds %w[%wi] : !uop.buffer<256xi8>
    %wp1 = uop.gep inbounds %w[%wi1] : !uop.buffer<256xi8>
    %xp0 = uop.gep inbounds %x[%xi] : !uop.buffer<256xi8>
    %xp1 = uop.gep inbounds %x[%xi1] : !uop.buffer<256xi8>
    %x0 = arm_dsp.load_word %xp0 : !uop.ptr<i8>
    %w0 = arm_dsp.load_word %wp0 : !uop.ptr<i8>
    %e0 = arm_dsp.sxtb16 %w0 : i32
    %o0 = arm_dsp.sxtb16 %w0 ror 8 : i32
    %c00 = uop.acc_get %a00 : !uop.acc<i32>, i32
    %x1 = arm_dsp.load_word %xp1 : !uop.ptr<i8>
    %c01 = uop.acc_get %a01 : !uop.acc<i32>, i32
    %w1 = arm_dsp.load_word %wp1 : !uop.ptr<i8>
    %e1 = arm_dsp.sxtb16 %w1 : i32
    %o1 = arm_dsp.sxtb16 %w1 ror 8 : i32
    %c10 = uop.acc_get %a10 : !uop.acc<i32>, i32
    %r00, %r10 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %x0, %c00, %c10 : i32
    uop.acc_set %a00, %r00 : !uop.acc<i32>, i32
    uop.acc_set %a10, %r10 : !uop.acc<i32>, i32
    %c11 = uop.acc_get %a11 : !uop.acc<i32>, i32
    %r01, %r11 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %x1, %c01, %c11 : i32
    uop.acc_set %a01, %r01 : !uop.acc<i32>, i32
    uop.acc_set %a11, %r11 : !uop.acc<i32>, i32
  }
  func.return
}

// Left alone: the two pixels' words in different buffers (no constant distance); a word read
// by another op too; the second pixel 4096 bytes after the first (beyond a load's immediate);
// 15 steps (between SMLAD_TILE_STRAIGHT and MIN_STEPS: LLVM unrolls them whole); 1 step (below
// MIN_STRAIGHT).
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     arm_dsp.smlad_tile
// CHECK-COUNT-10: arm_dsp.smlad_bytes_pair
// CHECK-NOT:     arm_dsp.smlad_tile
func.func @left_alone() {
  %w = uop.define_global "input" 3 "w" : !uop.buffer<256xi8>
  %x = uop.define_global "input" 0 "x" : !uop.buffer<256xi8>
  %y = uop.define_global "input" 1 "y" : !uop.buffer<256xi8>
  %z = uop.define_global "input" 2 "z" : !uop.buffer<8192xi8>
  %a00 = uop.define_acc 0 : i32
  %a10 = uop.define_acc 0 : i32
  %a01 = uop.define_acc 0 : i32
  %a11 = uop.define_acc 0 : i32
  uop.range %k = 0 to 64 step 4 {
    %four = uop.const 4 : index
    %k2 = uop.add %k, %four : index
    %wp0 = uop.gep inbounds %w[%k] : !uop.buffer<256xi8>
    %wp1 = uop.gep inbounds %w[%k2] : !uop.buffer<256xi8>
    %xp0 = uop.gep inbounds %x[%k] : !uop.buffer<256xi8>
    %xp1 = uop.gep inbounds %y[%k] : !uop.buffer<256xi8>
    %x0 = arm_dsp.load_word %xp0 : !uop.ptr<i8>
    %x1 = arm_dsp.load_word %xp1 : !uop.ptr<i8>
    %w0 = arm_dsp.load_word %wp0 : !uop.ptr<i8>
    %w1 = arm_dsp.load_word %wp1 : !uop.ptr<i8>
    %e0 = arm_dsp.sxtb16 %w0 : i32
    %o0 = arm_dsp.sxtb16 %w0 ror 8 : i32
    %e1 = arm_dsp.sxtb16 %w1 : i32
    %o1 = arm_dsp.sxtb16 %w1 ror 8 : i32
    %c00 = uop.acc_get %a00 : !uop.acc<i32>, i32
    %c10 = uop.acc_get %a10 : !uop.acc<i32>, i32
    %r00, %r10 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %x0, %c00, %c10 : i32
    uop.acc_set %a00, %r00 : !uop.acc<i32>, i32
    uop.acc_set %a10, %r10 : !uop.acc<i32>, i32
    %c01 = uop.acc_get %a01 : !uop.acc<i32>, i32
    %c11 = uop.acc_get %a11 : !uop.acc<i32>, i32
    %r01, %r11 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %x1, %c01, %c11 : i32
    uop.acc_set %a01, %r01 : !uop.acc<i32>, i32
    uop.acc_set %a11, %r11 : !uop.acc<i32>, i32
  }
  uop.range %k = 0 to 64 step 4 {
    %four = uop.const 4 : index
    %k2 = uop.add %k, %four : index
    %wp0 = uop.gep inbounds %w[%k] : !uop.buffer<256xi8>
    %wp1 = uop.gep inbounds %w[%k2] : !uop.buffer<256xi8>
    %xp0 = uop.gep inbounds %x[%k] : !uop.buffer<256xi8>
    %xp1 = uop.gep inbounds %x[%k2] : !uop.buffer<256xi8>
    %x0 = arm_dsp.load_word %xp0 : !uop.ptr<i8>
    %x1 = arm_dsp.load_word %xp1 : !uop.ptr<i8>
    %w0 = arm_dsp.load_word %wp0 : !uop.ptr<i8>
    %w1 = arm_dsp.load_word %wp1 : !uop.ptr<i8>
    %e0 = arm_dsp.sxtb16 %w0 : i32
    %o0 = arm_dsp.sxtb16 %w0 ror 8 : i32
    %e1 = arm_dsp.sxtb16 %w1 : i32
    %o1 = arm_dsp.sxtb16 %w1 ror 8 : i32
    %c00 = uop.acc_get %a00 : !uop.acc<i32>, i32
    %c10 = uop.acc_get %a10 : !uop.acc<i32>, i32
    %r00, %r10 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %x0, %c00, %c10 : i32
    uop.acc_set %a00, %r00 : !uop.acc<i32>, i32
    uop.acc_set %a10, %r10 : !uop.acc<i32>, i32
    %c01 = uop.acc_get %a01 : !uop.acc<i32>, i32
    %c11 = uop.acc_get %a11 : !uop.acc<i32>, i32
    %r01, %r11 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %x1, %c01, %c11 : i32
    uop.acc_set %a01, %r01 : !uop.acc<i32>, i32
    uop.acc_set %a11, %r11 : !uop.acc<i32>, i32
    "test.op"(%x1) : (i32) -> ()
  }
  uop.range %k = 0 to 64 step 4 {
    %four = uop.const 4 : index
    %k2 = uop.add %k, %four : index
    %far = uop.const 4096 : index
    %kf = uop.add %k, %far : index
    %wp0 = uop.gep inbounds %w[%k] : !uop.buffer<256xi8>
    %wp1 = uop.gep inbounds %w[%k2] : !uop.buffer<256xi8>
    %xp0 = uop.gep inbounds %z[%k] : !uop.buffer<8192xi8>
    %xp1 = uop.gep inbounds %z[%kf] : !uop.buffer<8192xi8>
    %x0 = arm_dsp.load_word %xp0 : !uop.ptr<i8>
    %x1 = arm_dsp.load_word %xp1 : !uop.ptr<i8>
    %w0 = arm_dsp.load_word %wp0 : !uop.ptr<i8>
    %w1 = arm_dsp.load_word %wp1 : !uop.ptr<i8>
    %e0 = arm_dsp.sxtb16 %w0 : i32
    %o0 = arm_dsp.sxtb16 %w0 ror 8 : i32
    %e1 = arm_dsp.sxtb16 %w1 : i32
    %o1 = arm_dsp.sxtb16 %w1 ror 8 : i32
    %c00 = uop.acc_get %a00 : !uop.acc<i32>, i32
    %c10 = uop.acc_get %a10 : !uop.acc<i32>, i32
    %r00, %r10 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %x0, %c00, %c10 : i32
    uop.acc_set %a00, %r00 : !uop.acc<i32>, i32
    uop.acc_set %a10, %r10 : !uop.acc<i32>, i32
    %c01 = uop.acc_get %a01 : !uop.acc<i32>, i32
    %c11 = uop.acc_get %a11 : !uop.acc<i32>, i32
    %r01, %r11 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %x1, %c01, %c11 : i32
    uop.acc_set %a01, %r01 : !uop.acc<i32>, i32
    uop.acc_set %a11, %r11 : !uop.acc<i32>, i32
  }
  uop.range %k = 0 to 60 step 4 {
    %four = uop.const 4 : index
    %k2 = uop.add %k, %four : index
    %wp0 = uop.gep inbounds %w[%k] : !uop.buffer<256xi8>
    %wp1 = uop.gep inbounds %w[%k2] : !uop.buffer<256xi8>
    %xp0 = uop.gep inbounds %x[%k] : !uop.buffer<256xi8>
    %xp1 = uop.gep inbounds %x[%k2] : !uop.buffer<256xi8>
    %x0 = arm_dsp.load_word %xp0 : !uop.ptr<i8>
    %x1 = arm_dsp.load_word %xp1 : !uop.ptr<i8>
    %w0 = arm_dsp.load_word %wp0 : !uop.ptr<i8>
    %w1 = arm_dsp.load_word %wp1 : !uop.ptr<i8>
    %e0 = arm_dsp.sxtb16 %w0 : i32
    %o0 = arm_dsp.sxtb16 %w0 ror 8 : i32
    %e1 = arm_dsp.sxtb16 %w1 : i32
    %o1 = arm_dsp.sxtb16 %w1 ror 8 : i32
    %c00 = uop.acc_get %a00 : !uop.acc<i32>, i32
    %c10 = uop.acc_get %a10 : !uop.acc<i32>, i32
    %r00, %r10 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %x0, %c00, %c10 : i32
    uop.acc_set %a00, %r00 : !uop.acc<i32>, i32
    uop.acc_set %a10, %r10 : !uop.acc<i32>, i32
    %c01 = uop.acc_get %a01 : !uop.acc<i32>, i32
    %c11 = uop.acc_get %a11 : !uop.acc<i32>, i32
    %r01, %r11 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %x1, %c01, %c11 : i32
    uop.acc_set %a01, %r01 : !uop.acc<i32>, i32
    uop.acc_set %a11, %r11 : !uop.acc<i32>, i32
  }
  uop.range %k = 0 to 4 step 4 {
    %four = uop.const 4 : index
    %k2 = uop.add %k, %four : index
    %wp0 = uop.gep inbounds %w[%k] : !uop.buffer<256xi8>
    %wp1 = uop.gep inbounds %w[%k2] : !uop.buffer<256xi8>
    %xp0 = uop.gep inbounds %x[%k] : !uop.buffer<256xi8>
    %xp1 = uop.gep inbounds %x[%k2] : !uop.buffer<256xi8>
    %x0 = arm_dsp.load_word %xp0 : !uop.ptr<i8>
    %x1 = arm_dsp.load_word %xp1 : !uop.ptr<i8>
    %w0 = arm_dsp.load_word %wp0 : !uop.ptr<i8>
    %w1 = arm_dsp.load_word %wp1 : !uop.ptr<i8>
    %e0 = arm_dsp.sxtb16 %w0 : i32
    %o0 = arm_dsp.sxtb16 %w0 ror 8 : i32
    %e1 = arm_dsp.sxtb16 %w1 : i32
    %o1 = arm_dsp.sxtb16 %w1 ror 8 : i32
    %c00 = uop.acc_get %a00 : !uop.acc<i32>, i32
    %c10 = uop.acc_get %a10 : !uop.acc<i32>, i32
    %r00, %r10 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %x0, %c00, %c10 : i32
    uop.acc_set %a00, %r00 : !uop.acc<i32>, i32
    uop.acc_set %a10, %r10 : !uop.acc<i32>, i32
    %c01 = uop.acc_get %a01 : !uop.acc<i32>, i32
    %c11 = uop.acc_get %a11 : !uop.acc<i32>, i32
    %r01, %r11 = arm_dsp.smlad_bytes_pair %e0, %o0, %e1, %o1, %x1, %c01, %c11 : i32
    uop.acc_set %a01, %r01 : !uop.acc<i32>, i32
    uop.acc_set %a11, %r11 : !uop.acc<i32>, i32
  }
  func.return
}
