// RUN: zant-opt %s --split-input-file -p expand-transcendentals | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'expand-transcendentals,vectorize{width=16}' | filecheck %s --check-prefix=VEC
// RUN: zant-opt %s --split-input-file -p 'expand-transcendentals,vectorize{width=16},plan-arenas' -t 'zig{name=net}' | filecheck %s --check-prefix=ZIG

// An f32 exp becomes a clamp to [-104, 89], k = round(x·log2 e) by the 1.5·2^23 trick, a
// Cody–Waite reduction, a degree-6 polynomial and two power-of-two scales built from bits.
// The loop then vectorizes: the bit casts work lane by lane.

// CHECK-LABEL: func.func @exp()
// CHECK:         %a = uop.load %px : f32
// CHECK-NOT:     uop.exp
// CHECK:         [[LO:%.*]] = uop.const -1.040000e+02 : f32
// CHECK-NEXT:    [[X1:%.*]] = uop.max %a, [[LO]] : f32
// CHECK-NEXT:    [[HI:%.*]] = uop.const 8.900000e+01 : f32
// CHECK-NEXT:    [[X:%.*]] = uop.min [[X1]], [[HI]] : f32
// CHECK-NEXT:    [[LOG2E:%.*]] = uop.const 1.44269502 : f32
// CHECK-NEXT:    [[XL:%.*]] = uop.mul [[X]], [[LOG2E]] : f32
// CHECK-NEXT:    [[MAGIC:%.*]] = uop.const 0x4B400000 : f32
// CHECK-NEXT:    [[J:%.*]] = uop.add [[XL]], [[MAGIC]] : f32
// CHECK:         [[BITS:%.*]] = uop.bitcast {{%.*}} : f32 to i32
// CHECK-NEXT:    [[BIAS:%.*]] = uop.const -1262485377 : i32
// CHECK-NEXT:    [[E:%.*]] = uop.add [[BITS]], [[BIAS]] : i32
// CHECK-NEXT:    [[SHIFT:%.*]] = uop.const 8388608 : i32
// CHECK-NEXT:    [[FIELD:%.*]] = uop.mul [[E]], [[SHIFT]] : i32
// CHECK-NEXT:    [[S1:%.*]] = uop.bitcast [[FIELD]] : i32 to f32
// CHECK-NEXT:    [[PS:%.*]] = uop.mul {{%.*}}, [[S1]] : f32
// CHECK:         [[S2:%.*]] = uop.bitcast {{%.*}} : i32 to f32
// CHECK-NEXT:    %r = uop.mul [[PS]], [[S2]] : f32
// CHECK-NEXT:    uop.store %r, %po : f32

// VEC-LABEL: func.func @exp()
// VEC:         uop.range %i = 0 to 64 step 16 {
// VEC:           %a = uop.vload %px : vector<16xf32>
// VEC:           uop.bitcast {{%.*}} : vector<16xf32> to vector<16xi32>
// VEC:           uop.bitcast {{%.*}} : vector<16xi32> to vector<16xf32>
// VEC:           uop.vstore %r, %po : vector<16xf32>

// ZIG-LABEL: export fn net_predict
// ZIG:         while (idx_i < 64) : (idx_i += 16) {
// ZIG:           @as(@Vector(16, i32), @bitCast(
// ZIG:           @as(@Vector(16, f32), @bitCast(
func.func @exp() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<64xf32>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<64xf32>
  uop.range %i = 0 to 64 {
    %px = uop.gep %x[%i] : !uop.buffer<64xf32>
    %po = uop.gep %o[%i] : !uop.buffer<64xf32>
    %a = uop.load %px : f32
    %r = uop.exp %a : f32
    uop.store %r, %po : f32
  }
  func.return
}

// -----

// tanh: x + x³·P(x²) where |x| < 0.625, else ±(1 - 2/(exp(2·min(|x|, 10)) + 1)), picked per
// element; vectorized, the compares are lane masks and the picks @select.

// CHECK-LABEL: func.func @tanh()
// CHECK:         [[A:%.*]] = uop.abs %a : f32
// CHECK-NOT:     uop.tanh
// CHECK:         [[T:%.*]] = uop.const 6.250000e-01 : f32
// CHECK-NEXT:    [[SMALL:%.*]] = uop.cmplt [[A]], [[T]] : f32
// CHECK-NEXT:    [[ZERO:%.*]] = uop.const 0.000000e+00 : f32
// CHECK-NEXT:    [[NEG:%.*]] = uop.cmplt %a, [[ZERO]] : f32
// CHECK-NEXT:    [[MINUS:%.*]] = uop.neg [[LARGE:%.*]] : f32
// CHECK-NEXT:    [[SIGNED:%.*]] = uop.where [[NEG]], [[MINUS]], [[LARGE]] : f32
// CHECK-NEXT:    %r = uop.where [[SMALL]], {{%.*}}, [[SIGNED]] : f32

// VEC-LABEL: func.func @tanh()
// VEC:         [[SMALL:%.*]] = uop.cmplt {{%.*}}, {{%.*}} : vector<16xf32>
// VEC:         %r = uop.where [[SMALL]], {{%.*}}, {{%.*}} : vector<16xi1>, vector<16xf32>
// VEC-NEXT:    uop.vstore %r, %po : vector<16xf32>

// ZIG-LABEL: export fn net_predict
// ZIG:         const buf_r: @Vector(16, f32) = @select(f32,
func.func @tanh() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<64xf32>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<64xf32>
  uop.range %i = 0 to 64 {
    %px = uop.gep %x[%i] : !uop.buffer<64xf32>
    %po = uop.gep %o[%i] : !uop.buffer<64xf32>
    %a = uop.load %px : f32
    %r = uop.tanh %a : f32
    uop.store %r, %po : f32
  }
  func.return
}

// -----

// erf: x·P(x²) where |x| < 1, else ±(1 - erfc) by Numerical Recipes' erfcc (whose exp is
// expanded too); f64 and f16 keep their calls.

// CHECK-LABEL: func.func @erf()
// CHECK:         [[A:%.*]] = uop.abs %a : f32
// CHECK-NOT:     uop.erf
// CHECK:         [[SMALL:%.*]] = uop.cmplt [[A]], {{%.*}} : f32
// CHECK:         %r = uop.where [[SMALL]], {{%.*}}, {{%.*}} : f32
// CHECK:         %d = uop.erf %b : f64
// CHECK-NEXT:    %c = uop.const 1.000000e+00 : f16
// CHECK-NEXT:    %h = uop.exp %c : f16
func.func @erf() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<64xf32>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<64xf32>
  uop.range %i = 0 to 64 {
    %px = uop.gep %x[%i] : !uop.buffer<64xf32>
    %po = uop.gep %o[%i] : !uop.buffer<64xf32>
    %a = uop.load %px : f32
    %r = uop.erf %a : f32
    uop.store %r, %po : f32
  }
  %b = uop.const 1.0 : f64
  %d = uop.erf %b : f64
  %c = uop.const 1.0 : f16
  %h = uop.exp %c : f16
  func.return
}
