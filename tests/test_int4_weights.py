"""int4 / uint4 weights in the integer kernels (issue 29 item 1, the MCU half).

A QDQ graph with int8 activations and 4-bit weights (ONNX's int4 DequantizeLinear, opset 21;
onnxruntime's quantize_static with QInt4 / QUInt4 weights writes the same) folds into
QLinearConv / QLinearMatMul whose weights stay packed two to a byte in the constant arena and
are unpacked in the kernels (`arm_dsp.load_s4x4` on the DSP cores). Checked here against
onnxruntime running the QDQ graph as written (graph optimizations off: a float Conv between DQ
and Q), code for code, on four layers at once (a padded 3x3 Conv, a depthwise 3x3, a pointwise
1x1 over 8 channels and a Gemm), with int4 and uint4 weights, per tensor and per output
channel: the host pipeline, the Cortex-M4 pipeline built for the host (its DSP forms in plain
Zig), the uop interpreter after every pass of the M4 pipeline, and one model as Cortex-M4
firmware under QEMU. The int4 KWS bench model (`kws_int4`) runs as firmware in
tests/test_firmware.py.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import zant

ort = pytest.importorskip("onnxruntime")

X_SCALE = 0.05
SEEDS = (0, 1, 2)

# (name, input shape, weight shape, group, pads): the four layers, each its own input and output.
LAYERS = [
    ("conv", [1, 4, 6, 6], [8, 4, 3, 3], 1, [1, 1, 1, 1]),
    ("depthwise", [1, 8, 6, 6], [8, 1, 3, 3], 8, [1, 1, 1, 1]),
    ("pointwise", [1, 8, 5, 5], [6, 8, 1, 1], 1, [0, 0, 0, 0]),
    ("gemm", [4, 16], [16, 6], 0, None),
]


def _weights(rng, shape, signed: bool, per_channel: bool, channel_axis: int):
    """Random 4-bit codes, their scales and zero points. int4: zero point 0. uint4 per channel:
    zero points 7..9 and codes within 8 of them (centred, they are int4: the kernels read them
    so); uint4 per tensor: zero point 3 and codes 0..15 (centred they are not: the kernels
    subtract the zero point)."""
    channels = shape[channel_axis]
    scales = rng.uniform(0.02, 0.08, channels if per_channel else ()).astype(np.float32)
    if signed:
        return rng.integers(-8, 8, shape), scales, np.zeros(channels if per_channel else (), np.int64)
    if not per_channel:
        return rng.integers(0, 16, shape), scales, np.array(3)
    zero_points = rng.integers(7, 10, channels)
    along = np.expand_dims(zero_points, tuple(a for a in range(len(shape)) if a != channel_axis))
    return np.clip(rng.integers(-8, 8, shape) + along, 0, 15), scales, zero_points


def int4_model(signed: bool, per_channel: bool, seed: int = 7) -> onnx.ModelProto:
    """The four layers (`LAYERS`) on int8 inputs with 4-bit weights, each output quantized to
    int8 with a scale that spreads its codes (from the float layer's output on random inputs)."""
    rng = np.random.default_rng(seed)
    weight_type = TensorProto.INT4 if signed else TensorProto.UINT4
    nodes, inits, inputs, outputs = [], [], [], []

    def const(name, value, data_type=None):
        value = np.asarray(value)
        if data_type is None:
            inits.append(numpy_helper.from_array(value, name))
        else:  # a 4-bit tensor: its values as ints, typed by helper
            inits.append(helper.make_tensor(name, data_type, value.shape, value.reshape(-1).tolist()))
        return name

    for name, x_shape, w_shape, group, pads in LAYERS:
        gemm = group == 0
        channel_axis = 1 if gemm else 0
        codes, w_scale, w_zero = _weights(rng, w_shape, signed, per_channel, channel_axis)
        w_float = (codes - np.expand_dims(w_zero, tuple(a for a in range(len(w_shape)) if a != channel_axis)) if per_channel else codes - w_zero)
        w_float = w_float * (np.expand_dims(w_scale, tuple(a for a in range(len(w_shape)) if a != channel_axis)) if per_channel else w_scale)
        # y's scale: 3 standard deviations of the float output over random int8 inputs, to 127.
        x = rng.integers(-128, 128, [64, math.prod(x_shape[1:])]).astype(np.float64) * X_SCALE
        fan_in = math.prod(w_shape[1:]) if not gemm else w_shape[0]
        rows = w_float.reshape(w_shape[0], -1).T if not gemm else w_float
        spread = float(np.std(x[:, :fan_in] @ rows))
        y_scale = np.float32(3 * spread / 127)
        out_channels = w_shape[1] if gemm else w_shape[0]
        bias = rng.integers(-2000, 2000, out_channels).astype(np.int32)
        bias_scale = (np.float32(X_SCALE) * np.broadcast_to(w_scale, (out_channels,))).astype(np.float32)
        p = name
        inputs.append(helper.make_tensor_value_info(f"{p}_x", TensorProto.INT8, x_shape))
        axis = {"axis": channel_axis} if per_channel else {}
        nodes += [
            helper.make_node("DequantizeLinear", [f"{p}_x", const(f"{p}_xs", np.float32(X_SCALE)), const(f"{p}_xz", np.int8(0))], [f"{p}_xf"]),
            helper.make_node(
                "DequantizeLinear",
                [const(f"{p}_w", codes, weight_type), const(f"{p}_ws", w_scale), const(f"{p}_wz", w_zero, weight_type)],
                [f"{p}_wf"], **axis,
            ),
            helper.make_node(
                "DequantizeLinear", [const(f"{p}_b", bias), const(f"{p}_bs", bias_scale), const(f"{p}_bz", np.zeros(out_channels, np.int32))],
                [f"{p}_bf"], axis=0,
            ),
        ]
        if gemm:
            nodes.append(helper.make_node("Gemm", [f"{p}_xf", f"{p}_wf", f"{p}_bf"], [f"{p}_yf"]))
            y_shape = [x_shape[0], out_channels]
        else:
            nodes.append(helper.make_node("Conv", [f"{p}_xf", f"{p}_wf", f"{p}_bf"], [f"{p}_yf"], group=group, pads=pads, kernel_shape=w_shape[2:]))
            y_shape = [1, out_channels, *x_shape[2:]]
        nodes.append(helper.make_node("QuantizeLinear", [f"{p}_yf", const(f"{p}_ys", y_scale), const(f"{p}_yz", np.int8(3))], [f"{p}_y"]))
        outputs.append(helper.make_tensor_value_info(f"{p}_y", TensorProto.INT8, y_shape))
    graph = helper.make_graph(nodes, "int4_layers", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


def feeds_for(model: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        v.name: rng.integers(-128, 128, [d.dim_value for d in v.type.tensor_type.shape.dim]).astype(np.int8)
        for v in model.graph.input
    }


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


CASES = [(True, True), (True, False), (False, True), (False, False)]
IDS = ["int4-per-channel", "int4-per-tensor", "uint4-per-channel", "uint4-per-tensor"]


@pytest.mark.parametrize("signed, per_channel", CASES, ids=IDS)
@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_int4_weights_equal_onnxruntime(tmp_path, target, signed, per_channel):
    model = int4_model(signed, per_channel)
    path = tmp_path / "int4.onnx"
    onnx.save(model, path)
    compiled = zant.compile(path, target=target, firmware=False) if target != "host" else zant.compile(path)
    plan = compiled.plan
    # Folded: no float scratch; the four weights packed (two codes a byte) in the constant arena.
    assert plan["float_scratch_bytes"] == 0
    packed = {t["name"]: t["size"] for t in plan["tensors"] if t["role"] == "constant" and t.get("element_type") in ("i4", "ui4")}
    weights = sum(math.prod(shape) for _, _, shape, _, _ in LAYERS)
    assert sum(packed.values()) <= weights // 2 + 8 * len(LAYERS), packed
    for seed in SEEDS:
        feeds = feeds_for(model, seed)
        got = compiled.predict(feeds)
        got = list(got.values()) if isinstance(got, dict) else got
        for name, ours, want in zip([o.name for o in model.graph.output], got, onnxruntime_outputs(model, feeds), strict=True):
            assert ours.dtype == want.dtype and ours.shape == want.shape
            assert np.count_nonzero(ours != want) == 0, f"{name}: {np.count_nonzero(ours != want)} codes differ (seed {seed})"
            assert np.mean(np.isin(want, [-128, 127])) < 0.25, f"{name}: the test's output scale saturates"


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m0plus"])
def test_int4_weights_on_other_cores(tmp_path, target):
    """The Helium core (its mve-dot leaves int4 loops to arm-dsp-dot's load_s4x4) and a core
    without the DSP extension: int4 per channel and uint4 per tensor equal onnxruntime."""
    for signed, per_channel in ((True, True), (False, False)):
        model = int4_model(signed, per_channel)
        path = tmp_path / f"int4_{signed}.onnx"
        onnx.save(model, path)
        compiled = zant.compile(path, target=target, firmware=False)
        feeds = feeds_for(model, 4)
        got = compiled.predict(feeds)
        for output, want in zip(model.graph.output, onnxruntime_outputs(model, feeds), strict=True):
            assert np.array_equal(got[output.name], want), f"{target}: {output.name}"


def test_dsp_kernels_unpack_int4_words(tmp_path):
    """On the Cortex-M4 pipeline the int4 (and re-centred uint4) weights of the conv, the
    pointwise Conv and the Gemm are read by `arm_dsp.load_s4x4`, and every pass keeps the uop
    interpreter's outputs (check_each_pass from onnx-to-uop on)."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass
    from zant.pipelines import pipeline_for
    from zant.plugins import all_passes

    path = tmp_path / "uint4.onnx"
    onnx.save(int4_model(signed=False, per_channel=True), path)  # re-centred to int4 first
    module = import_model(str(path))
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline_for("cortex-m4")).passes
    report = check_each_pass(module, passes, make_context(), seed=5)
    assert "arm-dsp-dot" in report.checked
    loads = [op for op in module.walk() if op.name == "arm_dsp.load_s4x4"]
    assert len(loads) >= 3, f"{len(loads)} load_s4x4"


def test_int4_weights_as_cortex_m4_firmware(tmp_path):
    """int4 per channel and uint4 per tensor, as Cortex-M4 firmware under QEMU: the codes
    onnxruntime gives."""
    from zant.backend.build import BOARDS, DEFAULT_BOARDS
    from zant.backend.firmware import qemu_missing

    missing = qemu_missing(BOARDS[DEFAULT_BOARDS["cortex-m4"]])
    if missing:
        pytest.skip(missing)
    for signed, per_channel in ((True, True), (False, False)):
        model = int4_model(signed, per_channel)
        path = tmp_path / f"int4_{signed}.onnx"
        onnx.save(model, path)
        feeds = feeds_for(model, 11)
        compiled = zant.compile(path, target="cortex-m4", firmware=True)
        run = compiled.run_firmware(feeds)
        want = onnxruntime_outputs(model, feeds)
        for output, expected in zip(model.graph.output, want, strict=True):
            got = run.outputs[output.name]
            assert np.array_equal(got.reshape(expected.shape), expected), output.name


def test_kws_int4_as_cortex_m4_firmware(tmp_path):
    """The bench's int4 KWS (`kws_int4`: kws_int8's weights again quantized to int4 per
    channel) as Cortex-M4 firmware under QEMU: its outputs equal onnxruntime's (the QDQ graph
    as written) on seeded inputs, and its weight tensors take half the int8 model's bytes."""
    import sys
    from pathlib import Path

    from zant.backend.build import BOARDS, DEFAULT_BOARDS
    from zant.backend.firmware import qemu_missing

    missing = qemu_missing(BOARDS[DEFAULT_BOARDS["cortex-m4"]])
    if missing:
        pytest.skip(missing)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from models import QUANTIZED, calibration_inputs

    def weight_bytes(model: onnx.ModelProto, name: str, types: tuple[str, ...]) -> int:
        onnx.save(model, tmp_path / f"{name}.onnx")
        plan = zant.compile(tmp_path / f"{name}.onnx", target="cortex-m4", build=False).plan
        return sum(t["size"] for t in plan["tensors"] if t["role"] == "constant" and t.get("element_type") in types)

    int8, int4 = QUANTIZED["kws_int8"](), QUANTIZED["kws_int4"]()
    assert 2 * weight_bytes(int4, "kws_int4", ("i4",)) == weight_bytes(int8, "kws_int8", ("i8",)) - weight_bytes(
        int4, "kws_int4_rest", ("i8",)
    )
    compiled = zant.compile(tmp_path / "kws_int4.onnx", target="cortex-m4", firmware=True)
    for feeds in calibration_inputs(int4, count=2, seed=42):
        got = compiled.run_firmware(feeds).outputs["probs"]
        want = onnxruntime_outputs(int4, feeds)[0]
        assert np.array_equal(got.reshape(want.shape), want)
