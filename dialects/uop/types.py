"""The uop dialect's types, attributes, enums and traits: scalar and vector type predicates,
the memory types (`!uop.buffer`, `!uop.view`, `!uop.ptr`, `!uop.acc`), the buffer roles, the live
ranges `plan-arenas` sets, and the memory effects the ops declare."""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass

from xdsl.dialects.builtin import AnyFloat, VectorType, ArrayAttr, IndexType, IntAttr, IntegerType
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import IRDLOperation, irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import EffectInstance, MemoryEffect, MemoryEffectKind, Pure
from xdsl.dialects.utils import EnumAttribute
from zant.ir.types import is_packed, packed_bytes
from xdsl.ir import SpacedOpaqueSyntaxAttribute
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum




ScalarType = IntegerType | IndexType | AnyFloat
"""The types of scalar uop values: integers (signless, signed, unsigned, i1), index, floats."""


def is_scalar_type(t: Attribute) -> bool:
    return isinstance(t, IntegerType | IndexType) or isinstance(t, AnyFloat)


def is_float_type(t: Attribute) -> bool:
    return isinstance(t, AnyFloat)


def is_vector_type(t: Attribute) -> bool:
    """A 1-D vector of a sized scalar type (not index): `vector<8xf32>`."""
    return (
        isinstance(t, VectorType)
        and t.get_num_dims() == 1
        and is_scalar_type(t.get_element_type())
        and not isinstance(t.get_element_type(), IndexType)
    )


def lane_type(t: Attribute) -> Attribute:
    """The element type of a vector, or the scalar type itself."""
    return t.get_element_type() if isinstance(t, VectorType) else t


def lanes(t: Attribute) -> int:
    """The lane count of a vector type; 1 for a scalar."""
    return t.get_shape()[0] if isinstance(t, VectorType) else 1


def build(
    op: IRDLOperation,
    operands: Sequence[SSAValue | Operation] = (),
    result_types: Sequence[Attribute] = (),
    properties: dict[str, Attribute] | None = None,
    regions: Sequence[Region] = (),
) -> None:
    """Initialize `op` from its operands, results, properties and regions in definition order,
    as `Operation.create` does. The ops the passes make by the thousand (constants, index
    arithmetic, geps, loads, stores, loops, accumulators) call it from their constructors
    instead of IRDL's generic builder, which re-derives each op's operand groups from its
    definition: 45 µs per op against 8-12 µs, ~0.3 s of ResNet-8's compile for the Cortex-M4
    (~9,700 ops). Their groups are single, or one variadic group last, so the flat list is the
    op IRDL builds; the verifier checks every op as before."""
    Operation.__init__(
        op,
        operands=[SSAValue.get(v) for v in operands],
        result_types=result_types,
        properties=properties or {},
        regions=regions,
    )


# ---------------------------------------------------------------------------------------------
# Memory effects: what an op touches, so xDSL's cse, licm and dce can reason about it
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Accesses(MemoryEffect):
    """The op reads, writes or allocates the memory named by one of its values: `Accesses(READ,
    "ptr")` on `uop.load`. The effect carries that value, so an analysis can ask which buffer."""

    kind: MemoryEffectKind
    value: str
    """The name of the operand or result (a property of the op) the effect is on."""

    def get_effects(self, op: Operation) -> Set[EffectInstance]:  # type: ignore[override]
        return frozenset({EffectInstance(self.kind, getattr(op, self.value))})


class BindsOutsideMemory(MemoryEffect):
    """The op binds memory that lives on after the function (a graph input or output, an arena):
    an allocation of no value of this function, so dce keeps it even unused (it is part of the
    C signature or of the plan) and cse never merges two."""

    @classmethod
    def get_effects(cls, op: Operation) -> Set[EffectInstance]:
        return frozenset({EffectInstance(MemoryEffectKind.ALLOC)})


