"""Normalizations: BatchNormalization (inference and training), Softmax / LogSoftmax / Hardmax along one
axis, and the statistics-based ones (Layer, RMS, Instance, Group, MeanVariance, Lp) and LRN.

BatchNormalization is element-wise once its per-channel operands are read through views that
broadcast them along every dimension but the channel one. Softmax is a row kernel: for each
index of the other dimensions, one pass for the maximum, one for the sum of exponentials
(writing them to the output), one to normalize.

Layer/RMS/Instance/Group/MeanVariance normalization share one kernel (`_normalize_groups`): the
input is viewed as (outer…, inner…) where each outer index is one normalized group (for
GroupNormalization the channel dimension is split into (groups, channels per group) by strides
alone); per group, one pass accumulates the mean (shifted by the group's first value, so that a
constant group normalizes to exactly 0), one the variance (or the mean square, for RMS), one writes `(x - mean) · invstd · scale + bias`. Statistics are computed in f32 for
16-bit floats (the ONNX `stash_type`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from xdsl.dialects.builtin import AnyFloat, IndexType
from xdsl.ir import Operation, SSAValue
from zant.dialects.onnx import get_attr, inputs, outputs
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.windows import Window, load_window, tap_positions
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    accumulator_type,
    layout_of,
    tensor_element_type,
    tensor_shape,
)


def _per_channel(layout: Layout, shape: tuple[int, ...]) -> Layout:
    """A (C,) tensor read at [n, c, d1, …] of `shape`: stride 0 everywhere but dimension 1."""
    if layout.shape != (shape[1],):
        raise ValueError(f"per-channel operand of shape {layout.shape}, expected ({shape[1]},)")
    strides = (0, layout.strides[0]) + (0,) * (len(shape) - 2)
    return replace(layout, shape=shape, strides=strides)


def _require_float(op: Operation) -> None:
    element_type = tensor_element_type(op.results[0])
    if not isinstance(element_type, AnyFloat):
        raise ValueError(f"{op.name} on {element_type} is not defined")


class BatchNormalizationLowering(OnnxLowering):
    """BatchNormalization: `y = scale[c] * (x - mean[c]) / sqrt(var[c] + eps) + B[c]`.

    In inference the statistics are the mean/var inputs. With training_mode=1 they are the
    batch's (over every dimension but the channel one, population variance), and the optional
    running_mean / running_var outputs are `input · momentum + batch · (1 - momentum)`.
    """

    op_names = frozenset({"onnx.BatchNormalization"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        training = bool(get_attr(op, "training_mode"))
        if not training and len(op.results) != 1:
            raise NotImplementedError("running mean/var outputs are only produced in training")
        if len(outputs(op)) > 3:
            raise NotImplementedError("the saved_mean/saved_var outputs (opset < 14) are not supported")
        _require_float(op)
        x, scale, bias, mean, var = inputs(op)
        shape = tensor_shape(op.results[0])
        if len(shape) < 2:
            raise ValueError(f"input of rank {len(shape)}, expected (N, C, …)")
        if training:
            return self._lower_training(op, kb, shape)
        x_layout = layout_of(x)
        scale_l, bias_l, mean_l, var_l = (
            _per_channel(layout_of(v), shape) for v in (scale, bias, mean, var)
        )
        element_type = tensor_element_type(op.results[0])
        out = kb.alloc(result_name(op), shape, element_type)
        epsilon = kb.const(get_attr(op, "epsilon"), element_type)
        with kb.loop_nest(shape) as ivs:
            std = kb.alu("sqrt", kb.alu("add", kb.load(var_l, ivs), epsilon))
            centered = kb.alu("sub", kb.load(x_layout, ivs), kb.load(mean_l, ivs))
            scaled = kb.alu("mul", kb.load(scale_l, ivs), centered)
            y = kb.alu("add", kb.alu("div", scaled, std), kb.load(bias_l, ivs))
            kb.store(y, out, ivs)
        return [out]

    @staticmethod
    def _lower_training(op: Operation, kb: KernelBuilder, shape: tuple[int, ...]) -> list[Layout]:
        x, scale, bias, mean, var = inputs(op)
        # Channel first: each channel is one normalized group of _normalize_groups.
        perm = [1, 0, *range(2, len(shape))]
        results = [
            kb.alloc(result_name(op, i), tensor_shape(r), tensor_element_type(r))
            for i, r in enumerate(op.results)
        ]
        named = dict(zip((v for v in outputs(op) if v is not None), results))
        running = [named.get(v) for v in (outputs(op) + [None, None])[1:3]]
        scale_l, bias_l = (_per_channel(layout_of(v), shape).permute(perm) for v in (scale, bias))
        _normalize_groups(
            kb,
            layout_of(x).permute(perm),
            results[0].permute(perm),
            1,
            get_attr(op, "epsilon"),
            scale=scale_l,
            bias=bias_l,
            mean_out=running[0],
            var_out=running[1],
        )
        # The batch statistics were stored into the running outputs; blend them in place.
        momentum = get_attr(op, "momentum")
        for out, stat in zip(running, (mean, var)):
            if out is None:
                continue
            ct = accumulator_type(out.element_type)
            stat_l = layout_of(stat)
            with kb.loop(shape[1]) as c:
                given = kb.alu("mul", kb.cast(kb.load(stat_l, [c]), ct), kb.const(momentum, ct))
                batch = kb.alu("mul", kb.cast(kb.load(out, [c]), ct), kb.const(1 - momentum, ct))
                kb.store(kb.cast(kb.alu("add", given, batch), out.element_type), out, [c])
        return results


class SoftmaxLowering(OnnxLowering):
    """Softmax and LogSoftmax along `axis` (opset ≥ 13), stabilized by subtracting the maximum.

    Softmax: `y = exp(x - max) / Σ exp(x - max)`; LogSoftmax: `y = x - max - log Σ exp(x - max)`.
    """

    op_names = frozenset({"onnx.Softmax", "onnx.LogSoftmax"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        _require_float(op)
        (x,) = inputs(op)
        shape = tensor_shape(op.results[0])
        rank = len(shape)
        axis = get_attr(op, "axis")
        if not -rank <= axis < rank:
            raise ValueError(f"axis {axis} out of range for rank {rank}")
        axis %= rank
        element_type = tensor_element_type(op.results[0])
        out = kb.alloc(result_name(op), shape, element_type)
        n = shape[axis]
        if n == 0:
            return [out]

        # Move `axis` last in both layouts, so a row is the innermost index.
        perm = [d for d in range(rank) if d != axis] + [axis]
        x_rows = layout_of(x).permute(perm)
        out_rows = out.permute(perm)
        log = op.name == "onnx.LogSoftmax"

        with kb.loop_nest(x_rows.shape[:-1]) as outer:
            maximum = kb.define_acc(0, element_type)
            kb.acc_set(maximum, kb.load(x_rows, [*outer, kb.index(0)]))
            with kb.loop(n, start=1) as k:
                kb.acc_set(maximum, kb.alu("max", kb.acc_get(maximum), kb.load(x_rows, [*outer, k])))

            # 16-bit exponentials are summed in f32 and the sum rounded once, as NumPy sums them
            # (ONNX's reference): an f16 running sum rounds at every step, 1-2 ulp off.
            sum_type = accumulator_type(element_type)
            total = kb.define_acc(0, sum_type)
            with kb.loop(n) as k:
                shifted = kb.alu("sub", kb.load(x_rows, [*outer, k]), kb.acc_get(maximum))
                exp = kb.alu("exp", shifted)
                if not log:
                    kb.store(exp, out_rows, [*outer, k])
                # A multiply-add by 1 (exact: the same sum) so that `vectorize` sums the row's
                # exponentials as a reduction, in vectors, instead of leaving the loop scalar.
                kb.mulacc(total, kb.cast(exp, sum_type), kb.const(1, sum_type))
            sum_ = kb.cast(kb.acc_get(total), element_type)

            with kb.loop(n) as k:
                if log:
                    shifted = kb.alu("sub", kb.load(x_rows, [*outer, k]), kb.acc_get(maximum))
                    y = kb.alu("sub", shifted, kb.alu("log", sum_))
                else:
                    y = kb.alu("div", kb.load(out_rows, [*outer, k]), sum_)
                kb.store(y, out_rows, [*outer, k])
        return [out]


def _drop_unit_dims(layout: Layout, keep: int) -> Layout:
    """The first `keep` dimensions of `layout`, whose remaining dimensions all have size 1."""
    return replace(layout, shape=layout.shape[:keep], strides=layout.strides[:keep])


def _normalize_groups(
    kb: KernelBuilder,
    x: Layout,
    out: Layout,
    n_outer: int,
    epsilon: float,
    *,
    rms: bool = False,
    eps_after_sqrt: bool = False,
    scale: Layout | None = None,
    bias: Layout | None = None,
    mean_out: Layout | None = None,
    inv_std_out: Layout | None = None,
    var_out: Layout | None = None,
) -> None:
    """Normalize `x` (outer dims first, then the dims of one group) into `out`, same shape.

    `(x - mean) / sqrt(var + eps)` (`rms`: `x / sqrt(mean(x²) + eps)`; `eps_after_sqrt`:
    `/ (sqrt(var) + eps)`), then `· scale + bias` (views of x's full shape); the mean and
    1/std and the variance go to `mean_out` / `inv_std_out` / `var_out` (shape = the outer
    dims) when given.
    """
    element_type = out.element_type
    ct = accumulator_type(element_type)
    outer_shape, inner_shape = x.shape[:n_outer], x.shape[n_outer:]
    count = math.prod(inner_shape)
    if count == 0 or math.prod(outer_shape) == 0:
        return
    n = kb.const(float(count), ct)
    eps = kb.const(epsilon, ct)

    def load(layout: Layout, ivs: Sequence[SSAValue]) -> SSAValue:
        return kb.cast(kb.load(layout, ivs), ct)

    with kb.loop_nest(outer_shape) as outer:
        mean = None
        if not rms:
            # The mean as the group's first value plus the mean of the differences from it:
            # a constant group's mean is then that value exactly, its deviations exactly 0 and
            # its output exactly the bias (Σx/n rounds, and with BERT's eps = 1e-12 the
            # rounding error divided by the near-zero deviation reached 0.34). The shift also
            # keeps the sum small where the values sit far from 0.
            first = load(x, [*outer, *(kb.index(0) for _ in inner_shape)])
            total = kb.define_acc(0.0, ct)
            with kb.loop_nest(inner_shape) as inner:
                shifted = kb.alu("sub", load(x, [*outer, *inner]), first)
                kb.acc_set(total, kb.alu("add", kb.acc_get(total), shifted))
            mean = kb.alu("add", first, kb.alu("div", kb.acc_get(total), n))
        squares = kb.define_acc(0.0, ct)
        with kb.loop_nest(inner_shape) as inner:
            value = load(x, [*outer, *inner])
            deviation = value if mean is None else kb.alu("sub", value, mean)
            kb.acc_set(squares, kb.alu("add", kb.acc_get(squares), kb.alu("mul", deviation, deviation)))
        variance = kb.alu("div", kb.acc_get(squares), n)
        if eps_after_sqrt:
            inv_std = kb.alu("recip", kb.alu("add", kb.alu("sqrt", variance), eps))
        else:
            inv_std = kb.alu("recip", kb.alu("sqrt", kb.alu("add", variance, eps)))
        with kb.loop_nest(inner_shape) as inner:
            ivs = [*outer, *inner]
            value = load(x, ivs)
            centered = value if mean is None else kb.alu("sub", value, mean)
            y = kb.alu("mul", centered, inv_std)
            if scale is not None:
                y = kb.alu("mul", y, load(scale, ivs))
            if bias is not None:
                y = kb.alu("add", y, load(bias, ivs))
            kb.store(kb.cast(y, element_type), out, ivs)
        if mean_out is not None:
            kb.store(kb.cast(mean if mean is not None else kb.const(0.0, ct), mean_out.element_type), mean_out, outer)
        if inv_std_out is not None:
            kb.store(kb.cast(inv_std, inv_std_out.element_type), inv_std_out, outer)
        if var_out is not None:
            kb.store(kb.cast(variance, var_out.element_type), var_out, outer)


def _axis(op: Operation, rank: int, name: str = "axis") -> int:
    axis = get_attr(op, name)
    if not -rank <= axis < rank:
        raise ValueError(f"{name} {axis} out of range for rank {rank}")
    return axis % rank


class LayerNormalizationLowering(OnnxLowering):
    """LayerNormalization and RMSNormalization over the dimensions from `axis` on."""

    op_names = frozenset({"onnx.LayerNormalization", "onnx.RMSNormalization"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        _require_float(op)
        x, scale, *rest = inputs(op)
        bias = rest[0] if rest else None
        shape = tensor_shape(op.results[0])
        axis = _axis(op, len(shape))
        results: list[Layout] = []
        stats: dict[int, Layout] = {}
        for index, value in enumerate(outputs(op)):
            if value is None:
                continue
            layout = kb.alloc(result_name(op, op.results.index(value)), tensor_shape(value), tensor_element_type(value))
            results.append(layout)
            if index:
                stats[index] = _drop_unit_dims(layout, axis)
        _normalize_groups(
            kb,
            layout_of(x),
            results[0],
            axis,
            get_attr(op, "epsilon"),
            rms=op.name == "onnx.RMSNormalization",
            scale=layout_of(scale).broadcast_to(shape),
            bias=layout_of(bias).broadcast_to(shape) if bias is not None else None,
            mean_out=stats.get(1),
            inv_std_out=stats.get(2),
        )
        return results


def _split_channels(layout: Layout, groups: int) -> Layout:
    """(N, C, D…) read as (N, G, C/G, D…): strides alone split the channel dimension."""
    n, c, *rest = layout.shape
    sn, sc, *rest_strides = layout.strides
    if c % groups:
        raise ValueError(f"{c} channels do not split into {groups} groups")
    return replace(
        layout,
        shape=(n, groups, c // groups, *rest),
        strides=(sn, sc * (c // groups), sc, *rest_strides),
    )


class ChannelNormalizationLowering(OnnxLowering):
    """InstanceNormalization (one group per (n, c)) and GroupNormalization (per (n, group))."""

    op_names = frozenset({"onnx.InstanceNormalization", "onnx.GroupNormalization"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        _require_float(op)
        x, scale, bias = inputs(op)
        shape = tensor_shape(op.results[0])
        if len(shape) < 2:
            raise ValueError(f"input of rank {len(shape)}, expected (N, C, …)")
        out = kb.alloc(result_name(op), shape, tensor_element_type(op.results[0]))
        scale_l = _per_channel(layout_of(scale), shape)
        bias_l = _per_channel(layout_of(bias), shape)
        x_l, out_l = layout_of(x), out
        if op.name == "onnx.GroupNormalization":
            groups = get_attr(op, "num_groups")
            x_l, out_l, scale_l, bias_l = (_split_channels(v, groups) for v in (x_l, out_l, scale_l, bias_l))
        _normalize_groups(kb, x_l, out_l, 2, get_attr(op, "epsilon"), scale=scale_l, bias=bias_l)
        return [out]


class MeanVarianceNormalizationLowering(OnnxLowering):
    """`(x - mean) / (sqrt(var) + 1e-9)` over `axes`, like the ONNX function body."""

    op_names = frozenset({"onnx.MeanVarianceNormalization"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        _require_float(op)
        (x,) = inputs(op)
        shape = tensor_shape(op.results[0])
        rank = len(shape)
        axes = sorted({a % rank for a in get_attr(op, "axes")})
        kept = [d for d in range(rank) if d not in axes]
        out = kb.alloc(result_name(op), shape, tensor_element_type(op.results[0]))
        perm = kept + axes
        _normalize_groups(
            kb, layout_of(x).permute(perm), out.permute(perm), len(kept), 1e-9, eps_after_sqrt=True
        )
        return [out]


class LpNormalizationLowering(OnnxLowering):
    """`x / ‖x‖_p` along `axis` (p = 1 or 2); a zero norm gives 0."""

    op_names = frozenset({"onnx.LpNormalization"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        _require_float(op)
        (x,) = inputs(op)
        shape = tensor_shape(op.results[0])
        rank = len(shape)
        axis = _axis(op, rank)
        p = get_attr(op, "p")
        if p not in (1, 2):
            raise ValueError(f"p = {p}, expected 1 or 2")
        element_type = tensor_element_type(op.results[0])
        ct = accumulator_type(element_type)
        out = kb.alloc(result_name(op), shape, element_type)
        if out.size == 0:
            return [out]
        perm = [d for d in range(rank) if d != axis] + [axis]
        x_rows, out_rows = layout_of(x).permute(perm), out.permute(perm)
        n = shape[axis]
        zero = kb.const(0.0, ct)
        with kb.loop_nest(x_rows.shape[:-1]) as outer:
            total = kb.define_acc(0.0, ct)
            with kb.loop(n) as k:
                value = kb.cast(kb.load(x_rows, [*outer, k]), ct)
                term = kb.alu("abs", value) if p == 1 else kb.alu("mul", value, value)
                kb.acc_set(total, kb.alu("add", kb.acc_get(total), term))
            norm = kb.acc_get(total)
            if p == 2:
                norm = kb.alu("sqrt", norm)
            is_zero = kb.alu("cmpeq", norm, zero)
            with kb.loop(n) as k:
                value = kb.cast(kb.load(x_rows, [*outer, k]), ct)
                y = kb.where(is_zero, zero, kb.alu("div", value, norm))
                kb.store(kb.cast(y, element_type), out_rows, [*outer, k])
        return [out]


class LRNLowering(OnnxLowering):
    """Local response normalization across channels:
    `y = x / (bias + alpha / size · Σ x[c']²)^beta` over the channels
    c - ⌊(size-1)/2⌋ … c + ⌈(size-1)/2⌉ that exist (a window like a pool's, so it reuses
    windows.py's padded window reads with the channel dimension moved last)."""

    op_names = frozenset({"onnx.LRN"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        _require_float(op)
        (x,) = inputs(op)
        shape = tensor_shape(op.results[0])
        if len(shape) < 3:
            raise ValueError(f"input of rank {len(shape)}, expected (N, C, D1, …)")
        size = get_attr(op, "size")
        if size <= 0:
            raise ValueError(f"size {size} is not positive")
        element_type = tensor_element_type(op.results[0])
        ct = accumulator_type(element_type)
        out = kb.alloc(result_name(op), shape, element_type)
        channels = shape[1]
        before = (size - 1) // 2
        window = Window(channels, channels, size, pad_begin=before, pad_end=size - 1 - before)
        perm = [0, *range(2, len(shape)), 1]
        x_last = layout_of(x).permute(perm)
        alpha_over_size = kb.const(get_attr(op, "alpha") / size, ct)
        bias, beta = kb.const(get_attr(op, "bias"), ct), kb.const(get_attr(op, "beta"), ct)
        with kb.loop_nest(x_last.shape) as (*leading, c):
            total = kb.define_acc(0.0, ct)
            with kb.loop(size) as tap:
                (position,) = tap_positions(kb, [window], [c], [tap])
                value, _ = load_window(kb, x_last, leading, [window], [position], 0)
                value = kb.cast(value, ct)
                kb.acc_set(total, kb.alu("add", kb.acc_get(total), kb.alu("mul", value, value)))
            base = kb.alu("add", bias, kb.alu("mul", alpha_over_size, kb.acc_get(total)))
            y = kb.alu("div", kb.cast(kb.load(x_last, [*leading, c]), ct), kb.alu("pow", base, beta))
            kb.store(kb.cast(y, element_type), out.permute(perm), [*leading, c])
        return [out]


class HardmaxLowering(OnnxLowering):
    """1 at the first maximum along `axis`, 0 elsewhere."""

    op_names = frozenset({"onnx.Hardmax"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        (x,) = inputs(op)
        shape = tensor_shape(op.results[0])
        rank = len(shape)
        axis = _axis(op, rank)
        element_type = tensor_element_type(op.results[0])
        out = kb.alloc(result_name(op), shape, element_type)
        n = shape[axis]
        if out.size == 0:
            return [out]
        perm = [d for d in range(rank) if d != axis] + [axis]
        x_rows, out_rows = layout_of(x).permute(perm), out.permute(perm)
        one, zero = kb.const(1, element_type), kb.const(0, element_type)
        with kb.loop_nest(x_rows.shape[:-1]) as outer:
            best = kb.define_acc(0, element_type)
            kb.acc_set(best, kb.load(x_rows, [*outer, kb.index(0)]))
            best_index = kb.define_acc(0, IndexType())
            with kb.loop(n, start=1) as k:
                value = kb.load(x_rows, [*outer, k])
                current = kb.acc_get(best)
                better = kb.alu("cmplt", current, value)
                kb.acc_set(best, kb.where(better, value, current))
                kb.acc_set(best_index, kb.where(better, k, kb.acc_get(best_index)))
            chosen = kb.acc_get(best_index)
            with kb.loop(n) as k:
                kb.store(kb.where(kb.alu("cmpeq", k, chosen), one, zero), out_rows, [*outer, k])
        return [out]


PATTERNS = (
    BatchNormalizationLowering(),
    SoftmaxLowering(),
    LayerNormalizationLowering(),
    ChannelNormalizationLowering(),
    MeanVarianceNormalizationLowering(),
    LpNormalizationLowering(),
    LRNLowering(),
    HardmaxLowering(),
)
