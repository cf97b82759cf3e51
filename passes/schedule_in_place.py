"""`schedule-in-place`: write a convolution's output over its input, below the layer bound.

A pointwise or depthwise convolution reads every input element several times (each output
channel of a pixel reads all its input channels; each output of a channel reads a 3x3 window), so
the element-wise in-place rule of `plan-arenas` cannot let its output share its input's bytes.
This pass makes it legal by a schedule, at the cost of one copy of the input: in a top-level
loop nest whose output buffer B is born there and whose input buffer A dies there (same element
type), it picks a *group* loop and, at the start of each of its iterations, copies the slice of
A that iteration reads into a small staging buffer (`"<B>_staged"`) and redirects the nest's
reads of A to it. The output written in an iteration then never reaches an element of A a later
iteration still needs, and the nest is marked `in_place = ["A", "B"]`: `plan-arenas` gives B the
bytes of A and `verify-arena-plan` checks the pair by the staged rule
(`zant.analysis.liveness.staged_in_place_legal`, by enumerating every access).

What it does to a nest, first match wins (each tried on the nest as it is; a nest it cannot make
legal is restored):

1. nothing, if the nest is already legal by the staged rule (the Cortex-M4 pointwise column
   form copies each pixel pair's channels into its column buffer first: a line buffer of its own);
2. *pair clamp*: the column form runs pixels in pairs, the last pair clamped back one pixel
   (`p0 = min(2i, P-2)`, `p1 = p0 + 1`), so its first pixel is read again after the previous
   pair wrote it. Clamping each lane to the last pixel instead (`min(2i, P-1)`,
   `min(p0 + 1, P-1)`) makes the last pair compute the last pixel twice, from reads made before
   either store: the same outputs. This relies on the column form's contract, each lane
   computing its own pixel's outputs from that pixel's inputs (the staged rule checks the order
   of the accesses, not what they compute; the numerics tests check the rest);
3. *line / plane buffer*: loops whose variable indexes the output but not the input (the
   output-channel blocks of a pointwise conv) are sunk below the pixel loops, so one pixel's
   channels are read in one iteration, or sibling loops of the same bounds indexing the input
   (a depthwise conv of the DSP cores: one channel loop per output region) are fused into one
   around all the regions; then the group is the outermost loop whose iterations
   read the smallest slice of A (a pointwise conv: one pixel's C_in channels; a depthwise conv,
   channel loop outermost: one channel's H x W plane), and that slice is staged.

Which nests (`schedule-in-place{every=true}`: every nest it can, for testing): the candidates
whose nest runs where the plan's bytes peak (adjacent one-iteration nests writing one buffer
joined first: a DSP depthwise conv's regions), by decreasing bytes (input + output), then those
at the new peak, each kept only if the lower
bound of the plan (`plan-arenas`' own, unaligned) does not rise with it (buffers chained in
place share one slot as large as the largest and as long-lived as all of them, which can cost
more than it saves), then each undone again if the bound stays the same without it.

The copy costs cycles (one load and store per input element, a word of them where the slice runs
contiguous on the DSP cores, plus the loop), so the pass is not
in any default pipeline: `zant compile --ram-budget` (and a firmware board's RAM) adds it only
when the default plan does not fit (docs/ram-budget.md). Loops are sunk only where every store of
the nest writes its output, each element once, and the nest reads its output nowhere, so any
order of its iterations computes the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from zant.analysis.liveness import (
    IN_PLACE_ATTRIBUTE,
    LegalityMemo,
    Lifetime,
    Schedule,
    buffer_users,
    gep_accesses,
    in_place_legal,
    in_place_mark,
    index_values,
    loops_around,
    scratch_lifetimes,
    staged_in_place_legal,
    touched_elements,
    use_interval,
)
from zant.dialects.uop import (
    ALU_OPS,
    BufferType,
    ConstOp,
    DefineLocalOp,
    EndRangeOp,
    GepOp,
    LoadOp,
    RangeOp,
    StoreOp,
    ViewOp,
    ViewType,
    VStoreOp,
)
from zant.ir.walk import ops_of

_PURE_INDEX_OPS = (ConstOp, *ALU_OPS.values())

COPY_RUN = 4
"""Elements the staging copy moves an iteration where its source runs contiguous (a word of int8)."""


def _depends_on(value: SSAValue, variable: SSAValue, seen: dict[SSAValue, bool] | None = None) -> bool:
    """Whether `value` is computed (through ops in registers) from `variable`."""
    seen = {} if seen is None else seen
    if value is variable:
        return True
    if value in seen:
        return seen[value]
    seen[value] = False
    owner = value.owner
    result = isinstance(owner, Operation) and any(_depends_on(o, variable, seen) for o in owner.operands)
    seen[value] = result
    return result


def _geps(buffer: SSAValue, nest: RangeOp) -> list[GepOp]:
    return [g for g in _all_geps(buffer) if nest.is_ancestor(g)]


def _all_geps(value: SSAValue) -> list[GepOp]:
    result = []
    for use in value.uses:
        user = use.operation
        if isinstance(user, ViewOp):
            result += _all_geps(user.result)
        elif isinstance(user, GepOp):
            result.append(user)
    return result


def _stores_in(nest: RangeOp) -> list[Operation]:
    return [op for op in nest.walk() if isinstance(op, (StoreOp, VStoreOp))]


# ---------------------------------------------------------------------------------------------
# Pair clamp
# ---------------------------------------------------------------------------------------------


def _lane_offsets(user: Operation, base: Operation, nest: RangeOp) -> int | None:
    """The largest `y` of a use `base + y` (y >= 0 over its loops), or None if `user` is not one."""
    if not isinstance(user, ALU_OPS["add"]) or user.lhs is not base.results[0] or user.rhs is base.results[0]:
        return None
    loops = loops_around(user, nest)
    values = index_values(user.rhs, loops) if loops is not None else None
    if values is None or values.min() < 0:
        return None
    return int(values.max())


def _fix_pair_clamps(nest: RangeOp, dying: SSAValue) -> bool:
    """Step 2 of the module docstring: every `p0 = min(x, K)` that indexes `dying` as `p0 + y`
    (each other use such a sum, y >= 0, at most Y), with x reaching beyond K, becomes
    `min(x, K + Y)` and each `p0 + y` `min(p0 + y, K + Y)`. True if one was rewritten."""
    changed = False
    seen: set[Operation] = set()
    for gep in _geps(dying, nest):
        for index in gep.indices:
            owner = index.owner
            base = owner.lhs.owner if isinstance(owner, ALU_OPS["add"]) else owner
            if base in seen or not isinstance(base, ALU_OPS["min"]) or not isinstance(base.rhs.owner, ConstOp):
                continue
            seen.add(base)
            limit = base.rhs.owner.value.value.data  # type: ignore[attr-defined]
            uses = [use.operation for use in base.result.uses]
            offsets = [_lane_offsets(user, base, nest) for user in uses]
            if not isinstance(limit, int) or not uses or any(o is None for o in offsets):
                continue
            loops = loops_around(base, nest)
            values = index_values(base.lhs, loops) if loops is not None else None
            if values is None or values.max() <= limit:
                continue
            top = limit + max(offsets)  # type: ignore[type-var]
            new_limit = ConstOp(top, IndexType())
            base.parent_block().insert_op_before(new_limit, base)  # type: ignore[union-attr]
            base.operands[1] = new_limit.result
            for lane in uses:
                clamp = ALU_OPS["min"](lane.results[0], new_limit.result)
                lane.parent_block().insert_op_after(clamp, lane)  # type: ignore[union-attr]
                lane.results[0].replace_uses_with_if(clamp.result, lambda use, c=clamp: use.operation is not c)
            changed = True
    return changed


# ---------------------------------------------------------------------------------------------
# Sinking loops that do not index the input
# ---------------------------------------------------------------------------------------------


def _only_loop(loop: RangeOp) -> RangeOp | None:
    """The one loop of `loop`'s body if the rest of it is pure index arithmetic, else None."""
    inner = [op for op in loop.body.block.ops if isinstance(op, RangeOp)]
    if len(inner) != 1:
        return None
    rest = [op for op in loop.body.block.ops if op is not inner[0] and not isinstance(op, EndRangeOp)]
    return inner[0] if all(isinstance(op, _PURE_INDEX_OPS) for op in rest) else None


