"""The onnx dialect's discardable attributes: what the importer keeps of the ONNX file, and the
marks Zant's passes set on onnx ops for the lowering. Each is declared here once, with a helper
that reads (and checks) its value where it has one; passes and the interpreter import the names
(from `zant.dialects.onnx`, which re-exports them). This module imports neither onnx nor the op
classes, so the uop dialect's verifier can name `INPUT_NAMES` without loading them.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, Float64Type, FloatAttr, IntegerAttr, StringAttr
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

BOUNDED_ATTR = "zant.bounded_results"
"""On an onnx op: the indices of its results the frontend compiled at the bound of their
data-dependent size (`zant.frontend.bounded`), a dense i64 array; absent when none is."""

OUTPUT_BOUNDS_ATTR = "zant.output_bounds"
"""On `@main`: per graph output, the dimension compiled at its bound, or -1; present only when
some output is bounded, and then the last output is the int32 extents array."""

OUTPUT_SEQUENCES_ATTR = "zant.output_sequences"
"""On `@main`: per graph output, the number of the run-time-length sequence it is a slot of
(`resolve-sequences`), or -1; present only with such a sequence, and then the last output is the
int32 extents array, whose entries after the bounded outputs' ones are those sequences' lengths."""

NODE_NAME = "onnx.node_name"
"""On an onnx op: the ONNX node's name (a string), for messages, locations and reports."""

INPUT_NAMES = "onnx.input_names"
OUTPUT_NAMES = "onnx.output_names"
"""On `@main`: the graph's input (output) names in order, an array of strings."""

GRAPH_NAME = "onnx.graph_name"
"""On `@main`: the ONNX graph's name (a string)."""

OPSET = "onnx.opset"
ML_OPSET = "onnx.ml_opset"
"""On the module: the version of the default (`ai.onnx.ml`) domain the model imports, an i64."""

FIXED_POINT = "zant.fixed_point"
"""On a QLinearConv / QLinearMatMul (set by `fold-qdq`, a unit attribute): requantize in fixed
point, a Q31 multiplier and a shift per scale ratio, instead of the float multiply of the ONNX
definition (`onnx-to-uop`'s `Requantization`)."""

ROUNDING = "zant.rounding"
"""On an op that requantizes an integer sum (set by `requant-rounding`, a string of
`ROUNDING_MODES` other than `exact`): whose arithmetic its requantization reproduces bit for
bit, `onnxruntime` (its CPU kernels' float32 scale multiply, rounded to nearest even) or
`tflite` (TFLite's reference kernels: a Q31 doubling high multiply, then a rounding shift), or
`tflite-single` (the same built with TFLITE_SINGLE_ROUNDING: one rounding).
Without it the requantization is exact: the real value rounded half to even, as ONNX's
QuantizeLinear defines it."""

ROUNDING_MODES = ("exact", "onnxruntime", "tflite", "tflite-single")
"""The requantization rounding modes an op can be marked with; the first is the default."""

ROUNDING_CHOICES = (*ROUNDING_MODES, "litert")
"""What `requant-rounding{mode=...}` and `zant compile --requant-rounding` accept: a mode, or
`litert`, which marks each op with the mode LiteRT's reference kernels use for it (`tflite` for
convolutions, `tflite-single` for fully connected layers)."""


def rounding_mode(op: Operation) -> str:
    """The `ROUNDING` mark of `op`, `exact` without one."""
    mode = op.attributes.get(ROUNDING)
    if mode is None:
        return "exact"
    if not isinstance(mode, StringAttr) or mode.data not in ROUNDING_MODES:
        raise VerifyException(f"{ROUNDING} must be one of {', '.join(ROUNDING_MODES)}, got {mode}")
    return mode.data


AVERAGE_COUNT = "zant.average_count"
"""On the QLinearConv of ones that computes an average pool (set by `fold-qdq` with
`FIXED_POINT`): its window size n, a positive i64. The weight scale stands for exactly 1 / n,
and the sum is requantized by the exact x_scale / (y_scale · n), ties to even."""

