// RUN: zant-opt %s -p 'set-target{target=cortex-m4}' | filecheck %s
// RUN: zant-opt %s -p 'set-target{target=host cpu=x86-64-sse}' | filecheck %s --check-prefix=HOST
// RUN: zant-opt %s -p 'set-target{target=cortex-m4},set-target{target=cortex-m4}' | filecheck %s
// RUN: not zant-opt %s -p 'set-target{target=host}' 2>&1 | filecheck %s --check-prefix=NOCPU
// RUN: not zant-opt %s -p 'set-target{target=cortex-m9}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not zant-opt %s -p 'set-target{target=cortex-m4},set-target{target=cortex-m55}' 2>&1 | filecheck %s --check-prefix=AGAIN

// The module's target, one attribute the passes after it read.
// CHECK: builtin.module attributes {zant.target = #zant.target<"cortex-m4">} {
// HOST: builtin.module attributes {zant.target = #zant.target<"host", cpu = "x86-64-sse">} {
// NOCPU: zant-opt: error: set-target: the host target needs its CPU, one of x86-64-sse, {{.*}} (cpu = "…")
// UNKNOWN: zant-opt: error: set-target: unknown target 'cortex-m9' (one of host, cortex-m0plus, {{.*}})
// AGAIN: zant-opt: error: set-target: the module's target is already #zant.target<"cortex-m4">, not #zant.target<"cortex-m55">

builtin.module {
  func.func @main() {
    func.return
  }
}
