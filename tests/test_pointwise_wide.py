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


def _chain_model() -> onnx.ModelProto:
    """`test_assign_layouts._model` at 64 channels with a 64 -> 64 pointwise Conv (and its Clip)
    before the last one: `assign-layouts` makes its output channels-last (a pointwise Conv reads
    it), and its X and Y (2,240 B each) are the graph's layer bound with the depthwise Conv's."""
    from onnx import helper, numpy_helper

    model = _model(WIDE_MIN_CHANNELS)
    graph = model.graph
    rng = np.random.default_rng(8)
    w = rng.integers(-128, 128, (WIDE_MIN_CHANNELS, WIDE_MIN_CHANNELS, 1, 1)).astype(np.int8)
    graph.initializer.extend([
        numpy_helper.from_array(w, "mid_w"),
        numpy_helper.from_array((np.full(WIDE_MIN_CHANNELS, 0.003) * (1 + np.arange(WIDE_MIN_CHANNELS) % 5)).astype(np.float32), "mid_ws"),
        numpy_helper.from_array(np.zeros(WIDE_MIN_CHANNELS, np.int8), "mid_wz"),
        numpy_helper.from_array(rng.integers(-3000, 3000, WIDE_MIN_CHANNELS).astype(np.int32), "mid_bias"),
    ])
    mid = helper.make_node("QLinearConv", ["r", "ds", "dz", "mid_w", "mid_ws", "mid_wz", "ds", "dz", "mid_bias"], ["m"], kernel_shape=[1, 1])
    return _before_last(model, mid, "mr")


def _before_last(model: onnx.ModelProto, conv: onnx.NodeProto, relu: str) -> onnx.ModelProto:
    """`model` with `conv` and its Clip at the zero point (its fused ReLU, output `relu`) before
    the graph's last node, which reads `relu`."""
    from onnx import helper

    graph = model.graph
    graph.node[-1].input[0] = relu
    graph.node.insert(len(graph.node) - 1, conv)
    graph.node.insert(len(graph.node) - 1, helper.make_node("Clip", [conv.output[0], "dz"], [relu]))
    onnx.checker.check_model(model)
    return model


def test_in_place_blocks_keep_the_default_plan_at_the_layer_bound(tmp_path, eight_outputs):
    """Where X and Y are the layer bound, the widened form's copies fit only with Y written over
    X (its nest marked in place, its blocks never overlapping, the last odd: 35 pixels in 12, 12
    and 11): the default plan takes the form and stays within the layer bound, Y in X's bytes;
    the outputs are the reference's."""
    model = _chain_model()
    expected, outputs, sources = _compile_and_run(tmp_path, model, {"defaults": MCU_PIPELINE})
    assert np.array_equal(outputs["defaults"], expected), np.argwhere(outputs["defaults"] != expected)
    assert widened(sources["defaults"])
    built = compile_model(tmp_path / "m.onnx", tmp_path / "plan", CompileOptions(name="net", target="cortex-m4", pipeline=MCU_PIPELINE, build=False))
    pairs = [(s["input"], s["output"]) for s in built.plan["schedules"]]
    assert pairs == [("r", "m")], pairs
    assert built.plan["ram_arena_bytes"] <= LAYER_BOUND, built.plan["ram_arena_bytes"]


@pytest.mark.parametrize("optimize", firmware_modes())
def test_firmware_in_place_blocks_equal_the_host(tmp_path, eight_outputs, optimize):
    """The in-place blocks (Y over X, in the default plan) run on the Cortex-M4 under QEMU
    give the host build's outputs bit for bit."""
    onnx.save(_chain_model(), tmp_path / "m.onnx")
    x = np.random.default_rng(6).integers(-128, 128, (1, WIDE_MIN_CHANNELS, H, W)).astype(np.int8)
    firmware = firmware_equals_host(tmp_path / "m.onnx", tmp_path, x, optimize, pipeline=MCU_PIPELINE)
    assert widened(firmware.zig_path.read_text())


