"""Convolution (Conv, ConvTranspose, DeformConv), and the sliding-window arithmetic it shares
with the pools (`pool.py`).

A sliding window over one spatial dimension reads input position

    pos = out·stride + tap·dilation - pad_begin

for every output index `out` and kernel tap `tap`. Padding is never materialized: a position
outside the input reads a fill value instead (0 for Conv and AveragePool, -inf for MaxPool). The
position is clamped into the input before the gep, so every address stays inside the buffer, and
`uop.where` picks the fill. A bound that no (out, tap) pair of the whole loop nest can cross gets
no check at all, so unpadded windows are plain loads.

Conv splits its output box into regions (`window_regions`): the outputs whose whole window lies
inside the input (the interior, plain strided loads) and the border around it (checked loads),
so the checks run only where a tap can reach the padding.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np
from xdsl.dialects.builtin import AnyFloat, IndexType
from xdsl.ir import Operation, SSAValue
from zant.dialects import uop
from zant.dialects.onnx import get_attr, input_value
from zant.ir.resources import attr_to_array
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    accumulator_type,
    layout_of,
    tensor_element_type,
    tensor_shape,
)

# ---------------------------------------------------------------------------------------------
# Sliding windows (shared with pool.py)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """One spatial dimension of a sliding window."""

    in_size: int
    out_size: int
    kernel: int
    stride: int = 1
    dilation: int = 1
    pad_begin: int = 0
    pad_end: int = 0
    first_out: int = 0
    """The loop covers outputs [first_out, out_size): a region of the full output range."""

    @property
    def lowest(self) -> int:
        """The lowest input position any (out, tap) pair reads."""
        return self.first_out * self.stride - self.pad_begin

    @property
    def highest(self) -> int:
        """The highest input position any (out, tap) pair reads."""
        return (
            (self.out_size - 1) * self.stride + (self.kernel - 1) * self.dilation - self.pad_begin
        )


def _optional_attr(op: Operation, name: str):
    """An attribute the op may not have at all (GlobalMaxPool has no `strides`)."""
    try:
        return get_attr(op, name)
    except KeyError:
        return None


def _expected_out_size(
    in_size: int, window: int, stride: int, pad_begin: int, pad_end: int, ceil_mode: bool
) -> int:
    """The ONNX output size for explicit pads; `window` is the dilated kernel extent."""
    span = in_size + pad_begin + pad_end - window
    if not ceil_mode:
        return span // stride + 1
    out = -(-span // stride) + 1
    # The last window must start inside the input or its leading pad (as PyTorch and ORT do).
    if (out - 1) * stride >= in_size + pad_begin:
        out -= 1
    return out


def _window_attributes(op: Operation, rank: int) -> tuple[list[int], list[int], list[int], str]:
    """`strides`, `dilations`, `pads` (defaults filled in) and `auto_pad`, checked."""
    strides = _optional_attr(op, "strides") or [1] * rank
    dilations = _optional_attr(op, "dilations") or [1] * rank
    pads = _optional_attr(op, "pads") or [0] * (2 * rank)
    auto_pad = _optional_attr(op, "auto_pad") or "NOTSET"
    if len(strides) != rank or len(dilations) != rank or len(pads) != 2 * rank:
        raise ValueError(
            f"strides, dilations and pads must have {rank}, {rank} and {2 * rank} entries "
            f"for {rank} spatial dimensions"
        )
    if any(s <= 0 for s in strides) or any(d <= 0 for d in dilations):
        raise ValueError("strides and dilations must be positive")
    if auto_pad not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise ValueError(f"unknown auto_pad '{auto_pad}'")
    return strides, dilations, pads, auto_pad


def sliding_windows(
    op: Operation,
    in_spatial: Sequence[int],
    kernel: Sequence[int],
    out_spatial: Sequence[int],
    ceil_mode: bool = False,
) -> list[Window]:
    """The windows of a Conv or pool from its `strides`, `dilations`, `pads` and `auto_pad`.

    The output sizes come from the result type; they are checked against the attributes, and
    SAME_UPPER / SAME_LOWER pads are derived from them.
    """
    rank = len(in_spatial)
    strides, dilations, pads, auto_pad = _window_attributes(op, rank)
    windows = []
    for dim in range(rank):
        in_size, k, out = in_spatial[dim], kernel[dim], out_spatial[dim]
        stride, dilation = strides[dim], dilations[dim]
        extent = (k - 1) * dilation + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            total = max(0, (out - 1) * stride + extent - in_size)
            begin = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            end = total - begin
            expected = -(-in_size // stride)
        elif auto_pad == "VALID":
            begin = end = 0
            expected = _expected_out_size(in_size, extent, stride, 0, 0, False)
        else:  # NOTSET
            begin, end = pads[dim], pads[rank + dim]
            expected = _expected_out_size(in_size, extent, stride, begin, end, ceil_mode)
        if out != expected:
            raise ValueError(
                f"output size {out} of spatial dimension {dim} does not match the attributes "
                f"(expected {expected})"
            )
        windows.append(Window(in_size, out, k, stride, dilation, begin, end))
    return windows


def tap_positions(
    kb: KernelBuilder,
    windows: Sequence[Window],
    out_ivs: Sequence[SSAValue],
    tap_ivs: Sequence[SSAValue],
) -> list[SSAValue]:
    """`out·stride + tap·dilation - pad_begin` per dimension, leaving out trivial terms."""
    positions = []
    for w, out, tap in zip(windows, out_ivs, tap_ivs, strict=True):
        base = out if w.stride == 1 else kb.alu("mul", out, kb.index(w.stride))
        step = tap if w.dilation == 1 else kb.alu("mul", tap, kb.index(w.dilation))
        pos = kb.alu("add", base, step)
        if w.pad_begin:
            pos = kb.alu("sub", pos, kb.index(w.pad_begin))
        positions.append(pos)
    return positions


def _all(kb: KernelBuilder, conditions: list[SSAValue]) -> SSAValue | None:
    result = None
    for condition in conditions:
        result = condition if result is None else kb.alu("and", result, condition)
    return result


def within(
    kb: KernelBuilder,
    windows: Sequence[Window],
    positions: Sequence[SSAValue],
    low: Sequence[int],
    high: Sequence[int],
) -> SSAValue | None:
    """An i1 that `low[d] <= positions[d] < high[d]` in every dimension, None if always so."""
    conditions = []
    for w, pos, lo, hi in zip(windows, positions, low, high, strict=True):
        if w.lowest < lo:
            conditions.append(kb.alu("cmple", kb.index(lo), pos))
        if w.highest >= hi:
            conditions.append(kb.alu("cmplt", pos, kb.index(hi)))
    return _all(kb, conditions)


def load_window(
    kb: KernelBuilder,
    source: Layout,
    leading: Sequence[SSAValue],
    windows: Sequence[Window],
    positions: Sequence[SSAValue],
    fill: float,
    also: SSAValue | None = None,
) -> tuple[SSAValue, SSAValue | None]:
    """`source[*leading, *positions]`, or `fill` where a position is outside the input (or
    where the i1 `also`, when given, is false).

    Returns the value and the i1 saying it is read (None when it always is). Positions are
    clamped before the gep, so the address is always inside the buffer.
    """
    inside = within(kb, windows, positions, [0] * len(windows), [w.in_size for w in windows])
    valid = _all(kb, [c for c in (inside, also) if c is not None])
    clamped = []
    for w, pos in zip(windows, positions):
        if w.lowest < 0:
            pos = kb.alu("max", pos, kb.index(0))
        if w.highest >= w.in_size:
            pos = kb.alu("min", pos, kb.index(w.in_size - 1))
        clamped.append(pos)
    value = kb.load(source, [*leading, *clamped])
    if valid is not None:
        value = kb.where(valid, value, kb.const(fill, value.type))
    return value, valid


def interior(w: Window) -> tuple[int, int]:
    """The outputs [lo, hi) of `w` whose every tap reads inside the input (lo == hi if none)."""
    lo = min(-(-w.pad_begin // w.stride), w.out_size)
    last = w.in_size - 1 + w.pad_begin - (w.kernel - 1) * w.dilation
    hi = min(last // w.stride + 1, w.out_size) if last >= 0 else 0
    return lo, max(hi, lo)


@dataclass(frozen=True)
class Region:
    """A box of outputs, [start, end) per spatial dimension, and the windows whose bounds decide
    which of its loads are checked."""

    bounds: tuple[tuple[int, int], ...]
    windows: tuple[Window, ...]
    pixel_block: int = 1
    """Outputs of the last dimension computed per iteration (that loop steps by it)."""

    @property
    def unchecked(self) -> bool:
        """No load of the region can read outside the input."""
        return all(w.lowest >= 0 and w.highest < w.in_size for w in self.windows)

    @staticmethod
    def whole(windows: Sequence[Window]) -> Region:
        """Every output of the windows, each load checked as they require."""
        return Region(tuple((w.first_out, w.out_size) for w in windows), tuple(windows))


def window_regions(windows: Sequence[Window]) -> list[Region]:
    """The output box split into border regions and one interior region.

    Dimension by dimension, inside the interior of the dimensions before it, the outputs below
    and above the interior of dimension d are a border region: checked like the whole window
    in d and the dimensions after it. What remains, the interior of every dimension, reads no
    padding: its windows are restricted to it, so its loads have no checks and no clamps.
    Unpadded windows have no border at all. Borders come first, the interior last.
    """
    regions: list[Region] = []
    inner: list[Window] = []
    for d, w in enumerate(windows):
        lo, hi = interior(w)
        checked = Region.whole((*inner, *windows[d:]))
        for start, end in ((0, lo), (hi, w.out_size)):
            if start < end:
                bounds = list(checked.bounds)
                bounds[d] = (start, end)
                regions.append(replace(checked, bounds=tuple(bounds)))
        if lo == hi:
            return regions
        inner.append(replace(w, first_out=lo, out_size=hi))
    regions.append(Region.whole(inner))
    return regions


def pixel_blocked(region: Region, block: int) -> list[Region]:
    """`region` with its last dimension in steps of `block` outputs, and the remainder.

    The blocked part's last window ends where its last block does, so its checks stay sound
    (an interior stays unchecked).
    """
    if block == 1 or not region.bounds:
        return [region]
    start, end = region.bounds[-1]
    split = start + (end - start) // block * block
    parts = []
    for first, last, step in ((start, split, block), (split, end, 1)):
        if first < last:
            window = replace(region.windows[-1], first_out=first, out_size=last)
            bounds = (*region.bounds[:-1], (first, last))
            parts.append(Region(bounds, (*region.windows[:-1], window), step))
    return parts


# ---------------------------------------------------------------------------------------------
# Transposed windows (ConvTranspose)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TransposedWindow(Window):
    """One spatial dimension of a ConvTranspose, read as a gather: output `out` and tap `tap`
    read input `(out + pad_begin - tap·dilation) / stride`, where that division is exact.

    `lowest`/`highest` bound that input position over the whole loop nest (the exactness check
    rejects every inexact quotient, so floor division is a safe bound).
    """

    @property
    def lowest(self) -> int:
        return (self.pad_begin - (self.kernel - 1) * self.dilation) // self.stride

    @property
    def highest(self) -> int:
        return (self.out_size - 1 + self.pad_begin) // self.stride


def transposed_windows(
    op: Operation, in_spatial: Sequence[int], kernel: Sequence[int], out_spatial: Sequence[int]
) -> list[TransposedWindow]:
    """The windows of a ConvTranspose from `strides`, `dilations`, `pads`, `auto_pad`,
    `output_padding` and `output_shape`.

    The full output of one dimension is `stride·(in - 1) + output_padding + extent`; pads cut
    it down. With `output_shape` (or SAME_* auto_pad, whose target is `in·stride`) the pads are
    derived from the target size, the odd one going to the end (SAME_UPPER) or the beginning.
    """
    rank = len(in_spatial)
    strides, dilations, pads, auto_pad = _window_attributes(op, rank)
    output_padding = _optional_attr(op, "output_padding") or [0] * rank
    output_shape = _optional_attr(op, "output_shape")
    if len(output_padding) != rank or (output_shape and len(output_shape) != rank):
        raise ValueError(f"output_padding and output_shape must have {rank} entries")
    windows = []
    for dim in range(rank):
        in_size, k, out = in_spatial[dim], kernel[dim], out_spatial[dim]
        stride, dilation = strides[dim], dilations[dim]
        full = stride * (in_size - 1) + output_padding[dim] + (k - 1) * dilation + 1
        if output_shape or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            total = full - (output_shape[dim] if output_shape else in_size * stride)
            begin = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            end = total - begin
        elif auto_pad == "VALID":
            begin = end = 0
        else:
            begin, end = pads[dim], pads[rank + dim]
        if out != full - begin - end:
            raise ValueError(
                f"output size {out} of spatial dimension {dim} does not match the attributes "
                f"(expected {full - begin - end})"
            )
        windows.append(TransposedWindow(in_size, out, k, stride, dilation, begin, end))
    return windows


def transposed_positions(
    kb: KernelBuilder,
    windows: Sequence[TransposedWindow],
    out_ivs: Sequence[SSAValue],
    tap_ivs: Sequence[SSAValue],
) -> tuple[list[SSAValue], SSAValue | None]:
    """The input positions `(out + pad_begin - tap·dilation) / stride` per dimension, and the
    i1 that every division is exact (None when all strides are 1)."""
    positions, exact = [], []
    for w, out, tap in zip(windows, out_ivs, tap_ivs, strict=True):
        pos = out if not w.pad_begin else kb.alu("add", out, kb.index(w.pad_begin))
        step = tap if w.dilation == 1 else kb.alu("mul", tap, kb.index(w.dilation))
        pos = kb.alu("sub", pos, step)
        if w.stride > 1:
            stride = kb.index(w.stride)
            exact.append(kb.alu("cmpeq", kb.alu("rem", pos, stride), kb.index(0)))
            pos = kb.alu("div", pos, stride)
        positions.append(pos)
    return positions, _all(kb, exact)


# ---------------------------------------------------------------------------------------------
# Conv and ConvTranspose
# ---------------------------------------------------------------------------------------------

InputTerm = Callable[[Sequence[Window], SSAValue, SSAValue, list[SSAValue], list[SSAValue]], SSAValue]
"""(windows, n, input channel, out…, taps…) → the input factor of one product; `windows` are
the region's, deciding which bounds its loads check."""