def _sink(outer: RangeOp, inner: RangeOp) -> None:
    """`outer { pure ops; inner { body } }` → `inner { outer { pure ops; body } }`."""
    parent = outer.parent_block()
    assert parent is not None
    inner.detach()
    outer_block, inner_block = outer.body.block, inner.body.block
    outer_end = outer_block.last_op
    assert isinstance(outer_end, EndRangeOp)
    for op in list(inner_block.ops):
        if isinstance(op, EndRangeOp):
            continue
        op.detach()
        outer_block.insert_op_before(op, outer_end)
    parent.insert_op_before(inner, outer)
    outer.detach()
    inner_block.insert_op_before(outer, inner_block.last_op)  # type: ignore[arg-type]


def _reorderable(nest: RangeOp, born: SSAValue, dying: SSAValue) -> bool:
    """Every store of the nest writes `born`, each element once, and nothing in it reads `born`:
    its iterations can run in any order."""
    stores = _stores_in(nest)
    geps = _geps(born, nest)
    if any(not isinstance(s.ptr.owner, GepOp) or s.ptr.owner not in geps for s in stores):
        return False
    if any(not isinstance(u.operation, (StoreOp, VStoreOp)) for g in geps for u in g.result.uses):
        return False
    elements = []
    for gep, view in gep_accesses(born):
        for use in gep.result.uses:
            if not nest.is_ancestor(use.operation):
                continue
            touched = touched_elements(use.operation, gep, view, nest, nest)
            if touched is None:
                return False
            elements.append(touched[1])
    flat = np.concatenate(elements) if elements else np.zeros(0, dtype=np.int64)
    return len(np.unique(flat)) == len(flat)


