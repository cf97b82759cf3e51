// RUN: zant-opt %s --split-input-file -p schedule-in-place | filecheck %s
// RUN: zant-opt %s --split-input-file -p schedule-in-place,plan-arenas,verify-arena-plan | filecheck %s --check-prefix=PLAN
// RUN: zant-opt %s --split-input-file -p schedule-in-place,schedule-in-place | filecheck %s
// RUN: zant-opt %s --split-input-file -p "schedule-in-place{every=true}" | filecheck %s

// A pointwise conv (4 -> 4 channels, 2 pixels) with its output-channel blocks outermost, as the
// scalar lowering writes it: the block loop is sunk below the pixel loop, each pixel's 4 input
// channels are copied into a 4-byte line buffer first and read there, and the nest is marked.
// The plan then puts b over a (offset 0 both), the line buffer beside them.

// CHECK-LABEL: func.func @pointwise
// CHECK:         %staged = uop.define_local "b_staged" : !uop.buffer<4xi8>
// CHECK-NEXT:    [[LINE:%.*]] = uop.view %staged : !uop.buffer<4xi8> -> !uop.view<1x4x2xi8, strides [0, 1, 0], offset 0>
// CHECK-NEXT:    uop.range %n = 0 to 1 attributes {in_place = ["a", "b"]} {
// CHECK-NEXT:      uop.range %px = 0 to 2 {
// CHECK-NEXT:        uop.range [[C:%.*]] = 0 to 4 {
// CHECK-NEXT:          [[FROM:%.*]] = uop.gep %av[%n, [[C]], %px]
// CHECK-NEXT:          [[V:%.*]] = uop.load [[FROM]] : i8
// CHECK-NEXT:          [[TO:%.*]] = uop.gep [[LINE]][%n, [[C]], %px]
// CHECK-NEXT:          uop.store [[V]], [[TO]] : i8
// CHECK-NEXT:        }
// CHECK-NEXT:        uop.range %o = 0 to 4 step 2 {
// CHECK:               uop.range %c = 0 to 4 {
// CHECK-NEXT:            %ap = uop.gep [[LINE]][%n, %c, %px]
// CHECK-NOT:     uop.gep %av

// PLAN-LABEL: func.func @pointwise
// PLAN:         abi.arena "scratch" size 32 align 16 lower_bound 32
// PLAN:         uop.define_local "a" at 0
// PLAN:         uop.define_local "b" at 0
// PLAN:         uop.define_local "b_staged" at 16
builtin.module {
  func.func @pointwise() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<16xi8>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8xi8>
    %a = uop.define_local "a" : !uop.buffer<8xi8>
    uop.range %i = 0 to 8 {
      %p = uop.gep %x[%i] : !uop.buffer<8xi8>
      %v = uop.load %p : i8
      %q = uop.gep %a[%i] : !uop.buffer<8xi8>
      uop.store %v, %q : i8
    }
    %b = uop.define_local "b" : !uop.buffer<8xi8>
    %av = uop.view %a : !uop.buffer<8xi8> -> !uop.view<1x4x2xi8, strides [8, 2, 1], offset 0>
    %bv = uop.view %b : !uop.buffer<8xi8> -> !uop.view<1x4x2xi8, strides [8, 2, 1], offset 0>
    %wv = uop.view %w : !uop.buffer<16xi8> -> !uop.view<4x4xi8, strides [4, 1], offset 0>
    uop.range %n = 0 to 1 {
      uop.range %o = 0 to 4 step 2 {
        %one = uop.const 1 : index
        %o1 = uop.add %o, %one : index
        uop.range %px = 0 to 2 {
          %s0 = uop.define_acc 0 : i8
          %s1 = uop.define_acc 0 : i8
          uop.range %c = 0 to 4 {
            %ap = uop.gep %av[%n, %c, %px] : !uop.view<1x4x2xi8, strides [8, 2, 1], offset 0>
            %xv = uop.load %ap : i8
            %w0p = uop.gep %wv[%o, %c] : !uop.view<4x4xi8, strides [4, 1], offset 0>
            %w0 = uop.load %w0p : i8
            %w1p = uop.gep %wv[%o1, %c] : !uop.view<4x4xi8, strides [4, 1], offset 0>
            %w1 = uop.load %w1p : i8
            uop.mulacc %s0, %xv, %w0 : !uop.acc<i8>, i8
            uop.mulacc %s1, %xv, %w1 : !uop.acc<i8>, i8
          }
          %r0 = uop.acc_get %s0 : !uop.acc<i8>, i8
          %b0 = uop.gep %bv[%n, %o, %px] : !uop.view<1x4x2xi8, strides [8, 2, 1], offset 0>
          uop.store %r0, %b0 : i8
          %r1 = uop.acc_get %s1 : !uop.acc<i8>, i8
          %b1 = uop.gep %bv[%n, %o1, %px] : !uop.view<1x4x2xi8, strides [8, 2, 1], offset 0>
          uop.store %r1, %b1 : i8
        }
      }
    }
    uop.range %i = 0 to 8 {
      %p = uop.gep %b[%i] : !uop.buffer<8xi8>
      %v = uop.load %p : i8
      %q = uop.gep %y[%i] : !uop.buffer<8xi8>
      uop.store %v, %q : i8
    }
    func.return
  }
}

