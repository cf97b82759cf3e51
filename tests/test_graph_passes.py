"""Graph-level (onnx dialect) passes end to end: `fold-batchnorm` leaves no BatchNormalization
(nor the per-channel Add/Mul it folds) in the graph, and the compiled model, built in
ReleaseSafe, still matches onnxruntime (the ONNX reference evaluator cannot run a grouped
ConvTranspose, and runs opset-13 BatchNormalization in training mode).

The larger bench models take minutes to build on a loaded machine: marked slow (`-m slow`).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from e2e import random_inputs
from onnx import TensorProto, helper, numpy_helper

from zant.driver import CompileOptions, compile_model, run_pipeline
from zant.frontend.onnx_importer import import_model_bytes
from zant.runtime import load_compiled
from zant.pipelines import PRINT_PIPELINE

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from models import MODELS  # noqa: E402

GRAPH_PASSES = "fold-constants,fold-batchnorm"
PIPELINE = f"{GRAPH_PASSES},onnx-to-uop,plan-arenas,verify-arena-plan,{PRINT_PIPELINE}"
WITH_DCE_CSE = f"{GRAPH_PASSES},dce,onnx-to-uop,cse,plan-arenas,verify-arena-plan,{PRINT_PIPELINE}"
"""xDSL's own dce on the onnx graph and cse on the uop IR, around the lowering."""


def graph_ops(model: onnx.ModelProto, pipeline: str = GRAPH_PASSES) -> list[str]:
    """The op names of the model's graph after the onnx-level passes."""
    module = import_model_bytes(model.SerializeToString(), ".")
    run_pipeline(module, pipeline)
    return [op.name for op in module.walk()]


def check_pipeline(model: onnx.ModelProto, rtol: float, atol: float, pipeline: str = PIPELINE) -> dict:
    """Compile with `pipeline`, build in ReleaseSafe, run and compare with onnxruntime; the plan."""
    ort = pytest.importorskip("onnxruntime")
    feeds = random_inputs(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, feeds)
    with tempfile.TemporaryDirectory(prefix="zant-graph-") as folder:
        path = Path(folder) / "model.onnx"
        onnx.save(model, path)
        options = CompileOptions(name="m", optimize="ReleaseSafe", pipeline=pipeline)
        result = compile_model(path, Path(folder) / "out", options)
        ours = load_compiled(result)(*(feeds[s.name] for s in result.inputs))
    assert len(ours) == len(want)
    for index, (got, expected) in enumerate(zip(ours, want)):
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=f"output {index}")
    return result.plan


# --- every fold, one model --------------------------------------------------------------------


def _folds_model() -> onnx.ModelProto:
    """One output per fold: Conv(group, bias)→BN, ConvTranspose(group, stride)→BN,
    Gemm(transB, alpha, beta, broadcast C)→BN, Conv→Add[C,1,1]→Mul[1,C,1,1],
    MatMul→Add[M]→BN, Gemm(no C)→Mul[M]→Add[1,M]; and a dead chain (Sigmoid→Exp, no output)."""
    rng = np.random.default_rng(5)
    initializers: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def const(name: str, *shape: int, low: float = -1.0, high: float = 1.0) -> str:
        initializers.append(numpy_helper.from_array(rng.uniform(low, high, shape).astype(np.float32), name))
        return name

    def bn(x: str, channels: int, out: str) -> None:
        parameters = [
            const(f"{out}_gamma", channels, low=0.5, high=1.5),
            const(f"{out}_beta", channels),
            const(f"{out}_mean", channels),
            const(f"{out}_var", channels, low=0.5, high=1.5),
        ]
        nodes.append(helper.make_node("BatchNormalization", [x, *parameters], [out], epsilon=1e-3))

    def node(op: str, inputs: list[str], out: str, **attributes) -> str:
        nodes.append(helper.make_node(op, inputs, [out], **attributes))
        return out

    conv = node("Conv", ["x", const("w1", 4, 2, 3, 3), const("b1", 4)], "conv1", group=2, pads=[1, 1, 1, 1])
    bn(conv, 4, "y1")
    deconv = node("ConvTranspose", ["x", const("w2", 4, 3, 2, 2)], "deconv", group=2, strides=[2, 2])
    bn(deconv, 6, "y2")
    gemm = node(
        "Gemm", ["v", const("w3", 5, 6), const("c3", 1, 5)], "gemm", transB=1, alpha=0.5, beta=2.0
    )
    bn(gemm, 5, "y3")
    conv = node("Conv", ["x", const("w4", 3, 4, 1, 1)], "conv4")
    added = node("Add", [conv, const("k4", 3, 1, 1)], "add4")
    node("Mul", [const("m4", 1, 3, 1, 1), added], "y4")
    matmul = node("MatMul", ["v", const("w5", 6, 3)], "matmul")
    bn(node("Add", [matmul, const("c5", 3)], "add5"), 3, "y5")
    gemm = node("Gemm", ["v", const("w6", 6, 4)], "gemm6")
    node("Add", [node("Mul", [gemm, const("m6", 4)], "mul6"), const("c6", 1, 4)], "y6")
    node("Exp", [node("Sigmoid", ["x"], "dead")], "dead_too")

    shapes = {"y1": [1, 4, 5, 5], "y2": [1, 6, 10, 10], "y3": [2, 5], "y4": [1, 3, 5, 5], "y5": [2, 3], "y6": [2, 4]}
    graph = helper.make_graph(
        nodes,
        "folds",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 5]),
            helper.make_tensor_value_info("v", TensorProto.FLOAT, [2, 6]),
        ],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in shapes.items()],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


