"""Resampling: Resize (and so Upsample), GridSample, RoiAlign, Col2Im.

Resize reads its scales, sizes and roi as constants (Upsample arrives as a Resize: the
frontend converts every model to the current opset), so every decision is made here, in
numpy: for each resized axis and each output position, which input positions contribute and
with what weight (`AxisTaps`). The tables go to the constant arena and the generated loop only
gathers and accumulates:

    y[..., o, ...] = Σ_k weight[o, k] · x[..., index[o, k], ...]

Interpolating modes resize one axis per pass (separable, as the ONNX definition is), nearest
gathers all axes in a single pass. Indices are clamped into the input, which is the edge
padding the definition asks for; tf_crop_and_resize positions outside the input take the
extrapolation value.

GridSample's grid is a runtime input: the coordinate arithmetic (denormalization, padding
modes, taps and their weights) is emitted as scalar code, once per output position and shared
by every channel.

RoiAlign (with a fixed sampling_ratio) computes its bilinear samples from the runtime rois
in scalar code too.

Col2Im scatters each column of its input into the image: a zeroed output and a loop nest over
(n, c, block…, column…) that adds every element at its position when it lies inside.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import AnyFloat, Float32Type, IndexType, IntegerType, i1
from xdsl.ir import Attribute, Operation, SSAValue

from zant.dialects import uop
from zant.dialects.onnx import get_attr, input_value
from zant.ir.resources import attr_to_array
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    accumulator_type,
    constant_table,
    layout_of,
    tensor_element_type,
    tensor_shape,
)

_INDEX_TABLE_TYPE = IntegerType(32)


# -- constant inputs and tables --------------------------------------------------------------


def constant_input(op: Operation, index: int, what: str) -> np.ndarray | None:
    """The value of an optional constant input; None when absent or empty."""
    value = input_value(op, index)
    if value is None:
        return None
    owner = layout_of(value).buffer.owner
    if not (isinstance(owner, uop.DefineGlobalOp) and owner.value is not None):
        raise NotImplementedError(f"{what} must be a constant")
    array = attr_to_array(owner.value)
    return array if array.size else None


def compute_type(element_type: Attribute) -> Attribute:
    """The float type interpolation computes in: f32 for integers and narrow floats."""
    return accumulator_type(element_type) if isinstance(element_type, AnyFloat) else Float32Type()


def convert_result(kb: KernelBuilder, value: SSAValue, element_type: Attribute) -> SSAValue:
    """A computed float as `element_type`: integers round half to even, then saturate."""
    if isinstance(element_type, IntegerType) and isinstance(value.type, AnyFloat):
        value = kb.alu("round", value)
    return kb.cast(value, element_type)


# -- Resize: per-axis tables -----------------------------------------------------------------


@dataclass(frozen=True)
class ResizeAttributes:
    mode: str  # nearest, linear or cubic
    coordinate_mode: str
    nearest_mode: str = "round_prefer_floor"
    cubic_a: float = -0.75
    exclude_outside: bool = False
    antialias: bool = False
    extrapolation_value: float = 0.0


@dataclass(frozen=True)
class AxisTaps:
    """Output position o of one axis reads input positions index[o, k] (clamped into the input)
    with weights weight[o, k]; weight None means one tap copied as is. Where `outside[o]`, the
    output is the extrapolation value instead."""

    index: np.ndarray
    weight: np.ndarray | None
    outside: np.ndarray | None

    @property
    def width(self) -> int:
        return self.index.shape[1]


def source_coordinates(
    mode: str, in_size: int, out_size: int, scale: float, roi: tuple[float, float]
) -> np.ndarray:
    """Where each output position of an axis lies in input coordinates (float64).

    As in the ONNX reference, the "resized length" of align_corners and tf_crop_and_resize is
    in_size·scale, which differs from out_size when a scale does not divide evenly.
    """
    y = np.arange(out_size, dtype=np.float64)
    length = scale * in_size
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (y + 0.5) / scale - 0.5 if length != 1 else np.full(out_size, -0.5)
    if mode == "half_pixel_symmetric":
        offset = in_size / 2 * (1 - out_size / length)
        return offset + (y + 0.5) / scale - 0.5
    if mode == "asymmetric":
        return y / scale
    if mode == "align_corners":
        return y * (in_size - 1) / (length - 1) if length != 1 else np.zeros(out_size)
    if mode == "tf_crop_and_resize":
        start, end = roi
        if length == 1:
            return np.full(out_size, (end - start) * (in_size - 1) / 2 + start * (in_size - 1))
        return y * (end - start) * (in_size - 1) / (length - 1) + start * (in_size - 1)
    raise ValueError(f"unknown coordinate_transformation_mode '{mode}'")


def _nearest_index(x: np.ndarray, nearest_mode: str) -> np.ndarray:
    below = np.floor(x)
    fraction = x - below
    pick_upper = {
        "round_prefer_floor": fraction > 0.5,
        "round_prefer_ceil": fraction >= 0.5,
        "floor": np.zeros_like(x, dtype=bool),
        "ceil": fraction > 0,
    }.get(nearest_mode)
    if pick_upper is None:
        raise ValueError(f"unknown nearest_mode '{nearest_mode}'")
    return below.astype(np.int64) + pick_upper


def _linear_kernel(d: np.ndarray, a: float) -> np.ndarray:
    return np.clip(1 - np.abs(d), 0, 1)


def _cubic_kernel(d: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with coefficient a."""
    d = np.abs(d)
    inner = ((a + 2) * d - (a + 3)) * d * d + 1
    outer = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, inner, np.where(d < 2, outer, 0.0))


