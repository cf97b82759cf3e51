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
from xdsl.dialects.builtin import AnyFloat, Float32Type, Float64Type, IndexType, IntegerType, Signedness, i1
from xdsl.ir import Attribute, Operation, SSAValue

from zant.dialects import uop
from zant.dialects.onnx import get_attr, input_value, requantize_parameters
from zant.ir.resources import attr_to_array
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.parameters import I64, all_of, check, constant_array, guard_builder, load_all, runtime_input
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    accumulator_type,
    constant_table,
    highest_value,
    layout_of,
    lowest_value,
    tensor_element_type,
    tensor_shape,
)

_INDEX_TABLE_TYPE = IntegerType(32)
_I32 = IntegerType(32)



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

    `length_resized` of the definition is the output's extent (`out_size`, as onnxruntime
    has it), not in_size·scale: align_corners and tf_crop_and_resize map the corners onto
    the first and last output positions, and pytorch_half_pixel and tf_crop_and_resize treat
    an extent of 1 apart. half_pixel_symmetric alone uses the fractional in_size·scale.
    (onnx's reference evaluator divides by in_size·scale - 1 where it differs; so do the
    expected data of two backend cases, `MISMATCH_CAUSES` in tools/conformance.py.)
    """
    y = np.arange(out_size, dtype=np.float64)
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (y + 0.5) / scale - 0.5 if out_size > 1 else np.zeros(out_size)
    if mode == "half_pixel_symmetric":
        offset = in_size / 2 * (1 - out_size / (scale * in_size))
        return offset + (y + 0.5) / scale - 0.5
    if mode == "asymmetric":
        return y / scale
    if mode == "tf_half_pixel_for_nn":  # Resize-11 to -13 (opsets 11 to 17)
        return (y + 0.5) / scale
    if mode == "align_corners":
        return y * (in_size - 1) / (out_size - 1) if out_size > 1 else np.zeros(out_size)
    if mode == "tf_crop_and_resize":
        start, end = roi
        if out_size == 1:
            return np.full(out_size, (end + start) * (in_size - 1) / 2)
        return y * (end - start) * (in_size - 1) / (out_size - 1) + start * (in_size - 1)
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
            fill = _extrapolation_constant(extrapolation_value, value_type)
            value = kb.where(outside, kb.const(fill, value_type), value)
        kb.store(convert_result(kb, value, target.element_type), target, ivs)


def _extrapolation_constant(value: float, value_type: Attribute) -> float | int:
    """`extrapolation_value` (a float attribute) in `value_type`. ONNX leaves an integer type's
    conversion open; as onnxruntime (the C++ cast of the truncated value): toward zero, then
    modulo 2^bits (-1.5 as uint8 is 255, 300.7 is 44)."""
    if not isinstance(value_type, IntegerType) or value_type.width.data == 1:
        return value
    bits = value_type.width.data
    unsigned = value_type.signedness.data == Signedness.UNSIGNED
    wrapped = int(value) % (1 << bits)
    return wrapped if unsigned or wrapped < 1 << (bits - 1) else wrapped - (1 << bits)


TableMaker = Callable[[int, Attribute], _AxisTables]
"""Makes the tables of one axis, given the weights' type."""


