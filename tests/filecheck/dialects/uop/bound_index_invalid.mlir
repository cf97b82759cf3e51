// RUN: zant-opt %s --split-input-file --verify-diagnostics

builtin.module {
  func.func @main(%v : i64) {
    // expected-error@+1 {{extent must not be negative, got -1}}
    %a = uop.bound_index %v, -1 : i64
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%v : i1) {
    // expected-error@+1 {{an index is an integer wider than i1}}
    %a = uop.bound_index %v, 2 : i1
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%v : f32) {
    // expected-error@+1 {{operand 'value' at position 0 does not verify}}
    %a = "uop.bound_index"(%v) <{extent = 4 : i64}> : (f32) -> index
    func.return
  }
}
