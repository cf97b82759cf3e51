"""Function bodies the importer inlines before any IR exists; schema defaults spelled out.

An op without a lowering that ONNX defines by a function body is imported as itself and
replaced by its body in the onnx dialect by the `inline-functions` pass (the body machinery is
`zant.dialects.onnx_functions`'). Three kinds of node are still inlined here, on the protobuf,
because the IR cannot hold them before inlining:

- a body holding control flow (LinearAttention's Scan): If/Loop/Scan bodies are GRAPH
  attributes, which the dialect has no form for; the unroller (`control_flow`) runs after;
- a node carrying a GRAPH attribute itself (FlexAttention's score_mod), for the same reason;
- an op of another domain (`EXPANDABLE_DOMAINS`: ai.onnx.preview's FlexAttention), whose
  domain version the module does not record (it records the default and ai.onnx.ml opsets).

Narrow floats are also widened here (`onnx_functions._widened`): an f16/bf16 op without a lowering
is computed in f32 between two casts, which is the importer's numeric policy for every op on
storage floats (lowered ones too), so the pass sees the f32 op.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from onnx import AttributeProto, FunctionProto, ModelProto, NodeProto, defs

from zant.dialects.onnx_functions import (  # noqa: F401 (re-exported for the tools and tests)
    DEFAULT_DOMAINS,
    EXPANDABLE_DOMAINS,
    Infer,
    domain_version,
    expand_functions,
    function_body,
    has_function_body,
    schema_with_body,
)
from zant.frontend.control_flow import unroll_control_flow
from zant.frontend.sequences import EdgeLayout
from zant.frontend.inference_fixes import rewrite_misinferred
from zant.ir.onnx_graph import subgraphs


def expand_model(
    model: ModelProto, opset: int, has_lowering: Callable[[str], bool], infer: Infer,
    edges: Mapping[str, EdgeLayout] | None = None, sequence_capacity: int | None = None,
) -> ModelProto:
    """Every graph-level decomposition the importer applies, in order; `infer` re-runs shape
    inference; `edges`: the layouts of the sequence and optional graph inputs;
    `sequence_capacity`: `unroll_control_flow`'s."""
    # Control flow (If/Loop/Scan with static trip counts) is unrolled before the function bodies
    # are expanded, and again after: some bodies hold a Scan (LinearAttention), SequenceMap's a
    # Loop over the sequence's length.
    model = expand_functions(
        unroll_control_flow(model, infer, edges, sequence_capacity), opset, has_lowering, infer, inline_before_import
    )
    return unroll_control_flow(model, infer, edges, sequence_capacity)


def inline_before_import(node: NodeProto, body: FunctionProto) -> bool:
    """Whether `node` must be replaced by its `body` on the protobuf (see the module docstring);
    otherwise it is imported as its op and `inline-functions` inlines it."""
    if node.domain not in DEFAULT_DOMAINS:
        return True
    return any(
        any(True for _ in subgraphs(attribute))
        for inner in [node, *body.node]
        for attribute in inner.attribute
    )


MISREAD_DEFAULTS = {"STFT": ("onesided",)}
"""Attributes whose omission ONNX's shape inference reads as 0 though the schema's default differs:
STFT without `onesided` (default 1) is inferred two-sided once frame_length is a constant, which
contradicts a correctly declared onesided output shape."""


def _schema_defaults_needed(node: NodeProto, opset: int) -> tuple[defs.OpSchema | None, Iterable[str] | None]:
    """The schema whose defaults `node` should spell out and which attributes (None: all)."""
    schema = schema_with_body(node.op_type, opset, node.domain)
    if schema is not None:
        return schema, None
    if node.domain in DEFAULT_DOMAINS and node.op_type in MISREAD_DEFAULTS:
        return defs.get_schema(node.op_type, opset), MISREAD_DEFAULTS[node.op_type]
    return None, None


def spell_out_defaults(model: ModelProto, opset: int) -> ModelProto:
    """Give every node whose op has a function body the schema defaults of the attributes it
    omits, in place. ONNX's shape inference runs such bodies without applying the defaults
    (MeanVarianceNormalization without `axes` fails there); the node means the same either way.
    The `MISREAD_DEFAULTS` attributes of other ops are spelled out for the same reason, and nodes
    whose output extents inference gets wrong (pools' ceil_mode, ConvTranspose's SAME pads with
    output_padding) are rewritten into forms it reads right (`inference_fixes`)."""
    rewrite_misinferred(model)
    for node in model.graph.node:
        schema, names = _schema_defaults_needed(node, domain_version(model, node.domain, opset))
        if schema is None:
            continue
        given = {a.name for a in node.attribute}
        for name, attribute in schema.attributes.items():
            if names is not None and name not in names:
                continue
            if name not in given and attribute.default_value.type != AttributeProto.UNDEFINED:
                node.attribute.append(attribute.default_value)
                node.attribute[-1].name = name
    return model

