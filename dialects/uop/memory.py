"""The uop dialect's memory ops: buffers (`uop.define_global`, `uop.define_local`), views, geps,
scalar and vector loads and stores, and `uop.bound_index` (an index read from the data)."""

from __future__ import annotations

import math
from collections.abc import Sequence, Set
from typing import ClassVar

from xdsl.dialects.builtin import (
    VectorType,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    I64,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParamAttrConstraint,
    VarConstraint,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import EffectInstance, MemoryEffect, MemoryEffectKind, Pure
from xdsl.utils.exceptions import VerifyException

from zant.dialects.onnx_attributes import INPUT_NAMES, OUTPUT_NAMES
from zant.dialects.uop.types import (
    Accesses, BindsOutsideMemory, BufferRole, BufferRoleAttr, BufferType, PtrType, StepRangeAttr, ViewType,
    build, is_vector_type, lane_type, memory_element_type, verify_vector_of,
)


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
    key = INPUT_NAMES if role == BufferRole.INPUT else OUTPUT_NAMES
    names = None if function is None else function.attributes.get(key)
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
        verify_vector_of(self.result.type, self.ptr.type.element_type, "the result")
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
        verify_vector_of(self.value.type, self.ptr.type.element_type, "the value")
        if self.element_stride < 1:
            raise VerifyException(f"stride must be positive, got {self.element_stride}")
        _verify_writable(self.ptr)



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


