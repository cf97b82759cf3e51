// RUN: zant-opt %s | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | zant-opt | filecheck %s
// RUN: zant-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The ai.onnx.ml operators live in the onnx dialect under the `onnx.ml.` prefix, with their
// schema's attributes as properties (TENSOR attributes such as TreeEnsemble's modes included).

// CHECK-LABEL: func.func @ml
func.func @ml(%x: tensor<2x3xf32>, %i: tensor<2xi64>) {
  // CHECK-NEXT: %b = onnx.ml.Binarizer(%x) {threshold = 5.000000e-01 : f32, onnx.node_name = "bin"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // GENERIC: "onnx.ml.Binarizer"(%x) <{threshold = 5.000000e-01 : f32}> {onnx.node_name = "bin"}
  %b = onnx.ml.Binarizer(%x) {threshold = 0.5 : f32, onnx.node_name = "bin"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %s = onnx.ml.Scaler(%x) {offset = array<f32: 1.000000e+00>, scale = array<f32: 2.000000e+00, 3.000000e+00, 4.000000e+00>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = onnx.ml.Scaler(%x) {offset = array<f32: 1.0>, scale = array<f32: 2.0, 3.0, 4.0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %z = onnx.ml.ArrayFeatureExtractor(%x, %i) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  %z = onnx.ml.ArrayFeatureExtractor(%x, %i) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  // CHECK-NEXT: %t = onnx.ml.TreeEnsemble(%x) {aggregate_function = 1 : i64, tree_roots = array<i64: 0>, nodes_featureids = array<i64: 0>, nodes_modes = dense<0> : tensor<1xui8>, nodes_splits = dense<5.000000e-01> : tensor<1xf32>, nodes_truenodeids = array<i64: 0>, nodes_trueleafs = array<i64: 1>, nodes_falsenodeids = array<i64: 1>, nodes_falseleafs = array<i64: 1>, leaf_targetids = array<i64: 0, 0>, leaf_weights = dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  // GENERIC: "onnx.ml.TreeEnsemble"(%x) <{
  %t = onnx.ml.TreeEnsemble(%x) {aggregate_function = 1 : i64, tree_roots = array<i64: 0>, nodes_featureids = array<i64: 0>, nodes_modes = dense<0> : tensor<1xui8>, nodes_splits = dense<0.5> : tensor<1xf32>, nodes_truenodeids = array<i64: 0>, nodes_trueleafs = array<i64: 1>, nodes_falsenodeids = array<i64: 1>, nodes_falseleafs = array<i64: 1>, leaf_targetids = array<i64: 0, 0>, leaf_weights = dense<[1.0, -1.0]> : tensor<2xf32>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  // The older regressor keeps its last live schema (opset 3), string modes and all.
  // CHECK-NEXT: %r = onnx.ml.TreeEnsembleRegressor(%x) {nodes_modes = ["LEAF"], nodes_treeids = array<i64: 0>, nodes_nodeids = array<i64: 0>, n_targets = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %r = onnx.ml.TreeEnsembleRegressor(%x) {nodes_modes = ["LEAF"], nodes_treeids = array<i64: 0>, nodes_nodeids = array<i64: 0>, n_targets = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  // CHECK-NEXT: func.return
  func.return
}
