// RUN: zant-opt %s --split-input-file -p plan-arenas,verify-arena-plan | filecheck %s

// In-place reuse across a nest with many stores: %b (written by 4 stores, two channel rows per
// block and an interior/border split of the columns) takes %a's bytes, since every load of %a is
// followed in its block by the store of %b at the identical element and the stores together
// write each element once.

// CHECK-LABEL: func.func @multi_store
// CHECK:         abi.arena "scratch" size 64 align 16 lower_bound 64
// CHECK:         uop.define_local "a" at 0
// CHECK:         uop.define_local "b" at 0
builtin.module {
  func.func @multi_store() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<16xf32>
    %a = uop.define_local "a" : !uop.buffer<16xf32>
    uop.range %i = 0 to 16 {
      %p = uop.gep %a[%i] : !uop.buffer<16xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" : !uop.buffer<16xf32>
    %av = uop.view %a : !uop.buffer<16xf32> -> !uop.view<1x4x4xf32, strides [0, 4, 1], offset 0>
    %bv = uop.view %b : !uop.buffer<16xf32> -> !uop.view<1x4x4xf32, strides [16, 4, 1], offset 0>
    uop.range %n = 0 to 1 {
      uop.range %c = 0 to 4 step 2 {
        %one = uop.const 1 : index
        %c1 = uop.add %c, %one : index
        %zero = uop.const 0 : index
        uop.range %w = 1 to 3 {
          %p0 = uop.gep %av[%n, %c, %w] : !uop.view<1x4x4xf32, strides [0, 4, 1], offset 0>
          %v0 = uop.load %p0 : f32
          %q0 = uop.gep %bv[%zero, %c, %w] : !uop.view<1x4x4xf32, strides [16, 4, 1], offset 0>
          uop.store %v0, %q0 : f32
          %p1 = uop.gep %av[%n, %c1, %w] : !uop.view<1x4x4xf32, strides [0, 4, 1], offset 0>
          %v1 = uop.load %p1 : f32
          %e1 = uop.exp %v1 : f32
          %q1 = uop.gep %bv[%zero, %c1, %w] : !uop.view<1x4x4xf32, strides [16, 4, 1], offset 0>
          uop.store %e1, %q1 : f32
        }
        uop.range %w = 0 to 4 step 3 {
          %p0 = uop.gep %av[%n, %c, %w] : !uop.view<1x4x4xf32, strides [0, 4, 1], offset 0>
          %v0 = uop.load %p0 : f32
          %q0 = uop.gep %bv[%zero, %c, %w] : !uop.view<1x4x4xf32, strides [16, 4, 1], offset 0>
          uop.store %v0, %q0 : f32
          %p1 = uop.gep %av[%n, %c1, %w] : !uop.view<1x4x4xf32, strides [0, 4, 1], offset 0>
          %v1 = uop.load %p1 : f32
          %q1 = uop.gep %bv[%zero, %c1, %w] : !uop.view<1x4x4xf32, strides [16, 4, 1], offset 0>
          uop.store %v1, %q1 : f32
        }
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

// A reversed read: b[i] = a[7 - i] reads a[3] at i = 4, after b[3] was written over it.

// CHECK-LABEL: func.func @reversed_read
// CHECK:         abi.arena "scratch" size 64 align 16 lower_bound 64
// CHECK:         uop.define_local "a" at 0
// CHECK:         uop.define_local "b" at 32
builtin.module {
  func.func @reversed_read() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8xf32>
    %a = uop.define_local "a" : !uop.buffer<8xf32>
    uop.range %i = 0 to 8 {
      %p = uop.gep %a[%i] : !uop.buffer<8xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" : !uop.buffer<8xf32>
    uop.range %i = 0 to 8 {
      %seven = uop.const 7 : index
      %r = uop.sub %seven, %i : index
      %p = uop.gep %a[%r] : !uop.buffer<8xf32>
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

// A transposed read: b[i, j] = a[j, i] reads a[1, 0] after b[0, 1] (the same bytes) was written.

// CHECK-LABEL: func.func @transposed_read
// CHECK:         uop.define_local "a" at 0
// CHECK:         uop.define_local "b" at 64
builtin.module {
  func.func @transposed_read() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<16xf32>
    %a = uop.define_local "a" : !uop.buffer<16xf32>
    uop.range %i = 0 to 16 {
      %p = uop.gep %a[%i] : !uop.buffer<16xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" : !uop.buffer<16xf32>
    %at = uop.view %a : !uop.buffer<16xf32> -> !uop.view<4x4xf32, strides [1, 4], offset 0>
    %bv = uop.view %b : !uop.buffer<16xf32> -> !uop.view<4x4xf32, strides [4, 1], offset 0>
    uop.range %i = 0 to 4 {
      uop.range %j = 0 to 4 {
        %p = uop.gep %at[%i, %j] : !uop.view<4x4xf32, strides [1, 4], offset 0>
        %v = uop.load %p : f32
        %q = uop.gep %bv[%i, %j] : !uop.view<4x4xf32, strides [4, 1], offset 0>
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

// -----

// The store comes before its matching load in the block: a[i] would be read after b[i] took it.

// CHECK-LABEL: func.func @store_before_load
// CHECK:         uop.define_local "a" at 0
// CHECK:         uop.define_local "b" at 32
builtin.module {
  func.func @store_before_load() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8xf32>
    %a = uop.define_local "a" : !uop.buffer<8xf32>
    uop.range %i = 0 to 8 {
      %p = uop.gep %a[%i] : !uop.buffer<8xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" : !uop.buffer<8xf32>
    uop.range %i = 0 to 8 {
      %q = uop.gep %b[%i] : !uop.buffer<8xf32>
      %two = uop.const 2.0 : f32
      uop.store %two, %q : f32
      %p = uop.gep %a[%i] : !uop.buffer<8xf32>
      %v = uop.load %p : f32
      %q2 = uop.gep %b[%i] : !uop.buffer<8xf32>
      uop.store %v, %q2 : f32
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

// Each element is written twice (the inner loop does not index it): the second pass of %j reads
// a[i] after the first pass stored b[i] over it.

// CHECK-LABEL: func.func @written_twice
// CHECK:         uop.define_local "a" at 0
// CHECK:         uop.define_local "b" at 32
builtin.module {
  func.func @written_twice() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8xf32>
    %a = uop.define_local "a" : !uop.buffer<8xf32>
    uop.range %i = 0 to 8 {
      %p = uop.gep %a[%i] : !uop.buffer<8xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    %b = uop.define_local "b" : !uop.buffer<8xf32>
    uop.range %i = 0 to 8 {
      uop.range %j = 0 to 2 {
        %p = uop.gep %a[%i] : !uop.buffer<8xf32>
        %v = uop.load %p : f32
        %w = uop.add %v, %v : f32
        %q = uop.gep %b[%i] : !uop.buffer<8xf32>
        uop.store %w, %q : f32
      }
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
