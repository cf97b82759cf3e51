// RUN: zant-opt %s -p 'plan-arenas{constants=staged},linearize-geps,outline-kernels' -t 'zig{name=net}' | filecheck %s --check-prefix=STAGED
// RUN: zant-opt %s -p 'plan-arenas{constants=external},linearize-geps,outline-kernels' -t 'zig{name=net}' | filecheck %s --check-prefix=EXTERNAL

// Staged: the blob stays read-only, NAME_init copies it into a RAM arena, and NAME_predict
// returns 1 until it has. External: no bytes at all, only a pointer NAME_init sets (2 for a null
// or misaligned address); each function that reads a constant declares its pointer from it.

// STAGED:      const net_constants_source: [16]u8 align(16) = .{
// STAGED-NEXT:     0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x20, 0x40, 0x00, 0x00, 0x00, 0x00,
// STAGED-NEXT: };
// STAGED:      var net_constants: [16]u8 align(16) = undefined;
// STAGED-NEXT: // w
// STAGED-NEXT: const const_w: [*]const f32 = @ptrCast(@alignCast(&net_constants[0]));
// STAGED:      var net_ready: bool = false;
// STAGED:      export fn net_init() callconv(.c) i32 {
// STAGED-NEXT:     @memcpy(&net_constants, net_constants_source[0..16]);
// STAGED-NEXT:     net_ready = true;
// STAGED-NEXT:     return 0;
// STAGED-NEXT: }
// STAGED:      export fn net_predict(input_x_pointer: ?[*]const f32, output_y_pointer: ?[*]f32) callconv(.c) i32 {
// STAGED-NEXT:     const input_x = input_x_pointer orelse return 7;
// STAGED-NEXT:     const output_y = output_y_pointer orelse return 7;
// STAGED-NEXT:     if (!net_ready) return 1;

// EXTERNAL-NOT: 0x3f
// EXTERNAL:      var net_constants: ?[*]const u8 = null;
// EXTERNAL:      export fn net_init(constants: ?*const anyopaque) callconv(.c) i32 {
// EXTERNAL-NEXT:     const address = @intFromPtr(constants);
// EXTERNAL-NEXT:     if (address == 0 or address % 16 != 0) return 2;
// EXTERNAL-NEXT:     net_constants = @ptrCast(constants);
// EXTERNAL-NEXT:     return 0;
// EXTERNAL-NEXT: }
// EXTERNAL-NOT:  const const_w
// EXTERNAL:      fn kernel_y(input_x: [*]const f32, output_y: [*]f32) void {
// EXTERNAL-NEXT:     const const_w: [*]const f32 = @ptrCast(@alignCast(net_constants.? + 0));
// EXTERNAL:      export fn net_predict(input_x_pointer: ?[*]const f32, output_y_pointer: ?[*]f32) callconv(.c) i32 {
// EXTERNAL-NEXT:     const input_x = input_x_pointer orelse return 7;
// EXTERNAL-NEXT:     const output_y = output_y_pointer orelse return 7;
// EXTERNAL-NEXT:     if (net_constants == null) return 1;

builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<3xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<3xf32>
    %w = uop.define_global "constant" 0 "w" value dense<[1.5, -0.0, 2.5]> : tensor<3xf32> : !uop.buffer<3xf32>
    uop.range %i = 0 to 3 {
      %p = uop.gep %x[%i] : !uop.buffer<3xf32>
      %a = uop.load %p : f32
      %q = uop.gep %w[%i] : !uop.buffer<3xf32>
      %c = uop.load %q : f32
      %s = uop.add %a, %c : f32
      %o = uop.gep %y[%i] : !uop.buffer<3xf32>
      uop.store %s, %o : f32
    }
    func.return
  }
}
