// RUN: zant-opt %s -p plan-arenas | filecheck %s
// RUN: zant-opt %s -p plan-arenas,plan-arenas | filecheck %s
// RUN: zant-opt %s -p 'plan-arenas{alignment=64}' | filecheck %s --check-prefix=ALIGN64

// Each scratch buffer gets its own aligned slot, in program order (no reuse yet).

// CHECK-LABEL: func.func @main()
// CHECK-SAME:    attributes {uop.scratch_size = 64 : i64, uop.alignment = 16 : i64}
// CHECK-NEXT:    %a = uop.define_local "a" at 0 : !uop.buffer<5xf32>
// CHECK-NEXT:    %b = uop.define_local "b" at 32 : !uop.buffer<3xi8>
// CHECK-NEXT:    %c = uop.define_local "c" at 48 : !uop.buffer<2xf64>

// ALIGN64:       attributes {uop.scratch_size = 192 : i64, uop.alignment = 64 : i64}
// ALIGN64:       uop.define_local "a" at 0
// ALIGN64:       uop.define_local "b" at 64
// ALIGN64:       uop.define_local "c" at 128

builtin.module {
  func.func @main() {
    %a = uop.define_local "a" : !uop.buffer<5xf32>
    %b = uop.define_local "b" : !uop.buffer<3xi8>
    %c = uop.define_local "c" at 999 : !uop.buffer<2xf64>
    func.return
  }
}
