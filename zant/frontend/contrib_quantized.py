"""onnxruntime's com.microsoft QLinear ops in a model: which ones import, and their output types.

`quantize_static` in QOperator format writes QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearLeakyRelu, QLinearSoftmax, QLinearConcat, QLinearAveragePool, QLinearGlobalAveragePool
and QGemm in the com.microsoft domain. The importer makes each node the onnx-dialect op of that
name, as it is (`fold-qoperator` then lowers them; `QLINEAR_DEFINITIONS` in the dialect states
their definitions).

`onnx.defs` has no schemas for them, so ONNX's shape inference leaves their outputs untyped;
`type_contrib_outputs` gives each the type of its definition ("dequantize the inputs, run the
float op, quantize the output"): the shape ONNX infers for the float op on the same tensors, the
element type of the output's zero point (f32 for a QGemm without an output scale).

Only the zero points are optional in those ops: `absent_zero_points` says which a node leaves out
and which input's element type each has; the importer writes each as a constant 0 of that type
(what an absent zero point means there; the output's is of the first input's type, as
onnxruntime reads it).
"""

from __future__ import annotations

from onnx import ModelProto, NodeProto, TensorProto, TypeProto, defs, helper, shape_inference

from zant.dialects.onnx import CONTRIB_DOMAIN, QLINEAR_DEFINITIONS, QLinearDefinition
from zant.errors import ZantError


_DEFINITIONS: dict[str, QLinearDefinition] = {cls.ONNX_SCHEMA.op_type: d for cls, d in QLINEAR_DEFINITIONS.items()}


def is_contrib_op(node: NodeProto) -> bool:
    """Whether `node` is one of the com.microsoft ops the importer reads (`QLINEAR_DEFINITIONS`)."""
    return node.domain == CONTRIB_DOMAIN and node.op_type in _DEFINITIONS


def _label(node: NodeProto) -> str:
    return f"node '{node.name}' ({CONTRIB_DOMAIN}.{node.op_type})" if node.name else f"node {node.op_type}"


def _attribute(node: NodeProto, name: str, default):
    found = next((a for a in node.attribute if a.name == name), None)
    return default if found is None else helper.get_attribute_value(found)


def check_contrib_node(node: NodeProto) -> None:
    """Refuse what Zant does not compile of a node `is_contrib_op` accepts, naming it."""
    if _attribute(node, "channels_last", 0):
        raise ZantError(f"{_label(node)}: channels_last = 1 is not supported")
    if node.op_type == "QLinearSoftmax":
        opset = _attribute(node, "opset", 13)
        if opset < 13 and _attribute(node, "axis", -1) != -1:  # along the last axis, they agree
            raise ZantError(f"{_label(node)}: the opset {opset} Softmax semantics (axis not -1) are not supported")
    if node.op_type == "QLinearConcat" and (len(node.input) - 2 <= 0 or (len(node.input) - 2) % 3):
        raise ZantError(f"{_label(node)}: expected Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) triples")


def _input(node: NodeProto, index: int) -> str:
    return node.input[index] if index < len(node.input) else ""


def absent_zero_points(node: NodeProto) -> list[tuple[int, int]]:
    """(input position of a zero point `node` leaves out, position of the tensor whose element
    type it has), for a node `is_contrib_op` accepts. A QGemm without an output scale has no output zero
    point."""
    definition = _DEFINITIONS[node.op_type]
    triples = definition.triples(len(node.input))
    found = [(zero_point, value) for value, _, zero_point in triples if not _input(node, zero_point)]
    scale, zero_point = definition.output
    if _input(node, scale) and not _input(node, zero_point):
        found.append((zero_point, triples[0][0]))
    return found


def _output_type(node: NodeProto, types: dict[str, TypeProto], opset: int) -> TypeProto | None:
    """The type of `node`'s output: its definition's float op's shape, its zero point's type."""
    definition = _DEFINITIONS[node.op_type]
    positions = [value for value, _, _ in definition.triples(len(node.input))]
    if node.op_type == "QGemm" and _input(node, 6):
        positions.append(6)
    names = [_input(node, i) for i in positions]
    if any(name not in types or not types[name].tensor_type.HasField("shape") for name in names):
        return None
    float_types = {
        name: helper.make_tensor_type_proto(TensorProto.FLOAT, [d.dim_value for d in types[name].tensor_type.shape.dim])
        for name in names
    }
    attributes = {
        a.name: helper.get_attribute_value(a) for a in node.attribute if a.name not in definition.dropped
    }
    float_node = helper.make_node(definition.op, names, ["y"], **attributes)
    try:
        inferred = shape_inference.infer_node_outputs(defs.get_schema(definition.op, opset), float_node, float_types)
    except (shape_inference.InferenceError, defs.SchemaError) as error:
        raise ZantError(f"{_label(node)}: {str(error).strip().splitlines()[0]}") from None
    result = inferred.get("y")
    if result is None or not result.tensor_type.HasField("shape"):
        return None
    scale, zero_point = definition.output
    if not _input(node, scale):
        element = TensorProto.FLOAT
    else:
        like = _input(node, zero_point) or names[0]
        if like not in types:
            return None
        element = types[like].tensor_type.elem_type
    typed = TypeProto()
    typed.CopyFrom(result)
    typed.tensor_type.elem_type = element
    return typed


def type_contrib_outputs(model: ModelProto, opset: int) -> bool:
    """Give the outputs of `model`'s `is_contrib_op` nodes their types (as value_info) where still
    open and their inputs' are known; True if any was given."""
    graph = model.graph
    types = {
        v.name: v.type for v in [*graph.input, *graph.value_info, *graph.output] if v.type.HasField("tensor_type")
    }
    types.update(
        (t.name, helper.make_tensor_type_proto(t.data_type, list(t.dims))) for t in graph.initializer
    )
    outputs = {v.name: v for v in graph.output}
    changed = False
    for node in graph.node:
        if not is_contrib_op(node):
            continue
        output = node.output[0]
        known = types.get(output)
        if known is not None and known.tensor_type.HasField("shape") and known.tensor_type.elem_type:
            continue
        typed = _output_type(node, types, opset)
        if typed is None:
            continue
        if output in outputs:
            outputs[output].type.CopyFrom(typed)
        else:
            graph.value_info.append(helper.make_value_info(output, typed))
        types[output] = typed
        changed = True
    return changed


__all__ = ["absent_zero_points", "check_contrib_node", "is_contrib_op", "type_contrib_outputs"]
