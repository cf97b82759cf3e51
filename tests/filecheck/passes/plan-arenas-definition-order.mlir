// RUN: zant-opt %s -p plan-arenas,verify-arena-plan | filecheck %s

// %b is defined before %a but written in place over it, where %a dies (a recurrent op's Y_h is
// defined before its hidden state, and copied from it at the end): the in-place chain is
// resolved by first use, not by definition order, and both share one slot.

// CHECK-LABEL: func.func @defined_before_source
// CHECK:         abi.arena "scratch" size 16 align 16 lower_bound 16
// CHECK:         uop.define_local "b" at 0
// CHECK:         uop.define_local "a" at 0
builtin.module {
  func.func @defined_before_source() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
    %b = uop.define_local "b" : !uop.buffer<4xf32>
    %a = uop.define_local "a" : !uop.buffer<4xf32>
    uop.range %i = 0 to 4 {
      %p = uop.gep %a[%i] : !uop.buffer<4xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
    }
    uop.range %i = 0 to 4 {
      %p = uop.gep %a[%i] : !uop.buffer<4xf32>
      %v = uop.load %p : f32
      %q = uop.gep %b[%i] : !uop.buffer<4xf32>
      uop.store %v, %q : f32
    }
    uop.range %i = 0 to 4 {
      %p = uop.gep %b[%i] : !uop.buffer<4xf32>
      %v = uop.load %p : f32
      %q = uop.gep %y[%i] : !uop.buffer<4xf32>
      uop.store %v, %q : f32
    }
    func.return
  }
}
