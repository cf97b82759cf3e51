"""Requantization rounding modes (`requant-rounding`, `zant compile --requant-rounding`): each
mode gives its runtime's codes byte for byte.

* `onnxruntime`: compiled QDQ models against onnxruntime's default (optimized) session, which
  fuses uint8 DQ → Conv / MatMul → Q into QLinearConv / QLinearMatMul and int8 DQ → Add → Q into
  QLinearAdd (asserted: the comparison is with its integer kernels), on random inputs of
  several seeds and on inputs built to land on near-ties (scale 0.1: x · 0.1 rounds to a half
  in float32 where the exact value is just above it).
* `tflite`, `tflite-single`: against TFLite's reference arithmetic written here in NumPy from
  its published semantics (QuantizeMultiplier, SaturatingRoundingDoublingHighMul,
  RoundingDivideByPOT or, built with TFLITE_SINGLE_ROUNDING, one rounding shift; the int8 Add's
  20-bit left shift); tensorflow itself is not installed in the test environment (the MLPerf
  Tiny comparison with LiteRT's reference kernels is docs/int8.md's).
* `exact` (the default) differs from onnxruntime at those near-ties: the modes are not the same
  code. The interpreter's reference follows each mode (`check_each_pass` from the first pass).
"""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import zant
from zant.driver import make_context
from zant.frontend.onnx_importer import import_model_bytes
from zant.interpreter import check_each_pass
from zant.pipelines import pipeline_for
from zant.plugins import all_passes

ort = pytest.importorskip("onnxruntime")

SEEDS = (0, 1, 2)


# ---------------------------------------------------------------------------------------------
# Models: QDQ as onnxruntime's quantizer writes them
# ---------------------------------------------------------------------------------------------


