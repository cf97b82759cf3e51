// RUN: zant-opt %s -p dce --check-each-pass 2>&1 >/dev/null | filecheck %s

// A module the checker cannot run is not an error: the Gather's seeded indices (-5..5) leave
// its 3 elements, the ONNX reference fails on them, and zant-opt notes each module it could
// not check, and that it checked no pass.

// CHECK:      zant-opt: note: --check-each-pass could not check the input module: the ONNX reference fails on 'onnx.Gather': index {{-?[0-9]+}} is out of bounds for axis 0 with size 3
// CHECK-NEXT: zant-opt: note: --check-each-pass could not check pass 'dce': the ONNX reference fails on 'onnx.Gather'
// CHECK-NEXT: zant-opt: note: --check-each-pass checked no pass

builtin.module attributes {onnx.opset = 22 : i64} {
  func.func @main(%x: tensor<3xf32>, %i: tensor<4xi64>) -> tensor<4xf32> {
    %y = onnx.Gather(%x, %i) : (tensor<3xf32>, tensor<4xi64>) -> tensor<4xf32>
    func.return %y : tensor<4xf32>
  }
}
