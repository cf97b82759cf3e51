"""Liveness of scratch buffers over the final schedule of a uop function.

The one implementation used by `plan-arenas`, `verify-arena-plan`, the lower bound of the plan
report and `zant plan`.

* The schedule is the pre-order walk of the function body: every op gets a position.
* A buffer is live from its first use to its last use, looking through `uop.view` (an alias that
  emits no code). A use inside a loop that does not contain the buffer's definition counts for the
  whole outermost such loop: the loop body runs again after the use, so the buffer must survive to
  the end of the loop and be there from its first iteration. This rule is what makes reuse safe.
* A buffer nobody touches is live at its definition only (it still needs a slot).
* `in_place_legal(a, b)` decides from the IR (geps, views, strides, loop ranges) whether `b` may
  be written over `a` at the loop nest where `a` dies and `b` is born.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.ir import Block, Operation, SSAValue

from zant.dialects.uop import (
    BufferType,
    ConstOp,
    DefineLocalOp,
    GepOp,
    LoadOp,
    RangeOp,
    StoreOp,
    ViewOp,
    ViewType,
)


def align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


@dataclass
class Schedule:
    """Positions of the ops of one function in program (pre-order) order."""

    position: dict[Operation, int] = field(default_factory=dict)
    last: dict[Operation, int] = field(default_factory=dict)
    """For each op, the last position nested inside it (itself if it has no regions)."""
    step: list[int] = field(default_factory=list)
    """For each position, the index of the top-level op of the function body holding it."""
    ops: list[Operation] = field(default_factory=list)
    """The op at each position."""

    @staticmethod
    def of(function: func.FuncOp) -> Schedule:
        schedule = Schedule()

        def visit(op: Operation, top: int) -> None:
            schedule.position[op] = len(schedule.step)
            schedule.step.append(top)
            schedule.ops.append(op)
            for region in op.regions:
                for block in region.blocks:
                    for child in block.ops:
                        visit(child, top)
            schedule.last[op] = len(schedule.step) - 1

        for top, op in enumerate(function.body.block.ops):
            visit(op, top)
        return schedule

    @property
    def step_count(self) -> int:
        return (self.step[-1] + 1) if self.step else 0


@dataclass(frozen=True)
class Lifetime:
    """One scratch buffer: its byte size and live span [first, last] in schedule positions."""

    buffer: DefineLocalOp
    name: str
    size: int
    first: int
    last: int

    def overlaps(self, other: Lifetime) -> bool:
        return self.first <= other.last and other.first <= self.last


def buffer_users(value: SSAValue) -> list[Operation]:
    """Ops that touch a buffer, looking through views (which emit no code)."""
    result = []
    for use in value.uses:
        if isinstance(use.operation, ViewOp):
            result.extend(buffer_users(use.operation.result))
        else:
            result.append(use.operation)
    return result


def _use_interval(use: Operation, definition: Operation, schedule: Schedule) -> tuple[int, int]:
    start = end = schedule.position[use]
    parent = use.parent_op()
    while isinstance(parent, RangeOp) and not parent.is_ancestor(definition):
        start, end = schedule.position[parent], schedule.last[parent]
        parent = parent.parent_op()
    return start, end


def scratch_lifetimes(function: func.FuncOp, schedule: Schedule | None = None) -> list[Lifetime]:
    """Every `uop.define_local` of `function` with its live span, in program order."""
    schedule = schedule or Schedule.of(function)
    lifetimes = []
    for op in function.walk():
        if not isinstance(op, DefineLocalOp):
            continue
        buffer_type = op.result.type
        assert isinstance(buffer_type, BufferType)
        spans = [_use_interval(user, op, schedule) for user in buffer_users(op.result)]
        if not spans:
            spans = [(schedule.position[op], schedule.position[op])]
        lifetimes.append(
            Lifetime(
                op,
                op.tensor_name.data,
                buffer_type.byte_size,
                min(s for s, _ in spans),
                max(e for _, e in spans),
            )
        )
    return lifetimes


def peak_bytes(spans: Iterable[tuple[int, int, int]]) -> int:
    """Max over time of the sum of `size` over the (first, last, size) spans live at once."""
    events = []
    for first, last, size in spans:
        events.append((first, size))
        events.append((last + 1, -size))
    live = peak = 0
    for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
        live += delta
        peak = max(peak, live)
    return peak


# ---------------------------------------------------------------------------------------------
# In-place legality
# ---------------------------------------------------------------------------------------------


def _accesses(value: SSAValue) -> list[tuple[GepOp, ViewType | None]]:
    """Every gep into a buffer, with the view it goes through (None for a direct gep)."""
    result = []
    for use in value.uses:
        user = use.operation
        if isinstance(user, ViewOp):
            result += [(gep, user.result.type) for gep, _ in _accesses(user.result)]  # type: ignore[misc]
        elif isinstance(user, GepOp):
            result.append((user, None))
    return result


def flat_index(gep: GepOp, view: ViewType | None) -> tuple[int, tuple[tuple[SSAValue, int], ...]]:
    """The buffer element a gep addresses as `offset + Σ stride·index`: (offset, sorted terms),
    constants and single-trip loop indices folded, repeated indices merged, zero strides dropped."""
    strides: Sequence[int] = view.get_strides() if view is not None else (1,)
    offset = view.offset.data if view is not None else 0
    terms: dict[SSAValue, int] = {}
    for index, stride in zip(gep.indices, strides):
        loop = index.owner.parent_op() if isinstance(index.owner, Block) else None
        if isinstance(index.owner, ConstOp):
            offset += index.owner.value.value.data * stride  # type: ignore[attr-defined]
        elif isinstance(loop, RangeOp) and loop.trip_count == 1:  # the index is always `start`
            offset += loop.start.data * stride
        else:
            terms[index] = terms.get(index, 0) + stride
    ordered = sorted(((v, s) for v, s in terms.items() if s), key=lambda t: (t[1], id(t[0])))
    return offset, tuple(ordered)


def _injective(terms: tuple[tuple[SSAValue, int], ...]) -> bool:
    """True if the index map visits each element at most once over the loop nest: every index is
    the induction variable of a distinct loop and the strides nest like a mixed-radix number."""
    reach = 0
    seen = set()
    for value, stride in sorted(terms, key=lambda t: abs(t[1])):
        loop = value.owner.parent_op() if isinstance(value.owner, Block) else None
        if not isinstance(loop, RangeOp) or loop.induction_var is not value or loop in seen:
            return False
        seen.add(loop)
        step = abs(stride) * loop.step.data
        if step <= reach:
            return False
        reach += step * max(0, loop.trip_count - 1)
    return True


def in_place_legal(dying: Lifetime, born: Lifetime, schedule: Schedule) -> Operation | None:
    """The loop nest at which `born` may be written over `dying`, or None if that is not legal.

    Legal when both buffers have the same byte size and element type, `dying` ends and `born`
    starts in the same top-level loop nest, and inside that nest the only accesses are loads of
    `dying` and one store to `born`, all in one block, the loads first, all at the same flat
    element index, and that index map is injective over the nest: each element of `dying` is read
    exactly where (and before) the same element of `born` is written, and never again.
    """
    a_type, b_type = dying.buffer.result.type, born.buffer.result.type
    assert isinstance(a_type, BufferType) and isinstance(b_type, BufferType)
    if a_type != b_type or dying.buffer is born.buffer:
        return None
    if dying.first >= born.first:
        return None
    nest = schedule.ops[born.first]
    if not isinstance(nest, RangeOp) or dying.last != schedule.last[nest]:
        return None
    stores = [(g, v) for g, v in _accesses(born.buffer.result) if nest.is_ancestor(g)]
    loads = [(g, v) for g, v in _accesses(dying.buffer.result) if nest.is_ancestor(g)]
    if len(stores) != 1 or not loads:
        return None
    store_gep, store_view = stores[0]
    store_users = [u.operation for u in store_gep.result.uses]
    if len(store_users) != 1 or not isinstance(store_users[0], StoreOp):
        return None
    store = store_users[0]
    index = flat_index(store_gep, store_view)
    if not _injective(index[1]):
        return None
    block = store.parent_block()
    assert block is not None
    for gep, view in loads:
        if flat_index(gep, view) != index:
            return None
        for use in gep.result.uses:
            load = use.operation
            if not isinstance(load, LoadOp) or load.parent_block() is not block:
                return None
            if block.get_operation_index(load) > block.get_operation_index(store):
                return None
    return nest


def in_place_pairs(lifetimes: Sequence[Lifetime], schedule: Schedule) -> dict[DefineLocalOp, DefineLocalOp]:
    """born → dying for every buffer written in place over an input that dies there (the first
    legal input in program order; each dying buffer is reused once)."""
    pairs: dict[DefineLocalOp, DefineLocalOp] = {}
    taken: set[DefineLocalOp] = set()
    for born in lifetimes:
        for dying in lifetimes:
            if dying.buffer in taken or not dying.first < born.first <= dying.last:
                continue
            if in_place_legal(dying, born, schedule) is not None:
                pairs[born.buffer] = dying.buffer
                taken.add(dying.buffer)
                break
    return pairs
