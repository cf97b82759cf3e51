"""Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the integer kernels
MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv.

Scales and zero points are read at the indices of the tensor they quantize (`QuantParam`):
one value (per-tensor, a stride-0 view), one per index along `axis` (per-axis, a view with one
non-zero stride) or one per `block_size` indices along `axis` (blocked: that index divided by
the block size).

Float arithmetic follows the reference evaluator's NumPy type promotion step by step (`promote`),
so results match it bit for bit: QuantizeLinear divides in the promoted type of x and the scale,
rounds half to even, and the saturating `uop.cast` to the output type is the clip.

The integer kernels accumulate (x - x_zero_point)·(w - w_zero_point) in an int32 accumulator; a
padded convolution tap contributes 0, as the reference pads after subtracting the zero point.
The QLinear ops then requantize that int32 sum (`Requantization`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from onnx import TensorProto, helper
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

from zant.dialects.onnx import get_attr, input_value
from zant.dialects.uop import is_float_type
from zant.frontend.types import ONNX_TO_MLIR_ELEMENT_TYPE, numpy_dtype
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.conv import load_window, sliding_windows, tap_positions
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    layout_of,
    tensor_element_type,
    tensor_shape,
)

I32 = IntegerType(32)

# The integer types a QuantizeLinear may produce here (float8/int4/int2 never reach the lowering:
# the importer has no element type for them).
_QUANTIZED_TYPES = frozenset(
    ONNX_TO_MLIR_ELEMENT_TYPE[t]
    for t in (TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16, TensorProto.UINT16)
)


def promote(*types: Attribute) -> Attribute:
    """The element type NumPy gives an arithmetic result of arrays of `types` (the reference's)."""
    dtype = np.result_type(*(numpy_dtype(t) for t in types))
    return ONNX_TO_MLIR_ELEMENT_TYPE[helper.np_dtype_to_tensor_dtype(dtype)]




# ---------------------------------------------------------------------------------------------
# Scales and zero points
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QuantParam:
    """A scale or zero point read at the indices of the tensor it belongs to."""

    layout: Layout
    block_axis: int = 0
    block_size: int = 0

    @property
    def element_type(self) -> Attribute:
        return self.layout.element_type

    def load(self, kb: KernelBuilder, indices: Sequence[SSAValue]) -> SSAValue:
        indices = list(indices)
        if self.block_size:
            axis = self.block_axis
            indices[axis] = kb.alu("div", indices[axis], kb.index(self.block_size))
        return kb.load(self.layout, indices)


def quant_param(
    value: SSAValue, shape: Sequence[int], axis: int | None = None, block_size: int = 0
) -> QuantParam:
    """`value` as a QuantParam of a tensor of `shape`: a single element is per-tensor; otherwise
    per-axis along `axis` (a 1-D tensor of shape[axis] elements), or blocked when `block_size`
    is set (shape[axis] replaced by ⌈shape[axis] / block_size⌉). `axis` None allows per-tensor only."""
    layout = layout_of(value)
    shape = tuple(shape)
    rank = len(shape)
    if layout.size == 1:
        return QuantParam(Layout(layout.buffer, shape, (0,) * rank, layout.offset))
    if axis is None:
        raise NotImplementedError(f"only a single-element scale or zero point is supported here, got {layout.shape}")
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} out of range for rank {rank}")
    axis %= rank
    if block_size < 0:
        raise ValueError(f"block_size must be positive, got {block_size}")
    if not block_size:
        if layout.rank != 1 or layout.size != shape[axis]:
            raise ValueError(
                f"a per-axis scale or zero point must be 1-D with {shape[axis]} elements, got {layout.shape}"
            )
        strides = [0] * rank
        strides[axis] = layout.strides[0]
        return QuantParam(Layout(layout.buffer, shape, tuple(strides), layout.offset))
    blocks = list(shape)
    blocks[axis] = -(-shape[axis] // block_size)
    if layout.shape != tuple(blocks):
        raise ValueError(
            f"a blocked scale or zero point for shape {shape}, axis {axis} and block_size "
            f"{block_size} must have shape {tuple(blocks)}, got {layout.shape}"
        )
    return QuantParam(layout, axis, block_size)


def _optional_param(op: Operation, index: int, shape: Sequence[int], axis: int | None = None) -> QuantParam | None:
    value = input_value(op, index)
    return None if value is None else quant_param(value, shape, axis)


def _centered(
    kb: KernelBuilder, value: SSAValue, zero_point: QuantParam | None, indices: Sequence[SSAValue]
) -> SSAValue:
    """`value - zero_point` in int32."""
    value = kb.cast(value, I32)
    if zero_point is None:
        return value
    return kb.alu("sub", value, kb.cast(zero_point.load(kb, indices), I32))


# ---------------------------------------------------------------------------------------------
# QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
# ---------------------------------------------------------------------------------------------


def _check_quantized(t: Attribute) -> None:
    if t not in _QUANTIZED_TYPES:
        raise NotImplementedError(f"quantization to {t} is not supported (int8, uint8, int16, uint16 are)")


def _quantize(
    kb: KernelBuilder, x: SSAValue, scale: SSAValue, zero_point: SSAValue | None, out_type: Attribute
) -> SSAValue:
    """saturate(round_half_even(x / scale) + zero_point), every step in the reference's types.

    The zero point is added in a float wide enough to hold every sum that does not saturate
    anyway; the saturating cast to `out_type` is the clip."""
    compute = promote(x.type, scale.type)
    q = kb.alu("round", kb.alu("div", kb.cast(x, compute), kb.cast(scale, compute)))
    if zero_point is None:
        return kb.cast(q, out_type)
    wide = promote(compute, Float32Type())
    q = kb.alu("add", kb.cast(q, wide), kb.cast(zero_point, wide))
    return kb.cast(q, out_type)


def _axis_and_block(op: Operation) -> tuple[int, int]:
    return get_attr(op, "axis"), get_attr(op, "block_size") or 0


class QuantizeLinearLowering(OnnxLowering):
    """`QuantizeLinear` (opset ≥ 10): per-tensor, per-axis or blocked, to (u)int8 / (u)int16."""

    op_names = frozenset({"onnx.QuantizeLinear"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = layout_of(input_value(op, 0))
        out_type = tensor_element_type(op.results[0])
        _check_quantized(out_type)
        axis, block_size = _axis_and_block(op)
        precision = _optional_attr(op, "precision")
        if precision:
            raise NotImplementedError("the precision attribute is not supported")
        scale = quant_param(input_value(op, 1), x.shape, axis, block_size)
        zp_value = input_value(op, 2)
        zero_point = None if zp_value is None else quant_param(zp_value, x.shape, axis, block_size)

        y = kb.alloc(result_name(op), x.shape, out_type)
        with kb.loop_nest(x.shape) as ivs:
            zp = None if zero_point is None else zero_point.load(kb, ivs)
            kb.store(_quantize(kb, kb.load(x, ivs), scale.load(kb, ivs), zp, out_type), y, ivs)
        return [y]


class DequantizeLinearLowering(OnnxLowering):
    """`DequantizeLinear`: y = (x - zero_point) · scale, per-tensor, per-axis or blocked.

    As the reference: x is widened to f32, the zero point subtracted in the promoted type, the
    product formed in the type promoted with the scale's, then cast to the output type."""

    op_names = frozenset({"onnx.DequantizeLinear"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = layout_of(input_value(op, 0))
        out_type = tensor_element_type(op.results[0])
        axis, block_size = _axis_and_block(op)
        scale = quant_param(input_value(op, 1), x.shape, axis, block_size)
        zp_value = input_value(op, 2)
        zero_point = None if zp_value is None else quant_param(zp_value, x.shape, axis, block_size)
        if not isinstance(x.element_type, IntegerType):
            raise NotImplementedError(f"dequantization of {x.element_type} is not supported")

        y = kb.alloc(result_name(op), x.shape, out_type)
        with kb.loop_nest(x.shape) as ivs:
            value = kb.cast(kb.load(x, ivs), Float32Type())
            if zero_point is not None:
                zp = zero_point.load(kb, ivs)
                compute = promote(value.type, zp.type)
                value = kb.alu("sub", kb.cast(value, compute), kb.cast(zp, compute))
            s = scale.load(kb, ivs)
            compute = promote(value.type, s.type)
            value = kb.alu("mul", kb.cast(value, compute), kb.cast(s, compute))
            kb.store(kb.cast(value, out_type), y, ivs)
        return [y]


def _optional_attr(op: Operation, name: str):
    """An attribute that only later opsets define (None when the op's schema has none)."""
    try:
        return get_attr(op, name)
    except KeyError:
        return None


__all__ = ["QuantParam", "quant_param", "promote"]

PATTERNS = (QuantizeLinearLowering(), DequantizeLinearLowering())
