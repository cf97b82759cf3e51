// RUN: zant-opt %s | filecheck %s
// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// arm_dsp.load_s4x4: 4 packed int4 from an even element, as the (0, 2) and (1, 3) halves.

// CHECK-LABEL: func.func @main()
// CHECK:         %e, %o = arm_dsp.load_s4x4 %p : !uop.ptr<i4>
builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "w" : !uop.buffer<8xi4>
    %i = uop.const 4 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<8xi4>
    %e, %o = arm_dsp.load_s4x4 %p : !uop.ptr<i4>
    func.return
  }
}
