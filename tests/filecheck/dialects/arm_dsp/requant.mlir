// RUN: zant-opt %s | filecheck %s
// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// arm_dsp.smmla (c + the high word of a signed 32 x 32 product) and arm_dsp.ssat (a shift right
// saturated to a signed width): a requantization's two instructions (arm-dsp-requant).

// CHECK-LABEL: func.func @requant
// CHECK:         %[[R:.*]] = arm_dsp.smmla %x, %m, %c : i32
// CHECK-NEXT:    %{{.*}} = arm_dsp.ssat %[[R]] {bits = #builtin.int<8>, shift = #builtin.int<11>} : i32
func.func @requant(%x : i32, %m : i32) -> i32 {
  %c = uop.const -7168 : i32
  %r = arm_dsp.smmla %x, %m, %c : i32
  %y = arm_dsp.ssat %r {bits = #builtin.int<8>, shift = #builtin.int<11>} : i32
  func.return %y : i32
}
