"""Ops whose results hold no elements: nothing to compute, whatever the op.

A result with a dimension of size 0 is a tensor of no elements. The family lowerings handle
most such tensors by emitting loops that never run, but several read per-tensor parameters
(scales, zero points ...) as if the data had elements; a quantized op over a batch of 0 failed
there. This pattern, tried before every family's, gives an op each of whose results is empty
an empty buffer per result and no code, when its other inputs are constants or empty too: a
non-empty input known only at run time may be a parameter its lowering checks (a Reshape's
shape, an Expand's ...), which then keeps its lowering and its check.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from zant.dialects.onnx import OnnxOp
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, tensor_element_type, tensor_shape
from zant.passes.onnx_to_uop.parameters import constant_array


def _empty(value) -> bool:
    return isinstance(value.type, TensorType) and math.prod(value.type.get_shape()) == 0


class EmptyResultLowering(OnnxLowering):
    """Any onnx op whose results are all empty and whose non-empty inputs are constants."""

    op_names = frozenset()

    def matches(self, op: Operation) -> bool:
        if not isinstance(op, OnnxOp) or not op.results or not all(_empty(r) for r in op.results):
            return False
        return all(_empty(v) or (isinstance(v.type, TensorType) and constant_array(v) is not None) for v in op.operands)

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        return [
            kb.alloc(result_name(op, index), tensor_shape(result), tensor_element_type(result))
            for index, result in enumerate(op.results)
        ]


PATTERNS = (EmptyResultLowering(),)
