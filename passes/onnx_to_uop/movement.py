"""Movement ops: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Identity, Expand, Slice, Split
and DepthToSpace/SpaceToDepth as views; Concat, Gather*, Tile, Pad, Trilu, EyeLike, OneHot and
Scatter*, ReverseSequence and TensorScatter as copy loops; Shape, Size and ConstantOfShape as
constants; Dropout as the input itself and an all-true mask at inference, with a seed in
training mode as the mask of ONNX's reference (NumPy's legacy generator, drawn at compile time).

A movement op only re-reads its input's buffer under a new Layout, so it emits no code unless
the new shape cannot be expressed by strides over the old one (a reshape of a non-contiguous
view that does more than add or drop size-1 dimensions); then the input is copied first. Shape
inference has already given every result a static type, which is the target shape here; the
shape operands are only checked against it when they are constants.

Concat copies each input into its slice of one output buffer.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
from xdsl.dialects.builtin import Float32Type, Float64Type, IndexType, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

from zant.dialects import uop
from zant.dialects.onnx import get_attr, input_value, inputs
from zant.ir.resources import attr_to_array, make_constant_attr
from zant.ir.types import numpy_dtype
from zant.passes.onnx_to_uop.base import OnnxLowering, copy_layout, materialize, result_name
from zant.passes.onnx_to_uop.elementwise import reject_bfloat16
from zant.passes.onnx_to_uop.parameters import (
    all_of,
    axis_membership,
    check,
    check_axis_sets,
    check_values,
    constant_array,
    constant_indices,
    data_index,
    guard_builder,
    load_all,
    runtime_input,
)
from zant.passes.onnx_to_uop.kernel import (
    CHANNELS_LAST,
    KernelBuilder,
    Layout,
    channels_last_order,
    layout_of,
    result_layout,
    tensor_element_type,
    tensor_shape,
)


def _normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} out of range for rank {rank}")
    return axis % rank


def _constant_value(value: SSAValue) -> np.ndarray | None:
    """The value of an operand produced by a (lowered) constant, else None."""
    owner = layout_of(value).buffer.owner
    if isinstance(owner, uop.DefineGlobalOp) and owner.value is not None:
        return attr_to_array(owner.value)
    return None


def reshape_target(shape: Sequence[int], requested: Sequence[int], allowzero: bool) -> tuple[int, ...]:
    """ONNX Reshape's output shape: 0 copies the input dimension (unless allowzero), -1 is inferred."""
    dims = [
        shape[i] if d == 0 and not allowzero else d for i, d in enumerate(requested)
    ]
    if dims.count(-1) > 1:
        raise ValueError(f"shape {list(requested)} has more than one -1")
    if -1 in dims:
        known = int(np.prod([d for d in dims if d != -1]))
        total = int(np.prod(shape))
        if known == 0 or total % known:
            raise ValueError(f"cannot reshape {tuple(shape)} to {list(requested)}")
        dims[dims.index(-1)] = total // known
    return tuple(dims)


def _squeeze_view(layout: Layout, shape: tuple[int, ...]) -> Layout | None:
    """`layout` under `shape` when the two differ only by size-1 dimensions, whatever the strides."""
    kept = [(d, s) for d, s in zip(layout.shape, layout.strides) if d != 1]
    if [d for d, _ in kept] != [d for d in shape if d != 1]:
        return None
    strides = iter(s for _, s in kept)
    return Layout(layout.buffer, shape, tuple(0 if d == 1 else next(strides) for d in shape), layout.offset)


def reshaped(kb: KernelBuilder, op: Operation, layout: Layout, shape: tuple[int, ...]) -> Layout:
    """`layout` as `shape`: a view when strides can express it, else a reshaped copy."""
    view = _squeeze_view(layout, shape) or layout.reshape(shape)
    if view is not None:
        return view
    copy = materialize(kb, layout, result_name(op))
    return Layout.contiguous(copy.buffer, shape)


