// RUN: zant-opt %s --split-input-file -p share-kernels | filecheck %s

// @a and @b are alike but for their buffers (scratch both) and one constant (the shift 37 / 38):
// @b goes, @a takes the shift as a parameter and each call passes its own. @c multiplies
// instead of shifting and @hot is marked zant.hot: both stay as they are.

// CHECK-LABEL: func.func @main() {
// CHECK:         [[S0:%.*]] = uop.const 37 : i32
// CHECK-NEXT:    func.call @a(%y, %t, [[S0]]) : (!uop.buffer<8xi32>, !uop.buffer<8xi32>, i32) -> ()
// CHECK-NEXT:    [[S1:%.*]] = uop.const 38 : i32
// CHECK-NEXT:    func.call @a(%t, %y, [[S1]]) : (!uop.buffer<8xi32>, !uop.buffer<8xi32>, i32) -> ()
// CHECK-NEXT:    func.call @c(%z, %x) : (!uop.buffer<8xi32>, !uop.buffer<8xi32>) -> ()
// CHECK-NEXT:    func.call @hot(%x, %z) : (!uop.buffer<8xi32>, !uop.buffer<8xi32>) -> ()
// CHECK:       func.func private @a(%{{.*}}: !uop.buffer<8xi32>, %{{.*}}: !uop.buffer<8xi32>, [[SHIFT:%.*]]: i32) {
// CHECK-NOT:     uop.const
// CHECK:         uop.shr %{{.*}}, [[SHIFT]] : i32
// CHECK-NOT:   func.func private @b
// CHECK:       func.func private @c(
// CHECK:       func.func private @hot(%{{.*}}: !uop.buffer<8xi32>, %{{.*}}: !uop.buffer<8xi32>) attributes {zant.hot} {
// CHECK:         uop.const 37 : i32

builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<8xi32>
    %y = uop.define_local "y" : !uop.buffer<8xi32>
    %z = uop.define_global "output" 0 "z" : !uop.buffer<8xi32>
    %t = uop.define_local "t" : !uop.buffer<8xi32>
    func.call @a(%y, %t) : (!uop.buffer<8xi32>, !uop.buffer<8xi32>) -> ()
    func.call @b(%t, %y) : (!uop.buffer<8xi32>, !uop.buffer<8xi32>) -> ()
    func.call @c(%z, %x) : (!uop.buffer<8xi32>, !uop.buffer<8xi32>) -> ()
    func.call @hot(%x, %z) : (!uop.buffer<8xi32>, !uop.buffer<8xi32>) -> ()
    func.return
  }
  func.func private @a(%in: !uop.buffer<8xi32>, %out: !uop.buffer<8xi32>) {
    %s = uop.const 37 : i32
    uop.range %i = 0 to 8 {
      %p = uop.gep %in[%i] : !uop.buffer<8xi32>
      %v = uop.load %p : i32
      %r = uop.shr %v, %s : i32
      %q = uop.gep %out[%i] : !uop.buffer<8xi32>
      uop.store %r, %q : i32
    }
    func.return
  }
  func.func private @b(%in: !uop.buffer<8xi32>, %out: !uop.buffer<8xi32>) {
    %s = uop.const 38 : i32
    uop.range %i = 0 to 8 {
      %p = uop.gep %in[%i] : !uop.buffer<8xi32>
      %v = uop.load %p : i32
      %r = uop.shr %v, %s : i32
      %q = uop.gep %out[%i] : !uop.buffer<8xi32>
      uop.store %r, %q : i32
    }
    func.return
  }
  func.func private @c(%in: !uop.buffer<8xi32>, %out: !uop.buffer<8xi32>) {
    %s = uop.const 37 : i32
    uop.range %i = 0 to 8 {
      %p = uop.gep %in[%i] : !uop.buffer<8xi32>
      %v = uop.load %p : i32
      %r = uop.mul %v, %s : i32
      %q = uop.gep %out[%i] : !uop.buffer<8xi32>
      uop.store %r, %q : i32
    }
    func.return
  }
  func.func private @hot(%in: !uop.buffer<8xi32>, %out: !uop.buffer<8xi32>) attributes {zant.hot} {
    %s = uop.const 37 : i32
    uop.range %i = 0 to 8 {
      %p = uop.gep %in[%i] : !uop.buffer<8xi32>
      %v = uop.load %p : i32
      %r = uop.shr %v, %s : i32
      %q = uop.gep %out[%i] : !uop.buffer<8xi32>
      uop.store %r, %q : i32
    }
    func.return
  }
}