// -----

// A depthwise conv (2 channels, 4 pixels, 3 taps clamped to the row) with its channel loop
// outermost: each channel's plane (4 bytes) is copied first, the taps read the copy. The plane
// is contiguous in a, so the copy moves 4 bytes an iteration, every load before any store (one
// word load and store on the DSP cores).

// CHECK-LABEL: func.func @depthwise
// CHECK:         %staged = uop.define_local "b_staged" : !uop.buffer<4xi8>
// CHECK-NEXT:    [[PLANE:%.*]] = uop.view %staged : !uop.buffer<4xi8> -> !uop.view<2x4xi8, strides [0, 1], offset 0>
// CHECK-NEXT:    uop.range %c = 0 to 2 attributes {in_place = ["a", "b"]} {
// CHECK-NEXT:      uop.range [[P:%.*]] = 0 to 4 step 4 {
// CHECK-NEXT:        [[ONE:%.*]] = uop.const 1 : index
// CHECK-NEXT:        [[P1:%.*]] = uop.add [[P]], [[ONE]] : index
// CHECK-NEXT:        [[TWO:%.*]] = uop.const 2 : index
// CHECK-NEXT:        [[P2:%.*]] = uop.add [[P]], [[TWO]] : index
// CHECK-NEXT:        [[THREE:%.*]] = uop.const 3 : index
// CHECK-NEXT:        [[P3:%.*]] = uop.add [[P]], [[THREE]] : index
// CHECK-NEXT:        [[G0:%.*]] = uop.gep %av[%c, [[P]]]
// CHECK-NEXT:        [[V0:%.*]] = uop.load [[G0]] : i8
// CHECK-NEXT:        [[G1:%.*]] = uop.gep %av[%c, [[P1]]]
// CHECK-NEXT:        [[V1:%.*]] = uop.load [[G1]] : i8
// CHECK-NEXT:        [[G2:%.*]] = uop.gep %av[%c, [[P2]]]
// CHECK-NEXT:        [[V2:%.*]] = uop.load [[G2]] : i8
// CHECK-NEXT:        [[G3:%.*]] = uop.gep %av[%c, [[P3]]]
// CHECK-NEXT:        [[V3:%.*]] = uop.load [[G3]] : i8
// CHECK-NEXT:        [[S0:%.*]] = uop.gep [[PLANE]][%c, [[P]]]
// CHECK-NEXT:        uop.store [[V0]], [[S0]] : i8
// CHECK-NEXT:        [[S1:%.*]] = uop.gep [[PLANE]][%c, [[P1]]]
// CHECK-NEXT:        uop.store [[V1]], [[S1]] : i8
// CHECK-NEXT:        [[S2:%.*]] = uop.gep [[PLANE]][%c, [[P2]]]
// CHECK-NEXT:        uop.store [[V2]], [[S2]] : i8
// CHECK-NEXT:        [[S3:%.*]] = uop.gep [[PLANE]][%c, [[P3]]]
// CHECK-NEXT:        uop.store [[V3]], [[S3]] : i8
// CHECK-NEXT:      }
// CHECK:           uop.range %px = 0 to 4 {
// CHECK:             %ap = uop.gep [[PLANE]][%c, %k]

// PLAN-LABEL: func.func @depthwise
// PLAN:         uop.define_local "a" at 0
// PLAN:         uop.define_local "b" at 0

