// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// A scratch arena split over two memories (as place-memories leaves it): one scratch arena per
// memory, each buffer in one of them, its offset into that memory's arena; the constant arena
// staged (in RAM, copied from flash at init, as plan-arenas{constants=staged} leaves it).

// GENERIC: "abi.arena"() <{{.*}}memory = "dtcm"
// GENERIC: "abi.arena"() <{{.*}}memory = "ram", source = "flash"
// GENERIC: "uop.define_local"() <{tensor_name = "t", offset = 0 : i64, live = #uop<step_range 4 to 5>, memory = "sram"}>

// CHECK-LABEL: func.func @main()
// CHECK-NEXT:    abi.arena "scratch" size 16 align 16 memory "dtcm"
// CHECK-NEXT:    abi.arena "scratch" size 32 align 16 memory "sram"
// CHECK-NEXT:    abi.arena "constant" size 0 align 16 memory "ram" source "flash"
// CHECK-NEXT:    abi.arena "persistent" size 0 align 16
// CHECK-NEXT:    %t = uop.define_local "t" at 0 live 4 to 5 in "sram" : !uop.buffer<8xf32>
// CHECK-NEXT:    %u = uop.define_local "u" at 0 live 5 to 5 in "dtcm" : !uop.buffer<4xf32>

builtin.module {
  func.func @main() {
    abi.arena "scratch" size 16 align 16 memory "dtcm"
    abi.arena "scratch" size 32 align 16 memory "sram"
    abi.arena "constant" size 0 align 16 memory "ram" source "flash"
    abi.arena "persistent" size 0 align 16
    %t = uop.define_local "t" at 0 live 4 to 5 in "sram" : !uop.buffer<8xf32>
    %u = uop.define_local "u" at 0 live 5 to 5 in "dtcm" : !uop.buffer<4xf32>
    func.return
  }
}
