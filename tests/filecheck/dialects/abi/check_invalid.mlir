// RUN: zant-opt %s --split-input-file --verify-diagnostics

builtin.module {
  func.func @main(%ok : i1) {
    // expected-error@+1 {{status 0 means success: a failed check needs another}}
    abi.check %ok, 0
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%ok : i1) {
    uop.range %i = 0 to 4 {
      // expected-error@+1 {{abi.check must not be inside a loop}}
      abi.check %ok, 4
    }
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%x : i32) {
    // expected-error@+1 {{operand 'condition' at position 0 does not verify}}
    "abi.check"(%x) <{status = 4 : i32}> : (i32) -> ()
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%ok : i1) {
    // expected-error@+1 {{status 9 is not one of the ABI's (abi.Status: 1..8)}}
    abi.check %ok, 9
    func.return
  }
}
