// RUN: zant-opt %s -p 'set-target{target=host cpu=x86-64-avx2},split-index-sets,vectorize' | filecheck %s --check-prefix=AVX2
// RUN: zant-opt %s -p 'set-target{target=host cpu=x86-64-sse},split-index-sets,vectorize' | filecheck %s --check-prefix=SSE
// RUN: zant-opt %s -p 'set-target{target=host cpu=x86-64-avx2},vectorize{width=4}' | filecheck %s --check-prefix=OPTION
// RUN: zant-opt %s -p 'vectorize' | filecheck %s --check-prefix=SSE
// RUN: not zant-opt %s -p 'set-target{target=cortex-m4},vectorize' 2>&1 | filecheck %s --check-prefix=MCU
// RUN: not zant-opt %s -p 'set-target{target=cortex-m4},split-index-sets' 2>&1 | filecheck %s --check-prefix=MCU-SPLIT
// RUN: zant-opt %s -p 'set-target{target=cortex-m4},vectorize{width=8}' | filecheck %s --check-prefix=SSE

// The vector passes run at the width of the module's target (#zant.target: the host's from its
// CPU, 16 lanes on AVX2, 8 on SSE; 8 without a target); their `width` option overrides it. A
// target without vector lanes needs the option.
// AVX2:   uop.range %i = 0 to 32 step 16 {
// AVX2:     uop.vstore %{{.*}}, %{{.*}} : vector<16xf32>
// SSE:    uop.range %i = 0 to 32 step 8 {
// SSE:      uop.vstore %{{.*}}, %{{.*}} : vector<8xf32>
// OPTION: uop.range %i = 0 to 32 step 4 {
// OPTION:   uop.vstore %{{.*}}, %{{.*}} : vector<4xf32>
// MCU: zant-opt: error: pass 'vectorize' failed: the module's target #zant.target<"cortex-m4"> has no vector lanes; give vectorize{width=W} to vectorize for it anyway
// MCU-SPLIT: zant-opt: error: pass 'split-index-sets' failed: the module's target #zant.target<"cortex-m4"> has no vector lanes

builtin.module {
  func.func @double() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<32xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<32xf32>
    uop.range %i = 0 to 32 {
      %p = uop.gep %x[%i] : !uop.buffer<32xf32>
      %a = uop.load %p : f32
      %c = uop.add %a, %a : f32
      %q = uop.gep %y[%i] : !uop.buffer<32xf32>
      uop.store %c, %q : f32
    }
    func.return
  }
}