def emit_resize(
    kb: KernelBuilder, op: Operation, attrs: ResizeAttributes, plan: ResizePlan, make: TableMaker | None = None
) -> Layout:
    """The Resize kernels for `plan`; `make` builds each tapped axis's tables (default: constant
    tables of `plan.taps`; a run-time scale or roi fills scratch tables at run time)."""
    if make is None:
        make = lambda axis, weight_type: _tables(op, axis, plan.taps[axis], weight_type)  # noqa: E731
    x = layout_of(input_value(op, 0))
    element_type = tensor_element_type(op.results[0])
    if plan.out_shape != tensor_shape(op.results[0]):
        declared = tensor_shape(op.results[0])
        raise ValueError(f"the scales or sizes give shape {plan.out_shape}, the result type has {declared}")
    name = result_name(op)
    y = kb.alloc(name, plan.out_shape, element_type)
    if attrs.mode == "nearest" or not plan.taps:
        # One gather over all axes; no arithmetic, so any element type works.
        tables = {a: make(a, element_type) for a in plan.taps}
        resample_pass(kb, x, y, tables, element_type, attrs.extrapolation_value)
        return y
    if not isinstance(element_type, AnyFloat | IntegerType) or element_type == i1:
        raise ValueError(f"{attrs.mode} interpolation of {element_type} is not defined")
    value_type = compute_type(element_type)
    # One pass per axis, shrinking axes first to keep the intermediate tensors small.
    order = sorted(plan.taps, key=lambda a: plan.out_shape[a] / x.shape[a])
    passes = [{axis: make(axis, value_type)} for axis in order]
    source, shape = x, list(x.shape)
    for step, (axis, tables) in enumerate(zip(order, passes)):
        shape[axis] = plan.out_shape[axis]
        last = step == len(order) - 1
        target = y if last else kb.alloc(f"{name}_pass{step}", shape, value_type)
        resample_pass(kb, source, target, tables, value_type, attrs.extrapolation_value)
        source = target
    return y


# -- Resize of 8-bit codes with one requantization (fold-qdq's DQ → Resize → Q) ----------


def fixed_point_taps(plan: ResizePlan, code_range: int) -> tuple[dict[int, np.ndarray], int]:
    """Each tapped axis's weights as integers with `bits` fraction bits, each row's sum the
    rounded sum of its real weights (2^bits where they sum to 1; the rounding error goes to
    the row's largest weight), `bits` the most (up to 14) that keeps Σ Π |w| · |x - x_zp|
    (|x - x_zp| ≤ `code_range`) inside int32."""
    tapped = {axis: taps.weight for axis, taps in plan.taps.items() if taps.weight is not None}
    bound = float(code_range) * math.prod(float(np.abs(w).sum(axis=1).max()) for w in tapped.values())
    bits = min(14, math.floor((30 - math.log2(bound)) / len(tapped))) if tapped else 0
    weights = {}
    for axis, w in tapped.items():
        one = 1 << bits
        q = np.round(w * one).astype(np.int64)
        rows = np.arange(len(q))
        largest = np.abs(w).argmax(axis=1)
        q[rows, largest] += np.round(w.sum(axis=1) * one).astype(np.int64) - q.sum(axis=1)
        weights[axis] = q
    return weights, bits


