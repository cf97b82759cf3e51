"""`zant run` on a QOperator model (issue 30 item 6): onnxruntime is the reference where it is
installed; without it, onnx's evaluator cannot run com.microsoft ops, so Zant's onnx-dialect
interpreter (NumPy definitions of those ops) is. The model is onnxruntime's `quantize_static`
QOperator uint8 output of a tiny CNN (tests/data/make_qoperator_uint8.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

MODEL = Path(__file__).resolve().parent / "data" / "qoperator_uint8.onnx"

BLOCK_ONNXRUNTIME = "import sys; sys.modules['onnxruntime'] = None; "


def zant_run(*args: str, without_onnxruntime: bool = False) -> subprocess.CompletedProcess:
    prelude = BLOCK_ONNXRUNTIME if without_onnxruntime else ""
    code = prelude + "from zant.tools.cli import main; sys.exit(main(sys.argv[1:]))"
    if not prelude:
        code = "import sys; " + code
    return subprocess.run([sys.executable, "-c", code, "run", *args], capture_output=True, text=True, timeout=600)


def test_the_model_has_contrib_ops_onnx_evaluator_lacks():
    from onnx.reference import ReferenceEvaluator

    model = onnx.load(MODEL)
    assert {n.op_type for n in model.graph.node if n.domain == "com.microsoft"} == {
        "QLinearAdd", "QLinearGlobalAveragePool", "QGemm"
    }
    with pytest.raises(Exception, match="QLinearAdd|com.microsoft"):
        ReferenceEvaluator(model).run(None, {"x": np.zeros((1, 3, 8, 8), np.float32)})


def test_zant_run_qoperator_against_onnxruntime():
    pytest.importorskip("onnxruntime")
    result = zant_run(str(MODEL), "--requant-rounding", "onnxruntime")
    assert result.returncode == 0, result.stderr
    assert "zant: reference (onnxruntime" in result.stderr
    assert "max abs error 0\n" in result.stdout, result.stdout


def test_zant_run_qoperator_without_onnxruntime():
    result = zant_run(str(MODEL), without_onnxruntime=True)
    assert result.returncode == 0, result.stderr
    assert "zant: reference (Zant's onnx-dialect interpreter" in result.stderr
    assert "max abs error 0\n" in result.stdout, result.stdout


def testinterpreter_reference_agrees_with_onnxruntime():
    """The fallback reference's outputs on seeded inputs are onnxruntime's within one output step."""
    ort = pytest.importorskip("onnxruntime")
    from zant.runtime import interpreter_reference

    reference = interpreter_reference(MODEL, None)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(MODEL), options, providers=["CPUExecutionProvider"])
    model = onnx.load(MODEL)
    (scale,) = [t for t in model.graph.initializer if t.name == model.graph.node[-1].input[1]]
    step = float(onnx.numpy_helper.to_array(scale))
    for seed in range(3):
        feeds = {"x": np.random.default_rng(seed).standard_normal((1, 3, 8, 8)).astype(np.float32)}
        (got,), (want,) = reference.run(feeds), session.run(None, feeds)
        assert got.shape == want.shape
        assert np.max(np.abs(got - want)) <= step * 1.001


def test_zant_run_falls_back_where_onnxruntime_refuses_the_shape(tmp_path):
    """onnxruntime refuses a MaxPool over zero channels, which ONNX allows: the run falls back to
    onnx's evaluator and says so, instead of an internal error."""
    pytest.importorskip("onnxruntime", reason="the fallback is from onnxruntime's refusal")
    from onnx import TensorProto, helper

    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2])
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 0, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 0, 3, 3])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "m.onnx")
    result = zant_run(str(tmp_path / "m.onnx"))
    assert result.returncode == 0, result.stderr
    assert "internal error" not in result.stderr
    assert "onnx.reference.ReferenceEvaluator; onnxruntime" in result.stderr and "refused the inputs" in result.stderr
    assert "max abs error 0" in result.stdout
