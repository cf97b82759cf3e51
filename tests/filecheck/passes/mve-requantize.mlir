// RUN: zant-opt %s -p mve-requantize | filecheck %s
// RUN: zant-opt %s -p 'set-target{target=cortex-m55},mve-requantize' | filecheck %s
// RUN: not zant-opt %s -p 'set-target{target=cortex-m4},mve-requantize' 2>&1 | filecheck %s --check-prefix=NOMVE
// NOMVE: zant-opt: error: pass 'mve-requantize' failed: the module's target #zant.target<"cortex-m4"> has no Helium (MVE); its pipeline does not run mve-requantize

// Each function ends a loop body with four int8 requantization epilogues, as the int8
// lowerings write them: clamp(i32((i64(acc) * i64(m) + 2^36) >> 37) + zp, -128, 127) stored
// as one byte.

builtin.module {
  // One pixel of four output channels (a pointwise Conv's 4-channel block over NCHW): the four
  // sums into the lanes of one vector, the four multipliers one vload, VMULH then VRSHR by
  // 37 - 32 = 5, the zero point and the clamp lane-wise, and one scatter of the low bytes 125
  // apart (H·W); the scalar chains are gone.
  // CHECK-LABEL: func.func @channels(%zp: i32)
  // CHECK:         %[[V:.*]] = arm_mve.vmov_lanes %a0, %a1, %a2, %a3 : vector<4xi32>
  // CHECK-NEXT:    %[[M:.*]] = uop.vload %mp0 : vector<4xi32>
  // CHECK-NEXT:    %[[H:.*]] = arm_mve.vmulh %[[V]], %[[M]] : vector<4xi32>
  // CHECK-NEXT:    %[[R:.*]] = arm_mve.vrshr %[[H]], 5 : vector<4xi32>
  // CHECK-NEXT:    %[[ZP:.*]] = uop.broadcast %zp : i32 to vector<4xi32>
  // CHECK-NEXT:    %[[Z:.*]] = uop.add %[[R]], %[[ZP]] : vector<4xi32>
  // CHECK-NEXT:    %[[LO:.*]] = uop.broadcast %lo : i32 to vector<4xi32>
  // CHECK-NEXT:    %[[A:.*]] = uop.max %[[Z]], %[[LO]] : vector<4xi32>
  // CHECK-NEXT:    %[[HI:.*]] = uop.broadcast %hi : i32 to vector<4xi32>
  // CHECK-NEXT:    %[[B:.*]] = uop.min %[[A]], %[[HI]] : vector<4xi32>
  // CHECK-NEXT:    arm_mve.vstrb_scatter %[[B]], %yp0 [0, 125, 250, 375] : vector<4xi32>, !uop.ptr<i8>
  // CHECK-NEXT:  }
  // CHECK-NOT:   uop.store
  // CHECK:       func.return

  func.func @channels(%zp : i32) {
    %m = uop.define_global "input" 0 "m" : !uop.buffer<64xi32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8000xi8>
    %o = uop.define_global "output" 1 "o" : !uop.buffer<8xi8>
    %acc0 = uop.define_acc 0 : i32
    %acc1 = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %acc3 = uop.define_acc 0 : i32
    %half = uop.const 68719476736 : i64
    %shift = uop.const 37 : i64
    %half31 = uop.const 2147483648 : i64
    %shift32 = uop.const 32 : i64
    %lo = uop.const -128 : i32
    %hi = uop.const 127 : i32
    %c1 = uop.const 1 : index
    %c125 = uop.const 125 : index
    uop.range %c = 0 to 64 step 4 {
      %c_1 = uop.add %c, %c1 : index
      %c_2 = uop.add %c_1, %c1 : index
      %c_3 = uop.add %c_2, %c1 : index
      %y0 = uop.mul %c, %c125 : index
      %y1 = uop.add %y0, %c125 : index
      %y2 = uop.add %y1, %c125 : index
      %y3 = uop.add %y2, %c125 : index
      %q1 = uop.add %y0, %c1 : index
      %q2 = uop.add %q1, %c1 : index
      %q3 = uop.add %q2, %c1 : index
      %a0 = uop.acc_get %acc0 : !uop.acc<i32>, i32
      %w0 = uop.cast %a0 : i32 to i64
      %mp0 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m0 = uop.load %mp0 : i32
      %mw0 = uop.cast %m0 : i32 to i64
      %p0 = uop.mul %w0, %mw0 : i64
      %r0 = uop.add %p0, %half : i64
      %s0 = uop.shr %r0, %shift : i64
      %n0 = uop.cast %s0 : i64 to i32
      %z0 = uop.add %n0, %zp : i32
      %lo0 = uop.max %z0, %lo : i32
      %hi0 = uop.min %lo0, %hi : i32
      %b0 = uop.cast %hi0 : i32 to i8
      %yp0 = uop.gep inbounds %y[%y0] : !uop.buffer<8000xi8>
      uop.store %b0, %yp0 : i8
      %a1 = uop.acc_get %acc1 : !uop.acc<i32>, i32
      %w1 = uop.cast %a1 : i32 to i64
      %mp1 = uop.gep inbounds %m[%c_1] : !uop.buffer<64xi32>
      %m1 = uop.load %mp1 : i32
      %mw1 = uop.cast %m1 : i32 to i64
      %p1 = uop.mul %w1, %mw1 : i64
      %r1 = uop.add %p1, %half : i64
      %s1 = uop.shr %r1, %shift : i64
      %n1 = uop.cast %s1 : i64 to i32
      %z1 = uop.add %n1, %zp : i32
      %lo1 = uop.max %z1, %lo : i32
      %hi1 = uop.min %lo1, %hi : i32
      %b1 = uop.cast %hi1 : i32 to i8
      %yp1 = uop.gep inbounds %y[%y1] : !uop.buffer<8000xi8>
      uop.store %b1, %yp1 : i8
      %a2 = uop.acc_get %acc2 : !uop.acc<i32>, i32
      %w2 = uop.cast %a2 : i32 to i64
      %mp2 = uop.gep inbounds %m[%c_2] : !uop.buffer<64xi32>
      %m2 = uop.load %mp2 : i32
      %mw2 = uop.cast %m2 : i32 to i64
      %p2 = uop.mul %w2, %mw2 : i64
      %r2 = uop.add %p2, %half : i64
      %s2 = uop.shr %r2, %shift : i64
      %n2 = uop.cast %s2 : i64 to i32
      %z2 = uop.add %n2, %zp : i32
      %lo2 = uop.max %z2, %lo : i32
      %hi2 = uop.min %lo2, %hi : i32
      %b2 = uop.cast %hi2 : i32 to i8
      %yp2 = uop.gep inbounds %y[%y2] : !uop.buffer<8000xi8>
      uop.store %b2, %yp2 : i8
      %a3 = uop.acc_get %acc3 : !uop.acc<i32>, i32
      %w3 = uop.cast %a3 : i32 to i64
      %mp3 = uop.gep inbounds %m[%c_3] : !uop.buffer<64xi32>
      %m3 = uop.load %mp3 : i32
      %mw3 = uop.cast %m3 : i32 to i64
      %p3 = uop.mul %w3, %mw3 : i64
      %r3 = uop.add %p3, %half : i64
      %s3 = uop.shr %r3, %shift : i64
      %n3 = uop.cast %s3 : i64 to i32
      %z3 = uop.add %n3, %zp : i32
      %lo3 = uop.max %z3, %lo : i32
      %hi3 = uop.min %lo3, %hi : i32
      %b3 = uop.cast %hi3 : i32 to i8
      %yp3 = uop.gep inbounds %y[%y3] : !uop.buffer<8000xi8>
      uop.store %b3, %yp3 : i8
    }
    func.return
  }

  // Four pixels of one channel, no zero point: one multiplier broadcast, contiguous bytes.
  // CHECK-LABEL: func.func @pixels(%zp: i32)
  // CHECK:         %[[V:.*]] = arm_mve.vmov_lanes %a0, %a1, %a2, %a3 : vector<4xi32>
  // CHECK-NEXT:    %[[M:.*]] = uop.broadcast %m0 : i32 to vector<4xi32>
  // CHECK-NEXT:    %[[H:.*]] = arm_mve.vmulh %[[V]], %[[M]] : vector<4xi32>
  // CHECK-NEXT:    %[[R:.*]] = arm_mve.vrshr %[[H]], 5 : vector<4xi32>
  // CHECK-NEXT:    %[[LO:.*]] = uop.broadcast %lo : i32 to vector<4xi32>
  // CHECK-NEXT:    %[[A:.*]] = uop.max %[[R]], %[[LO]] : vector<4xi32>
  // CHECK-NEXT:    %[[HI:.*]] = uop.broadcast %hi : i32 to vector<4xi32>
  // CHECK-NEXT:    %[[B:.*]] = uop.min %[[A]], %[[HI]] : vector<4xi32>
  // CHECK-NEXT:    arm_mve.vstrb_scatter %[[B]], %yp0 [0, 1, 2, 3] : vector<4xi32>, !uop.ptr<i8>
  // CHECK-NEXT:  }

  func.func @pixels(%zp : i32) {
    %m = uop.define_global "input" 0 "m" : !uop.buffer<64xi32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8000xi8>
    %o = uop.define_global "output" 1 "o" : !uop.buffer<8xi8>
    %acc0 = uop.define_acc 0 : i32
    %acc1 = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %acc3 = uop.define_acc 0 : i32
    %half = uop.const 68719476736 : i64
    %shift = uop.const 37 : i64
    %half31 = uop.const 2147483648 : i64
    %shift32 = uop.const 32 : i64
    %lo = uop.const -128 : i32
    %hi = uop.const 127 : i32
    %c1 = uop.const 1 : index
    %c125 = uop.const 125 : index
    uop.range %c = 0 to 64 step 4 {
      %c_1 = uop.add %c, %c1 : index
      %c_2 = uop.add %c_1, %c1 : index
      %c_3 = uop.add %c_2, %c1 : index
      %y0 = uop.mul %c, %c125 : index
      %y1 = uop.add %y0, %c125 : index
      %y2 = uop.add %y1, %c125 : index
      %y3 = uop.add %y2, %c125 : index
      %q1 = uop.add %y0, %c1 : index
      %q2 = uop.add %q1, %c1 : index
      %q3 = uop.add %q2, %c1 : index
      %a0 = uop.acc_get %acc0 : !uop.acc<i32>, i32
      %w0 = uop.cast %a0 : i32 to i64
      %mp0 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m0 = uop.load %mp0 : i32
      %mw0 = uop.cast %m0 : i32 to i64
      %p0 = uop.mul %w0, %mw0 : i64
      %r0 = uop.add %p0, %half : i64
      %s0 = uop.shr %r0, %shift : i64
      %n0 = uop.cast %s0 : i64 to i32
      %lo0 = uop.max %n0, %lo : i32
      %hi0 = uop.min %lo0, %hi : i32
      %b0 = uop.cast %hi0 : i32 to i8
      %yp0 = uop.gep inbounds %y[%y0] : !uop.buffer<8000xi8>
      uop.store %b0, %yp0 : i8
      %a1 = uop.acc_get %acc1 : !uop.acc<i32>, i32
      %w1 = uop.cast %a1 : i32 to i64
      %mp1 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m1 = uop.load %mp1 : i32
      %mw1 = uop.cast %m1 : i32 to i64
      %p1 = uop.mul %w1, %mw1 : i64
      %r1 = uop.add %p1, %half : i64
      %s1 = uop.shr %r1, %shift : i64
      %n1 = uop.cast %s1 : i64 to i32
      %lo1 = uop.max %n1, %lo : i32
      %hi1 = uop.min %lo1, %hi : i32
      %b1 = uop.cast %hi1 : i32 to i8
      %yp1 = uop.gep inbounds %y[%q1] : !uop.buffer<8000xi8>
      uop.store %b1, %yp1 : i8
      %a2 = uop.acc_get %acc2 : !uop.acc<i32>, i32
      %w2 = uop.cast %a2 : i32 to i64
      %mp2 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m2 = uop.load %mp2 : i32
      %mw2 = uop.cast %m2 : i32 to i64
      %p2 = uop.mul %w2, %mw2 : i64
      %r2 = uop.add %p2, %half : i64
      %s2 = uop.shr %r2, %shift : i64
      %n2 = uop.cast %s2 : i64 to i32
      %lo2 = uop.max %n2, %lo : i32
      %hi2 = uop.min %lo2, %hi : i32
      %b2 = uop.cast %hi2 : i32 to i8
      %yp2 = uop.gep inbounds %y[%q2] : !uop.buffer<8000xi8>
      uop.store %b2, %yp2 : i8
      %a3 = uop.acc_get %acc3 : !uop.acc<i32>, i32
      %w3 = uop.cast %a3 : i32 to i64
      %mp3 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m3 = uop.load %mp3 : i32
      %mw3 = uop.cast %m3 : i32 to i64
      %p3 = uop.mul %w3, %mw3 : i64
      %r3 = uop.add %p3, %half : i64
      %s3 = uop.shr %r3, %shift : i64
      %n3 = uop.cast %s3 : i64 to i32
      %lo3 = uop.max %n3, %lo : i32
      %hi3 = uop.min %lo3, %hi : i32
      %b3 = uop.cast %hi3 : i32 to i8
      %yp3 = uop.gep inbounds %y[%q3] : !uop.buffer<8000xi8>
      uop.store %b3, %yp3 : i8
    }
    func.return
  }

  // The four sums are lanes 0 to 3 of one vector, in order (arm_mve.vmov_lane: the depthwise
  // form of conv_depthwise_mve): that vector is the vmulh's operand, no vmov_lanes, and the
  // lanes taken out are gone with the scalar chains.
  // CHECK-LABEL: func.func @lanes(%zp: i32, %v: vector<4xi32>)
  // CHECK-NOT:     arm_mve.vmov_lane
  // CHECK:         %[[M:.*]] = uop.broadcast %m0 : i32 to vector<4xi32>
  // CHECK-NEXT:    %[[H:.*]] = arm_mve.vmulh %v, %[[M]] : vector<4xi32>
  // CHECK:         arm_mve.vstrb_scatter %{{.*}}, %yp0 [0, 1, 2, 3] : vector<4xi32>, !uop.ptr<i8>
  // CHECK-NEXT:  }

  func.func @lanes(%zp : i32, %v : vector<4xi32>) {
    %m = uop.define_global "input" 0 "m" : !uop.buffer<64xi32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8000xi8>
    %o = uop.define_global "output" 1 "o" : !uop.buffer<8xi8>
    %acc0 = uop.define_acc 0 : i32
    %acc1 = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %acc3 = uop.define_acc 0 : i32
    %half = uop.const 68719476736 : i64
    %shift = uop.const 37 : i64
    %half31 = uop.const 2147483648 : i64
    %shift32 = uop.const 32 : i64
    %lo = uop.const -128 : i32
    %hi = uop.const 127 : i32
    %c1 = uop.const 1 : index
    %c125 = uop.const 125 : index
    uop.range %c = 0 to 64 step 4 {
      %c_1 = uop.add %c, %c1 : index
      %c_2 = uop.add %c_1, %c1 : index
      %c_3 = uop.add %c_2, %c1 : index
      %y0 = uop.mul %c, %c125 : index
      %y1 = uop.add %y0, %c125 : index
      %y2 = uop.add %y1, %c125 : index
      %y3 = uop.add %y2, %c125 : index
      %q1 = uop.add %y0, %c1 : index
      %q2 = uop.add %q1, %c1 : index
      %q3 = uop.add %q2, %c1 : index
      %a0 = arm_mve.vmov_lane %v, 0 : vector<4xi32>
      %w0 = uop.cast %a0 : i32 to i64
      %mp0 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m0 = uop.load %mp0 : i32
      %mw0 = uop.cast %m0 : i32 to i64
      %p0 = uop.mul %w0, %mw0 : i64
      %r0 = uop.add %p0, %half : i64
      %s0 = uop.shr %r0, %shift : i64
      %n0 = uop.cast %s0 : i64 to i32
      %lo0 = uop.max %n0, %lo : i32
      %hi0 = uop.min %lo0, %hi : i32
      %b0 = uop.cast %hi0 : i32 to i8
      %yp0 = uop.gep inbounds %y[%y0] : !uop.buffer<8000xi8>
      uop.store %b0, %yp0 : i8
      %a1 = arm_mve.vmov_lane %v, 1 : vector<4xi32>
      %w1 = uop.cast %a1 : i32 to i64
      %mp1 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m1 = uop.load %mp1 : i32
      %mw1 = uop.cast %m1 : i32 to i64
      %p1 = uop.mul %w1, %mw1 : i64
      %r1 = uop.add %p1, %half : i64
      %s1 = uop.shr %r1, %shift : i64
      %n1 = uop.cast %s1 : i64 to i32
      %lo1 = uop.max %n1, %lo : i32
      %hi1 = uop.min %lo1, %hi : i32
      %b1 = uop.cast %hi1 : i32 to i8
      %yp1 = uop.gep inbounds %y[%q1] : !uop.buffer<8000xi8>
      uop.store %b1, %yp1 : i8
      %a2 = arm_mve.vmov_lane %v, 2 : vector<4xi32>
      %w2 = uop.cast %a2 : i32 to i64
      %mp2 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m2 = uop.load %mp2 : i32
      %mw2 = uop.cast %m2 : i32 to i64
      %p2 = uop.mul %w2, %mw2 : i64
      %r2 = uop.add %p2, %half : i64
      %s2 = uop.shr %r2, %shift : i64
      %n2 = uop.cast %s2 : i64 to i32
      %lo2 = uop.max %n2, %lo : i32
      %hi2 = uop.min %lo2, %hi : i32
      %b2 = uop.cast %hi2 : i32 to i8
      %yp2 = uop.gep inbounds %y[%q2] : !uop.buffer<8000xi8>
      uop.store %b2, %yp2 : i8
      %a3 = arm_mve.vmov_lane %v, 3 : vector<4xi32>
      %w3 = uop.cast %a3 : i32 to i64
      %mp3 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m3 = uop.load %mp3 : i32
      %mw3 = uop.cast %m3 : i32 to i64
      %p3 = uop.mul %w3, %mw3 : i64
      %r3 = uop.add %p3, %half : i64
      %s3 = uop.shr %r3, %shift : i64
      %n3 = uop.cast %s3 : i64 to i32
      %lo3 = uop.max %n3, %lo : i32
      %hi3 = uop.min %lo3, %hi : i32
      %b3 = uop.cast %hi3 : i32 to i8
      %yp3 = uop.gep inbounds %y[%q3] : !uop.buffer<8000xi8>
      uop.store %b3, %yp3 : i8
    }
    func.return
  }


  // Lanes out of order (0, 2, 1, 3): put back into a vector in the stores' order.
  // CHECK-LABEL: func.func @lanes_swapped(%zp: i32, %v: vector<4xi32>)
  // CHECK:         %[[V:.*]] = arm_mve.vmov_lanes %a0, %a1, %a2, %a3 : vector<4xi32>
  // CHECK-NEXT:    %[[M:.*]] = uop.broadcast %m0 : i32 to vector<4xi32>
  // CHECK-NEXT:    %[[H:.*]] = arm_mve.vmulh %[[V]], %[[M]] : vector<4xi32>

  func.func @lanes_swapped(%zp : i32, %v : vector<4xi32>) {
    %m = uop.define_global "input" 0 "m" : !uop.buffer<64xi32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8000xi8>
    %o = uop.define_global "output" 1 "o" : !uop.buffer<8xi8>
    %acc0 = uop.define_acc 0 : i32
    %acc1 = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %acc3 = uop.define_acc 0 : i32
    %half = uop.const 68719476736 : i64
    %shift = uop.const 37 : i64
    %half31 = uop.const 2147483648 : i64
    %shift32 = uop.const 32 : i64
    %lo = uop.const -128 : i32
    %hi = uop.const 127 : i32
    %c1 = uop.const 1 : index
    %c125 = uop.const 125 : index
    uop.range %c = 0 to 64 step 4 {
      %c_1 = uop.add %c, %c1 : index
      %c_2 = uop.add %c_1, %c1 : index
      %c_3 = uop.add %c_2, %c1 : index
      %y0 = uop.mul %c, %c125 : index
      %y1 = uop.add %y0, %c125 : index
      %y2 = uop.add %y1, %c125 : index
      %y3 = uop.add %y2, %c125 : index
      %q1 = uop.add %y0, %c1 : index
      %q2 = uop.add %q1, %c1 : index
      %q3 = uop.add %q2, %c1 : index
      %a0 = arm_mve.vmov_lane %v, 0 : vector<4xi32>
      %w0 = uop.cast %a0 : i32 to i64
      %mp0 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m0 = uop.load %mp0 : i32
      %mw0 = uop.cast %m0 : i32 to i64
      %p0 = uop.mul %w0, %mw0 : i64
      %r0 = uop.add %p0, %half : i64
      %s0 = uop.shr %r0, %shift : i64
      %n0 = uop.cast %s0 : i64 to i32
      %lo0 = uop.max %n0, %lo : i32
      %hi0 = uop.min %lo0, %hi : i32
      %b0 = uop.cast %hi0 : i32 to i8
      %yp0 = uop.gep inbounds %y[%y0] : !uop.buffer<8000xi8>
      uop.store %b0, %yp0 : i8
      %a1 = arm_mve.vmov_lane %v, 2 : vector<4xi32>
      %w1 = uop.cast %a1 : i32 to i64
      %mp1 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m1 = uop.load %mp1 : i32
      %mw1 = uop.cast %m1 : i32 to i64
      %p1 = uop.mul %w1, %mw1 : i64
      %r1 = uop.add %p1, %half : i64
      %s1 = uop.shr %r1, %shift : i64
      %n1 = uop.cast %s1 : i64 to i32
      %lo1 = uop.max %n1, %lo : i32
      %hi1 = uop.min %lo1, %hi : i32
      %b1 = uop.cast %hi1 : i32 to i8
      %yp1 = uop.gep inbounds %y[%q1] : !uop.buffer<8000xi8>
      uop.store %b1, %yp1 : i8
      %a2 = arm_mve.vmov_lane %v, 1 : vector<4xi32>
      %w2 = uop.cast %a2 : i32 to i64
      %mp2 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m2 = uop.load %mp2 : i32
      %mw2 = uop.cast %m2 : i32 to i64
      %p2 = uop.mul %w2, %mw2 : i64
      %r2 = uop.add %p2, %half : i64
      %s2 = uop.shr %r2, %shift : i64
      %n2 = uop.cast %s2 : i64 to i32
      %lo2 = uop.max %n2, %lo : i32
      %hi2 = uop.min %lo2, %hi : i32
      %b2 = uop.cast %hi2 : i32 to i8
      %yp2 = uop.gep inbounds %y[%q2] : !uop.buffer<8000xi8>
      uop.store %b2, %yp2 : i8
      %a3 = arm_mve.vmov_lane %v, 3 : vector<4xi32>
      %w3 = uop.cast %a3 : i32 to i64
      %mp3 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m3 = uop.load %mp3 : i32
      %mw3 = uop.cast %m3 : i32 to i64
      %p3 = uop.mul %w3, %mw3 : i64
      %r3 = uop.add %p3, %half : i64
      %s3 = uop.shr %r3, %shift : i64
      %n3 = uop.cast %s3 : i64 to i32
      %lo3 = uop.max %n3, %lo : i32
      %hi3 = uop.min %lo3, %hi : i32
      %b3 = uop.cast %hi3 : i32 to i8
      %yp3 = uop.gep inbounds %y[%q3] : !uop.buffer<8000xi8>
      uop.store %b3, %yp3 : i8
    }
    func.return
  }


  // Stores 125 apart downwards: the scatter is based at the lowest (the last chain's) and the
  // lanes keep their order.
  // CHECK-LABEL: func.func @descending(%zp: i32)
  // CHECK:         arm_mve.vstrb_scatter %{{.*}}, %yp3 [375, 250, 125, 0] : vector<4xi32>, !uop.ptr<i8>
  // CHECK-NEXT:  }

  func.func @descending(%zp : i32) {
    %m = uop.define_global "input" 0 "m" : !uop.buffer<64xi32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8000xi8>
    %o = uop.define_global "output" 1 "o" : !uop.buffer<8xi8>
    %acc0 = uop.define_acc 0 : i32
    %acc1 = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %acc3 = uop.define_acc 0 : i32
    %half = uop.const 68719476736 : i64
    %shift = uop.const 37 : i64
    %half31 = uop.const 2147483648 : i64
    %shift32 = uop.const 32 : i64
    %lo = uop.const -128 : i32
    %hi = uop.const 127 : i32
    %c1 = uop.const 1 : index
    %c125 = uop.const 125 : index
    uop.range %c = 0 to 64 step 4 {
      %c_1 = uop.add %c, %c1 : index
      %c_2 = uop.add %c_1, %c1 : index
      %c_3 = uop.add %c_2, %c1 : index
      %y0 = uop.mul %c, %c125 : index
      %y1 = uop.add %y0, %c125 : index
      %y2 = uop.add %y1, %c125 : index
      %y3 = uop.add %y2, %c125 : index
      %q1 = uop.add %y0, %c1 : index
      %q2 = uop.add %q1, %c1 : index
      %q3 = uop.add %q2, %c1 : index
      %a0 = uop.acc_get %acc0 : !uop.acc<i32>, i32
      %w0 = uop.cast %a0 : i32 to i64
      %mp0 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m0 = uop.load %mp0 : i32
      %mw0 = uop.cast %m0 : i32 to i64
      %p0 = uop.mul %w0, %mw0 : i64
      %r0 = uop.add %p0, %half : i64
      %s0 = uop.shr %r0, %shift : i64
      %n0 = uop.cast %s0 : i64 to i32
      %z0 = uop.add %n0, %zp : i32
      %lo0 = uop.max %z0, %lo : i32
      %hi0 = uop.min %lo0, %hi : i32
      %b0 = uop.cast %hi0 : i32 to i8
      %yp0 = uop.gep inbounds %y[%y3] : !uop.buffer<8000xi8>
      uop.store %b0, %yp0 : i8
      %a1 = uop.acc_get %acc1 : !uop.acc<i32>, i32
      %w1 = uop.cast %a1 : i32 to i64
      %mp1 = uop.gep inbounds %m[%c_1] : !uop.buffer<64xi32>
      %m1 = uop.load %mp1 : i32
      %mw1 = uop.cast %m1 : i32 to i64
      %p1 = uop.mul %w1, %mw1 : i64
      %r1 = uop.add %p1, %half : i64
      %s1 = uop.shr %r1, %shift : i64
      %n1 = uop.cast %s1 : i64 to i32
      %z1 = uop.add %n1, %zp : i32
      %lo1 = uop.max %z1, %lo : i32
      %hi1 = uop.min %lo1, %hi : i32
      %b1 = uop.cast %hi1 : i32 to i8
      %yp1 = uop.gep inbounds %y[%y2] : !uop.buffer<8000xi8>
      uop.store %b1, %yp1 : i8
      %a2 = uop.acc_get %acc2 : !uop.acc<i32>, i32
      %w2 = uop.cast %a2 : i32 to i64
      %mp2 = uop.gep inbounds %m[%c_2] : !uop.buffer<64xi32>
      %m2 = uop.load %mp2 : i32
      %mw2 = uop.cast %m2 : i32 to i64
      %p2 = uop.mul %w2, %mw2 : i64
      %r2 = uop.add %p2, %half : i64
      %s2 = uop.shr %r2, %shift : i64
      %n2 = uop.cast %s2 : i64 to i32
      %z2 = uop.add %n2, %zp : i32
      %lo2 = uop.max %z2, %lo : i32
      %hi2 = uop.min %lo2, %hi : i32
      %b2 = uop.cast %hi2 : i32 to i8
      %yp2 = uop.gep inbounds %y[%y1] : !uop.buffer<8000xi8>
      uop.store %b2, %yp2 : i8
      %a3 = uop.acc_get %acc3 : !uop.acc<i32>, i32
      %w3 = uop.cast %a3 : i32 to i64
      %mp3 = uop.gep inbounds %m[%c_3] : !uop.buffer<64xi32>
      %m3 = uop.load %mp3 : i32
      %mw3 = uop.cast %m3 : i32 to i64
      %p3 = uop.mul %w3, %mw3 : i64
      %r3 = uop.add %p3, %half : i64
      %s3 = uop.shr %r3, %shift : i64
      %n3 = uop.cast %s3 : i64 to i32
      %z3 = uop.add %n3, %zp : i32
      %lo3 = uop.max %z3, %lo : i32
      %hi3 = uop.min %lo3, %hi : i32
      %b3 = uop.cast %hi3 : i32 to i8
      %yp3 = uop.gep inbounds %y[%y0] : !uop.buffer<8000xi8>
      uop.store %b3, %yp3 : i8
    }
    func.return
  }

  // Another store between the first chain's and the second's: the stores would move past it,
  // so no group (three chains after it are too few).
  // CHECK-LABEL: func.func @store_between(%zp: i32)
  // CHECK-NOT:     arm_mve
  // CHECK-COUNT-5: uop.store
  // CHECK-NOT:     arm_mve
  // CHECK:       func.return

  func.func @store_between(%zp : i32) {
    %m = uop.define_global "input" 0 "m" : !uop.buffer<64xi32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8000xi8>
    %o = uop.define_global "output" 1 "o" : !uop.buffer<8xi8>
    %acc0 = uop.define_acc 0 : i32
    %acc1 = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %acc3 = uop.define_acc 0 : i32
    %half = uop.const 68719476736 : i64
    %shift = uop.const 37 : i64
    %half31 = uop.const 2147483648 : i64
    %shift32 = uop.const 32 : i64
    %lo = uop.const -128 : i32
    %hi = uop.const 127 : i32
    %c1 = uop.const 1 : index
    %c125 = uop.const 125 : index
    uop.range %c = 0 to 64 step 4 {
      %c_1 = uop.add %c, %c1 : index
      %c_2 = uop.add %c_1, %c1 : index
      %c_3 = uop.add %c_2, %c1 : index
      %y0 = uop.mul %c, %c125 : index
      %y1 = uop.add %y0, %c125 : index
      %y2 = uop.add %y1, %c125 : index
      %y3 = uop.add %y2, %c125 : index
      %q1 = uop.add %y0, %c1 : index
      %q2 = uop.add %q1, %c1 : index
      %q3 = uop.add %q2, %c1 : index
      %a0 = uop.acc_get %acc0 : !uop.acc<i32>, i32
      %w0 = uop.cast %a0 : i32 to i64
      %mp0 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m0 = uop.load %mp0 : i32
      %mw0 = uop.cast %m0 : i32 to i64
      %p0 = uop.mul %w0, %mw0 : i64
      %r0 = uop.add %p0, %half : i64
      %s0 = uop.shr %r0, %shift : i64
      %n0 = uop.cast %s0 : i64 to i32
      %z0 = uop.add %n0, %zp : i32
      %lo0 = uop.max %z0, %lo : i32
      %hi0 = uop.min %lo0, %hi : i32
      %b0 = uop.cast %hi0 : i32 to i8
      %yp0 = uop.gep inbounds %y[%y0] : !uop.buffer<8000xi8>
      uop.store %b0, %yp0 : i8
      %oc = uop.const 0 : index
      %op = uop.gep inbounds %o[%oc] : !uop.buffer<8xi8>
      %ob = uop.const 1 : i8
      uop.store %ob, %op : i8
      %a1 = uop.acc_get %acc1 : !uop.acc<i32>, i32
      %w1 = uop.cast %a1 : i32 to i64
      %mp1 = uop.gep inbounds %m[%c_1] : !uop.buffer<64xi32>
      %m1 = uop.load %mp1 : i32
      %mw1 = uop.cast %m1 : i32 to i64
      %p1 = uop.mul %w1, %mw1 : i64
      %r1 = uop.add %p1, %half : i64
      %s1 = uop.shr %r1, %shift : i64
      %n1 = uop.cast %s1 : i64 to i32
      %z1 = uop.add %n1, %zp : i32
      %lo1 = uop.max %z1, %lo : i32
      %hi1 = uop.min %lo1, %hi : i32
      %b1 = uop.cast %hi1 : i32 to i8
      %yp1 = uop.gep inbounds %y[%y1] : !uop.buffer<8000xi8>
      uop.store %b1, %yp1 : i8
      %a2 = uop.acc_get %acc2 : !uop.acc<i32>, i32
      %w2 = uop.cast %a2 : i32 to i64
      %mp2 = uop.gep inbounds %m[%c_2] : !uop.buffer<64xi32>
      %m2 = uop.load %mp2 : i32
      %mw2 = uop.cast %m2 : i32 to i64
      %p2 = uop.mul %w2, %mw2 : i64
      %r2 = uop.add %p2, %half : i64
      %s2 = uop.shr %r2, %shift : i64
      %n2 = uop.cast %s2 : i64 to i32
      %z2 = uop.add %n2, %zp : i32
      %lo2 = uop.max %z2, %lo : i32
      %hi2 = uop.min %lo2, %hi : i32
      %b2 = uop.cast %hi2 : i32 to i8
      %yp2 = uop.gep inbounds %y[%y2] : !uop.buffer<8000xi8>
      uop.store %b2, %yp2 : i8
      %a3 = uop.acc_get %acc3 : !uop.acc<i32>, i32
      %w3 = uop.cast %a3 : i32 to i64
      %mp3 = uop.gep inbounds %m[%c_3] : !uop.buffer<64xi32>
      %m3 = uop.load %mp3 : i32
      %mw3 = uop.cast %m3 : i32 to i64
      %p3 = uop.mul %w3, %mw3 : i64
      %r3 = uop.add %p3, %half : i64
      %s3 = uop.shr %r3, %shift : i64
      %n3 = uop.cast %s3 : i64 to i32
      %z3 = uop.add %n3, %zp : i32
      %lo3 = uop.max %z3, %lo : i32
      %hi3 = uop.min %lo3, %hi : i32
      %b3 = uop.cast %hi3 : i32 to i8
      %yp3 = uop.gep inbounds %y[%y3] : !uop.buffer<8000xi8>
      uop.store %b3, %yp3 : i8
    }
    func.return
  }

  // A shift of 32 (VRSHR's immediate would be 0): left scalar.
  // CHECK-LABEL: func.func @shift_32(%zp: i32)
  // CHECK-NOT:     arm_mve
  // CHECK-COUNT-4: uop.store
  // CHECK-NOT:     arm_mve
  // CHECK:       func.return

  func.func @shift_32(%zp : i32) {
    %m = uop.define_global "input" 0 "m" : !uop.buffer<64xi32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8000xi8>
    %o = uop.define_global "output" 1 "o" : !uop.buffer<8xi8>
    %acc0 = uop.define_acc 0 : i32
    %acc1 = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %acc3 = uop.define_acc 0 : i32
    %half = uop.const 68719476736 : i64
    %shift = uop.const 37 : i64
    %half31 = uop.const 2147483648 : i64
    %shift32 = uop.const 32 : i64
    %lo = uop.const -128 : i32
    %hi = uop.const 127 : i32
    %c1 = uop.const 1 : index
    %c125 = uop.const 125 : index
    uop.range %c = 0 to 64 step 4 {
      %c_1 = uop.add %c, %c1 : index
      %c_2 = uop.add %c_1, %c1 : index
      %c_3 = uop.add %c_2, %c1 : index
      %y0 = uop.mul %c, %c125 : index
      %y1 = uop.add %y0, %c125 : index
      %y2 = uop.add %y1, %c125 : index
      %y3 = uop.add %y2, %c125 : index
      %q1 = uop.add %y0, %c1 : index
      %q2 = uop.add %q1, %c1 : index
      %q3 = uop.add %q2, %c1 : index
      %a0 = uop.acc_get %acc0 : !uop.acc<i32>, i32
      %w0 = uop.cast %a0 : i32 to i64
      %mp0 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m0 = uop.load %mp0 : i32
      %mw0 = uop.cast %m0 : i32 to i64
      %p0 = uop.mul %w0, %mw0 : i64
      %r0 = uop.add %p0, %half31 : i64
      %s0 = uop.shr %r0, %shift32 : i64
      %n0 = uop.cast %s0 : i64 to i32
      %z0 = uop.add %n0, %zp : i32
      %lo0 = uop.max %z0, %lo : i32
      %hi0 = uop.min %lo0, %hi : i32
      %b0 = uop.cast %hi0 : i32 to i8
      %yp0 = uop.gep inbounds %y[%y0] : !uop.buffer<8000xi8>
      uop.store %b0, %yp0 : i8
      %a1 = uop.acc_get %acc1 : !uop.acc<i32>, i32
      %w1 = uop.cast %a1 : i32 to i64
      %mp1 = uop.gep inbounds %m[%c_1] : !uop.buffer<64xi32>
      %m1 = uop.load %mp1 : i32
      %mw1 = uop.cast %m1 : i32 to i64
      %p1 = uop.mul %w1, %mw1 : i64
      %r1 = uop.add %p1, %half31 : i64
      %s1 = uop.shr %r1, %shift32 : i64
      %n1 = uop.cast %s1 : i64 to i32
      %z1 = uop.add %n1, %zp : i32
      %lo1 = uop.max %z1, %lo : i32
      %hi1 = uop.min %lo1, %hi : i32
      %b1 = uop.cast %hi1 : i32 to i8
      %yp1 = uop.gep inbounds %y[%y1] : !uop.buffer<8000xi8>
      uop.store %b1, %yp1 : i8
      %a2 = uop.acc_get %acc2 : !uop.acc<i32>, i32
      %w2 = uop.cast %a2 : i32 to i64
      %mp2 = uop.gep inbounds %m[%c_2] : !uop.buffer<64xi32>
      %m2 = uop.load %mp2 : i32
      %mw2 = uop.cast %m2 : i32 to i64
      %p2 = uop.mul %w2, %mw2 : i64
      %r2 = uop.add %p2, %half31 : i64
      %s2 = uop.shr %r2, %shift32 : i64
      %n2 = uop.cast %s2 : i64 to i32
      %z2 = uop.add %n2, %zp : i32
      %lo2 = uop.max %z2, %lo : i32
      %hi2 = uop.min %lo2, %hi : i32
      %b2 = uop.cast %hi2 : i32 to i8
      %yp2 = uop.gep inbounds %y[%y2] : !uop.buffer<8000xi8>
      uop.store %b2, %yp2 : i8
      %a3 = uop.acc_get %acc3 : !uop.acc<i32>, i32
      %w3 = uop.cast %a3 : i32 to i64
      %mp3 = uop.gep inbounds %m[%c_3] : !uop.buffer<64xi32>
      %m3 = uop.load %mp3 : i32
      %mw3 = uop.cast %m3 : i32 to i64
      %p3 = uop.mul %w3, %mw3 : i64
      %r3 = uop.add %p3, %half31 : i64
      %s3 = uop.shr %r3, %shift32 : i64
      %n3 = uop.cast %s3 : i64 to i32
      %z3 = uop.add %n3, %zp : i32
      %lo3 = uop.max %z3, %lo : i32
      %hi3 = uop.min %lo3, %hi : i32
      %b3 = uop.cast %hi3 : i32 to i8
      %yp3 = uop.gep inbounds %y[%y3] : !uop.buffer<8000xi8>
      uop.store %b3, %yp3 : i8
    }
    func.return
  }

  // Multipliers at c, c+2, c+1, c+3: no one vload gives them in the lanes' order.
  // CHECK-LABEL: func.func @scattered_multipliers(%zp: i32)
  // CHECK-NOT:     arm_mve
  // CHECK-COUNT-4: uop.store
  // CHECK-NOT:     arm_mve
  // CHECK:       func.return

  func.func @scattered_multipliers(%zp : i32) {
    %m = uop.define_global "input" 0 "m" : !uop.buffer<64xi32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8000xi8>
    %o = uop.define_global "output" 1 "o" : !uop.buffer<8xi8>
    %acc0 = uop.define_acc 0 : i32
    %acc1 = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %acc3 = uop.define_acc 0 : i32
    %half = uop.const 68719476736 : i64
    %shift = uop.const 37 : i64
    %half31 = uop.const 2147483648 : i64
    %shift32 = uop.const 32 : i64
    %lo = uop.const -128 : i32
    %hi = uop.const 127 : i32
    %c1 = uop.const 1 : index
    %c125 = uop.const 125 : index
    uop.range %c = 0 to 64 step 4 {
      %c_1 = uop.add %c, %c1 : index
      %c_2 = uop.add %c_1, %c1 : index
      %c_3 = uop.add %c_2, %c1 : index
      %y0 = uop.mul %c, %c125 : index
      %y1 = uop.add %y0, %c125 : index
      %y2 = uop.add %y1, %c125 : index
      %y3 = uop.add %y2, %c125 : index
      %q1 = uop.add %y0, %c1 : index
      %q2 = uop.add %q1, %c1 : index
      %q3 = uop.add %q2, %c1 : index
      %a0 = uop.acc_get %acc0 : !uop.acc<i32>, i32
      %w0 = uop.cast %a0 : i32 to i64
      %mp0 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m0 = uop.load %mp0 : i32
      %mw0 = uop.cast %m0 : i32 to i64
      %p0 = uop.mul %w0, %mw0 : i64
      %r0 = uop.add %p0, %half : i64
      %s0 = uop.shr %r0, %shift : i64
      %n0 = uop.cast %s0 : i64 to i32
      %z0 = uop.add %n0, %zp : i32
      %lo0 = uop.max %z0, %lo : i32
      %hi0 = uop.min %lo0, %hi : i32
      %b0 = uop.cast %hi0 : i32 to i8
      %yp0 = uop.gep inbounds %y[%y0] : !uop.buffer<8000xi8>
      uop.store %b0, %yp0 : i8
      %a1 = uop.acc_get %acc1 : !uop.acc<i32>, i32
      %w1 = uop.cast %a1 : i32 to i64
      %mp1 = uop.gep inbounds %m[%c_2] : !uop.buffer<64xi32>
      %m1 = uop.load %mp1 : i32
      %mw1 = uop.cast %m1 : i32 to i64
      %p1 = uop.mul %w1, %mw1 : i64
      %r1 = uop.add %p1, %half : i64
      %s1 = uop.shr %r1, %shift : i64
      %n1 = uop.cast %s1 : i64 to i32
      %z1 = uop.add %n1, %zp : i32
      %lo1 = uop.max %z1, %lo : i32
      %hi1 = uop.min %lo1, %hi : i32
      %b1 = uop.cast %hi1 : i32 to i8
      %yp1 = uop.gep inbounds %y[%y1] : !uop.buffer<8000xi8>
      uop.store %b1, %yp1 : i8
      %a2 = uop.acc_get %acc2 : !uop.acc<i32>, i32
      %w2 = uop.cast %a2 : i32 to i64
      %mp2 = uop.gep inbounds %m[%c_1] : !uop.buffer<64xi32>
      %m2 = uop.load %mp2 : i32
      %mw2 = uop.cast %m2 : i32 to i64
      %p2 = uop.mul %w2, %mw2 : i64
      %r2 = uop.add %p2, %half : i64
      %s2 = uop.shr %r2, %shift : i64
      %n2 = uop.cast %s2 : i64 to i32
      %z2 = uop.add %n2, %zp : i32
      %lo2 = uop.max %z2, %lo : i32
      %hi2 = uop.min %lo2, %hi : i32
      %b2 = uop.cast %hi2 : i32 to i8
      %yp2 = uop.gep inbounds %y[%y2] : !uop.buffer<8000xi8>
      uop.store %b2, %yp2 : i8
      %a3 = uop.acc_get %acc3 : !uop.acc<i32>, i32
      %w3 = uop.cast %a3 : i32 to i64
      %mp3 = uop.gep inbounds %m[%c_3] : !uop.buffer<64xi32>
      %m3 = uop.load %mp3 : i32
      %mw3 = uop.cast %m3 : i32 to i64
      %p3 = uop.mul %w3, %mw3 : i64
      %r3 = uop.add %p3, %half : i64
      %s3 = uop.shr %r3, %shift : i64
      %n3 = uop.cast %s3 : i64 to i32
      %z3 = uop.add %n3, %zp : i32
      %lo3 = uop.max %z3, %lo : i32
      %hi3 = uop.min %lo3, %hi : i32
      %b3 = uop.cast %hi3 : i32 to i8
      %yp3 = uop.gep inbounds %y[%y3] : !uop.buffer<8000xi8>
      uop.store %b3, %yp3 : i8
    }
    func.return
  }

  // Three pixels of one channel (a depthwise Conv's interior row block, 5-wide rows): the
  // fourth lane a copy of the third (same sum, multiplier and byte), the multiplier broadcast.
  // CHECK-LABEL: func.func @three_pixels(%zp: i32)
  // CHECK:         %[[V:.*]] = arm_mve.vmov_lanes %a0, %a1, %a2, %a2 : vector<4xi32>
  // CHECK-NEXT:    %[[M:.*]] = uop.broadcast %m0 : i32 to vector<4xi32>
  // CHECK-NEXT:    %[[H:.*]] = arm_mve.vmulh %[[V]], %[[M]] : vector<4xi32>
  // CHECK:         arm_mve.vstrb_scatter %{{.*}}, %yp0 [0, 1, 2, 2] : vector<4xi32>, !uop.ptr<i8>
  // CHECK-NEXT:  }
  // CHECK-NOT:   uop.store

  // Three channels: the fourth lane's multiplier would be the next channel's (and perhaps past
  // the buffer), so three are taken only with one multiplier: left scalar.
  // CHECK-LABEL: func.func @three_channels(%zp: i32)
  // CHECK-NOT:     arm_mve
  // CHECK-COUNT-3: uop.store
  // CHECK-NOT:     arm_mve
  // CHECK:       func.return

  func.func @three_pixels(%zp : i32) {
    %m = uop.define_global "input" 0 "m" : !uop.buffer<64xi32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8000xi8>
    %o = uop.define_global "output" 1 "o" : !uop.buffer<8xi8>
    %acc0 = uop.define_acc 0 : i32
    %acc1 = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %acc3 = uop.define_acc 0 : i32
    %half = uop.const 68719476736 : i64
    %shift = uop.const 37 : i64
    %half31 = uop.const 2147483648 : i64
    %shift32 = uop.const 32 : i64
    %lo = uop.const -128 : i32
    %hi = uop.const 127 : i32
    %c1 = uop.const 1 : index
    %c125 = uop.const 125 : index
    uop.range %c = 0 to 64 step 4 {
      %c_1 = uop.add %c, %c1 : index
      %c_2 = uop.add %c_1, %c1 : index
      %c_3 = uop.add %c_2, %c1 : index
      %y0 = uop.mul %c, %c125 : index
      %y1 = uop.add %y0, %c125 : index
      %y2 = uop.add %y1, %c125 : index
      %y3 = uop.add %y2, %c125 : index
      %q1 = uop.add %y0, %c1 : index
      %q2 = uop.add %q1, %c1 : index
      %q3 = uop.add %q2, %c1 : index
      %a0 = uop.acc_get %acc0 : !uop.acc<i32>, i32
      %w0 = uop.cast %a0 : i32 to i64
      %mp0 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m0 = uop.load %mp0 : i32
      %mw0 = uop.cast %m0 : i32 to i64
      %p0 = uop.mul %w0, %mw0 : i64
      %r0 = uop.add %p0, %half : i64
      %s0 = uop.shr %r0, %shift : i64
      %n0 = uop.cast %s0 : i64 to i32
      %z0 = uop.add %n0, %zp : i32
      %lo0 = uop.max %z0, %lo : i32
      %hi0 = uop.min %lo0, %hi : i32
      %b0 = uop.cast %hi0 : i32 to i8
      %yp0 = uop.gep inbounds %y[%y0] : !uop.buffer<8000xi8>
      uop.store %b0, %yp0 : i8
      %a1 = uop.acc_get %acc1 : !uop.acc<i32>, i32
      %w1 = uop.cast %a1 : i32 to i64
      %mp1 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m1 = uop.load %mp1 : i32
      %mw1 = uop.cast %m1 : i32 to i64
      %p1 = uop.mul %w1, %mw1 : i64
      %r1 = uop.add %p1, %half : i64
      %s1 = uop.shr %r1, %shift : i64
      %n1 = uop.cast %s1 : i64 to i32
      %z1 = uop.add %n1, %zp : i32
      %lo1 = uop.max %z1, %lo : i32
      %hi1 = uop.min %lo1, %hi : i32
      %b1 = uop.cast %hi1 : i32 to i8
      %yp1 = uop.gep inbounds %y[%q1] : !uop.buffer<8000xi8>
      uop.store %b1, %yp1 : i8
      %a2 = uop.acc_get %acc2 : !uop.acc<i32>, i32
      %w2 = uop.cast %a2 : i32 to i64
      %mp2 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m2 = uop.load %mp2 : i32
      %mw2 = uop.cast %m2 : i32 to i64
      %p2 = uop.mul %w2, %mw2 : i64
      %r2 = uop.add %p2, %half : i64
      %s2 = uop.shr %r2, %shift : i64
      %n2 = uop.cast %s2 : i64 to i32
      %z2 = uop.add %n2, %zp : i32
      %lo2 = uop.max %z2, %lo : i32
      %hi2 = uop.min %lo2, %hi : i32
      %b2 = uop.cast %hi2 : i32 to i8
      %yp2 = uop.gep inbounds %y[%q2] : !uop.buffer<8000xi8>
      uop.store %b2, %yp2 : i8
    }
    func.return
  }

  func.func @three_channels(%zp : i32) {
    %m = uop.define_global "input" 0 "m" : !uop.buffer<64xi32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8000xi8>
    %o = uop.define_global "output" 1 "o" : !uop.buffer<8xi8>
    %acc0 = uop.define_acc 0 : i32
    %acc1 = uop.define_acc 0 : i32
    %acc2 = uop.define_acc 0 : i32
    %acc3 = uop.define_acc 0 : i32
    %half = uop.const 68719476736 : i64
    %shift = uop.const 37 : i64
    %half31 = uop.const 2147483648 : i64
    %shift32 = uop.const 32 : i64
    %lo = uop.const -128 : i32
    %hi = uop.const 127 : i32
    %c1 = uop.const 1 : index
    %c125 = uop.const 125 : index
    uop.range %c = 0 to 64 step 4 {
      %c_1 = uop.add %c, %c1 : index
      %c_2 = uop.add %c_1, %c1 : index
      %c_3 = uop.add %c_2, %c1 : index
      %y0 = uop.mul %c, %c125 : index
      %y1 = uop.add %y0, %c125 : index
      %y2 = uop.add %y1, %c125 : index
      %y3 = uop.add %y2, %c125 : index
      %q1 = uop.add %y0, %c1 : index
      %q2 = uop.add %q1, %c1 : index
      %q3 = uop.add %q2, %c1 : index
      %a0 = uop.acc_get %acc0 : !uop.acc<i32>, i32
      %w0 = uop.cast %a0 : i32 to i64
      %mp0 = uop.gep inbounds %m[%c] : !uop.buffer<64xi32>
      %m0 = uop.load %mp0 : i32
      %mw0 = uop.cast %m0 : i32 to i64
      %p0 = uop.mul %w0, %mw0 : i64
      %r0 = uop.add %p0, %half : i64
      %s0 = uop.shr %r0, %shift : i64
      %n0 = uop.cast %s0 : i64 to i32
      %z0 = uop.add %n0, %zp : i32
      %lo0 = uop.max %z0, %lo : i32
      %hi0 = uop.min %lo0, %hi : i32
      %b0 = uop.cast %hi0 : i32 to i8
      %yp0 = uop.gep inbounds %y[%y0] : !uop.buffer<8000xi8>
      uop.store %b0, %yp0 : i8
      %a1 = uop.acc_get %acc1 : !uop.acc<i32>, i32
      %w1 = uop.cast %a1 : i32 to i64
      %mp1 = uop.gep inbounds %m[%c_1] : !uop.buffer<64xi32>
      %m1 = uop.load %mp1 : i32
      %mw1 = uop.cast %m1 : i32 to i64
      %p1 = uop.mul %w1, %mw1 : i64
      %r1 = uop.add %p1, %half : i64
      %s1 = uop.shr %r1, %shift : i64
      %n1 = uop.cast %s1 : i64 to i32
      %z1 = uop.add %n1, %zp : i32
      %lo1 = uop.max %z1, %lo : i32
      %hi1 = uop.min %lo1, %hi : i32
      %b1 = uop.cast %hi1 : i32 to i8
      %yp1 = uop.gep inbounds %y[%y1] : !uop.buffer<8000xi8>
      uop.store %b1, %yp1 : i8
      %a2 = uop.acc_get %acc2 : !uop.acc<i32>, i32
      %w2 = uop.cast %a2 : i32 to i64
      %mp2 = uop.gep inbounds %m[%c_2] : !uop.buffer<64xi32>
      %m2 = uop.load %mp2 : i32
      %mw2 = uop.cast %m2 : i32 to i64
      %p2 = uop.mul %w2, %mw2 : i64
      %r2 = uop.add %p2, %half : i64
      %s2 = uop.shr %r2, %shift : i64
      %n2 = uop.cast %s2 : i64 to i32
      %z2 = uop.add %n2, %zp : i32
      %lo2 = uop.max %z2, %lo : i32
      %hi2 = uop.min %lo2, %hi : i32
      %b2 = uop.cast %hi2 : i32 to i8
      %yp2 = uop.gep inbounds %y[%y2] : !uop.buffer<8000xi8>
      uop.store %b2, %yp2 : i8
    }
    func.return
  }

}
