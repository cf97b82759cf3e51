"""`recognize-quantize`: exporters' spelled-out quantization back into QuantizeLinear /
DequantizeLinear, and constant weights' quantization computed once.

PyTorch's PT2E quantization exported with `dynamo=True` writes QuantizeLinear decomposed into
element-wise ops, and DequantizeLinear likewise:

    Div(x, s) | Mul(x, c) → Round → Add(zp)? → Clip(lo, hi) | Max(lo)+Min(hi) → Cast(to=int8|uint8)
    Cast(to=float)(q) → Sub(zp)? → Mul(s)            (s, zp scalars or per-channel along one axis)

The quantize chain becomes `QuantizeLinear(x, s, zp)` and, when [lo, hi] is narrower than the
integer type's range, an integer `Clip(lo, hi)` after it (a saturating quantize to [lo, hi]:
saturating to the type's range first changes nothing). It is the same bytes: ONNX's Round and
QuantizeLinear both round half to even; `round(x / s) + zp` is an integer in float32 (exact
below 2^24, and beyond it the Clip saturates either way), and the Cast of an integer in range is
exact. Only with `s`, `zp`, `lo`, `hi` scalar constants, `zp`, `lo`, `hi` integers with
qmin ≤ lo ≤ hi ≤ qmax. `Mul(x, c)` (PyTorch writes `x * (1 / scale)`) is rewritten only when `c`
is a power of two: then `s = 1 / c` is exact and `x · c` and `x / s` are the same correctly
rounded quotient; for any other `c` the float product can differ from `x / s` by one ulp, which
moves ties, so the chain is left as it is (float). NaN inputs are not considered (the Cast of a
NaN is undefined in ONNX). The dequantize chain becomes `DequantizeLinear(q, s, zp)`: the Sub of
two small integers in float32 is exact and the Mul is the same single rounding.

Brevitas' QCDQ export writes `QuantizeLinear → Clip(lo, hi) → DequantizeLinear` on the integers
for sub-8-bit ranges (int4 in an int8 container: [-8, 7]); `fold-qdq` takes the DQ of that Clip
like any other int8 tensor. A QuantizeLinear of a constant (float weights, optionally through
such a Clip) is computed here into an integer constant, so `fold-qdq` sees a constant DQ'd
weight (its Conv / Gemm folds require one; `fold-constants` only runs after it).

Built from graphs mimicking the exporters (tests/test_quant_exports.py). The real tools' output
is in tests/data/interop/ (tests/test_interop_corpus.py): torch 2.13's dynamo exporter writes
PT2E's quantize as QuantizeLinear / DequantizeLinear themselves, so the decomposed chains are
what older exporters wrote; Brevitas 0.13's QCDQ weights (Q → Clip → DQ of a float constant,
once its initializer inputs are frozen) take `QuantizeConstant` as the imitation did.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp, Signedness, f32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from zant.dialects.onnx import (
    AddOp,
    CastOp,
    ClipOp,
    ConstantOp,
    DivOp,
    MaxOp,
    MinOp,
    MulOp,
    QuantizeLinearOp,
    RoundOp,
    SubOp,
    get_attr,
    inputs,
)
from zant.passes.fold_qdq import Builder, constant_value

INTEGER_TYPES = {
    IntegerType(8): np.int8,
    IntegerType(8, Signedness.UNSIGNED): np.uint8,
}
CAST_TO = {3: IntegerType(8), 2: IntegerType(8, Signedness.UNSIGNED)}  # TensorProto.INT8, UINT8
FLOAT = 1  # TensorProto.FLOAT


def _owner(value: SSAValue | None, op_class: type[Operation]) -> Operation | None:
    owner = value.owner if isinstance(value, SSAValue) else None
    return owner if isinstance(owner, op_class) else None


def _scalar(value: SSAValue | None) -> float | None:
    array = constant_value(value)
    if array is None or array.size != 1 or array.dtype.kind not in "iuf":
        return None
    return float(array.reshape(-1)[0])


def _split(op: Operation) -> tuple[SSAValue, float] | None:
    """A binary op of (tensor, scalar constant) in either order: (the tensor, the scalar)."""
    a, b = inputs(op)[:2]
    for value, other in ((a, b), (b, a)):
        scalar = _scalar(other)
        if scalar is not None and constant_value(value) is None:
            return value, scalar
    return None


def _bounds(value: SSAValue) -> tuple[SSAValue, float, float] | None:
    """`Clip(v, lo, hi)`, `Min(Max(v, lo), hi)` or `Max(Min(v, hi), lo)`: (v, lo, hi)."""
    if (clip := _owner(value, ClipOp)) is not None:
        operands = inputs(clip)
        if len(operands) != 3 or None in operands:
            return None
        lo, hi = _scalar(operands[1]), _scalar(operands[2])
        return None if lo is None or hi is None else (operands[0], lo, hi)
    for outer, inner in ((MinOp, MaxOp), (MaxOp, MinOp)):
        if (first := _owner(value, outer)) is None or len(inputs(first)) != 2:
            continue
        split = _split(first)
        if split is None or (second := _owner(split[0], inner)) is None or len(inputs(second)) != 2:
            continue
        inner_split = _split(second)
        if inner_split is None or not split[0].has_one_use():
            continue
        lo, hi = (inner_split[1], split[1]) if outer is MinOp else (split[1], inner_split[1])
        return inner_split[0], lo, hi
    return None


def _is_integer(x: float, dtype) -> bool:
    info = np.iinfo(dtype)
    return float(x).is_integer() and info.min <= x <= info.max


@dataclass(frozen=True)
class QuantizeChain:
    x: SSAValue
    scale: float
    zero_point: float
    lo: float
    hi: float


def quantize_chain(cast: Operation, dtype) -> QuantizeChain | None:
    """The decomposed quantize ending at `cast` (see the module docstring), or None."""
    bounded = _bounds(inputs(cast)[0])
    if bounded is None:
        return None
    value, lo, hi = bounded
    zero_point = 0.0
    if (add := _owner(value, AddOp)) is not None:
        split = _split(add)
        if split is None:
            return None
        value, zero_point = split
    if (round_op := _owner(value, RoundOp)) is None:
        return None
    divided = inputs(round_op)[0]
    if (div := _owner(divided, DivOp)) is not None:
        a, b = inputs(div)
        scale = _scalar(b)
        if scale is None or constant_value(a) is not None:
            return None
        x = a
    elif (mul := _owner(divided, MulOp)) is not None and (split := _split(mul)) is not None:
        x, factor = split
        mantissa, _ = np.frexp(np.float32(factor))
        if factor <= 0 or mantissa != 0.5:  # only a power of two: 1 / c exact, x·c == x / (1/c)
            return None
        scale = 1.0 / factor
    else:
        return None
    if not (scale > 0 and np.isfinite(np.float32(scale)) and np.float32(scale) == scale):
        return None
    if not all(_is_integer(v, dtype) for v in (zero_point, lo, hi)) or lo > hi:
        return None
    if x.type.get_element_type() != f32:
        return None
    return QuantizeChain(x, scale, zero_point, lo, hi)


def _narrowed(b: Builder, q: SSAValue, lo: float, hi: float, dtype, element_type) -> SSAValue:
    info = np.iinfo(dtype)
    if lo == info.min and hi == info.max:
        return q
    limits = [b.constant(np.array(v, dtype), element_type, name) for v, name in ((lo, "lo"), (hi, "hi"))]
    return b.op("Clip", [q, *limits], q.type)


class RecognizeQuantize(RewritePattern):
    """`… → Cast(to=int8/uint8)` of a decomposed quantize → QuantizeLinear (+ integer Clip)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, CastOp) or (element_type := CAST_TO.get(get_attr(op, "to"))) is None:
            return
        dtype = INTEGER_TYPES[element_type]
        chain = quantize_chain(op, dtype)
        if chain is None:
            return
        b = Builder(rewriter, op)
        scale = b.constant(np.array(chain.scale, np.float32), f32, "scale")
        zero_point = b.constant(np.array(chain.zero_point, dtype), element_type, "zero_point")
        result_type = op.results[0].type
        q = b.op("QuantizeLinear", [chain.x, scale, zero_point], result_type)
        q = _narrowed(b, q, chain.lo, chain.hi, dtype, element_type)
        q.name_hint = op.results[0].name_hint
        rewriter.replace(op, [], [q])


