// RUN: zant-opt %s --split-input-file --verify-diagnostics -p 'verify-arena-plan{reach-only=true}' | filecheck %s

// After outline-kernels (the pipelines' last check, `pipelines.REACH_STAGE`, which the Helium
// passes' vector loads come before): the vector accesses of every function are checked too, a
// kernel's buffer by its caller's buffer type and name. Rows of 8 int8 at 0 and 4 of 12: the
// last lane of the second is the input's last byte.

// CHECK: zant.vector_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func private @kernel_x
builtin.module {
  func.func @main() {
    abi.arena "scratch" size 16 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<12xi8>
    func.call @kernel_x(%x) : (!uop.buffer<12xi8>) -> ()
    func.return
  }
  func.func private @kernel_x(%x: !uop.buffer<12xi8>) {
    uop.range %i = 0 to 8 step 4 {
      %p = uop.gep %x[%i] : !uop.buffer<12xi8>
      %v = uop.vload %p : vector<8xi8>
    }
    func.return
  }
}

// -----

// Rows at 0 and 5: the second's last lane is one byte past the input.

builtin.module {
  func.func @main() {
    abi.arena "scratch" size 16 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<12xi8>
    func.call @kernel_x(%x) : (!uop.buffer<12xi8>) -> ()
    func.return
  }
  func.func private @kernel_x(%x: !uop.buffer<12xi8>) {
    uop.range %i = 0 to 10 step 5 {
      %p = uop.gep %x[%i] : !uop.buffer<12xi8>
      %v = uop.vload %p : vector<8xi8>
    }
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: uop.vload's ptr reaches bytes [0, 13) of 'x' (12 bytes): 1 byte past its end (its reach [0, 8) from a start at bytes 0..5)}}
