// RUN: %python %inputs/make_qonnx_model.py activations %t.act.onnx && zant-opt %t.act.onnx | filecheck %s --check-prefix=ACT
// RUN: %python %inputs/make_qonnx_model.py weights %t.w.onnx && zant-opt %t.w.onnx | filecheck %s --check-prefix=W
// RUN: %python %inputs/make_qonnx_model.py wide %t.wide.onnx && zant-opt %t.wide.onnx | filecheck %s --check-prefix=WIDE
// RUN: %python %inputs/make_qonnx_model.py floor %t.floor.onnx && not zant-opt %t.floor.onnx 2>&1 | filecheck %s --check-prefix=FLOOR
// RUN: %python %inputs/make_qonnx_model.py bits20 %t.bits.onnx && not zant-opt %t.bits.onnx 2>&1 | filecheck %s --check-prefix=BITS
// RUN: %python %inputs/make_qonnx_model.py runtime_scale %t.rt.onnx && not zant-opt %t.rt.onnx 2>&1 | filecheck %s --check-prefix=RUNTIME

// QONNX's Quant / BipolarQuant / Trunc (qonnx.custom_op.general) import as ONNX's
// QuantizeLinear / Clip / DequantizeLinear (zant/frontend/qonnx.py), which fold-qdq folds.

// A 4-bit signed Quant: QuantizeLinear into int8, Clip to [-8, 7], DequantizeLinear. An 8-bit
// unsigned narrow one: uint8, Clip to [0, 254]. Trunc (v2, ROUND) of the average pool from 6 to
// 8 bits: the input's codes (scale 1/16), requantized by 1/t = 4 (DequantizeLinear by 4,
// QuantizeLinear by 1: exact), dequantized by the output scale. BipolarQuant of a run-time
// tensor: Where(x >= 0, s, -s), float.
// ACT:      %[[Q4:.*]] = onnx.QuantizeLinear(%x, %[[S4:.*]], %[[Z4:.*]]) {onnx.node_name = "q4/QuantizeLinear"} : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xi8>
// ACT-NEXT: %[[C4:.*]] = onnx.Clip(%[[Q4]], %{{.*}}, %{{.*}}) {onnx.node_name = "q4/Clip"} : (tensor<1x2x4x4xi8>, tensor<i8>, tensor<i8>) -> tensor<1x2x4x4xi8>
// ACT-NEXT: %q4 = onnx.DequantizeLinear(%[[C4]], %[[S4]], %[[Z4]])
// ACT-NEXT: %[[Q8:.*]] = onnx.QuantizeLinear(%q4, {{.*}} -> tensor<1x2x4x4xui8>
// ACT-NEXT: %[[C8:.*]] = onnx.Clip(%[[Q8]], {{.*}} -> tensor<1x2x4x4xui8>
// ACT-NEXT: %q8 = onnx.DequantizeLinear(%[[C8]]
// ACT-NEXT: %pool = onnx.AveragePool(%q8)
// ACT-NEXT: %[[T0:.*]] = onnx.QuantizeLinear(%pool, {{.*}} -> tensor<1x2x2x2xui8>
// ACT-NEXT: %[[T1:.*]] = onnx.DequantizeLinear(%[[T0]], %[[STEP:.*]], %{{.*}})
// ACT-NEXT: %[[T2:.*]] = onnx.QuantizeLinear(%[[T1]], %[[ONE:.*]], %[[TZ:.*]]) {{.*}} -> tensor<1x2x2x2xui8>
// ACT-NEXT: %t = onnx.DequantizeLinear(%[[T2]], %[[OUT:.*]], %[[TZ]])
// ACT-NEXT: %[[GE:.*]] = onnx.GreaterOrEqual(%x,
// ACT-NEXT: %bip = onnx.Where(%[[GE]],
// ACT-NOT:  onnx.Quant(
// ACT-NOT:  onnx.Trunc

// Quant and BipolarQuant of constant weights are computed at import: integer codes (4-bit
// narrow per-channel: codes in [-7, 7], DequantizeLinear along axis 0; binary: -1 / 1).
// W:      %qw__qonnx_codes{{[0-9]+}} = onnx.Constant() {value = dense_resource<{{.*}}> : tensor<2x2x3x3xi8>}
// W-NEXT: %qw__qonnx_scale{{[0-9]+}} = onnx.Constant() {value = dense<[1.250000e-01, 2.500000e-01]> : tensor<2xf32>}
// W:      %bw__qonnx_codes{{[0-9]+}} = onnx.Constant() {value = dense<{{\[\[\[\[}}-1]], {{\[\[}}-1]]], {{\[\[\[}}1]], {{\[\[}}1]]]]> : tensor<2x2x1x1xi8>}
// W:      %qw = onnx.DequantizeLinear(%qw__qonnx_codes{{[0-9]+}}, %qw__qonnx_scale{{[0-9]+}}, %{{.*}}) {axis = 0 : i64, onnx.node_name = "qw/DequantizeLinear"} : (tensor<2x2x3x3xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x2x3x3xf32>
// W:      %bw = onnx.DequantizeLinear(%bw__qonnx_codes{{[0-9]+}}
// W-NOT:  Quant(

// 12 bits unsigned: uint16 codes (the opset raised to 21 for them), Clip to [0, 4095].
// WIDE:      onnx.QuantizeLinear(%x, {{.*}} -> tensor<4xui16>
// WIDE-NEXT: onnx.Clip({{.*}} -> tensor<4xui16>

// FLOOR: error: node 'y' (QONNX Quant): rounding_mode FLOOR on a run-time tensor: only ROUND (half to even, QuantizeLinear's) has an integer form
// BITS: error: node 'y' (QONNX Quant): bit width 20: integer kernels take 1 to 16 bits
// RUNTIME: error: node 'y' (QONNX Quant): its scale 's' is not a constant (a graph input: compile with --freeze to make it the constant it defaults to)
