"""The `uop` dialect: Z-Ant's micro-ops as an MLIR-style dialect.

A model lowered to uop is a flat program over flat buffers:

* buffers: `uop.define_global` (a graph input, output or constant) and `uop.define_local`
  (a scratch intermediate; `plan-arenas` gives it an offset in the scratch arena);
* `uop.view` re-reads a buffer with a shape, strides (0 = broadcast) and an offset, emitting no code,
  so transposes, broadcasts, reshapes and slices cost nothing;
* `uop.gep` turns a buffer or view and one index per dimension into a `!uop.ptr`, which
  `uop.load` / `uop.store` read and write;
* `uop.range` is a counted loop whose region's block argument is the induction variable;
  `uop.endrange` terminates its body (implicitly, it is not printed);
* scalar values are plain builtin types (`f32`, `i8`, `i1`, `index` …), computed by one op per
  ALU primitive (`uop.add`, `uop.exp`, `uop.cmplt` …), `uop.cast`, `uop.where` and `uop.const`;
* `uop.define_acc` makes a mutable scalar cell (`!uop.acc<T>`) for reductions: `uop.mulacc`
  adds a product into it, `uop.acc_set` overwrites it, `uop.acc_get` reads it;
* vectors (`vector<8xf32>`, made by the `vectorize` pass): `uop.vload` / `uop.vstore` read and
  write N consecutive elements from a gep, `uop.broadcast` splats a scalar, the ALU ops of
  `VECTOR_ALU_OPS`, `uop.mulacc` (on a `!uop.acc<vector<…>>`) and lossless `uop.cast`s work
  lane by lane, the compares give a `vector<N x i1>` that a `uop.where` selects lanes with, and
  `uop.reduce_add` sums the lanes.

Index arithmetic uses the same ALU ops on `index` values; integer `div` truncates toward zero and
`rem` takes the sign of the dividend (C semantics), as Zig's `@divTrunc` / `@rem` do.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence, Set
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialect_interfaces.constant_materialization import ConstantMaterializationInterface
from xdsl.dialects.builtin import (
    AnyFloat,
    Float32Type,
    Float64Type,
    VectorType,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    I32,
    I64,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    UnitAttr,
    i1,
)
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParamAttrConstraint,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.interfaces import HasCanonicalizationPatternsInterface, HasFolderInterface
from xdsl.parser import AttrParser, Parser
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.printer import Printer
from xdsl.traits import (
    Commutative,
    ConstantLike,
    EffectInstance,
    HasParent,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    OpTrait,
    Pure,
    RecursiveMemoryEffect,
    SingleBlockImplicitTerminator,
)
from xdsl.dialects.utils import EnumAttribute
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


def _print_quoted_enum(attr: EnumAttribute, printer: Printer) -> None:
    """The roles and strategies print as string literals (`uop.define_global "input" 0 ...`),
    the spelling the uop text had before they were enums; the parser takes either form."""
    printer.print_string_literal(attr.data.value)


def _parse_enum(cls: type[EnumAttribute], parser: AttrParser, what: str) -> StrEnum:
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
        _print_quoted_enum(self, printer)

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> BufferRole:
        return _parse_enum(cls, parser, "role")


@irdl_op_definition
class DefineGlobalOp(IRDLOperation):
    """A buffer owned outside the scratch arena: a graph input, output, or constant.

    `index` is the position among the graph's inputs / outputs (or constants); `tensor_name` is
    the original ONNX name, kept verbatim for reports and sanitized by the backend. A constant
    carries its `value`.
    """

    name = "uop.define_global"

    role = prop_def(BufferRoleAttr)
    index = prop_def(IntegerAttr[I64])
    tensor_name = prop_def(StringAttr)
    value = opt_prop_def(DenseIntOrFPElementsAttr | DenseResourceAttr)
    offset = opt_prop_def(IntegerAttr[I64])
    """For a constant: its byte offset in the constant arena, set by `plan-arenas`."""
    result = result_def(BufferType)

    assembly_format = (
        "$role $index $tensor_name (`at` $offset^)? (`value` $value^)? attr-dict `:` type($result)"
    )

    traits = lazy_traits_def(lambda: (GlobalBufferEffect(),))

    def __init__(
        self,
        role: BufferRole | str,
        index: int,
        tensor_name: str,
        buffer_type: BufferType,
        value: Attribute | None = None,
    ):
        super().__init__(
            properties={
                "role": BufferRoleAttr(BufferRole(role)),
                "index": IntegerAttr(index, 64),
                "tensor_name": StringAttr(tensor_name),
                "value": value,
            },
            result_types=[buffer_type],
        )

    def verify_(self) -> None:
        role = self.role.data
        if (role == BufferRole.CONSTANT) != (self.value is not None):
            raise VerifyException("a constant buffer needs a value, and only a constant has one")
        if self.offset is not None and role != BufferRole.CONSTANT:
            raise VerifyException("only a constant has an arena offset")
        if self.offset is not None and self.offset.value.data < 0:
            raise VerifyException("offset must be non-negative")
        if self.value is not None:
            value_type = self.value.get_type()
            count = math.prod(value_type.get_shape())
            buffer_type = self.result.type
            assert isinstance(buffer_type, BufferType)
            if count != buffer_type.size.data:
                raise VerifyException(
                    f"value has {count} elements but the buffer holds {buffer_type.size.data}"
                )
            if value_type.get_element_type() != buffer_type.element_type:
                raise VerifyException("value and buffer element types differ")
        if role in (BufferRole.INPUT, BufferRole.OUTPUT):
            _verify_signature_indices(self)


def _verify_signature_indices(op: DefineGlobalOp) -> None:
    """The inputs (outputs) of one block are numbered 0..k-1, each once, and k is at most the
    length of the function's `onnx.input_names` (`onnx.output_names`) when it has them. Only the
    block's first global of the role walks the whole block; the others stop at that first one."""
    block = op.parent_block()
    if block is None:
        return
    role = op.role.data
    first = next(
        o for o in block.ops if isinstance(o, DefineGlobalOp) and o.role.data == role
    )
    if first is not op:
        return
    seen: dict[int, DefineGlobalOp] = {}
    for other in block.ops:
        if not isinstance(other, DefineGlobalOp) or other.role.data != role:
            continue
        index = other.index.value.data
        if index in seen:
            raise VerifyException(
                f"two {role} buffers with index {index}: "
                f"'{seen[index].tensor_name.data}' and '{other.tensor_name.data}'"
            )
        seen[index] = other
    missing = sorted(set(range(len(seen))) - seen.keys())
    if missing:
        raise VerifyException(
            f"{role} indices must be 0..{len(seen) - 1}, got {sorted(seen)} (no {role} {missing[0]})"
        )
    function = block.parent_op()
    names = None if function is None else function.attributes.get(f"onnx.{role}_names")
    if isinstance(names, ArrayAttr) and len(seen) > len(names):
        raise VerifyException(
            f"{role} index {len(seen) - 1} ('{seen[len(seen) - 1].tensor_name.data}') is past "
            f"the graph's {len(names)} {role}s"
        )


def _verify_writable(ptr: SSAValue) -> None:
    """A store's pointer must not reach (through its gep and view) a constant or input buffer."""
    gep = ptr.owner
    if not isinstance(gep, GepOp):
        return
    owner = gep.buffer.owner
    if isinstance(owner, DefineGlobalOp) and owner.role.data in (BufferRole.CONSTANT, BufferRole.INPUT):
        raise VerifyException(
            f"store into the {owner.role.data} buffer '{owner.tensor_name.data}'"
        )


class GlobalBufferEffect(MemoryEffect):
    """A constant is a value of this function (an allocation of its result: dce drops an unused
    one); an input or output is the caller's memory (kept even unused: it is in the signature)."""

    @classmethod
    def get_effects(cls, op: Operation) -> Set[EffectInstance]:
        assert isinstance(op, DefineGlobalOp)
        if op.role.data == BufferRole.CONSTANT:
            return Accesses(MemoryEffectKind.ALLOC, "result").get_effects(op)
        return BindsOutsideMemory.get_effects(op)


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


@irdl_op_definition
class DefineLocalOp(IRDLOperation):
    """A scratch buffer for an intermediate: `uop.define_local "t" at 32 live 5 to 9 : ...`.
    `offset` (bytes into the scratch arena) and `live` (the top-level steps it is live at) are set
    by `plan-arenas`; `in "dtcm"` (set by `place-memories`) names the board memory whose scratch
    arena holds it (the offset is into that arena); without it, the one scratch arena."""

    name = "uop.define_local"

    tensor_name = prop_def(StringAttr)
    offset = opt_prop_def(IntegerAttr[I64])
    live = opt_prop_def(StepRangeAttr)
    memory = opt_prop_def(StringAttr)
    result = result_def(BufferType)

    assembly_format = (
        "$tensor_name (`at` $offset^)? (`live` $live^)? (`in` $memory^)? attr-dict `:` type($result)"
    )

    traits = traits_def(Accesses(MemoryEffectKind.ALLOC, "result"))

    def __init__(self, tensor_name: str, buffer_type: BufferType, offset: int | None = None):
        super().__init__(
            properties={
                "tensor_name": StringAttr(tensor_name),
                "offset": None if offset is None else IntegerAttr(offset, 64),
            },
            result_types=[buffer_type],
        )

    def verify_(self) -> None:
        if self.offset is not None and self.offset.value.data < 0:
            raise VerifyException("offset must be non-negative")
        if self.live is not None and self.offset is None:
            raise VerifyException("a live range without an offset: plan-arenas sets both")
        if self.memory is not None and self.offset is None:
            raise VerifyException("a memory without an offset: place-memories places planned buffers")


