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

A step computes `BLOCK` outputs of a row (two words); the interior's last outputs, fewer than
a step, are one more step of their own, a last single output at stride 1 computed as the second
of a pair whose word starts one byte before its taps:

    acc[q] += SMLAD(O, (w0, w2)) + SMLATB(E, w1)      (the word at q's first tap - 1)

so the form covers the whole interior of the last dimension (KWS's 5-wide rows: outputs 1 to 3,
a pair and a single), where its words stay in the row. At stride 2 each output has a word of its
own (its 4th byte unused) and 2 outputs make a step; only outputs whose word ends inside the row
are covered. Where a row's ends read at most the one pad beside them and the rest of the row is
the form's, a whole step at least (`takes_edges`: every depthwise layer of VWW, stride 1 with
one pad each side and stride 2 with TensorFlow's SAME pads), the border is computed here too,
from the rows' first and last words plus what the padded taps add (`padding_sums`,
`depthwise_paired_taps`); elsewhere it takes `convolve`'s rows as before (`split_paired_interior`).

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
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout
from zant.passes.onnx_to_uop.windows import Region, Window, interior, window_regions

I16 = IntegerType(16)
I32 = IntegerType(32)

TAPS = 3
"""Taps per row of the window (its last dimension) the form pairs."""

WORD = 4
"""Bytes one word load reads from a row."""

BLOCK = {1: 4, 2: 2}
"""Outputs of a row computed per step, by stride (two words of the row either way): each step
reloads the weight words LLVM could not keep in registers and the requantization's per-channel
values. At stride 1, 2 outputs per step were slower than the tap-at-a-time rows on VWW's 48x48
layer (27 instructions per output against 24), 4 take 21; at stride 2, 2 per step made VWW
14 k cycles faster than 4."""


