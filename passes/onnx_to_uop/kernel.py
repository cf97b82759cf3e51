"""What every onnx-to-uop pattern shares: tensor layouts and a builder for loop nests.

During the lowering a tensor value is backed by a `Layout`: a uop buffer read through a shape,
strides and an offset. A lowered op's result is replaced by an `unrealized_conversion_cast` of
the buffer (or of a `uop.view` of it) to the original tensor type, so that consumers lowered
later find the layout behind their operands with `layout_of`; the pass erases the casts at the end.
Movement ops (Transpose, broadcasting, most Reshapes, Slices) therefore only make a new Layout.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects.builtin import (
    AnyFloat,
    Float32Type,
    IndexType,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint
from zant.dialects import uop
from zant.dialects.onnx import NODE_NAME, ConcatOp, get_attr

from zant.errors import ZantError
from zant.ir.resources import make_constant_attr
from zant.ir.types import numpy_dtype


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides = []
    running = 1
    for dim in reversed(shape):
        strides.append(running)
        running *= dim
    return tuple(reversed(strides))


@dataclass(frozen=True)
class Layout:
    """Where a tensor's elements live: element (i0…in) is `buffer[offset + Σ ik·strides[k]]`."""

    buffer: SSAValue
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0

    @staticmethod
    def contiguous(buffer: SSAValue, shape: Sequence[int]) -> Layout:
        return Layout(buffer, tuple(shape), contiguous_strides(shape), 0)

    @property
    def element_type(self) -> Attribute:
        return uop.memory_element_type(self.buffer.type)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def is_contiguous(self) -> bool:
        """Dense row-major, ignoring strides of size-1 dimensions."""
        expected = contiguous_strides(self.shape)
        return all(d == 1 or s == e for d, s, e in zip(self.shape, self.strides, expected))

    def covers_buffer(self) -> bool:
        """The layout is exactly its whole buffer in row-major order."""
        assert isinstance(self.buffer.type, uop.BufferType)
        return (
            self.offset == 0
            and self.is_contiguous()
            and self.size == self.buffer.type.size.data
        )

    def permute(self, perm: Sequence[int]) -> Layout:
        return replace(
            self,
            shape=tuple(self.shape[p] for p in perm),
            strides=tuple(self.strides[p] for p in perm),
        )

    def broadcast_to(self, shape: Sequence[int]) -> Layout:
        """NumPy broadcasting as stride-0 dimensions."""
        shape = tuple(shape)
        missing = len(shape) - self.rank
        if missing < 0:
            raise ValueError(f"cannot broadcast {self.shape} to {shape}")
        dims = (1,) * missing + self.shape
        strides = (0,) * missing + self.strides
        new_strides = []
        for dim, stride, target in zip(dims, strides, shape):
            if dim == target:
                new_strides.append(stride if dim != 1 else 0)
            elif dim == 1:
                new_strides.append(0)
            else:
                raise ValueError(f"cannot broadcast {self.shape} to {shape}")
        return replace(self, shape=shape, strides=tuple(new_strides))

    def reshape(self, shape: Sequence[int]) -> Layout | None:
        """The same elements under a new shape, or None if the strides cannot express it."""
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot reshape {self.shape} to {tuple(shape)}")
        if self.is_contiguous():
            return replace(self, shape=tuple(shape), strides=contiguous_strides(shape))
        return None

    def slice(self, axis: int, start: int, step: int, count: int) -> Layout:
        """Elements start, start+step, … (count of them) along `axis`; step may be negative."""
        shape = list(self.shape)
        strides = list(self.strides)
        offset = self.offset + start * strides[axis]
        shape[axis] = count
        strides[axis] *= step
        return replace(self, shape=tuple(shape), strides=tuple(strides), offset=offset)


CHANNELS_LAST = "zant.channels_last"
"""The unit attribute `assign-layouts` puts on an op whose first result is stored channels-last
(N, spatial…, C in memory; still indexed N, C, spatial… through a view: `result_layout`)."""


def channels_last_order(rank: int) -> list[int]:
    """The memory order of a channels-last tensor of `rank` ≥ 3: batch, spatial…, channels."""
    return [0, *range(2, rank), 1]


CONCAT_DESTINATION = "zant.concat_destination"
"""The unit attribute `schedule-patches` puts on the Concats that join its tiles: each input
whose producer is lowered row-major with no other reader is stored straight into its slice of
the Concat's output (`concat_slot`), and the Concat copies only the others. A marked Concat whose
only reader is another marked Concat is itself that one's slice, so a grid of tiles lands in
the stage output with no copy."""