@irdl_op_definition
class ViewOp(IRDLOperation):
    """A strided alias of a buffer; no code is emitted for it."""

    name = "uop.view"

    source = operand_def(BufferType)
    result = result_def(ViewType)

    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    traits = traits_def(Pure())

    def __init__(self, source: SSAValue | Operation, view_type: ViewType):
        super().__init__(operands=[source], result_types=[view_type])

    def verify_(self) -> None:
        source_type = self.source.type
        view_type = self.result.type
        assert isinstance(source_type, BufferType) and isinstance(view_type, ViewType)
        if source_type.element_type != view_type.element_type:
            raise VerifyException(
                f"view element type {view_type.element_type} differs from the buffer's "
                f"{source_type.element_type}"
            )
        if math.prod(view_type.get_shape()) == 0:
            return
        low, high = view_type.element_range()
        if low < 0 or high >= source_type.size.data:
            raise VerifyException(
                f"view reaches elements {low}..{high}, outside the buffer of "
                f"{source_type.size.data} elements"
            )


@irdl_op_definition
class GepOp(IRDLOperation):
    """The address of one element of a buffer (one flat index) or view (one index per dimension).

    `%p = uop.gep %v[%i, %j] : !uop.view<2x3xf32, strides [3, 1], offset 0>`;
    `uop.gep inbounds %v[…]` when the address is proven inside the buffer.
    """

    name = "uop.gep"

    source = operand_def(BufferType | ViewType)
    indices = var_operand_def(IndexType)
    inbounds = opt_prop_def(UnitAttr)
    """Set when the address is proven inside its buffer for every index value the loops give:
    the backend then emits no run-time bounds check for it (`uop.gep inbounds %v[%i] …`)."""
    result = result_def(PtrType)

    traits = traits_def(Pure())

    def __init__(
        self,
        source: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
        inbounds: bool = False,
    ):
        source_type = SSAValue.get(source).type
        build(
            self, [source, *indices], [PtrType(memory_element_type(source_type))],
            {"inbounds": UnitAttr()} if inbounds else None,
        )

    @property
    def buffer(self) -> SSAValue:
        """The buffer addressed: the source, or the buffer behind a view."""
        owner = self.source.owner
        return owner.source if isinstance(owner, ViewOp) else self.source

    @property
    def layout(self) -> tuple[tuple[int, ...], int]:
        """The strides of the indices into the buffer and the offset they start from."""
        view = self.source.type
        if isinstance(view, ViewType):
            return tuple(view.get_strides()), view.offset.data
        return (1,), 0

    def verify_(self) -> None:
        source_type = self.source.type
        rank = len(source_type.shape) if isinstance(source_type, ViewType) else 1
        if len(self.indices) != rank:
            raise VerifyException(
                f"expected {rank} indices for {source_type}, got {len(self.indices)}"
            )
        assert isinstance(self.result.type, PtrType)
        if self.result.type.element_type != memory_element_type(source_type):
            raise VerifyException("result pointer element type differs from the source's")

    def print(self, printer: Printer):
        printer.print_string(" inbounds " if self.inbounds is not None else " ")
        printer.print_operand(self.source)
        printer.print_string("[")
        printer.print_list(self.indices, printer.print_operand)
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)

    @classmethod
    def parse(cls, parser: Parser) -> GepOp:
        inbounds = parser.parse_optional_keyword("inbounds") is not None
        source = parser.parse_unresolved_operand()
        indices = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_unresolved_operand
        )
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        source_type = parser.parse_type()
        op = cls(
            parser.resolve_operand(source, source_type),
            [parser.resolve_operand(i, IndexType()) for i in indices],
            inbounds,
        )
        op.attributes.update(attributes)
        return op


@irdl_op_definition
class LoadOp(IRDLOperation):
    """`%x = uop.load %p : f32` reads the element at `%p`."""

    name = "uop.load"

    T: ClassVar = VarConstraint("T", AnyAttr())
    ptr = operand_def(ParamAttrConstraint(PtrType, (T,)))
    result = result_def(T)

    assembly_format = "$ptr attr-dict `:` type($result)"

    traits = traits_def(Accesses(MemoryEffectKind.READ, "ptr"))

    def __init__(self, ptr: SSAValue | Operation):
        ptr_type = SSAValue.get(ptr).type
        assert isinstance(ptr_type, PtrType)
        build(self, [ptr], [ptr_type.element_type])


@irdl_op_definition
class StoreOp(IRDLOperation):
    """`uop.store %x, %p : f32` writes `%x` to the element at `%p`."""

    name = "uop.store"

    T: ClassVar = VarConstraint("T", AnyAttr())
    value = operand_def(T)
    ptr = operand_def(ParamAttrConstraint(PtrType, (T,)))

    assembly_format = "$value `,` $ptr attr-dict `:` type($value)"

    traits = traits_def(Accesses(MemoryEffectKind.WRITE, "ptr"))

    def __init__(self, value: SSAValue | Operation, ptr: SSAValue | Operation):
        build(self, [value, ptr])

    def verify_(self) -> None:
        _verify_writable(self.ptr)


# ---------------------------------------------------------------------------------------------
# Vectors
# ---------------------------------------------------------------------------------------------


def _verify_vector_of(t: Attribute, element_type: Attribute, what: str) -> None:
    if not is_vector_type(t):
        raise VerifyException(f"{what} must be a 1-D vector of a number type, got {t}")
    if lane_type(t) != element_type:
        raise VerifyException(f"{what} {t} has lanes of {lane_type(t)}, expected {element_type}")


def _print_vector_access(
    printer: Printer, op: Operation, operands: Sequence[SSAValue], vector_type: Attribute, stride: int = 1
) -> None:
    printer.print_string(" ")
    printer.print_list(operands, printer.print_operand)
    if stride != 1:
        printer.print_string(f" stride {stride}")
    printer.print_op_attributes(op.attributes)
    printer.print_string(" : ")
    printer.print_attribute(vector_type)


def _parse_vector_access(parser: Parser, count: int):
    """`%v?, %p (stride S)? attr-dict : vector<NxT>`: the pointer is a `!uop.ptr<T>`, the value
    the vector."""
    names = [parser.parse_unresolved_operand()]
    for _ in range(count - 1):
        parser.parse_punctuation(",")
        names.append(parser.parse_unresolved_operand())
    stride = parser.parse_integer() if parser.parse_optional_keyword("stride") else 1
    attributes = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    vector_type = parser.parse_type()
    if not is_vector_type(vector_type):
        parser.raise_error(f"expected a vector type, got {vector_type}")
    types = [vector_type, PtrType(lane_type(vector_type))][-count:]
    operands = [parser.resolve_operand(n, t) for n, t in zip(names, types)]
    return operands, vector_type, stride, attributes


@irdl_op_definition
class VLoadOp(IRDLOperation):
    """`%v = uop.vload %p : vector<8xf32>` reads the 8 consecutive elements starting at `%p`
    (no alignment is assumed); `uop.vload %p stride 2 : vector<8xf32>` every second one (a
    gather, e.g. the inputs of a stride-2 Conv)."""

    name = "uop.vload"

    ptr = operand_def(PtrType)
    stride = opt_prop_def(IntAttr)
    result = result_def(VectorType)

    traits = traits_def(Accesses(MemoryEffectKind.READ, "ptr"))

    def __init__(self, ptr: SSAValue | Operation, vector_type: VectorType, stride: int = 1):
        super().__init__(
            operands=[ptr],
            result_types=[vector_type],
            properties={"stride": IntAttr(stride)} if stride != 1 else {},
        )

    @property
    def element_stride(self) -> int:
        return 1 if self.stride is None else self.stride.data

    def print(self, printer: Printer):
        _print_vector_access(printer, self, [self.ptr], self.result.type, self.element_stride)

    @classmethod
    def parse(cls, parser: Parser) -> VLoadOp:
        (ptr,), vector_type, stride, attributes = _parse_vector_access(parser, 1)
        op = cls(ptr, vector_type, stride)
        op.attributes.update(attributes)
        return op

    def verify_(self) -> None:
        assert isinstance(self.ptr.type, PtrType)
        _verify_vector_of(self.result.type, self.ptr.type.element_type, "the result")
        if self.element_stride < 1:
            raise VerifyException(f"stride must be positive, got {self.element_stride}")