def _sink_channel_loops(nest: RangeOp, dying: SSAValue, born: SSAValue) -> bool:
    """Sink each loop of the nest's chain whose variable indexes `born` but not `dying` below
    the perfectly nested loops under it that index `dying`. True if one moved."""
    reads = [i for g in _geps(dying, nest) for i in g.indices]
    writes = [i for g in _geps(born, nest) for i in g.indices]
    moved = False
    loop: RangeOp | None = nest
    while loop is not None:
        inner = _only_loop(loop)
        variable = loop.induction_var
        if (
            inner is not None and loop is not nest
            and not any(_depends_on(i, variable) for i in reads)
            and any(_depends_on(i, variable) for i in writes)
            and any(_depends_on(i, inner.induction_var) for i in reads)
        ):
            if not moved and not _reorderable(nest, born, dying):
                return False
            _sink(loop, inner)
            moved = True
            continue  # `loop` is now under `inner`: try to sink it once more
        loop = inner
    return moved


def _fuse_sibling_loops(nest: RangeOp, dying: SSAValue, born: SSAValue) -> bool:
    """Fuse the sibling loops of one body that have the same bounds and whose variable indexes
    `dying` (a depthwise conv of the DSP cores: one channel loop per output region) into the
    first of them, so one loop runs over the channels around all regions. The body may hold
    nothing else but pure index arithmetic, moved ahead of the first loop. True if fused."""
    reads = [i for g in _geps(dying, nest) for i in g.indices]
    loop: RangeOp | None = nest
    while loop is not None:
        inner = [op for op in loop.body.block.ops if isinstance(op, RangeOp)]
        rest = [op for op in loop.body.block.ops if not isinstance(op, (RangeOp, EndRangeOp))]
        if len(inner) == 1 and all(isinstance(op, _PURE_INDEX_OPS) for op in rest):
            loop = inner[0]
            continue
        bounds = {(i.start.data, i.end.data, i.step.data) for i in inner}
        if (
            len(inner) < 2 or len(bounds) != 1 or not all(isinstance(op, _PURE_INDEX_OPS) for op in rest)
            or not all(any(_depends_on(r, i.induction_var) for r in reads) for i in inner)
            or not _reorderable(nest, born, dying)
        ):
            return False
        first = inner[0]
        block = loop.body.block
        for op in rest:  # pure: ahead of the first loop, in their order
            op.detach()
            block.insert_op_before(op, first)
        target = first.body.block
        for other in inner[1:]:
            other.induction_var.replace_all_uses_with(first.induction_var)
            for op in list(other.body.block.ops):
                if isinstance(op, EndRangeOp):
                    continue
                op.detach()
                target.insert_op_before(op, target.last_op)  # type: ignore[arg-type]
            other.detach()
            other.erase()
        return True
    return False


