"""Checks of a parsed model that `onnx.checker` does not make, run before anything reads it.

Each finds a broken file that would otherwise end in a library's exception deep in the import
(NumPy's `cannot reshape array`, onnx's `Invalid tensor data type 99`, a binding's `incompatible
function arguments`) or be compiled although onnxruntime refuses it, and says what is wrong in
one `ZantError`:

* text fields that are not UTF-8 (protobuf hands them over as bytes);
* an opset newer than the installed `onnx` knows (its schemas say nothing about it);
* a graph without outputs (its function would compute nothing), inputs and outputs without a
  tensor element type or with an unknown one, value_info with an unknown one;
* tensors (initializers, Constant values) whose data do not match their dims and type, sparse
  initializers (not supported);
* external data whose sizes contradict the tensor or its file, or that would make the model
  larger than a protobuf can hold (`check_external_sizes`): checked on the declared sizes and
  the file's, before a byte is read.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator

import onnx
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from onnx import AttributeProto, GraphProto, ModelProto, TensorProto

from zant.errors import ZantError
from zant.frontend.expand import DEFAULT_DOMAINS

PROTOBUF_LIMIT = 2**31 - 1
"""The most bytes one serialized protobuf may have: the checker, shape inference and the
version converter each take the whole model, its weights loaded, as one."""

_BITS = {
    TensorProto.INT4: 4, TensorProto.UINT4: 4, TensorProto.FLOAT4E2M1: 4,
    TensorProto.INT2: 2, TensorProto.UINT2: 2,
    TensorProto.FLOAT6E2M3: 6, TensorProto.FLOAT6E3M2: 6,
}
"""Element types packed below a byte in `raw_data` (bits per element)."""

_PACKED_IN_INT32 = {
    TensorProto.INT4: 2, TensorProto.UINT4: 2, TensorProto.FLOAT4E2M1: 2, TensorProto.INT2: 4, TensorProto.UINT2: 4,
}
"""Element types whose `int32_data` entries hold one packed byte each (elements per entry)."""


_TENSOR_TEXT = [
    f for f in TensorProto.DESCRIPTOR.fields if f.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_MESSAGE)
]
"""TensorProto's text fields and messages (name, doc_string, external_data …)."""


def check_model_structure(model: ModelProto) -> None:
    """The checks of a model as parsed (external data not loaded yet); see the module's docstring."""
    _check_text(model, "model")
    _check_opsets(model)
    graph = model.graph
    if not graph.output:
        raise ZantError("invalid ONNX model: the graph has no outputs (it would compute nothing)")
    for sub in _graphs(graph):
        if sub.sparse_initializer:
            name = sub.sparse_initializer[0].values.name
            raise ZantError(f"tensor '{name}': sparse initializers are not supported (store the tensor dense)")
        main = sub is graph
        for kind, values in (("input", sub.input), ("output", sub.output), ("value", sub.value_info)):
            for value in values:
                _check_value_type(value, kind, declared=main and kind != "value")
        for tensor in _tensors(sub):
            check_tensor_data(tensor)


def _check_text(message: Message, path: str) -> None:
    """Every string field of `message` and the messages in it is UTF-8 text."""
    if isinstance(message, TensorProto):  # ListFields would copy its raw data
        fields = [(f, getattr(message, f.name)) for f in _TENSOR_TEXT if f.is_repeated or message.HasField(f.name)]
    else:
        fields = message.ListFields()
    for field, value in fields:
        where = f"{path}.{field.name}"
        items = enumerate(value) if field.is_repeated else [(None, value)]
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            for index, item in items:
                _check_text(item, where if index is None else f"{where}[{index}]")
        elif field.type == FieldDescriptor.TYPE_STRING:
            for index, text in items:
                if isinstance(text, bytes):
                    at = where if index is None else f"{where}[{index}]"
                    raise ZantError(f"malformed ONNX model: {at} is not UTF-8 text ({text[:40]!r})")


def _check_opsets(model: ModelProto) -> None:
    known = {"": onnx.defs.onnx_opset_version(), "ai.onnx.ml": onnx.defs.onnx_ml_opset_version()}
    for entry in model.opset_import:
        domain = "" if entry.domain in DEFAULT_DOMAINS else entry.domain
        newest = known.get(domain)
        if newest is not None and not 1 <= entry.version <= newest:
            name = entry.domain or "ai.onnx"
            raise ZantError(
                f"invalid ONNX model: it imports opset {entry.version} of '{name}'; the installed onnx "
                f"{onnx.__version__} defines opsets 1 to {newest}"
            )


def _type_name(elem_type: int) -> str | None:
    return TensorProto.DataType.Name(elem_type) if elem_type in TensorProto.DataType.values() else None


def _check_value_type(value: onnx.ValueInfoProto, kind: str, declared: bool) -> None:
    """A graph input's or output's (`declared`) tensor element type must be set and known; any
    other value's, if set, known."""
    if not value.type.HasField("tensor_type"):
        return  # sequences, maps, optionals: refused later, where tensors are required
    elem_type = value.type.tensor_type.elem_type
    label = f"{'graph ' if declared else ''}{kind} '{value.name}'"
    if elem_type == TensorProto.UNDEFINED and declared:
        raise ZantError(f"invalid ONNX model: {label} has no element type (elem_type 0)")
    if elem_type != TensorProto.UNDEFINED and _type_name(elem_type) is None:
        raise ZantError(f"invalid ONNX model: {label} has an unknown element type ({elem_type})")