def emit_requantized_resize(kb: KernelBuilder, op: Operation, plan: ResizePlan) -> Layout:
    """y = clamp(round_half_even(Σ Π w_q · (x - x_zp) · M / 2^(bits·axes)) + y_zp), all in
    integers: the interpolation weights (fixed point, `fixed_point_taps`) and M = m · 2^-shift
    ≈ x_scale / y_scale are computed here, the sum is int32 on the zero-point-shifted codes, one
    32×32→64 multiply and a shift requantize it, rounding half to even as QuantizeLinear does."""
    x_zp, y_zp, ratio = requantize_parameters(op)  # the op is marked: emit_requantized_resize's caller asked
    x = layout_of(input_value(op, 0))
    out_type = tensor_element_type(op.results[0])
    if plan.out_shape != tensor_shape(op.results[0]):
        raise ValueError(f"the scales or sizes give shape {plan.out_shape}, the result type has {tensor_shape(op.results[0])}")
    if any(t.outside is not None for t in plan.taps.values()):
        raise NotImplementedError("an integer Resize with extrapolated positions")
    code_range = int(max(abs(lowest_value(x.element_type) - x_zp), abs(highest_value(x.element_type) - x_zp)))
    weights, bits = fixed_point_taps(plan, code_range)
    total_bits = bits * len(weights)
    exponent = math.frexp(ratio)[1]
    shift = min(31 - exponent + total_bits, 62)
    multiplier = round(ratio * 2.0 ** (shift - total_bits))
    name = result_name(op)
    tables = {
        axis: _AxisTables(
            constant_table(op, f"{name}_axis{axis}_index", taps.index, _INDEX_TABLE_TYPE),
            None if axis not in weights else constant_table(op, f"{name}_axis{axis}_weight", weights[axis], _I32),
            None,
        )
        for axis, taps in plan.taps.items()
    }
    x_zero = kb.const(int(x_zp), _I32)
    m, by, one = kb.const(multiplier, I64), kb.const(shift, I64), kb.const(1, I64)
    half, mask, zero = kb.const(1 << (shift - 1), I64), kb.const((1 << shift) - 1, I64), kb.const(0, I64)
    y_zero = kb.const(int(y_zp), I64)
    low, high = (kb.const(v, I64) for v in (lowest_value(out_type), highest_value(out_type)))
    y = kb.alloc(name, plan.out_shape, out_type)
    weighted = list(weights)
    with kb.loop_nest(plan.out_shape) as ivs:
        acc = kb.define_acc(0, _I32)
        with kb.loop_nest([weights[a].shape[1] for a in weighted]) as ks:
            tap = dict(zip(weighted, ks))
            indices = list(ivs)
            weight = None
            for axis, t in tables.items():
                at = [ivs[axis], tap[axis] if axis in tap else kb.index(0)]
                indices[axis] = kb.cast(kb.load(t.index, at), IndexType())
                if t.weight is not None:
                    w = kb.load(t.weight, at)
                    weight = w if weight is None else kb.alu("mul", weight, w)
            value = kb.alu("sub", kb.cast(kb.load(x, indices), _I32), x_zero)
            kb.mulacc(acc, value, weight if weight is not None else kb.const(1, _I32))
        product = kb.alu("mul", kb.cast(kb.acc_get(acc), I64), m)
        # Floor division by 2^shift, then half to even on the remainder (≥ 0 after a floor).
        quotient = kb.alu("shr", product, by)
        remainder = kb.alu("and", product, mask)
        odd = kb.alu("cmpne", kb.alu("and", quotient, one), zero)
        up = kb.alu("or", kb.alu("cmplt", half, remainder), kb.alu("and", kb.alu("cmpeq", remainder, half), odd))
        value = kb.alu("add", kb.alu("add", quotient, kb.where(up, one, zero)), y_zero)
        kb.store(kb.cast(kb.alu("min", kb.alu("max", value, low), high), out_type), y, ivs)
    return y


# -- Resize with run-time scales, sizes or roi ----------------------------------------------

_F64 = Float64Type()


def _optional_values(kb: KernelBuilder, op: Operation, index: int) -> list[SSAValue] | None:
    """ONNX input `index` as f64 values (loaded at run time or constants); None when absent or
    empty."""
    value = input_value(op, index)
    if value is None or not int(np.prod(tensor_shape(value))):
        return None
    array = constant_array(value)
    if array is not None:
        return [kb.const(float(v), _F64) for v in array.reshape(-1)]
    return load_all(kb, value, _F64)