def _stored_buffers(nest: RangeOp) -> set[SSAValue]:
    """The buffers the stores of `nest` write (through views)."""
    result = set()
    for store in _stores_in(nest):
        value = store.ptr  # type: ignore[attr-defined]
        if isinstance(value.owner, GepOp):
            value = value.owner.operands[0]
        while isinstance(value.owner, ViewOp):
            value = value.owner.operands[0]
        result.add(value)
    return result


def _join_split_nests(function: func.FuncOp) -> int:
    """Join each run of adjacent top-level nests of one iteration (`0 to 1`: the batch loop)
    that store into one buffer into the first of them: the output regions of a DSP core's
    depthwise convolution, when they come out as nests of their own, so that the nest where
    the output is born is the one where the input dies (a candidate) and `_fuse_sibling_loops`
    sees their channel loops side by side. One iteration each, one after the other: the joined
    nest runs the same ops in the same order. The number of nests joined."""
    joined = 0
    ops = list(function.body.block.ops)
    k = 0
    while k < len(ops) - 1:
        first, second = ops[k], ops[k + 1]
        if (
            isinstance(first, RangeOp) and isinstance(second, RangeOp)
            and (first.start.data, first.end.data, first.step.data) == (0, 1, 1)
            and (second.start.data, second.end.data, second.step.data) == (0, 1, 1)
            and _stored_buffers(first) & _stored_buffers(second)
        ):
            second.induction_var.replace_all_uses_with(first.induction_var)
            target = first.body.block
            for op in list(second.body.block.ops):
                if isinstance(op, EndRangeOp):
                    continue
                op.detach()
                target.insert_op_before(op, target.last_op)  # type: ignore[arg-type]
            second.detach()
            second.erase()
            del ops[k + 1]
            joined += 1
            continue
        k += 1
    return joined


# ---------------------------------------------------------------------------------------------
# Staging
# ---------------------------------------------------------------------------------------------


def _chain(nest: RangeOp, ops: Sequence[Operation]) -> list[RangeOp]:
    """The loops of `nest` holding every op of `ops`, outermost first."""
    chains = [loops_around(op, nest) for op in ops]
    common: list[RangeOp] = []
    for level in zip(*chains):  # type: ignore[misc]
        if all(loop is level[0] for loop in level):
            common.append(level[0])
        else:
            break
    return common


def _fixed_in(value: SSAValue, group: RangeOp, seen: dict[SSAValue, bool] | None = None) -> bool:
    """Whether `value` is the same in one iteration of `group`: built from constants, variables
    of `group` and the loops around it, and single-trip loops inside it."""
    seen = {} if seen is None else seen
    if value in seen:
        return seen[value]
    owner = value.owner
    if isinstance(owner, Block):
        loop = owner.parent_op()
        result = isinstance(loop, RangeOp) and (loop is group or loop.is_ancestor(group) or loop.trip_count == 1)
    elif isinstance(owner, _PURE_INDEX_OPS):
        result = all(_fixed_in(o, group, seen) for o in owner.operands)
    else:
        result = False
    seen[value] = result
    return result


def _materialize(value: SSAValue, group: RangeOp, at: Operation, made: dict[SSAValue, SSAValue]) -> SSAValue:
    """`value` (`_fixed_in(value, group)`) computed before `at` in `group`'s body."""
    if value in made:
        return made[value]
    owner = value.owner
    if isinstance(owner, Block):
        loop = owner.parent_op()
        assert isinstance(loop, RangeOp)
        if loop is group or loop.is_ancestor(group):
            return value
        result: SSAValue = ConstOp(loop.start.data, IndexType()).result
        at.parent_block().insert_op_before(result.owner, at)  # type: ignore[union-attr, arg-type]
    else:
        assert isinstance(owner, Operation)
        operands = [_materialize(o, group, at, made) for o in owner.operands]
        clone = owner.clone()
        for k, operand in enumerate(operands):
            clone.operands[k] = operand
        at.parent_block().insert_op_before(clone, at)  # type: ignore[union-attr]
        result = clone.results[0]
    made[value] = result
    return result


@dataclass
class Staging:
    group: RangeOp
    view: ViewType
    free: list[bool]  # per dimension of the view: copied whole (True) or one index (False)

    @property
    def size(self) -> int:
        return math.prod(n for n, f in zip(self.view.get_shape(), self.free) if f)


