// RUN: zant-opt %s -p 'plan-arenas,place-memories{memories="fast:32","slow:512"},verify-arena-plan' | filecheck %s
// RUN: zant-opt %s -p 'plan-arenas,place-memories{memories="fast:32","slow:512"},place-memories{memories="fast:32","slow:512"}' | filecheck %s
// RUN: zant-opt %s -p 'plan-arenas,place-memories{memories="fast:512"}' | filecheck %s --check-prefix=ONE
// RUN: zant-opt %s -p 'plan-arenas,place-memories{memories="fast:16","bss:512"},verify-arena-plan' | filecheck %s --check-prefix=BSS
// RUN: not zant-opt %s -p 'plan-arenas,place-memories{memories="fast:32","slow:128"}' 2>&1 | filecheck %s --check-prefix=NOFIT
// RUN: not zant-opt %s -p 'plan-arenas,place-memories{memories="fast"}' 2>&1 | filecheck %s --check-prefix=BAD

// "hot" (16 B) is read 400 times, "big" (256 B) 64 times: per byte, "hot" is the one that earns
// the fast memory. Both are live at once, so the 32 B of "fast" take "hot" only and "big" goes
// to "slow". Each memory gets its own scratch arena (sizes and bounds of its own plan), each
// buffer its memory and an offset into that memory's arena; the live steps count the two arenas.

// CHECK-LABEL:  func.func @main()
// CHECK-NEXT:     abi.arena "scratch" size 16 align 16 lower_bound 16 strategy "best" steps 11 unaligned_lower_bound 16 memory "fast"
// CHECK-NEXT:     abi.arena "scratch" size 256 align 16 lower_bound 256 strategy "best" steps 11 unaligned_lower_bound 256 memory "slow"
// CHECK-NEXT:     abi.arena "constant" size 0 align 16
// CHECK-NEXT:     abi.arena "persistent" size 0 align 16
// CHECK-NOT:      abi.arena
// CHECK:          uop.define_local "big" at 0 live 6 to 8 in "slow" : !uop.buffer<64xf32>
// CHECK:          uop.define_local "hot" at 0 live 8 to 9 in "fast" : !uop.buffer<4xf32>

// With one memory big enough for both, both go there, packed as plan-arenas packs them.
// ONE-LABEL:    func.func @main()
// ONE-NEXT:       abi.arena "scratch" size 272 align 16 lower_bound 272 strategy "best" steps 10 unaligned_lower_bound 272 memory "fast"
// ONE:            uop.define_local "big" at 0 live 5 to 7 in "fast"
// ONE:            uop.define_local "hot" at 256 live 7 to 8 in "fast"

// `bss` is the default scratch arena (the one plan-arenas made, in the image's .bss): no memory.
// BSS-LABEL:    func.func @main()
// BSS-NEXT:       abi.arena "scratch" size 16 align 16 {{.*}} memory "fast"
// BSS-NEXT:       abi.arena "scratch" size 256 align 16 lower_bound 256 strategy "best" steps 11 unaligned_lower_bound 256{{$}}
// BSS:            uop.define_local "big" at 0 live 6 to 8 : !uop.buffer<64xf32>
// BSS:            uop.define_local "hot" at 0 live 8 to 9 in "fast" : !uop.buffer<4xf32>

// NOFIT: scratch buffer 'big' (256 B) fits in no memory of the board beside the buffers live with it (fast 32 B, slow 128 B)
// BAD: place-memories: 'fast' is not NAME:BYTES

builtin.module {
  func.func @main() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
    %big = uop.define_local "big" : !uop.buffer<64xf32>
    uop.range %i = 0 to 64 {
      %p = uop.gep %big[%i] : !uop.buffer<64xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %hot = uop.define_local "hot" : !uop.buffer<4xf32>
    uop.range %r = 0 to 100 {
      uop.range %i = 0 to 4 {
        %p = uop.gep %hot[%i] : !uop.buffer<4xf32>
        %v = uop.load %p : f32
        %q = uop.gep %big[%i] : !uop.buffer<64xf32>
        %w = uop.load %q : f32
        %s = uop.add %v, %w : f32
        uop.store %s, %p : f32
      }
    }
    uop.range %i = 0 to 4 {
      %p = uop.gep %hot[%i] : !uop.buffer<4xf32>
      %v = uop.load %p : f32
      %q = uop.gep %y[%i] : !uop.buffer<4xf32>
      uop.store %v, %q : f32
    }
    func.return
  }
}
