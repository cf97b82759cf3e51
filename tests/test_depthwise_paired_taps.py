"""The paired-tap form of int8 depthwise Convs on DSP cores without Helium (conv_depthwise.py):
the weight words it packs, the outputs it covers, and whole Convs through the Cortex-M4
pipeline equal to the ONNX reference bit for bit (host build, every pass checked against the
uop interpreter, and Cortex-M4 firmware under QEMU)."""

from __future__ import annotations

import numpy as np
import onnx

from e2e import check_passes_after_lowering
from int8_layers import QConv, expect_reference_as_firmware, expect_reference_on_host, qlinear_conv_model
from zant.passes.onnx_to_uop.conv_depthwise import (
    asm_short_rows,
    asm_steps,
    border_rows,
    padded_taps,
    paired_span,
    paired_tap_weights,
    row_words,
    short_row,
    split_paired_interior,
    takes_edges,
    valid_rows,
    word_starts,
)
from zant.passes.onnx_to_uop.windows import Region, Window, window_regions

# (name, channels, H, W, strides, pads): interiors of 9 (steps of 4 and a single last output;
# one pad each side: the border too), 6, 3, 2 and 4 (KWS's 5-wide rows, 4- and VWW's 6-wide
# ones: short rows, computed whole; 3 wide, VWW's last layer, whose words reach a byte into the
# row before or after), stride 2 with TensorFlow's SAME pads (0 before, 1 after) and with 1
# on both sides, no pads at all, a border row below only (the edges' row kinds), and a 16-wide
# row at stride 1 and a 20-wide one at stride 2 whose whole steps (3 and 2) are asm rows
# (`asm_steps`; 2 rows of taps in the border rows, 3 inside), and VWW's 6x6 over 16 channels,
# whose interior rows are one arm_dsp.depthwise_short_rows a channel (`asm_short_rows`).
CASES = [
    ("s1_odd", 3, 6, 11, [1, 1], [1, 1, 1, 1]),
    ("s1_nopad", 2, 5, 8, [1, 1], [0, 0, 0, 0]),
    ("s2_same", 4, 8, 12, [2, 2], [0, 0, 1, 1]),
    ("s2_pads", 3, 7, 13, [2, 2], [1, 1, 1, 1]),
    ("s2x1", 2, 9, 10, [2, 1], [1, 1, 1, 1]),
    ("s1_kws", 3, 6, 5, [1, 1], [1, 1, 1, 1]),
    ("s1_w4", 2, 5, 4, [1, 1], [1, 1, 1, 1]),
    ("s1_w6", 2, 6, 6, [1, 1], [1, 1, 1, 1]),
    ("s1_edges_below", 2, 5, 7, [1, 1], [0, 1, 1, 1]),
    ("s1_w3", 4, 3, 3, [1, 1], [1, 1, 1, 1]),
    ("s1_w3_tall", 3, 6, 3, [1, 1], [1, 1, 1, 1]),
    ("s1_asm", 3, 5, 16, [1, 1], [1, 1, 1, 1]),
    ("s2_asm", 3, 6, 20, [2, 2], [0, 0, 1, 1]),
    ("s1_w6_asm", 16, 6, 6, [1, 1], [1, 1, 1, 1]),
]


def _halves(word: int) -> tuple[int, int]:
    word &= 0xFFFFFFFF
    low, high = word & 0xFFFF, word >> 16
    return (low - (1 << 16) if low >= 1 << 15 else low), (high - (1 << 16) if high >= 1 << 15 else high)


def test_paired_tap_weights_hold_the_outer_taps_as_halves():
    w = np.array([[[[1, 2, 3], [-128, 0, 127], [-1, 5, -2]]], [[[127, -7, -128], [0, 0, 0], [9, 9, 9]]]], np.int8)
    words = paired_tap_weights(w)
    assert words.shape == (2, 3) and words.dtype == np.int32
    for c in range(2):
        for r in range(3):
            assert _halves(int(words[c, r])) == (w[c, 0, r, 0], w[c, 0, r, 2])
    # rows read in asm steps (2 at stride 2, 3 at stride 1): w1 beside each row's word (one
    # LDRD loads both)
    rows8 = Window(8, 8, 3, 1, 1, 1, 1)
    stride2 = [rows8, Window(20, 10, 3, 2, 1, 0, 1)]
    assert asm_steps(stride2) and asm_steps([rows8, Window(14, 14, 3, 1, 1, 1, 1)])
    assert not asm_steps([rows8, rows8]) and not asm_steps([rows8, Window(12, 6, 3, 2, 1, 0, 1)])
    rows = paired_tap_weights(w, stride2)
    assert rows.shape == (2, 3, 2) and rows.dtype == np.int32
    assert (rows[..., 0] == words).all() and (rows[..., 1] == w[:, 0, :, 1]).all()
    # VWW's 6-wide rows (one pad each side) in asm short rows: w1 beside each word too
    six = [Window(6, 6, 3, 1, 1, 1, 1)] * 2
    assert asm_short_rows(six) and paired_tap_weights(w, six).shape == (2, 3, 2)
    assert not asm_short_rows([Window(6, 6, 3, 1, 1, 1, 1), Window(5, 5, 3, 1, 1, 1, 1)])


