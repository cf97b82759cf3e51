"""The `zig` target of `zant-opt`: `-t zig` or `-t 'zig{name=net}'` prints the model's Zig file.

The module must be planned and its geps linearized (`zant-opt model.mlir -p
plan-arenas,linearize-geps -t zig`; the default pipelines also run `zant.pipelines.PRINT_STAGES`):
the target prints what the passes decided and refuses a module they have not prepared, naming
the pass to run. Constants are printed inline in the file (`zant compile` writes them beside it),
where the plan put them (`plan-arenas{constants=staged}` or `{constants=external}` for the other
arena modes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.arg_spec import ArgSpec
from xdsl.utils.target import Target

from zant.backend.zig_printer import ZigPrinter
from zant.dialects.abi import is_planned
from zant.errors import ZantError


@dataclass(frozen=True)
class ZigTarget(Target):
    name: ClassVar[str] = "zig"

    prefix: str = "model"
    """The symbol prefix (`NAME_predict`, `NAME_scratch` …); a C identifier."""

    @classmethod
    def from_spec(cls, spec: ArgSpec) -> ZigTarget:
        # `name` is the option users write (`zig{name=net}`), but a spec field called `name` is
        # reserved for the target's own name, so it is stored as `prefix`.
        parameters = dict(spec.normalize_parameter_names().parameters)
        if "name" in parameters:
            parameters["prefix"] = parameters.pop("name")
        return super().from_spec(ArgSpec(spec.name, parameters))

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if not is_planned(module):
            raise ZantError(
                "the zig target prints a planned module: run the plan-arenas pass first "
                "(zant-opt -p plan-arenas -t zig)"
            )
        ZigPrinter(module, self.prefix).print_module(output)
