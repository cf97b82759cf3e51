"""`zant`: attributes about the whole module (no ops).

* `#zant.target<"cortex-m4">`, `#zant.target<"host", cpu = "x86-64-avx2">` — the target a module
  is compiled for: a name of `zant.targets.RECORDS` (and, for the host, a name of
  `zant.targets.CPUS`: the host's vector width and register tiles come from its CPU). Carried by
  the module as its `zant.target` attribute, set once by the `set-target` pass that begins every
  pipeline (`zant.pipelines`). The passes read their parameters from it (`target_parameters`):
  `onnx-to-uop`'s vector lanes, register tiles and channel blocks, `split-index-sets` and
  `vectorize`'s width, `expand-transcendentals`' and `contract-mulacc`'s fused multiply-adds, and
  whether `arm-dsp-dot` and `mve-dot` may run; each pass's own option, when given, overrides it.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException, VerifyException

from zant.targets import CPUS, RECORDS, PassParameters, Target

TARGET = "zant.target"
"""The module attribute holding the module's `TargetAttr`."""

HOT = "zant.hot"
"""The unit attribute of a kernel function built for speed in a build for size (set by
`mark-hot-kernels`, read by the Zig printer)."""


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """`#zant.target<"NAME">` or `#zant.target<"host", cpu = "CPU">`: the module's target, a key of
    `zant.targets.RECORDS` (the host's with a key of `zant.targets.CPUS`)."""

    name = "zant.target"

    target: StringAttr
    cpu: StringAttr
    """The host's CPU description; empty for a microcontroller."""

    def __init__(self, target: str, cpu: str = ""):
        super().__init__(StringAttr(target), StringAttr(cpu))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            target = parser.parse_str_literal(" (the target's name, quoted)")
            cpu = ""
            if parser.parse_optional_punctuation(","):
                parser.parse_keyword("cpu")
                parser.parse_punctuation("=")
                cpu = parser.parse_str_literal(" (the host CPU's name, quoted)")
        return [StringAttr(target), StringAttr(cpu)]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(self.target.data)
        if self.cpu.data:
            printer.print_string(", cpu = ")
            printer.print_string_literal(self.cpu.data)
        printer.print_string(">")

    def verify(self) -> None:
        name, cpu = self.target.data, self.cpu.data
        if name not in RECORDS:
            raise VerifyException(f"unknown target '{name}' (one of {', '.join(RECORDS)})")
        if RECORDS[name].is_mcu and cpu:
            raise VerifyException(f"the CPU of a host is given, not of {name} (cpu = '{cpu}')")
        if not RECORDS[name].is_mcu and cpu not in CPUS:
            raise VerifyException(
                f"the host target needs its CPU, one of {', '.join(CPUS)} (cpu = \"…\")"
                + (f"; '{cpu}' is none of them" if cpu else "")
            )

    @property
    def record(self) -> Target:
        return RECORDS[self.target.data]

    @property
    def parameters(self) -> PassParameters:
        return self.record.parameters(CPUS[self.cpu.data] if self.cpu.data else None)


def module_target(module: ModuleOp) -> TargetAttr | None:
    """The module's target, or None if it has none (a hand-written module: the passes' defaults)."""
    attr = module.attributes.get(TARGET)
    if attr is not None and not isinstance(attr, TargetAttr):
        raise VerifyException(f"the module's {TARGET} is a {attr.name}, not a #zant.target")
    return attr


def target_parameters(module: ModuleOp) -> PassParameters:
    """The pass parameters of the module's target; a module without one gets the passes' own
    defaults (`PassParameters()`)."""
    target = module_target(module)
    return target.parameters if target is not None else PassParameters()


def require_feature(module: ModuleOp, pass_name: str, feature: str, label: str) -> None:
    """Refuse to run `pass_name` on a module whose target lacks `feature` (a boolean of
    `PassParameters`: `dsp`, `mve`), which it would emit instructions of; a module without a
    target is taken at its word."""
    target = module_target(module)
    if target is not None and not getattr(target.parameters, feature):
        raise PassFailedException(
            f"the module's target {target} has no {label}; its pipeline does not run {pass_name}"
        )


Zant = Dialect("zant", [], [TargetAttr])
