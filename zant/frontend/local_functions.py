"""Model-local functions (`ModelProto.functions`): each instance a call needs, as a model.

An ONNX function is generic: its values are untyped and its nodes may take attributes from the
calling node (`ref_attr_name`). The onnx dialect's values are typed and its attributes are
values, so the importer imports one `onnx.function` per *instance*: the function for one
calling node's input types and attribute values (`instance_key`; nodes alike share it). Its
body is made a model of its own here (`instance_model`: the body's nodes with the attribute
references resolved from the node or the function's defaults, the graph inputs typed as the
node's inputs, the function's opset imports), which the importer then converts, infers and
imports as it does the main graph; a node calling a function becomes an `onnx.call` of the
instance, and `inline-functions` inlines it. Nothing is inlined on the protobuf.
"""

from __future__ import annotations

from onnx import AttributeProto, FunctionProto, ModelProto, NodeProto, TypeProto, ValueInfoProto, helper

from zant.errors import ZantError

DEFAULT_DOMAINS = ("", "ai.onnx")


def local_functions(model: ModelProto) -> dict[tuple[str, str], FunctionProto]:
    """The model's functions by (domain, name); a function that overloads another (same domain
    and name, `overload` set) is refused, as the import cannot tell which one a node calls."""
    functions: dict[tuple[str, str], FunctionProto] = {}
    for function in model.functions:
        key = (function.domain, function.name)
        if key in functions or function.overload:
            raise ZantError(f"model-local function '{function.domain}.{function.name}' is overloaded, which is not supported")
        functions[key] = function
    return functions


def calls_local_function(node: NodeProto, functions: dict[tuple[str, str], FunctionProto]) -> bool:
    return (node.domain, node.op_type) in functions


def instance_key(node: NodeProto, function: FunctionProto, input_types: list[TypeProto | None]) -> tuple:
    """What makes two calls the same instance: the function, which inputs are present and their
    types, and the values of the attributes the function declares."""
    declared = set(function.attribute) | {a.name for a in function.attribute_proto}
    attributes = sorted((a.name, a.SerializeToString()) for a in node.attribute if a.name in declared)
    types = tuple(None if t is None else t.SerializeToString(deterministic=True) for t in input_types)
    return (function.domain, function.name, types, tuple(attributes))


def instance_model(
    model: ModelProto, node: NodeProto, function: FunctionProto, input_types: list[TypeProto | None]
) -> ModelProto:
    """The function's body for `node` as a model: graph inputs the formal inputs the node gives,
    typed `input_types`; graph outputs the formal outputs; the body's attribute references
    resolved; the function's opset imports (and the model's functions, for nested calls)."""
    if len(node.input) > len(function.input) or len(node.output) > len(function.output):
        raise ZantError(
            f"node '{node.name or node.op_type}': {len(node.input)} inputs and {len(node.output)} outputs, "
            f"but function '{function.domain}.{function.name}' has {len(function.input)} and {len(function.output)}"
        )
    absent = {formal for index, formal in enumerate(function.input) if index >= len(node.input) or not node.input[index]}
    given = {a.name: a for a in node.attribute}
    defaults = {a.name: a for a in function.attribute_proto}
    nodes = []
    for inner in function.node:
        copy = NodeProto()
        copy.CopyFrom(inner)
        copy.input[:] = ["" if name in absent else name for name in inner.input]
        attributes = []
        for attribute in copy.attribute:
            if not attribute.ref_attr_name:
                attributes.append(attribute)
                continue
            source = given.get(attribute.ref_attr_name) or defaults.get(attribute.ref_attr_name)
            if source is None:
                continue  # an attribute the node leaves unset and the function gives no default
            resolved = AttributeProto()
            resolved.CopyFrom(source)
            resolved.name = attribute.name
            attributes.append(resolved)
        del copy.attribute[:]
        copy.attribute.extend(attributes)
        nodes.append(copy)
    inputs = []
    for formal, type_proto in zip(function.input, input_types):
        if formal in absent:
            continue
        if type_proto is None:
            raise ZantError(f"node '{node.name or node.op_type}': no type for an input of function '{function.domain}.{function.name}'")
        value = ValueInfoProto(name=formal)
        value.type.CopyFrom(type_proto)
        inputs.append(value)
    outputs = [ValueInfoProto(name=formal) for formal in function.output]
    graph = helper.make_graph(nodes, f"{function.domain}.{function.name}", inputs, outputs)
    opsets = list(function.opset_import)
    if not any(o.domain in DEFAULT_DOMAINS for o in opsets):
        opsets += [o for o in model.opset_import if o.domain in DEFAULT_DOMAINS]
    known = {o.domain for o in opsets}
    opsets += [o for o in model.opset_import if o.domain not in known]
    instance = helper.make_model(graph, opset_imports=opsets, functions=list(model.functions))
    instance.ir_version = model.ir_version
    return instance
