"""`fuse-loops`: producer→consumer fusion of uop loop nests, so intermediate buffers disappear.

`-p 'fuse-loops{elementwise=true epilogue=true reduction=true}'`, each option turning one kind off:

* **elementwise**: an element-wise consumer nest is computed inside an element-wise producer nest,
  at the producer's store (`Add → Relu → Mul` becomes one loop nest);
* **epilogue**: the same, when the producer is an accumulating kernel (Conv, Gemm, MatMul, pools,
  reductions): it stores each output element once, after its accumulation, so the consumer's
  computation runs on the stored value right there (`Conv → Relu`, `Gemm → Add`);
* **reduction**: an element-wise producer is computed inside an accumulating consumer, at the
  consumer's load (`Exp → ReduceSum`).

A *nest* is a top-level `uop.range` of the function. An *element-wise nest* is a perfect nest of
loops `0 to n step 1` whose innermost body has no regions, no accumulators, only pure ops, loads
and exactly one store, at the identity index (loop k indexes dimension k) of an injective view.

Legality, checked in code, for a producer nest P writing buffer B and a consumer nest C reading it:

1. every store to B is in P and P does not read B, so B holds exactly what P stored when C runs;
2. P's stores to B and C's loads of B go through views of B with the same offset and the same
   (extent, stride) pairs once extent-1 dimensions are dropped, and that view is injective: a
   view index names one element of B, the same one for both. Broadcast or transposed reads, and
   reads at any other index, differ and are not fused;
3. into the producer (elementwise, epilogue): C reads B only at the identity index, so iteration
   c of C needs only B[c]; P's store indices are affine functions of its loop variables within
   the view's bounds, so each store of B[q] runs iteration c = q of C right after it. C's other
   inputs are not written between P and C, and those P writes (siblings) it stores element
   by element beside B, at the same indices and element map, so C's iteration reads the
   values just stored (`x · sigmoid(x)` after a Conv whose epilogue computes both); C's
   output is not touched by P or between them and is not read by C, and every value C takes
   from outside is defined before P or is a
   buffer, view or constant that can move ahead of P (not, say, a sum computed after P), so
   moving C's iterations earlier and reordering them changes no value read or written; no
   `abi.check` lies between P and C (when it fails, C must not have run);
4. into the consumer (reduction): P is element-wise, B has no reader but C, C's loads of B are
   affine, in bounds and injective over C's loops (each element is recomputed at most once, as
   often as it was stored), and P's inputs are not written after P up to and including C.

A fused buffer with no other reader (and not a graph output) loses its stores, views and
definition; otherwise the producer still stores it and the fusion saves no memory. The fused
nest's location fuses both nests' (`loc(fused["conv1", "relu1"])`): the nodes it computes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import Pure

from zant.dialects.uop import (
    AccGetOp,
    AccSetOp,
    ConstOp,
    DefineAccOp,
    DefineGlobalOp,
    DefineLocalOp,
    EndRangeOp,
    GepOp,
    LoadOp,
    MulAccOp,
    RangeOp,
    StoreOp,
    ViewOp,
    ViewType,
)
from zant.dialects.abi import CheckOp
from zant.analysis.linear_index import linear_form
from zant.ir.locations import fuse_locations
from zant.ir.walk import ops_of

_ACC_OPS = (DefineAccOp, MulAccOp, AccSetOp, AccGetOp)
_HOISTABLE = (DefineGlobalOp, DefineLocalOp, ViewOp, ConstOp)
"""Top-level definitions that read no state, so they may move ahead of a producer."""


# ---------------------------------------------------------------------------------------------
# Accesses: which element of which buffer a gep names
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Access:
    """A gep into a buffer, seen through its view (a plain buffer gep is a 1-D contiguous view)."""

    gep: GepOp
    buffer: SSAValue
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int

    @staticmethod
    def of(gep: GepOp) -> Access:
        source = gep.source
        if isinstance(source.type, ViewType):
            assert isinstance(source.owner, ViewOp)
            view = source.type
            return Access(gep, source.owner.source, view.get_shape(), view.get_strides(), view.offset.data)
        return Access(gep, source, (source.type.size.data,), (1,), 0)  # type: ignore[attr-defined]

    def key(self) -> tuple[int, tuple[tuple[int, int], ...]]:
        """The element map without extent-1 dimensions (their index is always 0)."""
        return self.offset, tuple((d, s) for d, s in zip(self.shape, self.strides) if d != 1)

    def injective(self) -> bool:
        """True if distinct view indices name distinct elements (strides nest like a mixed radix)."""
        reach = 0
        for dim, stride in sorted(self.key()[1], key=lambda t: abs(t[1])):
            if abs(stride) <= reach:
                return False
            reach += abs(stride) * (dim - 1)
        return True

    def kind(self) -> str:
        """"load", "store" or "other" (anything else may read and write through the pointer)."""
        users = {type(use.operation) for use in self.gep.result.uses}
        if users == {LoadOp}:
            return "load"
        if users == {StoreOp} and all(u.index == 1 for u in self.gep.result.uses):
            return "store"
        return "other"


def accesses(buffer: SSAValue) -> list[Access]:
    """Every gep into `buffer`, directly or through views."""
    result = []
    for use in buffer.uses:
        user = use.operation
        if isinstance(user, ViewOp):
            result += [Access.of(u.operation) for u in user.result.uses if isinstance(u.operation, GepOp)]
        elif isinstance(user, GepOp):
            result.append(Access.of(user))
    return result


def _top(op: Operation, function: func.FuncOp) -> Operation:
    """The op of the function body that holds `op`."""
    while op.parent_op() is not function:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


# ---------------------------------------------------------------------------------------------
# Affine index values
# ---------------------------------------------------------------------------------------------


def _loop_of(value: SSAValue) -> RangeOp | None:
    if isinstance(value.owner, Block) and isinstance(loop := value.owner.parent_op(), RangeOp):
        return loop
    return None


def affine(value: SSAValue) -> dict[SSAValue | None, int] | None:
    """`value` as `Σ coefficient·induction variable (+ constant under key None)`, or None."""
    return linear_form(value, lambda v: {v: 1} if _loop_of(v) is not None else None)


def _bounds(expr: dict[SSAValue | None, int]) -> tuple[int, int]:
    low = high = expr.get(None, 0)
    for value, coefficient in expr.items():
        if value is None:
            continue
        loop = _loop_of(value)
        assert loop is not None
        first, last = loop.start.data, loop.start.data + max(0, loop.trip_count - 1) * loop.step.data
        low += min(coefficient * first, coefficient * last)
        high += max(coefficient * first, coefficient * last)
    return low, high


def in_bounds_affine(access: Access) -> bool:
    """Every index of the gep is affine in loop variables and stays within its view dimension."""
    for index, dim in zip(access.gep.indices, access.shape):
        expr = affine(index)
        if expr is None:
            return False
        low, high = _bounds(expr)
        if low < 0 or high >= dim:
            return False
    return True


def injective_over_loops(access: Access) -> bool:
    """Each element is addressed at most once over all iterations of the loops around the gep."""
    terms: dict[SSAValue, int] = {}
    for index, (dim, stride) in zip(access.gep.indices, zip(access.shape, access.strides)):
        expr = affine(index)
        assert expr is not None
        for value, coefficient in expr.items():
            if value is not None and dim != 1:
                terms[value] = terms.get(value, 0) + coefficient * stride
    reach = 0
    for value, stride in sorted(terms.items(), key=lambda t: abs(t[1])):
        loop = _loop_of(value)
        assert loop is not None
        step = abs(stride) * loop.step.data
        if stride == 0 or step <= reach:
            return False
        reach += step * max(0, loop.trip_count - 1)
    enclosing = [op for op in _ancestors(access.gep) if isinstance(op, RangeOp)]
    # a loop that does not move the index re-reads the same element on every trip
    return all(loop.induction_var in terms or loop.trip_count <= 1 for loop in enclosing)


def _ancestors(op: Operation) -> Iterator[Operation]:
    parent = op.parent_op()
    while parent is not None:
        yield parent
        parent = parent.parent_op()


# ---------------------------------------------------------------------------------------------
# Element-wise nests
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ElementwiseNest:
    """A perfect nest `0 to n step 1` whose innermost body stores once at the identity index."""

    root: RangeOp
    ivs: tuple[SSAValue, ...]
    body: Block
    store: StoreOp
    output: Access

    @staticmethod
    def match(op: Operation) -> ElementwiseNest | None:
        if not isinstance(op, RangeOp):
            return None
        ivs, extents, loop = [], [], op
        while True:
            if loop.start.data != 0 or loop.step.data != 1:
                return None
            ivs.append(loop.induction_var)
            extents.append(loop.end.data)
            inner = [o for o in loop.body.block.ops if not isinstance(o, EndRangeOp)]
            if len(inner) != 1 or not isinstance(inner[0], RangeOp):
                break
            loop = inner[0]
        body = loop.body.block
        stores = [o for o in body.ops if isinstance(o, StoreOp)]
        for o in body.ops:
            if o.regions or isinstance(o, _ACC_OPS):
                return None
            if not (o.has_trait(Pure) or isinstance(o, LoadOp | StoreOp)):
                return None
        if len(stores) != 1 or not isinstance(stores[0].ptr.owner, GepOp):
            return None
        nest = ElementwiseNest(op, tuple(ivs), body, stores[0], Access.of(stores[0].ptr.owner))
        if not nest.is_identity(nest.output) or not nest.output.injective():
            return None
        return nest

    def is_identity(self, access: Access) -> bool:
        """Loop k indexes dimension k of the view, over its whole extent."""
        return tuple(access.gep.indices) == self.ivs and access.shape == tuple(
            _loop_of(iv).end.data for iv in self.ivs  # type: ignore[union-attr]
        )


def _index_map(source: Access, target: Access, zero: SSAValue) -> dict[SSAValue, SSAValue]:
    """The identity-gep loop variables of `source` → the index values of `target`, matching
    non-unit dimensions in order (the keys are equal); extent-1 dimensions map to `zero`."""
    target_indices = [i for i, d in zip(target.gep.indices, target.shape) if d != 1]
    mapping, position = {}, 0
    for iv, dim in zip(source.gep.indices, source.shape):
        if dim == 1:
            mapping[iv] = zero
        else:
            mapping[iv] = target_indices[position]
            position += 1
    return mapping


# ---------------------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FuseLoopsPass(ModulePass):
    """Fuse producer→consumer loop nests of every function (see the module docstring)."""

    name = "fuse-loops"

    elementwise: bool = True
    epilogue: bool = True
    reduction: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.walk():
            if isinstance(function, func.FuncOp) and function.body.blocks:
                _Fuser(self, function).run()


class _Fuser:
    def __init__(self, options: FuseLoopsPass, function: func.FuncOp):
        self.options = options
        self.function = function
        self.block = function.body.block

    def run(self) -> None:
        # One sweep in program order: a consumer fused into its producer is erased, and the
        # producer (earlier) already saw its own producers; a reduction may take several producers.
        for op in list(self.block.ops):
            while isinstance(op, RangeOp) and op.parent is not None and self._fuse_at(op):
                pass

    def _fuse_at(self, consumer: RangeOp) -> bool:
        nest = ElementwiseNest.match(consumer)
        if nest is not None and (self.options.elementwise or self.options.epilogue):
            if any(self._into_producer(nest, b) for b in _loaded_buffers(nest.body)):
                return True
        if self.options.reduction and any(isinstance(o, DefineAccOp) for o in consumer.walk()):
            return any(self._into_consumer(consumer, b) for b in _loaded_buffers(consumer))
        return False

    # -- helpers over top-level ops ------------------------------------------------------------

    def _between(self, first: Operation, last: Operation) -> list[Operation]:
        """Top-level ops from `first` up to but excluding `last`."""
        ops, op = [], first
        while op is not None and op is not last:
            ops.append(op)
            op = op.next_op
        return ops

    def _tops(self, buffer: SSAValue, kinds: Sequence[str]) -> set[Operation]:
        """The top-level ops holding accesses of `buffer` of the given kinds."""
        return {_top(a.gep, self.function) for a in accesses(buffer) if a.kind() in kinds}

    def _writers(self, buffer: SSAValue) -> set[Operation]:
        return self._tops(buffer, ("store", "other"))

    def _producer(self, buffer: SSAValue) -> tuple[RangeOp, list[Access]] | None:
        """The one nest storing `buffer`, which does not read it, and its stores."""
        writers = self._writers(buffer)
        if len(writers) != 1:
            return None
        producer = writers.pop()
        own = [a for a in accesses(buffer) if producer.is_ancestor(a.gep)]
        if not isinstance(producer, RangeOp) or any(a.kind() != "store" for a in own):
            return None
        return producer, own

    def _removable(self, buffer: SSAValue, users: set[Operation]) -> bool:
        """`buffer` is scratch and nothing but `users` touches it."""
        return isinstance(buffer.owner, DefineLocalOp) and {
            _top(a.gep, self.function) for a in accesses(buffer)
        } <= users

    # -- consumer into producer (elementwise, epilogue) -----------------------------------------

    def _into_producer(self, nest: ElementwiseNest, buffer: SSAValue) -> bool:
        found = self._legal_into_producer(nest, buffer)
        if found is None or not self._hoist_operands(nest.body, found.producer):
            return False
        producer, loads = found.producer, found.loads
        read = [buffer, *found.siblings]
        remove = {b for b in read if self._removable(b, {producer, nest.root})}
        skip = {a.gep for a in loads} | {u.operation for a in loads for u in a.gep.result.uses}
        body = [o for o in nest.body.ops if not isinstance(o, EndRangeOp) and o not in skip]
        # the nest's loaded values of each read buffer, in `read` order
        loaded = [[u.operation.results[0] for a in loads if a.buffer is b for u in a.gep.result.uses] for b in read]
        for group in found.stores:
            store_ops = [_store_of(a) for a in group]
            last = max(store_ops, key=_position)
            zero = ConstOp(0, IndexType())  # the index of extent-1 dimensions, erased if unused
            zero.location = store_ops[0].location
            Rewriter.insert_op(zero, InsertPoint.before(store_ops[0]))
            mapping = _index_map(loads[0], group[0], zero.result)
            mapping |= {value: store_op.value for values, store_op in zip(loaded, store_ops) for value in values}
            Rewriter.insert_op([o.clone(value_mapper=mapping) for o in body], InsertPoint.after(last))
            for b, access, store_op in zip(read, group, store_ops):
                if b in remove:
                    Rewriter.erase_op(store_op)
                    Rewriter.erase_op(access.gep)
            if not zero.result.uses:
                Rewriter.erase_op(zero)
        producer.location = fuse_locations(producer.location, nest.root.location)
        Rewriter.erase_op(nest.root)
        self._erase_dead_views()
        for b in remove:
            Rewriter.erase_op(b.owner)  # type: ignore[arg-type]
        return True

    def _legal_into_producer(self, nest: ElementwiseNest, buffer: SSAValue) -> _ProducerFusion | None:
        """How to fuse `nest` into the producer of `buffer`, if rules 1-3 hold."""
        output = nest.output.buffer
        found = self._producer(buffer)
        if found is None or output is buffer or not found[0].is_before_in_block(nest.root):
            return None
        producer, stores = found
        accumulates = any(isinstance(o, DefineAccOp) for o in producer.walk())
        if not (self.options.epilogue if accumulates else self.options.elementwise):
            return None
        loads = [a for a in accesses(buffer) if nest.root.is_ancestor(a.gep)]
        key = loads[0].key()
        if any(a.kind() != "load" or not nest.is_identity(a) or a.key() != key for a in loads):
            return None
        if not loads[0].injective() or any(a.key() != key or not in_bounds_affine(a) for a in stores):
            return None
        span = set(self._between(producer, nest.root))
        if any(isinstance(op, CheckOp) for op in span):  # C must not run when the check fails
            return None
        if self._tops(output, ("load", "store", "other")) & span:
            return None
        if any(Access.of(g).buffer is output for g in _geps(nest.body) if g is not nest.output.gep):
            return None
        loaded = [b for b in _loaded_buffers(nest.body) if b is not buffer]
        if any(self._writers(b) & (span - {producer}) for b in loaded):
            return None
        siblings = [b for b in loaded if producer in self._writers(b)]
        groups = [[store] for store in stores]
        for sibling in siblings:
            sibling_loads = self._pair_sibling(nest, producer, sibling, groups, key)
            if sibling_loads is None:
                return None
            loads += sibling_loads
        return _ProducerFusion(producer, groups, loads, siblings)

    def _pair_sibling(
        self, nest: ElementwiseNest, producer: RangeOp, sibling: SSAValue, groups: list[list[Access]], key
    ) -> list[Access] | None:
        """Append to each group (a store of the fused buffer, and the stores of the siblings
        paired so far) the producer's store of `sibling` (another buffer the nest reads, which
        the producer writes) at the same element; the nest's loads of `sibling`, or None if it
        is not stored element by element beside the fused buffer: `x · sigmoid(x)` after a Conv
        whose epilogue stores both x and sigmoid(x) reads both at the element just stored."""
        own, loads = [], []
        for a in accesses(sibling):
            if producer.is_ancestor(a.gep):
                own.append(a)
            elif nest.root.is_ancestor(a.gep):
                loads.append(a)
        if any(a.kind() != "store" or a.key() != key for a in own):
            return None
        if any(a.kind() != "load" or not nest.is_identity(a) or a.key() != key for a in loads):
            return None
        for group in groups:
            store = group[0]
            match = [a for a in own if a.gep.parent is store.gep.parent and _same_element(a, store)]
            if len(match) != 1:
                return None
            group.append(match[0])
        # each of the sibling's stores pairs with exactly one store of B
        if len(own) != len(groups) or len({id(group[-1]) for group in groups}) != len(groups):
            return None
        return loads

    def _hoist_operands(self, body: Block, anchor: Operation) -> bool:
        """Move the top-level definitions `body` uses (buffers, views, constants) ahead of
        `anchor`; False, moving nothing, if it uses a value computed after `anchor` otherwise."""
        moves: list[Operation] = []
        if not all(self._hoistable(v, anchor, moves) for op in body.ops for v in op.operands):
            return False
        for op in moves:
            op.detach()
            self.block.insert_op_before(op, anchor)
        return True

    def _hoistable(self, value: SSAValue, anchor: Operation, moves: list[Operation]) -> bool:
        """Collect in `moves` (operands first) what must move for `value` to dominate `anchor`."""
        owner = value.owner
        if not isinstance(owner, Operation) or owner.parent_op() is not self.function:
            return True
        if owner in moves or owner.is_before_in_block(anchor):
            return True
        if not isinstance(owner, _HOISTABLE):
            return False
        if not all(self._hoistable(v, anchor, moves) for v in owner.operands):
            return False
        moves.append(owner)
        return True

    def _erase_dead_views(self) -> None:
        for op in list(self.block.ops):
            if isinstance(op, ViewOp) and not op.result.uses:
                Rewriter.erase_op(op)

    # -- producer into consumer (reduction) ----------------------------------------------------

    def _into_consumer(self, consumer: RangeOp, buffer: SSAValue) -> bool:
        found = self._producer(buffer)
        if found is None:
            return False
        producer_op = found[0]
        producer = ElementwiseNest.match(producer_op)
        if producer is None or producer.output.buffer is not buffer:
            return False
        if not producer_op.is_before_in_block(consumer):
            return False
        if not self._removable(buffer, {producer_op, consumer}):
            return False
        loads = [a for a in accesses(buffer) if consumer.is_ancestor(a.gep)]
        if len(loads) != 1 or loads[0].kind() != "load" or loads[0].key() != producer.output.key():
            return False
        load = loads[0]
        if not producer.output.injective() or not in_bounds_affine(load) or not injective_over_loops(load):
            return False
        span = set(self._between(producer_op, consumer)) | {consumer}
        span.discard(producer_op)
        if any(self._writers(b) & span for b in _loaded_buffers(producer.body)):
            return False
        # the recomputed value goes right after the gep, which dominates every load through it
        zero = ConstOp(0, IndexType())
        zero.location = load.gep.location
        mapping = _index_map(producer.output, load, zero.result)
        skip = {producer.store, producer.output.gep}
        body = [o for o in producer.body.ops if not isinstance(o, EndRangeOp) and o not in skip]
        Rewriter.insert_op([zero, *(o.clone(value_mapper=mapping) for o in body)], InsertPoint.after(load.gep))
        value = mapping.get(producer.store.value, producer.store.value)
        for use in list(load.gep.result.uses):
            Rewriter.replace_op(use.operation, [], [value])
        Rewriter.erase_op(load.gep)
        if not zero.result.uses:
            Rewriter.erase_op(zero)
        consumer.location = fuse_locations(producer_op.location, consumer.location)
        Rewriter.erase_op(producer_op)
        self._erase_dead_views()
        Rewriter.erase_op(buffer.owner)  # type: ignore[arg-type]
        return True


@dataclass(frozen=True)
class _ProducerFusion:
    """A consumer nest's fusion into its producer: per store of the fused buffer, that store and
    the producer's stores of each sibling buffer at the same element (in `siblings` order);
    the consumer's loads of the fused buffer (first), then of the siblings."""

    producer: RangeOp
    stores: list[list[Access]]
    loads: list[Access]
    siblings: list[SSAValue]


def _same_element(a: Access, b: Access) -> bool:
    """Two accesses with equal keys index the same element: the same index values in every
    dimension of extent above 1 (extent-1 dimensions are always 0)."""
    return [i for i, d in zip(a.gep.indices, a.shape) if d != 1] == [i for i, d in zip(b.gep.indices, b.shape) if d != 1]


def _position(op: Operation) -> int:
    """The index of `op` in its block."""
    block = op.parent
    assert block is not None
    return block.get_operation_index(op)


def _geps(region_holder: Operation | Block) -> list[GepOp]:
    return ops_of(region_holder, GepOp)


def _store_of(access: Access) -> StoreOp:
    return next(u.operation for u in access.gep.result.uses)  # type: ignore[return-value]


def _loaded_buffers(region_holder: Operation | Block) -> list[SSAValue]:
    """The buffers loaded in `region_holder`, in first-use order."""
    seen: dict[SSAValue, None] = {}
    for gep in _geps(region_holder):
        access = Access.of(gep)
        if access.kind() == "load":
            seen.setdefault(access.buffer, None)
    return list(seen)
