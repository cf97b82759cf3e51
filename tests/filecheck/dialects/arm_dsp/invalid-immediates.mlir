// RUN: zant-opt %s --split-input-file --verify-diagnostics

// Offsets past a Thumb-2 immediate (arm_dsp.LOAD_OFFSETS): the verifiers refuse them, since
// their asm would not assemble (LLVM: "invalid operand for instruction"). The passes that make
// these ops check the same bounds (arm_dsp.LOAD_OFFSETS, stores_in_reach, smlad_block_in_reach;
// arm_dsp_tile_rows.IMMEDIATE).

// smlad_tile_row (steps <= 8: the asm form): its stores at y_next + y_pixel, an STRB immediate
// of at most 4095.

func.func @tile_row_far_store(%c : i32, %m : i32) {
  %w = uop.define_local "w" : !uop.buffer<64xi8>
  %y = uop.define_local "y" : !uop.buffer<8192xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %w[%zero] : !uop.buffer<64xi8>
  %py = uop.gep %y[%zero] : !uop.buffer<8192xi8>
  // expected-error@+1 {{smlad_tile_row}}
  arm_dsp.smlad_tile_row %pa, %pa, %py, %c, %c, %m, %m {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<8>, pairs = #builtin.int<1>, b_pair = #builtin.int<16>, y_pair = #builtin.int<2>, y_next = #builtin.int<4096>, y_pixel = #builtin.int<1>, addend = #builtin.int<0>, shift = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i8>, !uop.ptr<i8>
  func.return
}

// -----

// smlad_block_row: its stores at y_pixel from Y's pointer, an STRB immediate of at least -255.

func.func @block_row_store_before(%c : i32, %m : i32) {
  %col = uop.define_local "col" : !uop.buffer<672xi32>
  %y = uop.define_local "y" : !uop.buffer<18432xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %col[%zero] : !uop.buffer<672xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<18432xi8>
  // expected-error@+1 {{smlad_block_row}}
  arm_dsp.smlad_block_row %pa, %pa, %py, %c, %c, %c, %c, %m, %m, %m, %m {steps = #builtin.int<14>, a_next = #builtin.int<14>, b_next = #builtin.int<14>, pairs = #builtin.int<24>, a_pair = #builtin.int<28>, y_pair = #builtin.int<2>, y_next = #builtin.int<2304>, y_pixel = #builtin.int<-256>, addend = #builtin.int<0>, shift = #builtin.int<4>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// smlad_block: its weight rows' words at 4·(3·b_next + s), an LDR immediate of at most 4095.

func.func @block_far_rows() {
  %x = uop.define_local "x" : !uop.buffer<64xi32>
  %w = uop.define_local "w" : !uop.buffer<2048xi32>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<64xi32>
  %pb = uop.gep %w[%zero] : !uop.buffer<2048xi32>
  // expected-error@+1 {{smlad_block}}
  %r00, %r01, %r10, %r11, %r20, %r21, %r30, %r31 = arm_dsp.smlad_block %pa, %pb {steps = #builtin.int<3>, a_next = #builtin.int<3>, b_next = #builtin.int<400>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32, i32, i32
  func.return
}
