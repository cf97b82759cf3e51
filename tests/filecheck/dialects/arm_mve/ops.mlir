// RUN: zant-opt %s | filecheck %s
// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// CHECK-LABEL: func.func @main()
// CHECK:         %g = arm_mve.vldrb_gather %p [0, 125, 250, 375, 500, 625, 750, 875] : !uop.ptr<i8> -> vector<8xi16>
// CHECK-NEXT:    %v = uop.vload %p : vector<8xi8>
// CHECK-NEXT:    %h = uop.cast %v : vector<8xi8> to vector<8xi16>
// CHECK-NEXT:    %r = arm_mve.vmlava %c, %g, %h : vector<8xi16>
// CHECK-NEXT:    %b16 = uop.vload %p : vector<16xi8>
// CHECK-NEXT:    %s = arm_mve.vmlava %r, %b16, %b16 : vector<16xi8>
// CHECK-NEXT:    %g16 = arm_mve.vldrb_gather %p [0, 125, 250, 375, 500, 625, 750, 875, 1000, 1125, 1250, 1375, 1500, 1625, 1750, 1875] : !uop.ptr<i8> -> vector<16xi8>

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<1000xi8>
    %i = uop.const 4 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<1000xi8>
    %c = uop.const 7 : i32
    %g = arm_mve.vldrb_gather %p [0, 125, 250, 375, 500, 625, 750, 875] : !uop.ptr<i8> -> vector<8xi16>
    %v = uop.vload %p : vector<8xi8>
    %h = uop.cast %v : vector<8xi8> to vector<8xi16>
    %r = arm_mve.vmlava %c, %g, %h : vector<8xi16>
    %b16 = uop.vload %p : vector<16xi8>
    %s = arm_mve.vmlava %r, %b16, %b16 : vector<16xi8>
    %g16 = arm_mve.vldrb_gather %p [0, 125, 250, 375, 500, 625, 750, 875, 1000, 1125, 1250, 1375, 1500, 1625, 1750, 1875] : !uop.ptr<i8> -> vector<16xi8>
    func.return
  }
}

// vldrh_gather: 8 int16 at element offsets (16x8 quantization's activation columns).

// CHECK-LABEL: func.func @halves()
// CHECK:         %g = arm_mve.vldrh_gather %p [0, 125, 250, 375, 500, 625, 750, 875] : !uop.ptr<i16> -> vector<8xi16>
// CHECK-NEXT:    %r = arm_mve.vmlava %c, %g, %g : vector<8xi16>

builtin.module {
  func.func @halves() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<1000xi16>
    %i = uop.const 4 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<1000xi16>
    %c = uop.const 7 : i32
    %g = arm_mve.vldrh_gather %p [0, 125, 250, 375, 500, 625, 750, 875] : !uop.ptr<i16> -> vector<8xi16>
    %r = arm_mve.vmlava %c, %g, %g : vector<8xi16>
    func.return
  }
}

// The requantization ops (mve-requantize): four sums into lanes, the high words of their
// products, a rounding shift, and the low bytes scattered (or stored contiguously).

// CHECK-LABEL: func.func @requantize()
// CHECK:         %v = arm_mve.vmov_lanes %a, %b, %a, %b : vector<4xi32>
// CHECK-NEXT:    %h = arm_mve.vmulh %v, %v : vector<4xi32>
// CHECK-NEXT:    %r = arm_mve.vrshr %h, 5 : vector<4xi32>
// CHECK-NEXT:    %l = arm_mve.vmov_lane %r, 3 : vector<4xi32>
// CHECK-NEXT:    arm_mve.vstrb_scatter %r, %p [0, 125, 250, 375] : vector<4xi32>, !uop.ptr<i8>
// CHECK-NEXT:    arm_mve.vstrb_scatter %r, %p [0, 1, 2, 3] : vector<4xi32>, !uop.ptr<i8>
// CHECK-NEXT:    %g = arm_mve.vldrb_gather %p [0, 5, 10, 15, 20, 25, 30, 35] : !uop.ptr<i8> -> vector<8xi16>
// CHECK-NEXT:    arm_mve.vstrb_scatter %g, %p [0, 1, 2, 3, 4, 5, 6, 7] : vector<8xi16>, !uop.ptr<i8>

builtin.module {
  func.func @requantize() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<1000xi8>
    %i = uop.const 4 : index
    %p = uop.gep inbounds %y[%i] : !uop.buffer<1000xi8>
    %a = uop.const 7 : i32
    %b = uop.const -9 : i32
    %v = arm_mve.vmov_lanes %a, %b, %a, %b : vector<4xi32>
    %h = arm_mve.vmulh %v, %v : vector<4xi32>
    %r = arm_mve.vrshr %h, 5 : vector<4xi32>
    %l = arm_mve.vmov_lane %r, 3 : vector<4xi32>
    arm_mve.vstrb_scatter %r, %p [0, 125, 250, 375] : vector<4xi32>, !uop.ptr<i8>
    arm_mve.vstrb_scatter %r, %p [0, 1, 2, 3] : vector<4xi32>, !uop.ptr<i8>
    %g = arm_mve.vldrb_gather %p [0, 5, 10, 15, 20, 25, 30, 35] : !uop.ptr<i8> -> vector<8xi16>
    arm_mve.vstrb_scatter %g, %p [0, 1, 2, 3, 4, 5, 6, 7] : vector<8xi16>, !uop.ptr<i8>
    func.return
  }
}
