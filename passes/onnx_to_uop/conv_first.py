"""The first convs on cores whose dot products are word SMLADs (the DSP extension without
Helium): an int8 Conv over fewer than a word of input channels (an image's 3: VWW's 3x3x3 -> 8
at stride 2, ResNet-8's 3x3x3 -> 16), its windows widened once per pixel into an int16 column.

Over a channels-last copy of X, a 2-D window's row of taps is one run of `kernel[-1]·C` bytes
(9 for an RGB 3x3 window), not whole words: `conv_window`'s tiles read each run as two
`smlad_tile` words and a last byte in scalar code (VWW's first conv: 1,014 K cycles, 2.0 per
product, beside 108 K for the copy). Here each output pixel's window is gathered once into a
column of int16 pairs, the words `SMLAD` multiplies as they are, a row of outputs at a time:

    for n, for o (the output rows):
      col[p] = widened(window of pixel (o, p))                       (p < width; `column_words`)
      for m = 0, 4 … < M (the last block min(m, M - 4)):
        for q = 0, 2 … < width (the last pair min(q, width - 2)):
          c_ij = Σ_s SMLAD(col[q + j][s], W''[m + i][s])             (one `arm_dsp.smlad_block`)
          Y[n, m + i, o, q + j] = requantize(c_ij + bias[m + i], m + i)

A run's whole words are widened as `conv_columns._pointwise_wide` widens X (one `LDR`, two
`SXTB16`: bytes 0, 2 then 1, 3); the bytes past them (each row's last byte in a 9-byte run) are
paired across rows from byte loads. W'' holds the same taps in the same order, paired into
words from W as stored once per call (`first_weights` is its table): in RAM, where read from
flash by every pixel pair they would miss an 8-line data cache. The block of 4 output channels
x 2 pixels takes 6 word loads and 8 `SMLAD` per 16 products, no `SXTB16`; the column's
widening (about 3 instructions per pair of taps) is shared by every output channel. X's copy
(`padded_rows`) moves its rows' bytes four at a time.

Each loop over a row's pixel pairs (whole pairs, then an odd width's last pair apart: both
move by a constant) becomes one `arm_dsp.smlad_block_row` once the epilogues are SMMLA and SSAT
(`arm-dsp-block-rows`): the block's 14 registers are all LLVM has, and around the compiled loop
it spilled and reloaded the biases, multipliers and Y's addresses, ~130 cycles a pixel pair
(VWW's first conv on the L4R5, `zant profile`: 930 K -> 768 K cycles beside its 45 K copy).
IC's first conv keeps the compiled loop: each output is also stored into the next conv's padded
copy (`fuse-loops`), two stores the row op does not make.

Where VWW's first conv's cycles go (L4R5, `zant profile`, 2,304 outputs of 8 channels over 27
taps, 497,664 products): per pixel pair and block of 4 channels, the block's 14 steps in 2
passes of 7 (`smlad_block`; 38 cycles a pass of 2 steps before it took 7 a pass), the 8
requantizations and the bias adds; per pixel about 45 cycles of gathering. The form's floor is
16 cycles per 16 products in the block (1.04 per product over 28 taps for 27), about 0.7 M
cycles with the epilogues and the gathering: below it, a product costs less than a half
`SMLAD` and its operands' share of a load. Tried: the blocks and pairs as one loop (div/rem per
pair: 1.16 M), the 14 steps as two straight-line blocks of 7 (their code past the 1 KB
instruction cache: 1.9 M), the sums started at the biases (LLVM kept 8 literals on the stack
around the block's 14 registers: 61 K cycles more than adding each bias after).

Exact: the zero point is folded into the bias (padded taps read X's zero point and add 0), and
the pair of a lone last byte has weight 0 in its upper half (whatever X's sign bits put there).
Every product is X·W of the reference; int32 sums wrap alike in any order.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import SSAValue

from zant.dialects import arm_dsp, uop
from zant.passes.onnx_to_uop.conv import padded_input
from zant.passes.onnx_to_uop.conv_columns import PIXELS, last_overlapping
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, channels_last_order, merge_dims
from zant.passes.onnx_to_uop.windows import Window

I32 = IntegerType(32)

MAX_CHANNELS = 3
"""The most input channels a Conv takes this form with: from 4 on, a window's runs are whole
words for the window forms (`conv_window`), which read them in place."""

ROWS = arm_dsp.SMLAD_BLOCK_ROWS
"""Output channels per register block (`arm_dsp.smlad_block`: 4 channels x 2 pixels)."""

MAX_STAGED_BYTES = 1024
"""The most bytes of widened weights staged in RAM: VWW's 448 and ResNet-8's 896 B. KWS's first
Conv (10x4 over 1 channel, 64 channels: 5,120 B) keeps its word taps: its 4-byte runs are whole
words already, and the stage would raise its plan (9,024 B under a 9,600 B budget)."""


@dataclass(frozen=True)
class Tap:
    """One tap of a window as the column reads it: byte `byte` of row `row`'s run."""

    row: int
    byte: int


