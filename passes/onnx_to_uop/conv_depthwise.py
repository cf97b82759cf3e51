"""The paired-tap form of an int8 depthwise Conv with rows of 3 taps, on cores whose dot
products are word SMLADs (the DSP extension without Helium: `onnx-to-uop{conv-word-taps=true}`).

A depthwise output sums 3 taps per row of its window from one NCHW row of its channel. Summed a
tap at a time (a byte load and a 16x16 multiply-accumulate per tap), a 3x3 output costs about 24
instructions on the Cortex-M4 with its requantization. Here one word load `x0 x1 x2 x3` of the
row, at the first tap of output o, and its two `SXTB16` halves E = (x0, x2) and O = (x1, x3)
serve the row of two outputs:

    acc[o]     += SMLAD(E, (w0, w2)) + SMLABB(O, w1)      = w0·x0 + w2·x2 + w1·x1
    acc[o + 1] += SMLAD(O, (w0, w2)) + SMLATB(E, w1)      = w0·x1 + w2·x3 + w1·x2

1 load, 2 `SXTB16`, 2 `SMLAD` and 2 `SMLAxB` for 6 products (`SMLABB` / `SMLATB` are what LLVM
makes of a sign-extended low or arithmetically shifted high half times a sign-extended int8).
The (w0, w2) word of each row is packed once at compile time (`paired_tap_weights`, 4 bytes per
row and channel); it and w1 are loaded once per channel, outside its pixel loops.

A step computes `BLOCK` outputs of a row (two words); in rows of enough steps (`asm_steps`) it
is one `arm_dsp.depthwise_step`, the same products in asm (at stride 2 from two words and a byte
a row, the second output's pair packed from both words); the interior's last outputs, fewer than
a step, are one more step of their own, a last single output at stride 1 computed as the second
of a pair whose word starts one byte before its taps:

    acc[q] += SMLAD(O, (w0, w2)) + SMLATB(E, w1)      (the word at q's first tap - 1)

so the form covers the whole interior of the last dimension (KWS's 5-wide rows: outputs 1 to 3,
a pair and a single), where its words stay in the row. At stride 2 each output has a word of its
own (its 4th byte unused) and 2 outputs make a step; only outputs whose word ends inside the row
are covered. Where a row's ends read at most the one pad beside them and the rest of the row is
the form's, a whole step at least (`takes_edges`: every depthwise layer of VWW, stride 1 with
one pad each side and stride 2 with TensorFlow's SAME pads), the border is computed here too,
from the rows' first and last words plus what the padded taps add (`padded_taps`,
`depthwise_paired_taps`); elsewhere it takes `convolve`'s rows as before (`split_paired_interior`).

A row of at most a step and its two ends (KWS's 5-wide rows and VWW's 6-wide ones, one pad each
side: a `short_row`) is computed whole, border included, in straight-line code whose outputs share their words'
halves (`row_words`): 2 words and 3 `SXTB16` per row of taps for 5 outputs, 3 `SMLAD` and 6
single products (`arm_dsp.smla`, a half of the data times a half of a weight word). In steps
with the tap-at-a-time border it took 300 k cycles per KWS layer on the L4R5, 204 k this way.
A row of 3 (VWW's last depthwise layer, 3x3 over 256 channels, which took `convolve`'s checked
rows, 36 instructions an output) is one word reaching a byte into the row before it, or after
it in a channel's first row (`word_starts`): 1 load, 2 `SXTB16`, 1 `SMLAD` and 5 single
products for its 7 products (that layer 116.7 k -> 83.5 k cycles in `zant profile`).

Where the cycles stay (VWW on the L4R5, `zant profile` at e05029b, cycles per product; 2.22 M
cycles for 798 k products, 2.79 a product): 48x48x8 2.22, 48 -> 24 2.65, 24x24x32 2.47 (asm
rows), 24 -> 12 3.09 (asm rows, then 3 outputs a word each and the last from the row's last
word: 140 cycles a row for those 4), 12x12x64 2.87 (2 steps a row, LLVM's), 12 -> 6 3.95,
6x6x128 2.95 each (five layers, 611 k: short rows, 126 cycles per interior row of 6 outputs in
LLVM's straight-line code, 169 per border row), 6 -> 3 6.39, 3x3x256 3.93. An asm row step at
stride 1 takes 71 cycles for 4 outputs (12 products each) with its weights held in registers,
at stride 2 about 82; LLVM's steps took 78 to 83 and 125. What is left is the short rows and
the rows' ends. The 6x6 layers' interior rows are now in asm (`asm_short_rows`: per row of
taps 1 LDRD, 2 words, 4 halves, 4 SMLAD and 8 single products for 6 outputs, one
`arm_dsp.depthwise_short_row`, a channel's 4 rows with their epilogues one
`arm_dsp.depthwise_short_rows`): 164 -> 125 cycles a row, 83.8 k -> 64.2 k cycles per layer's
interior kernel (four of the five; the fifth's per-channel shifts keep LLVM's epilogue). Its
border rows (2 rows of taps) stay LLVM's: the asm sums took 87 cycles a row there against
84, and as a loop of 4 compiled rows LLVM unrolled the asm block (1.7 KB, past the 1 KB
instruction cache: 122 k -> 195 k cycles a layer). (Tried and not kept: the 3 outputs after
a stride-2 row's steps as the end of one more, overlapping step, stored where new: 12 k cycles slower on VWW, the step's asm and
LLVM's epilogue around it costing more than the 3 words.) A channels-last form does worse on
products (SMLAD cannot pair a word's 4 channels, whose sums are apart: about 2.25 instructions
a product with pre-widened weights).

Exact: every product is one of the reference's, each 16-bit half a sign-extended int8 weight or
input, and the int32 sums wrap as the reference's do (the order of additions changes nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import SSAValue

from zant.dialects import arm_dsp, uop
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, merge_dims
from zant.passes.onnx_to_uop.windows import Region, Window, interior, window_regions

I16 = IntegerType(16)
I32 = IntegerType(32)

Row = tuple[SSAValue, SSAValue, SSAValue, int]
"""A row of taps inside X as `depthwise_paired_taps` reads it: its input row iy, its (w0, w2)
word and w1 (loaded once per channel), and its row of the window (of the weights' table)."""

TAPS = 3
"""Taps per row of the window (its last dimension) the form pairs."""

WORD = 4
"""Bytes one word load reads from a row."""

BLOCK = {1: arm_dsp.DEPTHWISE_OUTPUTS, 2: arm_dsp.DEPTHWISE_OUTPUTS}
"""Outputs of a row computed per step, by stride (two words of the row at stride 1): each of
LLVM's steps reloads the weight words it could not keep in registers and the requantization's
per-channel values. At stride 1, 2 outputs per step were slower than the tap-at-a-time rows on
VWW's 48x48 layer (27 instructions per output against 24), 4 take 21. Where `asm_steps`, a
step is one `arm_dsp.depthwise_step`."""

ASM_STEPS = {1: 3, 2: 2}
"""The fewest whole steps in a row, by stride, for its steps to be `arm_dsp.depthwise_step`s,
a row's loop of them one `arm_dsp.depthwise_row` (`arm-dsp-depthwise-rows`): an asm loop with
a set-up of its own per row (about 20 cycles). On the L4R5 LLVM's steps took 62.8 cycles per 2
outputs at stride 2 (a word each; VWW's 48 -> 24 layer) where the asm row takes 94.5 per 4,
and 78 to 83 cycles per 4 outputs at stride 1 (by the registers it found in the one function
the kernels are inlined into) where the asm row, its weights held in registers, takes 73. In
shorter rows the set-up costs more than the steps save: VWW's 12x12x64 layer (2 steps at
stride 1) was 20 k cycles slower in asm, its 12 -> 6 layer (1 step at stride 2) 3 k."""


EDGE_INTERIOR = {1: 4, 2: 2}
"""The fewest interior outputs, by stride, of a row whose border the form computes too
(`takes_edges`; fewer than a step are the per-word products of `depthwise_paired_taps`):
VWW's 6 -> 3 stride-2 layer has 2."""


def asm_steps(windows: Sequence[Window]) -> bool:
    """Whether the rows' steps are `arm_dsp.depthwise_step`s (`ASM_STEPS`): their weights'
    table then holds each row's w1 beside its (w0, w2) word (`paired_tap_weights`)."""
    last = windows[-1]
    lo, hi = paired_span(last)
    return last.stride in ASM_STEPS and (hi - lo) // BLOCK[last.stride] >= ASM_STEPS[last.stride]


def taps_within_reach(rows: int, x_row: int, span: int) -> bool:
    """Whether `rows` rows of taps `x_row` bytes apart, each reaching `span` bytes past its
    first, lie within `arm_dsp.DEPTHWISE_REACH` bytes of the first row's (the asm steps' `LDR`
    immediates; their verifiers hold them to it): a 3-row window over rows of 2,046 bytes or
    more keeps the compiled steps (its module failed to verify)."""
    return x_row >= 1 and (rows - 1) * x_row + span <= arm_dsp.DEPTHWISE_REACH


def asm_short_rows(windows: Sequence[Window]) -> bool:
    """Whether the rows are `short_row`s of `arm_dsp.DEPTHWISE_SHORT_WIDTH` computed whole, border
    included (`takes_edges`), each one `arm_dsp.depthwise_short_row` (VWW's 6x6x128 layers):
    their weights' table then holds each row's w1 beside its (w0, w2) word, as for
    `asm_steps`. (LLVM's straight-line code of `row_words` took 126 cycles per interior row
    of 6 outputs on the L4R5, 169 per border row; its words' halves shared as here, but with
    its own register allocation over the channel's loop.)"""
    last = windows[-1]
    return last.in_size == arm_dsp.DEPTHWISE_SHORT_WIDTH and short_row(last) and takes_edges(windows)


def paired_tap_weights(weights: np.ndarray, windows: Sequence[Window] | None = None) -> np.ndarray:
    """W (C, 1, rows, 3) int8 as int32 words [C, rows]: per row (w0, w2), each a 16-bit half
    (w0 the low one), the pair one `SMLAD` reads. Where `asm_steps(windows)` or
    `asm_short_rows(windows)`, [C, rows, 2]: each row's word then w1 (sign-extended), the two
    words one `LDRD` of `arm_dsp.depthwise_step` (or `depthwise_short_row`) loads."""
    w = weights.reshape(weights.shape[0], weights.shape[-2], TAPS).astype(np.int64)
    words = arm_dsp.halves_words(w[..., 0], w[..., 2])
    if windows is None or not (asm_steps(windows) or asm_short_rows(windows)):
        return words
    return np.stack([words, w[..., 1].astype(np.int32)], axis=-1)


STRIDES = (1, 2)
"""Strides of the last dimension the form reads."""


def paired_span(window: Window) -> tuple[int, int]:
    """The outputs [lo, hi) of the last dimension the form computes: the interior's whose words
    stay in the row (lo == hi when none), in whole steps of `BLOCK` then a last shorter step
    (`depthwise_paired_taps`). At stride 1 a pair's word ends at its second output's last tap and
    a last single output's word starts one byte before its first tap (at least 2 outputs, so that
    byte is in the row); at stride 2 each output's word reads one byte past its window."""
    lo, hi = interior(window)
    if window.stride != 1:  # the word of output o ends at o·stride - pad_begin + 3
        hi = min(hi, (window.in_size - WORD + window.pad_begin) // window.stride + 1)
    elif hi - lo < 2:
        hi = lo
    return lo, max(lo, hi)


def applies(x: Layout, windows: Sequence[Window]) -> bool:
    """Whether a depthwise Conv over X (already known to have constant int8 weights with a zero
    weight zero point, the input's folded) takes the form: X int8 with 2 spatial dimensions and
    contiguous rows, rows of `TAPS` taps at stride 1 without dilation, and at least one step of
    interior outputs or rows the form computes whole (`takes_edges`). Rows narrower than a
    word also need each channel's rows back to back: their words reach into the next or the
    previous row (`word_starts`)."""
    if x.rank != 4 or len(windows) != 2 or x.element_type != IntegerType(8) or x.strides[-1] != 1:
        return False
    last = windows[-1]
    if last.kernel != TAPS or last.dilation != 1 or last.stride not in STRIDES:
        return False
    if last.in_size < WORD and x.strides[-2] != last.in_size:
        return False
    rows = interior(windows[0])
    lo, hi = paired_span(last)
    return rows[0] < rows[1] and (lo < hi or takes_edges(windows))


def row_ends(window: Window) -> tuple[bool, bool]:
    """Whether a row's first output, and its last, is a border output the edges compute: the
    first when its taps are (-1, 0, 1) (one pad before), the last when they are (W - 2, W - 1,
    W) (its last tap the one pad after: stride 1 with one pad each side, or TensorFlow's SAME
    at stride 2 over an even row)."""
    last_tap = (window.out_size - 1) * window.stride - window.pad_begin + TAPS - 1
    return window.pad_begin == 1, window.pad_end == 1 and last_tap == window.in_size


def short_row(window: Window) -> bool:
    """Whether a row (the last dimension, stride 1, one pad each side) is at most a step plus
    its two ends: `depthwise_paired_taps` then computes it whole in straight-line code whose
    words' halves its outputs share (`row_words`). (VWW's 6-wide rows: 152 k -> 133 k cycles
    per 128-channel layer on the L4R5, from one step between the ends' words.) A row of 3
    (VWW's last depthwise layer, 3x3 over 256 channels) is one word reaching a byte into the
    row before it or after it (`word_starts`)."""
    return (
        window.kernel == TAPS and window.dilation == 1 and window.stride == 1 and window.pad_begin == 1
        and window.pad_end == 1 and WORD - 1 <= window.in_size <= BLOCK[1] + 2
    )


def word_starts(width: int, height: int, rows: tuple[int, int]) -> range:
    """Where, from a row's first byte, the words a `short_row` reads may start, for a row of taps
    whose input row lies in `rows` (inclusive bounds) of a channel's `height` rows (stored
    back to back): inside the row, and for a row narrower than a word also one byte before it
    (the previous row's last) when the row is never the first, else one byte after it (the
    next row's first) when it is never the last; empty when neither holds. The bytes from
    outside the row are in halves no product reads."""
    if width >= WORD:
        return range(0, width - WORD + 1)
    if rows[0] >= 1:
        return range(width - WORD, 0)
    if rows[1] <= height - 2:
        return range(0, 1)
    return range(0)


def takes_edges(windows: Sequence[Window]) -> bool:
    """Whether the form also computes the border (`depthwise_paired_taps`' edges): rows whose
    ends are border outputs of `row_ends`' kinds only (the first and last outputs' words are the
    row's first and last) and whose other outputs are all `paired_span`'s, at least a whole step
    of them (`EDGE_INTERIOR`) or the whole row a `short_row`, and at most one pad above and below. (KWS's 5-wide
    rows in steps, a pair and a single, each with words of its own, took 26 KB more flash and
    more instructions with their edges: LLVM's code for a row of straight-line steps; as a
    `short_row` 2 words serve the row.)"""
    rows, last = windows
    if last.kernel != TAPS or last.dilation != 1 or last.stride not in STRIDES:
        return False
    if last.in_size < WORD:  # a row of 3: its words reach into a row beside it
        return short_row(last) and rows.in_size >= 2 and rows.pad_begin <= 1 and rows.pad_end <= 1
    first, final = row_ends(last)
    lo, hi = paired_span(last)
    return (
        (lo, hi) == (int(first), last.out_size - int(final)) and (hi - lo >= EDGE_INTERIOR[last.stride] or short_row(last))
        and last.pad_begin <= 1 and last.pad_end <= 1 and rows.pad_begin <= 1 and rows.pad_end <= 1
    )


def row_words(width: int, starts: range | None = None) -> list[tuple[int | None, int, tuple[tuple[int, int, bool], ...]]]:
    """A `short_row` of `width` inputs (and outputs) as word halves: per output o, (word, half,
    taps), the word's start and its SXTB16 half (0: E, 1: O) holding the pair o's `SMLAD` reads
    with (w0, w2) (an interior output; None at a row's ends, which have none), and its other
    taps (word start, half, half-is-high) read one product at a time: w1's (an end's two). The
    words start in `starts` (`word_starts`; by default those inside the row). Each half is
    taken from a word already read where one holds it, so the row reads few words (5 wide: the
    words at 0 and 1, halves E0, O0 and O1, for 15 products; 6 wide: the words at 0 and 2 and
    their 4 halves, for 18; 3 wide: one word and its 2 halves, for 7)."""
    if starts is None:
        starts = range(0, width - WORD + 1)
    words: list[int] = []
    halves: set[tuple[int, int]] = set()

    def holder(j: int) -> tuple[int, int, bool]:
        """A (word, half, high) holding input j: one already computed, else a word's."""
        options = [(a, (j - a) % 2, j - a >= 2) for a in starts if 0 <= j - a < WORD]
        a, half, high = min(options, key=lambda h: ((h[0], h[1]) not in halves, h[0] not in words))
        if a not in words:
            words.append(a)
        halves.add((a, half))
        return a, half, high

    out = []
    for o in range(width):
        if o == 0:
            out.append((None, -1, (holder(0), holder(1))))
            continue
        if o == width - 1:
            out.append((None, -1, (holder(o - 1), holder(o))))
            continue
        pairs = [(a, (o - 1 - a)) for a in (o - 1, o - 2) if a in starts]
        a, half = min(pairs, key=lambda p: ((p[0], p[1]) not in halves, p[0] not in words))
        if a not in words:
            words.append(a)
        halves.add((a, half))
        out.append((a, half, (holder(o),)))
    return out


def split_paired_interior(windows: Sequence[Window]) -> tuple[list[Region], Region]:
    """`window_regions(windows)` without the outputs the form computes, and the box of those
    (the interior's rows by `paired_span` of the last dimension; with `takes_edges`, every
    output: no region is left)."""
    if takes_edges(windows):
        return [], Region.whole(windows)
    regions = window_regions(windows)
    inside = regions[-1]
    assert inside.unchecked
    lo, hi = paired_span(windows[-1])
    (start, end) = inside.bounds[-1]
    assert start == lo
    rest = regions[:-1]
    outer, last = inside.windows[:-1], inside.windows[-1]
    if hi < end:
        rest.append(Region((*inside.bounds[:-1], (hi, end)), (*outer, replace(last, first_out=hi, out_size=end))))
    paired = Region((*inside.bounds[:-1], (lo, hi)), (*outer, replace(last, first_out=lo, out_size=hi)))
    return rest, paired


EDGE_TAPS = ((1, 2), (0, 1, 2), (0, 1))
"""The valid taps of a row's first output, its interior's and its last (one pad each side)."""


def valid_rows(window: Window, oy: int) -> list[int]:
    """The rows of taps of output row `oy` inside X."""
    return [r for r in range(window.kernel) if 0 <= oy * window.stride - window.pad_begin + r * window.dilation < window.in_size]


def border_rows(window: Window) -> list[int]:
    """The output rows outside the rows' interior, in order; row kind 1 + i is the i-th."""
    lo, hi = interior(window)
    return [*range(0, lo), *range(hi, window.out_size)]


def padded_taps(window: Window, kind: int, column: int) -> list[tuple[int, int]]:
    """The taps (row, column of the window) that read the padding in a `kind` of output row
    (0 the rows' interior, 1 + i the i-th border row: `border_rows`), at a `column` of it (0 a
    row's first output, 1 its interior, 2 its last: `EDGE_TAPS`). Each adds X's zero point
    times its weight to the output's sum."""
    rows = range(window.kernel) if kind == 0 else valid_rows(window, border_rows(window)[kind - 1])
    return [(r, k) for r in range(window.kernel) for k in range(TAPS) if r not in rows or k not in EDGE_TAPS[column]]


def depthwise_paired_taps(
    kb: KernelBuilder,
    x: Layout,
    y: Layout,
    windows: Sequence[Window],
    region: Region,
    table: Layout,
    weights: Layout,
    epilogue: Callable[[SSAValue, SSAValue, list[SSAValue]], SSAValue],
    fill: int | None = None,
    start: Callable[[SSAValue], SSAValue | None] = lambda c: None,
) -> None:
    """Y[n, c, region] = epilogue(Σ over the window of X[n, c]·W[c], c, (oy, ox)) in the
    paired-tap form (module docstring); `table` is `paired_tap_weights(W, windows)`, `weights`
    W (C, 1, rows, 3) int8, whose middle taps are read as they are; `start(c)` the sums'
    starting value (the int32 bias, loaded once per channel: `epilogue` then adds none), or
    None for 0. With `fill`, X's zero point (`takes_edges`), the region is the whole output and
    its border is computed here too, with no checks: the first and last outputs of a row from
    the row's first and last words,

        acc[0]     = pad + SMLABB(E, w1) + SMLABT(O, (w0, w2))   = w1·x0 + w2·x1 + pad
        acc[W - 1] = pad + SMLATB(E, (w0, w2)) + SMLATB(O, w1)   = w0·x[W-2] + w1·x[W-1] + pad

    (E, O the halves of x[0..3], resp. x[W-4..W-1]), and the border rows with their rows of
    taps inside X. What the padded taps add (`fill` times their weights, `padded_taps`) is in
    the sums' start, made once per channel and kind of output from the weights in registers
    (a table of them took 2.3 KB of flash per 64 channels). The border rows above, the interior rows and
    the border rows below each loop over the channels of their own: the code one channel runs
    stays within a flash accelerator's instruction cache (one loop for all of it made VWW's
    and KWS's images slower on the L4R5, in fewer instructions)."""
    batch, channels = x.shape[:2]
    rows_window, last = windows
    first, final = row_ends(last)
    edges = fill is not None
    if edges:  # the whole output: the row's interior here, its ends by `edge`
        x_lo, x_hi = paired_span(last)
    else:
        (x_lo, x_hi) = region.bounds[-1]
    source = kb.view(x)
    word = [kb.index(0)] if table.rank == 3 else []  # a row's (w0, w2) word in the table's row (`asm_steps`)

    def halves(n: SSAValue, c: SSAValue, iy: SSAValue, ix: SSAValue) -> tuple[SSAValue, SSAValue]:
        """E and O of the word X[n, c, iy, ix .. ix + 3]."""
        ptr = kb.insert(uop.GepOp(source, [n, c, iy, ix])).result
        word = kb.insert(arm_dsp.LoadWordOp(ptr)).result
        return kb.insert(arm_dsp.Sxtb16Op(word)).result, kb.insert(arm_dsp.Sxtb16Op(word, rotate=8)).result

    def smlad(a: SSAValue, b: SSAValue, total: SSAValue) -> SSAValue:
        return kb.insert(arm_dsp.SmladOp(a, b, total)).result

    def mla(half: SSAValue, w: SSAValue, total: SSAValue) -> SSAValue:
        return kb.alu("add", total, kb.alu("mul", half, w))

    def bottom(value: SSAValue) -> SSAValue:
        """The signed low half of `value`."""
        return kb.cast(kb.cast(value, I16), I32)

    def top(value: SSAValue) -> SSAValue:
        """The signed high half of `value`."""
        return kb.alu("shr", value, kb.const(16, I32))

    def tap(o: SSAValue, window: Window, k: int) -> SSAValue:
        """The input position of output `o`'s tap `k`."""
        at = kb.alu("mul", o, kb.index(window.stride)) if window.stride != 1 else o
        offset = k * window.dilation - window.pad_begin
        return kb.alu("add", at, kb.index(offset)) if offset else at

    def step(n: SSAValue, c: SSAValue, rows: list[Row], outs: list[SSAValue], first_total: SSAValue) -> list[SSAValue]:
        """The sums of the outputs `outs` (consecutive, in the row's interior) over `rows` (iy,
        the (w0, w2) word, w1 and the table's row of each row of taps inside X): with
        `asm_steps` a whole step one `arm_dsp.depthwise_step`; else at stride 1 a word per
        pair, and a last single output as the second of the pair whose word starts one byte
        before its taps; at stride 2 a word per output. Each sum starts at `first_total`."""
        x_row = rows_window.dilation * x.strides[-2]
        span = last.stride * (arm_dsp.DEPTHWISE_OUTPUTS - 1) + TAPS - 1
        if asm_steps(windows) and len(outs) == arm_dsp.DEPTHWISE_OUTPUTS and taps_within_reach(len(rows), x_row, span):
            iy, *_, r = rows[0]
            px = kb.insert(uop.GepOp(source, [n, c, iy, tap(outs[0], last, 0)])).result
            pw = kb.insert(uop.GepOp(kb.view(table), [c, kb.index(r), kb.index(0)])).result
            return list(kb.insert(arm_dsp.DepthwiseStepOp(px, pw, first_total, last.stride, len(rows), x_row)).sums)
        totals = [first_total for _ in outs]
        for iy, both, middle, _ in rows:
            j = 0
            while j < len(outs):
                if last.stride != 1:  # its 4th byte, O's high half, unused
                    even, odd = halves(n, c, iy, tap(outs[j], last, 0))
                    totals[j] = mla(bottom(odd), middle, smlad(even, both, totals[j]))
                    j += 1
                elif j + 1 < len(outs):
                    even, odd = halves(n, c, iy, tap(outs[j], last, 0))
                    totals[j] = mla(bottom(odd), middle, smlad(even, both, totals[j]))
                    totals[j + 1] = mla(top(even), middle, smlad(odd, both, totals[j + 1]))
                    j += 2
                else:
                    even, odd = halves(n, c, iy, tap(outs[j], last, -1))
                    totals[j] = mla(top(even), middle, smlad(odd, both, totals[j]))
                    j += 1
        return totals

    def edge(n: SSAValue, c: SSAValue, rows: list[Row], right: bool, first_total: SSAValue) -> SSAValue:
        """The sum of a row's first (or last) output over `rows`, its padded tap left out,
        from `first_total`."""
        total = first_total
        at = kb.index(last.in_size - WORD if right else 0)
        for iy, both, middle, _ in rows:
            even, odd = halves(n, c, iy, at)
            if right:
                total = mla(top(odd), middle, mla(top(even), bottom(both), total))
            else:
                total = mla(bottom(odd), top(both), mla(bottom(even), middle, total))
        return total

    def word_at(n: SSAValue, c: SSAValue, iy: SSAValue, a: int) -> SSAValue:
        """The word of X[n, c] from byte `a` of row iy: in the row's view where it stays inside
        the row, else in the channel's rows as one (a row of 3, `word_starts`)."""
        if 0 <= a <= last.in_size - WORD:
            return kb.insert(uop.GepOp(source, [n, c, iy, kb.index(a)])).result
        plane = merge_dims(x, 2, 3)
        assert plane is not None
        at = kb.alu("add", kb.alu("mul", iy, kb.index(last.in_size)), kb.index(a))
        return kb.insert(uop.GepOp(kb.view(plane), [n, c, at])).result

    def whole_row(
        n: SSAValue, c: SSAValue, rows: list[Row], starts: list[SSAValue], reach: list[tuple[int, int]],
    ) -> list[SSAValue]:
        """The sums of a `short_row`'s outputs over `rows` (`row_words`: each word loaded and
        each half taken once per row of taps), its padded taps left out, from `starts` (the
        row's first output's, its interior's, its last's); `reach` bounds each row of taps'
        input row (`word_starts`)."""
        totals = [starts[0], *(starts[1] for _ in range(last.in_size - 2)), starts[2]]
        for (iy, both, middle, _), bounds in zip(rows, reach, strict=True):
            plan = row_words(last.in_size, word_starts(last.in_size, rows_window.in_size, bounds))
            words: dict[int, SSAValue] = {}
            taken: dict[tuple[int, int], SSAValue] = {}

            def half(a: int, odd: int) -> SSAValue:
                if a not in words:
                    words[a] = kb.insert(arm_dsp.LoadWordOp(word_at(n, c, iy, a))).result
                if (a, odd) not in taken:
                    taken[a, odd] = kb.insert(arm_dsp.Sxtb16Op(words[a], rotate=8 * odd)).result
                return taken[a, odd]

            def product(held: tuple[int, int, bool], w: SSAValue, w_top: bool, total: SSAValue) -> SSAValue:
                """total + the input `held` times the weight half of `w` (one `SMLAxy`)."""
                a, odd, high = held
                halves = ("t" if high else "b") + ("t" if w_top else "b")
                return kb.insert(arm_dsp.SmlaOp(half(a, odd), w, total, halves)).result

            for o, (a, odd, taps) in enumerate(plan):
                if a is None and o == 0:  # x0·w1 + x1·w2
                    totals[o] = product(taps[1], both, True, product(taps[0], middle, False, totals[o]))
                elif a is None:  # x[W-2]·w0 + x[W-1]·w1
                    totals[o] = product(taps[1], middle, False, product(taps[0], both, False, totals[o]))
                else:
                    totals[o] = product(taps[0], middle, False, smlad(half(a, odd), both, totals[o]))
        return totals

    def row(
        n: SSAValue, c: SSAValue, oy: SSAValue, rows: list[Row], starts: list[SSAValue],
        reach: list[tuple[int, int]],
    ) -> None:
        """Row oy of the output: its interior in steps, and with `edges` its first and last
        outputs, their sums from `starts` (the row's first output's, its interior's, its
        last's: `sums_start`); `reach` as for `whole_row`."""
        def store(total: SSAValue, o: SSAValue) -> None:
            kb.store(epilogue(total, c, [oy, o]), y, [n, c, oy, o])

        x_row = rows_window.dilation * x.strides[-2]
        if (
            edges and asm_short_rows(windows) and len(rows) == rows_window.kernel  # (a border row's is LLVM's)
            and taps_within_reach(len(rows), x_row, arm_dsp.DEPTHWISE_SHORT_WIDTH - 1)
        ):
            iy, *_, r = rows[0]
            px = kb.insert(uop.GepOp(source, [n, c, iy, kb.index(0)])).result
            pw = kb.insert(uop.GepOp(kb.view(table), [c, kb.index(r), kb.index(0)])).result
            sums = kb.insert(arm_dsp.DepthwiseShortRowOp(px, pw, starts, len(rows), x_row)).sums
            for o, total in enumerate(sums):
                store(total, kb.index(o))
            return
        if edges and short_row(last):
            for o, total in enumerate(whole_row(n, c, rows, starts, reach)):
                store(total, kb.index(o))
            return
        block = BLOCK[last.stride]
        main = x_lo + (x_hi - x_lo) // block * block
        if edges and first:
            store(edge(n, c, rows, False, starts[0]), kb.index(0))
        if main > x_lo:
            with kb.loop(main, x_lo, block) as ox:
                outs = [ox, *(kb.alu("add", ox, kb.index(j)) for j in range(1, block))]
                for total, o in zip(step(n, c, rows, outs, starts[1]), outs):
                    store(total, o)
        if main < x_hi:  # the row's last outputs, fewer than a step
            outs = [kb.index(o) for o in range(main, x_hi)]
            for total, o in zip(step(n, c, rows, outs, starts[1]), outs):
                store(total, o)
        if edges and final:
            store(edge(n, c, rows, True, starts[2]), kb.index(last.out_size - 1))

    def sums_start(kind: int, words: list[SSAValue], middles: list[SSAValue], bias: SSAValue) -> list[SSAValue]:
        """The sums' start of a `kind` of row at its first output, its interior and its last:
        the bias plus `fill` times each padded tap's weight (`padded_taps`), one `SMLAxB` of
        the weight's half of its row's (w0, w2) word, or of w1, each."""
        if not edges or not fill:
            return [bias] * len(EDGE_TAPS)
        value = kb.const(fill, I32)
        starts = []
        for column in range(len(EDGE_TAPS)):
            total = bias
            for r, k in padded_taps(rows_window, kind, column):
                w, halves = (middles[r], "bb") if k == 1 else (words[r], "bt" if k == 2 else "bb")
                total = kb.insert(arm_dsp.SmlaOp(value, w, total, halves)).result
            starts.append(total)
        return starts

    @contextmanager
    def channel_loop() -> Iterator[tuple[SSAValue, SSAValue, list[SSAValue], list[SSAValue], SSAValue]]:
        """Loops over the batch and the channels, each channel's (w0, w2) words, w1s and sums'
        start loaded once."""
        with kb.loop(batch) as n, kb.loop(channels) as c:
            words = [kb.load(table, [c, kb.index(r), *word]) for r in range(rows_window.kernel)]
            middles = [
                kb.cast(kb.load(weights, [c, kb.index(0), kb.index(r), kb.index(1)]), I32)
                for r in range(rows_window.kernel)
            ]
            bias = start(c)
            yield n, c, words, middles, kb.const(0, I32) if bias is None else bias

    def border(oys: list[int]) -> None:
        """The border rows `oys` (with `edges`), each with its rows of taps inside X."""
        with channel_loop() as (n, c, words, middles, bias):
            for oy in oys:
                kind = 1 + border_rows(rows_window).index(oy)
                taps = [oy * rows_window.stride - rows_window.pad_begin + r * rows_window.dilation for r in valid_rows(rows_window, oy)]
                rows = [(kb.index(iy), words[r], middles[r], r) for iy, r in zip(taps, valid_rows(rows_window, oy))]
                row(n, c, kb.index(oy), rows, sums_start(kind, words, middles, bias), [(iy, iy) for iy in taps])

    inner_lo, inner_hi = interior(rows_window)
    if edges and inner_lo > 0:
        border(list(range(0, inner_lo)))
    with channel_loop() as (n, c, words, middles, bias):
        starts = sums_start(0, words, middles, bias)
        with kb.loop(inner_hi, inner_lo) as oy:
            rows = [(tap(oy, rows_window, r), words[r], middles[r], r) for r in range(rows_window.kernel)]
            reach = [
                tuple(o * rows_window.stride - rows_window.pad_begin + r * rows_window.dilation for o in (inner_lo, inner_hi - 1))
                for r in range(rows_window.kernel)
            ]
            row(n, c, oy, rows, starts, reach)  # type: ignore[arg-type]
    if edges and inner_hi < rows_window.out_size:
        border(list(range(inner_hi, rows_window.out_size)))


__all__ = ["BLOCK", "EDGE_TAPS", "STRIDES", "TAPS", "WORD", "applies", "asm_short_rows", "asm_steps", "border_rows", "depthwise_paired_taps", "padded_taps", "paired_span", "paired_tap_weights", "row_ends", "split_paired_interior", "takes_edges", "valid_rows", "word_starts"]
