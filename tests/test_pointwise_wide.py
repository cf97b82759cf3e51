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


def roomy(pipeline: str) -> str:
    """`pipeline` with onnx-to-uop's layer bound lifted: the test model's pointwise Conv is its
    own peak, within which the default bound keeps the form from growing the plan
    (`test_the_layer_bound_keeps_the_tiles`)."""
    def stage(s: str) -> str:
        if s == "onnx-to-uop":
            return "onnx-to-uop{layer-bound=1048576}"
        return s[:-1] + " layer-bound=1048576}" if s.startswith("onnx-to-uop{") else s
    return ",".join(map(stage, pipeline.split(",")))


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
    assert "zant_smlad_block(" in sources["wide"] and "zant_smlad_block(" in sources["staged"]
    assert "zant_smlad_block(" not in sources["nchw"]
    for name, y in outputs.items():
        assert np.array_equal(y, expected), (name, np.argwhere(y != expected))


def test_few_channels_keep_the_tiles(tmp_path, eight_outputs):
    """Below `WIDE_MIN_CHANNELS` input channels the 2 x 2 tiles stay (their requantization
    outweighs what a block saves on few products)."""
    expected, outputs, sources = _compile_and_run(tmp_path, _model(WIDE_MIN_CHANNELS // 2), {"cl": roomy(MCU_PIPELINE)})
    assert "zant_smlad_block(" not in sources["cl"] and "zant_smlad_tile(" in sources["cl"]
    assert np.array_equal(outputs["cl"], expected)


def test_the_layer_bound_keeps_the_tiles(tmp_path, eight_outputs):
    """With the graph's own layer bound (the default), a layer that is the graph's peak keeps
    the 2 x 2 tiles: the widened copy would raise the plan above the layer-by-layer peak (KWS's
    64-channel layers); the scratch stays at its lower bound."""
    onnx.save(_model(WIDE_MIN_CHANNELS), tmp_path / "m.onnx")
    scratch = {}
    for pipeline, wide in ((MCU_PIPELINE, False), (roomy(MCU_PIPELINE), True)):
        built = compile_model(tmp_path / "m.onnx", tmp_path / str(wide), CompileOptions(
            name="net", target="cortex-m4", pipeline=pipeline, build=False,
        ))
        assert ("zant_smlad_block(" in built.zig_path.read_text()) == wide
        scratch[wide] = built.plan["ram_arena_bytes"]
    # The widened copy of X (2 bytes per element) is what the bound kept out of the plan.
    assert scratch[True] - scratch[False] >= 2 * WIDE_MIN_CHANNELS * H * W, scratch


@pytest.mark.parametrize("optimize", firmware_modes())
def test_firmware_wide_blocks_equal_the_host(tmp_path, eight_outputs, optimize):
    """The block's assembly builds in every mode (14 registers where there is no frame pointer)
    and, run on the Cortex-M4 under QEMU, gives the host build's outputs bit for bit."""
    onnx.save(_model(WIDE_MIN_CHANNELS), tmp_path / "m.onnx")
    x = np.random.default_rng(5).integers(-128, 128, (1, WIDE_MIN_CHANNELS, H, W)).astype(np.int8)
    firmware = firmware_equals_host(tmp_path / "m.onnx", tmp_path, x, optimize, pipeline=roomy(MCU_PIPELINE))
    assert "zant_smlad_block(" in firmware.zig_path.read_text()
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