# mode → (kernel, its support radius in input pixels)
_KERNELS: dict[str, tuple[Callable[[np.ndarray, float], np.ndarray], int]] = {
    "linear": (_linear_kernel, 1),
    "cubic": (_cubic_kernel, 2),
}


def axis_taps(
    attrs: ResizeAttributes, in_size: int, out_size: int, scale: float, roi: tuple[float, float]
) -> AxisTaps:
    x = source_coordinates(attrs.coordinate_mode, in_size, out_size, scale, roi)
    outside = None
    if attrs.coordinate_mode == "tf_crop_and_resize":
        outside = (x < 0) | (x > in_size - 1)
        outside = outside if outside.any() else None
    if attrs.mode == "nearest":
        index = _nearest_index(x, attrs.nearest_mode)[:, None]
        return AxisTaps(np.clip(index, 0, in_size - 1), None, outside)
    if attrs.mode not in _KERNELS:
        raise ValueError(f"unknown mode '{attrs.mode}'")
    kernel, support = _KERNELS[attrs.mode]
    # Antialiasing stretches the kernel by 1/scale when downsampling.
    stretch = min(scale, 1.0) if attrs.antialias else 1.0
    width = -2 * math.floor(-support / stretch)
    # The taps are the `width` input positions nearest x, the lower half-way tie preferred:
    # counted from base = ⌈x⌉ - 1, so that x - base lies in (0, 1].
    base = np.ceil(x).astype(np.int64) - 1
    offsets = np.arange(width) + 1 - width // 2
    index = base[:, None] + offsets
    weight = kernel(stretch * (offsets - (x - base)[:, None]), attrs.cubic_a)
    if attrs.antialias:
        weight /= weight.sum(axis=1, keepdims=True)
    if attrs.exclude_outside:
        weight = np.where((index < 0) | (index >= in_size), 0.0, weight)
        total = weight.sum(axis=1, keepdims=True)
        weight /= np.where(total == 0, 1.0, total)
    return AxisTaps(np.clip(index, 0, in_size - 1), weight, outside)


@dataclass(frozen=True)
class ResizePlan:
    """The output shape and the taps of every axis that changes."""

    out_shape: tuple[int, ...]
    taps: dict[int, AxisTaps]


