"""A row of requantized 2 x 2 tiles as one asm block on the Cortex-M4 (`arm-dsp-tile-rows`,
`arm_dsp.smlad_tile_row`): a channels-last pointwise int8 Conv of at most 32 input channels,
its pixel pairs' tiles, their SMMLA/SSAT epilogues and stores in one loop of assembly. Its
outputs must be the ONNX reference's bit for bit on the host (the op's portable Zig), under QEMU
in every build mode (its assembly: 13 registers and its frame below sp; the shipped mode in the
default run, `e2e.firmware_modes`), and through the uop interpreter (its reference semantics);
shapes it does not take (an odd number of pixels, channels not a multiple of 4, odd output
channels) keep their forms and their outputs."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from e2e import firmware_modes, load_compiled
from int8_layers import depthwise_pointwise_model
from onnx.reference import ReferenceEvaluator

from zant.driver import CompileOptions, compile_model
from zant.pipelines import MCU_PIPELINE

ROW = "zant_smlad_tile_row("


def _model(channels: int, out_channels: int, h: int, w: int, relu: bool = True) -> onnx.ModelProto:
    """The depthwise -> ReLU -> pointwise chain (`depthwise_pointwise_model`), the pointwise
    QLinearConv under test."""
    scales = 0.03 / channels * (1 + np.arange(out_channels)) ** 0.5
    return depthwise_pointwise_model(channels, out_channels, h, w, channels * 100 + out_channels, scales, relu)


def _input(model: onnx.ModelProto) -> np.ndarray:
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    return np.random.default_rng(11).integers(-128, 128, shape).astype(np.int8)


# (input channels, output channels, H, W, whether the row form is taken)
SHAPES = [
    (8, 16, 4, 6, True),  # VWW's 8 -> 16 (2 steps), 12 pixel pairs
    (8, 2, 1, 2, True),  # one output pair, one pixel pair
    (4, 2, 2, 2, False),  # one step: no smlad_tile (arm_dsp_tile_loops.MIN_STRAIGHT), no row
    (32, 6, 2, 3, True),  # 8 steps (the most straight-line), 3 pixel pairs
    (12, 4, 3, 6, True),  # 3 steps
    (16, 4, 3, 5, False),  # 15 pixels: the last pair overlaps the one before (a min): the loop stays
    (6, 4, 2, 4, False),  # channels not a multiple of 4: no word steps, no smlad_tile
    (20, 5, 2, 4, False),  # odd output channels: not the column form
    (36, 4, 2, 2, False),  # 9 steps: past the straight-line tile
]


@pytest.mark.parametrize(("channels", "out_channels", "h", "w", "row"), SHAPES)
def test_rows_are_the_reference_bit_for_bit(tmp_path, channels, out_channels, h, w, row):
    """On the host (the op's portable Zig), the Cortex-M4 pipeline's outputs are the reference's."""
    model = _model(channels, out_channels, h, w)
    onnx.save(model, tmp_path / "m.onnx")
    x = _input(model)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    result = compile_model(tmp_path / "m.onnx", tmp_path / "out", CompileOptions(name="net", pipeline=MCU_PIPELINE))
    assert (ROW in result.zig_path.read_text()) == row
    (y,) = load_compiled(result)(x)
    assert np.mean((expected > -128) & (expected < 127)) > 0.5  # mostly not saturated
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("optimize", firmware_modes())
def test_firmware_rows_equal_the_reference(tmp_path, optimize):
    """The row's assembly builds in every mode and, run on the Cortex-M4 under QEMU, gives the
    reference's outputs bit for bit: tiles of three pixels (8 -> 16 channels over 4x6: 2 steps,
    two tiles a pass; 16 -> 4 over 3x4: 4 steps, two a pass; 32 -> 6 over 2x3 without the ReLU: 8
    steps, one a pass) and of two (8 -> 4 over 2x4: 8 pixels, two tiles a pass; 32 -> 4 over 2x5:
    5 pairs, one a pass)."""
    from zant.backend.build import BOARDS, DEFAULT_BOARDS
    from zant.backend.firmware import qemu_missing, run_firmware

    missing = qemu_missing(BOARDS[DEFAULT_BOARDS["cortex-m4"]])
    if missing:
        pytest.skip(missing)
    models = (
        ("relu", _model(8, 16, 4, 6)), ("plain", _model(32, 6, 2, 3, relu=False)), ("sixteen", _model(16, 4, 3, 4)),
        ("pairs", _model(8, 4, 2, 4)), ("odd_pairs", _model(32, 4, 2, 5)),
    )
    for name, model in models:
        onnx.save(model, tmp_path / f"{name}.onnx")
        x = _input(model)
        (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
        firmware = compile_model(tmp_path / f"{name}.onnx", tmp_path / name, CompileOptions(
            name="net", target="cortex-m4", firmware=True, optimize=optimize, inputs={"x": x},
        ))
        assert ROW in firmware.zig_path.read_text(), name
        run = run_firmware(firmware.firmware_path, firmware.board, firmware.outputs)
        np.testing.assert_array_equal(run.outputs[0].reshape(expected.shape), expected)


def test_interpreter_checks_the_rows(tmp_path):
    """`--check-each-pass` through the Cortex-M4 pipeline: the interpreter runs
    `smlad_tile_row` by its reference semantics, and the outputs stay the onnx dialect's."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass
    from zant.plugins import all_passes

    onnx.save(_model(8, 4, 2, 4), tmp_path / "m.onnx")
    module = import_model(str(tmp_path / "m.onnx"))
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, MCU_PIPELINE).passes
    report = check_each_pass(module, passes, make_context(), seed=7)
    assert "arm-dsp-tile-rows" in report.checked
    assert "arm_dsp.smlad_tile_row" in str(module)
