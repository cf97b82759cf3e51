// RUN: zant-opt %s --split-input-file --verify-diagnostics -p 'verify-arena-plan{reach-only=true}' | filecheck %s

// After outline-kernels (the pipelines' last check, `pipelines.REACH_STAGE`): only the reach of
// the ops that declare one, in every function. A kernel's buffer is its argument, of its
// caller's buffer type, and named by the caller's buffer; a graph input is checked as a scratch
// buffer is. Here each of 3 words reaches byte i + 4 <= 6: exactly to the end.

// CHECK: zant.asm_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func private @kernel_x
builtin.module {
  func.func @main() {
    abi.arena "scratch" size 16 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<6xi8>
    func.call @kernel_x(%x) : (!uop.buffer<6xi8>) -> ()
    func.return
  }
  func.func private @kernel_x(%x: !uop.buffer<6xi8>) {
    uop.range %i = 0 to 3 {
      %p = uop.gep %x[%i] : !uop.buffer<6xi8>
      %w = arm_dsp.load_word %p : !uop.ptr<i8>
    }
    func.return
  }
}

// -----

// 4 words: the last reaches one byte past the input.

builtin.module {
  func.func @main() {
    abi.arena "scratch" size 16 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<6xi8>
    func.call @kernel_x(%x) : (!uop.buffer<6xi8>) -> ()
    func.return
  }
  func.func private @kernel_x(%x: !uop.buffer<6xi8>) {
    uop.range %i = 0 to 4 {
      %p = uop.gep %x[%i] : !uop.buffer<6xi8>
      %w = arm_dsp.load_word %p : !uop.ptr<i8>
    }
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: arm_dsp.load_word's ptr reaches bytes [0, 7) of 'x' (6 bytes): 1 byte past its end (its reach [0, 4) from a start at bytes 0..3)}}

// -----

// A scalar the caller computed (an argument of the kernel) has no static bound here: counted.

// CHECK: zant.asm_reach = {checked = 0 : i64, unresolved = 1 : i64}
// CHECK-LABEL: func.func private @kernel_y
builtin.module {
  func.func @main() {
    abi.arena "scratch" size 16 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<6xi8>
    %one = uop.const 1 : index
    func.call @kernel_y(%x, %one) : (!uop.buffer<6xi8>, index) -> ()
    func.return
  }
  func.func private @kernel_y(%x: !uop.buffer<6xi8>, %k: index) {
    %p = uop.gep %x[%k] : !uop.buffer<6xi8>
    %w = arm_dsp.load_word %p : !uop.ptr<i8>
    func.return
  }
}