WeightTerm = Callable[[SSAValue, SSAValue | None, SSAValue, SSAValue, list[SSAValue]], SSAValue]
"""(m, group, input channel, channel in group, taps…) → the weight factor of one product."""

CHANNEL_BLOCKS = (8, 4)
"""How many output channels one pass over the window computes, when the group's channels
split into such blocks: one input load feeds that many independent accumulators, which stay in
registers and hide the latency of the additions (one accumulator is a serial chain)."""

PIXEL_BLOCK = 4
"""For grouped convs whose channels do not block (depthwise), how many neighbouring interior
outputs of the last spatial dimension one pass over the window computes: one weight load
feeds that many accumulators."""


def _channel_block(out_per_group: int) -> int:
    return next((b for b in CHANNEL_BLOCKS if out_per_group % b == 0), 1)


def _convolve(
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
) -> Layout:
    """Y[n, m, o…] = B[m] + Σ_{c < group_channels, k…} x·w with x from `input_term`, w from
    `weight_term` and B the optional input `bias_input`; output channel m belongs to group
    m / out_per_group, whose input channels start at group·group_channels.

    The spatial outputs are looped over region by region, each with its own copy of the
    reduction; the output channels in blocks of `_channel_block`, one accumulator each.
    """
    bias_value = input_value(op, bias_input)
    bias = layout_of(bias_value) if bias_value is not None else None
    out_shape = tensor_shape(op.results[0])
    element_type = tensor_element_type(op.results[0])
    y = kb.alloc(result_name(op), out_shape, element_type)
    grouped = out_shape[1] > out_per_group
    block = _channel_block(out_per_group)
    if grouped and block == 1:  # depthwise: block the interior's pixels (borders are few)
        regions = [
            part
            for region in regions
            for part in (pixel_blocked(region, pixel_block) if region.unchecked else [region])
        ]
    # Output channels in blocks (a block never straddles two groups, so its first channel's
    # group is everyone's); with `channel_tile` (never grouped), tiles of that many, then one
    # of the rest.
    with kb.loop(out_shape[0]) as n:
        for piece in tile_pieces([out_shape[1]], [channel_tile or block]):
            ((first, last),), (block,) = piece.bounds, piece.tile
            with kb.loop(last, first, block) as m:
                block_channels = _offsets(kb, m, block)
                for region in regions:
                    with _region_loops(kb, region) as out_ivs:
                        g = first_channel = None
                        if grouped:
                            g = kb.alu("div", m, kb.index(out_per_group))
                            first_channel = kb.alu("mul", g, kb.index(group_channels))
                        pixels = _block_pixels(kb, region, out_ivs)
                        lanes = list(itertools.product(block_channels, pixels))
                        accs = [kb.define_acc(0, accumulator_type(element_type)) for _ in lanes]
                        with kb.loop_nest([group_channels, *kernel]) as (c, *taps):
                            channel = c if first_channel is None else kb.alu("add", first_channel, c)
                            xs = [input_term(region.windows, n, channel, pixel, taps) for pixel in pixels]
                            ws = [weight_term(mj, g, channel, c, taps) for mj in block_channels]
                            for acc, (wv, xv) in zip(accs, itertools.product(ws, xs)):  # as `lanes`
                                kb.mulacc(acc, xv, wv)
                        for acc, (mj, pixel) in zip(accs, lanes):
                            value = kb.cast(kb.acc_get(acc), element_type)
                            if bias is not None:
                                value = kb.alu("add", value, kb.load(bias, [mj]))
                            kb.store(value, y, [n, mj, *pixel])
    return y





