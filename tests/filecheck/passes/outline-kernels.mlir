// RUN: zant-opt %s --split-input-file -p outline-kernels | filecheck %s
// RUN: zant-opt %s --split-input-file -p outline-kernels,outline-kernels | filecheck %s

// Each top-level loop nest becomes a private function named after the tensor it stores last,
// called where it was. Its arguments are the values it uses from @main, in order of first use
// (graph buffers, scratch and constants alike); the constants and views it reads move in with
// it (a view's buffer is passed). The call keeps the nest's location. Outlining twice changes
// nothing: kernels are private, and @main has no loop nest left.

// CHECK-LABEL: func.func @main() {
// CHECK-NEXT:    [[X:%.*]] = uop.define_global "input" 0 "x"
// CHECK-NEXT:    [[Y:%.*]] = uop.define_global "output" 0 "y"
// CHECK-NEXT:    [[W:%.*]] = uop.define_global "constant" 0 "w"
// CHECK-NEXT:    [[T:%.*]] = uop.define_local "sum"
// CHECK:         [[N:%.*]] = uop.cast
// CHECK:         func.call @kernel_sum([[X]], [[W]], [[N]], [[T]]) : (!uop.buffer<7xf32>, !uop.buffer<3xf32>, index, !uop.buffer<6xf32>) -> ()
// CHECK-NEXT:    func.call @kernel_y([[T]], [[Y]]) : (!uop.buffer<6xf32>, !uop.buffer<6xf32>) -> ()
// CHECK-NEXT:    func.call @kernel_y_1([[Y]]) : (!uop.buffer<6xf32>) -> ()
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @kernel_sum([[X2:%.*]]: !uop.buffer<7xf32>, [[W2:%.*]]: !uop.buffer<3xf32>, [[N2:%.*]]: index, [[T2:%.*]]: !uop.buffer<6xf32>) {
// CHECK-NEXT:    [[V:%.*]] = uop.view [[X2]] : !uop.buffer<7xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 1>
// CHECK-NEXT:    [[Z:%.*]] = uop.const 0.000000e+00 : f32
// CHECK-NEXT:    uop.range [[I:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[J:%.*]] = 0 to 3 {
// CHECK-NEXT:        uop.gep [[V]][[[I]], [[J]]]
// CHECK-NEXT:        uop.load
// CHECK-NEXT:        uop.gep [[W2]][[[J]]]
// CHECK-NEXT:        uop.load
// CHECK-NEXT:        uop.add
// CHECK-NEXT:        uop.mul %{{.*}}, [[N2]]
// CHECK-NEXT:        uop.max %{{.*}}, [[Z]]
// CHECK-NEXT:        uop.gep [[T2]]
// CHECK-NEXT:        uop.store
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @kernel_y(%{{.*}}: !uop.buffer<6xf32>, %{{.*}}: !uop.buffer<6xf32>) {
// CHECK-NEXT:    uop.range
// CHECK:         func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @kernel_y_1(%{{.*}}: !uop.buffer<6xf32>) {
// CHECK-NEXT:    uop.const 0.000000e+00 : f32
// CHECK-NEXT:    uop.range
// CHECK:         func.return
// CHECK-NEXT:  }

builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<7xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<6xf32>
    %w = uop.define_global "constant" 0 "w" value dense<[1.5, -0.0, 2.5]> : tensor<3xf32> : !uop.buffer<3xf32>
    %t = uop.define_local "sum" : !uop.buffer<6xf32>
    %c0 = uop.const 0 : index
    %np = uop.gep %x[%c0] : !uop.buffer<7xf32>
    %nf = uop.load %np : f32
    %n = uop.cast %nf : f32 to index
    %v = uop.view %x : !uop.buffer<7xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 1>
    %z = uop.const 0.0 : f32
    uop.range %i = 0 to 2 {
      uop.range %j = 0 to 3 {
        %p = uop.gep %v[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 1>
        %a = uop.load %p : f32
        %q = uop.gep %w[%j] : !uop.buffer<3xf32>
        %c = uop.load %q : f32
        %s = uop.add %a, %c : f32
        %m = uop.mul %i, %n : index
        %r = uop.max %s, %z : f32
        %o = uop.gep %t[%m] : !uop.buffer<6xf32>
        uop.store %r, %o : f32
      }
    } loc(fused["add0", "relu0"])
    uop.range %k = 0 to 6 step 2 {
      %p2 = uop.gep %t[%k] : !uop.buffer<6xf32>
      %a2 = uop.load %p2 : f32
      %o2 = uop.gep %y[%k] : !uop.buffer<6xf32>
      uop.store %a2, %o2 : f32
    }
    uop.range %k = 1 to 6 step 2 {
      %o3 = uop.gep %y[%k] : !uop.buffer<6xf32>
      uop.store %z, %o3 : f32
    }
    func.return
  }
}

// -----

// A nest that updates an accumulator of the function stays inline, as does one that defines a
// buffer (the arena plan reads buffers from the entry function).

// CHECK-LABEL: func.func @reduce() {
// CHECK:         %{{.*}} = uop.define_acc
// CHECK-NEXT:    uop.range
// CHECK:           uop.mulacc
// CHECK:         [[S:%.*]] = uop.acc_get
// CHECK-NEXT:    uop.range
// CHECK-NEXT:      uop.define_local "t"
// CHECK:           uop.store [[S]]
// CHECK:         func.return
// CHECK-NEXT:  }
// CHECK-NOT:   func.func

builtin.module {
  func.func @reduce() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<4xi32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<1xi32>
    %acc = uop.define_acc 0 : i32
    uop.range %k = 0 to 4 {
      %p = uop.gep %x[%k] : !uop.buffer<4xi32>
      %a = uop.load %p : i32
      uop.mulacc %acc, %a, %a : !uop.acc<i32>, i32
    }
    %s = uop.acc_get %acc : !uop.acc<i32>, i32
    uop.range %k = 0 to 1 {
      %t = uop.define_local "t" : !uop.buffer<1xi32>
      %o = uop.gep %y[%k] : !uop.buffer<1xi32>
      uop.store %s, %o : i32
    }
    func.return
  }
}
