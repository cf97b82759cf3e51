"""Passes from outside the tree: a researcher's Python file, a module, or an installed package.

Two ways in, both ending as lazy factories beside Zant's own passes (`zant.passes.builtin_passes`):

* `--load-passes SPEC` (zant-opt, `zant compile`, the benchmarks): SPEC is a `.py` file or an
  importable module name; every `ModulePass` subclass the module defines (with a `name`) is
  registered under that name;
* an entry point in the group `zant.passes` of an installed distribution, named after the pass:
  `[project.entry-points."zant.passes"] my-fusion = "my_pkg.fusion:MyFusionPass"`; it is imported
  only when a pipeline names it.

A plugin may not take the name of a built-in pass, nor two plugins one name: the error says which.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import warnings
from collections.abc import Callable, Iterable
from importlib.metadata import entry_points
from types import ModuleType

from xdsl.passes import ModulePass

from zant.errors import ZantError

ENTRY_POINT_GROUP = "zant.passes"

PassFactory = Callable[[], type[ModulePass]]


def load_module(spec: str) -> ModuleType:
    """Import a plugin given as a path to a `.py` file or as a module name."""
    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        path = os.path.abspath(spec)
        if not os.path.isfile(path):
            raise ZantError(f"cannot load passes from '{spec}': no such file")
        # A stable private name per file: loading the same file twice yields one module.
        name = "zant_plugin_" + hashlib.sha1(path.encode()).hexdigest()[:12]
        if name in sys.modules:
            return sys.modules[name]
        module_spec = importlib.util.spec_from_file_location(name, path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as error:
            del sys.modules[name]
            raise ZantError(f"cannot load passes from '{spec}': {type(error).__name__}: {error}") from error
        return module
    try:
        return importlib.import_module(spec)
    except Exception as error:
        raise ZantError(f"cannot load passes from module '{spec}': {type(error).__name__}: {error}") from error


def passes_in(module: ModuleType) -> list[type[ModulePass]]:
    """The named `ModulePass` subclasses a module defines (not those it merely imports)."""
    return [
        cls
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, ModulePass)
        and cls.__module__ == module.__name__
        and not inspect.isabstract(cls)
        and isinstance(getattr(cls, "name", None), str)
        and cls.name
    ]


def load_pass_plugins(specs: Iterable[str], taken: Iterable[str]) -> dict[str, PassFactory]:
    """Factories for the passes in each plugin of `specs`; `taken` are the names already in use."""
    used = set(taken)
    found: dict[str, PassFactory] = {}
    for spec in specs:
        classes = passes_in(load_module(spec))
        if not classes:
            raise ZantError(f"'{spec}' defines no ModulePass subclass with a `name`")
        for cls in classes:
            if cls.name in used or cls.name in found:
                raise ZantError(f"pass '{cls.name}' from '{spec}' clashes with a pass of the same name")
            found[cls.name] = lambda cls=cls: cls
    return found


def entry_point_passes(taken: Iterable[str]) -> dict[str, PassFactory]:
    """Lazy factories for the passes installed packages declare in the `zant.passes` group."""
    used = set(taken)
    found: dict[str, PassFactory] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name in used:
            warnings.warn(f"ignoring the installed pass '{entry.name}' ({entry.value}): a built-in pass has that name")
            continue

        def factory(entry=entry) -> type[ModulePass]:
            try:
                cls = entry.load()
            except Exception as error:
                raise ZantError(f"cannot load pass '{entry.name}' ({entry.value}): {error}") from error
            if not (inspect.isclass(cls) and issubclass(cls, ModulePass)):
                raise ZantError(f"entry point '{entry.name}' ({entry.value}) is not a ModulePass class")
            return cls

        found[entry.name] = factory
    return found


def all_passes() -> dict[str, PassFactory]:
    """Zant's own passes and those of installed packages (the `zant.passes` entry point group)."""
    from zant.passes import builtin_passes

    builtin = builtin_passes()
    return builtin | entry_point_passes(builtin)
