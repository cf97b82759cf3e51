// RUN: zant-opt %s -p linearize-geps | filecheck %s
// RUN: zant-opt %s -p linearize-geps,plan-arenas -t 'zig{name=net}' | filecheck %s --check-prefix=ZIG
// RUN: not zant-opt %s -p plan-arenas -t zig 2>&1 | filecheck %s --check-prefix=REFUSED

// Every gep through a view becomes a gep of its buffer at one index: strides and offset
// multiplied out in index order, a stride-0 (broadcast) index dropped, a stride-1 index added
// as it is, constant indices folded into the offset, which comes last. `inbounds` stays. The
// printer prints that index inside the address, wrapping when `inbounds`, checked otherwise.

// CHECK-LABEL: func.func @main()
// CHECK-NOT:     uop.view
// CHECK:         uop.range %i = 0 to 2 {
// CHECK-NEXT:      uop.range %j = 0 to 3 {
// CHECK-NEXT:        [[C3:%.*]] = uop.const 3 : index
// CHECK-NEXT:        [[I3:%.*]] = uop.mul %i, [[C3]] : index
// CHECK-NEXT:        [[IJ:%.*]] = uop.add [[I3]], %j : index
// CHECK-NEXT:        %p = uop.gep inbounds %x{{\[}}[[IJ]]{{\]}} : !uop.buffer<6xf32>
// CHECK:             [[B:%.*]] = uop.const 1 : index
// CHECK-NEXT:        [[JB:%.*]] = uop.add %j, [[B]] : index
// CHECK-NEXT:        %q = uop.gep %w{{\[}}[[JB]]{{\]}} : !uop.buffer<4xf32>
// CHECK:             [[TWO:%.*]] = uop.const 2 : index
// CHECK-NEXT:        %r = uop.gep %w{{\[}}[[TWO]]{{\]}} : !uop.buffer<4xf32>
// CHECK:             %o = uop.gep %y[%i] : !uop.buffer<6xf32>
// CHECK:           %o2 = uop.gep inbounds %y[%k] : !uop.buffer<6xf32>

// ZIG:      const addr_p = &input_x[@as(usize, @bitCast(idx_i *% 3 +% idx_j))];
// ZIG:      const addr_q = &const_w[0..4][@intCast(idx_j + 1)];
// ZIG:      const addr_o = &output_y[0..6][@intCast(idx_i)];
// ZIG:      const addr_o2 = &output_y[@as(usize, @bitCast(idx_k))];

// REFUSED: zant-opt: error: a uop.gep through a view reached the Zig printer: run the linearize-geps pass first

builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<6xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<6xf32>
    %w = uop.define_global "constant" 0 "w" value dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> : !uop.buffer<4xf32>
    %xv = uop.view %x : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
    %wb = uop.view %w : !uop.buffer<4xf32> -> !uop.view<2x3xf32, strides [0, 1], offset 1>
    %wc = uop.view %w : !uop.buffer<4xf32> -> !uop.view<2x2xf32, strides [2, 1], offset 0>
    uop.range %i = 0 to 2 {
      uop.range %j = 0 to 3 {
        %p = uop.gep inbounds %xv[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
        %a = uop.load %p : f32
        %q = uop.gep %wb[%i, %j] : !uop.view<2x3xf32, strides [0, 1], offset 1>
        %b = uop.load %q : f32
        %one = uop.const 1 : index
        %zero = uop.const 0 : index
        %r = uop.gep %wc[%one, %zero] : !uop.view<2x2xf32, strides [2, 1], offset 0>
        %c = uop.load %r : f32
        %s = uop.add %a, %b : f32
        %t = uop.add %s, %c : f32
        %o = uop.gep %y[%i] : !uop.buffer<6xf32>
        uop.store %t, %o : f32
      }
    }
    uop.range %k = 0 to 6 {
      %o2 = uop.gep inbounds %y[%k] : !uop.buffer<6xf32>
      %z = uop.const 0.0 : f32
      uop.store %z, %o2 : f32
    }
    func.return
  }
}
