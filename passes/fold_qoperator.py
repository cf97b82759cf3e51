"""`fold-qoperator`: onnxruntime's com.microsoft QLinear ops → the integer ops `fold-qdq` makes.

`quantize_static` in QOperator format writes QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearLeakyRelu, QLinearSoftmax, QLinearConcat, QLinearAveragePool, QLinearGlobalAveragePool
and QGemm in the com.microsoft domain; the importer makes each the onnx-dialect op of that name.
Each is defined by onnxruntime as "dequantize the inputs, run the float op, quantize the
output". This pass rewrites each straight into the integer form `fold-qdq` gives that
definition (`fold-qdq`'s own helpers build it, so both formats compile alike):

* QLinearSigmoid, QLinearLeakyRelu (alpha ≠ 1) → `LookupTable`, the table of the definition
  computed at compile time;
* QLinearGlobalAveragePool, QLinearAveragePool → a window sum (a depthwise `QLinearConv` of
  ones marked `zant.average_count`), or `QLinearAveragePool` where the divisor varies;
* QLinearConcat → Concat of the inputs requantized to the output's parameters;
* QLinearSoftmax → `QLinearSoftmax` with opset 13 semantics (the same along the last axis);
* QGemm with an output scale (alpha 1, A not transposed, B and C constants) → a 1×1
  `QLinearConv` between two Reshapes.

QLinearAdd, QLinearMul and QLinearLeakyRelu with alpha = 1 (a requantization) are already the
integer ops `onnx-to-uop` lowers, and stay. An op whose integer form does not apply (run-time
scales, a per-channel activation …), and QGemm without an output scale (its output is float),
becomes its definition, DequantizeLinear → float op → QuantizeLinear (`expand`), for `fold-qdq`
and the float lowerings. The pass runs before `fold-qdq`, which never makes an op this pass
rewrites, so running it again changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, IntegerAttr, IntegerType, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from zant.dialects.onnx import (
    LookupTableOp,
    OnnxOp,
    QGemmOp,
    QLinearAddOp,
    QLinearConcatOp,
    QLinearLeakyReluOp,
    QLinearMulOp,
    QLinearSigmoidOp,
    QLinearSoftmaxOp,
    QLINEAR_DEFINITIONS,
    get_attr,
    inputs,
)
from zant.dialects.onnx_base import SEGMENT_PROPERTIES
from zant.errors import ZantError
from zant.passes.fold_qdq import (
    Builder,
    Quantized,
    average_pool,
    constant_value,
    gemm_as_conv,
    in_output_parameters,
    is_int8,
    operator_table,
    softmax,
)
from zant.passes.onnx_to_uop.base import node_label


KEPT = (QLinearAddOp, QLinearMulOp)
"""Ops of QLINEAR_DEFINITIONS already in the integer form onnx-to-uop lowers."""


def _triples(op: OnnxOp) -> list[tuple[int, int, int]]:
    return QLINEAR_DEFINITIONS[type(op)].triples(len(inputs(op)))


def _quantized(op: OnnxOp, value: int, scale: int, zero_point: int, axis: int = 1) -> Quantized:
    values = inputs(op)
    return Quantized(values[value], values[scale], values[zero_point], axis)


def _output(op: OnnxOp) -> Quantized | None:
    """The output's parameters, None when the op has none (QGemm with a float output)."""
    scale, zero_point = QLINEAR_DEFINITIONS[type(op)].output
    values = inputs(op)
    if scale >= len(values) or values[scale] is None:
        return None
    return Quantized(op.results[0], values[scale], values[zero_point], 1)


def _weight_axis(op: QGemmOp) -> int:
    """The axis of B that a per-channel b_scale varies along: N's."""
    return 0 if get_attr(op, "transB") else 1


def _table(op: OnnxOp, x: Quantized, y: Quantized, b: Builder) -> SSAValue | None:
    attributes = {"alpha": get_attr(op, "alpha")} if isinstance(op, QLinearLeakyReluOp) else {}
    if not x.is_per_tensor or not is_int8(x.value):
        return None
    table = operator_table(QLINEAR_DEFINITIONS[type(op)].op, attributes, x, y)
    if table is None:
        return None
    table_value = b.constant(table, y.zero_point.type.get_element_type(), "table")
    return b.insert(LookupTableOp.from_onnx([x.value, table_value], [op.results[0].type]))


def _pool(op: OnnxOp, x: Quantized, y: Quantized, b: Builder) -> SSAValue | None:
    return average_pool(op, x, y, b) if x.is_per_tensor and is_int8(x.value) else None


def _concat(op: QLinearConcatOp, y: Quantized, b: Builder) -> SSAValue | None:
    parts = in_output_parameters([_quantized(op, *t) for t in _triples(op)], y, b)
    if parts is None:
        return None
    return b.op("Concat", parts, op.results[0].type, {"axis": IntegerAttr(get_attr(op, "axis"), 64)})


