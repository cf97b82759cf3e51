"""Numerics of the movement lowerings (views and copy loops) and of fold-constants, end to end."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.e2e import check_model

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def _model(node, inputs, outputs, initializers=(), opset=21):
    graph = helper.make_graph(
        [node] if not isinstance(node, list) else node,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in initializers],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _const(name, value):
    return (name, np.asarray(value, dtype=np.int64))


@pytest.mark.parametrize("shape, target", [((3, 1), (2, 3, 4)), ((1, 4), (3, 4))])
def test_expand(shape, target):
    node = helper.make_node("Expand", ["x", "s"], ["y"])
    check_model(_model(node, [("x", F, shape)], [("y", F, target)], [_const("s", target)]))


@pytest.mark.parametrize(
    "starts, ends, axes, steps",
    [([1, 0], [3, 10], [0, 1], [1, 2]), ([-1, 4], [-100, 0], [0, -1], [-1, -2])],
)
def test_slice(starts, ends, axes, steps):
    node = helper.make_node("Slice", ["x", "b", "e", "a", "st"], ["y"])
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    expected = x[tuple(slice(None) for _ in range(2))]
    for b, e, a, st in zip(starts, ends, axes, steps):
        index = [slice(None)] * 2
        index[a] = slice(b, e if e > -100 else None, st)
        expected = expected[tuple(index)]
    model = _model(
        node, [("x", F, (4, 5))], [("y", F, expected.shape)],
        [_const("b", starts), _const("e", ends), _const("a", axes), _const("st", steps)],
    )
    check_model(model, {"x": x})


@pytest.mark.parametrize("axis", [0, 1])
def test_gather_runtime_negative_indices(axis):
    node = helper.make_node("Gather", ["x", "i"], ["y"], axis=axis)
    indices = np.array([[0, -1, 2], [-3, 1, 0]], dtype=np.int64)
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = np.take(x, indices, axis=axis).shape
    model = _model(node, [("x", TensorProto.INT32, (3, 4)), ("i", I64, (2, 3))], [("y", TensorProto.INT32, out)])
    check_model(model, {"x": x, "i": indices})


@pytest.mark.parametrize("axis", [0, -1])
def test_gather_elements(axis):
    node = helper.make_node("GatherElements", ["x", "i"], ["y"], axis=axis)
    indices = np.array([[0, -1, 2], [2, 1, 0]], dtype=np.int64)
    shape = (3, 3) if axis == 0 else (2, 3)
    model = _model(node, [("x", F, shape), ("i", I64, (2, 3))], [("y", F, (2, 3))])
    check_model(model, {"x": np.arange(np.prod(shape), dtype=np.float32).reshape(shape), "i": indices})


@pytest.mark.parametrize("batch_dims", [0, 1])
def test_gather_nd(batch_dims):
    node = helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=batch_dims)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    indices = np.array([[1, 2], [0, -1]], dtype=np.int64)
    out = (2, 4) if batch_dims == 0 else (2,)
    if batch_dims == 1:
        indices = np.array([[1, 2], [0, -1]], dtype=np.int64)
    model = _model(node, [("x", F, (2, 3, 4)), ("i", I64, (2, 2))], [("y", F, out)])
    check_model(model, {"x": x, "i": indices})


@pytest.mark.parametrize("split", [None, [1, 3]])
def test_split(split):
    inputs = ["x", "s"] if split else ["x"]
    sizes = split or [2, 2]
    attrs = {} if split else {"num_outputs": 2}
    node = helper.make_node("Split", inputs, ["a", "b"], axis=1, **attrs)
    model = _model(
        node, [("x", F, (3, 4))], [("a", F, (3, sizes[0])), ("b", F, (3, sizes[1]))],
        [_const("s", split)] if split else [],
    )
    check_model(model)


@pytest.mark.parametrize("repeats", [[2, 1], [1, 3]])
def test_tile(repeats):
    node = helper.make_node("Tile", ["x", "r"], ["y"])
    out = (2 * repeats[0], 3 * repeats[1])
    check_model(_model(node, [("x", TensorProto.INT8, (2, 3))], [("y", TensorProto.INT8, out)], [_const("r", repeats)]))


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad(mode):
    node = helper.make_node("Pad", ["x", "p", "v"] if mode == "constant" else ["x", "p"], ["y"], mode=mode)
    inits = [_const("p", [1, 2, 2, 1])]
    if mode == "constant":
        inits.append(("v", np.array(1.5, dtype=np.float32)))
    check_model(_model(node, [("x", F, (3, 4))], [("y", F, (6, 7))], inits))


def test_pad_negative_axes():
    node = helper.make_node("Pad", ["x", "p", "", "a"], ["y"])
    model = _model(node, [("x", F, (2, 3, 4))], [("y", F, (2, 3, 7))], [_const("p", [1, 2]), _const("a", [-1])])
    check_model(model)


@pytest.mark.parametrize("op, mode", [("DepthToSpace", "DCR"), ("DepthToSpace", "CRD"), ("SpaceToDepth", None)])
def test_depth_space(op, mode):
    attrs = {"mode": mode} if mode else {}
    node = helper.make_node(op, ["x"], ["y"], blocksize=2, **attrs)
    shapes = ((1, 8, 2, 3), (1, 2, 4, 6)) if op == "DepthToSpace" else ((1, 2, 4, 6), (1, 8, 2, 3))
    check_model(_model(node, [("x", F, shapes[0])], [("y", F, shapes[1])]))


@pytest.mark.parametrize("upper, k", [(1, 1), (0, -1)])
def test_trilu(upper, k):
    node = helper.make_node("Trilu", ["x", "k"], ["y"], upper=upper)
    check_model(_model(node, [("x", F, (2, 3, 4))], [("y", F, (2, 3, 4))], [_const("k", k)]))


@pytest.mark.parametrize("k, dtype", [(0, F), (-1, I64)])
def test_eye_like(k, dtype):
    node = helper.make_node("EyeLike", ["x"], ["y"], k=k, dtype=dtype)
    check_model(_model(node, [("x", F, (3, 4))], [("y", dtype, (3, 4))]))


@pytest.mark.parametrize("axis", [-1, 0])
def test_one_hot(axis):
    node = helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=axis)
    out = (2, 3, 4) if axis == -1 else (4, 2, 3)
    model = _model(
        node, [("i", I64, (2, 3))], [("y", F, out)],
        [_const("d", 4), ("v", np.array([0.5, 2.0], dtype=np.float32))],
    )
    check_model(model, {"i": np.array([[0, 3, -1], [1, 2, -4]], dtype=np.int64)})


@pytest.mark.parametrize("reduction", ["none", "add", "max"])
def test_scatter_elements(reduction):
    node = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1, reduction=reduction)
    model = _model(node, [("x", F, (2, 4)), ("i", I64, (2, 2)), ("u", F, (2, 2))], [("y", F, (2, 4))])
    feeds = {
        "x": np.arange(8, dtype=np.float32).reshape(2, 4),
        "i": np.array([[1, -1], [0, 2]], dtype=np.int64),
        "u": np.array([[10, 20], [-3, 4]], dtype=np.float32),
    }
    check_model(model, feeds)


@pytest.mark.parametrize("reduction", ["none", "mul"])
def test_scatter_nd(reduction):
    node = helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction=reduction)
    model = _model(node, [("x", F, (3, 2)), ("i", I64, (2, 1)), ("u", F, (2, 2))], [("y", F, (3, 2))])
    feeds = {
        "x": np.arange(6, dtype=np.float32).reshape(3, 2),
        "i": np.array([[2], [0]], dtype=np.int64),
        "u": np.array([[10, 20], [-3, 4]], dtype=np.float32),
    }
    check_model(model, feeds)


def test_shape_subgraph_folds():
    """Shape → Gather → Concat → Reshape, folded at compile time; Range and ConstantOfShape too."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["d0"], axis=0),
        helper.make_node("Concat", ["d0", "m1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["r"]),
        helper.make_node("ConstantOfShape", ["shape2"], ["c"], value=numpy_helper.from_array(np.array([2.0], np.float32))),
        helper.make_node("Mul", ["r", "c"], ["y"]),
    ]
    model = _model(
        nodes, [("x", F, (2, 3, 4))], [("y", F, (2, 12))],
        [_const("i0", [0]), _const("m1", [-1]), _const("shape2", [2, 12])],
    )
    check_model(model)



MARK_CHANNELS_LAST = """
from dataclasses import dataclass

from xdsl.dialects.builtin import UnitAttr
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class MarkChannelsLastPass(ModulePass):
    name = "mark-channels-last"

    def apply(self, ctx, op):
        for o in op.walk():
            if o.name in ("onnx.Concat", "onnx.Relu"):
                o.attributes["zant.channels_last"] = UnitAttr()
"""
"""A plugin pass: every Concat and Relu stored channels-last, as `assign-host-layouts` would
mark a Fire module's."""


@pytest.mark.parametrize("axis", [1, 2])
def test_concat_channels_last(tmp_path, axis):
    """A channels-last Concat (a Fire module's 1x1 and 3x3 Convs, each followed by a channels-last
    Relu, beside a graph input in ONNX's layout) read by a Conv: the reference's values, on the
    host's pipeline with the Concat and the Relus marked before the lowering; along the channels
    and along the height."""
    from zant.driver import CompileOptions, compile_model
    from zant.pipelines import pipeline_for
    from zant.runtime import load_compiled, reference_outputs

    rng = np.random.default_rng(axis)
    x_shape, part = [1, 4, 6, 7], [1, 5, 6, 7]
    third, total = list(part), list(part)
    third[axis], total[axis] = 3, 2 * part[axis] + 3
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"]),
        helper.make_node("Relu", ["c1"], ["e1"]),
        helper.make_node("Conv", ["x", "w3"], ["c3"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c3"], ["e3"]),
        helper.make_node("Concat", ["e1", "e3", "z"], ["cat"], axis=axis),
        helper.make_node("Conv", ["cat", "wy"], ["y"]),
    ]
    initializers = [("w1", rng.standard_normal((5, 4, 1, 1)).astype(np.float32)),
                    ("w3", rng.standard_normal((5, 4, 3, 3)).astype(np.float32)),
                    ("wy", rng.standard_normal((2, total[1], 1, 1)).astype(np.float32))]
    model = _model(nodes, [("x", F, x_shape), ("z", F, third)], [("y", F, [1, 2, *total[2:]])], initializers)
    feeds = {"x": rng.standard_normal(x_shape).astype(np.float32), "z": rng.standard_normal(third).astype(np.float32)}
    plugin = tmp_path / "mark.py"
    plugin.write_text(MARK_CHANNELS_LAST)
    stages = pipeline_for("host").split(",")
    stages.insert(stages.index("onnx-to-uop"), "mark-channels-last")
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    options = CompileOptions(name="m", optimize="ReleaseSafe", pipeline=",".join(stages), plugins=(str(plugin),))
    result = compile_model(path, tmp_path / "out", options)
    (ours,) = load_compiled(result)(feeds["x"], feeds["z"])
    (want,) = reference_outputs(path, feeds)
    np.testing.assert_allclose(ours, want, rtol=1e-4, atol=1e-4)
