// RUN: zant-opt %s -p verify-arena-plan,linearize-geps -t 'zig{name=net}' | filecheck %s

// A persistent arena (state kept between calls; no ONNX inference op has one today, so the plan
// is written by hand): it lives in .bss and NAME_init zeroes it, so an init exists even with
// embedded constants, and NAME_predict returns 1 (not initialized) until it has run.

// CHECK:      // The persistent arena: state kept between calls, zeroed by the init function.
// CHECK-NEXT: var net_persistent: [32]u8 align(16) = undefined;
// CHECK:      var net_ready: bool = false;
// CHECK-NEXT: // net_predict returns 1 until net_init has succeeded; net_init returns 0.
// CHECK-NEXT: export fn net_init() callconv(.c) i32 {
// CHECK-NEXT:     @memset(&net_persistent, 0);
// CHECK-NEXT:     net_ready = true;
// CHECK-NEXT:     return 0;
// CHECK-NEXT: }
// CHECK:      export fn net_predict(input_x_pointer: ?[*]const f32, output_y_pointer: ?[*]f32) callconv(.c) i32 {
// CHECK-NEXT:     const input_x = input_x_pointer orelse return 7;
// CHECK-NEXT:     const output_y = output_y_pointer orelse return 7;
// CHECK-NEXT:     if (!net_ready) return 1;

builtin.module {
  func.func @main() {
    abi.arena "scratch" size 0 align 16 lower_bound 0 strategy "best" steps 6 unaligned_lower_bound 0
    abi.arena "constant" size 0 align 16 memory "flash"
    abi.arena "persistent" size 32 align 16
    %x = uop.define_global "input" 0 "x" : !uop.buffer<3xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<3xf32>
    uop.range %i = 0 to 3 {
      %p = uop.gep %x[%i] : !uop.buffer<3xf32>
      %a = uop.load %p : f32
      %o = uop.gep %y[%i] : !uop.buffer<3xf32>
      uop.store %a, %o : f32
    }
    func.return
  }
}
