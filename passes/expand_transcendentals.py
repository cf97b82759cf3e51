"""`expand-transcendentals`: f32 `uop.exp`, `uop.tanh` and `uop.erf` become polynomial
arithmetic, so `vectorize` sees only ALU ops, compares, selects and bit casts and runs them 16
lanes at a time instead of calling libm once per element (Sigmoid, SiLU, Softmax, GELU, the RNN
gates are these three).

    %y = uop.exp %x : f32
  → clamp, range reduction, a degree-6 polynomial and two exact power-of-two scales (below)

Algorithms (all f32; every constant is an f32 literal):

* exp(x): x is clamped to [-104, 89] (`uop.max`/`uop.min` propagate NaN, so NaN stays NaN; -inf
  gives 0 and +inf gives +inf through the clamp). k = round(x·log2 e) by the 1.5·2^23 trick
  (j = x·log2 e + 1.5·2^23 keeps round(x·log2 e) in its low mantissa bits; k = j - 1.5·2^23),
  r = x - k·ln2 in two steps (Cody–Waite: ln2's high part has 9 significant bits, so k·hi is
  exact), e^r by a minimax polynomial of degree 6 on [-0.36, 0.36] (relative error 2.4e-9),
  then scaled by 2^k as 2^k1 · 2^k2 with k1 = round(k/2), k2 = k - k1: each factor's exponent
  stays normal over the whole clamped range, the first product is exact and the second rounds
  once, so results in the subnormal range are rounded correctly and overflow gives +inf. The
  2^k factors are built from the bits of j: `bitcast(j) - bits(1.5·2^23) + 127`, times 2^23.
* tanh(x): |x| < 0.625: x + x³·P(x²), P of degree 4 (relative error 4.1e-9); otherwise
  sign(x)·(1 - 2/(exp(2·min(|x|, 10)) + 1)) (tanh(10) rounds to 1), picked lane by lane.
* erf(x): |x| < 1: x·P(x²), P of degree 6 (relative error 1.2e-9); otherwise
  sign(x)·(1 - erfc(min(|x|, 10))) with Numerical Recipes' erfcc (t = 1/(1 + |x|/2), fractional
  error below 1.2e-7, so at most 1.9e-8 in erf ≥ 0.84).

Measured (tests/test_transcendentals.py, through the uop interpreter, against float64 libm
rounded to f32, over ±(every f32 exponent × 12 mantissas), ±0, ±inf, NaN, the subnormals and
the overflow thresholds; 6,161 values): exp ≤ 1 ulp (subnormal results too, in their
spacing), sigmoid (e = exp(-|x|), 1/(1 + e) or e/(1 + e), as Sigmoid lowers) ≤ 2 ulp, tanh ≤ 1
ulp, erf ≤ 2 ulp; NaN → NaN, the exact limits at ±inf and ±0. Denormals are not flushed: the generated code keeps IEEE semantics, and the
bench models' activations (trained-like weights) stay in the normal range.

Other float types (f16, f64) keep their calls: the polynomials are fitted for f32.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects import uop
from zant.ir.locations import located

MAGIC = 12582912.0
"""1.5·2^23: adding it to |y| < 2^22 rounds y to an integer kept in the low mantissa bits."""
MAGIC_BITS = 0x4B400000
LOG2E = 1.4426950408889634
LN2_HI = 0.693359375
LN2_LO = -2.12194440e-4
EXP_P = (1.0, 1.0, 0.49999991059303284, 0.16666379570960999, 0.04166848212480545,
         0.008378073573112488, 0.001383272698149085)
"""e^r ≈ Σ EXP_P[i]·r^i on [-0.36, 0.36]."""
TANH_P = (-0.3333328366279602, 0.13331490755081177, -0.053743500262498856, 0.0206505935639143,
          -0.00571705074980855)
"""tanh(x) ≈ x + x³·Σ TANH_P[i]·x^(2i) on |x| < 0.625."""
ERF_P = (1.1283791065216064, -0.3761262595653534, 0.1128358542919159, -0.02685382030904293,
         0.005188342183828354, -0.0008010308374650776, 7.854211435187608e-05)
"""erf(x) ≈ x·Σ ERF_P[i]·x^(2i) on |x| < 1."""
ERFC_NR = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398,
           1.48851587, -0.82215223, 0.17087277)
"""Numerical Recipes' erfcc: erfc(z) ≈ t·exp(-z² + Σ ERFC_NR[i]·t^i), t = 1/(1 + z/2)."""


