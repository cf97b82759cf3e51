"""The shared bases of the `onnx` dialect's ops (`zant.dialects.onnx` is the dialect).

The op classes themselves are declared in `onnx_ops.py`, which `onnx_gen.py` writes from the
ONNX schemas (`python -m zant.dialects.onnx_gen`); this module holds what they are built on:

* `OnnxOp`, the base of every op: its custom format, its schema verifier (run ahead of xDSL's
  structural checks by `onnx_op_definition`), `spec()`: which field holds each ONNX input and
  output, and the schema's counts and attributes, all from the class's generated
  `ONNX_SIGNATURE`, so that reading, printing and verifying the dialect never imports `onnx`
  (each `zant-opt` process would pay ~0.3 s for it: tests/test_startup_imports.py); the
  `OpSchema` itself (`spec().schema`: defaults, type constraints, function bodies) is read from
  `onnx.defs` on first use by a pass (`onnx_schemas`);
* the bases of ops with a verifier of their own (`OptimizerBase`, the QLinear bases,
  `LookupTableBase`, `GuardBase`), whose schemas (of other domains: com.microsoft's QLinear ops,
  Zant's `LookupTable` and `Guard`) are written in `onnx_schemas.py`;
* the domains, `op_name`, and the attribute kinds (`ATTRIBUTE_KINDS`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeVar
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
from xdsl.ir import Attribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    OptionalDef,
    VariadicDef,
    VerificationContext,
    irdl_op_definition,
    irdl_to_attr_constraint,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from zant.dialects.onnx_names import (  # noqa: F401 (re-exported)
    CONTRIB_DOMAIN,
    LOWERED_DOMAINS,
    ML_DOMAIN,
    QLINEAR_ADD_INPUTS,
    QLINEAR_UNARY_INPUTS,
    REGENERATE,
    TRAINING_DOMAIN,
    ZANT_DOMAIN,
    SchemaKey,
    op_class_name,
    op_name,
)

if TYPE_CHECKING:
    from onnx.defs import OpSchema


class Option(IntEnum):
    """How often a schema input or output occurs: `OpSchema.FormalParameterOption`'s values."""

    Single = 0
    Optional = 1
    Variadic = 2


_Option = Option

ATTRIBUTE_KINDS: dict[str, tuple[Any, str]] = {
    "INT": (IntegerAttr[I64], "an integer `N : i64`"),
    "FLOAT": (FloatAttr[Float32Type], "a float `X : f32`"),
    "STRING": (StringAttr, 'a string "..."'),
    "INTS": (DenseArrayBase[I64], "array<i64: ...>"),
    "FLOATS": (DenseArrayBase[Float32Type], "array<f32: ...>"),
    "STRINGS": (ArrayAttr[StringAttr], 'an array of strings ["...", ...]'),
    "TENSOR": (
        DenseIntOrFPElementsAttr | DenseResourceAttr,
        "a dense<...> or dense_resource<...> tensor",
    ),
    "TYPE_PROTO": (TypeAttribute, "a type"),
}
"""ONNX attribute type (`OpSchema.AttrType`'s name) → (property constraint, how the verifier
describes it). The generated ops declare their properties with these constraints (GRAPH and
SPARSE_TENSOR ones as any attribute)."""

SEGMENT_PROPERTIES = ("operandSegmentSizes", "resultSegmentSizes")

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


@dataclass(frozen=True)
class Formal:
    """One schema input or output and the Python field that holds it."""

    onnx_name: str
    field: str
    option: _Option


