// RUN: zant-opt %s | filecheck %s
// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// arm_dsp.smlad_block: a pointwise Conv's register block of 4 output channels x 2 pixels over
// operands widened into words of two int16 (conv_columns._pointwise_wide): 8 sums, row-major,
// from two word pointers, its steps and the words between pixels (a_next) and rows (b_next);
// without addends the sums start at 0.

// CHECK-LABEL: func.func @block
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = arm_dsp.smlad_block %pa, %pb, %c, %c, %c, %c, %c, %c, %c, %c {steps = #builtin.int<3>, a_next = #builtin.int<3>, b_next = #builtin.int<3>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32, i32, i32
func.func @block() {
  %x = uop.define_local "x" : !uop.buffer<6xi32>
  %w = uop.define_local "w" : !uop.buffer<12xi32>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<6xi32>
  %pb = uop.gep %w[%zero] : !uop.buffer<12xi32>
  %c = uop.const 0 : i32
  %r00, %r01, %r10, %r11, %r20, %r21, %r30, %r31 = arm_dsp.smlad_block %pa, %pb, %c, %c, %c, %c, %c, %c, %c, %c {steps = #builtin.int<3>, a_next = #builtin.int<3>, b_next = #builtin.int<3>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32, i32, i32
  func.return
}

// CHECK-LABEL: func.func @from_zero
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = arm_dsp.smlad_block %pa, %pb {steps = #builtin.int<3>, a_next = #builtin.int<3>, b_next = #builtin.int<3>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32, i32, i32
func.func @from_zero() {
  %x = uop.define_local "x" : !uop.buffer<6xi32>
  %w = uop.define_local "w" : !uop.buffer<12xi32>
  %zero = uop.const 0 : index
  %pa = uop.gep %x[%zero] : !uop.buffer<6xi32>
  %pb = uop.gep %w[%zero] : !uop.buffer<12xi32>
  %r00, %r01, %r10, %r11, %r20, %r21, %r30, %r31 = arm_dsp.smlad_block %pa, %pb {steps = #builtin.int<3>, a_next = #builtin.int<3>, b_next = #builtin.int<3>} : !uop.ptr<i32>, !uop.ptr<i32> -> i32, i32, i32, i32, i32, i32, i32, i32
  func.return
}
