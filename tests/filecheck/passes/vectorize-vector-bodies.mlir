// RUN: zant-opt %s -p 'vectorize{width=4}' | filecheck %s

// A loop whose body already works on vectors (conv_depthwise_mve's transposed copy: 8 bytes 5
// apart stored as a row of 8) is left as it is: its vector ops' lanes are not the loop's, and a
// vector loop over it would run the body once in every 4 iterations.

// CHECK-LABEL: func.func @copy
// CHECK:         uop.range %{{.*}} = 0 to 5 {
// CHECK-NEXT:      uop.gep inbounds %{{.*}}[%{{.*}}] : !uop.buffer<125xi8>
// CHECK:           uop.vload %{{.*}} stride 5 : vector<8xi8>
// CHECK-NEXT:      uop.vstore %{{.*}}, %{{.*}} : vector<8xi8>
// CHECK-NEXT:    }
// CHECK-NOT:     uop.range
// CHECK:         func.return
builtin.module {
  func.func @copy() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<125xi8>
    %p = uop.define_global "output" 0 "p" : !uop.buffer<40xi8>
    %eight = uop.const 8 : index
    uop.range %i = 0 to 5 {
      %from = uop.gep inbounds %x[%i] : !uop.buffer<125xi8>
      %row = uop.mul %i, %eight : index
      %to = uop.gep inbounds %p[%row] : !uop.buffer<40xi8>
      %v = uop.vload %from stride 5 : vector<8xi8>
      uop.vstore %v, %to : vector<8xi8>
    }
    func.return
  }
}
