"""`arm-dsp-depthwise-rows`: a depthwise row's loop of `arm_dsp.depthwise_step`s and their
requantizations as one `arm_dsp.depthwise_row`.

`conv_depthwise` computes a row's interior in steps of 4 outputs, each step one
`arm_dsp.depthwise_step` (an asm block of 12 registers) whose sums `arm-dsp-requant-sums` then
requantizes as SMMLA and SSAT, each stored as int8:

    uop.range %o = lo to hi step 4 {                     %px0 = uop.gep %x[… + S·lo]
      %px = uop.gep %x[… + S·%o]                          %py0 = uop.gep %y[… + K·lo]
      %r0, %r1, %r2, %r3 = arm_dsp.depthwise_step         %m = uop.load %multiplier[…]
          %px, %pw, %c                             →     arm_dsp.depthwise_row %px0, %pw, %c,
      per sum j: smmla(%rj, %m, A), ssat(8, H),               %m, %py0 {steps = (hi - lo) / 4,
        cast to i8, stored at %y[… + K·(%o + j)]               y_step = K, addend = A, shift = H}
    }

one asm loop the target compiler does not schedule. Compiled as a loop, LLVM unrolled it (a
step's asm block looks small to it): VWW's 24x24x32 layer's kernel grew to 1.9 KB, past the
L4R5's 1 KB instruction cache, and took 921 k cycles where the row form had taken 415 k.
The multiplier (a per-channel table's element, or a literal) and the sums' start are the same in
every step; the addend and shift are literals. Anything else in the loop, or chains of another
shape (another shift form, a ReLU above -128), keep it.

The same for the loop over a 6-wide channel's interior rows around an
`arm_dsp.depthwise_short_row` (`conv_depthwise.asm_short_rows`): one
`arm_dsp.depthwise_short_rows`, the rows' x and y advancing by the loop's coefficients, the
shift an SSAT's or a `uop.shr` by a literal before it (`arm-dsp-requant-sums` keeps the shifts
of kernels alike apart), the addend any value the same in every row. LLVM unrolled the
compiled loop of 4 rows around the asm block (VWW's 6x6x128 kernel 1.7 KB: 122 k -> 195 k
cycles a layer on the L4R5; as one asm loop 83.8 k -> 64.2 k for its interior).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from zant.analysis.linear_index import affine_terms
from zant.analysis.loop_values import defined_inside, holds_only, integer_literal, only_use
from zant.dialects import arm_dsp, uop
from zant.ir.walk import ops_of
from zant.passes.arm_dsp_requant import int8_store_of
from zant.passes.arm_dsp_tile_loops import BeforeLoop

I8 = IntegerType(8)


def _address(gep: Operation, loop: uop.RangeOp) -> tuple[SSAValue, dict[SSAValue, int], int, int] | None:
    """A one-index gep's (source, terms outside `loop`, constant, coefficient of the loop's
    variable), or None where its source or another atom varies in the loop."""
    if not isinstance(gep, uop.GepOp) or len(gep.indices) != 1 or defined_inside(gep.source, loop):
        return None
    terms, constant = affine_terms(gep.indices[0])
    iv = loop.induction_var
    scale = terms.pop(iv, 0)
    if any(defined_inside(atom, loop) for atom in terms):
        return None
    return gep.source, terms, constant, scale


def _same_load(value: SSAValue, loop: uop.RangeOp) -> tuple[SSAValue, tuple[SSAValue, ...]] | None:
    """A load's (source, indices) where both are the same in every iteration, or None."""
    load = value.owner
    gep = load.ptr.owner if isinstance(load, uop.LoadOp) else None
    if not isinstance(gep, uop.GepOp) or defined_inside(gep.source, loop) or any(defined_inside(i, loop) for i in gep.indices):
        return None
    return gep.source, tuple(gep.indices)


def _pointer(before: BeforeLoop, address: tuple[SSAValue, dict[SSAValue, int], int, int], old: Operation, constant: int) -> SSAValue:
    """A gep of `address`'s source at its terms + `constant`, built before the loop (in bounds
    where the gep `old` it replaces was)."""
    source, terms, _, _ = address
    return before.emit(uop.GepOp(source, [before.index(terms.items(), constant)], inbounds=old.inbounds is not None))  # type: ignore[attr-defined]


