// RUN: zant-opt %s --split-input-file | filecheck %s
// RUN: zant-opt %s --split-input-file | zant-opt --split-input-file | filecheck %s
// RUN: zant-opt %s --split-input-file --print-op-generic | zant-opt --split-input-file | filecheck %s

// A microcontroller is its name; the host is its name and its CPU's description.
// CHECK: builtin.module attributes {zant.target = #zant.target<"cortex-m4">}
builtin.module attributes {zant.target = #zant.target<"cortex-m4">} {
}

// -----

// CHECK: builtin.module attributes {zant.target = #zant.target<"host", cpu = "x86-64-avx2">}
builtin.module attributes {zant.target = #zant.target<"host", cpu = "x86-64-avx2">} {
}
