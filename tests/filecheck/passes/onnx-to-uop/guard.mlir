// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// Zant's Guard (a Loop unrolled for the extent its scan outputs declare, its trip count a
// graph input): the condition is computed, loaded and checked where the op is, before the
// kernels after it; a false one ends the function with status 4 (STATUS_BAD_PARAMETER).
// CHECK-LABEL: func.func @main()
// CHECK:         %t = uop.define_global "input" 1 "t" : !uop.buffer<1xi64>
// CHECK:         [[T:%.*]] = uop.load {{%.*}} : i64
// CHECK:         [[EQ:%.*]] = uop.cmpeq [[T]], {{%.*}} : i64
// CHECK:         uop.store [[EQ]], {{%.*}} : i1
// CHECK:         [[OK:%.*]] = uop.load {{%.*}} : i1
// CHECK-NEXT:    abi.check [[OK]], 4
// CHECK:         uop.range
// CHECK:           uop.max
func.func @main(%x: tensor<3xf32>, %t: tensor<i64>) -> tensor<3xf32> attributes {onnx.input_names = ["x", "t"], onnx.output_names = ["y"]} {
  %k = onnx.Constant() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %ok = onnx.Equal(%t, %k) : (tensor<i64>, tensor<i64>) -> tensor<i1>
  onnx.Guard(%ok) : (tensor<i1>) -> ()
  %y = onnx.Relu(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// -----

// A one-element condition of rank 1 (a Loop's `cond` input declared [1]) is read at index 0.
// CHECK-LABEL: func.func @main()
// CHECK:         %c = uop.define_global "input" 0 "c" : !uop.buffer<1xi1>
// CHECK:         [[I:%.*]] = uop.const 0 : index
// CHECK-NEXT:    [[P:%.*]] = uop.gep %c[[[I]]] : !uop.buffer<1xi1>
// CHECK-NEXT:    [[OK:%.*]] = uop.load [[P]] : i1
// CHECK-NEXT:    abi.check [[OK]], 4
func.func @main(%c: tensor<1xi1>, %x: tensor<2xf32>) -> tensor<2xf32> attributes {onnx.input_names = ["c", "x"], onnx.output_names = ["y"]} {
  onnx.Guard(%c) : (tensor<1xi1>) -> ()
  %y = onnx.Neg(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
