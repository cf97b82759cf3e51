"""Reductions and global pools on 8- and 16-bit data stay integer (issue 30 item 1).

DequantizeLinear → ReduceMean / ReduceSum / ReduceMax / ReduceMin / GlobalAveragePool /
GlobalMaxPool → QuantizeLinear, over any constant axes, keepdims 0 or 1, axes as an attribute
(opset 13) or an input (opset 18 on), int8 and uint8, int16 and uint16 (opset 21). In exact
arithmetic the chain is

* a mean or sum: y = saturate(round_half_even(S · x_scale / (y_scale · N)) + y_zp), S the int32
  sum of x - x_zp over the N reduced elements (N = 1 for a sum);
* a max or min: y = saturate(round_half_even((m - x_zp) · x_scale / y_scale) + y_zp), m the
  integer max / min (plain m when the parameters are equal).

`fold-qdq` folds each into integer ops (a window sum requantized once, or the op on the 8-bit
tensor), so the compiled model has no float scratch and gives exactly those codes, through the
host and the Cortex-M4 pipelines. onnxruntime evaluates the chain in float32: equal where the
scales make it exact (powers of two; those branches tie, and it rounds them to even too), else
within 1 LSB. Then onnxruntime's own `quantize_static` of a squeeze-excitation block (timm's
`x.mean((2, 3), keepdim=True)`) and of a Conv1d keyword model (`x.mean(-1)`): no float op is
left, and the Cortex-M4 firmware under QEMU equals the host build.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zant.driver import CompileOptions, compile_model
from zant.passes.fold_qdq import unfolded_ops
from zant.pipelines import pipeline_for
from zant.runtime import load_compiled

ort = pytest.importorskip("onnxruntime")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import GraphBuilder, calibration_inputs, quantize  # noqa: E402
from test_int8 import PIPELINE, folded, onnxruntime_session  # noqa: E402

TYPES = {
    "i8": (TensorProto.INT8, np.int8), "u8": (TensorProto.UINT8, np.uint8),
    "i16": (TensorProto.INT16, np.int16), "u16": (TensorProto.UINT16, np.uint16),
}


def zero_shift(dtype) -> int:
    """What the zero points of an unsigned type add to the signed ones the branches give."""
    return 0 if np.iinfo(dtype).min else 1 << (np.iinfo(dtype).bits - 1)
SUMS = ("ReduceMean", "ReduceSum", "GlobalAveragePool")


@dataclass(frozen=True)
class Branch:
    """One DQ → op → Q chain on its own input. Zero points are given for int8 and shifted by
    128 for uint8; `exact_in_float`: onnxruntime's float32 evaluation is exact (power-of-two
    scales, sums of few terms), so it must equal the exact codes."""

    name: str
    op: str
    shape: tuple[int, ...]
    axes: tuple[int, ...] | None
    keepdims: int
    x_params: tuple[float, int]
    y_params: tuple[float, int]
    exact_in_float: bool = False

    def reduced(self) -> tuple[int, ...]:
        rank = len(self.shape)
        if self.op.startswith("Global"):
            return tuple(range(2, rank))
        return tuple(range(rank)) if self.axes is None else tuple(sorted(a % rank for a in self.axes))

    def keeps(self) -> bool:
        return self.op.startswith("Global") or bool(self.keepdims)

    def out_shape(self) -> list[int]:
        reduced = self.reduced()
        if self.keeps():
            return [1 if d in reduced else n for d, n in enumerate(self.shape)]
        return [n for d, n in enumerate(self.shape) if d not in reduced]

    def integers(self, x: np.ndarray, dtype) -> tuple[np.ndarray, Fraction]:
        """(v, R) with y = saturate(round_half_even(v · R) + y_zp): v the sum of x - x_zp (a
        mean's R divided by the count) or its max / min, R from the f32 scales exactly."""
        xs, xz = self.x_params[0], self.x_params[1] + zero_shift(dtype)
        ratio = Fraction(float(np.float32(xs))) / Fraction(float(np.float32(self.y_params[0])))
        centered = x.astype(np.int64) - xz
        axes = self.reduced()
        if self.op in SUMS:
            if self.op != "ReduceSum":
                ratio /= int(np.prod([self.shape[a] for a in axes]))
            return centered.sum(axis=axes, keepdims=self.keeps()), ratio
        extreme = np.max if self.op in ("ReduceMax", "GlobalMaxPool") else np.min
        return extreme(centered, axis=axes, keepdims=self.keeps()), ratio

    def exact(self, x: np.ndarray, dtype) -> np.ndarray:
        """The exact-arithmetic codes of the chain on the integer input x."""
        values, ratio = self.integers(x, dtype)
        yz, info = self.y_params[1] + zero_shift(dtype), np.iinfo(dtype)
        codes = [min(max(round(int(v) * ratio) + yz, int(info.min)), int(info.max)) for v in values.reshape(-1)]
        return np.array(codes, dtype).reshape(values.shape)

    def ties(self, x: np.ndarray, dtype) -> int:
        """How many outputs are exactly halfway between two codes before rounding."""
        values, ratio = self.integers(x, dtype)
        return sum((int(v) * ratio - Fraction(1, 2)).denominator == 1 for v in values.reshape(-1))


REAL = (0.05, 3), (0.04, -2)  # the scale ratio 1.25 as f32 values: no power of two
BRANCHES = [
    Branch("se_mean", "ReduceMean", (1, 16, 6, 6), (2, 3), 1, *REAL),  # timm's squeeze-excitation
    Branch("kws_mean", "ReduceMean", (1, 12, 25), (-1,), 0, *REAL),  # a Conv1d model's x.mean(-1)
    Branch("channel_sum", "ReduceSum", (1, 8, 4, 4), (1,), 1, (0.05, 3), (0.2, -5)),
    Branch("two_axes_mean", "ReduceMean", (1, 6, 4, 5), (1, 3), 0, *REAL),  # a transposed 2-D window
    Branch("batch_mean", "ReduceMean", (2, 3, 4, 5), (1,), 1, *REAL),  # three kept axes: a copy
    Branch("all_mean", "ReduceMean", (3, 4, 5), None, 0, *REAL),
    Branch("big_sum", "ReduceSum", (1, 2, 32, 32), (2, 3), 0, (0.05, 3), (3.0, 1)),  # 1,024 terms
    Branch("max_other", "ReduceMax", (1, 8, 4, 4), (1,), 0, *REAL),
    Branch("min_same", "ReduceMin", (1, 8, 4, 4), (2, 3), 1, (0.05, 3), (0.05, 3)),
    Branch("global_max_other", "GlobalMaxPool", (1, 8, 5, 5), None, 1, *REAL),
    Branch("global_average", "GlobalAveragePool", (1, 8, 5, 5), None, 1, *REAL),
    # Power-of-two scales: onnxruntime exact, and sums over 4 (or halved) tie often.
    Branch("tie_mean", "ReduceMean", (1, 16, 2, 2), (2, 3), 1, (2**-4, 3), (2**-4, -1), exact_in_float=True),
    Branch("tie_sum", "ReduceSum", (1, 8, 6), (-1,), 0, (2**-4, 3), (2**-2, 0), exact_in_float=True),
    Branch("tie_max", "ReduceMax", (2, 6), (0,), 1, (2**-4, 3), (2**-3, 1), exact_in_float=True),
]


def power_of_two(b: Branch) -> Branch:
    """`b` with its scales rounded to powers of two: float32 then evaluates the chain exactly."""
    x, y = ((2.0 ** round(math.log2(s)), z) for s, z in (b.x_params, b.y_params))
    return replace(b, x_params=x, y_params=y, exact_in_float=True)


def reduction_model(kind: str, opset: int, branches: list[Branch] = BRANCHES) -> onnx.ModelProto:
    """Every branch on `kind` inputs; below opset 18 the axes of ReduceMean/Max/Min are an
    attribute (ReduceSum's an input since 13)."""
    element, dtype = TYPES[kind]
    shift = zero_shift(dtype)
    nodes, inits, inputs, outputs = [], [], [], []
    for b in branches:
        params = {}
        for role, (scale, zero_point) in (("x", b.x_params), ("y", b.y_params)):
            params[role] = [f"{b.name}_{role}_s", f"{b.name}_{role}_z"]
            inits += [numpy_helper.from_array(np.array(scale, np.float32), params[role][0]),
                      numpy_helper.from_array(np.array(zero_point + shift, dtype), params[role][1])]
        nodes.append(helper.make_node("DequantizeLinear", [b.name, *params["x"]], [f"{b.name}_f"]))
        operands, attributes = [f"{b.name}_f"], {}
        if not b.op.startswith("Global"):
            attributes["keepdims"] = b.keepdims
            if b.axes is not None:
                if b.op == "ReduceSum" or opset >= 18:
                    inits.append(numpy_helper.from_array(np.array(b.axes, np.int64), f"{b.name}_axes"))
                    operands.append(f"{b.name}_axes")
                else:
                    attributes["axes"] = list(b.axes)
        nodes.append(helper.make_node(b.op, operands, [f"{b.name}_r"], **attributes))
        nodes.append(helper.make_node("QuantizeLinear", [f"{b.name}_r", *params["y"]], [f"{b.name}_y"]))
        inputs.append(helper.make_tensor_value_info(b.name, element, list(b.shape)))
        outputs.append(helper.make_tensor_value_info(f"{b.name}_y", element, b.out_shape()))
    graph = helper.make_graph(nodes, f"reductions_{kind}", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model, full_check=True)
    return model


@cache
def feeds(kind: str) -> list[dict[str, np.ndarray]]:
    """Four inputs per branch over the type's whole range; 16-bit ones also within ±3,000 of
    the zero points (whose sums do not saturate)."""
    dtype = TYPES[kind][1]
    info = np.iinfo(dtype)
    rng = np.random.default_rng(30)
    ranges = [(int(info.min), int(info.max) + 1)] * 4
    if info.bits == 16:
        ranges[1:] = [(zero_shift(dtype) - 3000, zero_shift(dtype) + 3000)] * 3
    return [{b.name: rng.integers(*r, b.shape).astype(dtype) for b in BRANCHES} for r in ranges]


def compiled_outputs(model: onnx.ModelProto, kind: str, folder: Path, pipeline: str) -> tuple[dict, list[list[np.ndarray]]]:
    onnx.save(model, folder / "reductions.onnx")
    options = CompileOptions(name="reductions", optimize="ReleaseSafe", pipeline=None if pipeline == "host" else pipeline_for(pipeline))
    result = compile_model(folder / "reductions.onnx", folder / "out", options)
    run = load_compiled(result)
    return result.plan, [run(*(feed[s.name] for s in result.inputs)) for feed in feeds(kind)]


@pytest.mark.parametrize(("kind", "opset"), [("i8", 13), ("i8", 19), ("u8", 13), ("u8", 19), ("i16", 21), ("u16", 21)])
def test_reductions_fold_to_integer_ops(tmp_path, kind, opset):
    module = folded(reduction_model(kind, opset), tmp_path)
    assert not unfolded_ops(module), [op.name for op in unfolded_ops(module)]
    names = [op.name for op in module.walk()]
    assert "onnx.DequantizeLinear" not in names and "onnx.QuantizeLinear" not in names
    assert not {"onnx.ReduceMean", "onnx.ReduceSum", "onnx.GlobalAveragePool"} & set(names)
    # One window sum per mean or sum, and one (of single elements) per max / min requantized.
    requantized = sum(b.op in SUMS or b.x_params != b.y_params for b in BRANCHES)
    assert names.count("onnx.QLinearConv") == requantized
    assert "onnx.QLinearLeakyRelu" not in names  # its requantization rounds ties up


@pytest.mark.parametrize(
    ("kind", "pipeline", "opset"),
    [("i8", "host", 19), ("u8", "cortex-m4", 13), ("i16", "host", 21), ("u16", "cortex-m4", 21)],
)
def test_reductions_equal_the_exact_codes(tmp_path, kind, pipeline, opset):
    """No float scratch; every output equals the exact-arithmetic model, ties included; and
    onnxruntime (running the graph as written) equal on the power-of-two branches, within 1
    LSB elsewhere."""
    model = reduction_model(kind, opset)
    plan, runs = compiled_outputs(model, kind, tmp_path, pipeline)
    assert plan["float_scratch_bytes"] == 0
    dtype = TYPES[kind][1]
    session = onnxruntime_session(model, optimized=False)
    ties = {True: 0, False: 0}
    for feed, outputs in zip(feeds(kind), runs, strict=True):
        references = session.run(None, feed)
        for b, got, theirs in zip(BRANCHES, outputs, references, strict=True):
            want = b.exact(feed[b.name], dtype)
            np.testing.assert_array_equal(got, want, err_msg=f"{b.name} ({kind}, {pipeline}, opset {opset})")
            off = np.abs(got.astype(np.int64) - theirs.astype(np.int64))
            assert off.max() <= (0 if b.exact_in_float else 1), f"{b.name}: {off.max()} LSB from onnxruntime"
            ties[b.exact_in_float] += b.ties(feed[b.name], dtype)
    # Enough outputs sit exactly on a half that rounding them up instead would fail.
    assert ties[True] >= 20 and ties[False] >= 10, f"too few ties to check their rounding: {ties}"


@pytest.mark.parametrize(("kind", "opset"), [("i8", 19), ("u16", 21)])
def test_interpreters_check_every_pass_on_reductions(tmp_path, kind, opset):
    """`check_each_pass` through the Cortex-M4 pipeline, every branch with power-of-two scales
    (so the reference evaluator's float chain is exact): the onnx-level interpreter's window sums
    after fold-qdq equal the float reductions before it, and the uop interpreter the lowered
    kernels after every later pass."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass
    from zant.plugins import all_passes

    onnx.save(reduction_model(kind, opset, [power_of_two(b) for b in BRANCHES]), tmp_path / "reductions.onnx")
    module = import_model(str(tmp_path / "reductions.onnx"))
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline_for("cortex-m4")).passes
    report = check_each_pass(module, passes, make_context(), seed=30)
    assert not report.unchecked, report.notes()
    assert {"fold-qdq", "onnx-to-uop"} <= set(report.checked)


def se_block() -> onnx.ModelProto:
    """A squeeze-excitation block as timm writes it: Conv → ReLU, x.mean((2, 3), keepdim=True)
    (ReduceMean, axes an input), 1×1 reduce → ReLU → 1×1 expand → HardSigmoid, the gate's Mul,
    a 1×1 Conv; 1×3×16×16 → 1×8×8×8."""
    g = GraphBuilder("se_block", seed=7)
    x = g.relu(g.conv("input", 3, 16, 3, stride=2))
    s = g.node("ReduceMean", [x, g.const("axes", np.array([2, 3]), np.int64)], "se_mean", keepdims=1)
    s = g.relu(g.conv(s, 16, 4, 1))
    s = g.node("HardSigmoid", [g.conv(s, 4, 16, 1)], "gate", alpha=1 / 6, beta=0.5)
    x = g.conv(g.node("Mul", [x, s], "se_scale"), 16, 8, 1)
    return g.build([("input", [1, 3, 16, 16])], [(x, "y", [1, 8, 8, 8])], opset=18)


def kws_conv1d() -> onnx.ModelProto:
    """A Conv1d keyword model: two Conv1d → ReLU over 49 frames of 10 MFCCs, x.mean(-1)
    (ReduceMean over the last axis, keepdims 0), a Linear to 12 classes."""
    g = GraphBuilder("kws_conv1d", seed=8)

    def conv1d(x: str, cin: int, cout: int, stride: int = 1) -> str:
        w = g.rng.standard_normal((cout, cin, 3)) * np.sqrt(2.0 / (cin * 3))
        b = g.rng.standard_normal(cout) * 0.05
        return g.node("Conv", [x, g.const("w", w), g.const("b", b)], "conv", kernel_shape=[3], strides=[stride], pads=[1, 1])

    x = g.relu(conv1d(g.relu(conv1d("input", 10, 16, 2)), 16, 16))
    x = g.node("ReduceMean", [x, g.const("axes", np.array([-1]), np.int64)], "mean", keepdims=0)
    return g.build([("input", [1, 10, 49])], [(g.gemm(x, 16, 12), "y", [1, 12])], opset=18)


REAL_MODELS = {"se_block": se_block, "kws_conv1d": kws_conv1d}


@cache
def quantized(name: str, activations: str) -> onnx.ModelProto:
    return quantize(REAL_MODELS[name](), "qdq", per_channel=True, activations=activations)


def output_lsb(model: onnx.ModelProto) -> float:
    producers = {o: n for n in model.graph.node for o in n.output}
    scale = producers[model.graph.output[0].name].input[1]
    return float(numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == scale)))


@pytest.mark.parametrize("activations", ["int8", "uint8"])
@pytest.mark.parametrize("name", REAL_MODELS)
def test_quantize_static_reductions_fold(tmp_path, name, activations):
    """onnxruntime's QDQ quantization keeps the ReduceMean between a DQ and a Q: folded, no
    float op is left, and the host build is within 1 LSB of onnxruntime on seeded inputs."""
    model = quantized(name, activations)
    assert any(n.op_type == "ReduceMean" for n in model.graph.node)
    module = folded(model, tmp_path)
    assert not unfolded_ops(module), [op.name for op in unfolded_ops(module)]
    onnx.save(model, tmp_path / f"{name}.onnx")
    result = compile_model(tmp_path / f"{name}.onnx", tmp_path / "out", CompileOptions(name=name, optimize="ReleaseSafe", pipeline=PIPELINE))
    assert result.plan["float_scratch_bytes"] == 0
    run, session, lsb = load_compiled(result), onnxruntime_session(model, optimized=False), output_lsb(model)
    for feed in calibration_inputs(model, count=4, seed=3):
        (got,), (want,) = run(*(feed[s.name] for s in result.inputs)), session.run(None, feed)
        assert np.max(np.abs(got - want)) <= lsb * 1.001


@pytest.mark.parametrize("name", REAL_MODELS)
def test_qoperator_reductions_fold(tmp_path, name):
    """The QOperator format keeps the ReduceMean between a DequantizeLinear and a
    QuantizeLinear too (onnxruntime has no QLinear form of it): folded alike."""
    model = quantize(REAL_MODELS[name](), "qoperator", per_channel=True, activations="uint8")
    assert any(n.op_type == "ReduceMean" for n in model.graph.node)
    module = folded(model, tmp_path)
    assert not unfolded_ops(module), [op.name for op in unfolded_ops(module)]


def test_squeeze_excitation_runs_as_firmware_on_cortex_m4(tmp_path):
    """The quantize_static SE block as Cortex-M4 firmware under QEMU: no float scratch, the
    output equal to the host build's and within 1 LSB of onnxruntime."""
    from zant.backend.build import BOARDS, DEFAULT_BOARDS
    from zant.backend.firmware import qemu_missing, run_firmware

    missing = qemu_missing(BOARDS[DEFAULT_BOARDS["cortex-m4"]])
    if missing:
        pytest.skip(missing)
    model = quantized("se_block", "int8")
    onnx.save(model, tmp_path / "se.onnx")
    firmware = compile_model(
        tmp_path / "se.onnx", tmp_path / "m4",
        CompileOptions(name="se", target="cortex-m4", optimize="ReleaseSmall", firmware=True, pipeline=PIPELINE),
    )
    assert firmware.plan["float_scratch_bytes"] == 0
    (got,) = run_firmware(firmware.firmware_path, firmware.board, firmware.outputs).outputs
    host = compile_model(tmp_path / "se.onnx", tmp_path / "host", CompileOptions(name="se", optimize="ReleaseSafe", pipeline=PIPELINE))
    (on_host,) = load_compiled(host)(*(firmware.feeds[s.name] for s in host.inputs))
    np.testing.assert_array_equal(got, on_host)
    (want,) = onnxruntime_session(model, optimized=False).run(None, dict(firmware.feeds))
    assert np.max(np.abs(got - want)) <= output_lsb(model) * 1.001