@dataclass(frozen=True)
class ColumnWord:
    """One word of the column: two int16 taps (the upper one None: weight 0). `word`: the run's
    word (4-aligned byte offset) whose `SXTB16` (rotated by `rotate` bits) gives both halves;
    None: two byte loads."""

    low: Tap
    high: Tap | None
    word: int | None = None
    rotate: int = 0


def column_words(rows: int, run: int) -> list[ColumnWord]:
    """The column of a window of `rows` runs of `run` bytes: each run's whole words as their
    `SXTB16` halves (bytes 4q, 4q + 2, then 4q + 1, 4q + 3), then the runs' remaining bytes,
    row by row, two to a word (the last alone if odd)."""
    words = []
    for t in range(rows):
        for q in range(run // 4):
            for rotate in (0, 8):
                first = 4 * q + rotate // 8
                words.append(ColumnWord(Tap(t, first), Tap(t, first + 2), 4 * q, rotate))
    rest = [Tap(t, b) for t in range(rows) for b in range(run - run % 4, run)]
    for low, high in itertools.zip_longest(rest[::2], rest[1::2]):
        words.append(ColumnWord(low, high))
    return words


def first_weights(values: np.ndarray, words: Sequence[ColumnWord], rows: int) -> np.ndarray:
    """W (int8 [M, C, KH, KW]) as the column's words pair it: int32 [max(M, `rows`), S], each
    word's low tap in its lower half (a run's byte b is channel b % C of column b // C), rows
    past M zeros."""
    out_channels, channels = values.shape[:2]
    halves = np.zeros((max(out_channels, rows), len(words), 2), np.int64)
    for s, word in enumerate(words):
        for h, tap in enumerate((word.low, word.high)):
            if tap is not None:
                halves[:out_channels, s, h] = values[:, tap.byte % channels, tap.row, tap.byte // channels]
    return arm_dsp.halves_words(halves[..., 0], halves[..., 1])


def applies(
    x_type: object, w_type: object, channels: int, out_channels: int, windows: Sequence[Window],
    out_shape: Sequence[int], scratch_bound: int, padded_bytes: int, y_bytes: int,
) -> bool:
    """Whether an ungrouped Conv (constant weights, folded zero point) takes this form: int8 X
    and W, 1 to `MAX_CHANNELS` input channels, a 2-D window of at least 2 taps whose last axis
    is undilated (its taps one run), at least 2 outputs along it, its widened weights within
    `MAX_STAGED_BYTES`, and the padded copy, Y and the form's scratch within `scratch_bound`
    (the graph's layer-by-layer bound: the form never raises the plan's peak)."""
    if (
        x_type != IntegerType(8) or w_type != IntegerType(8) or not 1 <= channels <= MAX_CHANNELS
        or len(windows) != 2 or math.prod(w.kernel for w in windows) < 2 or windows[-1].dilation != 1
        or out_shape[-1] < PIXELS
    ):
        return False
    steps = len(column_words(windows[0].kernel, windows[-1].kernel * channels))
    staged = 4 * max(out_channels, ROWS) * steps
    return (
        staged <= MAX_STAGED_BYTES and arm_dsp.smlad_block_in_reach(steps, steps, steps)
        and padded_bytes + y_bytes + staged + 4 * PIXELS * steps <= scratch_bound
    )


def padded_rows(kb: KernelBuilder, x: Layout, windows: Sequence[Window], name: str, fill: int) -> tuple[Layout, list[Window]]:
    """X copied channels-last into a buffer bordered with `fill` (X's zero point), as
    `conv.padded_input` makes it, and the windows over it; where X's rows are each one run in
    memory order (a channels-last X, or one channel), the copy walks each row's W·C bytes as one
    loop and the border by rows (VWW's input: 108 K cycles as loops of 3 channels per pixel)."""
    source = merge_dims(x.permute(channels_last_order(x.rank)), x.rank - 2, x.rank - 1)
    if len(windows) != 2 or source is None:
        return padded_input(kb, x, windows, name, fill, channels_last=True)
    batch, channels = x.shape[:2]
    high, along = windows
    height, width = high.in_size + high.pad_begin + high.pad_end, along.in_size + along.pad_begin + along.pad_end
    padded = kb.alloc(name, [batch, height, width, channels], x.element_type)
    rows = merge_dims(padded, 2, 3)
    assert rows is not None
    value = kb.const(fill, x.element_type)
    run = along.in_size * channels
    left = along.pad_begin * channels
    with kb.loop(batch) as n:
        for first, last in ((0, high.pad_begin), (high.pad_begin + high.in_size, height)):
            if first < last:
                with kb.loop(last, first) as h, kb.loop(width * channels) as k:
                    kb.store(value, rows, [n, h, k])
        with kb.loop(high.in_size) as h:
            at = kb.alu("add", h, kb.index(high.pad_begin))
            for first, last in ((0, left), (left + run, width * channels)):
                if first < last:
                    with kb.loop(last, first) as k:
                        kb.store(value, rows, [n, at, k])
            # Four bytes an iteration, loaded before they are stored: LLVM merges each four
            # into one word load and one word store (unaligned: legal on the DSP cores).
            with kb.loop(run - run % 4, 0, 4) as k:
                ks = [k, *(kb.alu("add", k, kb.index(i)) for i in range(1, 4))]
                values = [kb.load(source, [n, h, ki]) for ki in ks]
                for ki, v in zip(ks, values):
                    kb.store(v, rows, [n, at, kb.alu("add", ki, kb.index(left))])
            if run % 4:
                with kb.loop(run, run - run % 4) as k:
                    kb.store(kb.load(source, [n, h, k]), rows, [n, at, kb.alu("add", k, kb.index(left))])
    inner = [replace(w, in_size=size, pad_begin=0, pad_end=0) for w, size in zip(windows, (height, width))]
    return padded.permute([0, 3, 1, 2]), inner


def first_conv(
    kb: KernelBuilder,
    x: Layout,
    windows: Sequence[Window],
    y: Layout,
    w: Layout,
    start: Callable[[SSAValue], SSAValue | None],
    requantize: Callable[[SSAValue, SSAValue], SSAValue],
    name: str,
) -> None:
    """Y = the Conv of the channels-last, padded X (`windows` without pads) with W (`w`: int8
    [M, C, KH, KW] as stored) in this form (the module's docstring); `start(m)`:
    channel m's sum before its products (its bias, or None: 0), `requantize(sum, m)`: the
    output of channel m."""
    batch, channels = x.shape[:2]
    out_channels = y.shape[1]
    (out_rows, width) = y.shape[2:]
    high, along = windows
    run = along.kernel * channels
    words = column_words(high.kernel, run)
    steps = len(words)
    staged_rows = max(out_channels, ROWS)
    # X in memory order, each row's pixels and channels one axis: (N, H, W·C).
    rows = merge_dims(x.permute(channels_last_order(x.rank)), x.rank - 2, x.rank - 1)
    assert rows is not None
    staged = kb.alloc(f"{name}_first_weights", [staged_rows, steps], I32)
    column = kb.alloc(f"{name}_first_column", [width, steps], I32)
    zero = kb.const(0, I32)
    # W'' staged from W as stored (`first_weights`' table): no table of its own in flash, where
    # 448 B of widened words moved every later constant and with it LLVM's code for later
    # layers (VWW's 8 -> 16 pointwise Conv: 922 K -> 1,014 K cycles for the same Zig).
    with kb.loop(out_channels) as m:
        def weight(tap: Tap) -> SSAValue:
            at = [kb.index(tap.byte % channels), kb.index(tap.row), kb.index(tap.byte // channels)]
            return kb.cast(kb.load(w, [m, *at]), I32)

        for s, word in enumerate(words):
            kb.store(_pair(kb, weight(word.low), None if word.high is None else weight(word.high)), staged, [m, kb.index(s)])
    if staged_rows > out_channels:  # a block's rows past M
        with kb.loop(staged_rows, out_channels) as m, kb.loop(steps) as k:
            kb.store(zero, staged, [m, k])
    with kb.loop(batch) as n, kb.loop(out_rows) as o:
        firsts = [
            kb.alu("add", kb.alu("mul", o, kb.index(high.stride)), kb.index(t * high.dilation))
            for t in range(high.kernel)
        ]
        # The row's columns first, one pixel at a time (one copy of the gather's code).
        with kb.loop(width) as p:
            begin = kb.alu("mul", p, kb.index(along.stride * channels))

            def byte(tap: Tap) -> SSAValue:
                return kb.cast(kb.load(rows, [n, firsts[tap.row], kb.alu("add", begin, kb.index(tap.byte))]), I32)

            loaded: dict[tuple[int, int], SSAValue] = {}
            for s, word in enumerate(words):
                if word.word is not None:
                    key = (word.low.row, word.word)
                    if key not in loaded:
                        at_word = kb.alu("add", begin, kb.index(word.word))
                        ptr = kb.insert(uop.GepOp(kb.view(rows), [n, firsts[word.low.row], at_word])).result
                        loaded[key] = kb.insert(arm_dsp.LoadWordOp(ptr)).results[0]
                    value = kb.insert(arm_dsp.Sxtb16Op(loaded[key], rotate=word.rotate)).results[0]
                elif word.high is not None:
                    value = _pair(kb, byte(word.low), byte(word.high))
                else:
                    value = byte(word.low)  # its sign bits fill the upper half: weight 0 there
                kb.store(value, column, [p, kb.index(s)])
        # The sums start at 0 and each output adds its bias: starting the block at the biases
        # (literals here) had LLVM keep 8 of them on the stack around the block's 14 registers
        # (VWW's first Conv on the L4R5: 1,093 K -> 1,032 K cycles with the copy).
        with kb.loop(-(-out_channels // ROWS)) as block:
            m = last_overlapping(kb, kb.alu("mul", block, kb.index(ROWS)), ROWS, staged_rows)
            channel_rows = [m, *(kb.alu("add", m, kb.index(i)) for i in range(1, ROWS))]
            kept = min(ROWS, out_channels)  # fewer than a block: its rows past M are zeros
            biases = [start(row) if i < kept else None for i, row in enumerate(channel_rows)]
            pb = kb.insert(uop.GepOp(kb.view(staged), [m, kb.index(0)])).result
            # The whole pairs, then where the width is odd a last pair overlapping the one before
            # (its first output stored again, the same value): each loop's pixels move by a
            # constant, which arm-dsp-block-rows makes one asm block of.
            for count, first in ((width // PIXELS, 0), (width % PIXELS, width - PIXELS)):
                if not count:
                    continue
                with kb.loop(count) as pair:
                    q = kb.alu("add", kb.alu("mul", pair, kb.index(PIXELS)), kb.index(first)) if first else kb.alu("mul", pair, kb.index(PIXELS))
                    lasts = [q, *(kb.alu("add", q, kb.index(j)) for j in range(1, PIXELS))]
                    pa = kb.insert(uop.GepOp(kb.view(column), [q, kb.index(0)])).result
                    sums = kb.insert(arm_dsp.SmladBlockOp(pa, pb, [zero] * (ROWS * PIXELS), steps, steps, steps)).results
                    for total, ((i, row), (j, at)) in zip(sums, itertools.product(enumerate(channel_rows), enumerate(lasts))):
                        if i < kept:
                            bias = biases[i]
                            kb.store(requantize(total if bias is None else kb.alu("add", total, bias), row), y, [n, row, o, at])


def _pair(kb: KernelBuilder, low: SSAValue, high: SSAValue | None) -> SSAValue:
    """The word of two int16 `low`, `high` (int32 values within int16; None: 0)."""
    masked = kb.alu("and", low, kb.const(0xFFFF, I32))
    return masked if high is None else kb.alu("or", masked, kb.alu("shl", high, kb.const(16, I32)))


__all__ = ["MAX_CHANNELS", "MAX_STAGED_BYTES", "ColumnWord", "Tap", "applies", "column_words", "first_conv", "first_weights", "padded_rows"]
