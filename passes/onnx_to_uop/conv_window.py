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

Where each run is whole words (4 | kernel[-1]·C: every ResNet-8 3x3 layer), a tile is now one
`arm_dsp.smlad_window` (`_window_tiles`): the window's rows and each row's words in one
assembly loop, over the pair's weight rows widened to int16 once per pair of output channels
(per 16 products 6 loads, 4 SXTB16, 8 SMLAD: 20 cycles, against 22 in `smlad_tile`, which
widened the weights again for every pixel pair). Both losses above go: LLVM had unrolled the
loop of 3 rows around `smlad_tile` (3 copies of its 4-step loop), and with the epilogue the
32- and 64-channel kernels outgrew the L4R5's 1 KB instruction cache (1.76 M cycles of flash
stalls); the 16-channel layers' runs (12 steps, too few for `smlad_tile`'s loop) were LLVM's.
ic_int8 on the L4R5 (python bench/mlperf_tiny.py --models ic_int8): 24,629,589 -> 19,851,693
cycles, max err 0; the six 3x3 layers 22.4 M -> 17.6 M (zant profile): 1.45-1.54 cycles per
product, the loop 1.34 (86 cycles per 4 steps). Then all 6 loads of a step back to back (19
cycles: the row's bound moved to the stack to free a register) and post-indexed pointers (no
ADD per pass): 82 cycles per 4 steps, ic_int8 19,185,933 cycles, the 3x3 layers 17.0 M; with 8
steps per pass (6 for the 16-channel rows' 12) 18,792,418.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import SSAValue

from zant.dialects import arm_dsp, uop
from zant.passes.arm_dsp_tile_loops import LOAD_OFFSETS
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
    weight_values: np.ndarray | None = None,
) -> None:
    """Y = the Conv of X (N, C, spatial…, already padded: `windows` without pads) in the column
    form of a window (`im2col` a block of pixels at a time): the column holds, per pixel, its
    window's taps channels innermost, [pixel][k…][C], the order of the weights repacked
    W'[m, k…, c]; `weight(m, i)` is W'[m] flattened at i (int32), `epilogue(sum, m)` as for
    `pointwise_columns`. The tiles are then the pointwise form's over K = taps·C: both operands
    contiguous int8 words, each weight word read and widened once per 2 pixels, where reading
    X along its channels (NCHW) gathered a byte at a time for every 4 output channels.

    A channels-last X (`channels_last_applies`) needs no column: `_window_channels_last`
    (`weight_cache`, `weight_rows` as for `conv_columns.pointwise_columns`), or, where its
    tiles fit `arm_dsp.smlad_window` and the weights are known (`weight_values`: W' as int8
    [M, taps·C], `weight_rows`' values), `_window_tiles`."""
    if is_channels_last(x) and channels_last_applies(windows, y.shape[2:]):
        if weight_values is not None and window_tiles_apply(x, windows):
            _window_tiles(kb, x, windows, y, weight_values, epilogue, name)
            return
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
                # Where the later axes are all 1 wide (an output one pixel wide) nothing is left
                # for them: index 0, not the pixel's row again (which read past the padded rows).
                rest = kb.alu("rem", rest, kb.index(below)) if below > 1 else kb.index(0)
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


WIDENED = (0, 2, 1, 3)
"""The order of a word's 4 bytes in its pre-widened int16 pairs: `SXTB16`'s halves, bytes 0
and 2 (what `SMLAD` multiplies by X's word widened as is), then 1 and 3 (by X's word rotated
by 8)."""


def window_tiles_apply(x: Layout, windows: Sequence[Window]) -> bool:
    """Whether `_window_tiles` takes a Conv over the channels-last X (`channels_last_applies`
    already holds): its taps over at most 2 axes (one run of X per row of taps, the rows a
    constant apart), each run whole words (4 | kernel[-1]·C: no word reads past a run, so none
    past X), and every offset the assembly adds fits an immediate (`LOAD_OFFSETS`): the second
    pixel's run (stride·C bytes on), the step from one run's end to the next row's start and
    a row's widened weights (4·run bytes)."""
    channels = x.shape[1]
    run = windows[-1].kernel * channels
    if len(windows) > 2 or run % 4 or 4 * run not in LOAD_OFFSETS:  # a row's weights: 4·run bytes
        return False
    if len(windows) == 1:
        return windows[-1].stride * channels + 12 in LOAD_OFFSETS
    row = _row_stride(x) * windows[0].dilation
    return windows[-1].stride * channels + 12 in LOAD_OFFSETS and abs(row - run) in LOAD_OFFSETS


def _row_stride(x: Layout) -> int:
    """Elements between one row of a channels-last 2-D X and the next (the padded width · C)."""
    return x.strides[2]


