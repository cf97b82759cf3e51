"""The first Convs of the MLPerf Tiny models on DSP cores without Helium (quant.py's dispatch):
an RGB input's 3x3 windows read from a channels-last copy (conv_window), rows of 4 taps over
one channel (KWS's 10x4) and rows of 3 over 2 channels as word taps in 2 x 2 tiles; whole Convs
through the Cortex-M4 pipeline equal the ONNX reference bit for bit (host build)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

# (name, in channels, out channels, H, W, kernel, strides, pads): VWW's first Conv (3x3x3 -> 8,
# stride 2, TensorFlow's SAME pads 0 before and 1 after) on a smaller image, KWS's (10x4 over 1
# channel, stride 2, SAME pads 4/5 and 1/2), and 2 channels under rows of 3 taps.
CASES = [
    ("rgb", 3, 8, 12, 10, [3, 3], [2, 2], [0, 0, 1, 1]),
    ("kws", 1, 8, 13, 10, [10, 4], [2, 2], [4, 1, 5, 2]),
    ("two", 2, 4, 7, 9, [3, 3], [1, 1], [1, 1, 1, 1]),
]


def _model() -> onnx.ModelProto:
    rng = np.random.default_rng(11)
    inputs, outputs, nodes, inits = [], [], [], []
    for name, c, m, h, w, kernel, strides, pads in CASES:
        weights = rng.integers(-128, 128, (m, c, *kernel)).astype(np.int8)
        weights[0].flat[:3] = [-128, 127, -128]
        out_h = (h + pads[0] + pads[2] - kernel[0]) // strides[0] + 1
        out_w = (w + pads[1] + pads[3] - kernel[1]) // strides[1] + 1
        inits += [
            numpy_helper.from_array(np.array(0.05, np.float32), f"{name}_xs"),
            numpy_helper.from_array(np.array(-7, np.int8), f"{name}_xz"),
            numpy_helper.from_array(weights, f"{name}_w"),
            numpy_helper.from_array((0.002 * (1 + np.arange(m))).astype(np.float32), f"{name}_ws"),
            numpy_helper.from_array(np.zeros(m, np.int8), f"{name}_wz"),
            numpy_helper.from_array(np.array(0.9, np.float32), f"{name}_ys"),
            numpy_helper.from_array(np.array(-3, np.int8), f"{name}_yz"),
            numpy_helper.from_array(rng.integers(-3000, 3000, m).astype(np.int32), f"{name}_b"),
        ]
        nodes.append(helper.make_node(
            "QLinearConv", [f"{name}_{s}" if s != "x" else name for s in ("x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b")],
            [f"{name}_y"], kernel_shape=kernel, strides=strides, pads=pads,
        ))
        inputs.append(helper.make_tensor_value_info(name, TensorProto.INT8, [1, c, h, w]))
        outputs.append(helper.make_tensor_value_info(f"{name}_y", TensorProto.INT8, [1, m, out_h, out_w]))
    graph = helper.make_graph(nodes, "first_convs", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_first_convs_are_the_reference_bit_for_bit(tmp_path):
    """The Cortex-M4 pipeline built for the host: the RGB Conv's weights are the channels-last
    form's (no word taps of weight 0), the others' word taps; outputs equal the reference on
    two inputs spanning the int8 range."""
    from e2e import load_compiled
    from zant.driver import CompileOptions, compile_model
    from zant.pipelines import MCU_PIPELINE

    model = _model()
    onnx.save(model, tmp_path / "first.onnx")
    result = compile_model(tmp_path / "first.onnx", tmp_path / "out", CompileOptions(name="first", optimize="ReleaseFast", pipeline=MCU_PIPELINE))
    source = result.zig_path.read_text()
    assert "rgb_y_channels_last_weights" in source and "rgb_y_word_tap_weights" not in source
    assert "kws_y_word_tap_weights" in source and "two_y_word_tap_weights" in source
    run = load_compiled(result)
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        feeds = {}
        for value in model.graph.input:
            shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
            x = rng.integers(-128, 128, shape).astype(np.int8)
            x.flat[:4] = [-128, 127, -128, 127]
            feeds[value.name] = x
        got = run(*(feeds[v.name] for v in model.graph.input))
        want = ReferenceEvaluator(model).run(None, feeds)
        for output, y, expected in zip(model.graph.output, got, want, strict=True):
            y = np.asarray(y).reshape(expected.shape)
            assert len(np.unique(expected)) > 20, output.name  # not saturated
            assert np.array_equal(y, expected), (output.name, np.argwhere(y != expected)[:5])
