"""The layer-by-layer bound of an onnx graph: the most bytes one op's activations take at once.

Run layer by layer, a graph needs at least, at its largest op, that op's activations (its inputs
that are not constants) beside its results: issue 28's "layer bound", the peak a layer-by-layer
plan reaches (VWW int8: 55,296 B, its first pointwise Conv; KWS int8: 16,000 B). A lowering that
allocates scratch of its own beside an op's input and output (`conv_columns`' widened copy of
X) keeps the op within this bound, so the choice of kernel never raises the plan's peak.
"""

from __future__ import annotations

import math

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from zant.dialects.onnx import ConstantOp


def value_bytes(value: SSAValue) -> int:
    """Bytes of a tensor of static shape (sub-byte elements take a byte); 0 for anything else."""
    kind = value.type
    if not isinstance(kind, TensorType) or any(d < 0 for d in kind.get_shape()):
        return 0
    width = getattr(kind.element_type, "bitwidth", 8)
    return math.prod(kind.get_shape()) * max(width, 8) // 8


def graph_layer_bound(function: func.FuncOp) -> int:
    """The most bytes any one onnx op of `function` reads and writes at once: its operands not
    produced by an `onnx.Constant`, plus its results (0 for a graph without such ops)."""
    best = 0
    for op in function.walk():
        if not op.name.startswith("onnx.") or isinstance(op, ConstantOp):
            continue
        reads = [v for v in op.operands if not isinstance(v.owner, ConstantOp)]
        best = max(best, sum(map(value_bytes, reads)) + sum(map(value_bytes, op.results)))
    return best


__all__ = ["graph_layer_bound", "value_bytes"]