def _staging(nest: RangeOp, dying: SSAValue, born: SSAValue) -> Staging | None:
    """The outermost group loop whose iterations read the smallest slice of `dying`."""
    geps = _geps(dying, nest)
    if not geps or any(not isinstance(g.source.type, ViewType) for g in geps):
        return None
    view = geps[0].source.type
    if any(g.source.type != view for g in geps) or nest.is_ancestor(geps[0].source.owner):  # type: ignore[arg-type]
        return None  # the copy reads through the first gep's view: one defined ahead of the nest
    accesses = [u.operation for g in geps for u in g.result.uses]
    accesses += [u.operation for g in _geps(born, nest) for u in g.result.uses]
    best: Staging | None = None
    for group in _chain(nest, accesses):
        free = []
        for dim in range(len(view.get_shape())):
            indices = [g.indices[dim] for g in geps]
            fixed = all(_fixed_in(i, group) for i in indices)
            if fixed and len(indices) > 1:
                loops = loops_around(geps[0], nest) or []
                upto = loops[: loops.index(group) + 1]
                first = index_values(indices[0], upto)
                fixed = first is not None and all(
                    (v := index_values(i, upto)) is not None and v.shape == first.shape and (v == first).all()
                    for i in indices[1:]
                )
            free.append(not fixed)
        candidate = Staging(group, view, free)
        if best is None or candidate.size < best.size:
            best = candidate
    return best


def _stage(nest: RangeOp, dying: DefineLocalOp, born: DefineLocalOp) -> DefineLocalOp | None:
    """Copy the slice of `dying` each group iteration reads into a new buffer at the start of
    that iteration and read it there; the new buffer, or None if no slice is smaller than
    `dying`."""
    staging = _staging(nest, dying.result, born.result)
    dying_type = dying.result.type
    assert isinstance(dying_type, BufferType)
    if staging is None or not any(staging.free) or staging.size >= dying_type.size.data:
        return None
    group, view = staging.group, staging.view
    shape = view.get_shape()
    element = dying_type.element_type
    buffer = DefineLocalOp(f"{born.tensor_name.data}_staged", BufferType(staging.size, element))
    buffer.result.name_hint = "staged"
    nest.parent_block().insert_op_before(buffer, nest)  # type: ignore[union-attr]
    strides, stride = [0] * len(shape), 1
    for dim in reversed(range(len(shape))):
        if staging.free[dim]:
            strides[dim] = stride
            stride *= shape[dim]
    staged_view = ViewOp(buffer, ViewType(shape, strides, 0, element))
    nest.parent_block().insert_op_before(staged_view, nest)  # type: ignore[union-attr]
    geps = _geps(dying.result, nest)
    source, target = geps[0].source, staged_view.result
    # The copy: one loop per free dimension, the fixed indices computed once per iteration.
    # A run of the source contiguous and a multiple of COPY_RUN long is copied COPY_RUN elements
    # an iteration, all loaded before any is stored: LLVM merges int8 ones into one word load
    # and store where the target allows unaligned words (the DSP cores: 45 k cycles less on each
    # of VWW's two 18 KB depthwise layers written in place) and keeps the byte accesses where it
    # does not (Cortex-M0). The staged view's innermost free dimension is contiguous by
    # construction. Where the innermost run is no multiple of COPY_RUN but the trailing free
    # dimensions run contiguous together (`_merged_run`: a depthwise conv's plane of an odd
    # width), they are copied as one run through views of both buffers with them merged, the
    # last elements past a whole COPY_RUN after the loop (KWS's 25 x 5 planes under 9,600 B: 31
    # words and a byte each, where each row of 5 was copied a byte at a time).
    last = max(d for d in range(len(shape)) if staging.free[d])
    contiguous = view.get_strides()[last] == 1
    free, extents = list(staging.free), list(shape)
    merged = _merged_run(source, staging) if contiguous and shape[last] % COPY_RUN else None
    if merged is not None:
        source, target = (_merged_view(v, merged) for v in (source, target))
        free, extents, last = free[: merged + 1], [*shape[:merged], math.prod(shape[merged:])], merged
    run = COPY_RUN if contiguous and (merged is not None or shape[last] % COPY_RUN == 0) else 1
    body = group.body.block
    anchor = body.first_op
    assert anchor is not None
    made: dict[SSAValue, SSAValue] = {}
    fixed = [None if free[d] else _materialize(geps[0].indices[d], group, anchor, made) for d in range(len(free))]
    indices: list[SSAValue] = []
    loops: list[RangeOp] = []
    for dim in range(len(free)):
        if free[dim]:
            loop = RangeOp(0, extents[dim] - extents[dim] % run if dim == last else extents[dim], run if dim == last else 1)
            loop.body.block.add_op(EndRangeOp())
            (loops[-1].body.block if loops else body).insert_op_before(
                loop, loops[-1].body.block.last_op if loops else anchor  # type: ignore[arg-type]
            )
            loops.append(loop)
            indices.append(loop.induction_var)
        else:
            indices.append(fixed[dim])  # type: ignore[arg-type]
    inner = loops[-1].body.block
    end = inner.last_op
    lanes = [indices]
    for k in range(1, run):
        offset = ConstOp(k, IndexType())
        at = ALU_OPS["add"](indices[last], offset.result)
        inner.insert_ops_before((offset, at), end)  # type: ignore[arg-type]
        lanes.append([*indices[:last], at.results[0], *indices[last + 1:]])
    _copy_lanes(inner, end, source, target, lanes)  # type: ignore[arg-type]
    if extents[last] % run:  # the rest of a merged run, after its loop
        outer = loops[-2].body.block if len(loops) > 1 else body
        after = outer.last_op if len(loops) > 1 else anchor
        rest = [ConstOp(k, IndexType()) for k in range(extents[last] - extents[last] % run, extents[last])]
        outer.insert_ops_before(rest, after)  # type: ignore[arg-type]
        _copy_lanes(outer, after, source, target, [[*indices[:last], c.result] for c in rest])  # type: ignore[arg-type]
    for gep in geps:
        gep.operands[0] = staged_view.result
    return buffer


