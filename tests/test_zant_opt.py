"""`zant-opt` as a researcher meets it: errors that name the culprit pass and op, mlir-opt's
`--verify-diagnostics`, `--list-passes`, and the same reports from `zant compile --pipeline`.

The tool runs in-process (`zant.tools.zant_opt.main`), its stdout and stderr captured.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zant.diagnostics import InternalError, run_pass
from zant.errors import ZantError, run_cli
from zant.tools.zant_opt import main as zant_opt

BROKEN_PASSES = textwrap.dedent(
    '''
    """Two research passes with bugs."""
    from dataclasses import dataclass

    from xdsl.passes import ModulePass

    from zant.dialects import uop


    @dataclass(frozen=True)
    class DropLocalPass(ModulePass):
        """Detach the first uop.define_local and leave its users behind."""

        name = "drop-local"

        def apply(self, ctx, op):
            next(o for o in op.walk() if isinstance(o, uop.DefineLocalOp)).detach()


    @dataclass(frozen=True)
    class CrashPass(ModulePass):
        name = "crash"
        factor: int = 2

        def apply(self, ctx, op):
            raise KeyError("boom")
    '''
)

UOP_INPUT = textwrap.dedent(
    """\
    func.func @main() {
      %x = uop.define_global "input" 0 "x" : !uop.buffer<4xf32>
      %y = uop.define_global "output" 0 "y" : !uop.buffer<4xf32>
      %t = uop.define_local "t" : !uop.buffer<4xf32>
      uop.range %i = 0 to 4 {
        %p = uop.gep %x[%i] : !uop.buffer<4xf32>
        %a = uop.load %p : f32
        %q = uop.gep %t[%i] : !uop.buffer<4xf32>
        uop.store %a, %q : f32
      }
      uop.range %j = 0 to 4 {
        %p = uop.gep %t[%j] : !uop.buffer<4xf32>
        %a = uop.load %p : f32
        %q = uop.gep %y[%j] : !uop.buffer<4xf32>
        uop.store %a, %q : f32
      }
      func.return
    }
    """
)


def run_opt(capsys, *args) -> tuple[int, str, str]:
    status = zant_opt([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def plugin(tmp_path):
    path = tmp_path / "research.py"
    path.write_text(BROKEN_PASSES)
    return path


@pytest.fixture
def uop_file(tmp_path):
    path = tmp_path / "copy.mlir"
    path.write_text(UOP_INPUT)
    return path


def test_verifier_failure_names_the_pass_and_shows_the_op_in_context(capsys, plugin, uop_file):
    status, out, err = run_opt(capsys, uop_file, "--load-passes", plugin, "-p", "drop-local")
    assert status == 1 and out == ""
    first, *context = err.splitlines()
    assert first == (
        "zant-opt: error: after pass 'drop-local': 'uop.gep' op operand #0 is defined by "
        "uop.define_local outside its isolated-from-above parent 'func.func', which is no longer in the IR"
    )
    # The failing op, in custom form with its own SSA names, marked, with a few ops around it;
    # not the module in generic form.
    assert any(line.strip().startswith("%q = uop.gep %t[%i]") for line in context), err
    assert any(line.strip().startswith("^^^") for line in context)
    assert len(context) <= 16
    assert '"builtin.module"' not in err and "builtin.module" not in err


def test_plugin_exception_is_a_user_error_naming_pass_and_file(capsys, plugin, uop_file):
    status, _, err = run_opt(capsys, uop_file, "--load-passes", plugin, "-p", "crash")
    assert status == 1
    assert err == f"zant-opt: error: pass 'crash' (from {plugin}) raised KeyError: 'boom'\n"


def test_builtin_pass_exception_is_an_internal_error_naming_the_pass(capsys):
    @dataclasses.dataclass(frozen=True)
    class Buggy:
        name = "fuse-loops"

        def apply(self, ctx, op):
            raise IndexError("list index out of range")

    Buggy.__module__ = "zant.passes.fuse_loops"
    with pytest.raises(InternalError, match="pass 'fuse-loops' raised IndexError: list index out of range"):
        run_pass(Buggy(), None, None)

    def action():
        run_pass(Buggy(), None, None)

    assert run_cli("zant-opt", action, debug=False) == 2
    assert capsys.readouterr().err == (
        "zant-opt: internal error: pass 'fuse-loops' raised IndexError: list index out of range "
        "(rerun with --debug for the traceback)\n"
    )


@pytest.mark.parametrize(
    "pipeline, message",
    [
        (
            "onnx-to-uop{conv-lane=16}",
            "unknown option 'conv-lane' for pass 'onnx-to-uop'; its options: conv-lanes=int (default from "
            "#zant.target), conv-tile=int (default from #zant.target), conv-registers=int (default from "
            "#zant.target), conv-channel-block=int (default from",
        ),
        ("crash{factr=3}", "unknown option 'factr' for pass 'crash'; its options: factor=int (default 2)"),
        ("plan-arenas{link-sectio=\"x\"}", "its options: strategy=str (default \"best\"), alignment=int"),
        ("licm{x=1}", "unknown option 'x' for pass 'licm'; its options: none"),
        ("fuse-loop", "unknown pass 'fuse-loop' (did you mean 'fuse-loops'?"),
    ],
)
def test_bad_pipeline_is_a_user_error_listing_the_options(capsys, plugin, uop_file, pipeline, message):
    status, _, err = run_opt(capsys, uop_file, "--load-passes", plugin, "-p", pipeline)
    assert status == 1 and err.startswith("zant-opt: error: ") and len(err.splitlines()) == 1, err
    assert message in err


def test_options_accept_both_spellings_print_kebab(capsys, uop_file):
    # xDSL maps `link-section` to the field `link_section` and also accepts the field's name.
    for spelling in ("link-section", "link_section"):
        status, out, err = run_opt(capsys, uop_file, "-p", f'plan-arenas{{{spelling}=".sram"}}')
        assert status == 0, err
        assert 'link_section ".sram"' in out or ".sram" in out


def test_list_passes(capsys, plugin):
    from zant.passes import builtin_passes

    status, out, _ = run_opt(capsys, "--load-passes", plugin, "--list-passes")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "Zant: target:" and lines[3] == "Zant: onnx dialect:"
    xdsl_at = lines.index("xDSL passes (see xDSL's documentation):")
    zant_part = "\n".join(lines[:xdsl_at])
    for name in builtin_passes():  # each of Zant's passes with a description and its options
        row = next(i for i, line in enumerate(lines) if line.startswith(f"  {name} "))
        assert row < xdsl_at and len(lines[row].split(maxsplit=1)) == 2, lines[row]
        assert lines[row + 1].strip().startswith("options: ")
    assert "conv-lanes=int (default from #zant.target)" in zant_part
    assert "set-target" in zant_part and "target=str (required)" in zant_part
    plugins_at = lines.index("from --load-passes and installed packages:")
    assert lines[plugins_at + 1 : plugins_at + 3] == ["  crash", f"  {'':<22} options: factor=int (default 2)"]
    # Every option is spelled in kebab-case.
    options = [line.split("options: ")[1] for line in lines[:xdsl_at] if "options: " in line]
    names = [part.split("=")[0].strip() for text in options if text != "none" for part in text.split("), ")]
    assert names and not [n for n in names if "_" in n]
    assert "canonicalize" in "\n".join(lines[xdsl_at:])


def test_list_passes_survives_a_broken_installed_pass():
    from zant.passes import builtin_passes
    from zant.tools.zant_opt import list_passes

    def broken():
        raise ZantError("cannot load pass 'their-pass' (their_pkg:Pass): No module named 'their_pkg'")

    text = list_passes({"licm": builtin_passes()["licm"], "their-pass": broken})
    assert "  their-pass             (cannot be loaded: cannot load pass 'their-pass'" in text
    assert "  licm " in text


def test_help_does_not_list_every_pass(capsys):
    with pytest.raises(SystemExit):
        zant_opt(["-h"])
    out = capsys.readouterr().out
    assert "--list-passes" in out and "convert-scf-to-cf" not in out


VERIFY_DIAGNOSTICS = textwrap.dedent(
    """\
    func.func @role() {
      // expected-error@+1 {{role must be one of input, output, constant, got 'weird'}}
      %x = uop.define_global "weird" 0 "x" : !uop.buffer<2xf32>
      func.return
    }

    // -----

    func.func @same_line() {
      %x = uop.define_global "constant" 0 "x" : !uop.buffer<2xf32> // expected-error {{needs a value}}
      func.return
    }

    // -----

    func.func @above() {
      %x = uop.define_global "input" 0 "x" : !uop.buffer<2xf32>
      // expected-error@above {{two input buffers with index 0: 'x' and 'y'}}
      %y = uop.define_global "input" 0 "y" : !uop.buffer<2xf32>
      func.return
    }

    // -----

    func.func @fine() {
      %x = uop.define_global "input" 0 "x" : !uop.buffer<2xf32>
      func.return
    }

    // -----

    // expected-error@+1 {{Expected ':'}}
    %x = uop.define_global "input" 0 "x" !uop.buffer<2xf32>
    """
)


def test_verify_diagnostics_checks_expectations(capsys, tmp_path):
    source = tmp_path / "ok.mlir"
    source.write_text(VERIFY_DIAGNOSTICS)
    status, out, err = run_opt(capsys, source, "--split-input-file", "--verify-diagnostics")
    assert (status, err) == (0, "")
    assert "func.func @fine" in out and "@role" not in out  # only the modules that verify print


@pytest.mark.parametrize(
    "old, new, report",
    [
        # A wrong expectation: the error is not the one announced.
        ("got 'weird'}}", "got 'odd'}}", "3: error: unexpected error: role must be one of input, output, constant, got 'weird'"),
        ("got 'weird'}}", "got 'odd'}}", "2: error: expected error \"role must be one of input, output, constant, got 'odd'\" on line 3 was not produced"),
        # The right text on the wrong line.
        ("expected-error@+1 {{role", "expected-error@+2 {{role", 'expected error "role must be one of'),
        # An error nobody announced.
        ("  // expected-error@above {{two input buffers with index 0: 'x' and 'y'}}\n", "", "17: error: unexpected error"),
        # An announced error that does not happen.
        ("  func.return\n}\n\n// -----\n\n// expected", "  // expected-error {{never}}\n  func.return\n}\n\n// -----\n\n// expected", 'expected error "never" on line 27 was not produced'),
        # Zant emits no notes.
        ("// expected-error {{needs a value}}", "// expected-error {{needs a value}} expected-note {{x}}", 'expected note "x"'),
    ],
)
def test_verify_diagnostics_fails_on_a_mismatch(capsys, tmp_path, old, new, report):
    assert old in VERIFY_DIAGNOSTICS
    source = tmp_path / "bad.mlir"
    source.write_text(VERIFY_DIAGNOSTICS.replace(old, new, 1))
    status, _, err = run_opt(capsys, source, "--split-input-file", "--verify-diagnostics")
    assert status == 1
    assert f"{source}:" in err and report in err, err


def test_verify_diagnostics_pass_errors_need_unknown(capsys, tmp_path):
    source = tmp_path / "plan.mlir"
    body = 'func.func @f() {\n  func.return\n}\n'
    source.write_text(f"{body}// expected-error@unknown {{{{@f has no scratch arena}}}}\n")
    assert run_opt(capsys, source, "-p", "verify-arena-plan", "--verify-diagnostics")[0] == 0
    source.write_text(f"{body}// expected-error {{{{@f has no scratch arena}}}}\n")
    status, _, err = run_opt(capsys, source, "-p", "verify-arena-plan", "--verify-diagnostics")
    assert status == 1 and "?: error: unexpected error: pass 'verify-arena-plan' failed" in err


def two_conv_model() -> onnx.ModelProto:
    weights = numpy_helper.from_array(np.ones((2, 2, 3, 3), np.float32), "w")
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Conv", ["c", "w"], ["y"], pads=[1, 1, 1, 1]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 6, 6])],
        [weights],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_driver_reports_like_zant_opt(tmp_path, plugin):
    from zant.driver import run_pipeline
    from zant.frontend.onnx_importer import import_model_bytes

    def imported():
        return import_model_bytes(two_conv_model().SerializeToString(), str(tmp_path))

    with pytest.raises(ZantError) as failure:
        run_pipeline(imported(), "onnx-to-uop,drop-local", plugins=[str(plugin)])
    first, *context = str(failure.value).splitlines()
    assert first.startswith("after pass 'drop-local': 'uop.view' op operand #0 is defined by uop.define_local")
    assert 0 < len(context) <= 17 and "builtin.module" not in str(failure.value)
    assert re.fullmatch(r"  \(made from ONNX node 'Conv_[01]'\)", context[0])  # its provenance
    with pytest.raises(ZantError, match=r"^pass 'crash' \(from .*research.py\) raised KeyError: 'boom'$"):
        run_pipeline(imported(), "onnx-to-uop,crash", plugins=[str(plugin)])
    with pytest.raises(ZantError, match="unknown option 'conv-lane' for pass 'onnx-to-uop'; its options: conv-lanes"):
        run_pipeline(imported(), "onnx-to-uop{conv-lane=16}")


def test_passes_are_found_by_their_module_name():
    # A pass `foo-bar` is the ModulePass named so in zant.passes.foo_bar: every module of passes/
    # defines the pass it is named after, and listing them imports none.
    import pkgutil
    import subprocess
    import sys

    import zant.passes
    from zant.passes import MODULE_OF_PASS, builtin_passes, module_name, pass_names

    modules = {m.name for m in pkgutil.iter_modules(zant.passes.__path__) if not m.name.startswith("_")}
    assert {module_name(n) for n in pass_names()} == modules
    for name, factory in builtin_passes().items():
        cls = factory()
        assert cls.name == name and cls.__module__.startswith(f"zant.passes.{module_name(name)}"), (name, cls)
    probe = "import sys; from zant.passes import pass_names; pass_names(); " \
        "print(sorted(m for m in sys.modules if m.startswith('zant.passes.')))"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == "[]"
    # The exceptions to the convention may only shrink.
    assert MODULE_OF_PASS.items() <= {"licm": "loop_invariant_code_motion"}.items()


def test_a_module_without_its_pass_is_named(tmp_path, monkeypatch):
    import zant.passes

    (tmp_path / "not_a_pass.py").write_text("X = 1\n")
    monkeypatch.setattr(zant.passes, "__path__", [*zant.passes.__path__, str(tmp_path)])
    assert "not-a-pass" in zant.passes.pass_names()
    with pytest.raises(LookupError, match="'zant.passes.not_a_pass' defines no ModulePass named 'not-a-pass'"):
        zant.passes.builtin_passes()["not-a-pass"]()