def _nchw_chain_model() -> onnx.ModelProto:
    """`_chain_model` with a second depthwise Conv (and its Clip) between the 64 -> 64 pointwise
    Conv and the last one: a DS-CNN's blocks, whose pointwise outputs stay NCHW for the
    depthwise rows."""
    from onnx import helper, numpy_helper

    model = _chain_model()
    graph = model.graph
    rng = np.random.default_rng(9)
    graph.initializer.extend([
        numpy_helper.from_array(rng.integers(-128, 128, (WIDE_MIN_CHANNELS, 1, 3, 3)).astype(np.int8), "dw2"),
    ])
    dw = helper.make_node("QLinearConv", ["mr", "ds", "dz", "dw2", "dws", "dwz", "ds", "dz"], ["d2"],
                          group=WIDE_MIN_CHANNELS, pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    return _before_last(model, dw, "r2")


def test_nchw_in_place_blocks_keep_the_default_plan_at_the_layer_bound(tmp_path, eight_outputs):
    """A pointwise Conv whose Y a depthwise Conv reads (NCHW) and whose X and Y are the layer
    bound: `assign-layouts` keeps its X NCHW too (`widened_over_nchw`), and the widened form
    gathers each block of X's pixels from NCHW and writes Y over X in the default plan, within
    the layer bound; the outputs are the reference's."""
    expected, outputs, sources = _compile_and_run(tmp_path, _nchw_chain_model(), {"defaults": MCU_PIPELINE})
    assert np.array_equal(outputs["defaults"], expected), np.argwhere(outputs["defaults"] != expected)
    assert widened(sources["defaults"])
    built = compile_model(tmp_path / "m.onnx", tmp_path / "plan", CompileOptions(name="net", target="cortex-m4", pipeline=MCU_PIPELINE, build=False))
    assert [(s["input"], s["output"]) for s in built.plan["schedules"]] == [("r", "m")], built.plan["schedules"]
    assert built.plan["ram_arena_bytes"] <= LAYER_BOUND, built.plan["ram_arena_bytes"]


@pytest.mark.parametrize("optimize", firmware_modes())
def test_firmware_nchw_in_place_blocks_equal_the_host(tmp_path, eight_outputs, optimize):
    """The NCHW in-place blocks under QEMU on the Cortex-M4: the host build's outputs bit for bit."""
    onnx.save(_nchw_chain_model(), tmp_path / "m.onnx")
    x = np.random.default_rng(7).integers(-128, 128, (1, WIDE_MIN_CHANNELS, H, W)).astype(np.int8)
    firmware = firmware_equals_host(tmp_path / "m.onnx", tmp_path, x, optimize, pipeline=MCU_PIPELINE)
    assert widened(firmware.zig_path.read_text())


@pytest.mark.parametrize("channels, takes_blocks", [(676, True), (680, False)])
def test_firmware_blocks_within_the_loads_reach(tmp_path, eight_outputs, channels, takes_blocks):
    """`smlad_block` reaches its fourth weight row by an LDR immediate, 4·(3·C/2 + 7) bytes at
    most 4,095 (`arm_dsp.smlad_block_in_reach`): 676 input channels take the blocks, 680 the
    column form. Before the check a 960-channel projection (MobileNetV2) built blocks that LLVM
    refused to assemble ("invalid operand for instruction"); both now build as firmware and
    give the host build's outputs."""
    onnx.save(_model(channels), tmp_path / "m.onnx")
    x = np.random.default_rng(5).integers(-128, 128, (1, channels, H, W)).astype(np.int8)
    firmware = firmware_equals_host(tmp_path / "m.onnx", tmp_path, x, "ReleaseFast", pipeline=roomy(MCU_PIPELINE))
    assert widened(firmware.zig_path.read_text()) == takes_blocks


@pytest.mark.parametrize("optimize", ["ReleaseSafe", "ReleaseSmall"])
def test_other_modes_forgo_the_in_place_blocks(tmp_path, eight_outputs, optimize):
    """A microcontroller's build in another mode than ReleaseFast runs
    `assign-layouts{in-place-blocks=false}` (`zant.driver.mode_pipeline`): the layouts chosen
    only for the widened form written over its NCHW input are not chosen (its row asm is
    ReleaseFast's; the bench KWS int8 in ReleaseSafe 4.35 M instructions instead of 6.31 M, in
    ReleaseSmall 40,037 B of flash instead of 45,615 B); ReleaseFast keeps them. Both plans
    within the layer bound."""
    onnx.save(_nchw_chain_model(), tmp_path / "m.onnx")
    plans = {
        mode: compile_model(
            tmp_path / "m.onnx", tmp_path / mode, CompileOptions(name="net", target="cortex-m4", optimize=mode, build=False)
        ).plan
        for mode in ("ReleaseFast", optimize)
    }
    assert [(s["input"], s["output"]) for s in plans["ReleaseFast"].get("schedules", [])] == [("r", "m")]
    assert not plans[optimize].get("schedules")
    assert plans[optimize]["ram_arena_bytes"] <= LAYER_BOUND
