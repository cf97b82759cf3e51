"""`buggy-onnx-to-uop`: `onnx-to-uop` with a seeded bug in one lowering, for `--check-each-pass`
tests of the lowering itself: Relu is lowered as a copy (the max with 0 is missing). Loaded with
`zant-opt --load-passes`.
"""

from __future__ import annotations

from zant.passes.onnx_to_uop import OnnxToUopPass
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import layout_of, tensor_element_type, tensor_shape


class ReluAsCopy(OnnxLowering):
    """Y = X (wrong: Relu is max(X, 0))."""

    op_names = frozenset({"onnx.Relu"})

    def lower(self, op, kb):
        shape = tensor_shape(op.results[0])
        x = layout_of(op.operands[0])
        y = kb.alloc(result_name(op), shape, tensor_element_type(op.results[0]))
        with kb.loop_nest(shape) as ivs:
            kb.store(kb.load(x, ivs), y, ivs)
        return [y]


class BuggyOnnxToUopPass(OnnxToUopPass):
    """onnx-to-uop whose Relu lowering forgets the max (seeded bug): the first pattern wins."""

    name = "buggy-onnx-to-uop"

    def patterns(self) -> list[OnnxLowering]:
        return [ReluAsCopy(), *super().patterns()]
