"""ONNX nodes ↔ onnx-dialect ops: the importer's translation of one node, usable from the passes.

`op_of_node` makes the op of a `NodeProto` (its attributes as properties, its name as
`onnx.node_name`) from its operands and result types; `constant_of_node` a Constant node's
`onnx.Constant`; `tensor_array` and `static_tensor_type` read tensors and value types. The other
way, `node_of_op` rebuilds a node (its attributes, the schema's defaults spelled out when asked)
for a pass that hands an op to ONNX (`inline-functions` asks ONNX for the op's function body).
Failures are `ZantError`s naming the node.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from onnx import AttributeProto, NodeProto, TensorProto, TypeProto, helper, numpy_helper
from xdsl.dialects.builtin import (
    i64,
    ArrayAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue

from zant.dialects.onnx import NODE_NAME, ConstantOp, OnnxOp, get_attr, onnx_op_class
from zant.dialects.onnx_base import SEGMENT_PROPERTIES
import zant.dialects.onnx_schemas  # noqa: F401 (registers Guard's schema with onnx.defs, for ONNX's inference)
from zant.dialects.onnx_types import graph_attr
from zant.errors import ZantError
from zant.ir.resources import make_constant_attr
from zant.ir.strings import StringType, fields
from zant.ir.types import mlir_element_type

CONSTANT_VALUE_ATTRIBUTES = (
    "value",
    "value_float",
    "value_floats",
    "value_int",
    "value_ints",
    "value_string",
    "value_strings",
)
"""The attributes a Constant node may carry its value in."""


def node_label(node: NodeProto) -> str:
    """How messages name a node: `node 'conv1' (Conv)`, or `node Conv` when it has no name."""
    return f"node '{node.name}' ({node.op_type})" if node.name else f"node {node.op_type}"


def static_tensor_type(type_proto: TypeProto | None, name: str) -> TensorType | None:
    """The static tensor type `type_proto` describes, or None when it is no tensor or has an
    unknown extent (an element type the dialect lacks is a `ZantError` naming `name`)."""
    if type_proto is None or not type_proto.HasField("tensor_type"):
        return None
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape") or any(not d.HasField("dim_value") for d in tensor.shape.dim):
        return None
    return TensorType(mlir_element_type(tensor.elem_type, name), [d.dim_value for d in tensor.shape.dim])


def tensor_array(tensor: TensorProto) -> np.ndarray:
    """A tensor's data as an array (`ZantError` for segmented tensors and data that do not fit);
    a string tensor's as an object array of bytes (`string_constant_op`)."""
    if tensor.data_type != TensorProto.STRING:
        mlir_element_type(tensor.data_type, tensor.name)
    if tensor.HasField("segment"):
        raise ZantError(f"tensor '{tensor.name}': segmented tensors are not supported")
    try:
        return numpy_helper.to_array(tensor)
    except (ValueError, TypeError) as error:  # model_checks compares sizes first; this is the rest
        raise ZantError(f"tensor '{tensor.name}': its data do not fit its dims {list(tensor.dims)} ({error})") from None


def array_type(array: np.ndarray, name: str) -> TensorType:
    """The tensor type of an array."""
    return TensorType(mlir_element_type(helper.np_dtype_to_tensor_dtype(array.dtype), name), array.shape)


def constant_op(array: np.ndarray, result_type: TensorType, name_hint: str) -> ConstantOp:
    """`onnx.Constant` of `array`, its resource named after `name_hint`."""
    return ConstantOp.from_onnx([], [result_type], {"value": make_constant_attr(array, name_hint)})


def string_constant_op(array: np.ndarray, capacity: int, name_hint: str) -> ConstantOp:
    """`onnx.Constant` of strings (an object array of str or bytes) of `capacity` bytes each: a
    `tensor<... x !onnx.string<CAP>>` whose value is the fields' bytes, uint8 [..., CAP]."""
    try:
        data = fields(array, capacity)
    except ValueError as error:
        raise ZantError(f"string constant '{name_hint}': {error}") from None
    return ConstantOp.from_onnx([], [TensorType(StringType(capacity), array.shape)], {"value": make_constant_attr(data, name_hint)})


def constant_node_array(node: NodeProto) -> np.ndarray:
    """The value of a Constant node (strings as an object array of bytes)."""
    (attribute,) = node.attribute
    if attribute.name not in CONSTANT_VALUE_ATTRIBUTES:
        raise ZantError(f"{node_label(node)}: Constant attribute '{attribute.name}' is not supported")
    if attribute.type == AttributeProto.TENSOR:
        return tensor_array(attribute.t)
    if attribute.type in (AttributeProto.STRING, AttributeProto.STRINGS):  # bytes objects
        value = helper.get_attribute_value(attribute)
        strings = [value] if attribute.type == AttributeProto.STRING else list(value)
        array = np.empty(len(strings), dtype=object)
        array[:] = strings
        return array.reshape(()) if attribute.type == AttributeProto.STRING else array
    return np.array(
        helper.get_attribute_value(attribute),
        dtype=np.float32 if attribute.name.startswith("value_float") else np.int64,
    )


