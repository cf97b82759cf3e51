"""`mve-dot`: int8 (and 16x8) dot-product loops as Helium (MVE) vector multiply-accumulates.

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
  pointwise Conv: s = H·W): that operand one `arm_mve.vldrb_gather` at offsets 0, s, 2s, …,
  shared by every multiply-accumulate that reads it: 16 lanes (`vector<16xi8>`, two
  `VLDRB.U16` gathers and a `VMOVNT`: 3 instructions) when 16 values of `k` run and 15·s fits
  the gather's 16-bit offsets, else 8 (`vector<8xi16>`, one `VLDRB.S16`). Per 16 `k` and n
  accumulators sharing the gathered operand: 3 + 2n instructions (n = 4: 11 for 64 products,
  against 26 for 16 with `arm-dsp-dot`).

Then a chain of counted loops (8 to 64 iterations in all) whose innermost body has that form
(a Conv window: rows × taps, e.g. 10 × 4 or 3 × 3, no loop long enough) is unrolled: its
iterations in groups of 16, then one of 8, each operand one vector per group (a vload where its elements are
contiguous, else a gather at the group's constant offsets, e.g. 0-3 and 10-13 for two rows of
a 10-wide input), one `vmlava` per multiply-accumulate; the iterations left over stay scalar,
each at its constant indices.

16x8 quantization (an int16 operand, `arm-dsp-dot`'s match allows it): 8 lanes only, every
operand a `vector<8xi16>` — an int16 one a `VLDRH.16` vload where contiguous, else an
`arm_mve.vldrh_gather` (`VLDRH.U16` with offsets scaled by 2), the int8 one widened as above
(`VLDRB.S16`, vload or gather) — and one `VMLAVA.S16` per multiply-accumulate, as CMSIS-NN's s16
kernels do on Helium. The nests alike, in groups of 8.

Exact: integer products and sums wrap modulo 2^32, so summing 8 or 16 products before adding
them to the accumulator changes nothing, and every byte a vector load reads is one the original
loop loaded (only `inbounds` geps qualify: a checked gep traps on its own element only). Run it
after `linearize-geps` and before `arm-dsp-dot`, on cores with MVE (Cortex-M55: `zant.pipelines`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, IntAttr, IntegerType, ModuleOp, VectorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects import arm_mve, uop
from zant.dialects.zant import require_feature
from zant.ir.locations import locate
from zant.passes.arm_dsp_dot import DOT_ELEMENTS, DotLoop, element_type, match_dot_loop, open_stepped_loop

BYTE_LANES = 16
"""int8 lanes of a 128-bit MVE vector."""

HALF_LANES = 8
"""16-bit lanes of a 128-bit MVE vector: the int8 values of a widening load or a gather."""


def _lane_counts(loads) -> tuple[int, ...]:
    """The vector widths a dot product may take: 16 int8 lanes or 8 int16 ones, only 8 when an
    operand is int16 (16x8 quantization: `VMLAVA.S16` with the int8 operand widened)."""
    if any(element_type(load) == IntegerType(16) for load in loads):
        return (HALF_LANES,)
    return (BYTE_LANES, HALF_LANES)


def _half_vector(add, load: uop.LoadOp, ptr: SSAValue, offsets: list[int]) -> SSAValue:
    """`load`'s 8 elements at `ptr + offsets` as `vector<8xi16>`: contiguous, a vload (an int8
    one widened by a cast: `VLDRB.S16`; an int16 one `VLDRH.16`), else a gather (`VLDRB.S16` /
    `VLDRH.U16` with a vector of offsets)."""
    wide = element_type(load) == IntegerType(16)
    if offsets == list(range(HALF_LANES)):
        if wide:
            return add(uop.VLoadOp(ptr, arm_mve.GATHER_TYPE)).results[0]
        vector = add(uop.VLoadOp(ptr, VectorType(IntegerType(8), [HALF_LANES]))).results[0]
        return add(uop.CastOp(vector, arm_mve.GATHER_TYPE)).results[0]
    gather = arm_mve.VldrhGatherOp(ptr, offsets) if wide else arm_mve.VldrbGatherOp(ptr, offsets)
    return add(gather).results[0]


def _lanes(dot: DotLoop) -> int | None:
    """The lanes of `dot`'s vector loop: 16 int8 when it runs 16 or more iterations and a
    strided operand's 16 offsets fit a gather's 16-bit lanes, else 8; None when it runs fewer
    than 8."""
    trips = dot.loop.trip_count
    strides = dot.loads.values()
    for lanes in _lane_counts(dot.loads):
        if trips >= lanes and all(0 < s and (lanes - 1) * s <= arm_mve.MAX_OFFSET for s in strides):
            return lanes
    return None


def _rewrite(dot: DotLoop, lanes: int, max_unrolled_steps: int) -> None:
    loop = dot.loop
    stepped = open_stepped_loop(dot, lanes)
    vector_end, mapping, add = stepped.end, stepped.mapping, stepped.add

    vectors: dict[uop.LoadOp, SSAValue] = {}

    def vector_of(load: uop.LoadOp) -> SSAValue:
        """`load`'s values at k … k+lanes-1 as `vmlava` takes them (16 int8, or 8 int16 lanes),
        made at first use (so each weight vector is loaded next to the multiply-accumulate that
        reads it)."""
        if load not in vectors:
            ptr = mapping[load.ptr]
            if lanes == HALF_LANES:
                vectors[load] = _half_vector(add, load, ptr, [j * dot.loads[load] for j in range(lanes)])
            elif dot.loads[load] != 1:
                offsets = [j * dot.loads[load] for j in range(lanes)]
                vectors[load] = add(arm_mve.VldrbGatherOp(ptr, offsets)).results[0]
            else:
                vectors[load] = add(uop.VLoadOp(ptr, VectorType(IntegerType(8), [lanes]))).results[0]
        return vectors[load]

    for mulacc in dot.mulaccs:
        a, b = (vector_of(v.owner.input.owner) for v in (mulacc.lhs, mulacc.rhs))  # type: ignore[union-attr]
        acc = add(uop.AccGetOp(mulacc.acc))
        add(uop.AccSetOp(mulacc.acc, add(arm_mve.VmlavaOp(acc, a, b)).results[0]))
    add(uop.EndRangeOp())
    locate([stepped.range], loop.location)
    if stepped.range.trip_count <= max_unrolled_steps:
        _unroll_fully(stepped.range)
    if vector_end == loop.end.data:
        Rewriter.erase_op(loop)
    else:
        loop.start = IntAttr(vector_end)


def _unroll_fully(loop: uop.RangeOp) -> None:
    """`loop`'s iterations one after the other in its place, the induction variable a constant
    in each (`uop.acc` cells carry the sums from one to the next, as they did across
    iterations)."""
    body = [op for op in loop.body.block.ops if not isinstance(op, uop.EndRangeOp)]
    at = InsertPoint.before(loop)
    for value in range(loop.start.data, loop.end.data, loop.step.data):
        k = uop.ConstOp(value, IndexType())
        k.location = loop.location
        Rewriter.insert_op(k, at)
        mapping: dict[SSAValue, SSAValue] = {loop.induction_var: k.result}
        for op in body:
            clone = op.clone(value_mapper=mapping)
            mapping.update(zip(op.results, clone.results))
            Rewriter.insert_op(clone, at)
    Rewriter.erase_op(loop)


MAX_TAPS = 64
"""The most products per accumulator a loop nest may have for `mve-dot` to unroll it."""


@dataclass
class _Nest:
    """A nest of counted loops (a chain: each body holds at most one loop) whose innermost body
    multiply-accumulates int8 products, as `DotLoop` but over every iteration of the nest."""

    root: uop.RangeOp
    loops: list[uop.RangeOp]
    ops: list[Operation]
    """The ops of the nest but its loops and terminators, in program order."""
    mulaccs: list[uop.MulAccOp]
    loads: dict[uop.LoadOp, tuple[int, ...]]
    """The int8 loads and how many elements their address moves per step of each loop."""


def _collect(loop: uop.RangeOp, loops: list[uop.RangeOp], ops: list[Operation]) -> bool:
    loops.append(loop)
    inner = [op for op in loop.body.block.ops if isinstance(op, uop.RangeOp)]
    if len(inner) > 1:
        return False
    for op in loop.body.block.ops:
        if isinstance(op, uop.RangeOp):
            if not _collect(op, loops, ops):
                return False
        elif not isinstance(op, uop.EndRangeOp):
            ops.append(op)
    return True


def _coefficients(
    value: SSAValue, ivs: list[SSAValue], inside: set[Operation], memo: dict[SSAValue, tuple[int, ...] | None]
) -> tuple[int, ...] | None:
    """How much the index `value` grows per step of each induction variable in `ivs` (one
    coefficient each); None when it is not affine in them with constant coefficients."""
    if value in memo:
        return memo[value]
    owner = value.owner
    zero = (0,) * len(ivs)
    result: tuple[int, ...] | None
    if value in ivs:
        result = tuple(int(v is value) for v in ivs)
    elif not isinstance(owner, Operation) or owner not in inside or isinstance(owner, uop.ConstOp):
        result = zero  # invariant in the nest
    elif isinstance(owner, uop.AddOp | uop.SubOp):
        a, b = (_coefficients(v, ivs, inside, memo) for v in owner.operands)
        sign = 1 if isinstance(owner, uop.AddOp) else -1
        result = None if a is None or b is None else tuple(x + sign * y for x, y in zip(a, b))
    elif isinstance(owner, uop.MulOp):
        a, b = (_coefficients(v, ivs, inside, memo) for v in owner.operands)
        if a is None or b is None:
            result = None
        elif a == zero and b == zero:
            result = zero
        else:
            varying, const = (a, owner.rhs) if b == zero else (b, owner.lhs) if a == zero else (None, None)
            if varying is None or not isinstance(const.owner, uop.ConstOp):  # type: ignore[union-attr]
                result = None
            else:
                factor = const.owner.value.value.data  # type: ignore[union-attr]
                result = tuple(c * factor for c in varying)
    else:
        result = None
    memo[value] = result
    return result


def _match_nest(root: uop.RangeOp) -> _Nest | None:
    loops: list[uop.RangeOp] = []
    ops: list[Operation] = []
    if not _collect(root, loops, ops) or len(loops) < 2:
        return None
    taps = math.prod(loop.trip_count for loop in loops)
    if not HALF_LANES <= taps <= MAX_TAPS:
        return None
    inside = set(ops)
    innermost = set(loops[-1].body.block.ops)
    ivs = [loop.induction_var for loop in loops]
    i32 = IntegerType(32)
    memo: dict[SSAValue, tuple[int, ...] | None] = {}
    mulaccs: list[uop.MulAccOp] = []
    loads: dict[uop.LoadOp, tuple[int, ...]] = {}
    for op in ops:
        if isinstance(op, uop.AddOp | uop.SubOp | uop.MulOp | uop.ConstOp) and isinstance(op.results[0].type, IndexType):
            continue
        if op not in innermost:
            return None  # loads, casts and multiply-accumulates only in the innermost loop
        if isinstance(op, uop.GepOp | uop.LoadOp | uop.CastOp):
            continue  # checked through the multiply-accumulates that use them
        if not isinstance(op, uop.MulAccOp) or op.acc.type != uop.AccType(i32) or op.acc.owner in inside:
            return None
        for operand in (op.lhs, op.rhs):
            cast = operand.owner
            if not (isinstance(cast, uop.CastOp) and cast in inside and cast.input.type in DOT_ELEMENTS):
                return None
            load = cast.input.owner
            if not (isinstance(load, uop.LoadOp) and load in inside):
                return None
            gep = load.ptr.owner
            if not (isinstance(gep, uop.GepOp) and gep.inbounds is not None and isinstance(gep.source.type, uop.BufferType)):
                return None
            if len(gep.indices) != 1:
                return None
            coefficients = _coefficients(gep.indices[0], ivs, inside, memo)
            if coefficients is None or not any(coefficients):
                return None
            loads[load] = coefficients
        mulaccs.append(op)
    if not mulaccs:
        return None
    for op in ops:
        if isinstance(op, uop.LoadOp) and op not in loads:
            return None
        if isinstance(op, uop.CastOp) and (op.result.type != i32 or op.input.owner not in loads):
            return None
        if isinstance(op, uop.GepOp) and not all(isinstance(u.operation, uop.LoadOp) for u in op.result.uses):
            return None
    nest = _Nest(root, loops, ops, mulaccs, loads)
    if any(_offsets(nest, points, load) is None for points in _groups(nest)[0] for load in loads):
        return None
    return nest


def _points(nest: _Nest) -> list[tuple[int, ...]]:
    """The values of the induction variables at each iteration of the nest, in order."""
    return list(itertools.product(*(range(loop.start.data, loop.end.data, loop.step.data) for loop in nest.loops)))


def _groups(nest: _Nest) -> tuple[list[list[tuple[int, ...]]], list[tuple[int, ...]]]:
    """The iterations in groups of 16, then one of 8 (one vector each), and the ones left over."""
    points = _points(nest)
    groups: list[list[tuple[int, ...]]] = []
    for lanes in _lane_counts(nest.loads):
        while len(points) >= lanes:
            groups.append(points[:lanes])
            points = points[lanes:]
    return groups, points


def _offsets(nest: _Nest, points: list[tuple[int, ...]], load: uop.LoadOp) -> list[int] | None:
    """The elements `load` reads at `points`, counted from the first; None when one is before it
    or beyond a gather's 16-bit offsets."""
    coefficients = nest.loads[load]
    offsets = [sum(c * (p - q) for c, p, q in zip(coefficients, point, points[0])) for point in points]
    return offsets if all(0 <= o <= arm_mve.MAX_OFFSET for o in offsets) else None


