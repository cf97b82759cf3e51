// RUN: zant-opt %s --split-input-file -p expand-transcendentals | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'expand-transcendentals{fma=true}' | filecheck %s --check-prefix=FMA
// RUN: zant-opt %s --split-input-file -p 'set-target{target=host cpu=x86-64-avx2},expand-transcendentals' | filecheck %s --check-prefix=FMA
// RUN: zant-opt %s --split-input-file -p 'set-target{target=host cpu=x86-64-avx},expand-transcendentals' | filecheck %s
// RUN: zant-opt %s --split-input-file -p 'expand-transcendentals{fma=true},vectorize{width=16}' | filecheck %s --check-prefix=VEC
// RUN: zant-opt %s --split-input-file -p 'expand-transcendentals{fma=true},vectorize{width=16},plan-arenas' -t 'zig{name=net}' | filecheck %s --check-prefix=ZIG

// An f32 exp becomes a clamp to [-104, 89], k = round(x·log2 e) by the 1.5·2^23 trick, a
// Cody–Waite reduction, a degree-6 polynomial, and 2^k in two factors picked by the sign of x:
// (P·2^-24)·2^(k+24) below 0, (P·2)·2^(k-1) above, the second built from the bits of j. Without
// `fma` each multiply-add is a mul and an add; with it, one uop.fma (@mulAdd). The loop then
// vectorizes: the bit casts and the integer select work lane by lane.

// CHECK-LABEL: func.func @exp()
// CHECK:         %a = uop.load %px : f32
// CHECK-NOT:     uop.exp
// CHECK-NOT:     uop.fma
// CHECK:         [[LO:%.*]] = uop.const -1.040000e+02 : f32
// CHECK-NEXT:    [[X1:%.*]] = uop.max %a, [[LO]] : f32
// CHECK-NEXT:    [[HI:%.*]] = uop.const 8.900000e+01 : f32
// CHECK-NEXT:    [[X:%.*]] = uop.min [[X1]], [[HI]] : f32
// CHECK-NEXT:    [[LOG2E:%.*]] = uop.const 1.44269502 : f32
// CHECK-NEXT:    [[MAGIC:%.*]] = uop.const 0x4B400000 : f32
// CHECK-NEXT:    [[XL:%.*]] = uop.mul [[X]], [[LOG2E]] : f32
// CHECK-NEXT:    [[J:%.*]] = uop.add [[XL]], [[MAGIC]] : f32
// CHECK:         [[NEG:%.*]] = uop.cmplt [[X]], {{%.*}} : f32
// CHECK:         [[TINY:%.*]] = uop.const 5.96046448e-08 : f32
// CHECK-NEXT:    [[TWO:%.*]] = uop.const 2.000000e+00 : f32
// CHECK-NEXT:    [[F:%.*]] = uop.where [[NEG]], [[TINY]], [[TWO]] : f32
// CHECK-NEXT:    [[PF:%.*]] = uop.mul {{%.*}}, [[F]] : f32
// CHECK-NEXT:    [[B24:%.*]] = uop.const 1266679808 : i32
// CHECK-NEXT:    [[BM1:%.*]] = uop.const 1056964608 : i32
// CHECK-NEXT:    [[BIAS:%.*]] = uop.where [[NEG]], [[B24]], [[BM1]] : i32
// CHECK-NEXT:    [[BITS:%.*]] = uop.bitcast [[J]] : f32 to i32
// CHECK-NEXT:    [[SHIFT:%.*]] = uop.const 8388608 : i32
// CHECK-NEXT:    [[FIELD:%.*]] = uop.mul [[BITS]], [[SHIFT]] : i32
// CHECK-NEXT:    [[E:%.*]] = uop.add [[FIELD]], [[BIAS]] : i32
// CHECK-NEXT:    [[S:%.*]] = uop.bitcast [[E]] : i32 to f32
// CHECK-NEXT:    %r = uop.mul [[PF]], [[S]] : f32
// CHECK-NEXT:    uop.store %r, %po : f32

