"""`run_pipeline` verifies the input and the result only; a failure reruns the pipeline on a copy
of the input, verified after each pass, so the report still names the pass that broke the IR."""

from __future__ import annotations

import pytest

from tests.test_zant_opt import BROKEN_PASSES, two_conv_model
from zant import diagnostics
from zant.driver import run_pipeline
from zant.errors import ZantError
from zant.frontend.onnx_importer import import_model_bytes


@pytest.fixture
def checks(monkeypatch):
    """The `after` of every verification `run_pipeline` makes, in order."""
    seen = []
    real = diagnostics.check_verifies

    def recording(module, after):
        seen.append(after)
        return real(module, after)

    monkeypatch.setattr(diagnostics, "check_verifies", recording)
    return seen


def imported(folder):
    return import_model_bytes(two_conv_model().SerializeToString(), str(folder))


def test_a_good_pipeline_is_verified_before_and_after(tmp_path, checks):
    run_pipeline(imported(tmp_path), "onnx-to-uop,fuse-loops,dce,plan-arenas,linearize-geps")
    assert checks == [None, "linearize-geps"]


def test_a_pass_breaking_the_module_midway_is_still_named(tmp_path, checks):
    plugin = tmp_path / "research.py"
    plugin.write_text(BROKEN_PASSES)
    with pytest.raises(ZantError) as failure:
        run_pipeline(imported(tmp_path), "onnx-to-uop,plan-arenas,drop-local,fuse-loops,linearize-geps", plugins=[str(plugin)])
    assert str(failure.value).startswith("after pass 'drop-local': 'uop.")
    # The fast run (no verification after its passes), then the rerun from the input, verified
    # after each pass up to the broken one.
    assert checks[0] is None and checks[-4:] == [None, "onnx-to-uop", "plan-arenas", "drop-local"]
    assert "onnx-to-uop" not in checks[:-4] and "fuse-loops" not in checks


HOIST_CONSTANT = '''
from dataclasses import dataclass

from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects import uop


@dataclass(frozen=True)
class HoistConstantPass(ModulePass):
    """Move a uop.const out of its function: the printer (which prints constants inline) does
    not notice, the verifier does (a use outside the isolated-from-above function)."""

    name = "hoist-constant"

    def apply(self, ctx, op):
        const = next(o for o in op.walk() if isinstance(o, uop.ConstOp) and o.result.uses)
        const.detach()
        Rewriter.insert_op(const, InsertPoint.at_start(op.body.block))
'''


@pytest.mark.parametrize(
    "broken, plugin_source, builds",
    [("drop-local", BROKEN_PASSES, 0), ("hoist-constant", HOIST_CONSTANT, 1)],
    ids=["emitting-fails", "emitting-succeeds"],
)
def test_zant_compile_reports_a_broken_pass_whether_or_not_it_emits(tmp_path, monkeypatch, broken, plugin_source, builds):
    """`zant compile` verifies the passes' result while Zig builds: a module that does not verify
    is reported with the pass that broke it, whether the printer chokes on it (the check runs
    before the printer's error is shown) or prints it (the check stops the build), and no file
    is left behind."""
    from zant.backend import build
    from zant.driver import CompileOptions, compile_model
    from zant.pipelines import pipeline_for

    started = []
    real = build.start_build
    monkeypatch.setattr(build, "start_build", lambda *args, **kwargs: started.append(args) or real(*args, **kwargs))
    plugin = tmp_path / "research.py"
    plugin.write_text(plugin_source)
    (tmp_path / "m.onnx").write_bytes(two_conv_model().SerializeToString())
    options = CompileOptions(pipeline=f"{pipeline_for('host')},{broken}", plugins=(str(plugin),))
    with pytest.raises(ZantError) as failure:
        compile_model(tmp_path / "m.onnx", tmp_path / "out", options)
    assert str(failure.value).startswith(f"after pass '{broken}': ")
    assert len(started) == builds  # the printer printed it: Zig was building when the check failed
    assert not list((tmp_path / "out").glob("*"))
