// RUN: not zant-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// --verify-diagnostics checks the expected-error annotations as mlir-opt does: a wrong
// expectation, an error nobody announced and an announced error that never comes each fail.

func.func @wrong_text() {
  // expected-error@+1 {{role must be one of input, output, weights}}
  %x = uop.define_global "weird" 0 "x" : !uop.buffer<2xf32>
  func.return
}

// CHECK: invalid-expectations.mlir:8: error: unexpected error: role must be one of input, output, constant, got 'weird'
// CHECK: invalid-expectations.mlir:7: error: expected error "role must be one of input, output, weights" on line 8 was not produced

// -----

func.func @unannounced() {
  %x = uop.define_global "constant" 0 "x" : !uop.buffer<2xf32>
  func.return
}

// CHECK: invalid-expectations.mlir:18: error: unexpected error: the input does not verify: 'uop.define_global' op a constant buffer needs a value
// CHECK-NEXT: func.func @unannounced() {
// CHECK-NEXT:   %x = uop.define_global "constant" 0 "x" : !uop.buffer<2xf32>
// CHECK-NEXT:   ^^^

// -----

func.func @never() {
  // expected-error@+1 {{never}}
  %x = uop.define_global "input" 0 "x" : !uop.buffer<2xf32>
  func.return
}

// CHECK: invalid-expectations.mlir:30: error: expected error "never" on line 31 was not produced