def _constant_operand(op: Operation) -> tuple[SSAValue, np.ndarray] | None:
    """A binary op of (tensor, constant) in either order: (the tensor, the constant's array)."""
    a, b = inputs(op)[:2]
    for value, other in ((a, b), (b, a)):
        array = constant_value(other)
        if array is not None and constant_value(value) is None:
            return value, array
    return None


def _per_axis(array: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, int | None] | None:
    """A scalar (axis None) or an array broadcasting along one axis of `shape` only: its values
    and that axis."""
    if array.size == 1:
        return array.reshape(-1), None
    if array.ndim > len(shape):
        return None
    padded = (1,) * (len(shape) - array.ndim) + array.shape
    axes = [i for i, d in enumerate(padded) if d != 1]
    if len(axes) != 1 or padded[axes[0]] != shape[axes[0]]:
        return None
    return array.reshape(-1), axes[0]


class RecognizeDequantize(RewritePattern):
    """`Mul(Sub(Cast(to=float)(q), zp)?, s)` with q int8/uint8 → DequantizeLinear(q, s, zp);
    `s` and `zp` scalars or per-channel constants along one axis (dequantize_per_channel)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, MulOp) or (split := _constant_operand(op)) is None:
            return
        value, scale = split
        shape = tuple(op.results[0].type.get_shape())
        if scale.dtype != np.float32 or not np.all(np.isfinite(scale) & (scale > 0)):
            return
        zero_point = np.zeros(1, np.float32)
        if (sub := _owner(value, SubOp)) is not None:
            a, b_ = inputs(sub)
            zp = constant_value(b_)
            if zp is None or zp.dtype != np.float32 or constant_value(a) is not None:
                return
            value, zero_point = a, zp
        cast = _owner(value, CastOp)
        if cast is None or get_attr(cast, "to") != FLOAT:
            return
        q = inputs(cast)[0]
        element_type = q.type.get_element_type()
        dtype = INTEGER_TYPES.get(element_type)
        if dtype is None or tuple(q.type.get_shape()) != shape or op.results[0].type.get_element_type() != f32:
            return
        scales, zero_points = _per_axis(scale, shape), _per_axis(zero_point, shape)
        if scales is None or zero_points is None:
            return
        axes = {axis for _, axis in (scales, zero_points) if axis is not None}
        if len(axes) > 1:
            return
        if not all(_is_integer(float(v), dtype) for v in zero_points[0]):
            return
        b = Builder(rewriter, op)
        if axes:
            channels = shape[axes.pop()]
            s_array = np.ascontiguousarray(np.broadcast_to(scales[0], (channels,)), np.float32)
            zp_array = np.ascontiguousarray(np.broadcast_to(zero_points[0], (channels,)), dtype)
            properties = {"axis": IntegerAttr(next(a for _, a in (scales, zero_points) if a is not None), 64)}
        else:
            s_array, zp_array, properties = scales[0].reshape(()), zero_points[0].reshape(()).astype(dtype), {}
        s = b.constant(s_array, f32, "scale")
        zp = b.constant(zp_array, element_type, "zero_point")
        dq = b.op("DequantizeLinear", [q, s, zp], op.results[0].type, properties)
        dq.name_hint = op.results[0].name_hint
        rewriter.replace(op, [], [dq])


def _quantize_constant(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, axis: int) -> np.ndarray:
    """ONNX QuantizeLinear on a constant (float32 division, ties to even, saturation)."""
    dtype = zero_point.dtype
    if scale.size > 1:
        shape = [1] * x.ndim
        shape[axis % x.ndim] = scale.size
        scale, zero_point = scale.reshape(shape), zero_point.reshape(shape)
    info = np.iinfo(dtype)
    y = np.rint(x.astype(np.float32) / scale.astype(np.float32)) + zero_point.astype(np.float32)
    return np.clip(y, info.min, info.max).astype(dtype)


class QuantizeConstant(RewritePattern):
    """QuantizeLinear of a float constant with constant parameters (and an integer Clip of it
    with constant bounds) → the integer constant."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, QuantizeLinearOp | ClipOp):
            return
        operands = inputs(op)
        if len(operands) != 3 or None in operands:
            return
        values = [constant_value(v) for v in operands]
        if any(v is None for v in values):
            return
        element_type = op.results[0].type.get_element_type()
        dtype = INTEGER_TYPES.get(element_type)
        if dtype is None or values[0].dtype != (np.float32 if isinstance(op, QuantizeLinearOp) else dtype):
            return
        if isinstance(op, QuantizeLinearOp):
            if values[1].dtype != np.float32 or values[2].dtype != dtype or get_attr(op, "saturate") not in (None, 1):
                return
            if (get_attr(op, "block_size") or 0) != 0:
                return
            axis = get_attr(op, "axis")
            array = _quantize_constant(values[0], values[1], values[2], 1 if axis is None else axis)
        else:
            array = np.clip(values[0], values[1].reshape(-1)[0], values[2].reshape(-1)[0]).astype(dtype)
        b = Builder(rewriter, op)
        hint = op.results[0].name_hint or "quantized"
        result = b.constant(array.reshape(op.results[0].type.get_shape()), element_type, hint)
        rewriter.replace(op, [], [result])
        for value in operands:
            if not value.uses and isinstance(value.owner, ConstantOp):
                rewriter.erase(value.owner)


@dataclass(frozen=True)
class RecognizeQuantizePass(ModulePass):
    """Decomposed quantize / dequantize chains back into QuantizeLinear / DequantizeLinear, and
    QuantizeLinear (→ Clip) of constants computed (see the module docstring)."""

    name = "recognize-quantize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(RecognizeQuantize(), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(RecognizeDequantize(), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(QuantizeConstant(), apply_recursively=False).rewrite_module(op)
        _erase_dead(op)


DECOMPOSED_OPS = (DivOp, MulOp, RoundOp, AddOp, SubOp, ClipOp, MaxOp, MinOp, CastOp, ConstantOp)


def _erase_dead(module: ModuleOp) -> None:
    """The replaced chains' ops and constants left without uses."""
    changed = True
    while changed:
        changed = False
        for op in reversed(list(module.walk())):
            if isinstance(op, DECOMPOSED_OPS) and all(not r.uses for r in op.results) and op.results:
                op.detach()
                op.erase()
                changed = True
