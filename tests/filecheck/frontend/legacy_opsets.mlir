// RUN: %python %inputs/make_legacy_model.py prelu_opset6 %t.prelu.onnx && zant-opt %t.prelu.onnx | zant-opt | filecheck %s --check-prefix=PRELU
// RUN: %python %inputs/make_legacy_model.py batchnorm_spatial0 %t.bn.onnx && zant-opt %t.bn.onnx | zant-opt | filecheck %s --check-prefix=BN

// PRelu up to opset 6 applies a 1-D slope per channel (axis 1): the slope is unsqueezed to
// (C, 1, 1) so that today's NumPy broadcasting puts it there.

// PRELU:      builtin.module attributes {onnx.opset = [[OPSET:[0-9]+]] : i64} {
// PRELU:        %slope = onnx.Constant() {value = dense<[1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<3xf32>} : () -> tensor<3xf32>
// PRELU-NEXT:   %[[AXES:.*]] = onnx.Constant() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
// PRELU-NEXT:   %slope_per_channel = onnx.Unsqueeze(%slope, %[[AXES]]) : (tensor<3xf32>, tensor<2xi64>) -> tensor<3x1x1xf32>
// PRELU-NEXT:   %y = onnx.PRelu(%x, %slope_per_channel) {onnx.node_name = "prelu"} : (tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32>

// BatchNormalization-7 with spatial=0 (statistics per element, an attribute opset 9 dropped)
// becomes its arithmetic, the statistics broadcast over the batch.

// BN:         %y_epsilon = onnx.Constant() {value = dense<2.500000e-01> : tensor<f32>} : () -> tensor<f32>
// BN-NEXT:    %y_centered = onnx.Sub(%x, %m) : (tensor<1x3x2xf32>, tensor<3x2xf32>) -> tensor<1x3x2xf32>
// BN-NEXT:    %y_var_eps = onnx.Add(%v, %y_epsilon) : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
// BN-NEXT:    %y_deviation = onnx.Sqrt(%y_var_eps) : (tensor<3x2xf32>) -> tensor<3x2xf32>
// BN-NEXT:    %y_normalized = onnx.Div(%y_centered, %y_deviation) : (tensor<1x3x2xf32>, tensor<3x2xf32>) -> tensor<1x3x2xf32>
// BN-NEXT:    %y_scaled = onnx.Mul(%y_normalized, %s) : (tensor<1x3x2xf32>, tensor<3x2xf32>) -> tensor<1x3x2xf32>
// BN-NEXT:    %y = onnx.Add(%y_scaled, %b) {onnx.node_name = "bn"} : (tensor<1x3x2xf32>, tensor<3x2xf32>) -> tensor<1x3x2xf32>
// BN-NOT:     onnx.BatchNormalization
