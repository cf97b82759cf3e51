// RUN: zant-opt %s --split-input-file --verify-diagnostics

// arm_dsp.ssat saturates to 1 to 32 bits and shifts by 0 to 31 (SSAT's fields).

func.func @too_wide(%x : i32) -> i32 {
  // expected-error@+1 {{ssat saturates to 1 to 32 bits, got 33}}
  %y = arm_dsp.ssat %x {bits = #builtin.int<33>, shift = #builtin.int<0>} : i32
  func.return %y : i32
}

// -----

func.func @shift_too_far(%x : i32) -> i32 {
  // expected-error@+1 {{ssat shifts right by 0 to 31 bits, got 32}}
  %y = arm_dsp.ssat %x {bits = #builtin.int<8>, shift = #builtin.int<32>} : i32
  func.return %y : i32
}