class ReshapeLowering(OnnxLowering):
    """Reshape, Flatten, Squeeze and Unsqueeze: the input's elements under the result's shape."""

    op_names = frozenset({"onnx.Reshape", "onnx.Flatten", "onnx.Squeeze", "onnx.Unsqueeze"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        data = inputs(op)[0]
        shape = tensor_shape(op.results[0])
        if op.name == "onnx.Reshape":
            requested = _constant_value(inputs(op)[1])
            if requested is not None:
                target = reshape_target(tensor_shape(data), requested.tolist(), bool(get_attr(op, "allowzero")))
                if target != shape:
                    raise ValueError(f"shape {requested.tolist()} gives {target}, but the result type is {shape}")
            elif runtime_input(op, 1) is not None:
                _check_reshape(guard_builder(kb, op, [1]), op, tensor_shape(data), shape)
        elif op.name in ("onnx.Squeeze", "onnx.Unsqueeze") and runtime_input(op, 1) is not None:
            _check_squeeze_axes(guard_builder(kb, op, [1]), op, tensor_shape(data), shape)
        return [reshaped(kb, op, layout_of(data), shape)]


def _check_reshape(kb: KernelBuilder, op: Operation, in_shape: Sequence[int], shape: Sequence[int]) -> None:
    """A run-time Reshape `shape` must give the result's: each value that dimension, or -1 (at
    most one: inferred), or 0 copying an equal input dimension (without allowzero)."""
    values = load_all(kb, inputs(op)[1])
    if len(values) != len(shape):
        raise ValueError(f"shape has {len(values)} values for a rank-{len(shape)} result")
    allowzero = bool(get_attr(op, "allowzero"))
    conditions, inferred = [], []
    for i, (v, size) in enumerate(zip(values, shape)):
        is_inferred = kb.alu("cmpeq", v, kb.const(-1, _I64))
        inferred.append(kb.cast(is_inferred, _I64))
        ok = kb.alu("or", kb.alu("cmpeq", v, kb.const(size, _I64)), is_inferred)
        if not allowzero and i < len(in_shape) and in_shape[i] == size:
            ok = kb.alu("or", ok, kb.alu("cmpeq", v, kb.const(0, _I64)))
        conditions.append(ok)
    total = inferred[0] if inferred else kb.const(0, _I64)
    for flag in inferred[1:]:
        total = kb.alu("add", total, flag)
    conditions.append(kb.alu("cmple", total, kb.const(1, _I64)))
    check(kb, all_of(kb, conditions))


def _check_squeeze_axes(kb: KernelBuilder, op: Operation, in_shape: Sequence[int], shape: Sequence[int]) -> None:
    """Run-time Squeeze/Unsqueeze axes must be a set of size-1 dimensions (of the input, or of
    the result for Unsqueeze) whose removal turns the longer shape into the shorter."""
    longer, shorter = (shape, in_shape) if op.name == "onnx.Unsqueeze" else (in_shape, shape)
    count = len(longer) - len(shorter)
    sets = [
        frozenset(c)
        for c in combinations(range(len(longer)), count)
        if all(longer[d] == 1 for d in c) and [longer[d] for d in range(len(longer)) if d not in c] == list(shorter)
    ]
    values = load_all(kb, inputs(op)[1])
    if not sets or len(values) != count:
        raise ValueError(f"no {len(values)} axes turn shape {list(in_shape)} into {list(shape)}")
    check_axis_sets(kb, values, len(longer), sets)


class TransposeLowering(OnnxLowering):
    """Transpose as a permuted view; `perm` defaults to reversing the dimensions."""

    op_names = frozenset({"onnx.Transpose"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        layout = layout_of(inputs(op)[0])
        perm = get_attr(op, "perm")
        if perm is None:
            perm = list(reversed(range(layout.rank)))
        if sorted(perm) != list(range(layout.rank)):
            raise ValueError(f"perm {perm} is not a permutation of {layout.rank} dimensions")
        return [layout.permute(perm)]


class IdentityLowering(OnnxLowering):
    """Identity, and OptionalGetElement of a tensor (the importer gives tensors only; a tensor
    is an optional that holds one): the input's layout itself."""

    op_names = frozenset({"onnx.Identity", "onnx.OptionalGetElement"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        return [layout_of(inputs(op)[0])]


class ConcatLowering(OnnxLowering):
    """Concat along `axis`: each input is copied into its slice of the output buffer.

    Marked channels-last (`CHANNELS_LAST`), the output is stored (N, spatial…, C) and each copy
    walks its slice in that memory order, channels innermost, through the memory-order views of
    both sides at the identity index: a channels-last input is read front to back, and
    `fuse-loops` matches the copy with the stores of the input's producer when they go through
    the same view, so the producer writes into its slice of the output directly (a Fire
    module's two expand Convs into their Concat).

    Marked `CONCAT_DESTINATION` (the tiles of `schedule-patches`), an input already stored in
    its slice of the output by its producer (`result_layout`) is not copied."""

    op_names = frozenset({"onnx.Concat"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        shape = tensor_shape(op.results[0])
        axis = _normalize_axis(get_attr(op, "axis"), len(shape))
        out = result_layout(kb, op, result_name(op), shape, tensor_element_type(op.results[0]))
        marked = CHANNELS_LAST in op.attributes and len(shape) >= 3  # as `result_layout` stores it
        walk = channels_last_order(len(shape)) if marked else list(range(len(shape)))
        start = 0
        for value in inputs(op):
            source = layout_of(value)
            count = source.shape[axis]
            slot = out.slice(axis, start, 1, count)
            if count and source != slot:  # else its producer stored it there (`concat_slot`)
                copy_layout(kb, source.permute(walk), slot.permute(walk))
            start += count
        if start != shape[axis]:
            raise ValueError(f"inputs add up to {start} along axis {axis}, the result has {shape[axis]}")
        return [out]




# -- helpers for index arithmetic ------------------------------------------------------------

_I64 = IntegerType(64)
_I1 = IntegerType(1)


def _i64(kb: KernelBuilder, value: SSAValue) -> SSAValue:
    return kb.cast(value, _I64)


def _to_index(kb: KernelBuilder, value: SSAValue) -> SSAValue:
    return kb.cast(value, IndexType())


def _clamp(kb: KernelBuilder, value: SSAValue, low: int, high: int) -> SSAValue:
    """An i64 value clamped to [low, high]."""
    return kb.alu("min", kb.alu("max", value, kb.const(low, _I64)), kb.const(high, _I64))


def _required_constant(op: Operation, index: int, what: str) -> np.ndarray | None:
    value = input_value(op, index)
    if value is None:
        return None
    array = _constant_value(value)
    if array is None:
        raise NotImplementedError(f"{what} must be a constant")
    return array


def _constant_layout(kb: KernelBuilder, op: Operation, array: np.ndarray) -> Layout:
    result = op.results[0]
    array = np.asarray(array, dtype=numpy_dtype(tensor_element_type(result)))
    buffer_type = uop.BufferType(array.size, tensor_element_type(result))
    value = make_constant_attr(array.reshape(tensor_shape(result)), result_name(op))
    buffer = kb.insert(uop.DefineGlobalOp("constant", 0, result_name(op), buffer_type, value))
    buffer.result.name_hint = result.name_hint
    return Layout.contiguous(buffer.result, tensor_shape(result))


def _zero(kb: KernelBuilder, element_type) -> SSAValue:
    return kb.const(0, element_type)


# -- constants from static shapes ------------------------------------------------------------


class ShapeLowering(OnnxLowering):
    """Shape and Size of a statically shaped tensor: constants (fold-constants usually got them)."""

    op_names = frozenset({"onnx.Shape", "onnx.Size"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        shape = list(tensor_shape(inputs(op)[0]))
        if op.name == "onnx.Size":
            return [_constant_layout(kb, op, np.array(int(np.prod(shape))))]
        start = get_attr(op, "start") or 0
        end = get_attr(op, "end")
        return [_constant_layout(kb, op, np.array(shape[start:end], dtype=np.int64))]


class ConstantOfShapeLowering(OnnxLowering):
    """ConstantOfShape: the result (its shape is static) filled with `value` (default 0)."""

    op_names = frozenset({"onnx.ConstantOfShape"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        shape = tensor_shape(op.results[0])
        element_type = tensor_element_type(op.results[0])
        value = get_attr(op, "value")
        scalar = 0 if value is None else np.asarray(value).reshape(-1)[0].item()
        check_values(kb, op, 0, shape, "shape")
        out = kb.alloc(result_name(op), shape, element_type)
        fill = kb.const(scalar, element_type)
        with kb.loop_nest(shape) as ivs:
            kb.store(fill, out, ivs)
        return [out]


class RangeLowering(OnnxLowering):
    """Range: out[i] = start + i * delta (the length is static, from the result type).

    start, limit and delta are read at run time; unless all three are constants, `abi.check`
    makes NAME_predict return `STATUS_BAD_PARAMETER` when max(⌈(limit - start) / delta⌉, 0)
    (in f64) is not the compiled length."""

    op_names = frozenset({"onnx.Range"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        shape = tensor_shape(op.results[0])
        element_type = tensor_element_type(op.results[0])
        start = kb.load(layout_of(inputs(op)[0]), [])
        delta = kb.load(layout_of(inputs(op)[2]), [])
        if any(runtime_input(op, index) is not None for index in range(3)):
            reject_bfloat16(op)  # the length check computes with the values
            f64 = Float64Type()
            gb = guard_builder(kb, op, [0, 1, 2])
            first, limit, step = (gb.cast(gb.load(layout_of(inputs(op)[i]), []), f64) for i in range(3))
            span = gb.alu("div", gb.alu("sub", limit, first), step)
            count = gb.alu("max", gb.alu("ceil", span), gb.const(0.0, f64))
            check(gb, gb.alu("cmpeq", count, gb.const(float(shape[0]), f64)))
        out = kb.alloc(result_name(op), shape, element_type)
        with kb.loop(shape[0]) as i:
            step = kb.alu("mul", kb.cast(_i64(kb, i), element_type), delta)
            kb.store(kb.alu("add", start, step), out, [i])
        return [out]


# -- views -----------------------------------------------------------------------------------


class ExpandLowering(OnnxLowering):
    """Expand: a broadcast (stride-0) view of the input."""

    op_names = frozenset({"onnx.Expand"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        data = layout_of(inputs(op)[0])
        shape = tensor_shape(op.results[0])
        if runtime_input(op, 1) is not None:
            gb = guard_builder(kb, op, [1])
            # Each requested dimension is the result's, or 1 where the input's already is.
            values = load_all(gb, inputs(op)[1])
            if len(values) > len(shape):
                raise ValueError(f"shape has {len(values)} values for a rank-{len(shape)} result")
            conditions = []
            for i, v in enumerate(values):
                j = len(shape) - len(values) + i
                k = j - (len(shape) - data.rank)
                ok = gb.alu("cmpeq", v, gb.const(shape[j], _I64))
                if k >= 0 and data.shape[k] == shape[j]:
                    ok = gb.alu("or", ok, gb.alu("cmpeq", v, gb.const(1, _I64)))
                conditions.append(ok)
            check(gb, all_of(gb, conditions))
        return [data.broadcast_to(shape)]


class SliceLowering(OnnxLowering):
    """Slice with constant starts/ends/axes/steps: a strided view (negative steps included)."""

    op_names = frozenset({"onnx.Slice"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        if any(runtime_input(op, index) is not None for index in range(1, 5)):
            return [_runtime_slice(op, kb)]
        layout = layout_of(inputs(op)[0])
        starts = _required_constant(op, 1, "starts").reshape(-1).tolist()
        ends = _required_constant(op, 2, "ends").reshape(-1).tolist()
        axes = _required_constant(op, 3, "axes")
        steps = _required_constant(op, 4, "steps")
        axes = list(range(len(starts))) if axes is None else axes.reshape(-1).tolist()
        steps = [1] * len(starts) if steps is None else steps.reshape(-1).tolist()
        for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
            axis = _normalize_axis(axis, layout.rank)
            if step == 0:
                raise ValueError("slice step 0")
            # Python's slice.indices clamps exactly as ONNX Slice specifies, for both signs of step.
            picked = range(*slice(start, end, step).indices(layout.shape[axis]))
            layout = layout.slice(axis, picked.start if len(picked) else 0, step, len(picked))
        if layout.shape != tensor_shape(op.results[0]):
            raise ValueError(f"slice gives {layout.shape}, the result type is {tensor_shape(op.results[0])}")
        return [layout]


def _values(kb: KernelBuilder, op: Operation, index: int, default: Sequence[int]) -> list[SSAValue]:
    """ONNX input `index` as i64 values: loaded when only known at run time, else constants
    (`default` when the input is absent)."""
    value = input_value(op, index)
    if value is None:
        return [kb.const(v, _I64) for v in default]
    if runtime_input(op, index) is not None:
        return load_all(kb, value)
    return [kb.const(int(v), _I64) for v in _required_constant(op, index, "").reshape(-1)]


def _axis_picker(kb: KernelBuilder, axes: Sequence[SSAValue], d: int, rank: int):
    """`pick(values, default)`: the value at the position where the run-time `axes` name
    dimension `d` (negative axes count from the end), else `default`."""
    hits = [kb.alu("or", kb.alu("cmpeq", a, kb.const(d, _I64)), kb.alu("cmpeq", a, kb.const(d - rank, _I64))) for a in axes]

    def pick(values: Sequence[SSAValue], default: SSAValue) -> SSAValue:
        for hit, value in zip(hits, values, strict=True):
            default = kb.where(hit, value, default)
        return default

    return pick


def _runtime_slice(op: Operation, kb: KernelBuilder) -> Layout:
    """Slice whose starts, ends, axes or steps are read at run time: a copy into the compiled
    (static) result shape. Per input dimension the start and step come from the values (clamped
    as ONNX says); `abi.check` makes NAME_predict return `STATUS_BAD_PARAMETER` unless every
    axis is in range and named once, no step is 0 and each dimension's count is the compiled
    one. The copy then reads x at start + i·step along each dimension, always in bounds."""
    x = layout_of(inputs(op)[0])
    shape, rank = x.shape, x.rank
    out_shape = tensor_shape(op.results[0])
    gb = guard_builder(kb, op, [1, 2, 3, 4])
    starts = _values(gb, op, 1, [])
    count = len(starts)
    ends = _values(gb, op, 2, [])
    axes = _values(gb, op, 3, range(count))
    steps = _values(gb, op, 4, [1] * count)
    if not len(ends) == len(axes) == len(steps) == count:
        raise ValueError("starts, ends, axes and steps differ in length")
    named, valid = axis_membership(gb, axes, rank)
    conditions = [valid]
    zero, one = gb.const(0, _I64), gb.const(1, _I64)
    base = gb.const(x.offset, _I64)
    strides: list[SSAValue] = []
    for d in range(rank):
        dim = gb.const(shape[d], _I64)
        pick = _axis_picker(gb, axes, d, rank)
        start, end, step = pick(starts, zero), pick(ends, dim), pick(steps, one)
        conditions.append(gb.alu("cmpne", step, zero))
        # |step| above the dimension picks at most one element: clamp it, so nothing overflows.
        limit = max(shape[d], 1)
        step = _clamp(gb, step, -limit, limit)
        step = gb.where(gb.alu("cmpeq", step, zero), one, step)
        forward = gb.alu("cmplt", zero, step)
        start = gb.where(gb.alu("cmplt", start, zero), gb.alu("add", _clamp(gb, start, -shape[d], 0), dim), start)
        end = gb.where(gb.alu("cmplt", end, zero), gb.alu("add", _clamp(gb, end, -shape[d] - 1, 0), dim), end)
        # Forward: start and end in [0, dim]; backward: start in [0, dim-1], end in [-1, dim-1].
        start = gb.where(forward, _clamp(gb, start, 0, shape[d]), _clamp(gb, start, 0, shape[d] - 1))
        end = gb.where(forward, _clamp(gb, end, 0, shape[d]), _clamp(gb, end, -1, shape[d] - 1))
        span = gb.where(forward, gb.alu("sub", end, start), gb.alu("sub", start, end))
        magnitude = gb.alu("abs", step)
        length = gb.alu("div", gb.alu("add", gb.alu("max", span, zero), gb.alu("sub", magnitude, one)), magnitude)
        conditions.append(gb.alu("cmpeq", length, gb.const(out_shape[d], _I64)))
        base = gb.alu("add", base, gb.alu("mul", start, gb.const(x.strides[d], _I64)))
        strides.append(_to_index(gb, gb.alu("mul", step, gb.const(x.strides[d], _I64))))
    check(gb, all_of(gb, conditions))
    base_index = _to_index(gb, base)
    element_type = tensor_element_type(op.results[0])
    out = kb.alloc(result_name(op), out_shape, element_type)
    if out.size == 0:
        return out
    flat = Layout(x.buffer, (x.buffer.type.size.data,), (1,), 0)  # type: ignore[attr-defined]
    with kb.loop_nest(out_shape) as ivs:
        address = base_index
        for iv, stride in zip(ivs, strides):
            address = kb.alu("add", address, kb.alu("mul", iv, stride))
        kb.store(kb.load(flat, [address]), out, ivs)
    return out


class SplitLowering(OnnxLowering):
    """Split: each output a slice view of the input (sizes from the result types)."""

    op_names = frozenset({"onnx.Split"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        layout = layout_of(inputs(op)[0])
        axis = _normalize_axis(get_attr(op, "axis"), layout.rank)
        check_values(kb, op, 1, [tensor_shape(r)[axis] for r in op.results], "split")
        views, start = [], 0
        for result in op.results:
            count = tensor_shape(result)[axis]
            views.append(layout.slice(axis, start, 1, count))
            start += count
        if start != layout.shape[axis]:
            raise ValueError(f"outputs add up to {start} along axis {axis}, the input has {layout.shape[axis]}")
        return views


class SpaceDepthLowering(OnnxLowering):
    """DepthToSpace / SpaceToDepth: reshape, permute, reshape (a copy only where strides can't)."""

    op_names = frozenset({"onnx.DepthToSpace", "onnx.SpaceToDepth"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        layout = layout_of(inputs(op)[0])
        n, c, h, w = layout.shape
        b = get_attr(op, "blocksize")
        if op.name == "onnx.DepthToSpace":
            if get_attr(op, "mode") == "CRD":
                split, perm = (n, c // (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3)
            else:
                split, perm = (n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2)
        else:
            crd = "mode" in op.spec().schema.attributes and get_attr(op, "mode") == "CRD"
            split, perm = (n, c, h // b, b, w // b, b), ((0, 1, 3, 5, 2, 4) if crd else (0, 3, 5, 1, 2, 4))
        permuted = reshaped(kb, op, layout, split).permute(perm)
        return [reshaped(kb, op, permuted, tensor_shape(op.results[0]))]


# -- copy loops ------------------------------------------------------------------------------


class GatherLowering(OnnxLowering):
    """Gather, GatherElements and GatherND: load the index, wrap negatives, then read the data.

    An index only known at run time is a `uop.bound_index` (`check-data-indices` checks it
    before the kernel: `STATUS_BAD_INDEX` for one out of range); a constant one out of range is
    a compile error."""

    op_names = frozenset({"onnx.Gather", "onnx.GatherElements", "onnx.GatherND"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        data = layout_of(inputs(op)[0])
        indices = layout_of(inputs(op)[1])
        shape = tensor_shape(op.results[0])
        if op.name != "onnx.GatherND":
            axis = _normalize_axis(get_attr(op, "axis"), data.rank)
            known = constant_indices(op, 1, data.shape[axis])
        else:
            batch = get_attr(op, "batch_dims")
            q, k = indices.rank, indices.shape[-1]
            known = constant_indices(op, 1, data.shape[batch : batch + k])
        out = kb.alloc(result_name(op), shape, tensor_element_type(op.results[0]))
        if op.name == "onnx.GatherElements":
            with kb.loop_nest(shape) as ivs:
                index = data_index(kb, kb.load(indices, ivs), data.shape[axis], known)
                kb.store(kb.load(data, [*ivs[:axis], index, *ivs[axis + 1 :]]), out, ivs)
            return [out]
        # Gather and GatherND read each index (tuple) once, in the loop of the last output
        # dimension it depends on, and copy the slice it selects in the loops inside.
        split = axis + indices.rank if op.name == "onnx.Gather" else indices.rank - 1
        with kb.loop_nest(shape[:split]) as outer:
            if op.name == "onnx.Gather":
                picked = [data_index(kb, kb.load(indices, outer[axis:]), data.shape[axis], known)]
                before = outer[:axis]
            else:
                picked = [
                    data_index(kb, kb.load(indices, [*outer, kb.index(j)]), data.shape[batch + j], known)
                    for j in range(k)
                ]
                before = outer[:batch]
            with kb.loop_nest(shape[split:]) as inner:
                kb.store(kb.load(data, [*before, *picked, *inner]), out, [*outer, *inner])
        return [out]


class TileLowering(OnnxLowering):
    """Tile: out[i] = x[i mod dim] along every axis."""

    op_names = frozenset({"onnx.Tile"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        data = layout_of(inputs(op)[0])
        shape = tensor_shape(op.results[0])
        if runtime_input(op, 1) is not None:
            gb = guard_builder(kb, op, [1])
            # Each repeat is out / in; over an empty dimension, any count that is not negative.
            repeats = load_all(gb, inputs(op)[1])
            if len(repeats) != data.rank:
                raise ValueError(f"repeats has {len(repeats)} values for rank {data.rank}")
            check(gb, all_of(gb, [
                gb.alu("cmpeq", r, gb.const(out_dim // dim, _I64)) if dim else gb.alu("cmple", gb.const(0, _I64), r)
                for r, dim, out_dim in zip(repeats, data.shape, shape)
            ]))
        out = kb.alloc(result_name(op), shape, tensor_element_type(op.results[0]))
        with kb.loop_nest(shape) as ivs:
            where = [
                iv if dim == out_dim else kb.alu("rem", iv, kb.index(dim))
                for iv, dim, out_dim in zip(ivs, data.shape, shape)
            ]
            kb.store(kb.load(data, where), out, ivs)
        return [out]


class PadLowering(OnnxLowering):
    """Pad (constant, reflect, edge, wrap) with constant pads/axes: one loop over the output."""

    op_names = frozenset({"onnx.Pad"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        data = layout_of(inputs(op)[0])
        rank = data.rank
        shape = tensor_shape(op.results[0])
        element_type = tensor_element_type(op.results[0])
        begin: list[int | SSAValue]
        if runtime_input(op, 1) is not None or runtime_input(op, 3) is not None:
            begin = _runtime_pads(op, guard_builder(kb, op, [1, 3]), data.shape, shape)
        else:
            pads = _required_constant(op, 1, "pads").reshape(-1).tolist()
            axes = _required_constant(op, 3, "axes")
            axes = list(range(rank)) if axes is None else [_normalize_axis(a, rank) for a in axes.reshape(-1).tolist()]
            begin = [0] * rank
            for position, axis in enumerate(axes):
                begin[axis] = pads[position]
        mode = get_attr(op, "mode")
        constant = input_value(op, 2)
        out = kb.alloc(result_name(op), shape, element_type)
        if 0 in data.shape:
            if mode != "constant":
                raise NotImplementedError(f"{mode} padding of an empty tensor")
        with kb.loop_nest(shape) as ivs:
            inside = None
            where = []
            for iv, dim, low, out_dim in zip(ivs, data.shape, begin, shape):
                if dim == out_dim and isinstance(low, int) and low == 0:
                    where.append(iv)
                    continue
                i = kb.alu("sub", _i64(kb, iv), low if isinstance(low, SSAValue) else kb.const(low, _I64))
                if mode == "constant":
                    ok = kb.alu(
                        "and",
                        kb.alu("cmple", kb.const(0, _I64), i),
                        kb.alu("cmplt", i, kb.const(dim, _I64)),
                    )
                    inside = ok if inside is None else kb.alu("and", inside, ok)
                elif mode == "reflect" and dim > 1:
                    i = kb.alu("abs", i)
                    i = kb.alu("sub", kb.const(dim - 1, _I64), kb.alu("abs", kb.alu("sub", kb.const(dim - 1, _I64), i)))
                elif mode == "wrap":
                    d = kb.const(dim, _I64)
                    i = kb.alu("rem", kb.alu("add", kb.alu("rem", i, d), d), d)
                elif mode not in ("edge", "reflect"):
                    raise NotImplementedError(f"Pad mode {mode!r}")
                where.append(_to_index(kb, _clamp(kb, i, 0, max(dim - 1, 0))))
            if 0 in data.shape:
                value = None
            else:
                value = kb.load(data, where)
            if mode == "constant":
                if constant is None:
                    fill = _zero(kb, element_type)
                else:
                    fill_layout = layout_of(constant)
                    fill = kb.load(fill_layout, [kb.index(0)] * fill_layout.rank)
                if value is None:
                    value = fill
                elif inside is not None:
                    value = kb.where(inside, value, fill)
            kb.store(value, out, ivs)
        return [out]


def _runtime_pads(op: Operation, kb: KernelBuilder, in_shape: Sequence[int], out_shape: Sequence[int]) -> list[SSAValue]:
    """The padding before each dimension when `pads` (or `axes`) are read at run time. What a
    dimension grows by is the compiled shapes'; how it splits before and after is the value's.
    `abi.check` makes NAME_predict return `STATUS_BAD_PARAMETER` unless the axes are in range
    and distinct and each dimension's pads add up to its growth."""
    rank = len(in_shape)
    pads = _values(kb, op, 1, [])
    axes = _values(kb, op, 3, range(len(pads) // 2))
    if len(pads) != 2 * len(axes):
        raise ValueError(f"{len(pads)} pads for {len(axes)} axes")
    named, valid = axis_membership(kb, axes, rank)
    conditions = [valid]
    zero = kb.const(0, _I64)
    begin = []
    for d in range(rank):
        pick = _axis_picker(kb, axes, d, rank)
        low, high = pick(pads[: len(axes)], zero), pick(pads[len(axes) :], zero)
        # Checked in i64 that cannot overflow: each pad clamped to what could still fit.
        bound = out_shape[d] + in_shape[d] + 1
        low, high = _clamp(kb, low, -bound, bound), _clamp(kb, high, -bound, bound)
        grows = kb.alu("add", low, high)
        conditions.append(kb.alu("cmpeq", grows, kb.const(out_shape[d] - in_shape[d], _I64)))
        begin.append(low)
    check(kb, all_of(kb, conditions))
    return begin


class CenterCropPadLowering(OnnxLowering):
    """CenterCropPad: each listed axis cropped or zero-padded, centred, to the result's size.

    The result type gives the sizes, so the offsets are constants (a crop of d drops ⌊d/2⌋ at
    the start, a pad of d adds ⌊d/2⌋ there); a `shape` input only known at run time must name
    those sizes, else `abi.check` makes NAME_predict return STATUS_BAD_PARAMETER."""

    op_names = frozenset({"onnx.CenterCropPad"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        data = layout_of(inputs(op)[0])
        rank = data.rank
        out_shape = tensor_shape(op.results[0])
        axes = get_attr(op, "axes")
        axes = list(range(rank)) if axes is None else [_normalize_axis(a, rank) for a in axes]
        targets = [out_shape[a] for a in axes]
        if any(out_shape[d] != data.shape[d] for d in range(rank) if d not in axes):
            raise ValueError(f"the result shape {list(out_shape)} changes an axis not in {axes}")
        if runtime_input(op, 1) is not None:
            gb = guard_builder(kb, op, [1])
            sizes = load_all(gb, input_value(op, 1))
            if len(sizes) != len(axes):
                raise ValueError(f"{len(sizes)} sizes for {len(axes)} axes")
            check(gb, all_of(gb, [gb.alu("cmpeq", v, gb.const(t, _I64)) for v, t in zip(sizes, targets)]))
        else:
            shape = _required_constant(op, 1, "shape")
            if shape is None or [int(v) for v in shape.reshape(-1)] != targets:
                raise ValueError(f"shape {None if shape is None else shape.tolist()} differs from the result's {targets}")
        # Input index = output index + offset: a crop's start, minus a pad's.
        offsets = [(data.shape[d] - out_shape[d]) // 2 if data.shape[d] > out_shape[d] else -((out_shape[d] - data.shape[d]) // 2) for d in range(rank)]
        element_type = tensor_element_type(op.results[0])
        out = kb.alloc(result_name(op), out_shape, element_type)
        if out.size == 0:
            return [out]
        empty = 0 in data.shape
        with kb.loop_nest(out_shape) as ivs:
            where, inside = [], []
            for d, iv in enumerate(ivs):
                if out_shape[d] <= data.shape[d]:
                    where.append(iv if offsets[d] == 0 else kb.alu("add", iv, kb.index(offsets[d])))
                    continue
                i = kb.alu("add", _i64(kb, iv), kb.const(offsets[d], _I64))
                inside.append(kb.alu("and", kb.alu("cmple", kb.const(0, _I64), i), kb.alu("cmplt", i, kb.const(data.shape[d], _I64))))
                where.append(_to_index(kb, _clamp(kb, i, 0, max(data.shape[d] - 1, 0))))
            zero = _zero(kb, element_type)
            value = zero if empty else kb.load(data, where)
            if inside and not empty:
                value = kb.where(all_of(kb, inside), value, zero)
            kb.store(value, out, ivs)
        return [out]


class TriluLowering(OnnxLowering):
    """Trilu: keep x[..., i, j] where j - i >= k (upper) or j - i <= k (lower), else 0."""

    op_names = frozenset({"onnx.Trilu"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        data = layout_of(inputs(op)[0])
        shape = tensor_shape(op.results[0])
        k_input = runtime_input(op, 1)
        if k_input is not None:
            # A run-time k: any value is valid, and clamped to [-rows, cols] it selects the
            # same elements without overflowing i + k.
            gb = guard_builder(kb, op, [1])
            (k_loaded,) = load_all(gb, k_input)
            k: SSAValue = _clamp(gb, k_loaded, -shape[-2], shape[-1])
        else:
            k_value = _required_constant(op, 1, "k")
            k = kb.const(0 if k_value is None else int(k_value.reshape(-1)[0]), _I64)
        element_type = tensor_element_type(op.results[0])
        out = kb.alloc(result_name(op), shape, element_type)
        with kb.loop_nest(shape) as ivs:
            row = kb.alu("add", _i64(kb, ivs[-2]), k)
            col = _i64(kb, ivs[-1])
            keep = kb.alu("cmple", row, col) if get_attr(op, "upper") else kb.alu("cmple", col, row)
            kb.store(kb.where(keep, kb.load(data, ivs), _zero(kb, element_type)), out, ivs)
        return [out]


class EyeLikeLowering(OnnxLowering):
    """EyeLike: ones on the k-th diagonal."""

    op_names = frozenset({"onnx.EyeLike"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        shape = tensor_shape(op.results[0])
        element_type = tensor_element_type(op.results[0])
        k = get_attr(op, "k")
        out = kb.alloc(result_name(op), shape, element_type)
        one = kb.const(1, element_type)
        with kb.loop_nest(shape) as ivs:
            on = kb.alu("cmpeq", kb.alu("add", _i64(kb, ivs[0]), kb.const(k, _I64)), _i64(kb, ivs[1]))
            kb.store(kb.where(on, one, _zero(kb, element_type)), out, ivs)
        return [out]


class OneHotLowering(OnnxLowering):
    """OneHot: values[1] where the (wrapped) index equals the position along `axis`, else values[0]."""

    op_names = frozenset({"onnx.OneHot"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        indices = layout_of(inputs(op)[0])
        values = layout_of(inputs(op)[2])
        shape = tensor_shape(op.results[0])
        axis = _normalize_axis(get_attr(op, "axis"), len(shape))
        depth = shape[axis]
        check_values(kb, op, 1, [depth], "depth")
        out = kb.alloc(result_name(op), shape, tensor_element_type(op.results[0]))
        off = kb.load(values, [kb.index(0)])
        on = kb.load(values, [kb.index(1)])
        with kb.loop_nest(shape) as ivs:
            index = _i64(kb, kb.load(indices, [*ivs[:axis], *ivs[axis + 1 :]]))
            negative = kb.alu("cmplt", index, kb.const(0, _I64))
            index = kb.where(negative, kb.alu("add", index, kb.const(depth, _I64)), index)
            hit = kb.alu("cmpeq", index, _i64(kb, ivs[axis]))
            kb.store(kb.where(hit, on, off), out, ivs)
        return [out]


class ScatterLowering(OnnxLowering):
    """ScatterElements / ScatterND: copy the data, then write (or reduce) each update in order.
    Indices only known at run time are checked before the copy (`uop.bound_index`), constant
    ones at compile time, as Gather's."""

    op_names = frozenset({"onnx.ScatterElements", "onnx.ScatterND", "onnx.Scatter"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        data = layout_of(inputs(op)[0])
        indices = layout_of(inputs(op)[1])
        updates = layout_of(inputs(op)[2])
        if op.name != "onnx.ScatterND":
            axis = _normalize_axis(get_attr(op, "axis"), data.rank)
            known = constant_indices(op, 1, data.shape[axis])
        else:
            q, k = indices.rank, indices.shape[-1]
            known = constant_indices(op, 1, data.shape[:k])
        out = materialize(kb, data, result_name(op))
        reduction = get_attr(op, "reduction") if op.name != "onnx.Scatter" else "none"
        name = {"none": None, "add": "add", "mul": "mul", "max": "max", "min": "min"}.get(reduction, "")
        if name == "":
            raise NotImplementedError(f"reduction {reduction!r}")

        def update(where: list[SSAValue], ivs: list[SSAValue]) -> None:
            value = kb.load(updates, ivs)
            if name is not None:
                value = kb.alu(name, kb.load(out, where), value)
            kb.store(value, out, where)

        if op.name != "onnx.ScatterND":
            with kb.loop_nest(updates.shape) as ivs:
                index = data_index(kb, kb.load(indices, ivs), data.shape[axis], known)
                update([*ivs[:axis], index, *ivs[axis + 1 :]], ivs)
            return [out]
        # Each index tuple read once, its slice of updates written in the loops inside.
        with kb.loop_nest(updates.shape[: q - 1]) as outer:
            picked = [
                data_index(kb, kb.load(indices, [*outer, kb.index(j)]), data.shape[j], known)
                for j in range(k)
            ]
            with kb.loop_nest(updates.shape[q - 1 :]) as inner:
                update([*picked, *inner], [*outer, *inner])
        return [out]


def dropout_draws(seed: int, shape: Sequence[int]) -> np.ndarray:
    """The uniform draws of a Dropout with `seed`: `numpy.random.RandomState(seed).uniform(0, 1,
    shape)`, the generator ONNX's reference and node tests reseed on every call (float64)."""
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed {seed} is outside [0, 2**32), the seeds of NumPy's RandomState")
    return np.random.RandomState(seed).uniform(0.0, 1.0, tuple(shape))


def round_down_to_f32(draws: np.ndarray) -> np.ndarray:
    """Each float64 of `draws` as the largest float32 not above it. For every float32 r (so for
    float16 and bfloat16 ones too), `u >= r` exactly when `round_down_to_f32(u) >= r`: r ≤ u
    holds iff r is at most the largest float32 ≤ u; NaN compares false either way. Draws in
    [0, 1) are 0 or at least 2**-53, far above float32's subnormals, so none underflows."""
    nearest = draws.astype(np.float32)
    return np.where(nearest.astype(np.float64) > draws, np.nextafter(nearest, np.float32(-np.inf)), nearest)


class DropoutLowering(OnnxLowering):
    """Dropout: the input and an all-true mask at inference (training_mode false or absent) or
    with ratio 0; in training mode with a `seed` attribute, the mask of ONNX's reference.

    ONNX leaves the generator behind `seed` to the implementation. Zant deliberately takes
    NumPy's legacy MT19937 stream, the one ONNX's reference (`onnx/reference/ops/op_dropout.py`)
    and its node tests draw: `numpy.random.RandomState(seed).uniform(0, 1, x.shape)`, reseeded
    on every call, so a seeded Dropout drops the same elements on every call. The draws depend
    on the seed and the shape only, so they are drawn here and kept as a constant. Element i is
    kept when u_i >= ratio (the reference compares in float64) and the output is
    `x * mask * (1 / (1 - ratio))`, the scale computed in the ratio's type (float32 in the node
    tests). A run-time training_mode that is false, or a ratio of 0, gives the input and an
    all-true mask.

    The constant costs, per element: with a constant ratio, the mask itself (1 byte); with a
    run-time float16/float32/bfloat16 ratio, each draw rounded down to float32 (4 bytes instead
    of float64's 8; `round_down_to_f32` decides `u >= r` as the float64 does for every such r),
    compared in float32; with a run-time float64 ratio, the float64 draws.

    Without a `seed`, training mode draws a fresh mask on every call, which compiled code
    cannot reproduce: a compile error when training_mode is a constant true, and a check that a
    run-time training_mode is false or the ratio 0 (`abi.Status.BAD_PARAMETER` otherwise).
    """

    op_names = frozenset({"onnx.Dropout"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = layout_of(inputs(op)[0])
        ratio_value, training_value = input_value(op, 1), input_value(op, 2)
        training = None if training_value is None else constant_array(training_value)
        if ratio_value is None:  # 0.5, a Python float in the reference: the scale stays x's type
            ratio = np.asarray(0.5, numpy_dtype(x.element_type))
        else:
            ratio = constant_array(ratio_value)  # None: a run-time value
            ratio = None if ratio is None else ratio.reshape(())
        if (
            training_value is None
            or (training is not None and not training.reshape(-1)[0])
            or (ratio is not None and ratio == 0)
        ):
            return self._identity(op, kb, x)
        seed = get_attr(op, "seed")
        if seed is None:
            if training is not None:
                raise NotImplementedError(
                    "Dropout in training mode without a seed attribute draws a fresh random mask "
                    "on every call, which compiled code cannot reproduce (give it a seed)"
                )
            return self._unseeded_runtime_training(op, kb, x)
        reject_bfloat16(op)
        draws = dropout_draws(seed, x.shape)
        name = result_name(op)
        if ratio is not None:
            ratio_type = x.element_type if ratio_value is None else tensor_element_type(ratio_value)
            table = kb.constant(f"{name}_keep", draws >= np.float64(ratio), _I1)
            one = np.ones((), ratio.dtype)
            with np.errstate(divide="ignore"):  # a ratio of 1 scales by inf, as the reference
                scale = kb.const(float(one / (one - ratio)), ratio_type)
            r = None
        else:
            ratio_type = tensor_element_type(ratio_value)
            if isinstance(ratio_type, Float64Type):
                draw_type = ratio_type
            else:
                draw_type, draws = Float32Type(), round_down_to_f32(draws)
            table = kb.constant(f"{name}_draws", draws, draw_type)
            (r,) = load_all(kb, ratio_value, ratio_type)
            one = kb.const(1.0, ratio_type)
            scale = kb.alu("div", one, kb.alu("sub", one, r))
            r = kb.cast(r, draw_type)
        # A ratio of ±0 keeps every element and scales by 1 (the identity) without a test; a
        # run-time training_mode that is false must.
        dropping = None
        if training is None:
            (dropping,) = load_all(kb, training_value, _I1)
        # x * mask * scale in the reference's promoted type (x's when the ratio is absent).
        wide = _wider(x.element_type, ratio_type)
        if dropping is not None:
            scale = kb.where(dropping, scale, kb.const(1.0, ratio_type))
        scale = kb.cast(scale, wide)
        out = kb.alloc(name, x.shape, x.element_type)
        layouts = [out]
        if len(op.results) > 1:
            layouts.append(kb.alloc(result_name(op, 1), x.shape, tensor_element_type(op.results[1])))
        zero, unit = kb.const(0.0, wide), kb.const(1.0, wide)
        with kb.loop_nest(x.shape) as ivs:
            keep = kb.load(table, ivs)
            if r is not None:
                keep = kb.alu("cmple", r, keep)
            if dropping is not None:
                keep = kb.alu("or", kb.alu("not", dropping), keep)
            value = kb.alu("mul", kb.cast(kb.load(x, ivs), wide), kb.where(keep, unit, zero))
            kb.store(kb.cast(kb.alu("mul", value, scale), x.element_type), out, ivs)
            if len(layouts) > 1:
                kb.store(kb.cast(keep, layouts[1].element_type), layouts[1], ivs)
        return layouts

    @staticmethod
    def _unseeded_runtime_training(op: Operation, kb: KernelBuilder, x: Layout) -> list[Layout]:
        gb = guard_builder(kb, op, [1, 2])
        (training_mode,) = load_all(gb, input_value(op, 2))
        f64 = Float64Type()
        ratio_value = input_value(op, 1)
        ratio = gb.const(0.5, f64) if ratio_value is None else load_all(gb, ratio_value, f64)[0]
        no_drop = gb.alu("or", gb.alu("cmpeq", training_mode, gb.const(0, _I64)), gb.alu("cmpeq", ratio, gb.const(0.0, f64)))
        check(gb, no_drop)
        return DropoutLowering._identity(op, kb, x)

    @staticmethod
    def _identity(op: Operation, kb: KernelBuilder, x: Layout) -> list[Layout]:
        layouts = [x]
        if len(op.results) > 1:
            mask = op.results[1]
            layouts.append(kb.alloc(result_name(op, 1), tensor_shape(mask), tensor_element_type(mask)))
            true = kb.const(1, tensor_element_type(mask))
            with kb.loop_nest(tensor_shape(mask)) as ivs:
                kb.store(true, layouts[1], ivs)
        return layouts


def _wider(a: Attribute, b: Attribute) -> Attribute:
    """The float type NumPy promotes a and b to (the wider; both float16/32/64 here)."""
    return a if a.bitwidth >= b.bitwidth else b


class ReverseSequenceLowering(OnnxLowering):
    """ReverseSequence: along `time_axis`, the first sequence_lens[b] elements of batch b reversed."""

    op_names = frozenset({"onnx.ReverseSequence"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        data = layout_of(inputs(op)[0])
        lengths = layout_of(inputs(op)[1])
        batch_axis = _normalize_axis(get_attr(op, "batch_axis"), data.rank)
        time_axis = _normalize_axis(get_attr(op, "time_axis"), data.rank)
        out = kb.alloc(result_name(op), data.shape, data.element_type)
        with kb.loop_nest(data.shape) as ivs:
            length = _i64(kb, kb.load(lengths, [ivs[batch_axis]]))
            t = _i64(kb, ivs[time_axis])
            mirrored = kb.alu("sub", kb.alu("sub", length, kb.const(1, _I64)), t)
            source = kb.where(kb.alu("cmplt", t, length), mirrored, t)
            where = list(ivs)
            where[time_axis] = _to_index(kb, _clamp(kb, source, 0, data.shape[time_axis] - 1))
            kb.store(kb.load(data, where), out, ivs)
        return [out]


class TensorScatterLowering(OnnxLowering):
    """TensorScatter: a copy of the cache with `update` written along `axis` from each batch's
    write index (0 when absent), wrapping around in "circular" mode."""

    op_names = frozenset({"onnx.TensorScatter"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        cache = layout_of(inputs(op)[0])
        update = layout_of(inputs(op)[1])
        write_value = input_value(op, 2)
        axis = _normalize_axis(get_attr(op, "axis"), cache.rank)
        if axis == 0:
            raise ValueError("TensorScatter's axis cannot be the batch axis")
        mode = get_attr(op, "mode")
        if mode not in ("linear", "circular"):
            raise NotImplementedError(f"TensorScatter mode {mode!r}")
        out = materialize(kb, cache, result_name(op))
        capacity = cache.shape[axis]
        with kb.loop_nest(update.shape) as ivs:
            position = _i64(kb, ivs[axis])
            if write_value is not None:
                start = _i64(kb, kb.load(layout_of(write_value), [ivs[0]]))
                position = kb.alu("add", position, start)
            if mode == "circular":
                position = kb.alu("rem", position, kb.const(capacity, _I64))
            where = list(ivs)
            where[axis] = _to_index(kb, position)
            kb.store(kb.load(update, ivs), out, where)
        return [out]


PATTERNS = (
    ReshapeLowering(),
    TransposeLowering(),
    IdentityLowering(),
    ConcatLowering(),
    ShapeLowering(),
    ConstantOfShapeLowering(),
    RangeLowering(),
    ExpandLowering(),
    SliceLowering(),
    SplitLowering(),
    SpaceDepthLowering(),
    GatherLowering(),
    TileLowering(),
    PadLowering(),
    CenterCropPadLowering(),
    TriluLowering(),
    EyeLikeLowering(),
    OneHotLowering(),
    ScatterLowering(),
    DropoutLowering(),
    ReverseSequenceLowering(),
    TensorScatterLowering(),
)
