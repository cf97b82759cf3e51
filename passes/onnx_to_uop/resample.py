"""Resampling: Resize (and so Upsample); GridSample and RoiAlign are `sampling.py`'s.

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
"""

from __future__ import annotations

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


PATTERNS = (ResizeLowering(), UpsampleLowering())
