"""The `onnx.defs` side of the `onnx` dialect: the `OpSchema` of each op class, and the schemas
Zant writes for the ops of other domains (com.microsoft's QLinear ops, Zant's `LookupTable` and
`Guard`: `OWN_SCHEMAS`), from which `onnx_gen` generates their classes (`onnx_base.OWN_OPS`).

Reading, printing and verifying the dialect needs none of this (the generated `ONNX_SIGNATURE`
suffices, `onnx_base`); a pass asking for an op's schema (`op.spec().schema`: attribute defaults,
type constraints, function bodies) imports this module and with it `onnx`. Importing it also
registers `Guard`'s schema with `onnx.defs`, which ONNX's shape inference of the unroller's graphs
needs: the modules that run that inference (`onnx_nodes`, `onnx_functions`, `onnx_shape_folding`)
import it.
"""

from __future__ import annotations

import onnx
import onnx.defs
from onnx import helper
from onnx.defs import OpSchema

from zant.dialects.onnx_names import (
    CONTRIB_DOMAIN,
    QLINEAR_ADD_INPUTS,
    QLINEAR_UNARY_INPUTS,
    REGENERATE,
    ZANT_DOMAIN,
    SchemaKey,
)

_Option = OpSchema.FormalParameterOption


def _qlinear_schema(
    name: str, doc: str, names: tuple[str, ...], output: str, attributes: list[OpSchema.Attribute] = ()
) -> OpSchema:
    """A com.microsoft QLinear op: its tensors and zero points (inputs without `_scale` in their
    name, and `output`) of one 8-bit type T, its scales f32; every input required here, as
    `fold-qdq` always gives them and the lowering reads each (the importer writes a zero point
    a model leaves out as a constant 0, its meaning there)."""
    return OpSchema(
        name,
        CONTRIB_DOMAIN,
        1,
        doc=doc,
        inputs=[OpSchema.FormalParameter(n, "tensor(float)" if n.endswith("_scale") else "T") for n in names],
        outputs=[OpSchema.FormalParameter(output, "T")],
        type_constraints=[("T", ["tensor(int8)", "tensor(uint8)"], "8-bit integers")],
        attributes=list(attributes),
    )


def _qlinear_binary_schema(name: str, doc: str) -> OpSchema:
    """A com.microsoft QLinear binary op (QLinearAdd, QLinearMul): per-tensor scales and zero
    points, A and B broadcast. Its zero points are optional there; here they are required."""
    return _qlinear_schema(name, doc, QLINEAR_ADD_INPUTS, "C")


def _qlinear_leaky_relu_schema() -> OpSchema:
    """com.microsoft's QLinearLeakyRelu: Y = quantize(leaky_relu(dequantize(X), alpha)), per-tensor
    scales and zero points (required here). With alpha = 1 it requantizes X from X's parameters
    to Y's, which `fold-qdq` makes of Q(DQ(x)) with different parameters."""
    return _qlinear_schema(
        "QLinearLeakyRelu", _qlinear_leaky_relu_schema.__doc__ or "", QLINEAR_UNARY_INPUTS, "Y",
        [OpSchema.Attribute("alpha", helper.make_attribute("alpha", 0.01), "Slope for X < 0.")],
    )


def _qlinear_softmax_schema() -> OpSchema:
    """com.microsoft's QLinearSoftmax: Y = quantize(softmax(dequantize(X), axis)), per-tensor
    scales and zero points (required here); `opset` names the Softmax semantics (13: along
    `axis` only, the only ones `fold-qdq` makes)."""
    return _qlinear_schema(
        "QLinearSoftmax", _qlinear_softmax_schema.__doc__ or "", QLINEAR_UNARY_INPUTS, "Y",
        [
            OpSchema.Attribute("axis", helper.make_attribute("axis", -1), "The axis of the softmax."),
            OpSchema.Attribute("opset", helper.make_attribute("opset", 13), "The Softmax opset whose semantics apply."),
        ],
    )


def _qlinear_average_pool_schema() -> OpSchema:
    """com.microsoft's QLinearAveragePool: Y = quantize(average_pool(dequantize(X))), per-tensor
    scales and zero points (required here), AveragePool's attributes (no dilations) and
    `channels_last` (NHWC when 1)."""
    types = {"X": "T", "X_zero_point": "T", "Y_zero_point": "T"}
    names = ("X", "X_scale", "X_zero_point", "Y_scale", "Y_zero_point")
    ints = OpSchema.AttrType.INTS
    return OpSchema(
        "QLinearAveragePool",
        CONTRIB_DOMAIN,
        1,
        doc=_qlinear_average_pool_schema.__doc__ or "",
        inputs=[OpSchema.FormalParameter(n, types.get(n, "tensor(float)")) for n in names],
        outputs=[OpSchema.FormalParameter("Y", "T")],
        type_constraints=[("T", ["tensor(int8)", "tensor(uint8)"], "8-bit integers")],
        attributes=[
            OpSchema.Attribute("auto_pad", helper.make_attribute("auto_pad", "NOTSET"), "How pads are derived."),
            OpSchema.Attribute("ceil_mode", helper.make_attribute("ceil_mode", 0), "Ceil for the output size."),
            OpSchema.Attribute("channels_last", helper.make_attribute("channels_last", 0), "NHWC when 1."),
            OpSchema.Attribute("count_include_pad", helper.make_attribute("count_include_pad", 0), "Count pads."),
            OpSchema.Attribute("kernel_shape", ints, "The window.", required=True),
            OpSchema.Attribute("pads", ints, "Begin and end pads.", required=False),
            OpSchema.Attribute("strides", ints, "Strides.", required=False),
        ],
    )


