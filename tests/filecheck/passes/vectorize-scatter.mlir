// RUN: zant-opt %s --split-input-file -p 'vectorize{width=8}' | filecheck %s

// Stores that move more than one element per lane are strided vector stores (scatters).

// A loop over 8 output channels outside a short reduction (the Conv form with the channel
// loop outside): vector accumulators, the input broadcast, the weights a unit-stride load,
// the bias a unit-stride and the residual a strided load, the pixel a store with lane stride 4.
// CHECK-LABEL: func.func @channels
// CHECK:         uop.range %ml = 0 to 8 step 8 {
// CHECK-NEXT:      %acc = uop.define_acc 0.000000e+00 : f32 to vector<8xf32>
// CHECK-NEXT:      uop.range %k = 0 to 3 {
// CHECK-NEXT:        %px = uop.gep %x[%k] : !uop.buffer<3xf32>
// CHECK-NEXT:        %xk = uop.load %px : f32
// CHECK-NEXT:        %pw = uop.gep %wv[%k, %ml] : !uop.view<3x8xf32, strides [8, 1], offset 0>
// CHECK-NEXT:        %wk = uop.vload %pw : vector<8xf32>
// CHECK-NEXT:        %[[X:.*]] = uop.broadcast %xk : f32 to vector<8xf32>
// CHECK-NEXT:        uop.mulacc %acc, %[[X]], %wk : !uop.acc<vector<8xf32>>, vector<8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %sum = uop.acc_get %acc : !uop.acc<vector<8xf32>>, vector<8xf32>
// CHECK-NEXT:      %pb = uop.gep %b[%ml] : !uop.buffer<8xf32>
// CHECK-NEXT:      %bias = uop.vload %pb : vector<8xf32>
// CHECK-NEXT:      %pr = uop.gep %rv[%ml, %pixel] : !uop.view<8x4xf32, strides [4, 1], offset 0>
// CHECK-NEXT:      %res = uop.vload %pr stride 4 : vector<8xf32>
// CHECK-NEXT:      %s1 = uop.add %sum, %bias : vector<8xf32>
// CHECK-NEXT:      %s2 = uop.add %s1, %res : vector<8xf32>
// CHECK-NEXT:      %py = uop.gep %yv[%ml, %pixel] : !uop.view<8x4xf32, strides [4, 1], offset 0>
// CHECK-NEXT:      uop.vstore %s2, %py stride 4 : vector<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

builtin.module {
  func.func @channels() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<3xf32>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<24xf32>
    %b = uop.define_global "input" 2 "b" : !uop.buffer<8xf32>
    %r = uop.define_global "input" 3 "r" : !uop.buffer<32xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<32xf32>
    %wv = uop.view %w : !uop.buffer<24xf32> -> !uop.view<3x8xf32, strides [8, 1], offset 0>
    %rv = uop.view %r : !uop.buffer<32xf32> -> !uop.view<8x4xf32, strides [4, 1], offset 0>
    %yv = uop.view %y : !uop.buffer<32xf32> -> !uop.view<8x4xf32, strides [4, 1], offset 0>
    %pixel = uop.const 1 : index
    uop.range %ml = 0 to 8 {
      %acc = uop.define_acc 0.0 : f32
      uop.range %k = 0 to 3 {
        %px = uop.gep %x[%k] : !uop.buffer<3xf32>
        %xk = uop.load %px : f32
        %pw = uop.gep %wv[%k, %ml] : !uop.view<3x8xf32, strides [8, 1], offset 0>
        %wk = uop.load %pw : f32
        uop.mulacc %acc, %xk, %wk : !uop.acc<f32>, f32
      }
      %sum = uop.acc_get %acc : !uop.acc<f32>, f32
      %pb = uop.gep %b[%ml] : !uop.buffer<8xf32>
      %bias = uop.load %pb : f32
      %pr = uop.gep %rv[%ml, %pixel] : !uop.view<8x4xf32, strides [4, 1], offset 0>
      %res = uop.load %pr : f32
      %s1 = uop.add %sum, %bias : f32
      %s2 = uop.add %s1, %res : f32
      %py = uop.gep %yv[%ml, %pixel] : !uop.view<8x4xf32, strides [4, 1], offset 0>
      uop.store %s2, %py : f32
    }
    func.return
  }
}

// -----

// A buffer stored and loaded back at the same strided address: the load is a gather of the
// lanes' own elements, the store a scatter; running lanes 4…11 again would read values this
// loop wrote, so the tail is scalar.
// CHECK-LABEL: func.func @update
// CHECK:         uop.range %i = 0 to 8 step 8 {
// CHECK-NEXT:      %i2 = uop.mul %i, %two : index
// CHECK-NEXT:      %p = uop.gep %y[%i2] : !uop.buffer<24xf32>
// CHECK-NEXT:      %a = uop.vload %p stride 2 : vector<8xf32>
// CHECK-NEXT:      %b = uop.add %a, %a : vector<8xf32>
// CHECK-NEXT:      uop.vstore %b, %p stride 2 : vector<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    uop.range %{{.*}} = 8 to 12 {
// CHECK:           uop.store %{{.*}}, %{{.*}} : f32

