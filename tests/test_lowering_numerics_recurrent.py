"""End-to-end numerics of RNN, GRU and LSTM. Each model holds several recurrent nodes over one
input, so a handful of builds covers directions, layouts, optional inputs and every output.

The ONNX reference evaluator ignores activations, clip, sequence_lens and input_forget; the
cases using them are checked against onnxruntime, which implements them.
"""

from __future__ import annotations

import numpy as np
import pytest
from e2e import check_model, compile_and_run
from onnx import TensorProto, helper
from ort_reference import check_with_onnxruntime

from zant.errors import ZantError

T, BATCH, INPUT, HIDDEN = 3, 2, 4, 3
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


class ModelBuilder:
    """Recurrent nodes over one input X; each node's weights and optional inputs are graph inputs
    with seeded values."""

    def __init__(self, layout: int = 0, seed: int = 0):
        self.layout = layout
        self.rng = np.random.default_rng(seed)
        x_shape = [BATCH, T, INPUT] if layout else [T, BATCH, INPUT]
        self.inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)]
        self.feeds = {"X": self.rng.standard_normal(x_shape).astype(np.float32)}
        self.nodes, self.outputs = [], []

    def _input(self, name, shape, dtype=np.float32, values=None):
        proto = TensorProto.INT32 if dtype == np.int32 else TensorProto.FLOAT
        self.inputs.append(helper.make_tensor_value_info(name, proto, shape))
        self.feeds[name] = values if values is not None else self.rng.standard_normal(shape).astype(dtype)
        return name

    def add(self, op, direction="forward", optional=(), outputs=("Y", "Y_h"), sequence_lens=None, **attrs):
        """A node named n<i>; `optional` names the optional inputs to feed (B, initial_h, …)."""
        tag = f"n{len(self.nodes)}"
        dirs, gates = 2 if direction == "bidirectional" else 1, GATES[op]
        state = [BATCH, dirs, HIDDEN] if self.layout else [dirs, BATCH, HIDDEN]
        shapes = {
            "B": [dirs, 2 * gates * HIDDEN],
            "initial_h": state,
            "initial_c": state,
            "P": [dirs, 3 * HIDDEN],
        }
        names = [
            "X",
            self._input(f"{tag}_W", [dirs, gates * HIDDEN, INPUT]),
            self._input(f"{tag}_R", [dirs, gates * HIDDEN, HIDDEN]),
        ]
        for slot in ("B", "sequence_lens", "initial_h", "initial_c", "P"):
            if slot == "sequence_lens" and sequence_lens is not None:
                names.append(self._input(f"{tag}_lens", [BATCH], np.int32, np.array(sequence_lens, np.int32)))
            elif slot in optional:
                names.append(self._input(f"{tag}_{slot}", shapes[slot]))
            else:
                names.append("")
        while names[-1] == "":
            names.pop()
        y_shape = [BATCH, T, dirs, HIDDEN] if self.layout else [T, dirs, BATCH, HIDDEN]
        results = []
        for output in ("Y", "Y_h", "Y_c"):
            if output in outputs:
                results.append(f"{tag}_{output}")
                shape = y_shape if output == "Y" else state
                self.outputs.append(helper.make_tensor_value_info(results[-1], TensorProto.FLOAT, shape))
            elif output != "Y_c" or op == "LSTM":
                results.append("")
        while results[-1] == "":
            results.pop()
        if self.layout:
            attrs["layout"] = 1
        self.nodes.append(
            helper.make_node(op, names, results, hidden_size=HIDDEN, direction=direction, **attrs)
        )
        return self

    def model(self):
        graph = helper.make_graph(self.nodes, "recurrent", self.inputs, self.outputs)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


def test_directions_and_optional_inputs():
    m = ModelBuilder()
    m.add("RNN", "bidirectional", ("B", "initial_h"))
    m.add("RNN", "reverse", outputs=("Y",))
    m.add("GRU", "forward", ("B",))
    m.add("GRU", "reverse", ("B", "initial_h"), linear_before_reset=1)
    m.add("GRU", "bidirectional", ("initial_h",), outputs=("Y",))
    m.add("LSTM", "bidirectional", ("B", "initial_h", "initial_c", "P"), outputs=("Y", "Y_h", "Y_c"))
    # Last: the reference evaluator binds an absent ("") output to later nodes' absent inputs.
    m.add("LSTM", "reverse", ("B",), outputs=("Y_c",))
    check_model(m.model(), m.feeds)


def test_batch_major_layout():
    m = ModelBuilder(layout=1)
    m.add("RNN", "bidirectional", ("B", "initial_h"))
    m.add("GRU", "reverse", ("initial_h",))
    m.add("LSTM", "bidirectional", ("B", "initial_h", "initial_c", "P"), outputs=("Y", "Y_h", "Y_c"))
    check_model(m.model(), m.feeds)


def test_activations_clip_sequence_lens_input_forget():
    m = ModelBuilder(seed=1)
    m.add(
        "RNN",
        "bidirectional",
        ("B",),
        activations=["LeakyRelu", "Affine"],
        activation_alpha=[0.3, 0.5],
        activation_beta=[0.25],
    )
    m.add(
        "GRU",
        "bidirectional",
        ("B", "initial_h"),
        sequence_lens=[2, 3],
        activations=["HardSigmoid", "Softsign", "Sigmoid", "ScaledTanh"],
        activation_alpha=[0.3, 0.8],
        activation_beta=[0.4, 1.5],
    )
    m.add("GRU", "reverse", ("B",), sequence_lens=[3, 1], clip=0.5, linear_before_reset=1)
    m.add(
        "LSTM",
        "bidirectional",
        ("B", "initial_h", "initial_c", "P"),
        outputs=("Y", "Y_h", "Y_c"),
        sequence_lens=[1, 3],
        input_forget=1,
        clip=0.7,
    )
    m.add(
        "LSTM",
        "forward",
        ("B",),
        activations=["Sigmoid", "Elu", "Softplus"],
        activation_alpha=[0.5],
    )
    m.add("RNN", "forward", activations=["Relu"], outputs=("Y",))
    m.add("RNN", "reverse", activations=["ThresholdedRelu"], activation_alpha=[0.2], outputs=("Y",))
    check_with_onnxruntime(m.model(), m.feeds)


def test_unknown_activation_is_a_clear_error(tmp_path):
    m = ModelBuilder()
    m.add("RNN", activations=["Gelu"], outputs=("Y",))
    with pytest.raises(ZantError, match="activation function 'Gelu' is not supported"):
        compile_and_run(m.model(), m.feeds)
