// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// Every uop op and type in its custom format; both RUN lines must print the same IR.

// CHECK: builtin.module {
// CHECK-NEXT:   func.func @main() {
// CHECK-NEXT:     %x = uop.define_global "input" 0 "x" : !uop.buffer<6xf32>
// CHECK-NEXT:     %y = uop.define_global "output" 0 "y" : !uop.buffer<6xi32>
// CHECK-NEXT:     %w = uop.define_global "constant" 0 "w" value dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32> : !uop.buffer<2xf32>
// CHECK-NEXT:     %t = uop.define_local "t" : !uop.buffer<4xi8>
// CHECK-NEXT:     %u = uop.define_local "u" at 16 : !uop.buffer<2xi1>
// CHECK-NEXT:     %v = uop.view %x : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
// CHECK-NEXT:     uop.range %i = 0 to 2 {
// CHECK-NEXT:       uop.range %j = 1 to 3 step 2 {
// CHECK-NEXT:         %p = uop.gep %v[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
// CHECK-NEXT:         %a = uop.load %p : f32
// CHECK-NEXT:         %c = uop.const 1.500000e+00 : f32
// CHECK-NEXT:         %n = uop.const 3 : index
// CHECK-NEXT:         %add = uop.add %a, %c : f32
// CHECK-NEXT:         %sub = uop.sub %add, %c : f32
// CHECK-NEXT:         %mul = uop.mul %sub, %c : f32
// CHECK-NEXT:         %div = uop.div %mul, %c : f32
// CHECK-NEXT:         %rem = uop.rem %div, %c : f32
// CHECK-NEXT:         %max = uop.max %rem, %c : f32
// CHECK-NEXT:         %min = uop.min %max, %c : f32
// CHECK-NEXT:         %pow = uop.pow %min, %c : f32
// CHECK-NEXT:         %neg = uop.neg %pow : f32
// CHECK-NEXT:         %abs = uop.abs %neg : f32
// CHECK-NEXT:         %sign = uop.sign %abs : f32
// CHECK-NEXT:         %sqrt = uop.sqrt %sign : f32
// CHECK-NEXT:         %recip = uop.recip %sqrt : f32
// CHECK-NEXT:         %exp = uop.exp %recip : f32
// CHECK-NEXT:         %log = uop.log %exp : f32
// CHECK-NEXT:         %tanh = uop.tanh %log : f32
// CHECK-NEXT:         %erf = uop.erf %tanh : f32
// CHECK-NEXT:         %floor = uop.floor %erf : f32
// CHECK-NEXT:         %ceil = uop.ceil %floor : f32
// CHECK-NEXT:         %round = uop.round %ceil : f32
// CHECK-NEXT:         %sin = uop.sin %round : f32
// CHECK-NEXT:         %cos = uop.cos %sin : f32
// CHECK-NEXT:         %isnan = uop.isnan %cos : f32
// CHECK-NEXT:         %lt = uop.cmplt %isnan, %c : f32
// CHECK-NEXT:         %le = uop.cmple %i, %n : index
// CHECK-NEXT:         %eq = uop.cmpeq %lt, %le : i1
// CHECK-NEXT:         %ne = uop.cmpne %eq, %lt : i1
// CHECK-NEXT:         %k = uop.cast %isnan : f32 to i32
// CHECK-NEXT:         %bits = uop.bitcast %k : i32 to f32
// CHECK-NEXT:         %and = uop.and %k, %k : i32
// CHECK-NEXT:         %or = uop.or %and, %k : i32
// CHECK-NEXT:         %xor = uop.xor %or, %k : i32
// CHECK-NEXT:         %shl = uop.shl %xor, %k : i32
// CHECK-NEXT:         %shr = uop.shr %shl, %k : i32
// CHECK-NEXT:         %not = uop.not %shr : i32
// CHECK-NEXT:         %sel = uop.where %ne, %not, %k : i32
// CHECK-NEXT:         %acc = uop.define_acc 0 : i32
// CHECK-NEXT:         uop.mulacc %acc, %sel, %k : !uop.acc<i32>, i32
// CHECK-NEXT:         uop.acc_set %acc, %sel : !uop.acc<i32>, i32
// CHECK-NEXT:         %g = uop.acc_get %acc : !uop.acc<i32>, i32
// CHECK-NEXT:         %q = uop.gep %y[%i] : !uop.buffer<6xi32>
// CHECK-NEXT:         uop.store %g, %q : i32
// CHECK-NEXT:         %q_in = uop.gep inbounds %y[%i] : !uop.buffer<6xi32>
// CHECK-NEXT:         %facc = uop.define_acc 0.000000e+00 : f32
// CHECK-NEXT:         uop.mulacc fused %facc, %a, %c : !uop.acc<f32>, f32
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }

