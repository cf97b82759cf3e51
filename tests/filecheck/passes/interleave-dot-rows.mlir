// RUN: zant-opt %s -p interleave-dot-rows | filecheck %s

// A 4x8 int8 weight matrix read 2 rows at a time (m = 0, 2) by a word dot product over k = 0, 4:
// rows m and m+1 at (m + r)·8 + k become m·8 + 2·k + 4r, and the bytes are stored as
// [M/2][K/4][2][4]: row 0's first word, row 1's first word, row 0's second word …

// CHECK-LABEL: func.func @gemm()
// CHECK:         %w = uop.define_global "constant" 0 "w" value dense_resource<[[BLOB:.*]]> : tensor<32xi8> : !uop.buffer<32xi8>
// CHECK:         uop.range %m = 0 to 4 step 2 {
// CHECK:           uop.range %k = 0 to 8 step 4 {
// CHECK-NEXT:        %[[XP:.*]] = uop.gep inbounds %x[%k] : !uop.buffer<8xi8>
// CHECK-NEXT:        %[[K0:.*]] = uop.const 8 : index
// CHECK-NEXT:        %[[ROW0:.*]] = uop.mul %m, %[[K0]] : index
// CHECK-NEXT:        %[[R0:.*]] = uop.const 2 : index
// CHECK-NEXT:        %[[COL0:.*]] = uop.mul %k, %[[R0]] : index
// CHECK-NEXT:        %[[B0:.*]] = uop.add %[[ROW0]], %[[COL0]] : index
// CHECK-NEXT:        %[[W0:.*]] = uop.const 0 : index
// CHECK-NEXT:        %[[I0:.*]] = uop.add %[[B0]], %[[W0]] : index
// CHECK-NEXT:        %p0 = uop.gep inbounds %w[%[[I0]]] : !uop.buffer<32xi8>
// CHECK:             %[[B1:.*]] = uop.add %{{.*}}, %{{.*}} : index
// CHECK-NEXT:        %[[W1:.*]] = uop.const 4 : index
// CHECK-NEXT:        %[[I1:.*]] = uop.add %[[B1]], %[[W1]] : index
// CHECK-NEXT:        %p1 = uop.gep inbounds %w[%[[I1]]] : !uop.buffer<32xi8>
// CHECK-NOT:         %m1
// CHECK:             arm_dsp.load_word %p0 : !uop.ptr<i8>

// Left alone: the same weights also read byte by byte (a remainder loop would see permuted bytes).
// CHECK-LABEL: func.func @other_reader()
// CHECK:         %w = uop.define_global "constant" 0 "w" value dense<[0, 1, 2, 3, 4, 5, 6, 7,
// CHECK:         uop.gep inbounds %w[%i1] : !uop.buffer<32xi8>

// A Conv's repacked weights W'[m, t, c] (4 output channels, 2 taps, 4 channels: rows of 8) read
// 2 output channels at a time by a word dot product over the channels, inside the loop over the
// taps: the column t·4 + k of row m + r becomes m·8 + 8·t + 2·k + 4r (r = 0 for %p0, 1 for %p1).
// CHECK-LABEL: func.func @conv_taps()
// CHECK:         %w = uop.define_global "constant" 0 "w" value dense_resource<[[TAPS:.*]]> : tensor<32xi8> : !uop.buffer<32xi8>
// CHECK:         uop.range %t = 0 to 2 {
// CHECK-NEXT:      uop.range %k = 0 to 4 step 4 {
// CHECK-NEXT:        %[[TK:.*]] = uop.const 8 : index
// CHECK-NEXT:        %[[TROW:.*]] = uop.mul %m, %[[TK]] : index
// CHECK-NEXT:        %[[TS:.*]] = uop.const 8 : index
// CHECK-NEXT:        %[[TT:.*]] = uop.mul %t, %[[TS]] : index
// CHECK-NEXT:        %[[TB:.*]] = uop.add %[[TROW]], %[[TT]] : index
// CHECK-NEXT:        %[[KS:.*]] = uop.const 2 : index
// CHECK-NEXT:        %[[KK:.*]] = uop.mul %k, %[[KS]] : index
// CHECK-NEXT:        %[[TB2:.*]] = uop.add %[[TB]], %[[KK]] : index
// CHECK-NEXT:        %[[TW:.*]] = uop.const 0 : index
// CHECK-NEXT:        %[[TI:.*]] = uop.add %[[TB2]], %[[TW]] : index
// CHECK-NEXT:        %p0 = uop.gep inbounds %w[%[[TI]]] : !uop.buffer<32xi8>
// CHECK:             %[[TW1:.*]] = uop.const 4 : index
// CHECK-NEXT:        %{{.*}} = uop.add %{{.*}}, %[[TW1]] : index
// CHECK-NEXT:        %p1 = uop.gep inbounds %w

