"""The committed corpus of real-tool quantized exports (issue 30, items 4 and 5).

tests/data/interop/ holds models written by onnxruntime's quantizer, PyTorch PT2E (torchao) with
`torch.onnx.export(dynamo=True)`, Brevitas (QCDQ and QONNX) and TFLite through tf2onnx, each
with the outputs its tool's own runtime computed (`make_corpus.py` there, `MANIFEST.json` says
tool, version, command and runtime). None of those tools is needed here.

Each model compiles with the default pipeline (host; a few as Cortex-M4 firmware under QEMU,
the rest marked slow), in the requantization rounding mode the manifest names for its runtime,
and must

* stay integer: 0 float scratch bytes in the plan;
* equal its tool's runtime: byte for byte on integer outputs; on a float output (a DQ'd or a
  float Gemm result) within float32 rounding of the tool's value.

Where a model needs a feature another change brings (16-bit activation kernels, ...), the
expectation is an xfail naming that feature (not strict: it shows as XPASS when the feature lands,
without failing the suite of the change that brings it; then take the model off the list).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from zant.driver import CompileOptions, compile_model
from zant.runtime import load_compiled

CORPUS = Path(__file__).parent / "data" / "interop"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())
NAMES = sorted(MANIFEST)

NOT_INTEGER: dict[str, str] = {}
"""Models that do not compile to integer-only code yet, and the missing feature."""

NOT_EXACT: dict[str, str] = {}
"""Models whose outputs differ from their tool's runtime in the matching mode, and why."""


def _freeze(model: onnx.ModelProto) -> dict[str, np.ndarray] | None:
    """Brevitas' dynamo export lists its scales and weights as graph inputs with initializers
    (overridable in ONNX's semantics): compiled as the constants they are (`zant compile --freeze`)."""
    initializers = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    frozen = {i.name: initializers[i.name] for i in model.graph.input if i.name in initializers}
    return frozen or None


def _options(name: str, **options) -> CompileOptions:
    model = onnx.load(CORPUS / MANIFEST[name]["model"])
    options = {"optimize": "ReleaseSafe", **options}
    return CompileOptions(name="net", freeze=_freeze(model), requant_rounding=MANIFEST[name]["rounding"], **options)


@functools.cache
def _host(name: str, out: Path):
    return compile_model(CORPUS / MANIFEST[name]["model"], out / name, _options(name))


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    out = tmp_path_factory.mktemp("interop")
    return lambda name: _host(name, out)


def _reference(name: str) -> dict[str, np.ndarray]:
    return dict(np.load(CORPUS / MANIFEST[name]["reference"]))


def output_step(name: str) -> float | None:
    """The scale of the DequantizeLinear writing the model's output (a constant per-tensor one),
    or None for an integer or a computed float output."""
    model = onnx.load(CORPUS / MANIFEST[name]["model"])
    producer = next((n for n in model.graph.node if model.graph.output[0].name in n.output), None)
    if producer is None or producer.op_type != "DequantizeLinear":
        return None
    scale = next((t for t in model.graph.initializer if t.name == producer.input[1]), None)
    return None if scale is None or numpy_helper.to_array(scale).size != 1 else float(numpy_helper.to_array(scale))


def assert_tool_output(got: np.ndarray, want: np.ndarray, step: float | None = None) -> None:
    """Integer outputs byte for byte; a dequantized output by its codes (`step`, its scale);
    another float output within float32 rounding of the tool's."""
    got = np.asarray(got).reshape(want.shape)
    if step is not None:
        got, want = np.round(got / np.float32(step)).astype(np.int64), np.round(want / np.float32(step)).astype(np.int64)
    if want.dtype.kind in "iu":
        differ = np.flatnonzero(got != want)
        assert differ.size == 0, f"{differ.size} of {want.size} codes differ, at most by " \
                                 f"{np.abs(got.astype(np.int64) - want).max()}: {got.ravel()[differ[:5]]} vs {want.ravel()[differ[:5]]}"
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * max(1.0, float(np.abs(want).max())))


