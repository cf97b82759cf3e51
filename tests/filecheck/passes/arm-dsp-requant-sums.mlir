// RUN: zant-opt %s --split-input-file -p arm-dsp-requant-sums | filecheck %s

// A Conv's epilogue in its kernel (a depthwise row's sum, an smla's result) requantized with a
// per-channel multiplier table, one shift of 36 and zero point -128 (VWW's layers after a
// ReLU), the zero point an argument its one call passes as a literal (outlining made it one):
// one smmla whose addend is 2^3 + (-128)·2^4 = -2040, then ssat to 8 bits shifting by 4. The
// zero point, no longer read, leaves the kernel, its call and the caller.
// CHECK-LABEL: func.func private @depthwise(%{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: !uop.buffer<4xi32>, %{{.*}}: !uop.buffer<4xi8>)
// CHECK:         %[[C:.*]] = uop.const -2040 : i32
// CHECK:         %[[S:.*]] = arm_dsp.smla
// CHECK:         %[[M:.*]] = uop.load %{{.*}} : i32
// CHECK-NEXT:    %[[R:.*]] = arm_dsp.smmla %[[S]], %[[M]], %[[C]] : i32
// CHECK-NEXT:    %[[Y:.*]] = arm_dsp.ssat %[[R]] {bits = #builtin.int<8>, shift = #builtin.int<4>} : i32
// CHECK-NEXT:    %{{.*}} = uop.cast %[[Y]] : i32 to i8
// CHECK-NOT:     uop.shr
// CHECK-NOT:     i64
// CHECK-LABEL: func.func @main
// CHECK-NOT:     uop.const -128
// CHECK:         func.call @depthwise(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}) : (i32, i32, i32, !uop.buffer<4xi32>, !uop.buffer<4xi8>) -> ()
func.func private @depthwise(%a : i32, %b : i32, %t : i32, %mt : !uop.buffer<4xi32>, %y : !uop.buffer<4xi8>, %zp : i32) {
  %half = uop.const 34359738368 : i64
  %by = uop.const 36 : i64
  %lo = uop.const -128 : i32
  %hi = uop.const 127 : i32
  %zero = uop.const 0 : index
  %s = arm_dsp.smla %a, %b, %t {halves = "bb"} : i32
  %w0 = uop.cast %s : i32 to i64
  %pm = uop.gep %mt[%zero] : !uop.buffer<4xi32>
  %m = uop.load %pm : i32
  %m64 = uop.cast %m : i32 to i64
  %p = uop.mul %w0, %m64 : i64
  %q = uop.add %p, %half : i64
  %v = uop.shr %q, %by : i64
  %n = uop.cast %v : i64 to i32
  %z = uop.add %n, %zp : i32
  %c = uop.max %z, %lo : i32
  %d = uop.min %c, %hi : i32
  %out = uop.cast %d : i32 to i8
  %py = uop.gep %y[%zero] : !uop.buffer<4xi8>
  uop.store %out, %py : i8
  func.return
}
func.func @main(%a : i32, %b : i32, %t : i32, %mt : !uop.buffer<4xi32>, %y : !uop.buffer<4xi8>) {
  %zp8 = uop.const -128 : i8
  %zp = uop.cast %zp8 : i8 to i32
  func.call @depthwise(%a, %b, %t, %mt, %y, %zp) : (i32, i32, i32, !uop.buffer<4xi32>, !uop.buffer<4xi8>, i32) -> ()
  func.return
}

// -----

// A shift of 56 (r = 24) with zero point 127: the addend 2^23 + 127·2^24 is in int32, but the
// high word (up to 2^30) plus it is not, so the chain is kept as it is (arm-dsp-requant's own
// check, on the addend alone, would take it).
// CHECK-LABEL: func.func private @far_shift
// CHECK-NOT:     arm_dsp.smmla
// CHECK:         uop.shr {{.*}} : i64
func.func private @far_shift(%s : i32, %y : !uop.buffer<4xi8>) {
  %half = uop.const 36028797018963968 : i64
  %by = uop.const 56 : i64
  %m64 = uop.const 1073741824 : i64
  %zp = uop.const 127 : i32
  %lo = uop.const -128 : i32
  %hi = uop.const 127 : i32
  %zero = uop.const 0 : index
  %w0 = uop.cast %s : i32 to i64
  %p = uop.mul %w0, %m64 : i64
  %q = uop.add %p, %half : i64
  %v = uop.shr %q, %by : i64
  %n = uop.cast %v : i64 to i32
  %z = uop.add %n, %zp : i32
  %c = uop.max %z, %lo : i32
  %d = uop.min %c, %hi : i32
  %out = uop.cast %d : i32 to i8
  %py = uop.gep %y[%zero] : !uop.buffer<4xi8>
  uop.store %out, %py : i8
  func.return
}