def _copy_lanes(block: Block, end: Operation, source: SSAValue, target: SSAValue, lanes: list[list[SSAValue]]) -> None:
    """target[lane] = source[lane] for each of `lanes` (index lists), before `end`: every load
    before any store (LLVM merges such int8 lanes into a word)."""
    values = []
    for lane in lanes:
        read = GepOp(source, lane)
        value = LoadOp(read)
        block.insert_ops_before((read, value), end)
        values.append(value.results[0])
    for lane, value in zip(lanes, values, strict=True):
        write = GepOp(target, lane)
        block.insert_ops_before((write, StoreOp(value, write)), end)


def _merged_run(source: SSAValue, staging: Staging) -> int | None:
    """The first of the trailing free dimensions of a staged slice that run contiguous in
    `source` (a view a `uop.view` defines; the staged copy holds its free dimensions contiguous
    by construction), where there are two or more of them and they hold at least `COPY_RUN`
    elements together; None otherwise."""
    view = staging.view
    shape, strides = view.get_shape(), view.get_strides()
    if not isinstance(source.owner, ViewOp):
        return None
    first = len(shape) - 1
    while first > 0 and staging.free[first - 1] and strides[first - 1] == shape[first] * strides[first]:
        first -= 1
    if first == len(shape) - 1 or not all(staging.free[first:]) or math.prod(shape[first:]) < COPY_RUN:
        return None
    return first


def _merged_view(value: SSAValue, first: int) -> SSAValue:
    """A view of the buffer under `value` (a view a `uop.view` defines) with its dimensions from
    `first` on, contiguous, merged into one: defined beside `value`'s."""
    owner, view = value.owner, value.type
    assert isinstance(owner, ViewOp) and isinstance(view, ViewType)
    shape, strides = view.get_shape(), view.get_strides()
    merged = ViewOp(owner.source, ViewType([*shape[:first], math.prod(shape[first:])], [*strides[:first], 1], view.offset.data, view.element_type))
    owner.parent_block().insert_op_after(merged, owner)  # type: ignore[union-attr]
    return merged.result


# ---------------------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------------------


