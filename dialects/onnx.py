"""The `onnx` dialect: one operation per ONNX operator, generated from the `onnx.defs` schemas.

Writing 200 operator classes by hand would copy the ONNX specification and drift from it, so each
default-domain operator (latest version in the installed `onnx`) gets a class generated from its
`OpSchema`, written once into the checked-in `onnx_ops.py` by `python -m zant.dialects.onnx_gen`
(their bases are in `onnx_base.py`): `onnx.Conv` is `ConvOp`, which passes import from here
(`tests/test_onnx_dialect_generated.py` fails when the module is stale). The `ai.onnx.ml`
operators (latest live version) are generated the same way under the `onnx.ml.` prefix: `onnx.ml.TreeEnsemble` is `MlTreeEnsembleOp`
(`op_name` spells these names), and the `ai.onnx.preview.training` ones under `onnx.training.`
(`onnx.training.Adam`; its optimizers verify their (X, G, states) groups: `optimizer_groups`).
Each op class has

* one operand definition per schema input, named after it (sanitized to a Python identifier):
  `operand_def` for single inputs, `opt_operand_def` for optional ones, `var_operand_def` for the
  variadic last input. When an op has more than one optional/variadic input (`Clip`, `Pad`,
  `LSTM` ...), `AttrSizedOperandSegments` (as a property) says which are present; results alike;
* one optional property per schema attribute, typed from the schema (INT → `IntegerAttr` of i64,
  FLOAT → `FloatAttr` of f32, STRING → `StringAttr`, INTS/FLOATS → `array<i64: ...>`/`array<f32:
  ...>`, STRINGS → `ArrayAttr` of strings, TENSOR → `dense<...>`/`dense_resource<...>`,
  TYPE_PROTO → a type; GRAPH and SPARSE_TENSOR attributes are accepted as any attribute, the
  importer refuses them). Discardable attributes carry metadata such as `onnx.node_name`.

Operands and results are builtin tensors of any element type. Every op but the random ones
(and If/Loop/Scan/SequenceMap, which hold subgraphs) has the `NoMemoryEffect` trait, so xDSL's
`dce` and `cse` passes work on the dialect.

Custom format: the ONNX inputs in schema order, an absent optional input written `none` (its type
is `none` too), trailing absent inputs left out; attributes in one dictionary (ONNX attribute
names become properties, dotted names stay discardable attributes); then the function type, where
an absent optional *result* in the middle of the list is written `none`:

    %y = onnx.Conv(%x, %w) {strides = array<i64: 1, 1>} : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %c = onnx.Clip(%x, none, %hi) : (tensor<4xf32>, none, tensor<f32>) -> tensor<4xf32>

The generic format (`--print-op-generic`) shows the same op with `operandSegmentSizes` when the
op has them. The verifier checks input/output counts, unknown, mistyped and missing required
attributes with messages naming the op and the attribute, before xDSL's structural checks.

Ops of another domain are defined here too, because `fold-qdq` creates them: com.microsoft's
`QLinearAdd`, `QLinearMul`, `QLinearLeakyRelu`, `QLinearSoftmax` and `QLinearAveragePool` (`onnx.QLinearAdd`,
`QLinearAddOp` …), and Zant's
own `LookupTable` (`onnx.LookupTable`: an 8-bit tensor mapped through a 256-entry table), from
schemas written in `onnx_base.py`, with verifiers for their type constraints.

onnxruntime's QOperator models hold com.microsoft ops too (QLinearSigmoid, QLinearConcat, QGemm …);
the importer reads them as the ops of those names, and `QLINEAR_DEFINITIONS` states each one's
definition (DequantizeLinear → a float op → QuantizeLinear), which the importer types their
outputs from, `fold-qoperator` lowers and the interpreter evaluates.

Helpers for passes: `op_name`, `onnx_op_class`, `string_value`, `inputs`/`input_value` (ONNX input positions, `None` for an
absent optional input), `outputs`, and `get_attr` (attribute as a Python value, schema default
applied).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
)
from xdsl.ir import Dialect, SSAValue

from zant.dialects.onnx_base import (  # noqa: F401 (re-exported)
    CONTRIB_DOMAIN,
    ENDS_THE_FUNCTION,
    LOWERED_DOMAINS,
    ML_DOMAIN,
    NOT_A_FUNCTION_OF_INPUTS,
    OPTIMIZER_STATES,
    TRAINING_DOMAIN,
    ZANT_DOMAIN,
    Formal,
    OnnxOp,
    OpSpec,
    OptimizerGroup,
    SchemaKey,
    op_name,
    optimizer_groups,
)
from zant.dialects.onnx_attributes import (  # noqa: F401 (the discardable attributes, re-exported)
    AVERAGE_COUNT,
    BOUNDED_ATTR,
    FIXED_POINT,
    GRAPH_NAME,
    INPUT_NAMES,
    ML_OPSET,
    NODE_NAME,
    OPSET,
    OUTPUT_BOUNDS_ATTR,
    OUTPUT_NAMES,
    OUTPUT_SEQUENCES_ATTR,
    REQUANTIZE,
    average_count,
    requantize_attr,
    requantize_parameters,
)
from zant.dialects.onnx_function_ops import FUNCTION_OPS, CallOp, FunctionOp, ReturnOp  # noqa: F401 (re-exported)
from zant.dialects.onnx_types import OptionalType, SequenceType  # noqa: F401 (re-exported)
from zant.ir.strings import StringType  # noqa: F401 (re-exported)
from zant.dialects.onnx_ops import *  # noqa: F403 (the op classes: ConvOp ...)
from zant.dialects.onnx_ops import (
    ALL_OPS,
    QGemmOp,
    QLinearAddOp,
    QLinearAveragePoolOp,
    QLinearConcatOp,
    QLinearGlobalAveragePoolOp,
    QLinearLeakyReluOp,
    QLinearMulOp,
    QLinearSigmoidOp,
    QLinearSoftmaxOp,
)

ONNX = Dialect("onnx", [*ALL_OPS, *FUNCTION_OPS], [SequenceType, OptionalType, StringType])

_OP_CLASSES: dict[tuple[str, str], type[OnnxOp]] = {
    (cls.ONNX_SCHEMA.domain, cls.ONNX_SCHEMA.op_type): cls for cls in ALL_OPS
}
"""(domain, op type) → op class; the default domain is spelled ""."""


@dataclass(frozen=True)
class QLinearDefinition:
    """A com.microsoft QLinear op as onnxruntime defines it: DequantizeLinear of the inputs at the
    (value, scale, zero point) positions `quantized`, the float op `op` with the node's
    attributes but `dropped`, QuantizeLinear into the (scale, zero point) at positions `output`.
    QLinearConcat's triples are all its inputs after the first two (`triples`); a QGemm without
    an output scale gives the float result (its C, at position 6, is int32 in a_scale · b_scale)."""

    op: str
    quantized: tuple[tuple[int, int, int], ...]
    output: tuple[int, int]
    dropped: tuple[str, ...] = ()
    variadic_from: int | None = None
    """QLinearConcat: the triples start at this input and run to the last."""

    def triples(self, count: int) -> list[tuple[int, int, int]]:
        """The (value, scale, zero point) input positions of an op with `count` inputs."""
        if self.variadic_from is None:
            return list(self.quantized)
        return [(i, i + 1, i + 2) for i in range(self.variadic_from, count - 2, 3)]


_UNARY = ((0, 1, 2),)
_BINARY = ((0, 1, 2), (3, 4, 5))

QLINEAR_DEFINITIONS: dict[type[OnnxOp], QLinearDefinition] = {
    QLinearAddOp: QLinearDefinition("Add", _BINARY, (6, 7)),
    QLinearMulOp: QLinearDefinition("Mul", _BINARY, (6, 7)),
    QLinearSigmoidOp: QLinearDefinition("Sigmoid", _UNARY, (3, 4)),
    QLinearLeakyReluOp: QLinearDefinition("LeakyRelu", _UNARY, (3, 4)),
    QLinearSoftmaxOp: QLinearDefinition("Softmax", _UNARY, (3, 4), ("opset",)),
    QLinearAveragePoolOp: QLinearDefinition("AveragePool", _UNARY, (3, 4), ("channels_last",)),
    QLinearGlobalAveragePoolOp: QLinearDefinition("GlobalAveragePool", _UNARY, (3, 4), ("channels_last",)),
    QLinearConcatOp: QLinearDefinition("Concat", (), (0, 1), variadic_from=2),
    QGemmOp: QLinearDefinition("Gemm", _BINARY, (7, 8)),
}
"""The com.microsoft ops a QOperator model holds, by their definitions."""


# --------------------------------------------------------------------------------------------
# Helpers for passes.
# --------------------------------------------------------------------------------------------


def onnx_op_class(op_type: str, domain: str = "") -> type[OnnxOp]:
    """The op class of an ONNX operator type (`"Conv"` → `ConvOp`, `("Scaler", "ai.onnx.ml")`
    → `MlScalerOp`); KeyError if unknown."""
    return _OP_CLASSES[("" if domain == "ai.onnx" else domain, op_type)]


def inputs(op: OnnxOp) -> list[SSAValue | None]:
    """All ONNX inputs in ONNX order, variadic ones flattened, None for absent optional ones."""
    return op._flatten(op.spec().inputs)


def input_value(op: OnnxOp, index: int) -> SSAValue | None:
    """The ONNX input at `index`, or None when that optional input is absent."""
    values = inputs(op)
    return values[index] if index < len(values) else None


def outputs(op: OnnxOp) -> list[SSAValue | None]:
    """All ONNX outputs in ONNX order, None for an absent optional output."""
    return op._flatten(op.spec().outputs)


def string_value(attr: StringAttr) -> str:
    """The text of a string attribute (xDSL's parser keeps escaped non-ASCII strings as bytes)."""
    data = attr.data
    return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data


def _default_value(op: OnnxOp, name: str) -> Any:
    """The schema's default of the attribute `name` of `op` as a Python value, None without one
    (reads the schema: imports `onnx`)."""
    from onnx import AttributeProto, helper, numpy_helper

    default = op.spec().schema.attributes[name].default_value
    if default is None or default.type == AttributeProto.UNDEFINED:
        return None
    value = helper.get_attribute_value(default)
    kind = op.spec().signature.attributes[name]
    if kind == "STRING" and isinstance(value, bytes):
        return value.decode("utf-8")
    if kind == "STRINGS":
        return [v.decode("utf-8") if isinstance(v, bytes) else v for v in value]
    if kind == "TENSOR":
        return numpy_helper.to_array(value)
    if kind in ("INTS", "FLOATS"):
        return list(value)
    return value


def get_attr(op: OnnxOp, name: str) -> Any:
    """An ONNX attribute as a Python value, with the schema default applied when absent.

    int, float, str, list[int], list[float], list[str], a numpy array for TENSOR, the type for
    TYPE_PROTO; None when absent without a default. KeyError if the op has no such attribute.
    """
    if name not in op.spec().signature.attributes:
        raise KeyError(f"{op.name} has no attribute '{name}'")
    value = op.properties.get(name)
    if value is None:
        return _default_value(op, name)
    match value:
        case IntegerAttr():
            return value.value.data
        case FloatAttr():
            return value.value.data
        case StringAttr():
            return string_value(value)
        case DenseArrayBase():
            return list(value.get_values())
        case ArrayAttr():
            return [string_value(s) if isinstance(s, StringAttr) else s for s in value.data]
        case DenseIntOrFPElementsAttr() | DenseResourceAttr():
            from zant.ir.resources import attr_to_array

            return attr_to_array(value)
        case _:
            return value
