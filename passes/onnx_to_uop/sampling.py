"""Sampling at run-time positions: GridSample and RoiAlign.

GridSample's grid is a runtime input: the coordinate arithmetic (denormalization, padding
modes, taps and their weights) is emitted as scalar code, once per output position and shared
by every channel.

RoiAlign (with a fixed sampling_ratio) computes its bilinear samples from the runtime rois
in scalar code too.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import AnyFloat, IndexType
from xdsl.ir import Attribute, Operation, SSAValue

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
from zant.passes.onnx_to_uop.parameters import (
    I64, all_of, check, constant_array, constant_indices, data_index, guard_builder, load_all, runtime_input,
)
from zant.passes.onnx_to_uop.resample import compute_type

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
        known = constant_indices(op, 2, x.shape[0], nonnegative=True)  # else STATUS_BAD_INDEX
        y = kb.alloc(result_name(op), out_shape, element_type)
        with kb.loop_nest(out_shape) as (r, c, ph, pw):
            image = data_index(kb, kb.load(batch, [r]), x.shape[0], known, nonnegative=True)
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


# -- AffineGrid -----------------------------------------------------------------------------


def affine_base_grid(spatial: Sequence[int], align_corners: bool) -> np.ndarray:
    """The homogeneous coordinates (x, y[, z], 1) of every output position, as ONNX's reference
    lays them out (x along the last spatial axis), in f64: shape (*spatial, len(spatial) + 1)."""
    axes = []
    for size in spatial:
        if align_corners:
            axes.append(np.arange(-1, 1 + 0.0001, 2.0 / (size - 1)) if size > 1 else np.array([-1.0]))
        else:
            step = 2.0 / size
            axes.append(np.arange(-1 + step / 2, 1, step))
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack([*reversed(mesh), np.ones(tuple(spatial))], axis=-1)


class AffineGridLowering(OnnxLowering):
    """AffineGrid: grid[n, …, i] = Σ_j theta[n, i, j] · base[…, j], the base grid a constant
    table of the result's spatial shape. A `size` read at run time must name that shape (and N;
    the channel count is free), else NAME_predict returns STATUS_BAD_PARAMETER."""

    op_names = frozenset({"onnx.AffineGrid"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        theta = layout_of(input_value(op, 0))
        out_shape = tensor_shape(op.results[0])
        n, spatial, dims = out_shape[0], list(out_shape[1:-1]), out_shape[-1]
        if theta.shape != (n, dims, dims + 1) or len(spatial) != dims:
            raise ValueError(f"theta of shape {list(theta.shape)} does not make a grid of shape {list(out_shape)}")
        expected = [n, None, *spatial]
        if runtime_input(op, 1) is not None:
            gb = guard_builder(kb, op, [1])
            values = load_all(gb, input_value(op, 1))
            if len(values) != len(expected):
                raise ValueError(f"size has {len(values)} values, the grid needs {len(expected)}")
            check(gb, all_of(gb, [gb.alu("cmpeq", v, gb.const(e, I64)) for v, e in zip(values, expected) if e is not None]))
        else:
            size = [int(v) for v in constant_array(input_value(op, 1)).reshape(-1)]
            if len(size) != len(expected) or any(e is not None and v != e for v, e in zip(size, expected)):
                raise ValueError(f"size {size} differs from the grid's shape {list(out_shape)}")
        element_type = tensor_element_type(op.results[0])
        acc_type = accumulator_type(element_type)
        base = kb.constant(f"{result_name(op)}_base", affine_base_grid(spatial, bool(get_attr(op, "align_corners"))), acc_type)
        out = kb.alloc(result_name(op), out_shape, element_type)
        with kb.loop_nest(out_shape) as ivs:
            acc = kb.define_acc(0, acc_type)
            for j in range(dims + 1):
                kb.mulacc(acc, kb.load(theta, [ivs[0], ivs[-1], kb.index(j)]), kb.load(base, [*ivs[1:-1], kb.index(j)]))
            kb.store(kb.cast(kb.acc_get(acc), element_type), out, ivs)
        return [out]


PATTERNS = (GridSampleLowering(), RoiAlignLowering(), AffineGridLowering())

__all__ = ["PATTERNS", "AffineGridLowering", "GridSampleLowering", "RoiAlignLowering"]