_CHANNELS_LAST = OpSchema.Attribute("channels_last", helper.make_attribute("channels_last", 0), "NHWC when 1.")


def _qlinear_concat_schema() -> OpSchema:
    """com.microsoft's QLinearConcat: Y = quantize(concat(dequantize(X1), dequantize(X2) …,
    axis)), each input with its own per-tensor scale and zero point."""
    return OpSchema(
        "QLinearConcat",
        CONTRIB_DOMAIN,
        1,
        doc=_qlinear_concat_schema.__doc__ or "",
        inputs=[
            OpSchema.FormalParameter("Y_scale", "tensor(float)"),
            OpSchema.FormalParameter("Y_zero_point", "T"),
            OpSchema.FormalParameter("inputs", "TV", param_option=_Option.Variadic, is_homogeneous=False),
        ],
        outputs=[OpSchema.FormalParameter("Y", "T")],
        type_constraints=[
            ("T", ["tensor(int8)", "tensor(uint8)"], "8-bit integers"),
            ("TV", ["tensor(int8)", "tensor(uint8)", "tensor(float)"], "the triples' tensors, scales and zero points"),
        ],
        attributes=[OpSchema.Attribute("axis", OpSchema.AttrType.INT, "The axis to concatenate on.", required=True)],
    )


def _qgemm_schema() -> OpSchema:
    """com.microsoft's QGemm: Y = alpha · dequantize(A) · dequantize(B) + dequantize(C) (C an
    int32 bias of scale a_scale · b_scale, zero point 0), quantized when `y_scale` is given,
    else f32; `b_scale` per tensor or one per column of Y."""
    optional = _Option.Optional
    types = {"A": "TA", "a_zero_point": "TA", "B": "TB", "b_zero_point": "TB", "C": "TC", "y_zero_point": "TYZ"}
    names = ("A", "a_scale", "a_zero_point", "B", "b_scale", "b_zero_point", "C", "y_scale", "y_zero_point")
    return OpSchema(
        "QGemm",
        CONTRIB_DOMAIN,
        1,
        doc=_qgemm_schema.__doc__ or "",
        inputs=[
            OpSchema.FormalParameter(n, types.get(n, "tensor(float)"), param_option=optional if i >= 6 else _Option.Single)
            for i, n in enumerate(names)
        ],
        outputs=[OpSchema.FormalParameter("Y", "TY")],
        type_constraints=[
            ("TA", ["tensor(int8)", "tensor(uint8)"], "8-bit integers"),
            ("TB", ["tensor(int8)", "tensor(uint8)"], "8-bit integers"),
            ("TC", ["tensor(int32)"], "the int32 bias"),
            ("TYZ", ["tensor(int8)", "tensor(uint8)"], "8-bit integers"),
            ("TY", ["tensor(float)", "tensor(int8)", "tensor(uint8)"], "f32, or Y's zero point's type"),
        ],
        attributes=[
            OpSchema.Attribute("alpha", helper.make_attribute("alpha", 1.0), "The scalar multiplier of A · B."),
            OpSchema.Attribute("transA", helper.make_attribute("transA", 0), "Whether A is transposed."),
            OpSchema.Attribute("transB", helper.make_attribute("transB", 0), "Whether B is transposed."),
        ],
    )


def _lookup_table_schema() -> OpSchema:
    """Y = Table[X - lowest(X)]: each 8-bit X element indexes a 256-entry table (X + 128 for
    int8, X for uint8). `fold-qdq` makes it of DequantizeLinear → an element-wise float op →
    QuantizeLinear, the table computed at compile time (as TFLite Micro does for Sigmoid and
    Tanh)."""
    return OpSchema(
        "LookupTable",
        ZANT_DOMAIN,
        1,
        doc=_lookup_table_schema.__doc__ or "",
        inputs=[OpSchema.FormalParameter("X", "T1"), OpSchema.FormalParameter("Table", "T2")],
        outputs=[OpSchema.FormalParameter("Y", "T2")],
        type_constraints=[
            ("T1", ["tensor(int8)", "tensor(uint8)"], "8-bit integers"),
            ("T2", ["tensor(int8)", "tensor(uint8)"], "8-bit integers"),
        ],
    )


