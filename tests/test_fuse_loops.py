"""`fuse-loops` end to end: fused models match the ONNX reference evaluator in ReleaseSafe, the
scratch arena shrinks below the unfused lower bound, and random graphs stay within tolerance."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import zant.driver
from e2e import check_compiled
from zant.driver import CompileOptions, compile_model
from zant.tools import random_graphs as rg
from zant.pipelines import PRINT_PIPELINE

FUSED = f"fold-constants,onnx-to-uop,fuse-loops,plan-arenas,verify-arena-plan,{PRINT_PIPELINE}"
UNFUSED = f"fold-constants,onnx-to-uop,plan-arenas,verify-arena-plan,{PRINT_PIPELINE}"


def _model(nodes, inputs, outputs, initializers=()):
    """`inputs`/`outputs`: name → (element type, shape)."""
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "fused",
        [value(n, t, s) for n, (t, s) in inputs.items()],
        [value(n, t, s) for n, (t, s) in outputs.items()],
        [numpy_helper.from_array(a, n) for n, a in dict(initializers).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _compile(model: onnx.ModelProto, folder: Path, pipeline: str, build: bool = True):
    path = folder / "model.onnx"
    onnx.save(model, path)
    options = CompileOptions(name="m", optimize="ReleaseSafe", pipeline=pipeline, build=build)
    return compile_model(path, folder / pipeline.replace(",", "_"), options)


def check_fused(model: onnx.ModelProto, rtol: float = 1e-4, atol: float = 1e-5):
    """Compile with fusion, run, compare with the reference; the fused plan is returned."""
    return check_compiled(model, rtol=rtol, atol=atol, pipeline=FUSED)[0].plan


F32 = TensorProto.FLOAT
RNG = np.random.default_rng(5)


def conv_block() -> onnx.ModelProto:
    """Conv → Relu → residual Add → Mul by itself, Exp → ReduceSum; the Relu is also a graph
    output (its store must stay); a Transpose read and a broadcast read that must not fuse."""
    w = RNG.standard_normal((3, 3, 3, 3)).astype(np.float32) * 0.3
    b = RNG.standard_normal(3).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Add", ["r", "x"], ["s"]),
        helper.make_node("Mul", ["s", "s"], ["m"]),
        helper.make_node("Exp", ["m"], ["e"]),
        helper.make_node("ReduceSum", ["e", "axes"], ["y"], keepdims=0),
        helper.make_node("Neg", ["x"], ["n"]),
        helper.make_node("Transpose", ["n"], ["t"], perm=[0, 1, 3, 2]),
        helper.make_node("Sub", ["t", "r"], ["u"]),
        helper.make_node("ReduceMax", ["u", "axes"], ["k"], keepdims=1),
        helper.make_node("Add", ["k", "u"], ["z"]),
    ]
    return _model(
        nodes,
        {"x": (F32, [1, 3, 5, 5])},
        {"y": (F32, [1, 3]), "r": (F32, [1, 3, 5, 5]), "z": (F32, [1, 3, 5, 5])},
        {"w": w, "b": b, "axes": np.array([2, 3], np.int64)},
    )


def dense_block() -> onnx.ModelProto:
    """Gemm → Relu, MatMul → bias Add → Sigmoid, and a Softmax-free residual of both."""
    wg = RNG.standard_normal((6, 4)).astype(np.float32)
    bg = RNG.standard_normal(4).astype(np.float32)
    wm = RNG.standard_normal((4, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Gemm", ["x", "wg", "bg"], ["g"]),
        helper.make_node("Relu", ["g"], ["r"]),
        helper.make_node("MatMul", ["r", "wm"], ["mm"]),
        helper.make_node("Add", ["mm", "bg"], ["a"]),
        helper.make_node("Sigmoid", ["a"], ["s"]),
        helper.make_node("Add", ["s", "r"], ["y"]),
    ]
    return _model(nodes, {"x": (F32, [3, 6])}, {"y": (F32, [3, 4])}, {"wg": wg, "bg": bg, "wm": wm})


def chain(dtype: int) -> onnx.ModelProto:
    """An element-wise chain with a broadcast operand, in one element type."""
    nodes = [
        helper.make_node("Add", ["a", "b"], ["s"]),
        helper.make_node("Mul", ["s", "a"], ["m"]),
        helper.make_node("Sub", ["m", "c"], ["d"]),
        helper.make_node("Abs", ["d"], ["y"]),
    ]
    shapes = {"a": [2, 3, 4], "b": [2, 3, 4], "c": [4]}
    return _model(nodes, {n: (dtype, s) for n, s in shapes.items()}, {"y": (dtype, [2, 3, 4])})


def test_conv_block_matches_and_fuses():
    plan = check_fused(conv_block())
    names = {t["name"] for t in plan["tensors"] if t["role"] == "scratch"}
    # c, s, m fold into the Conv nest, which also computes Exp and stores e for the ReduceSum over
    # its spatial dimensions; the transposed read of n, the broadcast read of k and the two
    # readers of u keep those
    assert names == {"e", "n", "k", "u"}, names


def test_dense_block_matches_and_fuses():
    plan = check_fused(dense_block())
    names = {t["name"] for t in plan["tensors"] if t["role"] == "scratch"}
    assert names.isdisjoint({"g", "mm", "a", "s"}), names


@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT32])
def test_chain_in_each_dtype(dtype):
    plan = check_fused(chain(dtype), rtol=1e-3, atol=1e-3)
    assert not [t for t in plan["tensors"] if t["role"] == "scratch"]


def test_consumer_waits_for_the_sum_it_divides_by():
    """LpNormalization's last nest divides by a sum computed after its input's producer: it must
    not move into that producer (found by the random graphs)."""
    nodes = [
        helper.make_node("HardSigmoid", ["x"], ["h"]),
        helper.make_node("Add", ["h", "x"], ["a"]),
        helper.make_node("LpNormalization", ["a"], ["y"], axis=0, p=2),
    ]
    check_fused(_model(nodes, {"x": (F32, [5])}, {"y": (F32, [5])}))


def test_scratch_shrinks_below_the_unfused_lower_bound():
    model = dense_block()
    with tempfile.TemporaryDirectory(prefix="zant-fuse-") as folder:
        fused = _compile(model, Path(folder), FUSED, build=False).plan
        unfused = _compile(model, Path(folder), UNFUSED, build=False).plan

    def scratch(plan):
        return next(a["size"] for a in plan["arenas"] if a["role"] == "scratch")

    assert scratch(fused) < unfused["lower_bound_bytes"] <= scratch(unfused)


def test_random_graphs_with_fusion(tmp_path, monkeypatch):
    """Random graphs compiled by the conformance runner with fusion in its pipeline."""
    monkeypatch.setattr(zant.driver, "DEFAULT_PIPELINE", FUSED)
    graphs = [g for g in (rg.prepared(20261123, i) for i in range(40)) if not isinstance(g, str)]
    records = rg.run_graphs(graphs, tmp_path)
    failures = [f"graph {i}: {r['status']}: {r['reason']}" for i, r in records.items() if r["status"] != "pass"]
    assert not failures, "\n".join(failures)
