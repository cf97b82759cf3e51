"""int8 end to end: QDQ models quantized by onnxruntime, folded by `fold-qdq` into integer ops
with fixed-point requantization, built in ReleaseSafe and compared with onnxruntime.

Every output element within 1 LSB (one output scale) of onnxruntime running the QDQ graph as
written (graph optimizations off), and the same top-1 as onnxruntime with and without its
optimizations on every input. (Optimized onnxruntime fuses the QDQ groups into its own integer
kernels; their last-bit rounding differs from its unoptimized run by up to 11 LSB after the
float Softmax, so that run is not a 1-LSB yardstick.) The folded KWS model's convolution loops
hold no float.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import pytest

from zant.driver import CompileOptions, compile_model, run_pipeline
from zant.frontend.onnx_importer import import_model
from zant.passes.fold_qdq import unfolded_ops
from zant.passes.onnx_to_uop.quant import fixed_point_multipliers
from zant.runtime import load_compiled

ort = pytest.importorskip("onnxruntime")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from models import INT8_PIPELINE, QOPERATOR_STANDARD_OPS, QUANTIZED, calibration_inputs, digits, quantize  # noqa: E402

PIPELINE = INT8_PIPELINE
INPUTS = 4  # seeded inputs per model


@cache
def int8_model(name: str) -> onnx.ModelProto:
    return QUANTIZED[name]()


def onnxruntime_session(model: onnx.ModelProto, optimized: bool):
    options = ort.SessionOptions()
    if not optimized:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def output_tolerances(model: onnx.ModelProto) -> list[float]:
    """1 LSB of each graph output: the scale of the DequantizeLinear producing it (a float op's
    output, behind integer layers that match exactly, gets a float tolerance)."""
    producers = {o: n for n in model.graph.node for o in n.output}
    values = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    return [
        float(values[node.input[1]]) * 1.001 if node.op_type == "DequantizeLinear" else 1e-5
        for node in (producers[o.name] for o in model.graph.output)
    ]


def check_int8(model: onnx.ModelProto, name: str, folder: Path, inputs: int = INPUTS) -> dict:
    """Compile the folded model, run it on seeded inputs, compare with onnxruntime."""
    onnx.save(model, folder / f"{name}.onnx")
    result = compile_model(
        folder / f"{name}.onnx", folder / "out", CompileOptions(name=name, optimize="ReleaseSafe", pipeline=PIPELINE)
    )
    compiled = load_compiled(result)
    tolerances = output_tolerances(model)
    as_written, optimized = (onnxruntime_session(model, o) for o in (False, True))
    for feeds in calibration_inputs(model, count=inputs, seed=42):
        ours = compiled(*(feeds[s.name] for s in result.inputs))
        for got, want, fast, tolerance in zip(ours, as_written.run(None, feeds), optimized.run(None, feeds), tolerances, strict=True):
            assert np.max(np.abs(got - want)) <= tolerance, f"{name}: more than 1 LSB from onnxruntime"
            assert np.argmax(got) == np.argmax(want) == np.argmax(fast), f"{name}: top-1 differs"
    return result.plan


def folded(model: onnx.ModelProto, folder: Path):
    """The module of `model` after fold-qoperator and fold-qdq."""
    onnx.save(model, folder / "model.onnx")
    module = import_model(str(folder / "model.onnx"))
    run_pipeline(module, "fold-qoperator,fold-qdq")
    return module


# -- fast ------------------------------------------------------------------------------------------


def test_fixed_point_multipliers_match_the_real_ones():
    multipliers = np.array([1e-9, 3e-4, 0.0123, 0.5, 0.75, 0.9999999, 1.0, 3.7])
    m0, shift = fixed_point_multipliers(multipliers)
    assert np.all((m0 >= 2**30) & (m0 < 2**31) | (shift == 62)) and np.all(shift <= 62)
    np.testing.assert_allclose(m0 * 2.0 ** -shift.astype(np.float64), multipliers, rtol=1e-9)


@pytest.mark.parametrize("name", ["digits_int8", "kws_int8"])
def test_int8_model_within_one_lsb_of_onnxruntime(tmp_path, name):
    check_int8(int8_model(name), name, tmp_path)


def test_kws_folds_to_integer_ops(tmp_path):
    module = folded(int8_model("kws_int8"), tmp_path)
    names = [op.name for op in module.walk() if op.name.startswith("onnx.") and op.name != "onnx.Constant"]
    assert names.count("onnx.QLinearConv") == 11  # 9 convs, the pool and the Gemm
    assert names.count("onnx.QLinearSoftmax") == 1
    assert not {"onnx.Conv", "onnx.Gemm", "onnx.AveragePool", "onnx.Softmax"} & set(names)
    assert not unfolded_ops(module)


def conv_loops(zig: str) -> list[str]:
    """The text of each top-level loop nest with an int32 accumulator (a conv or a matmul)."""
    nests, current, depth = [], [], 0
    for line in zig.splitlines():
        if depth == 0 and re.match(r"\s*while \(", line):
            current = []
        if depth or re.match(r"\s*while \(", line):
            current.append(line)
            depth += line.count("{") - line.count("}")
            if depth == 0:
                nests.append("\n".join(current))
    return [nest for nest in nests if re.search(r"var acc_\w+: i32", nest)]


def accumulating_kernels(zig: str) -> list[str]:
    """The text of each kernel function that sums int32 products: an int32 accumulator, or the
    DSP's SMLAD forms (straight-line rows and tiles keep their sums in SMLAD's operands)."""
    kernels = re.split(r"\n(?=(?:pub )?(?:inline )?fn kernel_)", zig)[1:]
    return [k for k in kernels if re.search(r"var acc_\w+: i32|smlad", k)]


def test_kws_conv_kernels_are_integer_only(tmp_path):
    onnx.save(int8_model("kws_int8"), tmp_path / "kws.onnx")
    result = compile_model(
        tmp_path / "kws.onnx", tmp_path / "out", CompileOptions(name="kws", build=False, pipeline=PIPELINE)
    )
    kernels = accumulating_kernels(result.zig_path.read_text())
    assert len(kernels) >= 10  # the first conv, 4 depthwise, 4 pointwise, the fully connected layer
    assert not [k for k in kernels if "f32" in k or "f64" in k]


# -- slow ------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet8_int8", "autoencoder_int8", "mobilenet_int8"])
def test_mlperf_tiny_int8_within_one_lsb_of_onnxruntime(tmp_path, name):
    check_int8(int8_model(name), name, tmp_path)


@pytest.mark.slow
def test_resnet8_adds_fold_to_qlinear_add(tmp_path):
    module = folded(int8_model("resnet8_int8"), tmp_path)
    names = [op.name for op in module.walk()]
    assert names.count("onnx.QLinearAdd") == 3 and "onnx.Add" not in names
    assert names.count("onnx.QLinearSoftmax") == 1 and not unfolded_ops(module)


def mixed_model() -> onnx.ModelProto:
    """A float model with the ops the bench models lack: a MaxPool whose Relu quantize_static
    removes (so its DQ and Q parameters differ), a padded AveragePool counting its pads, a
    broadcast Add, a Reshape and a MatMul."""
    from models import GraphBuilder

    g = GraphBuilder("mixed", seed=3)
    x = g.conv("input", 3, 8, 3)
    pooled = g.node("MaxPool", [x], "maxpool", kernel_shape=[2, 2], strides=[2, 2])  # 8×4×4
    relu = g.relu(pooled)
    average = g.node("AveragePool", [relu], "avgpool", kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)
    x = g.node("Add", [average, g.const("offset", g.rng.standard_normal((8, 1, 1)))], "add")
    x = g.relu6(x)
    x = g.node("Reshape", [x, g.const("shape", [1, 128], np.int64)], "reshape")
    x = g.node("MatMul", [x, g.const("mm_w", g.rng.standard_normal((128, 6)) * 0.1)], "matmul")
    return g.build([("input", [1, 3, 8, 8])], [(x, "y", [1, 6])])


def test_mixed_ops_fold_and_stay_within_one_lsb(tmp_path):
    from models import quantize

    model = quantize(mixed_model())
    module = folded(model, tmp_path)
    names = {op.name for op in module.walk()}
    assert {"onnx.QLinearConv", "onnx.QLinearMatMul", "onnx.QLinearAdd", "onnx.MaxPool"} <= names
    assert not unfolded_ops(module)
    check_int8(model, "mixed", tmp_path)


def test_relu_and_clip_between_equal_parameters_become_int8_clips(tmp_path):
    """quantize_static removes activations; a hand-made DQ → Relu → Q → DQ → Clip(0, 6) → Q
    folds to Clips on int8 and equals the reference evaluator exactly."""
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    params = ["s", "z"]
    nodes = [
        helper.make_node("DequantizeLinear", ["x", *params], ["xf"]),
        helper.make_node("Relu", ["xf"], ["rf"]),
        helper.make_node("QuantizeLinear", ["rf", *params], ["r"]),
        helper.make_node("DequantizeLinear", ["r", *params], ["rd"]),
        helper.make_node("Clip", ["rd", "lo", "hi"], ["cf"]),
        helper.make_node("QuantizeLinear", ["cf", *params], ["y"]),
    ]
    constants = {"s": np.float32(0.05), "z": np.int8(-10), "lo": np.float32(0.0), "hi": np.float32(6.0)}
    graph = helper.make_graph(
        nodes, "acts", [helper.make_tensor_value_info("x", TensorProto.INT8, [2, 128])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [2, 128])],
        [numpy_helper.from_array(np.array(v), k) for k, v in constants.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    assert [op.name for op in folded(model, tmp_path).walk() if op.name.startswith("onnx.Clip")] == ["onnx.Clip"] * 2
    onnx.save(model, tmp_path / "acts.onnx")
    result = compile_model(tmp_path / "acts.onnx", tmp_path / "out", CompileOptions(name="acts", optimize="ReleaseSafe", pipeline=PIPELINE))
    x = np.arange(-128, 128, dtype=np.int8).reshape(2, 128)
    (ours,) = load_compiled(result)(x)
    np.testing.assert_array_equal(ours, ReferenceEvaluator(model).run(None, {"x": x})[0])


def test_qoperator_digits_requantizes_in_fixed_point(tmp_path):
    """The QOperator format with its default-domain ops only (QLinearConv, int8 MaxPool and
    Flatten; the Gemm layers stay float, as com.microsoft's QGemm is not importable): fold-qdq
    marks the QLinearConvs fixed-point, and the result stays within 1 LSB."""
    model = quantize(digits(), "qoperator", op_types=QOPERATOR_STANDARD_OPS)
    convs = [op for op in folded(model, tmp_path).walk() if op.name == "onnx.QLinearConv"]
    assert len(convs) == 2 and all("zant.fixed_point" in op.attributes for op in convs)
    check_int8(model, "digits_qop", tmp_path)
