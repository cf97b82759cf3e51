// RUN: zant-opt %s -p onnx-to-uop | filecheck %s

// Optional ops on tensors (the importer gives no optional types: a tensor is an optional that
// holds one). OptionalGetElement is the input itself; OptionalHasElement is a constant, true for
// a given input and false for an absent one.

// CHECK-LABEL: func.func @main()
// CHECK:         %x = uop.define_global "input" 0 "x" : !uop.buffer<4xf32>
// CHECK-NEXT:    %given = uop.define_global "constant" 0 "given" value dense<true> : tensor<1xi1> : !uop.buffer<1xi1>
// CHECK-NEXT:    %absent = uop.define_global "constant" 1 "absent" value dense<false> : tensor<1xi1> : !uop.buffer<1xi1>
// CHECK-NEXT:    [[Y:%.*]] = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
// CHECK-NEXT:    uop.range [[I:%.*]] = 0 to 4 {
// CHECK-NEXT:      [[AT:%.*]] = uop.gep %x[[[I]]]
// CHECK-NEXT:      [[VALUE:%.*]] = uop.load [[AT]] : f32
// CHECK-NEXT:      [[TO:%.*]] = uop.gep [[Y]][[[I]]]
// CHECK-NEXT:      uop.store [[VALUE]], [[TO]] : f32
// CHECK-NEXT:    }
// CHECK:         uop.define_global "output" 1 "given"
// CHECK:         uop.view %given
// CHECK:         uop.define_global "output" 2 "absent"
// CHECK:         uop.view %absent
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<i1>, tensor<i1>) attributes {onnx.input_names = ["x"], onnx.output_names = ["y", "given", "absent"]} {
  %y = onnx.OptionalGetElement(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %given = onnx.OptionalHasElement(%x) : (tensor<4xf32>) -> tensor<i1>
  %absent = onnx.OptionalHasElement() : () -> tensor<i1>
  func.return %y, %given, %absent : tensor<4xf32>, tensor<i1>, tensor<i1>
}