@irdl_op_definition
class VStoreOp(IRDLOperation):
    """`uop.vstore %v, %p : vector<8xf32>` writes the lanes of `%v` to the 8 consecutive
    elements starting at `%p`; `uop.vstore %v, %p stride 4 : vector<8xf32>` lane k to the
    element 4·k after `%p` (a scatter, e.g. one pixel of 8 output channels of a Conv)."""

    name = "uop.vstore"

    value = operand_def(VectorType)
    ptr = operand_def(PtrType)
    stride = opt_prop_def(IntAttr)

    traits = traits_def(Accesses(MemoryEffectKind.WRITE, "ptr"))

    def __init__(self, value: SSAValue | Operation, ptr: SSAValue | Operation, stride: int = 1):
        super().__init__(operands=[value, ptr], properties={"stride": IntAttr(stride)} if stride != 1 else {})

    @property
    def element_stride(self) -> int:
        return 1 if self.stride is None else self.stride.data

    def print(self, printer: Printer):
        _print_vector_access(printer, self, [self.value, self.ptr], self.value.type, self.element_stride)

    @classmethod
    def parse(cls, parser: Parser) -> VStoreOp:
        (value, ptr), _, stride, attributes = _parse_vector_access(parser, 2)
        op = cls(value, ptr, stride)
        op.attributes.update(attributes)
        return op

    def verify_(self) -> None:
        assert isinstance(self.ptr.type, PtrType)
        _verify_vector_of(self.value.type, self.ptr.type.element_type, "the value")
        if self.element_stride < 1:
            raise VerifyException(f"stride must be positive, got {self.element_stride}")
        _verify_writable(self.ptr)


@irdl_op_definition
class BroadcastOp(IRDLOperation):
    """`%v = uop.broadcast %x : f32 to vector<8xf32>` copies a scalar into every lane."""

    name = "uop.broadcast"

    input = operand_def()
    result = result_def(VectorType)

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, vector_type: VectorType):
        super().__init__(operands=[input], result_types=[vector_type])

    def verify_(self) -> None:
        _verify_vector_of(self.result.type, self.input.type, "the result")


@irdl_op_definition
class ReduceAddOp(IRDLOperation):
    """`%s = uop.reduce_add %v : vector<8xf32> to f32` sums the lanes (wrapping for integers;
    for floats in an unspecified order)."""

    name = "uop.reduce_add"

    input = operand_def(VectorType)
    result = result_def()

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation):
        vector_type = SSAValue.get(input).type
        super().__init__(operands=[input], result_types=[lane_type(vector_type)])

    def verify_(self) -> None:
        _verify_vector_of(self.input.type, self.result.type, "the operand")
        if self.result.type == i1:
            raise VerifyException("uop.reduce_add takes no i1 vectors")


# ---------------------------------------------------------------------------------------------
# Scalars: constants, ALU primitives, casts, select
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class ConstOp(IRDLOperation, HasFolderInterface):
    """A scalar literal: `%c = uop.const 1.5 : f32`, `%n = uop.const 3 : index`."""

    name = "uop.const"

    value = prop_def(IntegerAttr | FloatAttr)
    result = result_def()

    traits = traits_def(Pure(), ConstantLike())

    def fold(self) -> Sequence[SSAValue | Attribute]:
        return (self.value,)

    def __init__(self, value: int | float | bool, value_type: Attribute):
        if isinstance(value_type, AnyFloat):
            attr: Attribute = FloatAttr(float(value), value_type)
        else:
            attr = IntegerAttr(int(value), value_type)
        build(self, result_types=[value_type], properties={"value": attr})

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        value = parser.parse_attribute()
        attributes = parser.parse_optional_attr_dict()
        if not isinstance(value, IntegerAttr | FloatAttr):
            parser.raise_error("uop.const takes an integer or float literal with its type")
        op = cls.create(properties={"value": value}, result_types=[value.type])
        op.attributes.update(attributes)
        return op

    def verify_(self) -> None:
        if self.result.type != self.value.type:
            raise VerifyException("result type differs from the literal's type")


# ---------------------------------------------------------------------------------------------
# Folding: what canonicalize may compute at compile time. Integers wrap as the generated code
# does; floats are folded only where the result is exact for every input (no reassociation, and
# no `x * 0 → 0` or `x + 0 → x`: NaN * 0 is NaN and -0.0 + 0.0 is +0.0).
# ---------------------------------------------------------------------------------------------

_INDEX_RANGE = range(-(2**31), 2**31)
"""Index values folded at compile time stay within the smallest target's isize (32 bits)."""


def wrap_integer(value: int, t: Attribute) -> int | None:
    """`value` as a value of type `t` (two's complement wrap; i1 is 0 or 1), None for an index
    outside `_INDEX_RANGE` (its width is the target's, unknown here)."""
    if isinstance(t, IndexType):
        return value if value in _INDEX_RANGE else None
    assert isinstance(t, IntegerType)
    width = t.width.data
    if width == 1:
        return value & 1
    if t.signedness.data == Signedness.UNSIGNED:
        return value % (1 << width)
    half = 1 << (width - 1)
    return (value + half) % (1 << width) - half


def constant_of(value: SSAValue) -> IntegerAttr | FloatAttr | None:
    """The literal behind a scalar value, if a `uop.const` (or another constant-like op) makes it."""
    attr = ConstantLike.get_constant_value(value)
    return attr if isinstance(attr, IntegerAttr | FloatAttr) else None


def _integer(attr: IntegerAttr) -> int:
    wrapped = wrap_integer(attr.value.data, attr.type)
    return attr.value.data if wrapped is None else wrapped


def _is_integer(attr: Attribute | None, value: int) -> bool:
    return isinstance(attr, IntegerAttr) and _integer(attr) == value


def _is_number(attr: Attribute | None, value: int) -> bool:
    """An integer or float literal equal to `value` (1 and 1.0 are both units of `mul`)."""
    return _is_integer(attr, value) or (isinstance(attr, FloatAttr) and attr.value.data == value)


def _truncating_division(x: int, y: int) -> int:
    quotient = abs(x) // abs(y)
    return quotient if (x < 0) == (y < 0) else -quotient


def _round_float(value: float, t: Attribute) -> float | None:
    """`value` rounded to f32 (to nearest, ties to even, as the generated code does) or f64;
    None for other float types or when it overflows."""
    if isinstance(t, Float64Type):
        return value
    if isinstance(t, Float32Type):
        try:
            return struct.unpack("f", struct.pack("f", value))[0]
        except OverflowError:
            return None
    return None


def fold_cast(attr: IntegerAttr | FloatAttr, target: Attribute) -> Attribute | None:
    """`uop.cast` of a literal, where the result is exact (no wrapping, saturation or rounding
    question): integer to a type that holds the value, integer to float without rounding, float
    to float, finite float to an integer type that holds its truncation, integer to i1."""
    if attr.type == i1 or not is_scalar_type(target):
        return None
    if isinstance(attr, IntegerAttr):
        value = _integer(attr)
        if target == i1:
            return IntegerAttr(int(value != 0), i1)
        if isinstance(target, IntegerType | IndexType):
            return IntegerAttr(value, target) if wrap_integer(value, target) == value else None
        as_float = _round_float(float(value), target)
        return FloatAttr(as_float, target) if as_float == value else None
    value = attr.value.data
    if not math.isfinite(value) or target == i1:
        return None
    if isinstance(target, IntegerType | IndexType):
        whole = math.trunc(value)
        return IntegerAttr(whole, target) if wrap_integer(whole, target) == whole else None
    rounded = _round_float(value, target)
    return None if rounded is None else FloatAttr(rounded, target)


class UOpConstantMaterialization(ConstantMaterializationInterface):
    """Folded literals become `uop.const` ops."""

    def materialize_constant(self, value: Attribute, type: Attribute) -> Operation | None:
        if not isinstance(value, IntegerAttr | FloatAttr) or value.type != type:
            return None
        return ConstOp.create(properties={"value": value}, result_types=[type])


VECTOR_ALU_OPS = frozenset(
    {"add", "sub", "mul", "div", "max", "min", "neg", "abs", "sqrt", "and", "or", "xor", "fma"}
)
"""The ALU ops that also take vectors (lane by lane); integer `div` only on scalars (a zero
lane would trap)."""


def _verify_alu_type(op: IRDLOperation, t: Attribute, what: str) -> None:
    short = op.name.removeprefix("uop.")
    if is_vector_type(t):
        if short not in VECTOR_ALU_OPS:
            raise VerifyException(f"{op.name} takes no vectors, got {t}")
        if short == "div" and not is_float_type(lane_type(t)):
            raise VerifyException(f"{op.name} takes no integer vectors, got {t}")
    elif not is_scalar_type(t):
        raise VerifyException(f"{op.name} takes scalar or vector {what}, got {t}")


