// RUN: zant-opt %s -p plan-arenas -t 'zig{name=net}' | filecheck %s

// Lane-wise compares print as Zig's element-wise vector compares (a @Vector(N, bool)), a where
// with a vector condition as @select over the lane type (its compare inside it when it is the
// compare's only use, right after it), a where with a scalar condition picks whole vectors.

// CHECK:      const buf_lt: @Vector(4, bool) = buf_a < buf_b;
// CHECK-NEXT: const buf_eq: @Vector(4, bool) = buf_a == buf_b;
// CHECK-NEXT: const buf_lo: @Vector(4, f32) = @select(f32, buf_lt, buf_a, buf_b);
// CHECK-NEXT: const buf_pick: @Vector(4, f32) = @select(f32, buf_eq, buf_lo, buf_b);
// CHECK-NEXT: const buf_hi: @Vector(4, f32) = @select(f32, buf_a <= buf_b, buf_b, buf_a);
// CHECK-NEXT: const buf_xs: f32 = addr_pa.*;
// CHECK-NEXT: const buf_any: @Vector(4, f32) = if (buf_xs < @as(f32, 0x0.0p+0)) buf_pick else buf_hi;

builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<8xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
    %c0 = uop.const 0 : index
    %c4 = uop.const 4 : index
    %pa = uop.gep %x[%c0] : !uop.buffer<8xf32>
    %pb = uop.gep %x[%c4] : !uop.buffer<8xf32>
    %a = uop.vload %pa : vector<4xf32>
    %b = uop.vload %pb : vector<4xf32>
    %lt = uop.cmplt %a, %b : vector<4xf32>
    %eq = uop.cmpeq %a, %b : vector<4xf32>
    %lo = uop.where %lt, %a, %b : vector<4xi1>, vector<4xf32>
    %pick = uop.where %eq, %lo, %b : vector<4xi1>, vector<4xf32>
    %le = uop.cmple %a, %b : vector<4xf32>
    %hi = uop.where %le, %b, %a : vector<4xi1>, vector<4xf32>
    %xs = uop.load %pa : f32
    %zero = uop.const 0.0 : f32
    %s = uop.cmplt %xs, %zero : f32
    %any = uop.where %s, %pick, %hi : vector<4xf32>
    %py = uop.gep %y[%c0] : !uop.buffer<4xf32>
    uop.vstore %any, %py : vector<4xf32>
    func.return
  }
}
