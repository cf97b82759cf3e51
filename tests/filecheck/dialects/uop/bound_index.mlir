// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// uop.bound_index in its custom format: an integer read from the data used as an index into a
// dimension of 4 elements (valid: -4..3, negative ones from the end), or of 12 with
// `nonnegative` (valid: 0..11). check-data-indices turns each into a check (status 6) and a clamp.

builtin.module {
  // CHECK-LABEL: func.func @indices
  func.func @indices(%v : i64, %w : i32) {
    // CHECK: %a = uop.bound_index %v, 4 : i64
    %a = uop.bound_index %v, 4 : i64
    // CHECK-NEXT: %b = uop.bound_index nonnegative %w, 12 : i32
    %b = uop.bound_index nonnegative %w, 12 : i32
    // CHECK-NEXT: %c = uop.bound_index %w, 0 {note = "an empty dimension"} : i32
    %c = uop.bound_index %w, 0 {note = "an empty dimension"} : i32
    func.return
  }
}
