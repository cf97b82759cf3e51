"""Running an `onnx`-dialect function on NumPy inputs: the oracle of the passes before `onnx-to-uop`.

Each op of the graph function is evaluated on its own, in program order, by the ONNX reference
evaluator (`onnx.reference`) on a one-node model rebuilt from the op: its type and domain, the
module's opsets (`onnx.opset`, `onnx.ml_opset`), its attributes and its input types. The
evaluator is built once per such signature and cached.

The ops that no ONNX evaluator defines have NumPy implementations here (`ZANT_OPS`):
com.microsoft's QLinearAdd, QLinearMul, QLinearLeakyRelu and QLinearSoftmax (integer only) and
Zant's LookupTable. They, and the QLinearConv / QLinearMatMul `fold-qdq` marks `zant.fixed_point`,
requantize as the ONNX definition does (QuantizeLinear of the real value, rounded half to even),
computed exactly from the scales and never with the lowering's fixed-point arithmetic, which
`--check-each-pass` compares with them (an average pool's QLinearConv, marked
`zant.average_count`, by the exact x_scale / (y_scale · n)). QLinearSoftmax's is Zant's own
integer form (an exp table and one division). The other com.microsoft ops of a
QOperator model (QLinearSigmoid, QLinear(Global)AveragePool, QLinearConcat, QGemm, QLinearLeakyRelu
with alpha ≠ 1), which `fold-qoperator` rewrites before any lowering (QLinearAveragePool, whose
divisor varies, `fold-qdq` makes too: its lowering computes the same codes), run as onnxruntime defines
them: their `QLINEAR_DEFINITIONS` (DequantizeLinear → the float op → QuantizeLinear) on the ONNX
reference. An op none of these covers raises `OnnxUnsupported`.

    outputs = run_onnx_function(function, [x], onnx_opsets(module))   # flat, in return order
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np
from onnx import AttributeProto, helper, numpy_helper
from onnx.defs import OpSchema
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.traits import SymbolTable

from zant.dialects.onnx import ReturnOp as FunctionReturnOp
from zant.dialects.onnx import (
    FIXED_POINT,
    ML_DOMAIN,
    ML_OPSET,
    OPSET,
    QLINEAR_DEFINITIONS,
    CallOp,
    ConstantOp,
    LookupTableOp,
    OnnxOp,
    QGemmOp,
    QLinearAddOp,
    QLinearAveragePoolOp,
    QLinearConcatOp,
    QLinearConvOp,
    QLinearGlobalAveragePoolOp,
    QLinearLeakyReluOp,
    QLinearMatMulOp,
    QLinearMulOp,
    QLinearSigmoidOp,
    QLinearSoftmaxOp,
    average_count,
    get_attr,
    inputs,
    outputs,
)
from zant.analysis import mlas_float
from zant.dialects.onnx_attributes import FLOAT_SUM, rounding_mode
from zant.errors import ZantError
from zant.ir.resources import attr_to_array
from zant.ir.types import numpy_dtype


_SEGMENTS = ("operandSegmentSizes", "resultSegmentSizes")


class OnnxUnsupported(ZantError):
    """The reference cannot evaluate an op of the function (the message names it and why)."""


def onnx_opsets(module: ModuleOp) -> dict[str, int]:
    """The opsets an `onnx`-dialect module records (domain → version; "" the default domain)."""
    opsets = {}
    for domain, key in (("", OPSET), (ML_DOMAIN, ML_OPSET)):
        value = module.attributes.get(key)
        if isinstance(value, IntegerAttr):
            opsets[domain] = value.value.data
    return opsets


def onnx_graph_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The functions of a module in the `onnx` dialect: a body of onnx ops (and calls of
    model-local functions, `onnx.call`) and a return."""
    return [
        op
        for op in module.body.block.ops
        if isinstance(op, func.FuncOp)
        and op.body.blocks
        and all(isinstance(o, OnnxOp | CallOp | func.ReturnOp) for o in op.body.block.ops)
    ]


def onnx_input_types(function: func.FuncOp) -> list[tuple[Attribute, int]]:
    """(element type, element count) of each graph input, in argument order."""
    found = []
    for arg in function.body.block.args:
        if not isinstance(arg.type, TensorType):
            raise OnnxUnsupported(f"graph input of type {arg.type} is not a tensor")
        found.append((arg.type.get_element_type(), math.prod(arg.type.get_shape())))
    return found


def _tensor_type(value: SSAValue) -> TensorType:
    if not isinstance(value.type, TensorType):
        raise OnnxUnsupported(f"value of type {value.type} is not a tensor")
    return value.type


