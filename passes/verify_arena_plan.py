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
  bound (one loaded from memory) is not checked;
* every op that declares its reach (`zant.ir.target_ops.declared_reach`: the asm ops of `arm_dsp`
  and `arm_mve`, whose addresses no Zig check sees) touches only bytes of the buffer each of its
  pointers addresses, in any function (an outlined kernel's buffers are its arguments, of the
  caller's buffer types): the bytes its pointer can start at (the gep's static bounds, as above)
  widened by its reach. A pointer with no static bound is not checked but counted: the module's
  `zant.asm_reach` attribute records `{checked, unresolved}` pointers (the plan JSON's
  `asm_reach`).

* every vector `uop.vload` / `uop.vstore`, in any function, touches only bytes of the buffer its
  pointer addresses: the bytes its gep can start at (as above) widened by its lanes
  (`zant.analysis.bounds.vector_reach`: lanes x element size, with the access's stride), where a
  gep's index check alone sees its first lane only. A pointer with no static bound is counted
  as the asm ops' are: the module's `zant.vector_reach` attribute (the plan JSON's
  `vector_reach`).

* every `uop.gep` marked `inbounds` (which the Zig printer emits with no run-time check), in any
  function and into any buffer, stays inside its buffer with the accesses through it
  (`zant.analysis.bounds.gep_access_range`: its elements, and a vector load's or store's lanes
  past them), whichever pass marked it: `mark-inbounds` from its proof, or a pass that made the
  gep `inbounds` from the proof of the geps it replaced (`arm-dsp-dot`, `arm-dsp-requant`,
  `arm-dsp-depthwise-rows` …). One with no static bound is a proof this check cannot redo: it
  is counted, the module's `zant.inbounds_reach` attribute (the plan JSON's `inbounds_reach`).

