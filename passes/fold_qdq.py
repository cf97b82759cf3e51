"""`fold-qdq`: fold DequantizeLinear → op → QuantizeLinear into integer ops.

A QDQ model (onnxruntime's `quantize_static`, QDQ format; QOperator models' com.microsoft ops
arrive in the same form, see `zant.frontend.contrib_quantized`) computes every layer in float
between a DequantizeLinear of its 8-bit inputs and a QuantizeLinear of its output. Rooted at
each QuantizeLinear, this pass replaces (FOLDS says which function folds which op)

* Conv, with a DQ'd activation, a constant DQ'd weight and an optional constant int32 bias
  whose scale is x_scale · w_scale (as quantizers make it), by `QLinearConv`;
* Gemm (alpha = beta = 1, 2-D) by a 1×1 `QLinearConv` between two Reshapes, the weight
  transposed to [N, K, 1, 1] at compile time;
* MatMul by `QLinearMatMul` (of a 16-bit x and constant weights: the Gemm fold);
* AveragePool (no padding, or padding counted) and GlobalAveragePool by a depthwise
  `QLinearConv` with a weight of ones and a weight scale of 1 / window size (marked
  `zant.average_count`: requantized exactly, ties to even), other
  AveragePools (uncounted padding, ceil_mode) by `QLinearAveragePool` (com.microsoft's);
* ReduceMean / ReduceSum over the spatial axes or GlobalAveragePool of Relu(Conv) or Conv with
  no Q between (PyTorch PT2E) by the conv's int32 sums, Relu on them and one per-channel
  window sum (`fold_conv_relu_mean`); a Gemm of DQ'd operands whose float result is a graph
  output by MatMulInteger and one DequantizeLinear writing it (`FoldGemmToFloatOutput`);
* ReduceMean and ReduceSum over constant axes by the same window sum over x viewed as
  [B, K, reduced axes…] (a Transpose and Reshapes around it), the mean's count in the mark, a
  sum's count 1; ReduceMax / ReduceMin / GlobalMaxPool by the op on the integers, requantized
  (where the parameters differ) by a window sum of one element: exactly, ties to even. These,
  and 16x8 quantization's layers (a 16-bit x with 8-bit weights: Conv, Gemm, MatMul, AveragePool,
  Softmax, Add / Sub, Relu / Clip, Concat, Max / Min, the movement ops but Resize), fold 16-bit
  tensors too (WIDE_FOLDS), every other fold (Mul, MatMul of activations, lookup tables,
  Resize) 8-bit ones;
* Add, Sub and Mul of two DQ'd tensors by `QLinearAdd` / `QLinearMul` (com.microsoft's; Sub as
  an Add with B's scale negated), Max / Min by the op on requantized 8-bit tensors;
* Softmax by `QLinearSoftmax` (com.microsoft's; integer only in onnx-to-uop);
* an element-wise op (LOOKUP_OPS: Sigmoid, Tanh, HardSwish, Exp …, or a binary one with a
  constant scalar operand) by `LookupTable`, its 256 entries computed at compile time;
* data movement (MOVEMENT_OPS: Transpose, Reshape, Slice, Pad, Resize nearest, MaxPool …) by
  the same op on the 8-bit tensor, and Concat by Concat of the inputs;
* Resize in linear or cubic mode (constant scales or sizes) by the Resize on the 8-bit tensor
  marked `REQUANTIZE` (integer interpolation and one requantization in onnx-to-uop);
* Relu / Clip with constant bounds by Clip with quantized bounds;
* Q(DQ(x)) with equal parameters by x.

Where an input's DQ parameters differ from the Q's (movement, Concat, Max/Min, Q(DQ)), the
input is requantized first, ties to even as QuantizeLinear rounds them, by a window sum of one
element (`_requantize_to_even`; also before a Relu or Clip); where a scale is not a positive
constant, by `QLinearLeakyRelu` with alpha 1 (ties half up). The integer ops requantize with a Q31
multiplier and a shift (`zant.fixed_point` on QLinearConv / QLinearMatMul, always on the
element-wise ones), as CMSIS-NN and TFLite do, so no float is left in their loops. QLinearConv
and QLinearMatMul already in the graph (QOperator models) get the mark too when their scales are
constants. What does not match stays float between its DQ and Q; `unfolded_ops` lists those ops.
Dead DequantizeLinear ops and constants are erased.
"""


from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, Float32Type, FloatAttr, IntegerAttr, IntegerType, ModuleOp, Signedness, TensorType, UnitAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from zant.dialects.onnx import (
    AVERAGE_COUNT,
    FIXED_POINT,
    NODE_NAME,
    REQUANTIZE,
    AveragePoolOp,
    LookupTableOp,
    QLinearAddOp,
    QLinearAveragePoolOp,
    QLinearLeakyReluOp,
    QLinearMulOp,
    QLinearSoftmaxOp,
    get_attr,
    input_value,
    inputs,
    onnx_op_class,
    requantize_attr,
)
from zant.dialects.onnx_attributes import GLOBAL_POOL, TRANSPOSED_B
from zant.ir.resources import constant_array, make_constant_attr

INT8_TYPES = (IntegerType(8), IntegerType(8, Signedness.UNSIGNED))
INT4_TYPES = (IntegerType(4), IntegerType(4, Signedness.UNSIGNED))
"""int4 / uint4: the integer Convs, Gemms and MatMuls take weights of these types too (kept
packed, two to a byte, and unpacked in the kernels)."""


# ---------------------------------------------------------------------------------------------
# Matching helpers
# ---------------------------------------------------------------------------------------------


def _owner(value: SSAValue | None, name: str) -> Operation | None:
    owner = value.owner if value is not None else None
    return owner if isinstance(owner, Operation) and owner.name == name else None


def constant_value(value: SSAValue | None) -> np.ndarray | None:
    owner = _owner(value, "onnx.Constant")
    return None if owner is None or "value" not in owner.properties else constant_array(owner)


@dataclass(frozen=True)
class Quantized:
    """A tensor as (int values, scale, zero point): a DequantizeLinear's inputs, or a
    QuantizeLinear's scale and zero point."""

    value: SSAValue
    scale: SSAValue
    zero_point: SSAValue | None
    axis: int

    @staticmethod
    def of(op: Operation) -> Quantized:
        return Quantized(op.operands[0], input_value(op, 1), input_value(op, 2), get_attr(op, "axis"))

    @property
    def is_per_tensor(self) -> bool:
        return math.prod(self.scale.type.get_shape()) == 1

    def same_parameters(self, other: Quantized) -> bool:
        """Equal scales and zero points (the same values, or equal constants)."""
        return all(
            _same(a, b) for a, b in ((self.scale, other.scale), (self.zero_point, other.zero_point))
        )


def _same(a: SSAValue | None, b: SSAValue | None) -> bool:
    if a is b:
        return True
    if a is None or b is None:
        return False
    x, y = constant_value(a), constant_value(b)
    return x is not None and y is not None and x.dtype == y.dtype and np.array_equal(x.reshape(-1), y.reshape(-1))


def _dequantized(value: SSAValue | None, constant: bool = False) -> Quantized | None:
    """`value` as the output of a DequantizeLinear with a zero point (the QLinear ops require
    one) of a tensor, a constant one if asked; not a blocked one (`block_size`: see `UnblockDequantize`)."""
    dq = _owner(value, "onnx.DequantizeLinear")
    if dq is None or _block_size(dq):
        return None
    q = Quantized.of(dq)
    if q.zero_point is None or (constant and constant_value(q.value) is None):
        return None
    return q


def _block_size(dq: Operation) -> int:
    return (get_attr(dq, "block_size") or 0) if dq.properties.get("block_size") else 0


def _element_type(value: SSAValue):
    return value.type.get_element_type()


def is_int8(value: SSAValue) -> bool:
    return _element_type(value) in INT8_TYPES


def is_weight(value: SSAValue) -> bool:
    """8-bit or 4-bit integer weights (the second operand of an integer Conv / Gemm / MatMul)."""
    return _element_type(value) in INT8_TYPES + INT4_TYPES


INT16_TYPES = (IntegerType(16), IntegerType(16, Signedness.UNSIGNED))


def is_8_or_16_bit(value: SSAValue) -> bool:
    """An 8- or 16-bit integer tensor (the reductions fold both: `WIDE_FOLDS`)."""
    return _element_type(value) in INT8_TYPES + INT16_TYPES


# ---------------------------------------------------------------------------------------------
# Building helpers
# ---------------------------------------------------------------------------------------------


class Builder:
    """Inserts onnx ops before `anchor`, named after it, at `location` (the anchor's if None)."""

    def __init__(self, rewriter: PatternRewriter, anchor: Operation, location: Attribute | None = None):
        self.rewriter = rewriter
        self.anchor = anchor
        self.location = anchor.location if location is None else location

    def op(self, op_type: str, inputs: list[SSAValue | None], result_type, properties=None, fixed_point=False) -> SSAValue:
        attributes = {FIXED_POINT: UnitAttr()} if fixed_point else {}
        return self.insert(onnx_op_class(op_type).from_onnx(inputs, [result_type], properties, attributes))

    def insert(self, op: Operation) -> SSAValue:
        if NODE_NAME in self.anchor.attributes:
            op.attributes[NODE_NAME] = self.anchor.attributes[NODE_NAME]
        op.location = self.location
        self.rewriter.insert(op)
        return op.results[0]

    def constant(self, array: np.ndarray, element_type, hint: str) -> SSAValue:
        value_type = TensorType(element_type, array.shape)
        value = self.op("Constant", [], value_type, {"value": make_constant_attr(array, hint)})
        value.name_hint = hint
        return value

    def reshape(self, value: SSAValue, shape: list[int]) -> SSAValue:
        target = self.constant(np.array(shape, np.int64), IntegerType(64), "shape")
        return self.op("Reshape", [value, target], TensorType(_element_type(value), shape))


