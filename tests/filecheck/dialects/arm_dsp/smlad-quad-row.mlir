// RUN: zant-opt %s | filecheck %s
// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// arm_dsp.smlad_quad_row: a row of 2 x 4 blocks (two output channels, whose pair of widened
// weight rows pa is fixed, by a quad of pixels of pb per block), each requantized and stored
// (arm-dsp-block-rows, conv_columns' pair form): its pointers, the two channels' biases then
// their multipliers, and the blocks' layout as properties.
// CHECK-LABEL: func.func @row
// CHECK:         arm_dsp.smlad_quad_row %pa, %pb, %py, %c0, %c1, %m0, %m1 {steps = #builtin.int<32>, a_next = #builtin.int<32>, b_next = #builtin.int<32>, quads = #builtin.int<3>, b_quad = #builtin.int<128>, y_quad = #builtin.int<4>, y_next = #builtin.int<125>, y_pixel = #builtin.int<1>, addend = #builtin.int<-8160>, shift = #builtin.int<6>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
func.func @row(%c0 : i32, %c1 : i32, %m0 : i32, %m1 : i32) {
  %w = uop.define_local "w" : !uop.buffer<2048xi32>
  %x = uop.define_local "x" : !uop.buffer<384xi32>
  %y = uop.define_local "y" : !uop.buffer<8000xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %w[%zero] : !uop.buffer<2048xi32>
  %pb = uop.gep %x[%zero] : !uop.buffer<384xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8000xi8>
  arm_dsp.smlad_quad_row %pa, %pb, %py, %c0, %c1, %m0, %m1 {steps = #builtin.int<32>, a_next = #builtin.int<32>, b_next = #builtin.int<32>, quads = #builtin.int<3>, b_quad = #builtin.int<128>, y_quad = #builtin.int<4>, y_next = #builtin.int<125>, y_pixel = #builtin.int<1>, addend = #builtin.int<-8160>, shift = #builtin.int<6>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}