def _mark(name: str, reasons: dict[str, str]):
    # Not strict: another change (16x8 kernels) may make one pass before this list is edited.
    return pytest.param(name, marks=pytest.mark.xfail(reason=reasons[name], strict=False)) if name in reasons else name


def test_manifest_lists_every_file():
    """Every committed model has its reference and a manifest entry saying tool, version and command."""
    models = {p.name for p in CORPUS.glob("*.onnx")}
    assert models == {e["model"] for e in MANIFEST.values()}
    for entry in MANIFEST.values():
        assert (CORPUS / entry["reference"]).exists()
        assert all(entry.get(k) for k in ("tool", "version", "command", "runtime", "rounding"))


@pytest.mark.parametrize("name", [_mark(n, NOT_INTEGER) for n in NAMES])
def test_stays_integer(name, host):
    """0 bytes of float scratch: every activation between the input's quantize and the output's
    dequantize is an integer tensor."""
    assert host(name).plan["float_scratch_bytes"] == 0


@pytest.mark.parametrize("name", [_mark(n, NOT_EXACT) for n in NAMES])
def test_equals_tool_runtime(name, host):
    """The host build equals the tool's own runtime on the stored inputs, in the manifest's
    requant-rounding mode."""
    compiled = load_compiled(host(name))
    reference = _reference(name)
    for x, want in zip(reference["x"], reference["y"], strict=True):
        (got,) = compiled(x)
        assert_tool_output(got, want, output_step(name))


@pytest.mark.parametrize("name", ["ort_qdq_qint16_activations"])
def test_equals_unoptimized_session_too(name, host):
    """onnxruntime's int16 QDQ runs in float32 with or without graph optimizations (no fusion
    applies to it): the stored outputs of its unoptimized session are the same codes."""
    compiled = load_compiled(host(name))
    reference = _reference(name)
    for x, want in zip(reference["x"], reference["y_unoptimized"], strict=True):
        assert_tool_output(compiled(x)[0], want, output_step(name))


def test_qint16_layers_equal_onnxruntime_on_random_inputs(tmp_path):
    """Every 16-bit layer of the QInt16 model, each QuantizeLinear's codes a graph output,
    equals onnxruntime (unoptimized and default sessions) on 200 random inputs in the
    `onnxruntime` mode: its float32 Conv (fused chain), depthwise Conv (one-row kernel),
    pointwise Conv, Add, GlobalAveragePool (global pooling kernel) and Gemm (one-row kernel of
    a transposed B), as `requant-rounding` marks them (`zant.float_sum`). The `exact` mode
    (the real value of each sum, rounded once) differs from it where onnxruntime's float32 sums
    land across a rounding boundary: 136 of the first Conv's 230,400 codes (and 15 to 97 in
    each later layer, the earlier differences carried on and its own)."""
    codes = _layers_model(tmp_path / "layers.onnx")
    xs = np.random.default_rng(3).standard_normal((200, 1, 3, 12, 12)).astype(np.float32)
    sessions = [_onnxruntime_layers(tmp_path / "layers.onnx", codes, xs, optimized) for optimized in (False, True)]
    differ = {}
    for mode in ("onnxruntime", "exact"):
        result = compile_model(tmp_path / "layers.onnx", tmp_path / mode, CompileOptions(name="m", optimize="ReleaseSafe", requant_rounding=mode))
        assert result.plan["float_scratch_bytes"] == 0
        compiled = load_compiled(result)
        got = [np.stack(column) for column in zip(*(compiled(x) for x in xs))]
        for want in sessions:
            differ[mode] = {
                name: int(np.count_nonzero(np.asarray(g).reshape(w.shape) != w)) for name, g, w in zip(codes, got, want, strict=True)
            }
            if mode == "onnxruntime":
                assert not any(differ[mode].values()), differ[mode]
    assert differ["exact"]["r1_QuantizeLinear_Output"] > 100, differ["exact"]


