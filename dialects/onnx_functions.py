"""ONNX functions: the function bodies ONNX's schemas define ops by, inlined into a protobuf graph.

Many ONNX operators are defined by a function body in their schema (NegativeLogLikelihoodLoss,
SoftmaxCrossEntropyLoss, Attention, RotaryEmbedding, SwiGLU ...), some of them built for the
node's attributes and input types ("context-dependent"). `expand_functions` replaces a node whose
op has no lowering but has such a body by the body's nodes: formal inputs and outputs renamed to
the node's values, the body's own values given fresh names, attribute references
(`ref_attr_name`) resolved from the node or from the schema's defaults. Bodies may call other
functions (the loss ops nest), so expansion repeats, with shape inference in between (the next
round's context-dependent bodies need the types), until nothing changes. Ops that have a
lowering are kept even when they have a body: a dedicated kernel is better code.

A body is protobuf (a `FunctionProto`), so the inlining is done on protobuf: by the
`inline-functions` pass on a one-node model built from an onnx-dialect op (whose types ONNX's
inference then gives), and by the importer for the nodes that must be inlined before any IR
exists (bodies holding control flow, ops of other domains: `zant.frontend.expand`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import onnx
from onnx import AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, TypeProto, defs

import zant.dialects.onnx_schemas  # noqa: F401 (registers Guard's schema with onnx.defs, for ONNX's inference)
from zant.ir.onnx_graph import NameSource, all_names, rename_node

DEFAULT_DOMAINS = ("", "ai.onnx")
EXPANDABLE_DOMAINS = ("ai.onnx.preview",)
"""Other domains whose ops are accepted when ONNX defines them by a function body (FlexAttention);
they never have a lowering of their own."""
MAX_ROUNDS = 8
"""Function bodies nest a few levels at most (a loss calls another loss); this bounds a cycle."""

Infer = Callable[[ModelProto], ModelProto]


def schema_with_body(op_type: str, opset: int, domain: str = "") -> defs.OpSchema | None:
    if domain not in DEFAULT_DOMAINS + EXPANDABLE_DOMAINS:
        return None
    try:
        schema = defs.get_schema(op_type, opset, "" if domain in DEFAULT_DOMAINS else domain)
    except defs.SchemaError:
        return None
    return schema if schema.has_function or schema.has_context_dependent_function else None


def has_function_body(op_type: str, opset: int, domain: str = "") -> bool:
    """Whether ONNX defines `op_type` of `domain` by a function body at `opset` (that domain's version)."""
    return schema_with_body(op_type, opset, domain) is not None


def domain_version(model: ModelProto, domain: str, opset: int) -> int:
    """The version `model` imports of `domain`; `opset` for the default domain."""
    if domain in DEFAULT_DOMAINS:
        return opset
    return next((o.version for o in model.opset_import if o.domain == domain), 1)


def function_body(node: NodeProto, opset: int, types: dict[str, TypeProto]) -> FunctionProto | None:
    """The schema's function body for `node` at `opset` (its domain's version), or None when the
    op has none."""
    schema = schema_with_body(node.op_type, opset, node.domain)
    if schema is None:
        return None
    body = FunctionProto()
    if schema.has_function:
        version = _body_version(schema.function_opset_versions, opset)
        body.ParseFromString(schema.get_function_with_opset_version(version))
        return body if body.node else None
    if schema.has_context_dependent_function:
        version = _body_version(schema.context_dependent_function_opset_versions, opset)
        input_types = [types.get(name, TypeProto()).SerializeToString() for name in node.input]
        try:
            data = schema.get_context_dependent_function_with_opset_version(
                version, node.SerializeToString(), input_types
            )
        except Exception:  # the schema's builder refuses this node (e.g. missing types)
            return None
        body.ParseFromString(data)
        return body if body.node else None
    return None


def _body_version(versions: Iterable[int], opset: int) -> int:
    """A body is registered at the opsets where it changed: take the newest one not after `opset`."""
    return max((v for v in versions if v <= opset), default=opset)


def expand_functions(
    model: ModelProto,
    opset: int,
    has_lowering: Callable[[str], bool],
    infer: Infer,
    inline_here: Callable[[NodeProto, FunctionProto], bool] = lambda node, body: True,
) -> ModelProto:
    """Inline the function body of every node whose op has no lowering (repeatedly); a node for
    which `inline_here(node, body)` is False keeps its op (the importer leaves those to the
    `inline-functions` pass)."""
    names = NameSource(all_names(model.graph))
    for _ in range(MAX_ROUNDS):
        types = _value_types(model.graph)
        nodes: list[NodeProto] = []
        changed = False
        for node in model.graph.node:
            version = domain_version(model, node.domain, opset)
            lowered = node.domain in DEFAULT_DOMAINS and has_lowering(node.op_type)
            if lowered and node.op_type not in BFLOAT16_AS_BITS:
                widened = _widened(node, types, names, (onnx.TensorProto.BFLOAT16,))
                if widened:
                    nodes.extend(widened)
                    changed = True
                    continue
            body = None if lowered else function_body(node, version, types)
            if body is None:
                nodes.append(node)
                continue
            widened = _widened(node, types, names)
            if widened:  # expanded next round, in f32
                nodes.extend(widened)
                changed = True
                continue
            if not inline_here(node, body):
                nodes.append(node)
                continue
            schema = schema_with_body(node.op_type, version, node.domain)
            nodes.extend(_inline(node, body, schema, names))
            _import_opsets(model, body.opset_import)
            changed = True
        if not changed:
            return model
        del model.graph.node[:]
        model.graph.node.extend(nodes)
        model = infer(model)
    return model


NARROW_FLOATS = (onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16)

BFLOAT16_AS_BITS = frozenset({
    "Cast", "CastLike", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
    "Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND", "Expand", "Tile", "Shape",
    "Size", "DepthToSpace", "SpaceToDepth",
})
"""Ops that only move or convert elements. Every other op reading or writing bfloat16 (kept as
bits, converted only by casts: `zant.ir.types.is_storage_float`) computes in f32 between casts,
rounded once, on its results; the uop verifier refuses arithmetic on the bits."""


def _widened(
    node: NodeProto, types: dict[str, TypeProto], names: NameSource, narrow: tuple[int, ...] = NARROW_FLOATS
) -> list[NodeProto]:
    """The node computing in f32 between casts, when it reads `narrow` (f16/bf16) tensors; []
    otherwise.

    An expanded op is still one operator: its body's intermediates (Attention's scores and
    softmax …) are computed in f32, as our own kernels accumulate narrow floats in f32, and only
    its results are rounded; rounding every intermediate to 11 bits would cost several ulp.
    """
    def element_type(name: str) -> int:
        value = types.get(name)
        return value.tensor_type.elem_type if value is not None and value.HasField("tensor_type") else 0

    narrow_inputs = [name for name in node.input if name and element_type(name) in narrow]
    if not narrow_inputs or any(element_type(name) == 0 for name in node.output if name):
        return []
    prefix = f"{node.name or node.op_type}/f32"
    casts, wide = [], {}
    for name in dict.fromkeys(narrow_inputs):
        wide[name] = names.fresh(f"{prefix}/{name}")
        casts.append(onnx.helper.make_node("Cast", [name], [wide[name]], name=f"{prefix}/cast_{name}",
                                           to=onnx.TensorProto.FLOAT))
    copy = NodeProto()
    copy.CopyFrom(node)
    copy.input[:] = [wide.get(name, name) for name in node.input]
    narrowed = []
    for index, name in enumerate(node.output):
        if name and element_type(name) in narrow:
            copy.output[index] = names.fresh(f"{prefix}/{name}")
            narrowed.append(onnx.helper.make_node("Cast", [copy.output[index]], [name], name=f"{prefix}/cast_{name}",
                                                  to=element_type(name)))
    return [*casts, copy, *narrowed]


def _inline(node: NodeProto, body: FunctionProto, schema: defs.OpSchema, names: NameSource) -> list[NodeProto]:
    renamed: dict[str, str] = {}
    for index, formal in enumerate(body.input):
        renamed[formal] = node.input[index] if index < len(node.input) else ""
    for index, formal in enumerate(body.output):
        renamed[formal] = node.output[index] if index < len(node.output) and node.output[index] else names.fresh(formal)
    prefix = f"{node.name or node.op_type}/"

    def rename(name: str) -> str:
        if not name:
            return ""
        if name not in renamed:
            renamed[name] = names.fresh(prefix + name)
        return renamed[name]

    given = {a.name: a for a in node.attribute}
    defaults = {a.name: a for a in body.attribute_proto}
    for name, attribute in schema.attributes.items():
        if attribute.default_value.type != AttributeProto.UNDEFINED:
            defaults.setdefault(name, attribute.default_value)

    inlined = []
    for index, inner in enumerate(body.node):
        copy = NodeProto()
        copy.CopyFrom(inner)
        copy.name = f"{prefix}{inner.name or f'{inner.op_type}_{index}'}"
        rename_node(copy, rename)
        attributes = []
        for attribute in copy.attribute:
            if attribute.ref_attr_name:
                source = given.get(attribute.ref_attr_name) or defaults.get(attribute.ref_attr_name)
                if source is None:
                    continue  # an optional attribute the node does not set: leave it unset
                resolved = AttributeProto()
                resolved.CopyFrom(source)
                resolved.name = attribute.name
                attributes.append(resolved)
            else:
                attributes.append(attribute)
        del copy.attribute[:]
        copy.attribute.extend(attributes)
        inlined.append(copy)
    return inlined


def _import_opsets(model: ModelProto, imports: Iterable[onnx.OperatorSetIdProto]) -> None:
    known = {o.domain for o in model.opset_import}
    for entry in imports:
        if entry.domain not in known and entry.domain not in DEFAULT_DOMAINS:
            model.opset_import.append(entry)
            known.add(entry.domain)


def _value_types(graph: GraphProto) -> dict[str, TypeProto]:
    types = {v.name: v.type for v in [*graph.input, *graph.value_info, *graph.output]}
    for tensor in graph.initializer:
        types.setdefault(tensor.name, onnx.helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims)))
    return types
