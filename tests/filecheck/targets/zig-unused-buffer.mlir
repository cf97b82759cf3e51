// RUN: zant-opt %s -p dce,plan-arenas,linearize-geps -t 'zig{name=net}' | filecheck %s
// RUN: zant-opt %s -p plan-arenas,linearize-geps -t 'zig{name=net}' | filecheck %s --check-prefix=KEPT

// The printer prints every buffer it is given. A buffer nothing reads or writes (nor its views)
// is dce's to drop, before plan-arenas, so it gets no slot either (here it would share one).

// CHECK:      var net_scratch: [16]u8 align(16) = undefined;
// CHECK-NOT:  scratch_unused
// CHECK:      const scratch_used: [*]f32

// KEPT:       var net_scratch: [16]u8 align(16) = undefined;
// KEPT:       const scratch_unused: [*]f32
// KEPT:       const scratch_used: [*]f32

builtin.module {
  func.func @main() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
    %u = uop.define_local "unused" : !uop.buffer<4xf32>
    %uv = uop.view %u : !uop.buffer<4xf32> -> !uop.view<2x2xf32, strides [2, 1], offset 0>
    %t = uop.define_local "used" : !uop.buffer<4xf32>
    uop.range %i = 0 to 4 {
      %p = uop.gep %t[%i] : !uop.buffer<4xf32>
      %one = uop.const 1.0 : f32
      uop.store %one, %p : f32
      %q = uop.gep %t[%i] : !uop.buffer<4xf32>
      %v = uop.load %q : f32
      %o = uop.gep %y[%i] : !uop.buffer<4xf32>
      uop.store %v, %o : f32
    }
    func.return
  }
}
