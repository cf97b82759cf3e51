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
zp after it; |floor(x·m / 2^32)| ≤ 2^30 for |x|, |m| ≤ 2^31, so c is required in [-2^30, 2^30)
to keep SMMLA's sum in int32 (a c merely in int32 wraps: S = 57 and zp = 40 give c ≈ 1.36·2^30,
and a saturating output came out -128 instead of 127). `SSAT` saturates to [-2^(b-1), 2^(b-1) - 1] with b given by the clamp's upper bound; a
larger lower bound (a fused ReLU with zp above the type's minimum) stays a `max` after it.

Taken for the sums of `arm_dsp.smlad_rows` (fully connected blocks, `fully_connected.py`), the
only kernels it has been measured on; other kernels' epilogues have the same chain.

Then a layer's whole loop over its blocks of 5 rows (`arm_dsp.SMLAD_ROWS`), where each block's
5 sums take one literal multiplier and addend and go to y[i + 5·block + r] (int8, in bounds; a
ReLU at -128 on the way is nothing), becomes one `arm_dsp.smlad_layer`: the blocks, their
requantization and stores in one asm block, so no compiled loop spills and reloads around each
block's assembly of 13 or 14 registers (AD on the L4R5, at 4 rows: 528,303 -> 519,615 cycles).
The rows left after the loop (M not a multiple of 5: a block of its own) keep their
`smlad_rows`; per-channel multipliers (a table) or anything else in the loop keep the blocks.
(The same per block, the loop compiled around it, was slower: LLVM unrolled the 32 blocks of
AD's layers, whose code then missed the 1 KB instruction cache: 582 K cycles.)
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.analysis.linear_index import affine_terms
from zant.analysis.loop_values import defined_inside, holds_only, integer_literal, literal_or_atom, only_use
from zant.dialects import arm_dsp, uop
from zant.ir.locations import locate
from zant.ir.walk import ops_of
from zant.passes.arm_dsp_tile_loops import BeforeLoop

I32 = IntegerType(32)
I64 = IntegerType(64)


def _other(op: Operation, value: SSAValue) -> SSAValue:
    """The operand of binary `op` that is not `value`."""
    return op.operands[1] if op.operands[0] is value else op.operands[0]


def _multiplier(value: SSAValue) -> SSAValue | int | None:
    """The int32 multiplier behind an i64 operand: a constant in int32's range, or the i32 that
    a cast widened; None otherwise."""
    literal = integer_literal(value)
    if literal is not None:
        return literal if -(2**31) <= literal < 2**31 else None
    owner = value.owner
    if isinstance(owner, uop.CastOp) and owner.input.type == I32:
        return owner.input
    return None


def rewrite_requant(sum_value: SSAValue) -> bool:
    """The chain from the int32 `sum_value` to its clamp as SMMLA, SSAT (module docstring);
    False, unchanged, where the chain is not that."""
    widen = only_use(sum_value, uop.CastOp)
    if widen is None or widen.result.type != I64:
        return False
    mul = only_use(widen.result, uop.MulOp)
    if mul is None:
        return False
    m = _multiplier(_other(mul, widen.result))
    rounding = only_use(mul.result, uop.AddOp)
    shr = None if rounding is None else only_use(rounding.result, uop.ShrOp)
    if m is None or rounding is None or shr is None or shr.lhs is not rounding.result:
        return False
    shift, half = integer_literal(shr.rhs), integer_literal(_other(rounding, mul.result))
    if shift is None or not 33 <= shift <= 63 or half != 1 << (shift - 1):
        return False
    chain: list[Operation] = [widen, mul, rounding, shr]
    value = shr.result
    narrow = only_use(value, uop.CastOp)
    if narrow is not None and narrow.result.type == I32:
        chain.append(narrow)
        value = narrow.result
    zero_point = 0
    add = only_use(value, uop.AddOp)
    if add is not None:
        zero_point = integer_literal(_other(add, value))
        if zero_point is None:
            return False
        chain.append(add)
        value = add.result
    low_op = only_use(value, uop.MaxOp)
    high_op = None if low_op is None else only_use(low_op.result, uop.MinOp)
    if low_op is None or high_op is None:
        return False
    low, high = integer_literal(_other(low_op, value)), integer_literal(_other(high_op, low_op.result))
    if low is None or high is None or high < 0 or (high + 1) & high:
        return False
    bits = (high + 1).bit_length()  # high = 2^(bits-1) - 1
    right = shift - 32
    addend = (1 << (right - 1)) + (zero_point << right)
    # |floor(x·m / 2^32)| ≤ 2^30: the addend within ±2^30 keeps SMMLA's sum from wrapping.
    if low > high or low < -(1 << (bits - 1)) or not -(2**30) <= addend < 2**30 or bits > 32:
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


@dataclass
class Int8Store:
    """A sum requantized into an int8 store as `arm-dsp-requant-sums` writes it: an SMMLA by a
    multiplier with a literal addend, an SSAT to 8 bits, a cast to int8 (a ReLU at its zero
    point -128 on the way is nothing), the store."""

    multiplier: SSAValue
    addend: int
    shift: int
    store: uop.StoreOp
    ops: list[Operation]
    """From the SMMLA to the store."""


def int8_store_of(total: SSAValue) -> Int8Store | None:
    """The requantized int8 store `total` alone feeds (`Int8Store`), else None."""
    smmla = only_use(total, arm_dsp.SmmlaOp)
    sat = None if smmla is None else only_use(smmla.result, arm_dsp.SsatOp)
    narrow = None if sat is None else only_use(sat.result, uop.CastOp)
    if smmla is None or sat is None or narrow is None or smmla.lhs is not total:
        return None
    addend = integer_literal(smmla.addend)
    if addend is None or sat.bits.data != 8 or narrow.result.type != IntegerType(8):
        return None
    value, relu = narrow.result, only_use(narrow.result, uop.MaxOp)
    if relu is not None:
        bound = integer_literal(_other(relu, value))
        if bound is None or bound > -128:
            return None
        value = relu.result
    store = only_use(value, uop.StoreOp)
    if store is None or store.value is not value:
        return None
    return Int8Store(smmla.rhs, addend, sat.shift.data, store, [smmla, sat, narrow, *([relu] if relu else []), store])


def _linear(value: SSAValue) -> tuple[dict[SSAValue, int], int]:
    """`value` as Σ coefficient·atom + constant, integer literals (and their exact casts)
    constants."""
    return affine_terms(value, literal_or_atom)


def fuse_layer(rows: arm_dsp.SmladRowsOp) -> bool:
    """The loop over a layer's blocks of `SmladLayerOp.ROWS` rows, each `smlad_rows` then per sum
    an smmla and an ssat (8 bits) of literals shared by the layer, a cast to int8 (and a ReLU at
    -128, nothing) stored at y[i + ROWS·block + r] (in bounds) → one `arm_dsp.smlad_layer` before the loop, the
    loop gone; False, unchanged, where the loop holds anything else."""
    loop = rows.parent_op()
    if rows.rows.data != arm_dsp.SmladLayerOp.ROWS or not isinstance(loop, uop.RangeOp):
        return False
    if loop.start.data != 0 or loop.step.data != 1 or loop.end.data < 1:
        return False
    iv, steps = loop.induction_var, rows.steps.data
    stride = 4 * arm_dsp.SmladLayerOp.ROWS * (steps + 1)
    pa, pb = rows.pa.owner, rows.pb.owner
    if not (isinstance(pa, uop.GepOp) and isinstance(pb, uop.GepOp) and len(pa.indices) == 1 and len(pb.indices) == 1):
        return False
    if _linear(pa.indices[0]) != ({}, 0) or _linear(pb.indices[0]) != ({iv: stride}, 0) or defined_inside(rows.shared, loop):
        return False
    if defined_inside(pa.source, loop) or defined_inside(pb.source, loop):
        return False
    matched: list[Operation] = [rows]
    params, places = set(), []
    for r, total in enumerate(rows.sums):
        smmla = only_use(total, arm_dsp.SmmlaOp)
        sat = None if smmla is None else only_use(smmla.result, arm_dsp.SsatOp)
        narrow = None if sat is None else only_use(sat.result, uop.CastOp)
        if smmla is None or sat is None or narrow is None or smmla.lhs is not total or narrow.result.type != IntegerType(8):
            return False
        value, relu = narrow.result, only_use(narrow.result, uop.MaxOp)
        if relu is not None:  # a ReLU of the int8 value at its zero point -128: nothing to do
            bound = integer_literal(_other(relu, value))
            if bound is None or bound > -128:
                return False
            value = relu.result
        store = only_use(value, uop.StoreOp)
        gep = None if store is None else store.ptr.owner
        if store is None or store.value is not value or not isinstance(gep, uop.GepOp) or gep.inbounds is None:
            return False
        if len(gep.indices) != 1 or defined_inside(gep.source, loop):
            return False
        params.add((integer_literal(smmla.rhs), integer_literal(smmla.addend), sat.bits.data, sat.shift.data, gep.source))
        terms, constant = _linear(gep.indices[0])
        if terms.get(iv) != arm_dsp.SmladLayerOp.ROWS or any(defined_inside(atom, loop) for atom in terms if atom is not iv):
            return False
        places.append((tuple((a, k) for a, k in terms.items() if a is not iv), constant - r))
        matched += [op for op in (smmla, sat, narrow, relu, store, gep) if op is not None]
    # Compared as sets, built in the order the first store's index names them (a set's order
    # follows the values' ids, so the generated code would differ from one run to the next).
    if len(params) != 1 or len({(frozenset(t), c) for t, c in places}) != 1:
        return False
    multiplier, addend, bits, shift, target = params.pop()
    if multiplier is None or addend is None or bits != 8:
        return False
    if not holds_only(loop, [*matched, pa, pb]):
        return False
    # The layer's first output, pointers to the blocks' starts: built before the loop.
    terms, constant = places[0]
    before = BeforeLoop(loop)
    py = before.emit(uop.GepOp(target, [before.index(terms, constant)], inbounds=True))
    zero = before.emit(uop.ConstOp(0, IndexType()))
    first_pa = before.emit(uop.GepOp(pa.source, [zero], inbounds=pa.inbounds is not None))
    first_pb = before.emit(uop.GepOp(pb.source, [zero], inbounds=pb.inbounds is not None))
    before.replace(arm_dsp.SmladLayerOp(first_pa, first_pb, rows.shared, py, steps, loop.end.data, multiplier, addend, shift))
    return True


@dataclass(frozen=True)
class ArmDspRequantPass(ModulePass):
    """Each fully connected block's requantization (a common shift of 33 or more) as one
    `arm_dsp.smmla` and one `arm_dsp.ssat` per output; a layer of such blocks one
    `arm_dsp.smlad_layer`."""

    name = "arm-dsp-requant"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for rows in ops_of(op, arm_dsp.SmladRowsOp):
            for total in rows.sums:
                rewrite_requant(total)
            fuse_layer(rows)
