"""Per-channel fixed-point requantization from the product's high word (`Requantization.
_bind_high_word`): where every channel's shift exceeds 32 and no channel's m0 is exact, the
kernel computes ((sum · m0) >> 32 + 2^(r-1)) >> r, r = shift - 32, in int32 instead of
(sum · m0 + 2^(shift-1)) >> shift in int64. The compiled outputs must be that int64 formula's,
bit for bit, at the extremes of the int32 sums."""

from __future__ import annotations

import numpy as np
import onnx
from e2e import load_compiled
from onnx import TensorProto, helper, numpy_helper

from zant.driver import CompileOptions, compile_model
from zant.passes.onnx_to_uop.quant import fixed_point_multipliers
from zant.pipelines import MCU_PIPELINE

X_SCALE, Y_SCALE, ZERO = np.float32(0.05), np.float32(0.3), 3
W_SCALES = np.array([0.001, 0.0003, 0.0123, 2.5e-6], dtype=np.float32)  # shifts 43, 45, 38, 55


def _model(channels: int, depth: int):
    """A 1x1 QLinearConv whose weights are an input (no sum bound: the per-channel shift form)."""
    inits = [
        numpy_helper.from_array(np.array(X_SCALE), "xs"),
        numpy_helper.from_array(np.array(ZERO, dtype=np.int8), "zp"),
        numpy_helper.from_array(W_SCALES[:channels], "ws"),
        numpy_helper.from_array(np.zeros(channels, dtype=np.int8), "wz"),
        numpy_helper.from_array(np.array(Y_SCALE), "ys"),
    ]
    node = helper.make_node("QLinearConv", ["x", "xs", "zp", "w", "ws", "wz", "ys", "zp"], ["y"], kernel_shape=[1, 1])
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.INT8, [1, depth, 4, 4]),
         helper.make_tensor_value_info("w", TensorProto.INT8, [channels, depth, 1, 1])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [1, channels, 4, 4])], inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _int64_form(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The general fixed-point form, in Python integers: clamp(((sum · m0 + 2^(s-1)) >> s) + zp)."""
    sums = np.einsum("ncij,kc->nkij", x.astype(np.int64) - ZERO, w[:, :, 0, 0].astype(np.int64))
    m0, shift = fixed_point_multipliers(X_SCALE * W_SCALES[: w.shape[0]] / Y_SCALE)
    assert shift.min() > 32
    out = np.empty(sums.shape, dtype=np.int64)
    for k in range(w.shape[0]):
        m, s = int(m0[k]), int(shift[k])
        out[:, k] = np.array([(int(v) * m + (1 << (s - 1))) >> s for v in sums[:, k].ravel()]).reshape(out[:, k].shape)
    return np.clip(out + ZERO, -128, 127).astype(np.int8)


def test_high_word_requantization_is_the_int64_form_bit_for_bit(tmp_path):
    depth, rng = 64, np.random.default_rng(7)
    x = rng.integers(-128, 128, (1, depth, 4, 4)).astype(np.int8)
    x[0, :, 0, 0], x[0, :, 0, 1] = -128, 127  # the largest sums of either sign
    w = rng.integers(-128, 128, (len(W_SCALES), depth, 1, 1)).astype(np.int8)
    w[0], w[3] = -128, 127
    onnx.save(_model(len(W_SCALES), depth), tmp_path / "m.onnx")
    result = compile_model(tmp_path / "m.onnx", tmp_path / "out", CompileOptions(name="m", optimize="ReleaseFast", pipeline=MCU_PIPELINE))
    assert "requant_round" in result.zig_path.read_text()  # the high-word form, not the int64 one
    (y,) = load_compiled(result)(x, w)
    expected = _int64_form(x, w)
    assert np.array_equal(y, expected), np.argwhere(y != expected)
    assert len(np.unique(y)) > 20  # not all saturated
