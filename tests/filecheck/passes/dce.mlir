// RUN: zant-opt %s --split-input-file -p dce | filecheck %s
// RUN: zant-opt %s --split-input-file -p cse,dce | filecheck %s --check-prefix=CSE

// xDSL's own `dce` and `cse` work on the onnx dialect: every ONNX op except the random ones
// (and those holding a subgraph) has no memory effect. An unused chain (constant → Add → Relu)
// disappears; a random op without uses stays, since drawing from the generator is an effect.

// CHECK-LABEL: func.func @main
// CHECK-NOT:     onnx.Constant
// CHECK-NOT:     onnx.Add
// CHECK:         %n = onnx.RandomNormal()
// CHECK-NEXT:    %d = onnx.Relu(%x)
// CHECK-NEXT:    %e = onnx.Relu(%x)
// CHECK-NEXT:    %f = onnx.Add(%d, %e)
// CHECK-NEXT:    func.return %f

// `cse` merges the two identical Relu ops, then `dce` erases the unused chain.
// CSE-LABEL: func.func @main
// CSE-NEXT:    %n = onnx.RandomNormal()
// CSE-NEXT:    %d = onnx.Relu(%x)
// CSE-NEXT:    %f = onnx.Add(%d, %d)
// CSE-NEXT:    func.return %f
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = onnx.Constant() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %a = onnx.Add(%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = onnx.Relu(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %n = onnx.RandomNormal() {shape = array<i64: 4>} : () -> tensor<4xf32>
  %d = onnx.Relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %e = onnx.Relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %f = onnx.Add(%d, %e) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %f : tensor<4xf32>
}

// -----

// On the uop dialect the ALU, index and address ops are pure: `cse` merges the repeated
// constant and address computation inside a loop body; `dce` erases an unused one. Stores
// stay (they write memory).

// CHECK-LABEL: func.func @main
// CHECK:         uop.range %[[I:.*]] = 0 to 4 {
// CHECK-NEXT:      %[[P:.*]] = uop.gep %x[%[[I]]]
// CHECK-NEXT:      %[[V:.*]] = uop.load %[[P]]
// CHECK-NEXT:      %[[Z:.*]] = uop.const 0.000000e+00
// CHECK-NEXT:      %[[M:.*]] = uop.max %[[V]], %[[Z]]
// CHECK-NEXT:      %[[Z2:.*]] = uop.const 0.000000e+00
// CHECK-NEXT:      %[[A:.*]] = uop.add %[[M]], %[[Z2]]
// CHECK-NEXT:      %[[Q:.*]] = uop.gep %y[%[[I]]]
// CHECK-NEXT:      uop.store %[[A]], %[[Q]]

// CSE-LABEL: func.func @main
// CSE:         uop.range %[[I:.*]] = 0 to 4 {
// CSE-NEXT:      %[[P:.*]] = uop.gep %x[%[[I]]]
// CSE-NEXT:      %[[V:.*]] = uop.load %[[P]]
// CSE-NEXT:      %[[Z:.*]] = uop.const 0.000000e+00
// CSE-NEXT:      %[[M:.*]] = uop.max %[[V]], %[[Z]]
// CSE-NEXT:      %[[A:.*]] = uop.add %[[M]], %[[Z]]
// CSE-NEXT:      %[[Q:.*]] = uop.gep %y[%[[I]]]
// CSE-NEXT:      uop.store %[[A]], %[[Q]]
func.func @main() {
  %x = uop.define_global "input" 0 "input0" : !uop.buffer<4xf32>
  %y = uop.define_global "output" 0 "output0" : !uop.buffer<4xf32>
  uop.range %0 = 0 to 4 {
    %1 = uop.gep %x[%0] : !uop.buffer<4xf32>
    %2 = uop.load %1 : f32
    %3 = uop.const 0.000000e+00 : f32
    %4 = uop.max %2, %3 : f32
    %5 = uop.const 0.000000e+00 : f32
    %6 = uop.add %4, %5 : f32
    %unused = uop.mul %4, %4 : f32
    %7 = uop.gep %y[%0] : !uop.buffer<4xf32>
    uop.store %6, %7 : f32
  }
  func.return
}
