// RUN: zant-opt %s -p 'set-target{target=host cpu=x86-64-avx2},flush-denormals' | filecheck %s
// RUN: zant-opt %s -p 'set-target{target=host cpu=aarch64-neon},flush-denormals' | filecheck %s
// RUN: not zant-opt %s -p 'set-target{target=cortex-m4},flush-denormals' 2>&1 | filecheck %s --check-prefix=MCU
// RUN: not zant-opt %s -p 'flush-denormals' 2>&1 | filecheck %s --check-prefix=NONE

// The public entry function is marked for the Zig printer; the kernels are not.
// CHECK-LABEL: func.func @main() attributes {zant.flush_denormals} {
// CHECK: func.func private @kernel_y() {
// CHECK-NOT: zant.flush_denormals
// MCU: zant-opt: error: flush-denormals: only the host's x86 and AArch64 CPUs have a flush-to-zero mode Zant sets (target cortex-m4)
// NONE: zant-opt: error: flush-denormals: only the host's x86 and AArch64 CPUs have a flush-to-zero mode Zant sets (no target)

builtin.module {
  func.func @main() {
    func.return
  }
  func.func private @kernel_y() {
    func.return
  }
}
