"""The evaluation order of pocketfft's complex FFT, for single-precision DFTs.

NumPy (2.x, `numpy.fft`) and SciPy compute a complex64 FFT with pocketfft in single precision,
and the ONNX backend suite's DFT data is NumPy's. Where the exact DFT of a bin is 0, a float32
FFT leaves a rounding residue (1.9e-7 in the 10-point inverse of 0..99) that an absolute
tolerance of 1e-7 does not absorb; the residue only agrees if every f32 operation is the one
pocketfft performs, in its order. This module states that order once, over an abstract
arithmetic, so the same code is a NumPy model (`transform`, tests compare it bit for bit with
`numpy.fft`) and the uop kernel (`spectral.DFTLowering` passes a builder's arithmetic).

pocketfft's plan for a length n (cfftp), as this module reproduces it:

- factors: 8s first, then 4s, then one 2 moved to the front, then odd factors ascending;
- one pass per factor p, in that order, with l1 = the product of the earlier factors and
  ido = n / (l1·p): pass k reads cc[i + ido·(j + p·k)] and writes ch[i + ido·(k + l1·j)]
  (i < ido, k < l1, j < p), ping-ponging between two buffers;
- the radix-p butterfly on the p inputs of (i, k), then for i > 0 output u multiplied by the
  twiddle w^(u·l1·i) (w = e^{∓2πi/n}; conjugated on the forward side);
- twiddles computed in double (angles reduced to an octant, the index split into two table
  entries whose product is taken in double) and rounded to float once; the butterflies'
  constants (cos and sin of 2π·m/p) rounded to float from their exact values;
- finally every element multiplied by the scale (NumPy passes float32(1/n) for the inverse).

Radices 2, 3, 4, 5, 7, 8 and 11 have such butterflies. Other prime factors take pocketfft's
generic pass, and lengths of 50 or more whose largest prime factor p has p² > n may take
Bluestein's algorithm: `factors` returns None for those, and the DFT lowering keeps its exact
f64 sums there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Generic, TypeVar

import numpy as np

V = TypeVar("V")
Complex = tuple  # (real, imaginary)

RADICES = (2, 3, 4, 5, 7, 8, 11)


@dataclass(frozen=True)
class Arith(Generic[V]):
    """The f32 operations a butterfly performs, and how a constant becomes a value."""

    add: Callable[[V, V], V]
    sub: Callable[[V, V], V]
    mul: Callable[[V, V], V]
    neg: Callable[[V], V]
    const: Callable[[np.float32], V]


def factors(n: int) -> list[int] | None:
    """pocketfft's factors of n in pass order, or None when its plan would use a pass this
    module does not reproduce (a prime factor above 11, or Bluestein's algorithm)."""
    if n < 1:
        return None
    if n == 1:
        return []
    largest = _largest_prime_factor(n)
    if n >= 50 and largest * largest > n and _bluestein_cheaper(n):
        return None
    result: list[int] = []
    rest = n
    while rest % 8 == 0:
        result.append(8)
        rest //= 8
    while rest % 4 == 0:
        result.append(4)
        rest //= 4
    if rest % 2 == 0:
        rest //= 2
        result.append(2)
        result[0], result[-1] = result[-1], result[0]
    divisor = 3
    while divisor * divisor <= rest:
        while rest % divisor == 0:
            result.append(divisor)
            rest //= divisor
        divisor += 2
    if rest > 1:
        result.append(rest)
    return result if all(p in RADICES for p in result) else None


def _largest_prime_factor(n: int) -> int:
    largest = 1
    while n % 2 == 0:
        largest, n = 2, n // 2
    x = 3
    while x * x <= n:
        while n % x == 0:
            largest, n = x, n // x
        x += 2
    return n if n > 1 else largest


def _cost(n: int) -> float:
    """pocketfft's cost guess: the sum of the factors (1.1× for those above 5) times n."""
    total, rest = 0.0, n
    while rest % 2 == 0:
        total, rest = total + 2, rest // 2
    x = 3
    while x * x <= rest:
        while rest % x == 0:
            total += x if x <= 5 else 1.1 * x
            rest //= x
        x += 2
    if rest > 1:
        total += rest if rest <= 5 else 1.1 * rest
    return total * n


def _good_size(n: int) -> int:
    """The smallest 2^a·3^b·5^c·7^d·11^e ≥ n (pocketfft's Bluestein length)."""
    if n <= 12:
        return n
    best = 2 * n
    f11 = 1
    while f11 < best:
        f7 = f11
        while f7 < best:
            f5 = f7
            while f5 < best:
                x = f5
                while x < n:
                    x *= 2
                while True:
                    if x < n:
                        x *= 3
                    elif x > n:
                        best = min(best, x)
                        if x & 1:
                            break
                        x >>= 1
                    else:
                        return n
                f5 *= 5
            f7 *= 7
        f11 *= 11
    return best


def _bluestein_cheaper(n: int) -> bool:
    return 1.5 * 2 * _cost(_good_size(2 * n - 1)) < _cost(n)


# -- constants ---------------------------------------------------------------------------------

_PI = Fraction(
    "3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534"
)


def _round_mantissa(value: Fraction, bits: int) -> Fraction:
    """`value` rounded to the nearest number with a `bits`-bit mantissa (ties to even)."""
    if value == 0:
        return value
    sign = -1 if value < 0 else 1
    value = abs(value)
    exponent = math.floor(math.log2(value))
    while Fraction(2) ** exponent > value:
        exponent -= 1
    while Fraction(2) ** (exponent + 1) <= value:
        exponent += 1
    ulp = Fraction(2) ** (exponent - bits + 1)
    q, r = divmod(value, ulp)
    if r * 2 > ulp or (r * 2 == ulp and q % 2 == 1):
        q += 1
    return sign * q * ulp


def _angle(n: int) -> float:
    """Thigh(0.25L·π/n): π/(4n) in x87 long double (64-bit mantissa), then rounded to double."""
    pi_long = _round_mantissa(_PI, 64)
    return float(_round_mantissa(_round_mantissa(pi_long / 4 / n, 64), 53))


def _octant(x: int, n: int, ang: float) -> tuple[float, float]:
    """cos and sin of 2π·x/n in double, from an angle reduced to [0, π/4] as pocketfft does."""
    x <<= 3
    cos, sin = math.cos, math.sin
    if x < 4 * n:
        if x < 2 * n:
            if x < n:
                return cos(x * ang), sin(x * ang)
            return sin((2 * n - x) * ang), cos((2 * n - x) * ang)
        x -= 2 * n
        if x < n:
            return -sin(x * ang), cos(x * ang)
        return -cos((2 * n - x) * ang), sin((2 * n - x) * ang)
    x = 8 * n - x
    if x < 2 * n:
        if x < n:
            return cos(x * ang), -sin(x * ang)
        return sin((2 * n - x) * ang), -cos((2 * n - x) * ang)
    x -= 2 * n
    if x < n:
        return -sin(x * ang), -cos(x * ang)
    return -cos((2 * n - x) * ang), -sin((2 * n - x) * ang)


def unit_roots(n: int) -> np.ndarray:
    """[n, 2] float32: (cos, sin) of 2π·m/n for m < n, as pocketfft's sincos_2pibyn gives them
    to a float transform (two double table entries multiplied in double, rounded once)."""
    ang = _angle(n)
    count = (n + 2) // 2
    shift = 1
    while (1 << shift) * (1 << shift) < count:
        shift += 1
    mask = (1 << shift) - 1
    low = [(1.0, 0.0)] + [_octant(i, n, ang) for i in range(1, mask + 1)]
    high = [(1.0, 0.0)] + [_octant(i * (mask + 1), n, ang) for i in range(1, (count + mask) // (mask + 1))]
    table = np.zeros((n, 2), np.float32)
    for m in range(n):
        index, sign = (m, 1.0) if 2 * m <= n else (n - m, -1.0)
        (ar, ai), (br, bi) = low[index & mask], high[index >> shift]
        table[m] = (np.float32(ar * br - ai * bi), sign * np.float32(ar * bi + ai * br))
    return table


def _float32(value: Fraction | float) -> np.float32:
    return np.float32(float(_round_mantissa(Fraction(value), 24)))


def _exact_cos_sin(m: int, p: int) -> tuple[np.float32, np.float32]:
    """cos and sin of 2π·m/p rounded once to float (the butterflies' literal constants), for an
    odd p and 0 < m ≤ p/2, or π/4: the double's value rounded to float is that single rounding
    there (checked against 50-digit values for every odd p below 400, and cos π/4)."""
    angle = 2 * math.pi * m / p
    return np.float32(math.cos(angle)), np.float32(math.sin(angle))


def pass_twiddles(n: int, plan: Sequence[int]) -> list[np.ndarray]:
    """Per pass, the [p - 1, ido - 1, 2] twiddles: output u of column i takes w^(u·l1·i)."""
    roots = unit_roots(n)
    tables = []
    l1 = 1
    for p in plan:
        ido = n // (l1 * p)
        table = np.zeros((p - 1, max(ido - 1, 0), 2), np.float32)
        for u in range(1, p):
            for i in range(1, ido):
                table[u - 1, i - 1] = roots[u * l1 * i]
        tables.append(table)
        l1 *= p
    return tables


# -- butterflies -------------------------------------------------------------------------------


def twiddle(ar: Arith[V], x: Complex, w: Complex, forward: bool) -> Complex:
    """x·conj(w) forward, x·w backward, in pocketfft's special_mul order."""
    if forward:
        return ar.add(ar.mul(x[0], w[0]), ar.mul(x[1], w[1])), ar.sub(ar.mul(x[1], w[0]), ar.mul(x[0], w[1]))
    return ar.sub(ar.mul(x[0], w[0]), ar.mul(x[1], w[1])), ar.add(ar.mul(x[0], w[1]), ar.mul(x[1], w[0]))


def butterfly(ar: Arith[V], p: int, x: Sequence[Complex], forward: bool) -> list[Complex]:
    """The radix-p DFT of x (p values) before twiddling, as pocketfft's pass<p> computes it."""
    add = lambda a, b: (ar.add(a[0], b[0]), ar.add(a[1], b[1]))  # noqa: E731
    sub = lambda a, b: (ar.sub(a[0], b[0]), ar.sub(a[1], b[1]))  # noqa: E731
    if p == 2:
        return [add(x[0], x[1]), sub(x[0], x[1])]
    if p == 4:
        t2, t1 = add(x[0], x[2]), sub(x[0], x[2])
        t3, t4 = add(x[1], x[3]), _rot90(ar, sub(x[1], x[3]), forward)
        return [add(t2, t3), add(t1, t4), sub(t2, t3), sub(t1, t4)]
    if p == 8:
        return _butterfly8(ar, x, forward)
    return _butterfly_odd(ar, p, x, forward)


def _rot90(ar: Arith[V], a: Complex, forward: bool) -> Complex:
    """a·(∓i): pocketfft's ROTX90."""
    return (a[1], ar.neg(a[0])) if forward else (ar.neg(a[1]), a[0])


def _butterfly_odd(ar: Arith[V], p: int, x: Sequence[Complex], forward: bool) -> list[Complex]:
    """pass3/5/7/11: pair sums s_j = x_j + x_{p-j} and differences d_j = x_j - x_{p-j};
    output 0 sums x_0 and the s_j left to right; outputs m and p - m are ca ± cb with
    ca = x_0 + Σ_j cos(2π·mj/p)·s_j and cb = i·Σ_j ±sin(2π·mj/p)·d_j, each sum left to right."""
    half = (p - 1) // 2
    s = [(ar.add(x[j][0], x[p - j][0]), ar.add(x[j][1], x[p - j][1])) for j in range(1, half + 1)]
    d = [(ar.sub(x[j][0], x[p - j][0]), ar.sub(x[j][1], x[p - j][1])) for j in range(1, half + 1)]
    out: list[Complex | None] = [None] * p
    re, im = x[0]
    for sj in s:
        re, im = ar.add(re, sj[0]), ar.add(im, sj[1])
    out[0] = (re, im)
    for m in range(1, half + 1):
        ca_r, ca_i = x[0]
        cb_i = cb_r = None
        for j in range(1, half + 1):
            q = m * j % p
            fold, sign = (q, 1) if q <= half else (p - q, -1)
            c, s_ = _exact_cos_sin(fold, p)
            s_ = np.float32(-s_ if forward else s_)
            cos_v, sin_v = ar.const(c), ar.const(s_)
            ca_r = ar.add(ca_r, ar.mul(cos_v, s[j - 1][0]))
            ca_i = ar.add(ca_i, ar.mul(cos_v, s[j - 1][1]))
            term_i, term_r = ar.mul(sin_v, d[j - 1][0]), ar.mul(sin_v, d[j - 1][1])
            if cb_i is None:
                # The first term of each sum keeps its constant's sign (always +).
                cb_i, cb_r = term_i, term_r
            elif sign > 0:
                cb_i, cb_r = ar.add(cb_i, term_i), ar.add(cb_r, term_r)
            else:
                cb_i, cb_r = ar.sub(cb_i, term_i), ar.sub(cb_r, term_r)
        cb = (ar.neg(cb_r), cb_i)
        out[m] = (ar.add(ca_r, cb[0]), ar.add(ca_i, cb[1]))
        out[p - m] = (ar.sub(ca_r, cb[0]), ar.sub(ca_i, cb[1]))
    return out  # type: ignore[return-value]


def _butterfly8(ar: Arith[V], x: Sequence[Complex], forward: bool) -> list[Complex]:
    """pass8: two radix-2 stages on the odd inputs rotated by ±45° and ±135°, then the even."""
    add = lambda a, b: (ar.add(a[0], b[0]), ar.add(a[1], b[1]))  # noqa: E731
    sub = lambda a, b: (ar.sub(a[0], b[0]), ar.sub(a[1], b[1]))  # noqa: E731
    h = ar.const(_exact_cos_sin(1, 8)[0])  # cos(π/4)
    a1, a5 = add(x[1], x[5]), sub(x[1], x[5])
    a3, a7 = add(x[3], x[7]), sub(x[3], x[7])
    a1, a3 = add(a1, a3), _rot90(ar, sub(a1, a3), forward)
    a7 = _rot90(ar, a7, forward)
    a5, a7 = add(a5, a7), sub(a5, a7)
    if forward:  # ROTX45, ROTX135
        a5 = (ar.mul(h, ar.add(a5[0], a5[1])), ar.mul(h, ar.sub(a5[1], a5[0])))
        a7 = (ar.mul(h, ar.sub(a7[1], a7[0])), ar.mul(h, ar.sub(ar.neg(a7[0]), a7[1])))
    else:
        a5 = (ar.mul(h, ar.sub(a5[0], a5[1])), ar.mul(h, ar.add(a5[1], a5[0])))
        a7 = (ar.mul(h, ar.sub(ar.neg(a7[0]), a7[1])), ar.mul(h, ar.sub(a7[0], a7[1])))
    a0, a4 = add(x[0], x[4]), sub(x[0], x[4])
    a2, a6 = add(x[2], x[6]), sub(x[2], x[6])
    a0, a2 = add(a0, a2), sub(a0, a2)
    a6 = _rot90(ar, a6, forward)
    a4, a6 = add(a4, a6), sub(a4, a6)
    return [add(a0, a1), add(a4, a5), add(a2, a3), add(a6, a7), sub(a0, a1), sub(a4, a5), sub(a2, a3), sub(a6, a7)]


# -- the NumPy model ---------------------------------------------------------------------------

NUMPY = Arith[np.float32](
    add=lambda a, b: np.float32(a + b),
    sub=lambda a, b: np.float32(a - b),
    mul=lambda a, b: np.float32(a * b),
    neg=lambda a: np.float32(-a),
    const=lambda c: np.float32(c),
)


def transform(x: np.ndarray, forward: bool, scale: np.float32 | None = None) -> np.ndarray:
    """pocketfft's complex FFT of the 1-D complex64 `x`, computed in float32 by `butterfly`,
    times `scale` (None: none). The model the lowering follows; tests hold it to numpy.fft."""
    n = x.shape[0]
    plan = factors(n)
    if plan is None:
        raise ValueError(f"pocketfft does not use the hard-coded passes for length {n}")
    data = [(np.float32(v.real), np.float32(v.imag)) for v in x.astype(np.complex64)]
    tables = pass_twiddles(n, plan)
    l1 = 1
    for p, table in zip(plan, tables):
        ido = n // (l1 * p)
        out: list[Complex] = [(np.float32(0), np.float32(0))] * n
        for k in range(l1):
            for i in range(ido):
                values = butterfly(NUMPY, p, [data[i + ido * (j + p * k)] for j in range(p)], forward)
                for u, value in enumerate(values):
                    if i > 0 and u > 0:
                        value = twiddle(NUMPY, value, tuple(table[u - 1, i - 1]), forward)
                    out[i + ido * (k + l1 * u)] = value
        data = out
        l1 *= p
    if scale is not None:
        data = [(np.float32(r * scale), np.float32(i * scale)) for r, i in data]
    result = np.zeros(n, np.complex64)
    result.real = [r for r, _ in data]
    result.imag = [i for _, i in data]
    return result
