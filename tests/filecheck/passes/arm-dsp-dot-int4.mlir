// RUN: zant-opt %s -p arm-dsp-dot | filecheck %s

// Packed int4 weights in an int8 dot product (int4 QDQ models, fold-qdq keeps the weight int4):
// each contiguous int4 operand read from an even element becomes one arm_dsp.load_s4x4 per
// step of 4 (two bytes widened into the (0, 2) and (1, 3) halves the int8 operand's sxtb16
// pair has), made once and read by every multiply-accumulate of the tile: here two channels'
// rows (m, m + 1 of a loop of step 2: offsets 16·m and 16·m + 16, both even) times two pixels.

// CHECK-LABEL: func.func @tile()
// CHECK:         uop.range %[[K:.*]] = 0 to 16 step 4 {
// CHECK:           %[[X0:.*]] = arm_dsp.load_word %{{.*}} : !uop.ptr<i8>
// CHECK-NEXT:      %[[X0E:.*]] = arm_dsp.sxtb16 %[[X0]] : i32
// CHECK-NEXT:      %[[X0O:.*]] = arm_dsp.sxtb16 %[[X0]] ror 8 : i32
// CHECK-NEXT:      %[[W0E:.*]], %[[W0O:.*]] = arm_dsp.load_s4x4 %{{.*}} : !uop.ptr<i4>
// CHECK-NEXT:      %[[A:.*]] = uop.acc_get %a00 : !uop.acc<i32>, i32
// CHECK-NEXT:      %[[A1:.*]] = arm_dsp.smlad %[[X0E]], %[[W0E]], %[[A]] : i32
// CHECK-NEXT:      %[[A2:.*]] = arm_dsp.smlad %[[X0O]], %[[W0O]], %[[A1]] : i32
// CHECK-NEXT:      uop.acc_set %a00, %[[A2]] : !uop.acc<i32>, i32
// CHECK:           %[[W1E:.*]], %[[W1O:.*]] = arm_dsp.load_s4x4 %{{.*}} : !uop.ptr<i4>
// CHECK:           arm_dsp.smlad %[[X0E]], %[[W1E]]
// CHECK:           %[[X1:.*]] = arm_dsp.load_word %{{.*}} : !uop.ptr<i8>
// CHECK:           arm_dsp.smlad %{{.*}}, %[[W0E]]
// CHECK:           arm_dsp.smlad %{{.*}}, %[[W1E]]
// CHECK-NOT:       arm_dsp.load_s4x4
// CHECK:         }
// CHECK-NOT:     uop.range

// An int4 operand at an odd element (offset 1) would start mid-byte: the loop is left alone.

// CHECK-LABEL: func.func @odd_offset()
// CHECK-NOT:     arm_dsp
// CHECK:         func.return

// So is a loop starting at an odd element, and a strided int4 operand.

// CHECK-LABEL: func.func @odd_start()
// CHECK-NOT:     arm_dsp
// CHECK:         func.return

// CHECK-LABEL: func.func @strided_int4()
// CHECK-NOT:     arm_dsp
// CHECK:         func.return

builtin.module {
  func.func @tile() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<32xi8>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<64xi4>
    %sixteen = uop.const 16 : index
    uop.range %m = 0 to 4 step 2 {
      %a00 = uop.define_acc 0 : i32
      %a01 = uop.define_acc 0 : i32
      %a10 = uop.define_acc 0 : i32
      %a11 = uop.define_acc 0 : i32
      %row = uop.mul %m, %sixteen : index
      %row1 = uop.add %row, %sixteen : index
      uop.range %k = 0 to 16 {
        %x0p = uop.gep inbounds %x[%k] : !uop.buffer<32xi8>
        %x0v = uop.load %x0p : i8
        %x0 = uop.cast %x0v : i8 to i32
        %x1i = uop.add %k, %sixteen : index
        %x1p = uop.gep inbounds %x[%x1i] : !uop.buffer<32xi8>
        %x1v = uop.load %x1p : i8
        %x1 = uop.cast %x1v : i8 to i32
        %w0i = uop.add %row, %k : index
        %w0p = uop.gep inbounds %w[%w0i] : !uop.buffer<64xi4>
        %w0v = uop.load %w0p : i4
        %w0 = uop.cast %w0v : i4 to i32
        %w1i = uop.add %row1, %k : index
        %w1p = uop.gep inbounds %w[%w1i] : !uop.buffer<64xi4>
        %w1v = uop.load %w1p : i4
        %w1 = uop.cast %w1v : i4 to i32
        uop.mulacc %a00, %x0, %w0 : !uop.acc<i32>, i32
        uop.mulacc %a01, %x0, %w1 : !uop.acc<i32>, i32
        uop.mulacc %a10, %x1, %w0 : !uop.acc<i32>, i32
        uop.mulacc %a11, %x1, %w1 : !uop.acc<i32>, i32
      }
    }
    func.return
  }

  func.func @odd_offset() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<16xi8>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<17xi4>
    %acc = uop.define_acc 0 : i32
    %one = uop.const 1 : index
    uop.range %k = 0 to 16 {
      %xp = uop.gep inbounds %x[%k] : !uop.buffer<16xi8>
      %xv = uop.load %xp : i8
      %xc = uop.cast %xv : i8 to i32
      %wi = uop.add %k, %one : index
      %wp = uop.gep inbounds %w[%wi] : !uop.buffer<17xi4>
      %wv = uop.load %wp : i4
      %wc = uop.cast %wv : i4 to i32
      uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
    }
    func.return
  }

  func.func @odd_start() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<16xi8>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<16xi4>
    %acc = uop.define_acc 0 : i32
    uop.range %k = 1 to 16 {
      %xp = uop.gep inbounds %x[%k] : !uop.buffer<16xi8>
      %xv = uop.load %xp : i8
      %xc = uop.cast %xv : i8 to i32
      %wp = uop.gep inbounds %w[%k] : !uop.buffer<16xi4>
      %wv = uop.load %wp : i4
      %wc = uop.cast %wv : i4 to i32
      uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
    }
    func.return
  }

  func.func @strided_int4() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<16xi8>
    %w = uop.define_global "input" 1 "w" : !uop.buffer<32xi4>
    %acc = uop.define_acc 0 : i32
    %two = uop.const 2 : index
    uop.range %k = 0 to 16 {
      %xp = uop.gep inbounds %x[%k] : !uop.buffer<16xi8>
      %xv = uop.load %xp : i8
      %xc = uop.cast %xv : i8 to i32
      %wi = uop.mul %k, %two : index
      %wp = uop.gep inbounds %w[%wi] : !uop.buffer<32xi4>
      %wv = uop.load %wp : i4
      %wc = uop.cast %wv : i4 to i32
      uop.mulacc %acc, %xc, %wc : !uop.acc<i32>, i32
    }
    func.return
  }
}
