"""Every path option of `zant` and `zant-opt`, given relative to the working directory and given
absolute: each command runs in a subprocess whose working directory is the test's folder.

Zig runs with the output folder as its working directory, so a path handed to it as the user spelt
it (a linker script, a cache folder) would be read from the wrong place.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zant.backend.build import BOARDS, build_zig
from zant.backend.firmware import qemu_missing, run_firmware
from zant.driver import TensorSignature
from zant.pipelines import PRINT_PIPELINE

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "examples" / "passes" / "hoist_constants.py"
PLUGIN_PIPELINE = f"fold-constants,onnx-to-uop,example-hoist-constants,plan-arenas,verify-arena-plan,{PRINT_PIPELINE}"

X = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -4.0]], np.float32)
B = np.array([1.0, 2.0, 3.0], np.float32)

AN386_FILE = """\
core = "cortex-m4"
qemu = "mps2-an386"
flash = { origin = 0x0000_0000, size = "4 MB" }
ram = { origin = 0x2000_0000, size = "4 MB" }
"""


def add_model() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["y"], name="add")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(X.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(X.shape))],
        [numpy_helper.from_array(B, "b")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The working directory: `in/m.onnx`, `in/x.npy`, `in/plugin.py` and `in/an386.toml`."""
    (tmp_path / "in").mkdir()
    onnx.save(add_model(), tmp_path / "in" / "m.onnx")
    np.save(tmp_path / "in" / "x.npy", X)
    shutil.copy(PLUGIN, tmp_path / "in" / "plugin.py")
    (tmp_path / "in" / "an386.toml").write_text(AN386_FILE, encoding="utf-8")
    return tmp_path


@pytest.fixture(params=["relative", "absolute"])
def spell(request, folder):
    """Spells a path under the working directory relative to it or absolute."""
    return (lambda path: path) if request.param == "relative" else (lambda path: str(folder / path))


def run(tool: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", tool, *args], capture_output=True, text=True, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return result


def zant(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run("zant.tools.cli", *args, cwd=cwd)


def require_qemu() -> None:
    missing = qemu_missing(BOARDS["mps2-an386"])
    if missing:
        pytest.skip(missing)


def test_compile(folder, spell):
    zant("compile", spell("in/m.onnx"), "-o", spell("out/lib"), "--name", "net", cwd=folder)
    built = folder / "out" / "lib"
    assert {"net.zig", "net.h", "net.plan.json", "libnet.so"} <= {p.name for p in built.iterdir()}


def test_compile_firmware_with_inputs_and_board_file(folder, spell):
    require_qemu()
    zant(
        "compile", spell("in/m.onnx"), "-o", spell("out/fw"), "--name", "net", "--firmware",
        "--board", spell("in/an386.toml"), "--input", f"x={spell('in/x.npy')}", cwd=folder,
    )
    elf = folder / "out" / "fw" / "net.elf"
    outputs = [TensorSignature("y", list(X.shape), "float32")]
    assert run_firmware(elf, BOARDS["mps2-an386"], outputs).outputs[0].tolist() == (X + B).tolist()


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_run(folder, spell, target):
    if target != "host":
        require_qemu()
    ran = zant("run", spell("in/m.onnx"), "--target", target, "--input", f"x={spell('in/x.npy')}", cwd=folder)
    with np.printoptions(precision=6, suppress=True, linewidth=100):  # as `zant run` prints
        values = str((X + B).reshape(-1))
    assert "random" not in ran.stdout and values in ran.stdout and "max abs error 0\n" in ran.stdout


def test_plan_svg(folder, spell):
    zant("plan", spell("in/m.onnx"), "--svg", spell("in/plan.svg"), cwd=folder)
    assert (folder / "in" / "plan.svg").read_text(encoding="utf-8").startswith("<svg")


def test_load_passes_and_zant_opt_output(folder, spell):
    # The pipeline names the plugin's pass, so it runs only if the file was found.
    zant(
        "compile", spell("in/m.onnx"), "-o", spell("out/plugin"), "--name", "net", "--no-build",
        "--load-passes", spell("in/plugin.py"), "--pipeline", PLUGIN_PIPELINE, cwd=folder,
    )
    assert (folder / "out" / "plugin" / "net.zig").exists()
    run(
        "zant.tools.zant_opt", spell("in/m.onnx"), "--load-passes", spell("in/plugin.py"),
        "-p", PLUGIN_PIPELINE, "-o", spell("in/m.mlir"), cwd=folder,
    )
    assert "uop.define_global" in (folder / "in" / "m.mlir").read_text(encoding="utf-8")


def test_conformance_reports_and_work_dir(folder, spell):
    zant(
        "conformance", "--filter", "^test_abs$", "--jobs", "1", "--quiet", "--output-md", spell("in/report.md"),
        "--output-json", spell("in/report.json"), "--work-dir", spell("work"), cwd=folder,
    )
    report = json.loads((folder / "in" / "report.json").read_text(encoding="utf-8"))
    assert [(c["name"], c["status"]) for c in report["cases"]] == [("test_abs", "pass")]
    assert "Abs" in (folder / "in" / "report.md").read_text(encoding="utf-8")
    assert list((folder / "work").glob("batch000/*.zig"))


def test_relative_cache_dir_is_read_from_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ZANT_CACHE_DIR", "cache")
    (tmp_path / "k.zig").write_text("export fn k_one() callconv(.c) i32 { return 1; }\n", encoding="utf-8")
    build_zig(tmp_path / "k.zig", tmp_path / "out" / "k.o", kind="obj")
    assert (tmp_path / "cache").is_dir() and not (tmp_path / "out" / "cache").exists()
