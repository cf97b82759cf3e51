"""`plan-arenas`: the bufferization pass. Every scratch buffer gets an offset in one scratch arena,
every constant an offset in one deduplicated constant arena; the arenas become `abi.arena` ops.

`-p 'plan-arenas{strategy=naive|greedy|best alignment=16 link-section=".rodata.zant"
constants=embedded|staged|external}'`:

* `alignment` (bytes, a power of two): of every arena and of every buffer's offset in it; not
  given, the module target's (`arena_alignment`: 16, or the width of the vectors its kernels
  load and store where wider, 64 bytes on the host);

* `naive`: one aligned slot per `uop.define_local`, in program order (no reuse);
* `greedy`: liveness (`zant.analysis.liveness`), in-place reuse (a buffer written element-wise over
  an input that dies in the same loop nest shares its slot), then greedy placement by decreasing
  size, each buffer in the best-fitting (smallest) free gap among the buffers live with it;
* `best` (default): greedy, then an improvement step over the placement order (every order for up
  to 7 slots, otherwise hill climbing over swaps) that stops once it reaches the lower bound.

`in-place=false` turns the in-place reuse of `greedy` and `best` off: every buffer gets a slot
of its own (the layer-by-layer plan without overlap, for measuring what in-place reuse saves and
checking that it changes no output; docs/ram-budget.md). The code is the same either way.

The lower bound is the peak over the schedule of the aligned bytes live at once, with an in-place
pair counted once: no plan of this schedule with these in-place decisions can be smaller.
Constants are packed in index order, each aligned; identical bytes are stored once.
Running the pass twice gives the same IR: everything is recomputed from scratch, deterministically.

The plan is recorded on the IR, so the backend's header and plan JSON read it instead of
re-running the schedule and liveness (and later passes that add ops do not move it):

* each `uop.define_local` gets its offset and `live FIRST to LAST`, the first and last top-level
  step (op of the function body) it is live at;
* the scratch `abi.arena` its size, alignment, aligned `lower_bound`, `strategy`, `steps N` (the
  number of top-level steps) and `unaligned_lower_bound B` (the lower bound counted in unaligned
  bytes: what no plan of this schedule can beat);
* the constant `abi.arena` where it lives (`constants`, `zant compile --constants`): `memory
  "flash"` (embedded, the default: read in place from read-only data), `memory "ram" source
  "flash"` (staged: copied into RAM by `NAME_init`) or `memory "external"` (a blob the firmware
  places and passes to `NAME_init`). The header, plan JSON, Zig file and firmware read it there.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects.zant import target_parameters
from zant.dialects.uop import BufferRole, DefineGlobalOp, DefineLocalOp, StepRangeAttr
from zant.dialects.abi import (
    ARENA_ROLES,
    CONSTANT_MODES,
    CONSTANT_PLACEMENTS,
    PLAN_STRATEGIES,
    ArenaOp,
    ArenaRole,
    PlanStrategy,
)
from zant.errors import ZantError
from zant.analysis.liveness import Lifetime, LegalityMemo, Schedule, align_up, in_place_pairs, peak_bytes, scratch_lifetimes

EXACT_SEARCH_LIMIT = 7
"""Up to this many slots, `best` tries every placement order."""
HILL_CLIMB_STEPS = 4000



@dataclass(frozen=True)
class Slot:
    """One region of the scratch arena: buffers chained by in-place reuse share it (from its
    start: each member at the slot's offset)."""

    members: tuple[Lifetime, ...]
    size: int  # aligned bytes
    first: int
    last: int
    alignment: int = 1

    def overlaps(self, other: Slot) -> bool:
        return self.first <= other.last and other.first <= self.last

    @property
    def uniform(self) -> bool:
        """All members take the slot's bytes (element-wise in place: one type), so the slot is
        one block over its whole span. A chain through `schedule-in-place` may hold members of
        other sizes: each then takes its own bytes during its own span only."""
        return all(align_up(m.size, self.alignment) == self.size for m in self.members)

    def spans(self) -> list[tuple[int, int, int]]:
        """(first, last, bytes) pieces of the slot's occupancy: the whole slot for a uniform
        one, else at each time the largest member live then."""
        if self.uniform:
            return [(self.first, self.last, self.size)]
        points = sorted({m.first for m in self.members} | {m.last + 1 for m in self.members})
        pieces = []
        for start, end in zip(points, points[1:]):
            live = [align_up(m.size, self.alignment) for m in self.members if m.first <= start and end - 1 <= m.last]
            if live:
                pieces.append((start, end - 1, max(live)))
        return pieces


def make_slots(
    lifetimes: Sequence[Lifetime], schedule: Schedule, alignment: int, in_place: bool, memo: LegalityMemo | None = None,
) -> list[Slot]:
    pairs = in_place_pairs(lifetimes, schedule, memo) if in_place else {}
    by_buffer = {life.buffer: life for life in lifetimes}
    root: dict[DefineLocalOp, DefineLocalOp] = {}
    # By first use, not by definition: a lowering may define an output buffer before the state it
    # is later written over in place (a recurrent op's Y_h before its hidden state), and a
    # dying buffer is always first used before its successor.
    for life in sorted(lifetimes, key=lambda life: life.first):
        source = pairs.get(life.buffer)
        root[life.buffer] = root[source] if source is not None else life.buffer
    groups: dict[DefineLocalOp, list[Lifetime]] = {}
    for life in lifetimes:
        groups.setdefault(root[life.buffer], []).append(life)
    slots = []
    for head, members in groups.items():
        slots.append(
            Slot(
                tuple(members),
                align_up(max(by_buffer[head].size, max(m.size for m in members)), alignment),
                min(m.first for m in members),
                max(m.last for m in members),
                alignment,
            )
        )
    return slots


def lower_bound(slots: Sequence[Slot]) -> int:
    return peak_bytes(span for s in slots for span in s.spans())


def _busy(slot: Slot, offset: int, other: Slot) -> list[tuple[int, int, int]]:
    """(start, end, bytes of `other` needed free) for each piece of `slot` (placed at
    `offset`) live with a piece of `other`."""
    return [
        (offset, offset + size, other_size)
        for first, last, size in slot.spans()
        for other_first, other_last, other_size in other.spans()
        if first <= other_last and other_first <= last
    ]


def place(order: Sequence[Slot], alignment: int) -> tuple[list[int], int]:
    """Offsets (parallel to `order`) placing each slot in the smallest free gap that fits among
    the already placed slots live with it (or above them all); and the arena size. A slot whose
    members differ in size (`Slot.uniform`) goes at the lowest offset where each piece of it is
    clear of what is live with that piece."""
    offsets: list[int] = []
    top = 0
    staged = False  # a slot of members of different sizes placed already
    for index, slot in enumerate(order):
        staged = staged or not slot.uniform
        if staged:
            # Only the slots live with it can be in its way (the same offset as checking all).
            offset = _lowest_fit(slot, [(offsets[j], order[j]) for j in range(index) if order[j].overlaps(slot)])
            offsets.append(offset)
            top = max(top, offset + slot.size)
            continue
        busy = sorted(
            (offsets[j], offsets[j] + order[j].size)
            for j in range(index)
            if order[j].overlaps(slot)
        )
        best: tuple[int, int] | None = None  # (gap size, offset)
        cursor = 0
        for start, end in busy:
            if start - cursor >= slot.size and (best is None or start - cursor < best[0]):
                best = (start - cursor, cursor)
            cursor = max(cursor, end)
        offset = best[1] if best is not None else cursor
        offsets.append(offset)
        top = max(top, offset + slot.size)
    return offsets, align_up(top, alignment)


def _lowest_fit(slot: Slot, placed: Sequence[tuple[int, Slot]]) -> int:
    """The lowest offset (0 or the end of a busy range) where no piece of `slot` overlaps a
    piece of a placed slot live with it."""
    busy = [b for offset, other in placed for b in _busy(other, offset, slot)]
    for candidate in sorted({0, *(end for _, end, _ in busy)}):
        if all(candidate + need <= start or end <= candidate for start, end, need in busy):
            return candidate
    raise AssertionError("unreachable: above every busy range is free")


def greedy_order(slots: Sequence[Slot]) -> list[Slot]:
    return sorted(slots, key=lambda s: (-s.size, s.first, s.members[0].name))


def improve(order: list[Slot], alignment: int, bound: int) -> list[Slot]:
    """The improvement step of `best`: exact over orders for few slots, else hill climbing."""
    _, size = place(order, alignment)
    if size <= bound:
        return order
    if len(order) <= EXACT_SEARCH_LIMIT:
        best_order, best_size = order, size
        for candidate in itertools.permutations(order):
            _, candidate_size = place(candidate, alignment)
            if candidate_size < best_size:
                best_order, best_size = list(candidate), candidate_size
                if best_size <= bound:
                    break
        return best_order
    rng = random.Random(0)  # deterministic: same model, same plan
    for _ in range(HILL_CLIMB_STEPS):
        i, j = rng.sample(range(len(order)), 2)
        candidate = list(order)
        candidate[i], candidate[j] = candidate[j], candidate[i]
        _, candidate_size = place(candidate, alignment)
        if candidate_size <= size:  # sideways moves let the search cross plateaus
            order, size = candidate, candidate_size
            if size <= bound:
                break
    return order


@dataclass(frozen=True)
class ScratchPlan:
    size: int
    lower_bound: int  # aligned bytes
    unaligned_lower_bound: int
    steps: int


def plan_scratch(
    function: func.FuncOp, strategy: PlanStrategy | str, alignment: int, steps_before: int = 0, in_place: bool = True
) -> ScratchPlan:
    """Set every define_local's offset and live steps; return the arena's figures. The steps
    count `steps_before` top-level ops that will be inserted at the start (the arenas)."""
    schedule = Schedule.of(function)
    lifetimes = scratch_lifetimes(function, schedule)
    for life in lifetimes:
        life.buffer.live = StepRangeAttr(
            steps_before + schedule.step[life.first], steps_before + schedule.step[life.last]
        )
    unaligned = lower_bound(make_slots(lifetimes, schedule, 1, in_place))
    size, bound = _place_scratch(lifetimes, schedule, PlanStrategy(strategy), alignment, in_place)
    return ScratchPlan(size, bound, unaligned, steps_before + schedule.step_count)


def _place_scratch(
    lifetimes: Sequence[Lifetime], schedule: Schedule, strategy: PlanStrategy, alignment: int, in_place: bool = True
) -> tuple[int, int]:
    """Set every define_local's offset; return (arena size, lower bound)."""
    slots = make_slots(lifetimes, schedule, alignment, in_place)
    bound = lower_bound(slots)
    if strategy == PlanStrategy.NAIVE:
        cursor = 0
        for life in lifetimes:
            life.buffer.offset = IntegerAttr(cursor, 64)
            cursor = align_up(cursor + life.size, alignment)
        return cursor, bound
    order = greedy_order(slots)
    if strategy == PlanStrategy.BEST:
        order = improve(order, alignment, bound)
    offsets, size = place(order, alignment)
    for slot, offset in zip(order, offsets):
        for member in slot.members:
            member.buffer.offset = IntegerAttr(offset, 64)
    return size, bound


def constant_bytes(op: DefineGlobalOp) -> bytes:
    """The bytes a constant takes in its arena: little-endian, packed types (int4 …) packed
    as memory holds them (`zant.ir.types.pack`), so an int4 weight takes half an int8 one's."""
    from zant.ir.resources import attr_to_array
    from zant.ir.types import pack

    assert op.value is not None
    return pack(attr_to_array(op.value), op.result.type.element_type)


CONSTANT_ALIGNMENT = "zant.alignment"
"""A constant's own alignment in bytes where it needs more than the arena's (an integer
attribute on its `uop.define_global`): a table read through a flash cache's lines, line by line
(`conv_columns._pointwise_wide`'s compile-time widened weight pairs). The constant arena is
then aligned to the largest such."""


def _alignment_of(op: DefineGlobalOp, alignment: int) -> int:
    """A constant's alignment: `alignment`, or its `CONSTANT_ALIGNMENT` where it asks more."""
    asked = op.attributes.get(CONSTANT_ALIGNMENT)
    return alignment if asked is None else max(alignment, asked.value.data)  # type: ignore[attr-defined]


def constant_alignment(function: func.FuncOp, alignment: int) -> int:
    """The constant arena's alignment: `alignment`, or the largest `CONSTANT_ALIGNMENT` asked."""
    return max((_alignment_of(op, alignment) for op in _constants(function)), default=alignment)


def _constants(function: func.FuncOp) -> list[DefineGlobalOp]:
    return sorted(
        (op for op in function.walk() if isinstance(op, DefineGlobalOp) and op.role.data == BufferRole.CONSTANT),
        key=lambda op: op.index.value.data,
    )


def plan_constants(function: func.FuncOp, alignment: int) -> int:
    """Pack the constants in index order, aligned (each to its `CONSTANT_ALIGNMENT` where it
    asks more), identical bytes stored once; the arena size."""
    seen: dict[bytes, int] = {}
    cursor = 0
    for op in _constants(function):
        data = constant_bytes(op)
        if data not in seen:
            seen[data] = align_up(cursor, _alignment_of(op, alignment))
            cursor = seen[data] + len(data)
        op.offset = IntegerAttr(seen[data], 64)
    return align_up(cursor, constant_alignment(function, alignment))


def plan_function(
    function: func.FuncOp,
    strategy: PlanStrategy | str = PlanStrategy.BEST,
    alignment: int = 16,
    link_section: str = "",
    constants: str = "embedded",
    in_place: bool = True,
) -> int:
    """Plan the arenas of `function` (replacing any earlier plan), its constants where
    `constants` (embedded, staged, external) puts them; return the scratch size."""
    for op in list(function.body.block.ops):
        if isinstance(op, ArenaOp):
            Rewriter.erase_op(op)
    scratch = plan_scratch(function, strategy, alignment, steps_before=len(ARENA_ROLES), in_place=in_place)
    constant_size = plan_constants(function, alignment)
    memory, source = CONSTANT_PLACEMENTS[constants]
    scratch_op = ArenaOp(
        ArenaRole.SCRATCH,
        scratch.size,
        alignment,
        lower_bound=scratch.lower_bound,
        strategy=strategy,
        steps=scratch.steps,
        unaligned_lower_bound=scratch.unaligned_lower_bound,
    )
    arenas = [
        scratch_op,
        ArenaOp(
            ArenaRole.CONSTANT, constant_size, constant_alignment(function, alignment), link_section=link_section or None,
            memory=memory, source=source,
        ),
        ArenaOp(ArenaRole.PERSISTENT, 0, alignment),
    ]
    Rewriter.insert_op(arenas, InsertPoint.at_start(function.body.block))
    return scratch.size


DEFAULT_ALIGNMENT = 16
"""Bytes, where the target's vectors are no wider (`arena_alignment`)."""


def arena_alignment(module: ModuleOp) -> int:
    """The arenas' alignment for `module`'s target: `DEFAULT_ALIGNMENT`, or the bytes of its
    `vector_lanes`-wide f32 vectors where wider (the host: 64, a cache line). At 16 a buffer's
    64-byte vectors straddled two cache lines wherever its arena landed 32 bytes off a line, as
    the linker placed mobilenet_v2_dynamo's scratch (0.888x onnxruntime against 0.846x aligned,
    each build loaded from 3 copies, docs/measurements.md)."""
    return max(DEFAULT_ALIGNMENT, 4 * target_parameters(module).vector_lanes)


@dataclass(frozen=True)
class PlanArenasPass(ModulePass):
    """Plan the scratch, constant and persistent arenas of every function."""

    name = "plan-arenas"

    strategy: str = "best"
    alignment: int | None = None  # None: the target's (`arena_alignment`)
    link_section: str = ""
    constants: str = "embedded"
    in_place: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        alignment = arena_alignment(op) if self.alignment is None else self.alignment
        if alignment <= 0 or alignment & (alignment - 1):
            raise ZantError(f"plan-arenas: alignment must be a power of two, got {alignment}")
        if self.strategy not in PLAN_STRATEGIES:
            raise ZantError(
                f"plan-arenas: strategy must be one of {', '.join(PLAN_STRATEGIES)}, got '{self.strategy}'"
            )
        if self.constants not in CONSTANT_MODES:
            raise ZantError(
                f"plan-arenas: constants must be one of {', '.join(CONSTANT_MODES)}, got '{self.constants}'"
            )
        for function in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            plan_function(function, self.strategy, alignment, self.link_section, self.constants, self.in_place)
