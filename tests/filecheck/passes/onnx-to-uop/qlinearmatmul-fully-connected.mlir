// RUN: zant-opt %s --split-input-file -p 'onnx-to-uop{conv-word-taps=true}' | filecheck %s
// RUN: zant-opt %s --split-input-file -p onnx-to-uop | filecheck %s --check-prefix=OFF

// On DSP cores without Helium (conv-word-taps, the Cortex-M4's pipeline) a QLinearMatMul or
// MatMulInteger of a run-time A by a constant B whose centered values fit int8 (here a uint8 B
// at zero point 128, 64 x 70 = 4480 weights) takes the fully connected form (fully_connected.py):
// each of A's 2 rows widened into halves, then 14 blocks of 5 of B's 70 columns, each one
// arm_dsp.smlad_rows.

// CHECK-LABEL: func.func @qlinear
// CHECK:         %y_fc_weights = uop.define_global "constant" {{[0-9]+}} "y_fc_weights" value dense_resource<y_fc_weights> : tensor<4760xi8>
// CHECK:         uop.range %{{.*}} = 0 to 2 {
// CHECK:           uop.range %{{.*}} = 0 to 14 {
// CHECK:             arm_dsp.smlad_rows %{{.*}}, %{{.*}}, %{{.*}} {steps = #builtin.int<16>, rows = #builtin.int<5>}
// CHECK:         func.return

// OFF-LABEL: func.func @qlinear
// OFF-NOT:       fc_weights
// OFF-NOT:       arm_dsp
// OFF:           func.return
func.func @qlinear(%a: tensor<2x64xui8>) -> tensor<2x70xui8> {
  %as = onnx.Constant() {value = dense<0.02> : tensor<f32>} : () -> tensor<f32>
  %az = onnx.Constant() {value = dense<131> : tensor<ui8>} : () -> tensor<ui8>
  %b = onnx.Constant() {value = dense<5> : tensor<64x70xui8>} : () -> tensor<64x70xui8>
  %bs = onnx.Constant() {value = dense<0.004> : tensor<f32>} : () -> tensor<f32>
  %bz = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %ys = onnx.Constant() {value = dense<0.3> : tensor<f32>} : () -> tensor<f32>
  %yz = onnx.Constant() {value = dense<120> : tensor<ui8>} : () -> tensor<ui8>
  %y = onnx.QLinearMatMul(%a, %as, %az, %b, %bs, %bz, %ys, %yz) : (tensor<2x64xui8>, tensor<f32>, tensor<ui8>, tensor<64x70xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x70xui8>
  func.return %y : tensor<2x70xui8>
}

// -----

// A uint8 B at zero point 0 (values up to 255 - 0 do not fit int8): the loop form.
// CHECK-LABEL: func.func @integer_wide
// CHECK-NOT:     arm_dsp.smlad_rows
// CHECK:         func.return
func.func @integer_wide(%a: tensor<1x64xi8>) -> tensor<1x70xi32> {
  %b = onnx.Constant() {value = dense<200> : tensor<64x70xui8>} : () -> tensor<64x70xui8>
  %az = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %bz = onnx.Constant() {value = dense<0> : tensor<ui8>} : () -> tensor<ui8>
  %y = onnx.MatMulInteger(%a, %b, %az, %bz) : (tensor<1x64xi8>, tensor<64x70xui8>, tensor<i8>, tensor<ui8>) -> tensor<1x70xi32>
  func.return %y : tensor<1x70xi32>
}