def _destination_reader(value: SSAValue) -> tuple[Operation, int] | None:
    """The marked Concat that alone reads `value` and where along its axis `value` starts."""
    uses = list(value.uses)
    if len(uses) != 1:
        return None
    concat = uses[0].operation
    if not isinstance(concat, ConcatOp) or CONCAT_DESTINATION not in concat.attributes or CHANNELS_LAST in concat.attributes:
        return None
    axis = _concat_axis(concat)
    start = sum(tensor_shape(v)[axis] for v in concat.operands[: uses[0].index])
    return concat, start


def result_name(op: Operation, index: int = 0) -> str:
    """A readable name for a result buffer: the value's name hint, else the node name."""
    hint = op.results[index].name_hint
    if hint:
        return hint
    node = op.attributes.get(NODE_NAME)
    base = node.data if isinstance(node, StringAttr) and node.data else op.name.split(".")[-1]
    return f"{base}_out{index}" if len(op.results) > 1 else f"{base}_out"


def _concat_axis(concat: Operation) -> int:
    return get_attr(concat, "axis") % len(tensor_shape(concat.results[0]))


def concat_destination(kb: KernelBuilder, concat: Operation) -> Layout:
    """The output of a marked Concat (`CONCAT_DESTINATION`): its slice of the marked Concat
    that alone reads it, else the buffer an input lowered before stores into (the one named
    after `concat`: a producer may have kept a buffer of its own), else a fresh buffer declared
    ahead of this kernel (it dominates the kernels of the later inputs and the Concat's)."""
    outer = _destination_reader(concat.results[0])
    if outer is not None:
        return concat_slot(kb, concat.results[0], *outer)
    name, shape = result_name(concat), tensor_shape(concat.results[0])
    for source in _lowered_inputs(concat):
        while isinstance(source.owner, uop.ViewOp):
            source = source.owner.source
        if isinstance(source.owner, uop.DefineLocalOp) and source.owner.tensor_name.data == name:
            return Layout.contiguous(source, shape)
    return kb.alloc(name, shape, tensor_element_type(concat.results[0]))


def _lowered_inputs(concat: Operation) -> Iterator[SSAValue]:
    """The buffers or views of `concat`'s inputs lowered so far, those of the marked Concats
    among them not yet lowered included (the tiles of a row before the row's Concat)."""
    for value in concat.operands:
        source = _cast_source(value)
        if source is not None:
            yield source
        elif isinstance(value.owner, ConcatOp) and CONCAT_DESTINATION in value.owner.attributes:
            yield from _lowered_inputs(value.owner)


def concat_slot(kb: KernelBuilder, value: SSAValue, concat: Operation, start: int) -> Layout:
    """The slice of marked `concat`'s output that input `value` (starting at `start`) fills."""
    axis = _concat_axis(concat)
    return concat_destination(kb, concat).slice(axis, start, 1, tensor_shape(value)[axis])


def result_layout(kb: KernelBuilder, op: Operation, name: str, shape: Sequence[int], element_type: Attribute) -> Layout:
    """A fresh buffer `name` for `op`'s first result: row-major, or channels-last where `assign-layouts`
    marked the op (`CHANNELS_LAST`): a buffer of (N, spatial…, C) read as (N, C, spatial…).
    Row-major and read only by a marked Concat (`CONCAT_DESTINATION`): its slice of the Concat's
    output instead."""
    if CHANNELS_LAST not in op.attributes and op.results and tuple(shape) == tensor_shape(op.results[0]):
        reader = _destination_reader(op.results[0])
        if reader is not None:
            return concat_slot(kb, op.results[0], *reader)
        if isinstance(op, ConcatOp) and CONCAT_DESTINATION in op.attributes:
            return concat_destination(kb, op)
    if CHANNELS_LAST not in op.attributes or len(shape) < 3:
        return kb.alloc(name, shape, element_type)
    order = channels_last_order(len(shape))
    stored = kb.alloc(name, [shape[d] for d in order], element_type)
    return stored.permute([order.index(d) for d in range(len(shape))])


def is_channels_last(layout: Layout) -> bool:
    """Whether a rank ≥ 3 layout stores its channels (dimension 1) innermost and is otherwise
    dense in channels-last order (each pixel's channels one contiguous run)."""
    if layout.rank < 3 or layout.shape[1] < 2:
        return False
    return layout.permute(channels_last_order(layout.rank)).is_contiguous()


