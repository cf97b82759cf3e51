// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// String tensors: !onnx.string<CAP>, UTF-8 strings of at most CAP bytes (zant/ir/strings.py).
// CHECK-LABEL: func.func @strings
// CHECK-SAME:    (%x: tensor<2x!onnx.string<4>>, %y: tensor<1x!onnx.string<3>>)
// CHECK:         %z = onnx.StringConcat(%x, %y) : (tensor<2x!onnx.string<4>>, tensor<1x!onnx.string<3>>) -> tensor<2x!onnx.string<7>>
// CHECK:         %m = onnx.RegexFullMatch(%z) {pattern = "a+\\.b"} : (tensor<2x!onnx.string<7>>) -> tensor<2xi1>
// GENERIC:       "onnx.StringConcat"(%x, %y) : (tensor<2x!onnx.string<4>>, tensor<1x!onnx.string<3>>) -> tensor<2x!onnx.string<7>>
func.func @strings(%x: tensor<2x!onnx.string<4>>, %y: tensor<1x!onnx.string<3>>) -> tensor<2xi1> {
  %z = onnx.StringConcat(%x, %y) : (tensor<2x!onnx.string<4>>, tensor<1x!onnx.string<3>>) -> tensor<2x!onnx.string<7>>
  %m = onnx.RegexFullMatch(%z) {pattern = "a+\\.b"} : (tensor<2x!onnx.string<7>>) -> tensor<2xi1>
  func.return %m : tensor<2xi1>
}
