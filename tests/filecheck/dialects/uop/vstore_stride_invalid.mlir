// RUN: zant-opt %s --split-input-file --verify-diagnostics

// A strided vector store needs a positive stride (0 would write every lane to one element).

builtin.module {
  func.func @main() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<16xf32>
    %i = uop.const 0 : index
    %x = uop.const 1.0 : f32
    %v = uop.broadcast %x : f32 to vector<4xf32>
    %p = uop.gep %y[%i] : !uop.buffer<16xf32>
    // expected-error@+1 {{stride must be positive, got 0}}
    uop.vstore %v, %p stride 0 : vector<4xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<16xf32>
    %i = uop.const 0 : index
    %x = uop.const 1.0 : f32
    %v = uop.broadcast %x : f32 to vector<4xf32>
    %p = uop.gep %y[%i] : !uop.buffer<16xf32>
    // expected-error@+1 {{stride must be positive, got -2}}
    uop.vstore %v, %p stride -2 : vector<4xf32>
    func.return
  }
}

