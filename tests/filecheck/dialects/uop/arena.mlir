// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// The arenas of a planned function and a constant at its offset, in the custom format.

// CHECK-LABEL: func.func @main()
// CHECK-NEXT:    uop.arena "scratch" size 96 align 16 lower_bound 64 strategy "best"
// CHECK-NEXT:    uop.arena "constant" size 32 align 16 section ".rodata.zant"
// CHECK-NEXT:    uop.arena "persistent" size 0 align 16
// CHECK-NEXT:    %w = uop.define_global "constant" 0 "w" at 16 value dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32> : !uop.buffer<2xf32>

builtin.module {
  func.func @main() {
    uop.arena "scratch" size 96 align 16 lower_bound 64 strategy "best"
    uop.arena "constant" size 32 align 16 section ".rodata.zant"
    uop.arena "persistent" size 0 align 16
    %w = uop.define_global "constant" 0 "w" at 16 value dense<[1.0, 2.0]> : tensor<2xf32> : !uop.buffer<2xf32>
    func.return
  }
}
