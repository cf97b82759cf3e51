"""Convolution, and the sliding-window arithmetic it shares with the pools (`pool.py`).

A sliding window over one spatial dimension reads input position

    pos = out·stride + tap·dilation - pad_begin

for every output index `out` and kernel tap `tap`. Padding is never materialized: a position
outside the input reads a fill value instead (0 for Conv and AveragePool, -inf for MaxPool). The
position is clamped into the input before the gep, so every address stays inside the buffer, and
`uop.where` picks the fill. A bound that no (out, tap) pair of the whole loop nest can cross gets
no check at all, so unpadded windows are plain loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from zant.dialects.onnx import get_attr, input_value
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

    @property
    def lowest(self) -> int:
        """The lowest input position any (out, tap) pair reads."""
        return -self.pad_begin

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
        elif auto_pad == "NOTSET":
            begin, end = pads[dim], pads[rank + dim]
            expected = _expected_out_size(in_size, extent, stride, begin, end, ceil_mode)
        else:
            raise ValueError(f"unknown auto_pad '{auto_pad}'")
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
) -> tuple[SSAValue, SSAValue | None]:
    """`source[*leading, *positions]`, or `fill` where a position is outside the input.

    Returns the value and the i1 saying it is inside (None when it always is). Positions are
    clamped before the gep, so the address is always inside the buffer.
    """
    valid = within(kb, windows, positions, [0] * len(windows), [w.in_size for w in windows])
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


# ---------------------------------------------------------------------------------------------
# Conv
# ---------------------------------------------------------------------------------------------


class ConvLowering(OnnxLowering):
    """`Conv` over any number of spatial dimensions, with groups (depthwise included) and bias.

    Y[n, m, o…] = B[m] + Σ_{c, k…} X[n, g·Cg + c, o·stride + k·dilation - pad…] · W[m, c, k…]
    where g = m / (M / group) is the group of output channel m and Cg = C / group.
    """

    op_names = frozenset({"onnx.Conv"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x, w = layout_of(input_value(op, 0)), layout_of(input_value(op, 1))
        bias_value = input_value(op, 2)
        bias = layout_of(bias_value) if bias_value is not None else None
        out_shape = tensor_shape(op.results[0])
        element_type = tensor_element_type(op.results[0])

        if x.rank < 3 or w.rank != x.rank:
            raise ValueError(f"expected X and W of one rank ≥ 3, got {x.shape} and {w.shape}")
        _, channels, *in_spatial = x.shape
        out_channels, group_channels, *kernel = w.shape
        group = get_attr(op, "group")
        if channels != group_channels * group or out_channels % group:
            raise ValueError(
                f"{channels} input and {out_channels} output channels do not split into "
                f"{group} groups of W's {group_channels} input channels"
            )
        kernel_shape = get_attr(op, "kernel_shape")
        if kernel_shape and list(kernel_shape) != kernel:
            raise ValueError(f"kernel_shape {kernel_shape} differs from W's {kernel}")
        windows = sliding_windows(op, in_spatial, kernel, out_shape[2:])
        out_per_group = out_channels // group

        y = kb.alloc(result_name(op), out_shape, element_type)
        with kb.loop_nest(out_shape) as (n, m, *out_ivs):
            first_channel = None
            if group > 1:
                g = kb.alu("div", m, kb.index(out_per_group))
                first_channel = kb.alu("mul", g, kb.index(group_channels))
            acc = kb.define_acc(0, accumulator_type(element_type))
            with kb.loop_nest([group_channels, *kernel]) as (c, *taps):
                channel = c if first_channel is None else kb.alu("add", first_channel, c)
                positions = tap_positions(kb, windows, out_ivs, taps)
                xv, _ = load_window(kb, x, [n, channel], windows, positions, 0)
                kb.mulacc(acc, xv, kb.load(w, [m, c, *taps]))
            value = kb.cast(kb.acc_get(acc), element_type)
            if bias is not None:
                value = kb.alu("add", value, kb.load(bias, [m]))
            kb.store(value, y, [n, m, *out_ivs])
        return [y]


PATTERNS = (ConvLowering(),)

__all__ = [
    "Window",
    "sliding_windows",
    "tap_positions",
    "within",
    "load_window",
    "ConvLowering",
    "PATTERNS",
]