def _model(nodes, inputs, output, initializers) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, [output], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _tensor(name: str, value) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def conv_model(x_scale, w_scales, y_scale, weights, bias, x_zp=128, y_zp=128):
    """uint8 x (NCHW 8x8, pads 1) → DQ → Conv (int8 weights per output channel, int32 bias) → Q uint8."""
    m, c = weights.shape[:2]
    w_scales = np.asarray(w_scales, np.float32)
    inits = [
        _tensor("xs", np.float32(x_scale)), _tensor("xzp", np.uint8(x_zp)),
        _tensor("ys", np.float32(y_scale)), _tensor("yzp", np.uint8(y_zp)),
        _tensor("w", weights.astype(np.int8)), _tensor("ws", w_scales), _tensor("wzp", np.zeros(m, np.int8)),
        _tensor("b", bias.astype(np.int32)), _tensor("bs", (np.float32(x_scale) * w_scales).astype(np.float32)),
        _tensor("bzp", np.zeros(m, np.int32)),
    ]
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "xs", "xzp"], ["xf"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wzp"], ["wf"], axis=0),
        helper.make_node("DequantizeLinear", ["b", "bs", "bzp"], ["bf"], axis=0),
        helper.make_node("Conv", ["xf", "wf", "bf"], ["yf"], pads=[1, 1, 1, 1], kernel_shape=list(weights.shape[2:])),
        helper.make_node("QuantizeLinear", ["yf", "ys", "yzp"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.UINT8, [1, c, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.UINT8, [1, m, 8, 8])
    return _model(nodes, [x], y, inits)


def matmul_model(x_scale, w_scale, y_scale, weights, x_zp=128, y_zp=128):
    """uint8 x [4, K] → DQ → MatMul (int8 weights [K, N], per tensor) → Q uint8."""
    k, n = weights.shape
    inits = [
        _tensor("xs", np.float32(x_scale)), _tensor("xzp", np.uint8(x_zp)),
        _tensor("ys", np.float32(y_scale)), _tensor("yzp", np.uint8(y_zp)),
        _tensor("w", weights.astype(np.int8)), _tensor("ws", np.float32(w_scale)), _tensor("wzp", np.int8(0)),
    ]
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "xs", "xzp"], ["xf"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wzp"], ["wf"]),
        helper.make_node("MatMul", ["xf", "wf"], ["yf"]),
        helper.make_node("QuantizeLinear", ["yf", "ys", "yzp"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.UINT8, [4, k])
    y = helper.make_tensor_value_info("y", TensorProto.UINT8, [4, n])
    return _model(nodes, [x], y, inits)


def add_model(scales, zero_points, b_shape=(1, 4, 6, 8)):
    """int8 a [1, 4, 6, 8] and b (`b_shape`, broadcast) → DQ → Add → Q int8."""
    (a_s, b_s, c_s), (a_zp, b_zp, c_zp) = scales, zero_points
    inits = [
        _tensor("as", np.float32(a_s)), _tensor("azp", np.int8(a_zp)), _tensor("bs", np.float32(b_s)),
        _tensor("bzp", np.int8(b_zp)), _tensor("cs", np.float32(c_s)), _tensor("czp", np.int8(c_zp)),
    ]
    nodes = [
        helper.make_node("DequantizeLinear", ["a", "as", "azp"], ["af"]),
        helper.make_node("DequantizeLinear", ["b", "bs", "bzp"], ["bf"]),
        helper.make_node("Add", ["af", "bf"], ["cf"]),
        helper.make_node("QuantizeLinear", ["cf", "cs", "czp"], ["c"]),
    ]
    a = helper.make_tensor_value_info("a", TensorProto.INT8, [1, 4, 6, 8])
    b = helper.make_tensor_value_info("b", TensorProto.INT8, list(b_shape))
    c = helper.make_tensor_value_info("c", TensorProto.INT8, [1, 4, 6, 8])
    return _model(nodes, [a, b], c, inits)


def fully_connected_model(seed: int):
    """int8 x [2, 16] → DQ → MatMul (int8 weights [16, 6]) → Add (an int32 bias behind DQ) → Q
    int8: TFLite's FULLY_CONNECTED as tf2onnx writes it (`fold-qdq` makes a 1×1 QLinearConv
    between Reshapes)."""
    r = np.random.default_rng(seed)
    x_scale, w_scale, y_scale = np.float32(r.uniform(0.01, 0.05)), np.float32(r.uniform(0.002, 0.02)), np.float32(r.uniform(0.05, 0.2))
    inits = [
        _tensor("xs", x_scale), _tensor("xzp", np.int8(r.integers(-20, 20))), _tensor("ys", y_scale),
        _tensor("yzp", np.int8(r.integers(-20, 20))), _tensor("w", r.integers(-127, 128, (16, 6)).astype(np.int8)),
        _tensor("ws", w_scale), _tensor("wzp", np.int8(0)), _tensor("b", r.integers(-3000, 3000, 6).astype(np.int32)),
        _tensor("bs", np.float32(x_scale * w_scale)), _tensor("bzp", np.int32(0)),
    ]
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "xs", "xzp"], ["xf"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wzp"], ["wf"]),
        helper.make_node("DequantizeLinear", ["b", "bs", "bzp"], ["bf"]),
        helper.make_node("MatMul", ["xf", "wf"], ["mf"]),
        helper.make_node("Add", ["mf", "bf"], ["yf"]),
        helper.make_node("QuantizeLinear", ["yf", "ys", "yzp"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.INT8, [2, 16])
    y = helper.make_tensor_value_info("y", TensorProto.INT8, [2, 6])
    return _model(nodes, [x], y, inits)


def tfl_fully_connected(model: onnx.ModelProto, x: np.ndarray, single: bool) -> np.ndarray:
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    acc = (x.astype(np.int64) - int(init["xzp"])) @ init["w"].astype(np.int64) + init["b"].astype(np.int64)
    q, e = tfl_quantize_multiplier(float(init["xs"]) * float(init["ws"]) / float(init["ys"]))
    out = np.vectorize(lambda v: tfl_multiply(int(v), q, e, single))(acc)
    return np.clip(out + int(init["yzp"]), -128, 127).astype(np.int8)


def mul_model(seed: int, b_shape=(1, 4, 6, 8)):
    """int8 a [1, 4, 6, 8], b (`b_shape`) → DQ → Mul → Q int8 (`fold-qdq` makes a QLinearMul)."""
    model = random_add(seed, b_shape)
    model.graph.node[2].op_type = "Mul"
    return model


def tfl_mul(model: onnx.ModelProto, a: np.ndarray, b: np.ndarray, single: bool = False) -> np.ndarray:
    """TFLite's reference int8 Mul: (a - za)(b - zb) by the double a_scale · b_scale / c_scale."""
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    q, e = tfl_quantize_multiplier(float(init["as"]) * float(init["bs"]) / float(init["cs"]))
    product = (a.astype(np.int64) - int(init["azp"])) * (b.astype(np.int64) - int(init["bzp"]))
    out = np.vectorize(lambda v: tfl_multiply(int(v), q, e, single))(product)
    return np.clip(out + int(init["czp"]), -128, 127).astype(np.int8)


def random_conv(seed: int):
    r = np.random.default_rng(seed)
    weights = r.integers(-127, 128, (6, 5, 3, 3))
    return conv_model(
        r.uniform(0.005, 0.05), r.uniform(0.001, 0.02, 6), r.uniform(0.05, 0.3), weights,
        r.integers(-3000, 3000, 6), int(r.integers(100, 150)), int(r.integers(100, 150)),
    )


def tie_conv():
    """x_scale 0.1, weights 0/1, y_scale 1: a sum s gives s · 0.1 exactly 0.1000000015·s but
    float32(s) · 0.1f rounds to k + 0.5 for every s ≡ 5 (mod 10) below ~2^20 / 10."""
    weights = np.zeros((4, 5, 3, 3), np.int64)
    weights[:, :, 1, 1] = 1
    weights[1, :, 0, 0] = 1
    return conv_model(0.1, [1.0, 1.0, 0.5, 2.0], 1.0, weights, np.array([0, 5, -5, 15]), x_zp=0, y_zp=128)


def random_matmul(seed: int):
    r = np.random.default_rng(seed)
    return matmul_model(r.uniform(0.005, 0.05), r.uniform(0.001, 0.02), r.uniform(0.05, 0.3),
                        r.integers(-127, 128, (16, 5)), int(r.integers(100, 150)), int(r.integers(100, 150)))


def tie_matmul():
    return matmul_model(0.1, 1.0, 1.0, np.eye(16, 5, dtype=np.int64) + np.eye(16, 5, -5, dtype=np.int64), x_zp=0)


def tie_rows() -> np.ndarray:
    """Inputs of `tie_matmul` whose sums are 5, 25, 45 … (x · 0.1 on a half with an even floor:
    float32 rounds them down to it, the exact value lies just above)."""
    x = np.zeros((4, 16), np.uint8)
    for i in range(4):
        for j in range(5):
            x[i, j] = 5 + 20 * ((i * 5 + j) % 12)
    return x


def random_add(seed: int, b_shape=(1, 4, 6, 8)):
    r = np.random.default_rng(seed)
    return add_model(tuple(r.uniform(0.01, 0.1, 3)), tuple(int(v) for v in r.integers(-20, 20, 3)), b_shape)


def random_inputs(model: onnx.ModelProto, seed: int, low: int | None = None, high: int | None = None):
    r = np.random.default_rng(1000 + seed)
    feeds = {}
    for value in model.graph.input:
        dtype = helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        info = np.iinfo(dtype)
        feeds[value.name] = r.integers(info.min if low is None else low, (info.max if high is None else high) + 1, shape).astype(dtype)
    return feeds


# ---------------------------------------------------------------------------------------------
# The references
# ---------------------------------------------------------------------------------------------


def onnxruntime_run(model: onnx.ModelProto, feeds, fused: str) -> np.ndarray:
    """onnxruntime's default session, after asserting its optimizer made the `fused` kernel."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    optimized = ort.SessionOptions()
    optimized.log_severity_level = 3
    optimized.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".onnx") as saved:
        optimized.optimized_model_filepath = saved.name
        ort.InferenceSession(model.SerializeToString(), optimized, providers=["CPUExecutionProvider"])
        ops = [n.op_type for n in onnx.load(saved.name).graph.node]
    assert fused in ops, f"onnxruntime did not fuse the QDQ pattern into {fused}: {ops}"
    return session.run(None, feeds)[0]


def tfl_quantize_multiplier(real: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplier: significand rounded half away from zero to Q31, exponent."""
    if real == 0:
        return 0, 0
    significand, exponent = math.frexp(real)
    q = int(round(significand * (1 << 31)))  # never a tie at this precision for these ratios
    if q == 1 << 31:
        q //= 2
        exponent += 1
    return (0, 0) if exponent < -31 else (q, exponent)


def tfl_multiply(x: int, q: int, shift: int, single: bool = False) -> int:
    """MultiplyByQuantizedMultiplier on Python ints, written as TFLite's C code reads (`single`:
    its TFLITE_SINGLE_ROUNDING form)."""
    if single:
        total_shift = 31 - shift
        return (x * q + (1 << (total_shift - 1))) >> total_shift
    left, right = max(shift, 0), max(-shift, 0)
    x = ((x * (1 << left) + 2**31) % 2**32) - 2**31
    ab = x * q
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    high = int((ab + nudge) / (1 << 31)) if abs(ab) < 2**52 else (ab + nudge) // (1 << 31)
    mask = (1 << right) - 1
    remainder = high & mask
    threshold = (mask >> 1) + (1 if high < 0 else 0)
    return (high >> right) + (1 if remainder > threshold else 0)


def tfl_conv(model: onnx.ModelProto, x: np.ndarray, single: bool = False) -> np.ndarray:
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    w = init["w"].astype(np.int64)
    xi = np.pad(x.astype(np.int64) - int(init["xzp"]), [(0, 0), (0, 0), (1, 1), (1, 1)])
    acc = np.zeros((1, w.shape[0], 8, 8), np.int64)
    for i in range(w.shape[2]):
        for j in range(w.shape[3]):
            acc += np.einsum("nchw,mc->nmhw", xi[:, :, i:i + 8, j:j + 8], w[:, :, i, j])
    acc += init["b"].astype(np.int64).reshape(1, -1, 1, 1)
    out = np.empty_like(acc)
    for m in range(w.shape[0]):
        real = float(init["xs"]) * float(init["ws"][m]) / float(init["ys"])
        q, e = tfl_quantize_multiplier(real)
        out[:, m] = np.vectorize(lambda v: tfl_multiply(int(v), q, e, single))(acc[:, m])
    return np.clip(out + int(init["yzp"]), 0, 255).astype(np.uint8)


def tfl_matmul(model: onnx.ModelProto, x: np.ndarray, single: bool = False) -> np.ndarray:
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    acc = (x.astype(np.int64) - int(init["xzp"])) @ init["w"].astype(np.int64)
    q, e = tfl_quantize_multiplier(float(init["xs"]) * float(init["ws"]) / float(init["ys"]))
    out = np.vectorize(lambda v: tfl_multiply(int(v), q, e, single))(acc)
    return np.clip(out + int(init["yzp"]), 0, 255).astype(np.uint8)


def tfl_add(model: onnx.ModelProto, a: np.ndarray, b: np.ndarray, single: bool = False) -> np.ndarray:
    """TFLite's reference int8 Add (left shift 20; input multipliers over twice the larger scale)."""
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    sa, sb, sc = (float(init[n]) for n in ("as", "bs", "cs"))
    twice = 2 * max(sa, sb)
    (qa, ea), (qb, eb), (qc, ec) = (tfl_quantize_multiplier(r) for r in (sa / twice, sb / twice, twice / ((1 << 20) * sc)))
    a, b = np.broadcast_arrays(a.astype(np.int64) - int(init["azp"]), b.astype(np.int64) - int(init["bzp"]))

    def one(va, vb):
        total = tfl_multiply(int(va) * (1 << 20), qa, ea, single) + tfl_multiply(int(vb) * (1 << 20), qb, eb, single)
        return tfl_multiply(total, qc, ec, single) + int(init["czp"])

    return np.clip(np.vectorize(one)(a, b), -128, 127).astype(np.int8)


def exact_matmul(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    """ONNX's definition in exact arithmetic: round half to even of sum · x_scale · w_scale / y_scale."""
    from fractions import Fraction

    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    acc = (x.astype(np.int64) - int(init["xzp"])) @ init["w"].astype(np.int64)
    ratio = Fraction(float(init["xs"])) * Fraction(float(init["ws"])) / Fraction(float(init["ys"]))
    out = np.vectorize(lambda v: round(int(v) * ratio))(acc)  # Python's round: half to even
    return np.clip(out + int(init["yzp"]), 0, 255).astype(np.uint8)


def compiled(model: onnx.ModelProto, mode: str, feeds) -> np.ndarray:
    built = zant.compile(model, requant_rounding=mode, optimize="ReleaseSafe")
    return next(iter(built.predict(feeds).values()))


def check_interpreter(model: onnx.ModelProto, mode: str) -> None:
    """The interpreter's reference (the mode's arithmetic) equals every pass's module."""
    ctx = make_context()
    module = import_model_bytes(model.SerializeToString(), ".")
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    spec = pipeline_for("cortex-m4", rounding=mode)
    check_each_pass(module, PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, spec).passes, ctx)


# ---------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_onnxruntime_mode_equals_onnxruntime_qlinear_conv(seed):
    model = random_conv(seed)
    feeds = random_inputs(model, seed)
    want = onnxruntime_run(model, feeds, "QLinearConv")
    np.testing.assert_array_equal(compiled(model, "onnxruntime", feeds), want)


def test_onnxruntime_mode_at_near_ties():
    """Inputs whose sums land on float32 halves: onnxruntime's codes, not the exact ones."""
    model = tie_conv()
    feeds = random_inputs(model, 0, 0, 12)
    want = onnxruntime_run(model, feeds, "QLinearConv")
    got = compiled(model, "onnxruntime", feeds)
    np.testing.assert_array_equal(got, want)
    exact = compiled(model, "exact", feeds)
    assert (exact != want).sum() >= 5, "the near-tie inputs should separate the exact rounding from onnxruntime's"

    model = tie_matmul()
    feeds = {"x": tie_rows()}
    want = onnxruntime_run(model, feeds, "QLinearMatMul")
    np.testing.assert_array_equal(compiled(model, "onnxruntime", feeds), want)
    exact = compiled(model, "exact", feeds)
    np.testing.assert_array_equal(exact, exact_matmul(model, feeds["x"]))
    assert (exact != want).all()


@pytest.mark.parametrize("seed", SEEDS)
def test_onnxruntime_mode_equals_onnxruntime_qlinear_matmul(seed):
    model = random_matmul(seed)
    feeds = random_inputs(model, seed)
    np.testing.assert_array_equal(compiled(model, "onnxruntime", feeds), onnxruntime_run(model, feeds, "QLinearMatMul"))


@pytest.mark.parametrize("b_shape", [(1, 4, 6, 8), (1, 4, 1, 1), (8,)], ids=["same", "per-channel", "last-axis"])
@pytest.mark.parametrize("seed", SEEDS)
def test_onnxruntime_mode_equals_onnxruntime_qlinear_add(seed, b_shape):
    model = random_add(seed, b_shape)
    feeds = random_inputs(model, seed)
    want = onnxruntime_run(model, feeds, "QLinearAdd")
    np.testing.assert_array_equal(compiled(model, "onnxruntime", feeds), want)


@pytest.mark.parametrize("mode", ["tflite", "tflite-single"])
@pytest.mark.parametrize("seed", SEEDS)
def test_tflite_mode_equals_tflite_reference_arithmetic(seed, mode):
    single = mode == "tflite-single"
    model = random_conv(seed)
    feeds = random_inputs(model, seed)
    np.testing.assert_array_equal(compiled(model, mode, feeds), tfl_conv(model, feeds["x"], single))
    model = random_matmul(seed)
    feeds = random_inputs(model, seed)
    np.testing.assert_array_equal(compiled(model, mode, feeds), tfl_matmul(model, feeds["x"], single))
    model = random_add(seed, (1, 4, 1, 1))
    feeds = random_inputs(model, seed)
    np.testing.assert_array_equal(compiled(model, mode, feeds), tfl_add(model, feeds["a"], feeds["b"], single))


def test_litert_rounds_fully_connected_layers_once():
    """`litert`: a FULLY_CONNECTED (MatMul + bias) rounds once, a Conv twice, as LiteRT's
    reference kernels do; M = 0.3 inputs separate the two roundings on every code."""
    model = fully_connected_model(0)
    feeds = random_inputs(model, 0)
    np.testing.assert_array_equal(compiled(model, "litert", feeds), tfl_fully_connected(model, feeds["x"], single=True))
    np.testing.assert_array_equal(compiled(model, "tflite", feeds), tfl_fully_connected(model, feeds["x"], single=False))
    model = matmul_model(0.3, 1.0, 1.0, np.eye(16, 5, dtype=np.int64), x_zp=0)
    x = np.zeros((4, 16), np.uint8)
    x[:, :5] = (1 + 10 * np.arange(20)).reshape(4, 5)
    np.testing.assert_array_equal(compiled(model, "litert", {"x": x}), tfl_matmul(model, x, single=True))
    model = random_conv(1)
    feeds = random_inputs(model, 1)
    np.testing.assert_array_equal(compiled(model, "litert", feeds), tfl_conv(model, feeds["x"]))


@pytest.mark.parametrize("mode", ["tflite", "tflite-single"])
def test_tflite_modes_every_exponent_form(mode):
    """Per-channel multipliers 0.7, 0.3, 1.5 and 0.05 (exponents 0, -1, 1, -4): the right shift
    of 0, the per-channel nudge of the single rounding, and the left shift of M ≥ 1."""
    weights = np.random.default_rng(5).integers(-3, 4, (4, 5, 3, 3))
    model = conv_model(0.1, [0.7, 0.3, 1.5, 0.05], 0.1, weights, np.array([3, -7, 11, -2]), x_zp=120, y_zp=128)
    feeds = random_inputs(model, 5, 100, 140)
    np.testing.assert_array_equal(compiled(model, mode, feeds), tfl_conv(model, feeds["x"], mode == "tflite-single"))


@pytest.mark.parametrize("b_shape", [(1, 4, 6, 8), (1, 4, 1, 1)], ids=["same", "per-channel"])
@pytest.mark.parametrize("seed", SEEDS)
def test_onnxruntime_mode_equals_onnxruntime_qlinear_mul(seed, b_shape):
    model = mul_model(seed, b_shape)
    feeds = random_inputs(model, seed)
    want = onnxruntime_run(model, feeds, "QLinearMul")
    np.testing.assert_array_equal(compiled(model, "onnxruntime", feeds), want)


@pytest.mark.parametrize("seed", SEEDS)
def test_tflite_modes_mul(seed):
    """QLinearMul in the TFLite modes is TFLite's Mul (litert: the same, not a fully connected
    layer)."""
    model = mul_model(seed)
    feeds = random_inputs(model, seed)
    for mode, single in (("tflite", False), ("tflite-single", True), ("litert", False)):
        np.testing.assert_array_equal(compiled(model, mode, feeds), tfl_mul(model, feeds["a"], feeds["b"], single))


def test_tflite_modes_at_ties():
    """TFLite's default build rounds twice (the high multiply, then the shift, ties away from
    zero), its single-rounding build once (ties up): at the scale-0.1 near-ties the two differ
    from each other, and each equals its NumPy form."""
    model = tie_matmul()
    feeds = {"x": tie_rows()}
    np.testing.assert_array_equal(compiled(model, "tflite", feeds), tfl_matmul(model, feeds["x"]))
    np.testing.assert_array_equal(compiled(model, "tflite-single", feeds), tfl_matmul(model, feeds["x"], single=True))
    # M = 0.3 (q · 2^-32): x · q / 2^31 = 0.6 for x = 1 rounds to 1 first, then 1 / 2 away from
    # zero to 1; once, 0.3 rounds to 0. Every x = 1 + 10k lands so (0.3, 3.3, 6.3 ...).
    model = matmul_model(0.3, 1.0, 1.0, np.eye(16, 5, dtype=np.int64), x_zp=0)
    x = np.zeros((4, 16), np.uint8)
    x[:, :5] = (1 + 10 * np.arange(20)).reshape(4, 5)
    double, single = (compiled(model, mode, {"x": x}) for mode in ("tflite", "tflite-single"))
    np.testing.assert_array_equal(double, tfl_matmul(model, x))
    np.testing.assert_array_equal(single, tfl_matmul(model, x, single=True))
    assert (double.astype(int) - single == 1).all()
    model = tie_conv()
    feeds = random_inputs(model, 1, 0, 12)
    np.testing.assert_array_equal(compiled(model, "tflite", feeds), tfl_conv(model, feeds["x"]))
    np.testing.assert_array_equal(compiled(model, "tflite-single", feeds), tfl_conv(model, feeds["x"], single=True))


def pool_model(zero_point: int = -3):
    """int8 x [1, 64, 2, 2] → DQ → GlobalAveragePool → Q with the same parameters (as TFLite's
    AVERAGE_POOL_2D requires): a sum of 4 codes, a tie whenever it is 2 mod 4."""
    inits = [_tensor("s", np.float32(0.125)), _tensor("z", np.int8(zero_point))]
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xf"]),
        helper.make_node("GlobalAveragePool", ["xf"], ["p"]),
        helper.make_node("QuantizeLinear", ["p", "s", "z"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.INT8, [1, 64, 2, 2])
    y = helper.make_tensor_value_info("y", TensorProto.INT8, [1, 64, 1, 1])
    return _model(nodes, [x], y, inits)


def tfl_average(x: np.ndarray) -> np.ndarray:
    """TFLite's reference int8 average pool: the raw sum over the count, C's rounding of
    (sum ± count/2) / count (half away from zero)."""
    n = x.shape[2] * x.shape[3]
    total = x.astype(np.int64).sum(axis=(2, 3), keepdims=True)
    rounded = np.vectorize(lambda v: int((v + n // 2) / n) if v > 0 else -int((-v + n // 2) / n))(total)
    return np.clip(rounded, -128, 127).astype(np.int8)


@pytest.mark.parametrize("seed", SEEDS)
def test_tflite_modes_average_pool(seed):
    """The TFLite modes round a pool's ties away from zero on the raw sum; exact to even."""
    model = pool_model()
    feeds = random_inputs(model, seed)
    want = tfl_average(feeds["x"])
    for mode in ("tflite", "tflite-single"):
        np.testing.assert_array_equal(compiled(model, mode, feeds), want)
    assert (compiled(model, "exact", feeds) != want).any()


@pytest.mark.parametrize("mode", ["onnxruntime", "tflite", "tflite-single"])
def test_interpreter_follows_the_mode(mode):
    """check_each_pass from the first pass: the onnx-level reference computes the mode's codes,
    which every later pass (the lowering's integer or float32 steps) keeps."""
    check_interpreter(random_conv(0), mode)
    check_interpreter(random_add(0, (1, 4, 1, 1)), mode)
    check_interpreter(pool_model(), mode)
    check_interpreter(mul_model(0), mode)


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m0plus"])
def test_onnxruntime_mode_on_the_microcontroller(target):
    """Firmware under QEMU: the float32 steps are IEEE on the M4's FPU and in the M0+'s soft
    float alike, so the near-tie conv gives onnxruntime's codes on both."""
    from zant.backend.boards import BOARDS, board_for
    from zant.backend.firmware import qemu_missing

    missing = qemu_missing(BOARDS[board_for(target, None).name])
    if missing:
        pytest.skip(missing)
    model = tie_conv()
    feeds = random_inputs(model, 0, 0, 12)
    want = onnxruntime_run(model, feeds, "QLinearConv")
    built = zant.compile(model, target=target, requant_rounding="onnxruntime", inputs=feeds)
    got = next(iter(built.run_firmware().outputs.values()))
    np.testing.assert_array_equal(got.reshape(want.shape), want)


def test_an_mcu_model_predicts_on_the_host_in_its_rounding_mode():
    """`Model.predict` of a Cortex-M4 model builds its pipeline for the host: the rounding stage
    comes with it (it was refused as `--requant-rounding` beside a `--pipeline`), and the codes
    are onnxruntime's, as the onnxruntime mode makes them on every core."""
    from pathlib import Path

    path = Path(__file__).resolve().parent / "data" / "qoperator_uint8.onnx"
    model = zant.compile(path, target="cortex-m4", requant_rounding="onnxruntime", firmware=False)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for seed in range(2):
        x = np.random.default_rng(seed).standard_normal((1, 3, 8, 8)).astype(np.float32)
        (want,) = session.run(None, {"x": x})
        np.testing.assert_array_equal(model.predict(x=x)["y"], want)
