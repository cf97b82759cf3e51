"""ONNX element types ↔ MLIR element types.

One table, used both ways: the importer maps ONNX tensor element types to builtin MLIR types, and
the constant helpers map MLIR element types back to numpy dtypes to decode weight blobs. Anything
not in the table (strings, complex, float8, int4 ...) is an unsupported element type.
"""

from __future__ import annotations

import numpy as np
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


class DataType:
    """The numbers of ONNX's `TensorProto.DataType` (onnx.proto) that Zant supports, spelled out
    so that reading uop IR does not import onnx (about 0.7 s of CPU, mostly its ml_dtypes);
    tests/test_ir_types.py checks them against onnx's."""

    FLOAT = 1
    UINT8 = 2
    INT8 = 3
    UINT16 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    BOOL = 9
    FLOAT16 = 10
    DOUBLE = 11
    UINT32 = 12
    UINT64 = 13
    BFLOAT16 = 16


ONNX_TO_MLIR_ELEMENT_TYPE: dict[int, Attribute] = {
    DataType.FLOAT: Float32Type(),
    DataType.FLOAT16: Float16Type(),
    DataType.DOUBLE: Float64Type(),
    DataType.BFLOAT16: BFloat16Type(),
    DataType.INT8: IntegerType(8),
    DataType.INT16: IntegerType(16),
    DataType.INT32: IntegerType(32),
    DataType.INT64: IntegerType(64),
    DataType.UINT8: IntegerType(8, Signedness.UNSIGNED),
    DataType.UINT16: IntegerType(16, Signedness.UNSIGNED),
    DataType.UINT32: IntegerType(32, Signedness.UNSIGNED),
    DataType.UINT64: IntegerType(64, Signedness.UNSIGNED),
    DataType.BOOL: IntegerType(1),
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
        from onnx import TensorProto

        data_type = TensorProto.DataType
        type_name = data_type.Name(onnx_type) if onnx_type in data_type.values() else str(onnx_type)
        raise ZantError(
            f"tensor '{tensor_name}' has unsupported element type {type_name}"
        ) from None


NUMPY_DTYPES: dict[int, str] = {
    DataType.FLOAT: "float32",
    DataType.FLOAT16: "float16",
    DataType.DOUBLE: "float64",
    DataType.INT8: "int8",
    DataType.INT16: "int16",
    DataType.INT32: "int32",
    DataType.INT64: "int64",
    DataType.UINT8: "uint8",
    DataType.UINT16: "uint16",
    DataType.UINT32: "uint32",
    DataType.UINT64: "uint64",
    DataType.BOOL: "bool",
}
"""The numpy dtype of each ONNX element type but bfloat16, as `onnx.helper.tensor_dtype_to_np_dtype` has it."""


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that stores one element of an MLIR element type (bf16 via ml_dtypes)."""
    onnx_type = MLIR_TO_ONNX_ELEMENT_TYPE.get(element_type)
    if onnx_type is None:
        raise ZantError(f"unsupported element type {element_type}")
    if onnx_type == DataType.BFLOAT16:  # ml_dtypes' bfloat16, as onnx has it
        from onnx import helper

        return np.dtype(helper.tensor_dtype_to_np_dtype(onnx_type))
    return np.dtype(NUMPY_DTYPES[onnx_type])