def merge_dims(layout: Layout, first: int, last: int) -> Layout | None:
    """`layout` with dimensions first..last (inclusive) merged into one, when their strides
    allow it (each the next one's stride times its size), else None."""
    dims = [d for d in range(first, last + 1) if layout.shape[d] > 1]  # a size-1 stride is any
    if any(layout.strides[d] != layout.strides[e] * layout.shape[e] for d, e in zip(dims, dims[1:])):
        return None
    size = math.prod(layout.shape[first:last + 1])
    stride = layout.strides[dims[-1]] if dims else 1
    return replace(
        layout,
        shape=(*layout.shape[:first], size, *layout.shape[last + 1:]),
        strides=(*layout.strides[:first], stride, *layout.strides[last + 1:]),
    )


def _cast_source(value: SSAValue) -> SSAValue | None:
    owner = value.owner
    if isinstance(owner, UnrealizedConversionCastOp) and len(owner.inputs) == 1:
        return owner.inputs[0]
    return None


def layout_of(value: SSAValue) -> Layout:
    """The layout behind a tensor operand whose producer is already lowered."""
    source = _cast_source(value)
    assert isinstance(value.type, TensorType)
    if source is None:
        raise ZantError(f"internal error: operand {value} was not lowered before its use")
    if isinstance(source.type, uop.BufferType):
        return Layout.contiguous(source, value.type.get_shape())
    assert isinstance(source.owner, uop.ViewOp)
    view_type = source.type
    assert isinstance(view_type, uop.ViewType)
    return Layout(
        source.owner.source,
        view_type.get_shape(),
        view_type.get_strides(),
        view_type.offset.data,
    )


def accumulator_type(t: Attribute) -> Attribute:
    """The type sums of `t` accumulate in: f16/bf16 in f32 (rounding every partial sum to 11
    bits loses several ulp over a long reduction); every other type in itself."""
    if isinstance(t, AnyFloat) and t.bitwidth < 32:
        return Float32Type()
    return t


def lowest_value(t: Attribute) -> int | float:
    """The identity of max over `t`: -inf, or the type's smallest integer (false for bool)."""
    if isinstance(t, AnyFloat):
        return float("-inf")
    if not isinstance(t, IntegerType):
        raise ValueError(f"{t} has no ordering")
    if t.width.data == 1 or t.signedness.data == Signedness.UNSIGNED:
        return 0
    return -(1 << (t.width.data - 1))


def highest_value(t: Attribute) -> int | float:
    """The identity of min over `t`: +inf, or the type's largest integer (true for bool)."""
    if isinstance(t, AnyFloat):
        return float("inf")
    if not isinstance(t, IntegerType):
        raise ValueError(f"{t} has no ordering")
    if t.width.data == 1:
        return 1
    if t.signedness.data == Signedness.UNSIGNED:
        return (1 << t.width.data) - 1
    return (1 << (t.width.data - 1)) - 1


def tensor_shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def tensor_element_type(value: SSAValue) -> Attribute:
    assert isinstance(value.type, TensorType)
    return value.type.get_element_type()