class Signature(NamedTuple):
    """What reading, printing and verifying an op need of its schema, written into `onnx_ops.py`
    by the generator (`ONNX_SIGNATURE`) so that none of them imports `onnx`: the ONNX names of
    the formal inputs and outputs (whether each is optional or variadic is its field's
    definition), the schema's (min inputs, max inputs, min outputs, max outputs), each
    attribute's type (`OpSchema.AttrType`'s name) and the required attributes."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    counts: tuple[int, int, int, int]
    attributes: Mapping[str, str] = {}
    required: tuple[str, ...] = ()


@dataclass(frozen=True)
class OpSpec:
    """What the generated class knows about its ONNX operator: its signature, the field of each
    formal, and (`schema`, read on first use, importing `onnx`) its `OpSchema`."""

    key: SchemaKey
    signature: Signature
    inputs: tuple[Formal, ...]
    outputs: tuple[Formal, ...]

    @cached_property
    def schema(self) -> OpSchema:
        return onnx_schema(self.key)


def onnx_schema(key: SchemaKey) -> OpSchema:
    """The schema an op class was generated from (`onnx_schemas.onnx_schema`, which imports
    `onnx`): one of `onnx_schemas.OWN_SCHEMAS` or `onnx.defs`'; an error naming `REGENERATE` when
    the installed `onnx` no longer has it."""
    from zant.dialects.onnx_schemas import onnx_schema as schema_of

    return schema_of(key)


_SPECS: dict[type, OpSpec] = {}
"""Op class → its spec, made on first use."""


def _option(definition: Any) -> Option:
    if isinstance(definition, OptionalDef):
        return Option.Optional
    return Option.Variadic if isinstance(definition, VariadicDef) else Option.Single


def _formals(names: Sequence[str], fields: Sequence[tuple[str, Any]]) -> tuple[Formal, ...]:
    """Pairs the schema's formal names with the fields declared for them, in order."""
    return tuple(Formal(name, field, _option(d)) for name, (field, d) in zip(names, fields, strict=True))


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

    ONNX_SCHEMA: ClassVar[SchemaKey]
    """The schema the class was generated from."""
    ONNX_SIGNATURE: ClassVar[Signature]
    """What the format and the verifier need of that schema."""

    @classmethod
    def spec(cls) -> OpSpec:
        spec = _SPECS.get(cls)
        if spec is None:
            signature = cls.ONNX_SIGNATURE
            definition = cls.get_irdl_definition()
            spec = OpSpec(
                cls.ONNX_SCHEMA, signature,
                _formals(signature.inputs, definition.operands), _formals(signature.outputs, definition.results),
            )
            _SPECS[cls] = spec
        return spec

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
        shown = {k: v for k, v in self.properties.items() if k not in SEGMENT_PROPERTIES}
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
        schema_attributes = cls.spec().signature.attributes
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
        signature = self.spec().signature
        min_input, max_input, min_output, max_output = signature.counts
        for what, count, low, high in (
            ("inputs", len(self.operands), min_input, max_input),
            ("outputs", len(self.results), min_output, max_output),
        ):
            if not low <= count <= high:
                raise VerifyException(
                    f"{self.name}: expected {_arity(low, high)} {what}, got {count}"
                )
        for name in self.properties:
            if name not in signature.attributes and name not in SEGMENT_PROPERTIES:
                raise VerifyException(f"{self.name}: unknown attribute '{name}'")
        for name in self.attributes:
            # ONNX attribute names have no dots; dotted names (onnx.node_name) are metadata.
            if "." not in name:
                raise VerifyException(f"{self.name}: unknown attribute '{name}'")
        for name, attribute_type in signature.attributes.items():
            value = self.properties.get(name)
            if value is None:
                if name in signature.required:
                    raise VerifyException(
                        f"{self.name}: missing required attribute '{name}'"
                    )
                continue
            kind = ATTRIBUTE_KINDS.get(attribute_type)
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


_OnnxOpT = TypeVar("_OnnxOpT", bound=type[OnnxOp])


def onnx_op_definition(cls: _OnnxOpT) -> _OnnxOpT:
    """`irdl_op_definition`, with the class's ONNX schema checks (`verify_onnx`) run ahead of
    IRDL's generic ones, as theirs name the ONNX attribute and op."""
    cls = irdl_op_definition(cls)
    cls.verify_ = cls.verify_all
    return cls


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
    states = OPTIMIZER_STATES[op.ONNX_SCHEMA.op_type]
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


class OptimizerBase(OnnxOp):
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


# --------------------------------------------------------------------------------------------
# Ops of other domains that passes create.
# --------------------------------------------------------------------------------------------


def _scalar_type(value: SSAValue) -> Attribute | None:
    """The element type of a one-element tensor (a per-tensor scale or zero point), else None."""
    type = value.type
    if isinstance(type, TensorType) and math.prod(type.get_shape()) == 1:
        return type.get_element_type()
    return None


_INT8_TYPES = (IntegerType(8), IntegerType(8, Signedness.UNSIGNED))


class QLinearAddBase(OnnxOp):
    """Checks the schema's type constraints, which the generated ops leave to the importer's
    ONNX checker but which nothing checks for an op that a pass makes; 16-bit A, B and C too
    (beyond com.microsoft's schema: fold-qdq makes it of 16x8 models' residual Adds)."""

    ELEMENT_TYPES: ClassVar[tuple[Attribute, ...]] = (*_INT8_TYPES, IntegerType(16), IntegerType(16, Signedness.UNSIGNED))

    def verify_onnx(self) -> None:
        super().verify_onnx()
        tensors = (self.operands[0], self.operands[3], self.results[0])
        elements = {v.type.get_element_type() if isinstance(v.type, TensorType) else None for v in tensors}
        element = elements.pop()
        if elements or element not in self.ELEMENT_TYPES:
            spelled = " or ".join(str(t) for t in self.ELEMENT_TYPES)
            raise VerifyException(f"{self.name}: A, B and C must have one element type, {spelled}")
        for scale, zero_point in ((1, 2), (4, 5), (6, 7)):
            names = f"'{QLINEAR_ADD_INPUTS[scale]}' and '{QLINEAR_ADD_INPUTS[zero_point]}'"
            if _scalar_type(self.operands[scale]) != Float32Type() or _scalar_type(
                self.operands[zero_point]
            ) != element:
                raise VerifyException(
                    f"{self.name}: {names} must be one-element tensors of f32 and of {element}"
                )


