"""`contract-mulacc`: choose which float `uop.mulacc`s are fused multiply-adds.

`-p 'contract-mulacc{vector=true scalar=false}'` sets `fused` on the float multiply-accumulates
of vector accumulators and leaves the scalar ones unfused. `scalar` defaults to whether the
module's target has an FPU (`#zant.target`: its scalar `vfma.f32`/`fmadd.s`; false without a
target), `vector` to true. A fused one
(`acc + x·y` rounded once, `@mulAdd` in Zig) is faster where the hardware has an FMA and the
loops are vectorized, which is where the FLOPs are; an unfused one rounds the product, then the
sum, as the scalar reference does. The choice is visible in the IR, so numerics by path are too.
Integer and i1 accumulators have nothing to fuse; a `fused` mulacc stays fused.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr, VectorType
from xdsl.passes import ModulePass

from zant.dialects import uop
from zant.dialects.zant import target_parameters
from zant.ir.walk import ops_of


@dataclass(frozen=True)
class ContractMulaccPass(ModulePass):
    """Mark float `uop.mulacc`s `fused`: those of vector accumulators, of scalar ones, or both."""

    name = "contract-mulacc"

    vector: bool = True
    scalar: bool | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        scalar = target_parameters(op).float_registers > 0 if self.scalar is None else self.scalar
        for mulacc in ops_of(op, uop.MulAccOp):
            if not uop.is_float_type(uop.lane_type(mulacc.lhs.type)):
                continue
            if self.vector if isinstance(mulacc.lhs.type, VectorType) else scalar:
                mulacc.fused = UnitAttr()