def test_the_form_covers_the_interior_its_words_stay_in():
    # stride 1: the whole interior 1..47 of a 48-wide row (steps of 4, then 2)
    assert paired_span(Window(48, 48, 3, 1, 1, 1, 1)) == (1, 47)
    # KWS's 5-wide rows: 3 interior outputs (a pair, then one as a pair's second)
    assert paired_span(Window(5, 5, 3, 1, 1, 1, 1)) == (1, 4)
    # one interior output: its word would start at the pad
    assert paired_span(Window(3, 3, 3, 1, 1, 1, 1)) == (1, 1)
    # stride 2 (TF SAME): interior 0..23, every word ends inside the row
    assert paired_span(Window(48, 24, 3, 2, 1, 0, 1)) == (0, 23)
    # stride 2 over an odd row: output 3's word ends at 3·2 - 1 + 3 = 8 < 9, output 4's past it
    assert paired_span(Window(9, 5, 3, 2, 1, 1, 1)) == (1, 4)
    # rows with one pad each side and a whole step: the whole output, border included
    windows = [Window(6, 6, 3, 1, 1, 1, 1), Window(11, 11, 3, 1, 1, 1, 1)]
    assert takes_edges(windows)
    assert split_paired_interior(windows) == ([], Region.whole(windows))
    # KWS's rows (no whole step, one pad each side) are short rows: the border too
    kws = [Window(6, 6, 3, 1, 1, 1, 1), Window(5, 5, 3, 1, 1, 1, 1)]
    assert short_row(kws[1]) and takes_edges(kws)
    assert short_row(Window(4, 4, 3, 1, 1, 1, 1)) and short_row(Window(6, 6, 3, 1, 1, 1, 1))
    assert not short_row(Window(7, 7, 3, 1, 1, 1, 1))
    assert not short_row(Window(5, 5, 3, 2, 1, 1, 1)) and not short_row(Window(2, 2, 3, 1, 1, 1, 1))
    # 3-wide rows (VWW's 3x3x256 layer): short rows, when there is a second row to reach into
    vww = [Window(3, 3, 3, 1, 1, 1, 1), Window(3, 3, 3, 1, 1, 1, 1)]
    assert short_row(vww[1]) and takes_edges(vww)
    assert not takes_edges([Window(1, 1, 3, 1, 1, 1, 1), Window(3, 3, 3, 1, 1, 1, 1)])
    # stride 2: the row's ends are border outputs of the edges' kinds (TF SAME over an even row:
    # no first, the last reads the pad after; one pad each side over an odd row: both)
    assert takes_edges([Window(6, 6, 3, 1, 1, 1, 1), Window(48, 24, 3, 2, 1, 0, 1)])
    assert takes_edges([Window(6, 6, 3, 1, 1, 1, 1), Window(9, 5, 3, 2, 1, 1, 1)])
    # ... but not VALID over an odd row (the last output's word would leave the row), nor 2 pads
    assert not takes_edges([Window(6, 6, 3, 1, 1, 1, 1), Window(9, 4, 3, 2, 1, 0, 0)])
    assert not takes_edges([Window(6, 6, 3, 1, 1, 1, 1), Window(12, 12, 3, 1, 1, 2, 0)])
    # 5-wide rows without pads (no whole step, not short): the border stays with the rows
    valid = [Window(6, 6, 3, 1, 1, 1, 1), Window(5, 3, 3, 1, 1, 0, 0)]
    assert not takes_edges(valid)
    rest, box = split_paired_interior(valid)
    assert box.bounds == ((1, 5), (0, 3))
    # the regions left (the border) and the box cover every output exactly once
    covered = np.zeros((6, 3), int)
    for region in [*rest, box]:
        (y0, y1), (x0, x1) = region.bounds
        covered[y0:y1, x0:x1] += 1
    assert (covered == 1).all()
    assert len(rest) == len(window_regions(valid)) - 1


def _row_products(width: int, starts: range | None = None) -> list[list[tuple[int, int]]]:
    """Per output of a `row_words` plan, its (input, tap) products."""
    def element(held: tuple[int, int, bool]) -> int:
        a, odd, high = held
        return a + odd + 2 * high

    products = []
    for o, (a, odd, taps) in enumerate(row_words(width, starts)):
        if a is None:
            products.append([(element(taps[0]), 1 if o == 0 else 0), (element(taps[1]), 2 if o == 0 else 1)])
        else:
            assert a in (starts if starts is not None else range(width - 3))
            products.append([(a + odd, 0), (a + odd + 2, 2), (element(taps[0]), 1)])
    return products


