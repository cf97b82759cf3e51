// RUN: zant-opt %s -p 'plan-arenas{strategy=naive}' | filecheck %s --check-prefix=NAIVE
// RUN: zant-opt %s -p 'plan-arenas{strategy=greedy}' | filecheck %s --check-prefix=GREEDY
// RUN: zant-opt %s -p plan-arenas | filecheck %s --check-prefix=BEST
// RUN: zant-opt %s -p plan-arenas,plan-arenas,verify-arena-plan | filecheck %s --check-prefix=BEST
// RUN: zant-opt %s -p 'plan-arenas{alignment=64},verify-arena-plan' | filecheck %s --check-prefix=ALIGN64
// Not given, the alignment is the target's: its vectors' bytes where wider than 16 (the host's
// 16-lane f32 vectors: 64), else 16.
// RUN: zant-opt %s -p 'set-target{target=host cpu=x86-64-avx512},plan-arenas,verify-arena-plan' | filecheck %s --check-prefix=ALIGN64
// RUN: zant-opt %s -p 'set-target{target=host cpu=x86-64-sse},plan-arenas' | filecheck %s --check-prefix=ALIGN32
// RUN: zant-opt %s -p 'set-target{target=cortex-m4},plan-arenas' | filecheck %s --check-prefix=BEST

// %a is filled, then read element-wise into %b where it dies (so %b is written in place over
// %a); %c is live with %b; %d is born after %a/%b died and may take their bytes. The plan is
// recorded for the backend: each buffer's first and last live top-level step (`live`, the
// three arenas counted), the step count and the lower bound in unaligned bytes.

// NAIVE-LABEL:  func.func @main()
// NAIVE-NEXT:     abi.arena "scratch" size 112 align 16 lower_bound 48 strategy "naive"
// NAIVE-NEXT:     abi.arena "constant" size 0 align 16
// NAIVE-NEXT:     abi.arena "persistent" size 0 align 16
// NAIVE:          uop.define_local "a" at 0 {{.*}}: !uop.buffer<8xf32>
// NAIVE:          uop.define_local "b" at 32 {{.*}}: !uop.buffer<8xf32>
// NAIVE:          uop.define_local "c" at 64 {{.*}}: !uop.buffer<4xf32>
// NAIVE:          uop.define_local "d" at 80 {{.*}}: !uop.buffer<5xf32>

// GREEDY-LABEL: func.func @main()
// GREEDY-NEXT:    abi.arena "scratch" size 48 align 16 lower_bound 48 strategy "greedy"
// GREEDY:         uop.define_local "a" at 0 {{.*}}: !uop.buffer<8xf32>
// GREEDY:         uop.define_local "b" at 0 {{.*}}: !uop.buffer<8xf32>
// GREEDY:         uop.define_local "c" at 32 {{.*}}: !uop.buffer<4xf32>
// GREEDY:         uop.define_local "d" at 0 {{.*}}: !uop.buffer<5xf32>

// BEST-LABEL:   func.func @main()
// BEST-NEXT:      abi.arena "scratch" size 48 align 16 lower_bound 48 strategy "best" steps 17 unaligned_lower_bound 48
// BEST-NEXT:      abi.arena "constant" size 0 align 16
// BEST-NEXT:      abi.arena "persistent" size 0 align 16
// BEST-NOT:       abi.arena
// BEST:           uop.define_local "a" at 0 live 5 to 9 : !uop.buffer<8xf32>
// BEST:           uop.define_local "b" at 0 live 9 to 12 : !uop.buffer<8xf32>
// BEST:           uop.define_local "c" at 32 live 11 to 14 : !uop.buffer<4xf32>
// BEST:           uop.define_local "d" at 0 live 14 to 15 : !uop.buffer<5xf32>

// ALIGN64:        abi.arena "scratch" size 128 align 64 lower_bound 128 strategy "best"
// ALIGN64:        uop.define_local "c" at 64

// ALIGN32:        abi.arena "scratch" size 64 align 32 lower_bound 64 strategy "best"
// ALIGN32-NEXT:   abi.arena "constant" size 0 align 32
// ALIGN32:        uop.define_local "c" at 32

builtin.module {
  func.func @main() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
    %a = uop.define_local "a" : !uop.buffer<8xf32>
    uop.range %i = 0 to 8 {
      %p = uop.gep %a[%i] : !uop.buffer<8xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" : !uop.buffer<8xf32>
    %av = uop.view %a : !uop.buffer<8xf32> -> !uop.view<2x4xf32, strides [4, 1], offset 0>
    %bv = uop.view %b : !uop.buffer<8xf32> -> !uop.view<2x4xf32, strides [4, 1], offset 0>
    uop.range %i = 0 to 2 {
      uop.range %j = 0 to 4 {
        %p = uop.gep %av[%i, %j] : !uop.view<2x4xf32, strides [4, 1], offset 0>
        %v = uop.load %p : f32
        %e = uop.exp %v : f32
        %q = uop.gep %bv[%i, %j] : !uop.view<2x4xf32, strides [4, 1], offset 0>
        uop.store %e, %q : f32
      }
    }
    %c = uop.define_local "c" : !uop.buffer<4xf32>
    uop.range %i = 0 to 4 {
      %p = uop.gep %b[%i] : !uop.buffer<8xf32>
      %v = uop.load %p : f32
      %q = uop.gep %c[%i] : !uop.buffer<4xf32>
      uop.store %v, %q : f32
    }
    uop.range %i = 0 to 4 {
      %p = uop.gep %b[%i] : !uop.buffer<8xf32>
      %v = uop.load %p : f32
      %r = uop.gep %c[%i] : !uop.buffer<4xf32>
      %w = uop.load %r : f32
      %s = uop.add %v, %w : f32
      %q = uop.gep %c[%i] : !uop.buffer<4xf32>
      uop.store %s, %q : f32
    }
    %d = uop.define_local "d" : !uop.buffer<5xf32>
    uop.range %i = 0 to 4 {
      %p = uop.gep %c[%i] : !uop.buffer<4xf32>
      %v = uop.load %p : f32
      %q = uop.gep %d[%i] : !uop.buffer<5xf32>
      uop.store %v, %q : f32
    }
    uop.range %i = 0 to 4 {
      %p = uop.gep %d[%i] : !uop.buffer<5xf32>
      %v = uop.load %p : f32
      %q = uop.gep %y[%i] : !uop.buffer<4xf32>
      uop.store %v, %q : f32
    }
    func.return
  }
}