def attribute_value(node: NodeProto, attribute: AttributeProto) -> Attribute:
    """An ONNX attribute of `node` as the property the op keeps it in."""
    kind = attribute.type
    if kind == AttributeProto.INT:
        return IntegerAttr(attribute.i, i64)
    if kind == AttributeProto.FLOAT:
        return FloatAttr(attribute.f, Float32Type())
    if kind == AttributeProto.STRING:
        return StringAttr(attribute.s.decode("utf-8", errors="replace"))
    if kind == AttributeProto.INTS:
        return DenseArrayBase.from_list(i64, list(attribute.ints))
    if kind == AttributeProto.FLOATS:
        return DenseArrayBase.from_list(Float32Type(), list(attribute.floats))
    if kind == AttributeProto.STRINGS:
        return ArrayAttr([StringAttr(s.decode("utf-8", errors="replace")) for s in attribute.strings])
    if kind == AttributeProto.TENSOR:
        hint = f"{node.name or node.op_type}_{attribute.name}"
        return make_constant_attr(tensor_array(attribute.t), hint)
    if kind == AttributeProto.GRAPH and node.op_type == "SequenceMap":
        return graph_attr(attribute.g)  # inlined per element by resolve-sequences
    kind_name = AttributeProto.AttributeType.Name(kind)
    raise ZantError(f"{node_label(node)}: attribute '{attribute.name}' of type {kind_name} is not supported")


STRING_TENSOR_ATTRIBUTES = {"keys_tensor": "keys_strings", "values_tensor": "values_strings", "default_tensor": "default_string"}
"""LabelEncoder's string tensor attributes → the list (or single string) attributes that say the
same: a property holds numbers' tensors only, so the importer keeps string ones in these."""


def _property(node: NodeProto, attribute: AttributeProto) -> tuple[str, Attribute]:
    """(property name, value) of one attribute: LabelEncoder's string tensors as their lists."""
    if attribute.type == AttributeProto.TENSOR and attribute.t.data_type == TensorProto.STRING:
        target = STRING_TENSOR_ATTRIBUTES.get(attribute.name) if node.op_type == "LabelEncoder" else None
        if target is None:
            raise ZantError(f"{node_label(node)}: attribute '{attribute.name}' is a string tensor (not supported here)")
        strings = [StringAttr(s.decode("utf-8", errors="replace")) for s in attribute.t.string_data]
        if target == "default_string":
            if len(strings) != 1:
                raise ZantError(f"{node_label(node)}: default_tensor must hold one string, it has {len(strings)}")
            return target, strings[0]
        return target, ArrayAttr(strings)
    return attribute.name, attribute_value(node, attribute)


def op_of_node(
    node: NodeProto, operands: Sequence[SSAValue | None], result_types: Sequence[Attribute | None]
) -> OnnxOp:
    """The op of a (non-Constant) node: ONNX-positional operands and result types (None: absent).
    An empty Optional's `type` (a TYPE_PROTO) is not kept: its result type, `!onnx.opt<...>`,
    is the type it names."""
    kept = [a for a in node.attribute if not (node.op_type == "Optional" and a.type == AttributeProto.TYPE_PROTO)]
    properties = dict(_property(node, a) for a in kept)
    attributes = {NODE_NAME: StringAttr(node.name)} if node.name else {}
    try:
        return onnx_op_class(node.op_type, node.domain).from_onnx(operands, result_types, properties, attributes)
    except ValueError as error:
        raise ZantError(f"{node_label(node)}: {error}") from None


def node_of_op(
    op: OnnxOp, input_names: Sequence[str], output_names: Sequence[str], name: str = "", defaults: bool = False
) -> NodeProto:
    """The node of `op` (inputs and outputs named by the caller, "" for an absent one); with
    `defaults`, the schema's default of every attribute the op leaves out is spelled out."""
    schema = op.spec().schema
    node = helper.make_node(schema.name, list(input_names), list(output_names), name=name or None, domain=schema.domain)
    for attr_name, attribute in schema.attributes.items():
        if attr_name in SEGMENT_PROPERTIES or (attr_name not in op.properties and not defaults):
            continue
        value = get_attr(op, attr_name)
        if value is None:
            continue
        if attribute.type == AttributeProto.TENSOR:
            node.attribute.append(helper.make_attribute(attr_name, numpy_helper.from_array(np.asarray(value))))
        elif attribute.type in (AttributeProto.INTS, AttributeProto.FLOATS, AttributeProto.STRINGS):
            node.attribute.append(helper.make_attribute(attr_name, list(value), attr_type=attribute.type))
        elif attribute.type in (AttributeProto.INT, AttributeProto.FLOAT, AttributeProto.STRING):
            node.attribute.append(helper.make_attribute(attr_name, value))
        else:
            raise ZantError(f"'{op.name}': attribute '{attr_name}' cannot be written back to ONNX")
    return node
