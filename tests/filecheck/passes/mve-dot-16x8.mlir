// The vector loops as loops (max-unrolled-steps=0); mve-dot-unroll.mlir has them straight-line.
// RUN: zant-opt %s -p 'set-target{target=cortex-m55},mve-dot{max-unrolled-steps=0}' | filecheck %s

// 16x8 dot products on Helium: 8 lanes, every operand a vector<8xi16> (the int16 one a VLDRH
// vload where contiguous, else a vldrh_gather at element offsets; the int8 one widened, a
// VLDRB.S16 vload), one VMLAVA.S16 per multiply-accumulate.

builtin.module {
  // CHECK-LABEL: func.func @pointwise()
  // CHECK:         uop.range %[[K:.*]] = 0 to 16 step 8 {
  // CHECK:           %[[G:.*]] = arm_mve.vldrh_gather %{{.*}} [0, 25, 50, 75, 100, 125, 150, 175] : !uop.ptr<i16> -> vector<8xi16>
  // CHECK-NEXT:      %[[W:.*]] = uop.vload %{{.*}} : vector<8xi8>
  // CHECK-NEXT:      %[[WW:.*]] = uop.cast %[[W]] : vector<8xi8> to vector<8xi16>
  // CHECK-NEXT:      %[[A:.*]] = uop.acc_get %acc : !uop.acc<i32>, i32
  // CHECK-NEXT:      %[[R:.*]] = arm_mve.vmlava %[[A]], %[[G]], %[[WW]] : vector<8xi16>
  // CHECK-NEXT:      uop.acc_set %acc, %[[R]] : !uop.acc<i32>, i32
  // CHECK-NOT:     uop.mulacc
  func.func @pointwise() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<400xi16>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<16xi8>
    %acc = uop.define_acc 0 : i32
    %s = uop.const 25 : index
    uop.range %k = 0 to 16 {
      %xi = uop.mul %k, %s : index
      %xp = uop.gep inbounds %x[%xi] : !uop.buffer<400xi16>
      %xv = uop.load %xp : i16
      %xc = uop.cast %xv : i16 to i32
      %wp = uop.gep inbounds %w[%k] : !uop.buffer<16xi8>
      %wv = uop.load %wp : i8
      %wc = uop.cast %wv : i8 to i32
      uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
    }
    func.return
  }

  // CHECK-LABEL: func.func @contiguous()
  // CHECK:         uop.range %[[K:.*]] = 0 to 8 step 8 {
  // CHECK:           %[[X:.*]] = uop.vload %{{.*}} : vector<8xi16>
  // CHECK:           arm_mve.vmlava %{{.*}}, %[[X]], %{{.*}} : vector<8xi16>
  // CHECK:         uop.range %{{.*}} = 8 to 10 {
  // CHECK:           uop.mulacc
  func.func @contiguous() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<10xi16>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<10xi8>
    %acc = uop.define_acc 0 : i32
    uop.range %k = 0 to 10 {
      %xp = uop.gep inbounds %x[%k] : !uop.buffer<10xi16>
      %xv = uop.load %xp : i16
      %xc = uop.cast %xv : i16 to i32
      %wp = uop.gep inbounds %w[%k] : !uop.buffer<10xi8>
      %wv = uop.load %wp : i8
      %wc = uop.cast %wv : i8 to i32
      uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
    }
    func.return
  }

  // A Conv window nest (3 rows x 3 taps of a 5-wide int16 input): 8 taps as one group, the
  // int16 operand gathered at element offsets 0-2, 5-7, 10-11; the 9th tap scalar.
  // CHECK-LABEL: func.func @window()
  // CHECK-NOT:     uop.range
  // CHECK:         arm_mve.vldrh_gather %{{.*}} [0, 1, 2, 5, 6, 7, 10, 11] : !uop.ptr<i16> -> vector<8xi16>
  // CHECK:         arm_mve.vmlava %{{.*}} : vector<8xi16>
  // CHECK:         uop.mulacc %acc
  func.func @window() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<25xi16>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<9xi8>
    %acc = uop.define_acc 0 : i32
    %five = uop.const 5 : index
    %three = uop.const 3 : index
    uop.range %r = 0 to 3 {
      uop.range %t = 0 to 3 {
        %row = uop.mul %r, %five : index
        %xi = uop.add %row, %t : index
        %xp = uop.gep inbounds %x[%xi] : !uop.buffer<25xi16>
        %xv = uop.load %xp : i16
        %xc = uop.cast %xv : i16 to i32
        %wrow = uop.mul %r, %three : index
        %wi = uop.add %wrow, %t : index
        %wp = uop.gep inbounds %w[%wi] : !uop.buffer<9xi8>
        %wv = uop.load %wp : i8
        %wc = uop.cast %wv : i8 to i32
        uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
      }
    }
    func.return
  }
}
