"""DeformConv: a Conv (`conv.convolve`) whose taps sample the input bilinearly at
data-dependent positions."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from xdsl.dialects.builtin import AnyFloat, IndexType
from xdsl.ir import Operation, SSAValue
from zant.dialects.onnx import DeformConvOp, get_attr, input_value
from zant.passes.onnx_to_uop.base import OnnxLowering
from zant.passes.onnx_to_uop.conv import check_groups, conv_group, convolve, plain_weights
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    accumulator_type,
    layout_of,
    tensor_element_type,
    tensor_shape,
)
from zant.passes.onnx_to_uop.windows import (
    Region,
    SampledWindow,
    load_window,
    sliding_windows,
    tap_positions,
)

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

    op_names = frozenset({DeformConvOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x, w = layout_of(input_value(op, 0)), layout_of(input_value(op, 1))
        offset_value, mask_value = input_value(op, 2), input_value(op, 4)
        out_shape = tensor_shape(op.results[0])
        element_type = tensor_element_type(op.results[0])
        if not isinstance(element_type, AnyFloat):
            raise ValueError(f"DeformConv on {element_type} is not defined")
        group = conv_group(op, x, w)
        out_channels, group_channels = w.shape[0], w.shape[1]
        channels = x.shape[1]
        check_groups(channels, out_channels, group, group_channels)
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
        weight_term = plain_weights(kb, w)
        return [
            convolve(op, kb, group_channels, out_per_group, kernel, regions, input_term, weight_term, 3)
        ]



PATTERNS = (DeformConvLowering(),)

__all__ = ["PATTERNS", "DeformConvLowering"]
