"""Recurrent models as PyTorch's TorchScript exporter (`dynamo=False`, opset 13) writes them:
every output of a GRU/LSTM node named (Y, Y_h, Y_c) though only Y is read, initial states as
`Constant` nodes, W/R/B as initializers, an empty `sequence_lens`, batch-first input transposed
to time-major, Y squeezed and transposed back, the last step gathered into a classifier.

Those unused final states once crashed arena planning (`KeyError: <DefineLocalOp …>`): the
lowering defined Y_h before the hidden state it is copied from, and the planner resolved in-place
chains in definition order. Compared with onnxruntime, on the host and MCU pipelines.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from e2e import compile_and_run
from onnx import TensorProto, helper, numpy_helper

from zant.driver import DEFAULT_PIPELINE, MCU_PIPELINE

STEPS, BATCH, FEATURES, HIDDEN, CLASSES = 5, 1, 4, 3, 2
GATES = {"GRU": 3, "LSTM": 4}


def _recurrent_branch(op: str, direction: str, rng: np.random.Generator) -> tuple[list, list]:
    """Nodes and initializers of one exporter-style recurrent layer over `xt`, ending in
    `{op}_logits` (BATCH, CLASSES)."""
    dirs, gates = (2 if direction == "bidirectional" else 1), GATES[op]
    weights = {
        "W": (dirs, gates * HIDDEN, FEATURES),
        "R": (dirs, gates * HIDDEN, HIDDEN),
        "B": (dirs, 2 * gates * HIDDEN),
        "fc": (dirs * HIDDEN, CLASSES),
    }
    initializers = [
        numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), f"{op}_{name}")
        for name, shape in weights.items()
    ]
    zeros = numpy_helper.from_array(np.zeros((dirs, BATCH, HIDDEN), np.float32))
    nodes = [helper.make_node("Constant", [], [f"{op}_h0"], value=zeros)]
    inputs = ["xt", f"{op}_W", f"{op}_R", f"{op}_B", "", f"{op}_h0"]
    outputs = [f"{op}_Y", f"{op}_Y_h"]
    if op == "LSTM":
        nodes.append(helper.make_node("Constant", [], [f"{op}_c0"], value=zeros))
        inputs.append(f"{op}_c0")
        outputs.append(f"{op}_Y_c")
    nodes += [
        helper.make_node(op, inputs, outputs, name=f"/rnn/{op}", hidden_size=HIDDEN, direction=direction),
        # Feeds nothing: dead code removes it, leaving Y_h unused.
        helper.make_node("Identity", [f"{op}_Y_h"], [f"{op}_dropped"]),
        # Y (T, dirs, B, H) → (B, T, dirs·H), the last step, a linear classifier.
        helper.make_node("Transpose", [f"{op}_Y"], [f"{op}_yt"], perm=[2, 0, 1, 3]),
        helper.make_node("Reshape", [f"{op}_yt", "flat_shape"], [f"{op}_yb"]),
        helper.make_node("Gather", [f"{op}_yb", "last"], [f"{op}_yl"], axis=1),
        helper.make_node("Squeeze", [f"{op}_yl", "axis1"], [f"{op}_ylast"]),
        helper.make_node("MatMul", [f"{op}_ylast", f"{op}_fc"], [f"{op}_logits"]),
    ]
    return nodes, initializers


def legacy_model(layers: list[tuple[str, str]], seed: int = 0) -> onnx.ModelProto:
    """One exporter-style recurrent classifier per (op, direction) over one batch-first input."""
    rng = np.random.default_rng(seed)
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0, 2])]
    initializers = [
        numpy_helper.from_array(np.array([-1], np.int64), "last"),
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
        numpy_helper.from_array(np.array([BATCH, STEPS, -1], np.int64), "flat_shape"),
    ]
    outputs = []
    for op, direction in layers:
        branch, weights = _recurrent_branch(op, direction, rng)
        nodes += branch
        initializers += weights
        outputs.append(helper.make_tensor_value_info(f"{op}_logits", TensorProto.FLOAT, [BATCH, CLASSES]))
    graph = helper.make_graph(
        nodes,
        "kws",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, STEPS, FEATURES])],
        outputs,
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    return model


def check_with_onnxruntime(model: onnx.ModelProto, pipeline: str) -> None:
    ort = pytest.importorskip("onnxruntime")
    feeds = {"x": np.random.default_rng(1).standard_normal((BATCH, STEPS, FEATURES)).astype(np.float32)}
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = compile_and_run(model, feeds, pipeline=pipeline)
    for index, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.shape == w.shape, f"output {index}: shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=f"output {index}")


@pytest.mark.parametrize("pipeline", [DEFAULT_PIPELINE, MCU_PIPELINE], ids=["host", "mcu"])
def test_exporter_gru_and_lstm_with_unused_states(pipeline):
    check_with_onnxruntime(legacy_model([("GRU", "forward"), ("LSTM", "forward")]), pipeline)


def test_bidirectional_with_unused_states():
    check_with_onnxruntime(legacy_model([("GRU", "bidirectional"), ("LSTM", "bidirectional")], seed=2), MCU_PIPELINE)
