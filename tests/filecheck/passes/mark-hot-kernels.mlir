// RUN: zant-opt %s --split-input-file -p mark-hot-kernels | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'mark-hot-kernels{share=0.5}' | filecheck %s --check-prefix=HALF
// RUN: zant-opt %s --split-input-file -p 'mark-hot-kernels{share=1.0}' | filecheck %s --check-prefix=ALL

// The kernels holding most of the module's products are marked zant.hot, largest first: @big
// computes 8 x 16 = 128 products (an f32 multiply per iteration), @dot 4 x 2 x 4 = 32 (a word
// SMLAD is 2 products), @small 4, @copy none (its multiply is an address's, of indices). 128 of
// 164 is 78% < 80%, so the default share takes @dot too; half of them @big alone; all of them
// @small too, never @copy. @main, an entry function, is never marked.

// CHECK-LABEL: func.func @main() {
// CHECK:       func.func private @big(%{{.*}}: !uop.buffer<16xf32>) attributes {zant.hot} {
// CHECK:       func.func private @small(%{{.*}}: !uop.buffer<16xf32>) {
// CHECK:       func.func private @dot(%{{.*}}: !uop.buffer<16xi32>) attributes {zant.hot} {
// CHECK:       func.func private @copy(%{{.*}}: !uop.buffer<16xf32>) {

// HALF:        func.func private @big(%{{.*}}: !uop.buffer<16xf32>) attributes {zant.hot} {
// HALF:        func.func private @small(%{{.*}}: !uop.buffer<16xf32>) {
// HALF:        func.func private @dot(%{{.*}}: !uop.buffer<16xi32>) {
// HALF:        func.func private @copy(%{{.*}}: !uop.buffer<16xf32>) {

// ALL:         func.func private @big(%{{.*}}: !uop.buffer<16xf32>) attributes {zant.hot} {
// ALL:         func.func private @small(%{{.*}}: !uop.buffer<16xf32>) attributes {zant.hot} {
// ALL:         func.func private @dot(%{{.*}}: !uop.buffer<16xi32>) attributes {zant.hot} {
// ALL:         func.func private @copy(%{{.*}}: !uop.buffer<16xf32>) {

builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<16xf32>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<16xi32>
    func.call @big(%x) : (!uop.buffer<16xf32>) -> ()
    func.call @small(%x) : (!uop.buffer<16xf32>) -> ()
    func.call @dot(%w) : (!uop.buffer<16xi32>) -> ()
    func.call @copy(%x) : (!uop.buffer<16xf32>) -> ()
    func.return
  }
  func.func private @big(%x: !uop.buffer<16xf32>) {
    uop.range %i = 0 to 8 {
      uop.range %j = 0 to 16 {
        %p = uop.gep %x[%j] : !uop.buffer<16xf32>
        %a = uop.load %p : f32
        %m = uop.mul %a, %a : f32
        uop.store %m, %p : f32
      }
    }
    func.return
  }
  func.func private @small(%x: !uop.buffer<16xf32>) {
    uop.range %i = 0 to 4 {
      %p = uop.gep %x[%i] : !uop.buffer<16xf32>
      %a = uop.load %p : f32
      %m = uop.mul %a, %a : f32
      uop.store %m, %p : f32
    }
    func.return
  }
  func.func private @dot(%w: !uop.buffer<16xi32>) {
    uop.range %i = 0 to 4 {
      uop.range %j = 0 to 4 {
        %p = uop.gep %w[%j] : !uop.buffer<16xi32>
        %a = uop.load %p : i32
        %s = arm_dsp.smlad %a, %a, %a : i32
        uop.store %s, %p : i32
      }
    }
    func.return
  }
  func.func private @copy(%x: !uop.buffer<16xf32>) {
    %c2 = uop.const 2 : index
    uop.range %i = 0 to 8 {
      %k = uop.mul %i, %c2 : index
      %p = uop.gep %x[%k] : !uop.buffer<16xf32>
      %a = uop.load %p : f32
      uop.store %a, %p : f32
    }
    func.return
  }
}
