"""`expand-transcendentals`: f32 `uop.exp`, `uop.tanh`, `uop.erf` and the logistic σ become
polynomial arithmetic, so `vectorize` sees only ALU ops, multiply-adds, compares, selects and bit
casts and runs them 16 lanes at a time instead of calling libm once per element (Sigmoid, SiLU,
Softmax, GELU, the RNN gates).

`-p 'expand-transcendentals{fma=true}'`: each a·b + c of the algorithms is one `uop.fma`
(`@mulAdd`, rounded once: Horner steps, the Cody–Waite reduction, k's rounding); the default
(false) writes a `uop.mul` and a `uop.add`, for CPUs without an FMA unit, where `@mulAdd` is a
libm call. The bounds below hold either way.

    %y = uop.exp %x : f32
  → clamp, range reduction, a degree-6 polynomial and an exact power-of-two scale (below)

Algorithms (all f32; every constant is an f32 literal):

* exp(x): x is clamped to [-104, 89] (`uop.max`/`uop.min` propagate NaN, so NaN stays NaN; -inf
  gives 0 and +inf gives +inf through the clamp). k = round(x·log2 e) by the 1.5·2^23 trick
  (j = x·log2 e + 1.5·2^23 keeps round(x·log2 e) in its low mantissa bits; k = j - 1.5·2^23),
  r = x - k·ln2 in two steps (Cody–Waite: ln2's high part has 9 significant bits, so k·hi is
  exact), e^r by a minimax polynomial P of degree 6 on [-0.36, 0.36] (relative error 2.4e-9),
  then 2^k in two factors that are powers of two, one exact product and one that rounds once
  (results in the subnormal range are rounded correctly, overflow gives +inf): below 0
  (k in [-150, 0]) (P·2^-24)·2^(k+24), above (P·2)·2^(k-1), the factor and the exponent bias
  picked by the sign of x. 2^(k+b) is built from the bits of j: bits(j)·2^23 keeps k·2^23
  (1.5·2^23's bits shift out; LLVM makes it a shift), plus (127 + b)·2^23.
  exp(-|y|) (Softplus) is ≤ 0: no upper clamp and one factor, P's coefficients times 2^-24
  (exact), times 2^(k+24).
* σ(x) = 1/(1 + e^-x), in the three forms the lowerings write (Sigmoid's
  `(x < 0 ? e : 1)/(1 + e)` with e = exp(-|x|), the recurrent cells' `1/(1 + exp(-x))`, the ML
  ops' `recip(1 + exp(-x))`, whose values have no other use), replaced whole: y = x clamped to
  [-104, 18] (σ(18) rounds to 1, σ(-104) to 0), k = round(-y·log2 e), n = 2^(24-k) (normal for
  k in [-26, 150], from the bits of j), p = 2^24·e^r, r = -y - k·ln2, by P at -r (coefficients
  times ±2^24), σ = n/(n + p): no select, and the division of two normal numbers rounds once,
  subnormal results too.
* tanh(x): |x| < 0.625: x + x³·Q(x²), Q of degree 4 (relative error 4.1e-9); otherwise
  1 - 2/(e^(2a) + 1), a = min(|x|, 10) (tanh(10) rounds to 1), e^(2a) = 2^k·e^(2s) (2a reduced
  by halves of ln2, P's coefficients times powers of two, evaluated by pairs (Estrin: a
  shorter dependent chain than Horner's); k in [0, 29]: one normal factor), e^(2a) + 1 one
  multiply-add; picked lane by lane, then the sign of x ORed into the bits (tanh(-0) = -0).
* erf(x): |x| < 1: x·R(x²), R of degree 6 (relative error 1.2e-9); otherwise
  ±(1 - erfc(z)), z = min(|x|, 4) (erf rounds to 1 from 3.92), with Numerical Recipes' erfcc
  (t = 1/(1 + z/2), erfc = t·exp(-z² + S(t)), fractional error below 1.2e-7, so at most 1.9e-8
  in erf ≥ 0.84): S and exp's P by pairs (Estrin), -z² + S(t) one multiply-add, its exp's k
  in [-25, 0] (one normal factor), 1 - t·exp(…) one more; the sign ORed in.

Measured (tests/test_transcendentals.py, through the uop interpreter, whose `uop.fma` rounds
once exactly, against float64 libm rounded to f32, with and without `fma`, over ±(every f32
exponent × 12 mantissas), ±0, ±inf, NaN, the subnormals and the overflow thresholds, 6,161
values, and a million random ones through the vectorized form): exp ≤ 1 ulp (subnormal results
too, in their spacing), exp(-|x|) ≤ 1 ulp, σ ≤ 2 ulp (each form), tanh ≤ 1 ulp, erf ≤ 2 ulp;
NaN → NaN, the exact limits at ±inf, ±0 with its sign. The host-built code (16 lanes, `@mulAdd`
or not) is held to the same bounds over the sweep. Denormals are not flushed: the generated
code keeps IEEE semantics.

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
from zant.dialects.zant import target_parameters
from zant.ir.locations import located

MAGIC = 12582912.0
"""1.5·2^23: adding it to |y| < 2^22 rounds y to an integer kept in the low mantissa bits."""
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
SIGMOID_CLAMP = 18.0
"""σ(x) rounds to 1 for x > 17.33 (1 - σ(x) < 2^-25)."""
ERFC_CLAMP = 4.0
"""erf(z) rounds to 1 for z ≥ 3.92 (erfc(z) < 2^-25), so |x| is clamped to 4 in erfc."""
TINY = 2.0 ** -24
SIGN_BIT = -(1 << 31)
"""0x80000000 as an i32."""


class Emitter:
    """Builds the replacement of one op, in front of it; `fused`: multiply-adds as `uop.fma`."""

    def __init__(self, anchor: Operation, fused: bool = False):
        self.anchor = anchor
        self.fused = fused
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

    def mul_add(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        """a·b + c: one `uop.fma` (one rounding) if fused, else a `uop.mul` and a `uop.add`."""
        if self.fused:
            return self.add(uop.FmaOp(a, b, c))
        return self.alu("add", self.alu("mul", a, b), c)

    def horner(self, x: SSAValue, coefficients: Sequence[float]) -> SSAValue:
        """Σ coefficients[i]·x^i."""
        acc = self.f(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            acc = self.mul_add(acc, x, self.f(c))
        return acc

    def estrin(self, x: SSAValue, coefficients: Sequence[float]) -> SSAValue:
        """Σ coefficients[i]·x^i as (c0 + c1·x) + x²·((c2 + c3·x) + x²·(…)): a chain of
        dependent operations half as long as Horner's, for one more multiply (x²)."""
        x2 = self.alu("mul", x, x)
        pairs = [coefficients[i:i + 2] for i in range(0, len(coefficients), 2)]
        terms = [self.mul_add(self.f(c[1]), x, self.f(c[0])) if len(c) == 2 else self.f(c[0]) for c in pairs]
        acc = terms[-1]
        for term in reversed(terms[:-1]):
            acc = self.mul_add(acc, x2, term)
        return acc

    def where(self, condition: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(uop.WhereOp(condition, a, b))

    def bits(self, x: SSAValue) -> SSAValue:
        return self.add(uop.BitcastOp(x, i32))

    def float(self, bits: SSAValue) -> SSAValue:
        return self.add(uop.BitcastOp(bits, Float32Type()))

    def or_sign_of(self, x: SSAValue, y: SSAValue) -> SSAValue:
        """y with the sign bit of x set where x's is (y ≥ 0 or -0.0 there: ±y; NaN stays NaN)."""
        sign = self.alu("and", self.bits(x), self.i(SIGN_BIT))
        return self.float(self.alu("or", self.bits(y), sign))

    def reduce(self, x: SSAValue, log2e: float = LOG2E, ln2: tuple[float, float] = (LN2_HI, LN2_LO)):
        """(j, k, r) for x·log2e = k + r·log2 e, |r| ≤ ln2/2·(1 + 2^-11), j = k + 1.5·2^23 (k
        in its low mantissa bits); needs |x·log2e| < 2^22. k·ln2[0] is exact (9 bits times an
        integer below 2^9), so r has the error of the second step only."""
        j = self.mul_add(x, self.f(log2e), self.f(MAGIC))
        k = self.fc("sub", j, MAGIC)
        r = self.mul_add(k, self.f(-ln2[0]), x)
        r = self.mul_add(k, self.f(-ln2[1]), r)
        return j, k, r

    def scale(self, j: SSAValue, bias: int | SSAValue) -> SSAValue:
        """2^(k + bias - 127) as the f32 whose exponent field is k + bias (normal: 0 < k + bias
        < 255), for j = k + 1.5·2^23: bits(j)·2^23 keeps k·2^23 (mod 2^32: 1.5·2^23's bits
        shift out), to which the biased field is added (LLVM makes the multiply a shift)."""
        field = self.exponent_field(j)
        bias_bits = self.i(bias << 23) if isinstance(bias, int) else bias
        return self.float(self.alu("add", field, bias_bits))

    def exponent_field(self, j: SSAValue) -> SSAValue:
        """k·2^23 (mod 2^32) for j = k + 1.5·2^23: k in an f32's exponent field."""
        return self.alu("mul", self.bits(j), self.i(1 << 23))

    def exp(self, x: SSAValue, nonpositive: bool = False) -> SSAValue:
        """e^x for every f32 x; `nonpositive`: x ≤ 0 or NaN (exp(-|y|): Softplus)."""
        x = self.fc("max", x, -104.0)
        if not nonpositive:
            x = self.fc("min", x, 89.0)
        j, k, r = self.reduce(x)
        if nonpositive:
            # k in [-150, 0]: e^x = P(r)·2^-24 · 2^(k+24), the first factor exact (a scaled
            # polynomial), the second normal; their product rounds once, subnormal or not.
            return self.alu("mul", self.horner(r, [c * TINY for c in EXP_P]), self.scale(j, 127 + 24))
        # k in [-150, 128]: where x < 0 as above, (P(r)·2^-24)·2^(k+24); else (P(r)·2)·2^(k-1).
        negative = self.alu("cmplt", x, self.f(0.0))
        p = self.alu("mul", self.horner(r, EXP_P), self.where(negative, self.f(TINY), self.f(2.0)))
        bias = self.where(negative, self.i((127 + 24) << 23), self.i((127 - 1) << 23))
        return self.alu("mul", p, self.scale(j, bias))

    def sigmoid(self, x: SSAValue) -> SSAValue:
        """1/(1 + e^-y) = n/(n + p), y = x clamped to [-104, 18] (σ(18) rounds to 1; σ(-104)
        to 0), k = round(-y·log2 e), n = 2^(24-k) (normal: k in [-26, 150]) and p = 2^24·e^r,
        r = -y - k·ln2, by e^r's polynomial at -r (coefficients times ±2^24: exact). One
        division, no select: the quotient of two normal numbers rounds once, also to a
        subnormal result."""
        y = self.fc("min", self.fc("max", x, -104.0), SIGMOID_CLAMP)
        j = self.mul_add(y, self.f(-LOG2E), self.f(MAGIC))
        k = self.fc("sub", j, MAGIC)
        s = self.mul_add(k, self.f(LN2_HI), y)  # -r, exact
        s = self.mul_add(k, self.f(LN2_LO), s)
        p = self.horner(s, [c * (-1) ** i * 2.0 ** 24 for i, c in enumerate(EXP_P)])
        field = self.exponent_field(j)
        n = self.float(self.alu("sub", self.i((127 + 24) << 23), field))
        return self.alu("div", n, self.alu("add", n, p))

    def tanh(self, x: SSAValue) -> SSAValue:
        """|x| < 0.625: x + x³·P(x²); else ±(1 - 2/(e^(2a) + 1)), a = min(|x|, 10) (tanh(10)
        rounds to 1), e^(2a) = 2^k·e^(2s) with 2a reduced by halves of ln2 (exact) and e^(2s) by
        e^r's polynomial at r = 2s (its coefficients times powers of two); k in [0, 29]: one
        normal power of two."""
        x2 = self.alu("mul", x, x)
        small = self.mul_add(self.alu("mul", x, x2), self.horner(x2, TANH_P), x)
        a = self.alu("abs", x)
        j, k, s = self.reduce(self.fc("min", a, 10.0), 2 * LOG2E, (LN2_HI / 2, LN2_LO / 2))
        # By pairs: a shorter dependent chain (Horner here measured 26% slower on the host: two
        # branches' ops are too many for the out-of-order window to overlap iterations).
        p = self.estrin(s, [c * 2.0 ** i for i, c in enumerate(EXP_P)])
        denominator = self.mul_add(p, self.scale(j, 127), self.f(1.0))  # e^(2a) + 1
        large = self.alu("sub", self.f(1.0), self.alu("div", self.f(2.0), denominator))
        # The sign of x ORed into either (small has it but for x = -0: x + x³·P(x²) is +0 there).
        return self.or_sign_of(x, self.where(self.alu("cmplt", a, self.f(0.625)), small, large))

    def erf(self, x: SSAValue) -> SSAValue:
        a = self.alu("abs", x)
        small = self.alu("mul", x, self.horner(self.alu("mul", x, x), ERF_P))
        z = self.fc("min", a, ERFC_CLAMP)
        t = self.alu("div", self.f(1.0), self.mul_add(z, self.f(0.5), self.f(1.0)))
        # Both polynomials of the large branch by pairs (a shorter dependent chain: its ops
        # are many, the division in front of them is long; Horner here measured 12% slower).
        exponent = self.mul_add(self.alu("neg", z), z, self.estrin(t, ERFC_NR))  # in [-17.3, -0.2]
        j, k, r = self.reduce(exponent)
        e = self.alu("mul", self.estrin(r, EXP_P), self.scale(j, 127))  # k in [-25, 0]: normal
        large = self.mul_add(self.alu("neg", t), e, self.f(1.0))  # 1 - erfc, in [0.84, 1]
        return self.where(self.alu("cmplt", a, self.f(1.0)), small, self.or_sign_of(x, large))


def _const(value: SSAValue, literal: float) -> bool:
    owner = value.owner
    return isinstance(owner, uop.ConstOp) and owner.value.value.data == literal


def _one_plus(value: SSAValue) -> SSAValue | None:
    """e for `value` = 1 + e or e + 1."""
    owner = value.owner
    if isinstance(owner, uop.AddOp):
        for one, e in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            if _const(one, 1.0):
                return e
    return None


def _exp_of_neg(value: SSAValue) -> SSAValue | None:
    """y for `value` = exp(-y) of f32."""
    owner = value.owner
    if isinstance(owner, uop.ExpOp) and isinstance(owner.input.owner, uop.NegOp):
        if isinstance(value.type, Float32Type):
            return owner.input.owner.input
    return None


def sigmoid_argument(op: Operation) -> tuple[SSAValue, list[Operation]] | None:
    """(x, the ops that compute σ(x)) if `op` computes σ(x) = 1/(1 + e^-x) as the lowerings
    write it, each intermediate value used only inside it:
    Sigmoid's `(x < 0 ? e : 1)/(1 + e)` with e = exp(-|x|), the recurrent cells'
    `1/(1 + exp(-x))`, the ML ops' `recip(1 + exp(-x))`."""
    if isinstance(op, uop.RecipOp):
        numerator, sum_ = None, op.input
    elif isinstance(op, uop.DivOp):
        numerator, sum_ = op.lhs, op.rhs
    else:
        return None
    e = _one_plus(sum_)
    y = None if e is None else _exp_of_neg(e)
    if y is None:
        return None
    if numerator is None or _const(numerator, 1.0):
        x, ops = y, [op, sum_.owner, e.owner, e.owner.input.owner]
    elif isinstance(y.owner, uop.AbsOp) and isinstance(numerator.owner, uop.WhereOp):
        x, where = y.owner.input, numerator.owner
        condition = where.condition.owner
        if not (isinstance(condition, uop.CmpltOp) and condition.lhs == x and _const(condition.rhs, 0.0)
                and where.true_value == e and _const(where.false_value, 1.0)):
            return None
        ops = [op, where, condition, sum_.owner, e.owner, e.owner.input.owner, y.owner]
    else:
        return None
    inner = {r for o in ops[1:] for r in o.results}
    if any(u.operation not in ops for v in inner for u in v.uses):
        return None
    return x, ops


def nonpositive(value: SSAValue) -> bool:
    """Whether `value` is -|y| (≤ 0 or NaN), as Softplus's exp argument."""
    owner = value.owner
    return isinstance(owner, uop.NegOp) and isinstance(owner.input.owner, uop.AbsOp)


EXPANSIONS = {uop.ExpOp: Emitter.exp, uop.TanhOp: Emitter.tanh, uop.ErfOp: Emitter.erf}


def expand(op: uop.ExpOp | uop.TanhOp | uop.ErfOp, fused: bool = False) -> None:
    """Replace `op` by its polynomial form (`fused`: with `uop.fma`)."""
    emitter = Emitter(op, fused)
    if isinstance(op, uop.ExpOp):
        result = emitter.exp(op.input, nonpositive(op.input))
    else:
        result = EXPANSIONS[type(op)](emitter, op.input)
    Rewriter.insert_op(located(emitter.ops, op.location), InsertPoint.before(op))
    op.result.replace_all_uses_with(result)
    Rewriter.erase_op(op)


@dataclass(frozen=True)
class ExpandTranscendentalsPass(ModulePass):
    """Expand f32 exp, tanh and erf into polynomial arithmetic (see the module docstring)."""

    name = "expand-transcendentals"

    fma: bool | None = None
    """Multiply-adds as `uop.fma` (`@mulAdd`): one instruction on a CPU with an FMA unit (x86-64
    since Haswell / Zen, AArch64, Cortex-M4F and up), a libm call on one without. Default: the
    module's target's vector unit has one (`#zant.target`); false without a target."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fma = target_parameters(op).fma if self.fma is None else self.fma
        for root in [o for o in op.walk() if isinstance(o, uop.DivOp | uop.RecipOp)]:
            if (found := sigmoid_argument(root)) is not None:
                x, ops = found
                emitter = Emitter(root, fma)
                result = emitter.sigmoid(x)
                Rewriter.insert_op(located(emitter.ops, root.location), InsertPoint.before(root))
                root.results[0].replace_all_uses_with(result)
                for dead in ops:  # users first
                    Rewriter.erase_op(dead)
        for target in [o for o in op.walk() if type(o) in EXPANSIONS]:
            if isinstance(target.result.type, Float32Type):
                expand(target, fma)
