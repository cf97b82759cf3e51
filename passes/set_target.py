"""`set-target`: the module's target, set once, for the passes after it to read.

    zant-opt model.onnx -p 'set-target{target=cortex-m4},…'
    zant-opt model.onnx -p 'set-target{target=host cpu=x86-64-avx2},…'

writes `zant.target = #zant.target<"cortex-m4">` on the module (`zant.dialects.zant.TargetAttr`):
a name of `zant.targets.RECORDS` and, for the host, the name of its CPU's description
(`zant.targets.CPUS`; `zant.pipelines.pipeline_for("host")` names this machine's). Every pipeline
of `zant.pipelines` begins with it, and spells no parameter the target decides: `onnx-to-uop`,
`split-index-sets`, `vectorize`, `expand-transcendentals`, `contract-mulacc`, `arm-dsp-dot` and
`mve-dot` read theirs from this attribute (`zant.dialects.zant.target_parameters`).

A module that already has a target keeps it if it is the same; another is an error (a module's
passes may already have been shaped for the first one).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from zant.dialects.zant import TARGET, TargetAttr, module_target
from zant.errors import ZantError


@dataclass(frozen=True)
class SetTargetPass(ModulePass):
    """Set the module's `zant.target` to `target` (with `cpu` for the host)."""

    name = "set-target"

    target: str
    cpu: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            attr = TargetAttr(self.target, self.cpu)
        except VerifyException as error:
            raise ZantError(f"set-target: {error}") from error
        existing = module_target(op)
        if existing is not None and existing != attr:
            raise ZantError(f"set-target: the module's target is already {existing}, not {attr}")
        op.attributes[TARGET] = attr
