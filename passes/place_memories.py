"""`place-memories`: split the planned scratch arena over the memories of a board.

`-p 'place-memories{memories="dtcm:131072","bss:4190208","psram:16777216"}'` (fastest memory
first, each `NAME:BYTES`, the bytes it may give to scratch; `bss` is the default scratch arena, the
one `plan-arenas` made, which stays where it was: in the image's `.bss`, in its RAM) runs after
`plan-arenas`. The scratch buffers
(with the buffers written in place over them: one slot) go to memories by use density
(`zant.analysis.use_density`: loads and stores per call, per byte), densest first, each into the
fastest memory whose arena, packed again with liveness as `plan-arenas` packs it (its strategy
and alignment), stays within the memory's bytes. A buffer that fits in no memory is an error
naming it.

Each memory holding buffers gets its own `abi.arena "scratch" ... memory "NAME"` (size, lower
bounds and steps of its own plan; `bss`: the arena without a memory) in place of the one scratch
arena, and each `uop.define_local` its memory (`in "NAME"`; none in `bss`) and its offset into
that arena. The backend declares one array per
arena, in section `.zant.NAME`, which the firmware's linker script places in that memory.
Running the pass again re-places from the same inputs and gives the same IR.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.analysis.liveness import Schedule, scratch_lifetimes
from zant.analysis.use_density import use_densities
from zant.dialects.uop import StepRangeAttr
from zant.dialects.abi import ArenaOp, ArenaRole, PlanStrategy
from zant.errors import ZantError
from zant.passes.plan_arenas import Slot, greedy_order, improve, lower_bound, make_slots, place

MEMORY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A memory's name appears in Zig identifiers, section names and the linker script."""
DEFAULT_ARENA = "bss"
"""The name that stands for the default scratch arena (no memory: `NAME_scratch` in `.bss`)."""


@dataclass(frozen=True)
class MemoryCapacity:
    name: str
    capacity: int


def parse_memories(specs: Sequence[str]) -> list[MemoryCapacity]:
    """`("dtcm:131072", …)` → memories, fastest first; a malformed entry is a `ZantError`."""
    memories: list[MemoryCapacity] = []
    for spec in specs:
        name, _, size = str(spec).partition(":")
        if not MEMORY_NAME.fullmatch(name) or not size.isdigit() or int(size) <= 0:
            raise ZantError(f"place-memories: '{spec}' is not NAME:BYTES (a name such as dtcm, a byte count above 0)")
        if any(m.name == name for m in memories):
            raise ZantError(f"place-memories: memory '{name}' is listed twice")
        memories.append(MemoryCapacity(name, int(size)))
    if not memories:
        raise ZantError('place-memories: no memories given (memories="NAME:BYTES",…, fastest first)')
    return memories


def pack(slots: Sequence[Slot], strategy: PlanStrategy, alignment: int, final: bool) -> tuple[list[Slot], list[int], int]:
    """Placement order, offsets and arena size of `slots` in one arena. `final`: with the
    strategy's improvement step (the feasibility checks use greedy alone)."""
    if strategy == PlanStrategy.NAIVE:
        order = sorted(slots, key=lambda s: s.first)
        offsets, cursor = [], 0
        for slot in order:
            offsets.append(cursor)
            cursor += slot.size
        return order, offsets, cursor
    order = greedy_order(slots)
    if final and strategy == PlanStrategy.BEST:
        order = improve(order, alignment, lower_bound(slots))
    offsets, size = place(order, alignment)
    return order, offsets, size


def place_function(function: func.FuncOp, memories: Sequence[MemoryCapacity]) -> None:
    block = function.body.block
    scratch = [op for op in block.ops if isinstance(op, ArenaOp) and op.role.data == ArenaRole.SCRATCH]
    if not scratch:
        raise ZantError(f"place-memories: @{function.sym_name.data} has no scratch arena; run plan-arenas first")
    model = scratch[0]
    alignment = model.alignment.value.data
    strategy = PlanStrategy(model.strategy.data if model.strategy else PlanStrategy.BEST)
    anchor = scratch[-1].next_op
    for op in scratch:
        Rewriter.erase_op(op)

    schedule = Schedule.of(function)
    lifetimes = scratch_lifetimes(function, schedule)
    densities = use_densities(function)
    slots = make_slots(lifetimes, schedule, alignment, in_place=True)

    def slot_density(slot: Slot) -> float:
        return sum(densities[m.buffer].accesses for m in slot.members) / max(slot.size, 1)

    assigned: dict[str, list[Slot]] = {m.name: [] for m in memories}
    for slot in sorted(slots, key=lambda s: (-slot_density(s), s.first, s.members[0].name)):
        for memory in memories:
            _, _, size = pack([*assigned[memory.name], slot], strategy, alignment, final=False)
            if size <= memory.capacity:
                assigned[memory.name].append(slot)
                break
        else:
            name = min(slot.members, key=lambda m: m.first).name
            room = ", ".join(f"{'.' if m.name == DEFAULT_ARENA else ''}{m.name} {m.capacity:,} B" for m in memories)
            raise ZantError(
                f"scratch buffer '{name}' ({slot.size:,} B) fits in no memory of the board "
                f"beside the buffers live with it ({room})"
            )

    arenas = []
    for memory in memories:
        chosen = assigned[memory.name]
        if not chosen and (arenas or any(assigned.values())):
            continue
        order, offsets, size = pack(chosen, strategy, alignment, final=True)
        if size > memory.capacity:  # the improvement step never grows a plan; greedy fitted
            raise ZantError(f"place-memories: the scratch arena of {memory.name} grew to {size:,} B")
        for slot, offset in zip(order, offsets):
            for member in slot.members:
                member.buffer.offset = IntegerAttr(offset, 64)
                member.buffer.memory = None if memory.name == DEFAULT_ARENA else StringAttr(memory.name)
        members = [m for s in chosen for m in s.members]
        unaligned = lower_bound(make_slots(members, schedule, 1, in_place=True)) if members else 0
        arenas.append(
            ArenaOp(
                ArenaRole.SCRATCH, size, alignment, lower_bound=lower_bound(chosen) if chosen else 0,
                strategy=strategy, unaligned_lower_bound=unaligned,
                memory=None if memory.name == DEFAULT_ARENA else memory.name,
            )
        )
    point = InsertPoint.before(anchor) if anchor is not None else InsertPoint.at_end(block)
    Rewriter.insert_op(arenas, point)

    # The arenas are top-level steps too: the live steps count them again.
    schedule = Schedule.of(function)
    for life in scratch_lifetimes(function, schedule):
        life.buffer.live = StepRangeAttr(schedule.step[life.first], schedule.step[life.last])
    for arena in arenas:
        arena.steps = IntegerAttr(schedule.step_count, 64)


@dataclass(frozen=True)
class PlaceMemoriesPass(ModulePass):
    """Split every function's scratch arena over the given memories (see the module docstring)."""

    name = "place-memories"

    memories: tuple[str, ...] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        memories = parse_memories(self.memories)
        for function in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            place_function(function, memories)
