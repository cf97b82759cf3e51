// RUN: zant-opt %s --split-input-file --verify-diagnostics -p 'verify-arena-plan{reach-only=true}' | filecheck %s

// After outline-kernels (the pipelines' last check, `pipelines.REACH_STAGE`, which the passes that
// make inbounds geps without `mark-inbounds`' proof come before: arm-dsp-dot, arm-dsp-requant,
// arm-dsp-depthwise-rows …): the inbounds geps of every function are checked, a kernel's buffer
// by its caller's buffer type and name. Elements 0..11 of 12 int8: inside.

// CHECK: zant.inbounds_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func private @kernel_x
builtin.module {
  func.func @main() {
    abi.arena "scratch" size 16 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<12xi8>
    func.call @kernel_x(%x) : (!uop.buffer<12xi8>) -> ()
    func.return
  }
  func.func private @kernel_x(%x: !uop.buffer<12xi8>) {
    uop.range %i = 0 to 12 {
      %p = uop.gep inbounds %x[%i] : !uop.buffer<12xi8>
      %v = uop.load %p : i8
    }
    func.return
  }
}

// -----

// Elements 0..12 of the 12: the last one past the caller's input.

builtin.module {
  func.func @main() {
    abi.arena "scratch" size 16 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<12xi8>
    func.call @kernel_x(%x) : (!uop.buffer<12xi8>) -> ()
    func.return
  }
  func.func private @kernel_x(%x: !uop.buffer<12xi8>) {
    uop.range %i = 0 to 13 {
      %p = uop.gep inbounds %x[%i] : !uop.buffer<12xi8>
      %v = uop.load %p : i8
    }
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: an inbounds uop.gep reaches elements [0, 13) of the 12 of 'x' (12 bytes): 1 element past its end (its accesses 0 elements on from a start at elements 0..12)}}

// -----

// A scratch buffer too, which only the full check's gep check (not run here) saw before: one
// past a buffer placed in the arena.

builtin.module {
  func.func @scratch_one_past() {
    abi.arena "scratch" size 16 align 16
    %a = uop.define_local "a" at 4 : !uop.buffer<3xi32>
    %three = uop.const 3 : index
    %p = uop.gep inbounds %a[%three] : !uop.buffer<3xi32>
    %v = uop.load %p : i32
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: an inbounds uop.gep reaches elements [3, 4) of the 3 of 'a' (12 bytes, at [4, 16) in its scratch arena): 1 element past its end (its accesses 0 elements on from a start at elements 3..3)}}

// -----

// An index passed to a kernel as an argument has no static bound there: counted unresolved.

// CHECK: zant.inbounds_reach = {checked = 0 : i64, unresolved = 1 : i64}
// CHECK-LABEL: func.func private @kernel_at
builtin.module {
  func.func @main() {
    abi.arena "scratch" size 16 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<12xi8>
    %two = uop.const 2 : index
    func.call @kernel_at(%x, %two) : (!uop.buffer<12xi8>, index) -> ()
    func.return
  }
  func.func private @kernel_at(%x: !uop.buffer<12xi8>, %i: index) {
    %p = uop.gep inbounds %x[%i] : !uop.buffer<12xi8>
    %v = uop.load %p : i8
    func.return
  }
}