def _candidates(function: func.FuncOp) -> list[tuple[RangeOp, DefineLocalOp, DefineLocalOp]]:
    """(nest, dying, born) for every top-level nest where a buffer dies that the element-wise
    rule does not already let the nest's new buffer overwrite: the largest buffer born there and
    the largest such input of its element type."""
    schedule = Schedule.of(function)
    lifetimes = scratch_lifetimes(function, schedule)
    result: dict[RangeOp, tuple[DefineLocalOp, DefineLocalOp]] = {}
    for born in lifetimes:
        nest = schedule.ops[born.first]
        if not isinstance(nest, RangeOp) or nest.parent_op() is not function:
            continue
        users = [u for u in buffer_users(born.buffer.result) if nest.is_ancestor(u)]
        if not users or not all(isinstance(u, GepOp) for u in users):
            continue
        born_type = born.buffer.result.type
        assert isinstance(born_type, BufferType)
        dying: list[Lifetime] = [
            life for life in lifetimes
            if life.first < born.first and life.last == schedule.last[nest]
            and life.buffer.result.type.element_type == born_type.element_type  # type: ignore[attr-defined]
        ]
        if not dying:
            continue
        if any(in_place_legal(d, born, schedule) is not None for d in dying):
            continue
        best = max(dying, key=lambda life: life.size)
        if nest not in result or result[nest][1].result.type.byte_size < born.size:  # type: ignore[attr-defined]
            result[nest] = (best.buffer, born.buffer)
    return [(nest, dying_buffer, born_buffer) for nest, (dying_buffer, born_buffer) in result.items()]


def _legal(function: func.FuncOp, nest: RangeOp, dying: DefineLocalOp, born: DefineLocalOp) -> bool:
    schedule = Schedule.of(function)
    lives = {life.buffer: life for life in scratch_lifetimes(function, schedule)}
    a, b = lives[dying], lives[born]
    if not (a.first < b.first and a.last == schedule.last[nest] and schedule.ops[b.first] is nest):
        return False
    return staged_in_place_legal(a, b, nest, schedule)


def _replace(nest: RangeOp, backup: RangeOp) -> None:
    """Put `backup` (a detached copy) where `nest` is, and erase `nest`."""
    block = nest.parent_block()
    assert block is not None
    block.insert_op_before(backup, nest)
    nest.detach()
    nest.erase()


def _erase_buffer(buffer: DefineLocalOp | None) -> None:
    if buffer is None:
        return
    for use in list(buffer.result.uses):
        use.operation.detach()
        use.operation.erase()
    buffer.detach()
    buffer.erase()


@dataclass
class Scheduled:
    """A nest `schedule_nest` made in place: how (`step`), and what undoes it (the nest as it
    was, a detached copy, and the staging buffer added)."""

    step: str
    nest: RangeOp
    backup: RangeOp
    staged: DefineLocalOp | None

    def undo(self) -> RangeOp:
        """Put the nest back as it was (returned) and erase the staging buffer."""
        _replace(self.nest, self.backup)
        _erase_buffer(self.staged)
        return self.backup

    def keep(self) -> None:
        self.backup.erase()


def schedule_nest(function: func.FuncOp, nest: RangeOp, dying: DefineLocalOp, born: DefineLocalOp) -> Scheduled | None:
    """Make `born` legal to write over `dying` in `nest` and mark it (steps of the module
    docstring: "as is", "pair clamp", "staged"); None, with the nest as it was, if no step does.
    The caller keeps or undoes the result."""
    mark = in_place_mark(dying.tensor_name.data, born.tensor_name.data)
    backup = nest.clone()
    if _legal(function, nest, dying, born):
        nest.attributes[IN_PLACE_ATTRIBUTE] = mark
        return Scheduled("as is", nest, backup, None)
    if _fix_pair_clamps(nest, dying.result):
        if _legal(function, nest, dying, born):
            nest.attributes[IN_PLACE_ATTRIBUTE] = mark
            return Scheduled("pair clamp", nest, backup, None)
        _replace(nest, backup)
        nest, backup = backup, backup.clone()
    _sink_channel_loops(nest, dying.result, born.result) or _fuse_sibling_loops(nest, dying.result, born.result)
    staged = _stage(nest, dying, born)
    if staged is not None and _legal(function, nest, dying, born):
        nest.attributes[IN_PLACE_ATTRIBUTE] = mark
        return Scheduled("staged", nest, backup, staged)
    _replace(nest, backup)
    _erase_buffer(staged)
    return None