Fold = Callable[[Operation, Quantized, Builder], SSAValue | None]
"""(the float op between DQ and Q, the Q's output parameters, a builder) → the int8 result, or
None when the op does not fold."""


def _bias(op: Operation, x: Quantized, w: Quantized, b: Builder) -> tuple[bool, SSAValue | None]:
    """The int32 bias of a Conv / Gemm, its input 2 (see `_bias_value`)."""
    return _bias_value(input_value(op, 2), op.results[0].type.get_shape()[1], x, w, b)


def _bias_value(value: SSAValue | None, channels: int, x: Quantized, w: Quantized, b: Builder) -> tuple[bool, SSAValue | None]:
    """The int32 bias of `channels` output channels: a constant DQ with scale x_scale · w_scale and
    zero point 0 (as onnxruntime's quantizer makes it), or a float constant (as PyTorch's
    exporter leaves it), quantized here to int32 in that scale (an error of at most half a
    step of x_scale · w_scale, far below one output step). (foldable, the int32 bias or None)."""
    if value is None:
        return True, None
    scales = [constant_value(v) for v in (x.scale, w.scale)]
    if any(s is None for s in scales):
        return False, None
    x_scale, w_scale = scales
    float_bias = constant_value(value)
    if float_bias is not None and float_bias.dtype.kind == "f":
        if float_bias.size != channels:
            return False, None  # a Gemm's C broadcast over rows
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x_scale.astype(np.float64) * w_scale.astype(np.float64)
            quantized = np.round(float_bias.astype(np.float64).reshape(-1) / step.reshape(-1))
        if not np.all(np.isfinite(quantized)) or np.any(np.abs(quantized) >= 2**31):
            return False, None
        return True, b.constant(quantized.astype(np.int32), IntegerType(32), "bias")
    dq = _dequantized(value, constant=True)
    if dq is None or _element_type(dq.value) != IntegerType(32):
        return False, None
    bias_scale = constant_value(dq.scale)
    zero_point = constant_value(dq.zero_point) if dq.zero_point is not None else np.zeros(1)
    if bias_scale is None or np.any(zero_point) or math.prod(dq.value.type.get_shape()) != channels:
        return False, None
    codes = constant_value(dq.value)
    if codes is not None and not np.any(codes):  # a zero bias is zero in any scale (tf2onnx
        return True, dq.value  # shares one zero-bias DQ, in the first layer's scale, among layers)
    return np.allclose(bias_scale, x_scale * w_scale, rtol=1e-6, atol=0), dq.value


def _int8_operands(x: Quantized | None, w: Quantized | None) -> bool:
    """A per-tensor 8-bit x and 8-bit weights, or a 16-bit x with them ("16x8": int16
    activations, int8 weights; the lowering's sum is int32 where it fits, else int64)."""
    return x is not None and w is not None and x.is_per_tensor and is_8_or_16_bit(x.value) and is_weight(w.value)


def _qlinear_conv(b: Builder, x: Quantized, w: Quantized, y: Quantized, bias, result_type, properties) -> SSAValue:
    return b.op(
        "QLinearConv",
        [x.value, x.scale, x.zero_point, w.value, w.scale, w.zero_point, y.scale, y.zero_point, bias],
        result_type,
        properties,
        fixed_point=True,
    )


