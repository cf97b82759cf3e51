// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// The vector ops and the vector forms of scalar ops, in their custom format.

// CHECK-LABEL: func.func @vectors
// CHECK-NEXT:    %x = uop.define_global "input" 0 "x" : !uop.buffer<16xf16>
// CHECK-NEXT:    %y = uop.define_global "output" 0 "y" : !uop.buffer<16xf32>
// CHECK-NEXT:    %b = uop.define_global "input" 1 "b" : !uop.buffer<16xi8>
// CHECK-NEXT:    %acc = uop.define_acc 0.000000e+00 : f32 to vector<8xf32>
// CHECK-NEXT:    %iacc = uop.define_acc 0 : i32 to vector<4xi32>
// CHECK-NEXT:    uop.range %i = 0 to 16 step 8 {
// CHECK-NEXT:      %p = uop.gep %x[%i] : !uop.buffer<16xf16>
// CHECK-NEXT:      %h = uop.vload %p : vector<8xf16>
// CHECK-NEXT:      %gather = uop.vload %p stride 2 : vector<4xf16>
// CHECK-NEXT:      %v = uop.cast %h : vector<8xf16> to vector<8xf32>
// CHECK-NEXT:      %c = uop.const 2.000000e+00 : f32
// CHECK-NEXT:      %s = uop.broadcast %c : f32 to vector<8xf32>
// CHECK-NEXT:      %m = uop.mul %v, %s : vector<8xf32>
// CHECK-NEXT:      %r = uop.max %m, %v : vector<8xf32>
// CHECK-NEXT:      %q = uop.sqrt %r : vector<8xf32>
// CHECK-NEXT:      uop.mulacc %acc, %q, %s : !uop.acc<vector<8xf32>>, vector<8xf32>
// CHECK-NEXT:      %o = uop.gep %y[%i] : !uop.buffer<16xf32>
// CHECK-NEXT:      uop.vstore %r, %o : vector<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    uop.range %j = 0 to 16 step 4 {
// CHECK-NEXT:      %pb = uop.gep %b[%j] : !uop.buffer<16xi8>
// CHECK-NEXT:      %bv = uop.vload %pb : vector<4xi8>
// CHECK-NEXT:      %w = uop.cast %bv : vector<4xi8> to vector<4xi32>
// CHECK-NEXT:      %a = uop.add %w, %w : vector<4xi32>
// CHECK-NEXT:      %fb = uop.bitcast %a : vector<4xi32> to vector<4xf32>
// CHECK-NEXT:      uop.mulacc %iacc, %a, %w : !uop.acc<vector<4xi32>>, vector<4xi32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %total = uop.acc_get %acc : !uop.acc<vector<8xf32>>, vector<8xf32>
// CHECK-NEXT:    %sum = uop.reduce_add %total : vector<8xf32> to f32
// CHECK-NEXT:    %itotal = uop.acc_get %iacc : !uop.acc<vector<4xi32>>, vector<4xi32>
// CHECK-NEXT:    %isum = uop.reduce_add %itotal : vector<4xi32> to i32
// CHECK-NEXT:    func.return

builtin.module {
  func.func @vectors() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<16xf16>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<16xf32>
    %b = uop.define_global "input" 1 "b" : !uop.buffer<16xi8>
    %acc = uop.define_acc 0.0 : f32 to vector<8xf32>
    %iacc = uop.define_acc 0 : i32 to vector<4xi32>
    uop.range %i = 0 to 16 step 8 {
      %p = uop.gep %x[%i] : !uop.buffer<16xf16>
      %h = uop.vload %p : vector<8xf16>
      %gather = uop.vload %p stride 2 : vector<4xf16>
      %v = uop.cast %h : vector<8xf16> to vector<8xf32>
      %c = uop.const 2.0 : f32
      %s = uop.broadcast %c : f32 to vector<8xf32>
      %m = uop.mul %v, %s : vector<8xf32>
      %r = uop.max %m, %v : vector<8xf32>
      %q = uop.sqrt %r : vector<8xf32>
      uop.mulacc %acc, %q, %s : !uop.acc<vector<8xf32>>, vector<8xf32>
      %o = uop.gep %y[%i] : !uop.buffer<16xf32>
      uop.vstore %r, %o : vector<8xf32>
    }
    uop.range %j = 0 to 16 step 4 {
      %pb = uop.gep %b[%j] : !uop.buffer<16xi8>
      %bv = uop.vload %pb : vector<4xi8>
      %w = uop.cast %bv : vector<4xi8> to vector<4xi32>
      %a = uop.add %w, %w : vector<4xi32>
      %fb = uop.bitcast %a : vector<4xi32> to vector<4xf32>
      uop.mulacc %iacc, %a, %w : !uop.acc<vector<4xi32>>, vector<4xi32>
    }
    %total = uop.acc_get %acc : !uop.acc<vector<8xf32>>, vector<8xf32>
    %sum = uop.reduce_add %total : vector<8xf32> to f32
    %itotal = uop.acc_get %iacc : !uop.acc<vector<4xi32>>, vector<4xi32>
    %isum = uop.reduce_add %itotal : vector<4xi32> to i32
    func.return
  }
}

// Lane-wise compares give a vector of i1 (implied by the operands' type); a where picks lane by
// lane with a vector condition (its type printed first) and whole vectors with a scalar one.

// CHECK-LABEL: func.func @lanewise
// CHECK-NEXT:    %lt = uop.cmplt %x, %y : vector<4xf32>
// CHECK-NEXT:    %eq = uop.cmpeq %i, %j : vector<8xi8>
// CHECK-NEXT:    %z = uop.where %lt, %x, %y : vector<4xi1>, vector<4xf32>
// CHECK-NEXT:    %k = uop.where %eq, %i, %j : vector<8xi1>, vector<8xi8>
// CHECK-NEXT:    %w = uop.where %c, %x, %y : vector<4xf32>
// CHECK-NEXT:    func.return

builtin.module {
  func.func @lanewise(%x: vector<4xf32>, %y: vector<4xf32>, %i: vector<8xi8>, %j: vector<8xi8>, %c: i1) {
    %lt = uop.cmplt %x, %y : vector<4xf32>
    %eq = uop.cmpeq %i, %j : vector<8xi8>
    %z = uop.where %lt, %x, %y : vector<4xi1>, vector<4xf32>
    %k = uop.where %eq, %i, %j : vector<8xi1>, vector<8xi8>
    %w = uop.where %c, %x, %y : vector<4xf32>
    func.return
  }
}
