"""Conv and ConvTranspose: one accumulator per output, the output channels in blocks
(`convolve`), and on targets with vector registers the forms of `conv_tiling.VectorConv`, and
for the 3x3 channel-lane Convs `conv_winograd.takes_winograd` chooses, Winograd's F(2x2, 3x3)
(`_lower_winograd`).

The window arithmetic is `windows.py`'s: Conv splits its output box into regions
(`window_regions`), the interior's loads unchecked, the border's checked.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np
from xdsl.dialects.builtin import f32
from xdsl.ir import Attribute, Operation, SSAValue
from zant.dialects import uop
from zant.dialects.onnx import get_attr, input_value
from zant.ir.resources import attr_to_array
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.conv_tiling import (
    MAX_BLOCKS, MAX_WHOLE_BLOCKS, TilePiece, VectorConv, best_tile, register_tile, tile_pieces,
)
from zant.passes.onnx_to_uop.conv_winograd import (
    band_pieces,
    band_rows,
    band_views,
    input_transform,
    output_transform,
    takes_winograd,
    tile_buffer,
    tile_grid,
    tile_windows,
    winograd_weights,
)
from zant.passes.onnx_to_uop.kernel import (
    CHANNELS_LAST,
    KernelBuilder,
    Layout,
    accumulator_type,
    channels_last_order,
    is_channels_last,
    layout_of,
    result_layout,
    tensor_element_type,
    tensor_shape,
)
from zant.passes.onnx_to_uop.windows import (
    Region,
    Window,
    load_window,
    pixel_blocked,
    row_blocked,
    sliding_windows,
    tap_positions,
    transposed_positions,
    transposed_windows,
    window_regions,
)

InputTerm = Callable[[Sequence[Window], SSAValue, SSAValue, list[SSAValue], list[SSAValue]], SSAValue]
"""(windows, n, input channel, out…, taps…) → the input factor of one product; `windows` are
the region's, deciding which bounds its loads check."""

WeightTerm = Callable[[SSAValue, SSAValue | None, SSAValue, SSAValue, list[SSAValue]], SSAValue]
"""(m, group, input channel, channel in group, taps…) → the weight factor of one product."""

Epilogue = Callable[[SSAValue, SSAValue, list[SSAValue]], SSAValue]
"""(the accumulated sum, output channel, output position…) → the value stored in the output."""

CHANNEL_BLOCK = 8
"""How many output channels one pass over the window computes (or half as many, when the
group's channels do not split into such blocks): one input load feeds that many independent
accumulators, which stay in registers and hide the latency of the additions (one accumulator
is a serial chain). `onnx-to-uop{conv-channel-block=B}` sets it per target: 8 suits x86-64's
and AArch64's 16 or more registers; a Cortex-M's 13 hold 4 (8 spill)."""

PIXEL_BLOCK = 4
"""For grouped convs whose channels do not block (depthwise), how many neighbouring interior
outputs of the last spatial dimension one pass over the window computes: one weight load
feeds that many accumulators."""