def test_short_rows_share_their_words_halves():
    """Every output of a short row takes its valid taps' inputs (its pads left out); the 5-wide
    row reads 2 words and 3 halves for its 15 products, the 4-wide one 1 word and 2 halves, the
    6-wide one 2 words and their 4 halves."""
    for width, words, halves in ((4, 1, 2), (5, 2, 3), (6, 2, 4)):
        products = _row_products(width)
        for o, taken in enumerate(products):
            want = sorted((o - 1 + k, k) for k in range(3) if 0 <= o - 1 + k < width)
            assert sorted(taken) == want, (width, o)
        plan = row_words(width)
        held = [(a, odd) for a, odd, _ in plan if a is not None] + [(a, odd) for *_, taps in plan for a, odd, _ in taps]
        assert len({a for a, _ in held}) == words and len(set(held)) == halves


def test_3_wide_rows_read_one_word_reaching_into_a_row_beside_them():
    """A 3-wide row's word starts a byte before it where the row is never a channel's first
    (its halves E = (x-1, x1), O = (x0, x2)), else at it where the row is never the last (the
    next row's first byte unread), else nowhere; the 7 products of its 3 outputs take both
    halves of the one word."""
    assert word_starts(3, 3, (1, 2)) == range(-1, 0)
    assert word_starts(3, 3, (0, 1)) == range(0, 1)
    assert word_starts(3, 3, (0, 2)) == range(0)
    assert word_starts(6, 6, (0, 5)) == range(0, 3)
    for starts in (range(-1, 0), range(0, 1)):
        products = _row_products(3, starts)
        for o, taken in enumerate(products):
            assert sorted(taken) == sorted((o - 1 + k, k) for k in range(3) if 0 <= o - 1 + k < 3), (starts, o)
        plan = row_words(3, starts)
        held = [(a, odd) for a, odd, _ in plan if a is not None] + [(a, odd) for *_, taps in plan for a, odd, _ in taps]
        assert {a for a, _ in held} == set(starts) and len(set(held)) == 2


def test_padded_taps_are_the_taps_each_kind_of_output_reads_from_the_pads():
    rows = Window(4, 4, 3, 1, 1, 1, 1)  # border rows 0 (taps rows 1, 2) and 3 (rows 0, 1)
    assert border_rows(rows) == [0, 3] and valid_rows(rows, 0) == [1, 2] and valid_rows(rows, 3) == [0, 1]
    assert padded_taps(rows, 0, 1) == []  # the interior
    assert padded_taps(rows, 0, 0) == [(0, 0), (1, 0), (2, 0)]  # a row's ends
    assert padded_taps(rows, 0, 2) == [(0, 2), (1, 2), (2, 2)]
    assert padded_taps(rows, 1, 1) == [(0, 0), (0, 1), (0, 2)]  # the top row: its first row of taps
    assert padded_taps(rows, 1, 0) == [(0, 0), (0, 1), (0, 2), (1, 0), (2, 0)]  # the top-left corner
    assert padded_taps(rows, 2, 2) == [(0, 2), (1, 2), (2, 0), (2, 1), (2, 2)]  # the bottom-right corner
    # stride 2 with TensorFlow's SAME pads (0 before, 1 after): no top border row
    same = Window(8, 4, 3, 2, 1, 0, 1)
    assert border_rows(same) == [3] and padded_taps(same, 1, 1) == [(2, 0), (2, 1), (2, 2)]


def _model() -> onnx.ModelProto:
    layers = (
        QConv(name, channels, channels, h, w, (3, 3), tuple(strides), tuple(pads), group=channels, x_zero=-9, y_zero=4)
        for name, channels, h, w, strides, pads in CASES
    )
    return qlinear_conv_model("depthwise", layers, seed=7)


def test_depthwise_convs_are_the_reference_bit_for_bit(tmp_path):
    """The Cortex-M4 pipeline built for the host: every case takes the paired form (its packed
    words are in the module) and equals the reference on two inputs (none saturated)."""
    source = expect_reference_on_host(_model(), tmp_path, seeds=(1, 2), optimize="ReleaseFast", min_distinct=20)
    for name, *_ in CASES:
        assert f"{name}_y_paired_tap_weights" in source, name
    assert "zant_smla(" in source  # the border's padded taps, the short rows' single products
    assert "zant_depthwise_short_rows(" in source  # the 6-wide rows' interior rows in asm


def test_every_pass_keeps_the_interpreters_outputs():
    """check_each_pass through the Cortex-M4 pipeline after onnx-to-uop: the uop interpreter's
    outputs (arm_dsp ops by their reference semantics) stay the same through every later pass.
    (The onnx-level interpreter's QLinearConv is 1 LSB off the lowering on one of these outputs
    with or without the paired form, where the lowering equals onnx's reference: the first test.)"""
    module, report = check_passes_after_lowering(_model())
    assert "fuse-loops" in report.checked and "arm-dsp-dot" in report.checked
    assert sum(op.name == "arm_dsp.load_word" for op in module.walk()) >= 5 * 3 * 2
    assert any(op.name == "arm_dsp.depthwise_short_rows" for op in module.walk())


def test_depthwise_convs_as_cortex_m4_firmware(tmp_path):
    """The same Convs as Cortex-M4 firmware under QEMU (unaligned word loads included)."""
    expect_reference_as_firmware(_model(), tmp_path, seed=5, min_distinct=20)
