// RUN: zant-opt %s -p plan-arenas,verify-arena-plan | filecheck %s

// A nest schedule-in-place marked writes a 64-byte %b over the 32-byte %a (its pixel's two
// channels copied to a line buffer first, then four outputs written: the widening pointwise of
// VWW). The slot of a chain whose members differ in size takes each member's bytes only while
// that member lives: %c (32 B), live with %a but not with %b, goes above %a at 32, inside the
// bytes %b takes later, and the arena is 64 (+ 16 for the line buffer) instead of 96 + 16.

// CHECK-LABEL: func.func @widening
// CHECK:         abi.arena "scratch" size 80 align 16 lower_bound 80
// CHECK:         uop.define_local "a" at 0
// CHECK:         uop.define_local "c" at 32
// CHECK:         uop.define_local "line" at 64
// CHECK:         uop.define_local "b" at 0
builtin.module {
  func.func @widening() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<16xf32>
    %z = uop.define_global "output" 1 "z" : !uop.buffer<8xf32>
    %a = uop.define_local "a" : !uop.buffer<8xf32>
    %c = uop.define_local "c" : !uop.buffer<8xf32>
    uop.range %i = 0 to 8 {
      %one = uop.const 1.0 : f32
      %p = uop.gep %a[%i] : !uop.buffer<8xf32>
      uop.store %one, %p : f32
      %q = uop.gep %c[%i] : !uop.buffer<8xf32>
      uop.store %one, %q : f32
    }
    uop.range %i = 0 to 8 {
      %p = uop.gep %c[%i] : !uop.buffer<8xf32>
      %v = uop.load %p : f32
      %q = uop.gep %z[%i] : !uop.buffer<8xf32>
      uop.store %v, %q : f32
    }
    %line = uop.define_local "line" : !uop.buffer<2xf32>
    %b = uop.define_local "b" : !uop.buffer<16xf32>
    %av = uop.view %a : !uop.buffer<8xf32> -> !uop.view<2x4xf32, strides [4, 1], offset 0>
    %bv = uop.view %b : !uop.buffer<16xf32> -> !uop.view<4x4xf32, strides [4, 1], offset 0>
    uop.range %px = 0 to 4 attributes {in_place = ["a", "b"]} {
      uop.range %ch = 0 to 2 {
        %p = uop.gep %av[%ch, %px] : !uop.view<2x4xf32, strides [4, 1], offset 0>
        %v = uop.load %p : f32
        %q = uop.gep %line[%ch] : !uop.buffer<2xf32>
        uop.store %v, %q : f32
      }
      uop.range %o = 0 to 4 {
        %zero = uop.const 0 : index
        %l = uop.gep %line[%zero] : !uop.buffer<2xf32>
        %v = uop.load %l : f32
        %q = uop.gep %bv[%o, %px] : !uop.view<4x4xf32, strides [4, 1], offset 0>
        uop.store %v, %q : f32
      }
    }
    uop.range %i = 0 to 16 {
      %p = uop.gep %b[%i] : !uop.buffer<16xf32>
      %v = uop.load %p : f32
      %q = uop.gep %y[%i] : !uop.buffer<16xf32>
      uop.store %v, %q : f32
    }
    func.return
  }
}