class PureUnlessTrapping(Pure):
    """No memory effects; speculatable (licm may hoist it out of a loop that might not run)
    unless the op's `may_trap()` says so. `Pure` still holds for passes that ask only about
    effects (`fuse-loops`)."""

    @classmethod
    def is_speculatable(cls, op: Operation) -> bool:
        return not op.may_trap()  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------


def _print_shape_and_type(printer: Printer, shape: Sequence[int], element_type: Attribute):
    for dim in shape:
        printer.print_string(f"{dim}x")
    printer.print_attribute(element_type)


def _parse_int_list(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)


@irdl_attr_definition
class BufferType(ParametrizedAttribute, TypeAttribute):
    """A flat buffer of `size` elements: `!uop.buffer<64xf32>`."""

    name = "uop.buffer"

    size: IntAttr
    element_type: Attribute

    def __init__(self, size: int | IntAttr, element_type: Attribute):
        super().__init__(IntAttr(size) if isinstance(size, int) else size, element_type)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            _print_shape_and_type(printer, [self.size.data], self.element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr, Attribute]:
        with parser.in_angle_brackets():
            shape, element_type = parser.parse_ranked_shape()
        if len(shape) != 1:
            parser.raise_error("!uop.buffer takes one size: !uop.buffer<64xf32>")
        return IntAttr(shape[0]), element_type

    def verify(self) -> None:
        if self.size.data < 0:
            raise VerifyException(f"buffer size must be non-negative, got {self.size.data}")
        if not is_scalar_type(self.element_type) or isinstance(self.element_type, IndexType):
            raise VerifyException(f"buffer element type must be a number type, got {self.element_type}")

    @property
    def byte_size(self) -> int:
        """Its bytes in memory: packed element types (int4 …) several to a byte, rounded up."""
        if is_packed(self.element_type):
            return packed_bytes(self.size.data, self.element_type)
        return self.size.data * element_byte_size(self.element_type)


