"""The capacity of every string value of a graph (see `zant.ir.strings` for the form).

A string graph input gets the capacity the user compiles with (`--string-capacity`), a string
constant (initializer or Constant node) its longest string's bytes; each node's
string results get theirs from the node's inputs, in graph order, by the op's rule:
StringConcat the sum of its inputs' (the longest result is the longest X beside the longest Y),
LabelEncoder its longest string value or default, a classifier with string labels its longest
label, every other op (StringNormalizer, StringSplit,
Identity ...) the largest of its string inputs' (it never lengthens a string: StringNormalizer's
case change is ASCII's, byte for byte).
"""

from __future__ import annotations

from onnx import GraphProto, TensorProto, helper

from zant.errors import ZantError
from zant.ir.strings import MAX_STRING_CAPACITY


def _longest(strings) -> int:
    return max((len(s if isinstance(s, bytes) else str(s).encode("utf-8")) for s in strings), default=0)


def _label_encoder_capacity(node) -> int:
    attributes = {a.name: a for a in node.attribute}
    values = []
    if "values_strings" in attributes:
        values += list(helper.get_attribute_value(attributes["values_strings"]))
    for name in ("values_tensor", "default_tensor"):
        if name in attributes and attributes[name].t.data_type == TensorProto.STRING:
            values += list(attributes[name].t.string_data)
    if "default_string" in attributes:
        values.append(helper.get_attribute_value(attributes["default_string"]))
    else:
        values.append(b"_Unused")  # ONNX's default default_string
    return _longest(values)


def _constant_strings(node) -> list:
    """The strings a Constant node holds (none for a numeric one)."""
    for attribute in node.attribute:
        if attribute.name == "value" and attribute.t.data_type == TensorProto.STRING:
            return list(attribute.t.string_data)
        if attribute.name == "value_string":
            return [attribute.s]
        if attribute.name == "value_strings":
            return list(attribute.strings)
    return []


def string_capacities(graph: GraphProto, types: dict, input_capacity: int) -> dict[str, int]:
    """Value name → bytes per element, for every string value of `graph` (`types`: name → its
    TypeProto, as the importer has them)."""
    if not 1 <= input_capacity <= MAX_STRING_CAPACITY:
        raise ZantError(f"--string-capacity must be in [1, {MAX_STRING_CAPACITY}] bytes, got {input_capacity}")

    def is_string(name: str) -> bool:
        type_proto = types.get(name)
        return type_proto is not None and type_proto.HasField("tensor_type") and (
            type_proto.tensor_type.elem_type == TensorProto.STRING
        )

    capacities = {v.name: input_capacity for v in graph.input if is_string(v.name)}
    for tensor in graph.initializer:  # constants: their longest string
        if tensor.data_type == TensorProto.STRING:
            capacities[tensor.name] = max(_longest(tensor.string_data), 1)
    for node in graph.node:
        known = [capacities[n] for n in node.input if n in capacities]
        if node.op_type == "Constant":
            capacity = max(_longest(_constant_strings(node)), 1)
        elif node.op_type == "StringConcat":
            capacity = sum(known)
        elif node.op_type == "LabelEncoder":
            capacity = _label_encoder_capacity(node)
        elif any(a.name == "classlabels_strings" for a in node.attribute):  # a classifier's labels
            capacity = _longest(next(a.strings for a in node.attribute if a.name == "classlabels_strings"))
        else:
            capacity = max(known, default=input_capacity)
        for name in node.output:
            if name and is_string(name):
                capacities[name] = min(max(capacity, 1), MAX_STRING_CAPACITY)
    return capacities


__all__ = ["string_capacities"]