`verify-arena-plan{reach-only=true}` checks the last three points only: every pipeline ends
with it (`zant.pipelines.REACH_STAGE`), after `mark-inbounds`, `outline-kernels` (whose calls
hide the accesses the liveness of the other checks reads) and the passes that make the row ops,
their inbounds geps and the Helium vector forms (`mve-dot`, `mve-gather`, `mve-requantize`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from zant.dialects import abi, uop
from zant.analysis.bounds import (
    ASM_REACH_ATTRIBUTE, INBOUNDS_REACH_ATTRIBUTE, VECTOR_REACH_ATTRIBUTE, gep_access_range, gep_element_range,
    pointer_bytes, pointer_elements, vector_reach,
)
from zant.analysis.liveness import Schedule, in_place_legal, scratch_lifetimes
from zant.ir.target_ops import Reach, declared_reach
from zant.ir.types import element_bits
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


def _bytes(count: int) -> str:
    return f"{count} byte" + ("" if count == 1 else "s")


def _elements(count: int) -> str:
    return f"{count} element" + ("" if count == 1 else "s")


def _buffer_name(buffer: SSAValue, callers: dict[str, list[func.CallOp]]) -> str:
    """A buffer's tensor name, its size and a scratch buffer's place in its arena; an outlined
    kernel's argument by its callers' buffers."""
    owner, size = buffer.owner, buffer.type.byte_size  # type: ignore[attr-defined]
    if isinstance(owner, uop.DefineLocalOp | uop.DefineGlobalOp):
        where = ""
        if isinstance(owner, uop.DefineLocalOp) and owner.offset is not None:
            start = owner.offset.value.data
            where = f", at [{start}, {start + size}) in its scratch arena"
        return f"'{owner.tensor_name.data}' ({_bytes(size)}{where})"
    if isinstance(buffer, BlockArgument) and isinstance(function := buffer.owner.parent_op(), func.FuncOp):
        calls = callers.get(function.sym_name.data, ())
        return " or ".join(sorted({_buffer_name(call.arguments[buffer.index], callers) for call in calls})) or (
            f"argument {buffer.index} of @{function.sym_name.data} ({_bytes(size)})"
        )
    return f"a buffer of {_bytes(size)}"


def _callers(module: ModuleOp) -> dict[str, list[func.CallOp]]:
    """The calls of each function, by name (to name an outlined kernel's buffers)."""
    callers: dict[str, list[func.CallOp]] = {}
    for call in ops_of(module, func.CallOp):
        callers.setdefault(call.callee.root_reference.data, []).append(call)
    return callers


def _over(touched: Reach, size: int, unit=_bytes) -> str | None:
    """How far `touched` lies outside [0, size), or None if inside (in `unit`s)."""
    if touched.lo < 0:
        return f"{unit(-touched.lo)} before its start"
    if touched.hi > size:
        return f"{unit(touched.hi - size)} past its end"
    return None


def verify_reach(module: ModuleOp) -> tuple[int, int]:
    """Check every pointer, with static bounds, of every op that declares its reach; return how
    many pointers were checked and how many had no static bound. Raises naming the op, the
    pointer, the buffer and the bytes over."""
    callers = _callers(module)
    cache: dict = {}
    checked = unresolved = 0
    for op in module.walk():
        for name, reach in (declared_reach(op) or {}).items():
            start = pointer_bytes(getattr(op, name), cache)
            if start is None:
                unresolved += 1
                continue
            checked += 1
            buffer, low, high = start
            size = buffer.type.byte_size  # type: ignore[attr-defined]
            touched = Reach(low + reach.lo, high + reach.hi)
            over = _over(touched, size)
            if over is not None:
                raise VerifyException(
                    f"verify-arena-plan: {op.name}'s {name} reaches bytes {touched} of {_buffer_name(buffer, callers)}: "
                    f"{over} (its reach {reach} from a start at bytes {low}..{high})"
                )
    return checked, unresolved


def verify_vector_reach(module: ModuleOp) -> tuple[int, int]:
    """Check every vector load and store whose pointer has static bounds: its lanes, from every
    start its gep can take, inside the pointer's buffer; return how many were checked and how
    many had no static bound. Raises as `verify_reach` does, in bytes (a vector of packed
    elements: from the byte holding its first lane to the one holding its last)."""
    callers = _callers(module)
    cache: dict = {}
    checked = unresolved = 0
    for op in ops_of(module, (uop.VLoadOp, uop.VStoreOp)):
        start = pointer_elements(op.ptr, cache)
        if start is None:
            unresolved += 1
            continue
        checked += 1
        buffer, first, last = start
        bits = element_bits(op.ptr.type.element_type)  # type: ignore[attr-defined]
        low, high = first * bits // 8, last * bits // 8
        reach = vector_reach(op, last)  # the furthest its lanes go: from the last start
        touched = Reach(low + reach.lo, high + reach.hi)
        over = _over(touched, buffer.type.byte_size)  # type: ignore[attr-defined]
        if over is not None:
            raise VerifyException(
                f"verify-arena-plan: {op.name}'s ptr reaches bytes {touched} of {_buffer_name(buffer, callers)}: "
                f"{over} (its reach {reach} from a start at bytes {low}..{high})"
            )
    return checked, unresolved


def verify_inbounds_reach(module: ModuleOp) -> tuple[int, int]:
    """Check every `inbounds` gep whose indices have static bounds: every element it and the
    accesses through it reach, from every start its indices give, inside its buffer; return how
    many were checked and how many had no static bound. Raises as `verify_reach` does, in
    elements."""
    callers = _callers(module)
    cache: dict = {}
    checked = unresolved = 0
    for gep in ops_of(module, uop.GepOp):
        if gep.inbounds is None:
            continue
        reach = gep_access_range(gep, cache)
        if reach is None:
            unresolved += 1
            continue
        checked += 1
        count = gep.buffer.type.size.data  # type: ignore[attr-defined]
        touched = Reach(reach[0], reach[1] + 1)
        over = _over(touched, count, _elements)
        if over is not None:
            first, last = gep_element_range(gep, cache)  # type: ignore[misc]  (known: reach is)
            raise VerifyException(
                f"verify-arena-plan: an inbounds uop.gep reaches elements {touched} of the {count} of "
                f"{_buffer_name(gep.buffer, callers)}: {over} (its accesses {_elements(reach[1] - last)} "
                f"on from a start at elements {first}..{last})"
            )
    return checked, unresolved


@dataclass(frozen=True)
class VerifyArenaPlanPass(ModulePass):
    """Fail unless the arena plan of every function is sound (see the module docstring)."""

    name = "verify-arena-plan"

    reach_only: bool = False
    """Check only the reach of the ops that declare one, of the vector accesses and of the
    `inbounds` geps (after `outline-kernels`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.reach_only:
            for function in ops_of(op, func.FuncOp):
                verify_function(function)
        for attribute, (checked, unresolved) in (
            # the inbounds geps before the vector accesses: a vector's lanes through an inbounds
            # gep past its buffer are the gep's proof gone wrong, said in its elements
            (ASM_REACH_ATTRIBUTE, verify_reach(op)), (INBOUNDS_REACH_ATTRIBUTE, verify_inbounds_reach(op)),
            (VECTOR_REACH_ATTRIBUTE, verify_vector_reach(op)),
        ):
            if checked or unresolved:
                counts = {"checked": IntegerAttr(checked, 64), "unresolved": IntegerAttr(unresolved, 64)}
                op.attributes[attribute] = DictionaryAttr(counts)