def _layers_model(path: Path) -> list[str]:
    """The QInt16 corpus model with every QuantizeLinear's codes a graph output, saved to
    `path`; their names."""
    model = onnx.load(CORPUS / MANIFEST["ort_qdq_qint16_activations"]["model"])
    types = {v.name: v for v in onnx.shape_inference.infer_shapes(model).graph.value_info}
    codes = [n.output[0] for n in model.graph.node if n.op_type == "QuantizeLinear" and n.output[0] in types]
    del model.graph.output[:]
    model.graph.output.extend(types[name] for name in codes)
    onnx.save(model, path)
    return codes


def _onnxruntime_layers(path: Path, codes: list[str], xs: np.ndarray, optimized: bool = False) -> list[np.ndarray]:
    ort = pytest.importorskip("onnxruntime")
    options = ort.SessionOptions()
    if not optimized:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return [np.stack(column) for column in zip(*(session.run(codes, {"x": x}) for x in xs))]


def test_qint16_interpreter_reference_equals_onnxruntime(tmp_path):
    """The interpreter's reference of the marked 16-bit ops (`zant.analysis.mlas_float`, what
    `--check-each-pass` compares the lowering with) gives onnxruntime's codes too, every layer,
    on 20 random inputs (its seeded inputs saturate this model's ReLU layers, so the check of
    each pass alone would not see a wrong float form)."""
    from zant.driver import make_context, parse_pipeline
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter.onnx_reference import onnx_graph_functions, onnx_opsets, run_onnx_function

    codes = _layers_model(tmp_path / "layers.onnx")
    xs = np.random.default_rng(4).standard_normal((20, 1, 3, 12, 12)).astype(np.float32)
    want = _onnxruntime_layers(tmp_path / "layers.onnx", codes, xs)
    module = import_model(str(tmp_path / "layers.onnx"))
    for stage in parse_pipeline("fold-qdq,requant-rounding{mode=onnxruntime}"):
        stage.apply(make_context(), module)
    (function,) = onnx_graph_functions(module)
    got = [np.stack(column) for column in zip(*(run_onnx_function(function, [x], onnx_opsets(module)) for x in xs))]
    differ = {name: int(np.count_nonzero(g.reshape(w.shape) != w)) for name, g, w in zip(codes, got, want, strict=True)}
    assert not any(differ.values()), differ


def test_pt2e_conv_relu_mean_equals_onnxruntime(tmp_path):
    """PT2E's Conv → Relu → ReduceMean → Q (no Q between the conv and the mean) in integers
    (`fold_conv_relu_mean`: the conv's int32 sums times 2^9, the float bias kept to 2^-10 of a unit,
    Relu on int32, one window sum requantized per channel) gives onnxruntime's codes for the
    mean on 1,000 random inputs: onnxruntime's default session runs that chain in float32 and
    its value is within float32 rounding of the exact one. With the bias rounded to whole
    units (x_scale · w_scale) 4 of the 8,000 codes differed by 1, each where the exact value is
    within 0.002 of a half."""
    ort = pytest.importorskip("onnxruntime")
    from onnx import helper

    model = onnx.load(CORPUS / MANIFEST["pt2e_x86_inductor_cnn"]["model"])
    graph = model.graph
    mean = next(n for n in graph.node if n.op_type == "ReduceMean")
    quantize = next(n for n in graph.node if n.op_type == "QuantizeLinear" and n.input[0] == mean.output[0])
    nodes = list(graph.node)[: list(graph.node).index(quantize) + 1]
    del graph.node[:], graph.output[:]
    graph.node.extend(nodes)
    graph.output.extend([helper.make_tensor_value_info(quantize.output[0], onnx.TensorProto.UINT8, [1, 8])])
    onnx.save(model, tmp_path / "mean.onnx")
    result = compile_model(tmp_path / "mean.onnx", tmp_path / "out", CompileOptions(name="m", optimize="ReleaseSafe", requant_rounding="onnxruntime"))
    assert result.plan["float_scratch_bytes"] == 0
    compiled = load_compiled(result)
    session = ort.InferenceSession(str(tmp_path / "mean.onnx"), providers=["CPUExecutionProvider"])
    xs = np.random.default_rng(0).normal(size=(1000, 1, 3, 12, 12)).astype(np.float32)
    got = np.stack([np.asarray(compiled(x)[0]).reshape(1, 8) for x in xs])
    want = np.stack([session.run(None, {"x": x})[0] for x in xs])
    assert np.array_equal(got, want), f"{np.count_nonzero(got != want)} of {want.size} codes differ"