class BinaryOp(IRDLOperation, HasFolderInterface):
    """`%z = uop.<op> %x, %y : T` with operands and result of one scalar type.

    An op folds two integer literals with `evaluate` and `x op c` with `fold_with_constant`
    (`c op x` too when it is `Commutative`)."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    traits = traits_def(PureUnlessTrapping())

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        build(self, [lhs, rhs], [SSAValue.get(lhs).type])

    def may_trap(self) -> bool:
        return False

    def evaluate(self, x: int, y: int) -> int | None:
        """x op y on integer literals before wrapping; None: not folded."""
        return None

    def fold_with_constant(self, x: SSAValue, c: IntegerAttr | FloatAttr) -> SSAValue | Attribute | None:
        """`x op c` when it is x itself or a literal whatever x is; None otherwise."""
        return None

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        lhs, rhs = constant_of(self.lhs), constant_of(self.rhs)
        if isinstance(lhs, IntegerAttr) and isinstance(rhs, IntegerAttr):
            value = self.evaluate(_integer(lhs), _integer(rhs))
            if value is not None and (wrapped := wrap_integer(value, self.result.type)) is not None:
                return (IntegerAttr(wrapped, self.result.type),)
        if rhs is not None and (folded := self.fold_with_constant(self.lhs, rhs)) is not None:
            return (folded,)
        if lhs is not None and self.has_trait(Commutative):
            if (folded := self.fold_with_constant(self.rhs, lhs)) is not None:
                return (folded,)
        return None

    def verify_(self) -> None:
        _verify_alu_type(self, self.result.type, "operands")


class FloatOnly:
    """Mixin: the op is only defined on floating-point values."""

    def verify_(self) -> None:
        t = lane_type(self.result.type)  # type: ignore[attr-defined]
        if not is_float_type(t):
            raise VerifyException(f"{self.name} takes floating-point operands, got {t}")  # type: ignore[attr-defined]
        super().verify_()  # type: ignore[misc]


class IntegerOnly:
    """Mixin: the op is only defined on integers (including i1 and index)."""

    def verify_(self) -> None:
        t = lane_type(self.result.type)  # type: ignore[attr-defined]
        if not isinstance(t, IntegerType | IndexType):
            raise VerifyException(f"{self.name} takes integer operands, got {t}")  # type: ignore[attr-defined]
        super().verify_()  # type: ignore[misc]


class UnaryOp(IRDLOperation):
    """`%y = uop.<op> %x : T` with operand and result of one scalar type."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    input = operand_def(T)
    result = result_def(T)

    assembly_format = "$input attr-dict `:` type($result)"

    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation):
        super().__init__(operands=[input], result_types=[SSAValue.get(input).type])

    def verify_(self) -> None:
        _verify_alu_type(self, self.result.type, "operand")


def compare_result_type(operand_type: Attribute) -> Attribute:
    """`i1` for scalar operands, `vector<N x i1>` for `vector<N x T>` ones (lane by lane)."""
    if isinstance(operand_type, VectorType):
        return VectorType(i1, operand_type.get_shape())
    return i1