def paired_tap_weights(weights: np.ndarray) -> np.ndarray:
    """W (C, 1, rows, 3) int8 as int32 words [C, rows]: per row (w0, w2), each a 16-bit half
    (w0 the low one), the pair one `SMLAD` reads."""
    w = weights.reshape(weights.shape[0], weights.shape[-2], TAPS).astype(np.int64)
    words = (w[..., 0] & 0xFFFF) | ((w[..., 2] & 0xFFFF) << 16)
    return words.astype(np.uint32).view(np.int32)


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
    interior outputs."""
    if x.rank != 4 or len(windows) != 2 or x.element_type != IntegerType(8) or x.strides[-1] != 1:
        return False
    last = windows[-1]
    if last.kernel != TAPS or last.dilation != 1 or last.stride not in STRIDES:
        return False
    rows = interior(windows[0])
    lo, hi = paired_span(last)
    return rows[0] < rows[1] and lo < hi


def row_ends(window: Window) -> tuple[bool, bool]:
    """Whether a row's first output, and its last, is a border output the edges compute: the
    first when its taps are (-1, 0, 1) (one pad before), the last when they are (W - 2, W - 1,
    W) (its last tap the one pad after: stride 1 with one pad each side, or TensorFlow's SAME
    at stride 2 over an even row)."""
    last_tap = (window.out_size - 1) * window.stride - window.pad_begin + TAPS - 1
    return window.pad_begin == 1, window.pad_end == 1 and last_tap == window.in_size


def takes_edges(windows: Sequence[Window]) -> bool:
    """Whether the form also computes the border (`depthwise_paired_taps`' edges): rows whose
    ends are border outputs of `row_ends`' kinds only (the first and last outputs' words are the
    row's first and last) and whose other outputs are all `paired_span`'s, at least a whole step
    of them, and at most one pad above and below. (KWS's 5-wide rows, 3 interior outputs and no
    step, took 26 KB more flash and more instructions with their edges: LLVM's code for a row
    of straight-line steps.)"""
    rows, last = windows
    if last.kernel != TAPS or last.dilation != 1 or last.stride not in STRIDES or last.in_size < WORD:
        return False
    first, final = row_ends(last)
    lo, hi = paired_span(last)
    return (
        (lo, hi) == (int(first), last.out_size - int(final)) and hi - lo >= BLOCK[last.stride]
        and last.pad_begin <= 1 and last.pad_end <= 1 and rows.pad_begin <= 1 and rows.pad_end <= 1
    )


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


def padding_sums(weights: np.ndarray, fill: int, window: Window) -> np.ndarray:
    """int32 [C, 3·kinds]: per channel, `fill` (X's zero point, what a padded tap reads) times
    the weights of the padded taps of each kind of output, kind·3 + column: row kind 0 the
    rows' interior, 1 + i the i-th border row (`border_rows`); column 0 a row's first output,
    1 its interior, 2 its last (`EDGE_TAPS`). What the padding adds to that output's sum."""
    w = weights.reshape(weights.shape[0], weights.shape[-2], TAPS).astype(np.int64)
    kinds = [list(range(window.kernel)), *(valid_rows(window, oy) for oy in border_rows(window))]
    sums = [fill * (w.sum(axis=(1, 2)) - w[:, r][:, :, list(k)].sum(axis=(1, 2))) for r in kinds for k in EDGE_TAPS]
    return np.stack(sums, axis=-1).astype(np.int32)


def depthwise_paired_taps(
    kb: KernelBuilder,
    x: Layout,
    y: Layout,
    windows: Sequence[Window],
    region: Region,
    table: Layout,
    weights: Layout,
    epilogue: Callable[[SSAValue, SSAValue, list[SSAValue]], SSAValue],
    edges: Layout | None = None,
    start: Callable[[SSAValue], SSAValue | None] = lambda c: None,
) -> None:
    """Y[n, c, region] = epilogue(Σ over the window of X[n, c]·W[c], c, (oy, ox)) in the
    paired-tap form (module docstring); `table` is `paired_tap_weights`' words, `weights` W
    (C, 1, rows, 3) int8, whose middle taps are read as they are; `start(c)` the sums'
    starting value (the int32 bias, loaded once per channel: `epilogue` then adds none), or
    None for 0. With `edges`
    (`takes_edges`; `padding_sums`), the region is the whole output and its border is computed
    here too, with no checks: the first and last outputs of a row from the row's first and
    last words,

        acc[0]     = pad + SMLABB(E, w1) + SMLABT(O, (w0, w2))   = w1·x0 + w2·x1 + pad
        acc[W - 1] = pad + SMLATB(E, (w0, w2)) + SMLATB(O, w1)   = w0·x[W-2] + w1·x[W-1] + pad

    (E, O the halves of x[0..3], resp. x[W-4..W-1]; pad what the padded taps add), and the
    border rows with their rows of taps inside X. The border rows above, the interior rows and
    the border rows below each loop over the channels of their own: the code one channel runs
    stays within a flash accelerator's instruction cache (one loop for all of it made VWW's
    and KWS's images slower on the L4R5, in fewer instructions)."""
    batch, channels = x.shape[:2]
    rows_window, last = windows
    first, final = row_ends(last)
    if edges is not None:  # the whole output: the row's interior here, its ends by `edge`
        x_lo, x_hi = paired_span(last)
    else:
        (x_lo, x_hi) = region.bounds[-1]
    source = kb.view(x)

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

    def step(n: SSAValue, c: SSAValue, rows: list[tuple[SSAValue, SSAValue, SSAValue]], outs: list[SSAValue], first_total: SSAValue) -> list[SSAValue]:
        """The sums of the outputs `outs` (consecutive, in the row's interior) over `rows` (iy,
        the (w0, w2) word, w1 of each row of taps inside X): at stride 1 a word per pair, and a
        last single output as the second of the pair whose word starts one byte before its
        taps; at stride 2 a word per output. Each sum starts at `first_total`."""
        totals = [first_total for _ in outs]
        for iy, both, middle in rows:
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

    def edge(n: SSAValue, c: SSAValue, rows: list[tuple[SSAValue, SSAValue, SSAValue]], right: bool, first_total: SSAValue) -> SSAValue:
        """The sum of a row's first (or last) output over `rows`, its padded tap left out,
        from `first_total`."""
        total = first_total
        at = kb.index(last.in_size - WORD if right else 0)
        for iy, both, middle in rows:
            even, odd = halves(n, c, iy, at)
            if right:
                total = mla(top(odd), middle, mla(top(even), bottom(both), total))
            else:
                total = mla(bottom(odd), top(both), mla(bottom(even), middle, total))
        return total

    def row(n: SSAValue, c: SSAValue, oy: SSAValue, rows: list[tuple[SSAValue, SSAValue, SSAValue]], kind: int, bias: SSAValue) -> None:
        """Row oy of the output: its interior in steps, and with `edges` its first and last
        outputs, plus what the padding adds to each output of a `kind` of row."""
        def store(total: SSAValue, o: SSAValue, column: int) -> None:
            if edges is not None and (kind or column != 1):
                total = kb.alu("add", total, kb.load(edges, [c, kb.index(3 * kind + column)]))
            kb.store(epilogue(total, c, [oy, o]), y, [n, c, oy, o])

        block = BLOCK[last.stride]
        main = x_lo + (x_hi - x_lo) // block * block
        if edges is not None and first:
            store(edge(n, c, rows, False, bias), kb.index(0), 0)
        if main > x_lo:
            with kb.loop(main, x_lo, block) as ox:
                outs = [ox, *(kb.alu("add", ox, kb.index(j)) for j in range(1, block))]
                for total, o in zip(step(n, c, rows, outs, bias), outs):
                    store(total, o, 1)
        if main < x_hi:  # the row's last outputs, fewer than a step
            outs = [kb.index(o) for o in range(main, x_hi)]
            for total, o in zip(step(n, c, rows, outs, bias), outs):
                store(total, o, 1)
        if edges is not None and final:
            store(edge(n, c, rows, True, bias), kb.index(last.out_size - 1), 2)

    @contextmanager
    def channel_loop() -> Iterator[tuple[SSAValue, SSAValue, list[SSAValue], list[SSAValue], SSAValue]]:
        """Loops over the batch and the channels, each channel's (w0, w2) words, w1s and sums'
        start loaded once."""
        with kb.loop(batch) as n, kb.loop(channels) as c:
            words = [kb.load(table, [c, kb.index(r)]) for r in range(rows_window.kernel)]
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
                rows = [
                    (kb.index(oy * rows_window.stride - rows_window.pad_begin + r * rows_window.dilation), words[r], middles[r])
                    for r in valid_rows(rows_window, oy)
                ]
                row(n, c, kb.index(oy), rows, kind, bias)

    inner_lo, inner_hi = interior(rows_window)
    if edges is not None and inner_lo > 0:
        border(list(range(0, inner_lo)))
    with channel_loop() as (n, c, words, middles, bias), kb.loop(inner_hi, inner_lo) as oy:
        rows = [(tap(oy, rows_window, r), words[r], middles[r]) for r in range(rows_window.kernel)]
        row(n, c, oy, rows, 0, bias)
    if edges is not None and inner_hi < rows_window.out_size:
        border(list(range(inner_hi, rows_window.out_size)))


__all__ = ["BLOCK", "EDGE_TAPS", "STRIDES", "TAPS", "WORD", "applies", "border_rows", "depthwise_paired_taps", "padding_sums", "paired_span", "paired_tap_weights", "row_ends", "split_paired_interior", "takes_edges", "valid_rows"]
