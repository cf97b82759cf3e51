// RUN: zant-opt %s -p fold-constant-loads | filecheck %s

// A load of a constant's element at a fixed address becomes its value (through a view too; a
// broadcast index does not matter), and the gep goes with it. A varying address, an address
// outside the buffer (left to the checked gep) and a buffer that is not a constant stay loads.

// CHECK-LABEL: func.func @main()
// CHECK-NOT:     %ps =
// CHECK:         %s = uop.const 2.500000e-01 : f32
// CHECK-NEXT:    %c0 = uop.const 0 : index
// CHECK-NEXT:    %z = uop.const -3 : i8
// CHECK-NEXT:    uop.range %b = 0 to 3 {
// CHECK-NEXT:      %t = uop.const 4.000000e+00 : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %c7 = uop.const 7 : index
// CHECK-NEXT:    %pout = uop.gep %w[%c7] : !uop.buffer<4xf32>
// CHECK-NEXT:    %out = uop.load %pout : f32
// CHECK-NEXT:    %px = uop.gep %x[%c1] : !uop.buffer<2xf32>
// CHECK-NEXT:    %a = uop.load %px : f32
// CHECK:           %pw = uop.gep %w[%i] : !uop.buffer<4xf32>
// CHECK-NEXT:      %w1 = uop.load %pw : f32

builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<2xf32>
    %scale = uop.define_global "constant" 0 "scale" value dense<[0.5, 0.25]> : tensor<2xf32> : !uop.buffer<2xf32>
    %zero = uop.define_global "constant" 1 "zero" value dense<-3> : tensor<1xi8> : !uop.buffer<1xi8>
    %w = uop.define_global "constant" 2 "w" value dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> : !uop.buffer<4xf32>
    %wv = uop.view %w : !uop.buffer<4xf32> -> !uop.view<3x2x2xf32, strides [0, 2, 1], offset 0>
    %c1 = uop.const 1 : index
    %ps = uop.gep %scale[%c1] : !uop.buffer<2xf32>
    %s = uop.load %ps : f32
    %c0 = uop.const 0 : index
    %pz = uop.gep %zero[%c0] : !uop.buffer<1xi8>
    %z = uop.load %pz : i8
    uop.range %b = 0 to 3 {
      %pt = uop.gep %wv[%b, %c1, %c1] : !uop.view<3x2x2xf32, strides [0, 2, 1], offset 0>
      %t = uop.load %pt : f32
    }
    %c7 = uop.const 7 : index
    %pout = uop.gep %w[%c7] : !uop.buffer<4xf32>
    %out = uop.load %pout : f32
    %px = uop.gep %x[%c1] : !uop.buffer<2xf32>
    %a = uop.load %px : f32
    uop.range %i = 0 to 4 {
      %pw = uop.gep %w[%i] : !uop.buffer<4xf32>
      %w1 = uop.load %pw : f32
    }
    func.return
  }
}
