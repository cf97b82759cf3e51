// RUN: zant-opt %s -p mve-gather | filecheck %s
// RUN: zant-opt %s -p 'set-target{target=cortex-m55},mve-gather' | filecheck %s
// RUN: not zant-opt %s -p 'set-target{target=cortex-m4},mve-gather' 2>&1 | filecheck %s --check-prefix=NOMVE
// NOMVE: zant-opt: error: pass 'mve-gather' failed: the module's target #zant.target<"cortex-m4"> has no Helium (MVE); its pipeline does not run mve-gather

// Each column of a 25x5 plane copied into a row of a buffer (conv_depthwise_mve's transposed
// copy): 8 bytes 5 apart, stored contiguously, become one VLDRB.S16 gather at offsets 0, 5,
// …, 35 and one VSTRB.16 of its low bytes.

builtin.module {
  // CHECK-LABEL: func.func @copy
  // CHECK:         uop.range %[[I:.*]] = 0 to 5 {
  // CHECK-NEXT:      %[[FROM:.*]] = uop.gep inbounds %x[%[[I]]] : !uop.buffer<125xi8>
  // CHECK-NEXT:      %[[ROW:.*]] = uop.mul %[[I]], %{{.*}} : index
  // CHECK-NEXT:      %[[TO:.*]] = uop.gep inbounds %p[%[[ROW]]] : !uop.buffer<40xi8>
  // CHECK-NEXT:      %[[G:.*]] = arm_mve.vldrb_gather %[[FROM]] [0, 5, 10, 15, 20, 25, 30, 35] : !uop.ptr<i8> -> vector<8xi16>
  // CHECK-NEXT:      arm_mve.vstrb_scatter %[[G]], %[[TO]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<8xi16>, !uop.ptr<i8>
  // CHECK-NEXT:    }
  // CHECK-NOT:     uop.vload
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

  // Kept: a checked gep (its portable gather checks each lane), 16 lanes (LLVM takes a 16-lane
  // gather's shuffle apart into byte stores), a value used other than by a contiguous store, and
  // offsets past 16 bits (7 · 10000).
  // CHECK-LABEL: func.func @kept
  // CHECK-NOT:     arm_mve
  // CHECK-COUNT-4: uop.vload
  // CHECK-NOT:     arm_mve
  // CHECK:         func.return
  func.func @kept() {
    %x = uop.define_global "input" 0 "x" : !uop.buffer<100000xi8>
    %p = uop.define_global "output" 0 "p" : !uop.buffer<64xi8>
    %q = uop.define_global "output" 1 "q" : !uop.buffer<64xi16>
    %i = uop.const 0 : index
    %from = uop.gep inbounds %x[%i] : !uop.buffer<100000xi8>
    %checked = uop.gep %x[%i] : !uop.buffer<100000xi8>
    %to = uop.gep inbounds %p[%i] : !uop.buffer<64xi8>
    %wide = uop.gep inbounds %q[%i] : !uop.buffer<64xi16>
    %a = uop.vload %checked stride 5 : vector<8xi8>
    uop.vstore %a, %to : vector<8xi8>
    %b = uop.vload %from stride 5 : vector<16xi8>
    uop.vstore %b, %to : vector<16xi8>
    %c = uop.vload %from stride 5 : vector<8xi8>
    %d = uop.cast %c : vector<8xi8> to vector<8xi16>
    uop.vstore %d, %wide : vector<8xi16>
    %e = uop.vload %from stride 10000 : vector<8xi8>
    uop.vstore %e, %to : vector<8xi8>
    func.return
  }
}
