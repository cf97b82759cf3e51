// RUN: zant-opt %s --split-input-file --verify-diagnostics -p verify-arena-plan | filecheck %s

// A vector load or store touches its lanes, not only the element its gep addresses: each is
// checked from every start its gep can take, widened by lanes x element size (times its
// stride), in bytes, as the asm ops' reach is. First a vload whose last lane ends exactly at
// its buffer's end (passes), then one element short (fails, naming the op, the buffer and the
// bytes over), then the same for a vstore. The gep's own index (0 or 8 of 15) is inside the
// buffer in every case: only the lanes reach past it.

// CHECK: zant.vector_reach = {checked = 2 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @vload_at_the_end
builtin.module {
  func.func @vload_at_the_end() {
    abi.arena "scratch" size 64 align 16
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8xf32>
    %a = uop.define_local "a" at 0 : !uop.buffer<16xf32>
    uop.range %i = 0 to 16 step 8 {
      %p = uop.gep %a[%i] : !uop.buffer<16xf32>
      %v = uop.vload %p : vector<8xf32>
      %zero = uop.const 0 : index
      %q = uop.gep %y[%zero] : !uop.buffer<8xf32>
      uop.vstore %v, %q : vector<8xf32>
    }
    func.return
  }
}

// -----

// The vload's buffer one element short: the second row's last lane is one f32 past it.