def _gemm(op: QGemmOp, y: Quantized, b: Builder) -> SSAValue | None:
    if get_attr(op, "alpha") != 1.0 or get_attr(op, "transA"):
        return None
    x = _quantized(op, 0, 1, 2)
    w = _quantized(op, 3, 4, 5, _weight_axis(op))
    if constant_value(w.value) is None:
        return None
    c = inputs(op)[6]

    def bias(columns: int) -> tuple[bool, SSAValue | None]:
        """C, already int32 in a_scale · b_scale, when it is a constant of one value per column."""
        if c is None:
            return True, None
        constant = constant_value(c)
        return constant is not None and constant.size == columns, c

    return gemm_as_conv(x, w, bias, bool(get_attr(op, "transB")), y, b)


def _integer_form(op: OnnxOp, y: Quantized, b: Builder) -> SSAValue | None:
    """The integer ops of `op` (see the module docstring), or None when they do not apply."""
    if isinstance(op, QLinearConcatOp):
        return _concat(op, y, b)
    if isinstance(op, QGemmOp):
        return _gemm(op, y, b)
    x = _quantized(op, 0, 1, 2)
    if isinstance(op, QLinearSigmoidOp | QLinearLeakyReluOp):
        return _table(op, x, y, b)
    if isinstance(op, QLinearSoftmaxOp):
        # Before opset 13 Softmax flattened the trailing axes: along the last axis both agree
        # (the importer refuses another axis with those semantics), so the result has opset 13's.
        return softmax(op, x, y, b)
    return _pool(op, x, y, b)


def expand(op: OnnxOp, b: Builder) -> SSAValue:
    """`op` as its definition: DequantizeLinear of each quantized input, the float op with op's
    attributes (but `dropped`), QuantizeLinear into the output's parameters (none for a float
    QGemm). QGemm's C is dequantized in a_scale · b_scale, a constant made here."""
    definition = QLINEAR_DEFINITIONS[type(op)]
    values = inputs(op)
    floats = []
    for value, scale, zero_point in _triples(op):
        axis = {"axis": IntegerAttr(_weight_axis(op), 64)} if isinstance(op, QGemmOp) and value == 3 else {}
        float_type = TensorType(Float32Type(), values[value].type.get_shape())
        floats.append(b.op("DequantizeLinear", [values[value], values[scale], values[zero_point]], float_type, axis))
    if isinstance(op, QGemmOp) and values[6] is not None:
        floats.append(_dequantized_bias(op, b))
    properties = {k: v for k, v in op.properties.items() if k not in definition.dropped and k not in SEGMENT_PROPERTIES}
    y = _output(op)
    float_type = TensorType(Float32Type(), op.results[0].type.get_shape())
    result = b.op(definition.op, floats, float_type, properties)
    if y is None:
        return result
    return b.op("QuantizeLinear", [result, y.scale, y.zero_point], op.results[0].type)


def _dequantized_bias(op: QGemmOp, b: Builder) -> SSAValue:
    a_scale, b_scale = (constant_value(inputs(op)[i]) for i in (1, 4))
    c = inputs(op)[6]
    float_type = TensorType(Float32Type(), c.type.get_shape())
    if a_scale is None or b_scale is None:
        raise ZantError(f"{node_label(op)}: the bias needs constant a_scale and b_scale")
    product = (a_scale.reshape(-1) * b_scale.reshape(-1)).astype(np.float32)
    product = product.reshape(()) if product.size == 1 else product
    scale = b.constant(product, Float32Type(), "bias_scale")
    zero = b.constant(np.zeros(product.shape, np.int32), IntegerType(32), "bias_zero_point")
    axis = {"axis": IntegerAttr(0, 64)} if product.ndim else {}
    return b.op("DequantizeLinear", [c, scale, zero], float_type, axis)


class FoldQOperator(RewritePattern):
    """A com.microsoft op of QLINEAR_DEFINITIONS → its integer form, else its definition."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if type(op) not in QLINEAR_DEFINITIONS or isinstance(op, KEPT):
            return
        if isinstance(op, QLinearLeakyReluOp) and get_attr(op, "alpha") == 1.0:
            return  # a requantization, lowered as it is (fold-qdq makes these)
        b = Builder(rewriter, op)
        y = _output(op)
        folded = None if y is None else _integer_form(op, y, b)
        rewriter.replace(op, [], [folded if folded is not None else expand(op, b)])


@dataclass(frozen=True)
class FoldQOperatorPass(ModulePass):
    """com.microsoft QLinear ops → integer ops (see the module docstring)."""

    name = "fold-qoperator"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldQOperator(), apply_recursively=False).rewrite_module(op)


__all__ = ["FoldQOperatorPass"]
