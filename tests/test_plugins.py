"""Passes from outside the tree (zant/plugins.py): files, modules, entry points, clashes."""

from __future__ import annotations

from pathlib import Path

import pytest

from zant import plugins
from zant.errors import ZantError
from zant.plugins import all_passes

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "passes" / "hoist_constants.py"


def test_example_file_registers_its_pass():
    factories = plugins.load_pass_plugins([str(EXAMPLE)], all_passes())
    assert list(factories) == ["example-hoist-constants"]
    assert factories["example-hoist-constants"]().__name__ == "HoistConstantsPass"


def test_module_name_spec(tmp_path, monkeypatch):
    (tmp_path / "my_research_passes.py").write_text(
        "from dataclasses import dataclass\n"
        "from xdsl.passes import ModulePass\n"
        "@dataclass(frozen=True)\n"
        "class Nothing(ModulePass):\n"
        "    name = 'do-nothing'\n"
        "    def apply(self, ctx, op):\n"
        "        pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert list(plugins.load_pass_plugins(["my_research_passes"], [])) == ["do-nothing"]


def test_imported_passes_are_not_re_registered(tmp_path):
    plugin = tmp_path / "reexport.py"
    plugin.write_text("from zant.passes.plan_arenas import PlanArenasPass\n")
    with pytest.raises(ZantError, match="defines no ModulePass"):
        plugins.load_pass_plugins([str(plugin)], [])


def test_clash_with_a_builtin_pass_is_an_error(tmp_path):
    plugin = tmp_path / "clash.py"
    plugin.write_text(
        "from xdsl.passes import ModulePass\n"
        "class Mine(ModulePass):\n"
        "    name = 'plan-arenas'\n"
        "    def apply(self, ctx, op):\n"
        "        pass\n"
    )
    with pytest.raises(ZantError, match="'plan-arenas' .* clashes"):
        plugins.load_pass_plugins([str(plugin)], all_passes())


def test_broken_plugin_reports_the_error(tmp_path):
    plugin = tmp_path / "broken.py"
    plugin.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(ZantError, match="cannot load passes from .*RuntimeError: boom"):
        plugins.load_pass_plugins([str(plugin)], [])
    with pytest.raises(ZantError, match="no such file"):
        plugins.load_pass_plugins([str(tmp_path / "absent.py")], [])


def test_entry_points_are_lazy_and_checked(monkeypatch):
    from importlib.metadata import EntryPoint

    points = [
        EntryPoint("example-hoist", "zant.plugins:ENTRY_POINT_GROUP", plugins.ENTRY_POINT_GROUP),
        EntryPoint("plan-arenas", "x:y", plugins.ENTRY_POINT_GROUP),
    ]
    monkeypatch.setattr(plugins, "entry_points", lambda group: points if group == plugins.ENTRY_POINT_GROUP else [])
    with pytest.warns(UserWarning, match="built-in pass has that name"):
        found = plugins.entry_point_passes(["plan-arenas"])
    assert list(found) == ["example-hoist"]
    with pytest.raises(ZantError, match="is not a ModulePass class"):
        found["example-hoist"]()


def test_zant_compile_runs_a_plugin_pass(tmp_path):
    """`zant compile --load-passes FILE --pipeline …` runs the researcher's pass; numerics hold."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    from zant.driver import CompileOptions, compile_model
    from zant.pipelines import DEFAULT_PIPELINE
    from zant.runtime import load_compiled

    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), tmp_path / "m.onnx")
    pipeline = DEFAULT_PIPELINE.replace(",fuse-loops", ",example-hoist-constants,fuse-loops")
    assert "example-hoist-constants" in pipeline
    options = CompileOptions(name="m", optimize="ReleaseSafe", pipeline=pipeline, plugins=(str(EXAMPLE),))
    result = compile_model(tmp_path / "m.onnx", tmp_path / "out", options)
    x = np.array([[-1, 2, 3], [4, -5, 6]], np.float32)
    (z,) = load_compiled(result)(x)
    np.testing.assert_array_equal(z, np.maximum(2 * x, 0))
    with pytest.raises(ZantError, match="invalid pass pipeline"):
        compile_model(tmp_path / "m.onnx", tmp_path / "out2", CompileOptions(name="m", pipeline=pipeline))
