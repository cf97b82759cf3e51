// RUN: zant-opt %s | filecheck %s
// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// arm_dsp.smlad_tile_row: a row of 2 x 2 tiles (two output channels by a pair of pixels per
// tile), each requantized and stored (arm-dsp-tile-rows): its pointers, the two channels'
// biases and multipliers, and the tiles' layout as properties.
// CHECK-LABEL: func.func @row
// CHECK:         arm_dsp.smlad_tile_row %pa, %pb, %py, %c0, %c1, %m0, %m1 {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<8>, pairs = #builtin.int<3>, b_pair = #builtin.int<16>, y_pair = #builtin.int<2>, y_next = #builtin.int<6>, y_pixel = #builtin.int<1>, addend = #builtin.int<-4080>, shift = #builtin.int<5>} : !uop.ptr<i8>, !uop.ptr<i8>, !uop.ptr<i8>
func.func @row(%c0 : i32, %c1 : i32, %m0 : i32, %m1 : i32) {
  %w = uop.define_local "w" : !uop.buffer<16xi8>
  %x = uop.define_local "x" : !uop.buffer<48xi8>
  %y = uop.define_local "y" : !uop.buffer<12xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %w[%zero] : !uop.buffer<16xi8>
  %pb = uop.gep %x[%zero] : !uop.buffer<48xi8>
  %py = uop.gep %y[%zero] : !uop.buffer<12xi8>
  arm_dsp.smlad_tile_row %pa, %pb, %py, %c0, %c1, %m0, %m1 {steps = #builtin.int<2>, a_step = #builtin.int<8>, a_next = #builtin.int<4>, b_step = #builtin.int<4>, b_next = #builtin.int<8>, pairs = #builtin.int<3>, b_pair = #builtin.int<16>, y_pair = #builtin.int<2>, y_next = #builtin.int<6>, y_pixel = #builtin.int<1>, addend = #builtin.int<-4080>, shift = #builtin.int<5>} : !uop.ptr<i8>, !uop.ptr<i8>, !uop.ptr<i8>
  func.return
}