def plan_resize(
    attrs: ResizeAttributes,
    in_shape: Sequence[int],
    scales: np.ndarray | None,
    sizes: np.ndarray | None,
    roi: np.ndarray | None,
    axes: Sequence[int] | None = None,
    keep_aspect_ratio_policy: str = "stretch",
) -> ResizePlan:
    rank = len(in_shape)
    axes = [a % rank for a in axes] if axes is not None else list(range(rank))
    if len(set(axes)) != len(axes) or any(not 0 <= a < rank for a in axes):
        raise ValueError(f"axes {list(axes)} are not distinct axes of a rank-{rank} input")
    given = scales if scales is not None else sizes
    if given is None:
        raise ValueError("one of scales and sizes is required")
    if len(given) != len(axes):
        raise ValueError(f"{len(given)} scales or sizes for {len(axes)} axes")
    scale = [1.0] * rank
    out_shape = list(in_shape)
    if scales is not None:
        for axis, s in zip(axes, scales.tolist()):
            if s <= 0:
                raise ValueError(f"scale {s} is not positive")
            scale[axis] = float(s)
            out_shape[axis] = int(s * in_shape[axis])
    else:
        assert sizes is not None
        for axis, size in zip(axes, sizes.tolist()):
            scale[axis] = size / in_shape[axis]
            out_shape[axis] = int(size)
        if keep_aspect_ratio_policy != "stretch":
            pick = {"not_larger": min, "not_smaller": max}.get(keep_aspect_ratio_policy)
            if pick is None:
                raise ValueError(f"unknown keep_aspect_ratio_policy '{keep_aspect_ratio_policy}'")
            common = pick(scale[a] for a in axes)
            for axis in axes:
                scale[axis] = common
                out_shape[axis] = int(common * in_shape[axis] + 0.5)  # round half up
    limits = [(0.0, 1.0)] * rank
    if roi is not None:
        if len(roi) != 2 * len(axes):
            raise ValueError(f"roi has {len(roi)} values for {len(axes)} axes")
        for i, axis in enumerate(axes):
            limits[axis] = (float(roi[i]), float(roi[len(axes) + i]))
    elif attrs.coordinate_mode == "tf_crop_and_resize":
        raise ValueError("tf_crop_and_resize needs a roi")
    taps = {
        axis: axis_taps(attrs, in_shape[axis], out_shape[axis], scale[axis], limits[axis])
        for axis in axes
        if not _is_identity(attrs, in_shape[axis], out_shape[axis], scale[axis], limits[axis])
    }
    return ResizePlan(tuple(out_shape), taps)


def _is_identity(attrs: ResizeAttributes, in_size: int, out_size: int, scale: float, roi) -> bool:
    roi_is_whole = attrs.coordinate_mode != "tf_crop_and_resize" or (
        math.isclose(roi[0], 0.0, abs_tol=1e-9) and math.isclose(roi[1], 1.0)
    )
    return out_size == in_size and math.isclose(scale, 1.0) and roi_is_whole


# -- Resize: code ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _AxisTables:
    index: Layout
    weight: Layout | None
    outside: Layout | None


def _tables(op: Operation, axis: int, taps: AxisTaps, weight_type: Attribute) -> _AxisTables:
    prefix = f"{result_name(op)}_axis{axis}"
    return _AxisTables(
        constant_table(op, f"{prefix}_index", taps.index, _INDEX_TABLE_TYPE),
        None if taps.weight is None else constant_table(op, f"{prefix}_weight", taps.weight, weight_type),
        None if taps.outside is None else constant_table(op, f"{prefix}_outside", taps.outside, i1),
    )


def resample_pass(
    kb: KernelBuilder,
    source: Layout,
    target: Layout,
    tables: dict[int, _AxisTables],
    value_type: Attribute,
    extrapolation_value: float,
) -> None:
    """target[o] = Σ over the taps of every axis in `tables` of Π weights · source[index…];
    the other axes are copied. Values are computed in `value_type`."""
    weighted = [axis for axis, t in tables.items() if t.weight is not None]
    with kb.loop_nest(target.shape) as ivs:
        acc = kb.define_acc(0, value_type) if weighted else None
        widths = [t.weight.shape[1] for t in tables.values() if t.weight is not None]  # type: ignore[union-attr]
        with kb.loop_nest(widths) as ks:
            tap = dict(zip(weighted, ks))
            indices = list(ivs)
            weight = None
            for axis, t in tables.items():
                at = [ivs[axis], tap[axis] if axis in tap else kb.index(0)]
                indices[axis] = kb.cast(kb.load(t.index, at), IndexType())
                if t.weight is not None:
                    w = kb.load(t.weight, at)
                    weight = w if weight is None else kb.alu("mul", weight, w)
            value = kb.cast(kb.load(source, indices), value_type)
            if acc is not None:
                kb.mulacc(acc, value, weight)
        if acc is not None:
            value = kb.acc_get(acc)
        outside = None
        for axis, t in tables.items():
            if t.outside is not None:
                flag = kb.load(t.outside, [ivs[axis]])
                outside = flag if outside is None else kb.alu("or", outside, flag)
        if outside is not None:
            value = kb.where(outside, kb.const(extrapolation_value, value_type), value)
        kb.store(convert_result(kb, value, target.element_type), target, ivs)