class QLinearMulBase(QLinearAddBase):
    """QLinearMul has QLinearAdd's inputs and type constraints (8-bit only: its int64 product
    of two 16-bit values times a Q31 multiplier could overflow)."""

    ELEMENT_TYPES: ClassVar[tuple[Attribute, ...]] = _INT8_TYPES


class QLinearLeakyReluBase(OnnxOp):
    """X and Y of one 8-bit type, per-tensor f32 scales and zero points of that type."""

    ELEMENT_TYPES: ClassVar[tuple[Attribute, ...]] = _INT8_TYPES

    def verify_onnx(self) -> None:
        super().verify_onnx()
        element = self.operands[0].type.get_element_type() if isinstance(self.operands[0].type, TensorType) else None
        result = self.results[0].type.get_element_type() if isinstance(self.results[0].type, TensorType) else None
        if element != result or element not in self.ELEMENT_TYPES:
            spelled = " or ".join(str(t) for t in self.ELEMENT_TYPES)
            raise VerifyException(f"{self.name}: X and Y must have one element type, {spelled}")
        for scale, zero_point, names in ((1, 2, "'X_scale' and 'X_zero_point'"), (3, 4, "'Y_scale' and 'Y_zero_point'")):
            if _scalar_type(self.operands[scale]) != Float32Type() or _scalar_type(self.operands[zero_point]) != element:
                raise VerifyException(f"{self.name}: {names} must be one-element tensors of f32 and of {element}")


class QLinearSoftmaxBase(QLinearLeakyReluBase):
    """QLinearSoftmax has QLinearLeakyRelu's inputs and type constraints, 16-bit X and Y too
    (beyond com.microsoft's schema: fold-qdq makes it of 16x8 models' int16 Softmax)."""

    ELEMENT_TYPES: ClassVar[tuple[Attribute, ...]] = (*_INT8_TYPES, IntegerType(16), IntegerType(16, Signedness.UNSIGNED))


class QLinearAveragePoolBase(QLinearLeakyReluBase):
    """QLinearAveragePool has QLinearLeakyRelu's inputs and type constraints."""


class QLinearConcatBase(OnnxOp):
    """(X, X_scale, X_zero_point) triples after Y's scale and zero point: every X of Y's 8-bit
    type, per-tensor f32 scales and zero points of that type."""

    def verify_onnx(self) -> None:
        super().verify_onnx()
        result = self.results[0].type
        element = result.get_element_type() if isinstance(result, TensorType) else None
        if element not in _INT8_TYPES:
            raise VerifyException(f"{self.name}: Y must be a tensor of i8 or ui8")
        triples = self.operands[2:]
        if not triples or len(triples) % 3:
            raise VerifyException(f"{self.name}: expected Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) triples")
        for index in range(0, len(triples), 3):
            value = triples[index].type
            if not isinstance(value, TensorType) or value.get_element_type() != element:
                raise VerifyException(f"{self.name}: input {index + 2} must be a tensor of Y's type {element}")
        for scale, zero_point in ((0, 1), *((i + 3, i + 4) for i in range(0, len(triples), 3))):
            if _scalar_type(self.operands[scale]) != Float32Type() or _scalar_type(self.operands[zero_point]) != element:
                raise VerifyException(f"{self.name}: inputs {scale} and {zero_point} must be one-element tensors of f32 and of {element}")