// FMA-LABEL: func.func @exp()
// FMA:         [[X:%.*]] = uop.min {{%.*}}, {{%.*}} : f32
// FMA-NEXT:    [[LOG2E:%.*]] = uop.const 1.44269502 : f32
// FMA-NEXT:    [[MAGIC:%.*]] = uop.const 0x4B400000 : f32
// FMA-NEXT:    [[J:%.*]] = uop.fma [[X]], [[LOG2E]], [[MAGIC]] : f32
// FMA-NEXT:    [[MAGIC2:%.*]] = uop.const 0x4B400000 : f32
// FMA-NEXT:    [[K:%.*]] = uop.sub [[J]], [[MAGIC2]] : f32
// FMA-NEXT:    [[HI:%.*]] = uop.const -0.693359375 : f32
// FMA-NEXT:    [[R1:%.*]] = uop.fma [[K]], [[HI]], [[X]] : f32
// FMA-NEXT:    [[LO:%.*]] = uop.const 0.000212194442 : f32
// FMA-NEXT:    [[R:%.*]] = uop.fma [[K]], [[LO]], [[R1]] : f32
// FMA-COUNT-6: uop.fma {{%.*}}, [[R]], {{%.*}} : f32
// FMA-NOT:     uop.add {{.*}} : f32
// FMA:         %r = uop.mul {{%.*}}, {{%.*}} : f32

// VEC-LABEL: func.func @exp()
// VEC:         uop.range %i = 0 to 64 step 16 {
// VEC:           %a = uop.vload %px : vector<16xf32>
// VEC:           uop.fma {{%.*}}, {{%.*}}, {{%.*}} : vector<16xf32>
// VEC:           uop.where {{%.*}}, {{%.*}}, {{%.*}} : vector<16xi1>, vector<16xi32>
// VEC:           uop.bitcast {{%.*}} : vector<16xf32> to vector<16xi32>
// VEC:           uop.bitcast {{%.*}} : vector<16xi32> to vector<16xf32>
// VEC:           uop.vstore %r, %po : vector<16xf32>

// ZIG-LABEL: export fn net_predict(
// ZIG:         while (idx_i < 64) : (idx_i += 16) {
// ZIG:           @mulAdd(@Vector(16, f32),
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

// exp(-|x|) (Softplus's) is ≤ 0 or NaN: no upper clamp, and one power-of-two factor, 2^(k+24),
// times the polynomial scaled by 2^-24 (its coefficients: exact).

// CHECK-LABEL: func.func @exp_of_minus_abs()
// CHECK:         %n = uop.neg %m : f32
// CHECK-NEXT:    [[LO:%.*]] = uop.const -1.040000e+02 : f32
// CHECK-NEXT:    [[X:%.*]] = uop.max %n, [[LO]] : f32
// CHECK-NOT:     uop.min
// CHECK-NOT:     uop.where
// CHECK:         [[C6:%.*]] = uop.const 8.24494778e-11 : f32
// CHECK:         [[B24:%.*]] = uop.const 1266679808 : i32
// CHECK-NEXT:    [[E:%.*]] = uop.add {{%.*}}, [[B24]] : i32
// CHECK-NEXT:    [[S:%.*]] = uop.bitcast [[E]] : i32 to f32
// CHECK-NEXT:    %e = uop.mul {{%.*}}, [[S]] : f32
// CHECK-NEXT:    uop.store %e, %po : f32
func.func @exp_of_minus_abs() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<64xf32>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<64xf32>
  uop.range %i = 0 to 64 {
    %px = uop.gep %x[%i] : !uop.buffer<64xf32>
    %po = uop.gep %o[%i] : !uop.buffer<64xf32>
    %a = uop.load %px : f32
    %m = uop.abs %a : f32
    %n = uop.neg %m : f32
    %e = uop.exp %n : f32
    uop.store %e, %po : f32
  }
  func.return
}

// -----

// Sigmoid as onnx-to-uop writes it, (x < 0 ? e : 1)/(1 + e) with e = exp(-|x|), is replaced
// whole: x clamped to [-104, 18], k = round(-x·log2 e), n = 2^(24-k) from the bits of j, p the
// polynomial times 2^24 at -r, and σ = n/(n + p): no select, one division.

