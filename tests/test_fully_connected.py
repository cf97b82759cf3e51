"""The int8 fully connected form on DSP cores without Helium (fully_connected.py): its packed
weights and bias, its arithmetic on the instructions' reference semantics, and whole layers
(odd K and M, int8 and uint8 X) through the Cortex-M4 pipeline equal to the ONNX reference bit
for bit (host build, every pass against the uop interpreter, and Cortex-M4 firmware under QEMU)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from e2e import check_passes_after_lowering
from int8_layers import QConv, expect_reference_as_firmware, expect_reference_on_host, qlinear_conv_model

from zant.dialects.arm_dsp import smlad, sxtb16
from zant.passes.onnx_to_uop.fully_connected import FEW_INPUTS_WEIGHTS, MIN_WEIGHTS, ROWS, block_starts, corrected_bias, interleaved_weights

# (name, K, M, X type), each with at least MIN_WEIGHTS weights: K a multiple of 4 or not (1027,
# 13, 4099, 1367, 6: a last word padded), M a multiple of the rows or not (5, 700; 333, 8: a last
# block of the 3 rows left), fewer rows than a block (1, 3), a uint8 X, AD's first layer's K;
# smlad_rows' loop 8 steps per pass (K 640), 4 with 1 or 2 after it (1027, 4099, 1367), 4 alone
# (13), 2 (6).
CASES = [
    ("k1027_m5", 1027, 5, TensorProto.INT8),
    ("k13_m333_u8", 13, 333, TensorProto.UINT8),
    ("k4099_m1", 4099, 1, TensorProto.INT8),
    ("k1367_m3", 1367, 3, TensorProto.INT8),
    ("k640_m8", 640, 8, TensorProto.INT8),
    ("k6_m700", 6, 700, TensorProto.INT8),
]
SMALL = [("k7_m5_small", 7, 5, TensorProto.INT8), ("k128_m8_small", 128, 8, TensorProto.INT8), ("k8_m128_few", 8, 128, TensorProto.INT8)]
"""Fewer weights than MIN_WEIGHTS: the word SMLAD form, but for few inputs beside the outputs
(FEW_INPUTS_WEIGHTS: AD's 8 -> 128 takes the form, its 128 -> 8 does not)."""


def _word(data: np.ndarray, at: int) -> int:
    return int.from_bytes(data[at : at + 4].astype(np.int8).tobytes(), "little", signed=True)


def _halves(a: int, b: int) -> int:
    return int(np.array([a, b], np.int16).view(np.int32)[0])


def _form(weights: np.ndarray, bias: np.ndarray, x: np.ndarray, unsigned: bool) -> np.ndarray:
    """The form's sums, as the instructions compute them (arm_dsp's reference semantics)."""
    out_channels, depth = weights.shape
    rows = min(ROWS, out_channels)
    steps = -(-depth // 4)
    table = corrected_bias(weights, bias, unsigned)
    packed = interleaved_weights(weights, table, rows)
    xs = np.zeros(steps * 4, np.int64)
    xs[:depth] = x.astype(np.int64) - (128 if unsigned else 0)
    shared = -128 * int(xs[0::2].sum())
    out = np.zeros(out_channels, np.int64)
    for block, first in enumerate(block_starts(out_channels, rows)):
        count = min(rows, out_channels - first)  # the last block: the rows left
        start = block * (steps + 1) * rows * 4  # the block's biases, then its words
        accs = [np.int32(_word(packed, start + 4 * r) + shared) for r in range(count)]
        for j in range(steps):
            x0, x1, x2, x3 = (int(v) for v in xs[4 * j : 4 * j + 4])
            a = _halves(x0, x2)
            b = _halves(x1 - 256 * x0 - 128, x3 - 256 * x2 - 128)
            for r in range(count):
                w = _word(packed, start + ((j + 1) * count + r) * 4)
                accs[r] = smlad(sxtb16(w, 8), b, smlad(w, a, int(accs[r])))
        out[first : first + count] = accs
    return out


@pytest.mark.parametrize("unsigned", [False, True])
def test_the_form_sums_the_products_exactly(unsigned):
    rng = np.random.default_rng(3)
    for depth, out_channels in [(7, 5), (13, 6), (4, 1), (9, 4), (16, 3), (10, 13)]:
        weights = rng.integers(-128, 128, (out_channels, depth)).astype(np.int8)
        weights[0, :4] = [-128, -128, 127, -128]  # the extremes of each byte
        bias = rng.integers(-50_000, 50_000, out_channels).astype(np.int32)
        low, high = (0, 256) if unsigned else (-128, 128)
        for x in (rng.integers(low, high, depth), np.full(depth, low), np.full(depth, high - 1)):
            centered = x.astype(np.int64) - (128 if unsigned else 0)
            want = weights.astype(np.int64) @ (centered + (128 if unsigned else 0)) + bias
            assert np.array_equal(_form(weights, bias, x, unsigned), want), (depth, out_channels)


def test_interleaved_weights_hold_each_block_its_biases_then_a_word_of_each_row_at_a_time():
    weights = np.arange(7 * 7).reshape(7, 7).astype(np.int8) - 17
    bias = np.array([-(2**31), 2**31 - 1, -3, 70_000, 5, 6, -7], np.int32)
    packed = interleaved_weights(weights, bias, 5)
    assert block_starts(7, 5) == [0, 5]  # the last block holds the 2 rows left
    assert packed.size == (1 + 2) * (5 + 2) * 4  # (biases + words per row) x rows x 4
    padded = np.zeros((7, 8), np.int16)
    padded[:, :7] = weights
    for block, (first, count) in enumerate([(0, 5), (5, 2)]):
        start = block * 3 * 5 * 4
        for r in range(count):
            assert _word(packed, start + 4 * r) == bias[first + r], (block, r)
        for j in range(2):
            for r in range(count):
                got = packed[start + ((j + 1) * count + r) * 4 :][:4].astype(np.int16)
                want = padded[first + r, 4 * j : 4 * j + 4].copy()
                want[0::2] += 128  # the even bytes offset to unsigned
                assert np.array_equal(got.astype(np.uint8), want.astype(np.uint8)), (block, j, r)


def _model(cases=CASES, per_tensor: bool = False) -> onnx.ModelProto:
    """QLinearConv 1x1 layers over one pixel; weight scales per channel, or one per layer
    (`per_tensor`: the requantization one multiplier, so a layer's whole blocks of `ROWS` rows
    take arm_dsp.smlad_layer)."""
    layers = (
        QConv(name, depth, out_channels, x_type=x_type, x_zero=131 if x_type == TensorProto.UINT8 else 3,
              w_scale=0.004 / np.sqrt(depth), per_channel=not per_tensor, y_zero=-4)
        for name, depth, out_channels, x_type in cases
    )
    return qlinear_conv_model("fully_connected", layers, seed=11, first_weights=(-128, -128, 127, -128))


def test_fully_connected_layers_are_the_reference_bit_for_bit(tmp_path):
    """The Cortex-M4 pipeline built for the host: every case with MIN_WEIGHTS weights takes the
    form (its packed weights are in the module), a smaller one does not, and all equal the
    reference on three inputs."""
    source = expect_reference_on_host(_model(CASES + SMALL), tmp_path, seeds=(1, 2, 3))
    for name, depth, out_channels, _ in CASES + SMALL:
        count = depth * out_channels
        expected = count >= MIN_WEIGHTS or (count >= FEW_INPUTS_WEIGHTS and 8 * depth <= out_channels)
        assert (f"{name}_y_fc_weights" in source) == expected, name
    assert "k8_m128_few_y_fc_weights" in source and "k128_m8_small_y_fc_weights" not in source


def test_every_pass_keeps_the_interpreters_outputs():
    """check_each_pass through the Cortex-M4 pipeline after onnx-to-uop: the uop interpreter's
    outputs (arm_dsp ops by their reference semantics, smlad_rows' loop included) stay the same
    through every later pass."""
    module, report = check_passes_after_lowering(_model())
    assert "arm-dsp-dot" in report.checked
    # a loop's block and, where M is more than a block and no multiple of it, one for the rows left
    blocks = sum(1 + (m > ROWS and m % ROWS != 0) for _, _, m, _ in CASES)
    assert sum(op.name == "arm_dsp.smlad_rows" for op in module.walk()) == blocks


def test_fully_connected_layers_as_cortex_m4_firmware(tmp_path):
    """The same layers as Cortex-M4 firmware under QEMU (smlad_rows as its assembly loop: 4, 2
    and 1 steps per pass, 1 to 5 rows: 5 with its loop's end on the stack)."""
    expect_reference_as_firmware(_model(), tmp_path, seed=5)


# (name, M, K, N, A type, a zero point, B type, b zero points: per-tensor int or per column,
# QLinearMatMul or MatMulInteger). Odd K (a last word padded), N not a multiple of the rows (a
# last block of fewer rows), a uint8 A with its zero point folded, a uint8 B centered at 128 per
# tensor and per column, several rows of A.
MATMULS = [
    ("q_k1027_n6", 1, 1027, 6, TensorProto.INT8, 3, TensorProto.INT8, 0, True),
    ("q_k129_n37_u8", 2, 129, 37, TensorProto.UINT8, 131, TensorProto.UINT8, 128, True),
    ("q_k64_n70_cols", 3, 64, 70, TensorProto.UINT8, 0, TensorProto.UINT8, "columns", True),
    ("i_k333_n13", 2, 333, 13, TensorProto.UINT8, 129, TensorProto.UINT8, 128, False),
    ("i_k97_n45_s8", 1, 97, 45, TensorProto.INT8, -2, TensorProto.INT8, 0, False),
]


def _matmul_model() -> onnx.ModelProto:
    rng = np.random.default_rng(17)
    inputs, outputs, nodes, inits = [], [], [], []
    for name, rows, depth, columns, a_type, a_zero, b_type, b_zero, qlinear in MATMULS:
        a_np = np.uint8 if a_type == TensorProto.UINT8 else np.int8
        b_np = np.uint8 if b_type == TensorProto.UINT8 else np.int8
        if b_zero == "columns":  # each column's values within 127 of its zero point
            zeros = rng.integers(100, 156, columns).astype(np.uint8)
            b = (zeros.astype(np.int64) + rng.integers(-128, 128, (depth, columns))).clip(0, 255).astype(np.uint8)
            b_zp = zeros
        else:
            low, high = (0, 256) if b_np == np.uint8 else (-128, 128)
            b = rng.integers(low, high, (depth, columns)).astype(b_np)
            b_zp = np.array(b_zero, b_np)
        inits += [
            numpy_helper.from_array(b, f"{name}_b"),
            numpy_helper.from_array(np.array(a_zero, a_np), f"{name}_az"),
            numpy_helper.from_array(b_zp, f"{name}_bz"),
        ]
        if qlinear:
            inits += [
                numpy_helper.from_array(np.array(0.02, np.float32), f"{name}_as"),
                numpy_helper.from_array((0.003 * (1 + np.arange(columns) % 5)).astype(np.float32) if b_zero == "columns" else np.array(0.004, np.float32), f"{name}_bs"),
                numpy_helper.from_array(np.array(0.05 * np.sqrt(depth), np.float32), f"{name}_ys"),
                numpy_helper.from_array(np.array(7, np.int8), f"{name}_yz"),
            ]
            nodes.append(helper.make_node(
                "QLinearMatMul", [name] + [f"{name}_{s}" for s in ("as", "az", "b", "bs", "bz", "ys", "yz")], [f"{name}_y"],
            ))
            out_type = TensorProto.INT8
        else:
            nodes.append(helper.make_node("MatMulInteger", [name, f"{name}_b", f"{name}_az", f"{name}_bz"], [f"{name}_y"]))
            out_type = TensorProto.INT32
        inputs.append(helper.make_tensor_value_info(name, a_type, [rows, depth]))
        outputs.append(helper.make_tensor_value_info(f"{name}_y", out_type, [rows, columns]))
    graph = helper.make_graph(nodes, "matmuls", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_matmuls_by_a_constant_take_the_form_and_equal_the_reference(tmp_path):
    """QLinearMatMul and MatMulInteger by a constant B (int8 at zero point 0, uint8 at 128 per
    tensor or per column) on the Cortex-M4 pipeline built for the host: each takes the fully
    connected form (its packed weights in the module) and equals the reference bit for bit."""
    source = expect_reference_on_host(_matmul_model(), tmp_path, seeds=(1, 2))
    for case in MATMULS:
        assert f"{case[0]}_y_fc_weights" in source, case[0]


def test_matmuls_as_cortex_m4_firmware(tmp_path):
    """The same MatMuls as Cortex-M4 firmware under QEMU (smlad_rows' assembly)."""
    expect_reference_as_firmware(_matmul_model(), tmp_path, seed=4)


# Layers with one weight scale: their whole 5-row blocks one arm_dsp.smlad_layer (8 steps per
# pass; 4 with 1 and 2 after the loop; 2 alone), the rows left (M not a multiple of 5: 8, 12, 13)
# one smlad_rows after it.
LAYERS = [
    ("l_k640_m8", 640, 8, TensorProto.INT8),
    ("l_k1027_m12", 1027, 12, TensorProto.INT8),
    ("l_k22_m400_u8", 22, 400, TensorProto.UINT8),
    ("l_k6_m700", 6, 700, TensorProto.INT8),
    ("l_k333_m13", 333, 13, TensorProto.INT8),
]


def test_whole_layers_take_smlad_layer_and_equal_the_reference(tmp_path):
    """One weight scale per layer: each layer's whole 5-row blocks are one arm_dsp.smlad_layer
    (its loop over blocks gone), the rows left of 8, 12 and 13 one smlad_rows each; built for
    the host (the plain Zig of the ops) and as Cortex-M4 firmware under QEMU (their assembly,
    14 registers in ReleaseFast), each equal to the reference bit for bit."""
    model = _model(LAYERS, per_tensor=True)
    module, _ = check_passes_after_lowering(model)
    assert sum(op.name == "arm_dsp.smlad_layer" for op in module.walk()) == len(LAYERS)
    assert sum(op.name == "arm_dsp.smlad_rows" for op in module.walk()) == 3
    expect_reference_on_host(model, tmp_path, seeds=(1, 2))
    expect_reference_as_firmware(model, tmp_path, seed=6)


def test_release_safe_firmware(tmp_path):
    """The layers with one multiplier (smlad_layer) and with one a channel (smlad_rows' blocks)
    in ReleaseSafe, whose frame pointer leaves the 5-row asm 13 registers (the fifth row's word
    loaded apart, into the first row's register): equal to the reference."""
    expect_reference_as_firmware(_model(LAYERS, per_tensor=True), tmp_path / "layers", seed=7, optimize="ReleaseSafe")
    expect_reference_as_firmware(_model(), tmp_path / "channels", seed=8, optimize="ReleaseSafe")