class QGemmBase(OnnxOp):
    """A and its zero point of one 8-bit type, B and its own alike, f32 scales (B's per tensor
    or per column), an int32 C; with Y_scale, Y and its zero point of one 8-bit type, else Y is
    f32 and has no zero point."""

    def verify_onnx(self) -> None:
        super().verify_onnx()
        values = [*self._flatten(self.spec().inputs), None, None, None][:9]  # trailing absent inputs
        a, a_scale, a_zero, b, b_scale, b_zero, c, y_scale, y_zero = values
        for value, zero, name in ((a, a_zero, "A"), (b, b_zero, "B")):
            element = value.type.get_element_type() if isinstance(value.type, TensorType) else None
            if element not in _INT8_TYPES or not isinstance(zero.type, TensorType) or zero.type.get_element_type() != element:
                raise VerifyException(f"{self.name}: {name} and its zero point must have one element type, i8 or ui8")
        if _scalar_type(a_scale) != Float32Type() or _scalar_type(a_zero) is None:
            raise VerifyException(f"{self.name}: 'a_scale' and 'a_zero_point' must be one-element tensors")
        if not isinstance(b_scale.type, TensorType) or b_scale.type.get_element_type() != Float32Type() or b_scale.type.get_shape() != b_zero.type.get_shape():
            raise VerifyException(f"{self.name}: 'b_scale' must be a tensor of f32 of the shape of 'b_zero_point'")
        if c is not None and (not isinstance(c.type, TensorType) or c.type.get_element_type() != IntegerType(32)):
            raise VerifyException(f"{self.name}: C must be a tensor of i32")
        result = self.results[0].type.get_element_type() if isinstance(self.results[0].type, TensorType) else None
        if y_scale is None:
            if y_zero is not None or result != Float32Type():
                raise VerifyException(f"{self.name}: without 'y_scale', Y is f32 and 'y_zero_point' absent")
        elif _scalar_type(y_scale) != Float32Type() or y_zero is None or result not in _INT8_TYPES or _scalar_type(y_zero) != result:
            raise VerifyException(f"{self.name}: 'y_scale' and 'y_zero_point' must be one-element tensors of f32 and of Y's type, i8 or ui8")


class LookupTableBase(OnnxOp):
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


class GuardBase(OnnxOp):
    """Condition a one-element tensor of i1."""

    def verify_onnx(self) -> None:
        super().verify_onnx()
        condition = self.operands[0].type
        if not isinstance(condition, TensorType) or condition.get_element_type() != IntegerType(1) or math.prod(condition.get_shape()) != 1:
            raise VerifyException(f"{self.name}: Condition must be a one-element tensor of i1")


class SequenceSelectBase(OnnxOp):
    """Index a one-element tensor of i64 (which sequence the result is)."""

    def verify_onnx(self) -> None:
        super().verify_onnx()
        index = self.operands[0].type
        if not isinstance(index, TensorType) or index.get_element_type() != IntegerType(64) or math.prod(index.get_shape()) != 1:
            raise VerifyException(f"{self.name}: Index must be a one-element tensor of i64")


class OwnOp(NamedTuple):
    """An op of another domain, declared from a schema written in `onnx_schemas`."""

    key: SchemaKey
    base: type[OnnxOp]
    name: str
    """Its dialect name. Spelled without the domain (not `onnx.com.microsoft.QLinearAdd`): the
    names `fold-qdq` has always given them; the importer makes a com.microsoft node of one of
    these the same op."""

    @property
    def schema(self) -> OpSchema:
        return onnx_schema(self.key)


def _contrib(op_type: str, base: type[OnnxOp]) -> OwnOp:
    return OwnOp(SchemaKey(CONTRIB_DOMAIN, op_type, 1), base, f"onnx.{op_type}")


OWN_OPS = (
    _contrib("QLinearAdd", QLinearAddBase),
    _contrib("QLinearMul", QLinearMulBase),
    _contrib("QLinearLeakyRelu", QLinearLeakyReluBase),
    _contrib("QLinearSoftmax", QLinearSoftmaxBase),
    _contrib("QLinearAveragePool", QLinearAveragePoolBase),
    _contrib("QLinearSigmoid", QLinearLeakyReluBase),
    _contrib("QLinearGlobalAveragePool", QLinearLeakyReluBase),
    _contrib("QLinearConcat", QLinearConcatBase),
    _contrib("QGemm", QGemmBase),
    OwnOp(SchemaKey(ZANT_DOMAIN, "LookupTable", 1), LookupTableBase, "onnx.LookupTable"),
    OwnOp(SchemaKey(ZANT_DOMAIN, "Guard", 1), GuardBase, "onnx.Guard"),
    OwnOp(SchemaKey(ZANT_DOMAIN, "SequenceSelect", 1), SequenceSelectBase, "onnx.SequenceSelect"),
)
"""The ops of other domains that passes create or the importer reads (onnxruntime's QOperator
ops, which `fold-qoperator` lowers), in the dialect's order; their schemas are
`onnx_schemas.OWN_SCHEMAS`."""


BASES: dict[tuple[str, str], type[OnnxOp]] = {(TRAINING_DOMAIN, name): OptimizerBase for name in OPTIMIZER_STATES}
"""(domain, op type) of the `onnx.defs` ops with a verifier of their own → their base class
(overriding `verify_onnx`); the others derive from `OnnxOp`."""
