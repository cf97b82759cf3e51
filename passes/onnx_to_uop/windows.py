"""Sliding-window arithmetic shared by Conv, ConvTranspose, DeformConv, the pools, the integer
convolutions (`quant.py`) and LRN (`norm.py`).

A sliding window over one spatial dimension reads input position

    pos = out·stride + tap·dilation - pad_begin

for every output index `out` and kernel tap `tap`. Padding is never materialized: a position
outside the input reads a fill value instead (0 for Conv and AveragePool, -inf for MaxPool). The
position is clamped into the input before the gep, so every address stays inside the buffer, and
`uop.where` picks the fill. A bound that no (out, tap) pair of the whole loop nest can cross gets
no check at all, so unpadded windows are plain loads.

`window_regions` splits an output box into the outputs whose whole window lies inside the input
(the interior, plain strided loads) and the border around it (checked loads), so the checks run
only where a tap can reach the padding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from xdsl.ir import Operation, SSAValue
from zant.dialects.onnx import get_attr
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout

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
        elif auto_pad == "VALID":  # a pool's ceil_mode rounds up here too (SAME_* ignore it)
            begin = end = 0
            expected = _expected_out_size(in_size, extent, stride, 0, 0, ceil_mode)
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
    row_block: int = 1
    """Outputs of the dimension before the last computed per iteration (that loop steps by it)."""

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


def row_blocked(region: Region, block: int) -> list[Region]:
    """`region` with the dimension before its last in steps of `block` outputs, and the
    remainder (as `pixel_blocked` does for the last dimension)."""
    if block == 1 or len(region.bounds) < 2:
        return [region]
    start, end = region.bounds[-2]
    split = start + (end - start) // block * block
    parts = []
    for first, last, step in ((start, split, block), (split, end, 1)):
        if first < last:
            window = replace(region.windows[-2], first_out=first, out_size=last)
            bounds = (*region.bounds[:-2], (first, last), region.bounds[-1])
            parts.append(replace(region, bounds=bounds, windows=(*region.windows[:-2], window, region.windows[-1]), row_block=step))
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


__all__ = [
    "Region",
    "SampledWindow",
    "TransposedWindow",
    "Window",
    "interior",
    "load_window",
    "pixel_blocked",
    "row_blocked",
    "sliding_windows",
    "tap_positions",
    "transposed_positions",
    "transposed_windows",
    "window_regions",
    "within",
]
