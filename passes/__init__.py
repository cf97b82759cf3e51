"""Zant's passes, found by convention: the pass `foo-bar` is the `ModulePass` subclass named
`foo-bar` in the module (or package) `zant.passes.foo_bar`. Adding a pass is adding its module;
there is no table to extend.

Listing the passes reads the package's directory (`pkgutil`), importing nothing: `zant-opt`
imports a pass's module only when a pipeline names it (tests/test_startup_imports.py).

Passes from outside the tree (files, modules, installed packages) join these in zant/plugins.py,
one layer up: `zant.plugins.all_passes()` is what the tools register.
"""

import importlib
import inspect
import pkgutil
from collections.abc import Callable

from xdsl.passes import ModulePass

MODULE_OF_PASS: dict[str, str] = {
    "licm": "loop_invariant_code_motion",
}
"""The passes whose module is not named after them (pass name → module). This table may only
shrink (tests/test_zant_opt.py): a new pass is named as its module."""


def module_name(name: str) -> str:
    """The module of `zant.passes` that defines the pass `name`."""
    return MODULE_OF_PASS.get(name, name.replace("-", "_"))


def pass_names() -> list[str]:
    """The names of Zant's passes, sorted: one per module of this package (none imported)."""
    aliased = {module: name for name, module in MODULE_OF_PASS.items()}
    modules = (info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))
    return sorted(aliased.get(m, m.replace("_", "-")) for m in modules)


def pass_class(name: str) -> type[ModulePass]:
    """Import the module of the pass `name` and return the `ModulePass` subclass it defines under
    that name."""
    module = importlib.import_module(f"{__name__}.{module_name(name)}")
    for cls in vars(module).values():
        if (
            inspect.isclass(cls)
            and issubclass(cls, ModulePass)
            and cls.__module__ in (module.__name__, module.__name__ + ".__init__")
            and getattr(cls, "name", None) == name
        ):
            return cls
    raise LookupError(f"module '{module.__name__}' defines no ModulePass named '{name}'")


def builtin_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Lazy factories for Zant's own passes, by name."""
    return {name: (lambda name=name: pass_class(name)) for name in pass_names()}
