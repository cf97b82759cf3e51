"""`resolve-sequences`: sequences and optionals become the tensor values they hold.

Zant compiles a sequence whose length is known at compile time, and an optional whose presence
is: the pass follows each `!onnx.seq` value as a list of tensor values and each `!onnx.opt` value
as its content (a tensor, a list, or nothing), in program order, and rewrites every op on them
into tensor ops or into nothing:

| op | becomes |
|---|---|
| SequenceConstruct, SequenceEmpty | the list of its inputs, the empty list |
| SequenceInsert, SequenceErase (constant position) | the list with the tensor inserted, the element erased |
| SequenceAt (constant position) | that element (its uses take it) |
| SequenceInsert, SequenceErase, SequenceAt (run-time position, elements of one type) | each resulting element an `onnx.Where` choosing among the elements by the position, which an `onnx.Guard` checks is in range |
| SequenceLength | an int64 constant |
| SplitToSequence | one `onnx.Split` (sizes 1, `split`'s chunks or sizes), `onnx.Squeeze` per piece for `keepdims=0` without `split` |
| ConcatFromSequence | `onnx.Concat` of the elements, each `onnx.Unsqueeze`d first for `new_axis=1` |
| SequenceMap | its body's ops once per element (typed by ONNX's inference for that element) |
| Optional, OptionalHasElement, OptionalGetElement | the content, a bool constant, the content |
| `ai.zant.SequenceSelect` of optionals (the unroller's, a run-time If's) | an optional whose presence is a run-time i1 flag (`Opt.present`), the chosen candidate's; its content the present candidates' (a Where per tensor where several hold one) |
| OptionalHasElement, OptionalGetElement of such an optional | the flag; the content behind an `onnx.Guard` of the flag |
| Identity of a sequence/optional | the same list/content |

The function's results follow: a sequence result is its elements, in order, named `y.0`,
`y.1` ... in `onnx.output_names` (the C ABI's outputs); an optional result its content (nothing
when it is empty); one whose presence is a run-time flag is returned like a run-time-length
sequence of its tensors, its length 0 when empty. The importer builds a sequence or optional graph input from the tensors the
caller passes (`zant.frontend.sequences`), so the pass sees only values it can follow.

A position computed at run time (not an `onnx.Constant`) leaves the length known, and so is
compiled when every element the op chooses among has the same type (the tensor inserted too):
then only which element goes where depends on the position, a choice `onnx.Where` makes at run
time; `NAME_predict` returns STATUS_BAD_PARAMETER for a position out of range (`onnx.Guard`).

Run-time bounded sequences (docs/sequences.md): where the data decide a length or element shapes,
a sequence is slots at a capacity the shapes bound (`Seq.items`), each slot `Bounded` along the
one dimension its shape may vary in (the value at its capacity, the valid entries first, and an
int64 extent), and a run-time length (`Seq.length`) where the number of elements varies:

| op | run-time form |
|---|---|
| SplitToSequence, run-time `split` | slots at the whole extent E along the axis (a piece is at most all of it), each gathered from its offset with the indices clamped into [0, E - 1] and zeroed past its size; a scalar chunk c: E slots, length ceil(E / c), Guard c >= 1; 1-D sizes: one slot per size, Guard each in [0, E] and their sum E |
| SequenceInsert, run-time position, shapes differing along one dimension | every slot `Bounded` at the largest extent, the elements padded with zeros, value and extent chosen by the position |
| SequenceAt, run-time position, shapes differing along one dimension | a `Bounded` graph output (only a graph output may be one) |
| `ai.zant.SequenceSelect` (the unroller's, a Loop over a run-time trip count: `--sequence-capacity`) | slot i chosen among the candidates that reach it, the length among theirs |
| SequenceLength | the run-time length |
| `ai.zant.SequenceSelect` of optionals (the unroller's, a run-time If's) | an optional whose presence is a run-time i1 flag (`Opt.present`), the chosen candidate's; its content the present candidates' (a Where per tensor where several hold one) |
| OptionalHasElement, OptionalGetElement of such an optional | the flag; the content behind an `onnx.Guard` of the flag |

An optional whose presence is a run-time flag is returned like a run-time-length sequence of its
tensors, its length 0 when empty. A run-time bounded result is a graph output in the C ABI of `zant.frontend.bounded`: one output
per slot at its capacity, then the int32 extents array, last, holding each `Bounded` slot's
extent and then each run-time length (`OUTPUT_BOUNDS_ATTR`, `OUTPUT_SEQUENCES_ATTR`). Every
index is clamped or guarded, so no input value reads or writes outside a buffer: an
out-of-range position, split or trip count is STATUS_BAD_PARAMETER. Any other op reading a
run-time bounded sequence is a `ZantError` naming it, as are elements differing in more than one
dimension, a sequence value the pass cannot follow (a function argument) and any other op on a
sequence or optional. Afterwards no value of the module is a sequence or an optional.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects import onnx as onnx_dialect
from zant.dialects.onnx import NODE_NAME, OUTPUT_BOUNDS_ATTR, OUTPUT_NAMES, OUTPUT_SEQUENCES_ATTR, ConstantOp, OnnxOp, get_attr, input_value, inputs
from zant.dialects.onnx_nodes import array_type, constant_node_array, constant_op, node_label, op_of_node, static_tensor_type, tensor_array
from zant.dialects.onnx_shape_folding import all_shapes_static, fold_shape_subgraphs
from zant.dialects.onnx_types import OptionalType, SequenceType, attr_graph
from zant.errors import ZantError
from zant.ir.resources import constant_array
from zant.ir.types import MLIR_TO_ONNX_ELEMENT_TYPE, numpy_dtype
from zant.passes.inline_functions import module_opset

RESOLVED_OPS = frozenset({
    "SequenceConstruct", "SequenceEmpty", "SequenceInsert", "SequenceErase", "SequenceAt", "SequenceLength",
    "SplitToSequence", "ConcatFromSequence", "SequenceMap", "Optional", "OptionalHasElement", "OptionalGetElement",
})
"""The default-domain ops this pass rewrites away (the importer imports them without a lowering)."""


@dataclass(frozen=True)
class Bounded:
    """An element whose extent along `dim` is only known at run time: `value` holds it at its
    capacity along `dim` (the valid entries first, zeros after), `extent` (an int64 scalar)
    counts the valid ones. Only a graph output may be one (the C ABI's bounded outputs)."""

    value: SSAValue
    dim: int
    extent: SSAValue


Item = SSAValue | Bounded


@dataclass(frozen=True)
class Seq:
    """A sequence value: its elements, tensor values, in order. With a run-time `length` (an
    int64 scalar), `items` are the slots of its capacity and the first `length` hold elements."""

    items: tuple[Item, ...]
    length: SSAValue | None = None

    @property
    def at_run_time(self) -> bool:
        return self.length is not None or any(isinstance(i, Bounded) for i in self.items)


@dataclass(frozen=True)
class Opt:
    """An optional value: what it holds (a tensor value, a `Seq`), None when empty. With a
    `present` flag (an i1 scalar), only the data decide whether it holds `content` (a run-time
    If's optionals, `select_optional`)."""

    content: SSAValue | Seq | None
    present: SSAValue | None = None


Known = SSAValue | Seq | Opt


def _is_tensor(value: SSAValue) -> bool:
    return not isinstance(value.type, SequenceType | OptionalType)


def _label(op: Operation) -> str:
    """The op's node: its ONNX name, else its location (`OpType_<index>`), and its op name."""
    name = op.attributes.get(NODE_NAME)
    if not (isinstance(name, StringAttr) and name.data) and isinstance(op.location, NameLoc):
        name = op.location.desc
    return f"'{name.data}' ({op.name})" if isinstance(name, StringAttr) and name.data else op.name


def _extent(value: SSAValue) -> list[int]:
    return list(value.type.get_shape())


class _Resolver:
    """Follows the sequence/optional values of one function and rewrites the ops on them."""

    def __init__(self, function: func.FuncOp, opset: int):
        self.function = function
        self.opset = opset
        self.known: dict[SSAValue, Known] = {}
        self.dead: list[Operation] = []

    # -- reading ----------------------------------------------------------------------------

    def of(self, value: SSAValue, op: Operation) -> Known:
        if _is_tensor(value):
            return value
        found = self.known.get(value)
        if found is None:
            raise ZantError(
                f"resolve-sequences: {_label(op)} reads a {'sequence' if isinstance(value.type, SequenceType) else 'optional'} "
                "whose content is not known at compile time (a function argument: give a graph input's "
                "element shapes at import)"
            )
        return found

    def seq(self, value: SSAValue, op: Operation, bounded: bool = False) -> tuple[SSAValue, ...]:
        """The elements of sequence `value`; with `bounded`, slots may be `Bounded` (the length
        must still be known)."""
        found = self.sequence(value, op)
        if found.length is not None or (not bounded and found.at_run_time):
            raise ZantError(
                f"resolve-sequences: {_label(op)} reads a sequence whose "
                f"{'length' if found.length is not None else 'element shapes'} only the data decide "
                "(a run-time bounded sequence), which only a graph output and SequenceLength may read"
                + ("" if found.length is not None else ", and SequenceInsert at a run-time position")
            )
        return found.items

    def sequence(self, value: SSAValue, op: Operation) -> Seq:
        found = self.of(value, op)
        if isinstance(found, Opt):
            self.known_present(found, op)
            found = found.content
        if not isinstance(found, Seq):
            raise ZantError(f"resolve-sequences: {_label(op)} expects a sequence")
        return found

    @staticmethod
    def known_present(found: Opt, op: Operation) -> None:
        """A ZantError unless whether `found` holds its content is known at compile time."""
        if found.present is not None:
            raise ZantError(
                f"resolve-sequences: {_label(op)} reads an optional whose presence only the data decide "
                "(a run-time If's), which only OptionalHasElement, OptionalGetElement and a graph output may read"
            )

    def position(self, value: SSAValue | None, op: Operation, length: int, default: int, inserting: bool = False) -> int:
        """A constant position in [-length, length - 1] ([-length, length] when inserting), normalized."""
        if value is None:
            return default
        if not isinstance(value.owner, ConstantOp):
            raise ZantError(
                f"resolve-sequences: the position of {_label(op)} is computed at run time over elements of "
                "different shapes, so the result's shape would depend on it; a sequence position must then be "
                "known at compile time (a constant, or freeze the graph input it comes from)"
            )
        array = np.asarray(constant_array(value.owner))
        if array.size != 1:
            raise ZantError(f"resolve-sequences: the position of {_label(op)} must be one value, not shape {list(array.shape)}")
        position = int(array.reshape(-1)[0])
        top = length if inserting else length - 1
        if not -length <= position <= top:
            raise ZantError(f"resolve-sequences: position {position} of {_label(op)} is outside [-{length}, {top}]")
        return position + length if position < 0 else position

    def at_run_time(self, value: SSAValue | None, candidates: list[SSAValue]) -> bool:
        """Whether a position is only known at run time and the elements it chooses among share
        one type (the run-time form applies)."""
        return value is not None and not isinstance(value.owner, ConstantOp) and len({v.type for v in candidates}) == 1

    def runtime_position(self, value: SSAValue, op: Operation, length: int, inserting: bool = False) -> SSAValue:
        """The position `value` as an int64 scalar in [0, length - 1] ([0, length] when inserting),
        a negative one counted from the end; an `onnx.Guard` before it checks the range."""
        array = value.type
        if array.get_shape() and int(np.prod(array.get_shape())) != 1:
            raise ZantError(f"resolve-sequences: the position of {_label(op)} must be one value, not shape {list(array.get_shape())}")
        if array.get_element_type() != i64:
            value = self.insert(op, onnx_dialect.CastOp.from_onnx(
                [value], [TensorType(i64, list(array.get_shape()))], {"to": IntegerAttr(onnx.TensorProto.INT64, i64)}
            )).results[0]
        scalar = TensorType(i64, [])
        if array.get_shape():
            value = self.insert(op, onnx_dialect.ReshapeOp.from_onnx(
                [value, self.constant(op, np.zeros(0, np.int64), "scalar_shape")], [scalar]
            )).results[0]
        flag = TensorType(IntegerType(1), [])
        top = length if inserting else length - 1
        low = self.compare(op, onnx_dialect.GreaterOrEqualOp, value, -length)
        high = self.compare(op, onnx_dialect.LessOrEqualOp, value, top)
        within = self.insert(op, onnx_dialect.AndOp.from_onnx([low, high], [flag])).results[0]
        self.insert(op, onnx_dialect.GuardOp.from_onnx([within], []))
        negative = self.compare(op, onnx_dialect.LessOp, value, 0)
        wrapped = self.insert(op, onnx_dialect.AddOp.from_onnx(
            [value, self.constant(op, np.array(length, np.int64), "sequence_length")], [scalar]
        )).results[0]
        return self.insert(op, onnx_dialect.WhereOp.from_onnx([negative, wrapped, value], [scalar])).results[0]

    def compare(self, op: Operation, kind: type[OnnxOp], value: SSAValue, bound: int) -> SSAValue:
        """`value kind bound` (an int64 scalar against a constant), an i1 scalar."""
        constant = self.constant(op, np.array(bound, np.int64), "position_bound")
        return self.insert(op, kind.from_onnx([value, constant], [TensorType(IntegerType(1), [])])).results[0]

    def choose(self, op: Operation, position: SSAValue, index: int, kind: type[OnnxOp], then: SSAValue, otherwise: SSAValue) -> SSAValue:
        """`then` where `index kind position` (Less or Equal, `index` a constant), else `otherwise`."""
        if then is otherwise:
            return then
        constant = self.constant(op, np.array(index, np.int64), "sequence_index")
        flag = self.insert(op, kind.from_onnx([constant, position], [TensorType(IntegerType(1), [])])).results[0]
        return self.insert(op, onnx_dialect.WhereOp.from_onnx([flag, then, otherwise], [then.type])).results[0]

    def scalar(self, op: Operation, kind: type[OnnxOp], a: SSAValue, b: SSAValue | int) -> SSAValue:
        """`a kind b` on int64 scalars (`b` may be a constant): an int64 scalar, or an i1 one
        for a comparison."""
        if isinstance(b, int):
            b = self.constant(op, np.array(b, np.int64), "sequence_bound")
        flag = kind in (onnx_dialect.LessOp, onnx_dialect.LessOrEqualOp, onnx_dialect.GreaterOrEqualOp,
                        onnx_dialect.GreaterOp, onnx_dialect.EqualOp)
        result = TensorType(IntegerType(1), []) if flag else TensorType(i64, [])
        return self.insert(op, kind.from_onnx([a, b], [result])).results[0]

    def guard(self, op: Operation, condition: SSAValue) -> None:
        self.insert(op, onnx_dialect.GuardOp.from_onnx([condition], []))

    def int64_scalar(self, op: Operation, value: SSAValue, what: str) -> SSAValue:
        """A one-element integer tensor as an int64 scalar."""
        shape = list(value.type.get_shape())
        if math.prod(shape) != 1:
            raise ZantError(f"resolve-sequences: {what} of {_label(op)} must be one value, not shape {shape}")
        if value.type.get_element_type() != i64:
            value = self.insert(op, onnx_dialect.CastOp.from_onnx(
                [value], [TensorType(i64, shape)], {"to": IntegerAttr(onnx.TensorProto.INT64, i64)}
            )).results[0]
        if shape:
            value = self.insert(op, onnx_dialect.ReshapeOp.from_onnx(
                [value, self.constant(op, np.zeros(0, np.int64), "scalar_shape")], [TensorType(i64, [])]
            )).results[0]
        return value

    # -- writing ----------------------------------------------------------------------------

    def insert(self, op: Operation, new: Operation) -> Operation:
        Rewriter.insert_op(new, InsertPoint.before(op))
        new.location = op.location
        return new

    def constant(self, op: Operation, array: np.ndarray, hint: str) -> SSAValue:
        return self.insert(op, constant_op(array, array_type(array, hint), hint)).results[0]

    def replace(self, op: Operation, result: SSAValue, tensor: SSAValue) -> None:
        """`result`, a tensor result of `op`, is `tensor` from now on."""
        declared = result.type
        if isinstance(declared, TensorType) and DYNAMIC_INDEX not in declared.get_shape() and declared != tensor.type:
            raise ZantError(f"resolve-sequences: {_label(op)} is declared {declared}, its element is {tensor.type}")
        if tensor.name_hint is None:
            tensor.name_hint = result.name_hint
        result.replace_all_uses_with(tensor)

    # -- the ops ----------------------------------------------------------------------------

    def run(self) -> None:
        for op in list(self.function.body.walk()):
            if isinstance(op, func.ReturnOp):
                self.returns(op)
            elif isinstance(op, onnx_dialect.SequenceSelectOp):
                self.SequenceSelect(op)
                self.dead.append(op)
            elif isinstance(op, OnnxOp) and op.spec().schema.domain in ("", "ai.onnx"):
                kind = op.spec().schema.name
                if kind in RESOLVED_OPS:
                    getattr(self, kind)(op)
                    self.dead.append(op)
                elif kind == "Identity" and not _is_tensor(op.operands[0]):
                    self.known[op.results[0]] = self.of(op.operands[0], op)
                    self.dead.append(op)
                else:
                    self.refuse(op)
            else:
                self.refuse(op)
        for op in reversed(self.dead):
            for result in op.results:
                if result.uses:
                    raise ZantError(f"resolve-sequences: {_label(op)} is still used after the rewrite")
            Rewriter.erase_op(op)

    def refuse(self, op: Operation) -> None:
        if any(not _is_tensor(v) for v in [*op.operands, *op.results]):
            raise ZantError(f"resolve-sequences: {_label(op)} takes or gives a sequence or optional, which only "
                            "the sequence and optional ops may")

    def SequenceConstruct(self, op: OnnxOp) -> None:
        self.known[op.results[0]] = Seq(tuple(op.operands))

    def SequenceEmpty(self, op: OnnxOp) -> None:
        self.known[op.results[0]] = Seq(())

    def SequenceInsert(self, op: OnnxOp) -> None:
        sequence, tensor, where = (input_value(op, i) for i in range(3))
        items = list(self.seq(sequence, op, bounded=True))
        if items and where is not None and not isinstance(where.owner, ConstantOp) and (
            any(isinstance(v, Bounded) for v in items) or len({v.type for v in [*items, tensor]}) > 1
        ):
            self.insert_bounded(op, items, tensor, where)
            return
        if items and self.at_run_time(where, [*items, tensor]):
            # Element i: items[i] before the position, the tensor at it, items[i - 1] after it.
            p = self.runtime_position(where, op, len(items), inserting=True)
            result = []
            for i in range(len(items) + 1):
                after = self.choose(op, p, i, onnx_dialect.EqualOp, tensor, items[i - 1]) if i else tensor
                result.append(self.choose(op, p, i, onnx_dialect.LessOp, items[i], after) if i < len(items) else after)
            self.known[op.results[0]] = Seq(tuple(result))
            return
        items.insert(self.position(where, op, len(items), len(items), inserting=True), tensor)
        self.known[op.results[0]] = Seq(tuple(items))

    def insert_bounded(self, op: OnnxOp, items: list[Item], tensor: SSAValue, where: SSAValue) -> None:
        """SequenceInsert at a run-time position among elements whose shapes differ along one
        dimension: every slot `Bounded` along it, at the largest extent, each candidate padded
        with zeros to it, the value and the extent chosen at run time as for one shape."""
        dim, capacity = self.common_bound(op, [*items, tensor])
        padded = [self.padded(op, v, dim, capacity) for v in [*items, tensor]]
        values, extents = [p[0] for p in padded[:-1]], [p[1] for p in padded[:-1]]
        new_value, new_extent = padded[-1]
        p = self.runtime_position(where, op, len(items), inserting=True)
        result: list[Item] = []
        for i in range(len(items) + 1):
            slot = []
            for chosen, new in ((values, new_value), (extents, new_extent)):
                after = self.choose(op, p, i, onnx_dialect.EqualOp, new, chosen[i - 1]) if i else new
                slot.append(self.choose(op, p, i, onnx_dialect.LessOp, chosen[i], after) if i < len(items) else after)
            result.append(Bounded(slot[0], dim, slot[1]))
        self.known[op.results[0]] = Seq(tuple(result))

    def common_bound(self, op: OnnxOp, candidates: list[Item]) -> tuple[int, int]:
        """The one dimension along which the candidates' shapes differ and its largest extent
        (their capacity); a ZantError when they differ in element type, rank or more dimensions."""
        types = [(v.value if isinstance(v, Bounded) else v).type for v in candidates]
        shapes = [list(t.get_shape()) for t in types]
        if len({t.get_element_type() for t in types}) > 1 or len({len(s) for s in shapes}) > 1:
            raise ZantError(f"resolve-sequences: the position of {_label(op)} is computed at run time over elements "
                            f"of different element types or ranks ({', '.join(str(t) for t in dict.fromkeys(types))})")
        dims = {d for s in shapes for d in range(len(s)) if s[d] != shapes[0][d]}
        dims |= {v.dim for v in candidates if isinstance(v, Bounded)}
        if len(dims) > 1:
            raise ZantError(
                f"resolve-sequences: the position of {_label(op)} is computed at run time over elements whose shapes "
                f"({', '.join(str(s) for s in shapes)}) differ in more than one dimension; a run-time bounded element "
                "may vary along one (a constant position, or freeze the graph input it comes from)"
            )
        dim = dims.pop() if dims else 0
        return dim, max(s[dim] for s in shapes) if shapes[0] else 1

    def padded(self, op: OnnxOp, item: Item, dim: int, capacity: int) -> tuple[SSAValue, SSAValue]:
        """`item` at `capacity` along `dim` (zeros after its entries) and its extent, an int64 scalar."""
        value = item.value if isinstance(item, Bounded) else item
        shape = _extent(value)
        extent = item.extent if isinstance(item, Bounded) else self.constant(op, np.array(shape[dim], np.int64), "extent")
        if shape[dim] < capacity:
            element = value.type.get_element_type()
            fill = [*shape[:dim], capacity - shape[dim], *shape[dim + 1 :]]
            zeros = self.constant(op, np.zeros(fill, numpy_dtype(element)), "padding")
            value = self.insert(op, onnx_dialect.ConcatOp.from_onnx(
                [value, zeros], [TensorType(element, [*shape[:dim], capacity, *shape[dim + 1 :]])], {"axis": IntegerAttr(dim, i64)}
            )).results[0]
        return value, extent

    def SequenceErase(self, op: OnnxOp) -> None:
        sequence, where = input_value(op, 0), input_value(op, 1)
        items = list(self.seq(sequence, op))
        if not items:
            raise ZantError(f"resolve-sequences: {_label(op)} erases from an empty sequence")
        if self.at_run_time(where, items):
            # Element i: items[i] before the position, items[i + 1] from it on.
            p = self.runtime_position(where, op, len(items))
            rest = [self.choose(op, p, i, onnx_dialect.LessOp, items[i], items[i + 1]) for i in range(len(items) - 1)]
            self.known[op.results[0]] = Seq(tuple(rest))
            return
        del items[self.position(where, op, len(items), len(items) - 1)]
        self.known[op.results[0]] = Seq(tuple(items))

    def SequenceAt(self, op: OnnxOp) -> None:
        sequence, where = input_value(op, 0), input_value(op, 1)
        items = self.seq(sequence, op, bounded=True)
        if not items:
            raise ZantError(f"resolve-sequences: {_label(op)} reads from an empty sequence")
        varies = any(isinstance(v, Bounded) for v in items) or len({v.type for v in items}) > 1
        if varies and where is not None and not isinstance(where.owner, ConstantOp) and all(
            isinstance(use.operation, func.ReturnOp) for use in op.results[0].uses
        ):
            # A graph output of a run-time shape: `Bounded` along the one dimension the
            # elements' shapes differ in, chosen by the position with its extent.
            dim, capacity = self.common_bound(op, list(items))
            padded = [self.padded(op, v, dim, capacity) for v in items]
            p = self.runtime_position(where, op, len(items))
            value, extent = padded[0]
            for i in range(1, len(items)):
                value = self.choose(op, p, i, onnx_dialect.EqualOp, padded[i][0], value)
                extent = self.choose(op, p, i, onnx_dialect.EqualOp, padded[i][1], extent)
            self.known[op.results[0]] = Bounded(value, dim, extent)
            return
        items = self.seq(sequence, op)
        if self.at_run_time(where, list(items)):
            p = self.runtime_position(where, op, len(items))
            chosen = items[0]
            for i in range(1, len(items)):
                chosen = self.choose(op, p, i, onnx_dialect.EqualOp, items[i], chosen)
            self.replace(op, op.results[0], chosen)
            return
        self.replace(op, op.results[0], items[self.position(where, op, len(items), 0)])

    def SequenceLength(self, op: OnnxOp) -> None:
        found = self.sequence(op.operands[0], op)
        if found.length is not None:
            self.replace(op, op.results[0], found.length)
            return
        length = np.array(len(found.items), np.int64)
        self.replace(op, op.results[0], self.constant(op, length, "sequence_length"))

    def SplitToSequence(self, op: OnnxOp) -> None:
        tensor, split = input_value(op, 0), input_value(op, 1)
        shape = _extent(tensor)
        axis = get_attr(op, "axis")
        axis += len(shape) if axis < 0 else 0
        extent = shape[axis]
        squeeze = split is None and not get_attr(op, "keepdims")
        if split is None:
            sizes = [1] * extent
        elif not isinstance(split.owner, ConstantOp):
            self.split_at_run_time(op, tensor, split, axis)
            return
        else:
            values = np.asarray(constant_array(split.owner)).astype(np.int64)
            if values.ndim == 0:
                chunk = int(values)
                if chunk <= 0:
                    raise ZantError(f"resolve-sequences: {_label(op)} splits into chunks of {chunk}")
                sizes = [chunk] * (extent // chunk) + ([extent % chunk] if extent % chunk else [])
            else:
                sizes = [int(v) for v in values]
                if sum(sizes) != extent or min(sizes, default=0) < 0:
                    raise ZantError(f"resolve-sequences: {_label(op)} splits an extent of {extent} into {sizes}")
        if not sizes:
            self.known[op.results[0]] = Seq(())
            return
        element = tensor.type.get_element_type()
        piece_types = [TensorType(element, [*shape[:axis], size, *shape[axis + 1 :]]) for size in sizes]
        sizes_value = self.constant(op, np.array(sizes, np.int64), "split_sizes")
        pieces = self.insert(op, onnx_dialect.SplitOp.from_onnx([tensor, sizes_value], piece_types, {"axis": IntegerAttr(axis, i64)}))
        items = list(pieces.results)
        if squeeze:
            axes = self.constant(op, np.array([axis], np.int64), "squeeze_axes")
            squeezed = TensorType(element, [*shape[:axis], *shape[axis + 1 :]])
            items = [self.insert(op, onnx_dialect.SqueezeOp.from_onnx([v, axes], [squeezed])).results[0] for v in items]
        self.known[op.results[0]] = Seq(tuple(items))

    def split_at_run_time(self, op: OnnxOp, tensor: SSAValue, split: SSAValue, axis: int) -> None:
        """SplitToSequence by a run-time `split`: each piece a slot `Bounded` along `axis` at the
        whole extent E (a piece is at most all of it), gathered from its offset with the indices
        clamped into [0, E - 1] and zeroed past its size. A scalar `split` (chunks of c) gives E
        slots and the run-time length ceil(E / c), c >= 1 checked by an `onnx.Guard`; sizes (1-D,
        static length m) give m slots, each size in [0, E] and their sum E checked."""
        shape = _extent(tensor)
        extent = shape[axis]
        if len(split.type.get_shape()) > 1:
            raise ZantError(f"resolve-sequences: the split of {_label(op)} must be a scalar or 1-D, not shape {_extent(split)}")
        if extent == 0 and not split.type.get_shape():  # no chunk of an empty extent
            self.known[op.results[0]] = Seq(())
            return
        length = None
        if not split.type.get_shape():  # chunks of c
            chunk = self.int64_scalar(op, split, "the split")
            self.guard(op, self.scalar(op, onnx_dialect.GreaterOrEqualOp, chunk, 1))
            # within [1, E] (the same pieces for any larger c): no product overflows, no division by 0
            chunk = self.scalar(op, onnx_dialect.MinOp, self.scalar(op, onnx_dialect.MaxOp, chunk, 1), extent)
            offsets = [self.scalar(op, onnx_dialect.MulOp, chunk, k) for k in range(extent)]
            sizes = [
                self.scalar(op, onnx_dialect.MinOp, self.scalar(op, onnx_dialect.MaxOp, self.scalar(
                    op, onnx_dialect.SubOp, self.constant(op, np.array(extent, np.int64), "extent"), offset), 0), chunk)
                for offset in offsets
            ]
            length = self.scalar(op, onnx_dialect.DivOp, self.scalar(op, onnx_dialect.AddOp, chunk, extent - 1), chunk)
        else:  # sizes
            count = _extent(split)[0]
            if count == DYNAMIC_INDEX:
                raise ZantError(f"resolve-sequences: the split of {_label(op)} has no static length")
            if split.type.get_element_type() != i64:
                split = self.insert(op, onnx_dialect.CastOp.from_onnx(
                    [split], [TensorType(i64, [count])], {"to": IntegerAttr(onnx.TensorProto.INT64, i64)}
                )).results[0]
            sizes = [
                self.insert(op, onnx_dialect.GatherOp.from_onnx(
                    [split, self.constant(op, np.array(k, np.int64), "split_index")], [TensorType(i64, [])], {"axis": IntegerAttr(0, i64)}
                )).results[0]
                for k in range(count)
            ]
            offsets, total, valid = [], self.constant(op, np.array(0, np.int64), "offset"), None
            for size in sizes:
                offsets.append(total)
                total = self.scalar(op, onnx_dialect.AddOp, total, size)
                positive = self.insert(op, onnx_dialect.AndOp.from_onnx([  # in [0, E]: the sum cannot wrap
                    self.scalar(op, onnx_dialect.GreaterOrEqualOp, size, 0), self.scalar(op, onnx_dialect.LessOrEqualOp, size, extent)
                ], [TensorType(IntegerType(1), [])])).results[0]
                valid = positive if valid is None else self.insert(op, onnx_dialect.AndOp.from_onnx(
                    [valid, positive], [positive.type])).results[0]
            whole = self.scalar(op, onnx_dialect.EqualOp, total, extent)
            self.guard(op, whole if valid is None else self.insert(op, onnx_dialect.AndOp.from_onnx([valid, whole], [whole.type])).results[0])
            if extent == 0:  # every size 0 (checked): each piece the empty tensor itself
                self.known[op.results[0]] = Seq((tensor,) * count)
                return
        element = tensor.type.get_element_type()
        steps = self.constant(op, np.arange(extent, dtype=np.int64), "piece_steps")
        rows = self.constant(op, np.arange(extent, dtype=np.int64).reshape([extent] + [1] * (len(shape) - axis - 1)), "piece_rows")
        zero = self.constant(op, np.zeros((), numpy_dtype(element)), "zero")
        items: list[Item] = []
        for offset, size in zip(offsets, sizes):
            indices = self.insert(op, onnx_dialect.AddOp.from_onnx([steps, offset], [steps.type])).results[0]
            for kind, bound in ((onnx_dialect.MaxOp, 0), (onnx_dialect.MinOp, extent - 1)):
                indices = self.insert(op, kind.from_onnx(
                    [indices, self.constant(op, np.array(bound, np.int64), "index_bound")], [steps.type])).results[0]
            piece = self.insert(op, onnx_dialect.GatherOp.from_onnx([tensor, indices], [tensor.type], {"axis": IntegerAttr(axis, i64)})).results[0]
            inside = self.insert(op, onnx_dialect.LessOp.from_onnx([rows, size], [TensorType(IntegerType(1), _extent(rows))])).results[0]
            piece = self.insert(op, onnx_dialect.WhereOp.from_onnx([inside, piece, zero], [tensor.type])).results[0]
            items.append(Bounded(piece, axis, size))
        self.known[op.results[0]] = Seq(tuple(items), length)

    def ConcatFromSequence(self, op: OnnxOp) -> None:
        items = self.seq(op.operands[0], op)
        if not items:
            raise ZantError(f"resolve-sequences: {_label(op)} concatenates an empty sequence")
        rank = len(_extent(items[0]))
        new_axis = bool(get_attr(op, "new_axis"))
        axis = get_attr(op, "axis")
        axis += rank + new_axis if axis < 0 else 0
        if new_axis:
            axes = self.constant(op, np.array([axis], np.int64), "unsqueeze_axes")
            items = [
                self.insert(op, onnx_dialect.UnsqueezeOp.from_onnx(
                    [v, axes], [TensorType(v.type.get_element_type(), [*_extent(v)[:axis], 1, *_extent(v)[axis:]])]
                )).results[0]
                for v in items
            ]
        shapes = [_extent(v) for v in items]
        if any(len(s) != len(shapes[0]) or s[:axis] + s[axis + 1 :] != shapes[0][:axis] + shapes[0][axis + 1 :] for s in shapes):
            raise ZantError(f"resolve-sequences: {_label(op)} concatenates shapes {shapes} along axis {axis}")
        shape = [*shapes[0][:axis], sum(s[axis] for s in shapes), *shapes[0][axis + 1 :]]
        result = TensorType(items[0].type.get_element_type(), shape)
        if len(items) == 1:
            self.replace(op, op.results[0], items[0])
            return
        concat = self.insert(op, onnx_dialect.ConcatOp.from_onnx(list(items), [result], {"axis": IntegerAttr(axis, i64)}))
        self.replace(op, op.results[0], concat.results[0])

    def Optional(self, op: OnnxOp) -> None:
        content = input_value(op, 0)
        self.known[op.results[0]] = Opt(None if content is None else self.of(content, op))

    def OptionalHasElement(self, op: OnnxOp) -> None:
        value = input_value(op, 0)
        found = None if value is None else self.of(value, op)
        if isinstance(found, Opt) and found.present is not None:
            self.replace(op, op.results[0], found.present)
            return
        present = found is not None and (not isinstance(found, Opt) or found.content is not None)
        self.replace(op, op.results[0], self.constant(op, np.array(present), "has_element"))

    def OptionalGetElement(self, op: OnnxOp) -> None:
        found = self.of(op.operands[0], op)
        if isinstance(found, Opt):
            if found.content is None:
                raise ZantError(f"resolve-sequences: {_label(op)} reads an optional that is empty")
            if found.present is not None:  # reading an empty one is an error: STATUS_BAD_PARAMETER
                self.guard(op, found.present)
            found = found.content
        if isinstance(found, Seq):
            self.known[op.results[0]] = found
        else:
            self.replace(op, op.results[0], found)

    def SequenceSelect(self, op: OnnxOp) -> None:
        """The unroller's choice among the sequences a Loop carries after each number of
        iterations (`zant.frontend.control_flow`): slot i is the element i of the sequences that
        have one, chosen by the run-time Index where they differ (`Bounded` where their shapes
        do, along one dimension), and the length is chosen among theirs (a run-time length
        when they differ). Slots past a sequence's length are never read, so the choice of
        slot i only looks at the sequences that reach it."""
        if all(isinstance(v.type, OptionalType) for v in op.operands[1:]):
            self.select_optional(op)
            return
        index = self.int64_scalar(op, op.operands[0], "the index")
        candidates = [self.seq(v, op) for v in op.operands[1:]]
        lengths = [len(c) for c in candidates]
        items: list[Item] = []
        for i in range(max(lengths, default=0)):
            holders = [(k, c[i]) for k, c in enumerate(candidates) if len(c) > i]
            if len({v.type for _, v in holders}) > 1:
                dim, capacity = self.common_bound(op, [v for _, v in holders])
                padded = [(k, self.padded(op, v, dim, capacity)) for k, v in holders]
                value, extent = padded[0][1]
                for k, (v, e) in padded[1:]:
                    value = self.choose(op, index, k, onnx_dialect.EqualOp, v, value)
                    extent = self.choose(op, index, k, onnx_dialect.EqualOp, e, extent)
                items.append(Bounded(value, dim, extent))
                continue
            value = holders[0][1]
            for k, v in holders[1:]:
                value = self.choose(op, index, k, onnx_dialect.EqualOp, v, value)
            items.append(value)
        length = None
        if len(set(lengths)) > 1:
            length = self.constant(op, np.array(lengths[0], np.int64), "sequence_length")
            for k, n in enumerate(lengths[1:], 1):
                if n != lengths[0]:
                    length = self.choose(op, index, k, onnx_dialect.EqualOp, self.constant(
                        op, np.array(n, np.int64), "sequence_length"), length)
        self.known[op.results[0]] = Seq(tuple(items), length)

    def SequenceMap(self, op: OnnxOp) -> None:
        body = attr_graph(op.properties.get("body"))
        if body is None:
            raise ZantError(f"resolve-sequences: {_label(op)} has no body graph")
        first, *rest = inputs(op)
        arguments = [first, *rest]
        lists = {i: self.seq(v, op) for i, v in enumerate(arguments) if not _is_tensor(v)}
        lengths = {len(items) for items in lists.values()}
        if len(lengths) != 1:
            raise ZantError(f"resolve-sequences: the sequences of {_label(op)} differ in length ({sorted(lengths)})")
        (length,) = lengths
        results: list[list[SSAValue]] = [[] for _ in op.results]
        for index in range(length):
            values = [lists[i][index] if i in lists else v for i, v in enumerate(arguments)]
            for slot, value in enumerate(self.inline_body(op, body, values, index)):
                results[slot].append(value)
        for result, items in zip(op.results, results, strict=True):
            self.known[result] = Seq(tuple(items))

    def inline_body(self, op: OnnxOp, body: onnx.GraphProto, values: list[SSAValue], index: int) -> list[SSAValue]:
        """The body's ops for one element, before `op`; the values of its outputs."""
        if len(body.input) != len(values):
            raise ZantError(f"resolve-sequences: the body of {_label(op)} takes {len(body.input)} inputs, not {len(values)}")
        graph = onnx.GraphProto()
        graph.CopyFrom(body)
        del graph.input[:]
        for formal, value in zip(body.input, values):
            element = MLIR_TO_ONNX_ELEMENT_TYPE[value.type.get_element_type()]
            graph.input.append(helper.make_tensor_value_info(formal.name, element, _extent(value)))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        try:
            model = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
            if not all_shapes_static(model):
                model = fold_shape_subgraphs(model, self.opset)
        except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError) as error:
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise ZantError(f"resolve-sequences: ONNX's inference of the body of {_label(op)} fails: {first}") from None
        graph = model.graph
        types = {v.name: v.type for v in [*graph.input, *graph.value_info, *graph.output]}
        named: dict[str, SSAValue] = {formal.name: value for formal, value in zip(body.input, values)}

        def result_type(name: str):
            found = static_tensor_type(types.get(name), name)
            if found is None:
                raise ZantError(f"resolve-sequences: no static type for '{name}' in the body of {_label(op)} (element {index})")
            return found

        for tensor in graph.initializer:
            array = tensor_array(tensor)
            named[tensor.name] = self.constant(op, array, tensor.name)
        for number, node in enumerate(graph.node):
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                new = constant_op(constant_node_array(node), result_type(node.output[0]), node.output[0])
            else:
                missing = [n for n in node.input if n and n not in named]
                if missing:
                    raise ZantError(f"resolve-sequences: {node_label(node)} in the body of {_label(op)} reads "
                                    f"'{missing[0]}' from outside the body, which is not supported")
                new = op_of_node(node, [named[n] if n else None for n in node.input],
                                 [result_type(n) if n else None for n in node.output])
            Rewriter.insert_op(new, InsertPoint.before(op))
            new.location = NameLoc(StringAttr(f"{node.name or node.op_type + '_' + str(number)}[{index}]"), NoneAttr())
            for name, result in zip([n for n in node.output if n], new.results, strict=True):
                named[name] = result
        return [named[o.name] for o in graph.output]

    def select_optional(self, op: OnnxOp) -> None:
        """`SequenceSelect` of optionals (a run-time If's, `zant.frontend.control_flow`): present
        as the chosen candidate is, a run-time flag (`Opt.present`) where they differ; the
        content is the candidates' one where one holds something, else chosen element by element
        (tensors of one type, or sequences of one length and element types)."""
        index = self.int64_scalar(op, op.operands[0], "the index")
        candidates = [self.of(v, op) for v in op.operands[1:]]
        flags = [c.present if c.present is not None else c.content is not None for c in candidates]
        holders = [(k, c.content) for k, c in enumerate(candidates) if c.content is not None]
        if not holders:
            self.known[op.results[0]] = Opt(None)
            return
        content = holders[0][1]
        for k, other in holders[1:]:
            if isinstance(other, Seq) != isinstance(content, Seq):
                raise ZantError(f"resolve-sequences: {_label(op)} chooses between an optional sequence and an optional tensor")
            if isinstance(other, Seq):
                assert isinstance(content, Seq)
                if other.at_run_time or content.at_run_time or [v.type for v in other.items] != [v.type for v in content.items]:
                    raise ZantError(
                        f"resolve-sequences: {_label(op)} chooses at run time between optional sequences of different "
                        "lengths or element shapes"
                    )
                content = Seq(tuple(self.choose(op, index, k, onnx_dialect.EqualOp, a, b) for a, b in zip(other.items, content.items)))
            elif other.type != content.type:
                raise ZantError(f"resolve-sequences: {_label(op)} chooses at run time between optionals of {other.type} and {content.type}")
            else:
                content = self.choose(op, index, k, onnx_dialect.EqualOp, other, content)
        if all(f is True for f in flags):
            self.known[op.results[0]] = Opt(content)
            return
        as_value = lambda f: self.constant(op, np.array(f), "present") if isinstance(f, bool) else f  # noqa: E731
        present = as_value(flags[0])
        for k, flag in enumerate(flags[1:], 1):
            present = self.choose(op, index, k, onnx_dialect.EqualOp, as_value(flag), present)
        self.known[op.results[0]] = Opt(content, present)

    def returns(self, op: func.ReturnOp) -> None:
        names_attr = self.function.attributes.get(OUTPUT_NAMES)
        names = [n.data for n in names_attr] if isinstance(names_attr, ArrayAttr) else [f"output{i}" for i in range(len(op.operands))]
        flat: list[SSAValue] = []
        flat_names: list[str] = []
        bounds: list[int] = []  # per output: its Bounded dimension, or -1
        groups: list[int] = []  # per output: the run-time-length sequence it is a slot of, or -1
        extents: list[SSAValue] = []  # the Bounded outputs' extents, in output order
        lengths: list[SSAValue] = []  # then the run-time-length sequences' lengths
        for name, value in zip(names, op.operands, strict=True):
            found = self.known.get(value) if isinstance(self.known.get(value), Bounded) else self.of(value, op)
            if isinstance(found, Bounded):  # a tensor output of a run-time shape (SequenceAt's)
                flat.append(found.value)
                flat_names.append(name)
                bounds.append(found.dim)
                groups.append(-1)
                extents.append(found.extent)
                continue
            if isinstance(found, Opt) and found.present is not None and found.content is not None:
                # Whether it holds its content only the data decide: returned as a sequence of
                # its tensors whose run-time length is 0 when it is empty.
                items = found.content.items if isinstance(found.content, Seq) else (found.content,)
                full = found.content.length if isinstance(found.content, Seq) else None
                full = full if full is not None else self.constant(op, np.array(len(items), np.int64), "sequence_length")
                empty = self.constant(op, np.array(0, np.int64), "sequence_length")
                length = self.insert(op, onnx_dialect.WhereOp.from_onnx([found.present, full, empty], [full.type])).results[0]
                found = Seq(items, length)
            elif isinstance(found, Opt):
                found = found.content
            if isinstance(found, Seq):
                group = -1
                if found.length is not None:
                    group = len(lengths)
                    lengths.append(found.length)
                for i, item in enumerate(found.items):
                    if isinstance(item, Bounded):
                        flat.append(item.value)
                        bounds.append(item.dim)
                        extents.append(item.extent)
                    else:
                        flat.append(item)
                        bounds.append(-1)
                    groups.append(group)
                    flat_names.append(f"{name}.{i}")
            elif found is not None:
                flat.append(found)
                flat_names.append(name)
                bounds.append(-1)
                groups.append(-1)
        if extents or lengths:
            self.extents_output(op, flat, flat_names, bounds, groups, extents + lengths)
        types = [v.type for v in flat]
        if flat == list(op.operands):
            # A tensor result the graph declares with an open dimension (ConcatFromSequence's) now
            # has the static type of what it returns.
            if types != list(self.function.function_type.outputs):
                self.function.function_type = func.FunctionType.from_lists(list(self.function.function_type.inputs), types)
            return
        # One value may now be returned twice (a sequence that repeats a tensor): each result its own copy.
        seen: set[SSAValue] = set()
        for i, value in enumerate(flat):
            if value in seen:
                flat[i] = self.insert(op, onnx_dialect.IdentityOp.from_onnx([value], [value.type])).results[0]
            seen.add(value)
        Rewriter.replace_op(op, func.ReturnOp(*flat))
        self.function.function_type = func.FunctionType.from_lists(
            list(self.function.function_type.inputs), [v.type for v in flat]
        )
        self.function.attributes[OUTPUT_NAMES] = ArrayAttr([StringAttr(n) for n in flat_names])

    def extents_output(
        self, op: func.ReturnOp, flat: list[SSAValue], names: list[str], bounds: list[int], groups: list[int], entries: list[SSAValue]
    ) -> None:
        """The C ABI of run-time bounded sequence outputs (`zant.frontend.bounded`'s, extended):
        one more output, last, the int32 extents array of `entries` (each Bounded slot's extent,
        then each run-time length); `OUTPUT_BOUNDS_ATTR` gives the slots' bounded dimensions,
        `OUTPUT_SEQUENCES_ATTR` which sequence each slot belongs to."""
        if OUTPUT_BOUNDS_ATTR in self.function.attributes or self.function.sym_name.data != "main":
            raise ZantError(
                "resolve-sequences: a sequence output whose length or element shapes only the data decide is "
                "compiled only as an output of the main graph without other bounded outputs (Unique's)"
            )
        one = TensorType(IntegerType(32), [1])
        parts = []
        for entry in entries:
            narrow = self.insert(op, onnx_dialect.CastOp.from_onnx(
                [entry], [TensorType(IntegerType(32), [])], {"to": IntegerAttr(onnx.TensorProto.INT32, i64)}
            )).results[0]
            parts.append(self.insert(op, onnx_dialect.ReshapeOp.from_onnx(
                [narrow, self.constant(op, np.array([1], np.int64), "extent_shape")], [one]
            )).results[0])
        array = parts[0] if len(parts) == 1 else self.insert(op, onnx_dialect.ConcatOp.from_onnx(
            parts, [TensorType(IntegerType(32), [len(parts)])], {"axis": IntegerAttr(0, i64)}
        )).results[0]
        name = "extents"
        while name in names:
            name = "_" + name
        flat.append(array)
        names.append(name)
        self.function.attributes[OUTPUT_BOUNDS_ATTR] = DenseArrayBase.from_list(i64, [*bounds, -1])
        if any(g >= 0 for g in groups):
            self.function.attributes[OUTPUT_SEQUENCES_ATTR] = DenseArrayBase.from_list(i64, [*groups, -1])


@dataclass(frozen=True)
class ResolveSequencesPass(ModulePass):
    """Sequence and optional values become the tensors they hold; the ops on them go."""

    name = "resolve-sequences"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        opset = module_opset(op)
        for function in list(op.walk()):
            if isinstance(function, func.FuncOp) and not function.is_declaration:
                if any(not _is_tensor(v) for o in function.body.walk() for v in [*o.operands, *o.results]):
                    _Resolver(function, opset).run()
