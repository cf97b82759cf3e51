"""`flush-denormals`: the host entry point runs with subnormal floats flushed to zero.

    zant compile model.onnx --pipeline "$(zant-default host pipeline),flush-denormals"
    zant-opt planned.mlir -p flush-denormals

Off by default. Marks the module's entry function with `zant.flush_denormals`; the Zig printer
then makes `NAME_predict` save the caller's floating-point control register, set
flush-to-zero and denormals-are-zero for the call, and restore the saved value on every return
(x86-64: MXCSR's FTZ and DAZ bits; AArch64: FPCR's FZ bit), so the caller's own arithmetic is
unchanged. Why: an f32 operation with a subnormal operand or result is microcoded on x86 cores;
a bias-free Conv+Relu stack whose activations are all subnormal ran 133x slower than with normal
ones on an AVX-512 host (onnxruntime: 93x), an MLP of MatMul+Relu 81x (docs/measurements.md).
The cost: subnormal values (below 1.2e-38 in magnitude) become 0, so outputs may differ from
the IEEE result where a model computes with them.

Only for the host (x86-64 or AArch64 CPUs): a microcontroller target, or a host CPU of another
architecture, is an error naming the target.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.passes import ModulePass

from zant.dialects.zant import module_target
from zant.errors import ZantError

FLUSH_DENORMALS = "zant.flush_denormals"
"""The entry function's attribute the Zig printer reads."""

ARCHITECTURES = ("x86-64-", "x86-", "aarch64-")
"""Host CPU descriptions (`zant.targets.CPUS`) whose control register the printer sets."""


@dataclass(frozen=True)
class FlushDenormalsPass(ModulePass):
    """Mark the module's public entry function `zant.flush_denormals` (host targets only)."""

    name = "flush-denormals"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = module_target(op)
        if target is None or target.target.data != "host" or not target.cpu.data.startswith(ARCHITECTURES):
            where = "no target" if target is None else f"target {target.target.data} {target.cpu.data}".strip()
            raise ZantError(
                f"flush-denormals: only the host's x86 and AArch64 CPUs have a flush-to-zero mode Zant sets ({where})"
            )
        entries = [
            f for f in op.ops
            if isinstance(f, func.FuncOp) and (f.sym_visibility is None or f.sym_visibility.data != "private")
        ]
        if len(entries) != 1:
            raise ZantError(f"flush-denormals: expected one public func.func, found {len(entries)}")
        entries[0].attributes[FLUSH_DENORMALS] = UnitAttr()
