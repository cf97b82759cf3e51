"""The MLPerf-Tiny-shaped benchmark models (bench/models.py) compile and match the reference.

The models are built at opset 13, where `onnx.reference.ReferenceEvaluator` runs
BatchNormalization-9 in training mode whenever `momentum` is set (its schema default fills it
in), i.e. it normalizes with the batch statistics instead of the given mean/var. So the
ReferenceEvaluator comparisons run on the models converted to opset 14 (BatchNormalization-14,
`training_mode=0`: inference, the same arithmetic); one test checks the opset-13 model itself
against onnxruntime, which implements opset-13 BatchNormalization as inference.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from e2e import check_model, compile_and_run, random_inputs
from onnx import version_converter

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from models import ARCHITECTURES, HELD_APART, MODELS  # noqa: E402

# Deep models accumulate float rounding differently from NumPy; shallow ones get the default.
TOLERANCES = {
    "kws": (1e-3, 1e-4),
    "resnet8": (1e-3, 1e-4),
    "autoencoder": (1e-3, 1e-4),
    "mobilenet": (1e-3, 1e-4),
    "mlp": (1e-4, 1e-5),
    "branches": (1e-3, 1e-4),
}


def test_registry_has_the_six_models():
    assert sorted(MODELS) == sorted(TOLERANCES)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_matches_reference(name):
    model = MODELS[name]()
    assert model.opset_import[0].version == 13
    rtol, atol = TOLERANCES[name]
    check_model(version_converter.convert_version(model, 14), rtol=rtol, atol=atol)


def test_opset13_kws_matches_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    model = MODELS["kws"]()
    feeds = random_inputs(model)
    (got,) = compile_and_run(model, feeds)
    (want,) = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_models_are_deterministic():
    for build in MODELS.values():
        assert build().SerializeToString() == build().SerializeToString()


def test_save_all(tmp_path):
    from models import save_all

    paths = save_all(tmp_path)
    assert set(paths) == set(MODELS)
    for path in paths.values():
        onnx.checker.check_model(onnx.load(path))


def test_memory_bench_json(capsys):
    import json

    import memory

    assert memory.main(["--models", "mlp,branches", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [row["model"] for row in report["models"]] == ["mlp", "branches"]
    for row in report["models"]:
        assert 0 < row["lower_bound_bytes"] <= row["scratch_bytes"]
        assert row["lower_bound_bytes"] <= row["naive_bytes"]


# The real-network-shaped models (issue 18) against onnxruntime, which runs their opset-13
# operators (LSTM, GRU, Erf, decomposed LayerNorm) as PyTorch's exports expect; resnet18's
# 11.7 M parameters make it a bench-only model (bench/latency.py checks its outputs too).
ARCHITECTURE_TOLERANCES = {
    "effnet_se": (1e-3, 1e-5),
    "bert_tiny": (1e-3, 1e-4),
    "lstm_kws": (1e-3, 1e-5),
    "gru_kws": (1e-3, 1e-5),
}


@pytest.mark.parametrize("name", sorted(ARCHITECTURE_TOLERANCES))
def test_architecture_matches_onnxruntime(name):
    ort = pytest.importorskip("onnxruntime")
    model = ARCHITECTURES[name]()
    feeds = random_inputs(model)
    (got,) = compile_and_run(model, feeds)
    (want,) = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    assert np.abs(want).max() > 1e-2  # activations in the normal range, not vanishing
    rtol, atol = ARCHITECTURE_TOLERANCES[name]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def test_architectures_are_deterministic_and_valid():
    assert sorted(ARCHITECTURES) == sorted([*ARCHITECTURE_TOLERANCES, "resnet18"])
    for name in ("bert_tiny", "lstm_kws"):
        assert ARCHITECTURES[name]().SerializeToString() == ARCHITECTURES[name]().SerializeToString()
    onnx.checker.check_model(ARCHITECTURES["resnet18"]())


def test_held_apart_models_are_valid_and_deterministic():
    """The held-apart set (issue 34): valid models at their exporters' opsets, the same bytes on
    every build; the small one compiled matches onnxruntime (the 224x224 ones are measured by
    bench/latency.py --held-apart, too large for a test)."""
    assert sorted(HELD_APART) == sorted(["resnet18_224", "squeezenet1_1", "mobilenet_v2_legacy", "mobilenet_v2_dynamo", "resnet8_tf"])
    opsets = {}
    for name, build in HELD_APART.items():
        model = build()
        onnx.checker.check_model(model)
        opsets[name] = model.opset_import[0].version
    assert opsets["mobilenet_v2_dynamo"] == 18 and opsets["mobilenet_v2_legacy"] == 13
    assert HELD_APART["squeezenet1_1"]().SerializeToString() == HELD_APART["squeezenet1_1"]().SerializeToString()
    ops = {n.op_type for n in HELD_APART["mobilenet_v2_dynamo"]().graph.node}
    assert {"BatchNormalization", "ReduceMean", "Reshape", "Clip"} <= ops and "Flatten" not in ops


def test_held_apart_resnet8_matches_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    model = HELD_APART["resnet8_tf"]()
    feeds = random_inputs(model)
    (got,) = compile_and_run(model, feeds)
    (want,) = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)
