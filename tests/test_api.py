"""The Python API (`zant.compile`, `zant.Model`): the notebook example end to end, and the host
side's contract (inputs by name, element types refused unless cast, artifacts, constants modes).
"""

from __future__ import annotations

import gc
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import zant
from tests.test_cli import add_relu_model
from zant.errors import ZantError

ROOT = Path(__file__).resolve().parent.parent


def test_notebook_example_compiles_predicts_runs_firmware_and_profiles():
    """examples/digits/notebook.py, which uses only the documented API: the digits CNN for a
    Cortex-M4, predicted on the host, run as firmware under QEMU, its plan and its profile."""
    if shutil.which("qemu-system-arm") is None:
        pytest.skip("qemu-system-arm is not installed: the example runs the firmware image under QEMU")
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "digits" / "notebook.py")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("<zant.Model 'digits' target='cortex-m4', board='mps2-an386' in ")
    assert "artifacts: zig digits.zig, header digits.h, plan digits.plan.json, weights digits.weights.bin, " \
        "library libdigits.a, firmware digits.elf" in out
    assert "host: 20/20 of the first images right" in out
    # the first held-out image is a 6; the firmware's probabilities are the host build's
    firmware = next(line for line in out.splitlines() if line.startswith("firmware:"))
    assert firmware.startswith("firmware: digit 6 (label 6), max |firmware - host| ")
    assert float(firmware.split("max |firmware - host| ")[1].split(",")[0]) < 1e-5
    cost = next(line for line in out.splitlines() if line.startswith("one inference:"))
    instructions, cycles = (int(part.split()[0].replace(",", "")) for part in cost[15:].split(", ")[:2])
    assert 50_000 < instructions < cycles, cost
    assert "ms at 25 MHz" in cost
    assert "plan: scratch " in out and "constants 14,640 B" in out
    assert "digits_cnn.onnx on cortex-m4 (mps2-an386, ReleaseFast)" in out  # the profile's headline
    assert "conv2, relu2          Conv, Relu" in out


def test_import_zant_loads_nothing_else():
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, zant; print(sorted(m for m in sys.modules if m.split('.')[0] in "
         "('zant', 'numpy', 'onnx', 'xdsl')))"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert loaded.strip() == "['zant']"


@pytest.fixture(scope="module")
def host_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("api")
    onnx.save(add_relu_model(), folder / "m.onnx")  # y = relu(x + [0, 1, 2]), x: float32 [2, 3]
    return zant.compile(folder / "m.onnx", output_dir=folder / "out", name="net")


X = np.array([[-1, 0, 1], [2, -3, 4]], np.float32)
Y = np.maximum(X + np.arange(3, dtype=np.float32), 0)


def test_predict_on_the_host(host_model):
    assert host_model.target == "host" and host_model.board is None
    np.testing.assert_array_equal(host_model.predict(x=X)["y"], Y)
    np.testing.assert_array_equal(host_model.predict({"x": X})["y"], Y)  # names that are not identifiers
    assert [s.name for s in host_model.inputs] == ["x"] and [s.name for s in host_model.outputs] == ["y"]
    folder = host_model.output_dir
    assert host_model.paths == {
        "zig": folder / "net.zig", "header": folder / "net.h", "plan": folder / "net.plan.json",
        "weights": folder / "net.weights.bin", "library": folder / "libnet.so",
    }
    assert all(path.exists() for path in host_model.paths.values())
    assert host_model.plan["inputs"] == [{"name": "x", "shape": [2, 3], "dtype": "float32"}]


@pytest.mark.parametrize(
    "inputs, message",
    [
        ({"x": X.astype(np.float64)}, "input x: the array is float64, the input is declared float32 "
         "(convert it first, or compile with cast_inputs=True)"),
        ({"x": X.astype(np.uint8)}, "input x: the array is uint8, the input is declared float32"),
        ({"x": X.T}, "input x: the array has shape [3, 2], the input is declared 2x3"),
        ({"image": X}, "input image: the model has no input 'image' (inputs: 'x')"),
        ({}, "missing inputs: x (the model takes x)"),
    ],
    ids=["float64", "uint8", "shape", "name", "missing"],
)
def test_predict_refuses_what_the_model_does_not_take(host_model, inputs, message):
    with pytest.raises(ZantError) as error:
        host_model.predict(**inputs)
    assert str(error.value).startswith(message)


def test_cast_inputs_and_python_values(tmp_path):
    onnx.save(add_relu_model(), tmp_path / "m.onnx")
    model = zant.compile(str(tmp_path / "m.onnx"), cast_inputs=True)
    np.testing.assert_array_equal(model.predict(x=X.astype(np.float64))["y"], Y)
    # a list has no element type of its own: converted without cast_inputs too
    np.testing.assert_array_equal(zant.compile(add_relu_model()).predict(x=X.tolist())["y"], Y)


def test_temporary_output_folder_goes_with_the_model(tmp_path):
    model = zant.compile(add_relu_model().SerializeToString())  # bytes
    folder = model.output_dir
    assert (folder / "libmodel.so").exists()
    with pytest.raises(ZantError, match="compiled for the host: compile with an MCU target"):
        model.run_firmware(x=X)
    del model
    gc.collect()
    assert not folder.exists()


@pytest.mark.parametrize("constants", ["staged", "external"])
def test_predict_calls_init_for_staged_and_external_constants(tmp_path, constants):
    onnx.save(add_relu_model(shape=(2, 64)), tmp_path / "m.onnx")
    model = zant.compile(tmp_path / "m.onnx", constants=constants)
    assert model.plan["constants"] == constants
    x = np.linspace(-2, 2, 128, dtype=np.float32).reshape(2, 64)
    np.testing.assert_array_equal(model.predict(x=x)["y"], np.maximum(x + np.arange(64, dtype=np.float32), 0))


def test_an_mcu_target_predicts_with_its_own_module_on_the_host(tmp_path):
    """For an MCU target, predict builds that target's module (the MCU pipeline: scalar loops)
    for this machine; without firmware=True nothing is linked until run_firmware."""
    onnx.save(add_relu_model(shape=(4, 64)), tmp_path / "m.onnx")
    model = zant.compile(tmp_path / "m.onnx", target="cortex-m0plus", firmware=False, output_dir=tmp_path / "out")
    assert model.board is not None and model.board.target == "cortex-m0plus"
    assert "firmware" not in model.paths and model.paths["library"].name == "libmodel.a"
    assert "@Vector(" not in model.paths["zig"].read_text()
    x = np.linspace(-2, 2, 256, dtype=np.float32).reshape(4, 64)
    np.testing.assert_array_equal(model.predict(x=x)["y"], np.maximum(x + np.arange(64, dtype=np.float32), 0))
    with pytest.raises(ZantError, match="a board is the board of a firmware image"):
        zant.compile(tmp_path / "m.onnx", target="host", board="mps2-an386")
    with pytest.raises(ZantError, match="board 'nucleo-l4r5zi' has a cortex-m4 core, not cortex-m0plus"):
        zant.compile(tmp_path / "m.onnx", target="cortex-m0plus", board="nucleo-l4r5zi", progress=pytest.fail)
