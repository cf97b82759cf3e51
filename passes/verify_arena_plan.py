"""`verify-arena-plan`: check an arena plan independently of the planner that made it.

Fails (naming the buffers or the op) unless, in every function:

* there is a scratch arena (`abi.arena "scratch"`) and every `uop.define_local` has an offset,
  aligned to the alignment of its arena (the one of its memory, `place-memories`), with the
  whole buffer inside that arena;
* no two scratch buffers of one arena live at the same time (`zant.analysis.liveness`) share a byte, except a
  pair written in place: same offset, legal by `in_place_legal` at the loop nest where one dies
  and the other is born (element for element, same type; or, in a nest `schedule-in-place`
  marked, by the staged rule, which enumerates every access of the nest);
* every `uop.gep` into a scratch buffer stays inside it, from static bounds of its indices (loop
  ranges, constants, index arithmetic) and the view's strides and offset. An index with no static
  bound (one loaded from memory) is not checked.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from zant.dialects import abi, uop
from zant.analysis.bounds import gep_element_range
from zant.analysis.liveness import Schedule, in_place_legal, scratch_lifetimes
from zant.ir.walk import ops_of


def _geps(value: SSAValue):
    for use in value.uses:
        if isinstance(use.operation, uop.ViewOp):
            yield from _geps(use.operation.result)
        elif isinstance(use.operation, uop.GepOp):
            yield use.operation


def _memory(op: abi.ArenaOp | uop.DefineLocalOp) -> str | None:
    return None if op.memory is None else op.memory.data


def verify_function(function: func.FuncOp) -> None:
    arenas = {
        _memory(op): op
        for op in function.body.block.ops
        if isinstance(op, abi.ArenaOp) and op.role.data == abi.ArenaRole.SCRATCH
    }
    if not arenas:
        raise VerifyException(f"verify-arena-plan: @{function.sym_name.data} has no scratch arena (run plan-arenas)")
    schedule = Schedule.of(function)
    lifetimes = scratch_lifetimes(function, schedule)
    for life in lifetimes:
        if life.buffer.offset is None:
            raise VerifyException(f"verify-arena-plan: scratch buffer '{life.name}' has no offset")
        arena = arenas.get(_memory(life.buffer))
        if arena is None:
            raise VerifyException(
                f"verify-arena-plan: scratch buffer '{life.name}' is in memory "
                f"'{_memory(life.buffer)}', which has no scratch arena"
            )
        size, alignment = arena.size.value.data, arena.alignment.value.data
        offset = life.buffer.offset.value.data
        if offset % alignment:
            raise VerifyException(
                f"verify-arena-plan: scratch buffer '{life.name}' at offset {offset} is not aligned to {alignment}"
            )
        if offset + life.size > size:
            raise VerifyException(
                f"verify-arena-plan: scratch buffer '{life.name}' at [{offset}, {offset + life.size}) "
                f"lies outside the scratch arena of {size} bytes"
            )
    placed = sorted(lifetimes, key=lambda l: l.buffer.offset.value.data)  # type: ignore[union-attr]
    for i, a in enumerate(placed):
        a_start = a.buffer.offset.value.data  # type: ignore[union-attr]
        for b in placed[i + 1 :]:
            b_start = b.buffer.offset.value.data  # type: ignore[union-attr]
            if b_start >= a_start + a.size:
                break
            if _memory(a.buffer) != _memory(b.buffer):
                continue
            if b.size == 0 or a.size == 0 or not a.overlaps(b):
                continue
            if a_start == b_start:
                first, second = (a, b) if a.first < b.first else (b, a)
                if in_place_legal(first, second, schedule) is not None:
                    continue
            raise VerifyException(
                f"verify-arena-plan: scratch buffers '{a.name}' [{a_start}, {a_start + a.size}) and "
                f"'{b.name}' [{b_start}, {b_start + b.size}) overlap while both are live "
                f"(steps {schedule.step[max(a.first, b.first)]}..{schedule.step[min(a.last, b.last)]})"
            )
    cache: dict = {}
    for life in lifetimes:
        count = life.buffer.result.type.size.data  # type: ignore[attr-defined]
        for gep in _geps(life.buffer.result):
            reach = gep_element_range(gep, cache)
            if reach is not None and (reach[0] < 0 or reach[1] >= count):
                raise VerifyException(
                    f"verify-arena-plan: a uop.gep into '{life.name}' reaches elements "
                    f"{reach[0]}..{reach[1]}, outside its {count} elements"
                )


@dataclass(frozen=True)
class VerifyArenaPlanPass(ModulePass):
    """Fail unless the arena plan of every function is sound (see the module docstring)."""

    name = "verify-arena-plan"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in ops_of(op, func.FuncOp):
            verify_function(function)