@irdl_attr_definition
class ViewType(ParametrizedAttribute, TypeAttribute):
    """A strided view of a buffer: `!uop.view<2x3xf32, strides [3, 1], offset 0>`.

    Element (i0, …, in) of the view is element `offset + Σ ik·strides[k]` of the buffer; a stride of
    0 broadcasts that dimension.
    """

    name = "uop.view"

    shape: ArrayAttr[IntAttr]
    strides: ArrayAttr[IntAttr]
    offset: IntAttr
    element_type: Attribute

    def __init__(
        self,
        shape: Sequence[int],
        strides: Sequence[int],
        offset: int,
        element_type: Attribute,
    ):
        super().__init__(
            ArrayAttr(IntAttr(d) for d in shape),
            ArrayAttr(IntAttr(s) for s in strides),
            IntAttr(offset),
            element_type,
        )

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape)

    def get_strides(self) -> tuple[int, ...]:
        return tuple(s.data for s in self.strides)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            _print_shape_and_type(printer, self.get_shape(), self.element_type)
            printer.print_string(", strides [")
            printer.print_list(self.get_strides(), lambda s: printer.print_string(str(s)))
            printer.print_string(f"], offset {self.offset.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute, ...]:
        with parser.in_angle_brackets():
            shape, element_type = parser.parse_ranked_shape()
            parser.parse_punctuation(",")
            parser.parse_keyword("strides")
            strides = _parse_int_list(parser)
            parser.parse_punctuation(",")
            parser.parse_keyword("offset")
            offset = parser.parse_integer()
        return (
            ArrayAttr(IntAttr(d) for d in shape),
            ArrayAttr(IntAttr(s) for s in strides),
            IntAttr(offset),
            element_type,
        )

    def verify(self) -> None:
        if len(self.shape) != len(self.strides):
            raise VerifyException(
                f"view has {len(self.shape)} dimensions but {len(self.strides)} strides"
            )
        if any(d < 0 for d in self.get_shape()):
            raise VerifyException("view dimensions must be non-negative")

    def element_range(self) -> tuple[int, int]:
        """The lowest and highest buffer element the view can touch (for a non-empty view)."""
        low = high = self.offset.data
        for dim, stride in zip(self.get_shape(), self.get_strides()):
            reach = (dim - 1) * stride
            if reach < 0:
                low += reach
            else:
                high += reach
        return low, high


@irdl_attr_definition
class PtrType(ParametrizedAttribute, TypeAttribute):
    """The address of one element: `!uop.ptr<f32>`, made by `uop.gep`."""

    name = "uop.ptr"

    element_type: Attribute


@irdl_attr_definition
class AccType(ParametrizedAttribute, TypeAttribute):
    """A mutable scalar accumulator cell: `!uop.acc<f32>`, made by `uop.define_acc`."""

    name = "uop.acc"

    element_type: Attribute


def element_byte_size(t: Attribute) -> int:
    if isinstance(t, IntegerType):
        return max(1, (t.width.data + 7) // 8)
    if isinstance(t, AnyFloat):
        return t.bitwidth // 8
    raise ValueError(f"no storage size for {t}")


def memory_element_type(t: Attribute) -> Attribute:
    if isinstance(t, BufferType | ViewType | PtrType):
        return t.element_type
    raise ValueError(f"{t} is not a memory type")


# ---------------------------------------------------------------------------------------------
# Buffers and views
# ---------------------------------------------------------------------------------------------

class BufferRole(StrEnum):
    """Who owns a `uop.define_global`: the caller (a graph input or output) or the function (a
    constant, placed in the constant arena)."""

    INPUT = "input"
    OUTPUT = "output"
    CONSTANT = "constant"


BUFFER_ROLES = tuple(r.value for r in BufferRole)


def print_quoted_enum(attr: EnumAttribute, printer: Printer) -> None:
    """The roles and strategies print as string literals (`uop.define_global "input" 0 ...`),
    the spelling the uop text had before they were enums; the parser takes either form."""
    printer.print_string_literal(attr.data.value)


def parse_enum(cls: type[EnumAttribute], parser: AttrParser, what: str) -> StrEnum:
    span_start = parser.pos
    value = parser.parse_optional_identifier_or_str_literal()
    if value is None:
        parser.raise_error(f"expected {what}")
    values = [e.value for e in cls.enum_type]
    if value not in values:
        parser.raise_error(
            f"{what} must be one of {', '.join(values)}, got '{value}'", span_start, parser.pos
        )
    return cls.enum_type(value)


@irdl_attr_definition
class BufferRoleAttr(EnumAttribute[BufferRole], SpacedOpaqueSyntaxAttribute):
    """`#uop<buffer_role "input">` in the generic form; `"input"` in `uop.define_global`'s."""

    name = "uop.buffer_role"

    def print_parameter(self, printer: Printer) -> None:
        print_quoted_enum(self, printer)

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> BufferRole:
        return parse_enum(cls, parser, "role")



@irdl_attr_definition
class StepRangeAttr(ParametrizedAttribute, SpacedOpaqueSyntaxAttribute):
    """The first and last top-level step (op of the function body) a scratch buffer is live at,
    both included: `5 to 9` in `uop.define_local`'s format, `#uop<step_range 5 to 9>` generic."""

    name = "uop.step_range"

    first: IntAttr
    last: IntAttr

    def __init__(self, first: int, last: int):
        super().__init__(IntAttr(first), IntAttr(last))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"{self.first.data} to {self.last.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr, IntAttr]:
        first = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("to")
        last = parser.parse_integer(allow_boolean=False)
        return IntAttr(first), IntAttr(last)

    def verify(self) -> None:
        if not 0 <= self.first.data <= self.last.data:
            raise VerifyException(
                f"a live range needs 0 <= first <= last, got {self.first.data} to {self.last.data}"
            )





def verify_vector_of(t: Attribute, element_type: Attribute, what: str) -> None:
    if not is_vector_type(t):
        raise VerifyException(f"{what} must be a 1-D vector of a number type, got {t}")
    if lane_type(t) != element_type:
        raise VerifyException(f"{what} {t} has lanes of {lane_type(t)}, expected {element_type}")

