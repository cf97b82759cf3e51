"""`requant-rounding`: whose arithmetic the integer ops' requantization reproduces.

    zant-opt model.onnx -p 'fold-qdq,requant-rounding{mode=onnxruntime},onnx-to-uop'

A quantized layer ends by turning its int32 sum into 8 bits: y = saturate(round(sum · M) + zp)
with M = x_scale · w_scale / y_scale. The runtimes do not round that product alike, so each
gives its own last bits:

* `exact` (the default; no mark): the real value sum · M, the scales taken as the binary
  fractions they are, rounded half to even: ONNX's QuantizeLinear of the DequantizeLinear'd
  result, as the specification writes the chain.
* `onnxruntime`: its CPU kernels (QLinearConv, QLinearMatMul, and the fused QDQ forms its
  optimizer makes of them): the sum converted to float32, times the float32 scale
  (x_scale · w_scale) / y_scale, rounded to nearest even; QLinearAdd as its x86-64 AVX2 kernel
  computes it (two float32 fused multiply-adds, then rounded to nearest even).
* `tflite`: TFLite's reference kernels as its default build and TFLite Micro compile them: M
  as a Q31 multiplier and an exponent from the double-precision ratio, a saturating rounding
  doubling high multiply, then a rounding right shift (two roundings, ties away from zero);
  Add as TFLite's (inputs shifted left by 20 bits, each rescaled, the sum rescaled).
* `tflite-single`: the same kernels built with TFLITE_SINGLE_ROUNDING (one rounding: x · q plus
  half, shifted right by 31 - e).
* `litert`: as LiteRT's (TensorFlow Lite's Python) interpreter computes with its reference
  kernels (`OpResolverType.BUILTIN_REF`, measured with LiteRT 2.3.0): `tflite` for everything
  but its FULLY_CONNECTED layers, which round once (`tflite-single`). A fully connected layer is
  a QLinearMatMul, or the 1×1 QLinearConv between Reshapes that `fold-qdq` makes of a Gemm or a
  MatMul + bias (`fully_connected`).

The pass marks each op whose lowering implements the mode with `zant.rounding` (the
QLinearConv / QLinearMatMul `fold-qdq` marked `zant.fixed_point`, QLinearAdd, QLinearMul
(onnxruntime's float32 kernel; TFLite's Mul: one MultiplyByQuantizedMultiplier of the product),
and in the TFLite modes an average pool's QLinearConv (TFLite's pool divides the raw window sum
by its count, ties away from zero)); `onnx-to-uop` and the interpreter's reference read the
mark, so the IR says
which arithmetic each op follows. Ops it does not mark keep the exact rounding. `exact` removes
the marks. Run it after `fold-qdq` (and `fold-qoperator`), before `onnx-to-uop`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from zant.dialects.onnx import QLinearAddOp, QLinearConvOp, QLinearMatMulOp, QLinearMulOp, ReshapeOp
from zant.dialects.onnx_attributes import AVERAGE_COUNT, FIXED_POINT, FLOAT_SUM, GLOBAL_POOL, ROUNDING, ROUNDING_CHOICES, TRANSPOSED_B
from zant.errors import ZantError

MARKED_OPS = {
    QLinearConvOp: True,  # True: only with the fixed-point mark (constant scales)
    QLinearMatMulOp: True,
    QLinearAddOp: False,
    QLinearMulOp: False,
}
"""The ops whose requantization follows a mode (op class → whether it needs `zant.fixed_point`)."""


def follows_mode(op, mode: str) -> bool:
    """Whether `requant-rounding` marks `op` in `mode` (an average pool's QLinearConv in the
    TFLite modes only: onnxruntime's pools keep the exact rounding)."""
    needs_fixed_point = MARKED_OPS.get(type(op))
    if needs_fixed_point is None:
        return False
    if needs_fixed_point and FIXED_POINT not in op.attributes:
        return False
    if AVERAGE_COUNT in op.attributes:
        return mode.startswith("tflite") or (mode == "onnxruntime" and mlas_float_sum(op) == "mean")
    return True


def fully_connected(op) -> bool:
    """A QLinearMatMul, or the 1×1 QLinearConv of a 2-D input reshaped to [rows, depth, 1, 1]
    that `fold-qdq` makes of a Gemm (TFLite's FULLY_CONNECTED as tf2onnx writes it)."""
    if isinstance(op, QLinearMatMulOp):
        return True
    if not isinstance(op, QLinearConvOp):
        return False
    source = op.operands[0].owner
    shape = op.operands[0].type.get_shape()
    return (
        isinstance(source, ReshapeOp) and source.operands[0].type.get_num_dims() == 2
        and len(shape) == 4 and tuple(shape[2:]) == (1, 1)
    )


MLAS_STRIDE_K = 128
MLAS_STRIDE_N = 128
"""MLAS's SGEMM blocks (MLAS_SGEMM_STRIDEK, MLAS_SGEMM_STRIDEN): a sum longer than its K block
restarts its fused chain per block, at boundaries that depend on the output's width and
onnxruntime's thread count."""


def mlas_one_k_block(depth: int, width: int) -> bool:
    """Whether MLAS sums `depth` terms of an output `width` columns wide (a Conv's output
    pixels, a Gemm's output features) in one K block whatever its threads do: its K block is
    128, doubled for each halving of the 128-column N block while half of it still covers the
    columns (down to 16 columns: up to 1024); threads only narrow the columns, which widens it."""
    stride_n, stride_k = MLAS_STRIDE_N, MLAS_STRIDE_K
    while stride_n > 16 and stride_n // 2 >= width:
        stride_n, stride_k = stride_n // 2, stride_k * 2
    return depth <= max(MLAS_STRIDE_K, stride_k)


def mlas_float_sum(op) -> str | None:
    """How onnxruntime's CPU provider sums a 16-bit QLinearConv's float32 products (it runs
    DequantizeLinear → Conv / Gemm / MatMul → QuantizeLinear of int16 in float32: no integer
    kernel), one of `FLOAT_SUMS`, or None where no single form reproduces it (a sum that may
    span K blocks, `mlas_one_k_block`; an average pool of more than one window). A 16-bit QLinearAdd is its float
    Add (`add`); a whole-input pool's window sum its global pooling kernel (`mean`). From
    MLAS's dispatch: a Gemm or MatMul of one row (`fully_connected`) takes the one-row kernels (`m1-transb` for Gemm's transB, else `m1`); a Conv with one output
    channel per group (depthwise) is a GEMM with M = 1 (`m1`); a Conv with one output pixel a
    GEMM with N = 1, which MLAS runs as the one-row kernel of a transposed B (`m1-transb`);
    otherwise its SGEMM kernel's fused multiply-add chain (`fma`)."""
    if not isinstance(op, QLinearConvOp | QLinearAddOp) or op.operands[0].type.element_type.width.data != 16:
        return None
    x_type = op.operands[0].type
    if isinstance(op, QLinearAddOp):
        return "add"
    if FIXED_POINT not in op.attributes:
        return None
    if AVERAGE_COUNT in op.attributes:
        return "mean" if GLOBAL_POOL in op.attributes else None
    w_type = op.operands[3].type
    x_shape, (out_channels, group_channels, *kernel) = x_type.get_shape(), w_type.get_shape()
    out_shape = op.results[0].type.get_shape()
    depth = group_channels * math.prod(kernel)
    if fully_connected(op):
        if x_shape[0] == 1:
            return "m1-transb" if TRANSPOSED_B in op.attributes else "m1"
    elif out_channels // (x_shape[1] // group_channels) == 1:
        return "m1"
    elif math.prod(out_shape[2:]) == 1:
        return "m1-transb"
    width = out_channels if fully_connected(op) else math.prod(out_shape[2:])
    return "fma" if mlas_one_k_block(depth, width) else None


def mode_of(op, mode: str) -> str:
    """The mode `op` is marked with for the pass's `mode` (`litert`: per op)."""
    if mode != "litert":
        return mode
    return "tflite-single" if fully_connected(op) else "tflite"


@dataclass(frozen=True)
class RequantRoundingPass(ModulePass):
    """Mark the requantizing ops with the rounding `mode` (see the module docstring)."""

    name = "requant-rounding"

    mode: str = "exact"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.mode not in ROUNDING_CHOICES:
            raise ZantError(f"requant-rounding: unknown mode '{self.mode}' (one of {', '.join(ROUNDING_CHOICES)})")
        for child in op.walk():
            mode = mode_of(child, self.mode)
            if mode == "exact" or not follows_mode(child, mode):
                child.attributes.pop(ROUNDING, None)
            else:
                child.attributes[ROUNDING] = StringAttr(mode)
            form = mlas_float_sum(child) if mode == "onnxruntime" and ROUNDING in child.attributes else None
            if form is None:
                child.attributes.pop(FLOAT_SUM, None)
            else:
                child.attributes[FLOAT_SUM] = StringAttr(form)
