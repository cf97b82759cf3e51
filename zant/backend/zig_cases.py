"""Print cases of target dialects' ops.

The generic Zig printer (`zant.backend.zig_printer`) names no target op: an op it has no case
for is looked up here by its class (`case_for`). A target op declares its own Zig
(`zant.ir.target_ops`: its helper functions and its call, beside the op in its dialect module),
so one case, `print_declared`, prints every such op; nothing here names a target dialect. A case
that cannot be said as data may still be registered by class (`print_case`).

A case is `case(printer, op)`, written with the printer's own vocabulary (`printer.expr`,
`printer.define`, `printer.call_helper`), as a case inside the printer would be.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from xdsl.ir import Operation

from zant.backend.zig_helpers import HELPERS, Helpers
from zant.ir.target_ops import ZigHelper, declares_target_semantics

PrintCase = Callable[[Any, Operation], None]
"""How one op prints: called with the printer and the op."""

_CASES: dict[type[Operation], PrintCase] = {}
_TARGET_HELPERS: dict[str, ZigHelper] = {}


def print_case(op_class: type[Operation]) -> Callable[[PrintCase], PrintCase]:
    """Register the decorated function as the Zig print case of `op_class`."""

    def register(case: PrintCase) -> PrintCase:
        _CASES[op_class] = case
        return case

    return register


def register_helpers(helpers: Iterable[ZigHelper]) -> None:
    """Make target helper functions printable by name (beside `zig_helpers.HELPERS`)."""
    for helper in helpers:
        if helper.name in HELPERS:
            raise ValueError(f"target helper named as a generic one: {helper.name}")
        known = _TARGET_HELPERS.get(helper.name)
        if known is not None and known != helper:
            raise ValueError(f"two target helpers named {helper.name} with different sources")
        _TARGET_HELPERS[helper.name] = helper


def case_for(op_class: type[Operation]) -> PrintCase | None:
    """The print case of `op_class`: the one registered for it, else `print_declared` for an op
    that declares its Zig (its helpers registered the first time); None if there is none."""
    case = _CASES.get(op_class)
    if case is None and declares_target_semantics(op_class):
        register_helpers(op_class.ZIG_HELPERS)  # type: ignore[attr-defined]
        case = _CASES[op_class] = print_declared
    return case


def print_declared(printer, op: Operation) -> None:
    """Print an op from its declaration: its call (`ZigCall`) on its operands' expressions (a
    packed pointer's as two, `operand_expr`), the helper it calls noted (`printer.call_helper`:
    it and those it calls are emitted); several results are the call's array, named once
    (`ZIG_RESULTS`) and indexed; none, a statement."""
    multiple = len(op.results) > 1
    array = printer.namer.fresh(op.ZIG_RESULTS) if multiple else ""  # type: ignore[attr-defined]
    call = op.zig_call([printer.operand_expr(v) for v in op.operands])  # type: ignore[attr-defined]
    if call.helper not in {h.name for h in op.ZIG_HELPERS}:  # type: ignore[attr-defined]
        raise ValueError(f"{op.name} calls {call.helper}, which its ZIG_HELPERS do not declare")
    printer.call_helper(call.helper)
    if not op.results:  # a store: a statement
        printer.emit(f"{call};")
        return
    if not multiple:
        printer.define(op.results[0], str(call))
        return
    printer.emit(f"const {array} = {call};")
    for i, result in enumerate(op.results):
        printer.define(result, f"{array}[{i}]")


def all_helpers() -> Helpers:
    """Every helper a printed file may use: the generic ones and the target ones registered so
    far (a helper in use was registered by the case that used it)."""
    return HELPERS | _TARGET_HELPERS