// CHECK-LABEL: func.func @sigmoid()
// CHECK:         %a = uop.load %px : f32
// CHECK-NOT:     uop.exp
// CHECK-NOT:     uop.abs
// CHECK-NOT:     uop.where
// CHECK-NOT:     uop.cmplt
// CHECK:         [[LO:%.*]] = uop.const -1.040000e+02 : f32
// CHECK-NEXT:    [[X1:%.*]] = uop.max %a, [[LO]] : f32
// CHECK-NEXT:    [[HI:%.*]] = uop.const 1.800000e+01 : f32
// CHECK-NEXT:    [[Y:%.*]] = uop.min [[X1]], [[HI]] : f32
// CHECK-NEXT:    [[MLOG2E:%.*]] = uop.const -1.44269502 : f32
// CHECK-NEXT:    {{%.*}} = uop.const 0x4B400000 : f32
// CHECK-NEXT:    {{%.*}} = uop.mul [[Y]], [[MLOG2E]] : f32
// CHECK:         [[C0:%.*]] = uop.const 0x4B800000 : f32
// CHECK:         [[BITS:%.*]] = uop.bitcast [[J:%.*]] : f32 to i32
// CHECK-NEXT:    [[SHIFT:%.*]] = uop.const 8388608 : i32
// CHECK-NEXT:    [[FIELD:%.*]] = uop.mul [[BITS]], [[SHIFT]] : i32
// CHECK-NEXT:    [[B:%.*]] = uop.const 1266679808 : i32
// CHECK-NEXT:    [[NB:%.*]] = uop.sub [[B]], [[FIELD]] : i32
// CHECK-NEXT:    [[N:%.*]] = uop.bitcast [[NB]] : i32 to f32
// CHECK-NEXT:    [[D:%.*]] = uop.add [[N]], [[P:%.*]] : f32
// CHECK-NEXT:    %r = uop.div [[N]], [[D]] : f32
// CHECK-NEXT:    uop.store %r, %po : f32
// CHECK-NOT:     uop.exp

// FMA-LABEL: func.func @sigmoid()
// FMA:         [[J:%.*]] = uop.fma {{%.*}}, {{%.*}}, {{%.*}} : f32
// FMA-COUNT-8: uop.fma
// FMA-NOT:     uop.mul {{.*}} : f32
// FMA:         %r = uop.div
func.func @sigmoid() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<64xf32>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<64xf32>
  uop.range %i = 0 to 64 {
    %px = uop.gep %x[%i] : !uop.buffer<64xf32>
    %po = uop.gep %o[%i] : !uop.buffer<64xf32>
    %a = uop.load %px : f32
    %m = uop.abs %a : f32
    %n = uop.neg %m : f32
    %e = uop.exp %n : f32
    %one = uop.const 1.0 : f32
    %zero = uop.const 0.0 : f32
    %neg = uop.cmplt %a, %zero : f32
    %num = uop.where %neg, %e, %one : f32
    %d = uop.add %one, %e : f32
    %r = uop.div %num, %d : f32
    uop.store %r, %po : f32
  }
  func.return
}

// -----

// The recurrent cells' 1/(1 + exp(-x)) and the ML ops' recip(exp(-x) + 1) are the same σ;
// where an intermediate value is also used elsewhere (here e), the pattern is left alone and
// only the exp is expanded.

// CHECK-LABEL: func.func @sigmoid_forms()
// CHECK-NOT:     uop.exp
// CHECK-NOT:     uop.recip
// CHECK:         %r = uop.div {{%.*}}, {{%.*}} : f32
// CHECK:         %s = uop.div {{%.*}}, {{%.*}} : f32
// CHECK:         uop.where
// CHECK:         %e = uop.mul
// CHECK:         %t = uop.div %one, %d : f32
// CHECK-NEXT:    uop.store %t, %po : f32
// CHECK-NEXT:    uop.store %e, %po : f32
func.func @sigmoid_forms() {
  %x = uop.define_global "input" 0 "x" : !uop.buffer<64xf32>
  %o = uop.define_global "output" 0 "o" : !uop.buffer<64xf32>
  uop.range %i = 0 to 64 {
    %px = uop.gep %x[%i] : !uop.buffer<64xf32>
    %po = uop.gep %o[%i] : !uop.buffer<64xf32>
    %a = uop.load %px : f32
    %one = uop.const 1.0 : f32
    %n1 = uop.neg %a : f32
    %e1 = uop.exp %n1 : f32
    %d1 = uop.add %one, %e1 : f32
    %r = uop.div %one, %d1 : f32
    uop.store %r, %po : f32
    %n2 = uop.neg %a : f32
    %e2 = uop.exp %n2 : f32
    %d2 = uop.add %e2, %one : f32
    %s = uop.recip %d2 : f32
    uop.store %s, %po : f32
    %n = uop.neg %a : f32
    %e = uop.exp %n : f32
    %d = uop.add %one, %e : f32
    %t = uop.div %one, %d : f32
    uop.store %t, %po : f32
    uop.store %e, %po : f32
  }
  func.return
}

