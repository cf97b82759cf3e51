"""The zant package's import graph, built statically: no cycles, no reaching into private names.

Function-local imports count as much as module-level ones: a cycle hidden in a function body is
still a cycle (it only moves the failure from import time to call time). The package directories
are mapped as pyproject.toml's [tool.setuptools.package-dir] maps them.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# [tool.setuptools.package-dir]: the zant namespace spans four directories. bench/ is not
# installed, but its scripts are read as the modules `bench.NAME` (they import each other by bare
# name, `from models import MODELS`, after putting bench/ on sys.path).
PACKAGE_DIRS = {
    "zant": ROOT / "zant",
    "zant.dialects": ROOT / "dialects",
    "zant.passes": ROOT / "passes",
    "zant.tools": ROOT / "tools",
    "bench": ROOT / "bench",
}

# Known debts (none left). The test fails on anything not listed here, and on an entry that no longer occurs,
# so these lists only shrink.
#
# Import edges (importer, imported) that close a cycle; the cycle check ignores them.
KNOWN_CYCLE_EDGES: set[tuple[str, str]] = set()
# (importing module, imported module, private name): a private helper one module borrows from
# another, by `from M import _name` or as `M._name` on an imported module; it should become public.
KNOWN_PRIVATE_IMPORTS: set[tuple[str, str, str]] = set()


def _modules() -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is_package) for every .py file of the zant package."""
    mods: dict[str, tuple[Path, bool]] = {}
    for pkg, directory in PACKAGE_DIRS.items():
        for path in sorted(directory.rglob("*.py")):
            parts = list(path.relative_to(directory).with_suffix("").parts)
            if pkg == "zant" and parts[0] in ("dialects", "passes", "tools"):
                continue  # mapped from their own directories
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            mods[".".join([pkg, *parts])] = (path, is_package)
    return mods


def _imports(module: str, path: Path, is_package: bool, modules: dict):
    """(imported module, names taken from it) for every import statement, local ones too, and for
    every `alias._name` read through a name an import bound to a zant module."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if is_package else module.rpartition(".")[0]
    bound: dict[str, str] = {}  # local name -> the zant module an import bound it to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in modules:
                    bound[alias.asname] = alias.name
                yield alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [alias.name for alias in node.names]
            yield target, names
            # `from zant.backend import names` imports the submodule zant.backend.names.
            for alias in node.names:
                if f"{target}.{alias.name}" in modules:
                    bound[alias.asname or alias.name] = f"{target}.{alias.name}"
                    yield f"{target}.{alias.name}", ()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
        ):
            yield bound[node.value.id], [node.attr]


def _graph():
    """Module -> set of zant modules it imports; and the private names imported across modules."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    private: set[tuple[str, str, str]] = set()
    for module, (path, is_package) in modules.items():
        for target, names in _imports(module, path, is_package, modules):
            if module.startswith("bench.") and f"bench.{target}" in modules:
                target = f"bench.{target}"  # a sibling script, imported by bare name
            if target not in modules:
                continue
            # Importing a package runs its __init__, but a package's __init__ importing its own
            # submodules and a submodule importing its package's __init__ are not a layering
            # cycle unless the __init__ itself imports back; keep every edge, skip self-edges.
            if target != module:
                graph[module].add(target)
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    if f"{target}.{name}" not in modules:
                        private.add((module, target, name))
    return graph, private


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a list of modules (first == last), or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = GREY
        stack.append(node)
        for succ in sorted(graph[node]):
            if colour[succ] == GREY:
                return stack[stack.index(succ) :] + [succ]
            if colour[succ] == WHITE and (cycle := visit(succ)):
                return cycle
        stack.pop()
        colour[node] = BLACK
        return None

    for node in sorted(graph):
        if colour[node] == WHITE and (cycle := visit(node)):
            return cycle
    return None


def test_the_graph_sees_the_whole_package():
    graph, _ = _graph()
    assert "zant.driver" in graph and "zant.tools.cli" in graph
    assert "zant.passes.onnx_to_uop" in graph and "zant.dialects.uop" in graph
    assert "zant.dialects.uop.alu" in graph["zant.dialects.uop"]  # a package's modules
    assert "bench.models" in graph["bench.mcu"] and "zant.driver" in graph["bench.mcu"]
    # Function-local imports count: the driver imports the firmware builder inside a function.
    assert "zant.backend.firmware" in graph["zant.driver"]


