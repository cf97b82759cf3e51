"""int8 / uint8 average pools round exact ties half to even (issue 26).

A QDQ average pool, DequantizeLinear → AveragePool → QuantizeLinear, computes in exact
arithmetic y = saturate(round_half_even(S · x_scale / (y_scale · count)) + y_zp) with S the sum
of the counted taps' x - x_zp: QuantizeLinear rounds half to even. `fold-qdq` folds it into
integer ops (a window sum requantized by the exact ratio), which must give that code for every
count and every sum, ties included (the kernel rounded them up before).

* `exact_rounding`'s multiply-add-shift form against the round-half-even model (Fraction-based,
  and its integer form checked against it) for every count 1..300 and every sum an int8 or
  uint8 window can give, at several scale ratios;
* small QDQ models with power-of-two scales (so onnxruntime's float32 evaluation of the chain is
  exact and equals the model) on data whose windows tie: 2x2, 3x3, 5x5, 8x8 windows, a global
  pool, padding counted and uncounted (border counts 4, 6, 9), int8 and uint8, compiled through
  the host pipeline and the Cortex-M4 pipeline built for the host, equal to onnxruntime code
  for code;
* MLPerf Tiny's IC model (ResNet-8, an 8x8 pool whose sums tie) equal to onnxruntime on seeded
  inputs, when /work/shared/mlperf_tiny is present.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zant.analysis.rounding import ExactRounding, exact_rounding, exact_roundings, has_ties
from zant.driver import CompileOptions, compile_model
from zant.pipelines import pipeline_for
from zant.runtime import load_compiled

ort = pytest.importorskip("onnxruntime")

TYPES = {"i8": (TensorProto.INT8, np.int8), "u8": (TensorProto.UINT8, np.uint8)}


def round_half_even(value: Fraction) -> int:
    """The nearest integer, ties to even (Python's `round` of a Fraction)."""
    return round(value)


def exact_pool_code(total: int, count: int, ratio: Fraction, zero_point: int, dtype) -> int:
    """What DQ → AveragePool → Q gives in exact arithmetic for a window sum `total` of x - x_zp
    over `count` taps, ratio = x_scale / y_scale."""
    info = np.iinfo(dtype)
    return min(max(round_half_even(total * ratio / count) + zero_point, int(info.min)), int(info.max))


# ---------------------------------------------------------------------------------------------
# The integer form, exhaustively
# ---------------------------------------------------------------------------------------------


def model_codes(totals: np.ndarray, ratio: Fraction) -> np.ndarray:
    """round_half_even(S · P/Q) for int64 sums, in integers: with n = 2SP + Q, the nearest
    integer ties up is floor(n / 2Q), and the tie is n ≡ 0 (mod 2Q), where the odd one steps
    down to its even neighbour."""
    p, q = ratio.numerator, ratio.denominator
    n = 2 * totals * p + q
    up = n // (2 * q)
    return up - ((n % (2 * q) == 0) & (up % 2 == 1))


def kernel_codes(totals: np.ndarray, rounding: ExactRounding) -> np.ndarray:
    """The kernel's arithmetic on the sums, in the width it declares (int32 wraps in NumPy as
    in the kernel, so a form that overflowed would give wrong codes)."""
    dtype = np.int32 if rounding.bits == 32 else np.int64
    x = totals.astype(dtype) * dtype(rounding.multiplier) + dtype(rounding.addend)
    q = (x >> dtype(rounding.shift)).astype(np.int64)
    fraction = (x & dtype((1 << rounding.shift) - 1)).astype(np.int64) if rounding.shift < 64 else x
    return q - ((q % 2 == 1) & (fraction < rounding.tie_below))


RATIOS = {
    "one": Fraction(1),
    "half": Fraction(1, 2),
    "two": Fraction(2),
    "three_quarters": Fraction(3, 4),
    "float32": Fraction(float(np.float32(0.0235))) / Fraction(float(np.float32(0.0173))),
    "float32_small": Fraction(float(np.float32(0.001))) / Fraction(float(np.float32(0.05))),
}


def test_model_codes_are_round_half_even():
    rng = np.random.default_rng(0)
    for ratio in (*RATIOS.values(), Fraction(1, 64), Fraction(5, 6)):
        totals = np.concatenate([np.arange(-300, 301), rng.integers(-80000, 80000, 2000)])
        want = [round_half_even(int(t) * ratio) for t in totals]
        assert model_codes(totals, ratio).tolist() == want


@pytest.mark.parametrize("name", RATIOS)
def test_exact_rounding_every_count_and_sum(name):
    """Every count 1..300 (1..120 off ratio 1), every sum of an 8-bit window of that count for
    input zero points at the bottom, middle and top of the range (int8 and uint8 windows give
    the same sums, shifted by 128 in the zero point)."""
    ratio = RATIOS[name]
    counts = range(1, 301 if name == "one" else 121)
    for count in counts:
        for zero_point in (-128, 0, 127):
            low, high = count * (-128 - zero_point), count * (127 - zero_point)
            rounding = exact_rounding(ratio / count, low, high)
            assert rounding is not None, (name, count, zero_point)
            totals = np.arange(low, high + 1, dtype=np.int64)
            got = kernel_codes(totals, rounding)
            want = model_codes(totals, ratio / count)
            bad = np.flatnonzero(got != want)
            assert not bad.size, f"{name}, count {count}, zp {zero_point}: S = {totals[bad[:5]]} gives {got[bad[:5]]}, not {want[bad[:5]]}"


def test_exact_rounding_prefers_cheap_forms():
    """IC's 8x8 pool (ratio 1, zero point -128): 32-bit, and the tie check kept; KWS's /125 and
    VWW's /9 (odd counts, ratio 1) have no ties, so no tie check; a table over the counts 1..9
    of a padded 3x3 window shares one shift."""
    ic = exact_rounding(Fraction(1, 64), 0, 255 * 64)
    assert ic.bits == 32 and ic.tie_below > 0
    for count in (125, 9):
        rounding = exact_rounding(Fraction(1, count), -128 * count, 127 * count)
        assert rounding.tie_below == 0 and rounding.bits == 32
    table = exact_roundings([(Fraction(1, c), -255 * c, 0) for c in range(1, 10)])
    assert len({r.shift for r in table}) == 1 and len({r.bits for r in table}) == 1
    for count, rounding in zip(range(1, 10), table):
        totals = np.arange(-255 * count, 1, dtype=np.int64)
        np.testing.assert_array_equal(kernel_codes(totals, rounding), model_codes(totals, Fraction(1, count)))
    assert not has_ties(Fraction(1, 4), 3, 5) and has_ties(Fraction(1, 4), 2, 2) and has_ties(Fraction(1, 4), -2, -2)


# ---------------------------------------------------------------------------------------------
# End to end: small QDQ models with tying windows against onnxruntime
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pool:
    """One branch of a test model: x[1, C, H, W] → DQ → pool → Q."""

    name: str
    shape: tuple[int, int, int, int]
    kernel: tuple[int, int] | None  # None: GlobalAveragePool
    x_params: tuple[float, int]
    y_params: tuple[float, int]
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)
    count_include_pad: int = 0
    stride: tuple[int, int] | None = None  # default: 1 with padding, else the kernel
    ceil_mode: int = 0

    @property
    def strides(self) -> tuple[int, int]:
        if self.stride is not None:
            return self.stride
        return (1, 1) if any(self.pads) else self.kernel

    def out_size(self, size: int, axis: int) -> int:
        span = size + self.pads[axis] + self.pads[axis + 2] - self.kernel[axis]
        if not self.ceil_mode:
            return span // self.strides[axis] + 1
        out = -(-span // self.strides[axis]) + 1
        return out - 1 if (out - 1) * self.strides[axis] >= size + self.pads[axis] else out

    def windows(self):
        """(output index, input rows, input columns, count) of every window."""
        _, _, h, w = self.shape
        if self.kernel is None:
            yield (0, 0), range(h), range(w), h * w
            return
        (kh, kw), (sh, sw), (top, left, bottom, right) = self.kernel, self.strides, self.pads
        for oi in range(self.out_size(h, 0)):
            for oj in range(self.out_size(w, 1)):
                r0, c0 = oi * sh - top, oj * sw - left
                rows = range(max(r0, 0), min(r0 + kh, h))
                cols = range(max(c0, 0), min(c0 + kw, w))
                count = kh * kw if self.count_include_pad else len(rows) * len(cols)
                yield (oi, oj), rows, cols, count

    @property
    def window_sum(self) -> bool:
        """fold-qdq makes a QLinearConv of ones of it (else a QLinearAveragePool)."""
        return not self.ceil_mode and (self.count_include_pad or not any(self.pads))

    @property
    def ratio(self) -> Fraction:
        return Fraction(float(np.float32(self.x_params[0]))) / Fraction(float(np.float32(self.y_params[0])))

    def expected(self, x: np.ndarray, dtype) -> np.ndarray:
        """The exact-arithmetic codes (`exact_pool_code`) and how many windows tie."""
        zp = self.x_params[1]
        outs = list(self.windows())
        shape = (*x.shape[:2], max(o[0][0] for o in outs) + 1, max(o[0][1] for o in outs) + 1)
        y, ties = np.zeros(shape, dtype), 0
        for c in range(x.shape[1]):
            for (oi, oj), rows, cols, count in outs:
                total = int((x[0, c][np.ix_(rows, cols)].astype(np.int64) - zp).sum())
                ties += (total * self.ratio / count).denominator == 2
                y[0, c, oi, oj] = exact_pool_code(total, count, self.ratio, self.y_params[1], dtype)
        return y, ties

    def tying_input(self, rng: np.random.Generator, dtype) -> np.ndarray:
        """Random codes over the whole range of `dtype`; where the windows do not overlap, each
        window's sum is then moved to the tie nearest it (when its count and ratio allow one)."""
        info = np.iinfo(dtype)
        x = rng.integers(int(info.min), int(info.max) + 1, self.shape).astype(np.int64)
        if any(self.pads) or self.strides != self.kernel:  # overlapping windows: ties come from a narrow value range
            return rng.integers(-3, 4, self.shape).astype(np.int64).__add__(self.x_params[1]).clip(info.min, info.max).astype(dtype)
        zp = self.x_params[1]
        for c in range(self.shape[1]):
            for _, rows, cols, count in self.windows():
                window = x[0, c][np.ix_(rows, cols)].reshape(-1)
                step = (self.ratio / count).denominator  # sums tie at odd multiples of step / 2
                if step % 2:
                    continue
                total = int((window - zp).sum())
                target = (total // step) * step + step // 2
                for i in range(window.size):  # move the sum, each code within its range
                    delta = target - int((window - zp).sum())
                    window[i] = min(max(window[i] + delta, int(info.min)), int(info.max))
                x[0, c][np.ix_(rows, cols)] = window.reshape(len(rows), len(cols))
        return x.astype(dtype)


def pools(kind: str) -> list[Pool]:
    """Power-of-two scales (and 3 · 2^-6): onnxruntime's float32 chain is then exact. Equal
    scales (ratio 1) as TFLite and most quantizers give a pool, and ratios 1/2, 2 and 3/4 so
    odd counts tie too."""
    zp = {"i8": (3, -128, -5), "u8": (131, 0, 120)}[kind]
    return [
        Pool("k2", (1, 8, 8, 8), (2, 2), (2**-4, zp[0]), (2**-4, zp[0])),
        Pool("k3_half", (1, 8, 9, 9), (3, 3), (2**-5, zp[2]), (2**-4, zp[0])),
        Pool("k5_half", (1, 8, 10, 10), (5, 5), (2**-5, zp[0]), (2**-4, zp[2])),
        Pool("k8", (1, 16, 8, 16), (8, 8), (2**-3, zp[1]), (2**-3, zp[1])),
        Pool("k2_double", (1, 4, 4, 4), (2, 2), (2**-3, zp[0]), (2**-4, zp[0])),
        Pool("global", (1, 16, 6, 6), None, (2**-4, zp[2]), (2**-4, zp[2])),
        Pool("uncounted", (1, 4, 6, 6), (3, 3), (2**-4, zp[0]), (2**-4, zp[0]), (1, 1, 1, 1), 0),
        Pool("counted", (1, 4, 6, 6), (3, 3), (2**-5, zp[0]), (2**-4, zp[2]), (1, 1, 1, 1), 1),
        Pool("uncounted_half_ceil", (1, 16, 7, 7), (3, 3), (2**-5, zp[2]), (2**-4, zp[0]), (1, 1, 0, 0), 0, (2, 2), 1),
        Pool("k3_three_quarters", (1, 8, 6, 6), (3, 3), (3 * 2**-6, zp[0]), (2**-4, zp[2])),
        Pool("uncounted_three_quarters", (1, 8, 6, 6), (2, 2), (3 * 2**-6, zp[2]), (2**-4, zp[2]), (1, 1, 1, 1), 0, (2, 2)),
    ]


@cache
def pool_model(kind: str) -> onnx.ModelProto:
    """One branch per `pools(kind)`, each with its own 8-bit input and output."""
    return qdq_pools(pools(kind), kind)


def qdq_pools(branches: list[Pool], kind: str) -> onnx.ModelProto:
    element, dtype = TYPES[kind]
    nodes, inits, inputs, outputs = [], [], [], []
    for p in branches:
        names = {}
        for role, (scale, zero_point) in (("x", p.x_params), ("y", p.y_params)):
            names[role] = (f"{p.name}_{role}_s", f"{p.name}_{role}_zp")
            inits += [numpy_helper.from_array(np.array(scale, np.float32), names[role][0]),
                      numpy_helper.from_array(np.array(zero_point, dtype), names[role][1])]
        nodes.append(helper.make_node("DequantizeLinear", [p.name, *names["x"]], [f"{p.name}_f"]))
        if p.kernel is None:
            nodes.append(helper.make_node("GlobalAveragePool", [f"{p.name}_f"], [f"{p.name}_p"]))
        else:
            attrs = {"kernel_shape": list(p.kernel), "strides": list(p.strides)}
            if any(p.pads):
                attrs |= {"pads": list(p.pads), "count_include_pad": p.count_include_pad}
            if p.ceil_mode:
                attrs["ceil_mode"] = 1
            nodes.append(helper.make_node("AveragePool", [f"{p.name}_f"], [f"{p.name}_p"], **attrs))
        nodes.append(helper.make_node("QuantizeLinear", [f"{p.name}_p", *names["y"]], [f"{p.name}_y"]))
        inputs.append(helper.make_tensor_value_info(p.name, element, list(p.shape)))
        outputs.append(helper.make_tensor_value_info(f"{p.name}_y", element, None))
    graph = helper.make_graph(nodes, f"pools_{kind}", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict, optimized: bool) -> list[np.ndarray]:
    options = ort.SessionOptions()
    if not optimized:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@cache
def tie_data(kind: str) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """Feeds whose windows tie, and the exact codes, checked against onnxruntime running the
    graph as written and onnx's reference evaluator (both exact on power-of-two scales).

    Not against optimized onnxruntime: its fused QLinearAveragePool rounds y / y_scale + y_zp
    (nearbyintf of the sum) where QuantizeLinear rounds y / y_scale before adding y_zp, so it
    gives the other code at every tie when y_zp is odd (its global-pool kernel does not)."""
    from onnx.reference import ReferenceEvaluator

    dtype = TYPES[kind][1]
    rng = np.random.default_rng(26)
    feeds, expected = {}, []
    for p in pools(kind):
        feeds[p.name] = p.tying_input(rng, dtype)
        y, ties = p.expected(feeds[p.name], dtype)
        assert ties >= 8, f"{p.name}: only {ties} tying windows"
        expected.append(y)
    model = pool_model(kind)
    references = [onnxruntime_outputs(model, feeds, optimized=False), ReferenceEvaluator(model).run(None, feeds)]
    for outputs in references:
        for p, got, want in zip(pools(kind), outputs, expected, strict=True):
            np.testing.assert_array_equal(got, want, err_msg=f"{p.name}: the reference is not exact here")
    return feeds, expected


@pytest.mark.parametrize("pipeline", ["host", "cortex-m4"])
@pytest.mark.parametrize("kind", ["i8", "u8"])
def test_pool_ties_round_half_to_even_like_onnxruntime(kind, pipeline, tmp_path):
    feeds, expected = tie_data(kind)
    onnx.save(pool_model(kind), tmp_path / "pools.onnx")
    options = CompileOptions(name="pools", optimize="ReleaseSafe", pipeline=None if pipeline == "host" else pipeline_for(pipeline))
    result = compile_model(tmp_path / "pools.onnx", tmp_path / "out", options)
    assert result.plan["float_scratch_bytes"] == 0
    outputs = load_compiled(result)(*(feeds[s.name] for s in result.inputs))
    for p, got, want in zip(pools(kind), outputs, expected, strict=True):
        np.testing.assert_array_equal(got, want, err_msg=f"{p.name} ({kind}, {pipeline} pipeline)")


def test_interpreters_check_every_pass_on_window_sums(tmp_path):
    """`check_each_pass` through the Cortex-M4 pipeline on the pools fold-qdq makes window sums
    of: the onnx-level interpreter's exact rounding of a `zant.average_count` QLinearConv equals
    the reference evaluator's float pool before fold-qdq (power-of-two scales: exact), and the
    uop interpreter the lowered kernels after every later pass. (The QLinearAveragePool
    branches are left out: the onnx-level checker has no implementation of that op.)"""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass
    from zant.plugins import all_passes

    onnx.save(qdq_pools([p for p in pools("i8") if p.window_sum], "i8"), tmp_path / "sums.onnx")
    module = import_model(str(tmp_path / "sums.onnx"))
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline_for("cortex-m4")).passes
    report = check_each_pass(module, passes, make_context(), seed=26)
    assert not report.unchecked, report.notes()
    assert {"fold-qdq", "onnx-to-uop"} <= set(report.checked)


# ---------------------------------------------------------------------------------------------
# MLPerf Tiny IC (needs /work/shared/mlperf_tiny)
# ---------------------------------------------------------------------------------------------

IC_MODEL = Path("/work/shared/mlperf_tiny/onnx/ic_int8.onnx")


@pytest.mark.skipif(not IC_MODEL.exists(), reason=f"{IC_MODEL} is absent (MLPerf Tiny's models are not part of the repository)")
def test_mlperf_tiny_ic_equals_onnxruntime(tmp_path):
    """ResNet-8's 8x8 pool (one scale, 0.12706915, zero point -128) on five seeded int8 inputs:
    the pool's int8 input equals onnxruntime's; its output is the exact-arithmetic code and,
    with the int8 logits and the probabilities, equals optimized onnxruntime's (its integer
    global-pool kernel is exact here). onnxruntime running the graph as written evaluates the
    chain in float32 with a scale that is no power of two: at seed 0, channel 48's sum 352 / 64
    = 5.5 comes out 5.4999995 and rounds to 5, not to the even 6, and its logits differ from its
    own optimized ones by 2 LSB; everywhere else it agrees."""
    model = onnx.load(IC_MODEL)
    producers = {o: n for n in model.graph.node for o in n.output}
    pool = next(n for n in model.graph.node if n.op_type == "AveragePool")
    pool_input = producers[pool.input[0]].input[0]  # the int8 tensor the pool's DQ reads
    pooled = next(n for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == pool.output[0])
    softmax = next(n for n in model.graph.node if n.op_type == "Softmax")
    logits = producers[softmax.input[0]].input[0]  # the int8 logits the Softmax's DQ reads
    shapes = {v.name: v for v in onnx.shape_inference.infer_shapes(model).graph.value_info}
    model.graph.output.extend(shapes[n] for n in (pool_input, pooled.output[0], logits))
    name = model.graph.input[0].name
    onnx.save(model, tmp_path / "ic.onnx")
    result = compile_model(
        tmp_path / "ic.onnx", tmp_path / "out",
        CompileOptions(name="ic", optimize="ReleaseSafe", input_shapes={name: [1, 32, 32, 3]}),
    )
    compiled = load_compiled(result)
    ties, float_misses = 0, []
    for seed in range(5):
        x = np.random.default_rng(seed).integers(-128, 128, (1, 32, 32, 3)).astype(np.int8)
        probabilities, before, after, scores = compiled(x)
        fused = onnxruntime_outputs(model, {name: x}, optimized=True)
        as_written = onnxruntime_outputs(model, {name: x}, optimized=False)
        np.testing.assert_array_equal(before, fused[1])
        np.testing.assert_array_equal(before, as_written[1])
        sums = (before.astype(np.int64) + 128).reshape(before.shape[1], -1).sum(axis=1)
        exact = [exact_pool_code(int(t), 64, Fraction(1), -128, np.int8) for t in sums]
        np.testing.assert_array_equal(after.reshape(-1), exact, err_msg=f"seed {seed}: the pool")
        for got, want, what in zip((probabilities, after, scores), (fused[0], fused[2], fused[3]), ("probabilities", "pooled", "logits")):
            np.testing.assert_array_equal(got, want, err_msg=f"IC, seed {seed}: {what} (optimized onnxruntime)")
        ties += int(np.sum(sums % 64 == 32))
        float_misses += [(seed, int(c)) for c in np.flatnonzero(after.reshape(-1) != as_written[2].reshape(-1))]
        if not float_misses or float_misses[-1][0] != seed:
            np.testing.assert_array_equal(scores, as_written[3], err_msg=f"seed {seed}: logits (onnxruntime as written)")
    assert ties >= 5, "too few pool sums tie: the check proves little"
    assert float_misses == [(0, 48)]
