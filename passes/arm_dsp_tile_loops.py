"""`arm-dsp-tile-loops`: a 2 x 2 register tile's word dot-product loop as one `arm_dsp.smlad_tile`.

After `arm-dsp-dot`, `interleave-dot-rows` and `fuse-smlad-bytes`, the reduction of a 2 x 2 tile
(`conv_columns`: two output channels by two pixels) is a loop of step 4 whose body loads four
int8 words, widens two of them (a0, a1: the two rows' words, or whichever operand the pairs share
halves of) and runs two `smlad_bytes_pair`, one per other word (b0, b1):

    uop.range %k = s to e step 4 {
      %a0 = arm_dsp.load_word (gep A, i(k))      %a1 = … (gep A, i(k) + a_next)
      %b0 = arm_dsp.load_word (gep B, j(k))      %b1 = … (gep B, j(k) + b_next)
      %r00, %r10 = arm_dsp.smlad_bytes_pair sxtb16(%a0), sxtb16(%a0 ror 8), sxtb16(%a1), …, %b0, c00, c10
      %r01, %r11 = arm_dsp.smlad_bytes_pair …, %b1, c01, c11     (c, r: acc_get / acc_set)
    }
        →
    %r00, %r10, %r01, %r11 = arm_dsp.smlad_tile &A[i(s)], &B[j(s)], c00, c10, c01, c11
                               {steps = (e - s) / 4, a_step = 4·di/dk, a_next, b_step, b_next}

The op is one loop in assembly (`zant_smlad_tile`): per step 4 word loads (3 of them back to
back), each word widened once (8 SXTB16) and 8 SMLAD, the four accumulators, both pointers, the
bound and six temporaries in 13 registers, the pointers moved by immediates once per pass of
`UNROLL` steps. LLVM scheduled the same steps worse on the Cortex-M4: it loaded words of later
steps early and spilled them, kept the loop counter and an input base on the stack, and did
not group the loads (KWS's 64 -> 64 pointwise layers: 105.7 cycles per 16 channels of a tile on
the L4R5's timing model, 94 as the assembly loop); given steps it could not hoist loads past,
it unrolled the loop whole, and the 1.3 KB of a 64-channel reduction thrashed the flash
accelerator's 1 KB instruction cache.

Taken for loops of at most `arm_dsp.SMLAD_TILE_STRAIGHT` steps (straight-line code) or at least
`MIN_STEPS` (a loop), when a_next and b_next are constants (the same buffer, indices differing
by a constant), the words' addresses move by a constant per step, and every offset the assembly
uses fits a load immediate (`LOAD_OFFSETS`). Exact: the same products, each sum wrapping modulo
2^32 as before. Run it after `fuse-smlad-bytes` and before `unroll-dot-loops` (a loop it
replaced is gone). A straight-line tile in a loop over pixel pairs, once its epilogue is SMMLA
and SSAT, becomes part of one `arm_dsp.smlad_tile_row` later (`arm-dsp-tile-rows`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.analysis.linear_index import index_ops
from zant.analysis.loop_values import INDEX_OPS
from zant.dialects import arm_dsp, uop
from zant.dialects.arm_dsp import LOAD_OFFSETS  # every offset of the loop and each pointer's advance per pass
from zant.ir.locations import locate
from zant.ir.walk import ops_of
from zant.passes.arm_dsp_dot import LANES, index_stride

MIN_STEPS = 16
"""The fewest steps taken as a loop. Up to `arm_dsp.SMLAD_TILE_STRAIGHT` (8) steps the op is
straight-line code, no loop (VWW's 8-, 16- and 32-channel pointwise layers on the L4R5: 1.06 M
-> 1.00 M, 665 K -> 614 K, 1.07 M -> 1.02 M, 537 K -> 503 K cycles against LLVM's whole
unrolled pairs; as loops they had been 2-4% slower than LLVM's, and a first conv's 1-step tiles,
each a loop in its unrolled taps, outgrew the flash accelerator's instruction cache); from 16
steps a loop (VWW's 64-channel layers 1.31 M -> 1.03 M). Between them LLVM's loops stay: no
model measured has them."""

MIN_STRAIGHT = 2
"""The fewest steps taken as straight-line code. A 1-step tile is a window's row of taps (KWS's
first conv: 10 of them, 1 -> 64 channels): as assembly, which LLVM weighs as one cheap call, the
loops around it were unrolled whole and outgrew the instruction cache (703 K -> 1.21 M cycles)."""

UNROLL = (4, 2, 1)
"""Steps per pass of the assembly loop: the first that divides the step count (`zant_smlad_tile`
does the same; 4 steps are ~330 bytes of code, a fraction of a 1 KB flash cache)."""


def _affine(value: SSAValue, memo: dict[SSAValue, dict | None]) -> dict | None:
    """`value` (an index) as {atom: coefficient} plus the constant under key None, over the values
    not computed by add, sub or a multiplication by a constant; None for anything else."""
    if value in memo:
        return memo[value]
    owner = value.owner
    result: dict | None
    if isinstance(owner, uop.ConstOp):
        result = {None: owner.value.value.data}  # type: ignore[union-attr]
    elif isinstance(owner, uop.AddOp | uop.SubOp):
        a, b = (_affine(v, memo) for v in owner.operands)
        if a is None or b is None:
            result = None
        else:
            sign = 1 if isinstance(owner, uop.AddOp) else -1
            result = dict(a)
            for key, c in b.items():
                result[key] = result.get(key, 0) + sign * c
    elif isinstance(owner, uop.MulOp):
        a, b = (_affine(v, memo) for v in owner.operands)
        if a is None or b is None:
            result = None
        elif set(a) == {None}:
            result = {key: a[None] * c for key, c in b.items()}
        elif set(b) == {None}:
            result = {key: b[None] * c for key, c in a.items()}
        else:
            result = {value: 1}
    else:
        result = {value: 1}
    memo[value] = result
    return result


def _difference(first: uop.GepOp, second: uop.GepOp, memo: dict) -> int | None:
    """second's index minus first's when both address one buffer and it is a constant."""
    if first.source is not second.source:
        return None
    a, b = _affine(first.indices[0], memo), _affine(second.indices[0], memo)
    if a is None or b is None:
        return None
    keys = set(a) | set(b)
    if any(a.get(k, 0) != b.get(k, 0) for k in keys if k is not None):
        return None
    return b.get(None, 0) - a.get(None, 0)


@dataclass
class _Match:
    loop: uop.RangeOp
    geps: tuple[uop.GepOp, uop.GepOp]  # of a0 and b0
    steps: tuple[int, int]  # bytes per step of a and b
    nexts: tuple[int, int]  # a1 - a0, b1 - b0
    gets: list[uop.AccGetOp]  # c00, c10, c01, c11
    sets: list[uop.AccSetOp]  # r00, r10, r01, r11


def _word_gep(value: SSAValue, inside: set[Operation]) -> uop.GepOp | None:
    """The gep an int8 `load_word` in the loop reads, when it reads nothing else."""
    load = value.owner
    if not (isinstance(load, arm_dsp.LoadWordOp) and load in inside and not load.halves):
        return None
    gep = load.ptr.owner
    if not (isinstance(gep, uop.GepOp) and gep in inside and gep.inbounds is not None and len(gep.indices) == 1):
        return None
    if not isinstance(gep.source.type, uop.BufferType) or gep.result.uses.get_length() != 1:
        return None
    return gep


def _halves(pair: arm_dsp.SmladBytesPairOp) -> list[SSAValue] | None:
    """(a0, a1) when the pair's halves are sxtb16 (even) and sxtb16 ror 8 (odd) of each."""
    words = []
    for even, odd in ((pair.even0, pair.odd0), (pair.even1, pair.odd1)):
        e, o = even.owner, odd.owner
        if not (isinstance(e, arm_dsp.Sxtb16Op) and isinstance(o, arm_dsp.Sxtb16Op)
                and e.rotation == 0 and o.rotation == 8 and e.input == o.input):
            return None
        words.append(e.input)
    return words


def _accumulated(sum_in: SSAValue, sum_out: SSAValue, inside: set[Operation]) -> tuple[uop.AccGetOp, uop.AccSetOp] | None:
    """The acc_get that gives `sum_in` and the acc_set of the same accumulator that alone reads
    `sum_out`, both in the loop."""
    get = sum_in.owner
    if not (isinstance(get, uop.AccGetOp) and get in inside and get.result.uses.get_length() == 1):
        return None
    if sum_out.uses.get_length() != 1:
        return None
    put = next(iter(sum_out.uses)).operation
    if not (isinstance(put, uop.AccSetOp) and put in inside and put.acc is get.acc):
        return None
    return get, put


def match_tile(loop: uop.RangeOp) -> _Match | None:
    """`loop` as a 2 x 2 tile's dot loop (module docstring), or None."""
    if loop.step.data != LANES or loop.trip_count < MIN_STRAIGHT or arm_dsp.SMLAD_TILE_STRAIGHT < loop.trip_count < MIN_STEPS:
        return None
    ops = [op for op in loop.body.block.ops if not isinstance(op, uop.EndRangeOp)]
    inside = set(ops)
    allowed = (*INDEX_OPS, uop.GepOp, arm_dsp.LoadWordOp, arm_dsp.Sxtb16Op, uop.AccGetOp, uop.AccSetOp, arm_dsp.SmladBytesPairOp)
    if not all(isinstance(op, allowed) for op in ops):
        return None
    pairs = [op for op in ops if isinstance(op, arm_dsp.SmladBytesPairOp)]
    if len(pairs) != 2:
        return None
    first, second = pairs
    halves = [first.even0, first.odd0, first.even1, first.odd1]
    words = _halves(first)
    if words is None or [second.even0, second.odd0, second.even1, second.odd1] != halves:
        return None
    if any(h.uses.get_length() != 2 for h in halves) or any(w.uses.get_length() != 2 for w in words):
        return None
    geps = [_word_gep(v, inside) for v in (*words, first.word, second.word)]
    if any(g is None for g in geps) or first.word.uses.get_length() != 1 or second.word.uses.get_length() != 1:
        return None
    ga0, ga1, gb0, gb1 = geps  # type: ignore[misc]
    memo: dict = {}
    nexts = (_difference(ga0, ga1, memo), _difference(gb0, gb1, memo))
    k = loop.induction_var
    strides: dict = {}
    per_k = [index_stride(g.indices[0], k, inside, strides) for g in (ga0, ga1, gb0, gb1)]  # type: ignore[union-attr]
    if None in nexts or None in per_k or per_k[0] != per_k[1] or per_k[2] != per_k[3]:
        return None
    steps = (per_k[0] * LANES, per_k[2] * LANES)  # type: ignore[operator]
    accumulated = [
        _accumulated(first.addend0, first.result0, inside), _accumulated(first.addend1, first.result1, inside),
        _accumulated(second.addend0, second.result0, inside), _accumulated(second.addend1, second.result1, inside),
    ]
    if any(a is None for a in accumulated) or len({a[0].acc for a in accumulated}) != 4:  # type: ignore[index]
        return None
    # Every op of the body is one of these, or index arithmetic only they read.
    used = {*(a[0] for a in accumulated), *(a[1] for a in accumulated), *pairs}  # type: ignore[index]
    used |= {h.owner for h in halves} | {v.owner for v in (*words, first.word, second.word)} | set(geps)  # type: ignore[arg-type]
    for op in ops:
        if op not in used and not (isinstance(op, INDEX_OPS) and all(
            u.operation in inside and (u.operation in used or isinstance(u.operation, INDEX_OPS)) for r in op.results for u in r.uses
        )):
            return None
    trips = loop.trip_count
    unroll = trips if trips <= arm_dsp.SMLAD_TILE_STRAIGHT else next(u for u in UNROLL if trips % u == 0)  # code per pass
    offsets = [i * steps[0] + d for i in range(unroll) for d in (0, nexts[0])]
    offsets += [i * steps[1] + d for i in range(unroll) for d in (0, nexts[1])]
    if any(o not in LOAD_OFFSETS for o in offsets) or not all(0 < s * unroll < 4096 for s in steps):
        return None
    return _Match(loop, (ga0, gb0), steps, nexts, [a[0] for a in accumulated], [a[1] for a in accumulated])  # type: ignore[arg-type, index]


def _address_before(gep: uop.GepOp, loop: uop.RangeOp) -> SSAValue:
    """The address `gep` takes at the loop's first iteration, computed before the loop."""
    return value_before(gep.result, loop)


def value_before(value: SSAValue, loop: uop.RangeOp) -> SSAValue:
    """`value` as the loop's first iteration computes it, computed before the loop (the ops of
    the body it depends on cloned there, at the same location as the op that made it)."""
    k = loop.induction_var
    start = uop.ConstOp(loop.start.data, IndexType())
    mapping: dict[SSAValue, SSAValue] = {k: start.result}
    new: list[Operation] = [start]
    inside = set(loop.body.block.ops)

    def clone(value: SSAValue) -> SSAValue:
        if value in mapping:
            return mapping[value]
        owner = value.owner
        if not (isinstance(owner, Operation) and owner in inside):
            return value
        for operand in owner.operands:
            clone(operand)
        copy = owner.clone(value_mapper=mapping)
        new.append(copy)
        for old, cloned in zip(owner.results, copy.results):
            mapping[old] = cloned
        return mapping[value]

    result = clone(value)
    owner = value.owner
    locate(new, owner.location if isinstance(owner, Operation) else loop.location)
    for op in new:
        Rewriter.insert_op(op, InsertPoint.before(loop))
    return result


@dataclass
class BeforeLoop:
    """The ops a pass builds before a loop it folds into one op, in order: `emit` one, `index`
    an affine index; `replace` then puts them and the op before the loop (located at it) and
    erases the loop. What `arm-dsp-requant`, `arm-dsp-depthwise-rows`, `arm-dsp-tile-rows` and
    `arm-dsp-block-rows` each did with closures of their own."""

    loop: uop.RangeOp
    ops: list[Operation] = field(default_factory=list[Operation])

    def emit(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def index(self, terms: Iterable[tuple[SSAValue, int]], constant: int) -> SSAValue:
        """Σ k·atom over `terms` (atom, k) + `constant` (`index_ops`)."""
        self.ops += index_ops(terms, constant)
        return self.ops[-1].results[0]

    def replace(self, op: Operation) -> Operation:
        """`op` after the ops emitted, in place of the loop."""
        self.ops.append(op)
        locate(self.ops, self.loop.location)
        Rewriter.insert_op(self.ops, InsertPoint.before(self.loop))
        Rewriter.erase_op(self.loop, safe_erase=False)
        return op


RowT = TypeVar("RowT", bound=arm_dsp.RequantRowOp)


def fold_row(
    loop: uop.RangeOp, kind: type[RowT], pointers: Sequence[SSAValue], addends: Sequence[SSAValue],
    multipliers: Sequence[SSAValue], **layout: int,
) -> RowT:
    """`kind(pa, pb, py, addends, multipliers, **layout)` in place of `loop`: an
    `arm_dsp.smlad_tile_row` or `arm_dsp.smlad_block_row`, each operand the value the loop's
    first iteration reads, computed before it (`value_before`: the invariant loads hoisted,
    the pointers built)."""
    pa, pb, py, *values = (value_before(v, loop) for v in (*pointers, *addends, *multipliers))
    return BeforeLoop(loop).replace(kind(pa, pb, py, values[: len(addends)], values[len(addends):], **layout))  # type: ignore[return-value]


def _rewrite(match: _Match) -> None:
    loop = match.loop
    pa, pb = (_address_before(g, loop) for g in match.geps)
    gets = [uop.AccGetOp(g.acc) for g in match.gets]
    tile = arm_dsp.SmladTileOp(pa, pb, [g.result for g in gets], loop.trip_count, *match.steps[:1], match.nexts[0], match.steps[1], match.nexts[1])
    sets = [uop.AccSetOp(s.acc, r) for s, r in zip(match.sets, tile.results)]
    new = [*gets, tile, *sets]
    locate(new, loop.location)
    for op in new:
        Rewriter.insert_op(op, InsertPoint.before(loop))
    Rewriter.erase_op(loop)


@dataclass(frozen=True)
class ArmDspTileLoopsPass(ModulePass):
    """Each 2 x 2 register tile's word dot-product loop as one `arm_dsp.smlad_tile`."""

    name = "arm-dsp-tile-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in ops_of(op, uop.RangeOp):
            if loop.parent is None:
                continue
            match = match_tile(loop)
            if match is not None:
                _rewrite(match)
