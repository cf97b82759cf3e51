"""Generated Zig that does not compile is a Zant bug: the build reports it as an internal error
with Zig's first error line and where the source is kept, never Zig's raw output."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from zant.backend import zig_helpers
from zant.backend.build import ZigCompileError, build_zig, zig_failure
from zant.errors import InternalError, ZantError
from zant.ir.target_ops import ZigHelper
from zant.tools import cli


def test_a_compile_error_is_an_internal_error_with_its_first_line(tmp_path):
    source = tmp_path / "broken.zig"
    source.write_text("export fn f() i32 {\n    return no_such_value;\n}\nexport fn g() i32 {\n    return nor_this;\n}\n")
    with pytest.raises(ZigCompileError) as raised:
        build_zig(source, tmp_path / "out" / "broken.o", kind="obj")
    error = raised.value
    assert isinstance(error, InternalError) and not isinstance(error, ZantError)
    assert error.first == "broken.zig:2:12: error: use of undeclared identifier 'no_such_value'"
    assert str(error) == (
        "generated Zig does not compile (this is a Zant bug): "
        f"broken.zig:2:12: error: use of undeclared identifier 'no_such_value'; the source is {source}"
    )
    assert "nor_this" in error.output and "\n" not in str(error)
    assert error.kept_in(tmp_path / "kept").source == tmp_path / "kept" / "broken.zig"


def test_other_build_failures_stay_user_errors(tmp_path):
    """A link that does not fit (no .zig error line) is Zig's output as a `ZantError`."""
    stderr = "error: ld.lld: section '.bss' will not fit in region 'RAM': overflowed by 4096 bytes\n"
    error = zig_failure(tmp_path / "image.zig", "cortex-m4", stderr, tmp_path)
    assert type(error) is ZantError and "will not fit in region 'RAM'" in str(error)


def test_zant_compile_reports_broken_zig_in_one_line_and_keeps_it(tmp_path, monkeypatch, capsys):
    """`zant compile` of a model whose generated Zig Zig rejects (here: a helper broken on
    purpose) exits 2 with one `zant: internal error:` line naming the error and the kept file."""
    fmax = zig_helpers.HELPERS["zant_fmax"]
    broken = replace(fmax, source=fmax.source.replace("return", "return no_such_value +", 1))
    monkeypatch.setitem(zig_helpers.HELPERS, "zant_fmax", broken)
    graph = helper.make_graph(
        [helper.make_node("Max", ["a", "b"], ["y"])], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in "ab"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    path = tmp_path / "max.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    out = tmp_path / "out"
    assert cli.main(["compile", str(path), "-o", str(out), "--name", "m", "--target", "cortex-m4"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("zant: internal error: generated Zig does not compile (this is a Zant bug): m.zig:")
    assert "use of undeclared identifier 'no_such_value'" in err and f"the source is {out / 'm.zig'}" in err
    assert len(err.splitlines()) == 1
    assert "no_such_value" in (out / "m.zig").read_text()
    assert not list(out.glob(".zant-*"))
    np.testing.assert_equal(sorted(p.name for p in out.iterdir()), ["m.h", "m.plan.json", "m.zig"])



def test_zant_run_keeps_the_broken_zig_it_names(tmp_path, monkeypatch, capsys):
    """`zant run` builds in a temporary folder: the file its internal error names still exists."""
    fmax = zig_helpers.HELPERS["zant_fmax"]
    broken = replace(fmax, source=fmax.source.replace("return", "return no_such_value +", 1))
    monkeypatch.setitem(zig_helpers.HELPERS, "zant_fmax", broken)
    graph = helper.make_graph(
        [helper.make_node("Max", ["a", "b"], ["y"])], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in "ab"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    path = tmp_path / "max.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    assert cli.main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("zant: internal error: generated Zig does not compile (this is a Zant bug): model.zig:")
    kept = Path(err.rpartition("the source is ")[2].split(" (")[0])
    assert kept.name == "model.zig" and "no_such_value" in kept.read_text()
    shutil.rmtree(kept.parent)

def wide_max_model(path, inputs: int = 1100) -> None:
    """One Max node of `inputs` operands: as many inline zant_fmax/zant_vfmax calls in one function."""
    graph = helper.make_graph(
        [helper.make_node("Max", [f"x{i % 3}" for i in range(inputs)], ["y"])], "g",
        [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [5]) for i in range(3)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_a_thousand_inline_helper_calls_in_one_function_compile(tmp_path, monkeypatch):
    """Zig counts each inline call against the function's comptime branch quota (1000): a Max of
    1,100 operands (or a fused chain of as many Max nodes) did not compile. A function with that
    many calls raises its quota (`zig_helpers.branch_quota`); without it, the same model is a
    `ZigCompileError`."""
    from zant.backend import zig_printer
    from zant.driver import CompileOptions, compile_model
    from zant.runtime import load_compiled

    path = tmp_path / "wide.onnx"
    wide_max_model(path)
    result = compile_model(path, tmp_path / "out", CompileOptions(name="m", optimize="ReleaseSafe"))
    assert "@setEvalBranchQuota(" in result.zig_path.read_text()
    feeds = [np.random.default_rng(i).standard_normal(5).astype(np.float32) for i in range(3)]
    (got,) = load_compiled(result)(*feeds)
    np.testing.assert_array_equal(got, np.maximum(np.maximum(feeds[0], feeds[1]), feeds[2]))

    monkeypatch.setattr(zig_printer, "branch_quota", lambda inline_calls: None)
    with pytest.raises(ZigCompileError, match="evaluation exceeded 1000 backwards branches"):
        compile_model(path, tmp_path / "unquoted", CompileOptions(name="m", optimize="ReleaseSafe"))


def test_call_weight_counts_inline_helpers_only():
    """A call's weight is read from the declarations (`ZigHelper.calls`, `inline`), not the Zig."""
    helpers = {
        "zant_a": ZigHelper("zant_a", "inline fn zant_a(x: f32) f32 {\n    return x;\n}"),
        "zant_b": ZigHelper("zant_b", "inline fn zant_b(x: f32) f32 {\n    return zant_a(zant_a(x));\n}",
                            calls=("zant_a", "zant_a")),
        "zant_c": ZigHelper("zant_c", "fn zant_c(x: f32) f32 {\n    return zant_b(x);\n}", calls=("zant_b",),
                            inline=False),
        "zant_d": ZigHelper("zant_d", "inline fn zant_d(x: f32) f32 {\n    return zant_c(x);\n}", calls=("zant_c",)),
    }
    assert [zig_helpers.call_weight(h, helpers) for h in helpers] == [1, 3, 0, 1]
    assert zig_helpers.uses("zant_d", helpers) == {"zant_d", "zant_c", "zant_b", "zant_a"}
    assert zig_helpers.branch_quota(249) is None
    assert zig_helpers.branch_quota(250) == 1500
    assert zig_helpers.branch_quota(600) == 2200