def _attribute_proto(op: OnnxOp, name: str, schema: OpSchema) -> AttributeProto:
    kind = schema.attributes[name].type
    value = get_attr(op, name)
    if kind == AttributeProto.TENSOR:
        return helper.make_attribute(name, numpy_helper.from_array(np.asarray(value)))
    if kind in (AttributeProto.INTS, AttributeProto.FLOATS, AttributeProto.STRINGS):
        return helper.make_attribute(name, list(value), attr_type=kind)
    if kind in (AttributeProto.INT, AttributeProto.FLOAT, AttributeProto.STRING):
        return helper.make_attribute(name, value)
    raise OnnxUnsupported(f"'{op.name}': attribute '{name}' has a kind the checker does not rebuild")


_EVALUATORS: dict[tuple, Callable[[dict[str, np.ndarray]], list[np.ndarray]]] = {}
"""(node, input types, opsets) → the reference evaluator's run of the one-node model."""


def _reference(op: OnnxOp, values: list[np.ndarray | None], opsets: dict[str, int]) -> list[np.ndarray]:
    """The op's outputs by `onnx.reference` on a one-node model (cached per signature)."""
    from onnx.reference import ReferenceEvaluator

    schema = op.spec().schema
    attributes = [
        _attribute_proto(op, name, schema) for name in op.properties if name not in _SEGMENTS
    ]
    input_names = ["" if v is None else f"in{i}" for i, v in enumerate(values)]
    output_names = ["" if r is None else f"out{i}" for i, r in enumerate(outputs(op))]
    node = helper.make_node(schema.name, input_names, output_names, domain=schema.domain)
    node.attribute.extend(attributes)
    signature = tuple((v.dtype.str, v.shape) if v is not None else None for v in values)
    key = (node.SerializeToString(), signature, tuple(sorted(opsets.items())))
    run = _EVALUATORS.get(key)
    if run is None:
        graph = helper.make_graph(
            [node],
            "check",
            [
                helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                for name, v in zip(input_names, values)
                if v is not None
            ],
            [helper.make_empty_tensor_value_info(name) for name in output_names if name],
        )
        domains = {"": opsets.get("", 22), schema.domain: opsets.get(schema.domain, schema.since_version)}
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in domains.items()])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                evaluator = ReferenceEvaluator(model)
        except Exception as error:  # noqa: BLE001 - "No implementation for operator …"
            raise OnnxUnsupported(f"the ONNX reference cannot run '{op.name}': {str(error).splitlines()[0]}") from None
        run = lambda feeds, evaluator=evaluator: evaluator.run(None, feeds)  # noqa: E731
        _EVALUATORS[key] = run
    feeds = {name: v for name, v in zip(input_names, values) if v is not None}
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return [np.asarray(r) for r in run(feeds)]
    except Exception as error:  # noqa: BLE001 - the reference fails on these inputs
        raise OnnxUnsupported(f"the ONNX reference fails on '{op.name}': {str(error).splitlines()[0]}") from None


