"""What zant-opt imports to start: reading and printing uop IR does not import onnx (issue 31:
each lit RUN line is a fresh process), and zant.ir.types' own spelling of ONNX's element types,
which makes that possible, agrees with onnx's."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from zant.errors import ZantError
from zant.ir.types import ONNX_TO_MLIR_ELEMENT_TYPE, DataType, mlir_element_type, numpy_dtype

FILECHECK = Path(__file__).parent / "filecheck"


def test_data_type_numbers_are_onnx_s():
    names = [n for n in vars(DataType) if n.isupper()]
    assert sorted(getattr(DataType, n) for n in names) == sorted(ONNX_TO_MLIR_ELEMENT_TYPE)
    for name in names:
        assert getattr(DataType, name) == getattr(TensorProto, name), name


@pytest.mark.parametrize("onnx_type", sorted(ONNX_TO_MLIR_ELEMENT_TYPE))
def test_numpy_dtype_is_onnx_s(onnx_type):
    expected = np.dtype(helper.tensor_dtype_to_np_dtype(onnx_type))
    assert numpy_dtype(ONNX_TO_MLIR_ELEMENT_TYPE[onnx_type]) == expected


def test_unsupported_element_type_is_named():
    with pytest.raises(ZantError, match="tensor 't' has unsupported element type STRING"):
        mlir_element_type(TensorProto.STRING, "t")
    with pytest.raises(ZantError, match="unsupported element type 99"):
        mlir_element_type(99, "t")


PROBE = """
import sys
from zant.tools.zant_opt import main
status = main(sys.argv[1:])
print("onnx imported:", sorted(m for m in sys.modules if m == "onnx" or m.startswith("onnx.")), file=sys.stderr)
sys.exit(status)
"""


@pytest.mark.parametrize(
    "test, pipeline",
    [
        ("passes/fold-constant-loads.mlir", "fold-constant-loads"),
        ("targets/zig-constants.mlir", "plan-arenas,fold-constant-loads,linearize-geps"),
    ],
)
def test_zant_opt_on_uop_ir_does_not_import_onnx(test, pipeline):
    args = [str(FILECHECK / test), "-p", pipeline]
    if test.startswith("targets/"):
        args += ["-t", "zig{name=net}"]
    run = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip()
    assert "onnx imported: []" in run.stderr, run.stderr