def _runtime_resize(kb: KernelBuilder, op: Operation, attrs: ResizeAttributes, in_shape: Sequence[int]) -> Layout:
    """Resize whose scales, sizes or roi are read at run time, into the compiled result shape.

    `sizes` with the "stretch" policy and no run-time roi fix every scale (out / in): the
    tables are constants, and `abi.check` makes NAME_predict return `STATUS_BAD_PARAMETER`
    unless the sizes are the compiled ones. Otherwise the scales (or roi) change the source
    coordinates, so the tables are filled at run time, computed in f64 as the ONNX reference
    does; the check asks that every scale give the compiled size (⌊scale·in⌋, or the rounded
    common scale of the aspect ratio policies) and that the roi be finite.
    """
    out_shape = tensor_shape(op.results[0])
    rank = len(in_shape)
    axes = [a % rank for a in get_attr(op, "axes")] if get_attr(op, "axes") is not None else list(range(rank))
    policy = get_attr(op, "keep_aspect_ratio_policy")
    gb = guard_builder(kb, op, [1, 2, 3])
    scales = _optional_values(gb, op, 2)
    sizes = _optional_values(gb, op, 3)
    roi = _optional_values(gb, op, 1) if attrs.coordinate_mode == "tf_crop_and_resize" else None
    given = scales if scales is not None else sizes
    if given is None:
        raise ValueError("one of scales and sizes is required")
    if len(given) != len(axes):
        raise ValueError(f"{len(given)} scales or sizes for {len(axes)} axes")
    if roi is not None and len(roi) != 2 * len(axes):
        raise ValueError(f"roi has {len(roi)} values for {len(axes)} axes")
    if attrs.coordinate_mode == "tf_crop_and_resize" and roi is None:
        raise ValueError("tf_crop_and_resize needs a roi")
    conditions = []
    runtime_roi = runtime_input(op, 1) is not None and attrs.coordinate_mode == "tf_crop_and_resize"
    if scales is None and policy == "stretch" and not runtime_roi:
        assert sizes is not None
        for axis, size in zip(axes, sizes):
            conditions.append(gb.alu("cmpeq", size, gb.const(float(out_shape[axis]), _F64)))
        check(gb, all_of(gb, conditions))
        constant_roi = None if runtime_input(op, 1) is not None else constant_input(op, 1, "roi")
        plan = plan_resize(attrs, in_shape, None, np.array([out_shape[a] for a in axes]), constant_roi, axes)
        return emit_resize(kb, op, attrs, plan)
    # The scale of each axis, and the size it gives.
    scale: dict[int, SSAValue] = {}
    if scales is not None:
        for axis, value in zip(axes, scales):
            scale[axis] = value
            size = gb.alu("floor", gb.alu("mul", value, gb.const(float(in_shape[axis]), _F64)))
            conditions.append(gb.alu("cmplt", gb.const(0.0, _F64), value))
            conditions.append(gb.alu("cmpeq", size, gb.const(float(out_shape[axis]), _F64)))
    else:
        assert sizes is not None
        ratios = [gb.alu("div", size, gb.const(float(in_shape[axis]), _F64)) for axis, size in zip(axes, sizes)]
        if policy == "stretch":
            picked = ratios
        elif policy in ("not_larger", "not_smaller"):
            combine = "min" if policy == "not_larger" else "max"
            common = ratios[0]
            for ratio in ratios[1:]:
                common = gb.alu(combine, common, ratio)
            picked = [common] * len(axes)
        else:
            raise ValueError(f"unknown keep_aspect_ratio_policy '{policy}'")
        for axis, value, size in zip(axes, picked, sizes):
            scale[axis] = value
            if policy == "stretch":
                got = size
            else:  # round half up
                got = gb.alu("floor", gb.alu("add", gb.alu("mul", value, gb.const(float(in_shape[axis]), _F64)), gb.const(0.5, _F64)))
            conditions.append(gb.alu("cmplt", gb.const(0.0, _F64), value))
            conditions.append(gb.alu("cmpeq", got, gb.const(float(out_shape[axis]), _F64)))
    limits: dict[int, tuple[SSAValue, SSAValue]] = {}
    if roi is not None:
        for i, axis in enumerate(axes):
            start, end = roi[i], roi[len(axes) + i]
            limits[axis] = (start, end)
            for v in (start, end):  # finite: v - v is 0, not NaN
                conditions.append(gb.alu("cmpeq", gb.alu("sub", v, v), gb.const(0.0, _F64)))
    check(gb, all_of(gb, conditions))
    # Every listed axis gets tables: a run-time scale of 1 still moves the coordinates.
    plan = ResizePlan(tuple(out_shape), {axis: None for axis in axes if out_shape[axis]})  # type: ignore[misc]

    def make(axis: int, weight_type: Attribute) -> _AxisTables:
        return _runtime_tables(kb, op, attrs, axis, in_shape[axis], out_shape[axis], scale[axis], limits.get(axis), weight_type)

    return emit_resize(kb, op, attrs, plan, make)


