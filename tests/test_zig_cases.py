"""Target print cases are registered by the target's own modules (issue 31: target code together).

The generic printer names no target dialect; `zig_cases.case_for` finds an op's case by its
class, importing `zant.backend.zig_<dialect>` the first time it is asked."""

from __future__ import annotations

import ast
from pathlib import Path

from zant.backend import zig_arm_dsp, zig_arm_mve, zig_cases
from zant.dialects import arm_dsp, arm_mve, uop

BACKEND = Path(zig_cases.__file__).resolve().parent


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_generic_printer_names_no_target_dialect():
    imported = _imports(BACKEND / "zig_printer.py")
    targets = {"zant.dialects.arm_dsp", "zant.dialects.arm_mve", "zant.backend.zig_arm_dsp", "zant.backend.zig_arm_mve"}
    assert not imported & targets
    source = (BACKEND / "zig_printer.py").read_text(encoding="utf-8")
    assert "arm_dsp." not in source and "arm_mve." not in source


def test_every_target_op_has_its_case_in_its_own_module():
    for dialect, module in ((arm_dsp.ArmDsp, zig_arm_dsp), (arm_mve.ArmMve, zig_arm_mve)):
        for op in dialect.operations:
            case = zig_cases.case_for(op)
            assert case is not None, op.name
            assert case.__module__ == module.__name__, op.name


def test_generic_ops_have_no_registered_case():
    assert zig_cases.case_for(uop.LoadOp) is None


def test_target_helpers_are_printable_by_name():
    helpers = zig_cases.all_helpers()
    assert zig_arm_dsp.ARM_DSP_HELPERS.keys() <= helpers.keys()
    assert zig_arm_mve.ARM_MVE_HELPERS.keys() <= helpers.keys()
