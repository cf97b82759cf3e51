// RUN: zant-opt %s --split-input-file --verify-diagnostics

// Verifier errors of uop.fma: floats only, scalars or 1-D vectors, one type for all operands.

builtin.module {
  func.func @main(%a: i32) {
    // expected-error@+1 {{uop.fma takes floating-point operands, got i32}}
    %r = uop.fma %a, %a, %a : i32
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%a: vector<8xi32>) {
    // expected-error@+1 {{uop.fma takes floating-point operands, got i32}}
    %r = uop.fma %a, %a, %a : vector<8xi32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%a: index) {
    // expected-error@+1 {{uop.fma takes floating-point operands, got index}}
    %r = uop.fma %a, %a, %a : index
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%a: vector<2x4xf32>) {
    // expected-error@+1 {{uop.fma takes scalar or vector operands, got vector<2x4xf32>}}
    %r = uop.fma %a, %a, %a : vector<2x4xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%a: f32, %b: f64) {
    // expected-error@+1 {{operand 'addend' at position 2 does not verify}}
    %r = "uop.fma"(%a, %a, %b) : (f32, f32, f64) -> f32
    func.return
  }
}
