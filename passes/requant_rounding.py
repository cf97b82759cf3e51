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

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from zant.dialects.onnx import QLinearAddOp, QLinearConvOp, QLinearMatMulOp, QLinearMulOp, ReshapeOp
from zant.dialects.onnx_attributes import AVERAGE_COUNT, FIXED_POINT, ROUNDING, ROUNDING_CHOICES
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
        return mode.startswith("tflite")
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
