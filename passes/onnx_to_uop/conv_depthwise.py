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
a pair and a single), where its words stay in the row. The border takes `convolve`'s rows as
before (`split_paired_interior`). At stride 2 each output has a word of its own (its 4th byte
unused) and 2 outputs make a step; only outputs whose word ends inside the row are covered.

Exact: every product is one of the reference's, each 16-bit half a sign-extended int8 weight or
input, and the int32 sums wrap as the reference's do (the order of additions changes nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


def split_paired_interior(windows: Sequence[Window]) -> tuple[list[Region], Region]:
    """`window_regions(windows)` without the outputs the form computes, and the box of those
    (the interior's rows by `paired_span` of the last dimension)."""
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


def depthwise_paired_taps(
    kb: KernelBuilder,
    x: Layout,
    y: Layout,
    windows: Sequence[Window],
    region: Region,
    table: Layout,
    weights: Layout,
    epilogue: Callable[[SSAValue, SSAValue, list[SSAValue]], SSAValue],
) -> None:
    """Y[n, c, region] = epilogue(Σ over the window of X[n, c]·W[c], c, (oy, ox)) in the
    paired-tap form (module docstring); `table` is `paired_tap_weights`' words, `weights` W
    (C, 1, rows, 3) int8, whose middle taps are read as they are."""
    batch, channels = x.shape[:2]
    rows_window, last = windows
    (y_lo, y_hi), (x_lo, x_hi) = region.bounds
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

    def step(n: SSAValue, c: SSAValue, oy: SSAValue, outs: list[SSAValue], pairs: list[SSAValue], middles: list[SSAValue]) -> None:
        """The outputs `outs` (consecutive) of row oy: at stride 1 a word per pair, and a last
        single output as the second of the pair whose word starts one byte before its taps; at
        stride 2 a word per output."""
        totals = [kb.const(0, I32) for _ in outs]
        for r, (both, middle) in enumerate(zip(pairs, middles)):
            iy = tap(oy, rows_window, r)
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
        for total, o in zip(totals, outs):
            kb.store(epilogue(total, c, [oy, o]), y, [n, c, oy, o])

    with kb.loop(batch) as n, kb.loop(channels) as c:
        pairs = [kb.load(table, [c, kb.index(r)]) for r in range(rows_window.kernel)]
        middles = [
            kb.cast(kb.load(weights, [c, kb.index(0), kb.index(r), kb.index(1)]), I32)
            for r in range(rows_window.kernel)
        ]
        block = BLOCK[last.stride]
        main = x_lo + (x_hi - x_lo) // block * block
        with kb.loop(y_hi, y_lo) as oy:
            if main > x_lo:
                with kb.loop(main, x_lo, block) as ox:
                    step(n, c, oy, [ox, *(kb.alu("add", ox, kb.index(j)) for j in range(1, block))], pairs, middles)
            if main < x_hi:  # the row's last outputs, fewer than a step
                step(n, c, oy, [kb.index(o) for o in range(main, x_hi)], pairs, middles)


__all__ = ["BLOCK", "STRIDES", "TAPS", "WORD", "applies", "depthwise_paired_taps", "paired_span", "paired_tap_weights", "split_paired_interior"]
