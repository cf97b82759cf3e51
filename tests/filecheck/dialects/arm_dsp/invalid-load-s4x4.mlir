// RUN: zant-opt %s --split-input-file --verify-diagnostics

// arm_dsp.load_s4x4 reads packed int4 only.

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "w" : !uop.buffer<8xi8>
    %i = uop.const 4 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<8xi8>
    // expected-error@+1 {{load_s4x4 reads int4 elements, got a pointer to i8}}
    %e, %o = arm_dsp.load_s4x4 %p : !uop.ptr<i8>
    func.return
  }
}
