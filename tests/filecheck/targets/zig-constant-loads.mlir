// RUN: zant-opt %s -p plan-arenas,fold-constant-loads,mark-inbounds,contract-mulacc,expand-float-minmax,linearize-geps,outline-kernels -t 'zig{name=net}' | filecheck %s

// A load of a constant's element at a fixed address (a quantization scale, a zero point) is a
// literal after fold-constant-loads, printed where it is used, not a load that Zig would
// evaluate at compile time by reinterpreting the whole constant blob. A load at a varying
// address stays a load. The values the entry point computes reach the loop nest's function as
// arguments.

// CHECK:      fn kernel_y(input_x: [*]const f32, buf_zf: f32, output_y: [*]f32) void {
// CHECK:              const addr_pw = &const_w[@as(usize, @bitCast(idx_i))];
// CHECK-NEXT:         const buf_w1: f32 = addr_pw.*;
// CHECK-NEXT:         const buf_m: f32 = buf_a * @as(f32, 0x1.0000000000000p-2);
// CHECK:      export fn net_predict(input_x_pointer: ?[*]const f32, output_y_pointer: ?[*]f32) callconv(.c) i32 {
// CHECK-NEXT:     const input_x = input_x_pointer orelse return 7;
// CHECK-NEXT:     const output_y = output_y_pointer orelse return 7;
// CHECK-NEXT:     const buf_zf: f32 = zant_cast(f32, @as(i8, -3));
// CHECK-NEXT:     @call(kernel_call, kernel_y, .{input_x, buf_zf, output_y});

builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<2xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<2xf32>
    %scale = uop.define_global "constant" 0 "scale" value dense<[0.5, 0.25]> : tensor<2xf32> : !uop.buffer<2xf32>
    %zero = uop.define_global "constant" 1 "zero" value dense<-3> : tensor<1xi8> : !uop.buffer<1xi8>
    %w = uop.define_global "constant" 2 "w" value dense<[1.0, 2.0]> : tensor<2xf32> : !uop.buffer<2xf32>
    %c1 = uop.const 1 : index
    %ps = uop.gep %scale[%c1] : !uop.buffer<2xf32>
    %s = uop.load %ps : f32
    %c0 = uop.const 0 : index
    %pz = uop.gep %zero[%c0] : !uop.buffer<1xi8>
    %z = uop.load %pz : i8
    %zf = uop.cast %z : i8 to f32
    uop.range %i = 0 to 2 {
      %p = uop.gep %x[%i] : !uop.buffer<2xf32>
      %a = uop.load %p : f32
      %pw = uop.gep %w[%i] : !uop.buffer<2xf32>
      %w1 = uop.load %pw : f32
      %m = uop.mul %a, %s : f32
      %n = uop.add %m, %zf : f32
      %r = uop.add %n, %w1 : f32
      %o = uop.gep %y[%i] : !uop.buffer<2xf32>
      uop.store %r, %o : f32
    }
    func.return
  }
}
