"""Element-wise ONNX ops: one loop nest over the output, operands read through broadcast views.

Each op is an entry in a table mapping it to the scalar code of one element, so adding an
element-wise op is one line; the patterns below build the loops for all of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from xdsl.dialects.builtin import (
    BFloat16Type,
    IntegerType,
    Signedness,
    f32,
    f64,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from zant.dialects.onnx import (
    AbsOp,
    AcosOp,
    AcoshOp,
    AddOp,
    AndOp,
    AsinOp,
    AsinhOp,
    AtanOp,
    AtanhOp,
    BitCastOp,
    BitShiftOp,
    BitwiseAndOp,
    BitwiseNotOp,
    BitwiseOrOp,
    BitwiseXorOp,
    CastLikeOp,
    CastOp,
    CeilOp,
    CeluOp,
    ClipOp,
    CosOp,
    CoshOp,
    DivOp,
    EluOp,
    EqualOp,
    ErfOp,
    ExpOp,
    FloorOp,
    GeluOp,
    GreaterOp,
    GreaterOrEqualOp,
    HardSigmoidOp,
    HardSwishOp,
    IsInfOp,
    IsNaNOp,
    LeakyReluOp,
    LessOp,
    LessOrEqualOp,
    LogOp,
    MaxOp,
    MeanOp,
    MinOp,
    MishOp,
    ModOp,
    MulOp,
    NegOp,
    NotOp,
    OnnxOp,
    OrOp,
    PReluOp,
    PowOp,
    ReciprocalOp,
    ReluOp,
    RoundOp,
    SeluOp,
    ShrinkOp,
    SigmoidOp,
    SignOp,
    SinOp,
    SinhOp,
    SoftplusOp,
    SoftsignOp,
    SqrtOp,
    SubOp,
    SumOp,
    SwishOp,
    TanOp,
    TanhOp,
    ThresholdedReluOp,
    WhereOp,
    XorOp,
    get_attr,
    input_value,
    inputs,
)
from zant.dialects import uop
from zant.dialects.uop import is_float_type
from zant.ir.resources import attr_to_array
from zant.ir.types import is_packed, is_storage_float, storage_float
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    CHANNELS_LAST,
    channels_last_order,
    layout_of,
    result_layout,
    tensor_element_type,
    tensor_shape,
)
from zant.passes.onnx_to_uop.parameters import constant_array

TRIGONOMETRY: dict[type[OnnxOp], str] = {
    SinOp: "sin", CosOp: "cos", TanOp: "tan", AsinOp: "asin", AcosOp: "acos", AtanOp: "atan",
    SinhOp: "sinh", CoshOp: "cosh", AsinhOp: "asinh", AcoshOp: "acosh", AtanhOp: "atanh",
}
"""The ONNX ops that are one uop primitive of the same (lowercased) name → that primitive."""

ScalarFn = Callable[[KernelBuilder, Operation, list[SSAValue | None]], SSAValue]


def _alu(name: str) -> ScalarFn:
    return lambda kb, op, xs: kb.alu(name, *xs)


def _fold(name: str) -> ScalarFn:
    """A variadic op (Max, Min, Sum) as a left fold of a binary primitive."""

    def fn(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
        acc = xs[0]
        for x in xs[1:]:
            acc = kb.alu(name, acc, x)
        return acc

    return fn


def _mean(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    """Mean: the variadic sum divided by the number of operands."""
    total = _fold("add")(kb, op, xs)
    return kb.alu("div", total, kb.const(len(xs), total.type))


def _relu(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    return kb.alu("max", x, kb.const(0, x.type))


def _leaky_relu(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    alpha = kb.const(get_attr(op, "alpha"), x.type)
    negative = kb.alu("cmplt", x, kb.const(0, x.type))
    return kb.where(negative, kb.alu("mul", alpha, x), x)


def _sigmoid(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    """e = exp(-|x|): 1/(1 + e) for x ≥ 0, e/(1 + e) for x < 0 (one division either way). The
    exponential never overflows, so a very negative x keeps its tiny (even subnormal) result
    instead of 1/(1 + inf) = 0."""
    (x,) = xs
    one = kb.const(1, x.type)
    e = kb.alu("exp", kb.alu("neg", kb.alu("abs", x)))
    numerator = kb.where(kb.alu("cmplt", x, kb.const(0, x.type)), e, one)
    return kb.alu("div", numerator, kb.alu("add", one, e))


def _clip(kb: KernelBuilder, op: Operation, xs: list[SSAValue | None]) -> SSAValue:
    # The optional min/max inputs (None when absent); the frontend converts models to the
    # current opset, where they replaced the old attributes.
    x, low, high = (xs + [None, None])[:3]
    assert x is not None
    if low is not None:
        x = kb.alu("max", x, low)
    if high is not None:
        x = kb.alu("min", x, high)
    return x


def _out_type(op: Operation) -> Attribute:
    return tensor_element_type(op.results[0])


def _in_f64(fn: ScalarFn) -> ScalarFn:
    """`fn` on float operands as is; on integer ones computed in f64 and cast back (ONNX Pow and
    Shrink on integers: the reference computes in floating point)."""

    def wrapped(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
        if is_float_type(xs[0].type):
            return fn(kb, op, xs)
        return kb.cast(fn(kb, op, [kb.cast(x, f64) for x in xs]), _out_type(op))

    return wrapped


def _pow(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    """`pow`, or x·x for a constant exponent of 2 (a decomposed LayerNorm's square: the same
    correctly rounded value, and it vectorizes)."""
    base, exponent = xs
    constant = constant_array(input_value(op, 1))
    if constant is not None and constant.size and np.all(constant == 2) and is_float_type(base.type):
        return kb.alu("mul", base, base)
    return kb.alu("pow", base, kb.cast(exponent, base.type))


def _cast(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    """Cast and CastLike (whose second operand only gives the type): the ONNX result type. A
    storage float (bfloat16, float8) converts through f32 (exact from it; to it rounded once,
    from f32, f16, integers to 2^24): to float8, `saturate=0` is `uop.cast_unsaturated`."""
    x, to = xs[0], _out_type(op)
    if is_packed(to) and isinstance(to, IntegerType) and is_float_type(x.type):
        # float to int4/uint4/int2/uint2 wraps, as the reference: through int32 (truncated)
        wide = kb.cast(x, f32) if is_storage_float(x.type) else x
        return kb.cast(kb.cast(wide, IntegerType(32)), to)
    if not (is_storage_float(x.type) or is_storage_float(to)):
        return kb.cast(x, to)
    if storage_float(to) is not None and storage_float(to)[1] == "e8m0" and get_attr(op, "round_mode") != "up":  # type: ignore[index]
        raise NotImplementedError(f"{op.name} to float8e8m0 with round_mode '{get_attr(op, 'round_mode')}' (only 'up')")
    wide = kb.cast(x, f32)
    if is_storage_float(to) and not isinstance(to, BFloat16Type) and not get_attr(op, "saturate"):
        return kb.insert(uop.CastUnsaturatedOp(wide, to)).result
    return kb.cast(wide, to)


def _bit_cast(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    """BitCast: the same bits read as the result type (a bool has no bit pattern of its own
    width, so bool to an 8-bit integer is 0 or 1, a conversion)."""
    (x,) = xs
    to = _out_type(op)
    if x.type == to:
        return x
    if i1 in (x.type, to):
        return kb.cast(x, to)
    return kb.insert(uop.BitcastOp(x, to)).result


def _swap(name: str) -> ScalarFn:
    """A comparison with its operands swapped: Greater(a, b) is cmplt(b, a)."""
    return lambda kb, op, xs: kb.alu(name, xs[1], xs[0])


def _where(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    return kb.where(*xs)


def _mod(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    """fmod=1: C fmod (the sign of the dividend); fmod=0: the sign of the divisor, as Python."""
    a, b = xs
    r = kb.alu("rem", a, b)
    t = a.type
    unsigned = isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED
    if get_attr(op, "fmod") == 1 or unsigned:
        return r
    zero = kb.const(0, t)
    signs_differ = kb.alu("cmpne", kb.alu("cmplt", r, zero), kb.alu("cmplt", b, zero))
    fix = kb.alu("and", kb.alu("cmpne", r, zero), signs_differ)
    return kb.where(fix, kb.alu("add", r, b), r)


def _bit_shift(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    return kb.alu("shl" if get_attr(op, "direction") == "LEFT" else "shr", *xs)


def _isnan(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    return kb.alu("cmpne", x, x)


def _isinf(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    tests = [
        kb.alu("cmpeq", x, kb.const(sign * math.inf, x.type))
        for sign, attr in ((1, "detect_positive"), (-1, "detect_negative"))
        if get_attr(op, attr)
    ]
    if not tests:
        return kb.const(0, i1)
    return tests[0] if len(tests) == 1 else kb.alu("or", *tests)


def _log1p(kb: KernelBuilder, u: SSAValue) -> SSAValue:
    """log(1 + u), accurate for small u (Kahan: log(w) · u / (w - 1) with w = 1 + u)."""
    w = kb.alu("add", kb.const(1, u.type), u)
    scaled = kb.alu("div", kb.alu("mul", kb.alu("log", w), u), kb.alu("sub", w, kb.const(1, u.type)))
    return kb.where(kb.alu("cmpeq", w, kb.const(1, u.type)), u, scaled)


def softplus_of(kb: KernelBuilder, x: SSAValue) -> SSAValue:
    """log(1 + e^x) as max(x, 0) + log1p(e^-|x|), which neither overflows nor loses small values."""
    tail = _log1p(kb, kb.alu("exp", kb.alu("neg", kb.alu("abs", x))))
    return kb.alu("add", kb.alu("max", x, kb.const(0, x.type)), tail)


def _elu(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    alpha = kb.const(get_attr(op, "alpha"), x.type)
    expm1 = kb.alu("sub", kb.alu("exp", x), kb.const(1, x.type))
    return kb.where(kb.alu("cmplt", x, kb.const(0, x.type)), kb.alu("mul", alpha, expm1), x)


def _selu(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    alpha = kb.const(get_attr(op, "alpha"), x.type)
    gamma = kb.const(get_attr(op, "gamma"), x.type)
    negative = kb.alu("sub", kb.alu("mul", alpha, kb.alu("exp", x)), alpha)
    chosen = kb.where(kb.alu("cmple", x, kb.const(0, x.type)), negative, x)
    return kb.alu("mul", gamma, chosen)


def _celu(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    alpha = kb.const(get_attr(op, "alpha"), x.type)
    zero = kb.const(0, x.type)
    expm1 = kb.alu("sub", kb.alu("exp", kb.alu("div", x, alpha)), kb.const(1, x.type))
    return kb.alu("add", kb.alu("max", zero, x), kb.alu("min", zero, kb.alu("mul", alpha, expm1)))


def _gelu(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    """0.5·x·(1 + erf(x/√2)), or with approximate="tanh" 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))."""
    (x,) = xs
    c = lambda v: kb.const(v, x.type)
    if get_attr(op, "approximate") == "tanh":
        cube = kb.alu("mul", kb.alu("mul", x, x), x)
        inner = kb.alu("mul", c(math.sqrt(2 / math.pi)), kb.alu("add", x, kb.alu("mul", c(0.044715), cube)))
        t = kb.alu("tanh", inner)
    else:
        t = kb.alu("erf", kb.alu("mul", x, c(math.sqrt(0.5))))
    return kb.alu("mul", kb.alu("mul", c(0.5), x), kb.alu("add", c(1), t))


def hard_sigmoid_of(kb: KernelBuilder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    line = kb.alu("add", kb.alu("mul", kb.const(alpha, x.type), x), kb.const(beta, x.type))
    return kb.alu("max", kb.const(0, x.type), kb.alu("min", kb.const(1, x.type), line))


def _hard_sigmoid(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    return hard_sigmoid_of(kb, xs[0], get_attr(op, "alpha"), get_attr(op, "beta"))


def _hard_swish(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    return kb.alu("mul", x, hard_sigmoid_of(kb, x, 1 / 6, 0.5))


def _mish(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    return kb.alu("mul", x, kb.alu("tanh", softplus_of(kb, x)))


def _softplus(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    return softplus_of(kb, xs[0])


def _softsign(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    return kb.alu("div", x, kb.alu("add", kb.const(1, x.type), kb.alu("abs", x)))


def _swish(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    scaled = kb.alu("mul", kb.const(get_attr(op, "alpha"), x.type), x)
    return kb.alu("mul", x, _sigmoid(kb, op, [scaled]))


def _prelu(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    x, slope = xs
    negative = kb.alu("cmplt", x, kb.const(0, x.type))
    return kb.where(negative, kb.alu("mul", slope, x), x)


def _thresholded_relu(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    above = kb.alu("cmplt", kb.const(get_attr(op, "alpha"), x.type), x)
    return kb.where(above, x, kb.const(0, x.type))


def _shrink(kb: KernelBuilder, op: Operation, xs: list[SSAValue]) -> SSAValue:
    (x,) = xs
    lambd, bias = (kb.const(get_attr(op, a), x.type) for a in ("lambd", "bias"))
    low = kb.alu("cmplt", x, kb.alu("neg", lambd))
    high = kb.alu("cmplt", lambd, x)
    rest = kb.where(high, kb.alu("sub", x, bias), kb.const(0, x.type))
    return kb.where(low, kb.alu("add", x, bias), rest)


UNARY: dict[str, ScalarFn] = {
    ReluOp.name: _relu,
    LeakyReluOp.name: _leaky_relu,
    SigmoidOp.name: _sigmoid,
    TanhOp.name: _alu("tanh"),
    ExpOp.name: _alu("exp"),
    LogOp.name: _alu("log"),
    AbsOp.name: _alu("abs"),
    NegOp.name: _alu("neg"),
    SqrtOp.name: _alu("sqrt"),
    ReciprocalOp.name: _alu("recip"),
    ErfOp.name: _alu("erf"),
    FloorOp.name: _alu("floor"),
    CeilOp.name: _alu("ceil"),
    ClipOp.name: _clip,
    CastOp.name: _cast,
    BitCastOp.name: _bit_cast,
    NotOp.name: _alu("not"),
    BitwiseNotOp.name: _alu("not"),
    SignOp.name: _alu("sign"),
    IsNaNOp.name: _isnan,
    IsInfOp.name: _isinf,
    RoundOp.name: _alu("round"),
    **{op.name: _alu(primitive) for op, primitive in TRIGONOMETRY.items()},
    EluOp.name: _elu,
    SeluOp.name: _selu,
    CeluOp.name: _celu,
    GeluOp.name: _gelu,
    HardSigmoidOp.name: _hard_sigmoid,
    HardSwishOp.name: _hard_swish,
    MishOp.name: _mish,
    SoftplusOp.name: _softplus,
    SoftsignOp.name: _softsign,
    SwishOp.name: _swish,
    ThresholdedReluOp.name: _thresholded_relu,
    ShrinkOp.name: _in_f64(_shrink),
}

BINARY: dict[str, ScalarFn] = {
    AddOp.name: _alu("add"),
    SubOp.name: _alu("sub"),
    MulOp.name: _alu("mul"),
    DivOp.name: _alu("div"),
    PowOp.name: _in_f64(_pow),
    MaxOp.name: _fold("max"),
    MinOp.name: _fold("min"),
    SumOp.name: _fold("add"),
    MeanOp.name: _mean,
    CastLikeOp.name: _cast,
    EqualOp.name: _alu("cmpeq"),
    LessOp.name: _alu("cmplt"),
    LessOrEqualOp.name: _alu("cmple"),
    GreaterOp.name: _swap("cmplt"),
    GreaterOrEqualOp.name: _swap("cmple"),
    AndOp.name: _alu("and"),
    OrOp.name: _alu("or"),
    XorOp.name: _alu("xor"),
    BitwiseAndOp.name: _alu("and"),
    BitwiseOrOp.name: _alu("or"),
    BitwiseXorOp.name: _alu("xor"),
    ModOp.name: _mod,
    BitShiftOp.name: _bit_shift,
    PReluOp.name: _prelu,
}

TERNARY: dict[str, ScalarFn] = {
    WhereOp.name: _where,
}

FLOAT_ONLY = frozenset(
    {
        MeanOp.name, SigmoidOp.name, TanhOp.name, ErfOp.name, ExpOp.name, LogOp.name, RoundOp.name,
        *(op.name for op in TRIGONOMETRY),
        EluOp.name, SeluOp.name, CeluOp.name, GeluOp.name, HardSigmoidOp.name, HardSwishOp.name,
        MishOp.name, SoftplusOp.name, SoftsignOp.name, SwishOp.name, ThresholdedReluOp.name,
    }
)
"""Ops ONNX defines on floating-point tensors only."""

CASTS = frozenset({CastOp.name, CastLikeOp.name})
"""Ops that convert storage floats themselves (every other op computes in f32 on them)."""

TYPE_ONLY_SECOND = frozenset({CastLikeOp.name})
"""Ops whose second operand only gives a type."""


def lower_elementwise(op: Operation, kb: KernelBuilder, fn: ScalarFn) -> list[Layout]:
    """One loop nest over the output shape; each present operand broadcast to it."""
    out_shape = tensor_shape(op.results[0])
    # CastLike's second operand only gives the element type: it is neither broadcast nor read.
    values = inputs(op)[:1] if op.name in TYPE_ONLY_SECOND else inputs(op)
    operands = [None if v is None else layout_of(v).broadcast_to(out_shape) for v in values]
    out_type = tensor_element_type(op.results[0])
    out = result_layout(kb, op, result_name(op), out_shape, out_type)  # channels-last if assign-layouts says
    if out.size == 0:
        return [out]  # no loop over nothing: it would index empty buffers
    # Arithmetic on a storage float (bfloat16) is computed in f32, rounded once on the store.
    widen = op.name not in CASTS
    # A channels-last output is walked in its memory order (channels innermost), every operand
    # through the same permutation of its view, at the identity index (which fuse-loops
    # matches with the producer's stores when they go through the same memory-order view).
    order = channels_last_order(out.rank) if CHANNELS_LAST in op.attributes and out.rank >= 3 else list(range(out.rank))
    walked_out = out.permute(order)
    walked = [None if layout is None else layout.permute(order) for layout in operands]
    with kb.loop_nest(walked_out.shape) as ivs:
        # Absent optional inputs stay None, so each scalar function sees ONNX input positions.
        values = [None if layout is None else _read(kb, layout, ivs) for layout in walked]
        if widen:
            values = [kb.cast(v, f32) if v is not None and is_storage_float(v.type) else v for v in values]
        result = fn(kb, op, values)
        kb.store(kb.cast(result, out_type) if widen and is_storage_float(out_type) else result, walked_out, ivs)
    return [out]


def _read(kb: KernelBuilder, layout: Layout, ivs: list[SSAValue]) -> SSAValue:
    """An operand's element at `ivs`. A constant operand that reads one element everywhere (a
    Clip bound, a scalar factor) is a `uop.const`: loaded, its value would be hidden from the Zig
    printer's one-compare clamp (Clip would test both operands for NaN) and from LLVM until it
    folds a load per element."""
    owner = layout.buffer.owner
    constant = isinstance(owner, uop.DefineGlobalOp) and owner.value is not None
    if constant and not any(layout.strides) and not is_storage_float(layout.element_type):
        return kb.const(attr_to_array(owner.value).reshape(-1)[layout.offset].item(), layout.element_type)
    return kb.load(layout, ivs)


def reject_bfloat16(op: Operation) -> None:
    """Refuse a lowering that computes on storage floats (bfloat16, float8: kept as bits, so
    only copies and casts to f32 read them; `zant.ir.types.is_storage_float`)."""
    values = [v for v in (*inputs(op), *op.results) if v is not None]
    for value in values:
        t = tensor_element_type(value)
        if is_storage_float(t):
            raise NotImplementedError(f"{op.name} on {storage_float(t)[0]} tensors is not supported")  # type: ignore[index]


def _check_types(op: Operation) -> None:
    """Reject float-only ops on integers, and element types this lowering does not compute in
    (float8: only casts; bfloat16 is computed in f32)."""
    x = tensor_element_type(inputs(op)[0])
    if op.name not in CASTS:
        for value in (*inputs(op), *op.results):
            if value is not None and is_storage_float(t := tensor_element_type(value)) and not isinstance(t, BFloat16Type):
                raise NotImplementedError(f"{op.name} on {storage_float(t)[0]} tensors is not supported")  # type: ignore[index]
    if op.name in FLOAT_ONLY and not is_float_type(x):
        raise ValueError(f"{op.name} on {x} is not defined")


class ElementwiseUnaryLowering(OnnxLowering):
    """Activations, unary math and casts (Relu, Sigmoid, Exp, Clip, Cast …): `y[i] = f(x[i])`."""

    op_names = frozenset(UNARY)

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        _check_types(op)
        return lower_elementwise(op, kb, UNARY[op.name])


class ElementwiseBinaryLowering(OnnxLowering):
    """Arithmetic, comparisons and logic with NumPy broadcasting (Add, Less, And, variadic Max …)
    through stride-0 views."""

    op_names = frozenset(BINARY)

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        _check_types(op)
        return lower_elementwise(op, kb, BINARY[op.name])


class ElementwiseTernaryLowering(OnnxLowering):
    """Where(condition, x, y), all three operands broadcast to the output."""

    op_names = frozenset(TERNARY)

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        _check_types(op)
        return lower_elementwise(op, kb, TERNARY[op.name])


PATTERNS = (ElementwiseUnaryLowering(), ElementwiseBinaryLowering(), ElementwiseTernaryLowering())
