// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// uop.fma: a·b + c rounded once, on every float type, scalar or lane by lane on vectors; the
// custom format names one type (the operands' and the result's).

// CHECK-LABEL: func.func @fma
// CHECK-NEXT:    %r = uop.fma %a, %b, %c : f32
// CHECK-NEXT:    %h = uop.fma %x, %x, %x : f16
// CHECK-NEXT:    %d = uop.fma %y, %y, %y : f64
// CHECK-NEXT:    %v = uop.fma %va, %vb, %vc : vector<16xf32>
// CHECK-NEXT:    func.return

// GENERIC: %r = "uop.fma"(%a, %b, %c) : (f32, f32, f32) -> f32
// GENERIC: %v = "uop.fma"(%va, %vb, %vc) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>

builtin.module {
  func.func @fma(%a: f32, %b: f32, %c: f32, %x: f16, %y: f64, %va: vector<16xf32>, %vb: vector<16xf32>, %vc: vector<16xf32>) {
    %r = uop.fma %a, %b, %c : f32
    %h = uop.fma %x, %x, %x : f16
    %d = uop.fma %y, %y, %y : f64
    %v = uop.fma %va, %vb, %vc : vector<16xf32>
    func.return
  }
}