class KernelBuilder:
    """Builds the uop code of one lowered op, in front of it.

    Buffers and views go to the op's position (they must dominate every loop that uses them);
    loop bodies are built by entering `loop`/`loop_nest` contexts.
    """

    def __init__(self, op: Operation):
        self.op = op
        self._outer = Builder(InsertPoint.before(op))
        self._builder = self._outer
        self._views: dict[Layout, SSAValue] = {}
        self._first_code_op: Operation | None = None

    def _declare(self, op: Operation) -> Operation:
        """Insert a buffer or view ahead of all of this kernel's code, so it dominates it."""
        anchor = self._first_code_op or self.op
        return Builder(InsertPoint.before(anchor)).insert(op)

    # -- buffers and views -------------------------------------------------------------------

    def alloc(self, name: str, shape: Sequence[int], element_type: Attribute) -> Layout:
        """A fresh scratch buffer holding a tensor of `shape`, row-major."""
        size = math.prod(shape)
        buffer = self._declare(uop.DefineLocalOp(name, uop.BufferType(size, element_type))).result
        buffer.name_hint = _hint(name)
        return Layout.contiguous(buffer, shape)

    def constant(self, name: str, array: np.ndarray, element_type: Attribute) -> Layout:
        """`constant_table` ahead of this kernel's code (so it may be made after code, e.g.
        repacked weights)."""
        return constant_table(self._first_code_op or self.op, name, array, element_type)

    def view(self, layout: Layout) -> SSAValue:
        """The value to gep into for `layout`: the buffer itself when it is a plain 1-D read."""
        if layout.rank == 1 and layout.covers_buffer():
            return layout.buffer
        if layout not in self._views:
            view_type = uop.ViewType(
                layout.shape, layout.strides, layout.offset, layout.element_type
            )
            self._views[layout] = self._declare(uop.ViewOp(layout.buffer, view_type)).result
        return self._views[layout]

    # -- scalar code -------------------------------------------------------------------------

    def insert(self, op: Operation) -> Operation:
        if self._builder is self._outer and self._first_code_op is None:
            self._first_code_op = op
        return self._builder.insert(op)

    def const(self, value: int | float | bool, value_type: Attribute) -> SSAValue:
        return self.insert(uop.ConstOp(value, value_type)).result

    def index(self, value: int) -> SSAValue:
        return self.const(value, IndexType())

    def alu(self, name: str, *operands: SSAValue) -> SSAValue:
        return self.insert(uop.ALU_OPS[name](*operands)).result

    def cast(self, value: SSAValue, to: Attribute) -> SSAValue:
        if value.type == to:
            return value
        return self.insert(uop.CastOp(value, to)).result

    def where(self, condition: SSAValue, true_value: SSAValue, false_value: SSAValue) -> SSAValue:
        return self.insert(uop.WhereOp(condition, true_value, false_value)).result

    def load(self, layout: Layout, indices: Sequence[SSAValue]) -> SSAValue:
        source = self.view(layout)
        ptr = self.insert(uop.GepOp(source, list(indices))).result
        return self.insert(uop.LoadOp(ptr)).result

    def store(self, value: SSAValue, layout: Layout, indices: Sequence[SSAValue]) -> None:
        source = self.view(layout)
        ptr = self.insert(uop.GepOp(source, list(indices))).result
        self.insert(uop.StoreOp(value, ptr))

    def define_acc(self, init: int | float, element_type: Attribute) -> SSAValue:
        return self.insert(uop.DefineAccOp(init, element_type)).result

    def acc_get(self, acc: SSAValue) -> SSAValue:
        return self.insert(uop.AccGetOp(acc)).result

    def acc_set(self, acc: SSAValue, value: SSAValue) -> None:
        self.insert(uop.AccSetOp(acc, value))

    def mulacc(self, acc: SSAValue, lhs: SSAValue, rhs: SSAValue) -> None:
        """acc += lhs·rhs, the operands first converted to the accumulator's type."""
        acc_type = acc.type.element_type  # type: ignore[attr-defined]
        self.insert(uop.MulAccOp(acc, self.cast(lhs, acc_type), self.cast(rhs, acc_type)))

    # -- loops -------------------------------------------------------------------------------

    @contextmanager
    def loop(self, end: int, start: int = 0, step: int = 1) -> Iterator[SSAValue]:
        """`with kb.loop(n) as i:` builds the body of `uop.range %i = start to end step step`."""
        range_op = self.insert(uop.RangeOp(start, end, step))
        terminator = uop.EndRangeOp()
        range_op.body.block.add_op(terminator)
        outer = self._builder
        self._builder = Builder(InsertPoint.before(terminator))
        try:
            yield range_op.induction_var
        finally:
            self._builder = outer

    @contextmanager
    def loop_nest(self, shape: Sequence[int]) -> Iterator[list[SSAValue]]:
        """Nested loops over every index of `shape` (outermost first); rank 0 runs once."""
        ivs: list[SSAValue] = []
        with _nest(self, list(shape), ivs):
            yield ivs


def constant_table(anchor: Operation, name: str, array: np.ndarray, element_type: Attribute) -> Layout:
    """`array` (converted to `element_type`) as a read-only buffer in the constant arena,
    defined right before `anchor`: a lowering's own op when it makes its tables before it
    emits code (the KernelBuilder declares its views ahead of its first code op, and they must
    come after the buffers they view); `KernelBuilder.constant` anywhere."""
    array = np.ascontiguousarray(array, dtype=numpy_dtype(element_type))
    buffer_type = uop.BufferType(array.size, element_type)
    define = uop.DefineGlobalOp("constant", 0, name, buffer_type, make_constant_attr(array, name))
    Builder(InsertPoint.before(anchor)).insert(define)
    define.result.name_hint = _hint(name)
    return Layout.contiguous(define.result, array.shape)


@contextmanager
def _nest(kb: KernelBuilder, shape: list[int], ivs: list[SSAValue]) -> Iterator[None]:
    if not shape:
        yield
        return
    with kb.loop(shape[0]) as iv:
        ivs.append(iv)
        with _nest(kb, shape[1:], ivs):
            yield


def _hint(name: str) -> str | None:
    """A legal SSA name hint from an ONNX name (the backend sanitizes the real identifiers)."""
    import re

    hint = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return hint if hint and not hint[0].isdigit() else None