def _rewrite_nest(nest: _Nest) -> None:
    """The nest unrolled: per group of 8 iterations one vector per operand (contiguous: a
    widening vload; else a gather at the group's constant offsets) and one `vmlava` per
    multiply-accumulate; the iterations left over as the scalar body at each."""
    at = InsertPoint.before(nest.root)

    def add(op: Operation) -> Operation:
        op.location = nest.root.location  # the nest's node(s)
        Rewriter.insert_op(op, at)
        return op

    needed: set[Operation] = set()
    work = [load.ptr.owner for load in nest.loads]
    while work:
        op = work.pop()
        if isinstance(op, Operation) and op in nest.ops and op not in needed:
            needed.add(op)
            work += [v.owner for v in op.operands]

    def addresses(point: tuple[int, ...]) -> dict[SSAValue, SSAValue]:
        """The index ops and geps cloned with the induction variables at `point`."""
        mapping: dict[SSAValue, SSAValue] = {
            loop.induction_var: add(uop.ConstOp(value, IndexType())).results[0]
            for loop, value in zip(nest.loops, point)
        }
        for op in nest.ops:
            if op in needed:
                clone = add(op.clone(value_mapper=mapping))
                mapping.update(zip(op.results, clone.results))
        return mapping

    groups, rest = _groups(nest)
    for points in groups:
        mapping = addresses(points[0])
        vectors: dict[uop.LoadOp, SSAValue] = {}

        def vector_of(load: uop.LoadOp) -> SSAValue:
            if load not in vectors:
                ptr = mapping[load.ptr]
                offsets = _offsets(nest, points, load)
                assert offsets is not None
                if len(points) == HALF_LANES:
                    vectors[load] = _half_vector(add, load, ptr, offsets)
                elif offsets == list(range(len(points))):  # contiguous: one VLDRB
                    vectors[load] = add(uop.VLoadOp(ptr, VectorType(IntegerType(8), [len(points)]))).results[0]
                else:
                    vectors[load] = add(arm_mve.VldrbGatherOp(ptr, offsets)).results[0]
            return vectors[load]

        for mulacc in nest.mulaccs:
            a, b = (vector_of(v.owner.input.owner) for v in (mulacc.lhs, mulacc.rhs))  # type: ignore[union-attr]
            acc = add(uop.AccGetOp(mulacc.acc))
            add(uop.AccSetOp(mulacc.acc, add(arm_mve.VmlavaOp(acc, a, b)).results[0]))
    for point in rest:
        mapping = addresses(point)
        for op in nest.ops:
            if isinstance(op, uop.LoadOp | uop.CastOp | uop.MulAccOp):
                clone = add(op.clone(value_mapper=mapping))
                mapping.update(zip(op.results, clone.results))
    Rewriter.erase_op(nest.root)