// -----

// Two kernels alike up to their constants (a build for size shares them), not hot, with the
// shifts 36 and 37: SSAT's shift would make them two kernels, so it goes apart, a uop.shr by
// a literal (4, 5) before an ssat that does not shift; the addends 2^3 + 3·2^4 = 56 and
// 2^4 + 3·2^5 = 112 and the shifts are literals at the kernels' start. A hot kernel alike them (@hot) is
// built for speed and never shared: its ssat shifts.
// CHECK-LABEL: func.func private @twin_a
// CHECK:         %[[BY:.*]] = uop.const 4 : i32
// CHECK-NEXT:    %[[A:.*]] = uop.const 56 : i32
// CHECK:         %[[R:.*]] = arm_dsp.smmla %{{.*}}, %{{.*}}, %[[A]] : i32
// CHECK-NEXT:    %[[Q:.*]] = uop.shr %[[R]], %[[BY]] : i32
// CHECK-NEXT:    %{{.*}} = arm_dsp.ssat %[[Q]] {bits = #builtin.int<8>, shift = #builtin.int<0>} : i32
// CHECK-LABEL: func.func private @twin_b
// CHECK:         %[[BY:.*]] = uop.const 5 : i32
// CHECK-NEXT:    %[[A:.*]] = uop.const 112 : i32
// CHECK:         %[[R:.*]] = arm_dsp.smmla %{{.*}}, %{{.*}}, %[[A]] : i32
// CHECK-NEXT:    %[[Q:.*]] = uop.shr %[[R]], %[[BY]] : i32
// CHECK-NEXT:    %{{.*}} = arm_dsp.ssat %[[Q]] {bits = #builtin.int<8>, shift = #builtin.int<0>} : i32
// CHECK-LABEL: func.func private @hot
// CHECK:         arm_dsp.ssat %{{.*}} {bits = #builtin.int<8>, shift = #builtin.int<6>} : i32
func.func private @twin_a(%s : i32, %y : !uop.buffer<4xi8>) {
  %half = uop.const 34359738368 : i64
  %by = uop.const 36 : i64
  %m64 = uop.const 1073741824 : i64
  %zp = uop.const 3 : i32
  %lo = uop.const -128 : i32
  %hi = uop.const 127 : i32
  %zero = uop.const 0 : index
  %w0 = uop.cast %s : i32 to i64
  %p = uop.mul %w0, %m64 : i64
  %q = uop.add %p, %half : i64
  %v = uop.shr %q, %by : i64
  %n = uop.cast %v : i64 to i32
  %z = uop.add %n, %zp : i32
  %c = uop.max %z, %lo : i32
  %d = uop.min %c, %hi : i32
  %out = uop.cast %d : i32 to i8
  %py = uop.gep %y[%zero] : !uop.buffer<4xi8>
  uop.store %out, %py : i8
  func.return
}
func.func private @twin_b(%s : i32, %y : !uop.buffer<4xi8>) {
  %half = uop.const 68719476736 : i64
  %by = uop.const 37 : i64
  %m64 = uop.const 1073741824 : i64
  %zp = uop.const 3 : i32
  %lo = uop.const -128 : i32
  %hi = uop.const 127 : i32
  %zero = uop.const 0 : index
  %w0 = uop.cast %s : i32 to i64
  %p = uop.mul %w0, %m64 : i64
  %q = uop.add %p, %half : i64
  %v = uop.shr %q, %by : i64
  %n = uop.cast %v : i64 to i32
  %z = uop.add %n, %zp : i32
  %c = uop.max %z, %lo : i32
  %d = uop.min %c, %hi : i32
  %out = uop.cast %d : i32 to i8
  %py = uop.gep %y[%zero] : !uop.buffer<4xi8>
  uop.store %out, %py : i8
  func.return
}
func.func private @hot(%s : i32, %y : !uop.buffer<4xi8>) attributes {zant.hot} {
  %half = uop.const 137438953472 : i64
  %by = uop.const 38 : i64
  %m64 = uop.const 1073741824 : i64
  %zp = uop.const 3 : i32
  %lo = uop.const -128 : i32
  %hi = uop.const 127 : i32
  %zero = uop.const 0 : index
  %w0 = uop.cast %s : i32 to i64
  %p = uop.mul %w0, %m64 : i64
  %q = uop.add %p, %half : i64
  %v = uop.shr %q, %by : i64
  %n = uop.cast %v : i64 to i32
  %z = uop.add %n, %zp : i32
  %c = uop.max %z, %lo : i32
  %d = uop.min %c, %hi : i32
  %out = uop.cast %d : i32 to i8
  %py = uop.gep %y[%zero] : !uop.buffer<4xi8>
  uop.store %out, %py : i8
  func.return
}
