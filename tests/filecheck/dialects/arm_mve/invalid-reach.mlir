// RUN: zant-opt %s --split-input-file --verify-diagnostics

// The gathers one past their offsets' limits (reach-limits.mlir: at them).

builtin.module {
  func.func @vldrb_past() {
    %b = uop.define_local "x" : !uop.buffer<131072xi8>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<131072xi8>
    // expected-error@+1 {{vldrb_gather offsets are 16-bit unsigned}}
    %g = arm_mve.vldrb_gather %p [0, 1, 2, 3, 4, 5, 6, 65536] : !uop.ptr<i8> -> vector<8xi16>
    func.return
  }
}

// -----

builtin.module {
  func.func @vldrb_before() {
    %b = uop.define_local "x" : !uop.buffer<131072xi8>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<131072xi8>
    // expected-error@+1 {{vldrb_gather offsets are 16-bit unsigned}}
    %g = arm_mve.vldrb_gather %p [-1, 0, 1, 2, 3, 4, 5, 6] : !uop.ptr<i8> -> vector<8xi16>
    func.return
  }
}

// -----

builtin.module {
  func.func @vldrh_past() {
    %b = uop.define_local "x" : !uop.buffer<131072xi16>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<131072xi16>
    // expected-error@+1 {{vldrh_gather offsets are 16-bit unsigned}}
    %g = arm_mve.vldrh_gather %p [0, 1, 2, 3, 4, 5, 6, 65536] : !uop.ptr<i16> -> vector<8xi16>
    func.return
  }
}

// -----

builtin.module {
  func.func @vldrh_before() {
    %b = uop.define_local "x" : !uop.buffer<131072xi16>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<131072xi16>
    // expected-error@+1 {{vldrh_gather offsets are 16-bit unsigned}}
    %g = arm_mve.vldrh_gather %p [-1, 0, 1, 2, 3, 4, 5, 6] : !uop.ptr<i16> -> vector<8xi16>
    func.return
  }
}
