"""`mve-gather`: strided int8 copies as Helium (MVE) gathers.

`uop.vload %p stride s : vector<8xi8>` reads every s-th byte from `%p`; the Zig printer spells
it as a portable gather, which LLVM makes 8 byte loads and lane inserts on the Cortex-M55.
Where every use of it is a contiguous `uop.vstore` (a copy: `conv_depthwise_mve` copies a column
of a channel's plane into its transposed buffer so), the load becomes `arm_mve.vldrb_gather %p
[0, s, …, 7·s]` (`VLDRB.S16`: each byte into a 16-bit lane) and each store an
`arm_mve.vstrb_scatter` at offsets 0 to 7 (`VSTRB.16`: the low bytes, contiguous): 2
instructions per 8 bytes (KWS's 25-row columns: 8 instructions where 50 byte loads and stores
were).

16 lanes are left as they are: `vldrb_gather` gives them as two 8-lane gathers joined by a
shuffle, which LLVM takes apart into byte stores when its value is stored.

Exact: the same bytes, each sign-extended into its lane and its low byte stored. Only `inbounds`
geps qualify (a checked gep's check is the portable gather's, lane by lane), offsets within 16
bits: run it after `mark-inbounds`, on cores with MVE (`zant.pipelines`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects import arm_mve, uop
from zant.dialects.zant import require_feature
from zant.ir.walk import ops_of

BYTES = list(range(arm_mve.GATHER_LANES))
"""The offsets of a contiguous `VSTRB.16`."""


def _inbounds(ptr) -> bool:
    gep = ptr.owner
    return isinstance(gep, uop.GepOp) and gep.inbounds is not None


def _copy(load: uop.VLoadOp) -> list[uop.VStoreOp] | None:
    """The stores of a strided 8-lane int8 `load` when they are its only uses, each contiguous
    through an `inbounds` gep (and the load's gep one too, its offsets within 16 bits); else
    None."""
    vector = load.result.type
    if load.element_stride == 1 or vector.element_type != IntegerType(8) or uop.lanes(vector) != arm_mve.GATHER_LANES:
        return None
    if not _inbounds(load.ptr) or (arm_mve.GATHER_LANES - 1) * load.element_stride > arm_mve.MAX_OFFSET:
        return None
    stores = [use.operation for use in load.result.uses]
    if not stores or not all(
        isinstance(s, uop.VStoreOp) and s.value == load.result and s.element_stride == 1 and _inbounds(s.ptr)
        for s in stores
    ):
        return None
    return stores  # type: ignore[return-value]


@dataclass(frozen=True)
class MveGatherPass(ModulePass):
    """Strided int8 copies of 8 bytes as `arm_mve.vldrb_gather` and a narrowing `vstrb_scatter`."""

    name = "mve-gather"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_feature(op, self.name, "mve", "Helium (MVE)")
        for load in list(ops_of(op, uop.VLoadOp)):
            stores = _copy(load)
            if stores is None:
                continue
            gather = arm_mve.VldrbGatherOp(load.ptr, [k * load.element_stride for k in BYTES])
            gather.location = load.location
            Rewriter.insert_op(gather, InsertPoint.before(load))
            for store in stores:
                scatter = arm_mve.VstrbScatterOp(gather.result, store.ptr, BYTES)
                scatter.location = store.location
                Rewriter.replace_op(store, scatter, [])
            Rewriter.erase_op(load)
