"""End-to-end numerics of the reduction lowerings (Reduce*, ArgMax/ArgMin, CumSum/CumProd).

Each case is a one-node ONNX model built here with its `axes`/`axis` as an initializer, compiled
and run by `e2e.check_model` against `onnx.reference`.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from e2e import check_model, compile_and_run

rng = np.random.default_rng(0)

REDUCE_OPS = [
    "ReduceMax",
    "ReduceMin",
    "ReduceSum",
    "ReduceMean",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
]
FLOAT_ONLY = {"ReduceL2", "ReduceLogSum", "ReduceLogSumExp"}
POSITIVE = {"ReduceLogSum"}


def _model(node, inputs, outputs, initializers=()):
    graph = helper.make_graph([node], "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx.defs.onnx_opset_version())])


def _elem(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _data(shape, dtype, positive=False):
    if np.dtype(dtype).kind == "f":
        x = rng.uniform(0.5, 2.0, shape) if positive else rng.standard_normal(shape)
        return x.astype(dtype)
    return rng.integers(1 if positive else -3, 4, shape).astype(dtype)


def _reference_shape(x, axes, keepdims):
    if axes is None:
        axes = tuple(range(x.ndim))
    return list(np.sum(x, axis=tuple(axes), keepdims=bool(keepdims)).shape)


def _reduce_model(op, x, axes, keepdims, noop=0):
    inputs = ["x"]
    initializers = []
    if axes is not None:
        initializers.append(numpy_helper.from_array(np.array(axes, dtype=np.int64), "axes"))
        inputs.append("axes")
    attrs = {"keepdims": keepdims}
    if noop:
        attrs["noop_with_empty_axes"] = 1
    node = helper.make_node(op, inputs, ["y"], **attrs)
    out_shape = list(x.shape) if noop else _reference_shape(x, axes, keepdims)
    return _model(
        node,
        [helper.make_tensor_value_info("x", _elem(x.dtype), list(x.shape))],
        [helper.make_tensor_value_info("y", _elem(x.dtype), out_shape)],
        initializers,
    )


@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=["f32", "i64"])
@pytest.mark.parametrize("axes", [None, [0, -1]], ids=["all", "axes0_-1"])
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("op", REDUCE_OPS)
def test_reduce(op, keepdims, axes, dtype):
    if op in FLOAT_ONLY and dtype != np.float32:
        dtype = np.float64
    x = _data((2, 3, 4), dtype, positive=op in POSITIVE)
    if op == "ReduceProd" and np.dtype(dtype).kind == "f":
        x = x / 2 + np.sign(x)  # keep the product of 24 elements in range
    check_model(_reduce_model(op, x, axes, keepdims), {"x": x}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceSumSquare", "ReduceL2"])
def test_reduce_noop_with_empty_axes(op):
    x = _data((3, 4), np.float32)
    check_model(_reduce_model(op, x, [], 1, noop=1), {"x": x})


def test_reduce_max_bool():
    x = rng.integers(0, 2, (3, 4)).astype(bool)
    check_model(_reduce_model("ReduceMax", x, [1], 0), {"x": x})


def test_reduce_mean_float16_accumulates_in_f32():
    x = _data((4, 64), np.float16)
    check_model(_reduce_model("ReduceMean", x, [1], 1), {"x": x}, rtol=1e-3, atol=1e-3)


def test_reduce_log_sum_exp_large_values():
    x = (_data((2, 5), np.float32) * 100).astype(np.float32)
    check_model(_reduce_model("ReduceLogSumExp", x, [1], 0), {"x": x})


@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=["f32", "i64"])
@pytest.mark.parametrize("last", [0, 1])
@pytest.mark.parametrize("axis,keepdims", [(0, 0), (-1, 1)])
@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg(op, axis, keepdims, last, dtype):
    x = rng.integers(-2, 3, (3, 4, 2)).astype(dtype)  # ties, to exercise select_last_index
    out_shape = list(np.argmax(x, axis=axis, keepdims=bool(keepdims)).shape)
    node = helper.make_node(op, ["x"], ["y"], axis=axis, keepdims=keepdims, select_last_index=last)
    model = _model(
        node,
        [helper.make_tensor_value_info("x", _elem(dtype), list(x.shape))],
        [helper.make_tensor_value_info("y", onnx.TensorProto.INT64, out_shape)],
    )
    check_model(model, {"x": x})


@pytest.mark.parametrize("dtype", [np.float64, np.int32], ids=["f64", "i32"])
@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 1)])
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("op", ["CumSum", "CumProd"])
def test_cumulative(op, axis, exclusive, reverse, dtype):
    x = _data((3, 4, 2), dtype)
    node = helper.make_node(op, ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)
    model = _model(
        node,
        [helper.make_tensor_value_info("x", _elem(dtype), list(x.shape))],
        [helper.make_tensor_value_info("y", _elem(dtype), list(x.shape))],
        [numpy_helper.from_array(np.array(axis, dtype=np.int64), "axis")],
    )
    check_model(model, {"x": x})


# -- statistics-based normalizations (norm.py), which are reductions per group -------------------


def _norm_model(op, x, params, n_outputs=1, **attrs):
    names = ["x"] + [f"p{i}" for i in range(len(params))]
    node = helper.make_node(op, names, ["y", "mean", "inv"][:n_outputs], **attrs)
    inputs = [helper.make_tensor_value_info(n, _elem(a.dtype), list(a.shape)) for n, a in zip(names, [x, *params])]
    outs = [helper.make_tensor_value_info("y", _elem(x.dtype), list(x.shape))]
    if n_outputs > 1:
        axis = attrs.get("axis", -1) % x.ndim
        stats = list(x.shape[:axis]) + [1] * (x.ndim - axis)
        stash = onnx.TensorProto.FLOAT  # Mean and InvStdDev have the stash type
        outs += [helper.make_tensor_value_info(n, stash, stats) for n in ["mean", "inv"][: n_outputs - 1]]
    return _model(node, inputs, outs), dict(zip(names, [x, *params]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("axis", [-1, 1])
def test_layer_normalization(axis, dtype):
    x = _data((2, 3, 4), dtype)
    shape = x.shape[axis:] if axis > 0 else x.shape[-1:]
    model, feeds = _norm_model(
        # Mean/InvStdDev only in f32 (onnx.reference returns them in the input type, not the stash type)
        "LayerNormalization", x, [_data(shape, dtype), _data(shape, dtype)], n_outputs=3 if dtype == np.float32 else 1, axis=axis
    )
    check_model(model, feeds)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_rms_normalization(dtype):
    x = _data((2, 3, 4), dtype)
    model, feeds = _norm_model("RMSNormalization", x, [_data((4,), dtype)], axis=-1, epsilon=1e-3)
    check_model(model, feeds)


@pytest.mark.parametrize("op,attrs", [("InstanceNormalization", {}), ("GroupNormalization", {"num_groups": 2})])
def test_channel_normalization(op, attrs):
    x = _data((2, 4, 3, 2), np.float32)
    model, feeds = _norm_model(op, x, [_data((4,), np.float32), _data((4,), np.float32)], **attrs)
    check_model(model, feeds)


@pytest.mark.parametrize("p", [1, 2])
def test_lp_normalization(p):
    # onnx.reference sums x**p without abs (wrong for p=1 on negatives): positive inputs for p=1
    x = _data((3, 4), np.float32, positive=p == 1)
    x[:, 1] = 0  # a zero norm gives 0
    model, feeds = _norm_model("LpNormalization", x, [], axis=0, p=p)
    check_model(model, feeds)


def test_mean_variance_normalization():
    x = _data((2, 3, 2, 2), np.float32)
    model, feeds = _norm_model("MeanVarianceNormalization", x, [], axes=[0, 2])
    check_model(model, feeds)


@pytest.mark.parametrize("axis", [0, -1])
def test_hardmax(axis):
    x = rng.integers(-2, 3, (3, 4)).astype(np.float32)  # ties: the first maximum wins
    model, feeds = _norm_model("Hardmax", x, [], axis=axis)
    check_model(model, feeds)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("dtype", [np.float16, np.float64], ids=["f16", "f64"])
def test_softmax_other_floats(op, dtype):
    x = _data((2, 5), dtype)
    model, feeds = _norm_model(op, x, [], axis=1)
    check_model(model, feeds, rtol=1e-2 if dtype == np.float16 else 1e-6, atol=1e-3 if dtype == np.float16 else 1e-9)


def test_softmax_float16_rounds_like_the_reference():
    """An f16 Softmax sums its f16 exponentials in f32 and rounds the sum once, as NumPy (ONNX's
    reference) does: the result is the reference's bit for bit (an f16 running sum was 1-2 ulp
    off on rows of a few elements: ONNX's fp16 Attention cases)."""
    x = (np.random.default_rng(7).standard_normal((16, 6)) * 2).astype(np.float16)
    model, feeds = _norm_model("Softmax", x, [], axis=1)
    check_model(model, feeds, rtol=0, atol=0)


