"""String tensors: the `!onnx.string<CAP>` element type and its C ABI form.

An ONNX string tensor is compiled as fixed-capacity UTF-8 fields: each element owns CAP bytes,
holds its string's bytes from the first and is padded with NUL bytes to CAP (a string of exactly
CAP bytes has no NUL). A tensor of N strings is therefore N·CAP bytes, dense and row-major, in
memory as in the C ABI (`uint8_t x[N][CAP]`), and one element's length is the index of its first
NUL (CAP if none). A string holding a NUL byte has no such form: the Python runtime refuses it.

CAP is fixed at compile time for every value: a graph input's is the `--string-capacity` option
(`DEFAULT_STRING_CAPACITY` bytes), an op's result follows from its inputs' (StringConcat: the sum;
LabelEncoder: its longest value; the rest: their input's). NumPy's fixed-width bytes type `S{CAP}`
has exactly this layout (NUL-padded, trailing NULs dropped when read), so it is the ABI dtype the
signature records; `encode`/`decode` convert object/str arrays to and from it, refusing a string
longer than its capacity rather than cutting it.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntAttr
from xdsl.ir import ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from zant.errors import ZantError

DEFAULT_STRING_CAPACITY = 64
"""Bytes per element of a string graph input when `--string-capacity` does not say."""
MAX_STRING_CAPACITY = 1 << 16
"""The largest capacity accepted (a field is indexed with u16-range loop bounds)."""
STRING_CAPACITY_ATTR = "zant.string_capacity"
"""On an input or output `uop.define_global` of a string tensor (onnx-to-uop): the bytes of each
element's field, which the C header notes beside the entry point's byte pointer."""


@irdl_attr_definition
class StringType(ParametrizedAttribute, TypeAttribute):
    """`!onnx.string<CAP>`: a UTF-8 string of at most CAP bytes, NUL-padded to CAP."""

    name = "onnx.string"
    capacity: IntAttr = param_def(IntAttr)

    def __init__(self, capacity: int | IntAttr):
        super().__init__(capacity if isinstance(capacity, IntAttr) else IntAttr(capacity))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list:
        with parser.in_angle_brackets():
            return [IntAttr(parser.parse_integer(allow_boolean=False, allow_negative=False))]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(str(self.capacity.data))

    def verify(self) -> None:
        if not 1 <= self.capacity.data <= MAX_STRING_CAPACITY:
            raise VerifyException(
                f"!onnx.string capacity must be in [1, {MAX_STRING_CAPACITY}] bytes, got {self.capacity.data}"
            )


def string_dtype(capacity: int) -> np.dtype:
    """The ABI's NumPy type of one element: NUL-padded bytes `S{capacity}`."""
    return np.dtype(f"S{capacity}")


def is_string_dtype(dtype: str | np.dtype) -> bool:
    return np.dtype(dtype).kind == "S"


def encode(values, shape: list[int] | tuple[int, ...], capacity: int, name: str) -> np.ndarray:
    """`values` (str or bytes, any array-like) as the ABI's `S{capacity}` array of `shape`;
    a `ZantError` naming the input for a string longer than `capacity` bytes in UTF-8 or one
    holding a NUL byte (neither has a field form: it is refused, never cut)."""
    array = np.asarray(values, dtype=object)
    if list(array.shape) != list(shape):
        raise ZantError(f"input '{name}' has shape {list(array.shape)}, expected {list(shape)}")
    fields = []
    for index, value in enumerate(array.reshape(-1)):
        data = value if isinstance(value, bytes) else str(value).encode("utf-8")
        if len(data) > capacity:
            raise ZantError(
                f"input '{name}' element {index} is {len(data)} bytes of UTF-8, the model was compiled "
                f"for strings of at most {capacity} (--string-capacity)"
            )
        if b"\0" in data:
            raise ZantError(f"input '{name}' element {index} holds a NUL byte (strings are NUL-padded fields)")
        fields.append(data)
    return np.array(fields, dtype=string_dtype(capacity)).reshape(shape)


def fields(values: np.ndarray, capacity: int) -> np.ndarray:
    """Strings (an array of str or bytes) as their NUL-padded fields: uint8 [*shape, capacity]
    (a constant's bytes; `ValueError` for one longer than `capacity` or holding a NUL)."""
    array = np.asarray(values, dtype=object)
    out = np.zeros((*array.shape, capacity), np.uint8)
    flat = out.reshape(-1, capacity)
    for index, value in enumerate(array.reshape(-1)):
        data = value if isinstance(value, bytes) else str(value).encode("utf-8")
        if len(data) > capacity or b"\0" in data:
            raise ValueError(f"string {data!r} does not fit a field of {capacity} bytes without NUL")
        flat[index, : len(data)] = np.frombuffer(data, np.uint8)
    return out


def decode(array: np.ndarray) -> np.ndarray:
    """An ABI `S{CAP}` array as NumPy's object array of str, as onnx.reference gives strings."""
    flat = [bytes(v).decode("utf-8", errors="replace") for v in array.reshape(-1)]
    result = np.empty(len(flat), dtype=object)
    result[:] = flat
    return result.reshape(array.shape)


__all__ = [
    "DEFAULT_STRING_CAPACITY",
    "MAX_STRING_CAPACITY",
    "STRING_CAPACITY_ATTR",
    "StringType",
    "decode",
    "encode",
    "fields",
    "is_string_dtype",
    "string_dtype",
]