FIRMWARE = [
    "ort_qdq_int8_per_channel", "ort_qdq_qint4_weights", "brevitas_qcdq_w4a8", "brevitas_qonnx_w4_bipolar_trunc", "tflite_int8",
    "pt2e_x86_inductor_cnn", "tflite_16x8", "ort_qdq_qint16_activations",
]
"""Compiled as Cortex-M4 firmware in the default suite (the others: slow)."""


@pytest.mark.parametrize("name", [
    n if n in FIRMWARE else pytest.param(n, marks=pytest.mark.slow)
    for n in NAMES if n not in NOT_EXACT and n not in NOT_INTEGER
])
def test_cortex_m4_firmware(name, tmp_path):
    """As Cortex-M4 firmware under QEMU: integer, and the tool's outputs on the first stored input."""
    from zant.backend.build import BOARDS, DEFAULT_BOARDS
    from zant.backend.firmware import qemu_missing, run_firmware

    missing = qemu_missing(BOARDS[DEFAULT_BOARDS["cortex-m4"]])
    if missing:
        pytest.skip(missing)
    reference = _reference(name)
    x = reference["x"][0]
    model = onnx.load(CORPUS / MANIFEST[name]["model"])
    input_name = next(i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer})
    result = compile_model(
        CORPUS / MANIFEST[name]["model"], tmp_path / "m4",
        _options(name, target="cortex-m4", optimize="ReleaseSmall", firmware=True, inputs={input_name: x}),
    )
    assert result.plan["float_scratch_bytes"] == 0
    run = run_firmware(result.firmware_path, result.board, result.outputs)
    assert_tool_output(run.outputs[0], reference["y"][0], output_step(name))


@pytest.mark.parametrize("x_type, y_type", [(np.uint8, np.int8), (np.int8, np.uint8)])
def test_requantize_across_8bit_types(x_type, y_type, tmp_path):
    """Q(DQ(x)) from uint8 to int8 and back (Brevitas' unsigned ReLU codes into a signed
    quantizer) folds to integers and rounds as the reference: every code of x, with x_scale / y_scale
    = 1/2 (a tie at every other code) and 1/4 (power-of-two scales: the float32 reference is exact
    there too, so its ties are real ties)."""
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    codes = np.arange(np.iinfo(x_type).min, np.iinfo(x_type).max + 1).astype(x_type).reshape(1, 256)
    onnx_type = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8}
    for ratio, y_zero in ((0.5, 3), (0.25, 0)):
        y_zero = y_zero + (128 if y_type == np.uint8 else 0)
        initializers = [
            numpy_helper.from_array(np.array(0.125, np.float32), "xs"), numpy_helper.from_array(np.array(5, x_type), "xz"),
            numpy_helper.from_array(np.array(0.125 / ratio, np.float32), "ys"), numpy_helper.from_array(np.array(y_zero, y_type), "yz"),
        ]
        graph = helper.make_graph(
            [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["f"]), helper.make_node("QuantizeLinear", ["f", "ys", "yz"], ["y"])],
            "requantize", [helper.make_tensor_value_info("x", onnx_type[x_type], [1, 256])],
            [helper.make_tensor_value_info("y", onnx_type[y_type], [1, 256])], initializers,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
        onnx.save(model, tmp_path / "m.onnx")
        result = compile_model(tmp_path / "m.onnx", tmp_path / f"out{ratio}", CompileOptions(name="m", optimize="ReleaseSafe"))
        assert result.plan["float_scratch_bytes"] == 0
        (got,) = load_compiled(result)(codes)
        (want,) = ReferenceEvaluator(model).run(None, {"x": codes})
        assert np.array_equal(got, want), np.flatnonzero(got != want)[:8]