@dataclass(frozen=True)
class MveDotPass(ModulePass):
    """int8 dot-product loops as MVE vector loads and `VMLAVA` reductions."""

    name = "mve-dot"

    max_unrolled_steps: int = 4
    """The most vector steps a dot loop may have to be written straight-line: KWS's 64-channel
    pointwise sums (4 steps of 16 channels, each a gather, four weight loads and four `VMLAVA`)
    lose the loop's counter, compare and branch and the per-step address updates, which LLVM
    folds into immediate offsets (kws_int8 on the M55: 1,315,304 -> 1,282,254 instructions)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_feature(op, self.name, "mve", "Helium (MVE)")
        loops = [loop for loop in op.walk() if isinstance(loop, uop.RangeOp)]
        for loop in loops:
            dot = match_dot_loop(loop)
            if dot is None:
                continue
            lanes = _lanes(dot)
            if lanes is not None:
                _rewrite(dot, lanes, self.max_unrolled_steps)
        # Then short nests (Conv windows), outermost first: a rewritten nest's loops are gone.
        gone: set[uop.RangeOp] = set()
        for loop in [loop for loop in op.walk() if isinstance(loop, uop.RangeOp)]:
            nest = None if loop in gone else _match_nest(loop)
            if nest is not None:
                gone.update(nest.loops)
                _rewrite_nest(nest)
