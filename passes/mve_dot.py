"""`mve-dot`: int8 dot-product loops as Helium (MVE) vector multiply-accumulates.

The loops are the ones `arm-dsp-dot` takes (the same match: a `uop.range %k` of step 1 whose
body only computes indices and addresses, loads int8 through `inbounds` geps of flat buffers
moving a constant number of elements per `k`, casts them to i32 and multiply-accumulates pairs
into `!uop.acc<i32>`; at most one operand of each product strided). Such a loop becomes a loop
of step L over its first `L·⌊(e-s)/L⌋` values of `k`, each iteration one vector per operand and,
per multiply-accumulate, one `arm_mve.vmlava` (`VMLAVA`: multiply lane by lane, add across the
vector, accumulate into a general register) between an `acc_get` and an `acc_set`; the
original loop, started at the first value left over, keeps the rest (and `arm-dsp-dot`, after
this pass, takes it if 4 or more remain).

* every operand contiguous: L = 16 int8 lanes (`uop.vload` of `vector<16xi8>`: `VLDRB.U8`;
  `VMLAVA.S8`), or L = 8 when only 8 to 15 values of `k` run (a `vector<8xi8>` vload cast to
  `vector<8xi16>`: `VLDRB.S16`; `VMLAVA.S16`);
* an operand `s` elements apart per `k` (an NCHW activation read along its channels by a
  pointwise Conv: s = H·W): L = 8, that operand one `arm_mve.vldrb_gather … stride s` (8 bytes
  into 16-bit lanes, `VLDRB.S16` with an offset vector), shared by every multiply-accumulate
  that reads it; the contiguous operands `vector<8xi8>` loads cast to `vector<8xi16>`. Per 8 `k` and n
  accumulators sharing the gathered operand: 1 + 2n instructions (n = 4: 9 for 32 products,
  against 26 for 16 with `arm-dsp-dot`).

Exact: integer products and sums wrap modulo 2^32, so summing 8 or 16 products before adding
them to the accumulator changes nothing, and every byte a vector load reads is one the original
loop loaded (only `inbounds` geps qualify: a checked gep traps on its own element only). Run it
after `linearize-geps` and before `arm-dsp-dot`, on cores with MVE (Cortex-M55: `zant.pipelines`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, IntAttr, IntegerType, ModuleOp, VectorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects import arm_mve, uop
from zant.passes.arm_dsp_dot import DotLoop, match_dot_loop

BYTE_LANES = 16
"""int8 lanes of a 128-bit MVE vector."""

HALF_LANES = 8
"""16-bit lanes of a 128-bit MVE vector: the int8 values of a widening load or a gather."""


def _lanes(dot: DotLoop) -> int | None:
    """The lanes of `dot`'s vector loop; None when it runs too few iterations or a strided
    operand's offsets do not fit a gather's 16-bit lanes."""
    trips = dot.loop.trip_count
    strides = set(dot.loads.values())
    if strides == {1}:
        return BYTE_LANES if trips >= BYTE_LANES else HALF_LANES if trips >= HALF_LANES else None
    if trips < HALF_LANES or any((HALF_LANES - 1) * abs(s) > arm_mve.MAX_OFFSET or s < 0 for s in strides):
        return None
    return HALF_LANES


def _rewrite(dot: DotLoop, lanes: int) -> None:
    loop = dot.loop
    start = loop.start.data
    vector_end = start + (loop.trip_count // lanes) * lanes
    block = Block(arg_types=[IndexType()])
    Rewriter.insert_op(uop.RangeOp(start, vector_end, lanes, block), InsertPoint.before(loop))
    mapping: dict[SSAValue, SSAValue] = {loop.induction_var: block.args[0]}

    def add(op: Operation) -> Operation:
        block.add_op(op)
        return op

    # Indices and addresses, cloned in order; a single-iteration loop's variable is its start.
    needed: set[Operation] = set()
    work = [load.ptr.owner for load in dot.loads]
    while work:
        op = work.pop()
        if isinstance(op, Operation) and op in dot.ops and op not in needed:
            needed.add(op)
            work += [v.owner for v in op.operands]
    for op in dot.ops:
        if isinstance(op, uop.RangeOp):
            if any(u.operation in needed for u in op.induction_var.uses):
                mapping[op.induction_var] = add(uop.ConstOp(op.start.data, IndexType())).results[0]
        elif op in needed:
            clone = add(op.clone(value_mapper=mapping))
            for old, cloned in zip(op.results, clone.results):
                mapping[old] = cloned

    vectors: dict[uop.LoadOp, SSAValue] = {}

    def vector_of(load: uop.LoadOp) -> SSAValue:
        """`load`'s values at k … k+lanes-1 as `vmlava` takes them (16 int8, or 8 int16 lanes),
        made at first use (so each weight vector is loaded next to the multiply-accumulate that
        reads it)."""
        if load not in vectors:
            ptr = mapping[load.ptr]
            if dot.loads[load] != 1:
                vectors[load] = add(arm_mve.VldrbGatherOp(ptr, dot.loads[load])).results[0]
            else:
                vector = add(uop.VLoadOp(ptr, VectorType(IntegerType(8), [lanes]))).results[0]
                if lanes == HALF_LANES:  # one widening VLDRB.S16
                    vector = add(uop.CastOp(vector, arm_mve.GATHER_TYPE)).results[0]
                vectors[load] = vector
        return vectors[load]

    for mulacc in dot.mulaccs:
        a, b = (vector_of(v.owner.input.owner) for v in (mulacc.lhs, mulacc.rhs))  # type: ignore[union-attr]
        acc = add(uop.AccGetOp(mulacc.acc))
        add(uop.AccSetOp(mulacc.acc, add(arm_mve.VmlavaOp(acc, a, b)).results[0]))
    add(uop.EndRangeOp())
    if vector_end == loop.end.data:
        Rewriter.erase_op(loop)
    else:
        loop.start = IntAttr(vector_end)


@dataclass(frozen=True)
class MveDotPass(ModulePass):
    """int8 dot-product loops as MVE vector loads and `VMLAVA` reductions."""

    name = "mve-dot"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        loops = [loop for loop in op.walk() if isinstance(loop, uop.RangeOp)]
        for loop in loops:
            dot = match_dot_loop(loop)
            if dot is None:
                continue
            lanes = _lanes(dot)
            if lanes is not None:
                _rewrite(dot, lanes)
