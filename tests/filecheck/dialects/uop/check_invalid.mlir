// RUN: zant-opt %s --split-input-file --verify-diagnostics

builtin.module {
  func.func @main(%ok : i1) {
    // expected-error@+1 {{status 0 means success: a failed check needs another}}
    uop.check %ok, 0
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%ok : i1) {
    uop.range %i = 0 to 4 {
      // expected-error@+1 {{uop.check must not be inside a loop}}
      uop.check %ok, 4
    }
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%x : i32) {
    // expected-error@+1 {{operand 'condition' at position 0 does not verify}}
    "uop.check"(%x) <{status = 4 : i32}> : (i32) -> ()
    func.return
  }
}
