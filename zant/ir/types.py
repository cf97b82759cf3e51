"""ONNX element types ↔ MLIR element types.

One table, used both ways: the importer maps ONNX tensor element types to builtin MLIR types, and
the constant helpers map MLIR element types back to numpy dtypes to decode weight blobs. Anything
not in the table (strings, complex, float8, int4 ...) is an unsupported element type.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute

from zant.errors import ZantError

ONNX_TO_MLIR_ELEMENT_TYPE: dict[int, Attribute] = {
    TensorProto.FLOAT: Float32Type(),
    TensorProto.FLOAT16: Float16Type(),
    TensorProto.DOUBLE: Float64Type(),
    TensorProto.BFLOAT16: BFloat16Type(),
    TensorProto.INT8: IntegerType(8),
    TensorProto.INT16: IntegerType(16),
    TensorProto.INT32: IntegerType(32),
    TensorProto.INT64: IntegerType(64),
    TensorProto.UINT8: IntegerType(8, Signedness.UNSIGNED),
    TensorProto.UINT16: IntegerType(16, Signedness.UNSIGNED),
    TensorProto.UINT32: IntegerType(32, Signedness.UNSIGNED),
    TensorProto.UINT64: IntegerType(64, Signedness.UNSIGNED),
    TensorProto.BOOL: IntegerType(1),
}
"""ONNX `TensorProto.DataType` → MLIR element type (signless integers for signed ONNX ints)."""

MLIR_TO_ONNX_ELEMENT_TYPE: dict[Attribute, int] = {
    mlir: onnx for onnx, mlir in ONNX_TO_MLIR_ELEMENT_TYPE.items()
}
"""The inverse of `ONNX_TO_MLIR_ELEMENT_TYPE`."""


def mlir_element_type(onnx_type: int, tensor_name: str) -> Attribute:
    """The MLIR element type of an ONNX element type, or a `ZantError` naming the tensor."""
    try:
        return ONNX_TO_MLIR_ELEMENT_TYPE[onnx_type]
    except KeyError:
        type_name = TensorProto.DataType.Name(onnx_type) if onnx_type in (
            TensorProto.DataType.values()
        ) else str(onnx_type)
        raise ZantError(
            f"tensor '{tensor_name}' has unsupported element type {type_name}"
        ) from None


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that stores one element of an MLIR element type (bf16 via ml_dtypes)."""
    from onnx import helper

    onnx_type = MLIR_TO_ONNX_ELEMENT_TYPE.get(element_type)
    if onnx_type is None:
        raise ZantError(f"unsupported element type {element_type}")
    return np.dtype(helper.tensor_dtype_to_np_dtype(onnx_type))