def _channel_block(out_per_group: int, largest: int) -> int:
    return next((b for b in (largest, largest // 2) if b > 1 and out_per_group % b == 0), 1)


def convolve(
    op: Operation,
    kb: KernelBuilder,
    group_channels: int,
    out_per_group: int,
    kernel: Sequence[int],
    regions: Sequence[Region],
    input_term: InputTerm,
    weight_term: WeightTerm,
    bias_input: int = 2,
    pixel_block: int = PIXEL_BLOCK,
    channel_tile: int | None = None,
    acc_type: Attribute | None = None,
    epilogue: Epilogue | None = None,
    channel_block: int = CHANNEL_BLOCK,
    pixel_tile: int = 1,
    channels_innermost: bool = False,
    regions_outermost: bool = False,
    row_block: int = 1,
) -> Layout:
    """Y[n, m, o…] = B[m] + Σ_{c < group_channels, k…} x·w with x from `input_term`, w from
    `weight_term` and B the optional input `bias_input`; output channel m belongs to group
    m / out_per_group, whose input channels start at group·group_channels. With `epilogue`
    (the integer convs: an int32 `acc_type` sum requantized to int8), Y[n, m, o…] =
    epilogue(Σ, m, o…) instead of the cast and the bias.

    The spatial outputs are looped over region by region, each with its own copy of the
    reduction; the output channels in blocks of `channel_block` (or half), one accumulator each.
    With `pixel_tile` (ungrouped convs), the unchecked regions also in blocks of that many
    outputs of the last dimension: a register tile of channels × pixels accumulators, each
    weight and input loaded once per step (depthwise convs take `pixel_block` instead).
    With `row_block`, the unchecked regions also in blocks of that many outputs of the
    dimension before the last: independent sums whose windows overlap (rows of taps shared).
    """
    bias_value = input_value(op, bias_input) if epilogue is None else None
    bias = layout_of(bias_value) if bias_value is not None else None
    out_shape = tensor_shape(op.results[0])
    element_type = tensor_element_type(op.results[0])
    acc_type = acc_type or accumulator_type(element_type)
    y = result_layout(kb, op, result_name(op), out_shape, element_type)
    grouped = out_shape[1] > out_per_group
    block = _channel_block(out_per_group, channel_block)
    depthwise = grouped and block == 1
    pixels = pixel_block if depthwise else pixel_tile  # depthwise: one weight, many pixels
    if pixels > 1:  # the interior's pixels in blocks (borders are few)
        regions = [
            part
            for region in regions
            for part in (
                pixel_blocked(region, _pixel_block(region, pixels) if depthwise else pixels)
                if region.unchecked else [region]
            )
        ]
    if row_block > 1:
        regions = [part for region in regions for part in (row_blocked(region, row_block) if region.unchecked else [region])]
    # Output channels in blocks (a block never straddles two groups, so its first channel's
    # group is everyone's); with `channel_tile` (never grouped), tiles of that many, then one
    # of the rest.
    def region_nest(n: SSAValue, m: SSAValue, block_channels: list[SSAValue], region: Region) -> None:
        with _region_loops(kb, region) as out_ivs:
            g = first_channel = None
            if grouped:
                g = kb.alu("div", m, kb.index(out_per_group))
                first_channel = kb.alu("mul", g, kb.index(group_channels))
            pixels = _block_pixels(kb, region, out_ivs)
            lanes = list(itertools.product(block_channels, pixels))
            accs = [kb.define_acc(0, acc_type) for _ in lanes]
            with _reduction_nest(kb, group_channels, kernel, channels_innermost) as (c, taps):
                channel = c if first_channel is None else kb.alu("add", first_channel, c)
                xs = [input_term(region.windows, n, channel, pixel, taps) for pixel in pixels]
                ws = [weight_term(mj, g, channel, c, taps) for mj in block_channels]
                for acc, (wv, xv) in zip(accs, itertools.product(ws, xs)):  # as `lanes`
                    kb.mulacc(acc, xv, wv)
            for acc, (mj, pixel) in zip(accs, lanes):
                if epilogue is not None:
                    kb.store(epilogue(kb.acc_get(acc), mj, pixel), y, [n, mj, *pixel])
                    continue
                value = kb.cast(kb.acc_get(acc), element_type)
                if bias is not None:
                    value = kb.alu("add", value, kb.load(bias, [mj]))
                kb.store(value, y, [n, mj, *pixel])

    pieces = tile_pieces([out_shape[1]], [channel_tile or block])
    with kb.loop(out_shape[0]) as n:
        # `regions_outermost`: each region's loops over every channel block before the next
        # region's, so the code of one region runs hot (a depthwise Conv's regions are many
        # small nests: in turn per channel, together they outgrow a small instruction cache).
        for region_group in ([[r] for r in regions] if regions_outermost else [regions]):
            for piece in pieces:
                ((first, last),), (block,) = piece.bounds, piece.tile
                with kb.loop(last, first, block) as m:
                    block_channels = _offsets(kb, m, block)
                    for region in region_group:
                        region_nest(n, m, block_channels, region)
    return y



def _constant_tensor(layout: Layout) -> np.ndarray | None:
    """The values behind `layout` when it is a whole constant buffer, else None."""
    owner = layout.buffer.owner
    if not (isinstance(owner, uop.DefineGlobalOp) and owner.value is not None and layout.covers_buffer()):
        return None
    if not layout.is_contiguous():
        return None
    return attr_to_array(owner.value).reshape(layout.shape)


def _packed_weights(
    kb: KernelBuilder, weights: np.ndarray, lanes: int, name: str, channels_innermost: bool = False
) -> Layout:
    """W[m, c, k…] as a new constant W'[m / lanes, c, k…, m % lanes], or with the channels
    innermost W'[m / lanes, k…, c, m % lanes] (read in that order: one stream), viewed as
    [m / lanes, c, k…, m % lanes] either way."""
    blocks = weights.reshape(weights.shape[0] // lanes, lanes, *weights.shape[1:])
    packed = np.moveaxis(blocks, 1, -1)
    if channels_innermost:
        packed = np.moveaxis(packed, 1, -2)
    layout = kb.constant(name, np.ascontiguousarray(packed), tensor_element_type(kb.op.operands[1]))
    if channels_innermost:
        rank = layout.rank
        layout = layout.permute([0, rank - 2, *range(1, rank - 2), rank - 1])
    return layout


def padded_input(
    kb: KernelBuilder, x: Layout, windows: Sequence[Window], name: str, fill: int = 0,
    channels_last: bool = False,
) -> tuple[Layout, list[Window]]:
    """X copied into a buffer bordered with `fill` (the pads made real; an int8 Conv's input
    zero point), and the windows over it, which need no checks; X itself and unpadded windows
    when there are no pads."""
    if not channels_last and not any(w.pad_begin or w.pad_end for w in windows):
        return x, list(windows)
    sizes = [w.in_size + w.pad_begin + w.pad_end for w in windows]
    if channels_last:
        rank = 2 + len(sizes)
        padded = kb.alloc(name, [x.shape[0], *sizes, x.shape[1]], x.element_type)
        padded = padded.permute([0, rank - 1, *range(1, rank - 1)])
    else:
        padded = kb.alloc(name, [*x.shape[:2], *sizes], x.element_type)
    # X into the interior, an element-wise copy at the identity index of the interior view (so
    # fuse-loops can move it into X's producer, whose stores then land there directly); then
    # zeros in the border slabs, which the copy does not touch. No per-element checks.
    offset = sum(w.pad_begin * stride for w, stride in zip(windows, padded.strides[2:]))
    interior = Layout(padded.buffer, x.shape, padded.strides, offset)
    # A channels-last X (`assign-host-layouts`) into a channels-last copy is walked channels
    # innermost: both sides are then read and written front to back.
    # innermost: both sides are then read and written front to back, through their memory-order
    # views at the identity index (which fuse-loops matches with X's producer's stores).
    walk = channels_last_order(x.rank) if channels_last and is_channels_last(x) else list(range(x.rank))
    source, target = x.permute(walk), interior.permute(walk)
    with kb.loop_nest(source.shape) as indices:
        kb.store(kb.load(source, indices), target, indices)
    zero = kb.const(fill, x.element_type)
    # The border slabs are filled in memory order (channels innermost in a channels-last copy).
    order = [0, *range(2, 2 + len(sizes)), 1] if channels_last else list(range(2 + len(sizes)))
    for d, w in enumerate(windows):
        for start, end in ((0, w.pad_begin), (w.pad_begin + w.in_size, sizes[d])):
            if start < end:
                slab = padded.slice(2 + d, start, 1, end - start)
                with kb.loop_nest([slab.shape[i] for i in order]) as ordered:
                    indices = [ordered[order.index(i)] for i in range(len(order))]
                    kb.store(zero, slab, indices)
    inner = [replace(w, in_size=size, pad_begin=0, pad_end=0) for w, size in zip(windows, sizes)]
    return padded, inner


@contextmanager
def _reduction_nest(
    kb: KernelBuilder, channels: int, kernel: Sequence[int], channels_innermost: bool
) -> Iterator[tuple[SSAValue, list[SSAValue]]]:
    """Loops over the input channels and the taps, the channels innermost or outermost."""
    if channels_innermost:
        with kb.loop_nest([*kernel, channels]) as (*taps, c):
            yield c, taps
    else:
        with kb.loop_nest([channels, *kernel]) as (c, *taps):
            yield c, taps


@contextmanager
def _reduction_loops(kb: KernelBuilder, channels: int, kernel: Sequence[int]) -> Iterator[tuple[SSAValue, list[SSAValue]]]:
    """Loops over the input channels and the taps, the channels innermost when there are at
    least as many of them as taps: the innermost loop is the long one (a 3-iteration loop
    costs a mispredicted exit every 3 steps)."""
    with _reduction_nest(kb, channels, kernel, _channels_innermost(channels, kernel)) as loops:
        yield loops


def _channels_innermost(channels: int, kernel: Sequence[int]) -> bool:
    return channels >= math.prod(kernel)


@dataclass
class LaneConv:
    """The channel-lane form of one Conv (`VectorConv`): weights from `packed`, X
    padded first so no load needs a check, the output box in tiles of `best_tile`."""

    kb: KernelBuilder
    x: Layout
    y: Layout
    windows: Sequence[Window]
    bias: Layout | None
    packed: Layout
    group_channels: int
    out_per_group: int
    lanes: int
    chunk: int = 0
    """Input channels per reduction chunk (0: none; ungrouped, channels innermost only): the
    reduction of a group of blocks runs chunk by chunk, each chunk over every tile of the output
    box, the sums kept between chunks in `partial` ([*output box, blocks, lanes]), so a
    chunk's weights are read from memory once and from the L1 cache by the other tiles
    (`VectorConv.reduction_chunk`). Each output's sum runs in the same order."""
    partial: Layout | None = None

    def build(self, pixels: int, width: int = 1, tile: Sequence[int] | None = None) -> None:
        """The output box in tiles of `tile` pixels (`best_tile` of at most `pixels` if not
        given) by `width` blocks of lanes (several only when ungrouped)."""
        kb, out_shape = self.kb, self.y.shape
        pieces = tile_pieces(out_shape[2:], tile or best_tile(out_shape[2:], pixels))
        block_pieces = tile_pieces([out_shape[1] // self.lanes], [width])
        if self.chunk:
            self.partial = kb.alloc(
                f"{self.y.buffer.name_hint or 'conv'}_partial", [*out_shape[2:], width, self.lanes],
                accumulator_type(self.y.element_type),
            )
        with kb.loop(out_shape[0]) as n:
            for block_piece in block_pieces:
                ((start, end),), (step,) = block_piece.bounds, block_piece.tile
                with kb.loop(end, start, step) as block:
                    self.blocks(n, _offsets(kb, block, step), pieces)

    def blocks(self, n, blocks: list[SSAValue], pieces: list[TilePiece]) -> None:
        kb = self.kb
        first_outs = [kb.alu("mul", block, kb.index(self.lanes)) for block in blocks]
        first_channel = None
        # grouped: a block lies in one group (depthwise lanes each read their own channel)
        if 1 < self.out_per_group < self.y.shape[1]:
            group = kb.alu("div", first_outs[0], kb.index(self.out_per_group))
            first_channel = kb.alu("mul", group, kb.index(self.group_channels))
        if self.chunk:
            self.chunked(n, blocks, first_outs, pieces)
            return
        for piece in pieces:
            with _piece_tiles(kb, piece) as outputs:
                self.tile(n, blocks, first_outs, first_channel, outputs)

    def tile(self, n, blocks, first_outs, first_channel, outputs: list[list[SSAValue]]) -> None:
        """The loop over a block's output channels around one accumulator per output of the
        tile and block, the reduction (each input loaded once for all the blocks) and the
        stores."""
        kb, element_type = self.kb, self.y.element_type
        kernel = [w.kernel for w in self.windows]
        with kb.loop(self.lanes) as lane:
            ms = [kb.alu("add", first_out, lane) for first_out in first_outs]
            accs = [[kb.define_acc(0, accumulator_type(element_type)) for _ in outputs] for _ in blocks]
            with _reduction_loops(kb, self.group_channels, kernel) as (c, taps):
                if self.out_per_group == 1:
                    channel = kb.alu("add", ms[0], c)
                else:
                    channel = c if first_channel is None else kb.alu("add", first_channel, c)
                ws = [kb.load(self.packed, [block, c, *taps, lane]) for block in blocks]
                for j, pixel in enumerate(outputs):
                    positions = tap_positions(kb, self.windows, pixel, taps)
                    x = kb.load(self.x, [n, channel, *positions])
                    for block_accs, w in zip(accs, ws):
                        kb.mulacc(block_accs[j], x, w)
            for m, block_accs in zip(ms, accs):
                for acc, pixel in zip(block_accs, outputs):
                    value = kb.cast(kb.acc_get(acc), element_type)
                    if self.bias is not None:
                        value = kb.alu("add", value, kb.load(self.bias, [m]))
                    store_output(kb, value, self.y, n, m, pixel)


    def chunked(self, n, blocks, first_outs, pieces: list[TilePiece]) -> None:
        """The blocks' outputs chunk by chunk of the reduction (taps outermost, then chunks of
        `chunk` channels, the unchunked order), every tile per chunk; then the sums to Y."""
        kb, element_type, partial = self.kb, self.y.element_type, self.partial
        acc_type = accumulator_type(element_type)
        out_spatial = self.y.shape[2:]
        with kb.loop_nest([*out_spatial, len(blocks), self.lanes]) as indices:
            kb.store(kb.const(0.0, acc_type), partial, indices)
        with kb.loop_nest([w.kernel for w in self.windows]) as taps:
            with kb.loop(self.group_channels, 0, self.chunk) as first:
                for piece in pieces:
                    with _piece_tiles(kb, piece) as outputs:
                        self.chunk_tile(n, blocks, taps, first, outputs)
        with kb.loop_nest(out_spatial) as pixel:
            with kb.loop(self.lanes) as lane:
                for b, first_out in enumerate(first_outs):
                    m = kb.alu("add", first_out, lane)
                    value = kb.cast(kb.load(partial, [*pixel, kb.index(b), lane]), element_type)
                    if self.bias is not None:
                        value = kb.alu("add", value, kb.load(self.bias, [m]))
                    store_output(kb, value, self.y, n, m, pixel)

    def chunk_tile(self, n, blocks, taps, first, outputs: list[list[SSAValue]]) -> None:
        """One tile's sums over one chunk: from `partial`, back to `partial`."""
        kb, partial = self.kb, self.partial
        acc_type = accumulator_type(self.y.element_type)
        with kb.loop(self.lanes) as lane:
            slots = [kb.index(b) for b in range(len(blocks))]
            accs = []
            for slot in slots:
                row = []
                for pixel in outputs:
                    acc = kb.define_acc(0, acc_type)
                    kb.acc_set(acc, kb.load(partial, [*pixel, slot, lane]))
                    row.append(acc)
                accs.append(row)
            with kb.loop(self.chunk) as step:
                c = kb.alu("add", first, step)
                ws = [kb.load(self.packed, [block, c, *taps, lane]) for block in blocks]
                for j, pixel in enumerate(outputs):
                    positions = tap_positions(kb, self.windows, pixel, taps)
                    x = kb.load(self.x, [n, c, *positions])
                    for block_accs, w in zip(accs, ws):
                        kb.mulacc(block_accs[j], x, w)
            for slot, block_accs in zip(slots, accs):
                for acc, pixel in zip(block_accs, outputs):
                    kb.store(kb.acc_get(acc), partial, [*pixel, slot, lane])


ELEMENTWISE_FOLLOWERS = frozenset({"onnx.Relu", "onnx.Clip", "onnx.LeakyRelu", "onnx.BatchNormalization"})
"""Ops between a Conv and the Conv that reads it that `fuse-loops` folds into the first one's
stores (`_read_channels_last` looks through them)."""


def _read_channels_last(vector: VectorConv, op: Operation) -> bool:
    """Whether the result of Conv `op` (through element-wise followers, each its only reader) is
    the X of a Conv that copies X channels-last (`copies_channels_last`)."""
    value = op.results[0]
    while True:
        uses = list(value.uses)
        if len(uses) != 1:
            return False
        reader = uses[0].operation
        if reader.name in ELEMENTWISE_FOLLOWERS and reader.operands[0] is value:
            value = reader.results[0]
            continue
        return reader.name == "onnx.Conv" and reader.operands[0] is value and copies_channels_last(vector, reader)


def _vector_form(vector: VectorConv, op: Operation) -> str:
    """`VectorConv.form` of an onnx.Conv, from its operand types and attributes."""
    w_shape, out_shape = tensor_shape(op.operands[1]), tensor_shape(op.results[0])
    group = get_attr(op, "group") or 1
    kernel = list(w_shape[2:])
    strides = list(get_attr(op, "strides") or [1] * len(kernel))
    taps = math.prod(kernel)
    return vector.form(group, w_shape[0] // group, w_shape[1] * taps, strides, out_shape[-1], taps)


def copies_channels_last(vector: VectorConv, op: Operation, channels_last: bool | None = None) -> bool:
    """Whether onnx.Conv `op` copies its X channels-last before reading it: the depthwise-lane
    form, the Winograd form, or the channel-lane form of a window of several taps over at
    least as many channels (`ConvLowering.lower`); with Y channels-last or not (`conv_form`)."""
    if len(op.operands) < 2:
        return False
    form = _vector_form(vector, op)
    kernel = list(tensor_shape(op.operands[1])[2:])
    lanes = form == "depthwise lanes" or (depthwise_row_lanes(vector, op) and _meets_channels_last(op, channels_last))
    return lanes or _takes_winograd(vector, op, channels_last) or (
        form == "channel lanes" and math.prod(kernel) > 1 and _channels_innermost(tensor_shape(op.operands[1])[1], kernel)
    )


FEW_CHANNELS = 4
"""Input channels per group up to which a Conv in pixel lanes (an image's stem: 3) takes channel
lanes when its result is channels-last (`conv_form`): its reduction is a few taps' worth either
way, and a pixel-lane vector would store as L scalars a channel apart."""


def _y_channels_last(op: Operation, channels_last: bool | None) -> bool:
    """Whether Conv `op`'s Y is channels-last: as told (`assign-host-layouts` weighing both
    layouts), else as that pass marked it."""
    return CHANNELS_LAST in op.attributes if channels_last is None else channels_last


def _meets_channels_last(op: Operation, channels_last: bool | None) -> bool:
    """Whether Conv `op`'s Y (`_y_channels_last`) or X (`x_channels_last`) is channels-last: a
    row or pixel-lane form would scatter into the one or gather from the other."""
    return _y_channels_last(op, channels_last) or x_channels_last(op)


def conv_form(vector: VectorConv, op: Operation, channels_last: bool | None = None) -> str:
    """The form `ConvLowering` gives onnx.Conv `op` before it looks at its weights' values
    (`VectorConv.form`, and channel lanes for a 1x1 Conv in pixel lanes whose result a Conv
    copies channels-last, for a Conv in pixel lanes that takes the Winograd form, or for an
    f32 Conv in pixel lanes over `FEW_CHANNELS` or fewer input channels per group whose Y is
    channels-last, and for a 1x1 Conv in pixel lanes whose X or Y is channels-last,
    `pointwise_pixel_lanes`; depthwise lanes for a depthwise Conv in rows whose X or Y is
    channels-last, `depthwise_row_lanes`), with Y channels-last or not (`channels_last`; None:
    as marked)."""
    form = _vector_form(vector, op)
    if form == "pixel lanes" and _takes_winograd(vector, op, channels_last):
        # Winograd's products are a channel-lane Conv over tiles; its transforms read X
        # channels-last and write Y by vectors of output channels, as the channel-lane form does.
        return "channel lanes"
    w_shape = tensor_shape(op.operands[1])
    out_per_group = w_shape[0] // (get_attr(op, "group") or 1)
    if (
        form == "pixel lanes" and out_per_group % 8 == 0 and w_shape[1] <= FEW_CHANNELS
        and tensor_element_type(op.results[0]) == f32 and _y_channels_last(op, channels_last)
    ):
        # A channels-last Y takes its L-channel vectors whole; the pixel-lane form's vectors
        # would scatter. So the stage behind an image's stem can be channels-last.
        return "channel lanes"
    if form == "pixel lanes" and out_per_group % 8 == 0 and _read_channels_last(vector, op):
        # Its reader copies it channels-last: each L-pixel vector would store as L scalars
        # there, where an L-channel vector of the channel-lane form stores whole.
        return "channel lanes"
    if depthwise_row_lanes(vector, op) and _meets_channels_last(op, channels_last):
        # The rows would gather from a channels-last X and scatter into a channels-last Y; the
        # depthwise lanes copy X channels-last and store L-channel vectors whole.
        return "depthwise lanes"
    if pointwise_pixel_lanes(vector, op) and _meets_channels_last(op, channels_last):
        # Rows of pixels would scatter into a channels-last Y or gather from a channels-last X;
        # L-channel vectors store whole, and each X element is one broadcast load either way.
        return "channel lanes"
    return form


def pointwise_pixel_lanes(vector: VectorConv, op: Operation) -> bool:
    """Whether onnx.Conv `op` is an ungrouped f32 1x1 Conv in pixel lanes whose output channels
    split into 8-lane vectors (and that no other rule of `conv_form` puts in channel lanes): it
    takes channel lanes where its X or its Y is channels-last (`conv_form`), at the cost
    `VectorConv.pointwise_cycles` estimates for each form."""
    if len(op.operands) < 2:
        return False
    w_shape = tensor_shape(op.operands[1])
    return (
        math.prod(w_shape[2:]) == 1 and (get_attr(op, "group") or 1) == 1 and w_shape[0] % 8 == 0
        and tensor_element_type(op.results[0]) == f32 and _vector_form(vector, op) == "pixel lanes"
        and not _read_channels_last(vector, op)
    )


def depthwise_row_lanes(vector: VectorConv, op: Operation) -> bool:
    """Whether onnx.Conv `op` is an f32 depthwise Conv (one input channel per group, groups in
    8s) in depthwise rows: it takes depthwise lanes where its X or its Y is channels-last
    (`conv_form`), at the cost `assign_host_layouts.DEPTHWISE_LANE_CYCLES` beyond the rows."""
    if len(op.operands) < 2:
        return False
    w_shape = tensor_shape(op.operands[1])
    group = get_attr(op, "group") or 1
    return (
        w_shape[1] == 1 and w_shape[0] == group and group % 8 == 0
        and tensor_element_type(op.results[0]) == f32 and _vector_form(vector, op) == "depthwise rows"
    )


def x_channels_last(op: Operation) -> bool:
    """Whether the X of `op` is stored channels-last (its writer marked by `assign-host-layouts`)."""
    writer = op.operands[0].owner
    return isinstance(writer, Operation) and CHANNELS_LAST in writer.attributes


def _takes_winograd(vector: VectorConv, op: Operation, channels_last: bool | None = None) -> bool:
    """Whether onnx.Conv `op` takes the Winograd form: f32, two spatial dimensions, a 3x3
    window at unit stride and dilation, one group, and `conv_winograd.takes_winograd` (told
    whether the direct form would take pixel lanes into an NCHW Y: `channels_last` as in
    `conv_form`)."""
    if len(op.operands) < 2:
        return False
    w_shape, out_shape = tensor_shape(op.operands[1]), tensor_shape(op.results[0])
    spatial = len(w_shape) - 2
    return (
        tensor_element_type(op.operands[0]) == f32
        and tensor_element_type(op.operands[1]) == f32
        and list(w_shape[2:]) == [3, 3]
        and (get_attr(op, "group") or 1) == 1
        and all(s == 1 for s in get_attr(op, "strides") or [1] * spatial)
        and all(d == 1 for d in get_attr(op, "dilations") or [1] * spatial)
        and takes_winograd(
            vector, w_shape[1], w_shape[0], out_shape[2:],
            _vector_form(vector, op) == "pixel lanes" and not _y_channels_last(op, channels_last),
        )
    )


def _lower_winograd(
    kb: KernelBuilder, vector: VectorConv, x: Layout, y: Layout, windows: Sequence[Window],
    weights: np.ndarray, bias: Layout | None,
) -> None:
    """Y = Conv(X, W) + B by F(2x2, 3x3) (`conv_winograd`) for a 2-D X (N, C, H, W) and W
    (M, C, 3, 3) of constant `weights` at unit stride and dilation: X copied channels-last into
    a zero-bordered buffer reaching every tile's inputs, then per band of tile rows the input
    transform into V, the 16 products as a grouped 1x1 `LaneConv` of V into M (group ξ: the
    transformed weights U[ξ], packed in lanes), and the output transform into Y."""
    name = result_name(kb.op)
    (batch, out_channels, *out_spatial), channels = y.shape, x.shape[1]
    tile_rows, columns = tile_grid(out_spatial)
    xp, _ = padded_input(kb, x, tile_windows(windows, out_spatial), f"{name}_padded", channels_last=True)
    u = winograd_weights(weights).reshape(16 * out_channels, channels, 1, 1)
    rows = band_rows(tile_rows, columns, channels, out_channels, u.nbytes > vector.streamed_weights)
    lanes, width, tile = vector.lane_plan(out_channels, [rows, columns], u.nbytes // 16)
    if (out_channels // lanes) % width:  # a tile's blocks of lanes lie in one group
        width, tile = 1, best_tile([rows, columns], vector.tile)
    packed = _packed_weights(kb, u, lanes, f"{name}_winograd_weights")
    v = tile_buffer(kb, f"{name}_winograd_v", rows * columns, channels, y.element_type)
    m = tile_buffer(kb, f"{name}_winograd_m", rows * columns, out_channels, y.element_type)
    with kb.loop(batch) as n:
        for first, end, count, last_rows in band_pieces(out_spatial[0], rows):
            with kb.loop(end, first, count) as band:
                input_transform(kb, xp, v, n, band, count, columns)
                box = [count, columns]
                products = LaneConv(
                    kb, *band_views(v, m, count, columns), [Window(size, size, 1) for size in box],
                    None, packed, channels, out_channels, lanes,
                )
                products.build(math.prod(tile), width, tile if count == rows else best_tile(box, math.prod(tile)))
                output_transform(kb, m, y, bias, n, band, count, last_rows, out_spatial[1], store_output)


def store_output(kb: KernelBuilder, value: SSAValue, y: Layout, n: SSAValue, m: SSAValue, pixel: list[SSAValue]) -> None:
    """Y[n, m, pixel…] = value; a Y whose channels are innermost (`assign-host-layouts`) is
    stored through its memory-order view (N, spatial…, C), the view its element-wise readers
    walk, so `fuse-loops` sees one index space on both sides."""
    if y.rank >= 3 and y.shape[1] > 1 and y.strides[1] == 1:
        kb.store(value, y.permute(channels_last_order(y.rank)), [n, *pixel, m])
    else:
        kb.store(value, y, [n, m, *pixel])


def _pixel_block(region: Region, most: int) -> int:
    """The depthwise block of at most `most` outputs that covers `region`'s rows in the fewest
    steps (whole blocks plus single outputs), the larger among equals: a 3-wide interior (KWS's
    25x5 layers) takes blocks of 3, where blocks of 4 left every output single."""
    (start, end) = region.bounds[-1] if region.bounds else (0, 1)
    width = end - start
    return min(range(1, most + 1), key=lambda b: (width // b + width % b, -b))


def _offsets(kb: KernelBuilder, base: SSAValue, count: int) -> list[SSAValue]:
    """base, base + 1, …, base + count - 1."""
    return [base, *(kb.alu("add", base, kb.index(j)) for j in range(1, count))]


def plain_weights(kb: KernelBuilder, w: Layout) -> WeightTerm:
    """W[m, c, k…], the weights of Conv and DeformConv."""
    return lambda m, g, channel, c, taps: kb.load(w, [m, c, *taps])


def _block_pixels(kb: KernelBuilder, region: Region, out_ivs: list[SSAValue]) -> list[list[SSAValue]]:
    """The output positions of one iteration of `region`'s loops: its block of rows by pixels."""
    if region.row_block == 1:
        if region.pixel_block == 1:
            return [out_ivs]
        *outer, last = out_ivs
        return [[*outer, o] for o in _offsets(kb, last, region.pixel_block)]
    *outer, row, last = out_ivs
    return [
        [*outer, r, o]
        for r in _offsets(kb, row, region.row_block)
        for o in _offsets(kb, last, region.pixel_block)
    ]


@contextmanager
def _piece_tiles(kb: KernelBuilder, piece: TilePiece) -> Iterator[list[list[SSAValue]]]:
    """Nested loops over `piece`'s tile corners (outermost first); yields the output positions
    of one tile, the corner's `piece.tile` neighbours in row-major order."""
    with contextlib.ExitStack() as stack:
        corner = [stack.enter_context(kb.loop(end, start, step)) for (start, end), step in zip(piece.bounds, piece.tile)]
        offsets = [_offsets(kb, iv, t) for iv, t in zip(corner, piece.tile)]
        yield [list(p) for p in itertools.product(*offsets)]


@contextmanager
def _region_loops(kb: KernelBuilder, region: Region) -> Iterator[list[SSAValue]]:
    """Nested loops over the box of `region` (outermost first), the last by its pixel block."""
    steps = [1] * (len(region.bounds) - 2) + [region.row_block, region.pixel_block][-len(region.bounds):]
    with contextlib.ExitStack() as stack:
        yield [
            stack.enter_context(kb.loop(end, start, step))
            for (start, end), step in zip(region.bounds, steps)
        ]


def conv_group(op: Operation, x: Layout, w: Layout) -> int:
    """Checks X's and W's ranks and kernel_shape; returns a positive `group`."""
    if x.rank < 3 or w.rank != x.rank:
        raise ValueError(f"expected X and W of one rank ≥ 3, got {x.shape} and {w.shape}")
    kernel_shape = get_attr(op, "kernel_shape")
    if kernel_shape and list(kernel_shape) != list(w.shape[2:]):
        raise ValueError(f"kernel_shape {kernel_shape} differs from W's {list(w.shape[2:])}")
    group = get_attr(op, "group")
    if group <= 0:
        raise ValueError(f"group {group} is not positive")
    return group


def check_groups(channels: int, out_channels: int, group: int, group_channels: int) -> None:
    if channels != group_channels * group or out_channels % group:
        raise ValueError(
            f"{channels} input and {out_channels} output channels do not split into "
            f"{group} groups of {group_channels} input channels"
        )


class ConvLowering(OnnxLowering):
    """`Conv` over any number of spatial dimensions, with groups (depthwise included) and bias.

    Y[n, m, o…] = B[m] + Σ_{c, k…} X[n, g·Cg + c, o·stride + k·dilation - pad…] · W[m, c, k…]
    where g = m / (M / group) is the group of output channel m and Cg = C / group.

    With `vector` (targets with vector registers), the forms of `VectorConv`, and Winograd's
    for the 3x3 channel-lane Convs `conv_winograd.takes_winograd` chooses. With
    `float_registers` (scalar targets with that many float registers), an ungrouped f32 Conv
    takes the register tile `register_tile` chooses for it (channels × pixels) instead of
    `channel_block` channels, and its X padded first when the copy is no larger than the
    output (a first layer's small input: every output then takes the tiled interior).
    """

    op_names = frozenset({"onnx.Conv"})

    def __init__(
        self, vector: VectorConv | None = None, channel_block: int = CHANNEL_BLOCK, float_registers: int = 0
    ):
        super().__init__()
        self.vector = vector
        self.channel_block = channel_block
        self.float_registers = float_registers

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x, w = layout_of(input_value(op, 0)), layout_of(input_value(op, 1))
        out_shape = tensor_shape(op.results[0])
        group = conv_group(op, x, w)
        out_channels, group_channels = w.shape[0], w.shape[1]
        check_groups(x.shape[1], out_channels, group, group_channels)
        kernel = list(w.shape[2:])
        windows = sliding_windows(op, x.shape[2:], kernel, out_shape[2:])
        out_per_group = out_channels // group

        form = "scalar" if self.vector is None else conv_form(self.vector, op)
        lane_forms = ("channel lanes", "depthwise lanes")
        weights = _constant_tensor(w) if form in lane_forms else None
        if form in lane_forms and weights is None:
            form = "scalar" if form == "channel lanes" else "depthwise rows"
        # The channel-lane form reads channels innermost over a channels-last copy of X when
        # there are more channels than taps: X's reads and W's are then each one stream. The
        # depthwise lanes read each lane's own channel: consecutive in a channels-last copy.
        channels_last = form == "depthwise lanes" or (
            form == "channel lanes" and math.prod(kernel) > 1 and _channels_innermost(group_channels, kernel)
        )
        if form == "channel lanes" and _takes_winograd(self.vector, op):
            y = result_layout(kb, op, result_name(op), out_shape, tensor_element_type(op.results[0]))
            bias = input_value(op, 2)
            _lower_winograd(kb, self.vector, x, y, windows, weights, layout_of(bias) if bias is not None else None)
            return [y]
        if form != "scalar":
            x, windows = padded_input(kb, x, windows, f"{result_name(op)}_padded", channels_last=channels_last)
        if form in lane_forms:  # Y channels-last where `assign-host-layouts` marked the Conv
            y = result_layout(kb, op, result_name(op), out_shape, tensor_element_type(op.results[0]))
            bias = input_value(op, 2)
            bias = layout_of(bias) if bias is not None else None
            # into a channels-last Y the tile's vectors store whole: more blocks per tile
            most_blocks = MAX_WHOLE_BLOCKS if is_channels_last(y) else MAX_BLOCKS
            if group == 1:  # whole L-lane blocks and an 8-lane rest, where that is cheaper
                spans = self.vector.channel_spans(out_channels, out_shape[2:], weights.nbytes, most_blocks)
            else:
                spans = [(0, out_channels)]
            for first, count in spans:
                part = weights[first : first + count]
                if group == 1:  # several blocks of lanes per tile where the registers hold them
                    lanes, width, tile = self.vector.lane_plan(count, out_shape[2:], part.nbytes, most_blocks)
                else:
                    lanes, pixels = self.vector.channel_lanes(
                        count if form == "depthwise lanes" else out_per_group, out_shape[2:], part.nbytes
                    )
                suffix = "" if first == 0 else f"_from_{first}"
                packed = _packed_weights(
                    kb, part, lanes, f"{result_name(op)}_packed_weights{suffix}",
                    form == "channel lanes" and channels_last,
                )
                part_y, part_bias = y, bias
                if count != out_channels:  # a part of the channels: its slice of Y and B
                    part_y = y.slice(1, first, 1, count)
                    part_bias = bias.slice(0, first, 1, count) if bias is not None else None
                lane_conv = LaneConv(
                    kb, x, part_y, windows, part_bias, packed, group_channels,
                    out_per_group if group > 1 else count, lanes,
                )
                if group == 1:
                    if channels_last:
                        lane_conv.chunk = self.vector.reduction_chunk(
                            group_channels, lanes * width, out_shape[2:], tile, part.nbytes
                        )
                    lane_conv.build(math.prod(tile), width, tile)
                else:
                    lane_conv.build(pixels)
            return [y]

        def input_term(windows, n, channel, out_ivs, taps):
            positions = tap_positions(kb, windows, out_ivs, taps)
            return load_window(kb, x, [n, channel], windows, positions, 0)[0]

        # Padded rows are single unchecked loops: no pixel blocks (vectorize takes the row).
        pixel_block = PIXEL_BLOCK if form == "scalar" else 1
        channel_tile = self.vector.pixel_tile(out_per_group) if form == "pixel lanes" else None
        channel_block, pixel_tile, row_block = self.channel_block, 1, 1
        if form == "depthwise rows" and len(out_shape) == 4:  # several rows' independent sums per step
            row_block = self.vector.row_block(out_shape[-1])
        if form == "scalar" and group == 1 and self.float_registers and x.element_type == f32:
            padded = math.prod(x.shape[:2]) * math.prod(v.in_size + v.pad_begin + v.pad_end for v in windows)
            if padded <= math.prod(out_shape):
                x, windows = padded_input(kb, x, windows, f"{result_name(op)}_padded")
            interior = [r for r in window_regions(windows) if r.unchecked]
            width = interior[0].bounds[-1][1] - interior[0].bounds[-1][0] if interior else 1
            channel_block, pixel_tile = register_tile(out_per_group, width, self.float_registers)
        return [
            convolve(
                op, kb, group_channels, out_per_group, kernel, window_regions(windows), input_term,
                plain_weights(kb, w), pixel_block=pixel_block, channel_tile=channel_tile,
                channel_block=channel_block, pixel_tile=pixel_tile,
                row_block=row_block,
            )
        ]


class ConvTransposeLowering(OnnxLowering):
    """`ConvTranspose` as a gather over the output, so each output is one accumulator:

    Y[n, m, o…] = B[m] + Σ_{c, k…} X[n, g·Cg + c, i…] · W[g·Cg + c, m - g·Mg, k…]
    over the taps where i = (o + pad_begin - k·dilation) / stride is exact and inside X;
    W is (C, M / group, k…), g = m / Mg the group of output channel m, Cg = C / group.
    """

    op_names = frozenset({"onnx.ConvTranspose"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x, w = layout_of(input_value(op, 0)), layout_of(input_value(op, 1))
        out_shape = tensor_shape(op.results[0])
        group = conv_group(op, x, w)
        channels, out_per_group = w.shape[0], w.shape[1]
        check_groups(x.shape[1], out_shape[1], group, channels // group)
        if channels != x.shape[1] or out_shape[1] != out_per_group * group:
            raise ValueError(
                f"W of shape {w.shape} does not map {x.shape[1]} input to {out_shape[1]} "
                f"output channels in {group} groups"
            )
        group_channels = channels // group
        kernel = list(w.shape[2:])
        windows = transposed_windows(op, x.shape[2:], kernel, out_shape[2:])

        def input_term(windows, n, channel, out_ivs, taps):
            positions, exact = transposed_positions(kb, windows, out_ivs, taps)
            return load_window(kb, x, [n, channel], windows, positions, 0, also=exact)[0]

        def weight_term(m, g, channel, c, taps):
            local = m if g is None else kb.alu("sub", m, kb.alu("mul", g, kb.index(out_per_group)))
            return kb.load(w, [channel, local, *taps])

        regions = [Region.whole(windows)]
        return [
            convolve(op, kb, group_channels, out_per_group, kernel, regions, input_term, weight_term)
        ]


PATTERNS = (ConvLowering(), ConvTransposeLowering())

__all__ = [
    "CHANNEL_BLOCK",
    "Epilogue",
    "PATTERNS",
    "PIXEL_BLOCK",
    "ConvLowering",
    "ConvTransposeLowering",
    "InputTerm",
    "LaneConv",
    "WeightTerm",
    "check_groups",
    "conv_form",
    "conv_group",
    "convolve",
    "copies_channels_last",
    "padded_input",
    "plain_weights",
]
