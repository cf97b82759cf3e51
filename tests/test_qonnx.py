"""QONNX's Quant / BipolarQuant / Trunc (zant/frontend/qonnx.py) computed as QONNX computes them.

The reference is onnx's ReferenceEvaluator with the three ops transcribed from QONNX's executor
(`qonnx.custom_op.general`: int_quant, binary_quant, trunc_v2; qonnx is not installed here, the
corpus model tests/data/interop/brevitas_qonnx_* checks against the real executor's outputs).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from zant.driver import CompileOptions, compile_model
from zant.errors import ZantError
from zant.frontend.qonnx import int_range
from zant.runtime import load_compiled

_spec = importlib.util.spec_from_file_location(
    "make_qonnx_model", Path(__file__).parent / "filecheck" / "Inputs" / "make_qonnx_model.py")
make_qonnx_model = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_qonnx_model)

_ROUND = {"ROUND": np.round, "HALF_EVEN": np.round, "FLOOR": np.floor, "CEIL": np.ceil}


class Quant(OpRun):
    op_domain = "qonnx.custom_op.general"

    def _run(self, x, scale, zeropt, bitwidth, signed=1, narrow=0, rounding_mode="ROUND"):
        y = x / scale + zeropt
        lo, hi = int_range(int(bitwidth), bool(signed), bool(narrow))
        y = _ROUND[rounding_mode.upper()](np.clip(y, lo, hi))
        return ((y - zeropt) * scale).astype(np.float32),


class BipolarQuant(OpRun):
    op_domain = "qonnx.custom_op.general"

    def _run(self, x, scale):
        return (np.where(x >= 0, np.float32(1), np.float32(-1)) * scale).astype(np.float32),


class Trunc(OpRun):
    op_domain = "qonnx.custom_op.general"

    def _run(self, x, scale, zeropt, in_bits, out_scale, out_bits, signed=1, narrow=0, rounding_mode="FLOOR"):
        y = np.round(x / scale + zeropt)
        t = 2 ** np.round(np.log2(out_scale / scale))
        lo, hi = int_range(int(out_bits), bool(signed), bool(narrow))
        y = _ROUND[rounding_mode.upper()](np.clip(y / t, lo, hi))
        return ((y - zeropt / t) * out_scale).astype(np.float32),


def _inputs(seed: int, shape) -> list[np.ndarray]:
    """Normal values, and values on the grid's halves (ties of the 0.5 and 0.25 steps)."""
    rng = np.random.default_rng(seed)
    return [rng.normal(0, 3, shape).astype(np.float32), ((rng.integers(-16, 16, shape) + 0.5) * 0.25).astype(np.float32)]


@pytest.mark.parametrize("case, float_bytes", [("activations", 160), ("trunc_floor", 160), ("weights", 256)])
def test_qonnx_ops_compute_as_qonnx(case, float_bytes, tmp_path):
    """Host build = the transcribed QONNX executor, bit for bit. Float scratch (measured) only
    where the model is float after the rewrite: the BipolarQuant of a run-time tensor (a float
    Where, 128 B) and the Trunc's result the float Add reads (32 B); in `weights` the two Convs,
    whose outputs no Quant follows (256 B): their weights are integer constants."""
    model = make_qonnx_model.CASES[case]()
    onnx.save(model, tmp_path / "m.onnx")
    result = compile_model(tmp_path / "m.onnx", tmp_path / "out", CompileOptions(name="m", optimize="ReleaseSafe"))
    assert result.plan["float_scratch_bytes"] == float_bytes
    compiled = load_compiled(result)
    reference = ReferenceEvaluator(model, new_ops=[Quant, BipolarQuant, Trunc])
    for x in _inputs(0, [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]):
        (want,) = reference.run(None, {"x": x})
        (got,) = compiled(x)
        if case == "weights":  # float Convs after the quantized ones: float32 sums in another order
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        else:
            assert np.array_equal(got, want), (got.ravel()[:8], want.ravel()[:8])


@pytest.mark.parametrize("case, message", [
    ("floor", "node 'y' (QONNX Quant): rounding_mode FLOOR on a run-time tensor"),
    ("bits20", "node 'y' (QONNX Quant): bit width 20: integer kernels take 1 to 16 bits"),
    ("runtime_scale", "its scale 's' is not a constant (a graph input: compile with --freeze"),
])
def test_qonnx_refusals_name_the_node(case, message, tmp_path):
    onnx.save(make_qonnx_model.CASES[case](), tmp_path / "m.onnx")
    with pytest.raises(ZantError, match=message.replace("(", r"\(").replace(")", r"\)")):
        compile_model(tmp_path / "m.onnx", tmp_path / "out", CompileOptions(name="m", build=False))
