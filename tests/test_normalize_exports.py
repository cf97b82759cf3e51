"""`normalize-exports` end to end: the head of a torchvision CNN as the legacy exporter writes it
(Conv with BatchNorm folded, GlobalAveragePool, Flatten, Gemm) and as the dynamo exporter writes
it (Conv, BatchNormalization, ReduceMean over the spatial axes, Reshape to [1, -1], Gemm) leave
the graph passes as the same ops, so both compile to the same kernels, and each still matches
the ONNX reference."""

from __future__ import annotations

import numpy as np
import pytest
from e2e import check_compiled
from onnx import TensorProto, helper, numpy_helper
from test_graph_passes import graph_ops

from zant.pipelines import GRAPH_STAGES

RNG = np.random.default_rng(34)


def _head(exporter: str) -> helper.ModelProto:
    """[1, 3, 16, 16] -> Conv 3x3 (8 channels) -> ReLU6 -> global average -> flatten -> Gemm (5)."""
    const = numpy_helper.from_array
    w = RNG.standard_normal((8, 3, 3, 3)).astype(np.float32)
    initializers = [const(w, "w"), const(np.float32(0.0), "zero"), const(np.float32(6.0), "six"),
                    const(RNG.standard_normal((5, 8)).astype(np.float32), "fc_w"),
                    const(RNG.standard_normal(5).astype(np.float32), "fc_b")]
    if exporter == "legacy":
        initializers.append(const(RNG.standard_normal(8).astype(np.float32) * 0.1, "b"))
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
                 helper.make_node("Clip", ["c", "zero", "six"], ["r"]),
                 helper.make_node("GlobalAveragePool", ["r"], ["p"]),
                 helper.make_node("Flatten", ["p"], ["f"], axis=1)]
        opset = 13
    else:
        for name, array in (("scale", RNG.uniform(0.5, 1.5, 8)), ("bias", RNG.standard_normal(8) * 0.1),
                            ("mean", RNG.standard_normal(8) * 0.1), ("var", RNG.uniform(0.5, 1.5, 8))):
            initializers.append(const(array.astype(np.float32), name))
        initializers += [const(np.array([-1, -2], np.int64), "axes"), const(np.array([1, -1], np.int64), "shape")]
        nodes = [helper.make_node("Conv", ["x", "w"], ["c0"], pads=[1, 1, 1, 1]),
                 helper.make_node("BatchNormalization", ["c0", "scale", "bias", "mean", "var"], ["c"], epsilon=1e-3),
                 helper.make_node("Clip", ["c", "zero", "six"], ["r"]),
                 helper.make_node("ReduceMean", ["r", "axes"], ["p"], keepdims=1),
                 helper.make_node("Reshape", ["p", "shape"], ["f"])]
        opset = 18
    nodes.append(helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["logits"], transB=1))
    graph = helper.make_graph(nodes, exporter, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 5])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _computing_ops(model: helper.ModelProto) -> list[str]:
    graph = ",".join(GRAPH_STAGES)
    return [name for name in graph_ops(model, graph) if name.startswith("onnx.") and name != "onnx.Constant"]


def test_both_exports_leave_the_graph_passes_as_the_same_ops():
    legacy, dynamo = _computing_ops(_head("legacy")), _computing_ops(_head("dynamo"))
    assert legacy == ["onnx.Conv", "onnx.Clip", "onnx.GlobalAveragePool", "onnx.Flatten", "onnx.Gemm"]
    assert dynamo == legacy


@pytest.mark.parametrize("exporter", ["legacy", "dynamo"])
def test_both_exports_match_the_reference(exporter):
    check_compiled(_head(exporter))


@pytest.mark.slow
def test_the_held_apart_mobilenet_v2_exports_leave_the_graph_passes_as_the_same_ops():
    """bench/models.py's MobileNetV2 at 224x224 as each exporter writes it (14 MB each)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from models import HELD_APART

    legacy = _computing_ops(HELD_APART["mobilenet_v2_legacy"]())
    assert legacy.count("onnx.Conv") == 52 and legacy[-3:] == ["onnx.GlobalAveragePool", "onnx.Flatten", "onnx.Gemm"]
    assert _computing_ops(HELD_APART["mobilenet_v2_dynamo"]()) == legacy
