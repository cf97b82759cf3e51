// RUN: zant-opt %s --split-input-file -p plan-arenas,verify-arena-plan | filecheck %s

// In-place reuse through `vectorize`'s loads and stores: a vload of the dying buffer followed by
// a vstore of the born one with the same lanes at the same element is as legal as the scalar pair.

// CHECK-LABEL: func.func @vector_elementwise
// CHECK:         abi.arena "scratch" size 64 align 16 lower_bound 64
// CHECK:         uop.define_local "a" at 0
// CHECK:         uop.define_local "b" at 0
builtin.module {
  func.func @vector_elementwise() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<16xf32>
    %a = uop.define_local "a" : !uop.buffer<16xf32>
    uop.range %i = 0 to 16 {
      %p = uop.gep %a[%i] : !uop.buffer<16xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" : !uop.buffer<16xf32>
    uop.range %i = 0 to 16 step 8 {
      %p = uop.gep %a[%i] : !uop.buffer<16xf32>
      %v = uop.vload %p : vector<8xf32>
      %e = uop.neg %v : vector<8xf32>
      %q = uop.gep %b[%i] : !uop.buffer<16xf32>
      uop.vstore %e, %q : vector<8xf32>
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

// -----

// Vectorized rows of a nest (two rows of 8 through views): in place.

// CHECK-LABEL: func.func @vector_rows
// CHECK:         uop.define_local "a" at 0
// CHECK:         uop.define_local "b" at 0
builtin.module {
  func.func @vector_rows() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<16xf32>
    %a = uop.define_local "a" : !uop.buffer<16xf32>
    uop.range %i = 0 to 16 {
      %p = uop.gep %a[%i] : !uop.buffer<16xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" : !uop.buffer<16xf32>
    %av = uop.view %a : !uop.buffer<16xf32> -> !uop.view<2x8xf32, strides [8, 1], offset 0>
    %bv = uop.view %b : !uop.buffer<16xf32> -> !uop.view<2x8xf32, strides [8, 1], offset 0>
    uop.range %r = 0 to 2 {
      uop.range %i = 0 to 8 step 8 {
        %p = uop.gep %av[%r, %i] : !uop.view<2x8xf32, strides [8, 1], offset 0>
        %v = uop.vload %p : vector<8xf32>
        %q = uop.gep %bv[%r, %i] : !uop.view<2x8xf32, strides [8, 1], offset 0>
        uop.vstore %v, %q : vector<8xf32>
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

// -----

// The overlapping tail inside a nest: each row of 12 runs lanes 0-7, then 4-11 again. The tail
// re-reads a[4..7] of its row after the first iteration stored b[4..7] over them: not in place.

// CHECK-LABEL: func.func @tail_in_nest
// CHECK:         uop.define_local "a" at 0
// CHECK:         uop.define_local "b" at 96
builtin.module {
  func.func @tail_in_nest() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<24xf32>
    %a = uop.define_local "a" : !uop.buffer<24xf32>
    uop.range %i = 0 to 24 {
      %p = uop.gep %a[%i] : !uop.buffer<24xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" : !uop.buffer<24xf32>
    %av = uop.view %a : !uop.buffer<24xf32> -> !uop.view<2x12xf32, strides [12, 1], offset 0>
    %bv = uop.view %b : !uop.buffer<24xf32> -> !uop.view<2x12xf32, strides [12, 1], offset 0>
    uop.range %r = 0 to 2 {
      uop.range %i = 0 to 8 step 8 {
        %p = uop.gep %av[%r, %i] : !uop.view<2x12xf32, strides [12, 1], offset 0>
        %v = uop.vload %p : vector<8xf32>
        %e = uop.neg %v : vector<8xf32>
        %q = uop.gep %bv[%r, %i] : !uop.view<2x12xf32, strides [12, 1], offset 0>
        uop.vstore %e, %q : vector<8xf32>
      }
      uop.range %i = 4 to 12 step 8 {
        %p = uop.gep %av[%r, %i] : !uop.view<2x12xf32, strides [12, 1], offset 0>
        %v = uop.vload %p : vector<8xf32>
        %e = uop.neg %v : vector<8xf32>
        %q = uop.gep %bv[%r, %i] : !uop.view<2x12xf32, strides [12, 1], offset 0>
        uop.vstore %e, %q : vector<8xf32>
      }
    }
    uop.range %i = 0 to 24 {
      %p = uop.gep %b[%i] : !uop.buffer<24xf32>
      %v = uop.load %p : f32
      %q = uop.gep %y[%i] : !uop.buffer<24xf32>
      uop.store %v, %q : f32
    }
    func.return
  }
}

// -----

// The overlapping tail as its own top-level loop (a 12-element loop vectorized by 8): the tail
// re-reads a[4..7] after the vector loop wrote b[4..7] over them: not in place.

// CHECK-LABEL: func.func @tail_top_level
// CHECK:         uop.define_local "a" at 0
// CHECK:         uop.define_local "b" at 48
builtin.module {
  func.func @tail_top_level() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<12xf32>
    %a = uop.define_local "a" : !uop.buffer<12xf32>
    uop.range %i = 0 to 12 {
      %p = uop.gep %a[%i] : !uop.buffer<12xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" : !uop.buffer<12xf32>
    uop.range %i = 0 to 8 step 8 {
      %p = uop.gep %a[%i] : !uop.buffer<12xf32>
      %v = uop.vload %p : vector<8xf32>
      %e = uop.neg %v : vector<8xf32>
      %q = uop.gep %b[%i] : !uop.buffer<12xf32>
      uop.vstore %e, %q : vector<8xf32>
    }
    uop.range %i = 4 to 12 step 8 {
      %p = uop.gep %a[%i] : !uop.buffer<12xf32>
      %v = uop.vload %p : vector<8xf32>
      %e = uop.neg %v : vector<8xf32>
      %q = uop.gep %b[%i] : !uop.buffer<12xf32>
      uop.vstore %e, %q : vector<8xf32>
    }
    uop.range %i = 0 to 12 {
      %p = uop.gep %b[%i] : !uop.buffer<12xf32>
      %v = uop.load %p : f32
      %q = uop.gep %y[%i] : !uop.buffer<12xf32>
      uop.store %v, %q : f32
    }
    func.return
  }
}

// -----

// A vector load and a scalar store at the same index (b[c + 8w] = Σ a[c + 8w … c + 8w + 7]):
// each element is written once, but at c = 1, w = 0 the load reads a[8], which the store at
// c = 0, w = 1 already overwrote. The lanes differ: not in place.

// CHECK-LABEL: func.func @vector_load_scalar_store
// CHECK:         uop.define_local "a" at 0
// CHECK:         uop.define_local "b" at 96
builtin.module {
  func.func @vector_load_scalar_store() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<24xf32>
    %a = uop.define_local "a" : !uop.buffer<24xf32>
    uop.range %i = 0 to 24 {
      %p = uop.gep %a[%i] : !uop.buffer<24xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" : !uop.buffer<24xf32>
    %av = uop.view %a : !uop.buffer<24xf32> -> !uop.view<2x8xf32, strides [8, 1], offset 0>
    %bv = uop.view %b : !uop.buffer<24xf32> -> !uop.view<2x8xf32, strides [8, 1], offset 0>
    uop.range %c = 0 to 8 {
      uop.range %w = 0 to 2 {
        %p = uop.gep %av[%w, %c] : !uop.view<2x8xf32, strides [8, 1], offset 0>
        %v = uop.vload %p : vector<8xf32>
        %s = uop.reduce_add %v : vector<8xf32> to f32
        %q = uop.gep %bv[%w, %c] : !uop.view<2x8xf32, strides [8, 1], offset 0>
        uop.store %s, %q : f32
      }
    }
    uop.range %i = 0 to 24 {
      %p = uop.gep %b[%i] : !uop.buffer<24xf32>
      %v = uop.load %p : f32
      %q = uop.gep %y[%i] : !uop.buffer<24xf32>
      uop.store %v, %q : f32
    }
    func.return
  }
}

// -----

// A strided gather and a strided scatter of the same lanes (b[c + 2k] = -a[c + 2k], k < 8, for
// c = 0, 1): each element is read just before the same lane writes it: in place.

// CHECK-LABEL: func.func @strided_pair
// CHECK:         uop.define_local "a" at 0
// CHECK:         uop.define_local "b" at 0
builtin.module {
  func.func @strided_pair() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<16xf32>
    %a = uop.define_local "a" : !uop.buffer<16xf32>
    uop.range %i = 0 to 16 {
      %p = uop.gep %a[%i] : !uop.buffer<16xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" : !uop.buffer<16xf32>
    uop.range %c = 0 to 2 {
      %p = uop.gep %a[%c] : !uop.buffer<16xf32>
      %v = uop.vload %p stride 2 : vector<8xf32>
      %n = uop.neg %v : vector<8xf32>
      %q = uop.gep %b[%c] : !uop.buffer<16xf32>
      uop.vstore %n, %q stride 2 : vector<8xf32>
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

// -----

// The load's lanes are consecutive, the store's every second element: at c = 1 the load reads
// a[2], which the store at c = 0 already overwrote. The lane ranges differ: not in place.

// CHECK-LABEL: func.func @stride_mismatch
// CHECK:         uop.define_local "a" at 0
// CHECK:         uop.define_local "b" at 64
builtin.module {
  func.func @stride_mismatch() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<16xf32>
    %a = uop.define_local "a" : !uop.buffer<16xf32>
    uop.range %i = 0 to 16 {
      %p = uop.gep %a[%i] : !uop.buffer<16xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" : !uop.buffer<16xf32>
    uop.range %c = 0 to 2 {
      %p = uop.gep %a[%c] : !uop.buffer<16xf32>
      %v = uop.vload %p : vector<8xf32>
      %n = uop.neg %v : vector<8xf32>
      %q = uop.gep %b[%c] : !uop.buffer<16xf32>
      uop.vstore %n, %q stride 2 : vector<8xf32>
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