MIN_REDUCTION = 32
"""Fewer products per output than this, at unit stride, keep a Conv out of the channel-lane form."""


@dataclass(frozen=True)
class VectorConv:
    """How Convs are laid out for a target with vector registers (`onnx-to-uop{conv-lanes=L
    conv-tile=P}`): each form is scalar uop code shaped so that `vectorize` turns one loop into
    L-lane vectors with P independent vector accumulators (a register tile of P × L outputs).
    X is always copied into a zero-bordered buffer first, so no load needs a padding check.

    * **pixel lanes** (unit stride, no groups, output rows of at least L): output rows are the
      vector loop (the inputs of a tap are consecutive, the stores too), P output channels per
      tile, each weight broadcast;
    * **channel lanes** (other Convs whose groups have 8 or more output channels, constant
      weights): the loop over a block of L output channels is the vector loop, around a tile of
      up to P output pixels (`LaneConv`): weights repacked as W'[m / L, c, k…, m % L] are
      consecutive across it, each input is broadcast, whatever the stride (stores scatter);
    * **depthwise rows** (one input channel per output channel): each output row one loop,
      vectorized along the row;
    * otherwise the scalar form.
    """

    lanes: int
    tile: int

    def form(self, group: int, out_per_group: int, reduction: int, strides: Sequence[int], row: int) -> str:
        unit_stride = all(s == 1 for s in strides)
        if group == 1 and unit_stride and row >= self.lanes:
            return "pixel lanes"
        if out_per_group == 1 and group > 1:
            return "depthwise rows"
        if out_per_group % 8 == 0 and (reduction >= MIN_REDUCTION or not unit_stride):
            return "channel lanes"
        return "scalar"

    def channel_lanes(self, out_per_group: int) -> tuple[int, int]:
        """(lanes, pixels) of the channel-lane form: 16 lanes, or 8 with twice the pixels when
        the channels do not split into 16s."""
        lanes = self.lanes if out_per_group % self.lanes == 0 else 8
        return lanes, self.tile * self.lanes // lanes


