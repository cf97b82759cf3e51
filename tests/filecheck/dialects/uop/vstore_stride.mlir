// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s

// A strided vector store (a scatter): lane k goes to the element k·stride after the pointer.

// CHECK-LABEL: func.func @scatter
// CHECK:         %p = uop.gep %y[%i] : !uop.buffer<32xf32>
// CHECK-NEXT:    uop.vstore %v, %p stride 4 : vector<8xf32>
// CHECK-NEXT:    uop.vstore %v, %p : vector<8xf32>
// CHECK-NEXT:    uop.vstore %v, %p stride 3 {tag} : vector<8xf32>

builtin.module {
  func.func @scatter() {
    %y = uop.define_global "output" 0 "y" : !uop.buffer<32xf32>
    %i = uop.const 0 : index
    %x = uop.const 1.0 : f32
    %v = uop.broadcast %x : f32 to vector<8xf32>
    %p = uop.gep %y[%i] : !uop.buffer<32xf32>
    uop.vstore %v, %p stride 4 : vector<8xf32>
    uop.vstore %v, %p stride 1 : vector<8xf32>
    uop.vstore %v, %p stride 3 {tag} : vector<8xf32>
    func.return
  }
}
