"""`mark-inbounds`: mark every `uop.gep` proven inside its buffer `inbounds`.

A gep is proven when static bounds of its indices (loop ranges, constants, index arithmetic;
`zant.analysis.bounds`) keep every element it addresses, and the lanes of the vector loads and
stores through it, inside its buffer, and every part of its address (each index's arithmetic,
each product by a stride, each partial sum) fits a 32-bit `isize`, so the printer may compute it
with wrapping arithmetic. The Zig printer emits no run-time check for an `inbounds`
gep and a checked access (a trap in ReleaseSafe) for any other; so ReleaseSafe keeps a check
exactly where this pass could not prove one unnecessary. A gep already marked stays marked.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.passes import ModulePass

from zant.analysis.bounds import proven_in_bounds
from zant.dialects import uop
from zant.ir.walk import ops_of


@dataclass(frozen=True)
class MarkInboundsPass(ModulePass):
    """Set `inbounds` on the geps whose every address is proven inside their buffer."""

    name = "mark-inbounds"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cache: dict = {}
        for gep in ops_of(op, uop.GepOp):
            if gep.inbounds is None and proven_in_bounds(gep, cache):
                gep.inbounds = UnitAttr()