builtin.module {
  func.func @depthwise() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8xi8>
    %a = uop.define_local "a" : !uop.buffer<8xi8>
    uop.range %i = 0 to 8 {
      %p = uop.gep %x[%i] : !uop.buffer<8xi8>
      %v = uop.load %p : i8
      %q = uop.gep %a[%i] : !uop.buffer<8xi8>
      uop.store %v, %q : i8
    }
    %b = uop.define_local "b" : !uop.buffer<8xi8>
    %av = uop.view %a : !uop.buffer<8xi8> -> !uop.view<2x4xi8, strides [4, 1], offset 0>
    %bv = uop.view %b : !uop.buffer<8xi8> -> !uop.view<2x4xi8, strides [4, 1], offset 0>
    uop.range %c = 0 to 2 {
      uop.range %px = 0 to 4 {
        %s = uop.define_acc 0 : i8
        uop.range %t = 0 to 3 {
          %at = uop.add %px, %t : index
          %one = uop.const 1 : index
          %q = uop.sub %at, %one : index
          %zero = uop.const 0 : index
          %three = uop.const 3 : index
          %lo = uop.max %q, %zero : index
          %k = uop.min %lo, %three : index
          %ap = uop.gep %av[%c, %k] : !uop.view<2x4xi8, strides [4, 1], offset 0>
          %xv = uop.load %ap : i8
          uop.mulacc %s, %xv, %xv : !uop.acc<i8>, i8
        }
        %r = uop.acc_get %s : !uop.acc<i8>, i8
        %bp = uop.gep %bv[%c, %px] : !uop.view<2x4xi8, strides [4, 1], offset 0>
        uop.store %r, %bp : i8
      }
    }
    uop.range %i = 0 to 8 {
      %p = uop.gep %b[%i] : !uop.buffer<8xi8>
      %v = uop.load %p : i8
      %q = uop.gep %y[%i] : !uop.buffer<8xi8>
      uop.store %v, %q : i8
    }
    func.return
  }
}

// -----

// The column form of the DSP cores: pixel blocks of 2 copied into a column buffer first (a line
// buffer already), the last block clamped back (min(2 blk, 1): pixel 1 read again after block 0
// wrote it). Each lane is clamped to the last pixel instead (min(2 blk, 2), min(p0 + t, 2)):
// block 1 computes pixel 2 twice, from reads made before its stores. No copy is added.

// CHECK-LABEL: func.func @columns
// CHECK-NOT:     b_staged
// CHECK:         uop.range %blk = 0 to 2 attributes {in_place = ["a", "b"]} {
// CHECK:           [[TOP:%[0-9]+]] = uop.const 2 : index
// CHECK-NEXT:      %p0 = uop.min %twice, [[TOP]] : index
// CHECK:             %pt = uop.add %p0, %t : index
// CHECK-NEXT:        [[LANE:%.*]] = uop.min %pt, [[TOP]] : index
// CHECK-NEXT:        uop.gep %av[%c, [[LANE]]]

// PLAN-LABEL: func.func @columns
// PLAN:         uop.define_local "a" at 0
// PLAN:         uop.define_local "col" at 16
// PLAN:         uop.define_local "b" at 0

