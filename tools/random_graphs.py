"""Random-graph differential testing: seeded random ONNX graphs, compiled and compared.

    python -m zant.tools.random_graphs --count N --seed S [--jobs 2] [--keep-failures DIR] [--target T] [--pipeline P]

Graph `i` of a run is generated from `(seed, i)` alone, so any graph can be regenerated.
A graph is a chain or a DAG of 2-12 nodes over the supported operators (`OPS`, a table,
filtered by `supported_ops()`): values are reused by several consumers, and every value
nobody consumes (plus a few that are) is a graph output.

Every value carries a conservative interval of what it can hold and whether it is *exact*
(computed without rounding: inputs, movement, Max/Min, integer arithmetic ...). The table
uses both so that every graph is well defined: no division by zero, no log of a negative,
no integer overflow (ReleaseSafe traps on it), and no discontinuous op (Floor, comparisons,
ArgMax, casts to integers, normalisations ...) applied to a rounded value, where the two
implementations could legitimately round to different sides.

Graphs are compiled, built and run in batches with the machinery `zant conformance` uses too
(`zant.tools.batch`: one ReleaseSafe shared library per batch, bisection of broken builds, a child process per
batch so that traps are caught) and compared with `onnx.reference.ReferenceEvaluator`, which
runs the nodes of `ONNXRUNTIME_OPS` (Resize, the pools, ConvTranspose, Layer/Instance
normalization) through onnxruntime, where onnx's departs from the definition.
The run prints which attribute values the covered ops drew (`coverage_summary`; also in the JSON
report): every enum value of Resize, the pools and ConvTranspose, extents of 1, fractional scales,
constant rows and tiny epsilons for the normalizations.
A compile error, a trap or a mismatch is a finding: it is shrunk (`shrink`) to a minimal
model that still fails the same way and, with `--keep-failures DIR`, written there. Compile
errors come in three kinds, each counted apart (`FINDINGS`): `compile_error`, the compiler refused
the graph with a `ZantError` (an unsupported form: it should take every generated graph);
`internal_error`, it crashed (any other exception: a bug); `zig_error`, the Zig it generated does not
compile (a bug: valid ONNX must give Zig that builds).
Graphs compile with the pipeline the driver gives `--target` (`default_pipeline`: the host's
vector forms by default, the scalar `MCU_PIPELINE` for a microcontroller), or with `--pipeline`
(e.g. to test a new pass on every graph); the summary and the JSON report name both. The Zig a
pipeline generates does not depend on the target, so every run builds and checks it on the host.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import multiprocessing
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper
from zant.errors import ZantError
from zant.progress import Estimate
from zant.tools import batch

OPSET = 24
"""The opset graphs are written in (every generated op exists in it with today's semantics)."""

MAX_ELEMENTS = 256
FLOATS = ("float32", "float16", "float64")
SIGNED = ("int8", "int32", "int64")
INTS = (*SIGNED, "uint8")
NUMERIC = (*FLOATS, *INTS)
ALL = (*NUMERIC, "bool")

INPUT_RANGE = {"float32": 4, "float16": 4, "float64": 4, "int8": 8, "uint8": 16, "int32": 50, "int64": 50, "bool": 1}
"""Graph inputs of each dtype are drawn from [-r, r] ([0, r] unsigned; floats in steps of 1/8)."""

FLOAT_LIMIT = {"float16": 1e3, "float32": 1e5, "float64": 1e5}
"""Bound on float intermediates: keeps every result finite and its rounding error meaningful."""

RTOL = {"float16": 2.0**-7, "float32": 2.0**-17, "float64": 2.0**-23}
"""Relative tolerance per level of graph depth (and, times the outputs' magnitude, the absolute
one): a few units in the last place per op, more where sums accumulate. float64 is held to
float32's precision because ONNX float attributes (alpha, epsilon, the 1/6 of HardSwish's
function body ...) are float32: the reference uses them rounded, a compiler may not."""
EXACT_LIMIT = 64.0
"""Sums of exact floats (multiples of 1/8) stay exact below this magnitude, even in float16."""


def _limits(dtype: str) -> tuple[float, float]:
    if dtype == "bool":
        return 0.0, 1.0
    if dtype in FLOATS:
        return -FLOAT_LIMIT[dtype], FLOAT_LIMIT[dtype]
    info = np.iinfo(dtype)
    return float(info.min), float(info.max)


def _fits(dtype: str, lo: float, hi: float) -> bool:
    low, high = _limits(dtype)
    return math.isfinite(lo) and math.isfinite(hi) and low <= lo and hi <= high


# -- the draft graph --------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """A tensor of the draft graph: its shape, dtype, bounds and exactness."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    lo: float
    hi: float
    exact: bool = True

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def bound(self) -> float:
        return max(abs(self.lo), abs(self.hi))


class Skip(Exception):
    """An op does not apply to the value it was offered (the generator tries another)."""


@dataclass
class Draft:
    """A graph under construction; `pool` holds the values later nodes may consume."""

    rng: np.random.Generator
    nodes: list = field(default_factory=list)
    inputs: list[Value] = field(default_factory=list)
    feeds: dict[str, np.ndarray] = field(default_factory=dict)
    initializers: list = field(default_factory=list)
    pool: list[Value] = field(default_factory=list)
    uses: collections.Counter = field(default_factory=collections.Counter)
    counter: int = 0
    notes: list = field(default_factory=list)
    """(op, feature, value) of what a node drew beyond its attributes (a fractional scale, an
    extent of 1, constant rows ...), for the coverage summary."""

    def note(self, op: str, feature: str, value) -> None:
        self.notes.append((op, feature, str(value)))

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def pick(self, options: Sequence):
        return options[int(self.rng.integers(len(options)))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def new_input(self, shape: Sequence[int], dtype: str, lo: float | None = None, hi: float | None = None) -> Value:
        r = INPUT_RANGE[dtype]
        lo = (0 if dtype in ("uint8", "bool") else -r) if lo is None else lo
        hi = r if hi is None else hi
        shape = tuple(int(d) for d in shape)
        if dtype == "bool":
            data = self.rng.integers(0, 2, shape).astype(bool)
        elif dtype in FLOATS:
            data = (self.rng.integers(round(lo * 8), round(hi * 8) + 1, shape) / 8).astype(dtype)
        else:
            data = self.rng.integers(math.ceil(lo), math.floor(hi) + 1, shape).astype(dtype)
        value = Value(self.fresh("in"), shape, dtype, float(lo), float(hi))
        self.inputs.append(value)
        self.feeds[value.name] = data
        return value

    def const(self, data, dtype: str | None = None) -> Value:
        array = np.asarray(data, dtype=dtype)
        name = self.fresh("k")
        self.initializers.append(numpy_helper.from_array(array, name))
        lo, hi = (float(array.min()), float(array.max())) if array.size else (0.0, 0.0)
        return Value(name, tuple(array.shape), str(array.dtype), lo, hi)

    def ints(self, values: Sequence[int]) -> Value:
        return self.const(np.asarray(values, dtype=np.int64))

    def emit(self, op: str, operands: Sequence[Value | None], results: Sequence[Value], **attributes) -> list[Value]:
        """Add a node; `results` are templates whose names are replaced by fresh ones."""
        named = [replace(r, name=self.fresh("v")) for r in results]
        for operand in operands:
            if operand is not None:
                self.uses[operand.name] += 1
        self.nodes.append(
            helper.make_node(op, [o.name if o is not None else "" for o in operands], [r.name for r in named], **attributes)
        )
        self.pool.extend(named)
        return named

    def partner(self, x: Value, dtype: str | None = None, broadcast: bool = True) -> Value:
        """A second operand for `x`: a pool value of a compatible shape, else a new input or constant
        whose shape broadcasts against `x` (sometimes widening the result)."""
        dtype = dtype or x.dtype
        same = [v for v in self.pool if v.dtype == dtype and v.name != x.name and _broadcasts(v.shape, x.shape, broadcast)]
        if same and self.chance(0.5):
            return self.pick(same)
        shape = list(x.shape)
        if broadcast and shape:
            shape = shape[int(self.rng.integers(len(shape) + 1)) :] if self.chance(0.5) else shape
            shape = [1 if self.chance(0.3) else d for d in shape]
            if x.shape and x.shape[0] == 1 and len(shape) == len(x.shape) and self.chance(0.2):
                shape[0] = 2  # the other operand widens the result
        value = self.new_input(shape, dtype)
        if self.chance(0.3):  # a weight rather than an input
            self.inputs.pop()
            data = self.feeds.pop(value.name)
            return replace(self.const(data), lo=value.lo, hi=value.hi)
        return value


def _broadcasts(a: Sequence[int], b: Sequence[int], allow: bool) -> bool:
    if not allow:
        return tuple(a) == tuple(b)
    try:
        out = np.broadcast_shapes(tuple(a), tuple(b))
    except ValueError:
        return False
    return math.prod(out) <= MAX_ELEMENTS and out == tuple(b)


def _broadcast(*shapes) -> tuple[int, ...]:
    try:
        out = np.broadcast_shapes(*shapes)
    except ValueError as error:
        raise Skip(str(error)) from None
    if math.prod(out) > MAX_ELEMENTS:
        raise Skip("too large")
    return out


def _result(x: Value, shape=None, dtype=None, lo=None, hi=None, exact=None) -> Value:
    return Value(
        "",
        tuple(x.shape if shape is None else shape),
        x.dtype if dtype is None else dtype,
        x.lo if lo is None else lo,
        x.hi if hi is None else hi,
        x.exact if exact is None else exact,
    )


def _checked(dtype: str, lo: float, hi: float) -> tuple[float, float]:
    if not _fits(dtype, lo, hi):
        raise Skip(f"range [{lo}, {hi}] does not fit {dtype}")
    return lo, hi


def _need_exact(x: Value) -> None:
    if x.dtype in FLOATS and not x.exact:
        raise Skip("a discontinuous op needs an exactly computed input")


# -- guards: small subgraphs that move a value into an op's domain ----------------------------


def positive(d: Draft, x: Value, floor: float) -> Value:
    """`x` itself when it is >= floor, else Abs(x) + floor (two nodes)."""
    if x.lo >= floor:
        return x
    (a,) = d.emit("Abs", [x], [_result(x, lo=0.0, hi=x.bound)])
    shift = d.const(np.asarray(floor, dtype=x.dtype))
    return d.emit("Add", [a, shift], [_result(a, lo=floor, hi=a.hi + floor, exact=x.exact and a.hi + floor <= EXACT_LIMIT)])[0]


def clipped(d: Draft, x: Value, low: float, high: float) -> Value:
    """`x` itself when it lies in [low, high], else Clip(x, low, high)."""
    if low <= x.lo and x.hi <= high:
        return x
    lo, hi = d.const(np.asarray(low, dtype=x.dtype)), d.const(np.asarray(high, dtype=x.dtype))
    return d.emit("Clip", [x, lo, hi], [_result(x, lo=max(x.lo, low), hi=min(x.hi, high))])[0]


# -- the op table -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    """A generator of one ONNX op: `make(draft, x)` adds it (and any guards) consuming `x`."""

    name: str
    dtypes: tuple[str, ...]
    make: Callable[[Draft, Value], None]
    weight: float = 1.0
    checked: bool = True
    """Whether `dtypes` is narrowed to the schema's types of input 0 (not for Where: `x` may be
    its condition or one of its values)."""


def _unary(name: str, f: Callable[[np.ndarray], np.ndarray], domain: tuple[float, float] | None = None,
           floor: float | None = None, exact: bool = False, **attributes) -> Callable[[Draft, Value], None]:
    """An element-wise float op; its range is `f` at the corners and samples of the input range."""

    def make(d: Draft, x: Value) -> None:
        if name == "Softsign" and not x.shape:
            raise Skip("onnx.reference's Softsign fails on 0-d tensors")
        if floor is not None:
            x = positive(d, x, floor)
        if domain is not None:
            x = clipped(d, x, *domain)
        grid = np.linspace(x.lo, x.hi, 65)
        with np.errstate(all="ignore"):
            ys = f(grid)
        lo, hi = _checked(x.dtype, float(ys.min()) - 1e-6, float(ys.max()) + 1e-6)
        d.emit(name, [x], [_result(x, lo=lo, hi=hi, exact=exact and x.exact)], **attributes)

    return make


def _discrete(name: str, f: Callable[[np.ndarray], np.ndarray]) -> Callable[[Draft, Value], None]:
    """Floor, Ceil, Round, Sign: exact outputs of exact inputs."""

    def make(d: Draft, x: Value) -> None:
        _need_exact(x)
        ys = f(np.array([x.lo, x.hi]))
        d.emit(name, [x], [_result(x, lo=float(ys.min()), hi=float(ys.max()), exact=True)])

    return make


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


UNARY_FLOAT = {
    "Exp": (np.exp, (-8.0, 5.0), None),
    "Log": (np.log, None, 0.25),
    "Sqrt": (np.sqrt, None, 0.0),
    "Reciprocal": (np.reciprocal, None, 0.5),
    "Sin": (np.sin, None, None),
    "Cos": (np.cos, None, None),
    "Tan": (np.tan, (-1.2, 1.2), None),
    "Asin": (np.arcsin, (-0.9, 0.9), None),
    "Acos": (np.arccos, (-0.9, 0.9), None),
    "Atan": (np.arctan, None, None),
    "Sinh": (np.sinh, (-4.0, 4.0), None),
    "Cosh": (np.cosh, (-4.0, 4.0), None),
    "Asinh": (np.arcsinh, None, None),
    "Acosh": (np.arccosh, None, 1.25),
    "Atanh": (np.arctanh, (-0.9, 0.9), None),
    "Tanh": (np.tanh, None, None),
    "Sigmoid": (_sigmoid, None, None),
    "Erf": (lambda x: np.tanh(x), None, None),  # the same range, [-1, 1]
    "Softsign": (lambda x: x / (1 + np.abs(x)), None, None),  # (not on scalars: see _unary)
    "Softplus": (lambda x: np.log1p(np.exp(x)), (-20.0, 20.0), None),
    "Elu": (lambda x: np.where(x > 0, x, np.exp(x) - 1), None, None),
    "Selu": (lambda x: 1.0508 * np.where(x > 0, x, 1.6733 * (np.exp(x) - 1)), None, None),
    "Celu": (lambda x: np.where(x > 0, x, np.exp(x) - 1), None, None),
    "Mish": (lambda x: x * np.tanh(np.log1p(np.exp(x))), (-20.0, 20.0), None),
    "Gelu": (lambda x: x * _sigmoid(1.702 * x) * 1.01 - 0.2, None, None),
    "HardSigmoid": (lambda x: np.clip(0.2 * x + 0.5, 0, 1), None, None),
    "HardSwish": (lambda x: x * np.clip(x / 6 + 0.5, 0, 1), None, None),
    "Swish": (lambda x: x * _sigmoid(x) - 0.3, None, None),
    "LeakyRelu": (lambda x: np.where(x > 0, x, 0.01 * x), None, None),
}
"""Float element-wise ops: (range function, input clip, positivity floor)."""

EXACT_UNARY = {
    "Relu": (lambda x: np.maximum(x, 0), (*FLOATS, *SIGNED)),
    "Neg": (np.negative, (*FLOATS, *SIGNED)),
    "Abs": (np.abs, NUMERIC),
    "Identity": (lambda x: x, ALL),
}


def _exact_unary(name: str, f) -> Callable[[Draft, Value], None]:
    def make(d: Draft, x: Value) -> None:
        ys = f(np.array([x.lo, x.hi, 0.0 if x.lo < 0 < x.hi else x.lo]))
        lo, hi = _checked(x.dtype, float(ys.min()), float(ys.max()))
        d.emit(name, [x], [_result(x, lo=lo, hi=hi)])

    return make


def _corners(f, a: Value, b: Value) -> tuple[float, float]:
    ys = [f(p, q) for p in (a.lo, a.hi) for q in (b.lo, b.hi)]
    return min(ys), max(ys)


ARITH = {
    "Add": (lambda p, q: p + q, NUMERIC),
    "Sub": (lambda p, q: p - q, NUMERIC),
    "Mul": (lambda p, q: p * q, NUMERIC),
    "Max": (max, NUMERIC),
    "Min": (min, NUMERIC),
}


def _arith(name: str, f) -> Callable[[Draft, Value], None]:
    def make(d: Draft, x: Value) -> None:
        y = d.partner(x)
        if d.chance(0.5):
            x, y = y, x
        lo, hi = _corners(f, x, y)
        if name == "Sub" and x.dtype == "uint8":
            raise Skip("unsigned subtraction")
        lo, hi = _checked(x.dtype, lo, hi)
        exact = x.exact and y.exact and (name in ("Max", "Min") or (name != "Mul" and max(abs(lo), abs(hi)) <= EXACT_LIMIT))
        shape = _broadcast(x.shape, y.shape)
        d.emit(name, [x, y], [_result(x, shape=shape, lo=lo, hi=hi, exact=exact)])

    return make


def make_div(d: Draft, x: Value) -> None:
    y = d.partner(x)
    if y.lo <= 0 < y.hi or y.lo < 0 <= y.hi or (y.lo == 0 == y.hi):
        y = positive(d, y, 1.0 if x.dtype in INTS else 0.5)
    lo, hi = _checked(x.dtype, *_corners(lambda p, q: p / q, x, y))
    d.emit("Div", [x, y], [_result(x, shape=_broadcast(x.shape, y.shape), lo=min(lo, 0), hi=max(hi, 0), exact=False)])


def make_mod(d: Draft, x: Value) -> None:
    y = positive(d, d.partner(x), 1.0)
    if x.dtype in FLOATS:
        _need_exact(x)
        _need_exact(y)
    bound = y.hi
    fmod = {"fmod": 1} if x.dtype in FLOATS or d.chance(0.5) else {}
    d.emit("Mod", [x, y], [_result(x, shape=_broadcast(x.shape, y.shape), lo=-bound, hi=bound, exact=x.exact)], **fmod)


def make_pow(d: Draft, x: Value) -> None:
    if x.dtype in FLOATS:
        base = clipped(d, positive(d, x, 0.5), 0.5, 4.0)
        exponent = d.const(np.asarray(d.pick([-2.0, -1.0, 0.5, 1.5, 2.0, 3.0]), dtype=x.dtype))
        e = float(exponent.lo)
        ys = [base.lo**e, base.hi**e]
        d.emit("Pow", [base, exponent], [_result(base, lo=min(ys), hi=max(ys), exact=False)])
        return
    e = int(d.pick([0, 1, 2, 3]))
    lo, hi = _checked(x.dtype, min(x.lo**e, x.hi**e, 0 if e else 1), max(x.bound**e, x.lo**e, x.hi**e))
    exponent = d.const(np.asarray(e, dtype=d.pick(["int64", "int32"])))
    d.emit("Pow", [x, exponent], [_result(x, lo=lo, hi=hi)])


def make_clip(d: Draft, x: Value) -> None:
    low, high = sorted(d.pick([-3.0, -1.0, 0.0, 0.5, 2.0, 6.0]) for _ in range(2))
    if x.dtype == "uint8":
        low, high = abs(low), abs(high) + abs(low)
    operands = [x, d.const(np.asarray(low, dtype=x.dtype)), d.const(np.asarray(high, dtype=x.dtype))]
    low, high = operands[1].lo, operands[2].lo  # as the dtype holds them (0.5 is 0 in integers)
    if d.chance(0.3):
        operands[1] = None
        low = x.lo
    d.emit("Clip", operands, [_result(x, lo=max(min(x.lo, high), low), hi=min(max(x.hi, low), high))])


def make_prelu(d: Draft, x: Value) -> None:
    slope = d.const((d.rng.integers(-4, 5, x.shape[-1:] if d.chance(0.5) else ()) / 8).astype(x.dtype))
    d.emit("PRelu", [x, slope], [_result(x, lo=min(x.lo, -0.5 * x.bound), hi=max(x.hi, 0.5 * x.bound, 0), exact=False)])


def make_thresholded(d: Draft, x: Value) -> None:
    _need_exact(x)
    d.emit("ThresholdedRelu", [x], [_result(x, lo=min(0, x.lo), hi=max(0, x.hi))], alpha=float(d.pick([0.0, 0.5, 1.0])))


def make_shrink(d: Draft, x: Value) -> None:
    _need_exact(x)
    bias, lambd = d.pick([0.0, 0.5]), d.pick([0.5, 1.0])
    d.emit("Shrink", [x], [_result(x, lo=min(0, x.lo + bias), hi=max(0, x.hi - bias) + bias)], bias=bias, lambd=lambd)


COMPARISONS = ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual")


def _comparison(name: str) -> Callable[[Draft, Value], None]:
    def make(d: Draft, x: Value) -> None:
        _need_exact(x)
        y = d.partner(x)
        _need_exact(y)
        d.emit(name, [x, y], [_result(x, shape=_broadcast(x.shape, y.shape), dtype="bool", lo=0, hi=1, exact=True)])

    return make


def _logic(name: str) -> Callable[[Draft, Value], None]:
    def make(d: Draft, x: Value) -> None:
        if name == "Not":
            d.emit(name, [x], [_result(x)])
            return
        y = d.partner(x)
        d.emit(name, [x, y], [_result(x, shape=_broadcast(x.shape, y.shape))])

    return make


def make_is(name: str) -> Callable[[Draft, Value], None]:
    return lambda d, x: d.emit(name, [x], [_result(x, dtype="bool", lo=0, hi=1, exact=True)])


def make_where(d: Draft, x: Value) -> None:
    cond = d.partner(x, "bool") if x.dtype != "bool" else x
    a = x if x.dtype != "bool" else d.partner(x, d.pick(NUMERIC))
    b = d.partner(a)
    if d.chance(0.5):
        a, b = b, a
    shape = _broadcast(cond.shape, a.shape, b.shape)
    if math.prod(shape) > MAX_ELEMENTS:
        raise Skip("too large")
    d.emit("Where", [cond, a, b], [_result(a, shape=shape, lo=min(a.lo, b.lo), hi=max(a.hi, b.hi), exact=a.exact and b.exact)])


def _bitwise(name: str) -> Callable[[Draft, Value], None]:
    def make(d: Draft, x: Value) -> None:
        if name == "BitwiseNot":
            lo, hi = (255 - x.hi, 255 - x.lo) if x.dtype == "uint8" else (-x.hi - 1, -x.lo - 1)
            d.emit(name, [x], [_result(x, lo=lo, hi=hi)])
            return
        y = d.partner(x)
        k = 2.0 ** max(int(x.bound).bit_length(), int(y.bound).bit_length())
        lo = 0.0 if min(x.lo, y.lo) >= 0 else -k
        d.emit(name, [x, y], [_result(x, shape=_broadcast(x.shape, y.shape), lo=lo, hi=k - 1)])

    return make


def make_bitshift(d: Draft, x: Value) -> None:
    direction = d.pick(["LEFT", "RIGHT"])
    shift = d.const(d.rng.integers(0, 3, x.shape[-1:] if d.chance(0.5) else ()).astype(x.dtype))
    hi = x.hi * 4 if direction == "LEFT" else x.hi
    _checked(x.dtype, 0, hi)
    d.emit("BitShift", [x, shift], [_result(x, lo=0, hi=hi)], direction=direction)


def make_cast(d: Draft, x: Value) -> None:
    to = d.pick([t for t in ALL if t != x.dtype])
    if to in INTS or to == "bool":
        _need_exact(x)
    if to in INTS:
        lo, hi = (math.trunc(x.lo), math.trunc(x.hi))
        _checked(to, lo, hi)
    elif to == "bool":
        lo, hi = 0, 1
    else:
        lo, hi = _checked(to, x.lo, x.hi)
    # a narrowing float cast rounds; integers and booleans convert exactly
    exact = x.exact and (to not in FLOATS or x.dtype not in FLOATS or RTOL[to] <= RTOL[x.dtype])
    result = _result(x, dtype=to, lo=lo, hi=hi, exact=exact)
    if d.chance(0.2):
        d.emit("CastLike", [x, d.const(np.zeros((1,), dtype=to))], [result])
    else:
        d.emit("Cast", [x], [result], to=helper.np_dtype_to_tensor_dtype(np.dtype(to)))


def make_matmul(d: Draft, x: Value) -> None:
    if not x.shape:
        raise Skip("scalar")
    k, n = x.shape[-1], int(d.rng.integers(1, 6))
    w_shape = (k, n) if len(x.shape) == 1 or d.chance(0.6) else (*x.shape[:-2], k, n)
    low = 0 if x.dtype == "uint8" else -2
    if d.chance(0.4):
        w = d.new_input(w_shape, x.dtype, low, 2)
    else:
        steps = 8 if x.dtype in FLOATS else 1  # weights in [low, 2], in steps of 1/8 for floats
        w = d.const((d.rng.integers(low * steps, 2 * steps + 1, w_shape) / steps).astype(x.dtype))
    bound = k * x.bound * w.bound
    lo, hi = _checked(x.dtype, 0 if x.dtype == "uint8" else -bound, bound)
    d.emit("MatMul", [x, w], [_result(x, shape=(*x.shape[:-1], n), lo=lo, hi=hi, exact=x.dtype not in FLOATS)])


def make_gemm(d: Draft, x: Value) -> None:
    if len(x.shape) != 2 or x.dtype not in FLOATS:
        raise Skip("Gemm takes a matrix")
    trans_a, trans_b = d.chance(0.3), d.chance(0.5)
    m, k = x.shape[::-1] if trans_a else x.shape
    n = int(d.rng.integers(1, 6))
    b = d.const((d.rng.integers(-8, 9, (n, k) if trans_b else (k, n)) / 8).astype(x.dtype))
    alpha, beta = d.pick([1.0, 0.5, -2.0]), d.pick([1.0, 0.25])
    operands = [x, b]
    bound = abs(alpha) * k * x.bound
    if d.chance(0.6):
        c = d.const((d.rng.integers(-8, 9, d.pick([(n,), (m, 1), (m, n), (1,)])) / 4).astype(x.dtype))
        operands.append(c)
        bound += abs(beta) * c.bound
    lo, hi = _checked(x.dtype, -bound, bound)
    d.emit("Gemm", operands, [_result(x, shape=(m, n), lo=lo, hi=hi, exact=False)],
           alpha=alpha, beta=beta, transA=int(trans_a), transB=int(trans_b))


def _window(d: Draft, x: Value, kernel_max: int = 3) -> dict:
    """Kernel, strides, dilations, pads for a 2-D window over the spatial dims of NCHW `x`."""
    if len(x.shape) != 4:
        raise Skip("needs NCHW")
    spatial = x.shape[2:]
    kernel = [int(d.rng.integers(1, min(kernel_max, s) + 1)) for s in spatial]
    attributes = {"kernel_shape": kernel}
    if d.chance(0.4):
        attributes["strides"] = [int(d.rng.integers(1, 3)) for _ in spatial]
    if d.chance(0.4):
        attributes["pads"] = [int(d.rng.integers(0, k)) for k in kernel * 2]
    return attributes


def _window_out(x: Value, attributes: dict, dilations=None) -> tuple[int, int]:
    kernel = attributes["kernel_shape"]
    strides = attributes.get("strides", [1, 1])
    pads = attributes.get("pads", [0, 0, 0, 0])
    dilations = dilations or [1, 1]
    out = []
    for i, size in enumerate(x.shape[2:]):
        span = (kernel[i] - 1) * dilations[i] + 1
        n = (size + pads[i] + pads[i + 2] - span) // strides[i] + 1
        if n < 1:
            raise Skip("empty window output")
        out.append(n)
    return tuple(out)


def make_conv(d: Draft, x: Value) -> None:
    if x.dtype not in FLOATS:
        raise Skip("float conv")
    attributes = _window(d, x)
    n, c = x.shape[:2]
    group = d.pick([g for g in (1, 2, c) if c % g == 0])
    # 8 or 16 output channels per group reach the host's vector Conv forms (channel lanes).
    m = group * d.pick([1, 2, 1, 2, 8, 16])
    dilations = [1, 1]
    if d.chance(0.2) and all(s >= 2 * k - 1 for s, k in zip(x.shape[2:], attributes["kernel_shape"])):
        dilations = [2, 2]
        attributes["dilations"] = dilations
    if group > 1:
        attributes["group"] = group
    kernel = attributes["kernel_shape"]
    w = d.const((d.rng.integers(-8, 9, (m, c // group, *kernel)) / 8).astype(x.dtype))
    operands = [x, w]
    if d.chance(0.5):
        operands.append(d.const((d.rng.integers(-8, 9, (m,)) / 8).astype(x.dtype)))
    spatial = _window_out(x, attributes, dilations)
    bound = math.prod(kernel) * (c // group) * x.bound + 1
    lo, hi = _checked(x.dtype, -bound, bound)
    d.emit("Conv", operands, [_result(x, shape=(n, m, *spatial), lo=lo, hi=hi, exact=False)], **attributes)


def make_conv_block(d: Draft, x: Value) -> None:
    """A DenseNet bottleneck: a 1x1 Conv to 8 or 16 channels, Relu, a padded 3x3 Conv. On the host
    the first Conv's channel lanes are stored into the second's padded buffer a padded image apart
    (strided vector stores, zant_vscatter, where light_densenet121's Zig stopped building)."""
    if x.dtype not in FLOATS or len(x.shape) != 4:
        raise Skip("float NCHW")
    n, c, h, w = x.shape
    m = d.pick([8, 16])
    w1 = d.const((d.rng.integers(-8, 9, (m, c, 1, 1)) / 8).astype(x.dtype))
    b1 = d.const((d.rng.integers(-8, 9, (m,)) / 8).astype(x.dtype))
    lo, hi = _checked(x.dtype, -(c * x.bound + 1), c * x.bound + 1)
    (hidden,) = d.emit("Conv", [x, w1, b1], [_result(x, shape=(n, m, h, w), lo=lo, hi=hi, exact=False)])
    (relu,) = d.emit("Relu", [hidden], [_result(hidden, lo=0.0)])
    out = d.pick([1, 2, 4, 8])
    w2 = d.const((d.rng.integers(-8, 9, (out, m, 3, 3)) / 8).astype(x.dtype))
    bound = 9 * m * hi + 1
    lo, hi = _checked(x.dtype, -bound, bound)
    d.emit("Conv", [relu, w2], [_result(relu, shape=(n, out, h, w), lo=lo, hi=hi, exact=False)], pads=[1, 1, 1, 1])


def make_conv_transpose(d: Draft, x: Value) -> None:
    """ConvTranspose over NCHW or NCW: every auto_pad, output_padding, output_shape, groups,
    strides and dilations."""
    if x.dtype != "float32" or len(x.shape) not in (3, 4):
        raise Skip("float32 NCW / NCHW")
    n, c, *spatial = x.shape
    rank = len(spatial)
    group = d.pick([g for g in (1, 2, c) if c % g == 0])
    per_group = d.pick([1, 2, 3])
    kernel = [int(d.rng.integers(1, 4)) for _ in spatial]
    strides = [int(d.rng.integers(1, 4)) for _ in spatial]
    dilations = [d.pick([1, 1, 2]) for _ in spatial]
    # below the stride (the definition allows below the dilation too; onnxruntime does not)
    output_padding = [int(d.rng.integers(0, st)) if d.chance(0.5) else 0 for st in strides]
    auto_pad = d.pick(["NOTSET", "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"])
    attributes = {"kernel_shape": kernel, "strides": strides, "dilations": dilations}
    if any(output_padding):
        attributes["output_padding"] = output_padding
    if group > 1:
        attributes["group"] = group
    full = [st * (i - 1) + op + (k - 1) * dl + 1 for i, st, op, k, dl in zip(spatial, strides, output_padding, kernel, dilations)]
    if auto_pad == "NOTSET" and rank == 2 and d.chance(0.25):  # onnx infers a rank-2 result for a 1-D output_shape
        # pads derived from output_shape; onnx's inference drops the spatial dims of one holding a 1
        if min(full) < 2:
            raise Skip("an output_shape of 1")
        # onnx 1.23's inference drops a spatial dimension when output_shape is below the full size
        # (x [2,1,2,4], kernel 1, output_shape [2,3] -> rank 3), so the model would not compile:
        # only the full size is drawn (a known limitation, in the closing note of issue 32's run)
        out = list(full)
        attributes["output_shape"] = out
        d.note("ConvTranspose", "output_shape", True)
    elif auto_pad == "NOTSET":
        pads = [int(d.rng.integers(0, k)) for k in kernel * 2]
        out = [f - pads[i] - pads[rank + i] for i, f in enumerate(full)]
        attributes["pads"] = pads
    elif auto_pad == "VALID":
        out = full
    else:
        out = [i * st for i, st in zip(spatial, strides)]
        if any(o > f for o, f in zip(out, full)):
            raise Skip("SAME would need negative pads")
    if auto_pad != "NOTSET":
        attributes["auto_pad"] = auto_pad
    if any(o < 1 for o in out) or n * per_group * group * math.prod(out) > MAX_ELEMENTS:
        raise Skip("empty or too large")
    d.note("ConvTranspose", "output_padding", "nonzero" if any(output_padding) else "zero")
    w = d.const((d.rng.integers(-8, 9, (c, per_group, *kernel)) / 8).astype(x.dtype))
    operands = [x, w]
    if d.chance(0.5):
        operands.append(d.const((d.rng.integers(-8, 9, (per_group * group,)) / 8).astype(x.dtype)))
    bound = math.prod(kernel) * (c // group) * x.bound + 1
    lo, hi = _checked(x.dtype, -bound, bound)
    d.emit("ConvTranspose", operands, [_result(x, shape=(n, per_group * group, *out), lo=lo, hi=hi, exact=False)], **attributes)


RESIZE_SCALES = (0.25, 0.375, 0.5, 0.625, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)
"""Scales exact in binary: a source position on a nearest tie is exactly on it in float32
(onnxruntime computes positions in float32) and float64 (onnx.reference, Zant) alike."""
COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                    "tf_crop_and_resize", "tf_half_pixel_for_nn")
"""tf_half_pixel_for_nn is Resize-11..13's (opsets up to 17); Zant converts older models to the
current opset with it, so it is drawn in OPSET graphs as well (onnxruntime accepts it)."""
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _resize_positions(mode: str, in_size: int, out_size: int, scale: float, roi: tuple[float, float]) -> np.ndarray:
    """The definition's source position of each output position (length_resized = out_size)."""
    y = np.arange(out_size, dtype=np.float64)
    if mode in ("half_pixel", "pytorch_half_pixel"):
        if mode == "pytorch_half_pixel" and out_size == 1:
            return np.zeros(1)
        return (y + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        return in_size / 2 * (1 - out_size / (scale * in_size)) + (y + 0.5) / scale - 0.5
    if mode == "asymmetric":
        return y / scale
    if mode == "tf_half_pixel_for_nn":
        return (y + 0.5) / scale
    if mode == "align_corners":
        return y * (in_size - 1) / (out_size - 1) if out_size > 1 else np.zeros(1)
    start, end = roi
    if out_size == 1:
        return np.full(1, (start + end) * (in_size - 1) / 2)
    return start * (in_size - 1) + y * (end - start) * (in_size - 1) / (out_size - 1)


def make_resize(d: Draft, x: Value) -> None:
    """Resize: every mode, coordinate transformation and nearest_mode, scales or sizes (with each
    keep_aspect_ratio_policy), axes, extents of 1, whole and fractional scales."""
    rank = len(x.shape)
    mode = d.pick(["nearest", "linear", "cubic"])
    if mode != "nearest" and (x.dtype != "float32" or rank not in (2, 4)):
        mode = "nearest"  # onnxruntime interpolates 2-D and NCHW inputs only; integers round
    if not rank:
        raise Skip("scalar")
    if mode == "nearest":
        axes = [a for a in range(rank) if d.chance(0.6)] or [rank - 1]
    else:
        axes = list(range(rank - 2, rank)) if rank == 4 else [0, 1]
    ctm = d.pick(COORDINATE_MODES)
    attributes = {"mode": mode, "coordinate_transformation_mode": ctm}
    if mode == "nearest":
        attributes["nearest_mode"] = d.pick(NEAREST_MODES)
    elif mode == "cubic":
        attributes["cubic_coeff_a"] = d.pick([-0.75, -0.5])
        attributes["exclude_outside"] = int(d.chance(0.3))
    # scales, or sizes (whose out/in need not be exact in binary)
    by_sizes = d.chance(0.3)
    scales: dict[int, float] = {}
    out_shape = list(x.shape)
    if by_sizes:
        policy = d.pick(["stretch", "stretch", "not_larger", "not_smaller"])
        sizes = {a: int(d.rng.integers(1, 2 * x.shape[a] + 2)) for a in axes}
        if policy == "stretch":
            scales = {a: sizes[a] / x.shape[a] for a in axes}
            out_shape = [sizes.get(i, s) for i, s in enumerate(x.shape)]
        else:
            common = (min if policy == "not_larger" else max)(sizes[a] / x.shape[a] for a in axes)
            scales = {a: common for a in axes}
            for a in axes:
                out_shape[a] = int(common * x.shape[a] + 0.5)
            attributes["keep_aspect_ratio_policy"] = policy
    else:
        for a in axes:
            one = [s for s in RESIZE_SCALES if int(s * x.shape[a]) == 1]
            scales[a] = d.pick(one) if one and d.chance(0.3) else d.pick(RESIZE_SCALES)
            out_shape[a] = int(scales[a] * x.shape[a])
    if any(o < 1 for o in out_shape) or math.prod(out_shape) > MAX_ELEMENTS:
        raise Skip("empty or too large")
    roi = {a: (0.0, 1.0) for a in axes}
    if ctm == "tf_crop_and_resize":
        # onnxruntime leaves an axis of scale 1 as it is, crop or not (the definition crops it)
        roi = {a: (d.pick([0.0, 0.125, 0.25, -0.25]), d.pick([1.0, 0.875, 0.75, 1.25])) if scales[a] != 1 else (0.0, 1.0)
               for a in axes}
        attributes["extrapolation_value"] = d.pick([0.0, -1.5, 2.0])
    if tuple(out_shape) == x.shape and (any(v != 1 for v in scales.values()) or any(r != (0.0, 1.0) for r in roi.values())):
        raise Skip("onnxruntime copies a Resize whose output shape is its input's, whatever its scales or roi")
    if mode == "nearest":
        # a position within rounding of a tie may round either way where it is not computed exactly
        inexact = by_sizes or ctm in ("align_corners", "half_pixel_symmetric", "tf_crop_and_resize")
        for a in axes:
            positions = _resize_positions(ctm, x.shape[a], out_shape[a], scales[a], roi[a])
            ties = positions if attributes["nearest_mode"] in ("floor", "ceil") else positions - 0.5
            if inexact and np.any(np.abs(ties - np.round(ties)) < 1e-5):
                raise Skip("a nearest position on an inexactly computed tie")
    if len(axes) < rank or d.chance(0.3):
        attributes["axes"] = axes
        listed = axes
    else:
        listed = list(range(rank))
    roi_input = d.const(np.array([roi.get(a, (0.0, 1.0))[0] for a in listed] + [roi.get(a, (0.0, 1.0))[1] for a in listed],
                                 np.float32)) if ctm == "tf_crop_and_resize" else None
    if by_sizes:
        operands = [x, roi_input, None, d.ints([out_shape[a] if policy == "stretch" else sizes[a] for a in listed])]
    else:
        operands = [x, roi_input, d.const(np.array([scales.get(a, 1.0) for a in listed], np.float32))]
    lo, hi = x.lo, x.hi
    if mode == "cubic":
        grow = 2.0 ** len(axes)
        lo, hi = _checked(x.dtype, -grow * x.bound, grow * x.bound)
    if ctm == "tf_crop_and_resize":
        lo, hi = min(lo, attributes["extrapolation_value"]), max(hi, attributes["extrapolation_value"])
    d.note("Resize", "input", "sizes" if by_sizes else "scales")
    d.note("Resize", "scale", "whole" if all(float(v).is_integer() for v in scales.values()) else "fractional")
    d.note("Resize", "extent 1", any(out_shape[a] == 1 for a in axes))
    d.emit("Resize", operands, [_result(x, shape=out_shape, lo=lo, hi=hi, exact=x.exact and mode == "nearest")], **attributes)


def _pool_out(size: int, extent: int, stride: int, begin: int, end: int, ceil: bool) -> tuple[int, bool]:
    """A pool's output extent over explicit pads (onnxruntime's and PyTorch's rule: ceil mode's
    last window must start inside the input or its leading pad), and whether ceil mode dropped
    a window."""
    span = size + begin + end - extent
    if not ceil:
        return span // stride + 1, False
    count = -(-span // stride) + 1
    if (count - 1) * stride >= size + begin:
        return count - 1, True
    return count, False


def make_pool(name: str) -> Callable[[Draft, Value], None]:
    def make(d: Draft, x: Value) -> None:
        if x.dtype not in FLOATS and not (name == "MaxPool" and x.dtype in ("int8", "uint8")):
            raise Skip("float pool")
        attributes = _window(d, x)
        ceil = d.chance(0.4) and x.dtype in FLOATS
        if ceil and d.chance(0.5):
            # windows narrower than their strides: ceil mode's last one often starts past the input
            strides = [d.pick([2, 3]) for _ in x.shape[2:]]
            attributes["strides"] = strides
            attributes["kernel_shape"] = [int(d.rng.integers(1, min(st, s) + 1)) for st, s in zip(strides, x.shape[2:])]
            attributes.pop("pads", None)
        if name == "MaxPool" and d.chance(0.2) and all(s >= 3 for s in x.shape[2:]):
            attributes["dilations"] = [2, 2]
        kernel = attributes["kernel_shape"]
        dilations = attributes.get("dilations", [1, 1])
        extents = [(k - 1) * dl + 1 for k, dl in zip(kernel, dilations)]
        if any(e > s for e, s in zip(extents, x.shape[2:])):
            raise Skip("dilated window larger than the input")
        # onnx.reference has no float64 AveragePool with auto_pad or ceil_mode (onnxruntime none at all)
        plain = name == "AveragePool" and x.dtype == "float64"
        auto_pad = "NOTSET" if plain else d.pick(["NOTSET", "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"])
        strides = attributes.get("strides", [1, 1])
        if auto_pad.startswith("SAME") and any(e < st for e, st in zip(extents, strides)):
            auto_pad = "VALID"  # onnxruntime refuses the negative pads SAME would need
        if auto_pad != "NOTSET":
            attributes.pop("pads", None)
            attributes["auto_pad"] = auto_pad
        if name == "AveragePool" and d.chance(0.5):
            attributes["count_include_pad"] = 1
        ceil = ceil and not plain  # onnx.reference's float64 ceil windows are wrong (issue 32's fuzz run)
        if ceil:
            attributes["ceil_mode"] = 1
        pads = attributes.get("pads", [0, 0, 0, 0])
        spatial, dropped = [], False
        for i, size in enumerate(x.shape[2:]):
            if auto_pad.startswith("SAME"):
                spatial.append(-(-size // strides[i]))
                continue
            n, gone = _pool_out(size, extents[i], strides[i], pads[i], pads[i + 2], ceil)
            if n < 1:
                raise Skip("empty window output")
            spatial.append(n)
            dropped |= gone
        d.note(name, "ceil window dropped", dropped)
        padded = "pads" in attributes or auto_pad.startswith("SAME")
        lo, hi = (min(x.lo, 0), max(x.hi, 0)) if padded and name == "AveragePool" else (x.lo, x.hi)
        d.emit(name, [x], [_result(x, shape=(*x.shape[:2], *spatial), lo=lo, hi=hi, exact=x.exact and name == "MaxPool")],
               **attributes)

    return make


def make_global_pool(name: str) -> Callable[[Draft, Value], None]:
    def make(d: Draft, x: Value) -> None:
        if len(x.shape) != 4:
            raise Skip("NCHW (onnx.reference's GlobalMaxPool drops a dim of 3-D inputs)")
        shape = (*x.shape[:2], *[1] * (len(x.shape) - 2))
        d.emit(name, [x], [_result(x, shape=shape, exact=x.exact and name == "GlobalMaxPool")])

    return make


def _axes(d: Draft, x: Value) -> list[int]:
    rank = len(x.shape)
    chosen = [a for a in range(rank) if d.chance(0.5)] or [int(d.rng.integers(rank))]
    return [a - rank if d.chance(0.3) else a for a in chosen]


REDUCTIONS = {
    # name: (dtypes, range of the result from (lo, hi, bound, count), exact)
    "ReduceSum": (NUMERIC, lambda lo, hi, b, n: (n * min(lo, 0), n * max(hi, 0))),
    "ReduceMean": (FLOATS, lambda lo, hi, b, n: (lo, hi)),
    "ReduceMax": (NUMERIC, lambda lo, hi, b, n: (lo, hi)),
    "ReduceMin": (NUMERIC, lambda lo, hi, b, n: (lo, hi)),
    "ReduceProd": (NUMERIC, lambda lo, hi, b, n: (-(max(b, 1) ** n), max(b, 1) ** n)),
    "ReduceL1": (FLOATS, lambda lo, hi, b, n: (0, n * b)),
    "ReduceL2": (FLOATS, lambda lo, hi, b, n: (0, math.sqrt(n) * b)),
    "ReduceSumSquare": (FLOATS, lambda lo, hi, b, n: (0, n * b * b)),
    "ReduceLogSumExp": (FLOATS, lambda lo, hi, b, n: (lo, hi + math.log(n))),
}


def make_reduce(name: str) -> Callable[[Draft, Value], None]:
    _, bounds = REDUCTIONS[name]

    def make(d: Draft, x: Value) -> None:
        if not x.shape:
            raise Skip("scalar")
        axes = _axes(d, x)
        keepdims = d.chance(0.5)
        count = math.prod(x.shape[a] for a in axes)
        if name == "ReduceProd" and x.dtype in INTS and x.bound > 1:
            raise Skip("integer products overflow")
        if name == "ReduceLogSumExp":
            x = clipped(d, x, -20.0, 10.0)
        lo, hi = _checked(x.dtype, *bounds(x.lo, x.hi, x.bound, count))
        if x.dtype == "uint8":
            lo = max(lo, 0)
        normalized = {a % len(x.shape) for a in axes}
        shape = [1 if i in normalized else s for i, s in enumerate(x.shape) if keepdims or i not in normalized]
        exact = x.exact and (name in ("ReduceMax", "ReduceMin") or x.dtype in INTS)
        d.emit(name, [x, d.ints(axes)], [_result(x, shape=shape, lo=lo, hi=hi, exact=exact)], keepdims=int(keepdims))

    return make


def make_arg(name: str) -> Callable[[Draft, Value], None]:
    def make(d: Draft, x: Value) -> None:
        _need_exact(x)
        if not x.shape:
            raise Skip("scalar")
        axis = int(d.rng.integers(-len(x.shape), len(x.shape)))
        keepdims = d.chance(0.5)
        shape = [1 if i == axis % len(x.shape) else s for i, s in enumerate(x.shape) if keepdims or i != axis % len(x.shape)]
        d.emit(name, [x], [_result(x, shape=shape, dtype="int64", lo=0, hi=x.shape[axis] - 1, exact=True)],
               axis=axis, keepdims=int(keepdims), select_last_index=int(d.chance(0.3)))

    return make


def make_softmax(name: str) -> Callable[[Draft, Value], None]:
    def make(d: Draft, x: Value) -> None:
        if not x.shape:
            raise Skip("scalar")
        if name == "Hardmax":
            _need_exact(x)
        if name == "LogSoftmax" and x.dtype == "float16":
            x = clipped(d, x, -4.0, 4.0)  # onnx.reference takes the log of an underflowed softmax
        elif name == "LogSoftmax" and x.hi - x.lo > 80:
            x = clipped(d, x, -40.0, 40.0)  # likewise where exp(x - max) underflows float32
        axis = int(d.rng.integers(-len(x.shape), len(x.shape)))
        lo, hi = (-(x.hi - x.lo) - math.log(x.shape[axis]) - 1, 0.0) if name == "LogSoftmax" else (0.0, 1.0)
        d.emit(name, [x], [_result(x, lo=lo, hi=hi, exact=name == "Hardmax")], axis=axis)

    return make


def _normalized(x: Value, count: int) -> tuple[float, float]:
    """Normalised values lie within sqrt(count) of the mean in units of the deviation."""
    r = math.sqrt(max(count, 1)) + 1
    return -r, r


def _scale_bias(d: Draft, x: Value, shape) -> tuple[Value, Value, float, float]:
    scale = d.const((d.rng.integers(1, 9, shape) / 4 * d.pick([1, -1])).astype(x.dtype))
    bias = d.const((d.rng.integers(-4, 5, shape) / 4).astype(x.dtype))
    return scale, bias, scale.bound, bias.bound


EPSILONS = (2.0**-10, 1e-5, 1e-12)
"""Normalization epsilons: the generator's old one, the ONNX default, BERT's (which magnifies a
constant group's rounding: Σx/n in float32 is not x)."""
CONSTANT_ROW_VALUES = (0.7310586, -0.3, 0.1, 1 / 3)
"""Values whose float32 sums round (unlike the inputs' multiples of 1/8): the rows of a constant
input to a normalization."""


def _epsilon(d: Draft, op: str) -> float:
    epsilon = d.pick(EPSILONS)
    d.note(op, "epsilon", f"{epsilon:g}")
    return epsilon


def constant_groups(d: Draft, x: Value, op: str, group_dims: int) -> Value:
    """`x`, or (sometimes, for an op onnxruntime checks) a new input of x's shape whose trailing
    `group_dims` dimensions hold one `CONSTANT_ROW_VALUES` value per group: each normalizes to
    exactly its bias."""
    evaluated = op in ONNXRUNTIME_OPS and (x.dtype == "float32" or (op == "LayerNormalization" and x.dtype != "float16"))
    if not evaluated or not d.chance(0.3):
        d.note(op, "groups", "varying")
        return x
    outer = x.shape[: len(x.shape) - group_dims]
    values = np.asarray(CONSTANT_ROW_VALUES)[d.rng.integers(0, len(CONSTANT_ROW_VALUES), outer)]
    data = np.broadcast_to(values.reshape(*outer, *[1] * group_dims), x.shape).astype(x.dtype)
    value = d.new_input(x.shape, x.dtype, lo=float(data.min()) if data.size else 0.0, hi=float(data.max()) if data.size else 0.0)
    d.feeds[value.name] = data
    d.note(op, "groups", "constant")
    return value


def make_layer_norm(d: Draft, x: Value) -> None:
    _need_exact(x)
    if not x.shape:
        raise Skip("scalar")
    axis = int(d.rng.integers(-len(x.shape), len(x.shape)))
    tail = x.shape[axis:]
    x = constant_groups(d, x, "LayerNormalization", len(tail))
    scale, bias, s, b = _scale_bias(d, x, tail)
    r = _normalized(x, math.prod(tail))[1] * s + b
    operands = [x, scale, bias] if d.chance(0.6) else [x, scale]
    d.emit("LayerNormalization", operands, [_result(x, lo=-r, hi=r, exact=False)], axis=axis,
           epsilon=_epsilon(d, "LayerNormalization"))


def make_rms_norm(d: Draft, x: Value) -> None:
    _need_exact(x)
    if not x.shape:
        raise Skip("scalar")
    axis = int(d.rng.integers(-len(x.shape), len(x.shape)))
    scale, _, s, _ = _scale_bias(d, x, x.shape[axis:])
    r = math.sqrt(math.prod(x.shape[axis:])) * s + 1
    d.emit("RMSNormalization", [x, scale], [_result(x, lo=-r, hi=r, exact=False)], axis=axis, epsilon=_epsilon(d, "RMSNormalization"))


def make_channel_norm(name: str) -> Callable[[Draft, Value], None]:
    """BatchNormalization, InstanceNormalization, GroupNormalization over (N, C, ...) inputs."""

    def make(d: Draft, x: Value) -> None:
        _need_exact(x)
        if len(x.shape) < 2 + (name != "BatchNormalization"):
            raise Skip("needs N, C (and spatial) dims")
        c = x.shape[1]
        if name == "InstanceNormalization":
            x = constant_groups(d, x, name, len(x.shape) - 2)
        scale, bias, s, b = _scale_bias(d, x, (c,))
        # BatchNormalization's inference statistics are constants: its epsilon stays 2^-10
        attributes = {"epsilon": 2.0**-10 if name == "BatchNormalization" else _epsilon(d, name)}
        if name == "BatchNormalization":
            mean = d.const((d.rng.integers(-8, 9, (c,)) / 8).astype(x.dtype))
            var = d.const((d.rng.integers(2, 17, (c,)) / 8).astype(x.dtype))
            r = (x.bound + 1) * 2 * s + b
            d.emit(name, [x, scale, bias, mean, var], [_result(x, lo=-r, hi=r, exact=False)], **attributes)
            return
        r = _normalized(x, x.size // max(x.shape[0], 1))[1] * s + b
        if name == "GroupNormalization":
            attributes["num_groups"] = d.pick([g for g in range(1, c + 1) if c % g == 0])
            if x.dtype == "float64":
                # The default stash_type (1) makes the reference's function body compute the
                # statistics in float32, as E[x²] - E[x]², whose cancellation exceeds float64's
                # tolerance; the compiler computes them in float64.
                attributes["stash_type"] = onnx.TensorProto.DOUBLE
        d.emit(name, [x, scale, bias], [_result(x, lo=-r, hi=r, exact=False)], **attributes)

    return make


def make_lp_norm(d: Draft, x: Value) -> None:
    if not x.shape:
        raise Skip("scalar")
    x = positive(d, x, 0.5)
    d.emit("LpNormalization", [x], [_result(x, lo=-1.0, hi=1.0, exact=False)],
           axis=int(d.rng.integers(-len(x.shape), len(x.shape))), p=int(d.pick([1, 2])))


def make_mvn(d: Draft, x: Value) -> None:
    _need_exact(x)
    if len(x.shape) != 4:
        raise Skip("MVN's default axes need 4-D")
    r = math.sqrt(x.size) + 1
    d.emit("MeanVarianceNormalization", [x], [_result(x, lo=-r, hi=r, exact=False)])


# movement


def _factor(d: Draft, n: int) -> list[int]:
    dims = []
    while n > 1 and len(dims) < 4:
        divisors = [k for k in range(2, n + 1) if n % k == 0]
        k = d.pick(divisors)
        dims.append(k)
        n //= k
    if n > 1:
        dims[-1] *= n
    return dims or [1]


def make_reshape(d: Draft, x: Value) -> None:
    shape = _factor(d, x.size) if x.size else [0]
    d.rng.shuffle(shape)
    spec = list(shape)
    if d.chance(0.4):
        spec[int(d.rng.integers(len(spec)))] = -1
    elif d.chance(0.3) and len(x.shape) >= 1 and len(spec) >= 1 and spec[0] == x.shape[0]:
        spec[0] = 0
    d.emit("Reshape", [x, d.ints(spec)], [_result(x, shape=shape)])


def make_transpose(d: Draft, x: Value) -> None:
    if not x.shape:
        raise Skip("scalar")
    perm = [int(i) for i in d.rng.permutation(len(x.shape))]
    d.emit("Transpose", [x], [_result(x, shape=[x.shape[p] for p in perm])], perm=perm)


def make_flatten(d: Draft, x: Value) -> None:
    axis = int(d.rng.integers(-len(x.shape), len(x.shape) + 1)) if x.shape else 0
    a = axis + len(x.shape) if axis < 0 else axis
    d.emit("Flatten", [x], [_result(x, shape=(math.prod(x.shape[:a]), math.prod(x.shape[a:])))], axis=axis)


def make_squeeze(d: Draft, x: Value) -> None:
    ones = [i for i, s in enumerate(x.shape) if s == 1]
    if ones:
        axes = [a for a in ones if d.chance(0.7)] or ones[:1]
        d.emit("Squeeze", [x, d.ints(axes)], [_result(x, shape=[s for i, s in enumerate(x.shape) if i not in axes])])
        return
    if len(x.shape) >= 4:
        raise Skip("rank")
    axis = int(d.rng.integers(0, len(x.shape) + 1))
    d.emit("Unsqueeze", [x, d.ints([axis])], [_result(x, shape=(*x.shape[:axis], 1, *x.shape[axis:]))])


def make_slice(d: Draft, x: Value) -> None:
    if not x.shape:
        raise Skip("scalar")
    axes = [a for a in range(len(x.shape)) if d.chance(0.6)] or [0]
    starts, ends, steps, shape = [], [], [], list(x.shape)
    for a in axes:
        n = x.shape[a]
        step = d.pick([1, 1, 2, -1, -2])
        if step > 0:
            s, e = sorted(int(v) for v in d.rng.integers(0, n + 1, 2))
            e = max(e, s + 1) if n else e
            starts.append(s - n if d.chance(0.3) else s)
            ends.append(e if not (e == n and d.chance(0.3)) else 2**62)
            shape[a] = len(range(s, min(e, n), step))
        else:
            s, e = sorted(int(v) for v in d.rng.integers(0, n, 2))[::-1] if n else (0, 0)
            starts.append(s)
            ends.append(e - 1 if e > 0 and d.chance(0.5) else -(2**62))
            shape[a] = len(range(s, -1 if ends[-1] < 0 else ends[-1], step))
        steps.append(step)
    if 0 in shape:
        raise Skip("empty slice")
    operands = [x, d.ints(starts), d.ints(ends), d.ints(axes), d.ints(steps)]
    d.emit("Slice", operands, [_result(x, shape=shape)])


def make_concat(d: Draft, x: Value) -> None:
    if not x.shape:
        raise Skip("scalar")
    axis = int(d.rng.integers(len(x.shape)))
    parts = [x]
    for _ in range(int(d.rng.integers(1, 3))):
        candidates = [v for v in d.pool if v.dtype == x.dtype and len(v.shape) == len(x.shape)
                      and all(p == q for i, (p, q) in enumerate(zip(v.shape, x.shape)) if i != axis)]
        if candidates and d.chance(0.6):
            parts.append(d.pick(candidates))
        else:
            shape = list(x.shape)
            shape[axis] = int(d.rng.integers(1, 4))
            parts.append(d.new_input(shape, x.dtype))
    shape = list(x.shape)
    shape[axis] = sum(p.shape[axis] for p in parts)
    if math.prod(shape) > MAX_ELEMENTS:
        raise Skip("too large")
    d.emit("Concat", parts, [_result(x, shape=shape, lo=min(p.lo for p in parts), hi=max(p.hi for p in parts),
                                     exact=all(p.exact for p in parts))], axis=axis - len(x.shape) if d.chance(0.3) else axis)


def make_split(d: Draft, x: Value) -> None:
    axes = [a for a, s in enumerate(x.shape) if s >= 2]
    if not axes:
        raise Skip("nothing to split")
    axis = d.pick(axes)
    n = x.shape[axis]
    if d.chance(0.5):
        cut = sorted({int(c) for c in d.rng.integers(1, n, int(d.rng.integers(1, 3)))})
        sizes = [b - a for a, b in zip([0, *cut], [*cut, n])]
        operands, attributes = [x, d.ints(sizes)], {}
    else:
        parts = int(d.rng.integers(2, min(n, 3) + 1))
        chunk = -(-n // parts)
        sizes = [min(chunk, n - i * chunk) for i in range(parts) if n - i * chunk > 0]
        operands, attributes = [x], {"num_outputs": len(sizes)}
    results = [_result(x, shape=[s if i == axis else d_ for i, d_ in enumerate(x.shape)]) for s in sizes]
    d.emit("Split", operands, results, axis=axis, **attributes)


def make_gather(d: Draft, x: Value) -> None:
    if not x.shape:
        raise Skip("scalar")
    axis = int(d.rng.integers(len(x.shape)))
    n = x.shape[axis]
    index_shape = d.pick([(), (int(d.rng.integers(1, 4)),), (2, 2)])
    indices = d.const(d.rng.integers(-n, n, index_shape).astype(d.pick(["int64", "int32"])))
    shape = (*x.shape[:axis], *index_shape, *x.shape[axis + 1 :])
    if math.prod(shape) > MAX_ELEMENTS:
        raise Skip("too large")
    d.emit("Gather", [x, indices], [_result(x, shape=shape)], axis=axis)


def make_expand(d: Draft, x: Value) -> None:
    target = [d.pick([2, 3]) if s == 1 and d.chance(0.5) else s for s in x.shape]
    if len(target) < 4 and d.chance(0.4):
        target = [int(d.rng.integers(1, 4)), *target]
    if math.prod(target) > MAX_ELEMENTS:
        raise Skip("too large")
    spec = [1 if t == s and d.chance(0.3) else t for t, s in zip(target[len(target) - len(x.shape):], x.shape)]
    spec = target[: len(target) - len(x.shape)] + spec
    d.emit("Expand", [x, d.ints(spec)], [_result(x, shape=target)])


def make_tile(d: Draft, x: Value) -> None:
    repeats = [int(d.rng.integers(1, 3)) for _ in x.shape]
    shape = [s * r for s, r in zip(x.shape, repeats)]
    if math.prod(shape) > MAX_ELEMENTS or not x.shape:
        raise Skip("too large")
    d.emit("Tile", [x, d.ints(repeats)], [_result(x, shape=shape)])


def make_pad(d: Draft, x: Value) -> None:
    if not x.shape:
        raise Skip("scalar")
    mode = d.pick(["constant", "reflect", "edge"])
    rank = len(x.shape)
    limit = lambda s: s - 1 if mode == "reflect" else 2
    pads = [int(d.rng.integers(0, min(limit(s), 2) + 1)) for s in x.shape] * 2
    pads = [int(p) if d.chance(0.6) else 0 for p in pads]
    shape = [s + pads[i] + pads[i + rank] for i, s in enumerate(x.shape)]
    if math.prod(shape) > MAX_ELEMENTS:
        raise Skip("too large")
    operands = [x, d.ints(pads)]
    lo, hi = x.lo, x.hi
    if mode == "constant":
        fill = float(d.pick([0, 1, 2]))
        operands.append(d.const(np.asarray(fill, dtype=x.dtype)))
        lo, hi = min(lo, fill), max(hi, fill)
    d.emit("Pad", operands, [_result(x, shape=shape, lo=lo, hi=hi)], mode=mode)


def make_trilu(d: Draft, x: Value) -> None:
    if len(x.shape) < 2:
        raise Skip("matrix")
    operands = [x, d.ints(int(d.rng.integers(-2, 3)))] if d.chance(0.6) else [x]
    d.emit("Trilu", operands, [_result(x, lo=min(x.lo, 0), hi=max(x.hi, 0))], upper=int(d.chance(0.5)))


def make_cumsum(d: Draft, x: Value) -> None:
    if not x.shape:
        raise Skip("scalar")
    axis = int(d.rng.integers(-len(x.shape), len(x.shape)))
    n = x.shape[axis]
    lo, hi = _checked(x.dtype, n * min(x.lo, 0), n * max(x.hi, 0))
    exact = x.exact and (x.dtype in INTS or max(abs(lo), abs(hi)) <= EXACT_LIMIT)
    d.emit("CumSum", [x, d.ints(axis)], [_result(x, lo=lo, hi=hi, exact=exact)],
           exclusive=int(d.chance(0.3)), reverse=int(d.chance(0.3)))


def make_space_depth(name: str) -> Callable[[Draft, Value], None]:
    def make(d: Draft, x: Value) -> None:
        if len(x.shape) != 4:
            raise Skip("NCHW")
        n, c, h, w = x.shape
        if name == "DepthToSpace":
            if c % 4:
                raise Skip("channels")
            shape, attributes = (n, c // 4, h * 2, w * 2), {"mode": d.pick(["DCR", "CRD"])}
        else:
            if h % 2 or w % 2:
                raise Skip("spatial")
            shape, attributes = (n, c * 4, h // 2, w // 2), {}
        d.emit(name, [x], [_result(x, shape=shape)], blocksize=2, **attributes)

    return make


def make_sum(d: Draft, x: Value) -> None:
    """Sum and variadic Max/Min of two or three operands."""
    name = d.pick(["Sum", "Max", "Min"])
    parts = [x, *(d.partner(x) for _ in range(int(d.rng.integers(1, 3))))]
    if name == "Sum":
        lo, hi = _checked(x.dtype, sum(p.lo for p in parts), sum(p.hi for p in parts))
        exact = all(p.exact for p in parts) and max(abs(lo), abs(hi)) <= EXACT_LIMIT
    else:
        lo, hi, exact = min(p.lo for p in parts), max(p.hi for p in parts), all(p.exact for p in parts)
    d.emit(name, parts, [_result(x, shape=_broadcast(*(p.shape for p in parts)), lo=lo, hi=hi, exact=exact)])


def make_shape(d: Draft, x: Value) -> None:
    if d.chance(0.3):
        d.emit("Size", [x], [_result(x, shape=(), dtype="int64", lo=x.size, hi=x.size, exact=True)])
        return
    rank = len(x.shape)
    start, end = sorted(int(v) for v in d.rng.integers(-rank, rank + 1, 2)) if rank and d.chance(0.4) else (0, rank)
    dims = x.shape[slice(start, end)] if rank else ()
    if not dims:
        raise Skip("an empty shape")
    attributes = {"start": start, "end": end} if (start, end) != (0, rank) else {}
    d.emit("Shape", [x], [_result(x, shape=(len(dims),), dtype="int64", lo=min(dims, default=0), hi=max(dims, default=0),
                                   exact=True)], **attributes)


def make_gather_elements(d: Draft, x: Value) -> None:
    if not x.shape:
        raise Skip("scalar")
    axis = int(d.rng.integers(len(x.shape)))
    n = x.shape[axis]
    if n >= 64:  # np.choose takes at most 64 arrays, the index array included
        raise Skip("onnx.reference's GatherElements fails on long axes")
    shape = x.shape  # onnx.reference's GatherElements needs int64 indices of the data's shape
    indices = d.const(d.rng.integers(-n, n, shape).astype("int64"))
    d.emit("GatherElements", [x, indices], [_result(x, shape=shape)], axis=axis - len(x.shape) if d.chance(0.3) else axis)


def _table() -> tuple[Op, ...]:
    ops = [Op(n, FLOATS, _unary(n, f, domain, floor)) for n, (f, domain, floor) in UNARY_FLOAT.items()]
    ops += [Op(n, dtypes, _exact_unary(n, f)) for n, (f, dtypes) in EXACT_UNARY.items()]
    ops += [Op(n, FLOATS, _discrete(n, f)) for n, f in
            {"Floor": np.floor, "Ceil": np.ceil, "Round": np.round, "Sign": np.sign}.items()]
    ops += [Op("Sign", (*SIGNED, "uint8"), _discrete("Sign", np.sign))]
    ops += [Op(n, dtypes, _arith(n, f), 3.0) for n, (f, dtypes) in ARITH.items()]
    ops += [
        Op("Div", NUMERIC, make_div, 2.0),
        Op("Mod", NUMERIC, make_mod),
        Op("Pow", (*FLOATS, "int32", "int64"), make_pow),
        Op("Clip", NUMERIC, make_clip),
        Op("PRelu", FLOATS, make_prelu),
        Op("ThresholdedRelu", FLOATS, make_thresholded),
        Op("Shrink", FLOATS, make_shrink),
        *[Op(n, NUMERIC, _comparison(n)) for n in COMPARISONS],
        *[Op(n, ("bool",), _logic(n)) for n in ("And", "Or", "Xor", "Not")],
        Op("IsNaN", FLOATS, make_is("IsNaN"), 0.3),
        Op("IsInf", FLOATS, make_is("IsInf"), 0.3),
        Op("Where", ALL, make_where, 2.0, checked=False),
        *[Op(n, INTS, _bitwise(n)) for n in ("BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot")],
        Op("BitShift", ("uint8",), make_bitshift),
        Op("Cast", ALL, make_cast, 3.0),
        Op("MatMul", (*FLOATS, "int32", "int64"), make_matmul, 3.0),
        Op("Gemm", FLOATS, make_gemm, 2.0),
        Op("Conv", FLOATS, make_conv, 4.0),
        Op("Conv", FLOATS, make_conv_block),
        *[Op(n, FLOATS, make_pool(n), 4.0) for n in ("MaxPool", "AveragePool")],
        Op("ConvTranspose", ("float32",), make_conv_transpose, 16.0),
        Op("Resize", ("float32", "float16", "int8", "uint8"), make_resize, 10.0),
        *[Op(n, FLOATS, make_global_pool(n)) for n in ("GlobalAveragePool", "GlobalMaxPool")],
        *[Op(n, dtypes, make_reduce(n)) for n, (dtypes, _) in REDUCTIONS.items()],
        *[Op(n, NUMERIC, make_arg(n)) for n in ("ArgMax", "ArgMin")],
        *[Op(n, FLOATS, make_softmax(n), 2.0) for n in ("Softmax", "LogSoftmax", "Hardmax")],
        Op("LayerNormalization", FLOATS, make_layer_norm, 2.0),
        Op("RMSNormalization", FLOATS, make_rms_norm),
        *[Op(n, FLOATS, make_channel_norm(n), 1.0 + (n == "InstanceNormalization")) for n in ("BatchNormalization", "InstanceNormalization", "GroupNormalization")],
        Op("LpNormalization", FLOATS, make_lp_norm),
        # MeanVarianceNormalization: onnx 1.23 cannot infer the shapes of its function body (the
        # checker and the importer refuse every MVN model), so make_mvn waits outside the table.
        Op("Reshape", ALL, make_reshape, 2.0),
        Op("Transpose", ALL, make_transpose, 2.0),
        Op("Flatten", ALL, make_flatten),
        Op("Squeeze", ALL, make_squeeze),
        Op("Slice", ALL, make_slice, 2.0),
        Op("Concat", ALL, make_concat, 2.0),
        Op("Split", ALL, make_split),
        Op("Gather", ALL, make_gather, 2.0),
        Op("Expand", ALL, make_expand),
        Op("Tile", ALL, make_tile),
        Op("Pad", NUMERIC, make_pad, 2.0),
        Op("Trilu", ALL, make_trilu),
        Op("CumSum", (*FLOATS, "int32", "int64"), make_cumsum),
        Op("Sum", NUMERIC, make_sum),
        Op("Shape", ALL, make_shape, 0.5),
        Op("GatherElements", ALL, make_gather_elements),
        *[Op(n, ALL, make_space_depth(n)) for n in ("DepthToSpace", "SpaceToDepth")],
    ]
    return tuple(ops)


OPS = _table()
"""Every op the generator knows; `available_ops()` keeps those with a lowering at HEAD."""

_SECOND_OP = {"Squeeze": "Unsqueeze", "Shape": "Size", "Sum": "Max"}
"""Ops a generator may emit besides its own name (all must be supported for it to be used)."""


def available_ops(supported: frozenset[str] | None = None) -> tuple[Op, ...]:
    if supported is None:
        from zant.passes.onnx_to_uop import supported_ops

        supported = supported_ops()
    names = {s.removeprefix("onnx.") for s in supported}
    helpers = {"Abs", "Add", "Clip"}  # the guards' ops
    if not helpers <= names:
        raise RuntimeError(f"the generator's guards need {sorted(helpers - names)}")
    chosen = [op for op in OPS if op.name in names and _SECOND_OP.get(op.name, op.name) in names]
    try:
        import onnxruntime  # noqa: F401
    except ImportError:  # onnx.reference alone departs from the definition on these (ONNXRUNTIME_OPS)
        chosen = [op for op in chosen if op.name not in ("Resize", "ConvTranspose")]
    return tuple(replace(op, dtypes=_schema_dtypes(op.name, op.dtypes)) if op.checked else op for op in chosen)


def _schema_dtypes(name: str, dtypes: tuple[str, ...]) -> tuple[str, ...]:
    """`dtypes` less those the op's schema (at OPSET) refuses for its first input."""
    schema = onnx.defs.get_schema(name, OPSET)
    allowed = next(c.allowed_type_strs for c in schema.type_constraints if c.type_param_str == schema.inputs[0].type_str)
    tensor = lambda t: f"tensor({'double' if t == 'float64' else 'float' if t == 'float32' else 'float16' if t == 'float16' else t})"
    return tuple(t for t in dtypes if tensor(t) in allowed)


# -- graphs -----------------------------------------------------------------------------------


@dataclass
class Graph:
    """A generated graph: the model, its feeds (in graph-input order) and its tolerance."""

    index: int
    model: onnx.ModelProto
    feeds: list[np.ndarray]
    rtol: float
    atol: float = 0.0
    expected: list[np.ndarray] | None = None
    notes: list = field(default_factory=list)
    """The generator's (op, feature, value) notes (`Draft.note`)."""


def _random_shape(d: Draft) -> tuple[int, ...]:
    rank = d.pick([0, 1, 2, 2, 3, 3, 4, 4, 4])
    shape = [int(d.rng.integers(1, 6)) for _ in range(rank)]
    while math.prod(shape) > 128:
        shape[int(np.argmax(shape))] -= 1
    return tuple(shape)


def generate(seed: int, index: int, ops: Sequence[Op] | None = None, max_nodes: int = 12) -> Graph:
    """Graph number `index` of the run seeded `seed`: deterministic in both."""
    ops = available_ops() if ops is None else ops
    rng = np.random.default_rng([seed, index])
    d = Draft(rng)
    want = int(rng.integers(2, max_nodes + 1))
    chain = d.chance(0.4)
    float_dtype = d.pick(["float32", "float32", "float32", "float16", "float64"])
    first = d.new_input(_random_shape(d), d.pick([float_dtype] * 4 + list(INTS) + ["bool"]))
    d.pool.append(first)
    if not chain and d.chance(0.5):
        d.pool.append(d.new_input(_random_shape(d), d.pick([first.dtype, float_dtype])))
    attempts = 0
    while len(d.nodes) < want and attempts < 50 * want:
        attempts += 1
        x = d.pool[-1] if chain or d.chance(0.4) else d.pick(d.pool)
        candidates = [op for op in ops if x.dtype in op.dtypes]
        if not candidates:
            continue
        weights = np.array([op.weight for op in candidates])
        op = candidates[int(rng.choice(len(candidates), p=weights / weights.sum()))]
        saved = (len(d.nodes), len(d.inputs), len(d.initializers), len(d.pool), d.uses.copy())
        try:
            op.make(d, x)
            if len(d.nodes) > max_nodes:  # its guards made the graph too long
                raise Skip("too many nodes")
        except Skip:
            n_nodes, n_inputs, n_inits, n_pool, uses = saved
            for value in d.inputs[n_inputs:]:
                d.feeds.pop(value.name)
            del d.nodes[n_nodes:], d.inputs[n_inputs:], d.initializers[n_inits:], d.pool[n_pool:]
            d.uses = uses
    return _finish(d, seed, index)


def _finish(d: Draft, seed: int, index: int) -> Graph:
    inputs = {v.name for v in d.inputs}
    produced = [v for v in d.pool if v.name not in inputs]
    outputs = [v for v in produced if not d.uses[v.name]]
    outputs += [v for v in produced if d.uses[v.name] and d.chance(0.15)]
    if not outputs:  # every node was skipped: one Identity keeps the graph valid
        outputs = d.emit("Identity", [d.inputs[0]], [_result(d.inputs[0])])
    used = {name for node in d.nodes for name in node.input}
    graph_inputs = [v for v in d.inputs if v.name in used]
    info = lambda v: helper.make_tensor_value_info(v.name, helper.np_dtype_to_tensor_dtype(np.dtype(v.dtype)), v.shape)
    graph = helper.make_graph(
        d.nodes, f"random_{seed}_{index}", [info(v) for v in graph_inputs], [info(v) for v in outputs],
        initializer=[t for t in d.initializers if t.name in used],
        value_info=[info(v) for v in produced if v not in outputs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    dtypes = {v.dtype for v in d.pool}
    rtol = tolerance(dtypes, model)
    return Graph(index, model, [d.feeds[v.name] for v in graph_inputs], rtol, notes=list(d.notes))


COVERED_ATTRIBUTES = {
    "Resize": ("mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
               "keep_aspect_ratio_policy", "extrapolation_value"),
    "ConvTranspose": ("auto_pad", "group"),
    "MaxPool": ("ceil_mode", "auto_pad"),
    "AveragePool": ("ceil_mode", "auto_pad", "count_include_pad"),
    "LayerNormalization": (), "RMSNormalization": (), "InstanceNormalization": (), "GroupNormalization": (),
}
"""The ops whose attribute values the coverage summary counts (and the attributes, each with
its schema default where a node omits it); the generator's notes add features that are not
attributes (auto_pad NOTSET, fractional scales, extents of 1, constant groups, epsilons)."""


def coverage(graph: Graph) -> list[list[str]]:
    """[op, attribute or feature, value] for each covered node of `graph`, and its notes."""
    drawn = []
    for node in graph.model.graph.node:
        names = COVERED_ATTRIBUTES.get(node.op_type)
        if names is None:
            continue
        schema = onnx.defs.get_schema(node.op_type, OPSET)
        given = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        for name in names:
            value = given.get(name)
            if value is None and name in schema.attributes and schema.attributes[name].default_value.type:
                value = helper.get_attribute_value(schema.attributes[name].default_value)
            if isinstance(value, bytes):
                value = value.decode()
            drawn.append([node.op_type, name, f"{value:g}" if isinstance(value, float) else str(value)])
    drawn += [list(note) for note in graph.notes if note[0] in {n.op_type for n in graph.model.graph.node}]
    return drawn


def coverage_summary(records: Sequence[dict]) -> dict[str, dict[str, dict[str, int]]]:
    """op → attribute or feature → value → how many nodes drew it, over `records`."""
    counts: dict = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
    for record in records:
        for op, name, value in record.get("coverage", []):
            counts[op][name][value] += 1
    return {op: {name: dict(sorted(values.items())) for name, values in sorted(names.items())} for op, names in sorted(counts.items())}


def tolerance(dtypes: set[str], model: onnx.ModelProto) -> float:
    """The relative tolerance of a graph over values of `dtypes` (see RTOL)."""
    return max((RTOL[t] for t in dtypes & set(FLOATS)), default=0.0) * (1 + _float_depth(model))


def _float_depth(model: onnx.ModelProto) -> int:
    depth: dict[str, int] = collections.defaultdict(int)
    for node in model.graph.node:
        level = 1 + max((depth[i] for i in node.input if i), default=0)
        for o in node.output:
            depth[o] = level
    return max(depth.values(), default=0)


ONNXRUNTIME_OPS = ("Resize", "ConvTranspose", "MaxPool", "AveragePool", "LayerNormalization", "InstanceNormalization")
"""Ops the reference runs through onnxruntime, one node at a time (onnx.reference where
onnxruntime has no kernel for the dtype, or is not installed). onnx.reference departs from the
definition there: Resize's length_resized is in·scale (align_corners, pytorch_half_pixel and
tf_crop_and_resize with an extent of 1 or a fractional in·scale), MaxPool with SAME_LOWER
pads, AveragePool refuses ceil_mode with auto_pad, ConvTranspose slices W wrongly with groups,
and the normalizations' Σx/n in float32 rounds a constant row's deviations off 0, which
BERT's eps = 1e-12 magnifies (onnxruntime sums in double)."""


def _onnxruntime_op(name: str):
    """An onnx.reference op class running its node through onnxruntime."""
    from onnx.reference.op_run import OpRun
    from onnx.reference.ops import load_op

    def _run(self, *inputs, **_):
        import onnxruntime

        onnxruntime.set_default_logger_severity(3)  # tf_half_pixel_for_nn's deprecation warning
        node = self.onnx_node
        given = [(n, x) for n, x in zip(node.input, inputs) if n and x is not None]
        dtype = lambda x: helper.np_dtype_to_tensor_dtype(np.asarray(x).dtype)
        # every result has input 0's type (MaxPool's Indices aside, which graphs never use)
        graph = helper.make_graph([node], "node", [helper.make_tensor_value_info(n, dtype(x), np.shape(x)) for n, x in given],
                                  [helper.make_tensor_value_info(o, dtype(inputs[0]), None) for o in node.output[:1]])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        try:
            session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        except Exception:  # noqa: BLE001 - no kernel for this dtype: onnx.reference's
            return load_op("", name, OPSET)(node, self.run_params).run(*inputs)
        return tuple(session.run(None, {n: np.asarray(x) for n, x in given}))

    return type(name, (OpRun,), {"op_domain": "", "_run": _run})


def evaluator(model: onnx.ModelProto):
    """onnx.reference's evaluator of `model`, with `ONNXRUNTIME_OPS` run by onnxruntime."""
    from onnx.reference import ReferenceEvaluator

    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return ReferenceEvaluator(model)
    used = {n.op_type for n in model.graph.node} & set(ONNXRUNTIME_OPS)
    return ReferenceEvaluator(model, new_ops=[_onnxruntime_op(name) for name in sorted(used)])


def reference(model: onnx.ModelProto, feeds: Sequence[np.ndarray]) -> list[np.ndarray]:
    names = [v.name for v in model.graph.input if v.name not in {i.name for i in model.graph.initializer}]
    # a division by zero is undefined (ReleaseSafe traps on it): the graph is invalid
    with warnings.catch_warnings(), np.errstate(all="ignore", divide="raise"):
        warnings.simplefilter("ignore")
        return [np.asarray(y) for y in evaluator(model).run(None, dict(zip(names, feeds)))]


def _misinferred(model: onnx.ModelProto) -> bool:
    """Whether `model` holds a node whose output extents onnx 1.23's shape inference gets wrong
    (a pool's ceil_mode window that is dropped, a SAME ConvTranspose's output_padding)."""
    for node in model.graph.node:
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type in ("MaxPool", "AveragePool") and attributes.get("ceil_mode"):
            return True
        if node.op_type == "ConvTranspose" and any(attributes.get("output_padding", [])):
            return True
    return False


def check(model: onnx.ModelProto) -> None:
    """onnx's checker with shape inference, which only the nodes it misreads may fail
    (`_misinferred`: their declared extents are onnxruntime's and the definition's)."""
    try:
        onnx.checker.check_model(model, full_check=True)
    except onnx.shape_inference.InferenceError:
        if not _misinferred(model):
            raise
        onnx.checker.check_model(model)


def with_reference(graph: Graph) -> Graph:
    """Fill `expected` and the absolute tolerance (relative to the outputs' magnitude)."""
    graph.expected = reference(graph.model, graph.feeds)
    floats = [y for y in graph.expected if y.dtype.kind == "f" and y.size]
    scale = max((float(np.max(np.abs(y))) for y in floats), default=1.0)
    graph.atol = graph.rtol * max(1.0, scale)
    return graph


# -- compiling, building and running a batch --------------------------------------------------


def run_graphs(graphs: Sequence[Graph], directory: Path, tag: str = "batch", pipeline: str | None = None) -> dict[int, dict]:
    """Compile (with `pipeline`, default the host's), build (one shared library) and run
    `graphs`, each with `expected` filled in; a record (index, name, status, reason, rtol, atol,
    max_abs_error, max_ulp) per graph index."""
    directory.mkdir(parents=True, exist_ok=True)
    records = {
        g.index: {"index": g.index, "name": f"graph{g.index}", "status": "", "reason": "", "rtol": g.rtol,
                  "atol": g.atol, "max_abs_error": None, "max_ulp": None}
        for g in graphs
    }
    compiled = []
    for g in graphs:
        try:
            result, _ = batch.compile_zig(g.model, f"c{g.index:04d}", directory, pipeline=pipeline)
        except Exception as error:  # a ZantError or a compiler bug: both are findings, apart
            status, what = ("compile_error", "compile error") if isinstance(error, ZantError) else ("internal_error", "internal error")
            records[g.index].update(status=status, reason=f"{what}: " + batch.one_line(batch.describe_error(error)))
            continue
        result.data_sets = [(list(g.feeds), list(g.expected))]
        compiled.append((g, result))
    library, broken = None, {}
    if compiled:
        library, broken, _ = batch.build_batch(directory, [c.name for _, c in compiled], tag)
    for name, message in broken.items():  # "compile error: zig: cNNNN.zig:L:C: error: …"
        records[int(name[1:])].update(status="zig_error", reason=message.replace("compile error: zig:", "Zig compile error:", 1))
    specs = [
        {"name": c.name, "inputs": c.inputs, "outputs": c.outputs, "data_sets": c.data_sets, "rtol": g.rtol, "atol": g.atol}
        for g, c in compiled
        if c.name not in broken
    ]
    if library is not None and specs:
        results, _ = batch.run_batch(library, specs, directory)
        for name, result in results.items():
            records[int(name[1:])].update(
                status=result["status"], reason=result.get("reason", ""),
                max_abs_error=result.get("max_abs_error"), max_ulp=result.get("max_ulp"),
            )
    return records


def prepared(seed: int, index: int, ops: Sequence[Op] | None = None) -> Graph | str:
    """Graph `index` with its reference outputs, or why the reference refused it (a generator bug)."""
    graph = generate(seed, index, ops)
    try:
        check(graph.model)
        with_reference(graph)
    except Exception as error:  # noqa: BLE001 - any refusal of the reference is the generator's fault
        return f"generator error: {batch.one_line(batch.describe_error(error), 200)}"
    bad = [y for y in graph.expected if y.dtype.kind == "f" and not np.isfinite(y).all()]
    if bad:
        return "generator error: a reference output is not finite"
    return graph


# -- shrinking --------------------------------------------------------------------------------

Predicate = Callable[[list[Graph]], list[bool]]
"""Which of several candidate graphs still fail (one call per shrinking round, so a real
predicate can build all candidates into one library)."""


def _prune(model: onnx.ModelProto) -> None:
    """Drop nodes nothing needs, then unused inputs and initializers, in place."""
    graph = model.graph
    needed = {o.name for o in graph.output}
    keep = []
    for node in reversed(graph.node):
        if any(o in needed for o in node.output):
            keep.append(node)
            needed.update(i for i in node.input if i)
    del graph.node[:]
    graph.node.extend(reversed(keep))
    for field_name in ("input", "initializer"):
        items = [x for x in getattr(graph, field_name) if x.name in needed]
        del getattr(graph, field_name)[:]
        getattr(graph, field_name).extend(items)


def _retyped(model: onnx.ModelProto, feeds: dict[str, np.ndarray], base: Graph) -> Graph | None:
    """A valid Graph of `model` fed `feeds` (by name), its outputs typed from the reference; None
    when the reference or the checker refuses it."""
    _prune(model)
    graph = model.graph
    del graph.value_info[:]
    initializers = {t.name for t in graph.initializer}
    inputs = [v.name for v in graph.input if v.name not in initializers]
    try:
        ordered = [feeds[n] for n in inputs]
        outputs = reference(model, ordered)
        typed = [helper.make_tensor_value_info(o.name, helper.np_dtype_to_tensor_dtype(y.dtype), y.shape)
                 for o, y in zip(graph.output, outputs)]
        del graph.output[:]
        graph.output.extend(typed)
        check(model)
    except Exception:  # noqa: BLE001 - the reference raises anything on an invalid candidate
        return None
    if any(y.dtype.kind == "f" and not np.isfinite(y).all() for y in outputs):
        return None
    candidate = Graph(base.index, model, ordered, base.rtol)
    candidate.expected = outputs
    floats = [y for y in outputs if y.dtype.kind == "f" and y.size]
    candidate.atol = base.rtol * max(1.0, max((float(np.abs(y).max()) for y in floats), default=1.0))
    return candidate


def _feeds(graph: Graph) -> dict[str, np.ndarray]:
    initializers = {t.name for t in graph.model.graph.initializer}
    names = [v.name for v in graph.model.graph.input if v.name not in initializers]
    return dict(zip(names, graph.feeds))


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return copy


def candidates(graph: Graph) -> list[Graph]:
    """Every one-step simplification of `graph` that is still a valid model."""
    model, feeds = graph.model, _feeds(graph)
    out: list[Graph | None] = []
    # fewer outputs
    if len(model.graph.output) > 1:
        for i in range(len(model.graph.output)):
            m = _copy(model)
            del m.graph.output[i]
            out.append(_retyped(m, feeds, graph))
    # an output's producer dropped: one of its operands becomes the output instead
    producer = {o: node for node in model.graph.node for o in node.output}
    for i, output in enumerate(model.graph.output):
        for operand in producer[output.name].input if output.name in producer else ():
            if operand in producer:
                m = _copy(model)
                m.graph.output[i].name = operand
                out.append(_retyped(m, feeds, graph))
    # cut the graph at a value: it becomes an input holding its reference value
    produced = [o for node in model.graph.node for o in node.output if o]
    if produced:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            values = dict(zip(produced, evaluator(model).run(produced, feeds)))
        consumed = {i for node in model.graph.node for i in node.input}
        for name in produced:
            if name not in consumed:
                continue
            m = _copy(model)
            array = np.asarray(values[name])
            m.graph.input.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape))
            kept = [n for n in m.graph.node if name not in n.output]
            del m.graph.node[:]
            m.graph.node.extend(kept)
            out.append(_retyped(m, {**feeds, name: array}, graph))
    # drop an attribute (its default takes over) or an optional trailing input
    for n, node in enumerate(model.graph.node):
        for a in range(len(node.attribute)):
            m = _copy(model)
            del m.graph.node[n].attribute[a]
            out.append(_retyped(m, feeds, graph))
        if len(node.input) > 1:
            m = _copy(model)
            del m.graph.node[n].input[-1]
            out.append(_retyped(m, feeds, graph))
    # smaller inputs: halve one dimension of one input
    for name, array in feeds.items():
        for axis, size in enumerate(array.shape):
            if size > 1:
                m = _copy(model)
                smaller = np.take(array, range(size // 2), axis=axis)
                for v in m.graph.input:
                    if v.name == name:
                        v.type.tensor_type.shape.dim[axis].dim_value = smaller.shape[axis]
                out.append(_retyped(m, {**feeds, name: smaller}, graph))
    return [c for c in out if c is not None]


def _size(graph: Graph) -> tuple[int, int, int, int]:
    g = graph.model.graph
    # outputs last: dropping an output that is a graph input (a cut value) shrinks nothing else
    return (len(g.node), sum(x.size for x in graph.feeds), sum(len(n.attribute) + len(n.input) for n in g.node), len(g.output))


def shrink(graph: Graph, still_fails: Predicate, max_rounds: int = 40) -> Graph:
    """The smallest graph reachable by one-step simplifications that keep `still_fails` true."""
    for _ in range(max_rounds):
        options = sorted((c for c in candidates(graph) if _size(c) < _size(graph)), key=_size)
        if not options:
            break
        failing = [c for c, bad in zip(options, still_fails(options)) if bad]
        if not failing:
            break
        graph = failing[0]
    return graph


def same_failure(status: str, directory: Path, pipeline: str | None = None) -> Predicate:
    """A predicate: the candidates that still end with `status` when compiled (with `pipeline`)
    and run."""
    rounds = iter(range(10**6))

    def fails(graphs: list[Graph]) -> list[bool]:
        n = next(rounds)
        renumbered = [replace(g, index=k) for k, g in enumerate(graphs)]
        records = run_graphs(renumbered, directory / f"shrink{n}", f"shrink{n}", pipeline)
        shutil.rmtree(directory / f"shrink{n}", ignore_errors=True)
        return [records[k]["status"] == status for k in range(len(graphs))]

    return fails


# -- the driver -------------------------------------------------------------------------------

FINDINGS = ("mismatch", "trap", "compile_error", "internal_error", "zig_error")
"""The statuses that are findings: a wrong result, a ReleaseSafe trap, a graph the compiler refused
(ZantError), one it crashed on, one whose generated Zig does not compile."""


def save_graph(graph: Graph, path: Path) -> None:
    """`path`.onnx and its inputs, `path`.npz (named like the graph inputs)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(graph.model, path.with_suffix(".onnx"))
    np.savez(path.with_suffix(".npz"), **_feeds(graph))


def load_graph(path: Path, index: int = 0) -> Graph:
    """A saved graph with its reference outputs; float tolerances as the generator sets them."""
    model = onnx.load(path.with_suffix(".onnx"))
    with np.load(path.with_suffix(".npz")) as data:
        feeds = {k: data[k] for k in data.files}
    dtypes = {helper.tensor_dtype_to_np_dtype(t.data_type).name for t in model.graph.initializer}
    dtypes |= {a.dtype.name for a in feeds.values()}
    dtypes |= {helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type).name for v in model.graph.output}
    rtol = tolerance(dtypes, model)
    graph = _retyped(model, feeds, Graph(index, model, [], rtol))
    if graph is None:
        raise ValueError(f"{path}: the reference refuses this model")
    return graph


def localize(graph: Graph, pipeline: str | None) -> str:
    """Which pass of `pipeline` breaks `graph` on its inputs, by the uop interpreter
    (`zant.interpreter`): the first module in uop is compared with the reference, each later one
    with the one before."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import default_pipeline, make_context
    from zant.frontend.onnx_importer import import_model_bytes
    from zant.interpreter import PassChangedResult, PassChecker, first_difference, unsupported_ops
    from zant.plugins import all_passes

    module = import_model_bytes(graph.model.SerializeToString(), ".", None)
    ctx, checker = make_context(), None
    try:
        for p in PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, pipeline or default_pipeline("host")).passes:
            p.apply(ctx, module)
            if checker is not None:
                checker.after(p.name)
            elif not unsupported_ops(module):
                checker = PassChecker(module, inputs=graph.feeds, rtol=graph.rtol, atol=graph.atol)
                if first_difference([y.reshape(-1) for y in graph.expected], checker.outputs(), graph.rtol, graph.atol):
                    return f"the module after '{p.name}' (the first in uop) already differs from the reference"
    except PassChangedResult as error:
        return str(error)
    except Exception as error:  # noqa: BLE001 - a localization that fails says why
        return f"not localized: {batch.one_line(batch.describe_error(error), 200)}"
    return "the interpreter agrees with the reference after every pass: the Zig printer or build differs"


def process_batch(task: tuple[int, list[int], str, str | None, bool, str | None, bool]) -> list[dict]:
    """Worker: generate, compile, build and run one batch of graphs; shrink and keep the findings
    (and, `--localize`, name the pass that breaks each mismatch)."""
    seed, indices, work_dir, keep, do_shrink, pipeline, find_pass = task
    directory = Path(work_dir) / f"batch{indices[0]:06d}"
    ops = available_ops()
    graphs, records = [], {}
    for index in indices:
        graph = prepared(seed, index, ops)
        if isinstance(graph, str):
            records[index] = {"index": index, "status": "generator_error", "reason": graph}
        else:
            graphs.append(graph)
    records.update(run_graphs(graphs, directory, pipeline=pipeline))
    for graph in graphs:
        record = records[graph.index]
        record["ops"] = sorted({n.op_type for n in graph.model.graph.node})
        record["coverage"] = coverage(graph)
        if find_pass and record["status"] in ("mismatch", "trap"):
            record["culprit"] = localize(graph, pipeline)
        if record["status"] in FINDINGS and keep:
            stem = Path(keep) / f"seed{seed}_graph{graph.index}_{record['status']}"
            save_graph(graph, stem.with_name(stem.name + "_original"))
            small = shrink(graph, same_failure(record["status"], directory, pipeline)) if do_shrink else graph
            save_graph(small, stem)
            record["shrunk_ops"] = [n.op_type for n in small.model.graph.node]
    shutil.rmtree(directory, ignore_errors=True)
    return [records[i] for i in indices]


def run(count: int, seed: int = 0, jobs: int = 2, batch_size: int = 100, keep: str | None = None,
        do_shrink: bool = True, start: int = 0, progress=None, pipeline: str | None = None,
        find_pass: bool = False) -> tuple[list[dict], float]:
    """Graphs `start` ... `start + count - 1` of seed `seed`, compiled with `pipeline` (default the
    driver's); their records and the seconds taken."""
    started = time.perf_counter()
    indices = list(range(start, start + count))
    root = Path(tempfile.mkdtemp(prefix="zant-random-"))
    tasks = [(seed, indices[i : i + batch_size], str(root), keep, do_shrink, pipeline, find_pass)
             for i in range(0, count, batch_size)]
    records: list[dict] = []
    try:
        if jobs <= 1 or len(tasks) <= 1:
            pool, outcomes = None, map(process_batch, tasks)
        else:
            pool = multiprocessing.get_context("fork").Pool(min(jobs, len(tasks)))
            outcomes = pool.imap_unordered(process_batch, tasks)
        left = Estimate(count)
        for finished, batch in enumerate(outcomes, 1):
            records += batch
            if progress:
                counts = collections.Counter(r["status"] for r in records)
                progress(f"batch {finished}/{len(tasks)}: "
                         + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
                         + f"; graphs {left.describe(len(records))}")
                for r in batch:
                    if r["status"] != "pass":
                        progress(f"  graph {r['index']}: {r['status']}: {r['reason']}")
                        if "culprit" in r:
                            progress(f"    localized: {r['culprit']}")
        if pool is not None:
            pool.close()
            pool.join()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return sorted(records, key=lambda r: r["index"]), time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zant.tools.random_graphs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100, help="graphs to generate (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
    parser.add_argument("--start", type=int, default=0, help="index of the first graph (default 0)")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="parallel workers (default 2)")
    parser.add_argument("--batch-size", type=int, default=100, help="graphs per library build (default 100)")
    parser.add_argument("--keep-failures", default=None, metavar="DIR", help="write each finding, shrunk, here")
    parser.add_argument("--no-shrink", action="store_true", help="keep findings as generated")
    parser.add_argument("--output-json", default=None, metavar="PATH", help="write per-graph records as JSON")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    from zant.driver import TARGETS, default_pipeline

    parser.add_argument("--target", default="host", choices=TARGETS,
                        help="whose default pipeline to compile with (default host); the code is built for the host")
    parser.add_argument("--pipeline", default=None, metavar="PIPELINE",
                        help="the pass pipeline to compile with, as zant-opt -p takes it (default: the target's)")
    parser.add_argument("--localize", action="store_true",
                        help="on a mismatch or trap, name the first pass that changes the result under the uop interpreter")
    args = parser.parse_args(argv)
    pipeline = args.pipeline or default_pipeline(args.target)
    progress = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    records, seconds = run(args.count, args.seed, max(1, args.jobs), max(1, args.batch_size), args.keep_failures,
                           not args.no_shrink, args.start, progress, pipeline, args.localize)
    counts = collections.Counter(r["status"] for r in records)
    print(f"{len(records)} graphs (seed {args.seed}, target {args.target}, pipeline {pipeline}) in {seconds:.0f} s: "
          + ", ".join(f"{s} {counts[s]}" for s in ("pass", *FINDINGS, "generator_error")))
    drawn = coverage_summary(records)
    print("attribute coverage (nodes per value):")
    for op, names in drawn.items():
        print(f"  {op}: " + "; ".join(f"{name} " + ", ".join(f"{v} {n}" for v, n in values.items()) for name, values in names.items()))
    if args.output_json:
        report = {"seed": args.seed, "target": args.target, "pipeline": pipeline, "seconds": round(seconds, 1),
                  "attribute_coverage": drawn, "records": records}
        Path(args.output_json).write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
    return 0 if all(counts[s] == 0 for s in (*FINDINGS, "generator_error")) else 1


if __name__ == "__main__":
    sys.exit(main())