LONG_SUMS = {
    # name: (op, x shape, W shape, attributes); the form, and the exact mode's codes off on the
    # same inputs (so each case can fail)
    "conv_256_terms": ("Conv", [1, 256, 4, 4], [8, 256, 1, 1], {}),  # fma, 256 > 128 terms (exact: 13 of 25,600)
    "conv_432_terms": ("Conv", [1, 48, 4, 4], [8, 48, 3, 3], {"pads": [1] * 4}),  # fma (exact: 24 of 25,600)
    "depthwise_81_taps": ("Conv", [1, 4, 12, 12], [4, 1, 9, 9], {"pads": [4] * 4, "group": 4}),  # m1, a loop (exact: 22 of 115,200)
    "gemm_400_terms": ("Gemm", [1, 400], [10, 400], {"transB": 1}),  # m1-transb, a loop (exact: 10 of 10,000)
}


@pytest.mark.parametrize("name", sorted(LONG_SUMS))
def test_qint16_long_sums_equal_onnxruntime(name, tmp_path):
    """16-bit QDQ layers with long sums against onnxruntime (unoptimized), 200 random inputs of
    int16 codes (a Gemm 1,000): Convs of 256 and 432 terms over 16 output pixels (more than MLAS's 128-term K
    block, but on an output that narrow its block is 1,024 terms whatever onnxruntime's threads,
    `mlas_one_k_block`: the `fma` form), and the one-row forms' loops beyond `UNROLLED_TERMS` (a
    depthwise 9x9 window, `m1`; a one-row Gemm of 400 terms, `m1-transb`)."""
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    op_type, x_shape, w_shape, attributes = LONG_SUMS[name]
    rng = np.random.default_rng(len(name))
    channels = w_shape[0]
    x_scale, y_scale = np.float32(3e-4), np.float32(6e-4 if op_type == "Conv" else 4e-4)
    w_scale = rng.uniform(0.002, 0.004, channels).astype(np.float32)
    initializers = [
        numpy_helper.from_array(np.array(x_scale), "xs"), numpy_helper.from_array(np.array(-1000, np.int16), "xz"),
        numpy_helper.from_array(rng.integers(-127, 128, w_shape).astype(np.int8), "w"),
        numpy_helper.from_array(w_scale, "ws"), numpy_helper.from_array(np.zeros(channels, np.int8), "wz"),
        numpy_helper.from_array(rng.integers(-20000, 20000, channels).astype(np.int32), "b"),
        numpy_helper.from_array((x_scale * w_scale).astype(np.float32), "bs"), numpy_helper.from_array(np.zeros(channels, np.int32), "bz"),
        numpy_helper.from_array(np.array(y_scale), "ys"), numpy_helper.from_array(np.array(300, np.int16), "yz"),
    ]
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=0),
        helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"], axis=0),
        helper.make_node(op_type, ["xf", "wf", "bf"], ["c"], **attributes),
        helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["y"]),
    ]
    y_shape = [1, channels, *x_shape[2:]] if op_type == "Conv" else [1, channels]
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.INT16, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.INT16, y_shape)], initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.save(model, tmp_path / "long.onnx")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(tmp_path / "long.onnx"), options, providers=["CPUExecutionProvider"])
    xs = rng.integers(-4000, 2000, (200 if op_type == "Conv" else 1000, *x_shape)).astype(np.int16)
    want = np.stack([session.run(None, {"x": x})[0] for x in xs])
    result = compile_model(tmp_path / "long.onnx", tmp_path / "out", CompileOptions(name="m", optimize="ReleaseSafe", requant_rounding="onnxruntime"))
    compiled = load_compiled(result)
    got = np.stack([np.asarray(compiled(x)[0]).reshape(want.shape[1:]) for x in xs])
    assert result.plan["float_scratch_bytes"] == 0
    assert np.array_equal(got, want), f"{np.count_nonzero(got != want)} of {want.size} codes differ"
