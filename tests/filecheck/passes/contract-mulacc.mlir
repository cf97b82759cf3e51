// RUN: zant-opt %s -p contract-mulacc | filecheck %s
// RUN: zant-opt %s -p 'contract-mulacc{vector=false scalar=true}' | filecheck %s --check-prefix=SCALAR
// RUN: zant-opt %s -p 'contract-mulacc{vector=false}' | filecheck %s --check-prefix=NONE
// RUN: zant-opt %s -p 'set-target{target=cortex-m4},contract-mulacc{vector=false}' | filecheck %s --check-prefix=SCALAR
// RUN: zant-opt %s -p 'set-target{target=cortex-m0plus},contract-mulacc{vector=false}' | filecheck %s --check-prefix=NONE

// By default the float multiply-accumulates of vector accumulators become fused (one rounding,
// `@mulAdd`) and scalar ones stay unfused; integer accumulators have nothing to fuse.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.mulacc fused %vacc, %xv, %wv : !uop.acc<vector<4xf32>>, vector<4xf32>
// CHECK:         uop.mulacc %acc, %x, %w : !uop.acc<f32>, f32
// CHECK:         uop.mulacc %iacc, %n, %n : !uop.acc<i32>, i32

// SCALAR-LABEL:  func.func @main()
// SCALAR:          uop.mulacc %vacc, %xv, %wv : !uop.acc<vector<4xf32>>, vector<4xf32>
// SCALAR:          uop.mulacc fused %acc, %x, %w : !uop.acc<f32>, f32
// SCALAR:          uop.mulacc %iacc, %n, %n : !uop.acc<i32>, i32

// NONE-NOT:      fused

builtin.module {
  func.func @main() {
    %vacc = uop.define_acc 0.0 : f32 to vector<4xf32>
    %acc = uop.define_acc 0.0 : f32
    %iacc = uop.define_acc 0 : i32
    %x = uop.const 1.5 : f32
    %w = uop.const 2.0 : f32
    %n = uop.const 3 : i32
    %xv = uop.broadcast %x : f32 to vector<4xf32>
    %wv = uop.broadcast %w : f32 to vector<4xf32>
    uop.mulacc %vacc, %xv, %wv : !uop.acc<vector<4xf32>>, vector<4xf32>
    uop.mulacc %acc, %x, %w : !uop.acc<f32>, f32
    uop.mulacc %iacc, %n, %n : !uop.acc<i32>, i32
    func.return
  }
}