CONSTANT_ROWS = (0.7310586, -0.3, 0.1)
"""Values whose sum of 120 copies rounds in f32: Σx/n is not x, and with eps = 1e-12 (BERT's)
the rounding error over the near-zero deviation gave |y| up to 0.34 instead of 0."""


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_constant_groups_normalize_to_exactly_the_bias(target):
    """Every statistics-based normalization of a constant group gives exactly its bias (0 for
    MeanVarianceNormalization), on the host pipeline and the M4's (built for the host)."""
    from zant.pipelines import pipeline_for

    rows = np.repeat(np.array(CONSTANT_ROWS, np.float32)[:, None], 120, axis=1)  # [3, 120]
    channels = np.broadcast_to(np.array([*CONSTANT_ROWS, 2.5], np.float32)[None, :, None, None], (2, 4, 3, 5)).copy()
    f = onnx.TensorProto.FLOAT
    initializers = [
        numpy_helper.from_array(np.ones(120, np.float32), "s120"),
        numpy_helper.from_array(np.full(120, 0.25, np.float32), "b120"),
        numpy_helper.from_array(np.array([1.0, 2.0, -1.0, 0.5], np.float32), "s4"),
        numpy_helper.from_array(np.array([0.0, 0.25, -1.5, 3.0], np.float32), "b4"),
    ]
    nodes = [
        helper.make_node("LayerNormalization", ["rows", "s120", "b120"], ["ln5"], axis=-1, epsilon=1e-5),
        helper.make_node("LayerNormalization", ["rows", "s120", "b120"], ["ln12"], axis=-1, epsilon=1e-12),
        helper.make_node("InstanceNormalization", ["channels", "s4", "b4"], ["inst"], epsilon=1e-12),
        helper.make_node("GroupNormalization", ["channels", "s4", "b4"], ["group"], num_groups=4, epsilon=1e-12),
        helper.make_node("MeanVarianceNormalization", ["channels"], ["mvn"]),
    ]
    outputs = [helper.make_tensor_value_info(n, f, [3, 120]) for n in ("ln5", "ln12")]
    outputs += [helper.make_tensor_value_info(n, f, [2, 4, 3, 5]) for n in ("inst", "group", "mvn")]
    inputs = [helper.make_tensor_value_info("rows", f, [3, 120]), helper.make_tensor_value_info("channels", f, [2, 4, 3, 5])]
    model = _model(nodes[0], inputs, outputs, initializers)
    model.graph.node.extend(nodes[1:])
    pipeline = None if target == "host" else pipeline_for(target)
    # Not against onnx.reference: its Σx/n rounds too (0.250038 for ln12).
    ln5, ln12, inst, group, mvn = compile_and_run(model, {"rows": rows, "channels": channels}, pipeline=pipeline)
    np.testing.assert_array_equal(ln5, np.full((3, 120), 0.25, np.float32))
    np.testing.assert_array_equal(ln12, np.full((3, 120), 0.25, np.float32))
    per_channel = np.broadcast_to(np.array([0.0, 0.25, -1.5, 3.0], np.float32)[None, :, None, None], (2, 4, 3, 5))
    np.testing.assert_array_equal(inst, per_channel)
    np.testing.assert_array_equal(group, per_channel)
    np.testing.assert_array_equal(mvn, np.zeros((2, 4, 3, 5), np.float32))
