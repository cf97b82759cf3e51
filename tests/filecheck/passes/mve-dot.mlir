// The vector loops as loops (max-unrolled-steps=0); mve-dot-unroll.mlir has them straight-line.
// RUN: zant-opt %s -p 'mve-dot{max-unrolled-steps=0}' | filecheck %s
// RUN: zant-opt %s -p 'set-target{target=cortex-m55},mve-dot{max-unrolled-steps=0}' | filecheck %s
// RUN: not zant-opt %s -p 'set-target{target=cortex-m4},mve-dot' 2>&1 | filecheck %s --check-prefix=NOMVE
// NOMVE: zant-opt: error: pass 'mve-dot' failed: the module's target #zant.target<"cortex-m4"> has no Helium (MVE); its pipeline does not run mve-dot

// Contiguous int8 in both operands over 36 values of k: a loop of step 16 (16 int8 lanes, one
// vload per operand, one vmlava per multiply-accumulate: VLDRB.U8 and VMLAVA.S8); the x vector is shared by both
// multiply-accumulates, each w vector loaded just before its own; 40 = 32 + 8 leaves a
// remainder loop from 32.

// CHECK-LABEL: func.func @dot()
// CHECK:         uop.range %[[K:.*]] = 0 to 32 step 16 {
// CHECK-NEXT:      %[[J:.*]] = uop.const 0 : index
// CHECK-NEXT:      %[[XI:.*]] = uop.add %[[K]], %[[J]] : index
// CHECK-NEXT:      %[[XP:.*]] = uop.gep inbounds %x[%[[XI]]] : !uop.buffer<36xi8>
// CHECK-NEXT:      %[[WI:.*]] = uop.add %{{.*}}, %[[K]] : index
// CHECK-NEXT:      %[[WP:.*]] = uop.gep inbounds %w[%[[WI]]] : !uop.buffer<100xi8>
// CHECK-NEXT:      %[[W2I:.*]] = uop.add %[[WI]], %{{.*}} : index
// CHECK-NEXT:      %[[W2P:.*]] = uop.gep inbounds %w[%[[W2I]]] : !uop.buffer<100xi8>
// CHECK-NEXT:      %[[X:.*]] = uop.vload %[[XP]] : vector<16xi8>
// CHECK-NEXT:      %[[W:.*]] = uop.vload %[[WP]] : vector<16xi8>
// CHECK-NEXT:      %[[A:.*]] = uop.acc_get %acc : !uop.acc<i32>, i32
// CHECK-NEXT:      %[[A1:.*]] = arm_mve.vmlava %[[A]], %[[X]], %[[W]] : vector<16xi8>
// CHECK-NEXT:      uop.acc_set %acc, %[[A1]] : !uop.acc<i32>, i32
// CHECK-NEXT:      %[[W2:.*]] = uop.vload %[[W2P]] : vector<16xi8>
// CHECK-NEXT:      %[[B:.*]] = uop.acc_get %acc2 : !uop.acc<i32>, i32
// CHECK-NEXT:      %[[B1:.*]] = arm_mve.vmlava %[[B]], %[[X]], %[[W2]] : vector<16xi8>
// CHECK-NEXT:      uop.acc_set %acc2, %[[B1]] : !uop.acc<i32>, i32
// CHECK-NEXT:    }
// CHECK-NEXT:    uop.range %{{.*}} = 32 to 36 {
// CHECK:           uop.mulacc %acc, %{{.*}}, %{{.*}} : !uop.acc<i32>, i32
// CHECK:           uop.mulacc %acc2, %{{.*}}, %{{.*}} : !uop.acc<i32>, i32
// CHECK-NOT:     uop.vload
// CHECK:         func.return