class Emitter:
    """Builds the replacement of one op, in front of it."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor
        self.ops: list[Operation] = []

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def f(self, value: float) -> SSAValue:
        return self.add(uop.ConstOp(value, Float32Type()))

    def i(self, value: int) -> SSAValue:
        return self.add(uop.ConstOp(value, i32))

    def alu(self, name: str, *operands: SSAValue) -> SSAValue:
        return self.add(uop.ALU_OPS[name](*operands))

    def fc(self, name: str, x: SSAValue, c: float) -> SSAValue:
        """`x op c` for an f32 literal c."""
        return self.alu(name, x, self.f(c))

    def horner(self, x: SSAValue, coefficients: Sequence[float]) -> SSAValue:
        """Σ coefficients[i]·x^i."""
        acc = self.f(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            acc = self.fc("add", self.alu("mul", acc, x), c)
        return acc

    def where(self, condition: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(uop.WhereOp(condition, a, b))

    def with_sign_of(self, x: SSAValue, magnitude: SSAValue) -> SSAValue:
        """`magnitude` negated where x < 0 (NaN: `magnitude`, itself NaN here)."""
        return self.where(self.alu("cmplt", x, self.f(0.0)), self.alu("neg", magnitude), magnitude)

    def power_of_two(self, j: SSAValue) -> SSAValue:
        """2^n for j = n + 1.5·2^23 (n an integer with a normal 2^n)."""
        bits = self.add(uop.BitcastOp(j, i32))
        biased = self.alu("add", bits, self.i(127 - MAGIC_BITS))
        return self.add(uop.BitcastOp(self.alu("mul", biased, self.i(1 << 23)), Float32Type()))

    def exp(self, x: SSAValue) -> SSAValue:
        x = self.fc("min", self.fc("max", x, -104.0), 89.0)
        j = self.fc("add", self.fc("mul", x, LOG2E), MAGIC)
        k = self.fc("sub", j, MAGIC)
        r = self.alu("sub", x, self.fc("mul", k, LN2_HI))
        r = self.alu("sub", r, self.fc("mul", k, LN2_LO))
        p = self.horner(r, EXP_P)
        j1 = self.fc("add", self.fc("mul", k, 0.5), MAGIC)  # k1 = round(k / 2)
        j2 = self.fc("add", self.alu("sub", k, self.fc("sub", j1, MAGIC)), MAGIC)  # k2 = k - k1
        return self.alu("mul", self.alu("mul", p, self.power_of_two(j1)), self.power_of_two(j2))

    def tanh(self, x: SSAValue) -> SSAValue:
        a = self.alu("abs", x)
        x2 = self.alu("mul", x, x)
        small = self.alu("add", x, self.alu("mul", self.alu("mul", x, x2), self.horner(x2, TANH_P)))
        e = self.exp(self.fc("mul", self.fc("min", a, 10.0), 2.0))
        large = self.alu("sub", self.f(1.0), self.alu("div", self.f(2.0), self.fc("add", e, 1.0)))
        return self.where(self.alu("cmplt", a, self.f(0.625)), small, self.with_sign_of(x, large))

    def erf(self, x: SSAValue) -> SSAValue:
        a = self.alu("abs", x)
        small = self.alu("mul", x, self.horner(self.alu("mul", x, x), ERF_P))
        z = self.fc("min", a, 10.0)
        t = self.alu("div", self.f(1.0), self.fc("add", self.fc("mul", z, 0.5), 1.0))
        exponent = self.alu("sub", self.horner(t, ERFC_NR), self.alu("mul", z, z))
        erfc = self.alu("mul", t, self.exp(exponent))
        large = self.alu("sub", self.f(1.0), erfc)
        return self.where(self.alu("cmplt", a, self.f(1.0)), small, self.with_sign_of(x, large))


EXPANSIONS = {uop.ExpOp: Emitter.exp, uop.TanhOp: Emitter.tanh, uop.ErfOp: Emitter.erf}


def expand(op: uop.ExpOp | uop.TanhOp | uop.ErfOp) -> None:
    """Replace `op` by its polynomial form."""
    emitter = Emitter(op)
    result = EXPANSIONS[type(op)](emitter, op.input)
    Rewriter.insert_op(located(emitter.ops, op.location), InsertPoint.before(op))
    op.result.replace_all_uses_with(result)
    Rewriter.erase_op(op)


@dataclass(frozen=True)
class ExpandTranscendentalsPass(ModulePass):
    """Expand f32 exp, tanh and erf into polynomial arithmetic (see the module docstring)."""

    name = "expand-transcendentals"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for target in [o for o in op.walk() if type(o) in EXPANSIONS]:
            if isinstance(target.result.type, Float32Type):
                expand(target)
