// RUN: zant-opt %s --split-input-file --verify-diagnostics

builtin.module {
  func.func @main() {
    // expected-error@+1 {{role must be one of input, output, constant, got 'weird'}}
    %x = uop.define_global "weird" 0 "x" : !uop.buffer<2xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{a constant buffer needs a value, and only a constant has one}}
    %x = uop.define_global "constant" 0 "x" : !uop.buffer<2xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{value has 3 elements but the buffer holds 2}}
    %x = uop.define_global "constant" 0 "x" value dense<[1.0, 2.0, 3.0]> : tensor<3xf32> : !uop.buffer<2xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{value and buffer element types differ}}
    %x = uop.define_global "constant" 0 "x" value dense<[1, 2]> : tensor<2xi32> : !uop.buffer<2xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{offset must be non-negative}}
    %x = uop.define_local "t" at -16 : !uop.buffer<2xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_local "t" : !uop.buffer<2xindex>
    // expected-error@+1 {{buffer element type must be a number type, got index}}
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_local "t" : !uop.buffer<2xf32>
    // expected-error@+1 {{view reaches elements 0..3, outside the buffer of 2 elements}}
    %v = uop.view %x : !uop.buffer<2xf32> -> !uop.view<2x2xf32, strides [2, 1], offset 0>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_local "t" : !uop.buffer<2xf32>
    // expected-error@+1 {{view element type i32 differs from the buffer's f32}}
    %v = uop.view %x : !uop.buffer<2xf32> -> !uop.view<2xi32, strides [1], offset 0>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_local "t" : !uop.buffer<2xf32>
    %v = uop.view %x : !uop.buffer<2xf32> -> !uop.view<2xf32, strides [1, 1], offset 0>
    // expected-error@+1 {{view has 1 dimensions but 2 strides}}
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_local "t" : !uop.buffer<6xf32>
    %v = uop.view %x : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
    %i = uop.const 0 : index
    // expected-error@+1 {{expected 2 indices for}}
    %p = uop.gep %v[%i] : !uop.view<2x3xf32, strides [3, 1], offset 0>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %c = uop.const 1 : i32
    // expected-error@+1 {{uop.pow takes floating-point operands, got i32}}
    %p = uop.pow %c, %c : i32
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %c = uop.const 1.0 : f32
    // expected-error@+1 {{uop.shl takes integer operands, got f32}}
    %p = uop.shl %c, %c : f32
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %c = uop.const 1.0 : f32
    // expected-error@+1 {{uop.not takes integer operands, got f32}}
    %p = uop.not %c : f32
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{step must be positive, got 0}}
    uop.range %i = 0 to 4 step 0 {
    }
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %a = uop.define_acc 0.0 : f32
    %c = uop.const 1 : i32
    // expected-error@+1 {{operands must match the accumulator's type f32, got i32 and i32}}
    uop.mulacc %a, %c, %c : !uop.acc<f32>, i32
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %a = uop.define_acc 0.0 : f32
    %c = uop.const 1 : i32
    // expected-error@+1 {{value type i32 differs from the accumulator's f32}}
    uop.acc_set %a, %c : !uop.acc<f32>, i32
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %a = uop.define_acc 0.0 : f32
    // expected-error@+1 {{result type differs from the accumulator's}}
    %g = uop.acc_get %a : !uop.acc<f32>, i32
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{only a constant has an arena offset}}
    %x = uop.define_global "input" 0 "x" at 16 : !uop.buffer<2xf32>
    func.return
  }
}

// -----
builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<4xf32>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<4xf32>
    // expected-error@+1 {{attribute f32 expected from variable 'T', but got i32}}
    %x = "uop.load"(%p) : (!uop.ptr<f32>) -> i32
    func.return
  }
}

// -----
builtin.module {
  func.func @main() {
    %b = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<4xf32>
    %v = uop.const 1 : i32
    // expected-error@+1 {{attribute i32 expected from variable 'T', but got f32}}
    "uop.store"(%v, %p) : (i32, !uop.ptr<f32>) -> ()
    func.return
  }
}

// -----
builtin.module {
  func.func @main() {
    %v = uop.const 1 : i32
    // expected-error@+1 {{uop.bitcast needs equal widths, got i32 (32 bits) to f16 (16 bits)}}
    %x = uop.bitcast %v : i32 to f16
    func.return
  }
}

// -----
builtin.module {
  func.func @main() {
    %v = uop.const 1 : index
    // expected-error@+1 {{uop.bitcast reinterprets sized scalars, got index}}
    %x = uop.bitcast %v : index to i64
    func.return
  }
}

// -----
builtin.module {
  func.func @main() {
    %acc = uop.define_acc 0 : i32
    %v = uop.const 1 : i32
    // expected-error@+1 {{only a float accumulator can be fused, got i32}}
    uop.mulacc fused %acc, %v, %v : !uop.acc<i32>, i32
    func.return
  }
}

// -----
builtin.module {
  func.func @main() {
    %w = uop.define_global "constant" 0 "conv.weight" value dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32> : !uop.buffer<6xf32>
    %v = uop.view %w : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
    %i = uop.const 1 : index
    %x = uop.const 0.0 : f32
    %p = uop.gep %v[%i, %i] : !uop.view<2x3xf32, strides [3, 1], offset 0>
    // expected-error@+1 {{store into the constant buffer 'conv.weight'}}
    uop.store %x, %p : f32
    func.return
  }
}

// -----
builtin.module {
  func.func @main() {
    %in = uop.define_global "input" 0 "image" : !uop.buffer<16xf32>
    %i = uop.const 0 : index
    %x = uop.const 0.0 : f32
    %s = uop.broadcast %x : f32 to vector<8xf32>
    %p = uop.gep %in[%i] : !uop.buffer<16xf32>
    // expected-error@+1 {{store into the input buffer 'image'}}
    uop.vstore %s, %p : vector<8xf32>
    func.return
  }
}

// -----
builtin.module {
  func.func @main() {
    // expected-error@+1 {{two output buffers with index 0: 'y' and 'z'}}
    %a = uop.define_global "output" 0 "y" : !uop.buffer<2xf32>
    %b = uop.define_global "output" 0 "z" : !uop.buffer<2xf32>
    func.return
  }
}

// -----
builtin.module {
  func.func @main() {
    // expected-error@+1 {{input indices must be 0..1, got [0, 2] (no input 1)}}
    %a = uop.define_global "input" 0 "a" : !uop.buffer<2xf32>
    %c = uop.define_global "input" 2 "c" : !uop.buffer<2xf32>
    func.return
  }
}

// -----
builtin.module {
  func.func @main() {
    // expected-error@+1 {{output indices must be 0..0, got [1] (no output 0)}}
    %b = uop.define_global "output" 1 "b" : !uop.buffer<2xf32>
    func.return
  }
}

// -----
builtin.module {
  func.func @main() attributes {onnx.input_names = ["a"]} {
    // expected-error@+1 {{input index 1 ('b') is past the graph's 1 inputs}}
    %a = uop.define_global "input" 0 "a" : !uop.buffer<2xf32>
    %b = uop.define_global "input" 1 "b" : !uop.buffer<2xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{a live range needs 0 <= first <= last, got 6 to 4}}
    %t = uop.define_local "t" at 0 live 6 to 4 : !uop.buffer<2xf32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    // expected-error@+1 {{a live range without an offset: plan-arenas sets both}}
    %t = uop.define_local "t" live 1 to 4 : !uop.buffer<2xf32>
    func.return
  }
}
