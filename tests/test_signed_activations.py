"""uint8 QOperator models compute on int8 codes (`signed-activations`, issue 27): onnxruntime's
default QOperator quantization (uint8 activations) of the KWS bench model, of a small
MobileNetV2 (QLinearConv, QLinearAdd, QLinearAveragePool, QGemm, QLinearSoftmax) and of a
graph of movement ops and a lookup table keep no uint8 value past the graph stages, take the int8 kernels of the DSP cores, and give the same
outputs bit for bit as without the pass."""

from __future__ import annotations

import sys
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import pytest
from xdsl.dialects.builtin import IntegerType, Signedness, TensorType

pytest.importorskip("onnxruntime")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import GraphBuilder, calibration_inputs, kws_dscnn, quantize  # noqa: E402
from test_quantized_models import mobilenet_v2_style  # noqa: E402

from xdsl.passes import PassPipeline  # noqa: E402
from xdsl.transforms import get_all_passes  # noqa: E402

from zant.driver import CompileOptions, compile_model, compile_to_module, make_context, run_pipeline  # noqa: E402
from zant.interpreter import check_each_pass  # noqa: E402
from zant.plugins import all_passes  # noqa: E402
from zant.frontend.onnx_importer import import_model  # noqa: E402
from zant.pipelines import MCU_PIPELINE  # noqa: E402
from zant.runtime import load_compiled  # noqa: E402

UINT8 = IntegerType(8, Signedness.UNSIGNED)
WITHOUT = ",".join(s for s in MCU_PIPELINE.split(",") if s != "signed-activations")


def sigmoid_pool_concat() -> onnx.ModelProto:
    """Conv, Sigmoid (a LookupTable), MaxPool, a 1x1 Conv, Concat, two Transposes and a global
    pool: the movement ops and the table between the kernels."""
    g = GraphBuilder("sigmoid_pool_concat", seed=3)
    x = g.node("MaxPool", [g.node("Sigmoid", [g.conv("input", 3, 8, 3)], "sigmoid")], "pool", kernel_shape=[2, 2], strides=[2, 2])
    x = g.node("Concat", [x, g.relu6(g.conv(x, 8, 8, 1))], "concat", axis=1)
    x = g.node("Transpose", [g.node("Transpose", [x], "nhwc", perm=[0, 2, 3, 1])], "nchw", perm=[0, 3, 1, 2])
    return g.build([("input", [1, 3, 8, 8])], [(g.node("GlobalAveragePool", [x], "gap"), "y", [1, 16, 1, 1])])


MODELS = {"kws": kws_dscnn, "mobilenet_v2_style": mobilenet_v2_style, "sigmoid_pool_concat": sigmoid_pool_concat}


@cache
def uint8_model(name: str) -> onnx.ModelProto:
    return quantize(MODELS[name](), fmt="qoperator", activations="uint8")


def _save(name: str, folder: Path) -> Path:
    path = folder / f"{name}.onnx"
    onnx.save(uint8_model(name), path)
    return path


def test_the_m4_pipeline_runs_it_after_the_folds():
    stages = MCU_PIPELINE.split(",")
    assert stages.index("fold-qdq") < stages.index("signed-activations") < stages.index("assign-layouts")


@pytest.mark.parametrize("name", list(MODELS))
def test_no_uint8_value_is_left(tmp_path, name):
    module = import_model(str(_save(name, tmp_path)))
    stages = MCU_PIPELINE.split(",")
    graph = stages[: stages.index("signed-activations") + 1]
    run_pipeline(module, ",".join(graph[:-1]))
    assert any(isinstance(r.type, TensorType) and r.type.get_element_type() == UINT8 for op in module.walk() for r in op.results)
    run_pipeline(module, graph[-1])
    left = [op.name for op in module.walk() for r in op.results if isinstance(r.type, TensorType) and r.type.get_element_type() == UINT8]
    assert not left


@pytest.mark.parametrize("name", list(MODELS))
def test_the_reference_evaluator_sees_no_change(tmp_path, name):
    """The ONNX reference runs the module before and after the pass (`--check-each-pass`):
    integers equal, on seeded inputs."""
    module = import_model(str(_save(name, tmp_path)))
    run_pipeline(module, "fold-qoperator,fold-qdq,fold-constants")
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, "signed-activations").passes
    assert check_each_pass(module, passes, make_context()).checked == ["signed-activations"]


def test_takes_the_int8_kernels_of_its_qdq_twin(tmp_path):
    """The M4 module of the uint8 KWS has the DSP ops of the QDQ int8 KWS, one for one (the
    column tiles, the paired depthwise taps, the SMLAD rows); without the pass it had none."""

    def dsp_ops(model: onnx.ModelProto, name: str, pipeline: str = MCU_PIPELINE) -> Counter:
        onnx.save(model, tmp_path / f"{name}.onnx")
        module = compile_to_module(tmp_path / f"{name}.onnx", "cortex-m4", pipeline=pipeline).module
        return Counter(op.name for op in module.walk() if op.name.startswith("arm_dsp."))

    int8 = dsp_ops(quantize(kws_dscnn()), "kws_int8")
    assert int8 and dsp_ops(uint8_model("kws"), "kws_uint8") == int8
    # arm-dsp-requant-sums rewrites any kernel's requantization (SMMLA, SSAT), uint8 or not.
    without = dsp_ops(uint8_model("kws"), "kws_uint8_without", WITHOUT)
    assert not {name for name in without if name not in ("arm_dsp.smmla", "arm_dsp.ssat")}, without


@pytest.mark.parametrize("name", list(MODELS))
def test_outputs_equal_those_without_the_pass(tmp_path, name):
    path = _save(name, tmp_path)
    builds = [
        load_compiled(compile_model(path, tmp_path / tag, CompileOptions(name=name, optimize="ReleaseSafe", pipeline=p)))
        for tag, p in (("with", MCU_PIPELINE), ("without", WITHOUT))
    ]
    for feeds in calibration_inputs(uint8_model(name), count=3, seed=42):
        with_pass, without_pass = (build(*feeds.values()) for build in builds)
        for got, want in zip(with_pass, without_pass, strict=True):
            np.testing.assert_array_equal(got, want)
