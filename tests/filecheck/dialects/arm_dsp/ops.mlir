// RUN: zant-opt %s | filecheck %s
// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// CHECK-LABEL: func.func @main()
// CHECK:         %w = arm_dsp.load_word %p : !uop.ptr<i8>
// CHECK-NEXT:    %lo = arm_dsp.sxtb16 %w : i32
// CHECK-NEXT:    %hi = arm_dsp.sxtb16 %w ror 8 : i32
// CHECK-NEXT:    %r = arm_dsp.smlad %lo, %hi, %c : i32
// CHECK-NEXT:    %s = arm_dsp.sxtb16 %r ror 24 : i32
// CHECK-NEXT:    %f = arm_dsp.smlad_bytes %lo, %hi, %w, %c : i32
// CHECK-NEXT:    %g, %h = arm_dsp.smlad_bytes_pair %lo, %hi, %hi, %lo, %w, %c, %f : i32
// CHECK-NEXT:    %m = arm_dsp.smla %lo, %hi, %c {halves = "tb"} : i32

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
    %i = uop.const 4 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<8xi8>
    %c = uop.const 7 : i32
    %w = arm_dsp.load_word %p : !uop.ptr<i8>
    %lo = arm_dsp.sxtb16 %w : i32
    %hi = arm_dsp.sxtb16 %w ror 8 : i32
    %r = arm_dsp.smlad %lo, %hi, %c : i32
    %s = arm_dsp.sxtb16 %r ror 24 : i32
    %f = arm_dsp.smlad_bytes %lo, %hi, %w, %c : i32
    %g, %h = arm_dsp.smlad_bytes_pair %lo, %hi, %hi, %lo, %w, %c, %f : i32
    %m = arm_dsp.smla %lo, %hi, %c {halves = "tb"} : i32
    func.return
  }
}
