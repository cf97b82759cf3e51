// RUN: not zant-opt %s --split-input-file -p onnx-to-uop 2>&1 | filecheck %s

// Bernoulli with a seed: one float64 draw per element of NumPy's RandomState(0).random_sample
// (0.5488135039, 0.7151893663 ... the reference's binomial(1, p) takes exactly one each), a
// constant; element i is 1 where u > 1 - p (p <= 0.5), else where u <= 1 - (1 - p), in float64.
// CHECK-LABEL: func.func @main()
// CHECK:         %y_draws = uop.define_global "constant" 0 "y_draws" value dense<{{\[\[}}0.54881350392732475, 0.71518936637241948, 0.60276337607164387], [0.54488318299689686, 0.42365479933890471, 0.64589411306665612]]> : tensor<2x3xf64> : !uop.buffer<6xf64>
// CHECK:         [[ONE:%.*]] = uop.const 1.000000e+00 : f64
// CHECK-NEXT:    [[HALF:%.*]] = uop.const 5.000000e-01 : f64
// CHECK:             [[X:%.*]] = uop.load {{%.*}} : f32
// CHECK-NEXT:        [[P:%.*]] = uop.cast [[X]] : f32 to f64
// CHECK:             [[U:%.*]] = uop.load {{%.*}} : f64
// CHECK-NEXT:        [[Q:%.*]] = uop.sub [[ONE]], [[P]] : f64
// CHECK-NEXT:        [[LOW:%.*]] = uop.cmplt [[Q]], [[U]] : f64
// CHECK-NEXT:        [[P2:%.*]] = uop.sub [[ONE]], [[Q]] : f64
// CHECK-NEXT:        [[HIGH:%.*]] = uop.cmple [[U]], [[P2]] : f64
// CHECK-NEXT:        [[SMALL:%.*]] = uop.cmple [[P]], [[HALF]] : f64
// CHECK-NEXT:        [[HIT:%.*]] = uop.where [[SMALL]], [[LOW]], [[HIGH]] : i1
// CHECK-NEXT:        [[Y:%.*]] = uop.cast [[HIT]] : i1 to f32
// CHECK:             uop.store [[Y]], {{%.*}} : f32
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.Bernoulli(%x) {seed = 0.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// RandomUniformLike with a seed: the reference's values, RandomState(0).rand(2, 3) as float32
// times (high - low) plus low, a constant; nothing is drawn at run time.
// CHECK-LABEL: func.func @main()
// CHECK:         %r = uop.define_global "constant" 0 "r" value dense<{{\[\[}}0.0976270437, 0.430378675, 0.20552671], [0.0897663832, -0.152690411, 0.29178822]]> : tensor<2x3xf32> : !uop.buffer<6xf32>
// CHECK:             uop.add {{%.*}}, {{%.*}} : f32
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %r = onnx.RandomUniformLike(%x) {seed = 0.0 : f32, low = -1.0 : f32, high = 1.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = onnx.Add(%x, %r) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// Without a seed every call draws afresh: refused, naming the node.
// CHECK: zant-opt: error: an unnamed onnx.Bernoulli node: Bernoulli without a seed attribute draws fresh values on every call, which compiled code cannot reproduce (give it a seed)
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
  %y = onnx.Bernoulli(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