builtin.module {
  func.func @columns() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<6xi8>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<6xi8>
    %a = uop.define_local "a" : !uop.buffer<6xi8>
    uop.range %i = 0 to 6 {
      %p = uop.gep %x[%i] : !uop.buffer<6xi8>
      %v = uop.load %p : i8
      %q = uop.gep %a[%i] : !uop.buffer<6xi8>
      uop.store %v, %q : i8
    }
    %col = uop.define_local "col" : !uop.buffer<4xi8>
    %b = uop.define_local "b" : !uop.buffer<6xi8>
    %av = uop.view %a : !uop.buffer<6xi8> -> !uop.view<2x3xi8, strides [3, 1], offset 0>
    %bv = uop.view %b : !uop.buffer<6xi8> -> !uop.view<2x3xi8, strides [3, 1], offset 0>
    %cv = uop.view %col : !uop.buffer<4xi8> -> !uop.view<2x2xi8, strides [2, 1], offset 0>
    uop.range %blk = 0 to 2 {
      %two = uop.const 2 : index
      %twice = uop.mul %blk, %two : index
      %last = uop.const 1 : index
      %p0 = uop.min %twice, %last : index
      uop.range %c = 0 to 2 {
        uop.range %t = 0 to 2 {
          %pt = uop.add %p0, %t : index
          %ap = uop.gep %av[%c, %pt] : !uop.view<2x3xi8, strides [3, 1], offset 0>
          %v = uop.load %ap : i8
          %cp = uop.gep %cv[%t, %c] : !uop.view<2x2xi8, strides [2, 1], offset 0>
          uop.store %v, %cp : i8
        }
      }
      uop.range %o = 0 to 2 {
        uop.range %t = 0 to 2 {
          %s = uop.define_acc 0 : i8
          uop.range %c = 0 to 2 {
            %cp = uop.gep %cv[%t, %c] : !uop.view<2x2xi8, strides [2, 1], offset 0>
            %v = uop.load %cp : i8
            uop.mulacc %s, %v, %v : !uop.acc<i8>, i8
          }
          %r = uop.acc_get %s : !uop.acc<i8>, i8
          %pt = uop.add %p0, %t : index
          %bp = uop.gep %bv[%o, %pt] : !uop.view<2x3xi8, strides [3, 1], offset 0>
          uop.store %r, %bp : i8
        }
      }
    }
    uop.range %i = 0 to 6 {
      %p = uop.gep %b[%i] : !uop.buffer<6xi8>
      %v = uop.load %p : i8
      %q = uop.gep %y[%i] : !uop.buffer<6xi8>
      uop.store %v, %q : i8
    }
    func.return
  }
}

// -----

// A reversed copy: every element of a is read in its own iteration, no slice is smaller than
// a, so nothing is staged and the nest stays as it was, unmarked; the plan keeps them apart.

// CHECK-LABEL: func.func @reversed
// CHECK-NOT:     in_place
// CHECK-NOT:     b_staged
// CHECK:         uop.gep %a[%j]

// PLAN-LABEL: func.func @reversed
// PLAN:         uop.define_local "a" at 0
// PLAN:         uop.define_local "b" at 16

builtin.module {
  func.func @reversed() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<4xi8>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xi8>
    %a = uop.define_local "a" : !uop.buffer<4xi8>
    uop.range %i = 0 to 4 {
      %p = uop.gep %x[%i] : !uop.buffer<4xi8>
      %v = uop.load %p : i8
      %q = uop.gep %a[%i] : !uop.buffer<4xi8>
      uop.store %v, %q : i8
    }
    %b = uop.define_local "b" : !uop.buffer<4xi8>
    uop.range %i = 0 to 4 {
      %three = uop.const 3 : index
      %j = uop.sub %three, %i : index
      %p = uop.gep %a[%j] : !uop.buffer<4xi8>
      %v = uop.load %p : i8
      %q = uop.gep %b[%i] : !uop.buffer<4xi8>
      uop.store %v, %q : i8
    }
    uop.range %i = 0 to 4 {
      %p = uop.gep %b[%i] : !uop.buffer<4xi8>
      %v = uop.load %p : i8
      %q = uop.gep %y[%i] : !uop.buffer<4xi8>
      uop.store %v, %q : i8
    }
    func.return
  }
}

// -----

// The depthwise form of the DSP cores: one channel loop per output region (here a left border
// and the rest). The sibling channel loops are fused into one around both regions (the pure
// %two moved ahead of it), then each channel's plane is staged as above.

// CHECK-LABEL: func.func @depthwise_regions
// CHECK:         uop.range %n = 0 to 1 attributes {in_place = ["a", "b"]} {
// CHECK-NEXT:      %two = uop.const 2 : index
// CHECK-NEXT:      uop.range %c = 0 to 2 {
// CHECK-NEXT:        uop.range [[P:%.*]] = 0 to 4 step 4 {
// CHECK:             uop.range %px = 0 to 1 {
// CHECK:             uop.range [[PX:%.*]] = 1 to 4 {
// CHECK-NOT:     uop.range %c

// PLAN-LABEL: func.func @depthwise_regions
// PLAN:         uop.define_local "a" at 0
// PLAN:         uop.define_local "b" at 0

