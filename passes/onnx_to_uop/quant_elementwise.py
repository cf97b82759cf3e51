"""Integer-only element-wise quantized ops (com.microsoft's, in the onnx dialect), which
`fold-qdq` makes so quantized models stay in integers:

* `QLinearMul`: C = clamp(((A - za)·(B - zb)·m0 + 2^(s-1)) >> s + zc), m0 · 2^-s ≈
  A_scale · B_scale / C_scale (a Q31 multiplier, `fixed_point_multipliers`);
* `QLinearLeakyRelu`: Y = clamp(((X - zx)·m + 2^(s-1)) >> s + zy) with m ≈ X_scale / Y_scale
  · 2^s where X ≥ zx and m ≈ alpha · X_scale / Y_scale · 2^s elsewhere (one shift for both);
  alpha = 1 is a requantization from X's parameters to Y's, any rank.

All in int64, rounded half up; the scales are constant and per tensor; A and B broadcast as
views. No float is left in the loops. In `requant-rounding`'s TFLite modes QLinearMul is
TFLite's Mul instead (`_tflite_mul`), in its onnxruntime mode onnxruntime's (`_onnxruntime_mul`).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import Float32Type, IntegerType
from xdsl.ir import Operation

from zant.dialects.onnx import QLinearLeakyReluOp, QLinearMulOp, get_attr
from zant.dialects.onnx_attributes import rounding_mode
from zant.ir.types import numpy_dtype
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    highest_value,
    layout_of,
    lowest_value,
    tensor_element_type,
    tensor_shape,
)
from zant.passes.onnx_to_uop.quant import (
    TfliteScale,
    common_shift_multipliers,
    fixed_point_multipliers,
    promote,
    quant_param,
    quantize_f32,
    tflite_multiplier,
)

I32 = IntegerType(32)
I64 = IntegerType(64)


def _scalar(param, scale_type) -> np.ndarray:
    """A constant per-tensor scale as a value of `scale_type` (NotImplementedError otherwise)."""
    if not param.is_per_tensor:
        raise NotImplementedError("integer element-wise ops need per-tensor scales")
    return param.constant_values().reshape(-1)[0].astype(scale_type)


class QLinearMulLowering(OnnxLowering):
    """`QLinearMul`, integer only (see the module docstring)."""

    op_names = frozenset({QLinearMulOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        shape = tensor_shape(op.results[0])
        out_type = tensor_element_type(op.results[0])
        a, b = (layout_of(op.operands[i]).broadcast_to(shape) for i in (0, 3))
        a_s, a_zp, b_s, b_zp, c_s, c_zp = (quant_param(op.operands[i], shape) for i in (1, 2, 4, 5, 6, 7))
        mode = rounding_mode(op)
        if mode in ("tflite", "tflite-single"):
            return [_tflite_mul(kb, op, a, b, (a_s, a_zp, b_s, b_zp, c_s, c_zp), shape, out_type, mode == "tflite-single")]
        if mode == "onnxruntime":
            return [_onnxruntime_mul(kb, op, a, b, (a_s, a_zp, b_s, b_zp, c_s, c_zp), shape, out_type)]
        scale_type = numpy_dtype(promote(a_s.element_type, b_s.element_type, c_s.element_type))
        multiplier = _scalar(a_s, scale_type) * _scalar(b_s, scale_type) / _scalar(c_s, scale_type)
        m0, shift = (int(v[0]) for v in fixed_point_multipliers(np.array([multiplier])))
        read_a_zp, read_b_zp, read_c_zp = (p.reader(kb, I64) for p in (a_zp, b_zp, c_zp))
        m, half, by = kb.const(m0, I64), kb.const((1 << shift) >> 1, I64), kb.const(shift, I64)
        low, high = (kb.const(v, I64) for v in (lowest_value(out_type), highest_value(out_type)))

        y = kb.alloc(result_name(op), shape, out_type)
        with kb.loop_nest(shape) as ivs:
            x1 = kb.alu("sub", kb.cast(kb.load(a, ivs), I64), read_a_zp(ivs))
            x2 = kb.alu("sub", kb.cast(kb.load(b, ivs), I64), read_b_zp(ivs))
            product = kb.alu("add", kb.alu("mul", kb.alu("mul", x1, x2), m), half)
            value = kb.alu("add", kb.alu("shr", product, by), read_c_zp(ivs))
            kb.store(kb.cast(kb.alu("min", kb.alu("max", value, low), high), out_type), y, ivs)
        return [y]


def _onnxruntime_mul(kb: KernelBuilder, op: Operation, a: Layout, b: Layout, params, shape, out_type) -> Layout:
    """QLinearMul as onnxruntime's x86-64 kernel (MLAS, SSE2) computes it, in float32: r =
    a_scale · b_scale / c_scale, y = saturate(rint(float32(p) · r + float32(zc))) for the int32
    product p = (a - za)(b - zb), each step rounded (a multiply, then an add: no fma)."""
    a_s, a_zp, b_s, b_zp, c_s, c_zp = params
    f32 = np.float32
    ratio = f32(f32(_scalar(a_s, f32) * _scalar(b_s, f32)) / _scalar(c_s, f32))
    zero_c = f32(int(_scalar(c_zp, np.int64)))
    read_a_zp, read_b_zp = (p.reader(kb, I32) for p in (a_zp, b_zp))
    r, z = kb.const(float(ratio), Float32Type()), kb.const(float(zero_c), Float32Type())
    y = kb.alloc(result_name(op), shape, out_type)
    with kb.loop_nest(shape) as ivs:
        x1 = kb.alu("sub", kb.cast(kb.load(a, ivs), I32), read_a_zp(ivs))
        x2 = kb.alu("sub", kb.cast(kb.load(b, ivs), I32), read_b_zp(ivs))
        value = kb.alu("add", kb.alu("mul", kb.cast(kb.alu("mul", x1, x2), Float32Type()), r), z)
        kb.store(quantize_f32(kb, value, None, out_type), y, ivs)
    return y


def _tflite_mul(kb: KernelBuilder, op: Operation, a: Layout, b: Layout, params, shape, out_type, single: bool) -> Layout:
    """QLinearMul as TFLite's reference int8 Mul: (a - za)·(b - zb) times M = a_scale · b_scale /
    c_scale (double precision) by `TfliteScale`, plus zc, saturated (`requant-rounding`'s TFLite
    modes; the scales positive, as TFLite's are)."""
    a_s, a_zp, b_s, b_zp, c_s, c_zp = params
    scales = [float(_scalar(p, np.float32)) for p in (a_s, b_s, c_s)]
    if min(scales) <= 0:
        raise NotImplementedError("TFLite's Mul needs positive scales")
    q, e = tflite_multiplier(scales[0] * scales[1] / scales[2])
    if e > 31:
        raise NotImplementedError("a TFLite Mul multiplier of 2^31 or more")
    scale = TfliteScale(kb, single, [e])
    read_a_zp, read_b_zp = (p.reader(kb, I64) for p in (a_zp, b_zp))
    read_c_zp = c_zp.reader(kb, I32)
    multiplier, right = kb.const(q, I64), kb.const(max(-e, 0), I32)
    exponent = kb.const(e, I64) if scale.left else None
    low, high = (kb.const(v, I32) for v in (lowest_value(out_type), highest_value(out_type)))
    y = kb.alloc(result_name(op), shape, out_type)
    with kb.loop_nest(shape) as ivs:
        x1 = kb.alu("sub", kb.cast(kb.load(a, ivs), I64), read_a_zp(ivs))
        x2 = kb.alu("sub", kb.cast(kb.load(b, ivs), I64), read_b_zp(ivs))
        value = kb.alu("add", scale(kb.alu("mul", x1, x2), multiplier, right, None, exponent), read_c_zp(ivs))
        kb.store(kb.cast(kb.alu("min", kb.alu("max", value, low), high), out_type), y, ivs)
    return y


class QLinearLeakyReluLowering(OnnxLowering):
    """`QLinearLeakyRelu`, integer only (see the module docstring); alpha = 1 requantizes."""

    op_names = frozenset({QLinearLeakyReluOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        shape = tensor_shape(op.results[0])
        out_type = tensor_element_type(op.results[0])
        x = layout_of(op.operands[0])
        x_s, x_zp, y_s, y_zp = (quant_param(op.operands[i], shape) for i in (1, 2, 3, 4))
        scale_type = numpy_dtype(promote(x_s.element_type, y_s.element_type))
        ratio = _scalar(x_s, scale_type) / _scalar(y_s, scale_type)
        alpha = np.asarray(get_attr(op, "alpha"), dtype=scale_type)
        (m_pos, m_neg), shift = common_shift_multipliers([float(ratio), float(abs(alpha * ratio))])
        m_neg = -m_neg if alpha < 0 else m_neg
        read_x_zp, read_y_zp = (p.reader(kb, I64) for p in (x_zp, y_zp))
        positive, negative = kb.const(m_pos, I64), kb.const(m_neg, I64)
        zero, half, by = kb.const(0, I64), kb.const((1 << shift) >> 1, I64), kb.const(shift, I64)
        low, high = (kb.const(v, I64) for v in (lowest_value(out_type), highest_value(out_type)))

        y = kb.alloc(result_name(op), shape, out_type)
        with kb.loop_nest(shape) as ivs:
            centered = kb.alu("sub", kb.cast(kb.load(x, ivs), I64), read_x_zp(ivs))
            multiplier = positive if m_pos == m_neg else kb.where(kb.alu("cmplt", centered, zero), negative, positive)
            product = kb.alu("add", kb.alu("mul", centered, multiplier), half)
            value = kb.alu("add", kb.alu("shr", product, by), read_y_zp(ivs))
            kb.store(kb.cast(kb.alu("min", kb.alu("max", value, low), high), out_type), y, ivs)
        return [y]


PATTERNS = (QLinearMulLowering(), QLinearLeakyReluLowering())

__all__ = ["PATTERNS", "QLinearLeakyReluLowering", "QLinearMulLowering"]
