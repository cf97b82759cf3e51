// RUN: zant-opt %s -p coalesce-loops | filecheck %s

// Rows of 5 as one loop of 10: every address moves 5 elements per row (a row's length), so
// (i, j) and (0, i·5 + j) are the same element. The row-broadcast input of @no_coalesce moves 0
// per row but 1 per column: its nest stays.
// CHECK-LABEL: func.func @coalesce
// CHECK:         uop.range %j = 0 to 10 {
// CHECK-NEXT:      %[[ZERO:.*]] = uop.const 0 : index
// CHECK-NEXT:      %p = uop.gep %xv[%[[ZERO]], %j] : !uop.view<2x5xf32, strides [5, 1], offset 0>
// CHECK-NEXT:      %a = uop.load %p : f32
// CHECK-NEXT:      %b = uop.add %a, %a : f32
// CHECK-NEXT:      %q = uop.gep %yv[%[[ZERO]], %j] : !uop.view<2x5xf32, strides [5, 1], offset 0>
// CHECK-NEXT:      uop.store %b, %q : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @no_coalesce
// CHECK:         uop.range %i = 0 to 2 {
// CHECK-NEXT:      uop.range %j = 0 to 5 {

builtin.module {
  func.func @coalesce() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<10xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<10xf32>
    %xv = uop.view %x : !uop.buffer<10xf32> -> !uop.view<2x5xf32, strides [5, 1], offset 0>
    %yv = uop.view %y : !uop.buffer<10xf32> -> !uop.view<2x5xf32, strides [5, 1], offset 0>
    uop.range %i = 0 to 2 {
      uop.range %j = 0 to 5 {
        %p = uop.gep %xv[%i, %j] : !uop.view<2x5xf32, strides [5, 1], offset 0>
        %a = uop.load %p : f32
        %b = uop.add %a, %a : f32
        %q = uop.gep %yv[%i, %j] : !uop.view<2x5xf32, strides [5, 1], offset 0>
        uop.store %b, %q : f32
      }
    }
    func.return
  }
  func.func @no_coalesce() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<5xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<10xf32>
    %xv = uop.view %x : !uop.buffer<5xf32> -> !uop.view<2x5xf32, strides [0, 1], offset 0>
    %yv = uop.view %y : !uop.buffer<10xf32> -> !uop.view<2x5xf32, strides [5, 1], offset 0>
    uop.range %i = 0 to 2 {
      uop.range %j = 0 to 5 {
        %p = uop.gep %xv[%i, %j] : !uop.view<2x5xf32, strides [0, 1], offset 0>
        %a = uop.load %p : f32
        %q = uop.gep %yv[%i, %j] : !uop.view<2x5xf32, strides [5, 1], offset 0>
        uop.store %a, %q : f32
      }
    }
    func.return
  }
}
