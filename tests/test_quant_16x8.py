"""16x8 quantization (issue 30 item 3): int16 activations with int8 weights, as onnxruntime's
`quantize_static(activation_type=QInt16, weight_type=QInt8)` writes them, compile to integer
kernels on every core.

KWS 16x8 (`bench/models.py`'s kws_16x8) folds to QLinearConv / QLinearSoftmax on int16 codes,
with no float buffer in the scratch arena, and stays within 1 LSB of onnxruntime with graph
optimizations off on the host pipeline, the Cortex-M4's (SMLAD on 16-bit pairs) and the
Cortex-M55's (VMLADAVA.S16), built for the host here and run as firmware under QEMU below. A
16x8 Conv whose sums leave int32 sums in int64 and equals a float64 evaluation of its QDQ
graph exactly.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ort = pytest.importorskip("onnxruntime")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import QUANTIZED, calibration_inputs, kws_dscnn, quantize  # noqa: E402
from test_int8 import folded, onnxruntime_session, output_tolerances  # noqa: E402

from zant.driver import CompileOptions, compile_model, compile_to_module  # noqa: E402
from zant.passes.fold_qdq import unfolded_ops  # noqa: E402
from zant.pipelines import pipeline_for  # noqa: E402
from zant.runtime import load_compiled  # noqa: E402
from zant.tools.cli import main as cli_main  # noqa: E402


@cache
def kws_16x8() -> onnx.ModelProto:
    return QUANTIZED["kws_16x8"]()


def test_kws_16x8_is_onnxruntime_int16_activations_int8_weights():
    """What the bench model is: onnxruntime's QDQ with int16 activation codes (zero points
    where its calibration puts them, not 0) and int8 per-channel weights."""
    model = kws_16x8()
    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    quantizes = [n for n in model.graph.node if n.op_type == "QuantizeLinear"]
    assert quantizes and all(values[n.input[2]].dtype == np.int16 for n in quantizes)
    constants = [values[n.input[0]] for n in model.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in values]
    weights = [c for c in constants if c.ndim >= 2]  # the biases are 1-D int32
    assert len(weights) == 10 and all(w.dtype == np.int8 for w in weights)
    assert any(values[n.input[2]] != 0 for n in quantizes)  # non-zero zero points are handled


def test_kws_16x8_folds_to_integer_ops_and_no_float_scratch(tmp_path):
    module = folded(kws_16x8(), tmp_path)
    assert not unfolded_ops(module)
    names = [op.name for op in module.walk()]
    assert names.count("onnx.QLinearConv") == 11 and names.count("onnx.QLinearSoftmax") == 1  # 9 Conv, the pool, the Gemm
    onnx.save(kws_16x8(), tmp_path / "kws.onnx")
    assert cli_main(["compile", str(tmp_path / "kws.onnx"), "-o", str(tmp_path / "out"), "--target", "cortex-m4", "--no-build"]) == 0
    plan = json.loads((tmp_path / "out" / "model.plan.json").read_text())
    assert plan["float_scratch_bytes"] == 0
    assert {t["element_type"] for t in plan["tensors"] if t["role"] == "scratch"} == {"i16"}


def _worst_lsb(got: np.ndarray, want: np.ndarray, lsb: float) -> float:
    return float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) / lsb


@pytest.mark.parametrize("target", ["host", "cortex-m4", "cortex-m55"])
def test_kws_16x8_within_one_lsb_of_onnxruntime(tmp_path, target):
    """The compiled model (the target's pipeline, built for the host: the M4's SMLAD forms
    and the M55's VMLAVA.S16 forms as their plain-Zig helpers) against onnxruntime with graph
    optimizations off, on 4 seeded inputs: within 1 LSB of the int16 softmax output."""
    model = kws_16x8()
    onnx.save(model, tmp_path / "kws.onnx")
    pipeline = None if target == "host" else pipeline_for(target)
    result = compile_model(tmp_path / "kws.onnx", tmp_path / "out", CompileOptions(name="kws", pipeline=pipeline))
    compiled, session = load_compiled(result), onnxruntime_session(model, optimized=False)
    (lsb,) = output_tolerances(model)  # the output DQ's scale · 1.001
    worst = 0.0
    for feeds in calibration_inputs(model, count=4, seed=42):
        (got,) = compiled(*(feeds[s.name] for s in result.inputs))
        (want,) = session.run(None, feeds)
        worst = max(worst, _worst_lsb(got, want, lsb))
    assert worst <= 1.0


def test_symmetric_16x8_within_one_lsb_of_onnxruntime(tmp_path):
    """Zero points 0 (onnxruntime's ActivationSymmetric, the form TFLite's 16x8 uses) in each
    requantization rounding mode: within 1 LSB of onnxruntime on the host."""
    model = quantize(kws_dscnn(), activations="int16", symmetric=True)
    zero_points = {int(numpy_helper.to_array(t)) for t in model.graph.initializer if t.data_type == TensorProto.INT16 and t.name.endswith("zero_point")}
    assert zero_points == {0}
    onnx.save(model, tmp_path / "kws.onnx")
    session = onnxruntime_session(model, optimized=False)
    (lsb,) = output_tolerances(model)
    for mode in ("exact", "onnxruntime", "tflite"):
        result = compile_model(tmp_path / "kws.onnx", tmp_path / mode, CompileOptions(name="kws", requant_rounding=mode))
        compiled = load_compiled(result)
        for feeds in calibration_inputs(model, count=2, seed=42):
            (got,) = compiled(*(feeds[s.name] for s in result.inputs))
            (want,) = session.run(None, feeds)
            assert _worst_lsb(got, want, lsb) <= 1.0, mode


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_kws_16x8_runs_as_firmware(tmp_path, target):
    """The firmware `zant compile --target T --firmware` builds (ReleaseFast) runs under QEMU
    with the host build of the same pipeline's outputs bit for bit (so the DSP / Helium
    instructions compute what their plain-Zig forms do), within 1 LSB of onnxruntime."""
    from zant.backend.boards import BOARDS, DEFAULT_BOARDS
    from zant.backend.firmware import qemu_missing, run_firmware

    board = BOARDS[DEFAULT_BOARDS[target]]
    missing = qemu_missing(board)
    if missing:
        pytest.skip(missing)
    model = kws_16x8()
    onnx.save(model, tmp_path / "kws.onnx")
    (feeds,) = calibration_inputs(model, count=1, seed=7)
    image = compile_model(tmp_path / "kws.onnx", tmp_path / "fw", CompileOptions(name="kws", target=target, firmware=True, inputs=feeds))
    host = compile_model(tmp_path / "kws.onnx", tmp_path / "host", CompileOptions(name="kws", pipeline=pipeline_for(target)))
    assert image.firmware_path is not None and image.board is not None
    (got,) = run_firmware(image.firmware_path, image.board, image.outputs).outputs
    (want,) = load_compiled(host)(*(feeds[s.name] for s in host.inputs))
    np.testing.assert_array_equal(got, want)
    (lsb,) = output_tolerances(model)
    (reference,) = onnxruntime_session(model, optimized=False).run(None, feeds)
    assert _worst_lsb(got, reference, lsb) <= 1.0


# -- sums beyond int32 ---------------------------------------------------------------------------

CHANNELS = 1024
X_SCALE, W_SCALE, Y_SCALE = 0.001, 0.01, 40.0


def wide_conv() -> onnx.ModelProto:
    """Q → DQ → 1x1 Conv over 1024 channels (int16 x with zero point -32768, int8 weights of
    ±127) → Q → DQ: |Σ (x - x_zp)·w| reaches 65535 · 127 · 1024 ≈ 2^33."""
    rng = np.random.default_rng(3)
    w = rng.choice(np.array([-127, 127], np.int8), size=(4, CHANNELS, 1, 1))
    w[0], w[1] = 127, -127  # the extreme sums
    arrays = {
        "w": w, "ws": np.full(4, W_SCALE, np.float32), "wz": np.zeros(4, np.int8),
        "xs": np.array(X_SCALE, np.float32), "xz": np.array(-32768, np.int16),
        "ys": np.array(Y_SCALE, np.float32), "yz": np.array(-32768, np.int16),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
        helper.make_node("Conv", ["xd", "wd"], ["c"]),
        helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["cq"]),
        helper.make_node("DequantizeLinear", ["cq", "ys", "yz"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "wide", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 2, 2])],
        [numpy_helper.from_array(v, k) for k, v in arrays.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


def exact_wide_conv(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    """The QDQ graph in exact integer arithmetic (float64 where it is exact): the codes, the
    int64 sum, the sum · x_scale · w_scale / y_scale rounded half to even, saturated."""
    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    codes = np.clip(np.rint(x.astype(np.float64) / np.float32(X_SCALE)) - 32768, -32768, 32767).astype(np.int64)
    sums = np.einsum("nchw,mc->nmhw", codes + 32768, values["w"].reshape(4, CHANNELS).astype(np.int64))
    multiplier = float(np.float32(X_SCALE)) * float(np.float32(W_SCALE)) / float(np.float32(Y_SCALE))
    y = np.clip(np.rint(sums * multiplier) - 32768, -32768, 32767)
    return ((y + 32768) * np.float32(Y_SCALE)).astype(np.float32), sums


def test_16x8_sums_beyond_int32_take_int64_accumulators(tmp_path):
    model = wide_conv()
    onnx.save(model, tmp_path / "wide.onnx")
    module = compile_to_module(tmp_path / "wide.onnx", "host").module
    accs = {str(op.results[0].type) for op in module.walk() if op.name == "uop.define_acc"}
    assert "!uop.acc<i64>" in accs, accs
    result = compile_model(tmp_path / "wide.onnx", tmp_path / "out", CompileOptions(name="wide"))
    compiled, session = load_compiled(result), onnxruntime_session(model, optimized=False)
    rng = np.random.default_rng(0)
    for x in [np.full((1, CHANNELS, 2, 2), 65.0, np.float32), (rng.random((1, CHANNELS, 2, 2)) * 65).astype(np.float32)]:
        want, sums = exact_wide_conv(model, x)
        assert np.max(np.abs(sums)) >= 2**31  # an int32 sum would wrap
        (got,) = compiled(x)
        np.testing.assert_array_equal(got, want)
        (reference,) = session.run(None, {"x": x})
        assert _worst_lsb(got, reference, Y_SCALE) <= 1.0


# -- the other ops of 16x8 graphs ------------------------------------------------------------------


def sixteen_bit_ops() -> onnx.ModelProto:
    """int16 codes a, b (1x4x6x6) → DQ → a residual Add (other scales), a Clip (ReLU6), a
    MaxPool, a Concat of a and b (b requantized to a's parameters) → Q to int16 outputs."""
    arrays = {
        "sa": np.array(0.0007, np.float32), "za": np.array(-911, np.int16),
        "sb": np.array(0.0011, np.float32), "zb": np.array(37, np.int16),
        "sy": np.array(0.0013, np.float32), "zy": np.array(-120, np.int16),
        "lo": np.array(0.0, np.float32), "hi": np.array(6.0, np.float32),
    }
    dq = lambda x, s, z: helper.make_node("DequantizeLinear", [x, s, z], [f"{x}_f"])  # noqa: E731
    q = lambda x, s, z, y: helper.make_node("QuantizeLinear", [x, s, z], [y])  # noqa: E731
    nodes = [
        dq("a", "sa", "za"), dq("b", "sb", "zb"),
        helper.make_node("Add", ["a_f", "b_f"], ["add"]), q("add", "sy", "zy", "y_add"),
        helper.make_node("Clip", ["b_f", "lo", "hi"], ["clip"]), q("clip", "sy", "zy", "y_clip"),
        helper.make_node("MaxPool", ["a_f"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]), q("pool", "sa", "za", "y_pool"),
        helper.make_node("Concat", ["a_f", "b_f"], ["cat"], axis=1), q("cat", "sa", "za", "y_cat"),
    ]
    shape = [1, 4, 6, 6]
    outputs = {"y_add": shape, "y_clip": shape, "y_pool": [1, 4, 3, 3], "y_cat": [1, 8, 6, 6]}
    graph = helper.make_graph(
        nodes, "sixteen_bit_ops",
        [helper.make_tensor_value_info(n, TensorProto.INT16, shape) for n in ("a", "b")],
        [helper.make_tensor_value_info(n, TensorProto.INT16, s) for n, s in outputs.items()],
        [numpy_helper.from_array(v, k) for k, v in arrays.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


def test_16_bit_add_clip_maxpool_concat_fold_and_match(tmp_path):
    """A 16x8 graph's other ops (a residual Add, ReLU6, MaxPool, Concat with a requantized
    input) fold to integer ops on the int16 codes and give onnxruntime's codes within 1 LSB on
    random codes, on the host and the cortex-m4 pipeline."""
    model = sixteen_bit_ops()
    module = folded(model, tmp_path)
    assert not unfolded_ops(module)
    assert not [op for op in module.walk() if op.name in ("onnx.DequantizeLinear", "onnx.QuantizeLinear")]
    onnx.save(model, tmp_path / "ops.onnx")
    session = onnxruntime_session(model, optimized=False)
    rng = np.random.default_rng(5)
    feeds = {n: rng.integers(-32768, 32768, size=(1, 4, 6, 6)).astype(np.int16) for n in ("a", "b")}
    want = session.run(None, feeds)
    for target in ("host", "cortex-m4"):
        pipeline = None if target == "host" else pipeline_for(target)
        result = compile_model(tmp_path / "ops.onnx", tmp_path / target, CompileOptions(name="ops", pipeline=pipeline))
        got = load_compiled(result)(feeds["a"], feeds["b"])
        for name, g, w in zip(("add", "clip", "pool", "cat"), got, want, strict=True):
            assert np.max(np.abs(g.astype(np.int32) - w.astype(np.int32))) <= 1, (target, name)


def softmax16() -> onnx.ModelProto:
    """DQ → Softmax → Q of [64, 12] int16 codes."""
    arrays = {"xs": np.array(0.0005, np.float32), "xz": np.array(-1407, np.int16),
              "ys": np.array(1 / 65535, np.float32), "yz": np.array(-32768, np.int16)}
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("Softmax", ["xf"], ["p"], axis=1),
             helper.make_node("QuantizeLinear", ["p", "ys", "yz"], ["y"])]
    graph = helper.make_graph(nodes, "softmax16", [helper.make_tensor_value_info("x", TensorProto.INT16, [64, 12])],
                              [helper.make_tensor_value_info("y", TensorProto.INT16, [64, 12])],
                              [numpy_helper.from_array(v, k) for k, v in arrays.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    return model


def test_16_bit_softmax_within_one_lsb_of_the_exact_value(tmp_path):
    """DQ → Softmax → Q on int16 codes (QLinearSoftmax of int16: exp from a coarse and a fine
    256-entry table): within 1 LSB of the float64 softmax of the dequantized codes, rounded
    half to even, over rows whose distances span 0 to 65535, and of onnxruntime."""
    model = softmax16()
    onnx.save(model, tmp_path / "softmax.onnx")
    rng = np.random.default_rng(11)
    x = rng.integers(-32768, 32768, size=(64, 12)).astype(np.int16)
    x[:8] = rng.integers(-200, 200, size=(8, 12))  # close rows: every class counts
    x[8, :] = [32767, -32768, *rng.integers(-32768, 32768, size=10)]  # the largest distance
    result = compile_model(tmp_path / "softmax.onnx", tmp_path / "out", CompileOptions(name="softmax"))
    (got,) = load_compiled(result)(x)
    logits = (x.astype(np.float64) + 1407) * float(np.float32(0.0005))
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    exact = np.clip(np.rint(e / e.sum(axis=1, keepdims=True) / float(np.float32(1 / 65535))) - 32768, -32768, 32767)
    assert np.max(np.abs(got.astype(np.int64) - exact)) <= 1
    (reference,) = onnxruntime_session(model, optimized=False).run(None, {"x": x})
    assert np.max(np.abs(got.astype(np.int64) - reference)) <= 1


def test_16_bit_qlinear_ops_have_a_reference_the_lowering_equals(tmp_path):
    """The interpreter's definitions of the 16-bit QLinearSoftmax (the two tables) and
    QLinearConv (an exact sum, no int32 wrap) are what onnx-to-uop computes: check-each-pass
    through the host stages checks every pass on seeded inputs (KWS 16x8 alike under -m slow:
    4 minutes of interpretation)."""
    _check_each_pass({"softmax": softmax16(), "wide_conv": wide_conv()}, tmp_path)


@pytest.mark.slow
def test_kws_16x8_is_checked_pass_by_pass(tmp_path):
    _check_each_pass({"kws": kws_16x8()}, tmp_path)


def _check_each_pass(models: dict[str, onnx.ModelProto], folder: Path) -> None:
    from zant.driver import make_context, parse_pipeline
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass

    for name, model in models.items():
        onnx.save(model, folder / f"{name}.onnx")
        module = import_model(str(folder / f"{name}.onnx"))
        stages = parse_pipeline("fold-qoperator,fold-qdq,fold-constants,fold-batchnorm,dce,onnx-to-uop,fuse-loops,dce")
        report = check_each_pass(module, stages, make_context())
        assert report.unchecked == [] and "onnx-to-uop" in report.checked, report.why
