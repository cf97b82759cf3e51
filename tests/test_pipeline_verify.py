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
