// RUN: zant-opt %s --split-input-file --verify-diagnostics

// abi.arena's verifier: roles, sizes and alignment, the scratch-only planner figures, one arena
// of a role per block.

builtin.module {
  func.func @main() {
    // expected-error@+1 {{arena role must be one of scratch, constant, persistent, got 'heap'}}
    abi.arena "heap" size 16 align 16
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{arena size must be a non-negative multiple of its alignment, got 24}}
    abi.arena "scratch" size 24 align 16
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{lower bound 48 is not within 0..32}}
    abi.arena "scratch" size 32 align 16 lower_bound 48
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{strategy must be one of naive, greedy, best, got 'clever'}}
    abi.arena "scratch" size 32 align 16 strategy "clever"
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{only the constant arena has a link section}}
    abi.arena "scratch" size 32 align 16 section ".data"
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{more than one scratch arena in one block}}
    abi.arena "scratch" size 32 align 16
    abi.arena "scratch" size 64 align 16
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{steps must be non-negative, got -1}}
    abi.arena "scratch" size 32 align 16 steps -1
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{only the scratch arena has steps}}
    abi.arena "constant" size 32 align 16 steps 3
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{unaligned lower bound 40 is not within 0..32 (the aligned lower bound, or the size)}}
    abi.arena "scratch" size 64 align 16 lower_bound 32 unaligned_lower_bound 40
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{only the scratch arena has an unaligned lower bound}}
    abi.arena "persistent" size 0 align 16 unaligned_lower_bound 0
    func.return
  }
}

