// RUN: zant-opt %s --split-input-file --verify-diagnostics

// expected-error@+1 {{unknown target 'cortex-m9' (one of host, cortex-m0plus, cortex-m3, cortex-m4, cortex-m7, cortex-m33, cortex-m55, riscv32)}}
builtin.module attributes {zant.target = #zant.target<"cortex-m9">} {
}

// -----

// expected-error@+1 {{the host target needs its CPU, one of x86-64-sse, x86-64-avx, x86-64-avx2, x86-64-avx512, x86-sse, x86-avx, x86-avx2, x86-avx512, aarch64-neon, generic (cpu = "…")}}
builtin.module attributes {zant.target = #zant.target<"host">} {
}

// -----

// expected-error@+1 {{the host target needs its CPU, one of x86-64-sse, x86-64-avx, x86-64-avx2, x86-64-avx512, x86-sse, x86-avx, x86-avx2, x86-avx512, aarch64-neon, generic (cpu = "…"); 'pentium' is none of them}}
builtin.module attributes {zant.target = #zant.target<"host", cpu = "pentium">} {
}

// -----

// expected-error@+1 {{the CPU of a host is given, not of cortex-m4 (cpu = 'x86-64-avx2')}}
builtin.module attributes {zant.target = #zant.target<"cortex-m4", cpu = "x86-64-avx2">} {
}

// -----

// expected-error@+1 {{string literal expected (the target's name, quoted)}}
builtin.module attributes {zant.target = #zant.target<cortex>} {
}
