"""`plan-arenas`: give every scratch buffer (`uop.define_local`) a byte offset in one scratch arena.

This first planner is deliberately trivial: each buffer gets its own slot, in program order, each
slot aligned to `alignment` bytes; nothing is reused yet (a later planner works from liveness).
The function records the arena envelope as `uop.scratch_size` and `uop.alignment` (bytes, i64).
Running the pass twice gives the same IR: offsets are recomputed from scratch every time.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass

from zant.dialects.uop import BufferType, DefineLocalOp
from zant.errors import ZantError

SCRATCH_SIZE_ATTR = "uop.scratch_size"
ALIGNMENT_ATTR = "uop.alignment"


def align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def plan_function(function: func.FuncOp, alignment: int) -> int:
    """Place the define_locals of `function` one after the other; return the arena size."""
    cursor = 0
    for op in function.walk():
        if isinstance(op, DefineLocalOp):
            buffer_type = op.result.type
            assert isinstance(buffer_type, BufferType)
            offset = align_up(cursor, alignment)
            op.offset = IntegerAttr(offset, 64)
            cursor = offset + buffer_type.byte_size
    size = align_up(cursor, alignment)
    function.attributes[SCRATCH_SIZE_ATTR] = IntegerAttr(size, 64)
    function.attributes[ALIGNMENT_ATTR] = IntegerAttr(alignment, 64)
    return size


def is_planned(module: ModuleOp) -> bool:
    """True if every define_local has an offset and every function records its arena."""
    for op in module.walk():
        if isinstance(op, DefineLocalOp) and op.offset is None:
            return False
        if isinstance(op, func.FuncOp) and SCRATCH_SIZE_ATTR not in op.attributes:
            return False
    return True


@dataclass(frozen=True)
class PlanArenasPass(ModulePass):
    """Assign scratch-arena offsets to every `uop.define_local` (one aligned slot each)."""

    name = "plan-arenas"

    alignment: int = 16

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.alignment <= 0 or self.alignment & (self.alignment - 1):
            raise ZantError(f"plan-arenas: alignment must be a power of two, got {self.alignment}")
        for function in op.walk():
            if isinstance(function, func.FuncOp):
                plan_function(function, self.alignment)
