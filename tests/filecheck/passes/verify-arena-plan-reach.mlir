// RUN: zant-opt %s --split-input-file --verify-diagnostics -p verify-arena-plan | filecheck %s

// Each op that declares its reach (zant.ir.target_ops.Reach): its pointers' buffers end exactly
// where the reach does (passes, both pointers checked), then the buffer of one pointer one
// element short (fails, naming the op, the pointer, the buffer and the bytes over). Every
// pointer starts at element 2 of its buffer.

// load_word at the end of its buffers: p [0, 4)

// CHECK: zant.asm_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @load_word_at_the_end
builtin.module {
  func.func @load_word_at_the_end() {
    abi.arena "scratch" size 16 align 16
    %p_buffer = uop.define_local "p" at 0 : !uop.buffer<6xi8>
    %start = uop.const 2 : index
    %p = uop.gep %p_buffer[%start] : !uop.buffer<6xi8>
    %c = uop.const 0 : i32
    %w = arm_dsp.load_word %p : !uop.ptr<i8>
    func.return
  }
}

// -----

// load_word, p's buffer one element short (one unaligned word)

builtin.module {
  func.func @load_word_one_past() {
    abi.arena "scratch" size 16 align 16
    %p_buffer = uop.define_local "p" at 0 : !uop.buffer<5xi8>
    %start = uop.const 2 : index
    %p = uop.gep %p_buffer[%start] : !uop.buffer<5xi8>
    %c = uop.const 0 : i32
    %w = arm_dsp.load_word %p : !uop.ptr<i8>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.load_word's ptr reaches bytes [2, 6) of 'p' (5 bytes, at [0, 5) in its scratch arena): 1 byte past its end (its reach [0, 4) from a start at bytes 2..2)}}

// -----

// load_word16 at the end of its buffers: p [0, 4)

// CHECK: zant.asm_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @load_word16_at_the_end
builtin.module {
  func.func @load_word16_at_the_end() {
    abi.arena "scratch" size 16 align 16
    %p_buffer = uop.define_local "p" at 0 : !uop.buffer<4xi16>
    %start = uop.const 2 : index
    %p = uop.gep %p_buffer[%start] : !uop.buffer<4xi16>
    %c = uop.const 0 : i32
    %w = arm_dsp.load_word %p : !uop.ptr<i16>
    func.return
  }
}

// -----

// load_word16, p's buffer one element short (two int16)

builtin.module {
  func.func @load_word16_one_past() {
    abi.arena "scratch" size 16 align 16
    %p_buffer = uop.define_local "p" at 0 : !uop.buffer<3xi16>
    %start = uop.const 2 : index
    %p = uop.gep %p_buffer[%start] : !uop.buffer<3xi16>
    %c = uop.const 0 : i32
    %w = arm_dsp.load_word %p : !uop.ptr<i16>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.load_word's ptr reaches bytes [4, 8) of 'p' (6 bytes, at [0, 6) in its scratch arena): 2 bytes past its end (its reach [0, 4) from a start at bytes 4..4)}}

// -----

// load_s4x4 at the end of its buffers: p [0, 2)

// CHECK: zant.asm_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @load_s4x4_at_the_end
builtin.module {
  func.func @load_s4x4_at_the_end() {
    abi.arena "scratch" size 16 align 16
    %p_buffer = uop.define_local "p" at 0 : !uop.buffer<6xi4>
    %start = uop.const 2 : index
    %p = uop.gep %p_buffer[%start] : !uop.buffer<6xi4>
    %c = uop.const 0 : i32
    %e, %o = arm_dsp.load_s4x4 %p : !uop.ptr<i4>
    func.return
  }
}

// -----

// load_s4x4, p's buffer one element short (4 int4: two bytes)

builtin.module {
  func.func @load_s4x4_one_past() {
    abi.arena "scratch" size 16 align 16
    %p_buffer = uop.define_local "p" at 0 : !uop.buffer<4xi4>
    %start = uop.const 2 : index
    %p = uop.gep %p_buffer[%start] : !uop.buffer<4xi4>
    %c = uop.const 0 : i32
    %e, %o = arm_dsp.load_s4x4 %p : !uop.ptr<i4>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.load_s4x4's ptr reaches bytes [1, 3) of 'p' (2 bytes, at [0, 2) in its scratch arena): 1 byte past its end (its reach [0, 2) from a start at bytes 1..1)}}

// -----

// smlad_tile at the end of its buffers: pa [0, 24), pb [0, 24)

// CHECK: zant.asm_reach = {checked = 2 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @smlad_tile_at_the_end
builtin.module {
  func.func @smlad_tile_at_the_end() {
    abi.arena "scratch" size 64 align 16
    %pa_buffer = uop.define_local "pa" at 0 : !uop.buffer<26xi8>
    %pb_buffer = uop.define_local "pb" at 32 : !uop.buffer<26xi8>
    %start = uop.const 2 : index
    %pa = uop.gep %pa_buffer[%start] : !uop.buffer<26xi8>
    %pb = uop.gep %pb_buffer[%start] : !uop.buffer<26xi8>
    %c = uop.const 0 : i32
    %r00, %r10, %r01, %r11 = arm_dsp.smlad_tile %pa, %pb, %c, %c, %c, %c {steps = #builtin.int<3>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<12>} : !uop.ptr<i8>, !uop.ptr<i8>
    func.return
  }
}

// -----

// smlad_tile, pb's buffer one element short (words at s·b_step + {0, b_next})

builtin.module {
  func.func @smlad_tile_one_past() {
    abi.arena "scratch" size 64 align 16
    %pa_buffer = uop.define_local "pa" at 0 : !uop.buffer<26xi8>
    %pb_buffer = uop.define_local "pb" at 32 : !uop.buffer<25xi8>
    %start = uop.const 2 : index
    %pa = uop.gep %pa_buffer[%start] : !uop.buffer<26xi8>
    %pb = uop.gep %pb_buffer[%start] : !uop.buffer<25xi8>
    %c = uop.const 0 : i32
    %r00, %r10, %r01, %r11 = arm_dsp.smlad_tile %pa, %pb, %c, %c, %c, %c {steps = #builtin.int<3>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<12>} : !uop.ptr<i8>, !uop.ptr<i8>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.smlad_tile's pb reaches bytes [2, 26) of 'pb' (25 bytes, at [32, 57) in its scratch arena): 1 byte past its end (its reach [0, 24) from a start at bytes 2..2)}}

// -----

// smlad_window at the end of its buffers: px [0, 64), pw [0, 144)

// CHECK: zant.asm_reach = {checked = 2 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @smlad_window_at_the_end
builtin.module {
  func.func @smlad_window_at_the_end() {
    abi.arena "scratch" size 240 align 16
    %px_buffer = uop.define_local "px" at 0 : !uop.buffer<66xi8>
    %pw_buffer = uop.define_local "pw" at 80 : !uop.buffer<74xi16>
    %start = uop.const 2 : index
    %px = uop.gep %px_buffer[%start] : !uop.buffer<66xi8>
    %pw = uop.gep %pw_buffer[%start] : !uop.buffer<74xi16>
    %c = uop.const 0 : i32
    %r00, %r10, %r01, %r11 = arm_dsp.smlad_window %px, %pw, %c, %c, %c, %c {rows = #builtin.int<3>, steps = #builtin.int<3>, x_row = #builtin.int<24>, x_next = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i16>
    func.return
  }
}

// -----

// smlad_window, px's buffer one element short (rows of words, two pixels)

builtin.module {
  func.func @smlad_window_one_past() {
    abi.arena "scratch" size 240 align 16
    %px_buffer = uop.define_local "px" at 0 : !uop.buffer<65xi8>
    %pw_buffer = uop.define_local "pw" at 80 : !uop.buffer<74xi16>
    %start = uop.const 2 : index
    %px = uop.gep %px_buffer[%start] : !uop.buffer<65xi8>
    %pw = uop.gep %pw_buffer[%start] : !uop.buffer<74xi16>
    %c = uop.const 0 : i32
    %r00, %r10, %r01, %r11 = arm_dsp.smlad_window %px, %pw, %c, %c, %c, %c {rows = #builtin.int<3>, steps = #builtin.int<3>, x_row = #builtin.int<24>, x_next = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i16>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.smlad_window's px reaches bytes [2, 66) of 'px' (65 bytes, at [0, 65) in its scratch arena): 1 byte past its end (its reach [0, 64) from a start at bytes 2..2)}}

// -----

// smlad_rows at the end of its buffers: pa [0, 24), pb [0, 32)

// CHECK: zant.asm_reach = {checked = 2 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @smlad_rows_at_the_end
builtin.module {
  func.func @smlad_rows_at_the_end() {
    abi.arena "scratch" size 80 align 16
    %pa_buffer = uop.define_local "pa" at 0 : !uop.buffer<14xi16>
    %pb_buffer = uop.define_local "pb" at 32 : !uop.buffer<34xi8>
    %start = uop.const 2 : index
    %pa = uop.gep %pa_buffer[%start] : !uop.buffer<14xi16>
    %pb = uop.gep %pb_buffer[%start] : !uop.buffer<34xi8>
    %c = uop.const 0 : i32
    %r0, %r1, %r2, %r3 = arm_dsp.smlad_rows %pa, %pb, %c {steps = #builtin.int<3>, rows = #builtin.int<2>} : !uop.ptr<i16>, !uop.ptr<i8> -> i32, i32, i32, i32
    func.return
  }
}

// -----

// smlad_rows, pb's buffer one element short (biases, then a word a row per step)

builtin.module {
  func.func @smlad_rows_one_past() {
    abi.arena "scratch" size 80 align 16
    %pa_buffer = uop.define_local "pa" at 0 : !uop.buffer<14xi16>
    %pb_buffer = uop.define_local "pb" at 32 : !uop.buffer<33xi8>
    %start = uop.const 2 : index
    %pa = uop.gep %pa_buffer[%start] : !uop.buffer<14xi16>
    %pb = uop.gep %pb_buffer[%start] : !uop.buffer<33xi8>
    %c = uop.const 0 : i32
    %r0, %r1, %r2, %r3 = arm_dsp.smlad_rows %pa, %pb, %c {steps = #builtin.int<3>, rows = #builtin.int<2>} : !uop.ptr<i16>, !uop.ptr<i8> -> i32, i32, i32, i32
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.smlad_rows's pb reaches bytes [2, 34) of 'pb' (33 bytes, at [32, 65) in its scratch arena): 1 byte past its end (its reach [0, 32) from a start at bytes 2..2)}}

// -----

// smlad_layer at the end of its buffers: pa [0, 16), pb [0, 180), py [0, 15)

// CHECK: zant.asm_reach = {checked = 3 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @smlad_layer_at_the_end
builtin.module {
  func.func @smlad_layer_at_the_end() {
    abi.arena "scratch" size 256 align 16
    %pa_buffer = uop.define_local "pa" at 0 : !uop.buffer<10xi16>
    %pb_buffer = uop.define_local "pb" at 32 : !uop.buffer<182xi8>
    %py_buffer = uop.define_local "py" at 224 : !uop.buffer<17xi8>
    %start = uop.const 2 : index
    %pa = uop.gep %pa_buffer[%start] : !uop.buffer<10xi16>
    %pb = uop.gep %pb_buffer[%start] : !uop.buffer<182xi8>
    %py = uop.gep %py_buffer[%start] : !uop.buffer<17xi8>
    %c = uop.const 0 : i32
    arm_dsp.smlad_layer %pa, %pb, %c, %py {steps = #builtin.int<2>, blocks = #builtin.int<3>, multiplier = #builtin.int<1462485120>, addend = #builtin.int<-7168>, shift = #builtin.int<11>} : !uop.ptr<i16>, !uop.ptr<i8>, !uop.ptr<i8>
    func.return
  }
}

// -----

// smlad_layer, py's buffer one element short (5 outputs a block)

builtin.module {
  func.func @smlad_layer_one_past() {
    abi.arena "scratch" size 256 align 16
    %pa_buffer = uop.define_local "pa" at 0 : !uop.buffer<10xi16>
    %pb_buffer = uop.define_local "pb" at 32 : !uop.buffer<182xi8>
    %py_buffer = uop.define_local "py" at 224 : !uop.buffer<16xi8>
    %start = uop.const 2 : index
    %pa = uop.gep %pa_buffer[%start] : !uop.buffer<10xi16>
    %pb = uop.gep %pb_buffer[%start] : !uop.buffer<182xi8>
    %py = uop.gep %py_buffer[%start] : !uop.buffer<16xi8>
    %c = uop.const 0 : i32
    arm_dsp.smlad_layer %pa, %pb, %c, %py {steps = #builtin.int<2>, blocks = #builtin.int<3>, multiplier = #builtin.int<1462485120>, addend = #builtin.int<-7168>, shift = #builtin.int<11>} : !uop.ptr<i16>, !uop.ptr<i8>, !uop.ptr<i8>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.smlad_layer's py reaches bytes [2, 17) of 'py' (16 bytes, at [224, 240) in its scratch arena): 1 byte past its end (its reach [0, 15) from a start at bytes 2..2)}}

// -----

// smlad_block at the end of its buffers: pa [0, 32), pb [0, 48)

// CHECK: zant.asm_reach = {checked = 2 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @smlad_block_at_the_end
builtin.module {
  func.func @smlad_block_at_the_end() {
    abi.arena "scratch" size 112 align 16
    %pa_buffer = uop.define_local "pa" at 0 : !uop.buffer<10xi32>
    %pb_buffer = uop.define_local "pb" at 48 : !uop.buffer<14xi32>
    %start = uop.const 2 : index
    %pa = uop.gep %pa_buffer[%start] : !uop.buffer<10xi32>
    %pb = uop.gep %pb_buffer[%start] : !uop.buffer<14xi32>
    %c = uop.const 0 : i32
    %r00, %r01, %r10, %r11, %r20, %r21, %r30, %r31 = arm_dsp.smlad_block %pa, %pb {steps = #builtin.int<3>, a_next = #builtin.int<5>, b_next = #builtin.int<3>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32, i32, i32
    func.return
  }
}

// -----

// smlad_block, pa's buffer one element short (words j·a_next + s: one word past)

builtin.module {
  func.func @smlad_block_one_past() {
    abi.arena "scratch" size 112 align 16
    %pa_buffer = uop.define_local "pa" at 0 : !uop.buffer<9xi32>
    %pb_buffer = uop.define_local "pb" at 48 : !uop.buffer<14xi32>
    %start = uop.const 2 : index
    %pa = uop.gep %pa_buffer[%start] : !uop.buffer<9xi32>
    %pb = uop.gep %pb_buffer[%start] : !uop.buffer<14xi32>
    %c = uop.const 0 : i32
    %r00, %r01, %r10, %r11, %r20, %r21, %r30, %r31 = arm_dsp.smlad_block %pa, %pb {steps = #builtin.int<3>, a_next = #builtin.int<5>, b_next = #builtin.int<3>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32, i32, i32
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.smlad_block's pa reaches bytes [8, 40) of 'pa' (36 bytes, at [0, 36) in its scratch arena): 4 bytes past its end (its reach [0, 32) from a start at bytes 8..8)}}

// -----

// smlad_block_row at the end of its buffers: pa [0, 96), pb [0, 64), py [0, 27)

// CHECK: zant.asm_reach = {checked = 3 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @smlad_block_row_at_the_end
builtin.module {
  func.func @smlad_block_row_at_the_end() {
    abi.arena "scratch" size 224 align 16
    %pa_buffer = uop.define_local "pa" at 0 : !uop.buffer<26xi32>
    %pb_buffer = uop.define_local "pb" at 112 : !uop.buffer<18xi32>
    %py_buffer = uop.define_local "py" at 192 : !uop.buffer<29xi8>
    %start = uop.const 2 : index
    %pa = uop.gep %pa_buffer[%start] : !uop.buffer<26xi32>
    %pb = uop.gep %pb_buffer[%start] : !uop.buffer<18xi32>
    %py = uop.gep %py_buffer[%start] : !uop.buffer<29xi8>
    %c = uop.const 0 : i32
    arm_dsp.smlad_block_row %pa, %pb, %py, %c, %c, %c, %c, %c, %c, %c, %c {steps = #builtin.int<4>, a_next = #builtin.int<4>, b_next = #builtin.int<4>, pairs = #builtin.int<3>, a_pair = #builtin.int<8>, y_pair = #builtin.int<2>, y_next = #builtin.int<7>, y_pixel = #builtin.int<1>, addend = #builtin.int<-1280>, shift = #builtin.int<6>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
    func.return
  }
}

// -----

// smlad_block_row, py's buffer one element short (outputs q·y_pair + i·y_next + j·y_pixel)

builtin.module {
  func.func @smlad_block_row_one_past() {
    abi.arena "scratch" size 224 align 16
    %pa_buffer = uop.define_local "pa" at 0 : !uop.buffer<26xi32>
    %pb_buffer = uop.define_local "pb" at 112 : !uop.buffer<18xi32>
    %py_buffer = uop.define_local "py" at 192 : !uop.buffer<28xi8>
    %start = uop.const 2 : index
    %pa = uop.gep %pa_buffer[%start] : !uop.buffer<26xi32>
    %pb = uop.gep %pb_buffer[%start] : !uop.buffer<18xi32>
    %py = uop.gep %py_buffer[%start] : !uop.buffer<28xi8>
    %c = uop.const 0 : i32
    arm_dsp.smlad_block_row %pa, %pb, %py, %c, %c, %c, %c, %c, %c, %c, %c {steps = #builtin.int<4>, a_next = #builtin.int<4>, b_next = #builtin.int<4>, pairs = #builtin.int<3>, a_pair = #builtin.int<8>, y_pair = #builtin.int<2>, y_next = #builtin.int<7>, y_pixel = #builtin.int<1>, addend = #builtin.int<-1280>, shift = #builtin.int<6>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.smlad_block_row's py reaches bytes [2, 29) of 'py' (28 bytes, at [192, 220) in its scratch arena): 1 byte past its end (its reach [0, 27) from a start at bytes 2..2)}}

// -----

// smlad_quad_row at the end of its buffers: pa [0, 32), pb [0, 128), py [0, 17)

// CHECK: zant.asm_reach = {checked = 3 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @smlad_quad_row_at_the_end
builtin.module {
  func.func @smlad_quad_row_at_the_end() {
    abi.arena "scratch" size 224 align 16
    %pa_buffer = uop.define_local "pa" at 0 : !uop.buffer<10xi32>
    %pb_buffer = uop.define_local "pb" at 48 : !uop.buffer<34xi32>
    %py_buffer = uop.define_local "py" at 192 : !uop.buffer<19xi8>
    %start = uop.const 2 : index
    %pa = uop.gep %pa_buffer[%start] : !uop.buffer<10xi32>
    %pb = uop.gep %pb_buffer[%start] : !uop.buffer<34xi32>
    %py = uop.gep %py_buffer[%start] : !uop.buffer<19xi8>
    %c = uop.const 0 : i32
    arm_dsp.smlad_quad_row %pa, %pb, %py, %c, %c, %c, %c {steps = #builtin.int<4>, a_next = #builtin.int<4>, b_next = #builtin.int<4>, quads = #builtin.int<2>, b_quad = #builtin.int<16>, y_quad = #builtin.int<4>, y_next = #builtin.int<9>, y_pixel = #builtin.int<1>, addend = #builtin.int<-1280>, shift = #builtin.int<6>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
    func.return
  }
}

// -----

// smlad_quad_row, py's buffer one element short (outputs q·y_quad + r·y_pixel + k·y_next)

builtin.module {
  func.func @smlad_quad_row_one_past() {
    abi.arena "scratch" size 224 align 16
    %pa_buffer = uop.define_local "pa" at 0 : !uop.buffer<10xi32>
    %pb_buffer = uop.define_local "pb" at 48 : !uop.buffer<34xi32>
    %py_buffer = uop.define_local "py" at 192 : !uop.buffer<18xi8>
    %start = uop.const 2 : index
    %pa = uop.gep %pa_buffer[%start] : !uop.buffer<10xi32>
    %pb = uop.gep %pb_buffer[%start] : !uop.buffer<34xi32>
    %py = uop.gep %py_buffer[%start] : !uop.buffer<18xi8>
    %c = uop.const 0 : i32
    arm_dsp.smlad_quad_row %pa, %pb, %py, %c, %c, %c, %c {steps = #builtin.int<4>, a_next = #builtin.int<4>, b_next = #builtin.int<4>, quads = #builtin.int<2>, b_quad = #builtin.int<16>, y_quad = #builtin.int<4>, y_next = #builtin.int<9>, y_pixel = #builtin.int<1>, addend = #builtin.int<-1280>, shift = #builtin.int<6>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.smlad_quad_row's py reaches bytes [2, 19) of 'py' (18 bytes, at [192, 210) in its scratch arena): 1 byte past its end (its reach [0, 17) from a start at bytes 2..2)}}

// -----

// smlad_tile_row at the end of its buffers: pa [0, 16), pb [0, 48), py [0, 12)

// CHECK: zant.asm_reach = {checked = 3 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @smlad_tile_row_at_the_end
builtin.module {
  func.func @smlad_tile_row_at_the_end() {
    abi.arena "scratch" size 112 align 16
    %pa_buffer = uop.define_local "pa" at 0 : !uop.buffer<18xi8>
    %pb_buffer = uop.define_local "pb" at 32 : !uop.buffer<50xi8>
    %py_buffer = uop.define_local "py" at 96 : !uop.buffer<14xi8>
    %start = uop.const 2 : index
    %pa = uop.gep %pa_buffer[%start] : !uop.buffer<18xi8>
    %pb = uop.gep %pb_buffer[%start] : !uop.buffer<50xi8>
    %py = uop.gep %py_buffer[%start] : !uop.buffer<14xi8>
    %c = uop.const 0 : i32
    arm_dsp.smlad_tile_row %pa, %pb, %py, %c, %c, %c, %c {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<8>, pairs = #builtin.int<3>, b_pair = #builtin.int<16>, y_pair = #builtin.int<2>, y_next = #builtin.int<6>, y_pixel = #builtin.int<1>, addend = #builtin.int<-4080>, shift = #builtin.int<5>} : !uop.ptr<i8>, !uop.ptr<i8>, !uop.ptr<i8>
    func.return
  }
}

// -----

// smlad_tile_row, pb's buffer one element short (pb's tiles q·b_pair apart)

builtin.module {
  func.func @smlad_tile_row_one_past() {
    abi.arena "scratch" size 112 align 16
    %pa_buffer = uop.define_local "pa" at 0 : !uop.buffer<18xi8>
    %pb_buffer = uop.define_local "pb" at 32 : !uop.buffer<49xi8>
    %py_buffer = uop.define_local "py" at 96 : !uop.buffer<14xi8>
    %start = uop.const 2 : index
    %pa = uop.gep %pa_buffer[%start] : !uop.buffer<18xi8>
    %pb = uop.gep %pb_buffer[%start] : !uop.buffer<49xi8>
    %py = uop.gep %py_buffer[%start] : !uop.buffer<14xi8>
    %c = uop.const 0 : i32
    arm_dsp.smlad_tile_row %pa, %pb, %py, %c, %c, %c, %c {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<8>, pairs = #builtin.int<3>, b_pair = #builtin.int<16>, y_pair = #builtin.int<2>, y_next = #builtin.int<6>, y_pixel = #builtin.int<1>, addend = #builtin.int<-4080>, shift = #builtin.int<5>} : !uop.ptr<i8>, !uop.ptr<i8>, !uop.ptr<i8>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.smlad_tile_row's pb reaches bytes [2, 50) of 'pb' (49 bytes, at [32, 81) in its scratch arena): 1 byte past its end (its reach [0, 48) from a start at bytes 2..2)}}

// -----

// depthwise_step at the end of its buffers: px [0, 33), pw [0, 24)

// CHECK: zant.asm_reach = {checked = 2 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @depthwise_step_at_the_end
builtin.module {
  func.func @depthwise_step_at_the_end() {
    abi.arena "scratch" size 80 align 16
    %px_buffer = uop.define_local "px" at 0 : !uop.buffer<35xi8>
    %pw_buffer = uop.define_local "pw" at 48 : !uop.buffer<8xi32>
    %start = uop.const 2 : index
    %px = uop.gep %px_buffer[%start] : !uop.buffer<35xi8>
    %pw = uop.gep %pw_buffer[%start] : !uop.buffer<8xi32>
    %c = uop.const 0 : i32
    %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %c {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<12>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
    func.return
  }
}

// -----

// depthwise_step, px's buffer one element short (stride 2: the byte 8 of the last row)

builtin.module {
  func.func @depthwise_step_one_past() {
    abi.arena "scratch" size 80 align 16
    %px_buffer = uop.define_local "px" at 0 : !uop.buffer<34xi8>
    %pw_buffer = uop.define_local "pw" at 48 : !uop.buffer<8xi32>
    %start = uop.const 2 : index
    %px = uop.gep %px_buffer[%start] : !uop.buffer<34xi8>
    %pw = uop.gep %pw_buffer[%start] : !uop.buffer<8xi32>
    %c = uop.const 0 : i32
    %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step %px, %pw, %c {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<12>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.depthwise_step's px reaches bytes [2, 35) of 'px' (34 bytes, at [0, 34) in its scratch arena): 1 byte past its end (its reach [0, 33) from a start at bytes 2..2)}}

// -----

// depthwise_row at the end of its buffers: px [0, 34), pw [0, 24), py [0, 113)

// CHECK: zant.asm_reach = {checked = 3 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @depthwise_row_at_the_end
builtin.module {
  func.func @depthwise_row_at_the_end() {
    abi.arena "scratch" size 208 align 16
    %px_buffer = uop.define_local "px" at 0 : !uop.buffer<36xi8>
    %pw_buffer = uop.define_local "pw" at 48 : !uop.buffer<8xi32>
    %py_buffer = uop.define_local "py" at 80 : !uop.buffer<115xi8>
    %start = uop.const 2 : index
    %px = uop.gep %px_buffer[%start] : !uop.buffer<36xi8>
    %pw = uop.gep %pw_buffer[%start] : !uop.buffer<8xi32>
    %py = uop.gep %py_buffer[%start] : !uop.buffer<115xi8>
    %c = uop.const 0 : i32
    arm_dsp.depthwise_row %px, %pw, %c, %c, %py {stride = #builtin.int<1>, rows = #builtin.int<3>, x_row = #builtin.int<12>, steps = #builtin.int<2>, y_step = #builtin.int<16>, addend = #builtin.int<-2040>, shift = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
    func.return
  }
}

// -----

// depthwise_row, px's buffer one element short (the steps 4 bytes apart)

builtin.module {
  func.func @depthwise_row_one_past() {
    abi.arena "scratch" size 208 align 16
    %px_buffer = uop.define_local "px" at 0 : !uop.buffer<35xi8>
    %pw_buffer = uop.define_local "pw" at 48 : !uop.buffer<8xi32>
    %py_buffer = uop.define_local "py" at 80 : !uop.buffer<115xi8>
    %start = uop.const 2 : index
    %px = uop.gep %px_buffer[%start] : !uop.buffer<35xi8>
    %pw = uop.gep %pw_buffer[%start] : !uop.buffer<8xi32>
    %py = uop.gep %py_buffer[%start] : !uop.buffer<115xi8>
    %c = uop.const 0 : i32
    arm_dsp.depthwise_row %px, %pw, %c, %c, %py {stride = #builtin.int<1>, rows = #builtin.int<3>, x_row = #builtin.int<12>, steps = #builtin.int<2>, y_step = #builtin.int<16>, addend = #builtin.int<-2040>, shift = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.depthwise_row's px reaches bytes [2, 36) of 'px' (35 bytes, at [0, 35) in its scratch arena): 1 byte past its end (its reach [0, 34) from a start at bytes 2..2)}}

// -----

// depthwise_short_row at the end of its buffers: px [0, 18), pw [0, 24)

// CHECK: zant.asm_reach = {checked = 2 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @depthwise_short_row_at_the_end
builtin.module {
  func.func @depthwise_short_row_at_the_end() {
    abi.arena "scratch" size 64 align 16
    %px_buffer = uop.define_local "px" at 0 : !uop.buffer<20xi8>
    %pw_buffer = uop.define_local "pw" at 32 : !uop.buffer<8xi32>
    %start = uop.const 2 : index
    %px = uop.gep %px_buffer[%start] : !uop.buffer<20xi8>
    %pw = uop.gep %pw_buffer[%start] : !uop.buffer<8xi32>
    %c = uop.const 0 : i32
    %r0, %r1, %r2, %r3, %r4, %r5 = arm_dsp.depthwise_short_row %px, %pw, %c, %c, %c {rows = #builtin.int<3>, x_row = #builtin.int<6>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32
    func.return
  }
}

// -----

// depthwise_short_row, pw's buffer one element short (3 rows of 2 weight words: one word past)

builtin.module {
  func.func @depthwise_short_row_one_past() {
    abi.arena "scratch" size 64 align 16
    %px_buffer = uop.define_local "px" at 0 : !uop.buffer<20xi8>
    %pw_buffer = uop.define_local "pw" at 32 : !uop.buffer<7xi32>
    %start = uop.const 2 : index
    %px = uop.gep %px_buffer[%start] : !uop.buffer<20xi8>
    %pw = uop.gep %pw_buffer[%start] : !uop.buffer<7xi32>
    %c = uop.const 0 : i32
    %r0, %r1, %r2, %r3, %r4, %r5 = arm_dsp.depthwise_short_row %px, %pw, %c, %c, %c {rows = #builtin.int<3>, x_row = #builtin.int<6>} : !uop.ptr<i8>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.depthwise_short_row's pw reaches bytes [8, 32) of 'pw' (28 bytes, at [32, 60) in its scratch arena): 4 bytes past its end (its reach [0, 24) from a start at bytes 8..8)}}

// -----

// depthwise_short_rows at the end of its buffers: px [0, 36), pw [0, 24), py [0, 2945)

// CHECK: zant.asm_reach = {checked = 3 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @depthwise_short_rows_at_the_end
builtin.module {
  func.func @depthwise_short_rows_at_the_end() {
    abi.arena "scratch" size 3040 align 16
    %px_buffer = uop.define_local "px" at 0 : !uop.buffer<38xi8>
    %pw_buffer = uop.define_local "pw" at 48 : !uop.buffer<8xi32>
    %py_buffer = uop.define_local "py" at 80 : !uop.buffer<2947xi8>
    %start = uop.const 2 : index
    %px = uop.gep %px_buffer[%start] : !uop.buffer<38xi8>
    %pw = uop.gep %pw_buffer[%start] : !uop.buffer<8xi32>
    %py = uop.gep %py_buffer[%start] : !uop.buffer<2947xi8>
    %c = uop.const 0 : i32
    arm_dsp.depthwise_short_rows %px, %pw, [%c, %c, %c], %c, %c, %py {rows = #builtin.int<3>, x_row = #builtin.int<6>, count = #builtin.int<4>, x_next = #builtin.int<6>, y_step = #builtin.int<128>, y_next = #builtin.int<768>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
    func.return
  }
}

// -----

// depthwise_short_rows, py's buffer one element short (outputs i·y_next + j·y_step)

builtin.module {
  func.func @depthwise_short_rows_one_past() {
    abi.arena "scratch" size 3040 align 16
    %px_buffer = uop.define_local "px" at 0 : !uop.buffer<38xi8>
    %pw_buffer = uop.define_local "pw" at 48 : !uop.buffer<8xi32>
    %py_buffer = uop.define_local "py" at 80 : !uop.buffer<2946xi8>
    %start = uop.const 2 : index
    %px = uop.gep %px_buffer[%start] : !uop.buffer<38xi8>
    %pw = uop.gep %pw_buffer[%start] : !uop.buffer<8xi32>
    %py = uop.gep %py_buffer[%start] : !uop.buffer<2946xi8>
    %c = uop.const 0 : i32
    arm_dsp.depthwise_short_rows %px, %pw, [%c, %c, %c], %c, %c, %py {rows = #builtin.int<3>, x_row = #builtin.int<6>, count = #builtin.int<4>, x_next = #builtin.int<6>, y_step = #builtin.int<128>, y_next = #builtin.int<768>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.depthwise_short_rows's py reaches bytes [2, 2947) of 'py' (2946 bytes, at [80, 3026) in its scratch arena): 1 byte past its end (its reach [0, 2945) from a start at bytes 2..2)}}

// -----

// vldrb_gather at the end of its buffers: p [0, 876)

// CHECK: zant.asm_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @vldrb_gather_at_the_end
builtin.module {
  func.func @vldrb_gather_at_the_end() {
    abi.arena "scratch" size 880 align 16
    %p_buffer = uop.define_local "p" at 0 : !uop.buffer<878xi8>
    %start = uop.const 2 : index
    %p = uop.gep %p_buffer[%start] : !uop.buffer<878xi8>
    %c = uop.const 0 : i32
    %g = arm_mve.vldrb_gather %p [0, 125, 250, 375, 500, 625, 750, 875] : !uop.ptr<i8> -> vector<8xi16>
    func.return
  }
}

// -----

// vldrb_gather, p's buffer one element short (the last lane)

builtin.module {
  func.func @vldrb_gather_one_past() {
    abi.arena "scratch" size 880 align 16
    %p_buffer = uop.define_local "p" at 0 : !uop.buffer<877xi8>
    %start = uop.const 2 : index
    %p = uop.gep %p_buffer[%start] : !uop.buffer<877xi8>
    %c = uop.const 0 : i32
    %g = arm_mve.vldrb_gather %p [0, 125, 250, 375, 500, 625, 750, 875] : !uop.ptr<i8> -> vector<8xi16>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_mve.vldrb_gather's ptr reaches bytes [2, 878) of 'p' (877 bytes, at [0, 877) in its scratch arena): 1 byte past its end (its reach [0, 876) from a start at bytes 2..2)}}

// -----

// vldrh_gather at the end of its buffers: p [0, 72)

// CHECK: zant.asm_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @vldrh_gather_at_the_end
builtin.module {
  func.func @vldrh_gather_at_the_end() {
    abi.arena "scratch" size 80 align 16
    %p_buffer = uop.define_local "p" at 0 : !uop.buffer<38xi16>
    %start = uop.const 2 : index
    %p = uop.gep %p_buffer[%start] : !uop.buffer<38xi16>
    %c = uop.const 0 : i32
    %g = arm_mve.vldrh_gather %p [0, 5, 10, 15, 20, 25, 30, 35] : !uop.ptr<i16> -> vector<8xi16>
    func.return
  }
}

// -----

// vldrh_gather, p's buffer one element short (offsets in int16 elements)

builtin.module {
  func.func @vldrh_gather_one_past() {
    abi.arena "scratch" size 80 align 16
    %p_buffer = uop.define_local "p" at 0 : !uop.buffer<37xi16>
    %start = uop.const 2 : index
    %p = uop.gep %p_buffer[%start] : !uop.buffer<37xi16>
    %c = uop.const 0 : i32
    %g = arm_mve.vldrh_gather %p [0, 5, 10, 15, 20, 25, 30, 35] : !uop.ptr<i16> -> vector<8xi16>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_mve.vldrh_gather's ptr reaches bytes [4, 76) of 'p' (74 bytes, at [0, 74) in its scratch arena): 2 bytes past its end (its reach [0, 72) from a start at bytes 4..4)}}

// -----

// vstrb_scatter at the end of its buffers: p [0, 376)

// CHECK: zant.asm_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @vstrb_scatter_at_the_end
builtin.module {
  func.func @vstrb_scatter_at_the_end(%v: vector<4xi32>) {
    abi.arena "scratch" size 384 align 16
    %p_buffer = uop.define_local "p" at 0 : !uop.buffer<378xi8>
    %start = uop.const 2 : index
    %p = uop.gep %p_buffer[%start] : !uop.buffer<378xi8>
    %c = uop.const 0 : i32
    arm_mve.vstrb_scatter %v, %p [0, 125, 250, 375] : vector<4xi32>, !uop.ptr<i8>
    func.return
  }
}

// -----

// vstrb_scatter, p's buffer one element short (the low byte of each lane)

builtin.module {
  func.func @vstrb_scatter_one_past(%v: vector<4xi32>) {
    abi.arena "scratch" size 384 align 16
    %p_buffer = uop.define_local "p" at 0 : !uop.buffer<377xi8>
    %start = uop.const 2 : index
    %p = uop.gep %p_buffer[%start] : !uop.buffer<377xi8>
    %c = uop.const 0 : i32
    arm_mve.vstrb_scatter %v, %p [0, 125, 250, 375] : vector<4xi32>, !uop.ptr<i8>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_mve.vstrb_scatter's ptr reaches bytes [2, 378) of 'p' (377 bytes, at [0, 377) in its scratch arena): 1 byte past its end (its reach [0, 376) from a start at bytes 2..2)}}

// -----

// A pointer in a loop, through a view: the gep's static bounds (row r of 4 at 7·r, column 4)
// widened by the op's reach. The last row's word reaches byte 25 + 4, one past the 28 bytes.

builtin.module {
  func.func @in_a_loop() {
    abi.arena "scratch" size 32 align 16
    %x = uop.define_local "x" at 0 : !uop.buffer<28xi8>
    %xv = uop.view %x : !uop.buffer<28xi8> -> !uop.view<4x7xi8, strides [7, 1], offset 0>
    %four = uop.const 4 : index
    uop.range %r = 0 to 4 {
      %p = uop.gep %xv[%r, %four] : !uop.view<4x7xi8, strides [7, 1], offset 0>
      %w = arm_dsp.load_word %p : !uop.ptr<i8>
    }
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.load_word's ptr reaches bytes [4, 29) of 'x' (28 bytes, at [0, 28) in its scratch arena): 1 byte past its end (its reach [0, 4) from a start at bytes 4..25)}}

// -----

// A pointer whose index is loaded from memory has no static bound: not checked, counted.

// CHECK: zant.asm_reach = {checked = 1 : i64, unresolved = 1 : i64}
// CHECK-LABEL: func.func @loaded_index
builtin.module {
  func.func @loaded_index() {
    abi.arena "scratch" size 32 align 16
    %x = uop.define_local "x" at 0 : !uop.buffer<8xi8>
    %i = uop.define_local "i" at 16 : !uop.buffer<1xi32>
    %zero = uop.const 0 : index
    %pi = uop.gep %i[%zero] : !uop.buffer<1xi32>
    %v = uop.load %pi : i32
    %k = uop.cast %v : i32 to index
    %p = uop.gep %x[%k] : !uop.buffer<8xi8>
    %w = arm_dsp.load_word %p : !uop.ptr<i8>
    %q = uop.gep %x[%zero] : !uop.buffer<8xi8>
    %u = arm_dsp.load_word %q : !uop.ptr<i8>
    func.return
  }
}
