// RUN: zant-opt %s -p plan-arenas,verify-arena-plan | filecheck %s --check-prefix=ON
// RUN: zant-opt %s -p 'plan-arenas{in-place=false},verify-arena-plan' | filecheck %s --check-prefix=OFF
// RUN: zant-opt %s -p 'plan-arenas{strategy=greedy in-place=false},verify-arena-plan' | filecheck %s --check-prefix=OFF

// plan-arenas' in-place option: an element-wise op (here exp, then a ReLU as max with 0) writes
// its output over its input as it reads it, element for element; by default the pair shares one
// slot (the arena holds one buffer), with in-place=false each buffer has its own (the
// layer-by-layer plan without overlap). verify-arena-plan accepts both plans.

// ON-LABEL:  func.func @chain
// ON:          abi.arena "scratch" size 64 align 16 lower_bound 64
// ON-SAME:     unaligned_lower_bound 64
// ON:          uop.define_local "a" at 0
// ON:          uop.define_local "b" at 0
// ON:          uop.define_local "c" at 0

// OFF-LABEL: func.func @chain
// OFF:         abi.arena "scratch" size 128 align 16 lower_bound 128
// OFF-SAME:    unaligned_lower_bound 128
// OFF:         uop.define_local "a" at [[A:[0-9]+]]
// OFF:         uop.define_local "b" at [[B:[0-9]+]]
// OFF-NOT:     uop.define_local "c" at [[B]]
// OFF:         uop.define_local "c" at [[A]]
builtin.module {
  func.func @chain() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<16xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<16xf32>
    %a = uop.define_local "a" : !uop.buffer<16xf32>
    uop.range %i = 0 to 16 {
      %p = uop.gep %x[%i] : !uop.buffer<16xf32>
      %v = uop.load %p : f32
      %q = uop.gep %a[%i] : !uop.buffer<16xf32>
      uop.store %v, %q : f32
    }
    %b = uop.define_local "b" : !uop.buffer<16xf32>
    uop.range %i = 0 to 16 {
      %p = uop.gep %a[%i] : !uop.buffer<16xf32>
      %v = uop.load %p : f32
      %e = uop.exp %v : f32
      %q = uop.gep %b[%i] : !uop.buffer<16xf32>
      uop.store %e, %q : f32
    }
    %c = uop.define_local "c" : !uop.buffer<16xf32>
    uop.range %i = 0 to 16 {
      %p = uop.gep %b[%i] : !uop.buffer<16xf32>
      %v = uop.load %p : f32
      %zero = uop.const 0.0 : f32
      %r = uop.max %v, %zero : f32
      %q = uop.gep %c[%i] : !uop.buffer<16xf32>
      uop.store %r, %q : f32
    }
    uop.range %i = 0 to 16 {
      %p = uop.gep %c[%i] : !uop.buffer<16xf32>
      %v = uop.load %p : f32
      %q = uop.gep %y[%i] : !uop.buffer<16xf32>
      uop.store %v, %q : f32
    }
    func.return
  }
}