class CompareOp(IRDLOperation, HasFolderInterface):
    """`%c = uop.<cmp> %x, %y : T` compares two scalars of type T into an `i1`; two literals
    fold (floats too: a comparison is exact, NaN compares unequal). On vectors it compares lane
    by lane: `%m = uop.cmplt %x, %y : vector<8xf32>` is a `vector<8xi1>` (the result type is
    implied by the operands', so it is not printed)."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(IntegerType | VectorType)

    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        operand_type = SSAValue.get(lhs).type
        build(self, [lhs, rhs], [compare_result_type(operand_type)])

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_list((self.lhs, self.rhs), printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)

    @classmethod
    def parse(cls, parser: Parser) -> CompareOp:
        unresolved = [parser.parse_unresolved_operand()]
        parser.parse_punctuation(",")
        unresolved.append(parser.parse_unresolved_operand())
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        operand_type = parser.parse_type()
        lhs, rhs = (parser.resolve_operand(u, operand_type) for u in unresolved)
        op = cls(lhs, rhs)
        op.attributes.update(attributes)
        return op

    def compare(self, x: int | float, y: int | float) -> bool:
        raise NotImplementedError

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        lhs, rhs = constant_of(self.lhs), constant_of(self.rhs)
        if lhs is None or rhs is None:
            return None
        x, y = (_integer(a) if isinstance(a, IntegerAttr) else a.value.data for a in (lhs, rhs))
        return (IntegerAttr(int(self.compare(x, y)), i1),)

    def verify_(self) -> None:
        operand_type = self.lhs.type
        if not (is_scalar_type(operand_type) or is_vector_type(operand_type)):
            raise VerifyException(
                f"{self.name} takes scalar or 1-D vector operands, got {operand_type}"
            )
        expected = compare_result_type(operand_type)
        if self.result.type != expected:
            raise VerifyException(
                f"{self.name} of {operand_type} gives {expected}, got {self.result.type}"
            )


def _integer_division_may_trap(op: BinaryOp) -> bool:
    """Integer x / y and x % y trap on y = 0 (and on MIN / -1), so licm must not hoist them out
    of a loop that might not run; float division gives inf or NaN instead. A constant divisor
    other than 0 and -1 cannot trap."""
    if is_float_type(lane_type(op.result.type)):
        return False
    divisor = op.rhs.owner
    return not (isinstance(divisor, ConstOp) and divisor.value.value.data not in (0, -1))


# One class per ALU primitive; the base gives the operands, format and traits, a mixin the type
# rule, the docstring the semantics (the `*_OPS` tables below are read off these classes).


@irdl_op_definition
class AddOp(BinaryOp):
    """x + y (wrapping for integers)"""

    name = "uop.add"

    traits = traits_def(Commutative())

    def evaluate(self, x: int, y: int) -> int:
        return x + y

    def fold_with_constant(self, x: SSAValue, c: IntegerAttr | FloatAttr) -> SSAValue | None:
        return x if _is_integer(c, 0) else None


@irdl_op_definition
class SubOp(BinaryOp):
    """x - y (wrapping for integers)"""

    name = "uop.sub"

    def evaluate(self, x: int, y: int) -> int:
        return x - y

    def fold_with_constant(self, x: SSAValue, c: IntegerAttr | FloatAttr) -> SSAValue | None:
        if isinstance(c, IntegerAttr):
            return x if _is_integer(c, 0) else None
        # x - (+0.0) is x for every float, -0.0 and NaN included; x - (-0.0) is not, for -0.0.
        return x if c.value.data == 0 and math.copysign(1.0, c.value.data) > 0 else None


@irdl_op_definition
class MulOp(BinaryOp):
    """x * y (wrapping for integers)"""

    name = "uop.mul"

    traits = traits_def(Commutative())

    def evaluate(self, x: int, y: int) -> int:
        return x * y

    def fold_with_constant(self, x: SSAValue, c: IntegerAttr | FloatAttr) -> SSAValue | Attribute | None:
        if _is_number(c, 1):
            return x
        return IntegerAttr(0, c.type) if _is_integer(c, 0) else None


@irdl_op_definition
class DivOp(BinaryOp):
    """x / y; integers truncate toward zero"""

    name = "uop.div"

    def may_trap(self) -> bool:
        return _integer_division_may_trap(self)

    def evaluate(self, x: int, y: int) -> int | None:
        # By 0 or -1 (MIN / -1) the generated code traps: that stays for run time to report.
        return None if y in (0, -1) else _truncating_division(x, y)

    def fold_with_constant(self, x: SSAValue, c: IntegerAttr | FloatAttr) -> SSAValue | None:
        return x if _is_number(c, 1) else None


@irdl_op_definition
class RemOp(BinaryOp):
    """remainder with the sign of x (C fmod / Zig @rem)"""

    name = "uop.rem"

    def may_trap(self) -> bool:
        return _integer_division_may_trap(self)

    def evaluate(self, x: int, y: int) -> int | None:
        return None if y in (0, -1) else x - _truncating_division(x, y) * y


@irdl_op_definition
class MaxOp(BinaryOp):
    """the larger of x and y (NaN-propagating for floats)"""

    name = "uop.max"

    traits = traits_def(Commutative())

    def evaluate(self, x: int, y: int) -> int:
        return max(x, y)


@irdl_op_definition
class MinOp(BinaryOp):
    """the smaller of x and y (NaN-propagating for floats)"""

    name = "uop.min"

    traits = traits_def(Commutative())

    def evaluate(self, x: int, y: int) -> int:
        return min(x, y)


@irdl_op_definition
class PowOp(FloatOnly, BinaryOp):
    """x raised to the power y"""

    name = "uop.pow"


@irdl_op_definition
class AndOp(IntegerOnly, BinaryOp):
    """bitwise (or logical, for i1) and"""

    name = "uop.and"

    traits = traits_def(Commutative())

    def evaluate(self, x: int, y: int) -> int:
        return x & y


@irdl_op_definition
class OrOp(IntegerOnly, BinaryOp):
    """bitwise (or logical, for i1) or"""

    name = "uop.or"

    traits = traits_def(Commutative())

    def evaluate(self, x: int, y: int) -> int:
        return x | y


@irdl_op_definition
class XorOp(IntegerOnly, BinaryOp):
    """bitwise (or logical, for i1) exclusive or"""

    name = "uop.xor"

    traits = traits_def(Commutative())

    def evaluate(self, x: int, y: int) -> int:
        return x ^ y


@irdl_op_definition
class ShlOp(IntegerOnly, BinaryOp):
    """x shifted left by y bits (zero if y ≥ width)"""

    name = "uop.shl"


@irdl_op_definition
class ShrOp(IntegerOnly, BinaryOp):
    """x shifted right by y bits (arithmetic for signed types)"""

    name = "uop.shr"


@irdl_op_definition
class NegOp(UnaryOp):
    """-x"""

    name = "uop.neg"


@irdl_op_definition
class AbsOp(UnaryOp):
    """|x|"""

    name = "uop.abs"


@irdl_op_definition
class SignOp(UnaryOp):
    """-1, 0 or 1 by the sign of x"""

    name = "uop.sign"


@irdl_op_definition
class SqrtOp(FloatOnly, UnaryOp):
    """square root"""

    name = "uop.sqrt"


@irdl_op_definition
class RecipOp(FloatOnly, UnaryOp):
    """1 / x"""

    name = "uop.recip"


@irdl_op_definition
class ExpOp(FloatOnly, UnaryOp):
    """e to the x"""

    name = "uop.exp"


@irdl_op_definition
class LogOp(FloatOnly, UnaryOp):
    """natural logarithm"""

    name = "uop.log"


@irdl_op_definition
class TanhOp(FloatOnly, UnaryOp):
    """hyperbolic tangent"""

    name = "uop.tanh"


@irdl_op_definition
class ErfOp(FloatOnly, UnaryOp):
    """error function"""

    name = "uop.erf"


@irdl_op_definition
class FloorOp(FloatOnly, UnaryOp):
    """round toward -inf"""

    name = "uop.floor"


@irdl_op_definition
class CeilOp(FloatOnly, UnaryOp):
    """round toward +inf"""

    name = "uop.ceil"


@irdl_op_definition
class RoundOp(FloatOnly, UnaryOp):
    """round half to even"""

    name = "uop.round"


@irdl_op_definition
class SinOp(FloatOnly, UnaryOp):
    """sine"""

    name = "uop.sin"


@irdl_op_definition
class CosOp(FloatOnly, UnaryOp):
    """cosine"""

    name = "uop.cos"


@irdl_op_definition
class TanOp(FloatOnly, UnaryOp):
    """tangent"""

    name = "uop.tan"


@irdl_op_definition
class AsinOp(FloatOnly, UnaryOp):
    """arcsine"""

    name = "uop.asin"


@irdl_op_definition
class AcosOp(FloatOnly, UnaryOp):
    """arccosine"""

    name = "uop.acos"


@irdl_op_definition
class AtanOp(FloatOnly, UnaryOp):
    """arctangent"""

    name = "uop.atan"


@irdl_op_definition
class SinhOp(FloatOnly, UnaryOp):
    """hyperbolic sine"""

    name = "uop.sinh"


@irdl_op_definition
class CoshOp(FloatOnly, UnaryOp):
    """hyperbolic cosine"""

    name = "uop.cosh"


@irdl_op_definition
class AsinhOp(FloatOnly, UnaryOp):
    """inverse hyperbolic sine"""

    name = "uop.asinh"


@irdl_op_definition
class AcoshOp(FloatOnly, UnaryOp):
    """inverse hyperbolic cosine"""

    name = "uop.acosh"


@irdl_op_definition
class AtanhOp(FloatOnly, UnaryOp):
    """inverse hyperbolic tangent"""

    name = "uop.atanh"


@irdl_op_definition
class IsnanOp(FloatOnly, UnaryOp):
    """1.0 if x is NaN else 0.0"""

    name = "uop.isnan"


@irdl_op_definition
class NotOp(IntegerOnly, UnaryOp):
    """bitwise (or logical, for i1) complement"""

    name = "uop.not"


@irdl_op_definition
class CmpltOp(CompareOp):
    """x < y"""

    name = "uop.cmplt"

    def compare(self, x: int | float, y: int | float) -> bool:
        return x < y


@irdl_op_definition
class CmpleOp(CompareOp):
    """x <= y"""

    name = "uop.cmple"

    def compare(self, x: int | float, y: int | float) -> bool:
        return x <= y


@irdl_op_definition
class CmpeqOp(CompareOp):
    """x == y"""

    name = "uop.cmpeq"

    traits = traits_def(Commutative())

    def compare(self, x: int | float, y: int | float) -> bool:
        return x == y


@irdl_op_definition
class CmpneOp(CompareOp):
    """x != y"""

    name = "uop.cmpne"

    traits = traits_def(Commutative())

    def compare(self, x: int | float, y: int | float) -> bool:
        return x != y


_ALU_CLASSES: tuple[type[IRDLOperation], ...] = (
    *(AddOp, SubOp, MulOp, DivOp, RemOp, MaxOp, MinOp, PowOp),
    *(AndOp, OrOp, XorOp, ShlOp, ShrOp),
    *(NegOp, AbsOp, SignOp, SqrtOp, RecipOp, ExpOp, LogOp, TanhOp, ErfOp),
    *(FloorOp, CeilOp, RoundOp, SinOp, CosOp, TanOp, AsinOp, AcosOp, AtanOp),
    *(SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, IsnanOp, NotOp),
    *(CmpltOp, CmpleOp, CmpeqOp, CmpneOp),
)

ALU_OPS: dict[str, type[IRDLOperation]] = {op.name.removeprefix("uop."): op for op in _ALU_CLASSES}
"""Every scalar ALU primitive by its short name (`"add"`, `"exp"`, `"cmplt"` …)."""


def _docs(base: type, mixin: type | None = None) -> dict[str, str]:
    """Short name → docstring of the ALU ops on `base` (with `mixin`, or with neither mixin)."""
    return {
        short: op.__doc__ or ""
        for short, op in ALU_OPS.items()
        if issubclass(op, base)
        and (issubclass(op, mixin) if mixin else not issubclass(op, (FloatOnly, IntegerOnly)))
    }


BINARY_OPS = _docs(BinaryOp)
FLOAT_BINARY_OPS = _docs(BinaryOp, FloatOnly)
INTEGER_BINARY_OPS = _docs(BinaryOp, IntegerOnly)
UNARY_OPS = _docs(UnaryOp)
FLOAT_UNARY_OPS = _docs(UnaryOp, FloatOnly)
INTEGER_UNARY_OPS = _docs(UnaryOp, IntegerOnly)
COMPARE_OPS = _docs(CompareOp)


@irdl_op_definition
class FmaOp(FloatOnly, IRDLOperation):
    """`%r = uop.fma %a, %b, %c : f32` is a·b + c rounded once (a fused multiply-add: Zig's
    `@mulAdd`, one instruction where the CPU has an FMA unit and a libm call where it has not).
    Floats only; vectors lane by lane: `uop.fma %a, %b, %c : vector<8xf32>`. It is not an
    `ALU_OPS` entry (those take one or two operands) but is one of `VECTOR_ALU_OPS`."""

    name = "uop.fma"

    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    addend = operand_def(T)
    result = result_def(T)

    assembly_format = "$lhs `,` $rhs `,` $addend attr-dict `:` type($result)"

    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation, addend: SSAValue | Operation):
        build(self, [lhs, rhs, addend], [SSAValue.get(lhs).type])

    def verify_(self) -> None:
        super().verify_()  # FloatOnly: float lanes
        _verify_alu_type(self, self.result.type, "operands")



@irdl_op_definition
class CastOp(IRDLOperation, HasFolderInterface):
    """`%y = uop.cast %x : f32 to i32`: numeric conversion (float→int truncates toward zero,
    saturating; int→i1 is `x != 0`)."""

    name = "uop.cast"

    input = operand_def()
    result = result_def()

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        if self.input.type == self.result.type:
            return (self.input,)
        attr = constant_of(self.input)
        folded = None if attr is None else fold_cast(attr, self.result.type)
        return None if folded is None else (folded,)

    def verify_(self) -> None:
        source, target = self.input.type, self.result.type
        if is_vector_type(source) or is_vector_type(target):
            _verify_vector_cast(source, target)
            return
        for t in (source, target):
            if not is_scalar_type(t):
                raise VerifyException(f"uop.cast converts scalars or vectors, got {t}")


def is_lossless_cast(source: Attribute, target: Attribute) -> bool:
    """Casts whose lane-wise form needs no saturation or wrapping: float to float, integer to
    float, and integer widening that keeps every value (not to or from i1)."""
    if is_float_type(target):
        return is_float_type(source) or (isinstance(source, IntegerType) and source != i1)
    if not isinstance(source, IntegerType) or not isinstance(target, IntegerType) or i1 in (source, target):
        return False
    unsigned = Signedness.UNSIGNED
    source_signed = source.signedness.data != unsigned
    target_signed = target.signedness.data != unsigned
    if source_signed and not target_signed:
        return False
    extra = 1 if target_signed and not source_signed else 0
    return target.width.data >= source.width.data + extra


def _verify_vector_cast(source: Attribute, target: Attribute) -> None:
    if not (is_vector_type(source) and is_vector_type(target)) or lanes(source) != lanes(target):
        raise VerifyException(f"uop.cast of vectors needs two vectors of one length, got {source} to {target}")
    if not is_lossless_cast(lane_type(source), lane_type(target)):
        raise VerifyException(
            f"uop.cast of vectors must be lossless (float, int to float, or widening), "
            f"got {source} to {target}"
        )


@irdl_op_definition
class BitcastOp(IRDLOperation):
    """`%y = uop.bitcast %x : f32 to i32`: the same bits read as another scalar type of the same
    width (ONNX BitCast; no numeric conversion, so NaN payloads and -0.0 survive). Vectors lane
    by lane: `uop.bitcast %v : vector<8xf32> to vector<8xi32>`."""

    name = "uop.bitcast"

    input = operand_def()
    result = result_def()

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        source, target = self.input.type, self.result.type
        if is_vector_type(source) or is_vector_type(target):
            if not (is_vector_type(source) and is_vector_type(target)) or lanes(source) != lanes(target):
                raise VerifyException(f"uop.bitcast of vectors needs two vectors of one length, got {source} to {target}")
            source, target = lane_type(source), lane_type(target)
        for t in (source, target):
            if not is_scalar_type(t) or isinstance(t, IndexType) or t == i1:
                raise VerifyException(f"uop.bitcast reinterprets sized scalars, got {t}")
        if source.bitwidth != target.bitwidth:
            raise VerifyException(f"uop.bitcast needs equal widths, got {source} ({source.bitwidth} bits) "
                                  f"to {target} ({target.bitwidth} bits)")


@irdl_op_definition
class WhereOp(IRDLOperation, HasFolderInterface):
    """`%z = uop.where %c, %x, %y : f32` is x if the i1 `%c` is true, else y (x and y may be
    vectors, picked whole). With a `vector<N x i1>` condition it picks lane by lane between two
    `vector<N x T>`: `%z = uop.where %m, %x, %y : vector<8xi1>, vector<8xf32>` (the condition's
    type is printed only when it is a vector)."""

    name = "uop.where"

    T: ClassVar = VarConstraint("T", AnyAttr())
    condition = operand_def(IntegerType | VectorType)
    true_value = operand_def(T)
    false_value = operand_def(T)
    result = result_def(T)

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        if isinstance(self.condition.type, VectorType):
            printer.print_attribute(self.condition.type)
            printer.print_string(", ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> WhereOp:
        unresolved = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            unresolved.append(parser.parse_unresolved_operand())
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = [parser.parse_type()]
        if parser.parse_optional_punctuation(","):
            types.append(parser.parse_type())
        condition_type = types[0] if len(types) == 2 else i1
        condition = parser.resolve_operand(unresolved[0], condition_type)
        x, y = (parser.resolve_operand(u, types[-1]) for u in unresolved[1:])
        op = cls(condition, x, y)
        op.attributes.update(attributes)
        return op

    def verify_(self) -> None:
        condition = self.condition.type
        if condition == i1:
            return
        if not (isinstance(condition, VectorType) and condition.get_num_dims() == 1
                and condition.get_element_type() == i1):
            raise VerifyException(f"the condition must be i1 or a 1-D vector of i1, got {condition}")
        values = self.result.type
        if not is_vector_type(values) or lanes(values) != lanes(condition):
            raise VerifyException(
                f"a {condition} condition picks lanes of a {lanes(condition)}-lane vector, got {values}"
            )

    traits = traits_def(Pure())

    def __init__(
        self,
        condition: SSAValue | Operation,
        true_value: SSAValue | Operation,
        false_value: SSAValue | Operation,
    ):
        build(self, [condition, true_value, false_value], [SSAValue.get(true_value).type])

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        if self.true_value == self.false_value:
            return (self.true_value,)
        condition = constant_of(self.condition)
        if condition is None:
            return None
        return (self.true_value if _integer(condition) else self.false_value,)


STATUS_BAD_PARAMETER = 4
"""The status of a failed `uop.check` made by the onnx-to-uop lowerings: a run-time parameter
input (reduction axes, Trilu's k, ...) contradicts the shapes the code was compiled for."""

STATUS_OUTPUT_SIZE = 5
"""The status of a failed `uop.check` that guards a data-dependent output (NonZero, Compress,
NonMaxSuppression): the number of elements the data select differs from the output's compiled
(declared) extent; for ImageDecoder, the bytes are not an uncompressed image (24-bit BMP, binary
PPM) of the compiled shape. Nothing of that output has been written when it is returned."""


@irdl_op_definition
class CheckOp(IRDLOperation):
    """`uop.check %ok, 4` ends the function with status 4 (the generated `NAME_predict`
    returns it) unless the i1 `%ok` is true. It guards values only known at run time, such as a
    parameter input (axes, k, pads ...) that must agree with the shapes the code was compiled
    for (`STATUS_BAD_PARAMETER`), or the size data select for a data-dependent output
    (`STATUS_OUTPUT_SIZE`): the kernels after it rely on them. It lives in the function's body,
    never in a loop, so no kernel after it has run when it fails; the status is never 0."""

    name = "uop.check"

    condition = operand_def(i1)
    status = prop_def(IntegerAttr[I32])

    assembly_format = "$condition `,` $status attr-dict"

    # No memory effect is declared, so no pass may erase, hoist or reorder it: its effect is
    # the function's return.

    def __init__(self, condition: SSAValue | Operation, status: int = STATUS_BAD_PARAMETER):
        super().__init__(operands=[condition], properties={"status": IntegerAttr(status, 32)})

    def verify_(self) -> None:
        if self.status.value.data == 0:
            raise VerifyException("status 0 means success: a failed check needs another")
        parent = self.parent_op()
        while parent is not None:
            if isinstance(parent, RangeOp):
                raise VerifyException("uop.check must not be inside a loop")
            parent = parent.parent_op()


STATUS_BAD_INDEX = 6
"""The status of a failed `uop.check` made by `check-data-indices`: an index read from the data
(Gather's, a Scatter's, MaxUnpool's ...; a `uop.bound_index`) is outside the range its op
allows. Nothing the indexed op writes has been written when it is returned."""


@irdl_op_definition
class BoundIndexOp(IRDLOperation):
    """`%i = uop.bound_index %v, 4 : i64`: an integer read from the data (an index input, not a
    loop counter) used as an index into a dimension of `extent` elements. ONNX's negative
    indices count from the end, so the valid values are [-extent, extent) and the result is the
    index in [0, extent); `uop.bound_index nonnegative %v, 4` allows [0, extent) only. A value
    outside is invalid input: the lowerings mark every address computed from data with this op
    and `check-data-indices` turns it into a check, before the kernel, that ends the function
    with `STATUS_BAD_INDEX`, and into arithmetic that keeps the index in [0, extent) whatever
    the value. Interpreted as it is, an invalid value traps."""

    name = "uop.bound_index"

    value = operand_def(IntegerType)
    extent = prop_def(IntegerAttr[I64])
    nonnegative = opt_prop_def(UnitAttr)
    """Set when negative values are invalid too (they do not count from the end)."""
    result = result_def(IndexType)

    assembly_format = "(`nonnegative` $nonnegative^)? $value `,` $extent attr-dict `:` type($value)"

    traits = traits_def(Pure())

    def __init__(self, value: SSAValue | Operation, extent: int, nonnegative: bool = False):
        properties: dict[str, Attribute] = {"extent": IntegerAttr(extent, 64)}
        if nonnegative:
            properties["nonnegative"] = UnitAttr()
        super().__init__(operands=[value], result_types=[IndexType()], properties=properties)

    @property
    def lowest(self) -> int:
        """The smallest valid value: -extent, or 0 when `nonnegative`."""
        return 0 if self.nonnegative is not None else -self.extent.value.data

    def verify_(self) -> None:
        if self.extent.value.data < 0:
            raise VerifyException(f"extent must not be negative, got {self.extent.value.data}")
        if self.value.type == i1:
            raise VerifyException("an index is an integer wider than i1")


# ---------------------------------------------------------------------------------------------
# Arenas
# ---------------------------------------------------------------------------------------------

class ArenaRole(StrEnum):
    SCRATCH = "scratch"
    CONSTANT = "constant"
    PERSISTENT = "persistent"


class PlanStrategy(StrEnum):
    """How `plan-arenas` placed the scratch buffers: in definition order (`naive`), greedy by
    size with best fit (`greedy`), or the better of greedy and its improvement (`best`)."""

    NAIVE = "naive"
    GREEDY = "greedy"
    BEST = "best"


ARENA_ROLES = tuple(r.value for r in ArenaRole)
PLAN_STRATEGIES = tuple(s.value for s in PlanStrategy)

CONSTANT_PLACEMENTS: dict[str, tuple[str | None, str | None]] = {
    "embedded": ("flash", None),
    "staged": ("ram", "flash"),
    "external": ("external", None),
    "": (None, None),  # planned before the constants had a memory: read in place, as embedded
}
"""`plan-arenas{constants=MODE}` → the constant arena's (memory, source memory)."""
CONSTANT_MODES = tuple(mode for mode in CONSTANT_PLACEMENTS if mode)


def constants_mode(arena: ArenaOp) -> str:
    """embedded, staged or external: where a constant arena's memory and source put it."""
    where = (
        None if arena.memory is None else arena.memory.data,
        None if arena.source is None else arena.source.data,
    )
    return next((mode for mode, place in CONSTANT_PLACEMENTS.items() if mode and place == where), "embedded")


@irdl_attr_definition
class ArenaRoleAttr(EnumAttribute[ArenaRole], SpacedOpaqueSyntaxAttribute):
    """`#uop<arena_role "scratch">` in the generic form; `"scratch"` in `uop.arena`'s."""

    name = "uop.arena_role"

    def print_parameter(self, printer: Printer) -> None:
        _print_quoted_enum(self, printer)

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> ArenaRole:
        return _parse_enum(cls, parser, "arena role")


@irdl_attr_definition
class PlanStrategyAttr(EnumAttribute[PlanStrategy], SpacedOpaqueSyntaxAttribute):
    """`#uop<plan_strategy "best">` in the generic form; `strategy "best"` in `uop.arena`'s."""

    name = "uop.plan_strategy"

    def print_parameter(self, printer: Printer) -> None:
        _print_quoted_enum(self, printer)

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> PlanStrategy:
        return _parse_enum(cls, parser, "strategy")


@irdl_op_definition
class ArenaOp(IRDLOperation):
    """One memory arena of a planned function, set by `plan-arenas`.

    `uop.arena "scratch" size 96 align 16 lower_bound 64 strategy "best" steps 17
    unaligned_lower_bound 60`: the scratch arena holds every `uop.define_local` at its offset;
    `lower_bound` is the most bytes of scratch live at once (each buffer rounded up to the
    alignment), `unaligned_lower_bound` the same in unaligned bytes (what no plan of this schedule
    can beat), `steps` the number of top-level steps of the planned schedule (the steps the
    define_locals' `live` ranges count). `uop.arena "constant" size 2048 align 16 section ".rodata.zant"`: the read-only blob of
    the constants (each `uop.define_global "constant"` at its offset), in the given link section.
    `uop.arena "persistent" size 0 align 16`: state kept across calls (no op has any yet).
    `uop.arena "scratch" ... memory "dtcm"` (set by `place-memories`): the scratch arena in one
    memory of the board, holding the define_locals `in "dtcm"`; a function has one scratch arena
    per memory it uses, or one without a memory.

    Where the constant arena lives (`plan-arenas{constants=...}`), as its runtime memory (where
    the kernels read it) and, when it is copied there at init, its source memory:
    `memory "flash"` (embedded: read in place from the image's read-only data), `memory "ram"
    source "flash"` (staged: `NAME_init` copies it from flash into RAM) or `memory "external"`
    (the firmware places the blob and passes its address to `NAME_init`). No memory: flash.
    """

    name = "uop.arena"

    role = prop_def(ArenaRoleAttr)
    size = prop_def(IntegerAttr[I64])
    alignment = prop_def(IntegerAttr[I64])
    lower_bound = opt_prop_def(IntegerAttr[I64])
    strategy = opt_prop_def(PlanStrategyAttr)
    steps = opt_prop_def(IntegerAttr[I64])
    unaligned_lower_bound = opt_prop_def(IntegerAttr[I64])
    link_section = opt_prop_def(StringAttr)
    memory = opt_prop_def(StringAttr)
    source = opt_prop_def(StringAttr)

    assembly_format = (
        "$role `size` $size `align` $alignment (`lower_bound` $lower_bound^)? "
        "(`strategy` $strategy^)? (`steps` $steps^)? "
        "(`unaligned_lower_bound` $unaligned_lower_bound^)? (`section` $link_section^)? "
        "(`memory` $memory^)? (`source` $source^)? attr-dict"
    )

    traits = traits_def(BindsOutsideMemory())

    def __init__(
        self,
        role: ArenaRole | str,
        size: int,
        alignment: int,
        lower_bound: int | None = None,
        strategy: PlanStrategy | str | None = None,
        link_section: str | None = None,
        steps: int | None = None,
        unaligned_lower_bound: int | None = None,
        memory: str | None = None,
        source: str | None = None,
    ):
        super().__init__(
            properties={
                "memory": None if memory is None else StringAttr(memory),
                "source": None if source is None else StringAttr(source),
                "role": ArenaRoleAttr(ArenaRole(role)),
                "size": IntegerAttr(size, 64),
                "alignment": IntegerAttr(alignment, 64),
                "lower_bound": None if lower_bound is None else IntegerAttr(lower_bound, 64),
                "strategy": None if strategy is None else PlanStrategyAttr(PlanStrategy(strategy)),
                "link_section": None if link_section is None else StringAttr(link_section),
                "steps": None if steps is None else IntegerAttr(steps, 64),
                "unaligned_lower_bound": (
                    None if unaligned_lower_bound is None else IntegerAttr(unaligned_lower_bound, 64)
                ),
            }
        )

    def verify_(self) -> None:
        role, size, alignment = self.role.data, self.size.value.data, self.alignment.value.data
        if alignment <= 0 or alignment & (alignment - 1):
            raise VerifyException(f"arena alignment must be a power of two, got {alignment}")
        if size < 0 or size % alignment:
            raise VerifyException(
                f"arena size must be a non-negative multiple of its alignment, got {size}"
            )
        if self.lower_bound is not None:
            if role != ArenaRole.SCRATCH:
                raise VerifyException("only the scratch arena has a lower bound")
            if not 0 <= self.lower_bound.value.data <= size:
                raise VerifyException(
                    f"lower bound {self.lower_bound.value.data} is not within 0..{size}"
                )
        if self.strategy is not None:
            if role != ArenaRole.SCRATCH:
                raise VerifyException("only the scratch arena has a strategy")
        if self.steps is not None:
            if role != ArenaRole.SCRATCH:
                raise VerifyException("only the scratch arena has steps")
            if self.steps.value.data < 0:
                raise VerifyException(f"steps must be non-negative, got {self.steps.value.data}")
        if self.unaligned_lower_bound is not None:
            if role != ArenaRole.SCRATCH:
                raise VerifyException("only the scratch arena has an unaligned lower bound")
            bound = self.unaligned_lower_bound.value.data
            aligned = size if self.lower_bound is None else self.lower_bound.value.data
            if not 0 <= bound <= aligned:
                raise VerifyException(
                    f"unaligned lower bound {bound} is not within 0..{aligned} (the aligned "
                    "lower bound, or the size)"
                )
        if self.link_section is not None and role != ArenaRole.CONSTANT:
            raise VerifyException("only the constant arena has a link section")
        if role == ArenaRole.CONSTANT:
            where = (
                None if self.memory is None else self.memory.data,
                None if self.source is None else self.source.data,
            )
            if where not in CONSTANT_PLACEMENTS.values():
                raise VerifyException(
                    "a constant arena is in memory flash, ram from source flash (staged) or "
                    f"external, got memory {where[0]} source {where[1]}"
                )
        elif self.memory is not None and role != ArenaRole.SCRATCH:
            raise VerifyException("only a scratch or constant arena is placed in a memory")
        elif self.source is not None:
            raise VerifyException("only a constant arena has a source memory (staged constants)")
        block = self.parent_block()
        if block is not None:
            for other in block.ops:
                if other is not self and isinstance(other, ArenaOp) and other.role.data == role:
                    if other.memory != self.memory:
                        continue
                    where = "" if self.memory is None else f" in memory {self.memory.data}"
                    raise VerifyException(f"more than one {role} arena{where} in one block")


# ---------------------------------------------------------------------------------------------
# Loops
# ---------------------------------------------------------------------------------------------


class LoopLike(OpTrait):
    """The op is a loop whose body region runs zero or more times, with the values defined
    outside it unchanged between iterations (MLIR's LoopLikeOpInterface, the part `licm`
    needs). An op hoisted out of the body must be speculatable: the loop may not run."""

    @classmethod
    def body(cls, op: Operation) -> Region:
        return op.regions[0]


@irdl_op_definition
class EndRangeOp(IRDLOperation):
    """Terminates the body of a `uop.range` (implicit in the custom format)."""

    name = "uop.endrange"

    assembly_format = "attr-dict"

    def __init__(self):
        build(self)

    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(RangeOp), Pure()))