builtin.module {
  func.func @depthwise_regions() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8xi8>
    %a = uop.define_local "a" : !uop.buffer<8xi8>
    uop.range %i = 0 to 8 {
      %p = uop.gep %x[%i] : !uop.buffer<8xi8>
      %v = uop.load %p : i8
      %q = uop.gep %a[%i] : !uop.buffer<8xi8>
      uop.store %v, %q : i8
    }
    %b = uop.define_local "b" : !uop.buffer<8xi8>
    %av = uop.view %a : !uop.buffer<8xi8> -> !uop.view<2x4xi8, strides [4, 1], offset 0>
    %bv = uop.view %b : !uop.buffer<8xi8> -> !uop.view<2x4xi8, strides [4, 1], offset 0>
    uop.range %n = 0 to 1 {
      uop.range %c = 0 to 2 {
        uop.range %px = 0 to 1 {
          %one = uop.const 1 : index
          %r = uop.add %px, %one : index
          %p0 = uop.gep %av[%c, %px] : !uop.view<2x4xi8, strides [4, 1], offset 0>
          %v0 = uop.load %p0 : i8
          %p1 = uop.gep %av[%c, %r] : !uop.view<2x4xi8, strides [4, 1], offset 0>
          %v1 = uop.load %p1 : i8
          %s = uop.add %v0, %v1 : i8
          %q = uop.gep %bv[%c, %px] : !uop.view<2x4xi8, strides [4, 1], offset 0>
          uop.store %s, %q : i8
        }
      }
      %two = uop.const 2 : index
      uop.range %c = 0 to 2 {
        uop.range %px = 1 to 4 {
          %l = uop.sub %px, %two : index
          %one = uop.const 1 : index
          %r = uop.add %l, %one : index
          %p0 = uop.gep %av[%c, %r] : !uop.view<2x4xi8, strides [4, 1], offset 0>
          %v0 = uop.load %p0 : i8
          %p1 = uop.gep %av[%c, %px] : !uop.view<2x4xi8, strides [4, 1], offset 0>
          %v1 = uop.load %p1 : i8
          %s = uop.add %v0, %v1 : i8
          %q = uop.gep %bv[%c, %px] : !uop.view<2x4xi8, strides [4, 1], offset 0>
          uop.store %s, %q : i8
        }
      }
    }
    uop.range %i = 0 to 8 {
      %p = uop.gep %b[%i] : !uop.buffer<8xi8>
      %v = uop.load %p : i8
      %q = uop.gep %y[%i] : !uop.buffer<8xi8>
      uop.store %v, %q : i8
    }
    func.return
  }
}

// -----

// The same regions as top-level nests of their own (one iteration each, adjacent, both storing
// into b), as the DSP depthwise form comes out of a patched tile: they are joined into the
// first, then fused and staged as above.

// CHECK-LABEL: func.func @depthwise_region_nests
// CHECK:         uop.range %n = 0 to 1 attributes {in_place = ["a", "b"]} {
// CHECK-NEXT:      %two = uop.const 2 : index
// CHECK-NEXT:      uop.range %c = 0 to 2 {
// CHECK-NEXT:        uop.range [[P:%.*]] = 0 to 4 step 4 {
// CHECK:             uop.range %px = 0 to 1 {
// CHECK:             uop.range [[PX:%.*]] = 1 to 4 {
// CHECK-NOT:     uop.range %c
// CHECK-NOT:     uop.range %m

// PLAN-LABEL: func.func @depthwise_region_nests
// PLAN:         uop.define_local "a" at 0
// PLAN:         uop.define_local "b" at 0

