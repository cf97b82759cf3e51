"""Target ops print from their own declaration (issue 31: target code together).

The generic printer names no target dialect; an op of a target dialect declares its Zig helpers
and call beside it (`zant.ir.target_ops`), which the one declared-op case of `zig_cases` prints."""

from __future__ import annotations

import ast
from pathlib import Path

from xdsl.dialects.builtin import IntegerType

from zant.backend import zig_cases
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
    targets = {"zant.dialects.arm_dsp", "zant.dialects.arm_mve"}
    for module in ("zig_printer.py", "zig_cases.py"):
        assert not _imports(BACKEND / module) & targets, module
        source = (BACKEND / module).read_text(encoding="utf-8")
        assert "arm_dsp." not in source and "arm_mve." not in source, module
    assert not list(BACKEND.glob("zig_arm_*.py"))  # no backend module per target dialect


def test_every_target_op_prints_from_its_declaration():
    for dialect in (arm_dsp.ArmDsp, arm_mve.ArmMve):
        for op in dialect.operations:
            assert zig_cases.case_for(op) is zig_cases.print_declared, op.name
            assert op.ZIG_HELPERS and all(h.source.lstrip().startswith("///") for h in op.ZIG_HELPERS), op.name


def test_target_dialects_import_no_backend_or_interpreter():
    dialects = Path(arm_dsp.__file__).resolve().parent
    for name in ("arm_dsp.py", "arm_mve.py"):
        imported = _imports(dialects / name)
        assert not [m for m in imported if m.startswith(("zant.backend", "zant.interpreter"))], name


class _Printer:
    """The printer vocabulary print_declared uses, recording what it is asked (`call_helper` is
    the printer's own: the helpers a call makes the file hold and the inline calls it counts)."""

    def __init__(self):
        from zant.backend.names import Namer

        self.namer, self.lines, self.helpers_used, self.inline_calls = Namer(), [], set(), 0

    from zant.backend.zig_printer import ZigPrinter

    call_helper = ZigPrinter.call_helper

    def expr(self, value):
        return value.name_hint

    operand_expr = expr  # no packed pointers here

    def emit(self, line):
        self.lines.append(line)

    def define(self, result, expression):
        self.lines.append(f"{result.name_hint} = {expression}")


def _values(*names, type=None):
    from xdsl.dialects.builtin import IntegerType
    from xdsl.ir import Block

    block = Block(arg_types=[type or IntegerType(32)] * len(names))
    for arg, name in zip(block.args, names):
        arg.name_hint = name
    return block.args


def test_declared_case_marks_the_helpers_its_call_names_and_those_they_call():
    e0, o0, e1, o1, w, c0, c1 = _values("e0", "o0", "e1", "o1", "w", "c0", "c1")
    op = arm_dsp.SmladBytesPairOp(e0, o0, e1, o1, w, c0, c1)
    op.result0.name_hint, op.result1.name_hint = "r0", "r1"
    printer = _Printer()
    zig_cases.case_for(arm_dsp.SmladBytesPairOp)(printer, op)
    assert printer.lines == [
        "const pair = zant_smlad_bytes_pair(e0, o0, e1, o1, w, c0, c1);", "r0 = pair[0]", "r1 = pair[1]",
    ]
    assert printer.helpers_used == {"zant_smlad_bytes_pair", "zant_smlad_bytes", "zant_sxtb16", "zant_smlad"}
    # Inline calls as Zig counts them: the pair, its two smlad_bytes, their 2 x 2 smlad and sxtb16.
    assert printer.inline_calls == 1 + 2 * (1 + 4)
    # A 16-lane gather names its own helper, not the 8-lane one whose name prefixes it.
    (p,) = _values("p", type=uop.PtrType(IntegerType(8)))
    gather = arm_mve.VldrbGatherOp(p, list(range(16)))
    gather.result.name_hint = "g"
    printer = _Printer()
    zig_cases.case_for(arm_mve.VldrbGatherOp)(printer, gather)
    even, odd = ".{ 0, 2, 4, 6, 8, 10, 12, 14 }", ".{ 1, 3, 5, 7, 9, 11, 13, 15 }"
    assert printer.lines == [f"g = zant_vldrb_gather16({even}, {odd}, p)"]
    assert printer.helpers_used == {"zant_vldrb_gather16", "zant_vldrb_gather_u16"}
    assert printer.inline_calls == 3


def test_generic_ops_have_no_registered_case():
    assert zig_cases.case_for(uop.LoadOp) is None


def test_target_helpers_are_printable_by_name():
    zig_cases.case_for(arm_dsp.SmladBytesPairOp)  # registers its helpers
    zig_cases.case_for(arm_mve.VmlavaOp)
    helpers = zig_cases.all_helpers()
    assert helpers["zant_smlad"] == arm_dsp.ZIG_HELPER_SOURCES["zant_smlad"]
    assert {"zant_smlad_bytes_pair", "zant_smlad_bytes", "zant_sxtb16", "zant_vmlava"} <= helpers.keys()


def test_a_target_helper_may_not_take_a_generic_helper_s_name():
    import pytest

    from zant.backend.zig_helpers import HELPERS
    from zant.ir.target_ops import ZigHelper

    with pytest.raises(ValueError, match="named as a generic one"):
        zig_cases.register_helpers([ZigHelper(next(iter(HELPERS)), "fn x() void {}")])
    with pytest.raises(ValueError, match="two target helpers named zant_smlad"):
        zig_cases.case_for(arm_dsp.SmladOp)
        zig_cases.register_helpers([ZigHelper("zant_smlad", "fn zant_smlad() void {}")])


def test_the_interpreter_runs_every_target_op_through_its_declared_semantics():
    # One @impl for every op that declares `reference`; the interpreter's source names no target op.
    from zant.interpreter import functions

    source = Path(functions.__file__).read_text(encoding="utf-8")
    assert "arm_dsp." not in source and "arm_mve." not in source
    for dialect in (arm_dsp.ArmDsp, arm_mve.ArmMve):
        for op in dialect.operations:
            owner, _ = functions.IMPLEMENTATIONS[op]
            assert owner is functions.TargetOpFunctions, op.name


def test_helper_declarations_agree_with_their_zig():
    """The printer reads each helper's facts from its declaration (`ZigHelper.calls`, `inline`),
    never its Zig: here the declarations are checked against the sources, so they cannot drift.
    A helper's calls are the helpers its body calls, once per call (a type it names, like
    ZantFloatKind, is a use that is no call)."""
    import re

    from zant.backend.zig_helpers import HELPERS

    helpers = HELPERS | arm_dsp.ZIG_HELPER_SOURCES | arm_mve.ZIG_HELPER_SOURCES
    functions = {name for name, h in helpers.items() if re.search(rf"^(inline )?fn {name}\(", h.source, re.M)}
    for name, helper in helpers.items():
        assert helper.name == name and set(helper.calls) <= helpers.keys(), name
        assert helper.inline == bool(re.search(rf"^inline fn {name}\(", helper.source, re.M)), name
        body = helper.source.split(f"fn {name}(", 1)[-1].split("{", 1)[-1]
        called = [c for c in re.findall(r"\b(zant_\w+)\(", body) if c in helpers]
        assert sorted(called) == sorted(c for c in helper.calls if c in functions), name


def test_the_zig_printer_reads_no_text_back():
    """Issue 31, the printer prints: what it emits (helpers, branch quotas) is decided from the IR
    and the helpers' declarations, not by regular expressions over Zig text."""
    for module in ("zig_printer.py", "zig_cases.py", "zig_helpers.py"):
        assert "re" not in _imports(BACKEND / module), module
