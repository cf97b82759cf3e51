// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s

// TreeEnsemble: the trees become constant tables over slots (branches 0-1, leaves 2-4; a leaf's
// successors are itself), walked a fixed 2 steps (the depth). The nodes mix LEQ and GT, so a
// mode table selects the comparison; LOGISTIC is applied to the row's scores at the end.

// CHECK-LABEL: func.func @main()
// CHECK:         %y_root = uop.define_global "constant" 0 "y_root" value dense<0> : tensor<1xi32>
// CHECK-NEXT:    %y_feature = uop.define_global "constant" 1 "y_feature" value dense<[0, 2, 0, 0, 0]> : tensor<5xi32>
// CHECK-NEXT:    %y_split = uop.define_global "constant" 2 "y_split" value dense<[5.000000e-01, 1.500000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<5xf32>
// CHECK-NEXT:    %y_true = uop.define_global "constant" 3 "y_true" value dense<[1, 2, 2, 3, 4]> : tensor<5xi32>
// CHECK-NEXT:    %y_false = uop.define_global "constant" 4 "y_false" value dense<[4, 3, 2, 3, 4]> : tensor<5xi32>
// CHECK-NEXT:    %y_mode = uop.define_global "constant" 5 "y_mode" value dense<[0, 3, 0, 0, 0]> : tensor<5xi8>
// CHECK-NEXT:    %y_weight = uop.define_global "constant" 6 "y_weight" value dense<{{\[\[}}1.000000e+00, 0.000000e+00], [0.000000e+00, -1.000000e+00], [0.000000e+00, 2.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT:     "constant"
// CHECK:         uop.range [[ROW:%.*]] = 0 to 2 {
// CHECK:           uop.range {{%.*}} = 0 to 1 {
// CHECK-NEXT:        [[SLOT:%.*]] = uop.define_acc 0 : i32
// CHECK:             uop.range {{%.*}} = 0 to 2 {
// CHECK-NEXT:          [[CUR:%.*]] = uop.acc_get [[SLOT]]
// CHECK-NEXT:          [[AT:%.*]] = uop.cast [[CUR]] : i32 to index
// CHECK:               [[LEQ:%.*]] = uop.cmple
// CHECK-NEXT:          [[GT:%.*]] = uop.cmplt
// CHECK:               uop.gep %y_mode[[[AT]]]
// CHECK:               [[COND:%.*]] = uop.where {{%.*}}, [[LEQ]], [[GT]] : i1
// CHECK:               [[NEXT:%.*]] = uop.where [[COND]], {{%.*}}, {{%.*}} : i32
// CHECK-NEXT:          uop.acc_set [[SLOT]], [[NEXT]]
// CHECK:             uop.sub {{%.*}}, {{%.*}} : i32
// CHECK:             uop.range {{%.*}} = 0 to 2 {
// CHECK:               uop.add
// CHECK:           uop.range {{%.*}} = 0 to 2 {
// CHECK:             uop.exp
// CHECK:             uop.recip
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x2xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.ml.TreeEnsemble(%x) {aggregate_function = 1 : i64, n_targets = 2 : i64, post_transform = 2 : i64, tree_roots = array<i64: 0>, nodes_featureids = array<i64: 0, 2>, nodes_modes = dense<[0, 3]> : tensor<2xui8>, nodes_splits = dense<[0.5, 1.5]> : tensor<2xf32>, nodes_truenodeids = array<i64: 1, 0>, nodes_trueleafs = array<i64: 0, 1>, nodes_falsenodeids = array<i64: 2, 1>, nodes_falseleafs = array<i64: 1, 1>, leaf_targetids = array<i64: 0, 1, 1>, leaf_weights = dense<[1.0, -1.0, 2.0]> : tensor<3xf32>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}

// -----

// One mode (LEQ) everywhere and no NaN rule beyond the comparison's: no mode or NaN table.
// MIN where each leaf names one target: a `named` mask keeps the running minimum of the other.