builtin.module {
  func.func @depthwise_region_nests() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8xi8>
    %a = uop.define_local "a" : !uop.buffer<8xi8>
    uop.range %i = 0 to 8 {
      %p = uop.gep %x[%i] : !uop.buffer<8xi8>
      %v = uop.load %p : i8
      %q = uop.gep %a[%i] : !uop.buffer<8xi8>
      uop.store %v, %q : i8
    }
    %b = uop.define_local "b" : !uop.buffer<8xi8>
    %av = uop.view %a : !uop.buffer<8xi8> -> !uop.view<2x4xi8, strides [4, 1], offset 0>
    %bv = uop.view %b : !uop.buffer<8xi8> -> !uop.view<2x4xi8, strides [4, 1], offset 0>
    uop.range %n = 0 to 1 {
      uop.range %c = 0 to 2 {
        uop.range %px = 0 to 1 {
          %one = uop.const 1 : index
          %r = uop.add %px, %one : index
          %p0 = uop.gep %av[%c, %px] : !uop.view<2x4xi8, strides [4, 1], offset 0>
          %v0 = uop.load %p0 : i8
          %p1 = uop.gep %av[%c, %r] : !uop.view<2x4xi8, strides [4, 1], offset 0>
          %v1 = uop.load %p1 : i8
          %s = uop.add %v0, %v1 : i8
          %q = uop.gep %bv[%c, %px] : !uop.view<2x4xi8, strides [4, 1], offset 0>
          uop.store %s, %q : i8
        }
      }
    }
    uop.range %m = 0 to 1 {
      %two = uop.const 2 : index
      uop.range %c = 0 to 2 {
        uop.range %px = 1 to 4 {
          %l = uop.sub %px, %two : index
          %one = uop.const 1 : index
          %r = uop.add %l, %one : index
          %p0 = uop.gep %av[%c, %r] : !uop.view<2x4xi8, strides [4, 1], offset 0>
          %v0 = uop.load %p0 : i8
          %p1 = uop.gep %av[%c, %px] : !uop.view<2x4xi8, strides [4, 1], offset 0>
          %v1 = uop.load %p1 : i8
          %s = uop.add %v0, %v1 : i8
          %q = uop.gep %bv[%c, %px] : !uop.view<2x4xi8, strides [4, 1], offset 0>
          uop.store %s, %q : i8
        }
      }
    }
    uop.range %i = 0 to 8 {
      %p = uop.gep %b[%i] : !uop.buffer<8xi8>
      %v = uop.load %p : i8
      %q = uop.gep %y[%i] : !uop.buffer<8xi8>
      uop.store %v, %q : i8
    }
    func.return
  }
}

// -----

// A depthwise conv over planes of rows of 3 (2 channels, 2 x 3 pixels; taps along a row and
// the row above, clamped to the plane): the innermost run, 3 bytes, is no word, but the plane (6 bytes) runs
// contiguous in a and in its copy, so the copy moves the merged run through views of both
// with the plane's dimensions merged (`_merged_run`): one pass of 4 bytes, all loaded before
// any is stored (one word on the DSP cores), then the other 2 (KWS's 25 x 5 planes: 31 words
// and a byte, where each row of 5 was copied a byte at a time).

// CHECK-LABEL: func.func @depthwise_odd_rows
// CHECK:         %av = uop.view %a : !uop.buffer<12xi8> -> !uop.view<2x2x3xi8, strides [6, 3, 1], offset 0>
// CHECK-NEXT:    [[FLAT:%.*]] = uop.view %a : !uop.buffer<12xi8> -> !uop.view<2x6xi8, strides [6, 1], offset 0>
// CHECK:         %staged = uop.define_local "b_staged" : !uop.buffer<6xi8>
// CHECK-NEXT:    [[PLANE:%.*]] = uop.view %staged : !uop.buffer<6xi8> -> !uop.view<2x2x3xi8, strides [0, 3, 1], offset 0>
// CHECK-NEXT:    [[COPY:%.*]] = uop.view %staged : !uop.buffer<6xi8> -> !uop.view<2x6xi8, strides [0, 1], offset 0>
// CHECK-NEXT:    uop.range %c = 0 to 2 attributes {in_place = ["a", "b"]} {
// CHECK-NEXT:      uop.range [[P:%.*]] = 0 to 4 step 4 {
// CHECK-NEXT:        [[ONE:%.*]] = uop.const 1 : index
// CHECK-NEXT:        [[P1:%.*]] = uop.add [[P]], [[ONE]] : index
// CHECK-NEXT:        [[TWO:%.*]] = uop.const 2 : index
// CHECK-NEXT:        [[P2:%.*]] = uop.add [[P]], [[TWO]] : index
// CHECK-NEXT:        [[THREE:%.*]] = uop.const 3 : index
// CHECK-NEXT:        [[P3:%.*]] = uop.add [[P]], [[THREE]] : index
// CHECK-NEXT:        [[G0:%.*]] = uop.gep [[FLAT]][%c, [[P]]]
// CHECK-NEXT:        [[V0:%.*]] = uop.load [[G0]] : i8
// CHECK-NEXT:        [[G1:%.*]] = uop.gep [[FLAT]][%c, [[P1]]]
// CHECK-NEXT:        [[V1:%.*]] = uop.load [[G1]] : i8
// CHECK-NEXT:        [[G2:%.*]] = uop.gep [[FLAT]][%c, [[P2]]]
// CHECK-NEXT:        [[V2:%.*]] = uop.load [[G2]] : i8
// CHECK-NEXT:        [[G3:%.*]] = uop.gep [[FLAT]][%c, [[P3]]]
// CHECK-NEXT:        [[V3:%.*]] = uop.load [[G3]] : i8
// CHECK-NEXT:        [[S0:%.*]] = uop.gep [[COPY]][%c, [[P]]]
// CHECK-NEXT:        uop.store [[V0]], [[S0]] : i8
// CHECK:             uop.store [[V3]], %{{.*}} : i8
// CHECK-NEXT:      }
// CHECK-NEXT:      [[FOUR:%.*]] = uop.const 4 : index
// CHECK-NEXT:      [[FIVE:%.*]] = uop.const 5 : index
// CHECK-NEXT:      [[G4:%.*]] = uop.gep [[FLAT]][%c, [[FOUR]]]
// CHECK-NEXT:      [[V4:%.*]] = uop.load [[G4]] : i8
// CHECK-NEXT:      [[G5:%.*]] = uop.gep [[FLAT]][%c, [[FIVE]]]
// CHECK-NEXT:      [[V5:%.*]] = uop.load [[G5]] : i8
// CHECK-NEXT:      [[S4:%.*]] = uop.gep [[COPY]][%c, [[FOUR]]]
// CHECK-NEXT:      uop.store [[V4]], [[S4]] : i8
// CHECK-NEXT:      [[S5:%.*]] = uop.gep [[COPY]][%c, [[FIVE]]]
// CHECK-NEXT:      uop.store [[V5]], [[S5]] : i8
// CHECK-NEXT:      uop.range %h = 0 to 2 {
// CHECK:               %ap = uop.gep [[PLANE]][%c, %h, %k]