@irdl_op_definition
class RangeOp(IRDLOperation, HasCanonicalizationPatternsInterface):
    """A counted loop: `uop.range %i = 0 to 10 step 1 { … }`.

    The body's single block argument (an `index`) takes `start, start+step, …` while below `end`.
    """

    name = "uop.range"

    start = prop_def(IntAttr)
    end = prop_def(IntAttr)
    step = prop_def(IntAttr)
    body = region_def("single_block")

    traits = traits_def(
        SingleBlockImplicitTerminator(EndRangeOp), RecursiveMemoryEffect(), LoopLike()
    )

    def __init__(
        self,
        start: int,
        end: int,
        step: int = 1,
        body: Region | Block | None = None,
    ):
        if body is None:
            body = Block(arg_types=[IndexType()])
        if isinstance(body, Block):
            body = Region(body)
        build(self, properties={"start": IntAttr(start), "end": IntAttr(end), "step": IntAttr(step)}, regions=[body])

    @property
    def induction_var(self) -> SSAValue:
        return self.body.block.args[0]

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (EraseEmptyRange(), InlineSingleIterationRange())

    @property
    def trip_count(self) -> int:
        start, end, step = self.start.data, self.end.data, self.step.data
        return max(0, -(-(end - start) // step))

    def verify_(self) -> None:
        if self.step.data <= 0:
            raise VerifyException(f"step must be positive, got {self.step.data}")
        args = self.body.block.args
        if len(args) != 1 or not isinstance(args[0].type, IndexType):
            raise VerifyException("the body must have exactly one index block argument")

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_operand(self.induction_var)
        printer.print_string(f" = {self.start.data} to {self.end.data}")
        if self.step.data != 1:
            printer.print_string(f" step {self.step.data}")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_block_terminators=False)

    @classmethod
    def parse(cls, parser: Parser) -> RangeOp:
        induction_var = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        start = parser.parse_integer()
        parser.parse_keyword("to")
        end = parser.parse_integer()
        step = parser.parse_integer() if parser.parse_optional_keyword("step") else 1
        attributes = parser.parse_optional_attr_dict_with_keyword()
        attributes = attributes.data if attributes is not None else {}
        body = parser.parse_region((induction_var.resolve(IndexType()),))
        block = body.block
        if not isinstance(block.last_op, EndRangeOp):
            block.add_op(EndRangeOp())
        op = cls(start, end, step, body)
        op.attributes.update(attributes)
        return op


class EraseEmptyRange(RewritePattern):
    """A loop that runs zero times does nothing."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: RangeOp, rewriter: PatternRewriter) -> None:
        if op.trip_count == 0:
            rewriter.erase_op(op)


class InlineSingleIterationRange(RewritePattern):
    """A loop that runs once is its body, with the induction variable a `uop.const` start."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: RangeOp, rewriter: PatternRewriter) -> None:
        if op.trip_count != 1:
            return
        start = ConstOp(op.start.data, IndexType())
        rewriter.insert_op(start, InsertPoint.before(op))
        block = op.body.block
        assert block.last_op is not None
        rewriter.erase_op(block.last_op)
        rewriter.inline_block(block, InsertPoint.before(op), (start.result,))
        rewriter.erase_op(op)



# ---------------------------------------------------------------------------------------------
# Accumulators
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class DefineAccOp(IRDLOperation):
    """`%acc = uop.define_acc 0.0 : f32` makes an accumulator cell holding the initial value;
    `uop.define_acc 0.0 : f32 to vector<8xf32>` a vector cell with the value in every lane."""

    name = "uop.define_acc"

    init = prop_def(IntegerAttr | FloatAttr)
    result = result_def(AccType)

    # A fresh cell each time: two with one initial value are not one (cse), nor hoisted (licm).
    traits = traits_def(Accesses(MemoryEffectKind.ALLOC, "result"))

    def __init__(self, init: int | float, element_type: Attribute):
        value = ConstOp(init, lane_type(element_type)).value
        build(self, result_types=[AccType(element_type)], properties={"init": value})

    def verify_(self) -> None:
        assert isinstance(self.result.type, AccType)
        if self.init.type != lane_type(self.result.type.element_type):
            raise VerifyException("initial value type differs from the accumulator's")

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_attribute(self.init)
        printer.print_op_attributes(self.attributes)
        assert isinstance(self.result.type, AccType)
        if is_vector_type(self.result.type.element_type):
            printer.print_string(" to ")
            printer.print_attribute(self.result.type.element_type)

    @classmethod
    def parse(cls, parser: Parser) -> DefineAccOp:
        init = parser.parse_attribute()
        if not isinstance(init, IntegerAttr | FloatAttr):
            parser.raise_error("uop.define_acc takes an integer or float literal with its type")
        attributes = parser.parse_optional_attr_dict()
        element_type = parser.parse_type() if parser.parse_optional_keyword("to") else init.type
        op = cls.create(properties={"init": init}, result_types=[AccType(element_type)])
        op.attributes.update(attributes)
        return op


def _acc_element_type(acc: SSAValue) -> Attribute:
    assert isinstance(acc.type, AccType)
    return acc.type.element_type


@irdl_op_definition
class MulAccOp(IRDLOperation):
    """`uop.mulacc %acc, %x, %y : !uop.acc<f32>, f32` adds x·y into the accumulator;
    `uop.mulacc fused …` computes acc + x·y with a single rounding (a fused multiply-add)."""

    name = "uop.mulacc"

    T: ClassVar = VarConstraint("T", AnyAttr())
    acc = operand_def(AccType)
    lhs = operand_def(T)
    rhs = operand_def(T)
    fused = opt_prop_def(UnitAttr)

    traits = traits_def(Accesses(MemoryEffectKind.READ, "acc"), Accesses(MemoryEffectKind.WRITE, "acc"))

    assembly_format = (
        "(`fused` $fused^)? $acc `,` $lhs `,` $rhs attr-dict `:` type($acc) `,` type($lhs)"
    )

    def __init__(
        self,
        acc: SSAValue | Operation,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        fused: bool = False,
    ):
        build(self, [acc, lhs, rhs], properties={"fused": UnitAttr()} if fused else None)

    def verify_(self) -> None:
        element_type = _acc_element_type(self.acc)
        if self.lhs.type != element_type or self.rhs.type != element_type:
            raise VerifyException(
                f"operands must match the accumulator's type {element_type}, "
                f"got {self.lhs.type} and {self.rhs.type}"
            )
        # Integer arithmetic does not round, so `fused` there would be a flag that means nothing.
        if self.fused is not None and not is_float_type(lane_type(element_type)):
            raise VerifyException(f"only a float accumulator can be fused, got {element_type}")


@irdl_op_definition
class AccSetOp(IRDLOperation):
    """`uop.acc_set %acc, %x : !uop.acc<f32>` overwrites the accumulator with x."""

    name = "uop.acc_set"

    acc = operand_def(AccType)
    value = operand_def()

    assembly_format = "$acc `,` $value attr-dict `:` type($acc) `,` type($value)"

    traits = traits_def(Accesses(MemoryEffectKind.WRITE, "acc"))

    def __init__(self, acc: SSAValue | Operation, value: SSAValue | Operation):
        super().__init__(operands=[acc, value])

    def verify_(self) -> None:
        element_type = _acc_element_type(self.acc)
        if self.value.type != element_type:
            raise VerifyException(
                f"value type {self.value.type} differs from the accumulator's {element_type}"
            )


@irdl_op_definition
class AccGetOp(IRDLOperation):
    """`%x = uop.acc_get %acc : !uop.acc<f32>, f32` reads the accumulator."""

    name = "uop.acc_get"

    acc = operand_def(AccType)
    result = result_def()

    assembly_format = "$acc attr-dict `:` type($acc) `,` type($result)"

    traits = traits_def(Accesses(MemoryEffectKind.READ, "acc"))

    def __init__(self, acc: SSAValue | Operation):
        build(self, [acc], [_acc_element_type(SSAValue.get(acc))])

    def verify_(self) -> None:
        if self.result.type != _acc_element_type(self.acc):
            raise VerifyException("result type differs from the accumulator's")


UOp = Dialect(
    "uop",
    [
        DefineGlobalOp,
        DefineLocalOp,
        ArenaOp,
        ViewOp,
        GepOp,
        LoadOp,
        StoreOp,
        ConstOp,
        *ALU_OPS.values(),
        CastOp,
        BitcastOp,
        WhereOp,
        FmaOp,
        CheckOp,
        BoundIndexOp,
        VLoadOp,
        VStoreOp,
        BroadcastOp,
        ReduceAddOp,
        RangeOp,
        EndRangeOp,
        DefineAccOp,
        MulAccOp,
        AccSetOp,
        AccGetOp,
    ],
    [
        BufferType,
        ViewType,
        PtrType,
        AccType,
        BufferRoleAttr,
        ArenaRoleAttr,
        PlanStrategyAttr,
        StepRangeAttr,
    ],
    [UOpConstantMaterialization()],
)