builtin.module {
  func.func @main() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<6xf32>
    %y = uop.define_global "output" 0 "y" : !uop.buffer<6xi32>
    %w = uop.define_global "constant" 0 "w" value dense<[1.0, 2.0]> : tensor<2xf32> : !uop.buffer<2xf32>
    %t = uop.define_local "t" : !uop.buffer<4xi8>
    %u = uop.define_local "u" at 16 : !uop.buffer<2xi1>
    %v = uop.view %x : !uop.buffer<6xf32> -> !uop.view<2x3xf32, strides [3, 1], offset 0>
    uop.range %i = 0 to 2 {
      uop.range %j = 1 to 3 step 2 {
        %p = uop.gep %v[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>
        %a = uop.load %p : f32
        %c = uop.const 1.5 : f32
        %n = uop.const 3 : index
        %add = uop.add %a, %c : f32
        %sub = uop.sub %add, %c : f32
        %mul = uop.mul %sub, %c : f32
        %div = uop.div %mul, %c : f32
        %rem = uop.rem %div, %c : f32
        %max = uop.max %rem, %c : f32
        %min = uop.min %max, %c : f32
        %pow = uop.pow %min, %c : f32
        %neg = uop.neg %pow : f32
        %abs = uop.abs %neg : f32
        %sign = uop.sign %abs : f32
        %sqrt = uop.sqrt %sign : f32
        %recip = uop.recip %sqrt : f32
        %exp = uop.exp %recip : f32
        %log = uop.log %exp : f32
        %tanh = uop.tanh %log : f32
        %erf = uop.erf %tanh : f32
        %floor = uop.floor %erf : f32
        %ceil = uop.ceil %floor : f32
        %round = uop.round %ceil : f32
        %sin = uop.sin %round : f32
        %cos = uop.cos %sin : f32
        %isnan = uop.isnan %cos : f32
        %lt = uop.cmplt %isnan, %c : f32
        %le = uop.cmple %i, %n : index
        %eq = uop.cmpeq %lt, %le : i1
        %ne = uop.cmpne %eq, %lt : i1
        %k = uop.cast %isnan : f32 to i32
        %bits = uop.bitcast %k : i32 to f32
        %and = uop.and %k, %k : i32
        %or = uop.or %and, %k : i32
        %xor = uop.xor %or, %k : i32
        %shl = uop.shl %xor, %k : i32
        %shr = uop.shr %shl, %k : i32
        %not = uop.not %shr : i32
        %sel = uop.where %ne, %not, %k : i32
        %acc = uop.define_acc 0 : i32
        uop.mulacc %acc, %sel, %k : !uop.acc<i32>, i32
        uop.acc_set %acc, %sel : !uop.acc<i32>, i32
        %g = uop.acc_get %acc : !uop.acc<i32>, i32
        %q = uop.gep %y[%i] : !uop.buffer<6xi32>
        uop.store %g, %q : i32
        %q_in = uop.gep inbounds %y[%i] : !uop.buffer<6xi32>
        %facc = uop.define_acc 0.0 : f32
        uop.mulacc fused %facc, %a, %c : !uop.acc<f32>, f32
      }
    }
    func.return
  }
}
