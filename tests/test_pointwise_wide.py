"""The widened form of a channels-last int8 pointwise Conv on the Cortex-M4
(`conv_columns._pointwise_wide`, `arm_dsp.smlad_block`): X and each block of 4 weight rows
widened into words of two int16, 4 output channels x 2 pixels per register block. Its outputs
must be the ONNX reference's bit for bit on the host (the op's portable Zig), under QEMU in every
build mode (its assembly: 14 registers when built for speed, 13 otherwise; the shipped mode in
the default run, `e2e.firmware_modes`) and through the uop interpreter (the op's
reference semantics)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from e2e import firmware_modes
from int8_layers import firmware_equals_host
from test_assign_layouts import H, W, _compile_and_run, _model
from test_arm_dsp import disassembly

import test_assign_layouts
from zant.driver import CompileOptions, compile_model
from zant.passes.onnx_to_uop.conv_columns import WIDE_MIN_CHANNELS
from zant.pipelines import MCU_PIPELINE, pipeline_for


def bounded(pipeline: str, bound: int) -> str:
    """`pipeline` with onnx-to-uop's layer bound set to `bound` bytes."""
    def stage(s: str) -> str:
        if s == "onnx-to-uop":
            return f"onnx-to-uop{{layer-bound={bound}}}"
        return s[:-1] + f" layer-bound={bound}}}" if s.startswith("onnx-to-uop{") else s
    return ",".join(map(stage, pipeline.split(",")))


def widened(source: str) -> bool:
    """Whether a model's Zig calls the widened form's blocks (`arm-dsp-block-rows` may have made
    a loop of them one row op)."""
    return "zant_smlad_block(" in source or "zant_smlad_block_row(" in source


def roomy(pipeline: str) -> str:
    """`pipeline` with onnx-to-uop's layer bound lifted: the whole image widened at once."""
    return bounded(pipeline, 1048576)


# The test model at 64 channels: its depthwise Conv and Clip take 2 x 64 x 35 = 4,480 B (the
# graph's layer bound); the pointwise Conv's X and Y 2,240 + 280 B, a block of weight rows 512 B.
LAYER_BOUND = 2 * WIDE_MIN_CHANNELS * H * W


@pytest.fixture
def eight_outputs(monkeypatch):
    # 8 output channels: two blocks of 4 rows (the test model's 6 take the 2 x 2 tiles).
    monkeypatch.setattr(test_assign_layouts, "OUT_CHANNELS", 8)


@pytest.mark.parametrize("channels", [WIDE_MIN_CHANNELS, 96])
def test_wide_blocks_are_the_reference_bit_for_bit(tmp_path, eight_outputs, channels):
    """64 channels (32 steps: a loop of 8 per pass), 96 (48 steps); 35 pixels (the last pair
    overlaps the one before). Without assign-layouts X is NCHW: the column form, no block."""
    without = ",".join(s for s in MCU_PIPELINE.split(",") if s != "assign-layouts")
    staged = roomy(pipeline_for("cortex-m4", weight_cache=256))
    expected, outputs, sources = _compile_and_run(
        tmp_path, _model(channels), {"wide": roomy(MCU_PIPELINE), "staged": staged, "nchw": roomy(without)}
    )
    assert widened(sources["wide"]) and widened(sources["staged"])
    assert not widened(sources["nchw"])
    for name, y in outputs.items():
        assert np.array_equal(y, expected), (name, np.argwhere(y != expected))


