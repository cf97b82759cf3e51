// RUN: zant-opt %s -p plan-arenas | filecheck %s --check-prefix=EMBEDDED
// RUN: zant-opt %s -p 'plan-arenas{constants=staged}' | filecheck %s --check-prefix=STAGED
// RUN: zant-opt %s -p 'plan-arenas{constants=external}' | filecheck %s --check-prefix=EXTERNAL
// RUN: zant-opt %s -p 'plan-arenas{constants=staged},plan-arenas{constants=external}' | filecheck %s --check-prefix=EXTERNAL
// RUN: not zant-opt %s -p 'plan-arenas{constants=rom}' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// Where the constant arena lives is plan-arenas' decision, recorded on the constant abi.arena as
// its runtime memory and, when staged, its source memory: the header, plan JSON, Zig file and
// firmware all read it there. Embedded (the default) is read in place from flash; staged is
// copied from flash into RAM by NAME_init; external is a blob the firmware places. Planning
// again re-decides from the option alone.

// EMBEDDED-LABEL: func.func @main()
// EMBEDDED-NEXT:    abi.arena "scratch"
// EMBEDDED-NEXT:    abi.arena "constant" size 16 align 16 memory "flash"{{$}}
// EMBEDDED-NEXT:    abi.arena "persistent" size 0 align 16{{$}}
// EMBEDDED:         uop.define_global "constant" 0 "w" at 0

// STAGED-LABEL:   func.func @main()
// STAGED:           abi.arena "constant" size 16 align 16 memory "ram" source "flash"{{$}}
// STAGED-NEXT:      abi.arena "persistent" size 0 align 16{{$}}
// STAGED:           uop.define_global "constant" 0 "w" at 0

// EXTERNAL-LABEL: func.func @main()
// EXTERNAL:         abi.arena "constant" size 16 align 16 memory "external"{{$}}
// EXTERNAL:         uop.define_global "constant" 0 "w" at 0

// UNKNOWN: plan-arenas: constants must be one of embedded, staged, external, got 'rom'

builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<3xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<3xf32>
    %w = uop.define_global "constant" 0 "w" value dense<[1.5, -0.0, 2.5]> : tensor<3xf32> : !uop.buffer<3xf32>
    uop.range %i = 0 to 3 {
      %p = uop.gep %x[%i] : !uop.buffer<3xf32>
      %a = uop.load %p : f32
      %q = uop.gep %w[%i] : !uop.buffer<3xf32>
      %c = uop.load %q : f32
      %s = uop.add %a, %c : f32
      %o = uop.gep %y[%i] : !uop.buffer<3xf32>
      uop.store %s, %o : f32
    }
    func.return
  }
}
