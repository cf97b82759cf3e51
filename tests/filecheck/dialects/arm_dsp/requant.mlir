// RUN: zant-opt %s | filecheck %s
// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// arm_dsp.smmla (c + the high word of a signed 32 x 32 product) and arm_dsp.ssat (a shift right
// saturated to a signed width): a requantization's two instructions (arm-dsp-requant).

// CHECK-LABEL: func.func @requant
// CHECK:         %[[R:.*]] = arm_dsp.smmla %x, %m, %c : i32
// CHECK-NEXT:    %{{.*}} = arm_dsp.ssat %[[R]] {bits = #builtin.int<8>, shift = #builtin.int<11>} : i32
func.func @requant(%x : i32, %m : i32) -> i32 {
  %c = uop.const -7168 : i32
  %r = arm_dsp.smmla %x, %m, %c : i32
  %y = arm_dsp.ssat %r {bits = #builtin.int<8>, shift = #builtin.int<11>} : i32
  func.return %y : i32
}

// arm_dsp.smlad_layer: a fully connected layer's blocks of 4 rows, their requantization and
// stores (its steps, blocks, multiplier, addend and shift as properties).
// CHECK-LABEL: func.func @layer
// CHECK:         arm_dsp.smlad_layer %pa, %pb, %shared, %py {steps = #builtin.int<2>, blocks = #builtin.int<3>, multiplier = #builtin.int<1462485120>, addend = #builtin.int<-7168>, shift = #builtin.int<11>} : !uop.ptr<i16>, !uop.ptr<i8>, !uop.ptr<i8>
func.func @layer(%shared : i32) {
  %x = uop.define_local "x" : !uop.buffer<8xi16>
  %w = uop.define_local "w" : !uop.buffer<144xi8>
  %y = uop.define_local "y" : !uop.buffer<12xi8>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<8xi16>
  %pb = uop.gep %w[%zero] : !uop.buffer<144xi8>
  %py = uop.gep %y[%zero] : !uop.buffer<12xi8>
  arm_dsp.smlad_layer %pa, %pb, %shared, %py {steps = #builtin.int<2>, blocks = #builtin.int<3>, multiplier = #builtin.int<1462485120>, addend = #builtin.int<-7168>, shift = #builtin.int<11>} : !uop.ptr<i16>, !uop.ptr<i8>, !uop.ptr<i8>
  func.return
}
