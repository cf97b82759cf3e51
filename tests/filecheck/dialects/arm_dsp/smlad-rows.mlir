// RUN: zant-opt %s | filecheck %s
// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// arm_dsp.smlad_rows: a fully connected block's whole reduction (fully_connected.py), 4 sums
// (5 for 5 rows) from an int16 activation pointer, an int8 pointer to the block's biases and weight words, and
// the correction shared by every row; its steps and rows as properties.

// CHECK-LABEL: func.func @rows
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = arm_dsp.smlad_rows %pa, %pb, %c {steps = #builtin.int<3>, rows = #builtin.int<2>} : !uop.ptr<i16>, !uop.ptr<i8> -> i32, i32, i32, i32
func.func @rows() {
  %x = uop.define_local "x" : !uop.buffer<12xi16>
  %w = uop.define_local "w" : !uop.buffer<32xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<12xi16>
  %pb = uop.gep %w[%zero] : !uop.buffer<32xi8>
  %c = uop.const 0 : i32
  %r0, %r1, %r2, %r3 = arm_dsp.smlad_rows %pa, %pb, %c {steps = #builtin.int<3>, rows = #builtin.int<2>} : !uop.ptr<i16>, !uop.ptr<i8> -> i32, i32, i32, i32
  func.return
}

// CHECK-LABEL: func.func @five_rows
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = arm_dsp.smlad_rows %pa, %pb, %c {steps = #builtin.int<3>, rows = #builtin.int<5>} : !uop.ptr<i16>, !uop.ptr<i8> -> i32, i32, i32, i32, i32
func.func @five_rows() {
  %x = uop.define_local "x" : !uop.buffer<12xi16>
  %w = uop.define_local "w" : !uop.buffer<80xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<12xi16>
  %pb = uop.gep %w[%zero] : !uop.buffer<80xi8>
  %c = uop.const 0 : i32
  %r0, %r1, %r2, %r3, %r4 = arm_dsp.smlad_rows %pa, %pb, %c {steps = #builtin.int<3>, rows = #builtin.int<5>} : !uop.ptr<i16>, !uop.ptr<i8> -> i32, i32, i32, i32, i32
  func.return
}
