"""Constants as MLIR attributes: small ones inline, weights as `dense_resource` blobs.

Weights are stored in the builtin dialect's resource storage (xDSL's `OpAsmDialectInterface`),
so the IR holds only a handle (`dense_resource<conv1_weight> : tensor<16x3x3x3xf32>`) and the
bytes are printed once, as one hex string, in the `{-# dialect_resources ... #-}` section at the
end of the file. That keeps textual IR readable and makes printing/parsing a 1 MB model a matter
of hex-encoding bytes instead of formatting a million floats. The blob format is MLIR's: "0x",
the alignment as a 4-byte little-endian integer, then the raw little-endian element bytes.
"""

from __future__ import annotations

import re

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import (
    Builtin,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    TensorType,
)
from xdsl.ir import Attribute

from zant.errors import ZantError
from zant.ir.types import ONNX_TO_MLIR_ELEMENT_TYPE, numpy_dtype

INLINE_MAX_ELEMENTS = 16
"""Constants with at most this many elements are printed inline as `dense<...>`."""

_BLOB_ALIGNMENT = 16


def _resource_storage() -> OpAsmDialectInterface:
    interface = Builtin.get_interface(OpAsmDialectInterface)
    assert interface is not None, "xDSL's builtin dialect stores resources"
    return interface


def _resource_key(name_hint: str) -> str:
    """A legal resource handle (a bare identifier) derived from an ONNX tensor name."""
    key = re.sub(r"[^A-Za-z0-9_]", "_", name_hint) or "cst"
    return key if not key[0].isdigit() else "_" + key


def make_constant_attr(array: np.ndarray, name_hint: str) -> Attribute:
    """The `value` of an `onnx.Constant` holding `array`.

    Small integer/float constants (shapes, axes, scalars) stay inline and readable; everything
    else becomes a `dense_resource` whose blob goes to the builtin dialect's resource storage
    under a unique key derived from `name_hint`.
    """
    from onnx import helper

    onnx_type = helper.np_dtype_to_tensor_dtype(array.dtype)
    element_type = ONNX_TO_MLIR_ELEMENT_TYPE.get(onnx_type)
    if element_type is None:
        raise ZantError(f"tensor '{name_hint}' has unsupported element type {array.dtype}")
    tensor_type = TensorType(element_type, array.shape)
    if array.size <= INLINE_MAX_ELEMENTS and array.dtype.kind in "biuf":
        values = array.reshape(-1).tolist()
        if array.dtype.kind == "b":
            values = [int(v) for v in values]
        return DenseIntOrFPElementsAttr.from_list(tensor_type, values)
    data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    storage = _resource_storage()
    key = storage.declare_resource(_resource_key(name_hint))
    blob = _BLOB_ALIGNMENT.to_bytes(4, "little") + data
    storage.parse_resource(key, "0x" + blob.hex().upper())  # upper-case hex, as MLIR prints
    return DenseResourceAttr.from_params(key, tensor_type)


MAX_FOLDED_ELEMENTS = 1 << 20
"""The most elements a value folded at compile time may have (import-time shape folding and
`fold-constants`): larger ones stay computed at run time, as they would bloat flash."""


def attr_to_array(attr: Attribute) -> np.ndarray:
    """Decode a `dense<...>` or `dense_resource<...>` tensor attribute into a numpy array."""
    if isinstance(attr, DenseResourceAttr):
        tensor_type = attr.type
        dtype = numpy_dtype(tensor_type.get_element_type())
        key = attr.resource_handle.data
        blob = _resource_storage().lookup(key)
        if not blob:
            raise ZantError(f"dense_resource<{key}> has no data in the resource section")
        data = bytes.fromhex(blob[2 + 8 :])
        shape = tuple(tensor_type.get_shape())
        count = int(np.prod(shape, dtype=np.int64))
        if len(data) != count * dtype.itemsize:
            raise ZantError(
                f"dense_resource<{key}> holds {len(data)} bytes, expected "
                f"{count * dtype.itemsize} for {tensor_type}"
            )
        return np.frombuffer(data, dtype=dtype.newbyteorder("<")).astype(dtype).reshape(shape)
    if isinstance(attr, DenseIntOrFPElementsAttr):
        tensor_type = attr.get_type()
        element_type = tensor_type.get_element_type()
        dtype = numpy_dtype(element_type)
        values = attr.get_values()
        shape = tuple(tensor_type.get_shape())
        array = np.array(values, dtype=dtype)
        if array.size == 1 and int(np.prod(shape)) != 1:
            array = np.broadcast_to(array.reshape(()), shape).copy()
        return array.reshape(shape)
    raise ZantError(f"expected a dense or dense_resource tensor attribute, got {attr}")


def constant_array(op) -> np.ndarray:
    """The value of an `onnx.Constant` op as a numpy array."""
    value = op.properties.get("value")
    if value is None:
        raise ZantError(f"{op.name} has no 'value' property")
    return attr_to_array(value)

