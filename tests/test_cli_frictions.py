"""The `zant` command line's small frictions (issue 33): inputs of another element type refused
unless converted on request, inputs checked before the build, `zant plan` taking the compile's
options, `zant --version`, every option's default in `--help`, a read-only output folder, CI
waiting for apt's locks, and the README's test command saying what it costs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest

from tests.test_cli import ZANT, add_relu_model, assert_clean_error, clip_model, run_zant

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def model(tmp_path) -> Path:
    path = tmp_path / "m.onnx"
    onnx.save(add_relu_model(), path)  # x: float32 [2, 3]
    return path


def save(tmp_path: Path, name: str, array: np.ndarray) -> Path:
    path = tmp_path / name
    np.save(path, array)
    return path


@pytest.mark.parametrize("dtype", [np.float64, np.uint8])
def test_run_refuses_an_input_of_another_element_type_before_the_build(tmp_path, model, dtype):
    pixels = save(tmp_path, "x.npy", np.array([[0, 128, 255], [1, 2, 3]], dtype))
    result = run_zant("run", model, "--input", f"x={pixels}")
    error = result.stderr.strip().splitlines()[-1]
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert error == (
        f"zant: error: --input x: the array is {np.dtype(dtype)}, the input is declared float32 "
        "(convert it first, or pass --cast-inputs to convert it)"
    )
    assert "zant: build " not in result.stderr and "zant: passes" not in result.stderr  # refused after import


def test_cast_inputs_converts_on_request(tmp_path, model):
    pixels = save(tmp_path, "x.npy", np.array([[0, 128, 255], [1, 2, 3]], np.uint8))
    result = run_zant("run", model, "--input", f"x={pixels}", "--cast-inputs")
    assert result.returncode == 0, result.stderr
    assert "max abs error 0" in result.stdout
    assert "[  0. 129. 257.   1.   3.   5.]" in result.stdout  # x + [0, 1, 2], converted to float32


@pytest.mark.parametrize(
    "array, name, message",
    [
        (np.zeros([3, 2], np.float32), "x", "--input x: the array has shape [3, 2], the input is declared 2x3"),
        (np.zeros([2, 3], np.float32), "image", "--input image: the model has no input 'image' (inputs: 'x')"),
        (np.zeros([2, 3], np.float64), "x", "--input x: the array is float64, the input is declared float32"),
    ],
    ids=["shape", "name", "dtype"],
)
def test_firmware_inputs_are_checked_before_the_build(tmp_path, model, array, name, message):
    value = save(tmp_path, "v.npy", array)
    out = tmp_path / "out"
    result = run_zant(
        "compile", model, "-o", out, "--target", "cortex-m4", "--firmware", "--input", f"{name}={value}"
    )
    assert_clean_error(result, message)
    assert not out.exists()  # stopped before anything was built or written


def test_an_input_given_for_a_frozen_one_says_so(tmp_path):
    onnx.save(clip_model(), tmp_path / "m.onnx")
    lo = save(tmp_path, "lo.npy", np.array(-0.5, np.float32))
    result = run_zant("run", tmp_path / "m.onnx", "--freeze", f"lo={lo}", "--input", f"lo={lo}")
    assert "--input lo: the model has no input 'lo' (it is frozen by --freeze) (inputs: 'x', 'hi')" in result.stderr
    assert result.returncode == 1


def zant_in_process(capsys, *args) -> tuple[int, str, str]:
    """`zant ARGS` run in this process (no interpreter start-up): status, stdout, stderr."""
    from zant.tools.cli import main

    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def plan_of_compile(capsys, tmp_path: Path, model: Path, *options) -> dict:
    out = tmp_path / "compiled"
    shutil.rmtree(out, ignore_errors=True)
    status, _, err = zant_in_process(capsys, "compile", model, "-o", out, "--no-build", *options)
    assert status == 0, err
    return json.loads((out / "model.plan.json").read_text())


def plan_of_plan(capsys, model: Path, *options) -> dict:
    status, out, err = zant_in_process(capsys, "plan", model, "--json", *options)
    assert status == 0, err
    plan = json.loads(out)
    plan.pop("summary")
    return plan


def test_plan_takes_input_shape_freeze_pipeline_and_constants(tmp_path, capsys):
    """`zant plan` names --input-shape in its error for a symbolic dimension, and takes it; with
    each compile option, its plan is the one `zant compile` writes with the same option."""
    from zant.pipelines import pipeline_for

    symbolic = tmp_path / "sym.onnx"
    onnx.save(add_relu_model(shape=("N", 3)), symbolic)
    status, _, err = zant_in_process(capsys, "plan", symbolic)
    assert status == 1 and "fix it with --input-shape x=1x3" in err, err
    shape = ("--input-shape", "x=4x3")
    planned = plan_of_plan(capsys, symbolic, *shape)
    assert planned == plan_of_compile(capsys, tmp_path, symbolic, *shape)
    assert planned["inputs"] == [{"name": "x", "shape": [4, 3], "dtype": "float32"}]
    naive = ("--target", "cortex-m4", "--pipeline", pipeline_for("cortex-m4", strategy="naive"))
    assert plan_of_plan(capsys, symbolic, *shape, *naive) == plan_of_compile(capsys, tmp_path, symbolic, *shape, *naive)

    clip = tmp_path / "clip.onnx"
    onnx.save(clip_model(), clip)
    options = ("--freeze", f"lo={save(tmp_path, 'lo.npy', np.array(-0.5, np.float32))}",
               "--target", "cortex-m4", "--constants", "staged")
    frozen = plan_of_plan(capsys, clip, *options)
    assert [t["name"] for t in frozen["inputs"]] == ["x", "hi"] and frozen["constants"] == "staged"
    assert frozen == plan_of_compile(capsys, tmp_path, clip, *options)

    status, _, err = zant_in_process(
        capsys, "plan", symbolic, *shape, "--pipeline", "onnx-to-uop,plan-arenas", "--strategy", "naive"
    )
    assert status == 1
    assert "--strategy and --alignment are plan-arenas options: with --pipeline, give them there" in err


def test_plan_takes_the_stage_options_compile_takes(tmp_path, capsys):
    """`zant plan --requant-rounding` and `--flush-denormals` plan the module `zant compile`
    builds with the same options (the onnxruntime mode's float32 scale tables change the
    constants), and are refused beside a --pipeline as compile refuses them."""
    model = Path(__file__).parent / "data" / "qoperator_uint8.onnx"
    m4 = ("--target", "cortex-m4")
    exact = plan_of_plan(capsys, model, *m4)
    rounded = plan_of_plan(capsys, model, *m4, "--requant-rounding", "onnxruntime")
    assert rounded == plan_of_compile(capsys, tmp_path, model, *m4, "--requant-rounding", "onnxruntime")
    assert rounded["plan_hash"] != exact["plan_hash"]
    flushed = ("--flush-denormals",)
    assert plan_of_plan(capsys, model, *flushed) == plan_of_compile(capsys, tmp_path, model, *flushed)
    status, _, err = zant_in_process(
        capsys, "plan", model, "--pipeline", "onnx-to-uop,plan-arenas", "--requant-rounding", "tflite"
    )
    assert status == 1 and "add requant-rounding{mode=...} to it" in err, err


def test_a_closed_stdout_ends_a_command_quietly(tmp_path):
    """`zant plan … | head -1`: the reader going away is no error to print (status 141, as a
    shell reports SIGPIPE), not `zant: error: [Errno 32] Broken pipe`."""
    model = Path(__file__).parent / "data" / "qoperator_uint8.onnx"
    reader, writer = os.pipe()
    os.close(reader)  # gone before zant writes: its first write meets EPIPE, whatever it prints
    try:
        zant = subprocess.run([*ZANT, "plan", str(model), "--json"], stdout=writer, stderr=subprocess.PIPE)
    finally:
        os.close(writer)
    assert zant.returncode == 141 and zant.stderr == b"", zant.stderr


def test_version():
    from importlib.metadata import version

    result = run_zant("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"zant {version('zant')}\n"


def _options_of_every_command():
    from zant.tools.cli import make_parser

    parser = make_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) >= {"compile", "run", "plan", "profile", "conformance", "lit-config"}
    flags = (argparse._HelpAction, argparse._VersionAction, argparse._StoreTrueAction, argparse._StoreFalseAction)
    for name, command in commands.choices.items():
        for action in command._actions:
            if action.option_strings and not isinstance(action, flags):
                yield name, action


def test_every_option_states_its_default_in_help():
    """Every option that takes a value says in its help what happens without it ("default: …",
    or that it is required), and an option with a default value names that value."""
    missing = []
    for command, action in _options_of_every_command():
        text = action.help or ""
        stated = "default" in text or (action.required and "required" in text)
        if action.default not in (None, [], False) and str(action.default) not in text:
            stated = False
        if not stated:
            missing.append(f"zant {command} {'/'.join(action.option_strings)} (default {action.default!r}): {text!r}")
    assert not missing, "options whose help states no default:\n" + "\n".join(missing)
    # argparse's help shows it (the -O that used to print only its choices)
    assert "build mode (default: ReleaseFast)" in " ".join(run_zant("compile", "--help").stdout.split())


def _make_read_only(folder: Path) -> bool:
    """Make `folder` read-only for this process, root included (chattr +i where we are root)."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None:
            return False
        if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
            return False
    else:
        folder.chmod(0o555)
    try:
        (folder / "probe").touch()
    except OSError:
        return True
    (folder / "probe").unlink()
    return False