def window_weights(values: np.ndarray) -> np.ndarray:
    """W' (int8 [M, K], K = taps·C, 4 | K, M even) as `arm_dsp.smlad_window` reads a pair of
    channels' rows once widened: for each pair p, each word g of K, each channel i of the pair,
    W'[2p + i, 4g + q] for q in `WIDENED` ([M/2, K/4, 2, 4], flat)."""
    out_channels, depth = values.shape
    words = values.reshape(out_channels // 2, 2, depth // 4, 4)[..., list(WIDENED)]
    return np.ascontiguousarray(words.transpose(0, 2, 1, 3)).reshape(-1)


def _window_tiles(
    kb: KernelBuilder,
    x: Layout,
    windows: Sequence[Window],
    y: Layout,
    weight_values: np.ndarray,
    epilogue: Callable[[SSAValue, SSAValue], SSAValue],
    name: str,
) -> None:
    """`_window_channels_last`'s tiles, each one `arm_dsp.smlad_window` (a loop in assembly over
    the window's rows and each row's run of X), over weights widened to int16 once per pair of
    output channels:

        for n, for m = 0, 2 … < M:
          pair[k] = W''[m/2, k] as int16 (k < 2·taps·C: `window_weights`' order)
          for o (the rows' outputs), for q = 0, 2 … < width (the last pair min(q, width - 2)):
            c_ij = smlad_window(&X[n, o·s, q·s_last·C], &pair[0])   (channel m + i, pixel q + j)
            Y[n, m + i, o, q + j] = epilogue(c_ij, m + i)

    Each X word is widened once for both channels and each weight pair read as it is (per 16
    products 6 loads, 4 SXTB16, 8 SMLAD: 19 cycles on the Cortex-M4 against 22 with the
    weights widened for every pixel pair); the staged pair is `[2·taps·C]` int16, twice the
    int8 rows `_window_channels_last` stages, read from RAM whatever the weight cache (the
    widening copy replaces the flash reads per pixel pair there). Exact: every product is the
    same, and int32 sums wrap alike in any order."""
    batch, channels = x.shape[:2]
    kernel = [w.kernel for w in windows]
    depth = math.prod(kernel) * channels
    run = kernel[-1] * channels
    out_channels = y.shape[1]
    *outer, width = y.shape[2:]
    last = windows[-1]
    rows = merge_dims(x.permute(channels_last_order(x.rank)), x.rank - 2, x.rank - 1)
    assert rows is not None
    source = kb.constant(f"{name}_window_weights", window_weights(weight_values), IntegerType(8))
    pair = kb.alloc(f"{name}_weights", [CHANNELS * depth], IntegerType(16))
    row_stride = _row_stride(x) * windows[0].dilation if len(windows) == 2 else 0
    zero = kb.const(0, I32)
    with kb.loop(batch) as n, kb.loop(out_channels, 0, CHANNELS) as m:
        channel_rows = [m, *(kb.alu("add", m, kb.index(i)) for i in range(1, CHANNELS))]
        base = kb.alu("mul", m, kb.index(depth))  # the pair's first element (m even: m/2 · 2·depth)
        with kb.loop(CHANNELS * depth) as k:
            kb.store(kb.cast(kb.load(source, [kb.alu("add", base, k)]), IntegerType(16)), pair, [k])
        with kb.loop_nest(outer) as outs, kb.loop(-(-width // PIXELS)) as pixel_pair:
            q = last_overlapping(kb, kb.alu("mul", pixel_pair, kb.index(PIXELS)), PIXELS, width)
            lasts = [q, *(kb.alu("add", q, kb.index(j)) for j in range(1, PIXELS))]
            start = kb.alu("mul", kb.alu("mul", q, kb.index(last.stride)), kb.index(channels))
            firsts = [kb.alu("mul", o, kb.index(w.stride)) for o, w in zip(outs, windows)]  # the window's first row
            px = kb.insert(uop.GepOp(kb.view(rows), [n, *firsts, start])).result
            pw = kb.insert(uop.GepOp(kb.view(pair), [kb.index(0)])).result
            tile = kb.insert(arm_dsp.SmladWindowOp(
                px, pw, [zero] * 4, kernel[0] if len(kernel) == 2 else 1, run // 4, row_stride, last.stride * channels,
            ))
            sums = {(i, j): tile.results[2 * j + i] for i in range(CHANNELS) for j in range(PIXELS)}
            for (i, row), (j, at) in itertools.product(enumerate(channel_rows), enumerate(lasts)):
                kb.store(epilogue(sums[i, j], row), y, [n, row, *outs, at])


__all__ = ["WIDENED", "channels_last_applies", "window_columns", "window_tiles_apply", "window_weights"]
