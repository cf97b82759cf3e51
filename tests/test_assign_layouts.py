"""`assign-layouts` and the channels-last int8 activations it chooses (docs/int8.md#activation-layouts):
a depthwise QLinearConv → int8 Clip → pointwise QLinearConv chain compiled with the Cortex-M4
pipeline stores the depthwise output channels-last and the pointwise Conv reads it in place. The
outputs must be the ONNX reference's bit for bit, and the same as without the pass."""

from __future__ import annotations

import numpy as np
import onnx
from e2e import load_compiled
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from zant.driver import CompileOptions, compile_model
from zant.pipelines import MCU_PIPELINE

CHANNELS, OUT_CHANNELS, H, W = 8, 6, 5, 7  # 35 pixels: the last pixel pair overlaps the one before


def _model() -> onnx.ModelProto:
    rng = np.random.default_rng(3)
    dw = rng.integers(-128, 128, (CHANNELS, 1, 3, 3)).astype(np.int8)
    pw = rng.integers(-128, 128, (OUT_CHANNELS, CHANNELS, 1, 1)).astype(np.int8)
    inits = [
        numpy_helper.from_array(np.array(0.05, np.float32), "xs"),
        numpy_helper.from_array(np.array(-7, np.int8), "xz"),
        numpy_helper.from_array(dw, "dw"),
        numpy_helper.from_array((np.full(CHANNELS, 0.01) * (1 + np.arange(CHANNELS))).astype(np.float32), "dws"),
        numpy_helper.from_array(np.zeros(CHANNELS, np.int8), "dwz"),
        numpy_helper.from_array(np.array(0.4, np.float32), "ds"),
        numpy_helper.from_array(np.array(-128, np.int8), "dz"),
        numpy_helper.from_array(pw, "pw"),
        numpy_helper.from_array((np.full(OUT_CHANNELS, 0.002) * (1 + np.arange(OUT_CHANNELS))).astype(np.float32), "pws"),
        numpy_helper.from_array(np.zeros(OUT_CHANNELS, np.int8), "pwz"),
        numpy_helper.from_array(np.array(0.3, np.float32), "ys"),
        numpy_helper.from_array(np.array(5, np.int8), "yz"),
        numpy_helper.from_array(rng.integers(-2000, 2000, OUT_CHANNELS).astype(np.int32), "bias"),
    ]
    nodes = [
        helper.make_node("QLinearConv", ["x", "xs", "xz", "dw", "dws", "dwz", "ds", "dz"], ["d"],
                         group=CHANNELS, pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Clip", ["d", "dz"], ["r"]),
        helper.make_node("QLinearConv", ["r", "ds", "dz", "pw", "pws", "pwz", "ys", "yz", "bias"], ["y"], kernel_shape=[1, 1]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, CHANNELS, H, W])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [1, OUT_CHANNELS, H, W])], inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_channels_last_depthwise_to_pointwise_is_the_reference_bit_for_bit(tmp_path):
    model = _model()
    onnx.save(model, tmp_path / "m.onnx")
    assert "assign-layouts" in MCU_PIPELINE.split(",")
    without = ",".join(s for s in MCU_PIPELINE.split(",") if s != "assign-layouts")
    x = np.random.default_rng(11).integers(-128, 128, (1, CHANNELS, H, W)).astype(np.int8)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    outputs, sources = [], []
    for name, pipeline in (("cl", MCU_PIPELINE), ("nchw", without)):
        result = compile_model(tmp_path / "m.onnx", tmp_path / name, CompileOptions(name=name, optimize="ReleaseFast", pipeline=pipeline))
        sources.append(result.zig_path.read_text())
        (y,) = load_compiled(result)(x)
        outputs.append(y)
    # With the pass the pointwise Conv reads X in place (no column buffer); without it, columns.
    assert "_columns" not in sources[0] and "_columns" in sources[1]
    assert np.array_equal(outputs[0], expected), np.argwhere(outputs[0] != expected)
    assert np.array_equal(outputs[1], expected)
    assert len(np.unique(expected)) > 20  # not all saturated
