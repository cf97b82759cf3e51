"""The numbers of the uop ALU, as the Zig printer spells them (`zant.backend.zig_printer`,
`zig_helpers`), in Python and NumPy.

Values: integers (every width, signed or not, `i1`, `index`) are Python ints kept in their type's
range; floats are NumPy scalars of their type (`np.float32` …), so each operation rounds once in
the element type as IEEE arithmetic does; vectors are 1-D NumPy arrays of their lane type.

Integer `add`/`sub`/`mul`/`neg` wrap (`+%`); `index` arithmetic does not (Zig traps on an index
overflow, as it does on an integer division by zero: a `Trap` here). Float `max`/`min` propagate
NaN (`zant_fmax`); `shl`/`shr` are `zant_shl`/`zant_shr` (no undefined shift counts); casts are
`zant_cast` (float → int truncates and saturates, NaN → 0; int → int keeps the low bits).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import cache

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, IndexType, IntegerType, Signedness, VectorType
from xdsl.ir import Attribute

from zant.ir.types import is_storage_float, numpy_dtype


class Trap(Exception):
    """What the generated code traps on (ReleaseSafe): an access outside a buffer, an integer
    division by zero, an unsupported op. The message names it."""


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------


def is_int(t: Attribute) -> bool:
    """An integer scalar type (i1 and index included)."""
    return isinstance(t, IntegerType | IndexType)


def is_bool(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def dtype_of(t: Attribute) -> np.dtype:
    """The NumPy dtype of a sized scalar (or a vector's lanes): i1 is `bool`."""
    if isinstance(t, VectorType):
        t = t.get_element_type()
    return numpy_dtype(t)


def int_range(t: Attribute) -> tuple[int, int] | None:
    """The smallest and largest value of an integer type; None for `index` (unbounded here)."""
    if isinstance(t, IndexType):
        return None
    assert isinstance(t, IntegerType)
    width = t.width.data
    if width == 1:
        return 0, 1
    if t.signedness.data == Signedness.UNSIGNED:
        return 0, (1 << width) - 1
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


@cache
def wrapper(t: Attribute) -> Callable[[int], int]:
    """The function that wraps an integer into type `t` (two's complement; `index` unchanged)."""
    if isinstance(t, IndexType):
        return lambda v: v
    assert isinstance(t, IntegerType)
    width = t.width.data
    mask = (1 << width) - 1
    if width == 1 or t.signedness.data == Signedness.UNSIGNED:
        return lambda v: v & mask
    half = 1 << (width - 1)
    return lambda v: ((v + half) & mask) - half


def scalar(value: int | float, t: Attribute):
    """A literal of type `t` as an interpreter value."""
    if is_int(t):
        return wrapper(t)(int(value))
    return dtype_of(t).type(value)


# ---------------------------------------------------------------------------------------------
# Integer ALU
# ---------------------------------------------------------------------------------------------


def _div_trunc(x: int, y: int) -> int:
    if y == 0:
        raise Trap("integer division by zero")
    quotient = abs(x) // abs(y)
    return quotient if (x < 0) == (y < 0) else -quotient


def _rem_trunc(x: int, y: int) -> int:
    return x - _div_trunc(x, y) * y


def _sign(x):
    return 1 if x > 0 else -1 if x < 0 else 0


@cache
def integer_binary(name: str, t: Attribute) -> Callable[[int, int], int]:
    """`x op y` on integers of type `t`, wrapped into it."""
    wrap = wrapper(t)
    bits = t.width.data if isinstance(t, IntegerType) else 64
    signed = not (isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED)
    if is_bool(t):
        signed = False

    def shl(x: int, y: int) -> int:
        return 0 if y < 0 or y >= bits else wrap(x << y)

    def shr(x: int, y: int) -> int:
        if signed:
            return x >> (bits - 1 if y < 0 or y >= bits else y)
        return 0 if y >= bits else x >> y

    def div(x: int, y: int) -> int:
        # MIN / -1 overflows: Zig traps on it (in ReleaseSafe).
        if y == -1 and isinstance(t, IntegerType) and signed and x == -(1 << (bits - 1)):
            raise Trap("integer division overflow (MIN / -1)")
        return _div_trunc(x, y)

    table: dict[str, Callable[[int, int], int]] = {
        "add": lambda x, y: wrap(x + y),
        "sub": lambda x, y: wrap(x - y),
        "mul": lambda x, y: wrap(x * y),
        "div": div,
        "rem": lambda x, y: wrap(_rem_trunc(x, y)),
        "max": max,
        "min": min,
        "and": lambda x, y: wrap(x & y),
        "or": lambda x, y: wrap(x | y),
        "xor": lambda x, y: wrap(x ^ y),
        "shl": shl,
        "shr": shr,
    }
    if name not in table:
        raise Trap(f"uop.{name} takes no integer operands")
    return table[name]


@cache
def integer_unary(name: str, t: Attribute) -> Callable[[int], int]:
    wrap = wrapper(t)
    unsigned = isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED
    table: dict[str, Callable[[int], int]] = {
        "neg": lambda x: wrap(-x),
        "abs": lambda x: wrap(abs(x)),  # @bitCast(@abs(MIN)) is MIN
        "sign": (lambda x: 1 if x > 0 else 0) if unsigned or is_bool(t) else _sign,
        "not": lambda x: wrap(~x),
    }
    if name not in table:
        raise Trap(f"uop.{name} takes no integer operands")
    return table[name]


# ---------------------------------------------------------------------------------------------
# Float ALU: NumPy scalars (and arrays, for vectors) of the element type
# ---------------------------------------------------------------------------------------------


def _fmax(a, b):
    return a + b if a != a or b != b else max(a, b)


def _fmin(a, b):
    return a + b if a != a or b != b else min(a, b)


def _round_half_even(x):
    return np.rint(x)


def _erf(x):
    if x != x:
        return x
    return type(x)(math.erf(float(x)))


def _sign_float(x):
    # zant_sign: NaN and signed zeros come back unchanged.
    return type(x)(1) if x > 0 else type(x)(-1) if x < 0 else x


FLOAT_BINARY: dict[str, Callable] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "rem": np.fmod,
    "max": _fmax,
    "min": _fmin,
    "pow": np.power,
}

