"""Constants: an `onnx.Constant` (initializer or Constant node) becomes a read-only global buffer;
so does an OptionalHasElement, whose answer is known at compile time."""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation

from zant.dialects import uop
from zant.dialects.onnx import ConstantOp, OptionalHasElementOp
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, tensor_element_type, tensor_shape


class ConstantLowering(OnnxLowering):
    """`onnx.Constant` → `uop.define_global "constant"` carrying the same value attribute."""

    op_names = frozenset({ConstantOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        value = op.properties.get("value")
        if value is None:
            raise ValueError("only Constant nodes with a tensor `value` are supported")
        result = op.results[0]
        index = sum(
            1
            for other in op.parent_block().ops  # type: ignore[union-attr]
            if isinstance(other, uop.DefineGlobalOp) and other.role.data == uop.BufferRole.CONSTANT
        )
        shape = tensor_shape(result)
        buffer_type = uop.BufferType(value.get_type().element_count(), value.get_type().get_element_type())
        buffer = kb.insert(uop.DefineGlobalOp("constant", index, result_name(op), buffer_type, value))
        buffer.result.name_hint = result.name_hint
        return [Layout.contiguous(buffer.result, shape)]


class OptionalHasElementLowering(OnnxLowering):
    """OptionalHasElement: true when the input is given (the importer gives tensors only, which
    hold their element), false when it is absent; a one-element constant either way."""

    op_names = frozenset({OptionalHasElementOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        result = op.results[0]
        present = np.full(tensor_shape(result), bool(op.operands), dtype=bool)
        return [kb.constant(result_name(op), present, tensor_element_type(result))]


PATTERNS = (ConstantLowering(), OptionalHasElementLowering())
