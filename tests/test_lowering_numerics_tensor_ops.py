"""End-to-end numerics of Einsum, TopK, Mean, ReverseSequence, Dropout, Det, BitCast and
TensorScatter against the ONNX reference evaluator. Several nodes share one model (one Zig
build) where their inputs allow it."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from e2e import check_model
from zant.errors import ZantError
from zant.driver import CompileOptions, compile_model

F = TensorProto.FLOAT


def graph_model(nodes, inputs, outputs, initializers=(), opset=24):
    """A model from nodes; `inputs`/`outputs` are (name, element type, shape) triples."""
    info = lambda n, t, s: helper.make_tensor_value_info(n, t, s)  # noqa: E731
    graph = helper.make_graph(
        nodes,
        "g",
        [info(*i) for i in inputs],
        [info(*o) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in initializers],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


EINSUM = [
    # (equation, operand shapes, output shape)
    ("ij->ji", [[3, 4]], [4, 3]),
    ("ij->", [[3, 4]], []),
    ("ii->i", [[4, 4]], [4]),
    ("ii", [[4, 4]], []),
    ("bij,bjk->bik", [[2, 3, 4], [2, 4, 5]], [2, 3, 5]),
    ("i,i", [[5], [5]], []),
    ("...ii->...i", [[2, 3, 3]], [2, 3]),
    ("...ij,...jk", [[2, 1, 3, 4], [1, 3, 4, 2]], [2, 3, 3, 2]),
    ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 2]], [2, 2]),
    ("ba", [[3, 2]], [2, 3]),
    ("i,j->ij", [[3], [2]], [3, 2]),
]


def test_einsum_equations():
    """Transpose, full sums, diagonals, implicit outputs, batches, ellipses with broadcasting,
    three operands: one node each, all in one model."""
    nodes, inputs, outputs = [], [], []
    for n, (equation, shapes, out) in enumerate(EINSUM):
        names = [f"x{n}_{k}" for k in range(len(shapes))]
        nodes.append(helper.make_node("Einsum", names, [f"y{n}"], equation=equation))
        inputs += [(name, F, shape) for name, shape in zip(names, shapes)]
        outputs.append((f"y{n}", F, out))
    check_model(graph_model(nodes, inputs, outputs))


def test_einsum_integers():
    node = helper.make_node("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik")
    check_model(graph_model([node], [("a", TensorProto.INT32, [2, 3]), ("b", TensorProto.INT32, [3, 2])],
                            [("y", TensorProto.INT32, [2, 2])]))


def test_einsum_equation_not_matching_rank(tmp_path):
    """ONNX shape inference catches this for models; zant-opt input must be checked too."""
    source = tmp_path / "e.mlir"
    source.write_text(
        'func.func @main(%a: tensor<2x3x4xf32>) -> tensor<2x3xf32> {\n'
        '  %y = onnx.Einsum(%a) {equation = "ij->ij"} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>\n'
        "  func.return %y : tensor<2x3xf32>\n}\n"
    )
    result = subprocess.run(["zant-opt", str(source), "-p", "onnx-to-uop"], capture_output=True, text=True)
    assert result.returncode != 0
    assert "onnx.Einsum" in result.stderr and "does not match its operand's rank" in result.stderr
    assert "Traceback" not in result.stderr


TOPK = [
    # (shape, k, attributes)
    ([3, 5], 3, {}),
    ([3, 5], 2, {"largest": 0}),
    ([4, 3], 2, {"axis": 0}),
    ([2, 3, 4], 4, {"axis": -1, "largest": 0}),
]


def test_topk():
    nodes, inputs, outputs, initializers = [], [], [], []
    for n, (shape, k, attributes) in enumerate(TOPK):
        axis = attributes.get("axis", -1) % len(shape)
        out = [k if d == axis else s for d, s in enumerate(shape)]
        nodes.append(helper.make_node("TopK", [f"x{n}", f"k{n}"], [f"v{n}", f"i{n}"], **attributes))
        inputs.append((f"x{n}", F, shape))
        initializers.append((f"k{n}", np.array([k], np.int64)))
        outputs += [(f"v{n}", F, out), (f"i{n}", TensorProto.INT64, out)]
    check_model(graph_model(nodes, inputs, outputs, initializers))


def test_topk_ties_keep_index_order():
    """Equal values come out by increasing index, largest and smallest, for integers."""
    x = np.array([[3, 1, 3, 2, 1, 3], [0, 0, 0, 5, 5, 0]], np.int32)
    nodes = [
        helper.make_node("TopK", ["x", "k"], ["v0", "i0"]),
        helper.make_node("TopK", ["x", "k"], ["v1", "i1"], largest=0),
    ]
    outputs = [(f"{a}{n}", t, [2, 4]) for n in (0, 1) for a, t in (("v", TensorProto.INT32), ("i", TensorProto.INT64))]
    model = graph_model(nodes, [("x", TensorProto.INT32, [2, 6])], outputs, [("k", np.array([4], np.int64))])
    check_model(model, {"x": x})


def test_mean_reverse_sequence_dropout_tensor_scatter():
    """Mean with broadcasting; ReverseSequence on both axis layouts; inference Dropout with its
    mask; training Dropout with ratio 0; TensorScatter linear and circular."""
    b = TensorProto.BOOL
    nodes = [
        helper.make_node("Mean", ["a", "b", "c"], ["mean"]),
        helper.make_node("ReverseSequence", ["s", "lens_t"], ["rev_t"], batch_axis=1, time_axis=0),
        helper.make_node("ReverseSequence", ["s", "lens_b"], ["rev_b"], batch_axis=0, time_axis=1),
        helper.make_node("Dropout", ["a", "ratio"], ["drop", "mask"]),
        helper.make_node("Dropout", ["a", "zero", "train"], ["drop0", "mask0"]),
        helper.make_node("TensorScatter", ["cache", "update"], ["present"]),
        helper.make_node("TensorScatter", ["cache", "update", "where"], ["present_c"], mode="circular"),
    ]
    inputs = [
        ("a", F, [2, 3]), ("b", F, [3]), ("c", F, [2, 1]), ("s", F, [4, 4, 2]),
        ("cache", F, [2, 3, 5, 2]), ("update", F, [2, 3, 2, 2]),
    ]
    initializers = [
        ("lens_t", np.array([4, 3, 2, 1], np.int64)), ("lens_b", np.array([1, 2, 3, 4], np.int64)),
        ("ratio", np.array(0.3, np.float32)), ("zero", np.array(0.0, np.float32)),
        ("train", np.array(True)), ("where", np.array([1, 4], np.int64)),
    ]
    outputs = [
        ("mean", F, [2, 3]), ("rev_t", F, [4, 4, 2]), ("rev_b", F, [4, 4, 2]),
        ("drop", F, [2, 3]), ("mask", b, [2, 3]), ("drop0", F, [2, 3]), ("mask0", b, [2, 3]),
        ("present", F, [2, 3, 5, 2]), ("present_c", F, [2, 3, 5, 2]),
    ]
    check_model(graph_model(nodes, inputs, outputs, initializers, opset=24))


def test_det():
    """2-D and batched; the second matrix needs a row exchange (a zero pivot)."""
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 4)).astype(np.float32)
    x[0, 1] = [[0, 1, 2, 3], [1, 0, 1, 1], [2, 1, 0, 5], [1, 1, 1, 0]]
    square = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    nodes = [helper.make_node("Det", ["x"], ["d"]), helper.make_node("Det", ["m"], ["dm"])]
    model = graph_model(nodes, [("x", F, [2, 3, 4, 4]), ("m", F, [2, 2])], [("d", F, [2, 3]), ("dm", F, [])])
    check_model(model, {"x": x, "m": square}, rtol=1e-4, atol=1e-4)


def test_bit_cast_between_integers():
    nodes = [
        helper.make_node("BitCast", ["u"], ["s"], to=TensorProto.INT32),
        helper.make_node("BitCast", ["i"], ["w"], to=TensorProto.UINT8),
        helper.make_node("BitCast", ["flags"], ["bytes"], to=TensorProto.UINT8),
    ]
    feeds = {
        "u": np.array([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF], np.uint32),
        "i": np.array([-128, -1, 0, 127], np.int8),
        "flags": np.array([True, False, True]),
    }
    inputs = [("u", TensorProto.UINT32, [5]), ("i", TensorProto.INT8, [4]), ("flags", TensorProto.BOOL, [3])]
    outputs = [("s", TensorProto.INT32, [5]), ("w", TensorProto.UINT8, [4]), ("bytes", TensorProto.UINT8, [3])]
    check_model(graph_model(nodes, inputs, outputs, opset=26), feeds)


def test_bit_cast_between_floats_and_integers():
    """Bits, not values: NaN payloads, -0.0 and infinities read as integers, and back."""
    nodes = [
        helper.make_node("BitCast", ["f"], ["fi"], to=TensorProto.INT32),
        helper.make_node("BitCast", ["h"], ["hu"], to=TensorProto.UINT16),
        helper.make_node("BitCast", ["d"], ["di"], to=TensorProto.INT64),
        helper.make_node("BitCast", ["i"], ["if"], to=TensorProto.FLOAT),
    ]
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.5]
    feeds = {
        "f": np.array(specials + [np.float32(1e-45)], np.float32),
        "h": np.array(specials, np.float16),
        "d": np.array(specials, np.float64),
        "i": np.array([0, -(2**31), 0x3FC00000, 1, 0x7F7FFFFF], np.int32),
    }
    inputs = [("f", F, [7]), ("h", TensorProto.FLOAT16, [6]), ("d", TensorProto.DOUBLE, [6]), ("i", TensorProto.INT32, [5])]
    outputs = [("fi", TensorProto.INT32, [7]), ("hu", TensorProto.UINT16, [6]), ("di", TensorProto.INT64, [6]),
               ("if", F, [5])]
    check_model(graph_model(nodes, inputs, outputs, opset=26), feeds)


def test_empty_tensors_emit_no_dead_loops():
    """An element-wise op on an empty tensor and a reduction over an empty axis: no loop may
    index the empty buffers (Zig rejects indexing a zero-size scratch arena)."""
    nodes = [
        helper.make_node("Abs", ["x"], ["a"]),
        helper.make_node("ReduceSum", ["a", "axes"], ["y"], keepdims=1),
        helper.make_node("ReduceMax", ["x", "axes"], ["m"], keepdims=0),
    ]
    model = graph_model(
        nodes, [("x", F, [2, 0, 4])], [("y", F, [2, 1, 4]), ("m", F, [2, 4])], [("axes", np.array([1], np.int64))]
    )
    check_model(model)
