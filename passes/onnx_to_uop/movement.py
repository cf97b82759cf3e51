"""Movement ops: Reshape, Flatten, Squeeze, Unsqueeze, Transpose and Identity as views; Concat.

A movement op only re-reads its input's buffer under a new Layout, so it emits no code unless
the new shape cannot be expressed by strides over the old one (a reshape of a non-contiguous
view that does more than add or drop size-1 dimensions); then the input is copied first. Shape
inference has already given every result a static type, which is the target shape here; the
shape operands are only checked against it when they are constants.

Concat copies each input into its slice of one output buffer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation, SSAValue

from zant.dialects import uop
from zant.dialects.onnx import get_attr, inputs
from zant.frontend.resources import attr_to_array
from zant.passes.onnx_to_uop.base import OnnxLowering, copy_layout, materialize, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    layout_of,
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
        return [reshaped(kb, op, layout_of(data), shape)]


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
    """Identity: the input's layout itself."""

    op_names = frozenset({"onnx.Identity"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        return [layout_of(inputs(op)[0])]


class ConcatLowering(OnnxLowering):
    """Concat along `axis`: each input is copied into its slice of the output buffer."""

    op_names = frozenset({"onnx.Concat"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        shape = tensor_shape(op.results[0])
        axis = _normalize_axis(get_attr(op, "axis"), len(shape))
        out = kb.alloc(result_name(op), shape, tensor_element_type(op.results[0]))
        start = 0
        for value in inputs(op):
            source = layout_of(value)
            count = source.shape[axis]
            if count:
                copy_layout(kb, source, out.slice(axis, start, 1, count))
            start += count
        if start != shape[axis]:
            raise ValueError(f"inputs add up to {start} along axis {axis}, the result has {shape[axis]}")
        return [out]


PATTERNS = (ReshapeLowering(), TransposeLowering(), IdentityLowering(), ConcatLowering())