// Left alone: a column whose word would straddle two rows (the taps' stride 6 is no multiple of 4).
// CHECK-LABEL: func.func @unaligned_taps()
// CHECK:         %w = uop.define_global "constant" 0 "w" value dense<[0, 1, 2, 3, 4, 5, 6, 7,

// The permuted bytes (after the blob's 4-byte alignment header): 0-3, 8-11, 4-7, 12-15, 16-19 …
// CHECK:         [[BLOB]]: "0x100000000001020308090A0B040506070C0D0E0F1011121318191A1B141516171C1D1E1F"
// The same for the Conv: rows 0 and 1 of 8 interleaved word by word, whatever the tap.
// CHECK:         [[TAPS]]: "0x100000000001020308090A0B040506070C0D0E0F1011121318191A1B141516171C1D1E1F"

builtin.module {
  func.func @gemm() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
    %w = uop.define_global "constant" 0 "w" value dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]> : tensor<32xi8> : !uop.buffer<32xi8>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xi32>
    %one = uop.const 1 : index
    %eight = uop.const 8 : index
    uop.range %m = 0 to 4 step 2 {
      %m1 = uop.add %m, %one : index
      %acc = uop.define_acc 0 : i32
      %acc1 = uop.define_acc 0 : i32
      uop.range %k = 0 to 8 step 4 {
        %xp = uop.gep inbounds %x[%k] : !uop.buffer<8xi8>
        %r0 = uop.mul %m, %eight : index
        %i0 = uop.add %r0, %k : index
        %p0 = uop.gep inbounds %w[%i0] : !uop.buffer<32xi8>
        %r1 = uop.mul %m1, %eight : index
        %i1 = uop.add %r1, %k : index
        %p1 = uop.gep inbounds %w[%i1] : !uop.buffer<32xi8>
        %xw = arm_dsp.load_word %xp : !uop.ptr<i8>
        %xe = arm_dsp.sxtb16 %xw : i32
        %xo = arm_dsp.sxtb16 %xw ror 8 : i32
        %w0 = arm_dsp.load_word %p0 : !uop.ptr<i8>
        %w0e = arm_dsp.sxtb16 %w0 : i32
        %w0o = arm_dsp.sxtb16 %w0 ror 8 : i32
        %a = uop.acc_get %acc : !uop.acc<i32>, i32
        %a1 = arm_dsp.smlad %xe, %w0e, %a : i32
        %a2 = arm_dsp.smlad %xo, %w0o, %a1 : i32
        uop.acc_set %acc, %a2 : !uop.acc<i32>, i32
        %w1 = arm_dsp.load_word %p1 : !uop.ptr<i8>
        %w1e = arm_dsp.sxtb16 %w1 : i32
        %w1o = arm_dsp.sxtb16 %w1 ror 8 : i32
        %b = uop.acc_get %acc1 : !uop.acc<i32>, i32
        %b1 = arm_dsp.smlad %xe, %w1e, %b : i32
        %b2 = arm_dsp.smlad %xo, %w1o, %b1 : i32
        uop.acc_set %acc1, %b2 : !uop.acc<i32>, i32
      }
      %s0 = uop.acc_get %acc : !uop.acc<i32>, i32
      %y0 = uop.gep inbounds %y[%m] : !uop.buffer<4xi32>
      uop.store %s0, %y0 : i32
      %s1 = uop.acc_get %acc1 : !uop.acc<i32>, i32
      %y1 = uop.gep inbounds %y[%m1] : !uop.buffer<4xi32>
      uop.store %s1, %y1 : i32
    }
    func.return
  }

  func.func @other_reader() {
    %w = uop.define_global "constant" 0 "w" value dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]> : tensor<32xi8> : !uop.buffer<32xi8>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<1xi32>
    %eight = uop.const 8 : index
    %acc = uop.define_acc 0 : i32
    uop.range %m = 0 to 4 step 2 {
      uop.range %k = 0 to 8 step 4 {
        %r0 = uop.mul %m, %eight : index
        %i0 = uop.add %r0, %k : index
        %p0 = uop.gep inbounds %w[%i0] : !uop.buffer<32xi8>
        %w0 = arm_dsp.load_word %p0 : !uop.ptr<i8>
        %a = uop.acc_get %acc : !uop.acc<i32>, i32
        %a1 = arm_dsp.smlad %w0, %w0, %a : i32
        uop.acc_set %acc, %a1 : !uop.acc<i32>, i32
      }
    }
    uop.range %i = 0 to 3 {
      %i1 = uop.add %i, %eight : index
      %p = uop.gep inbounds %w[%i1] : !uop.buffer<32xi8>
      %v = uop.load %p : i8
      %c = uop.cast %v : i8 to i32
      uop.mulacc %acc, %c, %c : !uop.acc<i32>, i32
    }
    %s = uop.acc_get %acc : !uop.acc<i32>, i32
    %zero = uop.const 0 : index
    %y0 = uop.gep inbounds %y[%zero] : !uop.buffer<1xi32>
    uop.store %s, %y0 : i32
    func.return
  }

  func.func @conv_taps() {
    %w = uop.define_global "constant" 0 "w" value dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]> : tensor<32xi8> : !uop.buffer<32xi8>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xi32>
    %one = uop.const 1 : index
    %four = uop.const 4 : index
    %eight = uop.const 8 : index
    uop.range %m = 0 to 4 step 2 {
      %m1 = uop.add %m, %one : index
      %acc = uop.define_acc 0 : i32
      %acc1 = uop.define_acc 0 : i32
      uop.range %t = 0 to 2 {
        uop.range %k = 0 to 4 step 4 {
          %r0 = uop.mul %m, %eight : index
          %c0 = uop.mul %t, %four : index
          %b0 = uop.add %r0, %c0 : index
          %i0 = uop.add %b0, %k : index
          %p0 = uop.gep inbounds %w[%i0] : !uop.buffer<32xi8>
          %r1 = uop.mul %m1, %eight : index
          %c1 = uop.mul %t, %four : index
          %b1 = uop.add %r1, %c1 : index
          %i1 = uop.add %b1, %k : index
          %p1 = uop.gep inbounds %w[%i1] : !uop.buffer<32xi8>
          %w0 = arm_dsp.load_word %p0 : !uop.ptr<i8>
          %a = uop.acc_get %acc : !uop.acc<i32>, i32
          %a1 = arm_dsp.smlad %w0, %w0, %a : i32
          uop.acc_set %acc, %a1 : !uop.acc<i32>, i32
          %w1 = arm_dsp.load_word %p1 : !uop.ptr<i8>
          %b = uop.acc_get %acc1 : !uop.acc<i32>, i32
          %b2 = arm_dsp.smlad %w1, %w1, %b : i32
          uop.acc_set %acc1, %b2 : !uop.acc<i32>, i32
        }
      }
      %s0 = uop.acc_get %acc : !uop.acc<i32>, i32
      %y0 = uop.gep inbounds %y[%m] : !uop.buffer<4xi32>
      uop.store %s0, %y0 : i32
      %s1 = uop.acc_get %acc1 : !uop.acc<i32>, i32
      %y1 = uop.gep inbounds %y[%m1] : !uop.buffer<4xi32>
      uop.store %s1, %y1 : i32
    }
    func.return
  }

  func.func @unaligned_taps() {
    %w = uop.define_global "constant" 0 "w" value dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]> : tensor<24xi8> : !uop.buffer<24xi8>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<1xi32>
    %six = uop.const 6 : index
    %twelve = uop.const 12 : index
    %acc = uop.define_acc 0 : i32
    uop.range %m = 0 to 2 step 2 {
      uop.range %t = 0 to 2 {
        uop.range %k = 0 to 4 step 4 {
          %r0 = uop.mul %m, %twelve : index
          %c0 = uop.mul %t, %six : index
          %b0 = uop.add %r0, %c0 : index
          %i0 = uop.add %b0, %k : index
          %p0 = uop.gep inbounds %w[%i0] : !uop.buffer<24xi8>
          %w0 = arm_dsp.load_word %p0 : !uop.ptr<i8>
          %a = uop.acc_get %acc : !uop.acc<i32>, i32
          %a1 = arm_dsp.smlad %w0, %w0, %a : i32
          uop.acc_set %acc, %a1 : !uop.acc<i32>, i32
        }
      }
    }
    %s = uop.acc_get %acc : !uop.acc<i32>, i32
    %zero = uop.const 0 : index
    %y0 = uop.gep inbounds %y[%zero] : !uop.buffer<1xi32>
    uop.store %s, %y0 : i32
    func.return
  }
}
