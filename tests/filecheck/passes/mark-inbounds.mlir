// RUN: zant-opt %s -p mark-inbounds | filecheck %s
// RUN: zant-opt %s -p mark-inbounds,mark-inbounds | filecheck %s

// A gep is marked when static bounds of its indices keep every element it reaches, and every
// lane of a vector access through it, inside its buffer: loop ranges and constants through
// index arithmetic and the view's strides and offset. An index loaded from memory has no bound;
// a vector load whose last lane can pass the end is not proven either, nor an address with a
// part that could overflow a 32-bit isize (the printer computes a proven address wrapping).

// CHECK-LABEL: func.func @main()
// CHECK:         %p = uop.gep inbounds %x[%i] : !uop.buffer<3xi64>
// CHECK:         %q = uop.gep %pairs[%n2, %one] : !uop.view<2x2xf32, strides [2, 1], offset 0>
// CHECK:         %o = uop.gep inbounds %y[%i] : !uop.buffer<8xf32>
// CHECK:         %pe = uop.gep inbounds %v[%e] : !uop.buffer<8xf32>
// CHECK:         %pf = uop.gep %v[%f] : !uop.buffer<8xf32>
// CHECK:         %o1 = uop.gep inbounds %y[%f] : !uop.buffer<8xf32>
// CHECK:         %r = uop.gep inbounds %pairs[%k, %k2] : !uop.view<2x2xf32, strides [2, 1], offset 0>
// CHECK:         %s = uop.gep %pairs[%k, %k3] : !uop.view<2x2xf32, strides [2, 1], offset 0>
// CHECK:         %w = uop.gep %v[%zero] : !uop.buffer<8xf32>

builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<3xi64>
    %v = uop.define_global "input" 1 "v" : !uop.buffer<8xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<8xf32>
    %table = uop.define_global "constant" 0 "table" value dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> : !uop.buffer<4xf32>
    %pairs = uop.view %table : !uop.buffer<4xf32> -> !uop.view<2x2xf32, strides [2, 1], offset 0>
    uop.range %i = 0 to 3 {
      %p = uop.gep %x[%i] : !uop.buffer<3xi64>
      %n = uop.load %p : i64
      %n2 = uop.cast %n : i64 to index
      %one = uop.const 1 : index
      %q = uop.gep %pairs[%n2, %one] : !uop.view<2x2xf32, strides [2, 1], offset 0>
      %t = uop.load %q : f32
      %o = uop.gep %y[%i] : !uop.buffer<8xf32>
      uop.store %t, %o : f32
    }
    uop.range %e = 0 to 8 step 4 {
      %pe = uop.gep %v[%e] : !uop.buffer<8xf32>
      %four = uop.vload %pe : vector<4xf32>
      %s0 = uop.reduce_add %four : vector<4xf32> to f32
      %o0 = uop.gep %y[%e] : !uop.buffer<8xf32>
      uop.store %s0, %o0 : f32
    }
    uop.range %f = 0 to 6 {
      %pf = uop.gep %v[%f] : !uop.buffer<8xf32>
      %tail = uop.vload %pf : vector<4xf32>
      %s1 = uop.reduce_add %tail : vector<4xf32> to f32
      %o1 = uop.gep %y[%f] : !uop.buffer<8xf32>
      uop.store %s1, %o1 : f32
    }
    uop.range %k = 0 to 2 {
      %c1 = uop.const 1 : index
      %k2 = uop.sub %c1, %k : index
      %r = uop.gep %pairs[%k, %k2] : !uop.view<2x2xf32, strides [2, 1], offset 0>
      %rv = uop.load %r : f32
      %k3 = uop.add %k, %c1 : index
      %s = uop.gep %pairs[%k, %k3] : !uop.view<2x2xf32, strides [2, 1], offset 0>
      %sv = uop.load %s : f32
      %huge = uop.const 1099511627776 : index
      %c0 = uop.const 0 : index
      %big = uop.mul %k, %huge : index
      %zero = uop.mul %big, %c0 : index
      %w = uop.gep %v[%zero] : !uop.buffer<8xf32>
      %wv = uop.load %w : f32
    }
    func.return
  }
}
