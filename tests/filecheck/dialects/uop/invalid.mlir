// RUN: zant-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

builtin.module {
  func.func @main() {
    %x = uop.define_global "weird" 0 "x" : !uop.buffer<2xf32>
    func.return
  }
}

// CHECK: role must be one of input, output, constant, got 'weird'

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_global "constant" 0 "x" : !uop.buffer<2xf32>
    func.return
  }
}

// CHECK: a constant buffer needs a value, and only a constant has one

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_global "constant" 0 "x" value dense<[1.0, 2.0, 3.0]> : tensor<3xf32> : !uop.buffer<2xf32>
    func.return
  }
}

// CHECK: value has 3 elements but the buffer holds 2

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_global "constant" 0 "x" value dense<[1, 2]> : tensor<2xi32> : !uop.buffer<2xf32>
    func.return
  }
}

// CHECK: value and buffer element types differ

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_local "t" at -16 : !uop.buffer<2xf32>
    func.return
  }
}

// CHECK: offset must be non-negative

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_local "t" : !uop.buffer<2xindex>
    func.return
  }
}

// CHECK: buffer element type must be a number type, got index

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_local "t" : !uop.buffer<2xf32>
    %v = uop.view %x : !uop.buffer<2xf32> -> !uop.view<2x2xf32, strides [2, 1], offset 0>
    func.return
  }
}

// CHECK: view reaches elements 0..3, outside the buffer of 2 elements

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_local "t" : !uop.buffer<2xf32>
    %v = uop.view %x : !uop.buffer<2xf32> -> !uop.view<2xi32, strides [1], offset 0>
    func.return
  }
}

// CHECK: view element type i32 differs from the buffer's f32

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_local "t" : !uop.buffer<2xf32>
    %v = uop.view %x : !uop.buffer<2xf32> -> !uop.view<2xf32, strides [1, 1], offset 0>
    func.return
  }
}

// CHECK: view has 1 dimensions but 2 strides

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_local "t" : !uop.buffer<6xf32>
    %v = uop.view %x : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
    %i = uop.const 0 : index
    %p = uop.gep %v[%i] : !uop.view<2x3xf32, strides [3, 1], offset 0>
    func.return
  }
}

// CHECK: expected 2 indices for

// -----

builtin.module {
  func.func @main() {
    %c = uop.const 1 : i32
    %p = uop.pow %c, %c : i32
    func.return
  }
}

// CHECK: uop.pow takes floating-point operands, got i32

// -----

builtin.module {
  func.func @main() {
    %c = uop.const 1.0 : f32
    %p = uop.shl %c, %c : f32
    func.return
  }
}

// CHECK: uop.shl takes integer operands, got f32

// -----

builtin.module {
  func.func @main() {
    %c = uop.const 1.0 : f32
    %p = uop.not %c : f32
    func.return
  }
}

// CHECK: uop.not takes integer operands, got f32

// -----

builtin.module {
  func.func @main() {
    uop.range %i = 0 to 4 step 0 {
    }
    func.return
  }
}

// CHECK: step must be positive, got 0

// -----

builtin.module {
  func.func @main() {
    %a = uop.define_acc 0.0 : f32
    %c = uop.const 1 : i32
    uop.mulacc %a, %c, %c : !uop.acc<f32>, i32
    func.return
  }
}

// CHECK: operands must match the accumulator's type f32, got i32 and i32

// -----

builtin.module {
  func.func @main() {
    %a = uop.define_acc 0.0 : f32
    %c = uop.const 1 : i32
    uop.acc_set %a, %c : !uop.acc<f32>, i32
    func.return
  }
}

// CHECK: value type i32 differs from the accumulator's f32

// -----

builtin.module {
  func.func @main() {
    %a = uop.define_acc 0.0 : f32
    %g = uop.acc_get %a : !uop.acc<f32>, i32
    func.return
  }
}

// CHECK: result type differs from the accumulator's

// -----

builtin.module {
  func.func @main() {
    uop.arena "heap" size 16 align 16
    func.return
  }
}

// CHECK: arena role must be one of scratch, constant, persistent, got 'heap'

// -----

builtin.module {
  func.func @main() {
    uop.arena "scratch" size 24 align 16
    func.return
  }
}

// CHECK: arena size must be a non-negative multiple of its alignment, got 24

// -----

builtin.module {
  func.func @main() {
    uop.arena "scratch" size 32 align 16 lower_bound 48
    func.return
  }
}

// CHECK: lower bound 48 is not within 0..32

// -----

builtin.module {
  func.func @main() {
    uop.arena "scratch" size 32 align 16 strategy "clever"
    func.return
  }
}

// CHECK: strategy must be one of naive, greedy, best, got 'clever'

// -----

builtin.module {
  func.func @main() {
    uop.arena "scratch" size 32 align 16 section ".data"
    func.return
  }
}

// CHECK: only the constant arena has a link section

// -----

builtin.module {
  func.func @main() {
    uop.arena "scratch" size 32 align 16
    uop.arena "scratch" size 64 align 16
    func.return
  }
}