builtin.module {
  func.func @vload_one_past() {
    abi.arena "scratch" size 64 align 16
    %a = uop.define_local "a" at 0 : !uop.buffer<15xf32>
    uop.range %i = 0 to 16 step 8 {
      %p = uop.gep %a[%i] : !uop.buffer<15xf32>
      %v = uop.vload %p : vector<8xf32>
    }
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: uop.vload's ptr reaches bytes [0, 64) of 'a' (60 bytes, at [0, 60) in its scratch arena): 4 bytes past its end (its reach [0, 32) from a start at bytes 0..32)}}

// -----

// CHECK: zant.vector_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @vstore_at_the_end
builtin.module {
  func.func @vstore_at_the_end() {
    abi.arena "scratch" size 64 align 16
    %a = uop.define_local "a" at 0 : !uop.buffer<16xf32>
    uop.range %i = 0 to 16 step 8 {
      %one = uop.const 1.0 : f32
      %v = uop.broadcast %one : f32 to vector<8xf32>
      %p = uop.gep %a[%i] : !uop.buffer<16xf32>
      uop.vstore %v, %p : vector<8xf32>
    }
    func.return
  }
}

// -----

// The vstore's buffer one element short, in a graph output: the same check for a buffer the
// caller owns.

builtin.module {
  func.func @vstore_one_past() {
    abi.arena "scratch" size 64 align 16
    %y = uop.define_global "output" 0 "y" : !uop.buffer<15xf32>
    uop.range %i = 0 to 16 step 8 {
      %one = uop.const 1.0 : f32
      %v = uop.broadcast %one : f32 to vector<8xf32>
      %p = uop.gep %y[%i] : !uop.buffer<15xf32>
      uop.vstore %v, %p : vector<8xf32>
    }
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: uop.vstore's ptr reaches bytes [0, 64) of 'y' (60 bytes): 4 bytes past its end (its reach [0, 32) from a start at bytes 0..32)}}

// -----

// A strided vload (a gather, every second int8) of 4 lanes reaches (4 - 1) x 2 elements past its
// start and the last lane whole: from element 3 of 10, exactly to the end.

// CHECK: zant.vector_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @strided_at_the_end
builtin.module {
  func.func @strided_at_the_end() {
    abi.arena "scratch" size 16 align 16
    %a = uop.define_local "a" at 0 : !uop.buffer<10xi8>
    %three = uop.const 3 : index
    %p = uop.gep %a[%three] : !uop.buffer<10xi8>
    %v = uop.vload %p stride 2 : vector<4xi8>
    func.return
  }
}

// -----

// The same gather from element 4: its last lane is one byte past the 10.

builtin.module {
  func.func @strided_one_past() {
    abi.arena "scratch" size 16 align 16
    %a = uop.define_local "a" at 0 : !uop.buffer<10xi8>
    %four = uop.const 4 : index
    %p = uop.gep %a[%four] : !uop.buffer<10xi8>
    %v = uop.vload %p stride 2 : vector<4xi8>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: uop.vload's ptr reaches bytes [4, 11) of 'a' (10 bytes, at [0, 10) in its scratch arena): 1 byte past its end (its reach [0, 7) from a start at bytes 4..4)}}

// -----

// Through a view: rows of 8 of a 3 x 6 view over 18 elements (row r at 6·r): the lanes of
// the last row reach element 12 + 8 = 20, two past the buffer, though each gep's element is in it.

builtin.module {
  func.func @view_rows_past() {
    abi.arena "scratch" size 128 align 16
    %a = uop.define_local "a" at 0 : !uop.buffer<18xf32>
    %av = uop.view %a : !uop.buffer<18xf32> -> !uop.view<3x6xf32, strides [6, 1], offset 0>
    %zero = uop.const 0 : index
    uop.range %r = 0 to 3 {
      %p = uop.gep %av[%r, %zero] : !uop.view<3x6xf32, strides [6, 1], offset 0>
      %v = uop.vload %p : vector<8xf32>
    }
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: uop.vload's ptr reaches bytes [0, 80) of 'a' (72 bytes, at [0, 72) in its scratch arena): 8 bytes past its end (its reach [0, 32) from a start at bytes 0..48)}}

// -----

// A vector access whose index is loaded from memory has no static bound: not checked, counted.

// CHECK: zant.vector_reach = {checked = 1 : i64, unresolved = 1 : i64}
// CHECK-LABEL: func.func @loaded_index
builtin.module {
  func.func @loaded_index() {
    abi.arena "scratch" size 64 align 16
    %a = uop.define_local "a" at 0 : !uop.buffer<16xf32>
    %i = uop.define_local "i" at 48 : !uop.buffer<1xi32>
    %zero = uop.const 0 : index
    %pi = uop.gep %i[%zero] : !uop.buffer<1xi32>
    %n = uop.load %pi : i32
    %k = uop.cast %n : i32 to index
    %p = uop.gep %a[%k] : !uop.buffer<16xf32>
    %v = uop.vload %p : vector<8xf32>
    %q = uop.gep %a[%zero] : !uop.buffer<16xf32>
    uop.vstore %v, %q : vector<8xf32>
    func.return
  }
}

// -----

// Packed int4 lanes count from the byte holding the first to the one holding the last: 8 lanes
// from element 1 of 9 (5 bytes) are elements 1..8, bytes 0..4, exactly to the end.

// CHECK: zant.vector_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @packed_at_the_end
builtin.module {
  func.func @packed_at_the_end() {
    abi.arena "scratch" size 16 align 16
    %a = uop.define_local "a" at 0 : !uop.buffer<9xi4>
    %one = uop.const 1 : index
    %p = uop.gep %a[%one] : !uop.buffer<9xi4>
    %v = uop.vload %p : vector<8xi4>
    func.return
  }
}

// -----

// The same lanes in 8 int4 (4 bytes): the last lane is in the byte past them.

builtin.module {
  func.func @packed_one_past() {
    abi.arena "scratch" size 16 align 16
    %a = uop.define_local "a" at 0 : !uop.buffer<8xi4>
    %one = uop.const 1 : index
    %p = uop.gep %a[%one] : !uop.buffer<8xi4>
    %v = uop.vload %p : vector<8xi4>
    func.return
  }
}

// expected-error@unknown {{pass 'verify-arena-plan' failed: uop.vload's ptr reaches bytes [0, 5) of 'a' (4 bytes, at [0, 4) in its scratch arena): 1 byte past its end (its reach [0, 5) from a start at bytes 0..0)}}

// -----

// From element 0, the 8 int4 lanes fill bytes 0..3 whole: exactly the 4 bytes of 8 int4.

// CHECK: zant.vector_reach = {checked = 1 : i64, unresolved = 0 : i64}
// CHECK-LABEL: func.func @packed_from_a_whole_byte
builtin.module {
  func.func @packed_from_a_whole_byte() {
    abi.arena "scratch" size 16 align 16
    %a = uop.define_local "a" at 0 : !uop.buffer<8xi4>
    %zero = uop.const 0 : index
    %p = uop.gep %a[%zero] : !uop.buffer<8xi4>
    %v = uop.vload %p : vector<8xi4>
    func.return
  }
}
