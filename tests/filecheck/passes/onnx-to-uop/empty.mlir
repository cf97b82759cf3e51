// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// An op whose results hold no elements needs no code: a QLinearAdd over a batch of 0 (its
// per-tensor scales and zero points constants) leaves the empty input and output buffers only
// (its lowering read the scale of a data element there is none of).
// CHECK-LABEL: func.func @main()
// CHECK-NEXT:    %x = uop.define_global "input" 0 "x" : !uop.buffer<0xi8>
// CHECK-NEXT:    %y = uop.define_global "output" 0 "y" : !uop.buffer<0xi8>
// CHECK-NEXT:    func.return
func.func @main(%x: tensor<2x0x3xi8>) -> tensor<2x0x3xi8> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %s = onnx.Constant() {value = dense<5.000000e-02> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %y = onnx.QLinearAdd(%x, %s, %z, %x, %s, %z, %s, %z) : (tensor<2x0x3xi8>, tensor<f32>, tensor<i8>, tensor<2x0x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<2x0x3xi8>
  func.return %y : tensor<2x0x3xi8>
}

// -----

// A non-empty input known only at run time may be a parameter its lowering checks: an Expand
// to [0, 3] from a run-time shape keeps its lowering, which checks the shape (abi.check ... 4:
// STATUS_BAD_PARAMETER) and writes nothing.
// CHECK-LABEL: func.func @main()
// CHECK:         abi.check {{%.*}}, 4
// CHECK-NOT:     uop.range
// CHECK:         func.return
func.func @main(%x: tensor<1x3xf32>, %shape: tensor<2xi64>) -> tensor<0x3xf32> attributes {onnx.input_names = ["x", "shape"], onnx.output_names = ["y"]} {
  %y = onnx.Expand(%x, %shape) : (tensor<1x3xf32>, tensor<2xi64>) -> tensor<0x3xf32>
  func.return %y : tensor<0x3xf32>
}
