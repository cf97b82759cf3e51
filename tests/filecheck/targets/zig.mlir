// RUN: zant-opt %s -p plan-arenas,fold-constant-loads,mark-inbounds,contract-mulacc,expand-float-minmax,linearize-geps,outline-kernels -t 'zig{name=net}' | filecheck %s
// RUN: zant-opt %s -p plan-arenas,fold-constant-loads,mark-inbounds,contract-mulacc,expand-float-minmax,linearize-geps,outline-kernels -t zig | filecheck %s --check-prefix=DEFAULT

// An unplanned module is planned by the target; the constants are one aligned blob with their
// exact bytes (1.5, -0.0, 2.5 little-endian), each a typed pointer at its planned offset. A max
// against the constant 0 is one compare (a NaN sum fails it and passes through): no helper.
// Every address here is proven inside its buffer from the loop ranges, so none is checked. Each
// top-level loop nest is a function named after the tensor it stores, after a comment naming
// the ONNX nodes of its location (a JSON list: quotes and newlines escaped; none if unknown), the
// scratch buffers are file-scope pointers into the arena, and the entry point calls the nests in order.

// CHECK:      const std = @import("std");
// CHECK:      const net_constants: [16]u8 align(16) = .{
// CHECK-NEXT:     0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x20, 0x40, 0x00, 0x00, 0x00, 0x00,
// CHECK-NEXT: };
// CHECK-NEXT: // w
// CHECK-NEXT: const const_w: [*]const f32 = @ptrCast(@alignCast(&net_constants[0]));
// CHECK:      var net_scratch: [32]u8 align(16) = undefined;
// CHECK:      export fn net_check_plan(expected: u64) callconv(.c) i32 {
// CHECK:      // sum
// CHECK-NEXT: const scratch_sum: [*]f32 = @ptrCast(@alignCast(@as([*]u8, &net_scratch) + 0));
// CHECK:      const kernel_call: std.builtin.CallModifier = if (@import("builtin").mode == .safe or @hasDecl(@import("root"), "zant_profile_kernels")) .never_inline else .auto;
// CHECK-NOT:  inline fn zant_fmax
// CHECK:      // nodes: ["add0", "relu \"0\"\n"]
// CHECK-NEXT: fn kernel_sum(input_x: [*]const f32) void {
// CHECK-NEXT:     var idx_i: isize = 0;
// CHECK-NEXT:     while (idx_i < 2) : (idx_i += 1) {
// CHECK-NEXT:         var idx_j: isize = 0;
// CHECK-NEXT:         while (idx_j < 3) : (idx_j += 1) {
// CHECK-NEXT:             const addr_p = &input_x[@as(usize, @bitCast(idx_i *% 3 +% idx_j +% 1))];
// CHECK-NEXT:             const buf_a: f32 = addr_p.*;
// CHECK-NEXT:             const addr_q = &const_w[@as(usize, @bitCast(idx_j))];
// CHECK-NEXT:             const buf_c: f32 = addr_q.*;
// CHECK-NEXT:             const buf_s: f32 = buf_a + buf_c;
// CHECK-NEXT:             const buf_r: f32 = if (buf_s < @as(f32, 0x0.0p+0)) @as(f32, 0x0.0p+0) else buf_s;
// CHECK-NEXT:             const addr_o = &scratch_sum[@as(usize, @bitCast(idx_i *% 3 +% idx_j))];
// CHECK-NEXT:             addr_o.* = buf_r;
// CHECK-NEXT:         }
// CHECK-NEXT:     }
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: // nodes: []
// CHECK-NEXT: fn kernel_y(output_y: [*]f32) void {
// CHECK-NEXT:     var idx_k: isize = 0;
// CHECK-NEXT:     while (idx_k < 6) : (idx_k += 2) {
// CHECK-NEXT:         const addr_p2 = &scratch_sum[@as(usize, @bitCast(idx_k))];
// CHECK-NEXT:         const buf_a2: f32 = addr_p2.*;
// CHECK-NEXT:         const addr_o2 = &output_y[@as(usize, @bitCast(idx_k))];
// CHECK-NEXT:         addr_o2.* = buf_a2;
// CHECK-NEXT:     }
// CHECK-NEXT: }
// CHECK-EMPTY:
// The sized entry point checks each buffer's bytes, then is the plain one, which unwraps the
// caller's pointers (a null one returns 7, NAME_STATUS_BAD_BUFFER).
// CHECK-NEXT: export fn net_predict_sized(input_x_pointer: ?[*]const f32, input_x_bytes: usize, output_y_pointer: ?[*]f32, output_y_bytes: usize) callconv(.c) i32 {
// CHECK-NEXT:     if (input_x_bytes != 28) return 7;
// CHECK-NEXT:     if (output_y_bytes != 24) return 7;
// CHECK-NEXT:     return net_predict(input_x_pointer, output_y_pointer);
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: export fn net_predict(input_x_pointer: ?[*]const f32, output_y_pointer: ?[*]f32) callconv(.c) i32 {
// CHECK-NEXT:     const input_x = input_x_pointer orelse return 7;
// CHECK-NEXT:     const output_y = output_y_pointer orelse return 7;
// CHECK-NEXT:     @call(kernel_call, kernel_sum, .{input_x});
// CHECK-NEXT:     @call(kernel_call, kernel_y, .{output_y});
// CHECK-NEXT:     return 0;
// CHECK-NEXT: }

// DEFAULT: export fn model_predict(

builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<7xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<6xf32>
    %w = uop.define_global "constant" 0 "w" value dense<[1.5, -0.0, 2.5]> : tensor<3xf32> : !uop.buffer<3xf32>
    %t = uop.define_local "sum" : !uop.buffer<6xf32>
    %v = uop.view %x : !uop.buffer<7xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 1>
    %b = uop.view %w : !uop.buffer<3xf32> -> !uop.view<2x3xf32, strides [0, 1], offset 0>
    %tv = uop.view %t : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
    uop.range %i = 0 to 2 {
      uop.range %j = 0 to 3 {
        %p = uop.gep %v[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 1>
        %a = uop.load %p : f32
        %q = uop.gep %b[%i, %j] : !uop.view<2x3xf32, strides [0, 1], offset 0>
        %c = uop.load %q : f32
        %s = uop.add %a, %c : f32
        %z = uop.const 0.0 : f32
        %r = uop.max %s, %z : f32
        %o = uop.gep %tv[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
        uop.store %r, %o : f32
      }
    } loc(fused["add0", "relu \220\22\0A"])
    uop.range %k = 0 to 6 step 2 {
      %p2 = uop.gep %t[%k] : !uop.buffer<6xf32>
      %a2 = uop.load %p2 : f32
      %o2 = uop.gep %y[%k] : !uop.buffer<6xf32>
      uop.store %a2, %o2 : f32
    }
    func.return
  }
}
