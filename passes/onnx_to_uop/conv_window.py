"""The column form of an int8 Conv over a window of taps (ResNet-8's 3x3 layers) on cores whose
dot products are word SMLADs: `conv_columns`' pointwise form over K = taps·C.

`window_columns` is the same form for a window of taps over 4 or more channels (ResNet-8's 3x3
layers): each pixel's window is copied into the column channels innermost, [pixel][k…][C], in
the order of the repacked weights W'[m, k…, c], and the tiles reduce over K = taps·C (ic_int8
on the L4R5: 41.02 M -> 33.75 M cycles).

Where the Conv's input copy can be channels-last (`channels_last_applies`: `quant` then pads X
into an (N, H, W, C) buffer, or copies it unpadded), no column is copied at all
(`_window_channels_last`): along the last axis a window's taps and their channels are one run of
X in W''s order, so the tiles read each of a 3x3 window's 3 runs of 3·C bytes in place, with the
pairs of output channels outermost and each pair's weight rows staged in RAM where the flash
cache would not hold them. The copy into columns (about 3.5 instructions per byte after LLVM,
spilling) and the weights' flash reads per pixel pair go (ic_int8 on the L4R5: 33,177,411 ->
27,440,442 cycles; the six 3x3 layers 30.4 M -> 24.4 M in `zant profile`).

Tried and measured there (cycles of ic_int8): tiles of 4 channels x 2 pixels 29.90 M, 2 x 4
29.67 M, 2 x 3 30.58 M (LLVM spills the accumulators); an int16 copy of X and int16 staged
weights (SMLAD on the words as they are, 2 loads per 4 products) 25.29 M but 90,944 B of
scratch instead of 53,664 (each 3x3 input twice its size), left out. Later (24,803,731 cycles
at 9590c3b): a tile's 2 pixels one above the other instead of side by side 25,161,804; the
other axes' taps unrolled in the IR (3 copies of the run loop per tile) 31.9 M (the kernels
outgrew the 1 KB instruction cache). What is left is mostly LLVM's: the 3x3 layers run about
1.5 instructions per product (epilogue included) where a 2 x 2 tile's floor is 1.25 (per 16
products 4 word loads, 8 SXTB16, 8 SMLAD), spilling a value or two per step; where the staged
weights and X share one induction variable (conv2d_2 and conv2d_7 of ic_int8: X's offsets out
of immediate range, a MOVW/MOVT pair per load), 0.4-0.8 M cycles more a layer.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

from xdsl.ir import SSAValue

from zant.passes.onnx_to_uop.conv_columns import CACHE_SHARE, CHANNELS, I32, PIXELS, last_overlapping, ColumnTile, column_pixels
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, channels_last_order, is_channels_last, merge_dims
from zant.passes.onnx_to_uop.windows import Window


def window_columns(
    kb: KernelBuilder,
    x: Layout,
    windows: Sequence[Window],
    y: Layout,
    weight: Callable[[SSAValue, SSAValue], SSAValue],
    epilogue: Callable[[SSAValue, SSAValue], SSAValue],
    name: str,
    weight_cache: int = 0,
    weight_rows: Layout | None = None,
) -> None:
    """Y = the Conv of X (N, C, spatial…, already padded: `windows` without pads) in the column
    form of a window (`im2col` a block of pixels at a time): the column holds, per pixel, its
    window's taps channels innermost, [pixel][k…][C], the order of the weights repacked
    W'[m, k…, c]; `weight(m, i)` is W'[m] flattened at i (int32), `epilogue(sum, m)` as for
    `pointwise_columns`. The tiles are then the pointwise form's over K = taps·C: both operands
    contiguous int8 words, each weight word read and widened once per 2 pixels, where reading
    X along its channels (NCHW) gathered a byte at a time for every 4 output channels.

    A channels-last X (`channels_last_applies`) needs no column: `_window_channels_last`
    (`weight_cache`, `weight_rows` as for `conv_columns.pointwise_columns`)."""
    if is_channels_last(x) and channels_last_applies(windows, y.shape[2:]):
        _window_channels_last(kb, x, windows, y, weight, epilogue, name, weight_cache, weight_rows)
        return
    batch, channels = x.shape[:2]
    kernel = [w.kernel for w in windows]
    depth = channels * math.prod(kernel)
    out_channels, out_shape = y.shape[1], y.shape[2:]
    pixels = math.prod(out_shape)
    width = column_pixels(depth, out_channels, pixels)
    yf = merge_dims(y, 2, y.rank - 1)
    assert yf is not None
    flat = kb.alloc(name, [width, depth], x.element_type)
    column = flat.reshape([width, *kernel, channels])
    assert column is not None
    tile = ColumnTile(kb, flat, yf, depth, weight, epilogue)
    with kb.loop(batch) as n, kb.loop(-(-pixels // width)) as block:
        p = last_overlapping(kb, kb.alu("mul", block, kb.index(width)), width, pixels)
        with kb.loop(width) as j:
            at = kb.alu("add", p, j)
            # The pixel's output position (H·W order), then its window's taps, channel by channel.
            outs, rest = [], at
            for d, size in enumerate(out_shape):
                below = math.prod(out_shape[d + 1:])
                outs.append(kb.alu("div", rest, kb.index(below)) if below > 1 else rest)
                if below > 1:
                    rest = kb.alu("rem", rest, kb.index(below))
            with kb.loop_nest([*kernel, channels]) as (*taps, c):
                positions = [
                    kb.alu("add", kb.alu("mul", o, kb.index(w.stride)), kb.alu("mul", k, kb.index(w.dilation)))
                    for o, k, w in zip(outs, taps, windows)
                ]
                kb.store(kb.load(x, [n, c, *positions]), column, [j, *taps, c])
        if width == PIXELS:
            positions = [p, *(kb.alu("add", p, kb.index(j)) for j in range(1, PIXELS))]
            with kb.loop(out_channels, 0, CHANNELS) as m:
                tile.build(n, m, kb.index, positions)
        else:
            with kb.loop(out_channels, 0, CHANNELS) as m, kb.loop(-(-width // PIXELS)) as pair:
                j0 = last_overlapping(kb, kb.alu("mul", pair, kb.index(PIXELS)), PIXELS, width)
                js = [j0, *(kb.alu("add", j0, kb.index(j)) for j in range(1, PIXELS))]
                tile.build(n, m, js.__getitem__, [kb.alu("add", p, j) for j in js])


def channels_last_applies(windows: Sequence[Window], out_shape: Sequence[int]) -> bool:
    """Whether `_window_channels_last` takes a Conv of these (unpadded) windows over a
    channels-last X: the last axis' taps adjacent (dilation 1), so that with the channels they
    are one run of X, and at least `PIXELS` outputs along it (a tile's pixels)."""
    return bool(windows) and windows[-1].dilation == 1 and out_shape[-1] >= PIXELS


def _window_channels_last(
    kb: KernelBuilder,
    x: Layout,
    windows: Sequence[Window],
    y: Layout,
    weight: Callable[[SSAValue, SSAValue], SSAValue],
    epilogue: Callable[[SSAValue, SSAValue], SSAValue],
    name: str,
    weight_cache: int,
    weight_rows: Layout | None,
) -> None:
    """`window_columns` over a channels-last X (the padded copy `quant` makes channels-last for
    this form): along the last axis, a window's taps and their channels are one contiguous run
    of `kernel[-1]·C` bytes of X, in the order of W'[m, k…, c], so the tiles read X itself,
    one run per tap of the other axes (3 runs of 3·C for a 3x3 window), and no column is
    copied. The pairs of output channels are the outer loop, as in the pointwise channels-last
    form: one pair's weight rows serve every pixel of the image,

        for n, for m = 0, 2 … < M: for o… (the other axes' outputs), for q = 0, 2 … < width
          (the last pair min(q, width - 2)): for t… (the other axes' taps), for k < kernel[-1]·C:
            acc[i][j] += X[n, o·s + t·d…, (q + j)·s_last·C + k] · W'[m + i, t…, k]

    and where a pair of rows (2·taps·C bytes: 288 to 1,152 for ResNet-8) is more than the share
    `CACHE_SHARE` of the cache in front of slow weight memory (`weight_cache`), it is first
    copied into a scratch buffer `[2][taps·C]` from `weight_rows` (W' as int8 [M, taps·C]),
    which every pixel pair then reads from RAM: the column form read both rows from flash
    again for every pixel pair (ResNet-8's 16-channel layers on the L4R5: 5 wait states per 8
    bytes, 0.31 stall cycles per MAC). Exact: every output sums the same products in the same
    order."""
    batch, channels = x.shape[:2]
    kernel = [w.kernel for w in windows]
    run = kernel[-1] * channels
    depth = math.prod(kernel) * channels
    out_channels = y.shape[1]
    *outer, width = y.shape[2:]
    last = windows[-1]
    # X in memory order with its last spatial axis merged into the channels: (N, S…, S_last·C).
    rows = merge_dims(x.permute(channels_last_order(x.rank)), x.rank - 2, x.rank - 1)
    assert rows is not None
    staged = weight_rows is not None and CHANNELS * depth > weight_cache // CACHE_SHARE > 0
    local = kb.alloc(f"{name}_weights", [CHANNELS, depth], weight_rows.element_type) if staged and weight_rows else None
    with kb.loop(batch) as n, kb.loop(out_channels, 0, CHANNELS) as m:
        channel_rows = [m, *(kb.alu("add", m, kb.index(i)) for i in range(1, CHANNELS))]
        if local is not None and weight_rows is not None:
            with kb.loop(CHANNELS) as i, kb.loop(depth) as k:
                kb.store(kb.load(weight_rows, [kb.alu("add", m, i), k]), local, [i, k])
        with kb.loop_nest(outer) as outs, kb.loop(-(-width // PIXELS)) as pair:
            q = last_overlapping(kb, kb.alu("mul", pair, kb.index(PIXELS)), PIXELS, width)
            lasts = [q, *(kb.alu("add", q, kb.index(j)) for j in range(1, PIXELS))]
            starts = [kb.alu("mul", kb.alu("mul", at, kb.index(last.stride)), kb.index(channels)) for at in lasts]
            accs = [kb.define_acc(0, I32) for _ in itertools.product(channel_rows, lasts)]
            with kb.loop_nest(kernel[:-1]) as taps:
                positions = [
                    kb.alu("add", kb.alu("mul", o, kb.index(w.stride)), kb.alu("mul", t, kb.index(w.dilation)))
                    for o, t, w in zip(outs, taps, windows)
                ]
                tap = kb.index(0)
                for t, size in zip(taps, kernel[1:]):  # the taps' flat index, row-major
                    tap = kb.alu("mul", kb.alu("add", tap, t), kb.index(size))
                base = kb.alu("mul", tap, kb.index(channels))
                with kb.loop(run) as k:
                    xs = [kb.cast(kb.load(rows, [n, *positions, kb.alu("add", start, k)]), I32) for start in starts]
                    at = kb.alu("add", base, k)
                    if local is not None:
                        ws = [kb.cast(kb.load(local, [kb.index(i), at]), I32) for i in range(CHANNELS)]
                    else:
                        ws = [weight(row, at) for row in channel_rows]
                    for acc, (wv, xv) in zip(accs, itertools.product(ws, xs)):
                        kb.mulacc(acc, xv, wv)
            for acc, (row, at) in zip(accs, itertools.product(channel_rows, lasts)):
                kb.store(epilogue(kb.acc_get(acc), row), y, [n, row, *outs, at])


__all__ = ["channels_last_applies", "window_columns"]
