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
halves and 2 pointers fit the M4's registers). The copy costs about 2 instructions per input
byte per block, amortized over the M output channels; the column adds its bytes to scratch.

A column holds one tile's `PIXELS` pixels, or up to `MAX_COLUMN_PIXELS` when the weights are
read from slow memory and their rows stay cached between tiles (`column_pixels`): the tiles
of one pair of weight rows then loop over the column's pixel pairs,

      for m = 0, R … < M: for q = 0, 2 … < width (the last pair min(q, width - 2)):
        the 2 x 2 tile of rows m, m + 1 over the column's pixels q, q + 1

so the weights are read from flash once per column instead of once per 2 pixels (KWS's
64 -> 64 layers on the L4R5: 181,440 -> 23,040 flash-stall cycles each, for 1 KB of column
instead of 128 B).

A channels-last X of at least `WIDE_MIN_CHANNELS` channels takes the widened form instead
(`_pointwise_wide`): X and each block of 4 weight rows widened once into words of two int16,
then per pair of pixels one `arm_dsp.smlad_block` of 4 output channels x 2 pixels, 6 word loads
and 8 SMLAD per 16 products, no SXTB16 (VWW's 128-channel layers on the L4R5: 987 K -> 790 K
cycles each; the bench KWS int8's 64-channel layers on the M4: 759 K -> 577 K instructions),
for a widened copy of X in scratch: the whole image, or blocks of its pixels, as X, Y and the
copies fit within `layer_bound` (`wide_block`: by default the layer-by-layer bound and
`zant.analysis.layer_bound.KERNEL_SCRATCH_BYTES` more, a RAM budget's own under one), or as
the copies fit beside X with Y written over it, where X dies in the Conv (its nest marked
`in_place`; X and Y both channels-last, or both NCHW with X gathered: KWS's 64-channel layers).

Below that, a channels-last X's tiles of up to 32 channels (straight-line reductions) end as one
asm block per pair of output channels: `arm-dsp-tile-rows` makes each loop over the pixel pairs,
once its reductions are `arm_dsp.smlad_tile`s and its epilogues SMMLA and SSAT, one
`arm_dsp.smlad_tile_row` (the pair's weight words widened once onto the stack, tiles of three
pixels where they come in threes; VWW's 8-, 16- and 32-channel layers on the L4R5: 922 K ->
524 K, 605 K -> 435 K, 992 K -> 790 K, 498 K -> 398 K cycles). The form here is unchanged by
it: the loops it matches are the ones below.

Exact: every output sums the same products in the same order; only where the input is read
from changes. Taken for ungrouped 1x1 Convs with unit strides, no pads, constant weights (the
zero point folded into the bias), an even number of output channels, at least 4 input
channels and 2 pixels, and X contiguous.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, IntegerType
from xdsl.dialects import func
from xdsl.dialects.builtin import UnrealizedConversionCastOp
from xdsl.ir import Operation, SSAValue

from zant.analysis.liveness import IN_PLACE_ATTRIBUTE, in_place_mark
from zant.dialects import arm_dsp, uop
from zant.ir.resources import attr_to_array
from zant.passes.plan_arenas import CONSTANT_ALIGNMENT
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, constant_table, is_channels_last, merge_dims

PIXELS = 2
"""Pixels per register tile."""

CHANNELS = 2
"""Output channels per register tile."""

MIN_CHANNELS = 4
"""Fewer input channels than a word: the gathered form (no word loads to share)."""

MAX_COLUMN_PIXELS = 16
"""Most pixels per column (`column_pixels`): the weights are read once per column, so their
reads (from flash on a microcontroller, where a word with wait states costs more than the
products it feeds) fall with the column's width; past 16 the saving is below 1% of the
products."""

WIDE_MAX_CHANNELS = 64
"""Most input channels of a layer given a column wider than one tile: the two weight rows a
tile reads (2·C bytes) must stay cached while the column's pixel pairs read them again; longer
rows evict each other in a flash accelerator's small data cache (the STM32L4's ART: 8 lines of
32 bytes) and every pair reads them from flash anyway (VWW's 128- and 256-channel layers got
slower wide: the extra loop and no fewer flash reads)."""

CACHED_WEIGHT_BYTES = 256
"""Weights of at most this many bytes stay in that cache over the whole layer (VWW's 8 -> 16
channel layer): the narrow column then reads them as cheaply."""

I32 = IntegerType(32)

WIDE_ROWS = arm_dsp.SMLAD_BLOCK_ROWS
"""Output channels per register block of the widened form (`_pointwise_wide`)."""

WIDE_MIN_CHANNELS = 64
"""The fewest input channels a layer takes the widened form with: below, the requantization of
each output (about 12 cycles, as in the 2 x 2 tile) outweighs what the block saves on its few
products, and the copies cost more than it saves (VWW's 16- and 32-channel layers: 605 K -> 623 K
and 496 K -> 528 K cycles on the L4R5)."""

WIDE_MIN_PIXELS = 8
"""The fewest pixels a layer takes the widened form with: staging a block's weight rows costs
about 3 cycles per weight (its one read from flash, widened and stored), shared by the image's
pixel pairs, where the 2 x 2 tiles read the weights in place. VWW's 3x3 layers (5 pairs, the
last overlapping) gain: 128 -> 256 channels 648 K -> 531 K cycles, 256 -> 256 1.20 M -> 977 K
on the L4R5."""

FLAT_WIDENING_UNROLL = 8
"""Words a pass of the loop by which `_pointwise_wide` written over its input widens each block
of weight rows (one loop over the block's words, the rows contiguous in W and in its widened
copy), where a loop over the rows around one over a row's words was unrolled whole by LLVM
(KWS's 4 rows of 64 channels: 370 bytes of code), which with the call and the row asm's 670
bytes outgrew the L4R5's 1 KB instruction cache, so each block of rows fetched both from flash
again. It runs once per block of pixels and block of rows: a RAM budget's small blocks (MLPerf
KWS under 9,600 B: 16 blocks of 8 pixels, 256 times a layer) pay it most, the default plan's 3
blocks too (MLPerf KWS 4,137,601 -> 4,070,540 cycles on the L4R5, flash 57,791 -> 55,975 B; on
mps2-an386, without flash wait states, 3,321,989 -> 3,326,531 instructions). Blocks not
written over their input keep the nested loops (VWW's layer 10 under 22,118 B, 6 blocks:
12,953,025 -> 12,959,404 cycles with the flat one). Words a pass: KWS under 9,600 B on the
L4R5 took 5,052,337 cycles at 4, 4,948,844 at 8, 5,272,109 at 16 (the 16 words' code outgrew
the cache again)."""


CACHE_LINE_BYTES = 32
"""The bytes of a line of the data cache in front of flash (`zant.backend.boards.FlashTiming`: the
STM32 ART's lines of four 64-bit words)."""

QUADS_BELOW = 16
"""Blocks of fewer pixels than this (a RAM budget's, `wide_block` written over X) take the pair
form of `_pointwise_wide` instead (`quad_block`): each block of 4 weight rows widened again per
block of pixels cost about 560 cycles (its 256 bytes read from flash, 64 words widened), 256
times a layer for MLPerf KWS's 64 -> 64 layers under 9,600 B (blocks of 8 pixels). The pair form
widens the weights at compile time (int16 in flash, twice their bytes), which frees the widened
rows' scratch for more pixels a block (12), and reads each pair of rows once per block of pixels
from flash, then from the data cache for the block's other quads."""


def quad_block(x: Layout, y: Layout, layer_bound: int, weight_cache: int) -> int:
    """The pixels a block of the pair form (`_pointwise_wide` with `arm_dsp.smlad_quad_row`) widens
    at once with Y written over X within `layer_bound`, 0 where it is not taken: where the form
    with widened weight rows would take blocks of fewer than `QUADS_BELOW` pixels and this one
    more and fewer blocks, a pair of int16 weight rows (4·C bytes) fits `weight_cache` (the data
    cache in front of flash; 0: none, every read as cheap), and the blocks, whole quads each as
    even as can be, leave a last block of no fewer than 4 pixels (blocks never overlap written
    over X). MLPerf KWS's 64 -> 64 layers under 9,600 B: 12 pixels a block (10 and the rest, 5)
    where the widened rows left 8 (16 blocks)."""
    channels, pixels = x.shape[1], math.prod(x.shape[2:])
    quad = arm_dsp.SMLAD_QUAD_PIXELS
    if weight_cache and 4 * channels > weight_cache:
        return 0
    runtime = wide_block(x, y, layer_bound, in_place=True)
    if runtime >= QUADS_BELOW:
        return 0
    most = min((layer_bound - max(x.size, y.size)) // (2 * channels), pixels)
    most -= most % quad
    if most <= runtime or most < quad:
        return 0
    blocks = -(-pixels // most)
    block = min(most, -(-(-(-pixels // blocks)) // quad) * quad)
    while block >= quad and 0 < pixels % block < quad:
        block -= quad
    # Only for fewer blocks (each pass over the weights reads twice their bytes from flash).
    return block if block >= quad and -(-pixels // block) < -(-pixels // runtime) else 0


def column_pixels(channels: int, out_channels: int, pixels: int) -> int:
    """How many pixels one column holds: `PIXELS` (one register tile) unless the weights are
    re-read from slow memory once per column and their rows stay cached between the tiles
    (`WIDE_MAX_CHANNELS`, `CACHED_WEIGHT_BYTES`); then the pixels split into as few blocks of
    at most `MAX_COLUMN_PIXELS` as can be, as even as can be (the last block overlaps the one
    before by less than the number of blocks)."""
    if channels > WIDE_MAX_CHANNELS or channels * out_channels <= CACHED_WEIGHT_BYTES:
        return PIXELS
    most = max(PIXELS, min(MAX_COLUMN_PIXELS, pixels))
    blocks = -(-pixels // most)
    return max(PIXELS, -(-pixels // blocks))


def written_over_column(x: Layout, y: Layout, layer_bound: int) -> int:
    """The pixels of a column as wide as fits a bound (a RAM budget's) that X and Y exceed
    together, 0 otherwise or where a column of more than one tile is not taken
    (`column_pixels`). Such a layer is written over its input (`schedule-in-place`: the column
    is its line buffer), so only the larger of X and Y is beside the column; past
    `MAX_COLUMN_PIXELS` each block still costs its copy loop and one call per pair of weight
    rows, widened again each time (VWW's 16- and 32-channel NCHW layers 4 and 6 under 22,118 B on
    the L4R5: 625 K -> 555 K and 1,114 K -> 961 K cycles at 192 and 96 pixels). A column less
    than twice as wide is not worth its bytes: KWS's 64-channel layers under 9,600 B took 22
    pixels for 16, 3 to 6 K cycles slower each (the last block's overlap grew) for 384 B more.
    As even blocks as can be, whole pairs each."""
    channels, out_channels, pixels = x.shape[1], y.shape[1], math.prod(x.shape[2:])
    if x.size + y.size <= layer_bound or column_pixels(channels, out_channels, pixels) == PIXELS:
        return 0
    most = min((layer_bound - max(x.size, y.size)) // channels, pixels)
    most -= most % PIXELS
    if most < 2 * MAX_COLUMN_PIXELS:
        return 0
    blocks = -(-pixels // most)
    block = -(-pixels // blocks)
    return block + block % PIXELS


CACHE_SHARE = 2
"""A pair of weight rows read from slow memory by every pixel pair may take 1/CACHE_SHARE of the
cache in front of it (the rest holds the lines a row's misalignment adds and the
requantization tables' lines read beside it); longer pairs are copied to RAM first."""

def column_form_applies(x: Layout, out_channels: int, kernel: Sequence[int], strides: Sequence[int], padded: bool) -> bool:
    """Whether a Conv (already known ungrouped with constant weights, folded zero point) takes
    the column form: a 1x1 window at unit strides without pads over at least `MIN_CHANNELS`
    input channels and `PIXELS` pixels (a single pixel, a Gemm's, reuses no weight), an even
    number of output channels, X contiguous."""
    return (
        all(k == 1 for k in kernel) and all(s == 1 for s in strides) and not padded
        and math.prod(x.shape[2:]) >= PIXELS and x.shape[1] >= MIN_CHANNELS and out_channels % CHANNELS == 0
        and (x.reshape([x.size]) is not None or is_channels_last(x))
    )


def last_overlapping(kb: KernelBuilder, first: SSAValue, size: int, count: int) -> SSAValue:
    """`first`, or `count - size` for a last block that would run past `count` (it overlaps
    the one before instead: its outputs are stored again with the same values, and no
    remainder code is needed)."""
    return kb.alu("min", first, kb.index(count - size)) if count % size else first


def pointwise_columns(
    kb: KernelBuilder,
    x: Layout,
    y: Layout,
    weight: Callable[[SSAValue, SSAValue], SSAValue],
    epilogue: Callable[[SSAValue, SSAValue], SSAValue],
    name: str,
    weight_cache: int = 0,
    weight_rows: Layout | None = None,
    layer_bound: int = 0,
    over_x: tuple[str, str] | None = None,
) -> None:
    """Y = the Conv of X (N, C, spatial…) by a 1x1 window in the column form (module docstring);
    `weight(m, c)` is W[m, c] as an int32 factor, `epilogue(sum, m)` the value stored for the
    int32 sum of output channel m (its scales and zero points do not vary over the pixels);
    `weight_cache`: the bytes of the cache in front of slow weight memory (0: none), which a
    channels-last X's tiles keep their weight rows within (`_pointwise_channels_last`), copying
    them from `weight_rows` (W as int8 [M, C], when its zero point is 0) where they would not;
    `layer_bound`: the bytes X, Y and the form's own scratch may take at once (`wide_form_applies`);
    `over_x`: the names of X and Y where X dies in this Conv and Y may be written over it (the
    widened form takes that where its copies fit only so)."""
    batch, channels = x.shape[:2]
    out_channels = y.shape[1]
    pixels = math.prod(x.shape[2:])
    if is_channels_last(x) and wide_form_applies(x, y, weight_rows, layer_bound):
        assert weight_rows is not None
        _pointwise_wide(kb, x, y, weight_rows, epilogue, name, layer_bound, weight_cache)
        return
    if over_x is not None and wide_form_applies(x, y, weight_rows, layer_bound, in_place=True):
        # The copies fit within the bound only with Y written over X: a kernel's choice never
        # raises the plan's peak (`zant.analysis.layer_bound`).
        assert weight_rows is not None
        _pointwise_wide(kb, x, y, weight_rows, epilogue, name, layer_bound, weight_cache, over_x)
        return
    if is_channels_last(x):
        _pointwise_channels_last(kb, x, y, weight, epilogue, name, weight_cache, weight_rows)
        return
    over_column = written_over_column(x, y, layer_bound)
    width = max(column_pixels(channels, out_channels, pixels), over_column)
    xf = x.reshape([batch, channels, pixels])
    yf = merge_dims(y, 2, y.rank - 1)
    assert xf is not None and yf is not None
    column = kb.alloc(name, [width, channels], x.element_type)
    tile = ColumnTile(kb, column, yf, channels, weight, epilogue)
    with kb.loop(batch) as n, kb.loop(-(-pixels // width)) as block:
        p = last_overlapping(kb, kb.alu("mul", block, kb.index(width)), width, pixels)
        if width == PIXELS:
            positions = [p, *(kb.alu("add", p, kb.index(j)) for j in range(1, PIXELS))]
            # The block's pixels side by side in X's rows: read together, channel by channel.
            with kb.loop(channels) as c:
                for j, position in enumerate(positions):
                    kb.store(kb.load(xf, [n, c, position]), column, [kb.index(j), c])
            with kb.loop(out_channels, 0, CHANNELS) as m:
                tile.build(n, m, kb.index, positions)
        else:
            if width == over_column and pixels % width == 0:
                # Blocks that never overlap: with a last block clamped back (`min`),
                # `schedule-in-place` clamps each pixel read to the last one instead (its pair
                # clamp), which a word of 4 pixels would read past.
                _copy_column_by_words(kb, xf, column, n, p)
            else:
                with kb.loop(channels) as c, kb.loop(width) as j:
                    kb.store(kb.load(xf, [n, c, kb.alu("add", p, j)]), column, [j, c])
            # Each pair of weight rows is read from W once per column, then from the cache for
            # each other pair of its pixels.
            with kb.loop(out_channels, 0, CHANNELS) as m, kb.loop(-(-width // PIXELS)) as pair:
                j0 = last_overlapping(kb, kb.alu("mul", pair, kb.index(PIXELS)), PIXELS, width)
                js = [j0, *(kb.alu("add", j0, kb.index(j)) for j in range(1, PIXELS))]
                tile.build(n, m, js.__getitem__, [kb.alu("add", p, j) for j in js])


def _copy_column_by_words(kb: KernelBuilder, xf: Layout, column: Layout, n: SSAValue, p: SSAValue) -> None:
    """column[j][c] = X[n, c, p + j] for the column's `width` pixels and C channels, 4 channels
    x 4 pixels at a time: one word of 4 pixels from each of 4 channel planes, then byte i of
    word k to column[j + i][c + k]. uop has no word store of int8 elements, and the 4 x 4 byte
    transpose that would make one (masks, shifts and ORs) LLVM folds back into these shifts
    anyway: 4 word loads, 12 shifts and 16 byte stores per 16 bytes, against 16 byte loads and
    stores and 16 loop steps (VWW's 16- and 32-channel layers under 22,118 B on the L4R5:
    539,754 -> 496,843 and 934,064 -> 912,121 cycles). Channels and pixels past the last whole
    4 take the byte copy. Taken by the column written over its input (`written_over_column`)."""
    width, channels = column.shape
    channels4, width4 = channels - channels % 4, width - width % 4
    with kb.loop(channels4, 0, 4) as c, kb.loop(width4, 0, 4) as j:
        at = kb.alu("add", p, j)
        for k in range(4):
            channel = kb.alu("add", c, kb.index(k))
            word = kb.insert(arm_dsp.LoadWordOp(kb.insert(uop.GepOp(kb.view(xf), [n, channel, at])).result)).result
            for i in range(4):
                byte = kb.alu("shr", word, kb.const(8 * i, I32)) if i else word
                kb.store(kb.cast(byte, column.element_type), column, [kb.alu("add", j, kb.index(i)), channel])
    if width4 < width:
        with kb.loop(channels4) as c, kb.loop(width, width4) as j:
            kb.store(kb.load(xf, [n, c, kb.alu("add", p, j)]), column, [j, c])
    if channels4 < channels:
        with kb.loop(channels, channels4) as c, kb.loop(width) as j:
            kb.store(kb.load(xf, [n, c, kb.alu("add", p, j)]), column, [j, c])


def _pointwise_channels_last(
    kb: KernelBuilder,
    x: Layout,
    y: Layout,
    weight: Callable[[SSAValue, SSAValue], SSAValue],
    epilogue: Callable[[SSAValue, SSAValue], SSAValue],
    name: str,
    weight_cache: int,
    weight_rows: Layout | None,
) -> None:
    """`pointwise_columns` over a channels-last X (`assign-layouts`): each pixel's channels are
    already one contiguous run, so the tiles read X itself, no column is copied (and none is
    allocated), and the pairs of output channels are the outer loop: one pair's two weight
    rows (2·C bytes) are read from W, then from a flash accelerator's cache, by every pixel
    pair of the image (in NCHW a column of 2 pixels read all of W again).

        for n, for m = 0, 2 … < M: for p = 0, 2 … < H·W (the last pair min(p, H·W - 2)):
          the 2 x 2 tile of rows m, m + 1 over X[n, :, p], X[n, :, p + 1]

    Where a pair of weight rows (2·C bytes) is more than the share `CACHE_SHARE` of the cache
    in front of slow weight memory (`weight_cache`, the board's) and the weights are int8 as
    stored (`weight_rows`), each pair is first copied into a small scratch buffer `[2][C]`, which
    every pixel pair then reads from RAM:

        for m …: rows[i][c] = W[m + i, c]; for each pixel pair: the tile over rows

    (VWW's 128-channel layers on the L4R5: a pair's 256 bytes, with the requantization tables'
    lines, overflowed its 8-line data cache, and every pixel pair read them from flash again:
    202,146 stall cycles per layer.) The copy costs 2·C byte loads and stores per pair of
    output channels; the buffer adds 2·C bytes of scratch.
    """
    batch, channels = x.shape[:2]
    out_channels = y.shape[1]
    pixels = math.prod(x.shape[2:])
    xf = merge_dims(x, 2, x.rank - 1)
    yf = merge_dims(y, 2, y.rank - 1)
    assert xf is not None and yf is not None
    rows = xf.permute([0, 2, 1])  # (N, H·W, C), channels contiguous
    tile = ColumnTile(kb, rows, yf, channels, weight, epilogue, batched=True)
    pairs = -(-pixels // PIXELS)
    staged = weight_rows is not None and CHANNELS * channels > weight_cache // CACHE_SHARE > 0
    if staged:
        assert weight_rows is not None
        local = kb.alloc(f"{name}_weights", [CHANNELS, channels], weight_rows.element_type)
        tile = ColumnTile(kb, rows, yf, channels, lambda i, c: kb.cast(kb.load(local, [i, c]), I32), epilogue, batched=True, local_rows=True)
    with kb.loop(batch) as n, kb.loop(out_channels, 0, CHANNELS) as m:
        if staged:
            with kb.loop(CHANNELS) as i, kb.loop(channels) as c:
                kb.store(kb.load(weight_rows, [kb.alu("add", m, i), c]), local, [i, c])
        with kb.loop(pairs) as pair:
            p = last_overlapping(kb, kb.alu("mul", pair, kb.index(PIXELS)), PIXELS, pixels)
            positions = [p, *(kb.alu("add", p, kb.index(j)) for j in range(1, PIXELS))]
            tile.build(n, m, positions.__getitem__, positions)


def wide_scratch_bytes(x: Layout, block: int | None = None) -> int:
    """The scratch `_pointwise_wide` allocates beside X and Y: `block` pixels of X widened (2
    bytes per element; None: all of them) and one block of `WIDE_ROWS` weight rows widened."""
    channels, pixels = x.shape[1], math.prod(x.shape[2:])
    return 2 * (pixels if block is None else block) * channels + 2 * WIDE_ROWS * channels


def wide_form_applies(x: Layout, y: Layout, weight_rows: Layout | None, layer_bound: int, in_place: bool = False) -> bool:
    """Whether a channels-last pointwise Conv takes the widened form (`_pointwise_wide`): int8 X
    (it widens bytes), int8 weight rows as stored (zero point 0), a multiple of 4 input channels (whole word steps), at
    least `WIDE_MIN_CHANNELS` of them, a multiple of `WIDE_ROWS` output channels, at least
    `WIDE_MIN_PIXELS` pixels, and a block of at least as many pixels whose widened copy fits
    within `layer_bound` beside X and Y (`wide_block`; `in_place`: beside X with Y written over
    it, `wide_in_place_applies`)."""
    return (
        x.element_type == IntegerType(8) and weight_rows is not None and weight_rows.element_type == IntegerType(8)
        and _wide_shapes(x.shape, y.shape[1]) and (not in_place or wide_in_place_applies(x, y))
        and wide_block(x, y, layer_bound, in_place) >= WIDE_MIN_PIXELS
    )


def _wide_shapes(x_shape: Sequence[int], out_channels: int) -> bool:
    channels, pixels = x_shape[1], math.prod(x_shape[2:])
    return (
        channels % 4 == 0 and channels >= WIDE_MIN_CHANNELS and out_channels % WIDE_ROWS == 0
        and pixels >= WIDE_MIN_PIXELS
        # Each step a word of two channels: X's pixels and W's rows channels / 2 words apart.
        and arm_dsp.smlad_block_in_reach(channels // 2, channels // 2, channels // 2)
    )


def wide_in_place_only(x_shape: Sequence[int], out_channels: int, layer_bound: int) -> bool:
    """Whether a pointwise Conv over an int8 X of `x_shape` with int8 weights takes the widened
    form within `layer_bound` only with Y (`out_channels`, no more than X's) written over X, both
    in one layout (`assign-layouts` keeps such an X NCHW where Y is)."""
    x = Layout.contiguous(None, x_shape)  # type: ignore[arg-type]
    y = Layout.contiguous(None, [x_shape[0], out_channels, *x_shape[2:]])  # type: ignore[arg-type]
    return (
        _wide_shapes(x_shape, out_channels) and out_channels <= x_shape[1]
        and wide_block(x, y, layer_bound) < WIDE_MIN_PIXELS <= wide_block(x, y, layer_bound, in_place=True)
    )


def wide_in_place_applies(x: Layout, y: Layout) -> bool:
    """Whether `_pointwise_wide` may write Y over X (the caller knows X dies in the Conv): Y no
    wider than X per pixel and of its element type, both channels-last over the same pixels, so
    output pixel p (bytes M·p …) reaches no input pixel after p, and a block's outputs, written
    after its copy, overwrite only pixels already copied (`staged_in_place_legal` checks it)."""
    nchw = [layout.reshape([layout.size]) is not None for layout in (x, y)]
    return (
        y.element_type == x.element_type and y.shape[1] <= x.shape[1] and y.shape[2:] == x.shape[2:]
        and (is_channels_last(x) and is_channels_last(y) or all(nchw))
    )


def over_input(op: Operation, x: Layout, y: Layout) -> tuple[str, str] | None:
    """(X's, Y's tensor names) where `op`'s output Y may be written over its input X as far as
    their lifetimes go: X and Y whole scratch buffers (`uop.define_local`), and `op` the last
    reader of X (every tensor on X's bytes, through views, read by no op still to be lowered
    but `op`, nor returned), Y not returned (a graph output is no scratch to pair); None
    otherwise."""
    buffers = [layout.buffer.owner for layout in (x, y)]
    if not all(isinstance(b, uop.DefineLocalOp) and b.result.type.size.data == layout.size for b, layout in zip(buffers, (x, y))):
        return None
    if any(isinstance(use.operation, func.ReturnOp) for result in op.results for use in result.uses):
        return None
    pending = [x.buffer]
    while pending:
        for use in pending.pop().uses:
            user = use.operation
            if isinstance(user, uop.ViewOp):
                pending.append(user.result)
            elif isinstance(user, UnrealizedConversionCastOp):
                if any(u.operation is not op for result in user.results for u in result.uses):
                    return None
    return buffers[0].tensor_name.data, buffers[1].tensor_name.data  # type: ignore[union-attr]


def wide_block(x: Layout, y: Layout, layer_bound: int, in_place: bool = False) -> int:
    """How many pixels of X `_pointwise_wide` widens at once within `layer_bound` (the bytes X, Y
    and its copies may take together, `onnx-to-uop{layer-bound}`; `in_place`: Y over X, the
    larger of them and the copies): the whole image where it fits (VWW's 64- to 256-channel
    layers, far below its 48x48 stage's peak), else as few blocks as fit, as even as can be, an
    even number of pixels each (whole pairs; in place the last block the rest, never one pixel
    alone); 0 if not one pair fits. KWS's 64 -> 64 layers (125 pixels, X and Y 8,000 B each, the
    graph's layer bound 16,000 B): 3 blocks of 42 pixels within `onnx-to-uop{kernel-scratch=6144}`
    (5,376 B, with a block of weight rows 5,888 B beside X and Y); in place (were Y channels-last)
    3 blocks of 42, 42 and 41 within the layer bound itself."""
    channels, pixels = x.shape[1], math.prod(x.shape[2:])
    taken = max(x.size, y.size) if in_place else x.size + y.size
    room = layer_bound - taken - wide_scratch_bytes(x, 0)
    most = min(room // (2 * channels), pixels)
    if most >= pixels:
        return pixels
    most -= most % PIXELS
    if most < PIXELS:
        return 0
    blocks = -(-pixels // most)
    block = -(-pixels // blocks)
    block += block % PIXELS
    while in_place and block >= PIXELS and pixels % block == 1:  # no block of 1 pixel after the others
        block -= PIXELS
    return block if block >= PIXELS else 0


def _pointwise_wide(
    kb: KernelBuilder,
    x: Layout,
    y: Layout,
    weight_rows: Layout,
    epilogue: Callable[[SSAValue, SSAValue], SSAValue],
    name: str,
    layer_bound: int,
    weight_cache: int = 0,
    in_place: tuple[str, str] | None = None,
) -> None:
    """`pointwise_columns` over a channels-last X with both operands widened to int16 first, so
    the reduction is SMLADs of words as loaded (no `SXTB16` in it) and the registers the widened
    halves took hold a block of `WIDE_ROWS` output channels x 2 pixels, over blocks of B pixels
    of X (`wide_block`: the whole image where it fits within `layer_bound`):

        for n, for b = 0, B … < H·W (the last block min(b, H·W - B); in place: the rest):
          xw[j] = widened(X[n, :, b + j])                        (j < B)
          for m = 0, 4 … < M: ww[i] = widened(W[m + i, :])       (the block's 4 rows)
            for q = 0, 2 … < B (an odd block's last pair B - 2, B - 1):
              acc[i][j] = Σ_s SMLAD(xw[q + j][s], ww[i][s]); Y[n, m + i, b + q + j] = epilogue(…)

    In place the blocks never overlap (the last one holds the rest of the pixels; moved back over
    the one before, it would read pixels of X already written over): each pixel of X is read
    once, into its block's copy, before any output over it is written. So Y may take X's bytes (`in_place`: the names of X and Y, the
    nest marked `in_place`, when the caller knows X dies here and `wide_in_place_applies`): the
    layer then needs max(X, Y) and the copies instead of X + Y and the copies, which is how the
    form fits within a graph's layer bound where X and Y are its peak (`plan-arenas` gives Y X's
    slot, `verify-arena-plan` checks the pair by `staged_in_place_legal`). Only a channels-last
    Y can be written so: an NCHW Y's first block reaches every channel's plane of X (KWS's
    64-channel layers, whose Y the depthwise Convs read in NCHW, stay at the 2 x 2 tiles).

    widened(v)[2q], widened(v)[2q + 1] are the `SXTB16` halves of v's word q, elements (4q,
    4q + 2) and (4q + 1, 4q + 3): one word load, two `SXTB16` and two word stores per 4
    elements, the same order in both operands, so the SMLADs pair the same products. Per 2 input
    channels of a block: 2 + 4 word loads and 8 SMLAD for 16 products, against (per 4 channels
    of the 2 x 2 tile) 4 loads, 8 SXTB16 and 8 SMLAD for 16 (the block's reduction is one
    `arm_dsp.smlad_block`, a loop in assembly). X's copy is made once
    per block (shared by the M output channels), the weights' once per block of pixels (shared
    by its pairs: about 1.25 instructions per weight and block); they add 2·B·C + 8·C bytes of
    scratch (`wide_scratch_bytes`). Exact: the same products, each sum wrapping modulo 2^32.

    The blocks' sums start at 0 (no addends: the first step an SMUAD, its pass peeled ahead of
    the loop, instead of 8 registers set to 0 a block: bench KWS int8 on the M4 -24 k
    instructions), except on a board whose code runs from flash through a small cache
    (`weight_cache`, nonzero on such a board: the L4R5's instruction cache is 1 KB), where the
    peeled pass took the pair loop past it (MLPerf Tiny VWW int8 on the L4R5: 13.08 M -> 15.33
    M cycles)."""
    batch, channels = x.shape[:2]
    out_channels = y.shape[1]
    pixels = math.prod(x.shape[2:])
    block_pixels = wide_block(x, y, layer_bound, in_place is not None)
    stored = _stored_weights(weight_rows)
    quads = quad_block(x, y, layer_bound, weight_cache) if in_place is not None and stored is not None else 0
    block_pixels = quads or block_pixels
    words = channels // 2
    xf = merge_dims(x, 2, x.rank - 1)
    yf = merge_dims(y, 2, y.rank - 1)
    assert xf is not None and yf is not None and block_pixels >= PIXELS
    rows = xf.permute([0, 2, 1])  # (N, H·W, C), channels contiguous
    wide_x = kb.alloc(f"{name}_wide", [block_pixels, words], I32)
    if quads:
        # The weights widened at compile time as `widen` widens X (word q's SXTB16 halves:
        # channels 4q, 4q + 2 and 4q + 1, 4q + 3), rows of C / 2 words: no widened copy in scratch.
        # Beside W itself among the constants (which it replaces: W is read no more), so the
        # other constants keep their order.
        assert stored is not None
        wide_w = constant_table(weight_rows.buffer.owner, f"{name}_wide_weights", _widened(stored), I32)
        if weight_cache:  # each pair of rows on whole lines of the cache (a pair is 8 lines at 64 channels)
            wide_w.buffer.owner.attributes[CONSTANT_ALIGNMENT] = IntegerAttr(CACHE_LINE_BYTES, 64)
    else:
        wide_w = kb.alloc(f"{name}_wide_weights", [WIDE_ROWS, words], I32)

    # Four words per iteration where they divide the row (else two, else one): their loads back
    # to back (the core pipelines a load after a load) and a quarter of the loop's overhead
    # (VWW on the L4R5: 13.41 M cycles with two words, 13.37 M with four; one word an iteration
    # took 12.4 cycles per word of its 256-channel layer's weights).
    unroll = 4 if channels % (4 * 4) == 0 else 2 if channels % (2 * 4) == 0 else 1

    def widen(
        source: Layout, at: list[SSAValue], target: Layout, row: list[SSAValue],
        words: int = channels // 4, step: int = unroll, start: SSAValue | None = None,
    ) -> None:
        """target[*row, 2q], [*row, 2q + 1] = the SXTB16 halves of the word at source[*at,
        start + 4q] (q < `words`, `step` words a pass; `start` None: 0)."""

        def offset(q: SSAValue) -> SSAValue:
            return kb.alu("mul", q, kb.index(4)) if start is None else kb.alu("add", start, kb.alu("mul", q, kb.index(4)))

        with kb.loop(words, 0, step) as first:
            qs = [first, *(kb.alu("add", first, kb.index(u)) for u in range(1, step))]
            ptrs = [kb.insert(uop.GepOp(kb.view(source), [*at, offset(q)])).result for q in qs]
            loaded = [kb.insert(arm_dsp.LoadWordOp(ptr)).results[0] for ptr in ptrs]
            for q, word in zip(qs, loaded):
                even = kb.alu("mul", q, kb.index(2))
                kb.store(kb.insert(arm_dsp.Sxtb16Op(word)).results[0], target, [*row, even])
                kb.store(kb.insert(arm_dsp.Sxtb16Op(word, rotate=8)).results[0], target, [*row, kb.alu("add", even, kb.index(1))])

    # Written over X, a block of rows is widened as one run of their words (the rows contiguous
    # in W and in wide_w), FLAT_WIDENING_UNROLL a pass.
    flat_widening = in_place is not None and (WIDE_ROWS * channels // 4) % FLAT_WIDENING_UNROLL == 0
    flat_w, flat_wide_w = weight_rows.reshape([weight_rows.size]), wide_w.reshape([wide_w.size])
    assert flat_w is not None and flat_wide_w is not None

    def gather(at: list[SSAValue], row: SSAValue) -> None:
        """wide_x[row] as `widen` makes it, from an NCHW X: each pixel's channels a byte apart
        by H·W, two of them packed into a word of int16 halves."""
        with kb.loop(channels // 4) as q:
            c = kb.alu("mul", q, kb.index(4))
            xs = [kb.cast(kb.load(rows, [*at, kb.alu("add", c, kb.index(k))]), I32) for k in range(4)]
            low = kb.const(0xFFFF, I32)
            sixteen = kb.const(16, I32)
            even = kb.alu("mul", q, kb.index(2))
            for k, column in ((0, even), (1, kb.alu("add", even, kb.index(1)))):
                word = kb.alu("or", kb.alu("and", xs[k], low), kb.alu("shl", xs[k + 2], sixteen))
                kb.store(word, wide_x, [row, column])

    def block_of(n: SSAValue, first: SSAValue, count: int) -> None:
        """Pixels first … first + count - 1: widened, then their outputs, 4 rows by 4."""
        with kb.loop(count) as j:
            if is_channels_last(x):
                widen(rows, [n, kb.alu("add", first, j)], wide_x, [j])
            else:
                gather([n, kb.alu("add", first, j)], j)
        if quads:
            _quads_of(kb, wide_x, wide_w, yf, epilogue, n, first, count, out_channels, words, weight_cache)
            return
        with kb.loop(out_channels, 0, WIDE_ROWS) as m:
            block = [m, *(kb.alu("add", m, kb.index(i)) for i in range(1, WIDE_ROWS))]
            if flat_widening:
                widen(flat_w, [], flat_wide_w, [], WIDE_ROWS * channels // 4, FLAT_WIDENING_UNROLL, kb.alu("mul", m, kb.index(channels)))
            else:
                with kb.loop(WIDE_ROWS) as i:
                    widen(weight_rows, [kb.alu("add", m, i)], wide_w, [i])

            def pair(q: SSAValue) -> None:
                p = kb.alu("add", first, q)
                positions = [p, *(kb.alu("add", p, kb.index(j)) for j in range(1, PIXELS))]
                pa = kb.insert(uop.GepOp(kb.view(wide_x), [q, kb.index(0)])).result
                pb = kb.insert(uop.GepOp(kb.view(wide_w), [kb.index(0), kb.index(0)])).result
                addends = [kb.const(0, I32)] * (WIDE_ROWS * PIXELS) if weight_cache else []
                sums = kb.insert(arm_dsp.SmladBlockOp(pa, pb, addends, words, words, words)).results
                for total, (row, position) in zip(sums, itertools.product(block, positions)):
                    kb.store(epilogue(total, row), yf, [n, row, position])

            if count == pixels:  # the whole image: its last pair moved back over the one before
                with kb.loop(-(-count // PIXELS)) as q:
                    pair(last_overlapping(kb, kb.alu("mul", q, kb.index(PIXELS)), PIXELS, count))
                return
            # A block's pairs in a row (`arm-dsp-block-rows` makes the loop one asm row); an
            # odd block's last pixel in a pair of its own, over the pixel before it (read from
            # the copy, so computed again from X as it was).
            with kb.loop(count // PIXELS) as q:
                pair(kb.alu("mul", q, kb.index(PIXELS)))
            if count % PIXELS:
                pair(kb.index(count - PIXELS))

    with kb.loop(batch) as n:
        if in_place is None:
            # The last block moved back over the one before: its pixels there computed again.
            with kb.loop(-(-pixels // block_pixels)) as b:
                first = kb.alu("mul", b, kb.index(block_pixels))
                block_of(n, last_overlapping(kb, first, block_pixels, pixels), block_pixels)
        else:
            # Y over X: blocks that never overlap (X's pixels each copied once, before any
            # output over them is written), the last one the rest of the pixels.
            full, rest = divmod(pixels, block_pixels)
            with kb.loop(full) as b:
                block_of(n, kb.alu("mul", b, kb.index(block_pixels)), block_pixels)
            if rest:
                block_of(n, kb.index(full * block_pixels), rest)
    if in_place is not None:
        nest = n.owner.parent_op()  # type: ignore[union-attr]
        nest.attributes[IN_PLACE_ATTRIBUTE] = in_place_mark(*in_place)


def _stored_weights(weight_rows: Layout) -> np.ndarray | None:
    """W as int8 [M, C] where `weight_rows` is a whole constant buffer (its values known)."""
    owner = weight_rows.buffer.owner
    if not isinstance(owner, uop.DefineGlobalOp) or owner.value is None or not weight_rows.covers_buffer():
        return None
    return attr_to_array(owner.value).reshape(weight_rows.shape).astype(np.int8)


def _widened(weights: np.ndarray) -> np.ndarray:
    """[M, C / 2] int32 words: row m's word 2q holds channels 4q (low half) and 4q + 2, word
    2q + 1 channels 4q + 1 and 4q + 3, each an int16 (what `SXTB16` and its rotation by 8 make
    of the int8 word of channels 4q … 4q + 3)."""
    w = weights.reshape(weights.shape[0], -1, 4)
    low, high = np.stack([w[:, :, 0], w[:, :, 1]], axis=2), np.stack([w[:, :, 2], w[:, :, 3]], axis=2)
    return arm_dsp.halves_words(low, high).reshape(weights.shape[0], -1)


def _quads_of(
    kb: KernelBuilder, wide_x: Layout, wide_w: Layout, yf: Layout, epilogue: Callable[[SSAValue, SSAValue], SSAValue],
    n: SSAValue, first: SSAValue, count: int, out_channels: int, words: int, weight_cache: int,
) -> None:
    """The outputs of a block of `count` pixels (widened in `wide_x`, the first at pixel `first`)
    in the pair form: per pair of output channels, one `arm_dsp.smlad_block` per quad of pixels
    with the roles of its operands exchanged (pa the pair's two widened rows in flash, pb the
    quad's 4 pixels), `arm-dsp-block-rows` making each loop one `arm_dsp.smlad_quad_row`; a
    block's last pixels past its whole quads in a quad of their own over the pixels before them
    (read from the copy, so computed again from X as it was)."""
    quad = arm_dsp.SMLAD_QUAD_PIXELS

    def block(m: SSAValue, at: SSAValue) -> None:
        channels = [m, kb.alu("add", m, kb.index(1))]
        positions = [at, *(kb.alu("add", at, kb.index(i)) for i in range(1, quad))]
        pa = kb.insert(uop.GepOp(kb.view(wide_w), [m, kb.index(0)])).result
        pb = kb.insert(uop.GepOp(kb.view(wide_x), [at, kb.index(0)])).result
        addends = [kb.const(0, I32)] * (2 * quad) if weight_cache else []
        sums = kb.insert(arm_dsp.SmladBlockOp(pa, pb, addends, words, words, words)).results
        for total, (position, channel) in zip(sums, itertools.product(positions, channels)):
            kb.store(epilogue(total, channel), yf, [n, channel, kb.alu("add", first, position)])

    with kb.loop(out_channels, 0, CHANNELS) as m:
        with kb.loop(count // quad) as q:
            block(m, kb.alu("mul", q, kb.index(quad)))
        if count % quad:
            with kb.loop(1) as q:
                block(m, kb.alu("add", q, kb.index(count - quad)))


@dataclass(frozen=True)
class ColumnTile:
    """One register tile: `CHANNELS` output channels from m x `PIXELS` pixels of the column."""

    kb: KernelBuilder
    column: Layout
    yf: Layout
    channels: int
    weight: Callable[[SSAValue, SSAValue], SSAValue]
    epilogue: Callable[[SSAValue, SSAValue], SSAValue]
    batched: bool = False
    """The column is X itself, (N, pixels, C): read at [n, pixel, c]."""
    local_rows: bool = False
    """`weight` takes the tile's row (0, 1 …: a staged copy of its rows), not the channel."""

    def build(self, n: SSAValue, m: SSAValue, pixel: Callable[[int], SSAValue], positions: list[SSAValue]) -> None:
        """The tile of output channels m… over the column's pixels `pixel(0)`, `pixel(1)`…
        (called where each is read), stored at Y's `positions`."""
        kb = self.kb
        rows = [m, *(kb.alu("add", m, kb.index(i)) for i in range(1, CHANNELS))]
        accs = [kb.define_acc(0, I32) for _ in itertools.product(rows, positions)]
        with kb.loop(self.channels) as c:
            at = [n] if self.batched else []
            xs = [kb.cast(kb.load(self.column, [*at, pixel(j), c]), I32) for j in range(PIXELS)]
            ws = [self.weight(kb.index(i) if self.local_rows else row, c) for i, row in enumerate(rows)]
            for acc, (wv, xv) in zip(accs, itertools.product(ws, xs)):
                kb.mulacc(acc, xv, wv)
        for acc, (row, position) in zip(accs, itertools.product(rows, positions)):
            kb.store(self.epilogue(kb.acc_get(acc), row), self.yf, [n, row, position])

__all__ = ["CACHED_WEIGHT_BYTES", "CACHE_SHARE", "CHANNELS", "FLAT_WIDENING_UNROLL", "MAX_COLUMN_PIXELS", "MIN_CHANNELS", "PIXELS", "QUADS_BELOW", "WIDE_MAX_CHANNELS", "WIDE_MIN_CHANNELS", "WIDE_MIN_PIXELS", "WIDE_ROWS", "column_form_applies", "column_pixels", "over_input", "pointwise_columns", "quad_block", "wide_block", "wide_form_applies", "wide_in_place_applies", "wide_in_place_only", "wide_scratch_bytes"]