FOLDED = ["onnx.Conv", "onnx.ConvTranspose", "onnx.Gemm", "onnx.Conv", "onnx.Gemm", "onnx.Gemm"]


@pytest.mark.parametrize(
    ("pipeline", "left"),
    [(GRAPH_PASSES, FOLDED + ["onnx.Sigmoid", "onnx.Exp"]), (f"{GRAPH_PASSES},dce", FOLDED)],
)
def test_every_fold_leaves_only_conv_and_gemm(pipeline, left):
    ops = graph_ops(_folds_model(), pipeline)
    assert sorted(n for n in ops if n.startswith("onnx.") and n != "onnx.Constant") == sorted(left)


def _scratch(plan: dict) -> tuple[int, set[str]]:
    """The scratch arena's size and the names of the tensors in it."""
    size = next(a["size"] for a in plan["arenas"] if a["role"] == "scratch")
    return size, {t["name"] for t in plan["tensors"] if t["role"] == "scratch"}


def test_every_fold_matches_onnxruntime_with_and_without_dce_cse():
    plain_size, plain = _scratch(check_pipeline(_folds_model(), rtol=1e-4, atol=1e-5))
    pruned_size, pruned = _scratch(check_pipeline(_folds_model(), rtol=1e-4, atol=1e-5, pipeline=WITH_DCE_CSE))
    # The lowering computes the dead Sigmoid into scratch; dce before it frees that buffer.
    assert "dead" in plain and "dead" not in pruned
    assert pruned_size < plain_size


# --- the bench models ---------------------------------------------------------------------------

BENCH = ["kws", "resnet8", "autoencoder", "mobilenet"]
SLOW = pytest.mark.slow


@pytest.mark.parametrize("name", BENCH)
def test_bench_model_has_no_batchnorm_left(name):
    model = MODELS[name]()
    assert any(n.op_type == "BatchNormalization" for n in model.graph.node)
    assert "onnx.BatchNormalization" not in graph_ops(model)


@pytest.mark.parametrize(
    "name", ["kws", "autoencoder", pytest.param("resnet8", marks=SLOW), pytest.param("mobilenet", marks=SLOW)]
)
def test_bench_model_matches_onnxruntime(name):
    check_pipeline(MODELS[name](), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", ["kws", "autoencoder"])
def test_folding_shrinks_the_constant_arena(name):
    """The BatchNormalization statistics leave flash; the folded weights take the old ones' place."""

    def constant_bytes(pipeline: str) -> int:
        with tempfile.TemporaryDirectory(prefix="zant-graph-") as folder:
            path = Path(folder) / "model.onnx"
            onnx.save(MODELS[name](), path)
            options = CompileOptions(name="m", build=False, pipeline=pipeline)
            plan = compile_model(path, Path(folder) / "out", options).plan
        return next(a["size"] for a in plan["arenas"] if a["role"] == "constant")

    assert constant_bytes(PIPELINE) < constant_bytes(PIPELINE.replace("fold-batchnorm,", ""))
