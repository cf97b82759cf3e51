// RUN: zant-opt %s --split-input-file --verify-diagnostics

// Verifier errors of the vector ops and of the vector forms of scalar ops.

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "b" : !uop.buffer<16xf32>
    %c = uop.define_global "output" 0 "c" : !uop.buffer<16xi32>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<16xf32>
    // expected-error@+1 {{the result vector<8xf16> has lanes of f16, expected f32}}
    %v = "uop.vload"(%p) : (!uop.ptr<f32>) -> vector<8xf16>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "b" : !uop.buffer<16xf32>
    %c = uop.define_global "output" 0 "c" : !uop.buffer<16xi32>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<16xf32>
    // expected-error@+1 {{the result must be a 1-D vector of a number type, got vector<2x4xf32>}}
    %v = "uop.vload"(%p) : (!uop.ptr<f32>) -> vector<2x4xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "b" : !uop.buffer<16xf32>
    %c = uop.define_global "output" 0 "c" : !uop.buffer<16xi32>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<16xf32>
    %v = "uop.vload"(%p) : (!uop.ptr<f32>) -> vector<8xf32>
    %q = uop.gep %c[%i] : !uop.buffer<16xi32>
    // expected-error@+1 {{the value vector<8xf32> has lanes of f32, expected i32}}
    "uop.vstore"(%v, %q) : (vector<8xf32>, !uop.ptr<i32>) -> ()
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "b" : !uop.buffer<16xf32>
    %c = uop.define_global "output" 0 "c" : !uop.buffer<16xi32>
    %i = uop.const 0 : index
    %x = uop.const 1.0 : f32
    // expected-error@+1 {{the result vector<4xf16> has lanes of f16, expected f32}}
    %v = uop.broadcast %x : f32 to vector<4xf16>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "b" : !uop.buffer<16xf32>
    %c = uop.define_global "output" 0 "c" : !uop.buffer<16xi32>
    %i = uop.const 0 : index
    %x = uop.const 1 : i1
    %v = uop.broadcast %x : i1 to vector<4xi1>
    // expected-error@+1 {{uop.reduce_add takes no i1 vectors}}
    %s = uop.reduce_add %v : vector<4xi1> to i1
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "b" : !uop.buffer<16xf32>
    %c = uop.define_global "output" 0 "c" : !uop.buffer<16xi32>
    %i = uop.const 0 : index
    %x = uop.const 1.0 : f32
    %v = uop.broadcast %x : f32 to vector<4xf32>
    // expected-error@+1 {{uop.exp takes no vectors, got vector<4xf32>}}
    %e = uop.exp %v : vector<4xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "b" : !uop.buffer<16xf32>
    %c = uop.define_global "output" 0 "c" : !uop.buffer<16xi32>
    %i = uop.const 0 : index
    %x = uop.const 1 : i32
    %v = uop.broadcast %x : i32 to vector<4xi32>
    // expected-error@+1 {{uop.div takes no integer vectors, got vector<4xi32>}}
    %e = uop.div %v, %v : vector<4xi32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "b" : !uop.buffer<16xf32>
    %c = uop.define_global "output" 0 "c" : !uop.buffer<16xi32>
    %i = uop.const 0 : index
    %x = uop.const 1.0 : f32
    %v = uop.broadcast %x : f32 to vector<4xf32>
    // expected-error@+1 {{uop.cast of vectors must be lossless (float, int to float, or widening), got vector<4xf32> to vector<4xi32>}}
    %e = uop.cast %v : vector<4xf32> to vector<4xi32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "b" : !uop.buffer<16xf32>
    %c = uop.define_global "output" 0 "c" : !uop.buffer<16xi32>
    %i = uop.const 0 : index
    %x = uop.const 1 : i32
    %v = uop.broadcast %x : i32 to vector<4xi32>
    // expected-error@+1 {{uop.cast of vectors must be lossless (float, int to float, or widening), got vector<4xi32> to vector<4xi8>}}
    %e = uop.cast %v : vector<4xi32> to vector<4xi8>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "b" : !uop.buffer<16xf32>
    %c = uop.define_global "output" 0 "c" : !uop.buffer<16xi32>
    %i = uop.const 0 : index
    %x = uop.const 1.0 : f32
    %v = uop.broadcast %x : f32 to vector<4xf32>
    // expected-error@+1 {{uop.cast of vectors needs two vectors of one length, got vector<4xf32> to vector<8xf64>}}
    %e = uop.cast %v : vector<4xf32> to vector<8xf64>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "b" : !uop.buffer<16xf32>
    %c = uop.define_global "output" 0 "c" : !uop.buffer<16xi32>
    %i = uop.const 0 : index
    %x = uop.const 1.0 : f32
    // expected-error@+1 {{uop.cast of vectors needs two vectors of one length, got f32 to vector<4xf32>}}
    %e = uop.cast %x : f32 to vector<4xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "b" : !uop.buffer<16xf32>
    %c = uop.define_global "output" 0 "c" : !uop.buffer<16xi32>
    %i = uop.const 0 : index
    // expected-error@+1 {{initial value type differs from the accumulator's}}
    %a = "uop.define_acc"() <{init = 0 : i32}> : () -> !uop.acc<vector<4xf32>>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "b" : !uop.buffer<16xf32>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<16xf32>
    // expected-error@+1 {{stride must be positive, got 0}}
    %v = uop.vload %p stride 0 : vector<4xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%x: vector<4xf32>, %y: vector<4xf32>) {
    // expected-error@+1 {{uop.cmplt of vector<4xf32> gives vector<4xi1>, got i1}}
    %m = "uop.cmplt"(%x, %y) : (vector<4xf32>, vector<4xf32>) -> i1
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%x: vector<2x2xf32>, %y: vector<2x2xf32>) {
    // expected-error@+1 {{uop.cmplt takes scalar or 1-D vector operands, got vector<2x2xf32>}}
    %m = "uop.cmplt"(%x, %y) : (vector<2x2xf32>, vector<2x2xf32>) -> vector<2x2xi1>
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%m: vector<8xi1>, %x: vector<4xf32>, %y: vector<4xf32>) {
    // expected-error@+1 {{a vector<8xi1> condition picks lanes of a 8-lane vector, got vector<4xf32>}}
    %z = uop.where %m, %x, %y : vector<8xi1>, vector<4xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%m: vector<4xi1>, %x: f32, %y: f32) {
    // expected-error@+1 {{a vector<4xi1> condition picks lanes of a 4-lane vector, got f32}}
    %z = uop.where %m, %x, %y : vector<4xi1>, f32
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%m: i8, %x: f32, %y: f32) {
    // expected-error@+1 {{the condition must be i1 or a 1-D vector of i1, got i8}}
    %z = "uop.where"(%m, %x, %y) : (i8, f32, f32) -> f32
    func.return
  }
}


// -----

builtin.module {
  func.func @main(%v: vector<4xi32>) {
    // expected-error@+1 {{uop.bitcast of vectors needs two vectors of one length, got vector<4xi32> to vector<8xf32>}}
    %x = uop.bitcast %v : vector<4xi32> to vector<8xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main(%v: vector<4xi32>) {
    // expected-error@+1 {{uop.bitcast needs equal widths, got i32 (32 bits) to f16 (16 bits)}}
    %x = uop.bitcast %v : vector<4xi32> to vector<4xf16>
    func.return
  }
}