def fold_conv(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    x, w = _dequantized(input_value(op, 0)), _dequantized(input_value(op, 1), constant=True)
    foldable, bias = _bias(op, x, w, b) if _int8_operands(x, w) else (False, None)
    if not foldable or (not w.is_per_tensor and w.axis != 0):
        return None
    return _qlinear_conv(b, x, w, y, bias, int8_result(op, y), dict(op.properties))


def fold_gemm(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    x, w = _dequantized(input_value(op, 0)), _dequantized(input_value(op, 1), constant=True)
    if get_attr(op, "alpha") != 1.0 or get_attr(op, "beta") != 1.0 or get_attr(op, "transA"):
        return None
    bias = input_value(op, 2)
    return gemm_as_conv(x, w, lambda columns: _bias_value(bias, columns, x, w, b), bool(get_attr(op, "transB")), y, b)


def fold_matmul_bias(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    """Add(MatMul(DQ x, DQ W), bias) with a 2-D x, a constant W and a constant bias (as tf2onnx
    writes TFLite's FULLY_CONNECTED) → the Gemm fold."""
    for index in (0, 1):
        matmul = _owner(op.operands[index], "onnx.MatMul")
        if matmul is None or matmul.results[0].uses.get_length() != 1:
            continue
        x, w = _dequantized(input_value(matmul, 0)), _dequantized(input_value(matmul, 1), constant=True)
        bias = op.operands[1 - index]
        folded = gemm_as_conv(x, w, lambda columns: _bias_value(bias, columns, x, w, b), False, y, b)
        if folded is not None:
            return folded  # the MatMul, read only by the Add, is erased with it
    return None


def gemm_as_conv(
    x: Quantized | None, w: Quantized | None, bias: Callable[[int], tuple[bool, SSAValue | None]], transposed: bool,
    y: Quantized, b: Builder,
) -> SSAValue | None:
    """x[M, K] · W (W[N, K] if `transposed`, else W[K, N]) + bias → a 1×1 `QLinearConv` between
    two Reshapes, the weight laid out as [N, K, 1, 1] at compile time. `bias(N)` is (foldable,
    the int32 bias or None), asked once the operands fold (`_bias_value`)."""
    if not _int8_operands(x, w) or x.value.type.get_num_dims() != 2 or w.value.type.get_num_dims() != 2:
        return None
    # Per-channel weights must vary along N (axis 0 of W[N, K], axis 1 of W[K, N]).
    if not w.is_per_tensor and w.axis % 2 != (0 if transposed else 1):
        return None
    weight = constant_value(w.value)
    weight = weight if transposed else weight.T
    rows, depth = x.value.type.get_shape()
    columns = weight.shape[0]
    foldable, bias = bias(columns)
    if not foldable:
        return None
    w_value = b.constant(weight.reshape(columns, depth, 1, 1), _element_type(w.value), "weight")
    conv = _qlinear_conv(
        b, Quantized(b.reshape(x.value, [rows, depth, 1, 1]), x.scale, x.zero_point, 0),
        Quantized(w_value, w.scale, w.zero_point, 0), y, bias,
        _int8_tensor(y, [rows, columns, 1, 1]), {},
    )
    if transposed and not is_int8(x.value):
        # onnxruntime runs a 16-bit Gemm in float32, and its one-row kernel of a transposed B
        # sums in its own order: `requant-rounding` reads the mark (`FLOAT_SUM`).
        conv.owner.attributes[TRANSPOSED_B] = UnitAttr()
    return b.reshape(conv, [rows, columns])


def fold_matmul(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    a, w = _dequantized(input_value(op, 0)), _dequantized(input_value(op, 1))
    if a is not None and not is_int8(a.value):
        # A 16-bit x (16x8: tf2onnx's FULLY_CONNECTED without a bias, MatMul between DQ and Q)
        # times constant 8-bit weights: the Gemm fold's 1x1 QLinearConv, which lowers 16-bit x
        # (an int64 sum where `needs_64_bit_sum`); QLinearMatMul is 8-bit only.
        w = _dequantized(input_value(op, 1), constant=True)
        return gemm_as_conv(a, w, lambda columns: (True, None), False, y, b)
    if not _int8_operands(a, w) or (not w.is_per_tensor and w.axis not in (-1, len(w.value.type.get_shape()) - 1)):
        return None
    return b.op(
        "QLinearMatMul",
        [a.value, a.scale, a.zero_point, w.value, w.scale, w.zero_point, y.scale, y.zero_point],
        int8_result(op, y),
        fixed_point=True,
    )


def _window_sum(b: Builder, x: Quantized, y: Quantized, kernel, properties, result_type, average: bool = True) -> SSAValue:
    """A depthwise QLinearConv of x with a weight of ones scaled by 1 / window size: the window
    average requantized from x's parameters to y's (a 1×1 window just requantizes). It is
    marked `AVERAGE_COUNT` with the window size: the lowering then requantizes by the exact
    x_scale / (y_scale · size), ties half to even, as the float chain DQ → AveragePool → Q
    rounds them (the f32 weight scale 1 / size is inexact for most sizes). Not `average`: the
    window's sum (a weight scale of 1, count 1), requantized by x_scale / y_scale alike."""
    channels = x.value.type.get_shape()[1]
    count = math.prod(kernel) if average else 1
    ones = b.constant(np.ones((channels, 1, *kernel), np.int8), IntegerType(8), "ones")
    scale = b.constant(np.array(1.0 / count, np.float32), x.scale.type.get_element_type(), "window")
    zero = b.constant(np.array(0, np.int8), IntegerType(8), "zero")
    properties = {**properties, "group": IntegerAttr(channels, 64)}
    pool = _qlinear_conv(b, x, Quantized(ones, scale, zero, 0), y, None, result_type, properties)
    pool.owner.attributes[AVERAGE_COUNT] = IntegerAttr(count, 64)
    return pool


def _requantize(b: Builder, x: Quantized, y: Quantized, result_type) -> SSAValue | None:
    """x requantized from its parameters to y's: `QLinearLeakyRelu` with alpha = 1 (an integer
    op of any rank); None unless both are per tensor with f32 scales and zero points of x's
    type."""
    element = _element_type(x.value)
    for q in (x, y):
        if not q.is_per_tensor or q.zero_point is None or _element_type(q.scale) != Float32Type():
            return None
        if _element_type(q.zero_point) != element:
            return None
    op = QLinearLeakyReluOp.from_onnx(
        [x.value, x.scale, x.zero_point, y.scale, y.zero_point], [result_type], {"alpha": FloatAttr(1.0, 32)}
    )
    return b.insert(op)


def fold_average_pool(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    """An AveragePool or GlobalAveragePool of a per-tensor DQ'd 8-bit tensor (`average_pool`);
    a GlobalAveragePool of a 16-bit one too (its window sum, while the int32 sum cannot
    overflow)."""
    x = _dequantized(input_value(op, 0))
    if x is None or not x.is_per_tensor:
        return None
    if not is_int8(x.value):
        if not is_8_or_16_bit(x.value) or not requantizable(x, y):
            return None
        kernel = x.value.type.get_shape()[2:] if op.name == "onnx.GlobalAveragePool" else get_attr(op, "kernel_shape")
        if math.prod(kernel) >= 2**15:
            return None  # the window's int32 sum of 16-bit codes could overflow
        if isinstance(op, AveragePoolOp):
            padded = any(get_attr(op, "pads") or [])
            if get_attr(op, "auto_pad") != "NOTSET" or get_attr(op, "ceil_mode") or (padded and not get_attr(op, "count_include_pad")):
                return None  # QLinearAveragePool (a varying divisor) is 8-bit only
    pooled = average_pool(op, x, y, b)
    if pooled is not None and not is_int8(x.value) and _whole_input_window(op, x):
        # onnxruntime runs a 16-bit pool in float32, a whole-input window with MLAS's global
        # pooling kernel: `requant-rounding` reads the mark (`FLOAT_SUM`).
        pooled.owner.attributes[GLOBAL_POOL] = UnitAttr()
    return pooled


def _whole_input_window(op: Operation, x: Quantized) -> bool:
    """A GlobalAveragePool, or an AveragePool whose one window is the whole unpadded input."""
    if op.name == "onnx.GlobalAveragePool":
        return True
    spatial = list(x.value.type.get_shape()[2:])
    return (
        list(get_attr(op, "kernel_shape")) == spatial and not any(get_attr(op, "pads") or [])
        and all(s == 1 for s in (get_attr(op, "strides") or []))
    )


def average_pool(op: Operation, x: Quantized, y: Quantized, b: Builder) -> SSAValue | None:
    """The average pool `op` (AveragePool or GlobalAveragePool, or their com.microsoft QLinear
    forms) of the per-tensor 8-bit x into y's parameters: a window sum (`_window_sum`), or
    `QLinearAveragePool` where the divisor varies; None if neither applies."""
    kernel = x.value.type.get_shape()[2:]
    properties = {}
    if isinstance(op, AveragePoolOp | QLinearAveragePoolOp):
        kernel = get_attr(op, "kernel_shape")
        padded = any(get_attr(op, "pads") or [])
        if get_attr(op, "auto_pad") != "NOTSET" or get_attr(op, "ceil_mode") or (padded and not get_attr(op, "count_include_pad")):
            return _qlinear_average_pool(op, x, y, b)  # a divisor that varies at the borders
        properties = {k: v for k, v in op.properties.items() if k in ("kernel_shape", "pads", "strides", "dilations")}
    return _window_sum(b, x, y, kernel, properties, int8_result(op, y))


def fold_reduce_sum(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    """ReduceMean / ReduceSum of a per-tensor DQ'd 8-bit tensor over constant axes → the window
    sum of `_window_sum` (an int32 sum of x - x_zp, requantized once by the exact x_scale /
    (y_scale · count) for a mean, x_scale / y_scale for a sum, ties to even) over x laid out as
    [B, K, r…]: a Transpose taking the reduced axes r… last (a view), a Reshape merging the
    kept ones into B and K (a view unless more than two kept axes need merging) and a Reshape
    to the op's result. No reduced axis (noop_with_empty_axes) is an exact requantization; an
    empty reduced axis, scales that are not positive (the exact requantization needs them so)
    or 2^(31 - bits) reduced elements or more (an int32 sum could overflow) stay float. 8- and
    16-bit tensors (the window sum of a 16-bit x is a QLinearConv beyond ONNX's 8-bit types,
    which onnx-to-uop lowers alike)."""
    x = _dequantized(input_value(op, 0))
    if x is None or not x.is_per_tensor or not is_8_or_16_bit(x.value) or not requantizable(x, y):
        return None
    scales = [constant_value(v) for v in (x.scale, y.scale)]
    if constant_value(x.zero_point) is None or any(s is None or not s.reshape(-1)[0] > 0 for s in scales):
        return None
    shape = x.value.type.get_shape()
    axes = _reduced_axes(op, len(shape))
    width = _element_type(x.value).width.data
    if axes is None or any(shape[a] == 0 for a in axes) or math.prod(shape[a] for a in axes) >= 2 ** (31 - width):
        return None
    if not axes:  # the identity
        return x.value if x.same_parameters(y) else _exact_requantize(b, x, y)
    kept = [d for d in range(len(shape)) if d not in axes]
    value, element = x.value, _element_type(x.value)
    if kept + axes != list(range(len(shape))):
        perm = DenseArrayBase.from_list(IntegerType(64), kept + axes)
        value = b.op("Transpose", [value], TensorType(element, [shape[d] for d in kept + axes]), {"perm": perm})
    reduced = [shape[a] for a in axes]
    kept_shape = [shape[d] for d in kept]
    windows = [math.prod(kept_shape[:-1]), kept_shape[-1] if kept_shape else 1, *reduced]
    if value.type.get_shape() != tuple(windows):
        value = b.reshape(value, windows)
    summed = _window_sum(
        b, Quantized(value, x.scale, x.zero_point, 0), y, reduced, {},
        _int8_tensor(y, [*windows[:2], *[1] * len(reduced)]), average=op.name == "onnx.ReduceMean",
    )
    result_shape = list(op.results[0].type.get_shape())
    return summed if list(summed.type.get_shape()) == result_shape else b.reshape(summed, result_shape)


def fold_conv_relu_mean(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    """ReduceMean / ReduceSum over every spatial axis, or GlobalAveragePool, of Relu(Conv(DQ x,
    DQ w, bias)) or of Conv(...) itself, with no QuantizeLinear between (PyTorch PT2E's
    X86InductorQuantizer leaves the conv's output unquantized before a mean or an
    AdaptiveAvgPool2d) → integers throughout: the conv's int32 accumulators (`ConvInteger`, unit
    x_scale · w_scale[c]) times 2^f plus the bias in units of x_scale · w_scale[c] / 2^f (an
    int32 Mul and Add; f from `_fraction_bits`, so a float bias keeps f fraction bits), Relu as
    max(acc, 0) on int32 (exact: the unit is positive), and one depthwise window sum of the
    int32 values requantized per channel by x_scale · w_scale[c] / (2^f · n · y_scale) (a
    QLinearConv of ones over the whole image, weight scale w_scale[c] / (2^f · n) in float32:
    its sum is int64 in the lowering). A per-tensor 8-bit x, 8-bit weights per tensor or per
    output channel, positive constant scales; anything else stays float. The int32 tensor of
    the conv's output is stored (not fused into a running sum per channel)."""
    relu = _owner(input_value(op, 0), "onnx.Relu")
    source = relu.operands[0] if relu is not None else input_value(op, 0)
    conv = _owner(source, "onnx.Conv")
    if conv is None or source.uses.get_length() != 1 or (relu is not None and relu.results[0].uses.get_length() != 1):
        return None
    x, w = _dequantized(input_value(conv, 0)), _dequantized(input_value(conv, 1), constant=True)
    if x is None or w is None or not x.is_per_tensor or not is_int8(x.value) or not is_int8(w.value):
        return None
    if not w.is_per_tensor and w.axis != 0:
        return None
    scales = [constant_value(v) for v in (x.scale, w.scale, y.scale)]
    if any(s is None or not np.all(s > 0) for s in scales) or constant_value(y.zero_point) is None:
        return None
    if _element_type(y.scale) != Float32Type():
        return None
    shape = conv.results[0].type.get_shape()
    spatial = list(range(2, len(shape)))
    if op.name != "onnx.GlobalAveragePool" and _reduced_axes(op, len(shape)) != spatial:
        return None
    count = math.prod(shape[2:])
    if count == 0 or not spatial:
        return None
    channels = shape[1]
    w_scale = np.broadcast_to(scales[1].astype(np.float64).reshape(-1), (channels,))
    units = _bias_units(input_value(conv, 2), channels, x, w, b)
    zero_points = [constant_value(v) for v in (x.zero_point, w.zero_point)]
    if units is None or any(z is None for z in zero_points):
        return None
    # The accumulators in units of x_scale · w_scale[c] / 2^f: f fraction bits keep a float
    # bias to 2^-(f+1) of a unit (rounded to a whole unit, it moved 4 of 8,000 codes from
    # onnxruntime's float chain on the corpus model), as many as int32 leaves above the sums.
    weights = constant_value(w.value).astype(np.int64)
    w_zero = np.broadcast_to(zero_points[1].astype(np.int64).reshape(-1), (channels,))
    fraction = _fraction_bits(zero_points[0], (weights - w_zero.reshape(-1, *[1] * (weights.ndim - 1))).reshape(channels, -1), units)
    if fraction is None:
        return None
    bias = np.round(units * 2.0**fraction)
    properties = {k: v for k, v in conv.properties.items() if k in ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")}
    int32 = IntegerType(32)
    acc = b.op("ConvInteger", [x.value, w.value, x.zero_point, w.zero_point], TensorType(int32, shape), properties)
    column = [channels, *[1] * len(spatial)]
    if fraction:
        acc = b.op("Mul", [acc, b.constant(np.array(2**fraction, np.int32).reshape([1] * len(column)), int32, "fraction")], TensorType(int32, shape))
    if np.any(bias):
        acc = b.op("Add", [acc, b.constant(bias.astype(np.int32).reshape(column), int32, "bias")], TensorType(int32, shape))
    if relu is not None:
        acc = b.op("Relu", [acc], TensorType(int32, shape))
    average = op.name != "onnx.ReduceSum"
    step = ((w_scale / count if average else w_scale) / 2.0**fraction).astype(np.float32)
    ones = b.constant(np.ones((channels, 1, *shape[2:]), np.int8), IntegerType(8), "ones")
    w_step = b.constant(step, _element_type(w.scale), "window")
    zeros = b.constant(np.zeros(channels, np.int8), IntegerType(8), "zero")
    zero = b.constant(np.array(0, np.int32), int32, "zero")
    window = {"group": IntegerAttr(channels, 64), "kernel_shape": DenseArrayBase.from_list(IntegerType(64), list(shape[2:]))}
    summed = _qlinear_conv(
        b, Quantized(acc, x.scale, zero, 0), Quantized(ones, w_step, zeros, 0), y, None,
        _int8_tensor(y, [*shape[:2], *[1] * len(spatial)]), window,
    )
    result_shape = list(op.results[0].type.get_shape())
    return summed if list(summed.type.get_shape()) == result_shape else b.reshape(summed, result_shape)


def _fraction_bits(x_zero_point: np.ndarray, centered: np.ndarray, units: np.ndarray) -> int | None:
    """The fraction bits f (at most 16) that int32 leaves above the sums Σ (x - x_zp) · w'[c]
    (`centered`: the weights less their zero points, one row per output channel) plus the bias
    (`units`, in units of x_scale · w_scale[c]) when they are scaled by 2^f; None when the sums
    alone come near 2^30."""
    info = np.iinfo(x_zero_point.dtype)
    zero = int(x_zero_point.reshape(-1)[0])
    span = max(abs(info.min - zero), abs(info.max - zero))
    bound = int(np.max(np.abs(centered).sum(axis=1) * span + np.abs(np.round(units)) + 1))
    return None if bound >= 2**30 else max(0, min(16, 30 - bound.bit_length()))


def _bias_units(value: SSAValue | None, channels: int, x: Quantized, w: Quantized, b: Builder) -> np.ndarray | None:
    """A Conv's bias in units of x_scale · w_scale[c] (float64, one per channel, not rounded):
    a float constant divided by the unit, or the int32 codes of a DQ in that scale
    (`_bias_value`); zeros when absent; None when it does not fold."""
    if value is None:
        return np.zeros(channels)
    float_bias = constant_value(value)
    if float_bias is not None and float_bias.dtype.kind == "f":
        if float_bias.size != channels:
            return None
        unit = constant_value(x.scale).astype(np.float64).reshape(-1) * constant_value(w.scale).astype(np.float64).reshape(-1)
        units = float_bias.astype(np.float64).reshape(-1) / unit
        return units if np.all(np.isfinite(units)) and np.all(np.abs(units) < 2**30) else None
    foldable, codes = _bias_value(value, channels, x, w, b)
    codes = None if not foldable or codes is None else constant_value(codes)
    return None if codes is None else np.broadcast_to(codes.astype(np.float64).reshape(-1), (channels,))


def fold_extreme(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    """ReduceMax / ReduceMin / GlobalMaxPool of a per-tensor DQ'd 8- or 16-bit tensor: the op
    on the integer tensor (Q_y ∘ DQ_x is monotone for positive scales), then, where the Q's
    parameters differ, each extreme requantized once by the exact x_scale / y_scale, ties to
    even (`_exact_requantize`); plain integers where they are equal. An empty tensor stays
    float."""
    x = _dequantized(input_value(op, 0))
    if x is None or not is_8_or_16_bit(x.value) or not x.is_per_tensor or 0 in x.value.type.get_shape():
        return None
    same = x.same_parameters(y)
    scales = [constant_value(v) for v in (x.scale, x.zero_point, y.scale)]
    if not same and (not requantizable(x, y) or any(v is None for v in scales) or scales[0].reshape(-1)[0] <= 0 or scales[2].reshape(-1)[0] <= 0):
        return fold_unchanged(op, y, b)  # a requantize that rounds half up (8-bit only)
    result_type = TensorType(_element_type(x.value), op.results[0].type.get_shape())
    value = b.op(op.name.removeprefix("onnx."), [x.value, *inputs(op)[1:]], result_type, dict(op.properties))
    return value if same else _exact_requantize(b, Quantized(value, x.scale, x.zero_point, 0), y)


def _exact_requantize(b: Builder, x: Quantized, y: Quantized) -> SSAValue:
    """x requantized to y's parameters by the window sum of one element (`_window_sum`, count
    1) over x viewed as [1, size, 1]: saturate(round_half_even((x - x_zp) · x_scale / y_scale)
    + y_zp) exactly, as DQ → Q computes it (`_requantize`'s QLinearLeakyRelu rounds half up)."""
    shape = list(x.value.type.get_shape())
    size = math.prod(shape)
    column = b.reshape(x.value, [1, size, 1])
    summed = _window_sum(b, Quantized(column, x.scale, x.zero_point, 0), y, [1], {}, _int8_tensor(y, [1, size, 1]), average=False)
    return b.reshape(summed, shape)


def _requantize_to_even(b: Builder, x: Quantized, y: Quantized, result_type) -> SSAValue | None:
    """x requantized to y's parameters as DQ → Q rounds it, ties to even (`_exact_requantize`)
    where both scales are constant and positive and x is not empty; else `_requantize`, whose
    QLinearLeakyRelu rounds ties half up (8-bit only)."""
    scales = [constant_value(v) for v in (x.scale, x.zero_point, y.scale)]
    exact = requantizable(x, y) and 0 not in x.value.type.get_shape() and all(v is not None for v in scales)
    if exact and scales[0].reshape(-1)[0] > 0 and scales[2].reshape(-1)[0] > 0:
        return _exact_requantize(b, x, y)
    return _requantize(b, x, y, result_type) if is_int8(x.value) else None


def _reduced_axes(op: Operation, rank: int) -> list[int] | None:
    """The sorted non-negative axes a Reduce* op reduces, from its `axes` attribute or constant
    input ([] when noop_with_empty_axes leaves it nothing to reduce); None when not known at
    compile time or not valid."""
    axes_input = input_value(op, 1) if len(inputs(op)) > 1 else None
    if axes_input is not None:
        axes = constant_value(axes_input)
        if axes is None:
            return None
    else:
        try:
            axes = get_attr(op, "axes")
        except KeyError:  # opset 18 and later: an input
            axes = None
    axes = [] if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)]
    if not axes:
        try:
            noop = get_attr(op, "noop_with_empty_axes")
        except KeyError:
            noop = 0
        return [] if noop else list(range(rank))
    if any(not -rank <= a < rank for a in axes) or len({a % rank for a in axes}) != len(axes):
        return None
    return sorted(a % rank for a in axes)


MOVEMENT_OPS = frozenset({
    "DepthToSpace", "Expand", "Flatten", "Gather", "GatherElements", "GatherND", "GlobalMaxPool", "Identity",
    "MaxPool", "Pad", "ReduceMax", "ReduceMin", "Reshape", "Resize", "Slice", "SpaceToDepth", "Squeeze", "Tile",
    "Transpose", "Unsqueeze",
})
"""Ops that only move, repeat or select (or take the max/min of) their input 0's elements: they
commute with an order-preserving quantization, so they run on the 8-bit tensor itself."""


def _qlinear_average_pool(op: Operation, x: Quantized, y: Quantized, b: Builder) -> SSAValue | None:
    """An AveragePool whose divisor varies (uncounted padding, ceil_mode, auto_pad) →
    `QLinearAveragePool` (com.microsoft's; integer only in quant.py, the divisor counted per
    output position)."""
    if not (requantizable(x, y) and all(constant_value(v) is not None for v in (x.scale, x.zero_point, y.scale))):
        return None
    names = ("auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides")
    if isinstance(op, AveragePoolOp) and any(d != 1 for d in (get_attr(op, "dilations") or [])):
        return None  # QLinearAveragePool has no dilations
    properties = {k: v for k, v in op.properties.items() if k in names}
    pool = QLinearAveragePoolOp.from_onnx([x.value, x.scale, x.zero_point, y.scale, y.zero_point], [int8_result(op, y)], properties)
    return b.insert(pool)


def fold_unchanged(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    """MOVEMENT_OPS: the same op on the 8-bit tensor, then, where the DQ and Q parameters
    differ, a requantization, ties to even (`_requantize_to_even`). Pad's constant value is
    quantized in x's parameters (absent, it is x's zero point: a float 0); Resize only in
    nearest mode."""
    x = _dequantized(input_value(op, 0))
    if x is None or not x.is_per_tensor or not (is_int8(x.value) or (is_8_or_16_bit(x.value) and op.name in WIDE_FOLDS)):
        return None
    if op.name == "onnx.Resize" and get_attr(op, "mode") != "nearest":
        return fold_interpolating_resize(op, x, y, b)
    same = x.same_parameters(y)
    if not same and not requantizable(x, y):
        return None
    rest = inputs(op)[1:]
    if op.name == "onnx.Pad":
        rest = [*rest, None, None][:3]
        value = np.zeros(()) if rest[1] is None else constant_value(rest[1])
        scale, zero_point = constant_value(x.scale), constant_value(x.zero_point)
        if value is None or scale is None or zero_point is None:
            return None
        rest[1] = b.constant(_quantize_bound(value.reshape(()), scale, zero_point), _element_type(x.value), "pad")
        while rest and rest[-1] is None:
            rest.pop()
    result_type = TensorType(_element_type(x.value), op.results[0].type.get_shape())
    value = b.op(op.name.removeprefix("onnx."), [x.value, *rest], result_type, dict(op.properties))
    if same:
        return value
    return _requantize_to_even(b, Quantized(value, x.scale, x.zero_point, 0), y, int8_result(op, y))


def fold_interpolating_resize(op: Operation, x: Quantized, y: Quantized, b: Builder) -> SSAValue | None:
    """Resize in linear or cubic mode of a per-tensor DQ'd 8-bit tensor, with constant roi,
    scales and sizes, into a Q of the same type → the Resize on the 8-bit tensor marked with
    `REQUANTIZE` [x_zp, y_zp, x_scale / y_scale]: integer interpolation on the
    zero-point-shifted codes and one requantization in onnx-to-uop (`emit_requantized_resize`).
    The interpolation weights of each output sum to 1, so the zero point passes through them.
    tf_crop_and_resize (its extrapolated positions have a float value) stays float."""
    if get_attr(op, "coordinate_transformation_mode") == "tf_crop_and_resize":
        return None
    rest = inputs(op)[1:]
    if any(value is not None and constant_value(value) is None for value in rest):
        return None
    scales = [constant_value(v) for v in (x.scale, x.zero_point, y.scale, y.zero_point)]
    if any(v is None or v.size != 1 for v in scales):
        return None
    x_scale, x_zero, y_scale, y_zero = (v.reshape(-1)[0] for v in scales)
    if x_zero.dtype != y_zero.dtype:
        return None  # Resize keeps its element type
    ratio = float(x_scale / y_scale)
    result_type = TensorType(_element_type(x.value), op.results[0].type.get_shape())
    value = b.op("Resize", [x.value, *rest], result_type, dict(op.properties))
    value.owner.attributes[REQUANTIZE] = requantize_attr(int(x_zero), int(y_zero), ratio)
    return value


def in_output_parameters(xs: list[Quantized | None], y: Quantized, b: Builder) -> list[SSAValue] | None:
    """The 8-bit tensors xs in y's parameters: each one per tensor, of y's element type,
    requantized where its own parameters differ; None if one is not (or is None)."""
    if any(x is None or not x.is_per_tensor or _element_type(x.value) != _element_type(y.zero_point) for x in xs):
        return None
    if not all(x.same_parameters(y) or requantizable(x, y) for x in xs):
        return None
    parts = [
        x.value if x.same_parameters(y) else _requantize_to_even(b, x, y, _int8_tensor(y, x.value.type.get_shape()))
        for x in xs
    ]
    return None if any(p is None for p in parts) else parts  # a 16-bit one with run-time scales


def fold_concat(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    """Concat of DQ'd 8-bit tensors of one type: each input requantized to y's parameters
    where its own differ, then Concat on the 8-bit tensors."""
    parts = in_output_parameters([_dequantized(v) for v in op.operands], y, b)
    if parts is None:
        return None
    return b.op("Concat", parts, int8_result(op, y), dict(op.properties))


def requantizable(x: Quantized, y: Quantized) -> bool:
    """Whether `_requantize` can take x to y's parameters (checked before building anything)."""
    element = _element_type(x.value)
    return all(
        q.is_per_tensor and q.zero_point is not None and _element_type(q.scale) == Float32Type()
        and _element_type(q.zero_point) == element
        for q in (x, y)
    )


def _requantizable_across(x: Quantized, y: Quantized, result: SSAValue) -> bool:
    """Whether Q(DQ(x)) between the two 8-bit types (uint8 to int8 or back) takes
    `_exact_requantize`: per-tensor, positive constant f32 scales, each zero point of its own
    tensor's type (the window sum's QLinearConv reads x and writes y in either type)."""
    if not (is_int8(x.value) and is_int8(result)) or _element_type(x.value) == _element_type(result):
        return False
    for q, element in ((x, _element_type(x.value)), (y, _element_type(result))):
        if not q.is_per_tensor or q.zero_point is None or _element_type(q.scale) != Float32Type():
            return False
        if _element_type(q.zero_point) != element or constant_value(q.zero_point) is None:
            return False
        scale = constant_value(q.scale)
        if scale is None or not scale.reshape(-1)[0] > 0:
            return False
    return 0 not in x.value.type.get_shape()


def _quantize_bound(bound: np.ndarray, scale: np.ndarray, zero_point: np.ndarray) -> np.ndarray:
    """A float bound quantized as QuantizeLinear would (saturated to the zero point's type)."""
    info = np.iinfo(zero_point.dtype)
    q = np.round(bound.astype(np.float32) / scale.reshape(())) + zero_point.reshape(())
    return np.clip(q, info.min, info.max).astype(zero_point.dtype).reshape(())


def fold_activation(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    """Relu → Clip(x, zp); Clip(lo, hi) → Clip(x, q(lo), q(hi)), bounds quantized with y's
    constant parameters. When x's DQ parameters differ from y's, x is requantized to y's first
    (`_requantize_to_even`, ties to even as DQ → Q rounds): Q_y is monotone and saturating, so Q_y(clip(v, lo, hi)) =
    clip(Q_y(v), Q_y(lo), Q_y(hi)). By the same identity an activation fused after a foldable
    op with no Q between (Conv → Relu → Q, as PyTorch and tf2onnx write fused activations)
    folds that op into y's parameters, then clips."""
    scale, zero_point = constant_value(y.scale), constant_value(y.zero_point)
    given = [1, 2] if op.name == "onnx.Clip" else []
    bounds = [np.array(0.0)] if op.name == "onnx.Relu" else [constant_value(input_value(op, i)) for i in given]
    if scale is None or zero_point is None or any(v is None and input_value(op, i) is not None for i, v in zip(given, bounds)):
        return None  # a bound computed at run time
    x = _dequantized(input_value(op, 0))
    if x is not None:
        if not is_8_or_16_bit(x.value) or not (x.same_parameters(y) or requantizable(x, y)):
            return None
        value = x.value if x.same_parameters(y) else _requantize_to_even(b, x, y, int8_result(op, y))
        if value is None:
            return None
    else:
        value = _fold_producer(input_value(op, 0), y, b)
        if value is None:
            return None
    element = _element_type(value)
    limits = [None if v is None else b.constant(_quantize_bound(v, scale, zero_point), element, "bound") for v in bounds]
    return b.op("Clip", [value, *limits], int8_result(op, y))


_FUSED_PRODUCERS = ("onnx.Conv", "onnx.Gemm", "onnx.MatMul", "onnx.Add")
"""Ops whose output an activation may read with no QuantizeLinear between."""


def _fold_producer(value: SSAValue, y: Quantized, b: Builder) -> SSAValue | None:
    """The op producing `value` (read only there) folded into y's parameters, or None."""
    producer = value.owner
    if not isinstance(producer, Operation) or producer.name not in _FUSED_PRODUCERS or value.uses.get_length() != 1:
        return None
    return FOLDS[producer.name](producer, y, Builder(b.rewriter, b.anchor, producer.location))


def _fold_qlinear_binary(op: Operation, y: Quantized, b: Builder, op_class, accepts, wide: bool = False) -> SSAValue | None:
    """A binary op of two DQ'd int8 tensors of one type (16-bit too if `wide`) → `op_class`
    (QLinearAdd, QLinearMul), when `accepts(x, w, y)`."""
    x, w = _dequantized(input_value(op, 0)), _dequantized(input_value(op, 1))
    if x is None or w is None or not accepts(x, w, y):
        return None
    if not ((is_8_or_16_bit if wide else is_int8)(x.value) and _element_type(x.value) == _element_type(w.value)):
        return None
    folded = op_class.from_onnx(
        [x.value, x.scale, x.zero_point, w.value, w.scale, w.zero_point, y.scale, y.zero_point],
        [int8_result(op, y)],
    )
    return b.insert(folded)


def fold_add(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    """Add of two DQ'd 8- or 16-bit tensors (a 16x8 model's residual Add) → `QLinearAdd`
    (integer-only lowering in quant.py)."""
    return _fold_qlinear_binary(
        op, y, b, QLinearAddOp,
        lambda x, w, y: all(q.is_per_tensor and q.zero_point is not None for q in (x, w, y)), wide=True,
    )


def fold_mul(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    """Mul of two DQ'd int8 tensors → `QLinearMul` (integer-only lowering in quant_elementwise.py)."""
    return _fold_qlinear_binary(
        op, y, b, QLinearMulOp,
        lambda x, w, y: requantizable(x, y) and requantizable(w, y),
    )


def fold_sub(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    """Sub of two DQ'd int8 tensors → `QLinearAdd` of A and B with B's scale negated (a constant
    made here): dequantize(B) with scale -s is -dequantize(B)."""
    x, w = _dequantized(input_value(op, 0)), _dequantized(input_value(op, 1))
    scale = None if w is None else constant_value(w.scale)
    if x is None or scale is None or not all(q.is_per_tensor and q.zero_point is not None for q in (x, w, y)):
        return None
    if not (is_8_or_16_bit(x.value) and _element_type(x.value) == _element_type(w.value)):
        return None
    negated = b.constant(-scale, _element_type(w.scale), "negated_scale")
    folded = QLinearAddOp.from_onnx(
        [x.value, x.scale, x.zero_point, w.value, negated, w.zero_point, y.scale, y.zero_point], [int8_result(op, y)]
    )
    return b.insert(folded)


def fold_min_max(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    """Max / Min of DQ'd 8-bit tensors: each requantized to y's parameters where they differ
    (Q_y is monotone), then the op on the 8-bit tensors."""
    parts = in_output_parameters([_dequantized(v) for v in op.operands], y, b)
    if parts is None:
        return None
    return b.op(op.name.removeprefix("onnx."), parts, int8_result(op, y))


LOOKUP_OPS = frozenset({
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Celu", "Cos", "Cosh", "Elu", "Erf",
    "Exp", "Floor", "Gelu", "HardSigmoid", "HardSwish", "LeakyRelu", "Log", "Mish", "Neg", "Reciprocal",
    "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Tan",
    "Tanh", "ThresholdedRelu",
    # Binary: each operand a value of the region or a one-element constant.
    "Add", "Div", "Max", "Min", "Mul", "Pow", "PRelu", "Sub",
})
"""Element-wise float ops a 256-entry table replaces between a per-tensor DQ and Q (alone, or
with others and Relu / Clip in an `_elementwise_region`)."""


def _elementwise_region(root: Operation) -> tuple[Quantized, list[Operation]] | None:
    """The element-wise ops (LOOKUP_OPS, Relu, Clip) computing `root`'s result from one
    per-tensor DQ'd 8-bit tensor and one-element constants, in topological order, `root` last:
    a single Sigmoid, or x · sigmoid(x), HardSwish spelled x · clip(x + 3, 0, 6) / 6 … None
    when `root` is no such function of one DQ, or an inner value is read outside."""
    dequantize: list[Operation] = []
    order: list[Operation] = []
    seen: set[Operation] = set()

    def visit(value: SSAValue) -> bool:
        owner = value.owner
        if not isinstance(owner, Operation):
            return False
        if owner.name == "onnx.DequantizeLinear":
            dequantize.append(owner)
            return owner is dequantize[0]
        if owner.name == "onnx.Constant":
            constant = constant_value(value)
            return constant is not None and constant.size == 1
        if owner.name.removeprefix("onnx.") not in REGION_OPS or len(owner.results) != 1:
            return False
        if owner not in seen:
            seen.add(owner)
            if not all(visit(v) for v in owner.operands):
                return False
            order.append(owner)
        return True

    if not visit(root.results[0]) or not dequantize:
        return None
    x = Quantized.of(dequantize[0])
    if not is_int8(x.value) or not x.is_per_tensor or x.zero_point is None:
        return None
    shape = x.value.type.get_shape()
    if any(op.results[0].type.get_shape() != shape for op in order):
        return None  # a broadcast: not one value per input element
    if any(use.operation not in seen for op in order[:-1] for use in op.results[0].uses):
        return None
    return x, order


REGION_OPS = LOOKUP_OPS | {"Relu", "Clip"}
"""The element-wise ops an `_elementwise_region` may hold."""


def lookup_table(ops: list[Operation], x: Quantized, y: Quantized) -> np.ndarray | None:
    """Q_y(f(DQ_x(v))) for each of the 256 values v of x's type (lowest first), f the region
    `ops` (topological order, the result last), as the ONNX reference evaluates it; None unless
    the parameters are constants."""
    from onnx import helper, numpy_helper

    initializers = []
    names: dict[SSAValue, str] = {}

    def name(value: SSAValue | None) -> str:
        if value is None:
            return ""
        if value not in names:
            owner = value.owner
            names[value] = "f" if owner.name == "onnx.DequantizeLinear" else f"v{len(names)}"
            if owner.name == "onnx.Constant":
                initializers.append(numpy_helper.from_array(constant_value(value), names[value]))
        return names[value]

    nodes = []
    for op in ops:
        attributes = {n: get_attr(op, n) for n in op.properties if n in op.spec().schema.attributes}
        operands = [name(v) for v in inputs(op)]
        while operands and not operands[-1]:
            operands.pop()
        nodes.append(helper.make_node(op.name.removeprefix("onnx."), operands, [name(op.results[0])], **attributes))
    return _quantized_table(nodes, name(ops[-1].results[0]), initializers, x, y)


def operator_table(op_type: str, attributes: dict, x: Quantized, y: Quantized) -> np.ndarray | None:
    """Q_y(op_type(DQ_x(v))) for each of the 256 values v of x's type (lowest first), the ONNX
    operator `op_type` with `attributes` (com.microsoft's QLinearSigmoid is Sigmoid's table);
    None unless the parameters are constants."""
    from onnx import helper

    return _quantized_table([helper.make_node(op_type, ["f"], ["r"], **attributes)], "r", [], x, y)


def _quantized_table(nodes: list, result: str, initializers: list, x: Quantized, y: Quantized) -> np.ndarray | None:
    """The float `nodes` (reading "f", computing `result`) between DQ_x and Q_y, evaluated by
    the ONNX reference on the 256 values of x's type; None unless the parameters are constants."""
    from onnx import helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    params = [constant_value(v) for v in (x.scale, x.zero_point, y.scale, y.zero_point)]
    if any(p is None for p in params):
        return None
    initializers = [*(numpy_helper.from_array(a, n) for a, n in zip(params, ["xs", "xz", "ys", "yz"])), *initializers]
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["f"]), *nodes,
        helper.make_node("QuantizeLinear", [result, "ys", "yz"], ["y"]),
    ]
    x_type, y_type = (helper.np_dtype_to_tensor_dtype(a.dtype) for a in (params[1], params[3]))
    graph = helper.make_graph(
        nodes, "lookup", [helper.make_tensor_value_info("x", x_type, [256])],
        [helper.make_tensor_value_info("y", y_type, [256])], initializers,
    )
    values = np.arange(256) + np.iinfo(params[1].dtype).min
    (table,) = ReferenceEvaluator(helper.make_model(graph)).run(None, {"x": values.astype(params[1].dtype)})
    return table.reshape(256)


def fold_lookup_table(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    """An element-wise function of one per-tensor DQ'd 8-bit tensor (`_elementwise_region`:
    one op of LOOKUP_OPS, or several with Relu / Clip) → `LookupTable`, the table
    `lookup_table` computes at compile time: exact where the float ops are."""
    region = _elementwise_region(op)
    if region is None:
        return None
    x, ops = region
    table = lookup_table(ops, x, y)
    if table is None:
        return None
    table_value = b.constant(table, _element_type(y.zero_point), "table")
    return b.insert(LookupTableOp.from_onnx([x.value, table_value], [int8_result(op, y)]))


def fold_softmax(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
    """Softmax of a per-tensor DQ'd 8-bit tensor → `QLinearSoftmax` of the same type (integer
    only in quant.py: an exp table over max - x, an int64 sum, a division)."""
    x = _dequantized(input_value(op, 0))
    return None if x is None else softmax(op, x, y, b)


def softmax(op: Operation, x: Quantized, y: Quantized, b: Builder) -> SSAValue | None:
    """The Softmax (or QLinearSoftmax) `op` of the 8-bit x into y's parameters → `QLinearSoftmax`
    along op's axis, with constant per-tensor scales; None otherwise."""
    if not is_8_or_16_bit(x.value) or _element_type(x.value) != _element_type(y.zero_point):
        return None
    if not requantizable(x, y) or any(constant_value(v) is None for v in (x.scale, y.scale)):
        return None
    folded = QLinearSoftmaxOp.from_onnx(
        [x.value, x.scale, x.zero_point, y.scale, y.zero_point], [int8_result(op, y)],
        {"axis": IntegerAttr(get_attr(op, "axis"), 64)},
    )
    return b.insert(folded)


def _first(*folds: Fold) -> Fold:
    """The first of `folds` that folds."""

    def fold(op: Operation, y: Quantized, b: Builder) -> SSAValue | None:
        for candidate in folds:
            folded = candidate(op, y, b)
            if folded is not None:
                return folded
        return None

    return fold


def _int8_tensor(y: Quantized, shape) -> TensorType:
    """A tensor of `shape` of the type y's zero point quantizes to."""
    return TensorType(_element_type(y.zero_point), shape)


def int8_result(op: Operation, y: Quantized) -> TensorType:
    return _int8_tensor(y, op.results[0].type.get_shape())


FOLDS: dict[str, Fold] = {
    "onnx.Conv": fold_conv,
    "onnx.Gemm": fold_gemm,
    "onnx.MatMul": fold_matmul,
    "onnx.Add": _first(fold_add, fold_matmul_bias, fold_lookup_table),
    "onnx.Mul": _first(fold_mul, fold_lookup_table),
    "onnx.Sub": _first(fold_sub, fold_lookup_table),
    "onnx.Max": _first(fold_min_max, fold_lookup_table),
    "onnx.Min": _first(fold_min_max, fold_lookup_table),
    "onnx.AveragePool": fold_average_pool,
    "onnx.GlobalAveragePool": _first(fold_average_pool, fold_conv_relu_mean),
    "onnx.ReduceMean": _first(fold_reduce_sum, fold_conv_relu_mean),
    "onnx.ReduceSum": _first(fold_reduce_sum, fold_conv_relu_mean),
    "onnx.Concat": fold_concat,
    "onnx.Softmax": fold_softmax,
    **{f"onnx.{name}": fold_unchanged for name in MOVEMENT_OPS},
    **{f"onnx.{name}": fold_extreme for name in ("ReduceMax", "ReduceMin", "GlobalMaxPool")},
    "onnx.Relu": _first(fold_activation, fold_lookup_table),
    "onnx.Clip": _first(fold_activation, fold_lookup_table),
    **{f"onnx.{name}": fold_lookup_table for name in LOOKUP_OPS if name not in ("Add", "Max", "Min", "Mul", "Sub")},
}
"""The float op between DQ and Q → how it folds."""

WIDE_FOLDS = frozenset({
    "onnx.ReduceMean", "onnx.ReduceSum", "onnx.ReduceMax", "onnx.ReduceMin", "onnx.GlobalMaxPool",
    "onnx.GlobalAveragePool", "onnx.Conv", "onnx.Gemm", "onnx.MatMul", "onnx.AveragePool", "onnx.Softmax",
    "onnx.Add", "onnx.Sub", "onnx.Relu", "onnx.Clip", "onnx.Concat", "onnx.Max", "onnx.Min",
    *(f"onnx.{name}" for name in MOVEMENT_OPS if name != "Resize"),
})
"""The folds that take 16-bit tensors too (an int32 or int64 sum, the op on the integers, or
16x8 quantization's layers: a 16-bit activation times 8-bit weights)."""


class FoldQuantizeLinear(RewritePattern):
    """Rooted at a QuantizeLinear: fold the op producing its input (see FOLDS), or cancel a DQ
    with equal parameters."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "onnx.QuantizeLinear":
            return
        y = Quantized.of(op)
        if y.zero_point is None or not y.is_per_tensor or not is_8_or_16_bit(op.results[0]):
            return
        source = op.operands[0].owner
        if not isinstance(source, Operation):
            return
        if not is_int8(op.results[0]) and source.name not in WIDE_FOLDS:
            return  # 16-bit: the reductions only
        if source.name == "onnx.DequantizeLinear":
            x = Quantized.of(source)
            if x.same_parameters(y) and x.value.type == op.results[0].type:
                rewriter.replace(op, [], [x.value])
            elif is_8_or_16_bit(x.value) and x.zero_point is not None and requantizable(x, y):
                requantized = _requantize_to_even(Builder(rewriter, op), x, y, op.results[0].type)
                if requantized is not None:  # None: 16-bit with run-time scales
                    rewriter.replace(op, [], [requantized])
            elif _requantizable_across(x, y, op.results[0]):  # uint8 <-> int8 (Brevitas' ReLU → signed)
                rewriter.replace(op, [], [_exact_requantize(Builder(rewriter, op), x, y)])
            return
        fold = FOLDS.get(source.name)
        if fold is None or source.results[0].uses.get_length() != 1 or len(source.results) != 1:
            return
        if source.name in _BINARY and _read_quantized_siblings(source, rewriter):
            return  # operands rewritten: the walker comes back to this op
        # The int8 op stands for the float op: it has that op's location (its node's name).
        folded = fold(source, y, Builder(rewriter, op, source.location))
        if folded is None:
            return
        rewriter.replace(op, [], [folded])
        _erase_with_dead_producers(source, rewriter)


class FoldGemmToFloatOutput(RewritePattern):
    """A Gemm (alpha = beta = 1, not transA, 2-D) of a per-tensor DQ'd 8-bit x and constant DQ'd
    8-bit weights (per tensor or per output column), with an optional constant bias, whose float
    result is a graph output and nothing else (PT2E's last Linear: quantized inputs, float
    output) → `MatMulInteger`'s int32 sums, scaled by 2^f and plus the bias in units of
    x_scale · w_scale[n] / 2^f (f as `_fraction_bits` leaves int32 room), and one
    `DequantizeLinear` of them (scale x_scale · w_scale[n] / 2^f per column) writing the output:
    no float tensor left in scratch. Equal to the float Gemm within float32 rounding."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "onnx.Gemm" or not op.results[0].uses or any(u.operation.name != "func.return" for u in op.results[0].uses):
            return
        if get_attr(op, "alpha") != 1.0 or get_attr(op, "beta") != 1.0 or get_attr(op, "transA"):
            return
        x, w = _dequantized(input_value(op, 0)), _dequantized(input_value(op, 1), constant=True)
        if x is None or w is None or not x.is_per_tensor or not is_int8(x.value) or not is_int8(w.value):
            return
        if x.value.type.get_num_dims() != 2 or w.value.type.get_num_dims() != 2:
            return
        transposed = bool(get_attr(op, "transB"))
        if not w.is_per_tensor and w.axis % 2 != (0 if transposed else 1):
            return
        weights = constant_value(w.value)
        weights = weights.T if transposed else weights  # [K, N]
        columns = weights.shape[1]
        scales = [constant_value(v) for v in (x.scale, w.scale)]
        zero_points = [constant_value(v) for v in (x.zero_point, w.zero_point)]
        if any(v is None for v in (*scales, *zero_points)) or any(not np.all(s > 0) for s in scales):
            return
        if _element_type(x.scale) != Float32Type() or _element_type(op.results[0]) != Float32Type():
            return
        b = Builder(rewriter, op)
        units = _bias_units(input_value(op, 2), columns, x, w, b)
        if units is None:
            return
        w_zero = np.broadcast_to(zero_points[1].astype(np.int64).reshape(-1), (columns,))
        fraction = _fraction_bits(zero_points[0], (weights.astype(np.int64) - w_zero).T, units)
        if fraction is None:
            return
        int32 = IntegerType(32)
        rows = x.value.type.get_shape()[0]
        shape = [rows, columns]
        w_value = b.constant(np.ascontiguousarray(weights), _element_type(w.value), "weight")
        w_zp = b.constant(np.ascontiguousarray(w_zero.astype(zero_points[1].dtype)), _element_type(w.zero_point), "weight_zero_point")
        acc = b.op("MatMulInteger", [x.value, w_value, x.zero_point, w_zp], TensorType(int32, shape))
        if fraction:
            acc = b.op("Mul", [acc, b.constant(np.array([[2**fraction]], np.int32), int32, "fraction")], TensorType(int32, shape))
        bias = np.round(units * 2.0**fraction)
        if np.any(bias):
            acc = b.op("Add", [acc, b.constant(bias.astype(np.int32), int32, "bias")], TensorType(int32, shape))
        unit = (scales[0].astype(np.float64).reshape(-1) * np.broadcast_to(scales[1].astype(np.float64).reshape(-1), (columns,))) / 2.0**fraction
        scale = b.constant(unit.astype(np.float32), Float32Type(), "scale")
        zero = b.constant(np.zeros(columns, np.int32), int32, "zero")
        y = b.op("DequantizeLinear", [acc, scale, zero], op.results[0].type, {"axis": IntegerAttr(1, 64)})
        rewriter.replace(op, [], [y])


def _erase_with_dead_producers(op: Operation, rewriter: PatternRewriter) -> None:
    """Erase `op`, then every onnx op it read that nothing else reads any more (the MatMul of
    fold_matmul_bias, a lookup table's inner ops, a fused activation's Conv)."""
    work = [op]
    while work:
        current = work.pop()
        producers = [v.owner for v in current.operands if isinstance(v.owner, Operation)]
        rewriter.erase(current)
        for producer in producers:
            if producer.name.startswith("onnx.") and producer.parent is not None and not any(r.uses for r in producer.results):
                if producer not in work:
                    work.append(producer)


_BINARY = ("onnx.Add", "onnx.Mul", "onnx.Sub")


def _sibling_quantize(value: SSAValue, before: Operation) -> Operation | None:
    """A per-tensor int8 QuantizeLinear of the float `value` that can stand before `before` (in
    `before`'s block, and either already before it or with operands that are)."""
    block = before.parent_block()
    for use in value.uses:
        q = use.operation
        if q.name != "onnx.QuantizeLinear" or q.parent_block() is not block or use.index != 0:
            continue
        params = Quantized.of(q)
        if params.zero_point is None or not params.is_per_tensor or not is_int8(q.results[0]):
            continue
        if block.get_operation_index(q) < block.get_operation_index(before):
            return q
        if all(
            not isinstance(o.owner, Operation)
            or (o.owner.parent_block() is block and block.get_operation_index(o.owner) < block.get_operation_index(before))
            for o in q.operands
        ):
            q.detach()
            block.insert_op_before(q, before)
            return q
    return None


def _clip_in_own_parameters(
    activation: Operation, value: SSAValue, op: Operation, index: int, rewriter: PatternRewriter
) -> bool:
    """Operand `index` of `op`, the float output of a Relu / Clip of DQ(x), becomes DQ(clip of x
    with bounds quantized in x's own parameters): equal to the float value but where it
    saturates at a bound off x's grid (by at most half a step of x's scale)."""
    x = _dequantized(input_value(activation, 0))
    if x is None or not is_int8(x.value) or constant_value(x.scale) is None or constant_value(x.zero_point) is None:
        return False
    b = Builder(rewriter, op)
    clipped = fold_activation(activation, x, b)
    if clipped is None:
        return False
    dq = onnx_op_class("DequantizeLinear").from_onnx([clipped, x.scale, x.zero_point], [value.type], {}, {})
    b.insert(dq)
    op.operands[index] = dq.results[0]
    return True


def _read_quantized_siblings(op: Operation, rewriter: PatternRewriter) -> bool:
    """QOperator models feed a residual Add the float output of an activation that a
    QuantizeLinear also reads (ReLU6 → Q → QLinearConv, and → Add). Such an operand, when a
    Relu / Clip of a DQ, becomes the DQ of an int8 Clip in the DQ's parameters
    (`_clip_in_own_parameters`); another becomes DQ(that Q), as the QDQ form of the graph reads
    it (a change of at most half a step of the Q's scale). Then the activation has one reader
    and folds, and so does the Add. Whether an operand changed."""
    changed = False
    for index, value in enumerate(op.operands):
        owner = value.owner
        if not isinstance(owner, Operation) or owner.name in ("onnx.DequantizeLinear", "onnx.Constant"):
            continue
        if owner.name in ("onnx.Relu", "onnx.Clip") and _clip_in_own_parameters(owner, value, op, index, rewriter):
            changed = True
            continue
        q = _sibling_quantize(value, op)
        if q is None:
            continue
        params = Quantized.of(q)
        dq = onnx_op_class("DequantizeLinear").from_onnx(
            [q.results[0], params.scale, params.zero_point], [value.type], {}, {}
        )
        dq.location = q.location
        rewriter.insert(dq, InsertPoint.before(op))
        op.operands[index] = dq.results[0]
        changed = True
    if changed:
        rewriter.handle_operation_modification(op)
    return changed


_LAYOUT_OPS = frozenset({"Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze"})
"""Movement ops that only lay a tensor out anew: on a constant, done at compile time."""


_SINKABLE = (MOVEMENT_OPS - {"Pad"}) | {"Split"}
"""Ops a DQ sinks below (Pad's value would need quantizing)."""


class SinkDequantize(RewritePattern):
    """op(DQ(x)) → DQ(op(x)) for a data-movement op (MOVEMENT_OPS but Pad, Resize only nearest,
    and Split, one DQ per part) that no QuantizeLinear reads: it commutes with dequantization, so exporters' Transposes and
    Reshapes between a DQ and a Conv (tf2onnx's NHWC edges, a weight laid out at run time) no
    longer hide the DQ from the folds. A per-axis DQ (weights) sinks through Transpose only,
    its axis permuted."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        name = op.name.removeprefix("onnx.")
        if name not in _SINKABLE or (name != "Split" and len(op.results) != 1):
            return
        if name == "Resize" and get_attr(op, "mode") != "nearest":
            return
        if name != "Split" and any(use.operation.name == "onnx.QuantizeLinear" for use in op.results[0].uses):
            return  # FoldQuantizeLinear folds it
        dq = _owner(input_value(op, 0), "onnx.DequantizeLinear")
        if dq is None:
            return
        x = Quantized.of(dq)
        if not is_int8(x.value) or x.zero_point is None or (dq.properties.get("block_size") and get_attr(dq, "block_size")):
            return
        axis = x.axis
        if not x.is_per_tensor:
            if name != "Transpose" or get_attr(op, "perm") is None:
                return
            axis = get_attr(op, "perm").index(x.axis % x.value.type.get_num_dims())
        b = Builder(rewriter, op)
        if name == "Split":  # several results: FoldQuantizeLinear never sees it, so sink always
            if not x.is_per_tensor:
                return
            types = [TensorType(_element_type(x.value), r.type.get_shape()) for r in op.results]
            split = onnx_op_class("Split").from_onnx([x.value, *inputs(op)[1:]], types, dict(op.properties))
            b.insert(split)
            parts = [b.op("DequantizeLinear", [r, x.scale, x.zero_point], old.type) for r, old in zip(split.results, op.results)]
            rewriter.replace(op, [], parts)
            return
        shape = op.results[0].type.get_shape()
        constant = constant_value(x.value)
        if constant is not None and name in _LAYOUT_OPS:  # a weight: laid out at compile time
            array = np.transpose(constant, get_attr(op, "perm")) if name == "Transpose" else constant.reshape(shape)
            moved = b.constant(np.ascontiguousarray(array), _element_type(x.value), "weight")
        else:
            moved = b.op(name, [x.value, *inputs(op)[1:]], TensorType(_element_type(x.value), shape), dict(op.properties))
        properties = {} if x.is_per_tensor else {"axis": IntegerAttr(axis, 64)}
        dequantized = b.op("DequantizeLinear", [moved, x.scale, x.zero_point], op.results[0].type, properties)
        rewriter.replace(op, [], [dequantized])


class UnblockDequantize(RewritePattern):
    """A blocked DequantizeLinear (`block_size`, ONNX's blocked quantization) of a constant
    whose constant scales and zero points are one value, or vary along one axis only, becomes
    the per-tensor or per-axis DequantizeLinear of the same values, which the Conv, Gemm and
    MatMul folds take. Blocked scales that vary along two axes (the usual case: blocks along a
    reduction) cannot requantize one int32 sum; such a DQ stays, and its layer float."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "onnx.DequantizeLinear" or not _block_size(op):
            return
        q = Quantized.of(op)
        if q.zero_point is None or constant_value(q.value) is None:
            return
        params = [constant_value(v) for v in (q.scale, q.zero_point)]
        if any(p is None for p in params):
            return
        shape = q.value.type.get_shape()
        axis, size = q.axis % len(shape), _block_size(op)
        # Each parameter at every index of the tensor: its block's value.
        full = [np.repeat(p, size, axis=axis).take(range(shape[axis]), axis=axis) for p in params]
        for kept in [None, *range(len(shape))]:
            first = tuple(slice(None) if a == kept else slice(0, 1) for a in range(len(shape)))
            if all(np.array_equal(np.broadcast_to(f[first], f.shape), f) for f in full):
                break
        else:
            return
        b = Builder(rewriter, op)
        scale, zero_point = (
            b.constant(np.ascontiguousarray(f[first].reshape(() if kept is None else (-1,))), _element_type(v), hint)
            for f, v, hint in zip(full, (q.scale, q.zero_point), ("scale", "zero_point"))
        )
        properties = {} if kept is None else {"axis": IntegerAttr(kept, 64)}
        rewriter.replace(op, [], [b.op("DequantizeLinear", [q.value, scale, zero_point], op.results[0].type, properties)])


class MarkFixedPoint(RewritePattern):
    """QLinearConv / QLinearMatMul with constant scales requantize in fixed point."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name not in ("onnx.QLinearConv", "onnx.QLinearMatMul") or FIXED_POINT in op.attributes:
            return
        # Both ops take (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, …).
        if all(constant_value(input_value(op, i)) is not None for i in (1, 4, 6)):
            op.attributes[FIXED_POINT] = UnitAttr()
            rewriter.handle_operation_modification(op)


def _erase_dead(module: ModuleOp) -> None:
    """DequantizeLinear ops and constants nothing reads any more."""
    for op in reversed(list(module.walk())):
        if op.name in ("onnx.DequantizeLinear", "onnx.Constant") and not any(r.uses for r in op.results):
            op.detach()
            op.erase()


def unfolded_ops(module: ModuleOp) -> list[Operation]:
    """Float ops still computing on a DequantizeLinear's output (left in float)."""
    return [
        use.operation
        for op in module.walk()
        if op.name == "onnx.DequantizeLinear"
        for use in op.results[0].uses
        if use.operation.name != "func.return"
    ]


@dataclass(frozen=True)
class FoldQdqPass(ModulePass):
    """Fold DQ → op → Q into integer ops (see the module docstring)."""

    name = "fold-qdq"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([UnblockDequantize(), FoldQuantizeLinear(), SinkDequantize(), MarkFixedPoint(), FoldGemmToFloatOutput()]), apply_recursively=True).rewrite_module(op)
        _erase_dead(op)


__all__ = ["FOLDS", "FoldQdqPass", "unfolded_ops"]
