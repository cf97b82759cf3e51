// RUN: zant-opt %s -p 'fold-qdq,fold-constants,fold-batchnorm,dce,onnx-to-uop,fuse-loops,dce,plan-arenas' --check-each-pass | filecheck %s --check-prefix=OK
// RUN: not zant-opt %s -p 'fold-constants,buggy-fold-batchnorm,dce,onnx-to-uop' --check-each-pass --load-passes %inputs/buggy_fold_batchnorm.py 2>&1 | filecheck %s --check-prefix=FOLD
// RUN: not zant-opt %s -p 'fold-batchnorm,dce,buggy-onnx-to-uop,fuse-loops' --check-each-pass --check-seed 5 --load-passes %inputs/buggy_onnx_to_uop.py 2>&1 | filecheck %s --check-prefix=LOWER

// --check-each-pass from the first pass: the onnx-dialect module is interpreted by the ONNX
// reference evaluator op by op, so a bug in an onnx-level pass or in onnx-to-uop is named.
// Conv → BatchNormalization → Relu with epsilon 1/16, of the order of the variances:
// * fold-batchnorm folds the BatchNormalization into the Conv and keeps the result;
// * a copy of it that leaves epsilon out of the folded scale (Inputs/buggy_fold_batchnorm.py)
//   changes the result, and the checker names it before the module reaches uop;
// * an onnx-to-uop whose Relu lowering is a copy (Inputs/buggy_onnx_to_uop.py) is named too:
//   the onnx module's result (by the reference) differs from the uop module's (interpreted).

// OK:     func.func @main()
// OK-NOT: onnx.
// OK:     abi.arena

// FOLD: zant-opt: error: pass 'buggy-fold-batchnorm' changed output 0: max abs diff {{[0-9.e+-]+}} at index {{[0-9]+}} (seed 0)

// LOWER: zant-opt: error: pass 'buggy-onnx-to-uop' changed output 0: max abs diff {{[0-9.e+-]+}} at index {{[0-9]+}} (seed 5)

builtin.module attributes {onnx.opset = 22 : i64} {
  func.func @main(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
    %w = onnx.Constant() {value = dense<[[[[0.5, -0.25, 0.125], [1.0, 0.75, -0.5], [0.25, 0.5, -1.0]]], [[[-0.5, 0.25, 1.0], [0.125, -0.75, 0.5], [1.0, -0.25, 0.5]]]]> : tensor<2x1x3x3xf32>} : () -> tensor<2x1x3x3xf32>
    %gamma = onnx.Constant() {value = dense<[1.5, 0.75]> : tensor<2xf32>} : () -> tensor<2xf32>
    %beta = onnx.Constant() {value = dense<[0.25, -0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
    %mean = onnx.Constant() {value = dense<[0.125, -0.25]> : tensor<2xf32>} : () -> tensor<2xf32>
    %var = onnx.Constant() {value = dense<[0.0625, 0.125]> : tensor<2xf32>} : () -> tensor<2xf32>
    %c = onnx.Conv(%x, %w) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
    %b = onnx.BatchNormalization(%c, %gamma, %beta, %mean, %var) {epsilon = 0.0625 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
    %y = onnx.Relu(%b) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    func.return %y : tensor<1x2x4x4xf32>
  }
}
