"""Exact round-half-even of an integer times a rational, by a multiply, an add and a shift.

A QDQ average pool gives y = round_half_even(S · R) + zp in exact arithmetic, with S the
window's integer sum of x - x_zp and R = x_scale / (y_scale · count) a rational (the scales are
floats, so exact rationals too). Rounding S · R up at ties, as a fixed-point requantization
`(S·m + 2^(k-1)) >> k` does, gives the other code at every tie, and an m rounded to nearest can
land on the wrong side of a half near one; `exact_rounding` instead finds constants that give
the exact code for every S in a known range [low, high]:

    X = S·multiplier + addend          (in `bits`-bit arithmetic: 32 or 64)
    q = X >> shift                     (floor)
    y = q - 1  if q is odd and X mod 2^shift < tie_below  else q

Why it is exact. Let R = P/Q in lowest terms. S·R + 1/2 = (2SP + Q) / 2Q, so its fraction f is
a multiple of 1/(2Q): 0 exactly at a tie, else in [1/(2Q), 1 - 1/(2Q)]. With multiplier =
ceil(R·2^shift) = R·2^shift + μ (0 ≤ μ < 1) and addend = 2^(shift-1) + ceil(-low·μ),
X / 2^shift = S·R + 1/2 + δ(S) with δ(S) = (S·μ + ceil(-low·μ)) / 2^shift, which grows with S
from δ(low) ∈ [0, 2^-shift). When δ(high) < 1/(2Q) as well, f + δ stays in [0, 1) — so q =
floor(S·R + 1/2), the nearest integer, ties up — and X mod 2^shift = (f + δ)·2^shift is below
2^shift / 2Q exactly at the ties, i.e. below tie_below = ceil(2^shift / 2Q); there the even
neighbour is q - 1 when q is odd. An odd Q has no ties at all (2SP + Q is odd), nor has a range
holding no odd multiple of Q/2; tie_below is then 0 and the check can be left out.

Against onnxruntime. Running the QDQ graph as written, it evaluates the chain in float32: the
same codes wherever the scales make every step exact (powers of two, or 3 · 2^-k against 2^-k:
the tests use those), but with other scales its rounding errors of about 2^-24 land a tie on
either side (MLPerf Tiny IC, seed 0: the sum 352 / 64 = 5.5 comes out 5.4999995, so 5 where
the even code is 6). Optimized, it fuses the chain into QLinearAveragePool, whose global-pool
kernel (a window covering the image, no padding) sums in integers and is exact at the
power-of-two counts (IC's 8x8), while its other windows round y / y_scale + y_zp in one
nearbyintf, the other code at every tie when y_zp is odd. The exact value is what both
approximate, and what onnx's reference evaluator gives where float32 is exact.

The smallest such shift gives the smallest constants; the 32-bit form (X, S·multiplier and the
addend within int32) is preferred, then a shift of 32 (the high word of a 32x32→64 multiply is
q, the low word the fraction), then the smallest in 64 bits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

MAX_SHIFT = 62


@dataclass(frozen=True)
class ExactRounding:
    """round_half_even(S · ratio) for every integer S in [low, high] (see the module)."""

    multiplier: int
    addend: int
    shift: int
    tie_below: int
    """X mod 2^shift below this marks a tie; 0 when no S in the range ties."""
    bits: int
    """32 when S·multiplier + addend and its parts stay within int32, else 64."""

    def apply(self, total: int) -> int:
        """The rounded value of one sum, in Python integers (the kernel's arithmetic)."""
        x = total * self.multiplier + self.addend
        q = x >> self.shift
        if q & 1 and x & ((1 << self.shift) - 1) < self.tie_below:
            q -= 1
        return q


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


def _fits(values: Sequence[int], bits: int) -> bool:
    return all(-(1 << (bits - 1)) <= v < (1 << (bits - 1)) for v in values)


def has_ties(ratio: Fraction, low: int, high: int) -> bool:
    """Whether S · ratio is an integer plus a half for some integer S in [low, high]: S an odd
    multiple of Q/2 (ratio = P/Q in lowest terms, Q even)."""
    q = ratio.denominator
    if q % 2:
        return False
    half = q // 2
    first = -((-low) // half)  # the multiples of Q/2 in the range: first..last
    last = high // half
    if first > last:
        return False
    return first % 2 == 1 or first + 1 <= last


def rounding_at(ratio: Fraction, low: int, high: int, shift: int) -> ExactRounding | None:
    """The constants for one shift, or None when that shift is too coarse for the range or
    X leaves int64."""
    if ratio <= 0 or low > high or not 1 <= shift <= MAX_SHIFT:
        return None
    scaled = ratio * (1 << shift)
    multiplier = _ceil(scaled)
    excess = multiplier - scaled  # μ
    lift = _ceil(-low * excess)
    if high * excess + lift >= Fraction(1 << shift, 2 * ratio.denominator):
        return None
    addend = (1 << (shift - 1)) + lift
    parts = (low * multiplier, high * multiplier, low * multiplier + addend, high * multiplier + addend, addend, multiplier)
    bits = 32 if _fits(parts, 32) else 64
    if not _fits(parts, 64):
        return None
    tie_below = _ceil(Fraction(1 << shift, 2 * ratio.denominator)) if has_ties(ratio, low, high) else 0
    return ExactRounding(multiplier, addend, shift, tie_below, bits)


def _preferred(candidates: list[tuple[int, list[ExactRounding]]]) -> tuple[int, list[ExactRounding]] | None:
    """The cheapest of (shift, roundings) candidates in increasing shift: the first in 32 bits,
    else a shift of 32, else the first."""
    if not candidates:
        return None
    for shift, roundings in candidates:
        if all(r.bits == 32 for r in roundings):
            return shift, roundings
    for shift, roundings in candidates:
        if shift == 32:
            return shift, roundings
    return candidates[0]


def exact_rounding(ratio: Fraction, low: int, high: int) -> ExactRounding | None:
    """Constants giving round_half_even(S · ratio) for every integer S in [low, high], the
    cheapest that exist (see the module); None when no shift up to 62 is fine enough."""
    found = exact_roundings([(ratio, low, high)])
    return None if found is None else found[0]


def exact_roundings(cases: Sequence[tuple[Fraction, int, int]]) -> list[ExactRounding] | None:
    """`exact_rounding` for several (ratio, low, high) with one shift and one width for all (a
    table a kernel indexes at run time, e.g. by a window's count); None when none fits."""
    candidates = []
    for shift in range(1, MAX_SHIFT + 1):
        roundings = [rounding_at(ratio, low, high, shift) for ratio, low, high in cases]
        if all(r is not None for r in roundings):
            candidates.append((shift, roundings))
            if all(r.bits == 32 for r in roundings) or shift >= 32:
                break
    chosen = _preferred(candidates)
    if chosen is None:
        return None
    _, roundings = chosen
    bits = max(r.bits for r in roundings)
    return [ExactRounding(r.multiplier, r.addend, r.shift, r.tie_below, bits) for r in roundings]