FLOAT_UNARY: dict[str, Callable] = {
    "neg": lambda a: -a,
    "abs": abs,
    "sign": _sign_float,
    "sqrt": np.sqrt,
    "recip": lambda a: type(a)(1) / a,
    "exp": np.exp,
    "log": np.log,
    "tanh": np.tanh,
    "erf": _erf,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": _round_half_even,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "isnan": lambda a: type(a)(1.0 if a != a else 0.0),
}

VECTOR_FLOAT_BINARY: dict[str, Callable] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,  # NaN-propagating, as zant_vfmax
    "min": np.minimum,
}

VECTOR_INT_BINARY: dict[str, Callable] = {
    "add": np.add,  # NumPy arrays wrap, as `+%` does
    "sub": np.subtract,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}

VECTOR_UNARY: dict[str, Callable] = {
    "neg": np.negative,
    "abs": np.abs,  # wraps MIN to MIN on integers, as @abs then @bitCast
    "sqrt": np.sqrt,
}


def fma(a, b, c):
    """a·b + c rounded once to the type of the operands (NumPy float scalars or arrays of one
    dtype), as `@mulAdd` computes it: exactly, not in f64 and then again in the type (a double
    rounding). f16 and f32: the product is exact in f64, the sum's rounding error is recovered
    exactly (TwoSum), and the f64 sum is rounded to odd (an inexact sum gets an odd last bit), a
    rounding that a second one to 24 or fewer bits cannot spoil; f64: in rationals."""
    dtype = np.result_type(a, b, c)
    if dtype.itemsize == 8:
        return _fma_rational(a, b, c, dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        p = np.float64(a) * np.float64(b)
        c = np.float64(c)
        s = p + c
        rest = s - c
        error = (p - rest) + (c - (s - rest))  # p + c = s + error exactly (when all are finite)
        even = (np.asarray(s).view(np.int64) & 1) == 0
        inexact = np.isfinite(error) & (error != 0) & even
        odd = np.where(inexact, np.nextafter(s, np.where(error > 0, np.inf, -np.inf)), s)
        return odd.astype(dtype) if np.ndim(odd) else dtype.type(odd)


def _fma_rational(a, b, c, dtype: np.dtype):
    def one(x: float, y: float, z: float) -> float:
        if not all(math.isfinite(v) for v in (x, y, z)):
            return x * y + z  # inf and NaN: what the fused one gives
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        try:
            return float(exact)  # correctly rounded
        except OverflowError:
            return math.inf if exact > 0 else -math.inf

    if np.ndim(a) or np.ndim(b) or np.ndim(c):
        a, b, c = np.broadcast_arrays(a, b, c)
        return np.array([one(float(x), float(y), float(z)) for x, y, z in zip(a, b, c)], dtype)
    return dtype.type(one(float(a), float(b), float(c)))


@cache
def compare(name: str) -> Callable:
    return {
        "cmplt": lambda a, b: a < b,
        "cmple": lambda a, b: a <= b,
        "cmpeq": lambda a, b: a == b,
        "cmpne": lambda a, b: a != b,
    }[name]


# ---------------------------------------------------------------------------------------------
# Casts
# ---------------------------------------------------------------------------------------------


@cache
def caster(source: Attribute, target: Attribute) -> Callable:
    """`zant_cast(target, x)` for an x of type `source`."""
    if source == target:
        return lambda x: x
    if is_bool(target):
        return lambda x: int(x != 0)
    if is_int(target):
        wrap = wrapper(target)
        if is_int(source):
            return lambda x: wrap(x)
        limits = int_range(target) or (-(1 << 63), (1 << 63) - 1)
        # As zant_cast: the bounds as f64 (maxInt(i64) rounds up to 2^63), compared in f64.
        lo, hi = float(limits[0]), float(limits[1])

        def float_to_int(x) -> int:
            t = math.trunc(float(x)) if math.isfinite(float(x)) else float(x)
            if t != t:
                return 0
            if t <= lo:
                return limits[0]
            if t >= hi:
                return limits[1]
            return int(t)

        return float_to_int
    dtype = dtype_of(target)
    if is_storage_float(target):
        return storage_float_caster(target, saturate=True)
    if is_int(source):
        # Correctly rounded from the exact integer (int → float64 rounds first above 2^53;
        # Python's int → float is correctly rounded to f64, then NumPy rounds to the type).
        return lambda x: dtype.type(x) if abs(x) < (1 << 53) else dtype.type(float(x))
    return lambda x: dtype.type(x)


def storage_float_caster(target: Attribute, saturate: bool) -> Callable:
    """f32 → a storage float (bfloat16, float8), as the generated code's zant_to_small_float:
    ml_dtypes rounds to nearest even, and overflows to Inf (bfloat16, f8E5M2) or NaN (the fn and
    fnuz types, which have no Inf); a saturating float8 cast (ONNX's default) clips ±Inf and
    every value beyond ±max to ±max first (clipping before rounding is the same: the values
    between max and the next rounding boundary round down to max anyway)."""
    dtype = dtype_of(target)
    if dtype.name == "float8_e8m0fnu":  # rounded up, as ONNX's Cast (round_mode "up")
        from onnx.numpy_helper import to_float8e8m0

        return lambda x: to_float8e8m0(np.array([x], np.float32), saturate, "up")[0]
    if not saturate or isinstance(target, BFloat16Type):
        return lambda x: dtype.type(np.float32(x))
    import ml_dtypes

    top = float(ml_dtypes.finfo(dtype).max)
    return lambda x: dtype.type(np.float32(x) if np.isnan(x) else np.float32(min(max(float(x), -top), top)))


@cache
def bitcaster(source: Attribute, target: Attribute) -> Callable:
    source_dtype, target_dtype = dtype_of(source), dtype_of(target)
    target_is_int = is_int(target)

    def bitcast(x):
        bits = np.array([x], dtype=source_dtype).view(target_dtype)[0]
        return int(bits) if target_is_int else bits

    return bitcast