def _multiplier(before: BeforeLoop, multiplier: int | tuple[SSAValue, tuple[SSAValue, ...]]) -> SSAValue:
    """The rows' multiplier built before the loop: a literal, or a load of the (source,
    indices) `_same_load` gave, as the loop's loads."""
    if isinstance(multiplier, int):
        return before.emit(uop.ConstOp(multiplier, IntegerType(32)))
    source, indices = multiplier
    return before.emit(uop.LoadOp(before.emit(uop.GepOp(source, list(indices), inbounds=True))))


def fuse_row(step: arm_dsp.DepthwiseStepOp) -> bool:
    """The loop around `step` (module docstring) → one `arm_dsp.depthwise_row` before it, the
    loop gone; False, unchanged, where the loop holds anything else."""
    loop = step.parent_op()
    outputs = arm_dsp.DEPTHWISE_OUTPUTS
    if not isinstance(loop, uop.RangeOp) or loop.step.data != outputs or loop.trip_count < 1:
        return False
    stride = step.stride.data
    px, pw = _address(step.px.owner, loop), _address(step.pw.owner, loop)  # type: ignore[arg-type]
    if px is None or pw is None or px[3] != stride or pw[3] != 0 or defined_inside(step.addend, loop):
        return False
    matched: list[Operation] = [step]
    params, multipliers, places = set(), set(), []
    for j, total in enumerate(step.sums):
        chain = int8_store_of(total)
        gep = None if chain is None else chain.store.ptr.owner
        if chain is None or not isinstance(gep, uop.GepOp) or gep.inbounds is None:
            return False
        place = _address(gep, loop)
        if place is None:
            return False
        target, terms, constant, scale = place
        multiplier = integer_literal(chain.multiplier)
        if multiplier is None:
            loaded = _same_load(chain.multiplier, loop)
            if loaded is None:
                return False
            multipliers.add(loaded)
            matched += [chain.multiplier.owner, chain.multiplier.owner.ptr.owner]  # type: ignore[union-attr]
        else:
            multipliers.add(multiplier)
        params.add((chain.addend, chain.shift, target, scale))
        places.append((tuple(terms.items()), constant - j * scale))
        matched += [*chain.ops, gep]
    # Compared as sets, built in the order the first store's index names them (a set's order
    # follows the values' ids, so the generated code would differ from one run to the next).
    if len(params) != 1 or len(multipliers) != 1 or len({(frozenset(t), c) for t, c in places}) != 1:
        return False
    addend, shift, target, y_step = params.pop()
    if not 1 <= y_step <= arm_dsp.DepthwiseRowOp.MAX_Y_STEP:
        return False
    if not holds_only(loop, [*matched, step.px.owner, step.pw.owner]):  # type: ignore[list-item]
        return False

    before, first = BeforeLoop(loop), loop.start.data
    px0 = _pointer(before, px, step.px.owner, px[2] + stride * first)  # type: ignore[arg-type]
    pw0 = _pointer(before, pw, step.pw.owner, pw[2])  # type: ignore[arg-type]
    terms, constant = places[0]
    py0 = before.emit(uop.GepOp(target, [before.index(terms, constant + y_step * first)], inbounds=True))
    m = _multiplier(before, multipliers.pop())
    before.replace(arm_dsp.DepthwiseRowOp(
        px0, pw0, step.addend, m, py0, stride, step.rows.data, step.x_row.data, loop.trip_count, y_step, addend, shift,
    ))
    return True


def _requantized_store(total: SSAValue, loop: uop.RangeOp) -> tuple[list[Operation], SSAValue | int, SSAValue, int, tuple] | None:
    """The chain from a sum `total` to its int8 store in `loop`: SMMLA, SSAT of 8 bits (its
    shift in it, or a `uop.shr` by a literal before it), a ReLU at -128 or none, the store:
    (its ops, the multiplier (a literal or a load the same in every iteration, its ops among
    the chain's), the addend, the shift, the store's `_address`), or None."""
    smmla = only_use(total, arm_dsp.SmmlaOp)
    if smmla is None or smmla.lhs is not total or defined_inside(smmla.addend, loop):
        return None
    value, shift, chain = smmla.result, 0, [smmla]
    shr = only_use(value, uop.ShrOp)
    if shr is not None:
        by = integer_literal(shr.rhs)
        if shr.lhs is not value or by is None or not 0 <= by <= 31:
            return None
        value, shift, chain = shr.result, by, [*chain, shr]
    sat = only_use(value, arm_dsp.SsatOp)
    narrow = None if sat is None else only_use(sat.result, uop.CastOp)
    if sat is None or narrow is None or sat.bits.data != 8 or narrow.result.type != I8 or (shr is not None and sat.shift.data):
        return None
    shift += sat.shift.data
    value, relu = narrow.result, only_use(narrow.result, uop.MaxOp)
    chain += [sat, narrow]
    if relu is not None:  # a ReLU of the int8 value at -128: nothing to do
        bound = integer_literal(relu.rhs if relu.lhs is value else relu.lhs)
        if bound is None or bound > -128:
            return None
        value, chain = relu.result, [*chain, relu]
    store = only_use(value, uop.StoreOp)
    if store is None or store.value is not value or not isinstance(store.ptr.owner, uop.GepOp) or store.ptr.owner.inbounds is None:
        return None
    place = _address(store.ptr.owner, loop)
    if place is None:
        return None
    multiplier: SSAValue | int | None = integer_literal(smmla.rhs)
    if multiplier is None:
        loaded = _same_load(smmla.rhs, loop)
        if loaded is None:
            return None
        multiplier = smmla.rhs
        chain += [smmla.rhs.owner, smmla.rhs.owner.ptr.owner]  # type: ignore[union-attr]
    return [*chain, store, store.ptr.owner], multiplier, smmla.addend, shift, place


