// RUN: zant-opt %s --split-input-file --verify-diagnostics -p verify-arena-plan | filecheck %s

// A legal in-place pair: %b written over %a where %a dies, same offset.

// CHECK-LABEL: func.func @in_place
// CHECK:         uop.define_local "b" at 0
builtin.module {
  func.func @in_place() {
    abi.arena "scratch" size 32 align 16
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8xf32>
    %a = uop.define_local "a" at 0 : !uop.buffer<8xf32>
    uop.range %i = 0 to 8 {
      %p = uop.gep %a[%i] : !uop.buffer<8xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" at 0 : !uop.buffer<8xf32>
    uop.range %i = 0 to 8 {
      %p = uop.gep %a[%i] : !uop.buffer<8xf32>
      %v = uop.load %p : f32
      %q = uop.gep %b[%i] : !uop.buffer<8xf32>
      uop.store %v, %q : f32
    }
    uop.range %i = 0 to 8 {
      %p = uop.gep %b[%i] : !uop.buffer<8xf32>
      %v = uop.load %p : f32
      %q = uop.gep %y[%i] : !uop.buffer<8xf32>
      uop.store %v, %q : f32
    }
    func.return
  }
}

// -----

// The same pair, but %a is read transposed: element k of %b would overwrite an element of %a
// still to be read, so sharing the bytes is an overlap.

builtin.module {
  func.func @transposed() {
    abi.arena "scratch" size 32 align 16
    %a = uop.define_local "a" at 0 : !uop.buffer<8xf32>
    uop.range %i = 0 to 8 {
      %p = uop.gep %a[%i] : !uop.buffer<8xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" at 0 : !uop.buffer<8xf32>
    %at = uop.view %a : !uop.buffer<8xf32> -> !uop.view<2x4xf32, strides [1, 2], offset 0>
    %bv = uop.view %b : !uop.buffer<8xf32> -> !uop.view<2x4xf32, strides [4, 1], offset 0>
    uop.range %i = 0 to 2 {
      uop.range %j = 0 to 4 {
        %p = uop.gep %at[%i, %j] : !uop.view<2x4xf32, strides [1, 2], offset 0>
        %v = uop.load %p : f32
        %q = uop.gep %bv[%i, %j] : !uop.view<2x4xf32, strides [4, 1], offset 0>
        uop.store %v, %q : f32
      }
    }
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: scratch buffers 'a' [0, 32) and 'b' [0, 32) overlap while both are live (steps 6..6)}}

// -----

builtin.module {
  func.func @overlap() {
    abi.arena "scratch" size 32 align 16
    %a = uop.define_local "a" at 0 : !uop.buffer<4xf32>
    %b = uop.define_local "b" at 0 : !uop.buffer<4xf32>
    uop.range %i = 0 to 4 {
      %p = uop.gep %a[%i] : !uop.buffer<4xf32>
      %q = uop.gep %b[%i] : !uop.buffer<4xf32>
      %v = uop.load %p : f32
      uop.store %v, %q : f32
      uop.store %v, %p : f32
    }
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: scratch buffers 'a' [0, 16) and 'b' [0, 16) overlap while both are live (steps 3..3)}}

// -----

builtin.module {
  func.func @outside() {
    abi.arena "scratch" size 16 align 16
    %a = uop.define_local "a" at 16 : !uop.buffer<4xf32>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: scratch buffer 'a' at [16, 32) lies outside the scratch arena of 16 bytes}}

// -----

builtin.module {
  func.func @misaligned() {
    abi.arena "scratch" size 32 align 16
    %a = uop.define_local "a" at 8 : !uop.buffer<4xf32>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: scratch buffer 'a' at offset 8 is not aligned to 16}}

// -----

builtin.module {
  func.func @unplanned() {
    abi.arena "scratch" size 32 align 16
    %a = uop.define_local "a" : !uop.buffer<4xf32>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: scratch buffer 'a' has no offset}}

// -----

builtin.module {
  func.func @no_arena() {
    %a = uop.define_local "a" at 0 : !uop.buffer<4xf32>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: @no_arena has no scratch arena (run plan-arenas)}}

// -----

builtin.module {
  func.func @gep_out_of_bounds() {
    abi.arena "scratch" size 16 align 16
    %a = uop.define_local "a" at 0 : !uop.buffer<4xf32>
    uop.range %i = 0 to 2 {
      %two = uop.const 2 : index
      %k = uop.mul %i, %two : index
      %j = uop.add %k, %two : index
      %p = uop.gep %a[%j] : !uop.buffer<4xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: a uop.gep into 'a' reaches elements 2..4, outside its 4 elements}}

// -----

// A nest schedule-in-place marked is checked by the staged rule, by enumerating its accesses: a
// line buffer copied per pixel makes b over a legal (b smaller than a, the same offset) ...

// CHECK-LABEL: func.func @staged_in_place
// CHECK:         uop.define_local "b" at 0
builtin.module {
  func.func @staged_in_place() {
    abi.arena "scratch" size 32 align 16
    %y = uop.define_global "output" 0 "y" : !uop.buffer<2xi8>
    %a = uop.define_local "a" at 0 : !uop.buffer<4xi8>
    uop.range %i = 0 to 4 {
      %p = uop.gep %a[%i] : !uop.buffer<4xi8>
      %one = uop.const 1 : i8
      uop.store %one, %p : i8
    }
    %line = uop.define_local "line" at 16 : !uop.buffer<2xi8>
    %b = uop.define_local "b" at 0 : !uop.buffer<2xi8>
    %av = uop.view %a : !uop.buffer<4xi8> -> !uop.view<2x2xi8, strides [2, 1], offset 0>
    uop.range %px = 0 to 2 attributes {in_place = ["a", "b"]} {
      uop.range %c = 0 to 2 {
        %p = uop.gep %av[%c, %px] : !uop.view<2x2xi8, strides [2, 1], offset 0>
        %v = uop.load %p : i8
        %q = uop.gep %line[%c] : !uop.buffer<2xi8>
        uop.store %v, %q : i8
      }
      %zero = uop.const 0 : index
      %one = uop.const 1 : index
      %l0 = uop.gep %line[%zero] : !uop.buffer<2xi8>
      %v0 = uop.load %l0 : i8
      %l1 = uop.gep %line[%one] : !uop.buffer<2xi8>
      %v1 = uop.load %l1 : i8
      %s = uop.add %v0, %v1 : i8
      %q = uop.gep %b[%px] : !uop.buffer<2xi8>
      uop.store %s, %q : i8
    }
    uop.range %i = 0 to 2 {
      %p = uop.gep %b[%i] : !uop.buffer<2xi8>
      %v = uop.load %p : i8
      %q = uop.gep %y[%i] : !uop.buffer<2xi8>
      uop.store %v, %q : i8
    }
    func.return
  }
}

// -----

// ... but a nest reading a directly, without the copy, is not: at pixel 0, output channel 0's
// store of b[0] overwrites a[0], which output channel 1 then reads (a store before a load of
// the same element in one iteration).

builtin.module {
  func.func @staged_in_place_illegal() {
    abi.arena "scratch" size 16 align 16
    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xi8>
    %a = uop.define_local "a" at 0 : !uop.buffer<4xi8>
    uop.range %i = 0 to 4 {
      %p = uop.gep %a[%i] : !uop.buffer<4xi8>
      %one = uop.const 1 : i8
      uop.store %one, %p : i8
    }
    %b = uop.define_local "b" at 0 : !uop.buffer<4xi8>
    %av = uop.view %a : !uop.buffer<4xi8> -> !uop.view<2x2xi8, strides [2, 1], offset 0>
    %bv = uop.view %b : !uop.buffer<4xi8> -> !uop.view<2x2xi8, strides [2, 1], offset 0>
    uop.range %px = 0 to 2 attributes {in_place = ["a", "b"]} {
      uop.range %o = 0 to 2 {
        %zero = uop.const 0 : index
        %one = uop.const 1 : index
        %p0 = uop.gep %av[%zero, %px] : !uop.view<2x2xi8, strides [2, 1], offset 0>
        %v0 = uop.load %p0 : i8
        %p1 = uop.gep %av[%one, %px] : !uop.view<2x2xi8, strides [2, 1], offset 0>
        %v1 = uop.load %p1 : i8
        %s = uop.add %v0, %v1 : i8
        %q = uop.gep %bv[%o, %px] : !uop.view<2x2xi8, strides [2, 1], offset 0>
        uop.store %s, %q : i8
      }
    }
    uop.range %i = 0 to 4 {
      %p = uop.gep %b[%i] : !uop.buffer<4xi8>
      %v = uop.load %p : i8
      %q = uop.gep %y[%i] : !uop.buffer<4xi8>
      uop.store %v, %q : i8
    }
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: scratch buffers 'a' [0, 4) and 'b' [0, 4) overlap while both are live (steps 7..7)}}