// CHECK-LABEL: func.func @main()
// CHECK-NOT:     "y_mode"
// CHECK-NOT:     "y_nan_true"
// CHECK:         %y_named = uop.define_global "constant" {{[0-9]+}} "y_named" value dense<{{\[\[}}true, false], [true, false], [false, true]]> : tensor<3x2xi1>
// CHECK:         uop.const 3.40282347e+38 : f32
// CHECK:         uop.min
// CHECK-NEXT:    uop.gep %{{.*}} : !uop.view<3x2xi1
func.func @main(%x: tensor<1x2xf32>) -> tensor<1x2xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.ml.TreeEnsemble(%x) {aggregate_function = 2 : i64, n_targets = 2 : i64, tree_roots = array<i64: 0>, nodes_featureids = array<i64: 1>, nodes_modes = dense<0> : tensor<1xui8>, nodes_splits = dense<0.0> : tensor<1xf32>, nodes_truenodeids = array<i64: 0>, nodes_trueleafs = array<i64: 1>, nodes_falsenodeids = array<i64: 1>, nodes_falseleafs = array<i64: 1>, leaf_targetids = array<i64: 0, 0, 1>, leaf_weights = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : (tensor<1x2xf32>) -> tensor<1x2xf32>
  func.return %y : tensor<1x2xf32>
}

// -----

// Binarizer: x > threshold selects 1 or 0 in x's type.

// CHECK-LABEL: func.func @main()
// CHECK:         [[T:%.*]] = uop.const 5.000000e-01 : f32
// CHECK:         uop.range
// CHECK:           [[X:%.*]] = uop.load
// CHECK-NEXT:      [[ABOVE:%.*]] = uop.cmplt [[T]], [[X]] : f32
// CHECK-NEXT:      uop.where [[ABOVE]], {{%.*}}, {{%.*}} : f32
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.ml.Binarizer(%x) {threshold = 0.5 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// ArrayFeatureExtractor: a gather of the last axis, each index read from the data marked as one
// into the width (3): check-data-indices wraps negative ones and checks the range.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.range [[R:%.*]] = 0 to 2 {
// CHECK-NEXT:      uop.range [[K:%.*]] = 0 to 2 {
// CHECK:             [[I:%.*]] = uop.load
// CHECK-NEXT:        [[COL:%.*]] = uop.bound_index [[I]], 3 : i64
// CHECK-NEXT:        uop.gep {{%.*}}[[[R]], [[COL]]]
func.func @main(%x: tensor<2x3xf32>, %i: tensor<2xi64>) -> tensor<2x2xf32> attributes {onnx.input_names = ["x", "i"], onnx.output_names = ["y"]} {
  %y = onnx.ml.ArrayFeatureExtractor(%x, %i) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}

// -----

// LinearClassifier with one coefficient row for two classes: a dot product per row, stored as
// (-s, s); then each row's label is that of its first best score, from a label table.

// CHECK-LABEL: func.func @main()
// CHECK:         %label_labels = uop.define_global "constant" 0 "label_labels" value dense<[3, 7]> : tensor<2xi64>
// CHECK-NEXT:    %scores_coefficients = uop.define_global "constant" 1 "scores_coefficients" value dense<{{\[\[}}5.000000e-01, -1.000000e+00]]> : tensor<1x2xf32>
// CHECK:         uop.range {{%.*}} = 0 to 2 {
// CHECK:             uop.mulacc
// CHECK:           [[S:%.*]] = uop.add
// CHECK-NEXT:      [[NEG:%.*]] = uop.neg [[S]] : f32
// CHECK:           uop.store [[NEG]]
// CHECK:           uop.store [[S]]
// CHECK:         uop.range {{%.*}} = 0 to 3 {
// CHECK:           uop.define_acc 0 : i32
// CHECK:           uop.range {{%.*}} = 0 to 2 {
// CHECK:             uop.cmplt
// CHECK:           uop.gep %label_labels
func.func @main(%x: tensor<3x2xf32>) -> (tensor<3xi64>, tensor<3x2xf32>) attributes {onnx.input_names = ["x"], onnx.output_names = ["label", "scores"]} {
  %label, %scores = onnx.ml.LinearClassifier(%x) {classlabels_ints = array<i64: 3, 7>, coefficients = array<f32: 0.5, -1.0>, intercepts = array<f32: 0.25>} : (tensor<3x2xf32>) -> (tensor<3xi64>, tensor<3x2xf32>)
  func.return %label, %scores : tensor<3xi64>, tensor<3x2xf32>
}
