// RUN: zant-opt %s --split-input-file --verify-diagnostics

// The facts every requantized row op (dialects/arm_dsp.RequantRowOp) checks, each once:
// its pointers' element types, its counts at least 1, SSAT's shift 0 to 31 and its int32
// immediates. The cases no op-specific file had.

// arm_dsp.smlad_layer reads int16 activations.

func.func @layer_bytes(%shared : i32) {
  %x = uop.define_local "x" : !uop.buffer<8xi8>
  %w = uop.define_local "w" : !uop.buffer<144xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<8xi8>
  %pb = uop.gep %w[%zero] : !uop.buffer<144xi8>
  // expected-error@+1 {{arm_dsp.smlad_layer's pa points to i16, got a pointer to i8}}
  arm_dsp.smlad_layer %pa, %pb, %shared, %pb {steps = #builtin.int<2>, blocks = #builtin.int<3>, multiplier = #builtin.int<1462485120>, addend = #builtin.int<-7168>, shift = #builtin.int<11>} : !uop.ptr<i8>, !uop.ptr<i8>, !uop.ptr<i8>
  func.return
}

// -----

// At least one block.

func.func @layer_no_blocks(%shared : i32) {
  %x = uop.define_local "x" : !uop.buffer<8xi16>
  %w = uop.define_local "w" : !uop.buffer<144xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<8xi16>
  %pb = uop.gep %w[%zero] : !uop.buffer<144xi8>
  // expected-error@+1 {{arm_dsp.smlad_layer's blocks is at least 1, got 0}}
  arm_dsp.smlad_layer %pa, %pb, %shared, %pb {steps = #builtin.int<2>, blocks = #builtin.int<0>, multiplier = #builtin.int<1462485120>, addend = #builtin.int<-7168>, shift = #builtin.int<11>} : !uop.ptr<i16>, !uop.ptr<i8>, !uop.ptr<i8>
  func.return
}

// -----

// Its multiplier is an int32 (a MOVW/MOVT pair).

func.func @layer_wide_multiplier(%shared : i32) {
  %x = uop.define_local "x" : !uop.buffer<8xi16>
  %w = uop.define_local "w" : !uop.buffer<144xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<8xi16>
  %pb = uop.gep %w[%zero] : !uop.buffer<144xi8>
  // expected-error@+1 {{arm_dsp.smlad_layer's multiplier is an int32, got 2147483648}}
  arm_dsp.smlad_layer %pa, %pb, %shared, %pb {steps = #builtin.int<2>, blocks = #builtin.int<3>, multiplier = #builtin.int<2147483648>, addend = #builtin.int<-7168>, shift = #builtin.int<11>} : !uop.ptr<i16>, !uop.ptr<i8>, !uop.ptr<i8>
  func.return
}

// -----

// arm_dsp.smlad_tile_row's addend is an int32.

func.func @tile_row_wide_addend(%c : i32, %m : i32) {
  %w = uop.define_local "w" : !uop.buffer<16xi8>
  %y = uop.define_local "y" : !uop.buffer<12xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %w[%zero] : !uop.buffer<16xi8>
  %py = uop.gep %y[%zero] : !uop.buffer<12xi8>
  // expected-error@+1 {{arm_dsp.smlad_tile_row's addend is an int32, got -2147483649}}
  arm_dsp.smlad_tile_row %pa, %pa, %py, %c, %c, %m, %m {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<8>, pairs = #builtin.int<3>, b_pair = #builtin.int<16>, y_pair = #builtin.int<2>, y_next = #builtin.int<6>, y_pixel = #builtin.int<1>, addend = #builtin.int<-2147483649>, shift = #builtin.int<5>} : !uop.ptr<i8>, !uop.ptr<i8>, !uop.ptr<i8>
  func.return
}

// -----

// At least one pair.

func.func @tile_row_no_pairs(%c : i32, %m : i32) {
  %w = uop.define_local "w" : !uop.buffer<16xi8>
  %y = uop.define_local "y" : !uop.buffer<12xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %w[%zero] : !uop.buffer<16xi8>
  %py = uop.gep %y[%zero] : !uop.buffer<12xi8>
  // expected-error@+1 {{arm_dsp.smlad_tile_row's pairs is at least 1, got 0}}
  arm_dsp.smlad_tile_row %pa, %pa, %py, %c, %c, %m, %m {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<8>, pairs = #builtin.int<0>, b_pair = #builtin.int<16>, y_pair = #builtin.int<2>, y_next = #builtin.int<6>, y_pixel = #builtin.int<1>, addend = #builtin.int<0>, shift = #builtin.int<5>} : !uop.ptr<i8>, !uop.ptr<i8>, !uop.ptr<i8>
  func.return
}

// -----

// arm_dsp.depthwise_row stores int8.

func.func @depthwise_row_wide_output() {
  %x = uop.define_local "x" : !uop.buffer<144xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<128xi16>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<144xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<128xi16>
  %c = uop.const 0 : i32
  // expected-error@+1 {{arm_dsp.depthwise_row's py points to i8, got a pointer to i16}}
  arm_dsp.depthwise_row %px, %pw, %c, %c, %py {stride = #builtin.int<2>, rows = #builtin.int<3>, x_row = #builtin.int<12>, steps = #builtin.int<1>, y_step = #builtin.int<16>, addend = #builtin.int<0>, shift = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i16>
  func.return
}

// -----

// arm_dsp.depthwise_short_rows: at least one row; SSAT's shift 0 to 31.

func.func @short_rows_none() {
  %x = uop.define_local "x" : !uop.buffer<36xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<36xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<36xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<36xi8>
  %a = uop.const 1 : i32
  // expected-error@+1 {{arm_dsp.depthwise_short_rows's count is at least 1, got 0}}
  arm_dsp.depthwise_short_rows %px, %pw, [%a, %a, %a], %a, %a, %py {rows = #builtin.int<3>, x_row = #builtin.int<6>, count = #builtin.int<0>, x_next = #builtin.int<6>, y_step = #builtin.int<1>, y_next = #builtin.int<6>, shift = #builtin.int<2>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

func.func @short_rows_wide_shift() {
  %x = uop.define_local "x" : !uop.buffer<36xi8>
  %w = uop.define_local "w" : !uop.buffer<6xi32>
  %y = uop.define_local "y" : !uop.buffer<36xi8>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<36xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<6xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<36xi8>
  %a = uop.const 1 : i32
  // expected-error@+1 {{arm_dsp.depthwise_short_rows's SSAT shifts right by 0 to 31 bits, got 32}}
  arm_dsp.depthwise_short_rows %px, %pw, [%a, %a, %a], %a, %a, %py {rows = #builtin.int<3>, x_row = #builtin.int<6>, count = #builtin.int<4>, x_next = #builtin.int<6>, y_step = #builtin.int<1>, y_next = #builtin.int<6>, shift = #builtin.int<32>} : !uop.ptr<i8>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// arm_dsp.smlad_block_row: at least one step.

func.func @block_row_no_steps(%c : i32, %m : i32) {
  %col = uop.define_local "col" : !uop.buffer<672xi32>
  %y = uop.define_local "y" : !uop.buffer<18432xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %col[%zero] : !uop.buffer<672xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<18432xi8>
  // expected-error@+1 {{arm_dsp.smlad_block_row's steps is at least 1, got 0}}
  arm_dsp.smlad_block_row %pa, %pa, %py, %c, %c, %c, %c, %m, %m, %m, %m {steps = #builtin.int<0>, a_next = #builtin.int<14>, b_next = #builtin.int<14>, pairs = #builtin.int<24>, a_pair = #builtin.int<28>, y_pair = #builtin.int<2>, y_next = #builtin.int<2304>, y_pixel = #builtin.int<1>, addend = #builtin.int<-1280>, shift = #builtin.int<6>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}
