// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// A model-local ONNX function: one onnx.function per instance (its body typed for the calling
// node's input types, its attributes resolved), a calling node an onnx.call of it.

// CHECK:      onnx.function @custom.ScaleAdd(%x: tensor<2x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> attributes {domain = "custom", op_type = "ScaleAdd"} {
// CHECK-NEXT:   %a = onnx.Constant() {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:   %t = onnx.Mul(%x, %a) : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
// CHECK-NEXT:   %y = onnx.call @custom.Act(%t) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:   %u = onnx.Add(%y, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:   onnx.return %u : tensor<2x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: onnx.function @custom.Act(%x: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {domain = "custom", op_type = "Act", onnx.note = "kept"} {
// CHECK-NEXT:   %y = onnx.Relu(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:   onnx.return %y : tensor<2x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: onnx.function @custom.Pair(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {domain = "custom", op_type = "Pair"} {
// CHECK-NEXT:   onnx.return %x, %x : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @main
// CHECK-NEXT:   %r = onnx.call @custom.ScaleAdd(%x, %b) {onnx.node_name = "sa1"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:   %p, %q = onnx.call @custom.Pair(%b) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:   func.return %r, %p : tensor<2x4xf32>, tensor<4xf32>

// GENERIC:      "onnx.function"() <{sym_name = "custom.ScaleAdd", function_type = (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>, domain = "custom", op_type = "ScaleAdd"}> ({
// GENERIC:        "onnx.return"(%{{.*}}) : (tensor<2x4xf32>) -> ()
// GENERIC:      "onnx.call"(%{{.*}}, %{{.*}}) <{callee = @custom.ScaleAdd}> {onnx.node_name = "sa1"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>

builtin.module {
  onnx.function @custom.ScaleAdd(%x: tensor<2x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> attributes {domain = "custom", op_type = "ScaleAdd"} {
    %a = onnx.Constant() {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t = onnx.Mul(%x, %a) : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
    %y = onnx.call @custom.Act(%t) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %u = onnx.Add(%y, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    onnx.return %u : tensor<2x4xf32>
  }
  onnx.function @custom.Act(%x: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {domain = "custom", op_type = "Act", onnx.note = "kept"} {
    %y = onnx.Relu(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    onnx.return %y : tensor<2x4xf32>
  }
  onnx.function @custom.Pair(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {domain = "custom", op_type = "Pair"} {
    onnx.return %x, %x : tensor<4xf32>, tensor<4xf32>
  }
  func.func @main(%x: tensor<2x4xf32>, %b: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>) {
    %r = onnx.call @custom.ScaleAdd(%x, %b) {onnx.node_name = "sa1"} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %p, %q = onnx.call @custom.Pair(%b) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    func.return %r, %p : tensor<2x4xf32>, tensor<4xf32>
  }
}