def lower_bound_of(function: func.FuncOp, memo: LegalityMemo | None = None) -> int:
    """The unaligned lower bound `plan-arenas` would report with in-place reuse."""
    return _profile(function, memo)[0]


def _profile(function: func.FuncOp, memo: LegalityMemo | None = None) -> tuple[int, list[tuple[int, int]], Schedule]:
    """The unaligned lower bound `plan-arenas` would report with in-place reuse, the position
    ranges [first, last] where the bytes live reach it, and the schedule they refer to."""
    from zant.passes.plan_arenas import make_slots

    schedule = Schedule.of(function)
    slots = make_slots(scratch_lifetimes(function, schedule), schedule, 1, True, memo)
    events: dict[int, int] = {}
    for slot in slots:
        for first, last, size in slot.spans():
            events[first] = events.get(first, 0) + size
            events[last + 1] = events.get(last + 1, 0) - size
    live, points = 0, []
    for position in sorted(events):
        live += events[position]
        points.append((position, live))
    bound = max((live for _, live in points), default=0)
    peaks = [
        (position, (points[k + 1][0] - 1) if k + 1 < len(points) else position)
        for k, (position, live) in enumerate(points) if live == bound and bound > 0
    ]
    return bound, peaks, schedule


def _at_peak(nest: RangeOp, peaks: Sequence[tuple[int, int]], schedule: Schedule) -> bool:
    first, last = schedule.position[nest], schedule.last[nest]
    return any(lo <= last and first <= hi for lo, hi in peaks)


def schedule_function(function: func.FuncOp, every: bool = False) -> list[Scheduled]:
    """Schedule in place the nests that lower the function's bound and no more: the candidates
    whose nest runs where the bytes live reach the bound (by decreasing bytes), each kept unless
    it raises the bound (a slot chained through many layers is as large as its largest member
    and lives as long as all of them), again at the new peak until no untried candidate runs
    there (a nest elsewhere cannot lower the bound); then each undone again where the bound
    stays without it (its copy costs cycles for nothing). `every`: keep every nest that can be
    scheduled (for testing the schedules and their check).

    Only the nests at the peak are tried, and `in_place_legal`'s answers are kept between the
    bounds asked for (a nest's dropped when it changes): a stage run patch by patch holds
    hundreds of small nests that cannot be the peak (MobileNetV2's 4x4 tiles of 21 layers:
    the bound asked once per candidate took most of the compile)."""
    _join_split_nests(function)
    order = sorted(
        _candidates(function),
        key=lambda c: -(c[1].result.type.byte_size + c[2].result.type.byte_size),  # type: ignore[attr-defined]
    )
    if every:
        result = []
        for nest, dying, born in order:
            done = schedule_nest(function, nest, dying, born)
            if done is not None:
                done.keep()
                result.append(done)
        return result
    memo: LegalityMemo = {}
    bound, peaks, schedule = _profile(function, memo)
    kept: list[tuple[Scheduled, DefineLocalOp, DefineLocalOp]] = []
    tried: set[RangeOp] = set()
    while True:
        at_peak = [c for c in order if c[0] not in tried and _at_peak(c[0], peaks, schedule)]
        if not at_peak:
            break
        for nest, dying, born in at_peak:
            tried.add(nest)
            done = schedule_nest(function, nest, dying, born)
            if done is None:
                continue
            memo.pop(done.nest, None)
            new = lower_bound_of(function, memo)
            if new > bound:
                done.undo()
                continue
            bound = new
            kept.append((done, dying, born))
        bound, peaks, schedule = _profile(function, memo)
    result = []
    for done, dying, born in reversed(kept):
        nest = done.undo()
        if lower_bound_of(function, memo) <= bound:
            continue
        again = schedule_nest(function, nest, dying, born)
        assert again is not None  # the same nest, the same steps
        memo.pop(again.nest, None)
        again.keep()
        result.append(again)
    return result[::-1]


@dataclass(frozen=True)
class ScheduleInPlacePass(ModulePass):
    """Write convolution outputs over their inputs through a line or plane buffer (see the
    module docstring); before `plan-arenas`."""

    name = "schedule-in-place"

    every: bool = False
    """Keep every nest that can be scheduled, not only those that lower the bound (testing)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in list(ops_of(op, func.FuncOp)):
            schedule_function(function, self.every)
