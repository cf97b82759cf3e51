// RUN: zant-opt %s -p fuse-loops,plan-arenas --check-each-pass | filecheck %s --check-prefix=OK
// RUN: not zant-opt %s -p buggy-fuse-loops --check-each-pass --load-passes %inputs/buggy_fuse_loops.py 2>&1 | filecheck %s

// The seeded bug of check-each-pass.mlir when t is written only after s: the fused nest reads
// scratch memory nothing wrote yet. The checker runs each module twice, with the scratch bytes
// 0xFF and then 0x00, and an output that differs between the two is undefined.

// OK:       func.func @main()
// OK-COUNT-2: uop.range
// OK-NOT:     uop.range

// CHECK: zant-opt: error: pass 'buggy-fuse-loops' changed output 0: element 0 now reads memory nothing wrote (seed 0)

func.func @main() {
  %a = uop.define_global "input" 0 "a" : !uop.buffer<4xf32>
  %b = uop.define_global "input" 1 "b" : !uop.buffer<4xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
  %s = uop.define_local "s" : !uop.buffer<4xf32>
  %t = uop.define_local "t" : !uop.buffer<4xf32>
  uop.range %i = 0 to 4 {
    %p = uop.gep %a[%i] : !uop.buffer<4xf32>
    %x = uop.load %p : f32
    %one = uop.const 1.0 : f32
    %v = uop.add %x, %one : f32
    %q = uop.gep %s[%i] : !uop.buffer<4xf32>
    uop.store %v, %q : f32
  }
  uop.range %i = 0 to 4 {
    %p = uop.gep %b[%i] : !uop.buffer<4xf32>
    %x = uop.load %p : f32
    %q = uop.gep %t[%i] : !uop.buffer<4xf32>
    uop.store %x, %q : f32
  }
  uop.range %i = 0 to 4 {
    %p = uop.gep %s[%i] : !uop.buffer<4xf32>
    %x = uop.load %p : f32
    %r = uop.gep %t[%i] : !uop.buffer<4xf32>
    %z = uop.load %r : f32
    %v = uop.add %x, %z : f32
    %q = uop.gep %y[%i] : !uop.buffer<4xf32>
    uop.store %v, %q : f32
  }
  func.return
}
