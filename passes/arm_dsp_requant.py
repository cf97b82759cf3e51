"""`arm-dsp-requant`: a fully connected block's requantization as `SMMLA` and `SSAT`.

The requantization of an int32 sum with one shift S ≥ 33 for its layer (`quant.py`'s common
shift form) is, after the lowering,

    %w = uop.cast %x : i32 to i64                      %r = arm_dsp.smmla %x, %m, %c : i32
    %p = uop.mul %w, %m64 : i64                        %s = arm_dsp.ssat %r {bits = 8, shift = S - 32}
    %q = uop.add %p, 2^(S-1) : i64              →      (%s = uop.max %s, lo   where lo > -128)
    %v = uop.shr %q, S : i64
    (%v = uop.cast %v : i64 to i32)
    (%v = uop.add %v, zp)
    %y = uop.min (uop.max %v, lo), 127

with %m64 a constant in int32's range or an int32 cast to i64 (a per-channel multiplier table),
zp a constant and c = 2^(S-33) + zp·2^(S-32). The Cortex-M4 then spends one `SMMLA` and one
`SSAT` per output where LLVM's expansion of the 64-bit multiply took `UMULL`, `ASR` and `MLA`,
and the clamp after the zero point a compare and a conditional move per bound (about 13
instructions an output for AD's layers).

Exact: for S ≥ 33 the addend 2^(S-1) is a multiple of 2^32, so floor((x·m + 2^(S-1)) / 2^S) =
floor((floor(x·m / 2^32) + 2^(S-33)) / 2^(S-32)), and adding zp·2^(S-32) before the shift adds
zp after it; |floor(x·m / 2^32)| < 2^31 for |m| ≤ 2^31, and c is required to keep the sum in
int32. `SSAT` saturates to [-2^(b-1), 2^(b-1) - 1] with b given by the clamp's upper bound; a
larger lower bound (a fused ReLU with zp above the type's minimum) stays a `max` after it.

Taken for the sums of `arm_dsp.smlad_rows` (fully connected blocks, `fully_connected.py`), the
only kernels it has been measured on; other kernels' epilogues have the same chain.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects import arm_dsp, uop
from zant.dialects.uop.alu import constant_of, fold_cast
from zant.ir.locations import locate
from zant.ir.walk import ops_of

I32 = IntegerType(32)
I64 = IntegerType(64)


def _only_use(value: SSAValue, kind: type[Operation]) -> Operation | None:
    """The op of `kind` that alone reads `value`, or None."""
    if value.uses.get_length() != 1:
        return None
    user = next(iter(value.uses)).operation
    return user if isinstance(user, kind) else None


def _integer(value: SSAValue) -> int | None:
    """The integer literal `value` is (or an exact cast of one: the zero point, an i8 literal
    widened), or None."""
    owner = value.owner
    if isinstance(owner, uop.CastOp):
        inner = constant_of(owner.input)
        attr = None if inner is None else fold_cast(inner, value.type)
    else:
        attr = constant_of(value)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def _other(op: Operation, value: SSAValue) -> SSAValue:
    """The operand of binary `op` that is not `value`."""
    return op.operands[1] if op.operands[0] is value else op.operands[0]


def _multiplier(value: SSAValue) -> SSAValue | int | None:
    """The int32 multiplier behind an i64 operand: a constant in int32's range, or the i32 that
    a cast widened; None otherwise."""
    literal = _integer(value)
    if literal is not None:
        return literal if -(2**31) <= literal < 2**31 else None
    owner = value.owner
    if isinstance(owner, uop.CastOp) and owner.input.type == I32:
        return owner.input
    return None


def rewrite_requant(sum_value: SSAValue) -> bool:
    """The chain from the int32 `sum_value` to its clamp as SMMLA, SSAT (module docstring);
    False, unchanged, where the chain is not that."""
    widen = _only_use(sum_value, uop.CastOp)
    if widen is None or widen.result.type != I64:
        return False
    mul = _only_use(widen.result, uop.MulOp)
    if mul is None:
        return False
    m = _multiplier(_other(mul, widen.result))
    rounding = _only_use(mul.result, uop.AddOp)
    shr = None if rounding is None else _only_use(rounding.result, uop.ShrOp)
    if m is None or rounding is None or shr is None or shr.lhs is not rounding.result:
        return False
    shift, half = _integer(shr.rhs), _integer(_other(rounding, mul.result))
    if shift is None or not 33 <= shift <= 63 or half != 1 << (shift - 1):
        return False
    chain: list[Operation] = [widen, mul, rounding, shr]
    value = shr.result
    narrow = _only_use(value, uop.CastOp)
    if narrow is not None and narrow.result.type == I32:
        chain.append(narrow)
        value = narrow.result
    zero_point = 0
    add = _only_use(value, uop.AddOp)
    if add is not None:
        zero_point = _integer(_other(add, value))
        if zero_point is None:
            return False
        chain.append(add)
        value = add.result
    low_op = _only_use(value, uop.MaxOp)
    high_op = None if low_op is None else _only_use(low_op.result, uop.MinOp)
    if low_op is None or high_op is None:
        return False
    low, high = _integer(_other(low_op, value)), _integer(_other(high_op, low_op.result))
    if low is None or high is None or high < 0 or (high + 1) & high:
        return False
    bits = (high + 1).bit_length()  # high = 2^(bits-1) - 1
    right = shift - 32
    addend = (1 << (right - 1)) + (zero_point << right)
    if low > high or low < -(1 << (bits - 1)) or not -(2**31) <= addend < 2**31 or bits > 32:
        return False
    chain += [low_op, high_op]
    made: list[Operation] = []
    if isinstance(m, int):
        made.append(uop.ConstOp(m, I32))
        m = made[-1].results[0]
    made.append(uop.ConstOp(addend, I32))
    made.append(arm_dsp.SmmlaOp(sum_value, m, made[-1].results[0]))
    made.append(arm_dsp.SsatOp(made[-1].results[0], bits, right))
    if low > -(1 << (bits - 1)):
        made.append(uop.ConstOp(low, I32))
        made.append(uop.MaxOp(made[-2].results[0], made[-1].results[0]))
    if high_op.result.type != I32:
        made.append(uop.CastOp(made[-1].results[0], high_op.result.type))
    locate(made, high_op.location)
    Rewriter.insert_op(made, InsertPoint.before(high_op))
    high_op.result.replace_all_uses_with(made[-1].results[0])
    table_cast = _other(mul, widen.result).owner
    for dead in reversed(chain):
        Rewriter.erase_op(dead)
    if isinstance(table_cast, uop.CastOp) and not table_cast.result.uses:
        Rewriter.erase_op(table_cast)  # the multiplier table's widening, now unread
    return True


@dataclass(frozen=True)
class ArmDspRequantPass(ModulePass):
    """Each fully connected block's requantization (a common shift of 33 or more) as one
    `arm_dsp.smmla` and one `arm_dsp.ssat` per output."""

    name = "arm-dsp-requant"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for rows in ops_of(op, arm_dsp.SmladRowsOp):
            for total in rows.sums:
                rewrite_requant(total)
