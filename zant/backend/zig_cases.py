"""Print cases of target dialects' ops, registered by the target's own modules.

The generic Zig printer (`zant.backend.zig_printer`) names no target op: an op it has no case
for is looked up here by its class. A target dialect `D` keeps its Zig in
`zant.backend.zig_D` (`zig_arm_dsp`, `zig_arm_mve`), which registers, when imported, a case per
op (`@print_case(D.SomeOp)`) and the helper functions those cases emit (`register_helpers`).
Nothing imports those modules up front: the first op of dialect `D` the printer meets imports
`zant.backend.zig_D` (`case_for`), so a module without target ops never loads them.

A case is `case(printer, op)`, written with the printer's own vocabulary (`printer.expr`,
`printer.define`, `printer.helpers_used`), as a case inside the printer would be.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

from xdsl.ir import Operation

from zant.backend.zig_helpers import HELPERS

PrintCase = Callable[[Any, Operation], None]
"""How one op prints: called with the printer and the op."""

_CASES: dict[type[Operation], PrintCase] = {}
_TARGET_HELPERS: dict[str, tuple[tuple[str, ...], str]] = {}
_LOADED: set[str] = set()  # dialects whose zig_D module has been looked for


def print_case(op_class: type[Operation]) -> Callable[[PrintCase], PrintCase]:
    """Register the decorated function as the Zig print case of `op_class`."""

    def register(case: PrintCase) -> PrintCase:
        _CASES[op_class] = case
        return case

    return register


def register_helpers(helpers: dict[str, tuple[tuple[str, ...], str]]) -> None:
    """Make a target's helper functions (name: (helpers it calls, source), as
    `zig_helpers.HELPERS`) printable by name."""
    clash = HELPERS.keys() & helpers.keys()
    if clash:
        raise ValueError(f"target helpers named as generic ones: {', '.join(sorted(clash))}")
    _TARGET_HELPERS.update(helpers)


def case_for(op_class: type[Operation]) -> PrintCase | None:
    """The registered print case of `op_class`, importing its dialect's `zant.backend.zig_D`
    module the first time one of its ops is asked for; None if there is none."""
    case = _CASES.get(op_class)
    if case is not None:
        return case
    dialect = op_class.name.split(".", 1)[0]
    if dialect not in _LOADED:
        _LOADED.add(dialect)
        module = f"{__package__}.zig_{dialect}"
        try:
            import_module(module)
        except ModuleNotFoundError as error:
            if error.name != module:  # the module exists but imports something missing
                raise
    return _CASES.get(op_class)


def all_helpers() -> dict[str, tuple[tuple[str, ...], str]]:
    """Every helper a printed file may use: the generic ones and those the target modules
    loaded so far registered (a helper in use was registered by the case that used it)."""
    return HELPERS | _TARGET_HELPERS