// -----

// tanh: x + x³·P(x²) where |x| < 0.625, else 1 - 2/(e^(2a) + 1), a = min(|x|, 10), picked per
// element, then the sign of x ORed into the bits (tanh(-0) = -0); vectorized, the compare is a
// lane mask and the pick a @select.

// CHECK-LABEL: func.func @tanh()
// CHECK-NOT:     uop.tanh
// CHECK:         [[A:%.*]] = uop.abs %a : f32
// CHECK:         [[T:%.*]] = uop.const 6.250000e-01 : f32
// CHECK-NEXT:    [[SMALL:%.*]] = uop.cmplt [[A]], [[T]] : f32
// CHECK-NEXT:    [[PICK:%.*]] = uop.where [[SMALL]], {{%.*}}, {{%.*}} : f32
// CHECK-NEXT:    [[XB:%.*]] = uop.bitcast %a : f32 to i32
// CHECK-NEXT:    [[SIGN:%.*]] = uop.const -2147483648 : i32
// CHECK-NEXT:    [[XS:%.*]] = uop.and [[XB]], [[SIGN]] : i32
// CHECK-NEXT:    [[PB:%.*]] = uop.bitcast [[PICK]] : f32 to i32
// CHECK-NEXT:    [[SB:%.*]] = uop.or [[PB]], [[XS]] : i32
// CHECK-NEXT:    %r = uop.bitcast [[SB]] : i32 to f32
// CHECK-NEXT:    uop.store %r, %po : f32

// The large branch's polynomial by pairs (Estrin): s², three c_i + c_(i+1)·s, then three steps
// in s² (a shorter dependent chain than Horner's).

// FMA-LABEL: func.func @tanh()
// FMA:         [[A:%.*]] = uop.abs %a : f32
// FMA:         [[S2:%.*]] = uop.mul [[S:%.*]], [[S]] : f32
// FMA-COUNT-3: uop.fma {{%.*}}, [[S]], {{%.*}} : f32
// FMA:         [[Q:%.*]] = uop.fma {{%.*}}, [[S2]], {{%.*}} : f32
// FMA-NEXT:    [[Q2:%.*]] = uop.fma [[Q]], [[S2]], {{%.*}} : f32
// FMA-NEXT:    {{%.*}} = uop.fma [[Q2]], [[S2]], {{%.*}} : f32

// VEC-LABEL: func.func @tanh()
// VEC:         [[SMALL:%.*]] = uop.cmplt {{%.*}}, {{%.*}} : vector<16xf32>
// VEC-NEXT:    {{%.*}} = uop.where [[SMALL]], {{%.*}}, {{%.*}} : vector<16xi1>, vector<16xf32>
// VEC:         uop.or {{%.*}}, {{%.*}} : vector<16xi32>
// VEC-NEXT:    %r = uop.bitcast {{%.*}} : vector<16xi32> to vector<16xf32>
// VEC-NEXT:    uop.vstore %r, %po : vector<16xf32>

// ZIG-LABEL: export fn net_predict(
// ZIG:         @select(f32,
// ZIG:         const buf_r: @Vector(16, f32) = @as(@Vector(16, f32), @bitCast(
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

// erf: x·P(x²) where |x| < 1, else ±(1 - erfc) by Numerical Recipes' erfcc on min(|x|, 4)
// (whose exp is expanded too, its 2^k one normal factor); f64 and f16 keep their calls.

// CHECK-LABEL: func.func @erf()
// CHECK-NOT:     uop.erf %a
// CHECK:         [[A:%.*]] = uop.abs %a : f32
// CHECK:         [[FOUR:%.*]] = uop.const 4.000000e+00 : f32
// CHECK-NEXT:    {{%.*}} = uop.min [[A]], [[FOUR]] : f32
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