def emit_resize(kb: KernelBuilder, op: Operation, attrs: ResizeAttributes, plan: ResizePlan) -> Layout:
    x = layout_of(input_value(op, 0))
    element_type = tensor_element_type(op.results[0])
    if plan.out_shape != tensor_shape(op.results[0]):
        declared = tensor_shape(op.results[0])
        raise ValueError(f"the scales or sizes give shape {plan.out_shape}, the result type has {declared}")
    name = result_name(op)
    y = kb.alloc(name, plan.out_shape, element_type)
    if attrs.mode == "nearest" or not plan.taps:
        # One gather over all axes; no arithmetic, so any element type works.
        tables = {a: _tables(op, a, t, element_type) for a, t in plan.taps.items()}
        resample_pass(kb, x, y, tables, element_type, attrs.extrapolation_value)
        return y
    if not isinstance(element_type, AnyFloat | IntegerType) or element_type == i1:
        raise ValueError(f"{attrs.mode} interpolation of {element_type} is not defined")
    value_type = compute_type(element_type)
    # One pass per axis, shrinking axes first to keep the intermediate tensors small.
    order = sorted(plan.taps, key=lambda a: plan.out_shape[a] / x.shape[a])
    passes = [{axis: _tables(op, axis, plan.taps[axis], value_type)} for axis in order]
    source, shape = x, list(x.shape)
    for step, (axis, tables) in enumerate(zip(order, passes)):
        shape[axis] = plan.out_shape[axis]
        last = step == len(order) - 1
        target = y if last else kb.alloc(f"{name}_pass{step}", shape, value_type)
        resample_pass(kb, source, target, tables, value_type, attrs.extrapolation_value)
        source = target
    return y


