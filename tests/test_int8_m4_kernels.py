"""The Cortex-M4 int8 kernels' building blocks, checked on the host build (bit for bit).

`zant_round` (round half to even: QuantizeLinear, Round) adds and subtracts 2^m instead of calling
compiler-rt's `roundf`/`truncf` (the Cortex-M4F has no VRINT); these cases cover the values where
that trick could go wrong: halves, the neighbourhood of 2^(m-1) and 2^m where the spacing of
floats is 1/2 and 1, signed zeros, infinities and NaN.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from e2e import check_model, compile_and_run_result
from onnx import helper


def _round_model(dtype, n: int) -> onnx.ModelProto:
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph(
        [helper.make_node("Round", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", t, [n])], [helper.make_tensor_value_info("y", t, [n])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _edges(dtype) -> np.ndarray:
    m = np.finfo(dtype).nmant
    big = 2.0**m
    values = [0.5, 1.5, 2.5, -0.5, -0.4, -2.5, 0.49999997, 1e-30, -1e-30, 0.0, -0.0,
              big / 2 - 0.5, big / 2 + 0.5, big / 2 + 1.5, big - 0.5, big - 1.5, big, big + 1, big + 2,
              -(big - 0.5), -(big / 2 + 0.5), 3 * big, 1e30, -1e30, np.inf, -np.inf, np.nan]
    with np.errstate(over="ignore"):  # ±1e30 is ±inf in float16
        x = np.array(values, np.float64).astype(dtype)
    return np.concatenate([x, np.nextafter(x, np.inf, dtype=dtype), np.nextafter(x, -np.inf, dtype=dtype)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda t: np.dtype(t).name)
def test_round_half_to_even_at_the_edges(dtype):
    x = _edges(dtype)
    (y,) = check_model(_round_model(dtype, len(x)), {"x": x}, rtol=0, atol=0)
    expected = np.rint(x)
    np.testing.assert_array_equal(y, expected)
    finite = ~np.isnan(expected)
    np.testing.assert_array_equal(np.signbit(y[finite]), np.signbit(expected[finite]))  # -0.4 -> -0.0


def _cast_model(to, n: int) -> onnx.ModelProto:
    t = helper.np_dtype_to_tensor_dtype(np.dtype(to))
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=t)], "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [n])], [helper.make_tensor_value_info("y", t, [n])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("to", [np.int8, np.uint8, np.int32], ids=lambda t: np.dtype(t).name)
def test_float_to_int_casts_saturate_the_truncated_value(to):
    """`zant_cast` saturates then truncates (no `@trunc` call): the same as saturating trunc(x)
    next to each bound, with NaN as 0."""
    info = np.iinfo(to)
    edges = [info.min, info.max, 0.0]
    x = np.array([e + d for e in edges for d in (-1.5, -1.0, -0.99, -0.5, 0.0, 0.5, 0.99, 1.0, 1.5)]
                 + [np.nan, np.inf, -np.inf, 1e30, -1e30], np.float32)
    _, (y,) = compile_and_run_result(_cast_model(to, len(x)), {"x": x})
    expected = np.where(np.isnan(x), 0, np.clip(np.trunc(x.astype(np.float64)), info.min, info.max)).astype(to)
    np.testing.assert_array_equal(y, expected)