def test_no_import_cycles():
    graph, _ = _graph()
    stale = sorted((a, b) for a, b in KNOWN_CYCLE_EDGES if b not in graph.get(a, ()))
    assert not stale, "debts paid, remove them from KNOWN_CYCLE_EDGES: " + repr(stale)
    for importer, imported in KNOWN_CYCLE_EDGES:
        graph[importer].discard(imported)
    cycle = _find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_private_names_imported_across_modules():
    _, private = _graph()
    new = sorted(private - KNOWN_PRIVATE_IMPORTS)
    assert not new, "modules import another module's private names:\n" + "\n".join(
        f"  {m} imports {name} from {t}" for m, t, name in new
    )
    paid = sorted(KNOWN_PRIVATE_IMPORTS - private)
    assert not paid, "debts paid, remove them from KNOWN_PRIVATE_IMPORTS: " + repr(paid)


# The layers, bottom up: a module may import its own layer and the ones below, never one above.
# The frontend sits above the passes because the importer asks the lowering which ops it supports
# (to report every unsupported node before anything is generated).
LAYERS: list[tuple[str, ...]] = [
    ("zant.errors", "zant.ir", "zant.dialects", "zant.signature", "zant.progress", "zant.targets"),
    ("zant.analysis", "zant.interpreter"),
    ("zant.passes",),
    ("zant.frontend",),
    ("zant.backend",),
    ("zant.pipelines", "zant.driver", "zant.runtime", "zant.plan_report", "zant.plugins", "zant.diagnostics"),
    # The Python API sits beside the tools: `zant compile`/`zant run` go through it, and its
    # profile() is `zant profile`'s.
    ("zant.tools", "zant.api"),
    # The benchmarks use the whole compiler; nothing imports them.
    ("bench",),
]

# Inside a layer, and across layers the rule above allows, the imports that still must not be:
# (importer, imported), each a module or a package prefix. The IR utilities know no dialect; the
# analyses serve the passes and do not call them; the backend prints what the passes decided and
# runs none of them.
FORBIDDEN: list[tuple[str, str]] = [
    ("zant.ir", "zant.dialects"),
    ("zant.analysis", "zant.passes"),
    ("zant.backend", "zant.passes"),
]
# (importer, imported) modules that break FORBIDDEN: known debts, which may only shrink.
KNOWN_FORBIDDEN_IMPORTS: set[tuple[str, str]] = set()


def _layer(module: str) -> int:
    if module == "zant":  # the package itself, which exports zant.api lazily: the top
        return len(LAYERS) - 1
    for rank, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS")


def test_imports_point_down_the_layers():
    graph, _ = _graph()
    upward = sorted(
        (m, t) for m, targets in graph.items() for t in targets if _layer(t) > _layer(m)
    )
    assert not upward, "imports that point up the layers:\n" + "\n".join(
        f"  {m} ({LAYERS[_layer(m)][0]}…) imports {t} ({LAYERS[_layer(t)][0]}…)" for m, t in upward
    )


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _forbidden(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {
        (m, t) for m, targets in graph.items() for t in targets
        for importer, imported in FORBIDDEN if _under(m, importer) and _under(t, imported)
    }


def test_forbidden_imports_inside_the_layers():
    graph, _ = _graph()
    found = _forbidden(graph)
    new = sorted(found - KNOWN_FORBIDDEN_IMPORTS)
    assert not new, "imports the layering forbids:\n" + "\n".join(f"  {m} imports {t}" for m, t in new)
    paid = sorted(KNOWN_FORBIDDEN_IMPORTS - found)
    assert not paid, "debts paid, remove them from KNOWN_FORBIDDEN_IMPORTS: " + repr(paid)


def test_the_forbidden_rule_sees_an_ir_module_importing_a_dialect():
    graph, _ = _graph()
    graph["zant.ir.types"].add("zant.dialects.uop.types")
    graph["zant.backend.plan"].add("zant.passes")
    assert {("zant.ir.types", "zant.dialects.uop.types"), ("zant.backend.plan", "zant.passes")} <= _forbidden(graph)
