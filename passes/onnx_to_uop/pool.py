"""Pooling: MaxPool (and its Indices), AveragePool, LpPool, GlobalMaxPool, GlobalAveragePool
over N spatial dimensions, and MaxUnpool.

One loop nest over the output (n, c, o…), an accumulator reduced over the kernel taps (k…);
the window arithmetic (pads, strides, dilations, auto_pad, ceil_mode) is shared with Conv
(`windows.py`). A global pool is the same kernel with one window covering the whole input.

Padded positions never contribute to a max (they read -inf). A float MaxPool computes what the
ONNX reference does: the window's first tap inside the input, then each tap that compares
greater (a NaN tap is skipped unless it is that first one, which then stays): one compare and
select per tap, no NaN-propagating max (which a Cortex-M4 calls `fmaxf` for). GlobalMaxPool's
reference propagates every NaN, and so does its `uop.max`. For an average, the divisor counts
the taps inside the input (count_include_pad=0) or inside the input plus its explicit pads
(count_include_pad=1); taps that ceil_mode lets hang past the end pad are never counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import AnyFloat, IndexType
from xdsl.ir import Operation, SSAValue
from zant.dialects.onnx import get_attr, input_value, outputs
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.parameters import check_values, constant_indices, data_index
from zant.passes.onnx_to_uop.windows import (
    Window,
    load_window,
    sliding_windows,
    tap_positions,
    within,
)
from zant.passes.onnx_to_uop.kernel import (
    CHANNELS_LAST,
    KernelBuilder,
    Layout,
    channels_last_order,
    contiguous_strides,
    layout_of,
    lowest_value,
    result_layout,
    tensor_element_type,
    tensor_shape,
)


def _lp_term(kb: KernelBuilder, value: SSAValue, p: int) -> SSAValue:
    """|x|^p, by multiplication for the usual p = 1, 2."""
    if p == 2:
        return kb.alu("mul", value, value)
    magnitude = kb.alu("abs", value)
    if p == 1:
        return magnitude
    return kb.alu("pow", magnitude, kb.const(float(p), value.type))


def _lp_root(kb: KernelBuilder, total: SSAValue, p: int) -> SSAValue:
    """total^(1/p)."""
    if p == 1:
        return total
    if p == 2:
        return kb.alu("sqrt", total)
    return kb.alu("pow", total, kb.const(1.0 / p, total.type))


def _lower_pool(
    op: Operation,
    kb: KernelBuilder,
    windows: Sequence[Window],
    kind: str,
    count_include_pad: bool = False,
    p: int = 2,
    skip_nan: bool = False,
) -> list[Layout]:
    """`kind` is "max", "avg" or "lp" (the p-norm of the window); X and Y are (N, C, spatial…).
    `skip_nan`: a float max starts at the window's first tap inside the input and takes each
    tap that compares greater (MaxPool's reference) instead of propagating every NaN."""
    x = layout_of(input_value(op, 0))
    out_shape = tensor_shape(op.results[0])
    element_type = tensor_element_type(op.results[0])
    if kind != "max" and not isinstance(element_type, AnyFloat):
        raise ValueError(f"{kind} pooling of {element_type} is not defined")
    kernel = [w.kernel for w in windows]
    fill = lowest_value(element_type) if kind == "max" else 0
    combine = "max" if kind == "max" else "add"
    # The taps an average divides by lie in [low, high) per dimension; when every tap of the
    # loop nest does, the divisor is the constant kernel size, else a second accumulator.
    if count_include_pad:
        low, high = [-w.pad_begin for w in windows], [w.in_size + w.pad_end for w in windows]
    else:
        low, high = [0] * len(windows), [w.in_size for w in windows]
    constant_count = all(
        w.lowest >= lo and w.highest < hi for w, lo, hi in zip(windows, low, high)
    )

    # Marked channels-last (`assign-host-layouts`: X is then channels-last too), the outputs are
    # walked in memory order, channels innermost: each tap of a run of channels is one run of X.
    y = result_layout(kb, op, result_name(op), out_shape, element_type)
    order = channels_last_order(len(out_shape)) if CHANNELS_LAST in op.attributes else list(range(len(out_shape)))
    walked_y = y.permute(order)
    with kb.loop_nest(walked_y.shape) as walked:
        n, c, *out_ivs = (walked[order.index(d)] for d in range(len(out_shape)))
        acc = kb.define_acc(fill, element_type)
        skip = kind == "max" and skip_nan and isinstance(element_type, AnyFloat)
        if skip:
            first = tap_positions(kb, windows, out_ivs, _first_inside_taps(kb, windows, out_ivs))
            kb.acc_set(acc, load_window(kb, x, [n, c], windows, first, fill)[0])
        count = None
        if kind == "avg" and not constant_count:
            count = kb.define_acc(0, element_type)
        with kb.loop_nest(kernel) as taps:
            positions = tap_positions(kb, windows, out_ivs, taps)
            value, inside = load_window(kb, x, [n, c], windows, positions, fill)
            if kind == "lp":
                value = _lp_term(kb, value, p)
            if skip:
                greater = kb.alu("cmplt", kb.acc_get(acc), value)  # false for a NaN value
                kb.acc_set(acc, kb.where(greater, value, kb.acc_get(acc)))
            else:
                kb.acc_set(acc, kb.alu(combine, kb.acc_get(acc), value))
            if count is not None:
                counted = within(kb, windows, positions, low, high) if count_include_pad else inside
                assert counted is not None
                one = kb.where(counted, kb.const(1, element_type), kb.const(0, element_type))
                kb.acc_set(count, kb.alu("add", kb.acc_get(count), one))
        result = kb.acc_get(acc)
        if kind == "avg":
            divisor = kb.acc_get(count) if count is not None else kb.const(math.prod(kernel), element_type)
            result = kb.alu("div", result, divisor)
        elif kind == "lp":
            result = _lp_root(kb, result, p)
        kb.store(result, walked_y, walked)  # the identity index of the walked view (fuse-loops)
    return [y]


def _first_inside_taps(kb: KernelBuilder, windows: Sequence[Window], out_ivs: Sequence[SSAValue]) -> list[SSAValue]:
    """Per dimension, the first tap of the window at `out_ivs` that reads inside the input:
    ceil(max(0, pad_begin - out·stride) / dilation); 0 where no window starts in the padding."""
    taps = []
    for w, out in zip(windows, out_ivs, strict=True):
        if w.lowest >= 0:
            taps.append(kb.index(0))
            continue
        start = out if w.stride == 1 else kb.alu("mul", out, kb.index(w.stride))
        before = kb.alu("max", kb.alu("sub", kb.index(w.pad_begin), start), kb.index(0))
        if w.dilation > 1:
            before = kb.alu("div", kb.alu("add", before, kb.index(w.dilation - 1)), kb.index(w.dilation))
        taps.append(before)
    return taps


def _index_strides(spatial: Sequence[int], column_major: bool) -> list[int]:
    """Strides of a flat index over the spatial dims: row-major, or first dimension fastest."""
    if not column_major:
        return list(contiguous_strides(spatial))
    return [math.prod(spatial[:d]) for d in range(len(spatial))]


def _lower_max_pool_with_indices(
    op: Operation, kb: KernelBuilder, windows: Sequence[Window], column_major: bool
) -> list[Layout]:
    """MaxPool with its Indices output: the flat index into X of each window's first maximum,
    `(n·C + c)·S + spatial index` (S the spatial size; `column_major` is storage_order=1)."""
    x = layout_of(input_value(op, 0))
    out_shape = tensor_shape(op.results[0])
    element_type = tensor_element_type(op.results[0])
    index_type = tensor_element_type(op.results[1])
    channels, spatial = x.shape[1], x.shape[2:]
    strides = _index_strides(spatial, column_major)
    fill = lowest_value(element_type)

    y = kb.alloc(result_name(op, 0), out_shape, element_type)
    indices = kb.alloc(result_name(op, 1), out_shape, index_type)
    with kb.loop_nest(out_shape) as (n, c, *out_ivs):
        plane = kb.alu("add", kb.alu("mul", n, kb.index(channels)), c)
        base = kb.alu("mul", plane, kb.index(math.prod(spatial)))
        best = kb.define_acc(fill, element_type)
        # -1 until the first tap inside X: a window of values all equal to `fill` still
        # reports where its first one is.
        best_index = kb.define_acc(-1, IndexType())
        with kb.loop_nest([w.kernel for w in windows]) as taps:
            positions = tap_positions(kb, windows, out_ivs, taps)
            value, inside = load_window(kb, x, [n, c], windows, positions, fill)
            unset = kb.alu("cmplt", kb.acc_get(best_index), kb.index(0))
            better = kb.alu("or", kb.alu("cmplt", kb.acc_get(best), value), unset)
            if inside is not None:
                better = kb.alu("and", better, inside)
            flat = base
            for pos, stride in zip(positions, strides):
                flat = kb.alu("add", flat, kb.alu("mul", pos, kb.index(stride)))
            kb.acc_set(best, kb.where(better, value, kb.acc_get(best)))
            kb.acc_set(best_index, kb.where(better, flat, kb.acc_get(best_index)))
        kb.store(kb.acc_get(best), y, [n, c, *out_ivs])
        kb.store(kb.cast(kb.acc_get(best_index), index_type), indices, [n, c, *out_ivs])
    return [y, indices]


def _windows(op: Operation, x_shape: Sequence[int], out_shape: Sequence[int]) -> list[Window]:
    kernel = get_attr(op, "kernel_shape")
    if len(kernel) != len(x_shape) - 2:
        raise ValueError(f"kernel_shape {kernel} does not fit an input of shape {tuple(x_shape)}")
    return sliding_windows(op, x_shape[2:], kernel, out_shape[2:], bool(get_attr(op, "ceil_mode")))


class MaxPoolLowering(OnnxLowering):
    """`MaxPool`, with its optional Indices output (storage_order 0 or 1)."""

    op_names = frozenset({"onnx.MaxPool"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x_shape = tensor_shape(input_value(op, 0))
        windows = _windows(op, x_shape, tensor_shape(op.results[0]))
        if outputs(op)[0] is None:
            raise NotImplementedError("MaxPool with Indices but without Y is not supported")
        if len(op.results) == 1:
            return _lower_pool(op, kb, windows, "max", skip_nan=True)
        storage_order = get_attr(op, "storage_order")
        if storage_order not in (0, 1):
            raise ValueError(f"storage_order {storage_order}, expected 0 or 1")
        return _lower_max_pool_with_indices(op, kb, windows, storage_order == 1)


class AveragePoolLowering(OnnxLowering):
    """`AveragePool`, with count_include_pad 0 or 1."""

    op_names = frozenset({"onnx.AveragePool"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x_shape = tensor_shape(input_value(op, 0))
        windows = _windows(op, x_shape, tensor_shape(op.results[0]))
        return _lower_pool(op, kb, windows, "avg", bool(get_attr(op, "count_include_pad")))


class LpPoolLowering(OnnxLowering):
    """`LpPool`: (Σ |x|^p)^(1/p) over each window; padding contributes nothing."""

    op_names = frozenset({"onnx.LpPool"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        p = get_attr(op, "p")
        if p <= 0:
            raise ValueError(f"p = {p}, expected a positive integer")
        x_shape = tensor_shape(input_value(op, 0))
        windows = _windows(op, x_shape, tensor_shape(op.results[0]))
        return _lower_pool(op, kb, windows, "lp", p=p)


def _unravel(kb: KernelBuilder, flat: SSAValue, shape: Sequence[int]) -> list[SSAValue]:
    """The row-major coordinates of index `flat` in `shape`."""
    coordinates = []
    for dim in reversed(shape[1:]):
        size = kb.index(dim)
        coordinates.append(kb.alu("rem", flat, size))
        flat = kb.alu("div", flat, size)
    return [flat, *reversed(coordinates)]


class MaxUnpoolLowering(OnnxLowering):
    """`MaxUnpool`: zero but for `Y.flat[I[i]] = X[i]` (I as MaxPool's Indices give them).

    I indexes the shape MaxPool's attributes infer, `(in - 1)·stride - pads + kernel`; a larger
    output_shape (a constant, so shape inference knows Y's shape) pads that block with zeros at
    the end of each dimension, as the node tests and the reference do. Indices outside the block
    are a compile error (constant) or `STATUS_BAD_INDEX` before any write (`uop.bound_index`).
    """

    op_names = frozenset({"onnx.MaxUnpool"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x, indices = layout_of(input_value(op, 0)), layout_of(input_value(op, 1))
        if x.shape != indices.shape or x.rank < 3:
            raise ValueError(f"expected X and I of one shape (N, C, …), got {x.shape} and {indices.shape}")
        out_shape = tensor_shape(op.results[0])
        element_type = tensor_element_type(op.results[0])
        kernel = get_attr(op, "kernel_shape")
        rank = len(kernel)
        strides = get_attr(op, "strides") or [1] * rank
        pads = get_attr(op, "pads") or [0] * (2 * rank)
        block = (*x.shape[:2], *(
            (size - 1) * stride - pads[d] - pads[rank + d] + k
            for d, (size, stride, k) in enumerate(zip(x.shape[2:], strides, kernel))
        ))
        if len(out_shape) != len(block) or any(b > o for b, o in zip(block, out_shape)):
            raise ValueError(f"output shape {out_shape} does not hold the unpooled {block}")
        check_values(kb, op, 2, out_shape, "output_shape")  # when only known at run time

        known = constant_indices(op, 1, math.prod(block), nonnegative=True)
        y = kb.alloc(result_name(op), out_shape, element_type)
        flat_y = Layout.contiguous(y.buffer, (y.size,))
        zero = kb.const(0, element_type)
        with kb.loop(y.size) as i:
            kb.store(zero, flat_y, [i])
        with kb.loop_nest(x.shape) as ivs:
            target = data_index(kb, kb.load(indices, ivs), math.prod(block), known, nonnegative=True)
            if block == out_shape:
                kb.store(kb.load(x, ivs), flat_y, [target])
            else:
                kb.store(kb.load(x, ivs), y, _unravel(kb, target, block))
        return [y]


class GlobalPoolLowering(OnnxLowering):
    """`GlobalMaxPool` / `GlobalAveragePool`: one window over all spatial dimensions."""

    op_names = frozenset({"onnx.GlobalMaxPool", "onnx.GlobalAveragePool"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x_shape = tensor_shape(input_value(op, 0))
        if len(x_shape) < 3:
            raise ValueError(f"expected an input of rank ≥ 3, got shape {x_shape}")
        windows = [Window(size, 1, size) for size in x_shape[2:]]
        kind = "max" if op.name == "onnx.GlobalMaxPool" else "avg"
        return _lower_pool(op, kb, windows, kind)


PATTERNS = (
    MaxPoolLowering(),
    AveragePoolLowering(),
    LpPoolLowering(),
    MaxUnpoolLowering(),
    GlobalPoolLowering(),
)