def _limits(dtype: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _saturate(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    low, high = _limits(dtype)
    return np.clip(values, low, high).astype(dtype)


def _scalar(values: np.ndarray, dtype: np.dtype | None = None) -> np.generic:
    if values.size != 1:
        raise OnnxUnsupported("integer element-wise ops need per-tensor scales")
    scalar = values.reshape(-1)[0]
    return scalar if dtype is None else scalar.astype(dtype)


def _wide(value: np.ndarray) -> np.ndarray:
    return value.astype(np.int64)


# --------------------------------------------------------------------------------------------
# Zant's integer forms: the ops no ONNX evaluator defines, and the QLinearConv / QLinearMatMul
# that `fold-qdq` marks. Their requantization is the ONNX definition's (QuantizeLinear of the
# real value: y = saturate(round_half_to_even(v / y_scale) + y_zero_point)) computed exactly:
# each scale is a binary fraction, so v / y_scale = sum · P / Q with integers P and Q, and the
# rounding is exact integer arithmetic. It shares nothing with the lowering's fixed point (a
# 31-bit multiplier and a shift, rounding ties up): `--check-each-pass` compares the two, and
# tests/test_interpreter_onnx.py states where they may differ (ties, and values within the
# multiplier's error of one).
# --------------------------------------------------------------------------------------------


def _ratio(*scales: np.ndarray, divide_by: np.ndarray | None = None) -> Fraction:
    """The exact product of the (one-element) `scales`, over `divide_by`."""
    value = Fraction(1)
    for scale in scales:
        value *= Fraction(float(_scalar(scale)))
    return value if divide_by is None else value / Fraction(float(_scalar(divide_by)))


def _round_half_even(numerator: np.ndarray, denominator: np.ndarray | int) -> np.ndarray:
    """round_half_to_even(numerator / denominator), elementwise on Python integers (object
    arrays): with n = 2·numerator + d, floor(n / 2d) is the nearest integer with ties up, and a
    tie (n a multiple of 2d) that came out odd steps down to the even one."""
    n = 2 * numerator + denominator
    up = n // (2 * denominator)
    return up - ((n % (2 * denominator) == 0) & (up % 2 == 1))


def _quantize(total: np.ndarray, ratios: Fraction | Sequence[Fraction], axis: int, y_zp: np.ndarray | None, out: np.dtype) -> np.ndarray:
    """QuantizeLinear of `total` · ratio (one ratio, or one per index of `axis`): rounded half to
    even, plus the zero point, saturated to `out`."""
    shape = [1] * total.ndim
    per_axis = not isinstance(ratios, Fraction)
    if per_axis:
        shape[axis] = -1
    listed = list(ratios) if per_axis else [ratios]
    p = np.array([r.numerator for r in listed], dtype=object).reshape(shape if per_axis else ())
    q = np.array([r.denominator for r in listed], dtype=object).reshape(shape if per_axis else ())
    value = _round_half_even(np.asarray(total).astype(object) * p, q)
    if y_zp is not None:
        value = value + _wide(y_zp).astype(object).reshape(shape if y_zp.size > 1 else ())
    low, high = _limits(out)
    return np.clip(value, low, high).astype(out)


# --------------------------------------------------------------------------------------------
# The rounding modes (`zant.rounding`, set by `requant-rounding`): onnxruntime's and TFLite's
# arithmetic, written here from their definitions as the oracle the lowering is checked against.
# --------------------------------------------------------------------------------------------


def _tflite_quantized_multiplier(real: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplier: (q, e), real ≈ q · 2^(e-31), q = round_half_away(frac · 2^31)
    for real = frac · 2^e (frac in [0.5, 1)), carried when it reaches 2^31; 0 below 2^-32."""
    if real == 0.0:
        return 0, 0
    frac, e = math.frexp(real)
    q = int(Fraction(frac) * 2**31 + Fraction(1, 2))  # positive: floor(x + 1/2) is half away
    if q == 2**31:
        q, e = 2**30, e + 1
    return (0, 0) if e < -31 else (q, e)


def _tflite_multiply(x: np.ndarray, q: int | np.ndarray, e: int | np.ndarray, single: bool = False) -> np.ndarray:
    """TFLite's MultiplyByQuantizedMultiplier on int32 values `x` (int64 arrays): x shifted left
    by max(e, 0) in int32, SaturatingRoundingDoublingHighMul by q (nudge ±2^30, C division
    truncating toward zero), then RoundingDivideByPOT by max(-e, 0) (remainder above half, or
    above half plus one for a negative value, rounds up). `single` (TFLITE_SINGLE_ROUNDING):
    x · q plus half of 2^(31-e), shifted right by 31 - e."""
    x, q, e = (np.asarray(a, dtype=np.int64) for a in (x, q, e))
    if single:
        total_shift = 31 - e
        return (x * q + (np.int64(1) << (total_shift - 1))) >> total_shift
    left, right = np.maximum(e, 0), np.maximum(-e, 0)
    x = (((x << left) + 2**31) % 2**32) - 2**31
    product = x * q
    nudged = product + np.where(product >= 0, 2**30, 1 - 2**30)
    high = np.where(nudged >= 0, nudged // 2**31, -((-nudged) // 2**31))
    mask = (np.int64(1) << right) - 1
    remainder = high & mask
    threshold = (mask >> 1) + (high < 0)
    return (high >> right) + (remainder > threshold)


def _requantize_as(
    mode: str, total: np.ndarray, in_s: np.ndarray, w_s: np.ndarray, out_s: np.ndarray, axis: int,
    y_zp: np.ndarray | None, out: np.dtype,
) -> np.ndarray:
    """QLinearConv / QLinearMatMul's requantization of the int32 `total` in `mode`: onnxruntime's
    float32 float(total) · ((x_scale · w_scale) / y_scale), rounded to nearest even; TFLite's
    `_tflite_multiply` with the double-precision ratio's multiplier (tflite, tflite-single).
    Scales per index of `axis` (w_s) or single."""
    shape = [1] * total.ndim
    shape[axis] = -1
    w = np.asarray(w_s, np.float32).reshape(-1)
    if mode == "onnxruntime":
        scale = (np.float32(_scalar(in_s)) * w) / np.float32(_scalar(out_s))
        value = np.rint(total.astype(np.float32) * scale.reshape(shape)).astype(np.int64)
    else:
        pairs = [
            _tflite_quantized_multiplier(float(_scalar(in_s)) * float(ws) / float(_scalar(out_s))) for ws in w
        ]
        q = np.array([p[0] for p in pairs], np.int64).reshape(shape)
        e = np.array([p[1] for p in pairs], np.int64).reshape(shape)
        value = _tflite_multiply(total, q, e, mode == "tflite-single")
    if y_zp is not None:
        value = value + _wide(y_zp).reshape(shape if y_zp.size > 1 else ())
    low, high = _limits(out)
    return np.clip(value, low, high).astype(out)


def _fma32(x: np.ndarray, r: float, c: np.ndarray) -> np.ndarray:
    """float32 fma(x, r, c) (x·r + c rounded once) for 8-bit integers x and float32 r and c,
    as float64 values: x·r is exact in float64 (32 bits), the sum s is rounded there with its
    error e recovered exactly (TwoSum); s rounded to float32 is the fma unless s fell exactly
    halfway between two float32 values with e ≠ 0, which then picks the neighbour on e's side."""
    p = x * r
    total = p + c
    back = total - p
    error = (p - (total - back)) + (c - back)
    y = total.astype(np.float32)
    toward = np.nextafter(y, np.where(total > y, np.float32(np.inf), np.float32(-np.inf)).astype(np.float32))
    halfway = (y.astype(np.float64) + toward.astype(np.float64)) / 2 == total
    fix = halfway & (error != 0) & (total != y)
    side = np.where(error > 0, np.maximum(y, toward), np.minimum(y, toward))
    return np.where(fix, side, y).astype(np.float64)


def _qlinear_add_as(mode: str, v: list[np.ndarray], out: np.dtype) -> np.ndarray:
    """QLinearAdd in `mode`. onnxruntime (its x86-64 AVX2 kernel): r_a = a_scale / c_scale,
    r_b alike and f = zp_c - (r_a·zp_a + r_b·zp_b) in float32, y = rint(fma(a, r_a, fma(b, r_b,
    f))), an input constant along the last axis added to f first (mul, then add). TFLite's int8
    Add: each centered input · 2^20 rescaled by its scale over twice the larger, the sum by
    that over 2^20 · c_scale (`_tflite_multiply` each)."""
    a, a_s, a_zp, b, b_s, b_zp, c_s, c_zp = v
    shape = np.broadcast_shapes(a.shape, b.shape)
    scales = [float(_scalar(s)) for s in (a_s, b_s, c_s)]
    zps = [int(_scalar(z)) for z in (a_zp, b_zp, c_zp)]
    if mode == "onnxruntime":
        f32 = np.float32
        r_a, r_b = f32(scales[0]) / f32(scales[2]), f32(scales[1]) / f32(scales[2])
        fixed = f32(f32(zps[2]) - f32(f32(r_a * f32(zps[0])) + f32(r_b * f32(zps[1]))))
        fa, fb = (np.broadcast_to(x, shape).astype(np.float64) for x in (a, b))
        last = shape[-1] if shape else 1

        def rounded(x: np.ndarray) -> np.ndarray:
            return x.astype(np.float32).astype(np.float64)

        scalar_a = a.ndim and a.shape[-1] == 1 and last > 1
        scalar_b = b.ndim and b.shape[-1] == 1 and last > 1
        if scalar_a and not scalar_b:
            value = _fma32(fb, float(r_b), rounded(float(fixed) + rounded(fa * float(r_a))))
        elif scalar_b and not scalar_a:
            value = _fma32(fa, float(r_a), rounded(float(fixed) + rounded(fb * float(r_b))))
        else:
            value = _fma32(fa, float(r_a), _fma32(fb, float(r_b), np.full(shape, float(fixed))))
        y = np.rint(value).astype(np.int64)
    else:
        twice = 2 * max(scales[0], scales[1])
        (q_a, e_a), (q_b, e_b), (q_c, e_c) = (
            _tflite_quantized_multiplier(r)
            for r in (scales[0] / twice, scales[1] / twice, twice / (2**20 * scales[2]))
        )
        single = mode == "tflite-single"
        sa = _tflite_multiply((_wide(a) - zps[0]) * 2**20, q_a, e_a, single)
        sb = _tflite_multiply((_wide(b) - zps[1]) * 2**20, q_b, e_b, single)
        y = _tflite_multiply(sa + sb, q_c, e_c, single) + zps[2]
    return _saturate(y, out)


def _qlinear_add(op: OnnxOp, v: list[np.ndarray], out: np.dtype) -> np.ndarray:
    """quantize(dequantize(a) + dequantize(b)): (a - a_zp)·a_scale/c_scale + (b - b_zp)·b_scale/c_scale,
    over one common denominator, rounded once; in a `zant.rounding` mode, `_qlinear_add_as`."""
    a, a_s, a_zp, b, b_s, b_zp, c_s, c_zp = v
    mode = rounding_mode(op)
    if mode == "onnxruntime" and FLOAT_SUM in op.attributes:  # 16-bit: onnxruntime's float Add
        return mlas_float.add(a, _scalar(a_s), _scalar(a_zp), b, _scalar(b_s), _scalar(b_zp), _scalar(c_s), _scalar(c_zp), out)
    if mode != "exact" and min(float(_scalar(s)) for s in (a_s, b_s, c_s)) > 0:
        return _qlinear_add_as(mode, v, out)
    r_a, r_b = _ratio(a_s, divide_by=c_s), _ratio(b_s, divide_by=c_s)
    q = r_a.denominator * r_b.denominator
    total = (_wide(a) - _wide(a_zp)).astype(object) * (r_a.numerator * r_b.denominator) + (
        _wide(b) - _wide(b_zp)
    ).astype(object) * (r_b.numerator * r_a.denominator)
    return _quantize(total, Fraction(1, q), 0, c_zp, out)


def _qlinear_mul(op: OnnxOp, v: list[np.ndarray], out: np.dtype) -> np.ndarray:
    """quantize(dequantize(a) · dequantize(b)): (a - a_zp)(b - b_zp)·a_scale·b_scale/c_scale."""
    a, a_s, a_zp, b, b_s, b_zp, c_s, c_zp = v
    product = (_wide(a) - _wide(a_zp)) * (_wide(b) - _wide(b_zp))
    mode = rounding_mode(op)
    if mode == "onnxruntime":  # float32: rint(float(p) * (a_scale * b_scale / c_scale) + zc)
        f32 = np.float32
        ratio = f32(f32(f32(_scalar(a_s)) * f32(_scalar(b_s))) / f32(_scalar(c_s)))
        value = (product.astype(f32) * ratio).astype(f32) + f32(int(_scalar(c_zp)))
        return _saturate(np.rint(value.astype(f32)).astype(np.int64), out)
    if mode in ("tflite", "tflite-single"):  # TFLite's Mul: one MultiplyByQuantizedMultiplier
        q, e = _tflite_quantized_multiplier(float(_scalar(a_s)) * float(_scalar(b_s)) / float(_scalar(c_s)))
        return _saturate(_tflite_multiply(product, q, e, mode == "tflite-single") + int(_scalar(c_zp)), out)
    return _quantize(product, _ratio(a_s, b_s, divide_by=c_s), 0, c_zp, out)


def _qlinear_leaky_relu(op: OnnxOp, v: list[np.ndarray], out: np.dtype) -> np.ndarray:
    """quantize(leaky_relu(dequantize(x), alpha)), alpha the attribute's float."""
    x, x_s, x_zp, y_s, y_zp = v
    ratio = _ratio(x_s, divide_by=y_s)
    alpha = Fraction(float(np.float32(get_attr(op, "alpha"))))
    centered = _wide(x) - _wide(x_zp)
    positive = _quantize(centered, ratio, 0, y_zp, out)
    negative = _quantize(centered, ratio * alpha, 0, y_zp, out)
    return np.where(centered < 0, negative, positive)


SOFTMAX_EXP_BITS = 20
SOFTMAX_SCALE_BITS = 16


def _qlinear_softmax(op: OnnxOp, v: list[np.ndarray], out: np.dtype) -> np.ndarray:
    x, x_s, _x_zp, y_s, y_zp = v
    axis = get_attr(op, "axis") % x.ndim
    if get_attr(op, "opset") < 13 and axis != x.ndim - 1:  # along the last axis, they agree
        raise OnnxUnsupported("QLinearSoftmax with opset < 13 semantics")
    x_scale, y_scale = float(_scalar(x_s)), float(_scalar(y_s))
    exps = np.round(np.exp(-np.arange(256, dtype=np.float64) * x_scale) * 2.0**SOFTMAX_EXP_BITS)
    table = exps.astype(np.int32).astype(np.int64)
    rows = np.moveaxis(_wide(x), axis, -1)
    distance = rows.max(axis=-1, keepdims=True) - rows
    if x.dtype.itemsize == 1:
        e = table[distance]
    else:  # 16-bit x (16x8): a coarse table of exp(-256·i·s) times the fine one, back to 2^20
        coarse = np.round(np.exp(-np.arange(256, dtype=np.float64) * 256 * x_scale) * 2.0**SOFTMAX_EXP_BITS)
        product = coarse.astype(np.int32).astype(np.int64)[distance >> 8] * table[distance & 255]
        e = (product + (1 << (SOFTMAX_EXP_BITS - 1))) >> SOFTMAX_EXP_BITS
    denominator = e.sum(axis=-1, keepdims=True) << SOFTMAX_SCALE_BITS
    numerator = e * round(2.0**SOFTMAX_SCALE_BITS / y_scale) + (denominator >> 1)
    y = np.moveaxis(numerator // denominator, -1, axis) + _wide(y_zp)
    return _saturate(y, out)


def _lookup_table(op: OnnxOp, v: list[np.ndarray], out: np.dtype) -> np.ndarray:
    x, table = v
    return table.reshape(-1)[_wide(x) - _limits(x.dtype)[0]].astype(out)


def _qlinear_conv_fixed_point(op: OnnxOp, v: list[np.ndarray | None], opsets: dict[str, int], out: np.dtype) -> np.ndarray:
    """QLinearConv as ONNX defines it: ConvInteger's sum plus the bias, wrapped to int32 (a
    16-bit x, zant's 16x8 form, keeps its exact sum: the lowering sums in int64 where int32
    could overflow), quantized by x_scale·w_scale/y_scale (per output channel with per-channel weights). An
    average pool's window sum (`AVERAGE_COUNT` n) by x_scale/(y_scale·n), the weight scale
    standing for exactly 1/n."""
    x, x_s, x_zp, w, w_s, w_zp, y_s, y_zp, *rest = [*v, None][:9]
    bias = rest[0] if rest else None
    form = op.attributes.get(FLOAT_SUM)
    if form is not None and rounding_mode(op) == "onnxruntime":
        return _float_sum_conv(op, form.data, v, out)
    total = _integer_sum(op, "ConvInteger", [x, w, x_zp, w_zp], opsets).astype(np.int64)
    if bias is not None:
        total = total + bias.astype(np.int64).reshape(1, -1, *([1] * (x.ndim - 2)))
    count = average_count(op)
    if count is not None and x_s.size == 1 and y_s.size == 1 and (y_zp is None or y_zp.size == 1):
        zps = [0 if z is None else int(_scalar(z)) for z in (x_zp, y_zp)]
        if rounding_mode(op).startswith("tflite") and float(_scalar(x_s)) == float(_scalar(y_s)) and zps[0] == zps[1]:
            # TFLite's pool: the raw sum over the count, half away from zero (C's division).
            raw = total + count * zps[0]
            half = count // 2
            average = np.where(raw > 0, (raw + half) // count, -((half - raw) // count))
            return _saturate(average, out)
        return _quantize(total, _ratio(x_s, divide_by=y_s) / count, 1, y_zp, out)
    if x.dtype.itemsize == 1:  # ONNX's 8-bit QLinearConv sums in int32; a 16-bit x's sum is exact
        total = (total + 2**31) % 2**32 - 2**31
    mode = rounding_mode(op)
    if mode != "exact":
        return _requantize_as(mode, total, x_s, w_s, y_s, 1, y_zp, out)
    ratios = [_ratio(x_s, s, divide_by=y_s) for s in w_s.reshape(-1)]
    return _quantize(total, ratios if len(ratios) > 1 else ratios[0], 1, y_zp, out)


def _float_sum_conv(op: OnnxOp, form: str, v: list[np.ndarray | None], out: np.dtype) -> np.ndarray:
    """A 16-bit QLinearConv marked `zant.float_sum`: onnxruntime's float32 Conv / Gemm / pool of
    the dequantized codes with the MLAS kernel the mark names (`zant.analysis.mlas_float`)."""
    x, x_s, x_zp, w, w_s, w_zp, y_s, y_zp, *rest = [*v, None][:9]
    x_zp, y_zp = (0 if z is None else _scalar(z) for z in (x_zp, y_zp))
    if form == "mean":
        return mlas_float.global_mean(x, _scalar(x_s), x_zp, _scalar(y_s), y_zp, out, x.ndim - 2)
    rank = x.ndim - 2
    out_spatial = list(_tensor_type(op.results[0]).get_shape()[2:])
    strides, dilations = get_attr(op, "strides") or [1] * rank, get_attr(op, "dilations") or [1] * rank
    pads = list(get_attr(op, "pads") or [0] * 2 * rank)
    auto_pad = get_attr(op, "auto_pad")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        for d in range(rank):
            extent = (out_spatial[d] - 1) * strides[d] + (w.shape[2 + d] - 1) * dilations[d] + 1
            total = max(0, extent - x.shape[2 + d])
            pads[d] = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            pads[d + rank] = total - pads[d]
    return mlas_float.conv(
        form, x, _scalar(x_s), x_zp, w, w_s, w_zp, rest[0] if rest else None, _scalar(y_s), y_zp, out,
        group=get_attr(op, "group"), pads=pads, strides=strides, dilations=dilations, out_spatial=out_spatial,
    )


def _qlinear_matmul_fixed_point(op: OnnxOp, v: list[np.ndarray | None], opsets: dict[str, int], out: np.dtype) -> np.ndarray:
    """QLinearMatMul as ONNX defines it: MatMulInteger's sum quantized by a_scale·b_scale/y_scale
    (per column with per-column b scales)."""
    a, a_s, a_zp, b, b_s, b_zp, y_s, y_zp = v
    total = _integer_sum(op, "MatMulInteger", [a, b, a_zp, b_zp], opsets)
    mode = rounding_mode(op)
    if mode != "exact":
        return _requantize_as(mode, np.asarray(total).astype(np.int64), a_s, b_s, y_s, total.ndim - 1, y_zp, out)
    ratios = [_ratio(a_s, s, divide_by=y_s) for s in b_s.reshape(-1)]
    return _quantize(total, ratios if len(ratios) > 1 else ratios[0], total.ndim - 1, y_zp, out)


def _integer_sum(op: OnnxOp, op_type: str, values: list[np.ndarray | None], opsets: dict[str, int]) -> np.ndarray:
    """ConvInteger / MatMulInteger of the reference, with the op's window attributes."""
    from onnx.reference import ReferenceEvaluator

    names = ["" if v is None else f"in{i}" for i, v in enumerate(values)]
    while names and not names[-1]:
        names.pop()
    attributes = {}
    if op_type == "ConvInteger":
        for name in ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"):
            if name in op.properties:
                attributes[name] = get_attr(op, name)
    node = helper.make_node(op_type, names, ["y"], **attributes)
    feeds = {n: v for n, v in zip(names, values) if n}
    graph = helper.make_graph(
        [node],
        "sum",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for n, v in feeds.items()],
        [helper.make_empty_tensor_value_info("y")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opsets.get("", 22))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (total,) = ReferenceEvaluator(model).run(None, feeds)
    return np.asarray(total)


def _qlinear_definition(op: OnnxOp, values: list[np.ndarray | None], opsets: dict[str, int]) -> np.ndarray:
    """A com.microsoft op by its definition (`QLINEAR_DEFINITIONS`) on the ONNX reference."""
    from onnx.reference import ReferenceEvaluator

    definition = QLINEAR_DEFINITIONS[type(op)]
    feeds = {f"in{i}": v for i, v in enumerate(values) if v is not None}
    nodes, floats = [], []
    for value, scale, zero_point in definition.triples(len(values)):
        axis = {"axis": 0 if get_attr(op, "transB") else 1} if isinstance(op, QGemmOp) and value == 3 else {}
        floats.append(f"f{value}")
        nodes.append(helper.make_node("DequantizeLinear", [f"in{value}", f"in{scale}", f"in{zero_point}"], [floats[-1]], **axis))
    if isinstance(op, QGemmOp) and values[6] is not None:  # C: int32 in a_scale · b_scale
        feeds["c_scale"] = (values[1].reshape(-1) * values[4].reshape(-1)).astype(np.float32)
        feeds["c_zero_point"] = np.zeros(feeds["c_scale"].shape, np.int32)
        floats.append("f6")
        nodes.append(helper.make_node("DequantizeLinear", ["in6", "c_scale", "c_zero_point"], ["f6"], axis=0))
    schema = op.spec().schema
    attributes = [_attribute_proto(op, n, schema) for n in op.properties if n not in (*_SEGMENTS, *definition.dropped)]
    scale, zero_point = definition.output
    quantized = scale < len(values) and values[scale] is not None
    nodes.append(helper.make_node(definition.op, floats, ["r" if quantized else "y"]))
    nodes[-1].attribute.extend(attributes)
    if quantized:
        nodes.append(helper.make_node("QuantizeLinear", ["r", f"in{scale}", f"in{zero_point}"], ["y"]))
    graph = helper.make_graph(
        nodes, "definition",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for n, v in feeds.items()],
        [helper.make_empty_tensor_value_info("y")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opsets.get("", 22))])
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        (result,) = ReferenceEvaluator(model).run(None, feeds)
    return np.asarray(result)


_BY_DEFINITION = (QLinearSigmoidOp, QLinearAveragePoolOp, QLinearGlobalAveragePoolOp, QLinearConcatOp, QGemmOp)
"""com.microsoft ops evaluated by their definition (QLinearLeakyRelu too when alpha ≠ 1)."""


ZantImpl = Callable[[OnnxOp, list[np.ndarray], np.dtype], np.ndarray]

ZANT_OPS: dict[type[OnnxOp], ZantImpl] = {
    QLinearAddOp: _qlinear_add,
    QLinearMulOp: _qlinear_mul,
    QLinearLeakyReluOp: _qlinear_leaky_relu,
    QLinearSoftmaxOp: _qlinear_softmax,
    LookupTableOp: _lookup_table,
}
"""Ops evaluated by NumPy as `onnx-to-uop` lowers them (one result each)."""


def _evaluate(op: OnnxOp, values: list[np.ndarray | None], opsets: dict[str, int]) -> list[np.ndarray]:
    result_types = [_tensor_type(r) for r in op.results]
    if isinstance(op, ConstantOp) and "value" in op.properties:
        return [attr_to_array(op.properties["value"])]
    if isinstance(op, _BY_DEFINITION) or (isinstance(op, QLinearLeakyReluOp) and get_attr(op, "alpha") != 1.0):
        return [_qlinear_definition(op, values, opsets)]
    if type(op) in ZANT_OPS:
        return [ZANT_OPS[type(op)](op, values, numpy_dtype(result_types[0].get_element_type()))]
    if FIXED_POINT in op.attributes and isinstance(op, QLinearConvOp | QLinearMatMulOp):
        implementation = _qlinear_conv_fixed_point if isinstance(op, QLinearConvOp) else _qlinear_matmul_fixed_point
        return [implementation(op, values, opsets, numpy_dtype(result_types[0].get_element_type()))]
    return _reference(op, values, opsets)


def run_onnx_function(
    function: func.FuncOp, given: Sequence[np.ndarray], opsets: dict[str, int]
) -> list[np.ndarray]:
    """The outputs of an `onnx`-dialect function (flat, in return order) for `given` (one array
    per graph input, any shape with the input's element count). Raises `OnnxUnsupported` when
    an op cannot be evaluated (on these inputs)."""
    block = function.body.block
    if len(given) != len(block.args):
        raise ZantError(f"@{function.sym_name.data} takes {len(block.args)} inputs, got {len(given)}")
    return _run_block(block, given, opsets, function.sym_name.data)


def _run_block(block: Block, given: Sequence[np.ndarray], opsets: dict[str, int], name: str) -> list[np.ndarray]:
    """The flat outputs of a function's block (`@main`'s or an `onnx.function`'s) on `given`;
    an `onnx.call` runs its callee's block."""
    env: dict[SSAValue, np.ndarray] = {}
    for arg, array in zip(block.args, given):
        t = _tensor_type(arg)
        env[arg] = np.asarray(array).astype(numpy_dtype(t.get_element_type())).reshape(t.get_shape())
    for op in block.ops:
        if isinstance(op, func.ReturnOp | FunctionReturnOp):
            return [env[v].reshape(-1).copy() for v in op.arguments]
        if isinstance(op, CallOp):
            callee = SymbolTable.lookup_symbol(op, op.callee)
            results = _run_block(callee.body.block, [env[v] for v in op.arguments], opsets, callee.sym_name.data)
            for result, value in zip(op.res, results, strict=True):
                env[result] = value.reshape(_tensor_type(result).get_shape())
            continue
        assert isinstance(op, OnnxOp)
        values = [None if v is None else env[v] for v in inputs(op)]
        results = _evaluate(op, values, opsets)
        for result, value in zip([r for r in outputs(op) if r is not None], results, strict=True):
            t = _tensor_type(result)
            array = np.asarray(value)
            if array.size != math.prod(t.get_shape()):
                raise OnnxUnsupported(
                    f"the ONNX reference gives '{op.name}' {array.size} elements, its type {t} holds {math.prod(t.get_shape())}"
                )
            env[result] = array.astype(numpy_dtype(t.get_element_type())).reshape(t.get_shape())
    raise ZantError(f"@{name} has no return")
