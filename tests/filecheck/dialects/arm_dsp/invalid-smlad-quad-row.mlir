// RUN: zant-opt %s --split-input-file --verify-diagnostics

// arm_dsp.smlad_quad_row takes two biases and two multipliers.

func.func @four_channels(%c : i32, %m : i32) {
  %x = uop.define_local "x" : !uop.buffer<384xi32>
  %y = uop.define_local "y" : !uop.buffer<8000xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<384xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8000xi8>
  // expected-error@+1 {{smlad_quad_row takes 2 biases and 2 multipliers}}
  arm_dsp.smlad_quad_row %pa, %pa, %py, %c, %c, %c, %c, %m, %m, %m, %m {steps = #builtin.int<32>, a_next = #builtin.int<32>, b_next = #builtin.int<32>, quads = #builtin.int<3>, b_quad = #builtin.int<128>, y_quad = #builtin.int<4>, y_next = #builtin.int<125>, y_pixel = #builtin.int<1>, addend = #builtin.int<-8160>, shift = #builtin.int<6>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// It reads words of two int16.

func.func @bytes(%c : i32, %m : i32) {
  %x = uop.define_local "x" : !uop.buffer<384xi8>
  %y = uop.define_local "y" : !uop.buffer<8000xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<384xi8>
  %py = uop.gep %y[%zero] : !uop.buffer<8000xi8>
  // expected-error@+1 {{arm_dsp.smlad_quad_row's pa points to i32, got a pointer to i8}}
  arm_dsp.smlad_quad_row %pa, %pa, %py, %c, %c, %m, %m {steps = #builtin.int<32>, a_next = #builtin.int<32>, b_next = #builtin.int<32>, quads = #builtin.int<3>, b_quad = #builtin.int<128>, y_quad = #builtin.int<4>, y_next = #builtin.int<125>, y_pixel = #builtin.int<1>, addend = #builtin.int<-8160>, shift = #builtin.int<6>} : !uop.ptr<i8>, !uop.ptr<i8>, !uop.ptr<i8>
  func.return
}

// -----

// At least one quad.

func.func @no_quads(%c : i32, %m : i32) {
  %x = uop.define_local "x" : !uop.buffer<384xi32>
  %y = uop.define_local "y" : !uop.buffer<8000xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<384xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8000xi8>
  // expected-error@+1 {{arm_dsp.smlad_quad_row's quads is at least 1, got 0}}
  arm_dsp.smlad_quad_row %pa, %pa, %py, %c, %c, %m, %m {steps = #builtin.int<32>, a_next = #builtin.int<32>, b_next = #builtin.int<32>, quads = #builtin.int<0>, b_quad = #builtin.int<128>, y_quad = #builtin.int<4>, y_next = #builtin.int<125>, y_pixel = #builtin.int<1>, addend = #builtin.int<-8160>, shift = #builtin.int<6>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// pb's fourth pixel lies past an LDR immediate (3·b_next words: 4,608 bytes).

func.func @far_pixels(%c : i32, %m : i32) {
  %x = uop.define_local "x" : !uop.buffer<2048xi32>
  %y = uop.define_local "y" : !uop.buffer<8000xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<2048xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8000xi8>
  // expected-error@+1 {{smlad_quad_row's words lie within 4095 bytes of pa and pb (LDR immediates), got a_next = 384, b_next = 384}}
  arm_dsp.smlad_quad_row %pa, %pa, %py, %c, %c, %m, %m {steps = #builtin.int<32>, a_next = #builtin.int<384>, b_next = #builtin.int<384>, quads = #builtin.int<1>, b_quad = #builtin.int<128>, y_quad = #builtin.int<4>, y_next = #builtin.int<125>, y_pixel = #builtin.int<1>, addend = #builtin.int<-8160>, shift = #builtin.int<6>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}

// -----

// Its outputs' pixels lie past an STRB immediate (3·y_pixel: 4,500 bytes).

func.func @far_outputs(%c : i32, %m : i32) {
  %x = uop.define_local "x" : !uop.buffer<384xi32>
  %y = uop.define_local "y" : !uop.buffer<8000xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<384xi32>
  %py = uop.gep %y[%zero] : !uop.buffer<8000xi8>
  // expected-error@+1 {{smlad_quad_row's outputs lie within 4095 bytes of py and py + y_next (STRB, ADD immediates), got y_pixel = 1500, y_quad = 4}}
  arm_dsp.smlad_quad_row %pa, %pa, %py, %c, %c, %m, %m {steps = #builtin.int<32>, a_next = #builtin.int<32>, b_next = #builtin.int<32>, quads = #builtin.int<1>, b_quad = #builtin.int<128>, y_quad = #builtin.int<4>, y_next = #builtin.int<1>, y_pixel = #builtin.int<1500>, addend = #builtin.int<-8160>, shift = #builtin.int<6>} : !uop.ptr<i32>, !uop.ptr<i32>, !uop.ptr<i8>
  func.return
}
