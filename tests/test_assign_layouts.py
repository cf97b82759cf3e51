"""`assign-layouts` and the channels-last int8 activations it chooses (docs/int8.md#activation-layouts):
a depthwise QLinearConv → int8 Clip → pointwise QLinearConv chain compiled with the Cortex-M4
pipeline stores the depthwise output channels-last and the pointwise Conv reads it in place. The
outputs must be the ONNX reference's bit for bit, and the same as without the pass."""

from __future__ import annotations

import numpy as np
import onnx
from e2e import load_compiled
from int8_layers import depthwise_pointwise_model
from onnx.reference import ReferenceEvaluator

from zant.driver import CompileOptions, compile_model
from zant.pipelines import MCU_PIPELINE, pipeline_for

CHANNELS, OUT_CHANNELS, H, W = 8, 6, 5, 7  # 35 pixels: the last pixel pair overlaps the one before


def _model(channels: int = CHANNELS) -> onnx.ModelProto:
    return depthwise_pointwise_model(channels, OUT_CHANNELS, H, W, 3, 0.002 * (1 + np.arange(OUT_CHANNELS)))


def _compile_and_run(tmp_path, model: onnx.ModelProto, pipelines: dict[str, str]) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, str]]:
    """The reference's output and each pipeline's (host builds), with their Zig sources."""
    onnx.save(model, tmp_path / "m.onnx")
    channels = model.graph.input[0].type.tensor_type.shape.dim[1].dim_value
    x = np.random.default_rng(11).integers(-128, 128, (1, channels, H, W)).astype(np.int8)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    outputs, sources = {}, {}
    for name, pipeline in pipelines.items():
        result = compile_model(tmp_path / "m.onnx", tmp_path / name, CompileOptions(name=name, optimize="ReleaseFast", pipeline=pipeline))
        sources[name] = result.zig_path.read_text()
        (outputs[name],) = load_compiled(result)(x)
    assert len(np.unique(expected)) > 20  # not all saturated
    return expected, outputs, sources


def test_channels_last_depthwise_to_pointwise_is_the_reference_bit_for_bit(tmp_path):
    assert "assign-layouts" in MCU_PIPELINE.split(",")
    without = ",".join(s for s in MCU_PIPELINE.split(",") if s != "assign-layouts")
    expected, outputs, sources = _compile_and_run(tmp_path, _model(), {"cl": MCU_PIPELINE, "nchw": without})
    # With the pass the pointwise Conv reads X in place (no column buffer); without it, columns.
    assert "_columns" not in sources["cl"] and "_columns" in sources["nchw"]
    for name, y in outputs.items():
        assert np.array_equal(y, expected), (name, np.argwhere(y != expected))


def test_staged_weight_rows_are_the_reference_bit_for_bit(tmp_path):
    """80 channels: a pair of weight rows (160 bytes) is more than half a 256-byte flash cache
    (`weight_cache_bytes` of the NUCLEO-L4R5ZI): each pair is copied to RAM before its tiles."""
    from zant.backend.boards import BOARDS
    from zant.driver import weight_cache_bytes

    cache = weight_cache_bytes(BOARDS["nucleo-l4r5zi"])
    assert cache == 256 and weight_cache_bytes(BOARDS["mps2-an386"]) == 0
    staged = pipeline_for("cortex-m4", weight_cache=cache)
    assert "onnx-to-uop{weight-cache-bytes=256}" in staged.split(",")
    expected, outputs, sources = _compile_and_run(tmp_path, _model(80), {"staged": staged, "flash": MCU_PIPELINE})
    assert "_columns_weights" in sources["staged"] and "_columns_weights" not in sources["flash"]
    for name, y in outputs.items():
        assert np.array_equal(y, expected), (name, np.argwhere(y != expected))