def test_read_only_output_folder(tmp_path, model):
    out = tmp_path / "out"
    out.mkdir()
    if not _make_read_only(out):
        pytest.skip("cannot make a folder read-only here (root without chattr on this file system)")
    try:
        for folder in (out, out / "sub"):
            result = run_zant("compile", model, "-o", folder, "--no-build")
            assert_clean_error(result, f"cannot write into the output folder {folder}: ")
            assert ".zant-" not in result.stderr  # not the staging folder inside it
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(out)], check=True)
        out.chmod(0o755)


def _apt_update_function() -> str:
    """`.ci/run`'s lines from `APT_WAIT=` to the end of `apt_update`."""
    text = (ROOT / ".ci" / "run").read_text()
    match = re.search(r"^APT_WAIT=.*?^}\n", text, re.MULTILINE | re.DOTALL)
    assert match, "no apt_update function in .ci/run"
    return match.group(0)


@pytest.mark.parametrize("failures, error, status, calls", [(2, "Could not get lock", 0, 3), (1, "Temporary failure", 1, 1)])
def test_ci_waits_for_the_apt_lock(tmp_path, failures, error, status, calls):
    """`apt-get update` fails at once while another apt holds the package lists' lock (apt 2.6
    ignores DPkg::Lock::Timeout there): `.ci/run` retries it while the lock is the reason, and
    only then. A fake apt-get fails `failures` times."""
    fake = tmp_path / "bin" / "apt-get"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {tmp_path}/calls\n'
        f'n=$(wc -l < {tmp_path}/calls)\n'
        f'if [ "$n" -le {failures} ]; then echo "E: {error} /var/lib/apt/lists/lock" >&2; exit 100; fi\n'
    )
    fake.chmod(0o755)
    script = _apt_update_function() + "apt_update\n"
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}", "APT_POLL": "0"}
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert result.returncode == status, result.stderr
    recorded = (tmp_path / "calls").read_text().splitlines()
    assert len(recorded) == calls
    assert all(line == "-o DPkg::Lock::Timeout=600 update -qq" for line in recorded)
    # every apt-get of the script waits for dpkg's lock
    for line in (ROOT / ".ci" / "run").read_text().splitlines():
        if not line.lstrip().startswith("#") and re.search(r"\bapt-get\b.*\b(update|install)\b", line):
            assert "DPkg::Lock::Timeout=" in line, line


def test_readme_test_command_says_what_it_costs():
    readme = (ROOT / "README.md").read_text()
    start = readme.index("The whole test suite")
    paragraph = readme[start : readme.index("## ", start)]
    assert "python -m pytest -q" in paragraph
    assert re.search(r"\d+ minutes", paragraph), paragraph
    assert "-m slow" in paragraph and "slow" in paragraph.split("-m slow")[0], paragraph