// CHECK: more than one scratch arena in one block

// -----

builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" at 16 : !uop.buffer<2xf32>
    func.return
  }
}

// CHECK: only a constant has an arena offset

// -----
builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<4xf32>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<4xf32>
    %x = "uop.load"(%p) : (!uop.ptr<f32>) -> i32
    func.return
  }
}

// CHECK: attribute f32 expected from variable 'T', but got i32

// -----
builtin.module {
  func.func @main() {
    %b = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<4xf32>
    %v = uop.const 1 : i32
    "uop.store"(%v, %p) : (i32, !uop.ptr<f32>) -> ()
    func.return
  }
}

// CHECK: attribute i32 expected from variable 'T', but got f32

// -----
builtin.module {
  func.func @main() {
    %v = uop.const 1 : i32
    %x = uop.bitcast %v : i32 to f16
    func.return
  }
}

// CHECK: uop.bitcast needs equal widths, got i32 (32 bits) to f16 (16 bits)

// -----
builtin.module {
  func.func @main() {
    %v = uop.const 1 : index
    %x = uop.bitcast %v : index to i64
    func.return
  }
}

// CHECK: uop.bitcast reinterprets sized scalars, got index

// -----
builtin.module {
  func.func @main() {
    %acc = uop.define_acc 0 : i32
    %v = uop.const 1 : i32
    uop.mulacc fused %acc, %v, %v : !uop.acc<i32>, i32
    func.return
  }
}

// CHECK: only a float accumulator can be fused, got i32

// -----
builtin.module {
  func.func @main() {
    %w = uop.define_global "constant" 0 "conv.weight" value dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32> : !uop.buffer<6xf32>
    %v = uop.view %w : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
    %i = uop.const 1 : index
    %x = uop.const 0.0 : f32
    %p = uop.gep %v[%i, %i] : !uop.view<2x3xf32, strides [3, 1], offset 0>
    uop.store %x, %p : f32
    func.return
  }
}

// CHECK: store into the constant buffer 'conv.weight'

// -----
builtin.module {
  func.func @main() {
    %in = uop.define_global "input" 0 "image" : !uop.buffer<16xf32>
    %i = uop.const 0 : index
    %x = uop.const 0.0 : f32
    %s = uop.broadcast %x : f32 to vector<8xf32>
    %p = uop.gep %in[%i] : !uop.buffer<16xf32>
    uop.vstore %s, %p : vector<8xf32>
    func.return
  }
}

// CHECK: store into the input buffer 'image'

// -----
builtin.module {
  func.func @main() {
    %a = uop.define_global "output" 0 "y" : !uop.buffer<2xf32>
    %b = uop.define_global "output" 0 "z" : !uop.buffer<2xf32>
    func.return
  }
}

// CHECK: two output buffers with index 0: 'y' and 'z'

// -----
builtin.module {
  func.func @main() {
    %a = uop.define_global "input" 0 "a" : !uop.buffer<2xf32>
    %c = uop.define_global "input" 2 "c" : !uop.buffer<2xf32>
    func.return
  }
}

// CHECK: input indices must be 0..1, got [0, 2] (no input 1)

// -----
builtin.module {
  func.func @main() {
    %b = uop.define_global "output" 1 "b" : !uop.buffer<2xf32>
    func.return
  }
}

// CHECK: output indices must be 0..0, got [1] (no output 0)

// -----
builtin.module {
  func.func @main() attributes {onnx.input_names = ["a"]} {
    %a = uop.define_global "input" 0 "a" : !uop.buffer<2xf32>
    %b = uop.define_global "input" 1 "b" : !uop.buffer<2xf32>
    func.return
  }
}

// CHECK: input index 1 ('b') is past the graph's 1 inputs

// -----

builtin.module {
  func.func @main() {
    %t = uop.define_local "t" at 0 live 6 to 4 : !uop.buffer<2xf32>
    func.return
  }
}

// CHECK: a live range needs 0 <= first <= last, got 6 to 4

// -----

builtin.module {
  func.func @main() {
    %t = uop.define_local "t" live 1 to 4 : !uop.buffer<2xf32>
    func.return
  }
}

// CHECK: a live range without an offset: plan-arenas sets both

// -----

builtin.module {
  func.func @main() {
    uop.arena "scratch" size 32 align 16 steps -1
    func.return
  }
}

// CHECK: steps must be non-negative, got -1

// -----

builtin.module {
  func.func @main() {
    uop.arena "constant" size 32 align 16 steps 3
    func.return
  }
}

// CHECK: only the scratch arena has steps

// -----

builtin.module {
  func.func @main() {
    uop.arena "scratch" size 64 align 16 lower_bound 32 unaligned_lower_bound 40
    func.return
  }
}

// CHECK: unaligned lower bound 40 is not within 0..32 (the aligned lower bound, or the size)

// -----

builtin.module {
  func.func @main() {
    uop.arena "persistent" size 0 align 16 unaligned_lower_bound 0
    func.return
  }
}

// CHECK: only the scratch arena has an unaligned lower bound
