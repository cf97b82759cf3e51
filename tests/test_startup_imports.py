"""What zant-opt imports to start: reading, verifying and printing uop IR, and onnx-dialect IR too,
does not import the `onnx` package (issue 31: each lit RUN line is a fresh process, and importing
onnx and its schemas cost ~0.1 s of CPU each); zant.ir.types' own spelling of ONNX's element
types and the onnx ops' generated signatures, which make that possible, agree with onnx's
(tests/test_onnx_dialect_generated.py checks the signatures)."""

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
    "test, args",
    [
        ("passes/fold-constant-loads.mlir", ["-p", "fold-constant-loads"]),
        ("targets/zig-constants.mlir", ["-p", "plan-arenas,fold-constant-loads,linearize-geps", "-t", "zig{name=net}"]),
        # The onnx dialect: parsed, verified, rewritten by xDSL's own passes and printed from
        # the ops' generated signatures, without the schemas.
        ("passes/dce.mlir", ["--split-input-file", "-p", "cse,dce"]),
        ("dialects/onnx/ops.mlir", ["--print-op-generic"]),
        ("dialects/onnx/contrib.mlir", []),
        ("dialects/onnx/invalid.mlir", ["--split-input-file", "--verify-diagnostics"]),
        ("dialects/onnx/training-invalid.mlir", ["--split-input-file", "--verify-diagnostics"]),
    ],
)
def test_zant_opt_on_ir_that_needs_no_schema_does_not_import_onnx(test, args):
    run = subprocess.run([sys.executable, "-c", PROBE, str(FILECHECK / test), *args], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    if "--verify-diagnostics" not in args:
        assert run.stdout.strip()
    assert "onnx imported: []" in run.stderr, run.stderr


def test_a_pass_that_reads_schema_defaults_imports_onnx():
    """The probe sees onnx when it is imported: onnx-to-uop, whose lowerings read schema
    defaults (`get_attr`), imports it when the pipeline names it."""
    run = subprocess.run(
        [sys.executable, "-c", PROBE, str(FILECHECK / "passes/dce.mlir"), "--split-input-file", "-p", "onnx-to-uop"],
        capture_output=True, text=True,
    )
    assert "onnx imported: [" in run.stderr and "onnx imported: []" not in run.stderr, run.stderr
