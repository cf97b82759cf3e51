// RUN: zant-opt %s --split-input-file --verify-diagnostics

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<8xi16>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<8xi16>
    // expected-error@+1 {{vldrb_gather reads int8 elements, got a pointer to i16}}
    %g = arm_mve.vldrb_gather %p [0, 1, 2, 3, 4, 5, 6, 7] : !uop.ptr<i16> -> vector<8xi16>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<8xi8>
    // expected-error@+1 {{vldrb_gather gives vector<8xi16> or vector<16xi8>, got vector<4xi32>}}
    %g = arm_mve.vldrb_gather %p [0, 1, 2, 3, 4, 5, 6, 7] : !uop.ptr<i8> -> vector<4xi32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<8xi8>
    // expected-error@+1 {{vldrb_gather offsets are 16-bit unsigned, got [0, 1, 2, 3, 4, 5, 6, 70000]}}
    %g = arm_mve.vldrb_gather %p [0, 1, 2, 3, 4, 5, 6, 70000] : !uop.ptr<i8> -> vector<8xi16>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<8xi8>
    // expected-error@+1 {{vldrb_gather to vector<8xi16> takes 8 offsets, got 2}}
    %g = arm_mve.vldrb_gather %p [0, 1] : !uop.ptr<i8> -> vector<8xi16>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<8xi8>
    %c = uop.const 0 : i32
    %v = uop.vload %p : vector<8xi8>
    // expected-error@+1 {{vmlava multiplies vector<16xi8> or vector<8xi16>, got vector<8xi8>}}
    %r = arm_mve.vmlava %c, %v, %v : vector<8xi8>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<32xi8>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<32xi8>
    %c = uop.const 0 : i32
    %v = uop.vload %p : vector<16xi8>
    %h = uop.vload %p : vector<8xi8>
    %w = uop.cast %h : vector<8xi8> to vector<8xi16>
    // expected-error@+1 {{operand 'rhs' at position 2 does not verify}}
    %r = "arm_mve.vmlava"(%c, %v, %w) : (i32, vector<16xi8>, vector<8xi16>) -> i32
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<8xi8>
    // expected-error@+1 {{vldrb_gather to vector<16xi8> takes 16 offsets, got 8}}
    %g = arm_mve.vldrb_gather %p [0, 1, 2, 3, 4, 5, 6, 7] : !uop.ptr<i8> -> vector<16xi8>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<8xi8>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<8xi8>
    // expected-error@+1 {{vldrh_gather reads int16 elements, got a pointer to i8}}
    %g = arm_mve.vldrh_gather %p [0, 1, 2, 3, 4, 5, 6, 7] : !uop.ptr<i8> -> vector<8xi16>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %b = uop.define_global "input" 0 "x" : !uop.buffer<8xi16>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %b[%i] : !uop.buffer<8xi16>
    // expected-error@+1 {{vldrh_gather to vector<8xi16> takes 8 offsets, got 4}}
    %g = arm_mve.vldrh_gather %p [0, 1, 2, 3] : !uop.ptr<i16> -> vector<8xi16>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %a = uop.const 7 : i32
    %v = arm_mve.vmov_lanes %a, %a, %a, %a : vector<4xi32>
    // expected-error@+1 {{vrshr shifts by 1 to 32, got 0}}
    %r = arm_mve.vrshr %v, 0 : vector<4xi32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %a = uop.const 7 : i32
    %v = arm_mve.vmov_lanes %a, %a, %a, %a : vector<4xi32>
    // expected-error@+1 {{vrshr shifts by 1 to 32, got 33}}
    %r = arm_mve.vrshr %v, 33 : vector<4xi32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %a = uop.const 7 : i32
    %v = arm_mve.vmov_lanes %a, %a, %a, %a : vector<4xi32>
    // expected-error@+1 {{operand 'lhs' at position 0 does not verify}}
    %h = "arm_mve.vmulh"(%a, %v) : (i32, vector<4xi32>) -> vector<4xi32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<1000xi16>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %y[%i] : !uop.buffer<1000xi16>
    %a = uop.const 7 : i32
    %v = arm_mve.vmov_lanes %a, %a, %a, %a : vector<4xi32>
    // expected-error@+1 {{vstrb_scatter writes int8 elements, got a pointer to i16}}
    arm_mve.vstrb_scatter %v, %p [0, 1, 2, 3] : vector<4xi32>, !uop.ptr<i16>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<1000xi8>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %y[%i] : !uop.buffer<1000xi8>
    %a = uop.const 7 : i32
    %v = arm_mve.vmov_lanes %a, %a, %a, %a : vector<4xi32>
    // expected-error@+1 {{vstrb_scatter of vector<4xi32> takes 4 offsets, got 2}}
    arm_mve.vstrb_scatter %v, %p [0, 1] : vector<4xi32>, !uop.ptr<i8>
    func.return
  }
}


// -----

builtin.module {
  func.func @main() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<1000xi8>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %y[%i] : !uop.buffer<1000xi8>
    %a = uop.const 7 : i32
    %v = arm_mve.vmov_lanes %a, %a, %a, %a : vector<4xi32>
    // expected-error@+1 {{vstrb_scatter offsets are non-negative 32-bit, got [0, -1, 2, 3]}}
    arm_mve.vstrb_scatter %v, %p [0, -1, 2, 3] : vector<4xi32>, !uop.ptr<i8>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %a = uop.const 7 : i32
    %v = arm_mve.vmov_lanes %a, %a, %a, %a : vector<4xi32>
    // expected-error@+1 {{vmov_lane takes lane 0 to 3, got 4}}
    %l = arm_mve.vmov_lane %v, 4 : vector<4xi32>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<100000xi8>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %y[%i] : !uop.buffer<100000xi8>
    %g = arm_mve.vldrb_gather %p [0, 1, 2, 3, 4, 5, 6, 7] : !uop.ptr<i8> -> vector<8xi16>
    // expected-error@+1 {{vstrb_scatter offsets of 16-bit lanes are 16-bit unsigned, got [0, 1, 2, 3, 4, 5, 6, 65536]}}
    arm_mve.vstrb_scatter %g, %p [0, 1, 2, 3, 4, 5, 6, 65536] : vector<8xi16>, !uop.ptr<i8>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<100xi8>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %y[%i] : !uop.buffer<100xi8>
    %g = arm_mve.vldrb_gather %p [0, 1, 2, 3, 4, 5, 6, 7] : !uop.ptr<i8> -> vector<8xi16>
    // expected-error@+1 {{vstrb_scatter of vector<8xi16> takes 8 offsets, got 4}}
    arm_mve.vstrb_scatter %g, %p [0, 1, 2, 3] : vector<8xi16>, !uop.ptr<i8>
    func.return
  }
}

// -----

builtin.module {
  func.func @main() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<100xi8>
    %i = uop.const 0 : index
    %p = uop.gep inbounds %y[%i] : !uop.buffer<100xi8>
    %g = arm_mve.vldrb_gather %p [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : !uop.ptr<i8> -> vector<16xi8>
    // expected-error@+1 {{vstrb_scatter stores vector<4xi32> or vector<8xi16>, got vector<16xi8>}}
    arm_mve.vstrb_scatter %g, %p [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<16xi8>, !uop.ptr<i8>
    func.return
  }
}
