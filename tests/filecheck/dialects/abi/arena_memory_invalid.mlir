// RUN: zant-opt %s --split-input-file --verify-diagnostics

builtin.module {
  func.func @main() {
    // expected-error@+1 {{a constant arena is in memory flash, ram from source flash (staged) or external, got memory dtcm source None}}
    abi.arena "constant" size 0 align 16 memory "dtcm"
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{a constant arena is in memory flash, ram from source flash (staged) or external, got memory ram source None}}
    abi.arena "constant" size 0 align 16 memory "ram"
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{only a scratch or constant arena is placed in a memory}}
    abi.arena "persistent" size 0 align 16 memory "flash"
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{only a constant arena has a source memory (staged constants)}}
    abi.arena "scratch" size 16 align 16 memory "dtcm" source "flash"
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{more than one scratch arena in memory dtcm in one block}}
    abi.arena "scratch" size 16 align 16 memory "dtcm"
    abi.arena "scratch" size 32 align 16 memory "dtcm"
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{a memory without an offset: place-memories places planned buffers}}
    %t = uop.define_local "t" in "dtcm" : !uop.buffer<8xf32>
    func.return
  }
}
