// RUN: %python %inputs/make_model.py mlp %t.onnx && zant-opt %t.onnx --print-debuginfo | filecheck %s --check-prefix=IMPORT
// RUN: zant-opt %s -p onnx-to-uop --print-debuginfo | filecheck %s --check-prefix=LOWER
// RUN: zant-opt %s -p onnx-to-uop,fuse-loops --print-debuginfo | filecheck %s --check-prefix=FUSE
// RUN: zant-opt %s -p onnx-to-uop,fuse-loops --print-debuginfo | zant-opt --print-debuginfo | filecheck %s --check-prefix=FUSE

// Provenance: the frontend gives each node's op the node's name as its location, `onnx-to-uop`
// gives it to everything the op lowers to, and `fuse-loops` gives a fused nest both names
// (printed with --print-debuginfo, and parsed back).

// IMPORT:      onnx.Gemm(%x, %w1, %b1) {{.*}} loc("gemm0")
// IMPORT-NEXT: onnx.Relu(%h) {{.*}} loc("relu0")
// IMPORT-NEXT: onnx.Gemm(%r, %w2) {{.*}} loc("gemm1")

// LOWER-LABEL: func.func @main()
// LOWER:         %x = uop.define_global "input" 0 "x" : !uop.buffer<4xf32> loc(unknown)
// LOWER-NEXT:    %e = uop.define_local "e" : !uop.buffer<4xf32> loc("exp0")
// LOWER-NEXT:    uop.range [[I:%.*]] = 0 to 4 {
// LOWER-NEXT:      uop.gep %x[[[I]]] : !uop.buffer<4xf32> loc("exp0")
// LOWER-NEXT:      uop.load {{.*}} loc("exp0")
// LOWER-NEXT:      uop.exp {{.*}} loc("exp0")
// LOWER-NEXT:      uop.gep %e[[[I]]] : !uop.buffer<4xf32> loc("exp0")
// LOWER-NEXT:      uop.store {{.*}} loc("exp0")
// LOWER-NEXT:    } loc("exp0")
// LOWER-NEXT:    %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32> loc("relu0")
// LOWER-NEXT:    uop.range [[J:%.*]] = 0 to 4 {
// LOWER:           uop.max {{.*}} loc("relu0")
// LOWER:         } loc("relu0")

// FUSE-LABEL: func.func @main()
// FUSE:         uop.range [[I:%.*]] = 0 to 4 {
// FUSE:           uop.exp {{.*}} loc("exp0")
// FUSE:           uop.max {{.*}} loc("relu0")
// FUSE:         } loc(fused["exp0", "relu0"])
// FUSE-NEXT:    func.return

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %e = onnx.Exp(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("exp0")
  %y = onnx.Relu(%e) : (tensor<4xf32>) -> tensor<4xf32> loc("relu0")
  func.return %y : tensor<4xf32>
}
