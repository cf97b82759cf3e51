// RUN: zant-opt %s -p plan-arenas,fold-constant-loads,mark-inbounds,contract-mulacc,expand-float-minmax,linearize-geps,outline-kernels -t 'zig{name=net}' | filecheck %s

// A gep is unchecked only when static index bounds prove every element it (and a vector access
// through it) reaches inside its buffer. An index loaded from memory has no static bound: its
// address is checked against the buffer's length (and for a negative value or an overflow).
// A vector load whose last lane can pass the end is checked too.

// CHECK:      const const_table: [*]const f32 = @ptrCast(@alignCast(&net_constants[0]));
// CHECK:      fn kernel_y(input_x: [*]const i64, output_y: [*]f32) void {
// CHECK:          const addr_p = &input_x[@as(usize, @bitCast(idx_i))];
// CHECK-NEXT:     const buf_n: i64 = addr_p.*;
// CHECK-NEXT:     const idx_n2: isize = zant_cast(isize, buf_n);
// CHECK-NEXT:     const addr_q = &const_table[0..4][@intCast(idx_n2 * 2 + 1)];
// CHECK:      fn kernel_y_1(input_v: [*]const f32, output_y: [*]f32) void {
// CHECK:          const addr_pe = &input_v[@as(usize, @bitCast(idx_e))];
// CHECK-NEXT:     const buf_four: @Vector(4, f32) = @as(*align(1) const [4]f32, @ptrCast(addr_pe)).*;
// CHECK:      fn kernel_y_2(input_v: [*]const f32, output_y: [*]f32) void {
// CHECK:          const addr_pf = &input_v[0..8][@intCast(idx_f)];
// CHECK-NEXT:     const buf_tail: @Vector(4, f32) = @as(*align(1) const [4]f32, @ptrCast(addr_pf)).*;

builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<3xi64>
    %v = uop.define_global "input" 1 "v" : !uop.buffer<8xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8xf32>
    %table = uop.define_global "constant" 0 "table" value dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> : !uop.buffer<4xf32>
    %pairs = uop.view %table : !uop.buffer<4xf32> -> !uop.view<2x2xf32, strides [2, 1], offset 0>
    uop.range %i = 0 to 3 {
      %p = uop.gep %x[%i] : !uop.buffer<3xi64>
      %n = uop.load %p : i64
      %n2 = uop.cast %n : i64 to index
      %one = uop.const 1 : index
      %q = uop.gep %pairs[%n2, %one] : !uop.view<2x2xf32, strides [2, 1], offset 0>
      %t = uop.load %q : f32
      %o = uop.gep %y[%i] : !uop.buffer<8xf32>
      uop.store %t, %o : f32
    }
    uop.range %e = 0 to 8 step 4 {
      %pe = uop.gep %v[%e] : !uop.buffer<8xf32>
      %four = uop.vload %pe : vector<4xf32>
      %s0 = uop.reduce_add %four : vector<4xf32> to f32
      %o0 = uop.gep %y[%e] : !uop.buffer<8xf32>
      uop.store %s0, %o0 : f32
    }
    uop.range %f = 0 to 6 {
      %pf = uop.gep %v[%f] : !uop.buffer<8xf32>
      %tail = uop.vload %pf : vector<4xf32>
      %s1 = uop.reduce_add %tail : vector<4xf32> to f32
      %o1 = uop.gep %y[%f] : !uop.buffer<8xf32>
      uop.store %s1, %o1 : f32
    }
    func.return
  }
}
