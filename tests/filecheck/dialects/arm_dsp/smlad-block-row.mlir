// RUN: zant-opt %s | filecheck %s
// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// arm_dsp.smlad_block_row: a row of 4 x 2 blocks (four output channels by a pair of pixels per
// block, conv_first's), each requantized and stored (arm-dsp-block-rows): its pointers, the four
// channels' biases then their multipliers, and the blocks' layout as properties.
// CHECK-LABEL: func.func @row
// CHECK:         arm_dsp.smlad_block_row %pa, %pb, %py, %c0, %c1, %c2, %c3, %m0, %m1, %m2, %m3 {steps = #builtin.int<14>, a_next = #builtin.int<14>, b_next = #builtin.int<14>, pairs = #builtin.int<24>, a_pair = #builtin.int<28>, y_pair = #builtin.int<2>, y_next = #builtin.int<2304>, y_pixel = #builtin.int<1>, addend = #builtin.int<-1280>, shift = #builtin.int<6>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
func.func @row(%c0 : i32, %c1 : i32, %c2 : i32, %c3 : i32, %m0 : i32, %m1 : i32, %m2 : i32, %m3 : i32) {
  %col = uop.define_local "col" : !uop.buffer<672xi32>
  %w = uop.define_local "w" : !uop.buffer<112xi32>
  %y = uop.define_local "y" : !uop.buffer<18432xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %col[%zero] : !uop.buffer<672xi32>
  %pb = uop.gep %w[%zero] : !uop.buffer<112xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<18432xi8>
  arm_dsp.smlad_block_row %pa, %pb, %py, %c0, %c1, %c2, %c3, %m0, %m1, %m2, %m3 {steps = #builtin.int<14>, a_next = #builtin.int<14>, b_next = #builtin.int<14>, pairs = #builtin.int<24>, a_pair = #builtin.int<28>, y_pair = #builtin.int<2>, y_next = #builtin.int<2304>, y_pixel = #builtin.int<1>, addend = #builtin.int<-1280>, shift = #builtin.int<6>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}