def _guard_schema() -> OpSchema:
    """NAME_predict returns STATUS_BAD_PARAMETER where Condition is false at run time (no result:
    its effect is the function's return, so no pass erases or reorders it). The control-flow
    unroller makes it of a Loop whose trip count (or condition) is only known at run time,
    unrolled for the extent its scan outputs declare: "the loop runs exactly that many times"."""
    return OpSchema(
        "Guard",
        ZANT_DOMAIN,
        1,
        doc=_guard_schema.__doc__ or "",
        inputs=[OpSchema.FormalParameter("Condition", "B")],
        outputs=[],
        type_constraints=[("B", ["tensor(bool)"], "a one-element bool tensor")],
    )


def _sequence_select_schema() -> OpSchema:
    """Output is Sequences[Index] (the first sequence for an Index outside them). The control-flow
    unroller makes it of a Loop that builds a sequence over a trip count (or condition) only
    known at run time, unrolled to the sequence capacity (`--sequence-capacity`): the carried
    sequence after as many copies as ran; `resolve-sequences` makes it a run-time bounded
    sequence (a run-time length, elements chosen at run time). It also makes it of the two
    optionals a run-time If returns (Index the condition: 0 else, 1 then), which
    `resolve-sequences` makes an optional whose presence is a run-time flag."""
    sequences = list(onnx.defs.get_schema("SequenceInsert").type_constraints[1].allowed_type_strs)
    optionals = list(onnx.defs.get_schema("Optional").type_constraints[1].allowed_type_strs)  # of tensors and sequences
    return OpSchema(
        "SequenceSelect",
        ZANT_DOMAIN,
        1,
        doc=_sequence_select_schema.__doc__ or "",
        inputs=[
            OpSchema.FormalParameter("Index", "tensor(int64)"),
            OpSchema.FormalParameter("Sequences", "S", param_option=_Option.Variadic, is_homogeneous=False),
        ],
        outputs=[OpSchema.FormalParameter("Output", "S")],
        type_constraints=[("S", sequences + optionals, "sequences of tensors, optionals of tensors or of sequences")],
    )


SEQUENCE_SELECT_SCHEMA = _sequence_select_schema()
if not onnx.defs.has("SequenceSelect", ZANT_DOMAIN):
    onnx.defs.register_schema(SEQUENCE_SELECT_SCHEMA)

GUARD_SCHEMA = _guard_schema()
if not onnx.defs.has("Guard", ZANT_DOMAIN):
    # Known to ONNX's shape inference, which otherwise stops reporting contradictions (strict
    # mode) in any graph that holds an op it does not know: the unroller's Guards would hide them.
    onnx.defs.register_schema(GUARD_SCHEMA)


OWN_SCHEMAS: dict[tuple[str, str], OpSchema] = {
    (schema.domain, schema.name): schema
    for schema in (
        _qlinear_binary_schema("QLinearAdd", "C = quantize(dequantize(A) + dequantize(B))"),
        _qlinear_binary_schema("QLinearMul", "C = quantize(dequantize(A) · dequantize(B))"),
        _qlinear_leaky_relu_schema(),
        _qlinear_softmax_schema(),
        _qlinear_average_pool_schema(),
        _qlinear_schema(
            "QLinearSigmoid", "Y = quantize(sigmoid(dequantize(X))), per-tensor scales and zero points.",
            QLINEAR_UNARY_INPUTS, "Y",
        ),
        _qlinear_schema(
            "QLinearGlobalAveragePool", "Y = quantize(global_average_pool(dequantize(X))), per-tensor scales and zero points.",
            QLINEAR_UNARY_INPUTS, "Y", [_CHANNELS_LAST],
        ),
        _qlinear_concat_schema(),
        _qgemm_schema(),
        _lookup_table_schema(),
        GUARD_SCHEMA,
        SEQUENCE_SELECT_SCHEMA,
    )
}
"""The schemas of the ops of other domains (`onnx_base.OWN_OPS`) by (domain, op type)."""


def onnx_schema(key: SchemaKey) -> OpSchema:
    """The schema an op class was generated from: one of `OWN_SCHEMAS` or `onnx.defs`'; an error
    naming `REGENERATE` when the installed `onnx` no longer has it."""
    own = OWN_SCHEMAS.get((key.domain, key.op_type))
    if own is not None:
        return own
    try:
        schema = onnx.defs.get_schema(key.op_type, key.version, key.domain)
    except onnx.defs.SchemaError:
        schema = None
    if schema is None or schema.since_version != key.version:
        raise RuntimeError(
            f"onnx {onnx.__version__} has no schema {key.domain or 'ai.onnx'}.{key.op_type} version {key.version}, "
            f"which zant/dialects/onnx_ops.py was generated from: run `{REGENERATE}`"
        )
    return schema