def fuse_short_rows(row: arm_dsp.DepthwiseShortRowOp) -> bool:
    """The loop over a channel's rows around `row` (its px advancing, its weights and starts the
    same in every row), each sum requantized and stored (`_requantized_store`) → one
    `arm_dsp.depthwise_short_rows` before it, the loop gone; False, unchanged, where the loop
    holds anything else."""
    loop = row.parent_op()
    if not isinstance(loop, uop.RangeOp) or loop.step.data != 1 or loop.trip_count < 1:
        return False
    px, pw = _address(row.px.owner, loop), _address(row.pw.owner, loop)  # type: ignore[arg-type]
    if px is None or pw is None or px[3] < 1 or pw[3] != 0 or any(defined_inside(s, loop) for s in row.starts):
        return False
    chains = [_requantized_store(total, loop) for total in row.sums]
    if any(c is None for c in chains):
        return False
    matched: list[Operation] = [row]
    multipliers, addends, shifts, places = set(), set(), set(), []
    for chain in chains:
        assert chain is not None
        ops, multiplier, addend, shift, place = chain
        matched += ops
        multipliers.add(multiplier if isinstance(multiplier, int) else _same_load(multiplier, loop))
        literal = integer_literal(addend)
        addends.add(addend if literal is None else literal)
        shifts.add(shift)
        places.append(place)
    targets = {(p[0], frozenset(p[1].items()), p[3]) for p in places}
    if len(multipliers) != 1 or len(addends) != 1 or len(shifts) != 1 or len(targets) != 1:
        return False
    y_step = places[1][2] - places[0][2]
    if any(p[2] != places[0][2] + j * y_step for j, p in enumerate(places)):
        return False
    target, terms, constant, y_next = places[0]
    high = arm_dsp.DepthwiseShortRowsOp.MAX_OFFSET
    if not (1 <= y_step and (len(places) - 1) * y_step <= high and 1 <= y_next <= high and px[3] <= high):
        return False
    if not holds_only(loop, [*matched, row.px.owner, row.pw.owner]):  # type: ignore[list-item]
        return False

    before, first = BeforeLoop(loop), loop.start.data
    px0 = _pointer(before, px, row.px.owner, px[2] + px[3] * first)  # type: ignore[arg-type]
    pw0 = _pointer(before, pw, row.pw.owner, pw[2])  # type: ignore[arg-type]
    py0 = before.emit(uop.GepOp(target, [before.index(terms.items(), constant + y_next * first)], inbounds=True))
    m = _multiplier(before, multipliers.pop())
    addend = chains[0][2]  # type: ignore[index]
    before.replace(arm_dsp.DepthwiseShortRowsOp(
        px0, pw0, list(row.starts), m, addend, py0, row.rows.data, row.x_row.data, loop.trip_count, px[3], y_step,
        y_next, shifts.pop(),
    ))
    return True


@dataclass(frozen=True)
class ArmDspDepthwiseRowsPass(ModulePass):
    """Each loop of depthwise steps and their SMMLA/SSAT requantizations (a depthwise row's
    interior) as one `arm_dsp.depthwise_row`, each loop of 6-wide rows as one
    `arm_dsp.depthwise_short_rows`."""

    name = "arm-dsp-depthwise-rows"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for step in list(ops_of(op, arm_dsp.DepthwiseStepOp)):
            fuse_row(step)
        for row in list(ops_of(op, arm_dsp.DepthwiseShortRowOp)):
            fuse_short_rows(row)
