// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The arenas of a planned function (with the schedule's step count and the unaligned lower
// bound), a constant at its offset and scratch buffers with their live steps, in the custom format.
// The generic form spells the enums and the live range as #uop<...> attributes.

// GENERIC: role = #abi<arena_role "scratch">{{.*}}strategy = #abi<plan_strategy "best">, steps = 7 : i64, unaligned_lower_bound = 60 : i64
// GENERIC: "uop.define_local"() <{tensor_name = "t", offset = 32 : i64, live = #uop<step_range 4 to 6>}>

// CHECK-LABEL: func.func @main()
// CHECK-NEXT:    abi.arena "scratch" size 96 align 16 lower_bound 64 strategy "best" steps 7 unaligned_lower_bound 60
// CHECK-NEXT:    abi.arena "constant" size 32 align 16 section ".rodata.zant"
// CHECK-NEXT:    abi.arena "persistent" size 0 align 16
// CHECK-NEXT:    %w = uop.define_global "constant" 0 "w" at 16 value dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32> : !uop.buffer<2xf32>
// CHECK-NEXT:    %t = uop.define_local "t" at 32 live 4 to 6 : !uop.buffer<8xf32>
// CHECK-NEXT:    %u = uop.define_local "u" at 0 live 5 to 5 : !uop.buffer<4xf32>

builtin.module {
  func.func @main() {
    abi.arena "scratch" size 96 align 16 lower_bound 64 strategy "best" steps 7 unaligned_lower_bound 60
    abi.arena "constant" size 32 align 16 section ".rodata.zant"
    abi.arena "persistent" size 0 align 16
    %w = uop.define_global "constant" 0 "w" at 16 value dense<[1.0, 2.0]> : tensor<2xf32> : !uop.buffer<2xf32>
    %t = uop.define_local "t" at 32 live 4 to 6 : !uop.buffer<8xf32>
    %u = uop.define_local "u" at 0 live 5 to 5 : !uop.buffer<4xf32>
    func.return
  }
}
