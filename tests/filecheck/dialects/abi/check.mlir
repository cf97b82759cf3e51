// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// abi.check in its custom format: an i1 condition and the status the function returns when it
// is false (4: a run-time parameter contradicts the compiled shapes).

builtin.module {
  // CHECK-LABEL: func.func @axes_guard
  func.func @axes_guard(%axes : !uop.buffer<1xi64>) {
    %c0 = uop.const 0 : index
    %p = uop.gep %axes[%c0] : !uop.buffer<1xi64>
    %axis = uop.load %p : i64
    %one = uop.const 1 : i64
    %ok = uop.cmpeq %axis, %one : i64
    // CHECK: abi.check %{{.*}}, 4
    abi.check %ok, 4
    // CHECK-NEXT: abi.check %{{.*}}, 7 {note = "any status of abi.Status but 0"}
    abi.check %ok, 7 {note = "any status of abi.Status but 0"}
    func.return
  }
}