REQUANTIZE = "zant.requantize"
"""On an 8-bit `Resize` (linear or cubic) that `fold-qdq` made of DQ → Resize → Q: [x zero point
(i64), y zero point (i64), x_scale / y_scale (f64)]. The op then computes DQ → Resize → Q in
integers (`onnx-to-uop`'s `emit_requantized_resize`)."""


def average_count(op: Operation) -> int | None:
    """The window size of an `AVERAGE_COUNT` mark, or None without one."""
    count = op.attributes.get(AVERAGE_COUNT)
    if count is None:
        return None
    if not isinstance(count, IntegerAttr) or count.value.data <= 0:
        raise VerifyException(f"{AVERAGE_COUNT} must be a positive integer, got {count}")
    return count.value.data


def requantize_attr(x_zero: int, y_zero: int, ratio: float) -> ArrayAttr:
    """The `REQUANTIZE` mark's value: [x zero point, y zero point, x_scale / y_scale]."""
    return ArrayAttr([IntegerAttr(x_zero, 64), IntegerAttr(y_zero, 64), FloatAttr(ratio, Float64Type())])


def requantize_parameters(op: Operation) -> tuple[int, int, float] | None:
    """The (x zero point, y zero point, ratio) of a `REQUANTIZE` mark, or None without one."""
    attr = op.attributes.get(REQUANTIZE)
    if attr is None:
        return None
    if not (
        isinstance(attr, ArrayAttr) and len(attr.data) == 3
        and all(isinstance(a, IntegerAttr) for a in attr.data[:2]) and isinstance(attr.data[2], FloatAttr)
    ):
        raise VerifyException(f"{REQUANTIZE} must be [x zero point, y zero point, ratio], got {attr}")
    x_zero, y_zero, ratio = attr.data
    return x_zero.value.data, y_zero.value.data, ratio.value.data  # type: ignore[attr-defined]


FLOAT_SUM = "zant.float_sum"
"""On a 16-bit QLinearConv or QLinearAdd marked `onnxruntime` (set by `requant-rounding`, one of
`FLOAT_SUMS`): onnxruntime has no integer kernel for 16-bit QDQ and runs DequantizeLinear →
float32 Conv / Gemm / Add / GlobalAveragePool → QuantizeLinear, so the lowering reproduces that
float32 arithmetic (the dequantized terms summed in the order and precision of the MLAS kernel
named here, the bias added, the division by y_scale rounded to nearest even) instead of
requantizing an exact integer sum."""

FLOAT_SUMS = ("fma", "m1", "m1-transb", "mean", "add")
"""MLAS's float32 forms (x86-64): `fma`, its SGEMM kernels (AVX-512F, FMA3), one
fused multiply-add per k into the output's accumulator, k in im2col order; `m1`, its one-row
kernel (MlasSgemmKernelM1Avx: a GEMM with M = 1, a depthwise Conv or a one-row MatMul): each 4
consecutive products summed left to right, each group then added to the running sum (a last
group of 2, then of 1); `m1-transb`, its one-row kernel of a transposed B
(MlasSgemmKernelM1TransposeBAvx: a one-row Gemm with transB, a Conv with one output pixel): 8
lanes, lane l summing the products k ≡ l (mod 8), reduced by the output's block of 4, 2 or 1
outputs; `mean`, its global pooling kernel (`GLOBAL_POOL`): 4 lanes over the first 4·⌊S/4⌋
elements reduced as (l0 + l2) + (l1 + l3), the rest added one at a time, divided by S; `add`,
a 16-bit QLinearAdd: the float Add of the two dequantized tensors."""

TRANSPOSED_B = "zant.transposed_b"
"""On the 1×1 QLinearConv `fold-qdq` makes of a Gemm with transB = 1 and a 16-bit x (a unit
attribute): the Gemm's B was W[N, K], which decides onnxruntime's float32 summation there
(`FLOAT_SUMS`' `m1-transb`)."""

GLOBAL_POOL = "zant.global_pool"
"""On the window sum `fold-qdq` makes of a 16-bit GlobalAveragePool, or of an AveragePool whose
one window is the whole unpadded input (a unit attribute): onnxruntime runs it in float32 with
MLAS's global pooling kernel (`FLOAT_SUMS`' `mean`)."""
