"""Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the integer kernels
MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv; com.microsoft's QLinearAdd, QLinearSoftmax
(integer only: an exp table, an int64 sum, a division) and QLinearAveragePool (a per-position
divisor) and Zant's LookupTable (a gather from a
256-entry constant table).

Scales and zero points are read at the indices of the tensor they quantize (`QuantParam`):
one value (per-tensor, a stride-0 view), one per index along `axis` (per-axis, a view with one
non-zero stride) or one per `block_size` indices along `axis` (blocked: that index divided by
the block size).

Float arithmetic follows the reference evaluator's NumPy type promotion step by step (`promote`),
so results match it bit for bit: QuantizeLinear divides in the promoted type of x and the scale,
rounds half to even, and the saturating `uop.cast` to the output type is the clip (an f32 ratio
rounds and saturates in int32 on the bits of ratio + 1.5·2^23 instead: `quantize_f32`).

The integer kernels accumulate (x - x_zero_point)·(w - w_zero_point) in an int32 accumulator; a
padded convolution tap contributes 0, as the reference pads after subtracting the zero point.
The QLinear ops then requantize that int32 sum (`Requantization`): as the reference by default,
or, on ops `fold-qdq` marks `zant.fixed_point`, with a Q31 multiplier and a shift derived at
compile time from the constant scales, as CMSIS-NN and TFLite do (integer arithmetic only). An
average pool's window sum (marked `zant.average_count` too) and QLinearAveragePool round the
exact ratio half to even instead, as QuantizeLinear after the float pool does (`rounded_quotient`,
`half_even_step`, `zant.analysis.rounding`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import math
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
from onnx import TensorProto, helper
from xdsl.dialects.builtin import BFloat16Type, Float4E2M1FNType, Float32Type, IndexType, IntegerType, Signedness
from xdsl.ir import Attribute, Operation, SSAValue
from zant.analysis.rounding import ExactRounding, exact_rounding, exact_roundings
from zant.dialects import uop
from zant.dialects.onnx import FIXED_POINT, average_count, get_attr, input_value
from zant.dialects.onnx_attributes import FLOAT_SUM, rounding_mode
from zant.ir.resources import attr_to_array
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.conv import CHANNEL_BLOCK, convolve, padded_input
from zant.passes.onnx_to_uop.conv_columns import column_form_applies, over_input, pointwise_columns
from zant.passes.onnx_to_uop.conv_first import applies as first_applies
from zant.passes.onnx_to_uop.conv_first import first_conv, padded_rows
from zant.passes.onnx_to_uop.conv_window import channels_last_applies as window_channels_last_applies
from zant.passes.onnx_to_uop.conv_window import window_columns
from zant.passes.onnx_to_uop.fully_connected import applies as fully_connected_applies
from zant.passes.onnx_to_uop.fully_connected import fully_connected
from zant.passes.onnx_to_uop.quant_float import float_add, float_conv, float_global_pool
from zant.passes.onnx_to_uop.conv_depthwise import applies as depthwise_applies
from zant.passes.onnx_to_uop.conv_depthwise import depthwise_paired_taps, paired_tap_weights, split_paired_interior, takes_edges
from zant.passes.onnx_to_uop.conv_depthwise_mve import applies as depthwise_mve_applies
from zant.passes.onnx_to_uop.conv_depthwise_mve import depthwise_mve
from zant.passes.onnx_to_uop.conv_pointwise_mve import applies as pointwise_mve_applies
from zant.passes.onnx_to_uop.conv_pointwise_mve import pointwise_mve
from zant.passes.onnx_to_uop.windows import interior, load_window, sliding_windows, tap_positions, window_regions, within
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    highest_value,
    layout_of,
    lowest_value,
    result_layout,
    tensor_element_type,
    tensor_shape,
)

from zant.ir.types import (
    is_storage_float,
    ONNX_TO_MLIR_ELEMENT_TYPE,
    mlir_element_type,
    numpy_dtype,
)

I32 = IntegerType(32)
I64 = IntegerType(64)

# The integer types a QuantizeLinear may produce here; float8 and float4e2m1 are converted by a
# cast instead of rounded and clipped (`_quantize_to_float`).
_QUANTIZED_TYPES = frozenset(
    ONNX_TO_MLIR_ELEMENT_TYPE[t]
    for t in (
        TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16, TensorProto.UINT16,
        TensorProto.INT4, TensorProto.UINT4, TensorProto.INT2, TensorProto.UINT2,
    )
)


def promote(*types: Attribute) -> Attribute:
    """The element type NumPy gives an arithmetic result of arrays of `types` (the reference's)."""
    if any(isinstance(t, BFloat16Type) for t in types):
        raise NotImplementedError("bfloat16 arithmetic is not supported")
    dtype = np.result_type(*(numpy_dtype(t) for t in types))
    return ONNX_TO_MLIR_ELEMENT_TYPE[helper.np_dtype_to_tensor_dtype(dtype)]




# ---------------------------------------------------------------------------------------------
# Scales and zero points
# ---------------------------------------------------------------------------------------------


Reader = Callable[[Sequence[SSAValue]], SSAValue]
"""Reads a scale or zero point at the indices of the tensor it belongs to, inside a loop nest."""


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

    def constant_values(self) -> np.ndarray:
        """The values at every index of the tensor it belongs to, when it is a constant."""
        values = None if self.block_size else constant_tensor(self.layout)
        if values is None:
            raise NotImplementedError("fixed-point requantization needs constant per-tensor or per-axis scales")
        return values

    @property
    def is_per_tensor(self) -> bool:
        return not self.block_size and not any(self.layout.strides)

    def reader(self, kb: KernelBuilder, to: Attribute | None = None) -> Reader:
        """A Reader for the loops built after this call, converting to `to`; a per-tensor value
        is loaded and converted once, here, ahead of the loops."""

        def read(indices: Sequence[SSAValue]) -> SSAValue:
            value = self.load(kb, indices)
            return value if to is None else kb.cast(value, to)

        if not self.is_per_tensor:
            return read
        value = read([kb.index(0)] * self.layout.rank)
        return lambda indices: value


def constant_tensor(layout: Layout) -> np.ndarray | None:
    """The tensor a layout reads, when its buffer is a constant with a value; else None."""
    owner = layout.buffer.owner
    if not isinstance(owner, uop.DefineGlobalOp) or owner.value is None:
        return None
    flat = attr_to_array(owner.value).reshape(-1)
    index = sum(
        (np.arange(n) * stride).reshape([n] + [1] * (layout.rank - 1 - axis))
        for axis, (n, stride) in enumerate(zip(layout.shape, layout.strides))
    )
    return flat[np.broadcast_to(layout.offset + np.asarray(index, dtype=np.int64), layout.shape)]


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


def _optional_param(
    op: Operation, index: int | None, shape: Sequence[int], axis: int | None = None, block_size: int = 0
) -> QuantParam | None:
    """The optional ONNX input `index` (a zero point) as a QuantParam; None when absent or a
    constant of zeros, so the kernels skip subtracting it (symmetric int8 weights)."""
    value = None if index is None else input_value(op, index)
    if value is None:
        return None
    param = quant_param(value, shape, axis, block_size)
    owner = param.layout.buffer.owner
    if isinstance(owner, uop.DefineGlobalOp) and owner.value is not None and not attr_to_array(owner.value).any():
        return None
    return param


def _optional_reader(kb: KernelBuilder, param: QuantParam | None, to: Attribute) -> Reader | None:
    return None if param is None else param.reader(kb, to)


def _centered(
    kb: KernelBuilder, value: SSAValue, zero_point: Reader | None, indices: Sequence[SSAValue]
) -> SSAValue:
    """`value - zero_point` in int32 (`zero_point` reads int32)."""
    value = kb.cast(value, I32)
    if zero_point is None:
        return value
    return kb.alu("sub", value, zero_point(indices))


# ---------------------------------------------------------------------------------------------
# QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
# ---------------------------------------------------------------------------------------------


def _check_quantized(t: Attribute) -> None:
    if t not in _QUANTIZED_TYPES and not is_storage_float(t):
        raise NotImplementedError(
            f"quantization to {t} is not supported (int8, uint8, int16, uint16, int4, uint4, int2, uint2, "
            "float8 and float4e2m1 are)"
        )


def _quantize_to_float(kb: KernelBuilder, op: Operation, ratio: SSAValue, zero_point: SSAValue | None, out_type: Attribute) -> SSAValue:
    """QuantizeLinear to float8 / float4e2m1: `ratio + zero_point` in f32 converted to the type,
    rounded to nearest even, saturating unless `saturate=0` (float8; float4 always saturates)."""
    value = ratio if zero_point is None else kb.alu("add", ratio, zero_point)
    if not get_attr(op, "saturate") and not isinstance(out_type, Float4E2M1FNType):
        return kb.insert(uop.CastUnsaturatedOp(value, out_type)).result
    return kb.cast(value, out_type)


def _axis_and_block(op: Operation) -> tuple[int, int]:
    return get_attr(op, "axis"), get_attr(op, "block_size") or 0


_ROUNDER = 1.5 * 2.0**23
"""Added to an f32 t with |t| ≤ 2^22, the sum lands in [2^23, 2^24), where floats are the
integers: the add rounds t half to even (the default rounding mode), and the sum's bits are
`_ROUNDER_BITS + rint(t)`."""
_ROUNDER_BITS = int(np.array(_ROUNDER, np.float32).view(np.int32))


def quantize_f32(kb: KernelBuilder, ratio: SSAValue, zero_point: SSAValue | None, out_type: Attribute) -> SSAValue:
    """saturate(rint(ratio) + zero_point) for an f32 `ratio` and an int32 zero point, with no
    rounding call and no float compares (the Cortex-M4F has neither VRINT nor VMINNM: its
    rounding and saturating cast were ~30 instructions per element, now ~12). The bits of
    `ratio + 1.5·2^23`, read as an int32, are `_ROUNDER_BITS + rint(ratio)` while |ratio| ≤ 2^22;
    above, they exceed every bound that matters, and below (negative sums, -inf) they are
    smaller; so clamping those bits to `_ROUNDER_BITS + [low - zp, high - zp]` and removing the
    bias is exact for every non-NaN ratio (a NaN saturates by its sign bit)."""
    low, high = lowest_value(out_type), highest_value(out_type)
    rounded = kb.alu("add", ratio, kb.const(_ROUNDER, Float32Type()))
    bits = kb.insert(uop.BitcastOp(rounded, I32)).results[0]
    if zero_point is None:
        bias: SSAValue = kb.const(_ROUNDER_BITS, I32)
        floor = kb.const(_ROUNDER_BITS + low, I32)
    else:
        bias = kb.alu("sub", kb.const(_ROUNDER_BITS, I32), zero_point)
        floor = kb.alu("add", bias, kb.const(low, I32))
    # The floor first keeps the subtraction from wrapping (negative floats' bits are below it);
    # then the clamp to the output range (a constant zero point: LLVM merges the two clamps).
    q = kb.alu("sub", kb.alu("max", bits, floor), bias)
    q = kb.alu("min", kb.alu("max", q, kb.const(low, I32)), kb.const(high, I32))
    return kb.cast(q, out_type)


class QuantizeLinearLowering(OnnxLowering):
    """`QuantizeLinear` (opset ≥ 10): per-tensor, per-axis or blocked, to (u)int8 / (u)int16."""

    op_names = frozenset({"onnx.QuantizeLinear"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = layout_of(input_value(op, 0))
        out_type = tensor_element_type(op.results[0])
        _check_quantized(out_type)
        axis, block_size = _axis_and_block(op)
        scale = quant_param(input_value(op, 1), x.shape, axis, block_size)
        zero_point = _optional_param(op, 2, x.shape, axis, block_size)
        # The reference divides in `precision` when set, else in NumPy's promotion of x and the
        # scale; the zero point is then added in a float wide enough for every sum that does not
        # saturate anyway, and the saturating cast is the clip.
        precision = _optional_attr(op, "precision")
        to_float = is_storage_float(out_type)  # float8, float4e2m1: a cast of the f32 ratio
        if precision:
            compute = mlir_element_type(precision, "precision")
        else:
            compute = promote(x.element_type, scale.element_type)
        if to_float:
            compute = Float32Type()
        wide = promote(compute, Float32Type())
        read_scale = scale.reader(kb, compute)
        # f32 ratios round and saturate in integer arithmetic (`quantize_f32`); others as the
        # reference writes it.
        fast = compute == Float32Type() and not to_float
        read_zero_point = _optional_reader(kb, zero_point, I32 if fast else wide)

        y = kb.alloc(result_name(op), x.shape, out_type)
        with kb.loop_nest(x.shape) as ivs:
            ratio = kb.alu("div", kb.cast(kb.load(x, ivs), compute), read_scale(ivs))
            zp = None if read_zero_point is None else read_zero_point(ivs)
            if to_float:
                q = _quantize_to_float(kb, op, ratio, zp, out_type)
            elif fast:
                q = quantize_f32(kb, ratio, zp, out_type)
            else:
                q = kb.alu("round", ratio)
                if zp is not None:
                    q = kb.alu("add", kb.cast(q, wide), zp)
            kb.store(kb.cast(q, out_type), y, ivs)
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
        if not isinstance(x.element_type, IntegerType) and not is_storage_float(x.element_type):
            raise NotImplementedError(f"dequantization of {x.element_type} is not supported")
        scale = quant_param(input_value(op, 1), x.shape, axis, block_size)
        zero_point = _optional_param(op, 2, x.shape, axis, block_size)
        centered_type = Float32Type()
        if zero_point is not None and not is_storage_float(zero_point.element_type):  # float8: f32
            centered_type = promote(centered_type, zero_point.element_type)
        product_type = promote(centered_type, scale.element_type)
        read_zero_point = _optional_reader(kb, zero_point, centered_type)
        read_scale = scale.reader(kb, product_type)

        y = kb.alloc(result_name(op), x.shape, out_type)
        with kb.loop_nest(x.shape) as ivs:
            value = kb.cast(kb.cast(kb.load(x, ivs), Float32Type()), centered_type)
            if read_zero_point is not None:
                value = kb.alu("sub", value, read_zero_point(ivs))
            value = kb.alu("mul", kb.cast(value, product_type), read_scale(ivs))
            kb.store(kb.cast(value, out_type), y, ivs)
        return [y]


class DynamicQuantizeLinearLowering(OnnxLowering):
    """`DynamicQuantizeLinear`: uint8 quantization of a float32 tensor over its own range
    [min(0, min x), max(0, max x)], returning y, the scale and the zero point, as the reference:
    scale = (max - min) / 255 (1/255 for an all-zero range), zero point = round(clamp(-min / scale)).
    """

    op_names = frozenset({"onnx.DynamicQuantizeLinear"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = layout_of(input_value(op, 0))
        f32, u8 = Float32Type(), tensor_element_type(op.results[0])
        if x.element_type != f32:
            raise NotImplementedError(f"DynamicQuantizeLinear of {x.element_type} is not supported")
        y = kb.alloc(result_name(op, 0), x.shape, u8)
        scale = kb.alloc(result_name(op, 1), (), f32)
        zero_point = kb.alloc(result_name(op, 2), (), u8)

        # Both accumulators start at 0: the range always includes zero.
        high, low = kb.define_acc(0.0, f32), kb.define_acc(0.0, f32)
        with kb.loop_nest(x.shape) as ivs:
            value = kb.load(x, ivs)
            kb.acc_set(high, kb.alu("max", kb.acc_get(high), value))
            kb.acc_set(low, kb.alu("min", kb.acc_get(low), value))
        top, bottom = kb.acc_get(high), kb.acc_get(low)
        span = kb.where(kb.alu("cmpeq", top, bottom), kb.const(1.0, f32), kb.alu("sub", top, bottom))
        s = kb.alu("div", span, kb.const(255.0, f32))
        initial = kb.alu("neg", kb.alu("div", bottom, s))
        clamped = kb.alu("max", kb.alu("min", initial, kb.const(255.0, f32)), kb.const(0.0, f32))
        zp = kb.alu("round", clamped)
        kb.store(s, scale, [])
        kb.store(kb.cast(zp, u8), zero_point, [])
        with kb.loop_nest(x.shape) as ivs:
            q = kb.alu("add", kb.alu("round", kb.alu("div", kb.load(x, ivs), s)), zp)
            kb.store(kb.cast(q, u8), y, ivs)
        return [y, scale, zero_point]


# ---------------------------------------------------------------------------------------------
# Integer kernels: int32 accumulation of zero-point-centered products
# ---------------------------------------------------------------------------------------------

Finish = Callable[[SSAValue, list[SSAValue]], SSAValue]
"""(int32 sum, output indices) → the value stored in the output."""


def _keep_int32(total: SSAValue, indices: list[SSAValue]) -> SSAValue:
    return total


def fixed_point_multipliers(multiplier: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each real multiplier 0 ≤ M < 2^31 as (m0, shift) with M ≈ m0 · 2^-shift and m0 a Q31
    integer in [2^30, 2^31) (TFLite's QuantizeMultiplier). The shift is capped at 62, dropping
    low bits of m0 for tiny multipliers, so `(sum · m0) >> shift` stays in int64."""
    fraction, exponent = np.frexp(np.asarray(multiplier, dtype=np.float64))
    m0 = np.round(fraction * 2.0**31).astype(np.int64)
    carry = m0 == 2**31  # the fraction rounded up to 1.0
    m0, exponent = np.where(carry, m0 // 2, m0), exponent + carry
    shift = 31 - exponent
    if np.any(shift < 0):
        raise NotImplementedError(f"requantization multiplier {float(np.max(multiplier))} is too large")
    excess = np.maximum(shift - 62, 0)
    return m0 >> excess, shift - excess


def first_along(values: np.ndarray, shape: Sequence[int], axis: int) -> np.ndarray:
    """`values` broadcast to `shape`, one value per index along `axis` (the first of the rest)."""
    return np.moveaxis(np.broadcast_to(values, shape), axis, 0).reshape(shape[axis], -1)[:, 0]


def exact_channels(
    in_s: np.ndarray, w_s: np.ndarray, out_s: np.ndarray, m: np.ndarray, shift: np.ndarray
) -> np.ndarray:
    """Per channel (the arrays aligned, one value each), whether m · 2^-shift is exactly
    M = x_scale · w_scale / y_scale (the scales as the exact binary fractions they are). Only
    there can sum · m land exactly on a half, a tie ONNX rounds to even; elsewhere m is an
    approximation of M and exact ties do not arise."""
    return np.array(
        [
            o != 0 and Fraction(int(mc), 1 << int(sc)) == Fraction(float(i)) * Fraction(float(w)) / Fraction(float(o))
            for i, w, o, mc, sc in zip(in_s, w_s, out_s, m, shift, strict=True)
        ],
        dtype=bool,
    )


def ties_reachable(m: np.ndarray, shift: np.ndarray, sum_bound: int) -> np.ndarray:
    """Per channel, whether some integer sum with |sum| ≤ `sum_bound` puts sum · m exactly on a
    half of 2^shift (sum · m ≡ 2^(shift-1) mod 2^shift). With m = m' · 2^t, m' odd, that needs
    sum's lowest set bit at 2^(shift-1-t), so |sum| ≥ 2^(shift-1-t): a multiplier exact to its
    last bit (x_scale = y_scale, M = w_scale: 24 significant bits, shift - t ≈ 31) ties only
    for sums no int8 kernel reaches, and its rounding needs no tie check."""
    def reachable(mc: int, sc: int) -> bool:
        if mc <= 0 or sc < 1:
            return False
        low = (mc & -mc).bit_length() - 1  # m's trailing zero bits
        return sc - 1 - low >= 0 and 2 ** (sc - 1 - low) <= sum_bound

    return np.array([reachable(int(mc), int(sc)) for mc, sc in zip(m, shift, strict=True)], dtype=bool)


def _axis_constant(
    kb: KernelBuilder, values: np.ndarray, shape: Sequence[int], axis: int, name: str, to: Attribute = I64
) -> Reader:
    """A Reader of `values` (one per index along `axis` of `shape`) from a new constant buffer,
    read as `to`: int32 values for an integer `to`, float32 ones for f32; a single value becomes
    an inline constant."""
    stored = Float32Type() if isinstance(to, Float32Type) else I32
    if values.size == 1:
        single = values.reshape(-1)[0]
        value = kb.const(int(single) if stored == I32 else float(single), to)
        return lambda indices: value
    # Ahead of the kernel's code, as its views are: the view of this buffer must follow it.
    buffer = kb.constant(name, values.astype(numpy_dtype(stored)), stored).buffer
    strides = [0] * len(shape)
    strides[axis] = 1
    layout = Layout(buffer, tuple(shape), tuple(strides), 0)
    return lambda indices: kb.cast(kb.load(layout, indices), to)


def _tie_reader(kb: KernelBuilder, exact: np.ndarray, shape: Sequence[int], axis: int) -> Reader | None:
    """Per output channel, `even_at_ties`' threshold: 1 where sum · m can tie exactly (`exact`,
    from `Requantization._exact`: x mod 2^shift is then 0 at a tie), else 0 (never below); an
    int64 value. None when no channel can tie (then the step is the plain rounding, no check)."""
    if not exact.any():
        return None
    return _axis_constant(kb, (exact[:1] if exact.all() else exact).astype(np.int64), shape, axis, "requant_ties")


def tflite_multiplier(multiplier: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplier of a double M ≥ 0: (q, e) with M ≈ q · 2^(e - 31), q a Q31
    integer in [2^30, 2^31): the frexp fraction times 2^31 rounded half away from zero (a
    fraction rounding up to 1 carries into the exponent), and 0 for an M below 2^-32 (e < -31)."""
    if multiplier == 0:
        return 0, 0
    fraction, exponent = math.frexp(multiplier)
    q = math.floor(fraction * 2.0**31 + 0.5)  # exact: fraction · 2^31 < 2^31 has ulp ≤ 2^-22
    if q == 1 << 31:
        q, exponent = q // 2, exponent + 1
    if exponent < -31:
        return 0, 0
    return q, exponent


def tflite_multipliers(in_s: np.ndarray, w_s: np.ndarray, out_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per channel, `tflite_multiplier` of (x_scale · w_scale) / y_scale in double precision
    (the scales float32 as stored, widened), as TFLite's kernels compute it."""
    pairs = [
        tflite_multiplier(float(np.float64(i) * np.float64(w) / np.float64(o)))
        for i, w, o in zip(in_s, w_s, out_s, strict=True)
    ]
    if any(e > 31 for _, e in pairs):
        raise NotImplementedError("a requantization multiplier of 2^31 or more")
    return np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64)


@dataclass(frozen=True)
class Requantization:
    """How a QLinear op turns its int32 sum into the output: y = saturate(round(sum · M) + zp)
    with M = input_scale · weight_scale / output_scale.

    The choice: compute it as the reference does, so conformance is exact — M in the scales'
    type, the product and the zero point in the type NumPy promotes int32 and that type to (f64),
    rounded half to even, the saturating cast as the clip. Per-tensor scales make M one value,
    computed once ahead of the loops.

    Every QLinear lowering requantizes through this one object (`bind` gives the step the
    kernel applies to each int32 sum), so the fixed-point form of CMSIS-NN / TFLite — M = m0 ·
    2^-shift with m0 a Q31 integer derived at compile time from constant scales, applied with
    a rounding doubling high multiply and a rounding right shift, no float unit — replaces only
    `bind`: a later option or pass can switch to it where the scales are constants and a
    last-bit difference from the reference is acceptable.
    """

    input_scale: QuantParam
    weight_scale: QuantParam
    output_scale: QuantParam
    zero_point: QuantParam | None
    output_type: Attribute
    fixed_point: bool = False
    weight_axis: int = 1
    divisor: int = 0
    """An average pool's window size (`AVERAGE_COUNT`), 0 for any other op: with fixed_point
    and a known range of sums, y = round_half_even(sum · x_scale / (y_scale · divisor)) exactly
    (`_bind_average`), the weight scale unread."""
    divisor_zero_point: int | None = None
    """An average pool's constant per-tensor input zero point (TFLite's pool sums raw codes)."""
    rounding: str = "exact"
    """Whose arithmetic a fixed-point requantization reproduces (`zant.rounding`, set by
    `requant-rounding`): `exact`, `onnxruntime` (`_bind_onnxruntime`) or `tflite`
    (`_bind_tflite`)."""

    def bind(self, kb: KernelBuilder, sum_bound: int | None = None, sum_range: tuple[int, int] | None = None) -> Finish:
        """The Finish step for the loops built after this call; `sum_bound`, when the kernel
        knows it, bounds |sum| (from constant weights), which lets fixed-point requantization
        use one shift for every channel and 32-bit arithmetic after the multiply; `sum_range`
        is the sum's [low, high] then, which an average pool's exact rounding needs."""
        if self.fixed_point and self.divisor and self.rounding in ("tflite", "tflite-single"):
            average = self._bind_tflite_average(kb)
            if average is not None:
                return average
        elif self.fixed_point and self.rounding == "onnxruntime":
            return self._bind_onnxruntime(kb)
        elif self.fixed_point and self.rounding in ("tflite", "tflite-single"):
            return self._bind_tflite(kb, self.rounding == "tflite-single")
        if self.fixed_point:
            if self.divisor and sum_range is not None:
                average = self._bind_average(kb, *sum_range)
                if average is not None:
                    return average
            return self._bind_fixed_point(kb, sum_bound)
        scales = (self.input_scale, self.weight_scale, self.output_scale)
        scale_type = promote(*(p.element_type for p in scales))
        wide = promote(I32, scale_type)
        in_s, w_s, out_s = (p.reader(kb, scale_type) for p in scales)

        def multiplier(indices: Sequence[SSAValue]) -> SSAValue:
            m = kb.alu("div", kb.alu("mul", in_s(indices), w_s(indices)), out_s(indices))
            return kb.cast(m, wide)

        if all(p.is_per_tensor for p in scales):
            constant = multiplier([])
            multiplier = lambda indices: constant
        zero_point = _optional_reader(kb, self.zero_point, wide)

        def finish(total: SSAValue, indices: list[SSAValue]) -> SSAValue:
            value = kb.alu("mul", kb.cast(total, wide), multiplier(indices))
            if zero_point is not None:
                value = kb.alu("add", value, zero_point(indices))
            return kb.cast(kb.alu("round", value), self.output_type)

        return finish

    def _bind_fixed_point(self, kb: KernelBuilder, sum_bound: int | None) -> Finish:
        """y = clamp(((sum · m0 + 2^(shift-1)) >> shift) + zp): M rounded half up, all in
        int64 (a 32×32→64 multiply on a Cortex-M). M is computed as the reference does, in the
        scales' type, then split into m0 and shift per output channel — or, when `sum_bound`
        shows one shift loses nothing that matters (`common_shift`), into per-channel m with a
        single constant shift, and the result narrowed to int32 when it provably fits: no
        variable 64-bit shift, no 64-bit clamp."""
        scales = (self.input_scale, self.weight_scale, self.output_scale)
        scale_type = numpy_dtype(promote(*(p.element_type for p in scales)))
        if self.output_type.width.data > 8:
            # A 16-bit output (16x8): M in float32 is off by up to 2^-24 of it, 2^-8 of an
            # output step at the int16 extremes; from the float32 scales in float64 instead.
            scale_type = np.float64
        in_s, w_s, out_s = (p.constant_values().astype(scale_type) for p in scales)
        multiplier = in_s * w_s / out_s
        shape = multiplier.shape
        axis = self.weight_axis % len(shape)
        along_axis = first_along(multiplier, shape, axis)
        if not np.array_equal(multiplier, np.broadcast_to(along_axis.reshape([-1] + [1] * (len(shape) - 1 - axis)), shape)):
            raise NotImplementedError("fixed-point requantization needs scales that vary along the weight axis only")
        common = None if sum_bound is None else common_shift(along_axis, sum_bound)
        if common is not None and sum_bound * int(np.max(common[0])) < 2**62:
            return self._bind_common_shift(kb, *common, shape, axis, sum_bound, sum_bound * float(np.max(along_axis)))
        m0, shift = fixed_point_multipliers(along_axis if np.ptp(along_axis) else along_axis[:1])
        wide_sum = sum_bound is not None and sum_bound >= 2**31
        if wide_sum:
            # A 64-bit sum (16x8, `needs_64_bit_sum`): m0 loses the low bits that would take
            # sum · m0 + 2^(shift-1) beyond int64; what it drops is below 2^(e-31) of an
            # output step for sums below 2^(31+e), far under a rounding boundary's reach.
            excess = max(0, int(sum_bound).bit_length() + 31 - 62)
            if excess:
                m0 = (m0 + (1 << (excess - 1))) >> excess
                shift = shift - excess
        exact = self._exact(m0, shift, sum_bound)
        if np.min(shift) > 32 and not exact.any() and not wide_sum:
            return self._bind_high_word(kb, m0, shift, shape, axis)
        read_m0 = _axis_constant(kb, m0, shape, axis, "requant_multiplier")
        read_shift = _axis_constant(kb, shift, shape, axis, "requant_shift")
        read_tie = _tie_reader(kb, exact, shape, axis)
        one = kb.const(1, I64)
        nothing = kb.const(0, I64) if read_tie is not None else None
        zero_point = _optional_reader(kb, self.zero_point, I64)
        low, high = (kb.const(v, I64) for v in (lowest_value(self.output_type), highest_value(self.output_type)))

        def finish(total: SSAValue, indices: list[SSAValue]) -> SSAValue:
            shift_by = read_shift(indices)
            # Half of the divisor rounds to nearest; shift 0 adds 1 >> 1 = 0.
            half = kb.alu("shr", kb.alu("shl", one, shift_by), one)
            product = kb.alu("add", kb.alu("mul", kb.cast(total, I64), read_m0(indices)), half)
            value = kb.alu("shr", product, shift_by)
            if read_tie is not None:
                mask = kb.alu("sub", kb.alu("shl", one, shift_by), one)
                value = even_at_ties(kb, product, mask, value, read_tie(indices), one, nothing)
            if zero_point is not None:
                value = kb.alu("add", value, zero_point(indices))
            return kb.cast(kb.alu("min", kb.alu("max", value, low), high), self.output_type)

        return finish

    def _channel_scales(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, Sequence[int], int]:
        """The constant input, weight and output scales, one value per index along the weight
        axis each (float32 as stored), the output's shape and that axis."""
        scales = (self.input_scale, self.weight_scale, self.output_scale)
        values = [p.constant_values() for p in scales]
        shape = np.broadcast_shapes(*(v.shape for v in values))
        axis = self.weight_axis % len(shape)
        return (*(first_along(v, shape, axis) for v in values), shape, axis)

    def _bind_onnxruntime(self, kb: KernelBuilder) -> Finish:
        """onnxruntime's requantization (its QLinearConv / QLinearMatMul CPU kernels, MLAS's
        requantize step): s = (x_scale · w_scale) / y_scale in float32, then
        y = saturate(rint(float32(sum) · s) + zp), the product rounded to float32 and then to
        the nearest integer, ties to even. The same float32 operations on every core (an FPU's
        or Zig's IEEE soft float), so the codes are onnxruntime's bit for bit; the rounding and
        saturation are `quantize_f32`'s integer steps (no fused multiply-add: the product is
        rounded before the rounding constant is added)."""
        in_s, w_s, out_s, shape, axis = self._channel_scales()
        f32 = np.float32
        scale = (in_s.astype(f32) * w_s.astype(f32)) / out_s.astype(f32)
        read_scale = _axis_constant(kb, scale if np.ptp(scale) else scale[:1], shape, axis, "requant_scale", Float32Type())
        zero_point = _optional_reader(kb, self.zero_point, I32)

        def finish(total: SSAValue, indices: list[SSAValue]) -> SSAValue:
            product = kb.alu("mul", kb.cast(total, Float32Type()), read_scale(indices))
            return quantize_f32(kb, product, None if zero_point is None else zero_point(indices), self.output_type)

        return finish

    def _bind_tflite(self, kb: KernelBuilder, single: bool = False) -> Finish:
        """TFLite's reference requantization (`MultiplyByQuantizedMultiplier`): M in double
        precision, (x_scale · w_scale) / y_scale, as a Q31 multiplier q and an exponent e
        (`tflite_multipliers`), then in int64 arithmetic (`tflite_scale`); plus the zero point,
        saturated. `single`: TFLite built with TFLITE_SINGLE_ROUNDING (one rounding)."""
        in_s, w_s, out_s, shape, axis = self._channel_scales()
        q, exponent = tflite_multipliers(in_s, w_s, out_s)

        def pick(values: np.ndarray) -> np.ndarray:  # one value when every channel has it
            return values if np.ptp(values) else values[:1]

        if not single and isinstance(self.output_type, IntegerType) and self.output_type.width.data == 16:
            return self._bind_tflite_16x8(kb, q, exponent, shape, axis, pick)
        read_q = _axis_constant(kb, pick(q), shape, axis, "requant_multiplier")
        scale = TfliteScale(kb, single, exponent)
        read_r = _axis_constant(kb, pick(np.maximum(-exponent, 0)), shape, axis, "requant_shift")
        read_e = _axis_constant(kb, pick(exponent), shape, axis, "requant_exponent") if scale.left else None
        nudges = TfliteScale.nudges(exponent)
        read_nudge = _axis_constant(kb, pick(nudges), shape, axis, "requant_nudge") if scale.nudge_varies else None
        zero_point = _optional_reader(kb, self.zero_point, I32)
        low, high = (kb.const(v, I32) for v in (lowest_value(self.output_type), highest_value(self.output_type)))

        def finish(total: SSAValue, indices: list[SSAValue]) -> SSAValue:
            value = scale(
                kb.cast(total, I64), read_q(indices), kb.cast(read_r(indices), I32),
                None if read_nudge is None else read_nudge(indices), None if read_e is None else read_e(indices),
            )
            if zero_point is not None:
                value = kb.alu("add", value, zero_point(indices))
            return kb.cast(kb.alu("min", kb.alu("max", value, low), high), self.output_type)

        return finish

    def _bind_tflite_16x8(self, kb: KernelBuilder, q: np.ndarray, exponent: np.ndarray, shape, axis, pick) -> Finish:
        """TFLite's 16x8 layers (int16 output; reference kernels in the default, double-rounding
        build): MultiplyByQuantizedMultiplier of the int64 sum with the multiplier reduced to 16
        bits, m = (q + 2^15) >> 16 (0x7FFF from q ≥ 0x7FFF0000), and one rounding,
        (sum · m + 2^(t-1)) >> t with t = 15 - e; plus the zero point, saturated."""
        reduced = np.where(q < 0x7FFF0000, (q + (1 << 15)) >> 16, 0x7FFF).astype(np.int64)
        total = (15 - exponent).astype(np.int64)
        read_m = _axis_constant(kb, pick(reduced), shape, axis, "requant_multiplier")
        read_t = _axis_constant(kb, pick(total), shape, axis, "requant_shift")
        one = kb.const(1, I64)
        zero_point = _optional_reader(kb, self.zero_point, I64)
        low, high = (kb.const(v, I64) for v in (lowest_value(self.output_type), highest_value(self.output_type)))

        def finish(total_sum: SSAValue, indices: list[SSAValue]) -> SSAValue:
            t = read_t(indices)
            half = kb.alu("shl", one, kb.alu("sub", t, one))
            value = kb.alu("shr", kb.alu("add", kb.alu("mul", kb.cast(total_sum, I64), read_m(indices)), half), t)
            if zero_point is not None:
                value = kb.alu("add", value, zero_point(indices))
            return kb.cast(kb.alu("min", kb.alu("max", value, low), high), self.output_type)

        return finish

    def _exact(self, m: np.ndarray, shift: np.ndarray, sum_bound: int | None) -> np.ndarray:
        """`exact_channels` of this op's constant scales and (m, shift), one flag per index along
        the weight axis, less the channels where no sum within `sum_bound` (int32's range when
        None) reaches a tie (`ties_reachable`)."""
        in_s, w_s, out_s, shape, axis = self._channel_scales()
        channels = shape[axis]
        m, shift = np.broadcast_to(m, (channels,)), np.broadcast_to(shift, (channels,))
        bound = 2**31 if sum_bound is None else sum_bound
        return exact_channels(in_s, w_s, out_s, m, shift) & ties_reachable(m, shift, bound)

    def _bind_high_word(self, kb: KernelBuilder, m0: np.ndarray, shift: np.ndarray, shape: Sequence[int], axis: int) -> Finish:
        """`_bind_fixed_point`'s value when every shift exceeds 32 and no channel can tie, in
        int32 after one multiply: with hi = (sum · m0) >> 32, the high word of the 32×32→64
        product, and r = shift - 32 ≥ 1, (sum · m0 + 2^(shift-1)) >> shift = (hi + 2^(r-1)) >> r
        (the addend is a multiple of 2^32 and floor division by 2^32 then by 2^r is floor
        division by 2^shift). Per output: a multiply-high (SMULL/SMMUL), an add, a shift by the
        channel's r, the zero point and a saturation; r and 2^(r-1) are per-channel int32
        tables (or inline constants), no 64-bit shift, add or clamp. |hi| < 2^30, so nothing
        after the multiply overflows int32."""
        r = shift - 32
        read_m0 = _axis_constant(kb, m0, shape, axis, "requant_multiplier")
        read_round = _axis_constant(kb, np.left_shift(1, r - 1), shape, axis, "requant_round", I32)
        read_r = _axis_constant(kb, r, shape, axis, "requant_shift", I32)
        word = kb.const(32, I64)
        zero_point = _optional_reader(kb, self.zero_point, I32)
        low, high = (kb.const(v, I32) for v in (lowest_value(self.output_type), highest_value(self.output_type)))

        def finish(total: SSAValue, indices: list[SSAValue]) -> SSAValue:
            product = kb.alu("mul", kb.cast(total, I64), read_m0(indices))
            high_word = kb.cast(kb.alu("shr", product, word), I32)
            value = kb.alu("shr", kb.alu("add", high_word, read_round(indices)), read_r(indices))
            if zero_point is not None:
                value = kb.alu("add", value, zero_point(indices))
            return kb.cast(kb.alu("min", kb.alu("max", value, low), high), self.output_type)

        return finish

    def _bind_tflite_average(self, kb: KernelBuilder) -> Finish | None:
        """TFLite's reference int8 average pool, whose input and output share their scale and
        zero point: the window's raw sum R = sum + n · zp (`sum` centered) divided by its count n
        rounding half away from zero, (R + n/2) / n for R > 0, else -((n/2 - R) / n), integer
        divisions that truncate; saturated. Where the parameters differ (TFLite's pools cannot:
        a MEAN), `_bind_tflite_mean`. None when they are not constants: the exact rounding then."""
        try:
            scales = [float(p.constant_values().reshape(-1)[0]) for p in (self.input_scale, self.output_scale)]
            zero_point = 0 if self.zero_point is None else int(self.zero_point.constant_values().reshape(-1)[0])
        except NotImplementedError:
            return None
        if self.zero_point is not None and not self.zero_point.is_per_tensor:
            return None
        input_zero = self.divisor_zero_point
        if scales[0] != scales[1] or input_zero is None or input_zero != zero_point:
            # A one-element window is a movement op's requantization (Q(DQ(x)), Transpose, Concat
            # … between different parameters), not a MEAN: exact in every mode (docs/int8.md).
            return None if self.divisor == 1 else self._bind_tflite_mean(kb, scales[0] / scales[1])
        n = self.divisor
        base, half, count, nothing = (kb.const(v, I64) for v in (n * zero_point, n // 2, n, 0))
        low, high = (kb.const(v, I64) for v in (lowest_value(self.output_type), highest_value(self.output_type)))

        def finish(total: SSAValue, indices: list[SSAValue]) -> SSAValue:
            raw = kb.alu("add", kb.cast(total, I64), base)
            positive = kb.alu("cmplt", nothing, raw)
            magnitude = kb.where(positive, kb.alu("add", raw, half), kb.alu("sub", half, raw))  # ≥ 0
            quotient = kb.alu("div", magnitude, count)
            value = kb.where(positive, quotient, kb.alu("sub", nothing, quotient))
            return kb.cast(kb.alu("min", kb.alu("max", value, low), high), self.output_type)

        return finish

    def _bind_tflite_mean(self, kb: KernelBuilder, ratio: float) -> Finish | None:
        """TFLite's reference MEAN of int8 / int16 (`QuantizedMeanOrSum`; tf2onnx writes a MEAN
        as a GlobalAveragePool or ReduceMean, here a window sum of `divisor` codes), where the
        input's and output's parameters differ: QuantizeMultiplier of x_scale / y_scale (double)
        as (q, e); s = min(floor(log2 n), 32, 31 + e); q' = (q · 2^s) // n (truncating), e' = e - s;
        then MultiplyByQuantizedMultiplier of the centered sum by (q', e') (`TfliteScale`: its
        two roundings, or one for tflite-single) plus the zero point, saturated. None when the
        multiplier is 2^31 or more (M ≥ 2^31) or the parameters are not constants."""
        n = self.divisor
        q, exponent = tflite_multiplier(ratio)
        if q == 0 or exponent > 31:
            return None
        shift = min(n.bit_length() - 1, 32, 31 + exponent)
        q, exponent = (q << shift) // n, exponent - shift
        scale = TfliteScale(kb, self.rounding == "tflite-single", [exponent])
        multiplier, right = kb.const(q, I64), kb.const(max(-exponent, 0), I32)
        nudge = kb.const(int(TfliteScale.nudges(np.array([exponent]))[0]), I64) if scale.nudge_varies else None
        left = kb.const(exponent, I64) if scale.left else None
        zero_point = _optional_reader(kb, self.zero_point, I32)
        low, high = (kb.const(v, I32) for v in (lowest_value(self.output_type), highest_value(self.output_type)))

        def finish(total: SSAValue, indices: list[SSAValue]) -> SSAValue:
            value = scale(kb.cast(total, I64), multiplier, right, nudge, left)
            if zero_point is not None:
                value = kb.alu("add", value, zero_point(indices))
            return kb.cast(kb.alu("min", kb.alu("max", value, low), high), self.output_type)

        return finish

    def _bind_average(self, kb: KernelBuilder, low: int, high: int) -> Finish | None:
        """y = clamp(round_half_even(sum · R) + zp) with R = x_scale / (y_scale · divisor) the
        exact rational (the scales as the floats they are), for every sum in [low, high]: the
        multiply, add and shift `exact_rounding` finds (32-bit arithmetic where it fits), the
        tie check only where a sum in the range can tie. None when the scales are not constant
        per-tensor positive values or no such form exists (then the rounded fixed point)."""
        try:
            scales = [p.constant_values().reshape(-1) for p in (self.input_scale, self.output_scale)]
        except NotImplementedError:
            return None
        if any(s.size == 0 or np.ptp(s) or not np.isfinite(s[0]) or s[0] <= 0 for s in scales):
            return None
        ratio = Fraction(float(scales[0][0])) / Fraction(float(scales[1][0])) / self.divisor
        rounding = exact_rounding(ratio, low, high)
        if rounding is None:
            return None
        zero_point = _optional_reader(kb, self.zero_point, I32 if rounding.bits == 32 else I64)
        return rounded_quotient(kb, rounding, zero_point, self.output_type)

    def _bind_common_shift(
        self, kb: KernelBuilder, m: np.ndarray, shift: int, shape: Sequence[int], axis: int, sum_bound: int, largest: float
    ) -> Finish:
        """y = clamp(((sum · m + 2^(shift-1)) >> shift) + zp) with one constant shift: a
        32×32→64 multiply, a 64-bit add and a shift by a constant; then int32 arithmetic when
        |sum · M| (at most `largest`; |sum| at most `sum_bound`) cannot leave int32."""
        read_m = _axis_constant(kb, m if np.ptp(m) else m[:1], shape, axis, "requant_multiplier")
        narrow = largest + 2 < 2**31 - 2**16
        wide = I32 if narrow else I64
        half, by = kb.const(1 << (shift - 1), I64), kb.const(shift, I64)
        read_tie = _tie_reader(kb, self._exact(m, np.array([shift]), sum_bound), shape, axis)
        if read_tie is not None:
            mask, one, nothing = (kb.const(v, I64) for v in ((1 << shift) - 1, 1, 0))
        zero_point = _optional_reader(kb, self.zero_point, wide)
        low, high = (kb.const(v, wide) for v in (lowest_value(self.output_type), highest_value(self.output_type)))

        def finish(total: SSAValue, indices: list[SSAValue]) -> SSAValue:
            product = kb.alu("add", kb.alu("mul", kb.cast(total, I64), read_m(indices)), half)
            value = kb.alu("shr", product, by)
            if read_tie is not None:
                value = even_at_ties(kb, product, mask, value, read_tie(indices), one, nothing)
            if narrow:
                value = kb.cast(value, I32)  # wraps, and provably in range
            if zero_point is not None:
                value = kb.alu("add", value, zero_point(indices))
            return kb.cast(kb.alu("min", kb.alu("max", value, low), high), self.output_type)

        return finish


def rounded_quotient(kb: KernelBuilder, rounding: ExactRounding, zero_point: Reader | None, out_type: Attribute) -> Finish:
    """clamp(round_half_even(sum · R) + zp) for the sums `rounding` was made for:
    X = sum · multiplier + addend, q = X >> shift, less 1 where q is odd and X's low shift bits
    are below tie_below (`zant.analysis.rounding`), in `rounding.bits`-bit integers; the zero
    point (read in that type) added and the output type's range the clamp."""
    wide = I32 if rounding.bits == 32 else I64
    multiplier, addend = (kb.const(v, wide) for v in (rounding.multiplier, rounding.addend))
    below = kb.const(rounding.tie_below, wide) if rounding.tie_below else None
    step = half_even_step(kb, wide, rounding.shift, below is not None)
    low, high = (kb.const(v, wide) for v in (lowest_value(out_type), highest_value(out_type)))

    def finish(total: SSAValue, indices: list[SSAValue]) -> SSAValue:
        value = step(kb.cast(total, wide), multiplier, addend, below)
        if zero_point is not None:
            value = kb.alu("add", value, zero_point(indices))
        return kb.cast(kb.alu("min", kb.alu("max", value, low), high), out_type)

    return finish


HalfEvenStep = Callable[[SSAValue, SSAValue, SSAValue, SSAValue | None], SSAValue]
"""(sum, multiplier, addend, tie threshold or None) → the rounded value (`half_even_step`)."""


def even_at_ties(
    kb: KernelBuilder, x: SSAValue, mask: SSAValue, value: SSAValue, tie_below: SSAValue, one: SSAValue, nothing: SSAValue
) -> SSAValue:
    """`value` = x >> shift (x a sum rounded up at halves) less its low bit where x mod 2^shift
    (`x & mask`) is below `tie_below`: a tie rounded up to an odd value goes down to the even one.
    `one` and `nothing` are the constants 1 and 0, made ahead of the loops."""
    tie = kb.alu("cmplt", kb.alu("and", x, mask), tie_below)
    return kb.alu("sub", value, kb.where(tie, kb.alu("and", value, one), nothing))


def half_even_step(kb: KernelBuilder, wide: Attribute, shift: int, ties: bool) -> HalfEvenStep:
    """`ExactRounding.apply` in `wide` integers for one shift, its constants made here (ahead of
    the loops built after this call): X = sum · multiplier + addend, q = X >> shift, less q's
    low bit where X mod 2^shift is below the threshold; without `ties` no sum ties, no check."""
    by = kb.const(shift, wide)
    if ties:
        mask, one, nothing = (kb.const(v, wide) for v in ((1 << shift) - 1, 1, 0))

    def step(total: SSAValue, multiplier: SSAValue, addend: SSAValue, tie_below: SSAValue | None) -> SSAValue:
        x = kb.alu("add", kb.alu("mul", total, multiplier), addend)
        value = kb.alu("shr", x, by)
        if ties:
            value = even_at_ties(kb, x, mask, value, tie_below, one, nothing)
        return value

    return step


def common_shift(multipliers: np.ndarray, sum_bound: int) -> tuple[np.ndarray, int] | None:
    """Per-channel integers m (below 2^31) and one shift with m · 2^-shift ≈ M, when the
    coarser m of the small multipliers costs at most 2^-12 of an output step for any sum up
    to `sum_bound` (|sum| · |M - m · 2^-shift| ≤ sum_bound · 2^-(shift+1)); else None."""
    largest = float(np.max(multipliers))
    if largest <= 0 or sum_bound <= 0:
        return None
    exponent = math.frexp(largest)[1]  # largest < 2^exponent
    shift = min(31 - exponent, 62)
    if shift < 1 or sum_bound * 2.0 ** -(shift + 1) > 2.0**-12:
        return None
    m = np.round(np.asarray(multipliers, dtype=np.float64) * 2.0**shift).astype(np.int64)
    if np.any(m >= 2**31) or np.any(m < 0):
        return None
    return m, shift


def _integer_matmul(
    op: Operation,
    kb: KernelBuilder,
    operands: tuple[int, int, int | None, int | None],
    out_type: Attribute,
    finish: Finish,
    word_taps: bool = False,
) -> Layout:
    """Y[…, i, j] = finish(Σ_k (A[…, i, k] - a_zp) · (B[…, k, j] - b_zp[j])) for the ONNX inputs
    `operands` = (A, B, a_zero_point, b_zero_point); batch dimensions broadcast as views. On the
    cores of `word_taps` (DSP without Helium), a constant B takes the fully connected form where
    it can (`_fully_connected_matmul`)."""
    if word_taps:
        y = _fully_connected_matmul(op, kb, operands, out_type, finish)
        if y is not None:
            return y
    a, b = (layout_of(input_value(op, i)) for i in operands[:2])
    out_shape = tensor_shape(op.results[0])
    if a.rank < 2 or b.rank < 2:
        raise NotImplementedError(f"1-D operands are not supported, got {a.shape} and {b.shape}")
    depth = a.shape[-1]
    if depth != b.shape[-2]:
        raise ValueError(f"inner dimensions differ: {a.shape} @ {b.shape}")
    *batch_shape, rows, columns = out_shape
    a = a.broadcast_to([*batch_shape, rows, depth])
    b = b.broadcast_to([*batch_shape, depth, columns])
    # Per-row zero points of A are not taken: the spec and the reference disagree on them.
    a_zp = _optional_reader(kb, _optional_param(op, operands[2], (rows, depth)), I32)
    b_zp = _optional_reader(kb, _optional_param(op, operands[3], (depth, columns), axis=1), I32)

    y = kb.alloc(result_name(op), out_shape, out_type)
    with kb.loop_nest(out_shape) as (*batch, i, j):
        acc = kb.define_acc(0, I32)
        with kb.loop(depth) as k:
            lhs = _centered(kb, kb.load(a, [*batch, i, k]), a_zp, [i, k])
            rhs = _centered(kb, kb.load(b, [*batch, k, j]), b_zp, [k, j])
            kb.mulacc(acc, lhs, rhs)
        kb.store(finish(kb.acc_get(acc), [*batch, i, j]), y, [*batch, i, j])
    return y


def _fully_connected_matmul(
    op: Operation,
    kb: KernelBuilder,
    operands: tuple[int, int, int | None, int | None],
    out_type: Attribute,
    finish: Finish,
) -> Layout | None:
    """A MatMul (MatMulInteger, QLinearMatMul) of a run-time A [M, K] of int8 or uint8 with a
    constant per-tensor zero point (or none) by a constant B [K, N] in the fully connected form
    (`fully_connected`): each row of A a vector, the weights W = (B - b_zp)^T [N, K] centered
    at compile time, which must fit int8 (an int8 B with zero point 0, or a uint8 B with zero
    point 128, as onnxruntime's quantizer writes them), A's zero point folded into the bias
    (-a_zp·Σ_k W[n, k]). Exact: the same int32 sums, wrapping as the reference's. None where it
    does not apply (the loop form then)."""
    a, b = (layout_of(input_value(op, i)) for i in operands[:2])
    if a.rank != 2 or b.rank != 2 or a.shape[1] != b.shape[0]:
        return None
    values = constant_tensor(b)
    b_zp = _optional_param(op, operands[3], b.shape, axis=1)
    a_zp = _optional_param(op, operands[2], a.shape)
    if values is None:
        return None
    try:
        b_zero = 0 if b_zp is None else b_zp.constant_values().astype(np.int64).reshape(values.shape)  # B's view
    except NotImplementedError:
        return None
    weights = (values.astype(np.int64) - b_zero).T  # [N, K]
    if weights.size == 0 or weights.min() < -128 or weights.max() > 127:
        return None
    folded = fold_zero_point(a_zp, a.element_type, weights, None, None)
    if folded is None or not fully_connected_applies(a.element_type, IntegerType(8), weights.size, weights.shape[0], 1):
        return None
    y = kb.alloc(result_name(op), tensor_shape(op.results[0]), out_type)
    fully_connected(
        kb, a, y, weights.astype(np.int8), folded.bias if folded.bias.any() else None,
        lambda total, n, m: finish(total, [n, m]), f"{result_name(op)}_fc",
    )
    return y


def _wrap_int32(values: np.ndarray) -> np.ndarray:
    """int64 values modulo 2^32 as int32: the accumulator wraps, so sums agree modulo 2^32."""
    return ((values.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)


@dataclass(frozen=True)
class FoldedZeroPoint:
    """Σ (x - x_zp)·w' = Σ x·w' - x_zp·Σ w' for a per-tensor constant x_zp and constant
    weights w' (= w - w_zp): the second sum, per output channel, is added to the bias at compile
    time, so the taps read x as it is (CMSIS-NN's and TFLite's form). A padded tap must then
    read x_zp itself (it contributes (x_zp - x_zp)·w' = 0, as the reference's zero)."""

    x_zero_point: int
    bias: np.ndarray
    """int32, per output channel: the ONNX bias (or 0) minus x_zp · Σ w'."""
    sum_bound: int
    """A bound on |Σ (x - x_zp)·w' + bias| over every input."""
    sum_range: tuple[int, int]
    """The least and greatest Σ (x - x_zp)·w' + bias over every input and output channel."""
    wide_bias: np.ndarray
    """int64, `bias` before wrapping to int32: the bias of a 64-bit sum (`needs_64_bit_sum`)."""


def fold_zero_point(
    x_zp: QuantParam | None, x_type: Attribute, weights: np.ndarray | None, w_zp: QuantParam | None, bias: np.ndarray | None
) -> FoldedZeroPoint | None:
    """The folded form of a conv whose weights (out_channels first) and zero points are
    constants and whose x_zp is per-tensor; None otherwise."""
    if weights is None or (x_zp is not None and not x_zp.is_per_tensor):
        return None
    try:
        x_zero = 0 if x_zp is None else int(x_zp.constant_values().reshape(-1)[0])
        w_zero = 0 if w_zp is None else w_zp.constant_values().astype(np.int64)
    except NotImplementedError:
        return None
    centered = (weights.astype(np.int64) - w_zero).reshape(weights.shape[0], -1)
    bias64 = np.zeros(weights.shape[0], np.int64) if bias is None else bias.astype(np.int64).reshape(-1)
    span = int(max(abs(lowest_value(x_type) - x_zero), abs(highest_value(x_type) - x_zero)))
    bound = int(np.max(np.abs(centered).sum(axis=1) * span + np.abs(bias64)))
    # A tap's (x - x_zp)·w' lies between w'·(lowest - x_zp) and w'·(highest - x_zp) (a padded
    # tap's 0 too: x_zp is in the type's range).
    below, above = lowest_value(x_type) - x_zero, highest_value(x_type) - x_zero
    positive, negative = np.maximum(centered, 0).sum(axis=1), np.minimum(centered, 0).sum(axis=1)
    lows = positive * below + negative * above + bias64
    highs = positive * above + negative * below + bias64
    folded_bias = bias64 - x_zero * centered.sum(axis=1)
    return FoldedZeroPoint(x_zero, _wrap_int32(folded_bias), bound, (int(lows.min()), int(highs.max())), folded_bias)


def needs_64_bit_sum(folded: FoldedZeroPoint | None, x_type: Attribute, w_type: Attribute, depth: int) -> bool:
    """Whether a conv's sum of `depth` products needs int64: a 16-bit x only (16x8
    quantization; 8-bit sums keep int32 as before). A 16x8 product is below 2^23 in magnitude
    (|x - x_zp| < 2^16, |w| ≤ 2^7), so int32 holds about 2^8 of them at the extremes: with
    constant weights the bound is `folded.sum_bound` (Σ|w'|·span + |bias|, usually far below
    that), else depth · 2^(x bits) · 2^(w bits)."""
    if not isinstance(x_type, IntegerType) or x_type.width.data <= 8:
        return False
    if folded is not None:
        return folded.sum_bound >= 2**31
    w_bits = w_type.width.data if isinstance(w_type, IntegerType) else 32
    return depth * 2 ** (x_type.width.data + w_bits) >= 2**31


def _zero_or_absent(param: QuantParam | None) -> bool:
    """`param` is absent or a constant of zeros."""
    try:
        return param is None or not param.constant_values().any()
    except NotImplementedError:
        return False


FOUR_BIT = (IntegerType(4), IntegerType(4, Signedness.UNSIGNED))
"""int4 / uint4 weights (packed two to a byte in the constant arena)."""


def _centered_int4(
    kb: KernelBuilder, name: str, weights: np.ndarray, w_zp: QuantParam
) -> tuple[Layout, np.ndarray, None] | None:
    """4-bit constant weights less their constant zero points, when every difference is an
    int4 (uint4 with zero point 8, QUInt4's symmetric form, or per-channel zero points near
    it): a new int4 constant (as packed: the same flash) and no zero point, so the taps read
    plain int4 weights (`arm-dsp-dot`'s `load_s4x4` on the DSP cores) and subtract nothing.
    (the weights' layout, their values, no zero point) or None."""
    try:
        centered = weights.astype(np.int64) - w_zp.constant_values().astype(np.int64)
    except NotImplementedError:
        return None
    if centered.size == 0 or centered.min() < -8 or centered.max() > 7:
        return None
    return kb.constant(name, centered, IntegerType(4)), centered, None


def _integer_conv(
    op: Operation,
    kb: KernelBuilder,
    operands: tuple[int, int, int | None, int | None, int | None],
    out_type: Attribute,
    bind: Callable[[FoldedZeroPoint | None], Finish],
    channel_block: int,
    word_taps: bool = False,
    weight_cache: int = 0,
    layer_bound: int = 0,
    mve: bool = False,
    kernel_scratch: int = 0,
) -> Layout:
    """Conv's loop nest (groups, pads, strides, dilations, auto_pad via windows.py)
    over int32 products (X - x_zp) · (W[m] - w_zp[m]), plus an int32 bias B[m]; `operands` are
    the ONNX input indices of (X, W, x_zero_point, w_zero_point, B). `bind(folded)` makes
    the step applied to each sum (`folded` bounds the sums when the weights are constants). With constant weights the x zero point is folded into the
    bias (`FoldedZeroPoint`). `word_taps` (cores whose int8 dot products are word SMLADs, the
    DSP extension without Helium) allows rows of 3 taps to grow a 4th, of weight 0, and reads
    rows of 4 as words."""
    x, w = (layout_of(input_value(op, i)) for i in operands[:2])
    out_shape = tensor_shape(op.results[0])
    if x.rank < 3 or w.rank != x.rank:
        raise ValueError(f"expected X and W of one rank ≥ 3, got {x.shape} and {w.shape}")
    out_channels, group_channels, *kernel = w.shape
    kernel_shape = get_attr(op, "kernel_shape")
    if kernel_shape and list(kernel_shape) != kernel:
        raise ValueError(f"kernel_shape {kernel_shape} differs from W's {kernel}")
    group = get_attr(op, "group")
    if group <= 0 or x.shape[1] != group_channels * group or out_channels % group:
        raise ValueError(
            f"{x.shape[1]} input and {out_channels} output channels do not split into "
            f"{group} groups of W's {group_channels} input channels"
        )
    windows = sliding_windows(op, x.shape[2:], kernel, out_shape[2:])
    out_per_group = out_channels // group
    x_zp_param = _optional_param(op, operands[2], x.shape[:2])
    w_zp_param = _optional_param(op, operands[3], w.shape, axis=0)
    bias_value = None if operands[4] is None else input_value(op, operands[4])
    bias = None if bias_value is None else layout_of(bias_value)
    weights = constant_tensor(w)
    if weights is not None and w_zp_param is not None and w.element_type in FOUR_BIT:
        centered = _centered_int4(kb, f"{result_name(op)}_int4_weights", weights, w_zp_param)
        if centered is not None:
            w, weights, w_zp_param = centered
    bias_values = None if bias is None else constant_tensor(bias)
    # Constant weights of a window with taps over 4 or more channels: the channels innermost
    # in the reduction, read from W'[m, k…, c] (repacked once at compile time), so the weights
    # of consecutive channels are consecutive and `arm-dsp-dot` loads them a word at a time. X
    # is then padded whatever its size: every output takes the unchecked interior, whose word
    # loads are the only readers of W' (so `interleave-dot-rows` may permute it).
    uniform_weights = weights is not None and weights.size > 0 and bool(np.all(weights == weights.flat[0]))
    dot_taps = weights is not None and not uniform_weights and group_channels >= 4 and math.prod(kernel) > 1
    # Fewer channels under rows of 3 taps: a 4th tap of weight 0 makes each row of taps one
    # word of X and one of W for `arm-dsp-dot` (exact: it adds 0). The window grows by one
    # tap, its end padding as far as its last output needs. (Helium cores run the 3-tap rows
    # faster as LLVM vectorizes them: digits' conv1 on the M55 took 2x the instructions with a
    # 4th tap.) Rows of 4 taps (KWS's first Conv, 10x4 over 1 channel) are a word each as they
    # are: the same register tiles, no tap added (kws_int8 on the L4R5: 5.84 M -> 5.72 M
    # cycles, from tiles of 4 channels x 1 pixel).
    # An ungrouped 1x1 Conv on the same cores reads X through small column buffers instead
    # (`conv_columns`), when the zero point folds (below).
    dsp_words = word_taps
    # Fewer input channels than a word (an image's first Conv): each pixel's window widened
    # once into an int16 column shared by the output channels (`conv_first`).
    first = (
        dsp_words and weights is not None and not uniform_weights and group == 1 and _zero_or_absent(w_zp_param)
        and (bias is None or bias_values is not None)
        and fold_zero_point(x_zp_param, x.element_type, weights, w_zp_param, bias_values) is not None
        and first_applies(
            x.element_type, w.element_type, group_channels, out_channels, windows, out_shape[2:], layer_bound,
            math.prod(x.shape[:2]) * math.prod(w.in_size + w.pad_begin + w.pad_end for w in windows),
            math.prod(out_shape),
        )
    )
    word_taps = (
        word_taps and weights is not None and not uniform_weights and not dot_taps and group == 1 and not first
        and kernel[-1] % 4 in (0, 3) and windows[-1].dilation == 1 and _zero_or_absent(w_zp_param)
    )
    # An RGB input's rows of 3 taps read as runs of 3·3 bytes of a channels-last copy instead
    # (`conv_window`, below): no tap of weight 0, a quarter of the products (vww_int8's first
    # Conv, 3x3x3 -> 8 at stride 2, on the L4R5: 1.25 M -> 1.11 M cycles; KWS's 10x4 over one
    # channel took 82 k cycles more that way than in word taps).
    if word_taps and group_channels == 3:
        word_taps, dot_taps = False, True
    if word_taps and kernel[-1] % 4 == 3:
        weights = np.pad(weights, [(0, 0)] * (weights.ndim - 1) + [(0, 1)])
        kernel = [*kernel[:-1], kernel[-1] + 1]
        last = windows[-1]
        reach = (last.out_size - 1) * last.stride + kernel[-1] - 1 - last.pad_begin  # the last tap's input
        windows[-1] = replace(last, kernel=kernel[-1], pad_end=max(last.pad_end, reach - last.in_size + 1))
    # Folding needs the bias known at compile time too (or no bias).
    folded = None
    if bias is None or bias_values is not None:
        folded = fold_zero_point(x_zp_param, x.element_type, weights, w_zp_param, bias_values)
    uniform_bias = None
    # A 16-bit x whose sums can leave int32 (16x8 with long reductions) sums in int64.
    wide = needs_64_bit_sum(folded, x.element_type, w.element_type, group_channels * math.prod(kernel))
    acc_type = I64 if wide else I32
    # A fully connected layer (a Gemm's 1x1 Conv over one pixel) on the same cores: each weight
    # word read raw as two halves, one SXTB16 per word (`fully_connected`).
    if (
        dsp_words and folded is not None and not wide and group == 1 and not uniform_weights
        and all(k == 1 for k in kernel) and math.prod(x.shape[2:]) == 1 and _zero_or_absent(w_zp_param)
        and fully_connected_applies(x.element_type, w.element_type, w.size, out_channels, math.prod(out_shape[2:]))
    ):
        assert weights is not None
        y = result_layout(kb, op, result_name(op), out_shape, out_type)
        finish_fc = bind(folded)
        pixel = [kb.index(0)] * len(kernel)
        fully_connected(
            kb, x, y, weights.reshape(out_channels, -1), folded.bias if folded.bias.any() else None,
            lambda total, n, m: finish_fc(total, [kb.index(0), m, *pixel]), f"{result_name(op)}_fc",
        )
        return y
    if folded is not None:
        x_zp = None
        bias = None
        folded_bias = folded.wide_bias if wide else folded.bias
        if folded_bias.any() and np.all(folded_bias == folded_bias[0]):
            # One value for every channel (a window sum's -x_zp · count): a literal, no table.
            uniform_bias = kb.const(int(folded_bias[0]), acc_type)
        elif folded_bias.any():
            bias = kb.constant(f"{result_name(op)}_bias", folded_bias, acc_type)
        fill = folded.x_zero_point
        # A padded copy of X no larger than the output (a first layer's small input), or for an
        # ungrouped layer whose unchecked interior holds less than half its outputs (a 3x3
        # window over 4x4: digits' conv2): every output then takes the unchecked interior's
        # loop, whose window loads vectorize, and the copy seldom raises the scratch peak.
        # Larger images keep their border regions (mobilenet's 48x48 was slower padded: the copy
        # costs more than the border's checks), unless `dot_taps` (resnet8's 3x3 layers), and so
        # do depthwise layers (mobilenet's 6x6 ones too). A padded tap reads x_zp: it adds 0.
        padded_size = math.prod(x.shape[:2]) * math.prod(w.in_size + w.pad_begin + w.pad_end for w in windows)
        inside = math.prod(max(0, hi - lo) for lo, hi in map(interior, windows))
        small_interior = group == 1 and 2 * inside < math.prod(w.out_size for w in windows)
        # The window column form over a channels-last copy reads each window's runs of X in
        # place (`conv_window`): the copy is then made channels-last, padded or not.
        channels_last = (
            dsp_words and dot_taps and group == 1 and not wide and _zero_or_absent(w_zp_param)
            and out_channels % 2 == 0 and window_channels_last_applies(windows, out_shape[2:])
        )
        if first:
            assert weights is not None
            x, windows = padded_rows(kb, x, windows, f"{result_name(op)}_padded", fill)
            y = result_layout(kb, op, result_name(op), out_shape, out_type)
            finish_first = bind(folded)
            first_conv(
                kb, x, windows, y, w,
                lambda c: kb.cast(kb.load(bias, [c]), acc_type) if bias is not None else uniform_bias,
                lambda total, m: finish_first(total, [kb.index(0), m, kb.index(0), kb.index(0)]),
                result_name(op),
            )
            return y
        if padded_size <= math.prod(out_shape) or small_interior or dot_taps or word_taps:
            x, windows = padded_input(kb, x, windows, f"{result_name(op)}_padded", fill, channels_last)
    else:
        x_zp = _optional_reader(kb, x_zp_param, I32)
        fill = 0
    w_zp = _optional_reader(kb, w_zp_param, I32)
    finish = bind(folded)
    # One weight value everywhere (the all-ones weights fold-qdq gives an average pool): the
    # product's factor is a literal and the weight tensor, unread, is dropped — a pool is a sum.
    uniform = None
    if uniform_weights and w_zp is None:
        uniform = kb.const(int(weights.flat[0]), I32)

    def input_term(windows, n, channel, out_ivs, taps):
        positions = tap_positions(kb, windows, out_ivs, taps)
        xv, inside = load_window(kb, x, [n, channel], windows, positions, fill)
        lhs = _centered(kb, xv, x_zp, [n, channel])
        if inside is not None and folded is None:
            # The reference pads the centered input: a padded tap adds 0, not -x_zp·w.
            lhs = kb.where(inside, lhs, kb.const(0, I32))
        return lhs

    if dot_taps:
        repacked = kb.constant(f"{result_name(op)}_channels_last_weights", np.moveaxis(weights, 1, -1), w.element_type)
    elif word_taps:
        repacked = kb.constant(f"{result_name(op)}_word_tap_weights", weights, w.element_type)

    def weight_term(m, g, channel, c, taps):
        if uniform is not None:
            return uniform
        if dot_taps:
            value = kb.load(repacked, [m, *taps, c])
        else:
            value = kb.load(repacked if word_taps else w, [m, c, *taps])
        return _centered(kb, value, w_zp, [m, c, *taps])

    def epilogue(total: SSAValue, m: SSAValue, pixel: list[SSAValue]) -> SSAValue:
        if bias is not None:
            total = kb.alu("add", total, kb.cast(kb.load(bias, [m]), acc_type))
        elif uniform_bias is not None:
            total = kb.alu("add", total, uniform_bias)
        # Scales and zero points never vary along the batch: any batch index reads them.
        return finish(total, [kb.index(0), m, *pixel])

    padded = any(w.pad_begin or w.pad_end for w in windows)
    if (
        dsp_words and folded is not None and group == 1 and uniform is None and not wide
        and column_form_applies(x, out_channels, kernel, [w.stride for w in windows], padded)
    ):
        y = result_layout(kb, op, result_name(op), out_shape, out_type)
        zeros = [kb.index(0)] * len(kernel)
        pointwise_columns(
            kb, x, y, lambda m, c: weight_term(m, None, c, c, zeros), lambda total, m: epilogue(total, m, zeros),
            f"{result_name(op)}_columns", weight_cache,
            # W as stored (int8 rows, zero point 0): what a staged copy of a pair of rows reads
            w.reshape([out_channels, w.size // out_channels]) if _zero_or_absent(w_zp_param) and w.element_type == IntegerType(8) else None,
            layer_bound + kernel_scratch,  # the widened form's copies may add `kernel_scratch`
            over_input(op, x, y),
        )
        return y
    # Taps over 4 or more channels on the same cores (or a strided 1x1 window over as many), at
    # least 2 output pixels: each block of pixels' windows copied into a column, channels
    # innermost as W' (`window_columns`), reduced by word SMLADs.
    window_weights = repacked if dot_taps else None
    if weights is not None and group == 1 and math.prod(kernel) == 1 and group_channels >= 4:
        window_weights = w
    if (
        dsp_words and window_weights is not None and folded is not None and not padded and uniform is None and not wide
        and _zero_or_absent(w_zp_param) and out_channels % 2 == 0 and math.prod(out_shape[2:]) >= 2
    ):
        y = result_layout(kb, op, result_name(op), out_shape, out_type)
        rows = window_weights.reshape([out_channels, window_weights.size // out_channels])
        assert rows is not None
        zeros = [kb.index(0)] * len(kernel)
        int8_rows = window_weights.element_type == IntegerType(8)
        window_columns(
            kb, x, windows, y, lambda m, i: kb.cast(kb.load(rows, [m, i]), I32),
            lambda total, m: epilogue(total, m, zeros), f"{result_name(op)}_columns",
            weight_cache, rows if int8_rows else None,
            np.moveaxis(weights, 1, -1).reshape(out_channels, -1) if int8_rows else None,
        )
        return y
    # Word-tap rows (few channels) take register tiles of 2 channels x 2 pixels: each weight word
    # is read and widened once for two pixels (smlad_bytes_pair), and the rows LLVM unrolls stay
    # within a flash accelerator's 1 KB instruction cache (VWW's first layer on the L4R5).
    # So do 4-bit weights on those cores (an ungrouped layer): each unpacked halfword of weights
    # (`load_s4x4`) serves two pixels, as CMSIS-NN's s4 kernels unpack once per word per block.
    tile = word_taps or (dsp_words and group == 1 and w.element_type in FOUR_BIT)
    # Depthwise rows of 3 taps on the same cores: the interior in pairs of taps per SMLAD
    # (`conv_depthwise`), the rest as below.
    paired = (
        dsp_words and group > 1 and group_channels == 1 and out_per_group == 1 and weights is not None
        and not uniform_weights and folded is not None and not wide and uniform is None
        and _zero_or_absent(w_zp_param) and w.element_type == IntegerType(8) and depthwise_applies(x, windows)
    )
    # Pointwise on Helium cores: a row of X copied channels-last, contiguous reductions (`conv_pointwise_mve`).
    if (
        mve and group == 1 and weights is not None and not uniform_weights and folded is not None and not wide
        and uniform is None and _zero_or_absent(w_zp_param) and w.element_type == IntegerType(8)
        and pointwise_mve_applies(x, windows)
    ):
        y = result_layout(kb, op, result_name(op), out_shape, out_type)
        pointwise_mve(
            kb, x, y, w,
            lambda m: kb.cast(kb.load(bias, [m]), acc_type) if bias is not None else uniform_bias,
            lambda total, m, pixel: finish(total, [kb.index(0), m, *pixel]), result_name(op),
        )
        return y
    # Depthwise at stride 1 on Helium cores: four outputs of a channel a vector (`conv_depthwise_mve`).
    if (
        mve and group > 1 and group_channels == 1 and out_per_group == 1 and weights is not None
        and not uniform_weights and folded is not None and not wide and uniform is None
        and _zero_or_absent(w_zp_param) and w.element_type == IntegerType(8) and depthwise_mve_applies(x, windows)
    ):
        y = result_layout(kb, op, result_name(op), out_shape, out_type)
        depthwise_mve(
            kb, x, y, windows, w, fill,
            lambda c: kb.cast(kb.load(bias, [c]), acc_type) if bias is not None else uniform_bias,
            lambda total, m, pixel: finish(total, [kb.index(0), m, *pixel]), result_name(op),
        )
        return y
    regions = window_regions(windows)
    if paired:
        regions, box = split_paired_interior(windows)
    y = convolve(
        op, kb, group_channels, out_per_group, kernel, regions, input_term, weight_term,
        acc_type=acc_type, epilogue=epilogue, channel_block=2 if tile else channel_block,
        pixel_tile=2 if tile else 1, channels_innermost=dot_taps,
        regions_outermost=dsp_words and group > 1,
    )
    if paired:
        assert weights is not None
        table = kb.constant(f"{result_name(op)}_paired_tap_weights", paired_tap_weights(weights, windows), I32)
        # The border too where the form takes it: its padded taps read X's zero point.
        edge_fill = fill if takes_edges(windows) else None
        # The bias is the sums' start, loaded once per channel (the epilogue adds none).
        def start(c: SSAValue) -> SSAValue | None:
            return kb.cast(kb.load(bias, [c]), acc_type) if bias is not None else uniform_bias

        def requantize(total: SSAValue, m: SSAValue, pixel: list[SSAValue]) -> SSAValue:
            return finish(total, [kb.index(0), m, *pixel])

        depthwise_paired_taps(kb, x, y, windows, box, table, w, requantize, edge_fill, start)
    return y


class MatMulIntegerLowering(OnnxLowering):
    """`MatMulInteger`: int32 (A - a_zero_point) @ (B - b_zero_point), zero point of B per-tensor
    or per column."""

    op_names = frozenset({"onnx.MatMulInteger"})

    def __init__(self, word_taps: bool = False):
        super().__init__()
        self.word_taps = word_taps  # DSP cores without Helium: a constant B in the fully connected form

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        return [_integer_matmul(op, kb, (0, 1, 2, 3), I32, _keep_int32, self.word_taps)]


class ConvIntegerLowering(OnnxLowering):
    """`ConvInteger`: int32 Conv of (X - x_zero_point) and (W - w_zero_point[m]); output
    channels in register blocks of `channel_block` (as `conv.ConvLowering`)."""

    op_names = frozenset({"onnx.ConvInteger"})

    def __init__(self, channel_block: int = CHANNEL_BLOCK, word_taps: bool = False, weight_cache: int = 0, layer_bound: int = 0, mve: bool = False, kernel_scratch: int = 0):
        super().__init__()
        self.channel_block = channel_block
        self.word_taps = word_taps
        self.mve = mve  # Helium cores: depthwise Convs in `conv_depthwise_mve`'s form
        self.weight_cache = weight_cache  # bytes of the cache in front of slow weight memory (0: none)
        self.layer_bound = layer_bound  # bytes an op and its kernel's own scratch may take at once (0: unknown)
        self.kernel_scratch = kernel_scratch  # bytes the widened pointwise form's copies may add to it

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        return [_integer_conv(op, kb, (0, 1, 2, 3, None), I32, lambda folded: _keep_int32, self.channel_block, self.word_taps)]


def _requantization(op: Operation, shape: Sequence[int], weight_axis: int) -> Requantization:
    """The QLinear inputs (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp) as a Requantization
    over an output of `shape`; the weight scale may be per `weight_axis` of the output."""
    out_type = tensor_element_type(op.results[0])
    _check_quantized(out_type)
    return Requantization(
        quant_param(input_value(op, 1), shape),
        quant_param(input_value(op, 4), shape, weight_axis),
        quant_param(input_value(op, 6), shape),
        _optional_param(op, 7, shape),
        out_type,
        fixed_point=FIXED_POINT in op.attributes,
        weight_axis=weight_axis,
        divisor=_average_count(op),
        divisor_zero_point=_constant_zero_point(op, 2),
        rounding=rounding_mode(op),
    )


def _constant_input(op: Operation, index: int) -> np.ndarray | None:
    """The constant at ONNX input `index` (None when absent); a run-time one is refused."""
    value = input_value(op, index)
    if value is None:
        return None
    array = constant_tensor(layout_of(value))
    if array is None:
        raise NotImplementedError("onnxruntime's float32 form of a 16-bit layer needs constant weights, scales and zero points")
    return array


def _constant_zero_point(op: Operation, index: int) -> int | None:
    """The constant per-tensor zero point at ONNX input `index` (0 when absent), else None."""
    value = input_value(op, index)
    if value is None:
        return 0
    values = constant_tensor(layout_of(value))
    return None if values is None or values.size != 1 else int(values.reshape(-1)[0])


def _average_count(op: Operation) -> int:
    """The window size an `AVERAGE_COUNT` mark gives, else 0."""
    return average_count(op) or 0


class QLinearMatMulLowering(MatMulIntegerLowering):
    """`QLinearMatMul`: MatMulInteger's int32 kernel, then requantized; b's scale and zero point
    per-tensor or per column."""

    op_names = frozenset({"onnx.QLinearMatMul"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        requantize = _requantization(op, tensor_shape(op.results[0]), -1)
        return [_integer_matmul(op, kb, (0, 3, 2, 5), requantize.output_type, requantize.bind(kb), self.word_taps)]


class QLinearConvLowering(ConvIntegerLowering):
    """`QLinearConv`: ConvInteger's int32 kernel plus the int32 bias, then requantized; w's
    scale and zero point per-tensor or per output channel."""

    op_names = frozenset({"onnx.QLinearConv"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        requantize = _requantization(op, tensor_shape(op.results[0]), 1)
        form = op.attributes.get(FLOAT_SUM)
        if form is not None and requantize.rounding == "onnxruntime":
            # A 16-bit layer onnxruntime runs in float32: its MLAS kernel's arithmetic.
            constants = {i: _constant_input(op, i) for i in range(1, 9)}
            if form.data == "mean":
                return [float_global_pool(op, kb, constants, quantize_f32)]
            return [float_conv(op, kb, form.data, constants, quantize_f32)]

        def bind(folded: FoldedZeroPoint | None) -> Finish:
            if folded is None:
                return requantize.bind(kb)
            return requantize.bind(kb, folded.sum_bound, folded.sum_range)

        return [_integer_conv(op, kb, (0, 3, 2, 5, 8), requantize.output_type, bind, self.channel_block, self.word_taps, self.weight_cache, self.layer_bound, self.mve, self.kernel_scratch)]


# ---------------------------------------------------------------------------------------------
# QLinearAdd: the element-wise sum of two int8 tensors, requantized
# ---------------------------------------------------------------------------------------------


def common_shift_multipliers(multipliers: Sequence[float]) -> tuple[list[int], int]:
    """Integers m_i and one shift with m_i · 2^-shift ≈ M_i, the largest m_i below 2^31."""
    exponent = max(math.frexp(m)[1] for m in multipliers)
    shift = min(max(31 - exponent, 0), 62)
    return [round(m * 2.0**shift) for m in multipliers], shift


def narrow_sum_multipliers(multipliers: Sequence[int], shift: int, spans: Sequence[int]) -> tuple[list[int], int] | None:
    """`multipliers` and `shift` of an exact requantized sum, (Σ x_i·m_i + 2^(s-1)) >> s, with
    their common trailing zero bits t (< s) dropped, (Σ x_i·(m_i >> t) + 2^(s-t-1)) >> (s - t):
    the same value, floored the same way; None unless that sum stays within int32 for every
    |x_i| ≤ spans[i]. A float32 ratio of scales has 24 significant bits, so its Q31 multiplier
    ends in about 7 zero bits and two int8 inputs' sum fits: one 32-bit multiply-accumulate per
    input where the int64 form took a long multiply and a 64-bit shift (ResNet-8's residual
    Adds on the Cortex-M4)."""
    zeros = min(((abs(m) & -abs(m)).bit_length() - 1 for m in multipliers if m), default=0)
    dropped = min(zeros, shift - 1)
    if dropped < 0:
        return None
    narrow = [m >> dropped for m in multipliers]  # exact: each m is a multiple of 2^dropped
    bound = ((1 << (shift - dropped)) >> 1) + sum(abs(m) * span for m, span in zip(narrow, spans))
    return (narrow, shift - dropped) if bound < 2**31 else None


SPLIT_BITS = 16
"""Where `split_sum_multipliers` splits a multiplier: its low part below 2^16, so 255 times it
and a few more such products stay far inside int32."""


def split_sum_multipliers(multipliers: Sequence[int], shift: int, spans: Sequence[int]) -> tuple[list[int], list[int]] | None:
    """`multipliers` of an exact requantized sum (Σ x_i·m_i + 2^(s-1)) >> s split at bit
    `SPLIT_BITS` (b), m_i = h_i·2^b + l_i with 0 ≤ l_i < 2^b: the sum is H·2^b + L, where
    H = Σ x_i·h_i and L = Σ x_i·l_i + 2^(s-1), and its value is (H + (L >> b)) >> (s - b),
    floored the same way (2^b divides H·2^b, and flooring twice by 2^b then 2^(s-b) is
    flooring by 2^s). (highs, lows), or None unless s ≥ b and L and H + (L >> b) stay within
    int32 for every |x_i| ≤ spans[i]: two 32-bit multiply-accumulates per input, where int64
    products of int32 inputs took, on the Cortex-M4, a long multiply each (LLVM's UMULL, MLA
    and a sign fix for a product by a constant), a 64-bit add and a 64-bit shift: ResNet-8's
    second and third residual Adds, 27-30 cycles per element."""
    if shift < SPLIT_BITS:
        return None
    highs = [m >> SPLIT_BITS for m in multipliers]
    lows = [m - (h << SPLIT_BITS) for m, h in zip(multipliers, highs)]
    low_bound = ((1 << shift) >> 1) + sum(low * span for low, span in zip(lows, spans))
    high_bound = sum(abs(h) * span for h, span in zip(highs, spans)) + (low_bound >> SPLIT_BITS) + 1
    return (highs, lows) if low_bound < 2**31 and high_bound < 2**31 else None


class QLinearAddLowering(OnnxLowering):
    """`QLinearAdd` (com.microsoft's, in the onnx dialect), integer only:
    C = clamp(((A - za)·m_a + (B - zb)·m_b + 2^(s-1)) >> s + zc) in int64, with
    m_a · 2^-s ≈ A_scale / C_scale and m_b alike (constant per-tensor scales); A and B broadcast
    as views."""

    op_names = frozenset({"onnx.QLinearAdd"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        shape = tensor_shape(op.results[0])
        out_type = tensor_element_type(op.results[0])
        _check_quantized(out_type)
        a, b = (layout_of(op.operands[i]).broadcast_to(shape) for i in (0, 3))
        a_s, a_zp, b_s, b_zp, c_s, c_zp = (quant_param(op.operands[i], shape) for i in (1, 2, 4, 5, 6, 7))
        scales = [float(p.constant_values().reshape(-1)[0]) for p in (a_s, b_s, c_s)]
        mode = rounding_mode(op)
        # A Sub (B's scale negated) keeps the exact form; so does a 16-bit Add in TFLite's modes
        # (its int8 Add's 2^20 left shift is for 8-bit codes; TFLite's int16 Add is another).
        tflite_wide = mode.startswith("tflite") and out_type.width.data > 8
        if mode != "exact" and min(scales) > 0 and not tflite_wide:
            zero_points = [int(p.constant_values().reshape(-1)[0]) for p in (a_zp, b_zp, c_zp)]
            y = kb.alloc(result_name(op), shape, out_type)
            if mode == "onnxruntime" and FLOAT_SUM in op.attributes:
                float_add(kb, quantize_f32, a, b, y, scales, zero_points, out_type)  # 16-bit: onnxruntime's float Add
            elif mode == "onnxruntime":
                _onnxruntime_add(kb, a, b, y, scales, zero_points, out_type)
            else:
                _tflite_add(kb, a, b, y, scales, zero_points, out_type, mode == "tflite-single")
            return [y]
        scale_type = numpy_dtype(promote(a_s.element_type, c_s.element_type))
        if out_type.width.data > 8:
            scale_type = np.float64  # as `_bind_fixed_point`: a float32 ratio is 2^-8 of an int16 step
        out_scale = c_s.constant_values().reshape(-1)[0].astype(scale_type)
        multipliers = [float(p.constant_values().reshape(-1)[0].astype(scale_type) / out_scale) for p in (a_s, b_s)]
        (m_a, m_b), shift = common_shift_multipliers(multipliers)
        # In int32 where the sum fits (`narrow_sum_multipliers`; constant zero points bound it).
        # Else, with the shifted sum within int32, the centered inputs and the result are int32
        # and only the products and their sum int64: each product one SMULL/SMLAL of two
        # 32-bit values (the inputs centered in int64 took a long multiply and a multiply-add
        # each, and the clamp 64-bit compares).
        centered_type = sum_type = result_type = I64
        split = None
        if all(p.is_per_tensor and constant_tensor(p.layout) is not None for p in (a_zp, b_zp)):
            spans = []
            for layout, p in ((a, a_zp), (b, b_zp)):
                zero_point = int(p.constant_values().reshape(-1)[0])
                spans.append(max(highest_value(layout.element_type) - zero_point, zero_point - lowest_value(layout.element_type)))
            narrow = narrow_sum_multipliers([m_a, m_b], shift, spans)
            if narrow is not None:
                centered_type = sum_type = result_type = I32
                (m_a, m_b), shift = narrow
            elif (((1 << shift) >> 1) + abs(m_a) * spans[0] + abs(m_b) * spans[1]) >> shift < 2**30 and max(abs(m_a), abs(m_b)) < 2**31:
                centered_type = result_type = I32
                # Better still, each multiplier split in two halves whose products and sums
                # stay in int32 (`split_sum_multipliers`); else the products and their sum are
                # int64.
                split = split_sum_multipliers([m_a, m_b], shift, spans)
        terms = [(a, a_zp.reader(kb, centered_type), kb.const(m_a, sum_type)), (b, b_zp.reader(kb, centered_type), kb.const(m_b, sum_type))]
        read_c_zp = c_zp.reader(kb, result_type)
        low, high = (kb.const(v, result_type) for v in (lowest_value(out_type), highest_value(out_type)))

        y = kb.alloc(result_name(op), shape, out_type)
        if split is not None:
            highs, lows = ([kb.const(v, I32) for v in part] for part in split)
            start = kb.const((1 << shift) >> 1, I32)
            bits, rest = kb.const(SPLIT_BITS, I32), kb.const(shift - SPLIT_BITS, I32)
            with kb.loop_nest(shape) as ivs:
                upper, lower = None, start
                for (layout, zero_point, _), h, l in zip(terms, highs, lows):
                    centered = kb.alu("sub", kb.cast(kb.load(layout, ivs), I32), zero_point(ivs))
                    product = kb.alu("mul", centered, h)
                    upper = product if upper is None else kb.alu("add", upper, product)
                    lower = kb.alu("add", lower, kb.alu("mul", centered, l))
                assert upper is not None
                total = kb.alu("add", upper, kb.alu("shr", lower, bits))
                value = kb.alu("add", kb.alu("shr", total, rest), read_c_zp(ivs))
                kb.store(kb.cast(kb.alu("min", kb.alu("max", value, low), high), out_type), y, ivs)
            return [y]
        half, by = kb.const((1 << shift) >> 1, sum_type), kb.const(shift, sum_type)
        with kb.loop_nest(shape) as ivs:
            total = half
            for layout, zero_point, multiplier in terms:
                centered = kb.alu("sub", kb.cast(kb.load(layout, ivs), centered_type), zero_point(ivs))
                total = kb.alu("add", total, kb.alu("mul", kb.cast(centered, sum_type), multiplier))
            value = kb.alu("add", kb.cast(kb.alu("shr", total, by), result_type), read_c_zp(ivs))
            kb.store(kb.cast(kb.alu("min", kb.alu("max", value, low), high), out_type), y, ivs)
        return [y]


def onnxruntime_add_constants(scales: Sequence[float], zero_points: Sequence[int]) -> tuple[np.float32, np.float32, np.float32]:
    """onnxruntime's QLinearAdd constants, in float32: r_a = a_scale / c_scale, r_b =
    b_scale / c_scale and the fixed part zp_c - (r_a · zp_a + r_b · zp_b), each step rounded."""
    f32 = np.float32
    a_scale, b_scale, c_scale = (f32(v) for v in scales)
    zp_a, zp_b, zp_c = (f32(v) for v in zero_points)
    r_a, r_b = a_scale / c_scale, b_scale / c_scale
    return r_a, r_b, f32(zp_c - f32(f32(r_a * zp_a) + f32(r_b * zp_b)))


def _onnxruntime_add(
    kb: KernelBuilder, a: Layout, b: Layout, y: Layout, scales: Sequence[float], zero_points: Sequence[int], out_type: Attribute
) -> None:
    """QLinearAdd as onnxruntime's x86-64 AVX2 kernel computes it, in float32: with the fixed
    part f = zp_c - (r_a · zp_a + r_b · zp_b) (`onnxruntime_add_constants`), y =
    saturate(rint(fma(a, r_a, fma(b, r_b, f)))), each fma rounded once (`uop.fma`: the
    core's VFMA, or Zig's exact soft fma). Where one input is the same along the innermost
    axis (a bias per channel), onnxruntime's broadcast hands the kernel that input as a scalar:
    f + (its value · its ratio), multiplied and added apart, then one fma with the other."""
    r_a, r_b, fixed = onnxruntime_add_constants(scales, zero_points)
    f32 = Float32Type()
    ratio_a, ratio_b, fixed_part = (kb.const(float(v), f32) for v in (r_a, r_b, fixed))
    scalar_a, scalar_b = (not layout.strides[-1] and y.shape[-1] > 1 for layout in (a, b)) if y.rank else (False, False)
    with kb.loop_nest(y.shape) as ivs:
        va, vb = (kb.cast(kb.load(layout, ivs), f32) for layout in (a, b))
        if scalar_a and not scalar_b:
            value = _fma(kb, vb, ratio_b, kb.alu("add", fixed_part, kb.alu("mul", va, ratio_a)))
        elif scalar_b and not scalar_a:
            value = _fma(kb, va, ratio_a, kb.alu("add", fixed_part, kb.alu("mul", vb, ratio_b)))
        else:
            value = _fma(kb, va, ratio_a, _fma(kb, vb, ratio_b, fixed_part))
        kb.store(quantize_f32(kb, value, None, out_type), y, ivs)


def _fma(kb: KernelBuilder, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
    return kb.insert(uop.FmaOp(a, b, c)).result


TFLITE_ADD_LEFT_SHIFT = 20
"""TFLite's int8 Add shifts its centered inputs left by 20 bits before rescaling them."""


def tflite_add_constants(scales: Sequence[float]) -> list[tuple[int, int]]:
    """TFLite's int8 Add multipliers, (q, e) for input A, input B and the output
    (`tflite_multiplier`): A's and B's scales over twice the larger, and that over
    2^20 · c_scale, in double precision."""
    a_scale, b_scale, c_scale = (float(np.float32(v)) for v in scales)
    twice_max = 2 * max(a_scale, b_scale)
    return [
        tflite_multiplier(a_scale / twice_max),
        tflite_multiplier(b_scale / twice_max),
        tflite_multiplier(twice_max / ((1 << TFLITE_ADD_LEFT_SHIFT) * c_scale)),
    ]


def _tflite_add(
    kb: KernelBuilder, a: Layout, b: Layout, y: Layout, scales: Sequence[float], zero_points: Sequence[int],
    out_type: Attribute, single: bool,
) -> None:
    """QLinearAdd as TFLite's reference int8 Add: each input centered and shifted left by 20,
    rescaled by its multiplier (`tflite_add_constants`), the sum rescaled by the output's
    (`TfliteScale` each); plus zp_c, saturated."""
    (q_a, e_a), (q_b, e_b), (q_c, e_c) = tflite_add_constants(scales)
    if max(e_a, e_b, e_c) > 0:
        raise NotImplementedError("a TFLite Add multiplier of 1 or more")
    zp_a, zp_b, zp_c = zero_points
    scale = TfliteScale(kb, single, [e_a, e_b, e_c])
    wide = {v: kb.const(v, I64) for v in {zp_a, zp_b, 1 << TFLITE_ADD_LEFT_SHIFT, q_a, q_b, q_c}}
    narrow = {v: kb.const(v, I32) for v in {-e_a, -e_b, -e_c, zp_c}}
    nudge = {e: kb.const(int(TfliteScale.nudges([e])[0]), I64) for e in {e_a, e_b, e_c}} if scale.nudge_varies else {}
    low, high = (kb.const(v, I32) for v in (lowest_value(out_type), highest_value(out_type)))
    with kb.loop_nest(y.shape) as ivs:
        terms = []
        for layout, zp, q, e in ((a, zp_a, q_a, e_a), (b, zp_b, q_b, e_b)):
            centered = kb.alu("sub", kb.cast(kb.load(layout, ivs), I64), wide[zp])
            shifted = kb.alu("mul", centered, wide[1 << TFLITE_ADD_LEFT_SHIFT])
            terms.append(scale(shifted, wide[q], narrow[-e], nudge.get(e)))
        total = kb.cast(kb.alu("add", *terms), I64)
        value = kb.alu("add", scale(total, wide[q_c], narrow[-e_c], nudge.get(e_c)), narrow[zp_c])
        kb.store(kb.cast(kb.alu("min", kb.alu("max", value, low), high), out_type), y, ivs)


class TfliteScale:
    """TFLite's MultiplyByQuantizedMultiplier of an int32 value x (an int64 SSA value) by (q, e),
    M ≈ q · 2^(e-31), for the exponents `exponents` it will be called with (they choose the form);
    its constants made at construction (ahead of the loops). The product x · q is one 32×32→64
    multiply and a constant shift by 31; what follows is int32 arithmetic (h fits: |x · q| <
    2^62), so a 32-bit core runs no variable 64-bit shift:

    * double rounding (TFLite's default build, TFLite Micro's): x shifted left by max(e, 0) in
      int32 (wrapping; only where some e > 0), h = (x · q + 2^30) >> 31 (the saturating rounding
      doubling high multiply: C's truncating division of x · q + nudge by 2^31 is this floor;
      q < 2^31 never saturates), then the rounding divide by 2^r, r = max(-e, 0):
      (h + 2^(r-1) - [h < 0 and r > 0]) >> r, ties away from zero;
    * `single` (TFLITE_SINGLE_ROUNDING builds): (x · q + 2^(30-e)) >> (31 - e), ties up; for
      e ≤ 0 that is ((x · q + [r = 0] · 2^30) >> 31 + 2^(r-1)) >> r (the low 31 bits of x · q
      cannot carry past a multiple of 2^r), for e > 0 (M ≥ 1) the 64-bit shift itself.

    Call it with x, q (int64) and r = max(-e, 0) (int32) read for the element's channel, and for
    `single` the per-channel [r = 0] · 2^30 (`nudge`, int64) where the exponents mix r = 0 and
    r > 0, and e (int64) where some e > 0. It returns the int32 result."""

    def __init__(self, kb: KernelBuilder, single: bool, exponents: Sequence[int]):
        exponents = [int(e) for e in exponents]
        self.kb, self.single = kb, single
        self.left = any(e > 0 for e in exponents)
        self.wide = single and self.left  # the 64-bit variable shift
        rights = {max(-e, 0) for e in exponents}
        self.nudge_varies = single and len({r == 0 for r in rights}) > 1
        self.constant_nudge = (not single or rights == {0}) and not self.wide
        self.one64, self.nothing64, self.by31, self.nudge = (kb.const(v, I64) for v in (1, 0, 31, 1 << 30))
        self.one, self.nothing = kb.const(1, I32), kb.const(0, I32)

    @staticmethod
    def nudges(exponents: np.ndarray) -> np.ndarray:
        """`single`'s per-channel nudge: 2^30 where r = 0, else 0."""
        return np.where(np.asarray(exponents) >= 0, 1 << 30, 0).astype(np.int64)

    def __call__(self, x: SSAValue, q: SSAValue, r: SSAValue, nudge: SSAValue | None = None, e: SSAValue | None = None) -> SSAValue:
        kb, one, nothing = self.kb, self.one, self.nothing
        if self.wide:
            assert e is not None
            by = kb.alu("sub", self.by31, e)
            half = kb.alu("shl", self.one64, kb.alu("sub", by, self.one64))
            return kb.cast(kb.alu("shr", kb.alu("add", kb.alu("mul", x, q), half), by), I32)
        if self.left and not self.single:
            assert e is not None
            up = kb.alu("max", e, self.nothing64)
            x = kb.cast(kb.cast(kb.alu("shl", x, up), I32), I64)  # int32, wrapping
        product = kb.alu("mul", x, q)
        if self.constant_nudge:
            product = kb.alu("add", product, self.nudge)
        elif self.nudge_varies:
            assert nudge is not None
            product = kb.alu("add", product, nudge)
        h = kb.cast(kb.alu("shr", product, self.by31), I32)
        half = kb.alu("shr", kb.alu("shl", one, r), one)
        if self.single:
            return kb.alu("shr", kb.alu("add", h, half), r)
        # Less 1 for a negative h when r > 0 (half ≥ 1): ties go away from zero.
        below = kb.alu("min", half, kb.where(kb.alu("cmplt", h, nothing), one, nothing))
        return kb.alu("shr", kb.alu("sub", kb.alu("add", h, half), below), r)


SOFTMAX_EXP_BITS = 20
"""The exp table of QLinearSoftmax holds round(exp(-j · x_scale) · 2^20): its largest entry (j = 0)
is 2^20, so the row sum S ≥ 2^20 and each quotient's error stays below n / 2^21 of a unit."""
SOFTMAX_SCALE_BITS = 16
"""1 / y_scale as a fixed-point integer with 16 fraction bits."""


def softmax_fits_int32(n: int, reciprocal: int) -> bool:
    """Whether a QLinearSoftmax row of `n` exps, each at most 2^`SOFTMAX_EXP_BITS`, and the
    output's fixed-point reciprocal `reciprocal` keep the row sum S and the numerator
    t = (e · R + S · 2^15) >> 16 of its quotient within int32."""
    limit = 2**31 - 1
    total = n << SOFTMAX_EXP_BITS
    numerator = ((reciprocal << SOFTMAX_EXP_BITS) + (total << (SOFTMAX_SCALE_BITS - 1))) >> SOFTMAX_SCALE_BITS
    return total <= limit and numerator <= limit


class QLinearSoftmaxLowering(OnnxLowering):
    """`QLinearSoftmax` (com.microsoft's, in the onnx dialect), integer only, per row along
    `axis`: m = max x; e_k = E[m - x_k] from a 256-entry int32 table E[j] = round(exp(-j ·
    x_scale) · 2^20); S = Σ e_k in int64; y_k = clamp(round(e_k · R / (S · 2^16)) + y_zp) with
    R = round(2^16 / y_scale) (the division rounds half up). Constant per-tensor scales;
    opset-13 semantics (along `axis` only). A 16-bit x (16x8 models) has distances up to 65535:
    e = (H[d >> 8] · E[d & 255] + 2^19) >> 20 from two 256-entry tables, H[i] = E's value at
    256·i (exp(a + b) = exp(a) · exp(b)), in int64; its error is under 1.5 · 2^-20 of the row's
    largest term, a tenth of an int16 output step.

    Where the row's sums fit (`softmax_fits_int32`: S < 2^31 and the quotient's numerator
    below), the division is an int32 one: round(e · R / (S · 2^16)) = floor(t / S) with
    t = (e · R + S · 2^15) >> 16 (nested floor divisions of non-negative integers), e · R
    still in int64. The same integers, without the 64-bit division (a library call on 32-bit
    cores: about 540 B of flash and a hundred cycles per output on the Cortex-M4)."""

    op_names = frozenset({"onnx.QLinearSoftmax"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        if get_attr(op, "opset") < 13:
            raise NotImplementedError("QLinearSoftmax with opset < 13 semantics")
        shape = tensor_shape(op.results[0])
        rank, out_type = len(shape), tensor_element_type(op.results[0])
        axis = get_attr(op, "axis") % rank
        x_s, y_s, y_zp = (quant_param(op.operands[i], shape) for i in (1, 3, 4))
        if not (x_s.is_per_tensor and y_s.is_per_tensor):
            raise NotImplementedError("QLinearSoftmax needs per-tensor scales")
        x_scale = float(x_s.constant_values().reshape(-1)[0])
        y_scale = float(y_s.constant_values().reshape(-1)[0])
        exps = np.round(np.exp(-np.arange(256, dtype=np.float64) * x_scale) * 2.0**SOFTMAX_EXP_BITS)
        table = kb.constant(f"{result_name(op)}_exp", exps.astype(np.int32), I32)
        in_bits = tensor_element_type(op.operands[0]).width.data
        coarse = None
        if in_bits > 8:
            coarse_exps = np.round(np.exp(-np.arange(256, dtype=np.float64) * 256 * x_scale) * 2.0**SOFTMAX_EXP_BITS)
            coarse = kb.constant(f"{result_name(op)}_exp_coarse", coarse_exps.astype(np.int32), I32)
            eight, low_byte = kb.const(8, I32), kb.const(255, I32)
            half_step, exp_bits = kb.const(1 << (SOFTMAX_EXP_BITS - 1), I64), kb.const(SOFTMAX_EXP_BITS, I64)
        perm = [d for d in range(rank) if d != axis] + [axis]
        x_rows = layout_of(op.operands[0]).permute(perm)
        y = kb.alloc(result_name(op), shape, out_type)
        y_rows, n = y.permute(perm), shape[axis]
        r = round(2.0**SOFTMAX_SCALE_BITS / y_scale)
        reciprocal, by = kb.const(r, I64), kb.const(SOFTMAX_SCALE_BITS, I64)
        wide = I32 if softmax_fits_int32(n, r) else I64
        read_zp = y_zp.reader(kb, wide)
        low, high = (kb.const(v, wide) for v in (lowest_value(out_type), highest_value(out_type)))

        with kb.loop_nest(x_rows.shape[:-1]) as outer:
            maximum = kb.define_acc(0, I32)
            kb.acc_set(maximum, kb.cast(kb.load(x_rows, [*outer, kb.index(0)]), I32))
            with kb.loop(n, start=1) as k:
                kb.acc_set(maximum, kb.alu("max", kb.acc_get(maximum), kb.cast(kb.load(x_rows, [*outer, k]), I32)))

            def exp(k: SSAValue) -> SSAValue:
                distance = kb.alu("sub", kb.acc_get(maximum), kb.cast(kb.load(x_rows, [*outer, k]), I32))
                if coarse is None:
                    return kb.load(table, [kb.cast(distance, IndexType())])
                high = kb.load(coarse, [kb.cast(kb.alu("shr", distance, eight), IndexType())])
                low = kb.load(table, [kb.cast(kb.alu("and", distance, low_byte), IndexType())])
                product = kb.alu("mul", kb.cast(high, I64), kb.cast(low, I64))
                return kb.alu("shr", kb.alu("add", product, half_step), exp_bits)

            total = kb.define_acc(0, wide)
            with kb.loop(n) as k:
                kb.acc_set(total, kb.alu("add", kb.acc_get(total), kb.cast(exp(k), wide)))
            with kb.loop(n) as k:
                if wide == I32:
                    half = kb.alu("shl", kb.cast(kb.acc_get(total), I64), kb.const(SOFTMAX_SCALE_BITS - 1, I64))
                    numerator = kb.alu("shr", kb.alu("add", kb.alu("mul", kb.cast(exp(k), I64), reciprocal), half), by)
                    quotient = kb.alu("div", kb.cast(numerator, I32), kb.acc_get(total))
                else:
                    denominator = kb.alu("shl", kb.acc_get(total), by)
                    numerator = kb.alu("add", kb.alu("mul", kb.cast(exp(k), I64), reciprocal), kb.alu("shr", denominator, kb.const(1, I64)))
                    quotient = kb.alu("div", numerator, denominator)
                value = kb.alu("add", quotient, read_zp([*outer, k]))
                kb.store(kb.cast(kb.alu("min", kb.alu("max", value, low), high), out_type), y_rows, [*outer, k])
        return [y]


class QLinearAveragePoolLowering(OnnxLowering):
    """`QLinearAveragePool` (com.microsoft's, in the onnx dialect), integer only, for the pools
    whose divisor varies (uncounted padding, ceil_mode): per output position the centered sum
    S = Σ (x - x_zp) and the count c of the taps counted, both in int32; then y =
    clamp(round_half_even(S · x_scale / (y_scale · c)) + y_zp) in exact arithmetic, as
    QuantizeLinear after the float pool rounds it: the multiply, add and shift of
    `zant.analysis.rounding` with one shift for every count and the multiplier, addend and tie
    threshold read from small tables indexed by c (no division). Where no such form exists
    (scale ratios far from 1), a 64-bit division of S · m by c · 2^s with m · 2^-s ≈
    x_scale / y_scale, half to even. Constant per-tensor scales and x zero point; NCHW only."""

    op_names = frozenset({"onnx.QLinearAveragePool"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        if get_attr(op, "channels_last"):
            raise NotImplementedError("QLinearAveragePool with channels_last = 1")
        x_shape, out_shape = tensor_shape(op.operands[0]), tensor_shape(op.results[0])
        out_type = tensor_element_type(op.results[0])
        kernel = get_attr(op, "kernel_shape")
        windows = sliding_windows(op, x_shape[2:], kernel, out_shape[2:], bool(get_attr(op, "ceil_mode")))
        x_s, x_zp = (quant_param(op.operands[i], x_shape) for i in (1, 2))
        y_s, y_zp = (quant_param(op.operands[i], out_shape) for i in (3, 4))
        if not all(q.is_per_tensor for q in (x_s, x_zp, y_s)):
            raise NotImplementedError("QLinearAveragePool needs per-tensor scales and zero points")
        x_scale, y_scale = (float(p.constant_values().reshape(-1)[0]) for p in (x_s, y_s))
        zero = int(x_zp.constant_values().reshape(-1)[0])
        x = layout_of(op.operands[0])
        below, above = lowest_value(x.element_type) - zero, highest_value(x.element_type) - zero
        taps = math.prod(kernel)
        table = None
        if x_scale > 0 and y_scale > 0 and math.isfinite(x_scale / y_scale):
            ratio = Fraction(x_scale) / Fraction(y_scale)
            table = exact_roundings([(ratio / c, c * below, c * above) for c in range(1, taps + 1)])
        if get_attr(op, "count_include_pad"):
            low, high = [-w.pad_begin for w in windows], [w.in_size + w.pad_end for w in windows]
        else:
            low, high = [0] * len(windows), [w.in_size for w in windows]
        x_zero, one, nothing = kb.const(zero, I32), kb.const(1, I32), kb.const(0, I32)
        if table is not None:
            wide = I32 if table[0].bits == 32 else I64
            ties = any(r.tie_below for r in table)
            columns = {
                name: kb.constant(f"{result_name(op)}_{name}", np.array([getattr(r, name) for r in table]), wide)
                for name in ("multiplier", "addend", "tie_below")
                if name != "tie_below" or ties
            }
            step = half_even_step(kb, wide, table[0].shift, ties)
        else:
            wide = I64
            scale_type = numpy_dtype(promote(x_s.element_type, y_s.element_type))
            ratio32 = x_s.constant_values().reshape(-1)[0].astype(scale_type) / y_s.constant_values().reshape(-1)[0].astype(scale_type)
            divisor = common_shift_multipliers([float(ratio32)])
        read_y_zp = y_zp.reader(kb, wide)
        low_out, high_out = (kb.const(v, wide) for v in (lowest_value(out_type), highest_value(out_type)))

        y = kb.alloc(result_name(op), out_shape, out_type)
        with kb.loop_nest(out_shape) as (n, c, *out_ivs):
            total, count = kb.define_acc(0, I32), kb.define_acc(0, I32)
            with kb.loop_nest(kernel) as tap_ivs:
                positions = tap_positions(kb, windows, out_ivs, tap_ivs)
                value, _ = load_window(kb, x, [n, c], windows, positions, zero)  # outside: 0 once centered
                kb.acc_set(total, kb.alu("add", kb.acc_get(total), kb.alu("sub", kb.cast(value, I32), x_zero)))
                counted = within(kb, windows, positions, low, high)
                kb.acc_set(count, kb.alu("add", kb.acc_get(count), one if counted is None else kb.where(counted, one, nothing)))
            if table is not None:
                # The count's row of the tables (count 1 at index 0).
                row = [kb.cast(kb.alu("sub", kb.acc_get(count), one), IndexType())]
                part = {name: kb.load(layout, row) for name, layout in columns.items()}
                value = step(kb.cast(kb.acc_get(total), wide), part["multiplier"], part["addend"], part.get("tie_below"))
            else:
                value = _divided_half_even(kb, kb.acc_get(total), kb.acc_get(count), divisor)
            value = kb.alu("add", value, read_y_zp([n, c, *out_ivs]))
            kb.store(kb.cast(kb.alu("min", kb.alu("max", value, low_out), high_out), out_type), y, [n, c, *out_ivs])
        return [y]


def _divided_half_even(kb: KernelBuilder, total: SSAValue, count: SSAValue, divisor: tuple[list[int], int]) -> SSAValue:
    """round_half_even(total · m / (count · 2^s)) in int64 for `divisor` = ([m], s) with
    m · 2^-s ≈ x_scale / y_scale: QLinearAveragePool's form where no exact table exists."""
    (multiplier,), shift = divisor
    none = kb.const(0, I64)
    numerator = kb.alu("mul", kb.cast(total, I64), kb.const(multiplier, I64))
    denominator = kb.alu("shl", kb.cast(count, I64), kb.const(shift, I64))
    negative = kb.alu("cmplt", numerator, none)
    magnitude = kb.where(negative, kb.alu("sub", none, numerator), numerator)
    quotient = kb.alu("div", magnitude, denominator)
    twice_remainder = kb.alu("shl", kb.alu("sub", magnitude, kb.alu("mul", quotient, denominator)), kb.const(1, I64))
    # Half to even, as QuantizeLinear rounds: up past half, and at half when odd.
    odd = kb.alu("cmpne", kb.alu("and", quotient, kb.const(1, I64)), none)
    up = kb.alu("or", kb.alu("cmplt", denominator, twice_remainder), kb.alu("and", kb.alu("cmpeq", twice_remainder, denominator), odd))
    rounded = kb.alu("add", quotient, kb.where(up, kb.const(1, I64), none))
    return kb.where(negative, kb.alu("sub", none, rounded), rounded)


class LookupTableLowering(OnnxLowering):
    """`LookupTable` (Zant's, in the onnx dialect): Y[i] = Table[X[i] - lowest(X)], a gather
    from the constant table (the index X + 128 for int8, X for uint8)."""

    op_names = frozenset({"onnx.LookupTable"})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        shape = tensor_shape(op.results[0])
        x, table = layout_of(op.operands[0]), layout_of(op.operands[1])
        offset = kb.const(-lowest_value(x.element_type), I32)
        y = kb.alloc(result_name(op), shape, tensor_element_type(op.results[0]))
        with kb.loop_nest(shape) as ivs:
            index = kb.alu("add", kb.cast(kb.load(x, ivs), I32), offset)
            kb.store(kb.load(table, [kb.cast(index, IndexType())]), y, ivs)
        return [y]


def _optional_attr(op: Operation, name: str):
    """An attribute that only later opsets define (None when the op's schema has none)."""
    try:
        return get_attr(op, name)
    except KeyError:
        return None


PATTERNS = (
    QuantizeLinearLowering(),
    DequantizeLinearLowering(),
    DynamicQuantizeLinearLowering(),
    MatMulIntegerLowering(),
    ConvIntegerLowering(),
    QLinearMatMulLowering(),
    QLinearConvLowering(),
    QLinearAddLowering(),
    LookupTableLowering(),
    QLinearSoftmaxLowering(),
    QLinearAveragePoolLowering(),
)

__all__ = [
    "PATTERNS",
    "QuantParam",
    "Requantization",
    "common_shift_multipliers",
    "fixed_point_multipliers",
    "promote",
    "quant_param",
    "rounded_quotient",
    "TfliteScale",
    "tflite_multiplier",
    "tflite_multipliers",
]
