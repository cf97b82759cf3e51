"""The column form of an int8 Conv over a window of taps (ResNet-8's 3x3 layers) on cores whose
dot products are word SMLADs: `conv_columns`' pointwise form over K = taps·C.

`window_columns` is the same form for a window of taps over 4 or more channels (ResNet-8's 3x3
layers): each pixel's window is copied into the column channels innermost, [pixel][k…][C], in
the order of the repacked weights W'[m, k…, c], and the tiles reduce over K = taps·C (ic_int8
on the L4R5: 41.02 M -> 33.75 M cycles).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.ir import SSAValue

from zant.passes.onnx_to_uop.conv_columns import CHANNELS, PIXELS, _last_overlapping, _Tile, column_pixels
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, merge_dims
from zant.passes.onnx_to_uop.windows import Window


def window_columns(
    kb: KernelBuilder,
    x: Layout,
    windows: Sequence[Window],
    y: Layout,
    weight: Callable[[SSAValue, SSAValue], SSAValue],
    epilogue: Callable[[SSAValue, SSAValue], SSAValue],
    name: str,
) -> None:
    """Y = the Conv of X (N, C, spatial…, already padded: `windows` without pads) in the column
    form of a window (`im2col` a block of pixels at a time): the column holds, per pixel, its
    window's taps channels innermost, [pixel][k…][C], the order of the weights repacked
    W'[m, k…, c]; `weight(m, i)` is W'[m] flattened at i (int32), `epilogue(sum, m)` as for
    `pointwise_columns`. The tiles are then the pointwise form's over K = taps·C: both operands
    contiguous int8 words, each weight word read and widened once per 2 pixels, where reading
    X along its channels (NCHW) gathered a byte at a time for every 4 output channels."""
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
    tile = _Tile(kb, flat, yf, depth, weight, epilogue)
    with kb.loop(batch) as n, kb.loop(-(-pixels // width)) as block:
        p = _last_overlapping(kb, kb.alu("mul", block, kb.index(width)), width, pixels)
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
                j0 = _last_overlapping(kb, kb.alu("mul", pair, kb.index(PIXELS)), PIXELS, width)
                js = [j0, *(kb.alu("add", j0, kb.index(j)) for j in range(1, PIXELS))]
                tile.build(n, m, js.__getitem__, [kb.alu("add", p, j) for j in js])


__all__ = ["window_columns"]
