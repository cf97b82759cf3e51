"""The column form of an int8 pointwise Conv on cores whose dot products are word SMLADs (the
DSP extension without Helium: `onnx-to-uop{conv-word-taps=true}`).

In NCHW a pointwise Conv reads X along its channels at the stride H·W: `arm-dsp-dot` then
gathers each pixel's input a byte at a time (4 LDRSB and 2 PKHBT per 4 channels), and a
register tile over several pixels would hold two packed halves per pixel beside its
accumulators (the Cortex-M4 spilled a 4-channel x 2-pixel tile: KWS 5.11 M -> 5.26 M
instructions). Instead, this form copies the input channels of `PIXELS` neighbouring pixels
(in H·W order) into a small int8 column buffer `col[PIXELS][C]` once per block of pixels, then
computes a register tile of `CHANNELS` output channels x `PIXELS` pixels over it:

    for n, for p = 0, P … < H·W (the last block min(p, H·W - P): it may overlap the one before)
      col[j][c] = X[n, c, p + j]                       (c < C, j < P)
      for m = 0, R … < M:
        acc[i][j] = Σ_c col[j][c] · W[m + i, c]        (i < R, j < P)
        Y[n, m + i, p + j] = epilogue(acc[i][j], m + i)

Both operands of the reduction are contiguous int8, so `arm-dsp-dot` loads each as words and
widens it with SXTB16 once per step, shared: an input word by the R channels, a weight word
by the P pixels (per 4 channels of a 2 x 2 tile: 2 + 2 word loads, 8 SXTB16, 8 SMLAD for 16
products, against 26 instructions in the gathered form; 4 accumulators, 4 input and 2 weight
halves and 2 pointers fit the M4's registers), and the weights are read from flash once per
block of P pixels instead of once per pixel. The copy costs about 2 instructions per input
byte per block, amortized over the M output channels; the column adds P·C bytes of scratch.

Exact: every output sums the same products in the same order; only where the input is read
from changes. Taken for ungrouped 1x1 Convs with unit strides, no pads, constant weights (the
zero point folded into the bias), an even number of output channels, at least 4 input
channels and 2 pixels, and X contiguous.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import SSAValue

from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout

PIXELS = 2
"""Pixels per register tile (and column)."""

CHANNELS = 2
"""Output channels per register tile."""

MIN_CHANNELS = 4
"""Fewer input channels than a word: the gathered form (no word loads to share)."""

I32 = IntegerType(32)


def column_form_applies(x: Layout, out_channels: int, kernel: Sequence[int], strides: Sequence[int], padded: bool) -> bool:
    """Whether a Conv (already known ungrouped with constant weights, folded zero point) takes
    the column form: a 1x1 window at unit strides without pads over at least `MIN_CHANNELS`
    input channels and `PIXELS` pixels (a single pixel, a Gemm's, reuses no weight), an even
    number of output channels, X contiguous."""
    return (
        all(k == 1 for k in kernel) and all(s == 1 for s in strides) and not padded
        and math.prod(x.shape[2:]) >= PIXELS and x.shape[1] >= MIN_CHANNELS and out_channels % CHANNELS == 0 and x.reshape([x.size]) is not None
    )


def pointwise_columns(
    kb: KernelBuilder,
    x: Layout,
    y: Layout,
    weight: Callable[[SSAValue, SSAValue], SSAValue],
    epilogue: Callable[[SSAValue, SSAValue], SSAValue],
    name: str,
) -> None:
    """Y = the Conv of X (N, C, spatial…) by a 1x1 window in the column form (module docstring);
    `weight(m, c)` is W[m, c] as an int32 factor, `epilogue(sum, m)` the value stored for the
    int32 sum of output channel m (its scales and zero points do not vary over the pixels)."""
    batch, channels = x.shape[:2]
    out_channels = y.shape[1]
    pixels = math.prod(x.shape[2:])
    xf = x.reshape([batch, channels, pixels])
    yf = y.reshape([batch, out_channels, pixels])
    assert xf is not None and yf is not None
    column = kb.alloc(name, [PIXELS, channels], x.element_type)
    with kb.loop(batch) as n, kb.loop(-(-pixels // PIXELS)) as block:
        # An odd last pixel is computed in a block with the one before it, which is stored a
        # second time, with the same value: no second copy of the code for a lone pixel.
        p = kb.alu("mul", block, kb.index(PIXELS))
        if pixels % PIXELS:
            p = kb.alu("min", p, kb.index(pixels - PIXELS))
        positions = [p, *(kb.alu("add", p, kb.index(j)) for j in range(1, PIXELS))]
        # The block's pixels side by side in X's rows: read together, channel by channel.
        with kb.loop(channels) as c:
            for j, position in enumerate(positions):
                kb.store(kb.load(xf, [n, c, position]), column, [kb.index(j), c])
        with kb.loop(out_channels, 0, CHANNELS) as m:
            rows = [m, *(kb.alu("add", m, kb.index(i)) for i in range(1, CHANNELS))]
            accs = [kb.define_acc(0, I32) for _ in itertools.product(rows, positions)]
            with kb.loop(channels) as c:
                xs = [kb.cast(kb.load(column, [kb.index(j), c]), I32) for j in range(PIXELS)]
                ws = [weight(row, c) for row in rows]
                for acc, (wv, xv) in zip(accs, itertools.product(ws, xs)):
                    kb.mulacc(acc, xv, wv)
            for acc, (row, position) in zip(accs, itertools.product(rows, positions)):
                kb.store(epilogue(kb.acc_get(acc), row), yf, [n, row, position])

__all__ = ["CHANNELS", "MIN_CHANNELS", "PIXELS", "column_form_applies", "pointwise_columns"]
