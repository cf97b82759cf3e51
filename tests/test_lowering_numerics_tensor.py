"""End-to-end numerics of the element-wise, normalization and movement lowerings.

Each case is a one-node (or small) ONNX model built here, compiled and run by `e2e.check_model`
against `onnx.reference`. Inputs stay in each op's domain (Log/Sqrt positive, divisors away from 0).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from e2e import check_model

FLOAT = TensorProto.FLOAT
rng = np.random.default_rng(0)


def _model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx.defs.onnx_opset_version())])


def _value(name, shape, elem=FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def _normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _positive(*shape):
    return rng.uniform(0.1, 3.0, shape).astype(np.float32)


def _single(op, feeds, out_shape, out_elem=FLOAT, initializers=(), **attrs):
    """A model with one node `op` over the graph inputs `feeds` (then the initializers)."""
    elem = {np.dtype(np.float32): FLOAT, np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64}
    names = list(feeds) + [i.name for i in initializers]
    node = helper.make_node(op, names, ["y"], **attrs)
    inputs = [_value(n, list(a.shape), elem[a.dtype]) for n, a in feeds.items()]
    return _model([node], inputs, [_value("y", out_shape, out_elem)], initializers)


# -- element-wise unary ---------------------------------------------------------------------

UNARY_DOMAIN = {"Log": _positive, "Sqrt": _positive, "Reciprocal": _positive}
UNARY_OPS = ["Relu", "Sigmoid", "Tanh", "Exp", "Log", "Abs", "Neg", "Sqrt", "Reciprocal", "Erf", "Floor", "Ceil"]
UNARY_SHAPES = [(5,), (2, 3), (2, 3, 4)]


@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=str)
@pytest.mark.parametrize("op", UNARY_OPS)
def test_unary(op, shape):
    x = UNARY_DOMAIN.get(op, _normal)(*shape) * (1 if op in UNARY_DOMAIN else 2)
    check_model(_single(op, {"x": x}, list(shape)), {"x": x})


@pytest.mark.parametrize(
    "shape, alpha", [((6,), 0.01), ((2, 3), 0.2), ((2, 3, 4), 1.5)], ids=str
)
def test_leaky_relu(shape, alpha):
    x = _normal(*shape)
    check_model(_single("LeakyRelu", {"x": x}, list(shape), alpha=alpha), {"x": x})


CLIP_BOUNDS = [
    pytest.param(-0.5, 0.5, id="both"),
    pytest.param(-0.3, None, id="low-only"),
    pytest.param(None, 0.7, id="high-only"),
    pytest.param(None, None, id="none"),
]


@pytest.mark.parametrize("low, high", CLIP_BOUNDS)
def test_clip(low, high):
    x = _normal(3, 4)
    names, inputs, feeds = ["x"], [_value("x", [3, 4])], {"x": x}
    for name, bound in (("lo", low), ("hi", high)):
        if bound is None:
            names.append("")
        else:
            names.append(name)
            inputs.append(_value(name, []))
            feeds[name] = np.array(bound, np.float32)
    while names[-1] == "":
        names.pop()
    node = helper.make_node("Clip", names, ["y"])
    check_model(_model([node], inputs, [_value("y", [3, 4])]), feeds)


# -- element-wise binary, with broadcasting ---------------------------------------------------

BINARY_OPS = ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"]
BROADCASTS = [
    ((2, 3), (2, 3), (2, 3)),
    ((2, 3, 4), (4,), (2, 3, 4)),
    ((3, 1), (1, 4), (3, 4)),
    ((2, 1, 4), (), (2, 1, 4)),
]


@pytest.mark.parametrize("a_shape, b_shape, out_shape", BROADCASTS, ids=str)
@pytest.mark.parametrize("op", BINARY_OPS)
def test_binary(op, a_shape, b_shape, out_shape):
    a = _positive(*a_shape) if op == "Pow" else _normal(*a_shape)
    b = _positive(*b_shape) if op in ("Div", "Pow") else _normal(*b_shape)
    check_model(_single(op, {"a": a, "b": b}, list(out_shape)), {"a": a, "b": b})


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Max", "Min"])
def test_binary_int32(op):
    a = rng.integers(-50, 50, (2, 3)).astype(np.int32)
    b = rng.integers(-50, 50, (3,)).astype(np.int32)
    check_model(_single(op, {"a": a, "b": b}, [2, 3], TensorProto.INT32), {"a": a, "b": b})


@pytest.mark.parametrize("op", ["Max", "Min", "Sum"])
def test_variadic(op):
    feeds = {"a": _normal(2, 3), "b": _normal(3), "c": _normal(2, 1)}
    check_model(_single(op, feeds, [2, 3]), feeds)


# -- normalization ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape, epsilon", [((1, 3, 4, 4), 1e-5), ((2, 4), 1e-3), ((2, 2, 3), 0.1)], ids=str)
def test_batch_normalization(shape, epsilon):
    c = shape[1]
    x = _normal(*shape)
    params = [
        numpy_helper.from_array(_normal(c), "scale"),
        numpy_helper.from_array(_normal(c), "bias"),
        numpy_helper.from_array(_normal(c), "mean"),
        numpy_helper.from_array(_positive(c), "var"),
    ]
    check_model(_single("BatchNormalization", {"x": x}, list(shape), initializers=params, epsilon=epsilon), {"x": x})


SOFTMAX_CASES = [((2, 5), None), ((2, 3, 4), 1), ((2, 3, 4), 0), ((3, 4), -2), ((7,), 0)]


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("shape, axis", SOFTMAX_CASES, ids=str)
def test_softmax(op, shape, axis):
    x = _normal(*shape) * 10  # large values: exercises the max subtraction
    attrs = {} if axis is None else {"axis": axis}
    check_model(_single(op, {"x": x}, list(shape), **attrs), {"x": x})


# -- movement -------------------------------------------------------------------------------


def _i64(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


@pytest.mark.parametrize(
    "shape, target, out_shape",
    [((2, 3, 4), [6, 4], (6, 4)), ((2, 3, 4), [0, -1], (2, 12)), ((6,), [3, 1, 2], (3, 1, 2))],
    ids=str,
)
def test_reshape(shape, target, out_shape):
    x = _normal(*shape)
    check_model(_single("Reshape", {"x": x}, list(out_shape), initializers=[_i64("shape", target)]), {"x": x})


@pytest.mark.parametrize("shape, perm", [((2, 3), None), ((2, 3, 4), [1, 2, 0]), ((1, 2, 3, 4), [0, 3, 1, 2])], ids=str)
def test_transpose_then_relu(shape, perm):
    """Transpose (a view) feeding an element-wise op, and as a graph output (copied)."""
    x = _normal(*shape)
    out = list(reversed(shape)) if perm is None else [shape[p] for p in perm]
    attrs = {} if perm is None else {"perm": perm}
    nodes = [helper.make_node("Transpose", ["x"], ["t"], **attrs), helper.make_node("Relu", ["t"], ["y"])]
    check_model(_model(nodes, [_value("x", list(shape))], [_value("y", out), _value("t", out)]), {"x": x})


def test_transpose_then_reshape():
    """A reshape the strides cannot express: the transposed data is copied first."""
    x = _normal(2, 3, 4)
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[2, 0, 1]),
        helper.make_node("Reshape", ["t", "shape"], ["r"]),
        helper.make_node("Neg", ["r"], ["y"]),
    ]
    model = _model(nodes, [_value("x", [2, 3, 4])], [_value("y", [4, 6])], [_i64("shape", [4, 6])])
    check_model(model, {"x": x})


@pytest.mark.parametrize("shape, axis, out_shape", [((2, 3, 4), 1, (2, 12)), ((2, 3, 4), 0, (1, 24)), ((2, 3, 4), -1, (6, 4))], ids=str)
def test_flatten(shape, axis, out_shape):
    x = _normal(*shape)
    check_model(_single("Flatten", {"x": x}, list(out_shape), axis=axis), {"x": x})


@pytest.mark.parametrize("shape, axes, out_shape", [((1, 3, 1, 2), [0, 2], (3, 2)), ((2, 1), [-1], (2,)), ((1, 1, 4), None, (4,))], ids=str)
def test_squeeze(shape, axes, out_shape):
    x = _normal(*shape)
    inits = [] if axes is None else [_i64("axes", axes)]
    check_model(_single("Squeeze", {"x": x}, list(out_shape), initializers=inits), {"x": x})


@pytest.mark.parametrize("shape, axes", [((3, 2), [0]), ((3, 2), [1, -1]), ((4,), [0, 2])], ids=str)
def test_unsqueeze_of_transpose(shape, axes):
    """Unsqueeze of a transposed (non-contiguous) input stays a view."""
    x = _normal(*shape)
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"]),
        helper.make_node("Unsqueeze", ["t", "axes"], ["u"]),
        helper.make_node("Abs", ["u"], ["y"]),
    ]
    out = _unsqueezed(list(reversed(shape)), axes)
    check_model(_model(nodes, [_value("x", list(shape))], [_value("y", out)], [_i64("axes", axes)]), {"x": x})


def _unsqueezed(shape, axes):
    rank = len(shape) + len(axes)
    axes = {a % rank for a in axes}
    dims = iter(shape)
    return [1 if i in axes else next(dims) for i in range(rank)]


def test_identity():
    x = _normal(2, 3)
    nodes = [helper.make_node("Identity", ["x"], ["i"]), helper.make_node("Exp", ["i"], ["y"])]
    check_model(_model(nodes, [_value("x", [2, 3])], [_value("y", [2, 3]), _value("i", [2, 3])]), {"x": x})


@pytest.mark.parametrize(
    "shapes, axis, out_shape",
    [
        ([(2, 3), (4, 3)], 0, (6, 3)),
        ([(2, 3), (2, 1), (2, 2)], -1, (2, 6)),
        ([(1, 2, 3), (1, 1, 3), (1, 2, 3)], 1, (1, 5, 3)),
    ],
    ids=str,
)
def test_concat(shapes, axis, out_shape):
    feeds = {f"x{i}": _normal(*s) for i, s in enumerate(shapes)}
    check_model(_single("Concat", feeds, list(out_shape), axis=axis), feeds)


def test_concat_of_transposes():
    """Concat reads its inputs through their (transposed) views."""
    feeds = {"a": _normal(3, 2), "b": _normal(3, 4)}
    nodes = [
        helper.make_node("Transpose", ["a"], ["at"]),
        helper.make_node("Transpose", ["b"], ["bt"]),
        helper.make_node("Concat", ["at", "bt"], ["y"], axis=0),
    ]
    check_model(_model(nodes, [_value("a", [3, 2]), _value("b", [3, 4])], [_value("y", [6, 3])]), feeds)
