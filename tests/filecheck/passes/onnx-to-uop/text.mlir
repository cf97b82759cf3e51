// RUN: zant-opt %s -p onnx-to-uop | filecheck %s

// TfIdfVectorizer, unigrams and bigrams with one skip: the pool becomes a token table and a
// column table per gram length; each gram is matched by one loop per skip distance (bigrams at
// distances 1 and 2, unigrams at distance 1 only), then TFIDF multiplies by the weights.

// CHECK-LABEL: func.func @main()
// CHECK:         uop.define_global "constant" 0 "y_grams1" value dense<{{\[\[}}7], [8]]> : tensor<2x1xi32>
// CHECK-NEXT:    uop.define_global "constant" 1 "y_columns1" value dense<[0, 1]> : tensor<2xi32>
// CHECK-NEXT:    uop.define_global "constant" 2 "y_grams2" value dense<{{\[\[}}7, 8]]> : tensor<1x2xi32>
// CHECK-NEXT:    uop.define_global "constant" 3 "y_columns2" value dense<2> : tensor<1xi32>
// CHECK-NEXT:    uop.define_global "constant" 4 "y_weights" value dense<[1.000000e+00, 5.000000e-01, 2.000000e+00]> : tensor<3xf32>
// unigrams: one scan over the 5 tokens
// CHECK:         uop.range {{%.*}} = 0 to 2 {
// CHECK:           uop.range {{%.*}} = 0 to 5 {
// CHECK:             uop.cmpeq
// CHECK-NOT:         uop.cmpeq
// CHECK:           }
// bigrams: distance 1 (4 starts) and distance 2 (3 starts), two compares each
// CHECK:         uop.range {{%.*}} = 0 to 1 {
// CHECK:           uop.range {{%.*}} = 0 to 4 {
// CHECK-COUNT-2:     uop.cmpeq
// CHECK:           uop.range [[S:%.*]] = 0 to 3 {
// CHECK:             [[TWO:%.*]] = uop.const 2 : index
// CHECK-NEXT:        uop.add [[S]], [[TWO]] : index
// weighting: y[i] = w[i] * count[i]
// CHECK:         uop.range {{%.*}} = 0 to 3 {
// CHECK:           uop.mul
func.func @main(%x: tensor<5xi32>) -> tensor<3xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.TfIdfVectorizer(%x) {mode = "TFIDF", min_gram_length = 1 : i64, max_gram_length = 2 : i64, max_skip_count = 1 : i64, ngram_counts = array<i64: 0, 2>, ngram_indexes = array<i64: 0, 1, 2>, pool_int64s = array<i64: 7, 8, 7, 8>, weights = array<f32: 1.0, 0.5, 2.0>} : (tensor<5xi32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}
