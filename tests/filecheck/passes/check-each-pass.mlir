// RUN: zant-opt %s -p fuse-loops,dce,plan-arenas,linearize-geps --check-each-pass | filecheck %s --check-prefix=OK
// RUN: not zant-opt %s -p plan-arenas,buggy-fuse-loops --check-each-pass --check-seed 7 --load-passes %inputs/buggy_fuse_loops.py 2>&1 | filecheck %s --check-prefix=BUG

// `--check-each-pass` interprets the module after every pass on seeded inputs and names the
// first pass that changes a result. Here t = b is stored, s = a + 1 is stored, t is doubled in
// place, and y = s + t reads both. fuse-loops must not fuse y's nest into s's: t is written in
// between. A copy of fuse-loops with that check removed (a seeded bug, Inputs/buggy_fuse_loops.py)
// fuses it, and y reads t before it is doubled.

// OK:       func.func @main()
// OK-COUNT-4: uop.range
// OK-NOT:     uop.range

// BUG: zant-opt: error: pass 'buggy-fuse-loops' changed output 0: max abs diff {{[0-9.e+-]+}} at index {{[0-9]+}} (seed 7)

func.func @main() {
  %a = uop.define_global "input" 0 "a" : !uop.buffer<4xf32>
  %b = uop.define_global "input" 1 "b" : !uop.buffer<4xf32>
  %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
  %s = uop.define_local "s" : !uop.buffer<4xf32>
  %t = uop.define_local "t" : !uop.buffer<4xf32>
  uop.range %i = 0 to 4 {
    %p = uop.gep %b[%i] : !uop.buffer<4xf32>
    %x = uop.load %p : f32
    %q = uop.gep %t[%i] : !uop.buffer<4xf32>
    uop.store %x, %q : f32
  }
  uop.range %i = 0 to 4 {
    %p = uop.gep %a[%i] : !uop.buffer<4xf32>
    %x = uop.load %p : f32
    %one = uop.const 1.0 : f32
    %v = uop.add %x, %one : f32
    %q = uop.gep %s[%i] : !uop.buffer<4xf32>
    uop.store %v, %q : f32
  }
  uop.range %i = 0 to 4 {
    %p = uop.gep %t[%i] : !uop.buffer<4xf32>
    %x = uop.load %p : f32
    %two = uop.const 2.0 : f32
    %v = uop.mul %x, %two : f32
    uop.store %v, %p : f32
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