def _runtime_tables(
    kb: KernelBuilder,
    op: Operation,
    attrs: ResizeAttributes,
    axis: int,
    in_size: int,
    out_size: int,
    scale: SSAValue,
    roi: tuple[SSAValue, SSAValue] | None,
    weight_type: Attribute,
) -> _AxisTables:
    """`axis_taps`, computed at run time into scratch tables: one loop over the output
    positions, f64 arithmetic, the same formulas."""

    def c(v: float) -> SSAValue:
        return kb.const(float(v), _F64)

    def op2(name: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return kb.alu(name, a, b)

    def clamp_index(v: SSAValue) -> SSAValue:
        return kb.cast(kb.alu("min", kb.alu("max", v, kb.const(0, I64)), kb.const(in_size - 1, I64)), _INDEX_TABLE_TYPE)

    nearest = attrs.mode == "nearest"
    if not nearest and attrs.mode not in _KERNELS:
        raise ValueError(f"unknown mode '{attrs.mode}'")
    kernel_support = 0 if nearest else _KERNELS[attrs.mode][1]
    if attrs.antialias and not nearest:
        # The widest kernel any scale giving out_size can ask for; the extra taps weigh 0.
        stretch_low = min(out_size / in_size, 1.0)
        width = -2 * math.floor(-kernel_support / stretch_low)
    else:
        width = 1 if nearest else 2 * kernel_support
    prefix = f"{result_name(op)}_axis{axis}"
    index = kb.alloc(f"{prefix}_index", (out_size, width), _INDEX_TABLE_TYPE)
    weight = None if nearest else kb.alloc(f"{prefix}_weight", (out_size, width), weight_type)
    outside = kb.alloc(f"{prefix}_outside", (out_size,), i1) if roi is not None else None
    length = op2("mul", scale, c(in_size))  # the fractional output extent
    with kb.loop(out_size) as o:
        y = kb.cast(kb.cast(o, I64), _F64)
        half = op2("sub", op2("div", op2("add", y, c(0.5)), scale), c(0.5))
        mode = attrs.coordinate_mode
        if mode == "half_pixel":
            x = half
        elif mode == "pytorch_half_pixel":
            x = half if out_size > 1 else c(0.0)
        elif mode == "half_pixel_symmetric":
            offset = op2("mul", c(in_size / 2), op2("sub", c(1.0), op2("div", c(out_size), length)))
            x = op2("add", offset, half)
        elif mode == "asymmetric":
            x = op2("div", y, scale)
        elif mode == "tf_half_pixel_for_nn":
            x = op2("div", op2("add", y, c(0.5)), scale)
        elif mode == "align_corners":
            x = op2("div", op2("mul", y, c(in_size - 1)), c(out_size - 1)) if out_size > 1 else c(0.0)
        elif mode == "tf_crop_and_resize":
            assert roi is not None
            start, end = roi
            span = op2("mul", op2("sub", end, start), c(in_size - 1))
            first = op2("mul", start, c(in_size - 1))
            if out_size > 1:
                x = op2("add", op2("div", op2("mul", y, span), c(out_size - 1)), first)
            else:
                x = op2("add", op2("div", span, c(2.0)), first)
        else:
            raise ValueError(f"unknown coordinate_transformation_mode '{mode}'")
        if outside is not None:
            out_flag = op2("or", op2("cmplt", x, c(0.0)), op2("cmplt", c(in_size - 1), x))
            kb.store(out_flag, outside, [o])
        # Far outside the input every position clamps alike; keep the casts exact.
        x = kb.alu("min", kb.alu("max", x, c(-4.0 * (in_size + width))), c(4.0 * (in_size + width)))
        if nearest:
            below = kb.alu("floor", x)
            fraction = op2("sub", x, below)
            upper = {
                "round_prefer_floor": lambda: op2("cmplt", c(0.5), fraction),
                "round_prefer_ceil": lambda: op2("cmple", c(0.5), fraction),
                "floor": lambda: kb.const(0, i1),
                "ceil": lambda: op2("cmplt", c(0.0), fraction),
            }.get(attrs.nearest_mode)
            if upper is None:
                raise ValueError(f"unknown nearest_mode '{attrs.nearest_mode}'")
            picked = op2("add", kb.cast(below, I64), kb.cast(upper(), I64))
            kb.store(clamp_index(picked), index, [o, kb.index(0)])
        else:
            assert weight is not None
            stretch = kb.alu("min", scale, c(1.0)) if attrs.antialias else c(1.0)
            base = op2("sub", kb.alu("ceil", x), c(1.0))
            distance = op2("sub", x, base)
            base_index = kb.cast(base, I64)
            weights, inside = [], []
            for k in range(width):
                offset = k + 1 - width // 2
                position = op2("add", base_index, kb.const(offset, I64))
                kb.store(clamp_index(position), index, [o, kb.index(k)])
                d = op2("mul", stretch, op2("sub", c(offset), distance))
                weights.append(_runtime_kernel(kb, attrs, d))
                inside.append(op2("and", op2("cmple", kb.const(0, I64), position), op2("cmplt", position, kb.const(in_size, I64))))
            if attrs.exclude_outside:
                weights = [kb.where(ok, w, c(0.0)) for ok, w in zip(inside, weights)]
            if attrs.antialias or attrs.exclude_outside:
                total = weights[0]
                for w in weights[1:]:
                    total = op2("add", total, w)
                total = kb.where(op2("cmpeq", total, c(0.0)), c(1.0), total)
                weights = [op2("div", w, total) for w in weights]
            for k, w in enumerate(weights):
                kb.store(kb.cast(w, weight_type), weight, [o, kb.index(k)])
    return _AxisTables(index, weight, outside)


def _runtime_kernel(kb: KernelBuilder, attrs: ResizeAttributes, d: SSAValue) -> SSAValue:
    """`_linear_kernel` / `_cubic_kernel` of an f64 distance, as uop arithmetic."""

    def c(v: float) -> SSAValue:
        return kb.const(float(v), _F64)

    d = kb.alu("abs", d)
    if attrs.mode == "linear":
        return kb.alu("min", kb.alu("max", kb.alu("sub", c(1.0), d), c(0.0)), c(1.0))
    a = attrs.cubic_a
    mul, add, sub = (lambda x, y: kb.alu("mul", x, y)), (lambda x, y: kb.alu("add", x, y)), (lambda x, y: kb.alu("sub", x, y))
    inner = add(mul(mul(sub(mul(c(a + 2), d), c(a + 3)), d), d), c(1.0))
    outer = sub(mul(add(mul(sub(mul(c(a), d), c(5 * a)), d), c(8 * a)), d), c(4 * a))
    return kb.where(kb.alu("cmple", d, c(1.0)), inner, kb.where(kb.alu("cmplt", d, c(2.0)), outer, c(0.0)))


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
        if any(runtime_input(op, index) is not None for index in (1, 2, 3)):
            return [_runtime_resize(kb, op, attrs, in_shape)]
        plan = plan_resize(
            attrs,
            in_shape,
            scales=constant_input(op, 2, "scales"),
            sizes=constant_input(op, 3, "sizes"),
            roi=constant_input(op, 1, "roi"),
            axes=get_attr(op, "axes"),
            keep_aspect_ratio_policy=get_attr(op, "keep_aspect_ratio_policy"),
        )
        if requantize_parameters(op) is not None:
            return [emit_requantized_resize(kb, op, plan)]
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