// PLAN-LABEL: func.func @depthwise_odd_rows
// PLAN:         uop.define_local "a" at 0
// PLAN:         uop.define_local "b" at 0

builtin.module {
  func.func @depthwise_odd_rows() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<12xi8>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<12xi8>
    %a = uop.define_local "a" : !uop.buffer<12xi8>
    uop.range %i = 0 to 12 {
      %p = uop.gep %x[%i] : !uop.buffer<12xi8>
      %v = uop.load %p : i8
      %q = uop.gep %a[%i] : !uop.buffer<12xi8>
      uop.store %v, %q : i8
    }
    %b = uop.define_local "b" : !uop.buffer<12xi8>
    %av = uop.view %a : !uop.buffer<12xi8> -> !uop.view<2x2x3xi8, strides [6, 3, 1], offset 0>
    %bv = uop.view %b : !uop.buffer<12xi8> -> !uop.view<2x2x3xi8, strides [6, 3, 1], offset 0>
    uop.range %c = 0 to 2 {
      uop.range %h = 0 to 2 {
        uop.range %px = 0 to 3 {
          %s = uop.define_acc 0 : i8
          uop.range %t = 0 to 3 {
            %at = uop.add %px, %t : index
            %one = uop.const 1 : index
            %q = uop.sub %at, %one : index
            %zero = uop.const 0 : index
            %two = uop.const 2 : index
            %lo = uop.max %q, %zero : index
            %k = uop.min %lo, %two : index
            %ap = uop.gep %av[%c, %h, %k] : !uop.view<2x2x3xi8, strides [6, 3, 1], offset 0>
            %xv = uop.load %ap : i8
            %hq = uop.sub %h, %one : index
            %above = uop.max %hq, %zero : index
            %up = uop.gep %av[%c, %above, %k] : !uop.view<2x2x3xi8, strides [6, 3, 1], offset 0>
            %uv = uop.load %up : i8
            uop.mulacc %s, %xv, %uv : !uop.acc<i8>, i8
          }
          %r = uop.acc_get %s : !uop.acc<i8>, i8
          %bp = uop.gep %bv[%c, %h, %px] : !uop.view<2x2x3xi8, strides [6, 3, 1], offset 0>
          uop.store %r, %bp : i8
        }
      }
    }
    uop.range %i = 0 to 12 {
      %p = uop.gep %b[%i] : !uop.buffer<12xi8>
      %v = uop.load %p : i8
      %q = uop.gep %y[%i] : !uop.buffer<12xi8>
      uop.store %v, %q : i8
    }
    func.return
  }
}
