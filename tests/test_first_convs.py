"""The first Convs of the MLPerf Tiny models on DSP cores without Helium (quant.py's dispatch):
fewer than 4 input channels under a 2-D window take `conv_first` (each pixel's window widened
once into an int16 column, 4 output channels x 2 pixels per `arm_dsp.smlad_block`, a row of
them one `arm_dsp.smlad_block_row`), where the form's widened weights fit (KWS's 10x4 over one
channel into 64 channels keeps its word taps in 2 x 2 tiles). Whole Convs through the Cortex-M4
pipeline equal the ONNX reference bit for bit: built for the host, through the uop interpreter
after every pass, and as firmware under QEMU."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from int8_layers import QConv, expect_reference_as_firmware, expect_reference_on_host, qlinear_conv_model
from test_pointwise_wide import roomy

from zant.passes.onnx_to_uop.conv_first import ColumnWord, Tap, column_words, first_weights
from zant.pipelines import MCU_PIPELINE

# (name, in channels, out channels, H, W, kernel, strides, pads): VWW's first Conv (3x3x3 -> 8,
# stride 2, TensorFlow's SAME pads 0 before and 1 after) on a smaller image; ResNet-8's (stride
# 1, pads 1) into 6 channels (the last block of 4 overlaps the one before); 2 channels; 1
# channel into 3 (one block, a row past M) at strides 2 x 1 over an odd width (the last pixel
# pair overlaps); 5x5 windows (runs of 15 bytes: 3 words and a byte left per row); KWS's first
# Conv (10x4 over 1 channel into 64, stride 2, SAME pads 4/5 and 1/2), whose widened weights
# would take 5 KB: word taps; VWW's again over an even width (its rows' pairs all whole: one
# smlad_block_row per row and block, as on VWW's 48 columns).
CASES = [
    ("rgb", 3, 8, 12, 10, [3, 3], [2, 2], [0, 0, 1, 1]),
    ("ic", 3, 6, 7, 9, [3, 3], [1, 1], [1, 1, 1, 1]),
    ("two", 2, 4, 7, 9, [3, 3], [1, 1], [1, 1, 1, 1]),
    ("one", 1, 3, 8, 7, [3, 3], [2, 1], [1, 0, 1, 2]),
    ("five", 3, 5, 9, 11, [5, 5], [2, 2], [2, 2, 2, 2]),
    ("kws", 1, 64, 13, 10, [10, 4], [2, 2], [4, 1, 5, 2]),
    ("even", 3, 8, 9, 16, [3, 3], [2, 2], [0, 0, 1, 1]),
]
FIRST = [case[0] for case in CASES if case[0] != "kws"]


def _model(cases=CASES) -> onnx.ModelProto:
    layers = (
        QConv(name, c, m, h, w, tuple(kernel), tuple(strides), tuple(pads), x_zero=-7, y_scale=0.9, y_zero=-3,
              w_scales=tuple(0.006 * (1 + np.arange(m) % 8) / np.sqrt(c * np.prod(kernel) / 3)))
        for name, c, m, h, w, kernel, strides, pads in cases
    )
    return qlinear_conv_model("first_convs", layers, seed=11)


def test_column_words_widen_whole_words_then_pair_the_bytes_left():
    """A 3x3 RGB window (runs of 9 bytes): per row two words' SXTB16 halves, then the 3 rows'
    last bytes two to a word, the last alone: 14 words for 27 taps."""
    words = column_words(3, 9)
    assert len(words) == 14
    assert words[:2] == [ColumnWord(Tap(0, 0), Tap(0, 2), 0, 0), ColumnWord(Tap(0, 1), Tap(0, 3), 0, 8)]
    assert words[12:] == [ColumnWord(Tap(0, 8), Tap(1, 8)), ColumnWord(Tap(2, 8), None)]
    taps = [t for w in words for t in (w.low, w.high) if t is not None]
    assert sorted((t.row, t.byte) for t in taps) == [(r, b) for r in range(3) for b in range(9)]
    assert len(column_words(10, 4)) == 20 and len(column_words(3, 3)) == 5


def test_first_weights_pair_the_taps_as_the_column_does():
    """W'' [max(M, 4), S] int32: word s holds the weights of its two taps, low tap in the low
    half (a run's byte b is channel b % C at column b // C); no tap, weight 0; rows past M 0."""
    values = np.arange(-60, 60, dtype=np.int8)[: 2 * 3 * 3 * 3].reshape(2, 3, 3, 3)
    words = column_words(3, 9)
    table = first_weights(values, words, 4)
    assert table.shape == (4, 14) and not table[2:].any()
    halves = table.view(np.int16).reshape(4, 14, 2)
    for s, word in enumerate(words):
        for h, tap in enumerate((word.low, word.high)):
            want = 0 if tap is None else values[:, tap.byte % 3, tap.row, tap.byte // 3]
            assert np.array_equal(halves[:2, s, h], np.broadcast_to(want, (2,)))


def test_first_convs_are_the_reference_bit_for_bit(tmp_path):
    """The Cortex-M4 pipeline built for the host: every case but KWS's takes the form (its
    widened weights and `smlad_block` in the source), KWS's its word taps; outputs equal the
    reference on two inputs spanning the int8 range (none saturated)."""
    source = expect_reference_on_host(
        _model(), tmp_path, seeds=(1, 2), pipeline=roomy(MCU_PIPELINE), optimize="ReleaseFast", min_distinct=20
    )
    for name in FIRST:
        assert f"{name}_y_first_weights" in source, name
    assert "zant_smlad_block_row(" in source and "zant_smlad_block(" in source and "rgb_y_channels_last_weights" not in source
    assert "kws_y_word_tap_weights" in source and "kws_y_first_weights" not in source


def test_the_layer_bound_keeps_the_form_from_raising_the_peak(tmp_path):
    """With the graph's own bound (the default), a Conv whose padded copy, output and the form's
    scratch exceed it keeps the window form: VWW's case alone, its graph's peak (X 360 B and Y
    240 B; the padded copy 429 B, the staged weights 448 B)."""
    from zant.driver import CompileOptions, compile_model

    onnx.save(_model(CASES[:1]), tmp_path / "first.onnx")
    result = compile_model(tmp_path / "first.onnx", tmp_path / "out", CompileOptions(name="first", pipeline=MCU_PIPELINE, build=False))
    source = result.zig_path.read_text()
    assert "_first_weights" not in source and "rgb_y_channels_last_weights" in source


@pytest.mark.slow
def test_every_pass_keeps_the_interpreters_outputs():
    """check_each_pass through the Cortex-M4 pipeline (the bound lifted) from onnx-to-uop on:
    the uop interpreter runs the column's SXTB16 and the blocks by their reference semantics,
    and every later pass keeps the outputs. Slow (about 28 s: every case interpreted after every
    pass); the default run checks the same Convs' outputs built for the host and as firmware, and
    CI runs this one (`.ci/run`)."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes

    from zant.driver import make_context
    from zant.frontend.onnx_importer import import_model
    from zant.interpreter import check_each_pass
    from zant.plugins import all_passes

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "first.onnx"
        onnx.save(_model(), path)
        module = import_model(str(path))
    passes = PassPipeline.parse_spec({**get_all_passes(), **all_passes()}, roomy(MCU_PIPELINE)).passes
    report = check_each_pass(module, passes, make_context(), seed=3)
    assert "onnx-to-uop" in report.checked and "fuse-loops" in report.checked
    # arm-dsp-block-rows: a row of blocks per loop, two loops where the width is odd (rgb, ic,
    # two: the last pair apart), one where it is even (five, even); "one" keeps its 2 blocks
    # (3 output channels: its block's fourth row stores nothing).
    assert "arm-dsp-block-rows" in report.checked
    assert sum(op.name == "arm_dsp.smlad_block_row" for op in module.walk()) == 8
    assert sum(op.name == "arm_dsp.smlad_block" for op in module.walk()) == 2


@pytest.mark.parametrize("optimize", ["ReleaseFast", "ReleaseSafe", "ReleaseSmall"])
def test_first_convs_as_cortex_m4_firmware(tmp_path, optimize):
    """The same Convs as Cortex-M4 firmware under QEMU (unaligned word loads of the runs; the
    rows of blocks one asm block of 14 registers, 14 steps in 2 passes of 7 for speed, 7 of 2
    for size, 5 straight, 9 and 33 one a pass; in ReleaseSafe plain Zig; "one"'s blocks in 13
    registers)."""
    compiled = expect_reference_as_firmware(_model(), tmp_path, seed=5, min_distinct=20, pipeline=roomy(MCU_PIPELINE), optimize=optimize)
    assert "zant_smlad_block_row(" in compiled.result.zig_path.read_text()