builtin.module {
  func.func @update() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<24xf32>
    %two = uop.const 2 : index
    uop.range %i = 0 to 12 {
      %i2 = uop.mul %i, %two : index
      %p = uop.gep %y[%i2] : !uop.buffer<24xf32>
      %a = uop.load %p : f32
      %b = uop.add %a, %a : f32
      uop.store %b, %p : f32
    }
    func.return
  }
}

// -----

// Left scalar: a store that moves 0 elements per lane (each iteration overwrites the last's),
// and one buffer stored at two addresses (lanes would overwrite each other's elements out of
// order: y[i+1] of iteration i is y[i] of iteration i+1).
// CHECK-LABEL: func.func @refused
// CHECK:         uop.range %i = 0 to 16 {
// CHECK-NEXT:      %p = uop.gep %x[%i] : !uop.buffer<16xf32>
// CHECK-NEXT:      %a = uop.load %p : f32
// CHECK-NEXT:      %q = uop.gep %last[%zero] : !uop.buffer<1xf32>
// CHECK-NEXT:      uop.store %a, %q : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    uop.range %j = 0 to 16 {
// CHECK-NEXT:      %pj = uop.gep %x[%j] : !uop.buffer<16xf32>
// CHECK-NEXT:      %aj = uop.load %pj : f32
// CHECK-NEXT:      %q0 = uop.gep %y[%j] : !uop.buffer<17xf32>
// CHECK-NEXT:      uop.store %aj, %q0 : f32
// CHECK-NEXT:      %j1 = uop.add %j, %one : index
// CHECK-NEXT:      %q1 = uop.gep %y[%j1] : !uop.buffer<17xf32>
// CHECK-NEXT:      uop.store %aj, %q1 : f32
// CHECK-NEXT:    }

builtin.module {
  func.func @refused() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<16xf32>
    %last = uop.define_global "output" 0 "last" : !uop.buffer<1xf32>
    %y = uop.define_global "output" 1 "y" : !uop.buffer<17xf32>
    %zero = uop.const 0 : index
    %one = uop.const 1 : index
    uop.range %i = 0 to 16 {
      %p = uop.gep %x[%i] : !uop.buffer<16xf32>
      %a = uop.load %p : f32
      %q = uop.gep %last[%zero] : !uop.buffer<1xf32>
      uop.store %a, %q : f32
    }
    uop.range %j = 0 to 16 {
      %pj = uop.gep %x[%j] : !uop.buffer<16xf32>
      %aj = uop.load %pj : f32
      %q0 = uop.gep %y[%j] : !uop.buffer<17xf32>
      uop.store %aj, %q0 : f32
      %j1 = uop.add %j, %one : index
      %q1 = uop.gep %y[%j1] : !uop.buffer<17xf32>
      uop.store %aj, %q1 : f32
    }
    func.return
  }
}

// -----

// One buffer stored at two addresses a constant 16 elements apart, each moving 1 per lane
// over 16 iterations (two channels of a register-blocked Conv): no element is written by two
// iterations, so the loop is vectorized; 15 apart they would overlap, and it is not.
// CHECK-LABEL: func.func @channel_pair
// CHECK:         uop.range %i = 0 to 16 step 8 {
// CHECK:           uop.vstore %a, %q0 : vector<8xf32>
// CHECK:           uop.vstore %a, %q1 : vector<8xf32>
// CHECK:         uop.range %j = 0 to 16 {
// CHECK:           uop.store %b, %r1 : f32
// CHECK-NEXT:    }

builtin.module {
  func.func @channel_pair() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<16xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<32xf32>
    %yv = uop.view %y : !uop.buffer<32xf32> -> !uop.view<2x16xf32, strides [16, 1], offset 0>
    %zv = uop.view %y : !uop.buffer<32xf32> -> !uop.view<2x15xf32, strides [15, 1], offset 1>
    %c0 = uop.const 0 : index
    %one = uop.const 1 : index
    %c1 = uop.add %c0, %one : index
    uop.range %i = 0 to 16 {
      %p = uop.gep %x[%i] : !uop.buffer<16xf32>
      %a = uop.load %p : f32
      %q0 = uop.gep %yv[%c0, %i] : !uop.view<2x16xf32, strides [16, 1], offset 0>
      uop.store %a, %q0 : f32
      %q1 = uop.gep %yv[%c1, %i] : !uop.view<2x16xf32, strides [16, 1], offset 0>
      uop.store %a, %q1 : f32
    }
    uop.range %j = 0 to 16 {
      %pj = uop.gep %x[%j] : !uop.buffer<16xf32>
      %b = uop.load %pj : f32
      %r0 = uop.gep %zv[%c0, %j] : !uop.view<2x15xf32, strides [15, 1], offset 1>
      uop.store %b, %r0 : f32
      %r1 = uop.gep %zv[%c1, %j] : !uop.view<2x15xf32, strides [15, 1], offset 1>
      uop.store %b, %r1 : f32
    }
    func.return
  }
}
