// RUN: zant-opt %s | filecheck %s
// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// arm_dsp.smlad_window: a 2 x 2 tile's whole reduction over a window (conv_window.py), 4 sums
// from an int8 pointer into X and an int16 pointer to the pair of channels' widened weights,
// its rows, steps, X's row stride and the second pixel's offset as properties.

// CHECK-LABEL: func.func @window
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = arm_dsp.smlad_window %px, %pw, %c, %c, %c, %c {rows = #builtin.int<3>, steps = #builtin.int<3>, x_row = #builtin.int<24>, x_next = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i16>
func.func @window() {
  %x = uop.define_local "x" : !uop.buffer<144xi8>
  %w = uop.define_local "w" : !uop.buffer<72xi16>
  %zero = uop.const 0 : index
  %px = uop.gep %x[%zero] : !uop.buffer<144xi8>
  %pw = uop.gep %w[%zero] : !uop.buffer<72xi16>
  %c = uop.const 0 : i32
  %r00, %r10, %r01, %r11 = arm_dsp.smlad_window %px, %pw, %c, %c, %c, %c {rows = #builtin.int<3>, steps = #builtin.int<3>, x_row = #builtin.int<24>, x_next = #builtin.int<4>} : !uop.ptr<i8>, !uop.ptr<i16>
  func.return
}
