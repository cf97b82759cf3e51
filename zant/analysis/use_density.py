"""How often each scratch buffer is touched per byte: what decides which memory of a board holds it.

An access is a load or store through a `uop.gep` of the buffer (looking through `uop.view`),
counted once per iteration of every `uop.range` around it: a load inside loops of 10 and 4
iterations counts 40. A buffer's density is its accesses divided by its bytes: a small buffer
read in an inner loop is worth more fast memory than a large one read once.

`place-memories` reads it; it changes nothing in the IR.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from zant.dialects.uop import BufferType, DefineLocalOp, GepOp, RangeOp, ViewOp


def trip_count(loop: RangeOp) -> int:
    start, end, step = loop.start.data, loop.end.data, loop.step.data
    if step <= 0 or end <= start:
        return 0
    return -(-(end - start) // step)


def iterations(op: Operation) -> int:
    """How many times `op` runs per call: the product of the trip counts of the loops around it."""
    count = 1
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, RangeOp):
            count *= trip_count(parent)
        parent = parent.parent_op()
    return count


def _geps(value: SSAValue):
    for use in value.uses:
        if isinstance(use.operation, ViewOp):
            yield from _geps(use.operation.result)
        elif isinstance(use.operation, GepOp):
            yield use.operation


def accesses(buffer: DefineLocalOp) -> int:
    """Loads and stores of `buffer` per call: every use of each of its geps, times its loops."""
    return sum(iterations(use.operation) for gep in _geps(buffer.result) for use in gep.result.uses)


@dataclass(frozen=True)
class UseDensity:
    buffer: DefineLocalOp
    accesses: int
    size: int  # bytes

    @property
    def density(self) -> float:
        return self.accesses / max(self.size, 1)


def use_densities(function: func.FuncOp) -> dict[DefineLocalOp, UseDensity]:
    """Every scratch buffer of `function` with its accesses per call and its size."""
    result = {}
    for op in function.walk():
        if isinstance(op, DefineLocalOp):
            buffer_type = op.result.type
            assert isinstance(buffer_type, BufferType)
            result[op] = UseDensity(op, accesses(op), buffer_type.byte_size)
    return result