def _constant_tensor(layout: Layout) -> np.ndarray | None:
    """The values behind `layout` when it is a whole constant buffer, else None."""
    owner = layout.buffer.owner
    if not (isinstance(owner, uop.DefineGlobalOp) and owner.value is not None and layout.covers_buffer()):
        return None
    if not layout.is_contiguous():
        return None
    return attr_to_array(owner.value).reshape(layout.shape)


def _packed_weights(kb: KernelBuilder, weights: np.ndarray, lanes: int, name: str) -> Layout:
    """W[m, c, k…] as a new constant W'[m / lanes, c, k…, m % lanes]."""
    blocks = weights.reshape(weights.shape[0] // lanes, lanes, *weights.shape[1:])
    packed = np.ascontiguousarray(np.moveaxis(blocks, 1, -1))
    return kb.constant(name, packed, tensor_element_type(kb.op.operands[1]))


def _padded_input(kb: KernelBuilder, x: Layout, windows: Sequence[Window], name: str) -> tuple[Layout, list[Window]]:
    """X copied into a zero-bordered buffer (the pads made real), and the windows over it,
    which need no checks; X itself and unpadded windows when there are no pads."""
    if not any(w.pad_begin or w.pad_end for w in windows):
        return x, list(windows)
    sizes = [w.in_size + w.pad_begin + w.pad_end for w in windows]
    padded = kb.alloc(name, [*x.shape[:2], *sizes], x.element_type)
    # X into the interior, an element-wise copy at the identity index of the interior view (so
    # fuse-loops can move it into X's producer, whose stores then land there directly); then
    # zeros in the border slabs, which the copy does not touch. No per-element checks.
    offset = sum(w.pad_begin * stride for w, stride in zip(windows, padded.strides[2:]))
    interior = Layout(padded.buffer, x.shape, padded.strides, offset)
    with kb.loop_nest(x.shape) as indices:
        kb.store(kb.load(x, indices), interior, indices)
    zero = kb.const(0, x.element_type)
    for d, w in enumerate(windows):
        for start, end in ((0, w.pad_begin), (w.pad_begin + w.in_size, sizes[d])):
            if start < end:
                slab = padded.slice(2 + d, start, 1, end - start)
                with kb.loop_nest(slab.shape) as indices:
                    kb.store(zero, slab, indices)
    inner = [replace(w, in_size=size, pad_begin=0, pad_end=0) for w, size in zip(windows, sizes)]
    return padded, inner


@dataclass(frozen=True)
class TilePiece:
    """A box of outputs, [start, end) per spatial dimension, computed in tiles of `tile`
    outputs per dimension (every extent a multiple of its tile)."""

    bounds: tuple[tuple[int, int], ...]
    tile: tuple[int, ...]

    @property
    def blocks(self) -> int:
        return math.prod((end - start) // t for (start, end), t in zip(self.bounds, self.tile))


def tile_pieces(out_spatial: Sequence[int], tile: Sequence[int]) -> list[TilePiece]:
    """The output box split into pieces whose extents are multiples of their tiles: along
    each dimension the largest multiple of `tile` first, then the rest as one smaller tile."""
    pieces = [TilePiece((), ())]
    for size, t in zip(out_spatial, tile):
        whole = size - size % t
        spans = [(0, whole, t), (whole, size, size - whole)]
        pieces = [
            TilePiece((*p.bounds, (start, end)), (*p.tile, step))
            for p in pieces
            for start, end, step in spans
            if start < end
        ]
    return pieces


def best_tile(out_spatial: Sequence[int], most: int) -> tuple[int, ...]:
    """The tile of at most `most` outputs, over the last two spatial dimensions, that covers
    the output box at the lowest cost: a tile of k outputs takes about max(k, `most` - 1)
    steps per reduction step (k vector FMAs chains; fewer leave the FMA latency exposed)."""
    rank = len(out_spatial)
    rows = out_spatial[-2] if rank >= 2 else 1
    candidates = [
        (1,) * (rank - 2) + (r, q) if rank >= 2 else (q,)
        for r in range(1, min(most, rows) + 1)
        for q in range(1, min(most // r, out_spatial[-1]) + 1)
    ]

    def cost(tile: tuple[int, ...]) -> tuple[int, int]:
        total = sum(p.blocks * max(math.prod(p.tile), most - 1) for p in tile_pieces(out_spatial, tile))
        return total, -math.prod(tile)

    return min(candidates, key=cost)


@contextmanager
def _reduction_loops(kb: KernelBuilder, channels: int, kernel: Sequence[int]) -> Iterator[tuple[SSAValue, list[SSAValue]]]:
    """Loops over the input channels and the taps, the channels innermost when there are at
    least as many of them as taps: the innermost loop is the long one (a 3-iteration loop
    costs a mispredicted exit every 3 steps)."""
    if channels >= math.prod(kernel):
        with kb.loop_nest([*kernel, channels]) as (*taps, c):
            yield c, taps
    else:
        with kb.loop_nest([channels, *kernel]) as (c, *taps):
            yield c, taps


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

    def build(self, pixels: int) -> None:
        kb, out_shape = self.kb, self.y.shape
        pieces = tile_pieces(out_shape[2:], best_tile(out_shape[2:], pixels))
        with kb.loop(out_shape[0]) as n, kb.loop(out_shape[1] // self.lanes) as block:
            first_out = kb.alu("mul", block, kb.index(self.lanes))
            first_channel = None
            if out_shape[1] > self.out_per_group:  # grouped: a block lies in one group
                group = kb.alu("div", first_out, kb.index(self.out_per_group))
                first_channel = kb.alu("mul", group, kb.index(self.group_channels))
            for piece in pieces:
                with contextlib.ExitStack() as stack:
                    corner = [
                        stack.enter_context(kb.loop(end, start, step))
                        for (start, end), step in zip(piece.bounds, piece.tile)
                    ]
                    offsets = [_offsets(kb, iv, t) for iv, t in zip(corner, piece.tile)]
                    outputs = [list(p) for p in itertools.product(*offsets)]
                    self.tile(n, block, first_out, first_channel, outputs)

    def tile(self, n, block, first_out, first_channel, outputs: list[list[SSAValue]]) -> None:
        """The loop over a block's output channels around one accumulator per output of the
        tile, the reduction and the stores."""
        kb, element_type = self.kb, self.y.element_type
        kernel = [w.kernel for w in self.windows]
        with kb.loop(self.lanes) as lane:
            m = kb.alu("add", first_out, lane)
            accs = [kb.define_acc(0, accumulator_type(element_type)) for _ in outputs]
            with _reduction_loops(kb, self.group_channels, kernel) as (c, taps):
                channel = c if first_channel is None else kb.alu("add", first_channel, c)
                w = kb.load(self.packed, [block, c, *taps, lane])
                for acc, pixel in zip(accs, outputs):
                    positions = tap_positions(kb, self.windows, pixel, taps)
                    kb.mulacc(acc, kb.load(self.x, [n, channel, *positions]), w)
            for acc, pixel in zip(accs, outputs):
                value = kb.cast(kb.acc_get(acc), element_type)
                if self.bias is not None:
                    value = kb.alu("add", value, kb.load(self.bias, [m]))
                kb.store(value, self.y, [n, m, *pixel])


def _offsets(kb: KernelBuilder, base: SSAValue, count: int) -> list[SSAValue]:
    """base, base + 1, …, base + count - 1."""
    return [base, *(kb.alu("add", base, kb.index(j)) for j in range(1, count))]


def _plain_weights(kb: KernelBuilder, w: Layout) -> WeightTerm:
    """W[m, c, k…], the weights of Conv and DeformConv."""
    return lambda m, g, channel, c, taps: kb.load(w, [m, c, *taps])


def _block_pixels(kb: KernelBuilder, region: Region, out_ivs: list[SSAValue]) -> list[list[SSAValue]]:
    """The output positions of one iteration of `region`'s loops: its pixel block."""
    if region.pixel_block == 1:
        return [out_ivs]
    *outer, last = out_ivs
    return [[*outer, o] for o in _offsets(kb, last, region.pixel_block)]


@contextmanager
def _region_loops(kb: KernelBuilder, region: Region) -> Iterator[list[SSAValue]]:
    """Nested loops over the box of `region` (outermost first), the last by its pixel block."""
    steps = [1] * (len(region.bounds) - 1) + [region.pixel_block]
    with contextlib.ExitStack() as stack:
        yield [
            stack.enter_context(kb.loop(end, start, step))
            for (start, end), step in zip(region.bounds, steps)
        ]


def _conv_group(op: Operation, x: Layout, w: Layout) -> int:
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


def _check_groups(channels: int, out_channels: int, group: int, group_channels: int) -> None:
    if channels != group_channels * group or out_channels % group:
        raise ValueError(
            f"{channels} input and {out_channels} output channels do not split into "
            f"{group} groups of {group_channels} input channels"
        )


class ConvLowering(OnnxLowering):
    """`Conv` over any number of spatial dimensions, with groups (depthwise included) and bias.

    Y[n, m, o…] = B[m] + Σ_{c, k…} X[n, g·Cg + c, o·stride + k·dilation - pad…] · W[m, c, k…]
    where g = m / (M / group) is the group of output channel m and Cg = C / group.

    With `vector` (targets with vector registers), the forms of `VectorConv`.
    """

    op_names = frozenset({"onnx.Conv"})

    def __init__(self, vector: VectorConv | None = None):
        super().__init__()
        self.vector = vector

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x, w = layout_of(input_value(op, 0)), layout_of(input_value(op, 1))
        out_shape = tensor_shape(op.results[0])
        group = _conv_group(op, x, w)
        out_channels, group_channels = w.shape[0], w.shape[1]
        _check_groups(x.shape[1], out_channels, group, group_channels)
        kernel = list(w.shape[2:])
        windows = sliding_windows(op, x.shape[2:], kernel, out_shape[2:])
        out_per_group = out_channels // group

        form = "scalar"
        if self.vector is not None:
            strides = [window.stride for window in windows]
            reduction = group_channels * math.prod(kernel)
            form = self.vector.form(group, out_per_group, reduction, strides, out_shape[-1])
        weights = _constant_tensor(w) if form == "channel lanes" else None
        if form == "channel lanes" and weights is None:
            form = "scalar"
        if form != "scalar":
            x, windows = _padded_input(kb, x, windows, f"{result_name(op)}_padded")
        if form == "channel lanes":
            lanes, pixels = self.vector.channel_lanes(out_per_group)
            packed = _packed_weights(kb, weights, lanes, f"{result_name(op)}_packed_weights")
            y = kb.alloc(result_name(op), out_shape, tensor_element_type(op.results[0]))
            bias = input_value(op, 2)
            bias = layout_of(bias) if bias is not None else None
            LaneConv(kb, x, y, windows, bias, packed, group_channels, out_per_group, lanes).build(pixels)
            return [y]

        def input_term(windows, n, channel, out_ivs, taps):
            positions = tap_positions(kb, windows, out_ivs, taps)
            return load_window(kb, x, [n, channel], windows, positions, 0)[0]

        # Padded rows are single unchecked loops: no pixel blocks (vectorize takes the row).
        pixel_block = PIXEL_BLOCK if form == "scalar" else 1
        channel_tile = self.vector.tile if form == "pixel lanes" else None
        return [
            _convolve(
                op, kb, group_channels, out_per_group, kernel, window_regions(windows), input_term,
                _plain_weights(kb, w), pixel_block=pixel_block, channel_tile=channel_tile,
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
        group = _conv_group(op, x, w)
        channels, out_per_group = w.shape[0], w.shape[1]
        _check_groups(x.shape[1], out_shape[1], group, channels // group)
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
            _convolve(op, kb, group_channels, out_per_group, kernel, regions, input_term, weight_term)
        ]


# ---------------------------------------------------------------------------------------------
# DeformConv
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SampledWindow(Window):
    """A dimension read at data-dependent positions (DeformConv's bilinear corners): both
    bounds are always checked."""

    @property
    def lowest(self) -> int:
        return -1

    @property
    def highest(self) -> int:
        return self.in_size


def _bilinear(
    kb: KernelBuilder,
    source: Layout,
    leading: Sequence[SSAValue],
    positions: Sequence[SSAValue],
    compute_type,
) -> SSAValue:
    """`source[*leading, p…]` interpolated (multi)linearly at the float positions p…, corners
    outside the input reading 0 (GridSample with align_corners=1 and zero padding)."""
    sizes = source.shape[len(leading) :]
    one = kb.const(1.0, compute_type)
    lower, fractions = [], []
    for pos, size in zip(positions, sizes, strict=True):
        # Past [-1, size] every corner is outside: clamping there keeps the float → index
        # conversion in range without changing the result.
        pos = kb.alu("min", kb.alu("max", pos, kb.const(-1.0, compute_type)), kb.const(float(size), compute_type))
        floor = kb.alu("floor", pos)
        lower.append(kb.cast(floor, IndexType()))
        fractions.append(kb.alu("sub", pos, floor))
    windows = [SampledWindow(size, 1, 1) for size in sizes]
    total = None
    for corner in itertools.product((0, 1), repeat=len(sizes)):
        weight, indices = None, []
        for upper, base, fraction in zip(corner, lower, fractions):
            factor = fraction if upper else kb.alu("sub", one, fraction)
            weight = factor if weight is None else kb.alu("mul", weight, factor)
            indices.append(kb.alu("add", base, kb.index(1)) if upper else base)
        value, _ = load_window(kb, source, leading, windows, indices, 0)
        term = kb.alu("mul", weight, kb.cast(value, compute_type))
        total = term if total is None else kb.alu("add", total, term)
    assert total is not None
    return total


class DeformConvLowering(OnnxLowering):
    """`DeformConv`: a Conv whose taps are shifted by per-output offsets and scaled by a mask.

    Tap k of output o in input channel c samples X bilinearly at o·stride - pad + k·dilation +
    offset[n, og, k…, d, o…] (og = c / (C / offset_group), `offset` read as
    (N, offset_group, k…, rank, o…)) and is weighted by mask[n, og, k…, o…] (1 if absent).
    """

    op_names = frozenset({"onnx.DeformConv"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x, w = layout_of(input_value(op, 0)), layout_of(input_value(op, 1))
        offset_value, mask_value = input_value(op, 2), input_value(op, 4)
        out_shape = tensor_shape(op.results[0])
        element_type = tensor_element_type(op.results[0])
        if not isinstance(element_type, AnyFloat):
            raise ValueError(f"DeformConv on {element_type} is not defined")
        group = _conv_group(op, x, w)
        out_channels, group_channels = w.shape[0], w.shape[1]
        channels = x.shape[1]
        _check_groups(channels, out_channels, group, group_channels)
        offset_group = get_attr(op, "offset_group")
        if offset_group <= 0 or channels % offset_group:
            raise ValueError(f"{channels} channels do not split into {offset_group} offset groups")
        kernel = list(w.shape[2:])
        rank = len(kernel)
        windows = sliding_windows(op, x.shape[2:], kernel, out_shape[2:])
        batch, spatial = out_shape[0], list(out_shape[2:])
        offset = layout_of(offset_value).reshape([batch, offset_group, *kernel, rank, *spatial])
        mask = None
        if mask_value is not None:
            mask = layout_of(mask_value).reshape([batch, offset_group, *kernel, *spatial])
        if offset is None or (mask_value is not None and mask is None):
            raise NotImplementedError("offset and mask must be dense row-major tensors")
        ct = accumulator_type(element_type)
        per_offset_group = channels // offset_group

        def input_term(windows, n, channel, out_ivs, taps):
            og = kb.alu("div", channel, kb.index(per_offset_group))
            positions = []
            for d, pos in enumerate(tap_positions(kb, windows, out_ivs, taps)):
                shift = kb.load(offset, [n, og, *taps, kb.index(d), *out_ivs])
                positions.append(kb.alu("add", kb.cast(pos, ct), kb.cast(shift, ct)))
            sample = _bilinear(kb, x, [n, channel], positions, ct)
            if mask is not None:
                sample = kb.alu("mul", sample, kb.cast(kb.load(mask, [n, og, *taps, *out_ivs]), ct))
            return sample

        regions = [Region.whole(windows)]
        out_per_group = out_channels // group
        weight_term = _plain_weights(kb, w)
        return [
            _convolve(op, kb, group_channels, out_per_group, kernel, regions, input_term, weight_term, 3)
        ]


PATTERNS = (ConvLowering(), ConvTransposeLowering(), DeformConvLowering())

__all__ = [
    "PATTERNS",
    "VectorConv",
    "ConvLowering",
    "ConvTransposeLowering",
    "DeformConvLowering",
    "Region",
    "SampledWindow",
    "TransposedWindow",
    "Window",
    "interior",
    "load_window",
    "sliding_windows",
    "tap_positions",
    "transposed_positions",
    "transposed_windows",
    "window_regions",
    "within",
]
