"""The layer-by-layer bound of an onnx graph: the most bytes one op's activations take at once.

Run layer by layer, a graph needs at least, at its largest op, that op's activations (its inputs
that are not constants) beside its results: issue 28's "layer bound", the peak a layer-by-layer
plan reaches (VWW int8: 55,296 B, its first pointwise Conv; KWS int8: 16,000 B).

A lowering that allocates scratch of its own beside an op's input and output (`conv_first`'s
padded copy) keeps the op within this bound; the widened pointwise form (`conv_columns`' copies
of X in blocks of pixels) within it and at most `KERNEL_SCRATCH_BYTES` more
(`onnx-to-uop{kernel-scratch}`), unless told a bound (`onnx-to-uop{layer-bound=N}`, a RAM
budget's: then within it). Where its copies fit only with its output written over its input (X
dying in the Conv, Y channels-last and no wider), the form takes that, its nest marked in place:
the op then takes the larger of the two and the copies, within the bound without any allowance.
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


KERNEL_SCRATCH_BYTES = 0
"""The most bytes a kernel's own copies may add to the layer-by-layer bound by default: none, so
a kernel's choice never raises the default plan's peak (MLPerf KWS int8: 16,000 B, below
TVM/USMP's 17,232 B, `tests/test_firmware.py`). `onnx-to-uop{kernel-scratch=6144}` trades RAM
for speed: KWS's 64-channel pointwise layers (its peak, X and Y 16,000 B) then widen X in 3
blocks of 42 pixels (5,888 B with a block of weight rows; the plan 16,000 -> 21,888 B), the
bench KWS int8 4,235,477 -> 3,328,722 M4 instructions (`python bench/mcu.py --models kws_int8
--boards mps2-an386`); smaller blocks cost more: 4 of 32 pixels (4,608 B) +60 k, 8 of 16
(2,560 B) +240 k, the whole image (16,512 B) -100 k."""


__all__ = ["KERNEL_SCRATCH_BYTES", "graph_layer_bound", "value_bytes"]
