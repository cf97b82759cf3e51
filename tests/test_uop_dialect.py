"""The uop dialect as xDSL's generic passes see it: on the digits CNN's uop IR, canonicalize, cse
and licm shrink the program (fewer ops, fewer ops inside loops), and what they leave verifies and
prints back identically in a new process; the memory effects and folders say what they should."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects.builtin import IndexType, ModuleOp, f32, i32
from xdsl.traits import MemoryEffectKind, get_effects, is_speculatable

from zant.dialects import abi, uop
from zant.driver import make_context
from xdsl.parser import Parser

DIGITS = Path(__file__).resolve().parents[1] / "examples" / "digits" / "digits_cnn.onnx"
LOWERED = "fold-constants,fold-batchnorm,dce,onnx-to-uop,fuse-loops"
ZANT_OPT = [sys.executable, "-m", "zant.tools.zant_opt"]


def _zant_opt(*args: str, stdin: str | None = None) -> str:
    done = subprocess.run([*ZANT_OPT, *args], input=stdin, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _size(text: str) -> tuple[int, int]:
    """(ops, ops weighted by how many uop.range loops enclose them) of a printed module."""
    module = Parser(make_context(), text).parse_module()
    module.verify()
    ops = weighted = 0
    for op in module.walk():
        ops += 1
        parent = op.parent_op()
        while parent is not None:
            weighted += isinstance(parent, uop.RangeOp)
            parent = parent.parent_op()
    return ops, weighted


def test_canonicalize_cse_licm_shrink_the_digits_uop_ir():
    lowered = _zant_opt(str(DIGITS), "-p", LOWERED)
    optimized = _zant_opt(str(DIGITS), "-p", f"{LOWERED},canonicalize,cse,licm")
    before, after = _size(lowered), _size(optimized)
    assert after[0] < before[0] and after[1] < before[1], (before, after)
    assert _zant_opt(stdin=optimized) == optimized  # parses, verifies and prints back
    assert _zant_opt(stdin=_zant_opt("--print-op-generic", stdin=optimized)) == optimized


def test_alu_ops_are_classes_and_the_tables_read_them():
    assert uop.ALU_OPS["mul"] is uop.MulOp and uop.MulOp.name == "uop.mul"
    assert uop.BINARY_OPS["add"] == uop.AddOp.__doc__
    assert "pow" in uop.FLOAT_BINARY_OPS and "pow" not in uop.BINARY_OPS
    assert set(uop.COMPARE_OPS) == {"cmplt", "cmple", "cmpeq", "cmpne"}


def test_effects_name_the_memory_they_touch():
    buffer = uop.DefineLocalOp("t", uop.BufferType(4, f32))
    index = uop.ConstOp(0, IndexType())
    gep = uop.GepOp(buffer, [index])
    load = uop.LoadOp(gep)
    store = uop.StoreOp(load, gep)
    assert {(e.kind, e.value) for e in get_effects(load)} == {(MemoryEffectKind.READ, gep.result)}
    assert {(e.kind, e.value) for e in get_effects(store)} == {(MemoryEffectKind.WRITE, gep.result)}
    assert get_effects(gep) == set()


@pytest.mark.parametrize(
    ("divisor", "element_type", "speculatable"),
    [(0, i32, False), (-1, i32, False), (3, i32, True), (0.0, f32, True)],
)
def test_only_a_division_that_cannot_trap_is_speculatable(divisor, element_type, speculatable):
    x = uop.ConstOp(7, element_type)
    y = uop.ConstOp(divisor, element_type)
    assert is_speculatable(uop.DivOp(x, y)) is speculatable
    assert is_speculatable(uop.RemOp(x, y)) is speculatable


def test_a_division_by_a_run_time_value_is_not_speculatable():
    module = ModuleOp([])
    value = module.body.block.insert_arg(i32, 0)
    assert not is_speculatable(uop.DivOp(value, value))


def test_roles_and_strategies_are_enum_attributes_printed_as_strings():
    """The parser builds the enum attributes from the quoted spelling (and from the bare one),
    the printer writes the quoted one back, and the generic form names the attribute."""
    text = (
        'builtin.module {\n  func.func @main() {\n'
        '    abi.arena scratch size 32 align 16 strategy greedy\n'
        '    %x = uop.define_global "input" 0 "x" : !uop.buffer<2xf32>\n'
        '    func.return\n  }\n}\n'
    )
    module = Parser(make_context(), text).parse_module()
    module.verify()
    arena, define = [op for op in module.walk() if isinstance(op, abi.ArenaOp | uop.DefineGlobalOp)]
    assert isinstance(arena.role, abi.ArenaRoleAttr) and arena.role.data is abi.ArenaRole.SCRATCH
    assert isinstance(arena.strategy, abi.PlanStrategyAttr) and arena.strategy.data is abi.PlanStrategy.GREEDY
    assert isinstance(define.role, uop.BufferRoleAttr) and define.role.data is uop.BufferRole.INPUT
    printed = str(module)
    assert 'abi.arena "scratch" size 32 align 16 strategy "greedy"' in printed
    generic = _zant_opt("--print-op-generic", stdin=text)
    assert '#abi<arena_role "scratch">' in generic and '#abi<plan_strategy "greedy">' in generic
    assert '#uop<buffer_role "input">' in generic
    assert _zant_opt(stdin=generic) == _zant_opt(stdin=text)
