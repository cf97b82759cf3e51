// RUN: zant-opt %s --split-input-file --verify-diagnostics -p verify-arena-plan | filecheck %s

// A `uop.gep inbounds` is printed with no run-time check: whichever pass marked it, every
// element it and the accesses through it reach must lie inside its buffer, in any buffer (a graph
// input, output or constant as well as a scratch buffer). Rows of 4 at 0, 4 and 8 of a graph
// input of 12 f32: the last row's last element is the input's last.

// CHECK: zant.inbounds_reach = {checked = 2 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @input_at_the_end
builtin.module {
  func.func @input_at_the_end() {
    abi.arena "scratch" size 16 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<12xf32>
    %xv = uop.view %x : !uop.buffer<12xf32> -> !uop.view<3x4xf32, strides [4, 1], offset 0>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
    uop.range %r = 0 to 3 {
      uop.range %c = 0 to 4 {
        %p = uop.gep inbounds %xv[%r, %c] : !uop.view<3x4xf32, strides [4, 1], offset 0>
        %v = uop.load %p : f32
        %q = uop.gep inbounds %y[%c] : !uop.buffer<4xf32>
        uop.store %v, %q : f32
      }
    }
    func.return
  }
}

// -----

// The same rows through a view of offset 1: the last row's last element is one past the input.

builtin.module {
  func.func @input_one_past() {
    abi.arena "scratch" size 16 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<13xf32>
    %xv = uop.view %x : !uop.buffer<13xf32> -> !uop.view<3x4xf32, strides [4, 1], offset 1>
    uop.range %r = 0 to 3 {
      uop.range %c = 0 to 5 {
        %p = uop.gep inbounds %xv[%r, %c] : !uop.view<3x4xf32, strides [4, 1], offset 1>
        %v = uop.load %p : f32
      }
    }
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: an inbounds uop.gep reaches elements [1, 14) of the 13 of 'x' (52 bytes): 1 element past its end (its accesses 0 elements on from a start at elements 1..13)}}

// -----

// A graph output written one element before its start.

builtin.module {
  func.func @output_one_before() {
    abi.arena "scratch" size 16 align 16
    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xi8>
    uop.range %i = 0 to 4 {
      %one = uop.const 1 : index
      %at = uop.sub %i, %one : index
      %q = uop.gep inbounds %y[%at] : !uop.buffer<4xi8>
      %v = uop.const 0 : i8
      uop.store %v, %q : i8
    }
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: an inbounds uop.gep reaches elements [-1, 3) of the 4 of 'y' (4 bytes): 1 element before its start (its accesses 0 elements on from a start at elements -1..2)}}

// -----

// A constant's last element, read through an inbounds gep: inside.

// CHECK: zant.inbounds_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @constant_at_the_end
builtin.module {
  func.func @constant_at_the_end() {
    abi.arena "scratch" size 16 align 16
    %w = uop.define_global "constant" 0 "w" value dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi8> : !uop.buffer<6xi8>
    %five = uop.const 5 : index
    %p = uop.gep inbounds %w[%five] : !uop.buffer<6xi8>
    %v = uop.load %p : i8
    func.return
  }
}

// -----

// The constant's element 6 of 6: one past.

builtin.module {
  func.func @constant_one_past() {
    abi.arena "scratch" size 16 align 16
    %w = uop.define_global "constant" 0 "w" value dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi8> : !uop.buffer<6xi8>
    %six = uop.const 6 : index
    %p = uop.gep inbounds %w[%six] : !uop.buffer<6xi8>
    %v = uop.load %p : i8
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: an inbounds uop.gep reaches elements [6, 7) of the 6 of 'w' (6 bytes): 1 element past its end (its accesses 0 elements on from a start at elements 6..6)}}

// -----

// The accesses through the gep count: a vload of 8 lanes from elements 0 and 8 of 16 reaches
// exactly the end; the vector check counts it too.

// CHECK: zant.inbounds_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-SAME: zant.vector_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @lanes_at_the_end
builtin.module {
  func.func @lanes_at_the_end() {
    abi.arena "scratch" size 16 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<16xf32>
    uop.range %i = 0 to 16 step 8 {
      %p = uop.gep inbounds %x[%i] : !uop.buffer<16xf32>
      %v = uop.vload %p : vector<8xf32>
    }
    func.return
  }
}

// -----

// The same rows over 15 elements: the gep's own elements (0 and 8) are inside, the second row's
// last lane is not; said as the gep's proof gone wrong, in elements (before the vector check).

builtin.module {
  func.func @lanes_one_past() {
    abi.arena "scratch" size 16 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<15xf32>
    uop.range %i = 0 to 16 step 8 {
      %p = uop.gep inbounds %x[%i] : !uop.buffer<15xf32>
      %v = uop.vload %p : vector<8xf32>
    }
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: an inbounds uop.gep reaches elements [0, 16) of the 15 of 'x' (60 bytes): 1 element past its end (its accesses 7 elements on from a start at elements 0..8)}}

// -----

// An inbounds gep whose index is loaded from memory has no static bound: a proof this check
// cannot redo, counted unresolved (the other, a constant index, is checked).

// CHECK: zant.inbounds_reach = {checked = 1 : i64, unresolved = 1 : i64}
// CHECK-LABEL: func.func @loaded_index
builtin.module {
  func.func @loaded_index() {
    abi.arena "scratch" size 16 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<16xf32>
    %i = uop.define_global "input" 1 "i" : !uop.buffer<1xi32>
    %zero = uop.const 0 : index
    %pi = uop.gep inbounds %i[%zero] : !uop.buffer<1xi32>
    %n = uop.load %pi : i32
    %k = uop.cast %n : i32 to index
    %p = uop.gep inbounds %x[%k] : !uop.buffer<16xf32>
    %v = uop.load %p : f32
    func.return
  }
}

// -----

// A gep not marked inbounds keeps its run-time check: one past a graph input is no error here,
// and nothing is counted.

// CHECK-NOT: zant.inbounds_reach
// CHECK-LABEL: func.func @checked_gep_past
builtin.module {
  func.func @checked_gep_past() {
    abi.arena "scratch" size 16 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<6xf32>
    %six = uop.const 6 : index
    %p = uop.gep %x[%six] : !uop.buffer<6xf32>
    %v = uop.load %p : f32
    func.return
  }
}