builtin.module {
  func.func @dot() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<36xi8>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<100xi8>
    %acc = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %forty = uop.const 40 : index
    uop.range %k = 0 to 36 {
      uop.range %j = 0 to 1 {
        %xi = uop.add %k, %j : index
        %xp = uop.gep inbounds %x[%xi] : !uop.buffer<36xi8>
        %xv = uop.load %xp : i8
        %xc = uop.cast %xv : i8 to i32
        %wi = uop.add %forty, %k : index
        %wp = uop.gep inbounds %w[%wi] : !uop.buffer<100xi8>
        %wv = uop.load %wp : i8
        %wc = uop.cast %wv : i8 to i32
        %w2i = uop.add %wi, %forty : index
        %w2p = uop.gep inbounds %w[%w2i] : !uop.buffer<100xi8>
        %w2v = uop.load %w2p : i8
        %w2c = uop.cast %w2v : i8 to i32
        uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
        uop.mulacc %acc2, %xc, %w2c : !uop.acc<i32>, i32
      }
    }
    func.return
  }

  // x strided (x[125k], an NCHW activation along its 10 channels), w contiguous: too few for 16
  // lanes, so 8, x one
  // arm_mve.vldrb_gather (8 bytes 125 apart into 16-bit lanes) shared by both accumulators,
  // w 8-byte vloads; 10 = 8 + 2 leaves a remainder loop from 8.
  // CHECK-LABEL: func.func @strided()
  // CHECK:         uop.range %[[K:.*]] = 0 to 8 step 8 {
  // CHECK-NEXT:      %[[XI:.*]] = uop.mul %[[K]], %stride : index
  // CHECK-NEXT:      %[[XP:.*]] = uop.gep inbounds %x[%[[XI]]] : !uop.buffer<1250xi8>
  // CHECK-NEXT:      %[[WP:.*]] = uop.gep inbounds %w[%[[K]]] : !uop.buffer<20xi8>
  // CHECK-NEXT:      %[[W2I:.*]] = uop.add %[[K]], %ten : index
  // CHECK-NEXT:      %[[W2P:.*]] = uop.gep inbounds %w[%[[W2I]]] : !uop.buffer<20xi8>
  // CHECK-NEXT:      %[[X:.*]] = arm_mve.vldrb_gather %[[XP]] [0, 125, 250, 375, 500, 625, 750, 875] : !uop.ptr<i8> -> vector<8xi16>
  // CHECK-NEXT:      %[[WV:.*]] = uop.vload %[[WP]] : vector<8xi8>
  // CHECK-NEXT:      %[[W:.*]] = uop.cast %[[WV]] : vector<8xi8> to vector<8xi16>
  // CHECK-NEXT:      %[[A:.*]] = uop.acc_get %acc : !uop.acc<i32>, i32
  // CHECK-NEXT:      %[[A1:.*]] = arm_mve.vmlava %[[A]], %[[X]], %[[W]] : vector<8xi16>
  // CHECK-NEXT:      uop.acc_set %acc, %[[A1]] : !uop.acc<i32>, i32
  // CHECK-NEXT:      %[[W2V:.*]] = uop.vload %[[W2P]] : vector<8xi8>
  // CHECK-NEXT:      %[[W2:.*]] = uop.cast %[[W2V]] : vector<8xi8> to vector<8xi16>
  // CHECK-NEXT:      %[[B:.*]] = uop.acc_get %acc2 : !uop.acc<i32>, i32
  // CHECK-NEXT:      %[[B1:.*]] = arm_mve.vmlava %[[B]], %[[X]], %[[W2]] : vector<8xi16>
  // CHECK-NEXT:      uop.acc_set %acc2, %[[B1]] : !uop.acc<i32>, i32
  // CHECK-NEXT:    }
  // CHECK-NEXT:    uop.range %{{.*}} = 8 to 10 {
  // CHECK-NOT:     arm_mve
  // CHECK:         func.return
  func.func @strided() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<1250xi8>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<20xi8>
    %acc = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %stride = uop.const 125 : index
    %ten = uop.const 10 : index
    uop.range %k = 0 to 10 {
      %xi = uop.mul %k, %stride : index
      %xp = uop.gep inbounds %x[%xi] : !uop.buffer<1250xi8>
      %xv = uop.load %xp : i8
      %xc = uop.cast %xv : i8 to i32
      %wp = uop.gep inbounds %w[%k] : !uop.buffer<20xi8>
      %wv = uop.load %wp : i8
      %wc = uop.cast %wv : i8 to i32
      %w2i = uop.add %k, %ten : index
      %w2p = uop.gep inbounds %w[%w2i] : !uop.buffer<20xi8>
      %w2v = uop.load %w2p : i8
      %w2c = uop.cast %w2v : i8 to i32
      uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
      uop.mulacc %acc2, %xc, %w2c : !uop.acc<i32>, i32
    }
    func.return
  }

  // Contiguous over 12 values of k: 8 lanes (VLDRB.S16, VMLAVA.S16), a remainder from 8.
  // CHECK-LABEL: func.func @short()
  // CHECK:         uop.range %[[K:.*]] = 0 to 8 step 8 {
  // CHECK:           %[[V:.*]] = uop.vload %{{.*}} : vector<8xi8>
  // CHECK-NEXT:      %[[H:.*]] = uop.cast %[[V]] : vector<8xi8> to vector<8xi16>
  // CHECK:           arm_mve.vmlava %{{.*}}, %[[H]], %[[H]] : vector<8xi16>
  // CHECK:         uop.range %{{.*}} = 8 to 12 {
  func.func @short() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<12xi8>
    %acc = uop.define_acc 0 : i32
    uop.range %k = 0 to 12 {
      %xp = uop.gep inbounds %x[%k] : !uop.buffer<12xi8>
      %xv = uop.load %xp : i8
      %xc = uop.cast %xv : i8 to i32
      uop.mulacc %acc, %xc, %xc : !uop.acc<i32>, i32
    }
    func.return
  }

  // Not rewritten: fewer than 8 values of k (arm-dsp-dot's), a stride whose 16-bit gather
  // offsets overflow (7·10000 > 65535), and a gep not proven in bounds.
  // CHECK-LABEL: func.func @left_alone()
  // CHECK-NOT:     uop.vload
  // CHECK-NOT:     arm_mve
  // CHECK:         func.return
  func.func @left_alone() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<80000xi8>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<8xi8>
    %acc = uop.define_acc 0 : i32
    %far = uop.const 10000 : index
    uop.range %k = 0 to 7 {
      %wp = uop.gep inbounds %w[%k] : !uop.buffer<8xi8>
      %wv = uop.load %wp : i8
      %wc = uop.cast %wv : i8 to i32
      uop.mulacc %acc, %wc, %wc : !uop.acc<i32>, i32
    }
    uop.range %k2 = 0 to 8 {
      %xi = uop.mul %k2, %far : index
      %xp = uop.gep inbounds %x[%xi] : !uop.buffer<80000xi8>
      %xv = uop.load %xp : i8
      %xc = uop.cast %xv : i8 to i32
      %wp = uop.gep inbounds %w[%k2] : !uop.buffer<8xi8>
      %wv = uop.load %wp : i8
      %wc = uop.cast %wv : i8 to i32
      uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
    }
    uop.range %k3 = 0 to 8 {
      %wp = uop.gep %w[%k3] : !uop.buffer<8xi8>
      %wv = uop.load %wp : i8
      %wc = uop.cast %wv : i8 to i32
      uop.mulacc %acc, %wc, %wc : !uop.acc<i32>, i32
    }
    func.return
  }

  // A Conv window: 3 rows of 4 taps, x rows 10 apart, w contiguous over the 12 taps, two
  // output channels. No loop is long enough; the nest is unrolled: the first 8 taps (rows 0
  // and 1) are one group, x one gather at offsets 0-3 and 10-13, each w a widening vload; the
  // last 4 taps (row 2) stay scalar, each at its constant tap.
  // CHECK-LABEL: func.func @window()
  // CHECK-NOT:     uop.range
  // CHECK:         %[[X:.*]] = arm_mve.vldrb_gather %{{.*}} [0, 1, 2, 3, 10, 11, 12, 13] : !uop.ptr<i8> -> vector<8xi16>
  // CHECK-NEXT:    %[[WV:.*]] = uop.vload %{{.*}} : vector<8xi8>
  // CHECK-NEXT:    %[[W:.*]] = uop.cast %[[WV]] : vector<8xi8> to vector<8xi16>
  // CHECK-NEXT:    %[[A:.*]] = uop.acc_get %acc : !uop.acc<i32>, i32
  // CHECK-NEXT:    %[[A1:.*]] = arm_mve.vmlava %[[A]], %[[X]], %[[W]] : vector<8xi16>
  // CHECK-NEXT:    uop.acc_set %acc, %[[A1]] : !uop.acc<i32>, i32
  // CHECK-NEXT:    %[[W2V:.*]] = uop.vload %{{.*}} : vector<8xi8>
  // CHECK-NEXT:    %[[W2:.*]] = uop.cast %[[W2V]] : vector<8xi8> to vector<8xi16>
  // CHECK-NEXT:    %[[B:.*]] = uop.acc_get %acc2 : !uop.acc<i32>, i32
  // CHECK-NEXT:    %[[B1:.*]] = arm_mve.vmlava %[[B]], %[[X]], %[[W2]] : vector<8xi16>
  // CHECK-NEXT:    uop.acc_set %acc2, %[[B1]] : !uop.acc<i32>, i32
  // CHECK-NEXT:    %[[KY:.*]] = uop.const 2 : index
  // CHECK-NEXT:    %[[KX:.*]] = uop.const 0 : index
  // CHECK-COUNT-8: uop.mulacc
  // CHECK-NOT:     uop.mulacc
  // CHECK:         func.return
  func.func @window() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<40xi8>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<24xi8>
    %acc = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %row = uop.const 10 : index
    %four = uop.const 4 : index
    %twelve = uop.const 12 : index
    uop.range %ky = 0 to 3 {
      %xr = uop.mul %ky, %row : index
      %wr = uop.mul %ky, %four : index
      uop.range %kx = 0 to 4 {
        %xi = uop.add %xr, %kx : index
        %xp = uop.gep inbounds %x[%xi] : !uop.buffer<40xi8>
        %xv = uop.load %xp : i8
        %xc = uop.cast %xv : i8 to i32
        %wi = uop.add %wr, %kx : index
        %wp = uop.gep inbounds %w[%wi] : !uop.buffer<24xi8>
        %wv = uop.load %wp : i8
        %wc = uop.cast %wv : i8 to i32
        %w2i = uop.add %wi, %twelve : index
        %w2p = uop.gep inbounds %w[%w2i] : !uop.buffer<24xi8>
        %w2v = uop.load %w2p : i8
        %w2c = uop.cast %w2v : i8 to i32
        uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
        uop.mulacc %acc2, %xc, %w2c : !uop.acc<i32>, i32
      }
    }
    func.return
  }

  // x strided over 20 channels: 16 lanes, x one 16-offset gather (vector<16xi8>: two VLDRB.U16
  // and a VMOVNT), w a 16-byte vload, one vmlava of int8 lanes; 20 = 16 + 4.
  // CHECK-LABEL: func.func @strided16()
  // CHECK:         uop.range %[[K:.*]] = 0 to 16 step 16 {
  // CHECK:           %[[X:.*]] = arm_mve.vldrb_gather %{{.*}} [0, 125, 250, 375, 500, 625, 750, 875, 1000, 1125, 1250, 1375, 1500, 1625, 1750, 1875] : !uop.ptr<i8> -> vector<16xi8>
  // CHECK-NEXT:      %[[W:.*]] = uop.vload %{{.*}} : vector<16xi8>
  // CHECK-NEXT:      %[[A:.*]] = uop.acc_get %acc : !uop.acc<i32>, i32
  // CHECK-NEXT:      %[[A1:.*]] = arm_mve.vmlava %[[A]], %[[X]], %[[W]] : vector<16xi8>
  // CHECK-NEXT:      uop.acc_set %acc, %[[A1]] : !uop.acc<i32>, i32
  // CHECK-NEXT:    }
  // CHECK-NEXT:    uop.range %{{.*}} = 16 to 20 {
  func.func @strided16() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<2500xi8>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<20xi8>
    %acc = uop.define_acc 0 : i32
    %stride = uop.const 125 : index
    uop.range %k = 0 to 20 {
      %xi = uop.mul %k, %stride : index
      %xp = uop.gep inbounds %x[%xi] : !uop.buffer<2500xi8>
      %xv = uop.load %xp : i8
      %xc = uop.cast %xv : i8 to i32
      %wp = uop.gep inbounds %w[%k] : !uop.buffer<20xi8>
      %wv = uop.load %wp : i8
      %wc = uop.cast %wv : i8 to i32
      uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
    }
    func.return
  }
}
