"""The `onnx` dialect: one operation per ONNX operator, generated from the `onnx.defs` schemas.

Writing 200 operator classes by hand would copy the ONNX specification and drift from it, so each
default-domain operator (latest version in the installed `onnx`) gets a class generated from its
`OpSchema`: `onnx.Conv` is `ConvOp`. The `ai.onnx.ml` operators (latest live version) are
generated the same way under the `onnx.ml.` prefix: `onnx.ml.TreeEnsemble` is `MlTreeEnsembleOp`
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
schemas written in this module, with verifiers for their type constraints.

Helpers for passes: `op_name`, `onnx_op_class`, `string_value`, `inputs`/`input_value` (ONNX input positions, `None` for an
absent optional input), `outputs`, and `get_attr` (attribute as a Python value, schema default
applied).
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import onnx.defs
from onnx import AttributeProto, helper, numpy_helper
from onnx.defs import OpSchema
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    NoneType,
    Signedness,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Dialect, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    AttrSizedResultSegments,
    IRDLOperation,
    VerificationContext,
    irdl_op_definition,
    irdl_to_attr_constraint,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import NoMemoryEffect
from xdsl.utils.exceptions import VerifyException

_Option = OpSchema.FormalParameterOption
_AttrType = OpSchema.AttrType

_ATTRIBUTE_KINDS: dict[Any, tuple[Any, str]] = {
    _AttrType.INT: (IntegerAttr[I64], "an integer `N : i64`"),
    _AttrType.FLOAT: (FloatAttr[Float32Type], "a float `X : f32`"),
    _AttrType.STRING: (StringAttr, 'a string "..."'),
    _AttrType.INTS: (DenseArrayBase[I64], "array<i64: ...>"),
    _AttrType.FLOATS: (DenseArrayBase[Float32Type], "array<f32: ...>"),
    _AttrType.STRINGS: (ArrayAttr[StringAttr], 'an array of strings ["...", ...]'),
    _AttrType.TENSOR: (
        DenseIntOrFPElementsAttr | DenseResourceAttr,
        "a dense<...> or dense_resource<...> tensor",
    ),
    _AttrType.TYPE_PROTO: (TypeAttribute, "a type"),
}
"""ONNX attribute type → (property constraint, how the verifier describes it)."""

_SEGMENT_PROPERTIES = ("operandSegmentSizes", "resultSegmentSizes")

NOT_A_FUNCTION_OF_INPUTS = frozenset(
    {
        "RandomNormal",
        "RandomNormalLike",
        "RandomUniform",
        "RandomUniformLike",
        "Bernoulli",
        "Multinomial",
        "Dropout",  # random in training mode
    }
)
"""Operators whose results are not determined by their inputs and attributes."""


ENDS_THE_FUNCTION = frozenset({("ai.zant", "Guard")})
"""(domain, op type) of Zant's ops whose effect is NAME_predict's return: never erased nor merged."""


def _is_side_effect_free(schema: OpSchema) -> bool:
    """ONNX ops only compute their outputs, except the random ones (and Zant's Guard); ops holding
    a subgraph are left unmarked, since the subgraph is not visible as IR that xDSL could inspect."""
    return schema.name not in NOT_A_FUNCTION_OF_INPUTS and (schema.domain, schema.name) not in ENDS_THE_FUNCTION and all(
        a.type != _AttrType.GRAPH for a in schema.attributes.values()
    )


@dataclass(frozen=True)
class Formal:
    """One schema input or output and the Python field that holds it."""

    onnx_name: str
    field: str
    option: _Option


@dataclass(frozen=True)
class OpSpec:
    """What the generated class knows about its ONNX operator."""

    schema: OpSchema
    inputs: tuple[Formal, ...]
    outputs: tuple[Formal, ...]


_SPECS: dict[str, OpSpec] = {}
"""Op name (`onnx.Conv`) → its spec; filled in by the generator below."""


def _arity(low: int, high: int) -> str:
    if low == high:
        return str(low)
    if high >= 2**31 - 1:
        return f"at least {low}"
    return f"{low} to {high}"


def _group(name: str, formals: Sequence[Formal], values: Sequence[Any], what: str) -> list[Any]:
    """Split ONNX-positional values (None = absent) into one entry per formal parameter."""
    grouped: list[Any] = []
    for index, formal in enumerate(formals):
        if formal.option == _Option.Variadic:
            rest = list(values[index:])
            if any(v is None for v in rest):
                raise ValueError(f"{name}: variadic {what} '{formal.onnx_name}' cannot be absent")
            grouped.append(rest)
            return grouped
        value = values[index] if index < len(values) else None
        if value is None and formal.option == _Option.Single:
            raise ValueError(f"{name}: {what} {index} ('{formal.onnx_name}') is required")
        grouped.append(value)
    if len(values) > len(formals):
        raise ValueError(f"{name}: expected at most {len(formals)} {what}s, got {len(values)}")
    return grouped


class OnnxOp(IRDLOperation):
    """Base of every generated ONNX operation: custom format, verifier, schema access."""

    @classmethod
    def spec(cls) -> OpSpec:
        return _SPECS[cls.name]

    @classmethod
    def from_onnx(
        cls,
        inputs: Sequence[SSAValue | None],
        result_types: Sequence[Attribute | None],
        properties: dict[str, Attribute] | None = None,
        attributes: dict[str, Attribute] | None = None,
    ) -> OnnxOp:
        """Build from ONNX-positional inputs and result types (None = absent optional)."""
        spec = cls.spec()
        return cls.build(
            operands=_group(cls.name, spec.inputs, inputs, "input"),
            result_types=_group(cls.name, spec.outputs, result_types, "output"),
            properties=properties or {},
            attributes=attributes or {},
        )

    def _flatten(self, formals: Sequence[Formal]) -> list[Any]:
        flat: list[Any] = []
        for formal in formals:
            value = getattr(self, formal.field)
            if formal.option == _Option.Variadic:
                flat.extend(value)
            else:
                flat.append(value)
        while flat and flat[-1] is None:
            flat.pop()
        return flat

    def print(self, printer: Printer) -> None:
        spec = self.spec()
        operands = self._flatten(spec.inputs)
        printer.print_string("(")
        printer.print_list(
            operands,
            lambda v: printer.print_string("none") if v is None else printer.print_operand(v),
        )
        printer.print_string(")")
        shown = {k: v for k, v in self.properties.items() if k not in _SEGMENT_PROPERTIES}
        shown.update(self.attributes)
        if shown:
            printer.print_string(" ")
            printer.print_attr_dict(shown)
        printer.print_string(" : ")
        printer.print_function_type(
            [NoneType() if v is None else v.type for v in operands],
            [NoneType() if r is None else r.type for r in self._flatten(spec.outputs)],
        )

    @classmethod
    def parse(cls, parser: Parser) -> OnnxOp:
        def parse_input() -> UnresolvedOperand | None:
            if parser.parse_optional_keyword("none") is not None:
                return None
            return parser.parse_unresolved_operand()

        start = parser.pos
        unresolved = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_input)
        dictionary = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        end = parser.pos
        function_type = parser.parse_function_type()
        input_types = function_type.inputs.data
        if len(input_types) != len(unresolved):
            parser.raise_error(
                f"{cls.name}: {len(unresolved)} inputs but {len(input_types)} input types",
                start,
                end,
            )
        inputs: list[SSAValue | None] = []
        for operand, type in zip(unresolved, input_types, strict=True):
            if (operand is None) != isinstance(type, NoneType):
                parser.raise_error(
                    f"{cls.name}: an absent input is written `none` and has type `none`",
                    start,
                    end,
                )
            inputs.append(None if operand is None else parser.resolve_operand(operand, type))
        schema_attributes = cls.spec().schema.attributes
        try:
            return cls.from_onnx(
                inputs,
                [None if isinstance(t, NoneType) else t for t in function_type.outputs.data],
                {k: v for k, v in dictionary.items() if k in schema_attributes},
                {k: v for k, v in dictionary.items() if k not in schema_attributes},
            )
        except ValueError as error:
            parser.raise_error(str(error), start, end)

    def verify_onnx(self) -> None:
        """Schema checks with ONNX-level messages, run before xDSL's structural checks."""
        schema = self.spec().schema
        for what, count, low, high in (
            ("inputs", len(self.operands), schema.min_input, schema.max_input),
            ("outputs", len(self.results), schema.min_output, schema.max_output),
        ):
            if not low <= count <= high:
                raise VerifyException(
                    f"{self.name}: expected {_arity(low, high)} {what}, got {count}"
                )
        for name in self.properties:
            if name not in schema.attributes and name not in _SEGMENT_PROPERTIES:
                raise VerifyException(f"{self.name}: unknown attribute '{name}'")
        for name in self.attributes:
            # ONNX attribute names have no dots; dotted names (onnx.node_name) are metadata.
            if "." not in name:
                raise VerifyException(f"{self.name}: unknown attribute '{name}'")
        for name, attribute in schema.attributes.items():
            value = self.properties.get(name)
            if value is None:
                if attribute.required:
                    raise VerifyException(
                        f"{self.name}: missing required attribute '{name}'"
                    )
                continue
            kind = _ATTRIBUTE_KINDS.get(attribute.type)
            if kind is None:
                continue
            try:
                irdl_to_attr_constraint(kind[0]).verify(value, VerificationContext())
            except VerifyException:
                raise VerifyException(
                    f"{self.name}: attribute '{name}' must be {kind[1]}"
                ) from None

    def verify_all(self) -> None:
        self.verify_onnx()
        type(self).get_irdl_definition().verify(self)


# --------------------------------------------------------------------------------------------
# The generator.
# --------------------------------------------------------------------------------------------

_RESERVED = set(dir(OnnxOp))


def _field_name(onnx_name: str, used: set[str]) -> str:
    name = re.sub(r"\W", "_", onnx_name) or "arg"
    if name[0].isdigit():
        name = "_" + name
    while keyword.iskeyword(name) or name in _RESERVED or name in used:
        name += "_"
    used.add(name)
    return name


def _make_op_class(
    schema: OpSchema, base: type[OnnxOp] = OnnxOp, name: str | None = None
) -> type[OnnxOp]:
    """The op class of `schema`, derived from `base`, named `name` (default: `op_name`)."""
    used: set[str] = set()
    body: dict[str, Any] = {"name": name or op_name(schema.name, schema.domain), "__module__": __name__}
    body["__doc__"] = (
        f"ONNX `{schema.domain or 'ai.onnx'}.{schema.name}` (opset {schema.since_version}), "
        "from its schema."
    )

    def formals(params: Sequence[OpSchema.FormalParameter], defs: tuple[Any, Any, Any]):
        result: list[Formal] = []
        for param in params:
            formal = Formal(param.name, _field_name(param.name, used), param.option)
            single, optional, variadic = defs
            body[formal.field] = {
                _Option.Single: single,
                _Option.Optional: optional,
                _Option.Variadic: variadic,
            }[param.option](TensorType)
            result.append(formal)
        return tuple(result)

    inputs = formals(schema.inputs, (operand_def, opt_operand_def, var_operand_def))
    outputs = formals(schema.outputs, (result_def, opt_result_def, var_result_def))
    options: list[Any] = []
    if sum(f.option != _Option.Single for f in inputs) > 1:
        options.append(AttrSizedOperandSegments(as_property=True))
    if sum(f.option != _Option.Single for f in outputs) > 1:
        options.append(AttrSizedResultSegments(as_property=True))
    if options:
        body["irdl_options"] = tuple(options)
    if _is_side_effect_free(schema):
        # NoMemoryEffect (not Pure) lets `dce` erase and `cse` merge the op; it is not marked
        # speculatable, since e.g. an integer Div by zero traps and must not be hoisted.
        body["traits"] = traits_def(NoMemoryEffect())
    for attr_name, attribute in schema.attributes.items():
        constraint = _ATTRIBUTE_KINDS.get(attribute.type, (Attribute, ""))[0]
        body[_field_name(attr_name, used)] = opt_prop_def(constraint, prop_name=attr_name)

    prefix = "" if name else _DOMAIN_PREFIXES[schema.domain]
    class_name = f"{prefix.title().replace('.', '')}{schema.name}Op"
    cls = irdl_op_definition(type(class_name, (base,), body))
    # IRDL would run its generic checks first; ours name the ONNX attribute and op, so go first.
    cls.verify_ = base.verify_all
    _SPECS[cls.name] = OpSpec(schema, inputs, outputs)
    return cls


ML_DOMAIN = "ai.onnx.ml"
"""The traditional machine-learning operators (tree ensembles, linear models, scalers)."""

TRAINING_DOMAIN = "ai.onnx.preview.training"
"""The optimizers' update rules (Adagrad, Adam, Momentum) and Gradient."""

LOWERED_DOMAINS = (ML_DOMAIN, TRAINING_DOMAIN)
"""The domains besides the default one whose ops the importer keeps (when they have a lowering)."""

BOUNDED_ATTR = "zant.bounded_results"
"""On an onnx op: the indices of its results the frontend compiled at the bound of their
data-dependent size (`zant.frontend.bounded`), a dense i64 array; absent when none is."""

OUTPUT_BOUNDS_ATTR = "zant.output_bounds"
"""On `@main`: per graph output, the dimension compiled at its bound, or -1; present only when
some output is bounded, and then the last output is the int32 extents array."""

_DOMAIN_PREFIXES = {"": "", "ai.onnx": "", ML_DOMAIN: "ml.", TRAINING_DOMAIN: "training."}
"""ONNX domain → the op-name prefix inside the `onnx` dialect. ONNX op types have no dots, so
`onnx.ml.TreeEnsemble` cannot clash with a default-domain op."""


def op_name(op_type: str, domain: str = "") -> str:
    """The dialect op name of an ONNX operator: `onnx.Conv`, `onnx.ml.TreeEnsemble`; other
    domains get a name no op of the dialect has (`onnx.com.example.Op`)."""
    return f"onnx.{_DOMAIN_PREFIXES.get(domain, domain + '.')}{op_type}"


_ALL_SCHEMAS = onnx.defs.get_all_schemas_with_history()
"""Every version of every schema ONNX knows, read once for all the domains below (a read builds
~660 schema objects: 7-20 ms of the dialect's import each time)."""


def _latest_schemas(domain: str) -> list[OpSchema]:
    """The newest schema of each operator of `domain` (both spellings of the default domain).

    Deprecated ai.onnx.ml versions are skipped: the importer does not convert that domain's
    opset, and converters still emit TreeEnsembleRegressor/Classifier, whose last live schema
    (opset 3) accepts the nodes of every earlier version."""
    latest: dict[str, OpSchema] = {}
    domains = ("", "ai.onnx") if domain in ("", "ai.onnx") else (domain,)
    for schema in _ALL_SCHEMAS:
        if schema.domain not in domains or (schema.deprecated and domain == ML_DOMAIN):
            continue
        known = latest.get(schema.name)
        if known is None or schema.since_version > known.since_version:
            latest[schema.name] = schema
    return [latest[name] for name in sorted(latest)]


OPTIMIZER_STATES = {"Adagrad": ("H",), "Momentum": ("V",), "Adam": ("V", "H")}
"""The ai.onnx.preview.training optimizers → the state tensors each optimized tensor X carries.
After R and T, the inputs are every X, then every G, then every tensor of each state in turn;
the outputs every new X, then every new tensor of each state in turn."""


@dataclass(frozen=True)
class OptimizerGroup:
    """One optimized tensor of an optimizer op: its inputs and the results that update them."""

    x: SSAValue
    g: SSAValue
    states: tuple[SSAValue, ...]
    new_x: SSAValue
    new_states: tuple[SSAValue, ...]


def optimizer_groups(op: OnnxOp) -> list[OptimizerGroup]:
    """The (X, G, states) groups of an optimizer op, in order; ValueError when the counts do
    not make groups."""
    states = OPTIMIZER_STATES[op.spec().schema.name]
    tensors, results = list(op.operands[2:]), list(op.results)
    count = len(tensors) // (2 + len(states))
    if count == 0 or len(tensors) != count * (2 + len(states)) or len(results) != count * (1 + len(states)):
        names = ", ".join(("X", "G", *states))
        raise ValueError(
            f"{len(tensors)} inputs after R and T and {len(results)} outputs do not make groups of ({names})"
        )
    at = lambda values, column, i: values[column * count + i]  # noqa: E731
    return [
        OptimizerGroup(
            at(tensors, 0, i),
            at(tensors, 1, i),
            tuple(at(tensors, 2 + k, i) for k in range(len(states))),
            at(results, 0, i),
            tuple(at(results, 1 + k, i) for k in range(len(states))),
        )
        for i in range(count)
    ]


class _OptimizerBase(OnnxOp):
    """R (learning rate, float) and T (update count, integer) one-element tensors; the other
    inputs in (X, G, states) groups (`optimizer_groups`), each of one float tensor type, which
    its updated X and states have too."""

    def verify_onnx(self) -> None:
        super().verify_onnx()
        r, t = self.operands[0].type, self.operands[1].type
        if not isinstance(r, TensorType) or math.prod(r.get_shape()) != 1 or isinstance(r.get_element_type(), IntegerType):
            raise VerifyException(f"{self.name}: R must be a one-element float tensor")
        if not isinstance(t, TensorType) or math.prod(t.get_shape()) != 1 or not isinstance(t.get_element_type(), IntegerType):
            raise VerifyException(f"{self.name}: T must be a one-element integer tensor")
        try:
            groups = optimizer_groups(self)
        except ValueError as error:
            raise VerifyException(f"{self.name}: {error}") from None
        for index, group in enumerate(groups):
            types = {v.type for v in (group.x, group.g, *group.states, group.new_x, *group.new_states)}
            if len(types) != 1 or not isinstance(types.pop(), TensorType) or isinstance(group.x.type.get_element_type(), IntegerType):
                raise VerifyException(
                    f"{self.name}: group {index}'s X, G, states and their updates must have one float tensor type"
                )


_BASES: dict[tuple[str, str], type[OnnxOp]] = {(TRAINING_DOMAIN, name): _OptimizerBase for name in OPTIMIZER_STATES}
"""Generated ops with a verifier of their own (a base class overriding `verify_onnx`)."""

_OP_CLASSES: dict[tuple[str, str], type[OnnxOp]] = {
    (domain, schema.name): _make_op_class(schema, _BASES.get((domain, schema.name), OnnxOp))
    for domain in ("", *LOWERED_DOMAINS)
    for schema in _latest_schemas(domain)
}
"""(domain, op type) → op class; the default domain is spelled ""."""


# --------------------------------------------------------------------------------------------
# Ops of other domains that passes create.
# --------------------------------------------------------------------------------------------

CONTRIB_DOMAIN = "com.microsoft"
"""onnxruntime's contrib operators; `onnx.defs` has no schemas for them, so the ones a pass
creates are written here, and registered like the generated ops so printed IR parses back."""


def _scalar_type(value: SSAValue) -> Attribute | None:
    """The element type of a one-element tensor (a per-tensor scale or zero point), else None."""
    type = value.type
    if isinstance(type, TensorType) and math.prod(type.get_shape()) == 1:
        return type.get_element_type()
    return None


_INT8_TYPES = (IntegerType(8), IntegerType(8, Signedness.UNSIGNED))
_QLINEAR_ADD_INPUTS = (
    "A", "A_scale", "A_zero_point", "B", "B_scale", "B_zero_point", "C_scale", "C_zero_point"
)


class _QLinearAddBase(OnnxOp):
    """Checks the schema's type constraints, which the generated ops leave to the importer's
    ONNX checker but which nothing checks for an op that a pass makes."""

    def verify_onnx(self) -> None:
        super().verify_onnx()
        tensors = (self.operands[0], self.operands[3], self.results[0])
        elements = {v.type.get_element_type() if isinstance(v.type, TensorType) else None for v in tensors}
        element = elements.pop()
        if elements or element not in _INT8_TYPES:
            raise VerifyException(f"{self.name}: A, B and C must have one element type, i8 or ui8")
        for scale, zero_point in ((1, 2), (4, 5), (6, 7)):
            names = f"'{_QLINEAR_ADD_INPUTS[scale]}' and '{_QLINEAR_ADD_INPUTS[zero_point]}'"
            if _scalar_type(self.operands[scale]) != Float32Type() or _scalar_type(
                self.operands[zero_point]
            ) != element:
                raise VerifyException(
                    f"{self.name}: {names} must be one-element tensors of f32 and of {element}"
                )


def _qlinear_binary_schema(name: str, doc: str) -> OpSchema:
    """A com.microsoft QLinear binary op (QLinearAdd, QLinearMul): per-tensor scales and zero
    points, A and B broadcast. Its zero points are optional there; here they are required, as
    `fold-qdq` always gives them and the lowering reads every input."""
    types = {"A": "T", "B": "T", "A_zero_point": "T", "B_zero_point": "T", "C_zero_point": "T"}
    return OpSchema(
        name,
        CONTRIB_DOMAIN,
        1,
        doc=doc,
        inputs=[OpSchema.FormalParameter(n, types.get(n, "tensor(float)")) for n in _QLINEAR_ADD_INPUTS],
        outputs=[OpSchema.FormalParameter("C", "T")],
        type_constraints=[("T", ["tensor(int8)", "tensor(uint8)"], "8-bit integers")],
    )


# Spelled without the domain (not `onnx.com.microsoft.QLinearAdd`): the name `fold-qdq` has
# always given it, and the importer refuses com.microsoft ops, so the two cannot meet.
QLinearAddOp = _make_op_class(
    _qlinear_binary_schema("QLinearAdd", "C = quantize(dequantize(A) + dequantize(B))"), _QLinearAddBase, "onnx.QLinearAdd"
)
_OP_CLASSES[(CONTRIB_DOMAIN, "QLinearAdd")] = QLinearAddOp


class _QLinearMulBase(_QLinearAddBase):
    """QLinearMul has QLinearAdd's inputs and type constraints."""


QLinearMulOp = _make_op_class(
    _qlinear_binary_schema("QLinearMul", "C = quantize(dequantize(A) · dequantize(B))"), _QLinearMulBase, "onnx.QLinearMul"
)
_OP_CLASSES[(CONTRIB_DOMAIN, "QLinearMul")] = QLinearMulOp


class _QLinearLeakyReluBase(OnnxOp):
    """X and Y of one 8-bit type, per-tensor f32 scales and zero points of that type."""

    def verify_onnx(self) -> None:
        super().verify_onnx()
        element = self.operands[0].type.get_element_type() if isinstance(self.operands[0].type, TensorType) else None
        result = self.results[0].type.get_element_type() if isinstance(self.results[0].type, TensorType) else None
        if element != result or element not in _INT8_TYPES:
            raise VerifyException(f"{self.name}: X and Y must have one element type, i8 or ui8")
        for scale, zero_point, names in ((1, 2, "'X_scale' and 'X_zero_point'"), (3, 4, "'Y_scale' and 'Y_zero_point'")):
            if _scalar_type(self.operands[scale]) != Float32Type() or _scalar_type(self.operands[zero_point]) != element:
                raise VerifyException(f"{self.name}: {names} must be one-element tensors of f32 and of {element}")


def _qlinear_leaky_relu_schema() -> OpSchema:
    """com.microsoft's QLinearLeakyRelu: Y = quantize(leaky_relu(dequantize(X), alpha)), per-tensor
    scales and zero points (required here). With alpha = 1 it requantizes X from X's parameters
    to Y's, which `fold-qdq` makes of Q(DQ(x)) with different parameters."""
    types = {"X": "T", "X_zero_point": "T", "Y_zero_point": "T"}
    names = ("X", "X_scale", "X_zero_point", "Y_scale", "Y_zero_point")
    return OpSchema(
        "QLinearLeakyRelu",
        CONTRIB_DOMAIN,
        1,
        doc=_qlinear_leaky_relu_schema.__doc__ or "",
        inputs=[OpSchema.FormalParameter(n, types.get(n, "tensor(float)")) for n in names],
        outputs=[OpSchema.FormalParameter("Y", "T")],
        type_constraints=[("T", ["tensor(int8)", "tensor(uint8)"], "8-bit integers")],
        attributes=[OpSchema.Attribute("alpha", helper.make_attribute("alpha", 0.01), "Slope for X < 0.")],
    )


QLinearLeakyReluOp = _make_op_class(_qlinear_leaky_relu_schema(), _QLinearLeakyReluBase, "onnx.QLinearLeakyRelu")
_OP_CLASSES[(CONTRIB_DOMAIN, "QLinearLeakyRelu")] = QLinearLeakyReluOp

class _QLinearSoftmaxBase(_QLinearLeakyReluBase):
    """QLinearSoftmax has QLinearLeakyRelu's inputs and type constraints."""


def _qlinear_softmax_schema() -> OpSchema:
    """com.microsoft's QLinearSoftmax: Y = quantize(softmax(dequantize(X), axis)), per-tensor
    scales and zero points (required here); `opset` names the Softmax semantics (13: along
    `axis` only, the only ones `fold-qdq` makes)."""
    types = {"X": "T", "X_zero_point": "T", "Y_zero_point": "T"}
    names = ("X", "X_scale", "X_zero_point", "Y_scale", "Y_zero_point")
    return OpSchema(
        "QLinearSoftmax",
        CONTRIB_DOMAIN,
        1,
        doc=_qlinear_softmax_schema.__doc__ or "",
        inputs=[OpSchema.FormalParameter(n, types.get(n, "tensor(float)")) for n in names],
        outputs=[OpSchema.FormalParameter("Y", "T")],
        type_constraints=[("T", ["tensor(int8)", "tensor(uint8)"], "8-bit integers")],
        attributes=[
            OpSchema.Attribute("axis", helper.make_attribute("axis", -1), "The axis of the softmax."),
            OpSchema.Attribute("opset", helper.make_attribute("opset", 13), "The Softmax opset whose semantics apply."),
        ],
    )


QLinearSoftmaxOp = _make_op_class(_qlinear_softmax_schema(), _QLinearSoftmaxBase, "onnx.QLinearSoftmax")
_OP_CLASSES[(CONTRIB_DOMAIN, "QLinearSoftmax")] = QLinearSoftmaxOp

class _QLinearAveragePoolBase(_QLinearLeakyReluBase):
    """QLinearAveragePool has QLinearLeakyRelu's inputs and type constraints."""


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


QLinearAveragePoolOp = _make_op_class(_qlinear_average_pool_schema(), _QLinearAveragePoolBase, "onnx.QLinearAveragePool")
_OP_CLASSES[(CONTRIB_DOMAIN, "QLinearAveragePool")] = QLinearAveragePoolOp

ZANT_DOMAIN = "ai.zant"
"""Zant's own operators, which passes (and the control-flow unroller) make and no exporter writes
(the importer refuses the domain in a model): `LookupTable`, `Guard`."""


class _LookupTableBase(OnnxOp):
    """X of an 8-bit integer type, Table a 1-D tensor of 256 elements of Y's 8-bit type, Y of
    X's shape."""

    def verify_onnx(self) -> None:
        super().verify_onnx()
        x, table, y = (v.type for v in (self.operands[0], self.operands[1], self.results[0]))
        if not all(isinstance(t, TensorType) for t in (x, table, y)):
            raise VerifyException(f"{self.name}: X, Table and Y must be tensors")
        if x.get_element_type() not in _INT8_TYPES:
            raise VerifyException(f"{self.name}: X must be a tensor of i8 or ui8")
        if y.get_element_type() not in _INT8_TYPES or table.get_element_type() != y.get_element_type():
            raise VerifyException(f"{self.name}: Table and Y must have one element type, i8 or ui8")
        if tuple(table.get_shape()) != (256,):
            raise VerifyException(f"{self.name}: Table must have shape [256], got {list(table.get_shape())}")
        if tuple(x.get_shape()) != tuple(y.get_shape()):
            raise VerifyException(f"{self.name}: X and Y must have one shape")


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


LookupTableOp = _make_op_class(_lookup_table_schema(), _LookupTableBase, "onnx.LookupTable")
_OP_CLASSES[(ZANT_DOMAIN, "LookupTable")] = LookupTableOp


class _GuardBase(OnnxOp):
    """Condition a one-element tensor of i1."""

    def verify_onnx(self) -> None:
        super().verify_onnx()
        condition = self.operands[0].type
        if not isinstance(condition, TensorType) or condition.get_element_type() != IntegerType(1) or math.prod(condition.get_shape()) != 1:
            raise VerifyException(f"{self.name}: Condition must be a one-element tensor of i1")


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


GUARD_SCHEMA = _guard_schema()
if not onnx.defs.has("Guard", ZANT_DOMAIN):
    # Known to ONNX's shape inference, which otherwise stops reporting contradictions (strict
    # mode) in any graph that holds an op it does not know: the unroller's Guards would hide them.
    onnx.defs.register_schema(GUARD_SCHEMA)
GuardOp = _make_op_class(GUARD_SCHEMA, _GuardBase, "onnx.Guard")
_OP_CLASSES[(ZANT_DOMAIN, "Guard")] = GuardOp

globals().update({cls.__name__: cls for cls in _OP_CLASSES.values()})

ONNX = Dialect("onnx", list(_OP_CLASSES.values()), [])


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


def _python_value(kind: Any, value: Any) -> Any:
    if kind == _AttrType.STRING and isinstance(value, bytes):
        return value.decode("utf-8")
    if kind == _AttrType.STRINGS:
        return [v.decode("utf-8") if isinstance(v, bytes) else v for v in value]
    if kind == _AttrType.TENSOR:
        return numpy_helper.to_array(value)
    if kind in (_AttrType.INTS, _AttrType.FLOATS):
        return list(value)
    return value


def get_attr(op: OnnxOp, name: str) -> Any:
    """An ONNX attribute as a Python value, with the schema default applied when absent.

    int, float, str, list[int], list[float], list[str], a numpy array for TENSOR, the type for
    TYPE_PROTO; None when absent without a default. KeyError if the op has no such attribute.
    """
    attribute = op.spec().schema.attributes.get(name)
    if attribute is None:
        raise KeyError(f"{op.name} has no attribute '{name}'")
    value = op.properties.get(name)
    if value is None:
        default = attribute.default_value
        if default is None or default.type == AttributeProto.UNDEFINED:
            return None
        return _python_value(attribute.type, helper.get_attribute_value(default))
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
