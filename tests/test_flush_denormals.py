"""`flush-denormals` (issue 34 item 4): NAME_predict runs with subnormal floats flushed to zero
and gives the caller its floating-point control register back; off by default."""

from __future__ import annotations

import ctypes
import platform

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from zant.driver import CompileOptions, compile_model
from zant.pipelines import pipeline_for

pytestmark = pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64", "aarch64", "arm64"), reason="flush-to-zero is set on x86-64 and AArch64 hosts only"
)


def _mlp(path):
    """Two bias-free MatMul+Relu layers: the activations scale with the input."""
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array((rng.standard_normal((32, 32)) * 0.25).astype(np.float32), f"w{i}") for i in range(2)]
    nodes = [
        helper.make_node("MatMul", ["x", "w0"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("MatMul", ["r", "w1"], ["y"]),
    ]
    value = helper.make_tensor_value_info
    graph = helper.make_graph(nodes, "mlp", [value("x", TensorProto.FLOAT, [4, 32])], [value("y", TensorProto.FLOAT, [4, 32])], weights)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def _predict(tmp_path, pipeline, name):
    result = compile_model(_mlp(tmp_path / "mlp.onnx"), tmp_path / name, CompileOptions(name=name, target="host", pipeline=pipeline))
    predict = getattr(ctypes.CDLL(str(result.library_path)), f"{name}_predict")

    def run(x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, np.float32)
        y = np.empty((4, 32), np.float32)
        assert predict(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(y.ctypes.data)) == 0
        return y

    return run


def test_flush_denormals_flushes_inside_and_restores_outside(tmp_path):
    default = _predict(tmp_path, pipeline_for("host"), "plain")
    flushed = _predict(tmp_path, pipeline_for("host") + ",flush-denormals", "flushed")
    x = np.random.default_rng(1).standard_normal((4, 32)).astype(np.float32)
    tiny = np.finfo(np.float32).tiny
    # Normal values: bit for bit the default build's.
    np.testing.assert_array_equal(flushed(x), default(x))
    # Subnormal inputs: the default keeps IEEE subnormals, the flushed build reads them as 0.
    small = x * np.float32(1e-39)
    kept = default(small)
    assert np.any((kept != 0) & (np.abs(kept) < tiny))
    assert not np.any(flushed(small))
    # The caller's own arithmetic still has subnormals after the call (its MXCSR/FPCR restored).
    assert np.float32(1e-38) * np.float32(0.01) != 0


def test_flush_denormals_option_appends_the_stage(tmp_path):
    """`--flush-denormals` / `flush_denormals=True` is the default pipeline plus the stage: the
    same library as the pipeline spelled out; with --pipeline it is refused (add the stage)."""
    from zant.errors import ZantError

    model = _mlp(tmp_path / "mlp.onnx")
    by_flag = compile_model(model, tmp_path / "flag", CompileOptions(name="m", target="host", build=False, flush_denormals=True))
    spelled = compile_model(
        model, tmp_path / "spelled",
        CompileOptions(name="m", target="host", build=False, pipeline=pipeline_for("host") + ",flush-denormals"),
    )
    zig = by_flag.zig_path.read_text()
    assert zig == spelled.zig_path.read_text()
    assert zig != compile_model(model, tmp_path / "plain", CompileOptions(name="m", target="host", build=False)).zig_path.read_text()
    with pytest.raises(ZantError, match="with --pipeline"):
        compile_model(model, tmp_path / "both", CompileOptions(name="m", pipeline=pipeline_for("host"), flush_denormals=True))
    with pytest.raises(ZantError, match="cortex-m4"):
        compile_model(model, tmp_path / "mcu", CompileOptions(name="m", target="cortex-m4", build=False, flush_denormals=True))