class ResizeLowering(OnnxLowering):
    """`Resize` with constant roi, scales and sizes: every mode, coordinate transformation,
    nearest_mode, axes, keep_aspect_ratio_policy, exclude_outside and antialias."""

    op_names = frozenset({"onnx.Resize"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        attrs = ResizeAttributes(
            mode=get_attr(op, "mode"),
            coordinate_mode=get_attr(op, "coordinate_transformation_mode"),
            nearest_mode=get_attr(op, "nearest_mode"),
            cubic_a=get_attr(op, "cubic_coeff_a"),
            exclude_outside=bool(get_attr(op, "exclude_outside")),
            antialias=bool(get_attr(op, "antialias")),
            extrapolation_value=get_attr(op, "extrapolation_value"),
        )
        if attrs.antialias and attrs.mode == "nearest":
            raise ValueError("antialias is only defined for linear and cubic modes")
        in_shape = tensor_shape(input_value(op, 0))
        plan = plan_resize(
            attrs,
            in_shape,
            scales=constant_input(op, 2, "scales"),
            sizes=constant_input(op, 3, "sizes"),
            roi=constant_input(op, 1, "roi"),
            axes=get_attr(op, "axes"),
            keep_aspect_ratio_policy=get_attr(op, "keep_aspect_ratio_policy"),
        )
        return [emit_resize(kb, op, attrs, plan)]


class UpsampleLowering(OnnxLowering):
    """`Upsample` (deprecated): Resize with asymmetric coordinates, nearest rounding down.

    Models reach the pass with their Upsample converted to a Resize by the frontend; this
    lowers an `onnx.Upsample` written in the dialect directly."""

    op_names = frozenset({"onnx.Upsample"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        mode = get_attr(op, "mode")
        if mode not in ("nearest", "linear"):
            raise ValueError(f"unknown Upsample mode '{mode}'")
        attrs = ResizeAttributes(mode, "asymmetric", nearest_mode="floor")
        scales = constant_input(op, 1, "scales")
        plan = plan_resize(attrs, tensor_shape(input_value(op, 0)), scales, None, None)
        return [emit_resize(kb, op, attrs, plan)]


# -- GridSample (and the scalar helpers RoiAlign shares) ------------------------------------


@dataclass(frozen=True)
class _Tap:
    """One input position of one axis: its index, weight (None: nearest) and, for zeros
    padding, whether it lies inside the input (else it reads 0)."""

    index: SSAValue
    weight: SSAValue | None
    inside: SSAValue | None


class _Scalar:
    """Float scalar code in one type: constants by value, the ALU by name."""

    def __init__(self, kb: KernelBuilder, t: Attribute):
        self.kb, self.t = kb, t

    def c(self, value: float) -> SSAValue:
        return self.kb.const(value, self.t)

    def __getattr__(self, name: str) -> Callable[..., SSAValue]:
        return lambda *operands: self.kb.alu(name, *operands)


def _reflect(f: _Scalar, x: SSAValue, low: float, high: float) -> SSAValue:
    """x mirrored at the borders low and high until it lies between them."""
    kb = f.kb
    below, above = f.cmplt(x, f.c(low)), f.cmplt(f.c(high), x)
    outside = kb.alu("or", below, above)
    span = high - low
    if span == 0:
        return kb.where(outside, f.c(low), x)
    distance = kb.where(below, f.sub(f.c(low), x), f.sub(x, f.c(high)))
    turns = f.floor(f.div(distance, f.c(span)))
    rest = f.sub(distance, f.mul(turns, f.c(span)))
    odd = f.cmpne(f.rem(turns, f.c(2.0)), f.c(0.0))
    # An even number of turns below the low border (or an odd one above the high border)
    # ends up measured from the low border.
    from_low = kb.alu("xor", below, odd)
    reflected = kb.where(from_low, f.add(f.c(low), rest), f.sub(f.c(high), rest))
    return kb.where(outside, reflected, x)


def _cubic_weights(f: _Scalar, t: SSAValue, a: float = -0.75) -> list[SSAValue]:
    """Keys' cubic weights of the taps at -1, 0, 1, 2 for a position t ∈ [0, 1) past tap 0."""

    def near(d: SSAValue) -> SSAValue:  # |d| ≤ 1
        return f.add(f.mul(f.mul(f.sub(f.mul(f.c(a + 2), d), f.c(a + 3)), d), d), f.c(1.0))

    def far(d: SSAValue) -> SSAValue:  # 1 < |d| < 2
        poly = f.add(f.mul(f.sub(f.mul(f.c(a), d), f.c(5 * a)), d), f.c(8 * a))
        return f.sub(f.mul(poly, d), f.c(4 * a))

    one, two = f.c(1.0), f.c(2.0)
    return [far(f.add(t, one)), near(t), near(f.sub(one, t)), far(f.sub(two, t))]


@dataclass(frozen=True)
class _GridSampleAttributes:
    mode: str  # nearest, linear or cubic
    padding_mode: str
    align_corners: bool

    def borders(self, size: int) -> tuple[float, float]:
        """The range of valid coordinates, beyond which padding applies."""
        return (0.0, size - 1.0) if self.align_corners else (-0.5, size - 0.5)


def _grid_axis_taps(f: _Scalar, g: SSAValue, size: int, attrs: _GridSampleAttributes) -> list[_Tap]:
    """The taps along one spatial axis of size `size` for the normalized coordinate g."""
    kb = f.kb
    low, high = attrs.borders(size)
    # Denormalize as the reference does, operation by operation (nearest rounds the result).
    shifted = f.add(g, f.c(1.0))
    if attrs.align_corners:
        x = f.mul(f.mul(shifted, f.c(0.5)), f.c(size - 1.0))
    else:
        x = f.mul(f.sub(f.mul(shifted, f.c(float(size))), f.c(1.0)), f.c(0.5))
    if attrs.mode == "nearest":
        x = f.round(x)
    if attrs.padding_mode == "border":
        x = kb.where(f.cmplt(x, f.c(low)), f.c(0.0), kb.where(f.cmplt(f.c(high), x), f.c(size - 1.0), x))
    elif attrs.padding_mode == "reflection":
        x = _reflect(f, x, low, high)
    if attrs.mode == "nearest":
        positions, weights = [x], [None]
    else:
        base = f.floor(x)
        t = f.sub(x, base)
        if attrs.mode == "linear":
            positions, weights = [base, f.add(base, f.c(1.0))], [f.sub(f.c(1.0), t), t]
        else:
            positions = [f.add(base, f.c(float(k))) for k in (-1, 0, 1, 2)]
            weights = _cubic_weights(f, t)
    return [_pixel(f, p, w, size, low, high, attrs.padding_mode) for p, w in zip(positions, weights)]


def _pixel(f: _Scalar, p: SSAValue, weight, size: int, low: float, high: float, padding: str) -> _Tap:
    """The tap at the integral position p, resolved by the padding mode."""
    kb = f.kb
    inside = None
    if padding == "zeros":
        inside = kb.alu("and", f.cmple(f.c(0.0), p), f.cmplt(p, f.c(float(size))))
    elif padding == "reflection":
        p = _reflect(f, p, low, high)
    # Clamped, so that no grid value (even NaN or inf) can index outside the input; the cast
    # to an index truncates what reflection leaves of a fraction.
    p = f.min(f.max(p, f.c(0.0)), f.c(size - 1.0))
    return _Tap(kb.cast(p, IndexType()), weight, inside)


class GridSampleLowering(OnnxLowering):
    """`GridSample` over any number of spatial axes: nearest, linear or cubic; zeros, border or
    reflection padding; align_corners. The taps of one output position are computed once and
    read for every channel."""

    op_names = frozenset({"onnx.GridSample"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        mode = {"bilinear": "linear", "bicubic": "cubic"}.get(get_attr(op, "mode"), get_attr(op, "mode"))
        attrs = _GridSampleAttributes(mode, get_attr(op, "padding_mode"), bool(get_attr(op, "align_corners")))
        if attrs.mode not in ("nearest", "linear", "cubic"):
            raise ValueError(f"unknown mode '{attrs.mode}'")
        if attrs.padding_mode not in ("zeros", "border", "reflection"):
            raise ValueError(f"unknown padding_mode '{attrs.padding_mode}'")
        x = layout_of(input_value(op, 0))
        grid = layout_of(input_value(op, 1))
        spatial = x.shape[2:]
        if grid.rank != x.rank or grid.shape[-1] != len(spatial) or grid.shape[0] != x.shape[0]:
            raise ValueError(f"grid of shape {grid.shape} does not fit an input of shape {x.shape}")
        element_type = tensor_element_type(op.results[0])
        weighted = attrs.mode != "nearest"
        if weighted and not isinstance(element_type, AnyFloat):
            raise NotImplementedError(f"{attrs.mode} GridSample of {element_type}")
        f = _Scalar(kb, compute_type(grid.element_type))
        value_type = f.t if weighted else element_type
        y = kb.alloc(result_name(op), tensor_shape(op.results[0]), element_type)
        with kb.loop_nest([x.shape[0], *grid.shape[1:-1]]) as (n, *out):
            # The grid's last axis lists the coordinates innermost axis first (x, y, z).
            coordinates = [
                kb.cast(kb.load(grid, [n, *out, kb.index(len(spatial) - 1 - i)]), f.t)
                for i in range(len(spatial))
            ]
            per_axis = [_grid_axis_taps(f, g, size, attrs) for g, size in zip(coordinates, spatial)]
            combined = [_combine(f, taps) for taps in itertools.product(*per_axis)]
            with kb.loop(x.shape[1]) as c:
                total = None
                for indices, weight, inside in combined:
                    value = kb.cast(kb.load(x, [n, c, *indices]), value_type)
                    if inside is not None:
                        value = kb.where(inside, value, kb.const(0, value_type))
                    term = value if weight is None else f.mul(weight, value)
                    total = term if total is None else f.add(total, term)
                assert total is not None
                kb.store(kb.cast(total, element_type), y, [n, c, *out])
        return [y]


def _combine(f: _Scalar, taps: Sequence[_Tap]) -> tuple[list[SSAValue], SSAValue | None, SSAValue | None]:
    """One tap per axis → the indices, the product of the weights and whether all lie inside."""
    weight = inside = None
    for tap in taps:
        if tap.weight is not None:
            weight = tap.weight if weight is None else f.mul(weight, tap.weight)
        if tap.inside is not None:
            inside = tap.inside if inside is None else f.kb.alu("and", inside, tap.inside)
    return [tap.index for tap in taps], weight, inside


# -- Col2Im ---------------------------------------------------------------------------------


class Col2ImLowering(OnnxLowering):
    """`Col2Im`: input (N, C·Πblock, L) viewed as (N, C, block…, positions…); each element is
    added into the image at position·stride - pad_begin + offset·dilation, when inside."""

    op_names = frozenset({"onnx.Col2Im"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        image = constant_input(op, 1, "image_shape")
        block = constant_input(op, 2, "block_shape")
        if image is None or block is None or len(image) != len(block):
            raise ValueError("image_shape and block_shape must be non-empty constants of one length")
        image, block = [int(v) for v in image], [int(v) for v in block]
        rank = len(image)
        dilations = get_attr(op, "dilations") or [1] * rank
        strides = get_attr(op, "strides") or [1] * rank
        pads = get_attr(op, "pads") or [0] * (2 * rank)
        if len(dilations) != rank or len(strides) != rank or len(pads) != 2 * rank:
            raise ValueError(f"dilations, strides and pads do not fit {rank} spatial axes")
        counts = [
            (size + pads[d] + pads[rank + d] - dilations[d] * (block[d] - 1) - 1) // strides[d] + 1
            for d, size in enumerate(image)
        ]
        x = layout_of(input_value(op, 0))
        n, rows, columns = x.shape
        channels = rows // math.prod(block) if math.prod(block) else 0
        if channels * math.prod(block) != rows or math.prod(counts) != columns:
            raise ValueError(f"input of shape {x.shape} does not fit blocks {block} over image {image}")
        columns_view = x.reshape([n, channels, *block, *counts])
        if columns_view is None:
            raise NotImplementedError("Col2Im of a non-contiguous input")
        element_type = tensor_element_type(op.results[0])
        y = kb.alloc(result_name(op), tensor_shape(op.results[0]), element_type)
        with kb.loop_nest(y.shape) as ivs:
            kb.store(kb.const(0, element_type), y, ivs)
        with kb.loop_nest(columns_view.shape) as ivs:
            offsets, positions = ivs[2 : 2 + rank], ivs[2 + rank :]
            pixel, inside = [], None
            for d in range(rank):
                at = kb.alu(
                    "add",
                    kb.alu("mul", positions[d], kb.index(strides[d])),
                    kb.alu("mul", offsets[d], kb.index(dilations[d])),
                )
                at = kb.alu("sub", at, kb.index(pads[d]))
                ok = kb.alu("and", kb.alu("cmple", kb.index(0), at), kb.alu("cmplt", at, kb.index(image[d])))
                inside = ok if inside is None else kb.alu("and", inside, ok)
                pixel.append(kb.alu("min", kb.alu("max", at, kb.index(0)), kb.index(image[d] - 1)))
            target = [ivs[0], ivs[1], *pixel]
            old = kb.load(y, target)
            new = kb.alu("add", old, kb.load(columns_view, ivs))
            assert inside is not None
            kb.store(kb.where(inside, new, old), y, target)
        return [y]


# -- RoiAlign --------------------------------------------------------------------------------


def _bilinear_corner(f: _Scalar, y: SSAValue, size: int) -> tuple[SSAValue, SSAValue, SSAValue]:
    """RoiAlign's sample at y ≥ 0 along an axis of `size`: the low and high pixel (as floats)
    and the weight of the high one; from the last pixel on, both are the last pixel."""
    kb = f.kb
    last = f.c(size - 1.0)
    low = f.floor(y)
    at_edge = f.cmple(last, low)
    low = kb.where(at_edge, last, low)
    high = kb.where(at_edge, last, f.add(low, f.c(1.0)))
    fraction = f.sub(kb.where(at_edge, low, y), low)
    return low, high, fraction


class RoiAlignLowering(OnnxLowering):
    """`RoiAlign` with a fixed sampling_ratio: per roi, channel and output bin, an average (or
    max) of sampling_ratio² bilinear samples; the rois are read at run time."""

    op_names = frozenset({"onnx.RoiAlign"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        ratio = get_attr(op, "sampling_ratio")
        if ratio <= 0:
            raise NotImplementedError("sampling_ratio 0 (a sampling grid sized by each roi at run time)")
        mode = get_attr(op, "mode")
        if mode not in ("avg", "max"):
            raise ValueError(f"unknown mode '{mode}'")
        coordinate_mode = get_attr(op, "coordinate_transformation_mode")
        if coordinate_mode not in ("half_pixel", "output_half_pixel"):
            raise ValueError(f"unknown coordinate_transformation_mode '{coordinate_mode}'")
        half_pixel = coordinate_mode == "half_pixel"
        x, rois, batch = (layout_of(input_value(op, i)) for i in range(3))
        if x.rank != 4 or rois.rank != 2 or rois.shape[1] != 4:
            raise ValueError(f"expected X (N, C, H, W) and rois (R, 4), got {x.shape} and {rois.shape}")
        element_type = tensor_element_type(op.results[0])
        if not isinstance(element_type, AnyFloat):
            raise ValueError(f"RoiAlign of {element_type} is not defined")
        f = _Scalar(kb, compute_type(element_type))
        height, width = x.shape[2:]
        out_shape = tensor_shape(op.results[0])
        pooled = out_shape[2:]
        scale = get_attr(op, "spatial_scale")
        y = kb.alloc(result_name(op), out_shape, element_type)
        with kb.loop_nest(out_shape) as (r, c, ph, pw):
            image = kb.cast(kb.load(batch, [r]), IndexType())
            image = kb.alu("min", kb.alu("max", image, kb.index(0)), kb.index(x.shape[0] - 1))
            # (x1, y1, x2, y2) → per axis (h, w): the roi's start and the size of one bin
            shift = f.c(0.5 if half_pixel else 0.0)
            corners = [
                f.sub(f.mul(kb.cast(kb.load(rois, [r, kb.index(k)]), f.t), f.c(scale)), shift)
                for k in range(4)
            ]
            starts, bins = [], []
            for axis, (first, bin_iv) in enumerate(((1, ph), (0, pw))):
                extent = f.sub(corners[first + 2], corners[first])
                if not half_pixel:
                    extent = f.max(extent, f.c(1.0))  # malformed rois count as 1×1
                bin_size = f.div(extent, f.c(float(pooled[axis])))
                starts.append(f.add(corners[first], f.mul(kb.cast(bin_iv, f.t), bin_size)))
                bins.append(bin_size)
            acc = kb.define_acc(0.0 if mode == "avg" else float("-inf"), f.t)
            with kb.loop_nest([ratio, ratio]) as samples:
                position = [
                    f.add(start, f.div(f.mul(f.add(kb.cast(iv, f.t), f.c(0.5)), size), f.c(float(ratio))))
                    for start, size, iv in zip(starts, bins, samples)
                ]
                outside = None
                for p, size in zip(position, (height, width)):
                    off = kb.alu("or", f.cmplt(p, f.c(-1.0)), f.cmplt(f.c(float(size)), p))
                    outside = off if outside is None else kb.alu("or", outside, off)
                (y0, y1, ly), (x0, x1, lx) = (
                    _bilinear_corner(f, f.max(p, f.c(0.0)), size)
                    for p, size in zip(position, (height, width))
                )
                hy, hx = f.sub(f.c(1.0), ly), f.sub(f.c(1.0), lx)
                terms = []
                for row, wy in ((y0, hy), (y1, ly)):
                    for col, wx in ((x0, hx), (x1, lx)):
                        # Samples off the map weigh 0; the index is clamped for them.
                        weight = kb.where(outside, f.c(0.0), f.mul(wy, wx))
                        at = [_clamped_index(f, row, height), _clamped_index(f, col, width)]
                        terms.append(f.mul(weight, kb.cast(kb.load(x, [image, c, *at]), f.t)))
                combine = "add" if mode == "avg" else "max"
                sample = terms[0]
                for term in terms[1:]:
                    sample = kb.alu(combine, sample, term)
                kb.acc_set(acc, kb.alu(combine, kb.acc_get(acc), sample))
            result = kb.acc_get(acc)
            if mode == "avg":
                result = f.div(result, f.c(float(ratio * ratio)))
            kb.store(kb.cast(result, element_type), y, [r, c, ph, pw])
        return [y]


def _clamped_index(f: _Scalar, p: SSAValue, size: int) -> SSAValue:
    return f.kb.cast(f.min(f.max(p, f.c(0.0)), f.c(size - 1.0)), IndexType())


PATTERNS = (ResizeLowering(), UpsampleLowering(), GridSampleLowering(), Col2ImLowering(), RoiAlignLowering())