def test_few_channels_keep_the_tiles(tmp_path, eight_outputs):
    """Below `WIDE_MIN_CHANNELS` input channels the 2 x 2 tiles stay (their requantization
    outweighs what a block saves on few products)."""
    expected, outputs, sources = _compile_and_run(tmp_path, _model(WIDE_MIN_CHANNELS // 2), {"cl": roomy(MCU_PIPELINE)})
    assert not widened(sources["cl"]) and "zant_smlad_tile(" in sources["cl"]
    assert np.array_equal(outputs["cl"], expected)


def test_blocks_keep_the_plan_within_the_layer_bound(tmp_path, eight_outputs):
    """Within the graph's own layer bound the pointwise Conv widens X in blocks of pixels (here 4
    blocks of 10 of the 35 pixels, the last moved back over the one before) and its plan stays
    within that bound; a bound without room for a block keeps the 2 x 2 tiles; by default (the
    layer bound: `KERNEL_SCRATCH_BYTES`, none) the plan stays within it too, and with room above
    it (`onnx-to-uop{kernel-scratch=N}`) the whole image is widened, at most N above the layer
    bound. Every output is the reference's."""
    from zant.analysis.layer_bound import KERNEL_SCRATCH_BYTES
    from zant.passes.onnx_to_uop.conv_columns import wide_block
    from zant.passes.onnx_to_uop.kernel import Layout

    x = Layout.contiguous(None, [1, WIDE_MIN_CHANNELS, H, W])  # type: ignore[arg-type]
    y = Layout.contiguous(None, [1, 8, H, W])  # type: ignore[arg-type]
    assert wide_block(x, y, LAYER_BOUND) == 10 and wide_block(x, y, 1 << 20) == H * W
    tight = LAYER_BOUND - 1024  # room for 2 pixels' copy: fewer than WIDE_MIN_PIXELS
    assert wide_block(x, y, tight) < 8
    room = 6144
    whole = MCU_PIPELINE.replace(",onnx-to-uop,", f",onnx-to-uop{{kernel-scratch={room}}},")
    pipelines = {
        "blocks": bounded(MCU_PIPELINE, LAYER_BOUND), "tiles": bounded(MCU_PIPELINE, tight), "whole": whole,
        "defaults": MCU_PIPELINE,
    }
    expected, outputs, sources = _compile_and_run(tmp_path, _model(WIDE_MIN_CHANNELS), pipelines)
    for name, y_out in outputs.items():
        assert np.array_equal(y_out, expected), (name, np.argwhere(y_out != expected))
    assert not widened(sources["tiles"])
    assert widened(sources["blocks"]) and widened(sources["whole"])
    scratch = {}
    for name, pipeline in pipelines.items():
        built = compile_model(tmp_path / "m.onnx", tmp_path / f"plan_{name}", CompileOptions(
            name="net", target="cortex-m4", pipeline=pipeline, build=False,
        ))
        scratch[name] = built.plan["ram_arena_bytes"]
    # The copies are what the plans add to the tiles' (whose Clip works in place): a block's
    # within the layer bound, the whole image's within the allowance above it.
    assert scratch["tiles"] < scratch["blocks"] <= LAYER_BOUND < scratch["whole"] <= LAYER_BOUND + room, scratch
    assert KERNEL_SCRATCH_BYTES == 0 and scratch["defaults"] <= LAYER_BOUND, scratch


@pytest.mark.parametrize("channels", [WIDE_MIN_CHANNELS, 96])
def test_blocks_of_pixels_are_the_reference_bit_for_bit(tmp_path, eight_outputs, channels):
    """Blocks of pixels that do not divide the image (35 pixels: 4 blocks of 10 at 64 channels, 3
    of 12 at 96, the last moved back over the one before), the weight rows widened again for
    each block, with the flash-cache board's pipeline too."""
    bound = LAYER_BOUND * channels // WIDE_MIN_CHANNELS
    pipelines = {"blocks": bounded(MCU_PIPELINE, bound), "staged": bounded(pipeline_for("cortex-m4", weight_cache=256), bound)}
    expected, outputs, sources = _compile_and_run(tmp_path, _model(channels), pipelines)
    assert all(map(widened, sources.values()))
    for name, y in outputs.items():
        assert np.array_equal(y, expected), (name, np.argwhere(y != expected))


@pytest.mark.parametrize("optimize", firmware_modes())
def test_firmware_wide_blocks_equal_the_host(tmp_path, eight_outputs, optimize):
    """The block's assembly builds in every mode (14 registers where there is no frame pointer)
    and, run on the Cortex-M4 under QEMU, gives the host build's outputs bit for bit."""
    onnx.save(_model(WIDE_MIN_CHANNELS), tmp_path / "m.onnx")
    x = np.random.default_rng(5).integers(-128, 128, (1, WIDE_MIN_CHANNELS, H, W)).astype(np.int8)
    firmware = firmware_equals_host(tmp_path / "m.onnx", tmp_path, x, optimize, pipeline=roomy(MCU_PIPELINE))
    assert widened(firmware.zig_path.read_text())
    assert disassembly(firmware.firmware_path).count("smlad") >= 8


def test_interpreter_checks_the_wide_blocks(tmp_path, eight_outputs):
    """`--check-each-pass` through the Cortex-M4 pipeline: the lowering's blocks (the
    interpreter runs `smlad_block` by its reference semantics) and every later pass leave the
    outputs as the onnx dialect's."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass
    from zant.plugins import all_passes

    onnx.save(_model(WIDE_MIN_CHANNELS), tmp_path / "m.onnx")
    module = import_model(str(tmp_path / "m.onnx"))
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, roomy(MCU_PIPELINE)).passes
    report = check_each_pass(module, passes, make_context(), seed=7)
    assert "onnx-to-uop" in report.checked
    assert sum(op.name == "arm_dsp.smlad_block" for op in module.walk()) == 1
