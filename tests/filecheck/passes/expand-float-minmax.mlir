// RUN: zant-opt %s -p expand-float-minmax | filecheck %s
// RUN: zant-opt %s -p expand-float-minmax,plan-arenas -t 'zig{name=net}' | filecheck %s --check-prefix=ZIG

// A float max/min against a literal that is not NaN (a Relu or Clip bound, on either side)
// becomes one compare and one select: only the other operand can be NaN, fails the compare and
// is returned. On vectors against a splat of such a literal the same, lane by lane (a vector of
// i1 picks the lanes; the printer spells it @select). Against a NaN literal (or its splat),
// between two values or on integers the op stays, printed with the helpers that test both
// operands for NaN.

// CHECK-LABEL: func.func @main()
// CHECK:         %zero = uop.const 0.000000e+00 : f32
// CHECK-NEXT:    %six = uop.const 6.000000e+00 : f32
// CHECK-NEXT:    %nan = uop.const 0x7fc00000 : f32
// CHECK-NEXT:    %x = uop.load %p : f32
// CHECK-NEXT:    [[LT:%.*]] = uop.cmplt %x, %zero : f32
// CHECK-NEXT:    [[RELU:%.*]] = uop.where [[LT]], %zero, %x : f32
// CHECK-NEXT:    [[GT:%.*]] = uop.cmplt %six, [[RELU]] : f32
// CHECK-NEXT:    [[RELU6:%.*]] = uop.where [[GT]], %six, [[RELU]] : f32
// CHECK-NEXT:    [[LT2:%.*]] = uop.cmplt %x, %six : f32
// CHECK-NEXT:    [[SWAPPED:%.*]] = uop.where [[LT2]], %six, %x : f32
// CHECK-NEXT:    %with_nan = uop.max %x, %nan : f32
// CHECK-NEXT:    %both = uop.min %x, [[RELU]] : f32
// CHECK:         %int = uop.max %n, %m : i32
// CHECK:         [[VLT:%.*]] = uop.cmplt %xv, %zv : vector<4xf32>
// CHECK-NEXT:    [[V:%.*]] = uop.where [[VLT]], %zv, %xv : vector<4xi1>, vector<4xf32>
// CHECK-NEXT:    [[VGT:%.*]] = uop.cmplt %sv, [[V]] : vector<4xf32>
// CHECK-NEXT:    [[V6:%.*]] = uop.where [[VGT]], %sv, [[V]] : vector<4xi1>, vector<4xf32>
// CHECK-NEXT:    %vnan = uop.max [[V6]], %nv : vector<4xf32>
// CHECK-NEXT:    %vboth = uop.min %vnan, %xv : vector<4xf32>

// ZIG:      const buf_relu: f32 = if (buf_x < @as(f32, 0x0.0p+0)) @as(f32, 0x0.0p+0) else buf_x;
// ZIG-NEXT: const buf_relu6: f32 = if (@as(f32, 0x1.8000000000000p+2) < buf_relu) @as(f32, 0x1.8000000000000p+2) else buf_relu;
// ZIG-NEXT: const buf_swapped: f32 = if (buf_x < @as(f32, 0x1.8000000000000p+2)) @as(f32, 0x1.8000000000000p+2) else buf_x;
// ZIG-NEXT: const buf_with_nan: f32 = zant_fmax(f32, buf_x, @as(f32, @bitCast(@as(u32, 0x7fc00000))));
// ZIG-NEXT: const buf_both: f32 = zant_fmin(f32, buf_x, buf_relu);
// ZIG:      const buf_v: @Vector(4, f32) = @select(f32, buf_xv < buf_zv, buf_zv, buf_xv);
// ZIG-NEXT: const buf_v6: @Vector(4, f32) = @select(f32, buf_sv < buf_v, buf_sv, buf_v);
// ZIG-NEXT: const buf_vnan: @Vector(4, f32) = zant_vfmax(@Vector(4, f32), buf_v6, buf_nv);
// ZIG-NEXT: const buf_vboth: @Vector(4, f32) = zant_vfmin(@Vector(4, f32), buf_vnan, buf_xv);

builtin.module {
  func.func @main() {
    %in = uop.define_global "input" 0 "in" : !uop.buffer<1xf32>
    %ints = uop.define_global "input" 1 "ints" : !uop.buffer<2xi32>
    %out = uop.define_global "output" 0 "out" : !uop.buffer<1xf32>
    %iout = uop.define_global "output" 1 "iout" : !uop.buffer<1xi32>
    %vout = uop.define_global "output" 2 "vout" : !uop.buffer<4xf32>
    %c0 = uop.const 0 : index
    %p = uop.gep %in[%c0] : !uop.buffer<1xf32>
    %q = uop.gep %out[%c0] : !uop.buffer<1xf32>
    %zero = uop.const 0.0 : f32
    %six = uop.const 6.0 : f32
    %nan = uop.const 0x7FC00000 : f32
    %x = uop.load %p : f32
    %relu = uop.max %x, %zero : f32
    %relu6 = uop.min %relu, %six : f32
    %swapped = uop.max %six, %x : f32
    %with_nan = uop.max %x, %nan : f32
    %both = uop.min %x, %relu : f32
    %c1 = uop.const 1 : index
    %pn = uop.gep %ints[%c0] : !uop.buffer<2xi32>
    %pm = uop.gep %ints[%c1] : !uop.buffer<2xi32>
    %n = uop.load %pn : i32
    %m = uop.load %pm : i32
    %int = uop.max %n, %m : i32
    %pi = uop.gep %iout[%c0] : !uop.buffer<1xi32>
    uop.store %int, %pi : i32
    %xv = uop.broadcast %x : f32 to vector<4xf32>
    %zv = uop.broadcast %zero : f32 to vector<4xf32>
    %sv = uop.broadcast %six : f32 to vector<4xf32>
    %nv = uop.broadcast %nan : f32 to vector<4xf32>
    %v = uop.max %xv, %zv : vector<4xf32>
    %v6 = uop.min %v, %sv : vector<4xf32>
    %vnan = uop.max %v6, %nv : vector<4xf32>
    %vboth = uop.min %vnan, %xv : vector<4xf32>
    %vaddr = uop.gep %vout[%c0] : !uop.buffer<4xf32>
    uop.vstore %vboth, %vaddr : vector<4xf32>
    %s1 = uop.add %relu6, %swapped : f32
    %s2 = uop.add %s1, %with_nan : f32
    %s3 = uop.add %s2, %both : f32
    uop.store %s3, %q : f32
    func.return
  }
}
