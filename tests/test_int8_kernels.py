"""The int8 conv's compile-time arithmetic: the zero point folded into the bias, and the one
constant shift of the requantization (CMSIS-NN's and TFLite's forms)."""

from __future__ import annotations

import numpy as np
import pytest

from zant.passes.onnx_to_uop.quant import common_shift, fixed_point_multipliers


def test_common_shift_error_stays_under_its_bound():
    rng = np.random.default_rng(0)
    multipliers = rng.uniform(1e-4, 4e-3, size=64)
    sum_bound = 1 << 20
    m, shift = common_shift(multipliers, sum_bound)
    assert m.max() < 2**31 and m.max() >= 2**30  # the largest multiplier keeps 31 bits
    sums = rng.integers(-sum_bound, sum_bound, size=(1000, 64))
    exact = sums * multipliers
    fixed = (sums * m + (1 << (shift - 1))) >> shift
    # Rounded half up from a value within 2^-12 of the exact one: within one step, and equal to
    # round-half-up of the exact product except within 2^-12 of a half.
    assert np.max(np.abs(fixed - np.floor(exact + 0.5))) <= 1
    near_half = np.abs((exact - np.floor(exact)) - 0.5) < 2.0**-12
    assert np.array_equal(fixed[~near_half], np.floor(exact + 0.5)[~near_half])


def test_common_shift_refuses_when_one_shift_loses_too_much():
    # Sums near 2^40 would need more fraction bits than one shift below 63 leaves.
    assert common_shift(np.array([0.5, 1e-9]), 1 << 40) is None
    assert common_shift(np.array([0.0]), 100) is None


@pytest.mark.parametrize("multiplier", [3.1e-3, 0.25, 0.999])
def test_common_shift_agrees_with_the_per_channel_form_for_one_channel(multiplier):
    m, shift = common_shift(np.array([multiplier]), 1 << 16)
    m0, shift0 = fixed_point_multipliers(np.array([multiplier]))
    assert m[0] / 2.0**shift == pytest.approx(m0[0] / 2.0 ** shift0[0], rel=2.0**-30)


def test_folded_zero_point_moves_x_zp_times_the_weight_sums_into_the_bias():
    from xdsl.dialects.builtin import IntegerType

    from zant.passes.onnx_to_uop.quant import fold_zero_point

    weights = np.array([[[[1, -2], [3, 4]]], [[[-5, 6], [7, -8]]]], dtype=np.int8)  # 2 outputs, 1 channel, 2x2
    bias = np.array([10, -20], dtype=np.int32)
    folded = fold_zero_point(None, IntegerType(8), weights, None, bias)
    assert folded is not None and folded.x_zero_point == 0 and list(folded.bias) == [10, -20]
    # |Σ (x - 0)·w + B| over int8 x: Σ|w| · 128 + |B| per channel, the largest of the two.
    assert folded.sum_bound == max(10 * 128 + 10, 26 * 128 + 20)


def test_reference_runs_an_opset_13_qdq_model(tmp_path):
    """onnx's reference evaluator has no DequantizeLinear-13 (every opset-13 QDQ model has it):
    `zant run`'s reference converts such a model instead of failing."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from zant.runtime import reference_outputs

    graph = helper.make_graph(
        [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
            helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
        ],
        "qdq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(np.array(0.5, np.float32), "s"), numpy_helper.from_array(np.array(1, np.int8), "z")],
    )
    path = tmp_path / "qdq13.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    (y,) = reference_outputs(path, {"x": np.array([0.0, 0.26, -1.0, 100.0], np.float32)})
    # round(x / 0.5) + 1, saturated to int8, then (q - 1) · 0.5
    assert np.array_equal(y, np.array([0.0, 0.5, -1.0, 63.0], np.float32))
