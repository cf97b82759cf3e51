"""The C ABI page (docs/c-abi.md) against generated headers and Zig files: every function and variable a
header declares (with embedded, staged and external constants, and with a persistent arena) is
a row of the exports table with the same declaration, every status it defines is in the status
table with its value, the Zig file exports exactly what the header declares, and the table
lists nothing no header declares. No Zig build."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from zant.backend.plan import emit_header
from zant.dialects import abi
from zant.backend.zig_printer import print_zig

ABI_PAGE = Path(__file__).resolve().parents[1] / "docs" / "c-abi.md"
DECLARATION = re.compile(r"^(?:extern )?((?:const )?\w+ \*?m_(\w+)(?:\((.*)\))?);", re.M)
STATUS = re.compile(r"^#define m_(STATUS_\w+) (\d+)", re.M)
ZIG_EXPORT = re.compile(r"^export (?:fn|const) m_(\w+)\b", re.M)


def abi_section() -> str:
    return ABI_PAGE.read_text(encoding="utf-8")


def documented_exports() -> dict[str, str]:
    """Each row of the exports table: its declaration (NAME_ for the prefix) by its first cell."""
    rows = re.findall(r"^\| `([^`]*NAME_\w+[^`]*)` \| [^|]+ \|", abi_section(), re.M)
    return {row: row for row in rows}


def planned_modules(tmp_path) -> dict[str, object]:
    """A small model's planned module in each constants mode, and the hand-written persistent plan."""
    import onnx
    from xdsl.parser import Parser

    from tests.test_constants import PERSISTENT, conv_model
    from zant.driver import compile_to_module, make_context, run_pipeline
    from zant.pipelines import pipeline_for

    path = tmp_path / "conv.onnx"
    onnx.save(conv_model(), path)
    modules = {
        mode: compile_to_module(path, pipeline=pipeline_for("host", constants=mode)).module
        for mode in ("embedded", "staged", "external")
    }
    persistent = Parser(make_context(), PERSISTENT).parse_module()
    run_pipeline(persistent, "verify-arena-plan,linearize-geps")
    modules["persistent"] = persistent
    return modules


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict[str, tuple[str, str]]:
    modules = planned_modules(tmp_path_factory.mktemp("abi"))
    return {kind: (emit_header(module, "m"), print_zig(module, "m")) for kind, module in modules.items()}


def test_every_export_of_every_header_is_documented(generated):
    documented = documented_exports()
    assert documented, "no exports table in docs/c-abi.md"
    declared_anywhere = set()
    for kind, (header, zig) in generated.items():
        declarations = DECLARATION.findall(header)
        names = {name for _, name, _ in declarations}
        assert {"predict", "predict_sized", "check_plan", "plan_hash", "layout_hash"} <= names, kind
        assert ("init" in names) == (kind != "embedded"), kind
        # The Zig file exports exactly what the header declares.
        assert set(ZIG_EXPORT.findall(zig)) == names, kind
        for declaration, name, _ in declarations:
            spelled = declaration.replace("m_", "NAME_", 1)
            if name in ("predict", "predict_sized"):  # its parameters are the model's: the row shows their pattern
                spelled = spelled.split("(")[0]
                assert any(row.startswith(spelled + "(") for row in documented), f"{kind}: {spelled}"
            else:
                assert spelled in documented, f"{kind}: '{spelled}' is not a row of docs/c-abi.md's exports table"
            declared_anywhere.add(spelled.split("(")[0] if name in ("predict", "predict_sized") else spelled)
    stale = [row for row in documented if row not in declared_anywhere and row.split("(")[0] not in declared_anywhere]
    assert not stale, f"docs/c-abi.md documents exports no header declares: {stale}"


def test_every_status_is_documented_with_its_value(generated, tmp_path):
    section = abi_section()
    statuses = {}
    caller_arena = emit_header(planned_modules(tmp_path)["embedded"], "m", arena="caller")
    for header in [h for h, _ in generated.values()] + [caller_arena]:
        statuses.update(STATUS.findall(header))
    # the headers define every status of `abi.Status` (the one table), with its value, and no other
    assert statuses == {s.macro: str(s.value) for s in abi.Status if s != abi.Status.OK}
    for status, value in statuses.items():
        assert re.search(rf"^\| `NAME_{status}` \({value}\) \|", section, re.M), f"NAME_{status} ({value})"
