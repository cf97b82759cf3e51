// RUN: zant-opt %s --split-input-file | filecheck %s

// The gathers at their offsets' limits (16-bit unsigned lanes: 0 and 65,535 elements from the
// pointer, one byte or int16 each): accepted. invalid-reach.mlir: one past, refused.

// CHECK-LABEL: func.func @vldrb_at_limit
// CHECK: arm_mve.vldrb_gather %{{.*}} [0, 1, 2, 3, 4, 5, 6, 65535]
builtin.module {
  func.func @vldrb_at_limit() {
    %b = uop.define_local "x" : !uop.buffer<131072xi8>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<131072xi8>
    %g = arm_mve.vldrb_gather %p [0, 1, 2, 3, 4, 5, 6, 65535] : !uop.ptr<i8> -> vector<8xi16>
    func.return
  }
}

// -----

// CHECK-LABEL: func.func @vldrh_at_limit
// CHECK: arm_mve.vldrh_gather %{{.*}} [0, 1, 2, 3, 4, 5, 6, 65535]
builtin.module {
  func.func @vldrh_at_limit() {
    %b = uop.define_local "x" : !uop.buffer<131072xi16>
    %i = uop.const 0 : index
    %p = uop.gep %b[%i] : !uop.buffer<131072xi16>
    %g = arm_mve.vldrh_gather %p [0, 1, 2, 3, 4, 5, 6, 65535] : !uop.ptr<i16> -> vector<8xi16>
    func.return
  }
}
