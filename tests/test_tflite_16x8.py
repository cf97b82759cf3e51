"""TFLite's 16x8 requantization in the `tflite` requant-rounding mode: a Conv of an int16
activation with int8 per-channel weights requantizes its int64 sum as TFLite's reference kernels
do in their default build (MultiplyByQuantizedMultiplier's int64 form: the Q31 multiplier reduced
to 16 bits, one rounding), transcribed below; the corpus' tflite_16x8 (TFLiteConverter 16x8 →
tf2onnx) equals TFLite's interpreter so (tests/test_interop_corpus.py).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zant.driver import CompileOptions, compile_model
from zant.passes.onnx_to_uop.quant import tflite_multiplier
from zant.runtime import load_compiled


def tflite_16x8_requantize(acc: np.ndarray, multiplier: float, zero_point: int) -> np.ndarray:
    """MultiplyByQuantizedMultiplier(int64 acc, QuantizeMultiplier(multiplier)) of TFLite's
    double-rounding build, plus the zero point, saturated to int16."""
    q, e = tflite_multiplier(multiplier)
    reduced = (q + (1 << 15)) >> 16 if q < 0x7FFF0000 else 0x7FFF
    shift = 15 - e
    value = (acc.astype(np.int64) * reduced + (1 << (shift - 1))) >> shift
    return np.clip(value + zero_point, -32768, 32767).astype(np.int16)


def conv_16x8(seed: int):
    rng = np.random.default_rng(seed)
    w = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    w_scale = rng.uniform(0.002, 0.02, 4).astype(np.float32)
    bias = rng.integers(-20000, 20000, 4).astype(np.int32)
    x_scale, y_scale = np.float32(0.0005), np.float32(0.0011)
    inits = [
        numpy_helper.from_array(np.array(x_scale), "xs"), numpy_helper.from_array(np.array(0, np.int16), "xz"),
        numpy_helper.from_array(w, "w"), numpy_helper.from_array(w_scale, "ws"), numpy_helper.from_array(np.zeros(4, np.int8), "wz"),
        numpy_helper.from_array(bias, "b"), numpy_helper.from_array((x_scale * w_scale).astype(np.float32), "bs"),
        numpy_helper.from_array(np.zeros(4, np.int32), "bz"),
        numpy_helper.from_array(np.array(y_scale), "ys"), numpy_helper.from_array(np.array(0, np.int16), "yz"),
    ]
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["fx"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["fw"], axis=0),
        helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["fb"], axis=0),
        helper.make_node("Conv", ["fx", "fw", "fb"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "conv16x8", [helper.make_tensor_value_info("x", TensorProto.INT16, [1, 3, 6, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.INT16, [1, 4, 6, 6])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), w, w_scale, bias, x_scale, y_scale


@pytest.mark.parametrize("seed", [0, 1])
def test_16x8_conv_is_tflite(seed, tmp_path):
    model, w, w_scale, bias, x_scale, y_scale = conv_16x8(seed)
    onnx.save(model, tmp_path / "m.onnx")
    result = compile_model(tmp_path / "m.onnx", tmp_path / "out", CompileOptions(name="m", optimize="ReleaseSafe", requant_rounding="tflite"))
    assert result.plan["float_scratch_bytes"] == 0
    compiled = load_compiled(result)
    rng = np.random.default_rng(10 + seed)
    differ_from_exact = 0
    for x in [rng.integers(-32768, 32768, (1, 3, 6, 6)).astype(np.int16) for _ in range(4)]:
        padded = np.pad(x[0].astype(np.int64), ((0, 0), (1, 1), (1, 1)))
        acc = np.zeros((4, 6, 6), np.int64)
        for i in range(3):
            for j in range(3):
                acc += np.einsum("chw,oc->ohw", padded[:, i:i + 6, j:j + 6], w[:, :, i, j].astype(np.int64))
        acc += bias.astype(np.int64)[:, None, None]
        want = np.stack([
            tflite_16x8_requantize(acc[o], float(np.float64(x_scale) * np.float64(w_scale[o]) / np.float64(y_scale)), 0)
            for o in range(4)
        ])[None]
        (got,) = compiled(x)
        assert np.array_equal(got, want), np.flatnonzero(got != want)[:8]
        exact = np.clip(np.round(acc * (np.float64(x_scale) * w_scale.astype(np.float64)[:, None, None] / np.float64(y_scale))), -32768, 32767)
        differ_from_exact += int((want[0] != exact).sum())
    assert differ_from_exact > 0  # the reduced multiplier moves codes: the comparison tells the forms apart
