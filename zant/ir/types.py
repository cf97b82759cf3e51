"""ONNX element types ↔ MLIR element types.

One table, used both ways: the importer maps ONNX tensor element types to builtin MLIR types, and
the constant helpers map MLIR element types back to numpy dtypes to decode weight blobs. Anything
not in the table (strings, complex ...) is an unsupported element type.

bfloat16, the four float8 types and float4e2m1 are *storage floats* (`is_storage_float`): values
are kept as their bits (Zig `u16`/`u8`), copied as they are, and computed with only after a
`uop.cast` to f32; their NumPy types are ml_dtypes' (as onnx has them).

int4, uint4, float4e2m1 (two per byte) and int2, uint2 (four per byte) are *packed* (`is_packed`):
a buffer of them holds its elements as ONNX lays them out, the first in the lowest bits of its
byte, in memory (inputs, outputs, constants, scratch) as in the C ABI; `pack`/`unpack` convert.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
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
    FLOAT8E4M3FN = 17
    FLOAT8E4M3FNUZ = 18
    FLOAT8E5M2 = 19
    FLOAT8E5M2FNUZ = 20
    UINT4 = 21
    INT4 = 22
    FLOAT4E2M1 = 23
    FLOAT8E8M0 = 24
    UINT2 = 25
    INT2 = 26


ONNX_TO_MLIR_ELEMENT_TYPE: dict[int, Attribute] = {
    DataType.FLOAT: Float32Type(),
    DataType.FLOAT16: Float16Type(),
    DataType.DOUBLE: Float64Type(),
    DataType.BFLOAT16: BFloat16Type(),
    DataType.FLOAT8E4M3FN: Float8E4M3FNType(),
    DataType.FLOAT8E4M3FNUZ: Float8E4M3FNUZType(),
    DataType.FLOAT8E5M2: Float8E5M2Type(),
    DataType.FLOAT8E5M2FNUZ: Float8E5M2FNUZType(),
    DataType.FLOAT4E2M1: Float4E2M1FNType(),
    DataType.FLOAT8E8M0: Float8E8M0FNUType(),
    DataType.INT4: IntegerType(4),
    DataType.UINT4: IntegerType(4, Signedness.UNSIGNED),
    DataType.INT2: IntegerType(2),
    DataType.UINT2: IntegerType(2, Signedness.UNSIGNED),
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
    DataType.INT4: "int4",  # ml_dtypes' (one byte per element in NumPy; packed in buffers)
    DataType.UINT4: "uint4",
    DataType.INT2: "int2",
    DataType.UINT2: "uint2",
}
"""The numpy dtype of each ONNX element type but the storage floats, as
`onnx.helper.tensor_dtype_to_np_dtype` has it."""

STORAGE_FLOATS: dict[int, tuple[str, str, int, int, int]] = {
    DataType.BFLOAT16: ("bfloat16", "ieee", 8, 7, 127),
    DataType.FLOAT8E4M3FN: ("float8_e4m3fn", "fn", 4, 3, 7),
    DataType.FLOAT8E4M3FNUZ: ("float8_e4m3fnuz", "fnuz", 4, 3, 8),
    DataType.FLOAT8E5M2: ("float8_e5m2", "ieee", 5, 2, 15),
    DataType.FLOAT8E5M2FNUZ: ("float8_e5m2fnuz", "fnuz", 5, 2, 16),
    DataType.FLOAT4E2M1: ("float4_e2m1fn", "finite", 2, 1, 1),
    DataType.FLOAT8E8M0: ("float8_e8m0fnu", "e8m0", 8, 0, 127),
}
"""The storage floats → (ml_dtypes' name, special values, exponent bits, mantissa bits, bias).
Special values: "ieee" has ±Inf (exponent all ones, mantissa 0) and NaNs (the other mantissas);
"fn" no Inf, NaN only S.1111.111; "fnuz" no Inf, no -0, one NaN 0x80; "finite" none at all; "e8m0" (the MX scale type) a power
of two 2^(e-127), no sign, no zero, NaN 0xFF, rounded up (ONNX Cast's round_mode "up")."""


def storage_float(element_type: Attribute) -> tuple[str, str, int, int, int] | None:
    """The `STORAGE_FLOATS` row of an element type (or a vector's lanes' type), else None."""
    return STORAGE_FLOATS.get(MLIR_TO_ONNX_ELEMENT_TYPE.get(element_type, 0))


def is_storage_float(element_type: Attribute) -> bool:
    """bfloat16, a float8 or float4e2m1: kept as bits, computed with in f32 after a cast."""
    return storage_float(element_type) is not None


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that stores one element of an MLIR element type (the storage floats via
    ml_dtypes, as onnx has them)."""
    onnx_type = MLIR_TO_ONNX_ELEMENT_TYPE.get(element_type)
    if onnx_type is None:
        from zant.ir.strings import StringType, string_dtype

        if isinstance(element_type, StringType):  # NUL-padded fields, `S{CAP}`
            return string_dtype(element_type.capacity.data)
        raise ZantError(f"unsupported element type {element_type}")
    if onnx_type in STORAGE_FLOATS:
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, STORAGE_FLOATS[onnx_type][0]))
    if onnx_type in (DataType.INT4, DataType.UINT4, DataType.INT2, DataType.UINT2):
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, NUMPY_DTYPES[onnx_type]))
    return np.dtype(NUMPY_DTYPES[onnx_type])


def element_bits(element_type: Attribute) -> int:
    """The bits one element occupies in memory: 8 for bool, 4 for int4, 32 for f32 …"""
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        return 8 if width == 1 else width
    if isinstance(element_type, AnyFloat):
        return element_type.bitwidth
    raise ZantError(f"no storage size for {element_type}")


def is_packed(element_type: Attribute) -> bool:
    """Several elements to a byte (int4, uint4, float4e2m1: two; int2, uint2: four)."""
    return element_type in ONNX_TO_MLIR_ELEMENT_TYPE.values() and element_bits(element_type) < 8


def packed_bytes(count: int, element_type: Attribute) -> int:
    """The bytes `count` elements occupy in memory (packed types: rounded up to a whole byte)."""
    return (count * element_bits(element_type) + 7) // 8


PACKED_DTYPES: dict[str, int] = {"int4": 4, "uint4": 4, "float4_e2m1fn": 4, "int2": 2, "uint2": 2}
"""The NumPy (ml_dtypes) names of the packed types → their bits (one byte per element in NumPy)."""


def abi_bytes(count: int, dtype: str) -> int:
    """The bytes `count` elements of the NumPy type `dtype` take in the C ABI (the packed types,
    `PACKED_DTYPES`, rounded up to a whole byte)."""
    bits = PACKED_DTYPES.get(dtype)
    if bits is not None:
        return (count * bits + 7) // 8
    return count * np.dtype(dtype).itemsize


def pack(values: np.ndarray, element_type: Attribute | None = None) -> bytes:
    """The bytes of `values` as memory and the C ABI hold them: packed types (by the array's
    dtype, or `element_type`'s) the first element in the lowest bits of its byte, as ONNX lays
    them out; others little-endian."""
    flat = np.ascontiguousarray(values).reshape(-1)
    if element_type is not None:
        flat = flat.astype(numpy_dtype(element_type), copy=False)
    bits = PACKED_DTYPES.get(flat.dtype.name)
    if bits is None:
        return flat.astype(flat.dtype.newbyteorder("<"), copy=False).tobytes()
    per_byte = 8 // bits
    codes = flat.view(np.uint8) & ((1 << bits) - 1)
    codes = np.concatenate([codes, np.zeros(-codes.size % per_byte, np.uint8)]).reshape(-1, per_byte)
    shifts = np.arange(per_byte, dtype=np.uint8) * bits
    return np.bitwise_or.reduce(codes << shifts, axis=1).astype(np.uint8).tobytes()


def unpack(data: bytes | np.ndarray, dtype: np.dtype | str, count: int) -> np.ndarray:
    """`count` elements of NumPy type `dtype` from memory's bytes (the inverse of `pack`)."""
    raw = np.frombuffer(bytes(data), np.uint8)
    dtype = np.dtype(dtype)
    bits = PACKED_DTYPES.get(dtype.name)
    if bits is None:
        return raw[: count * dtype.itemsize].view(dtype.newbyteorder("<")).astype(dtype)
    per_byte = 8 // bits
    shifts = np.arange(per_byte, dtype=np.uint8) * bits
    codes = ((raw[:, None] >> shifts) & ((1 << bits) - 1)).reshape(-1)[:count].astype(np.uint8)
    if dtype.name in ("int4", "int2"):  # sign-extend the code to the byte NumPy stores
        codes = np.where(codes >= 1 << (bits - 1), codes | np.uint8((0xFF << bits) & 0xFF), codes)
    return codes.view(dtype)