def _graphs(graph: GraphProto) -> Iterator[GraphProto]:
    """`graph` and the subgraphs of its nodes' attributes, at any depth."""
    yield graph
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == AttributeProto.GRAPH:
                yield from _graphs(attribute.g)
            elif attribute.type == AttributeProto.GRAPHS:
                for sub in attribute.graphs:
                    yield from _graphs(sub)


def _tensors(graph: GraphProto) -> Iterator[TensorProto]:
    """The initializers of `graph` and the tensors of its nodes' attributes (not subgraphs')."""
    yield from graph.initializer
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == AttributeProto.TENSOR:
                yield attribute.t
            elif attribute.type == AttributeProto.TENSORS:
                yield from attribute.tensors


def _check_type_and_dims(tensor: TensorProto) -> None:
    if tensor.data_type == TensorProto.UNDEFINED or _type_name(tensor.data_type) is None:
        what = "no element type" if tensor.data_type == TensorProto.UNDEFINED else f"an unknown element type ({tensor.data_type})"
        raise ZantError(f"invalid ONNX model: tensor '{tensor.name}' has {what}")
    if any(d < 0 for d in tensor.dims):
        raise ZantError(f"invalid ONNX model: tensor '{tensor.name}' has a negative dimension {list(tensor.dims)}")


def tensor_bytes(tensor: TensorProto) -> int:
    """The bytes `raw_data` (or external data) holds for `tensor`'s dims and element type; a
    `ZantError` for an unknown type, a negative dimension or strings (which have no raw form)."""
    _check_type_and_dims(tensor)
    if tensor.data_type == TensorProto.STRING:
        raise ZantError(f"invalid ONNX model: tensor '{tensor.name}': STRING tensors have no raw or external data")
    count = math.prod(tensor.dims)
    bits = _BITS.get(tensor.data_type) or 8 * onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    return (count * bits + 7) // 8


def check_tensor_data(tensor: TensorProto) -> None:
    """The data embedded in `tensor` match its dims and element type (external data: see
    `check_external_sizes`)."""
    dims, type_name = list(tensor.dims), _type_name(tensor.data_type)
    if tensor.data_location == TensorProto.EXTERNAL:
        tensor_bytes(tensor)
        return
    if tensor.HasField("raw_data"):
        need = tensor_bytes(tensor)
        if len(tensor.raw_data) != need:
            raise ZantError(
                f"invalid ONNX model: tensor '{tensor.name}' holds {len(tensor.raw_data):,} B of raw data; "
                f"its dims {dims} of {type_name} need {need:,} B"
            )
        return
    _check_type_and_dims(tensor)
    count = math.prod(dims)
    if tensor.data_type in _PACKED_IN_INT32:
        need = -(-count // _PACKED_IN_INT32[tensor.data_type])
    else:
        need = count * (2 if tensor.data_type in (TensorProto.COMPLEX64, TensorProto.COMPLEX128) else 1)
    field = onnx.helper.tensor_dtype_to_field(tensor.data_type)
    have = len(getattr(tensor, field))
    if have != need:
        raise ZantError(
            f"invalid ONNX model: tensor '{tensor.name}' holds {have:,} values in {field}; its dims "
            f"{dims} of {type_name} need {need:,}"
        )


def external_entry(tensor: TensorProto, key: str) -> str | None:
    return next((e.value for e in tensor.external_data if e.key == key), None)


def check_external_sizes(tensors: list[TensorProto], root: str, model_bytes: int) -> None:
    """Each external tensor's declared length (if any) is what its dims and type need, its file
    holds that many bytes from its offset, and the model with every tensor loaded fits in a
    protobuf (`PROTOBUF_LIMIT`), all before any data is read. `root` is the model's folder (the
    locations are known to lie inside it), `model_bytes` the size of the model file."""
    total = model_bytes
    largest: tuple[int, str] = (0, "")
    for tensor in tensors:
        label = f"tensor '{tensor.name}'"
        need = tensor_bytes(tensor)
        location = external_entry(tensor, "location") or ""
        numbers = {}
        for key in ("offset", "length"):
            text = external_entry(tensor, key)
            if text is None:
                continue
            try:
                numbers[key] = int(text)
            except ValueError:
                raise ZantError(f"invalid ONNX model: {label}: external data {key} '{text}' is not a number") from None
            if numbers[key] < 0:
                raise ZantError(f"invalid ONNX model: {label}: external data {key} {numbers[key]} is negative")
        offset, length = numbers.get("offset", 0), numbers.get("length")
        try:
            size = os.stat(os.path.join(root, location)).st_size
        except OSError as error:
            raise ZantError(f"cannot load external data of {label}: '{location}': {error.strerror}") from None
        if length is not None and length != need:
            raise ZantError(
                f"invalid ONNX model: {label} declares {length:,} B of external data; its dims "
                f"{list(tensor.dims)} of {_type_name(tensor.data_type)} need {need:,} B"
            )
        available = max(size - offset, 0)
        # Without a length, onnx reads to the end of the file: it must hold exactly the tensor.
        if available < need or (length is None and available != need):
            raise ZantError(
                f"invalid ONNX model: {label}'s external data '{location}' holds {available:,} B from "
                f"offset {offset:,}; its dims {list(tensor.dims)} of {_type_name(tensor.data_type)} need {need:,} B"
            )
        total += need
        largest = max(largest, (need, tensor.name))
    if total > PROTOBUF_LIMIT:
        raise ZantError(
            f"the model with its external data is {total:,} B (tensor '{largest[1]}' alone {largest[0]:,} B); "
            f"a model is imported as one protobuf, which holds at most {PROTOBUF_LIMIT:,} B (2 GB)"
        )
