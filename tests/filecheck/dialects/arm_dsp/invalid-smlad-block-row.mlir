// RUN: zant-opt %s --split-input-file --verify-diagnostics

// arm_dsp.smlad_block_row's SSAT shifts by 0 to 31.

func.func @shift(%c : i32, %m : i32) {
  %col = uop.define_local "col" : !uop.buffer<672xi32>
  %y = uop.define_local "y" : !uop.buffer<18432xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %col[%zero] : !uop.buffer<672xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<18432xi8>
  // expected-error@+1 {{arm_dsp.smlad_block_row's SSAT shifts right by 0 to 31 bits, got 32}}
  arm_dsp.smlad_block_row %pa, %pa, %py, %c, %c, %c, %c, %m, %m, %m, %m {steps = #builtin.int<14>, a_next = #builtin.int<14>, b_next = #builtin.int<14>, pairs = #builtin.int<24>, a_pair = #builtin.int<28>, y_pair = #builtin.int<2>, y_next = #builtin.int<2304>, y_pixel = #builtin.int<1>, addend = #builtin.int<-1280>, shift = #builtin.int<32>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// It takes four biases and four multipliers.

func.func @three_rows(%c : i32, %m : i32) {
  %col = uop.define_local "col" : !uop.buffer<672xi32>
  %y = uop.define_local "y" : !uop.buffer<18432xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %col[%zero] : !uop.buffer<672xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<18432xi8>
  // expected-error@+1 {{smlad_block_row takes 4 biases and 4 multipliers}}
  arm_dsp.smlad_block_row %pa, %pa, %py, %c, %c, %c, %m, %m, %m {steps = #builtin.int<14>, a_next = #builtin.int<14>, b_next = #builtin.int<14>, pairs = #builtin.int<24>, a_pair = #builtin.int<28>, y_pair = #builtin.int<2>, y_next = #builtin.int<2304>, y_pixel = #builtin.int<1>, addend = #builtin.int<-1280>, shift = #builtin.int<6>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// It reads words of two int16.

func.func @bytes(%c : i32, %m : i32) {
  %col = uop.define_local "col" : !uop.buffer<672xi8>
  %y = uop.define_local "y" : !uop.buffer<18432xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %col[%zero] : !uop.buffer<672xi8>
  %py = uop.gep %y[%zero] : !uop.buffer<18432xi8>
  // expected-error@+1 {{arm_dsp.smlad_block_row's pa points to i32, got a pointer to i8}}
  arm_dsp.smlad_block_row %pa, %pa, %py, %c, %c, %c, %c, %m, %m, %m, %m {steps = #builtin.int<14>, a_next = #builtin.int<14>, b_next = #builtin.int<14>, pairs = #builtin.int<24>, a_pair = #builtin.int<28>, y_pair = #builtin.int<2>, y_next = #builtin.int<2304>, y_pixel = #builtin.int<1>, addend = #builtin.int<-1280>, shift = #builtin.int<6>} : !uop.ptr<i8>, !uop.ptr<i8>, !uop.ptr<i8>
  func.return
}
