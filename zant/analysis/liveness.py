"""Liveness of scratch buffers over the final schedule of a uop function.

The one implementation used by `plan-arenas`, `verify-arena-plan`, the lower bound of the plan
report and `zant plan`.

* The schedule is the pre-order walk of the function body: every op gets a position.
* A buffer is live from its first use to its last use, looking through `uop.view` (an alias that
  emits no code). A use inside a loop that does not contain the buffer's definition counts for the
  whole outermost such loop: the loop body runs again after the use, so the buffer must survive to
  the end of the loop and be there from its first iteration. This rule is what makes reuse safe.
* A buffer nobody touches is live at its definition only (it still needs a slot).
* `in_place_legal(a, b)` decides from the IR (geps, views, strides, loop ranges, the lanes of
  vector loads and stores) whether `b` may be written over `a` at the loop nest where `a` dies
  and `b` is born: every element of `a` is read only just before the one store that writes the
  same element of `b` (its docstring). In a nest `schedule-in-place` marked (`in_place = [a,
  b]`), `staged_in_place_legal` decides instead: every access of the nest enumerated, each
  element of `b` first written no earlier than the last read of the same element of `a`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerType, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import MemoryEffectKind
from zant.dialects.uop import (
    ALU_OPS,
    Accesses,
    BufferType,
    ConstOp,
    DefineLocalOp,
    GepOp,
    LoadOp,
    RangeOp,
    StoreOp,
    ViewOp,
    ViewType,
    VLoadOp,
    VStoreOp,
    lanes,
)


def align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


@dataclass
class Schedule:
    """Positions of the ops of one function in program (pre-order) order."""

    position: dict[Operation, int] = field(default_factory=dict)
    last: dict[Operation, int] = field(default_factory=dict)
    """For each op, the last position nested inside it (itself if it has no regions)."""
    step: list[int] = field(default_factory=list)
    """For each position, the index of the top-level op of the function body holding it."""
    ops: list[Operation] = field(default_factory=list)
    """The op at each position."""
    flat_indices: dict[GepOp, Affine | None] = field(default_factory=dict)
    """`flat_index` of the geps `in_place_legal` has looked at, each computed once (the IR does
    not change while a schedule of it is in use)."""

    @staticmethod
    def of(function: func.FuncOp) -> Schedule:
        schedule = Schedule()

        def visit(op: Operation, top: int) -> None:
            schedule.position[op] = len(schedule.step)
            schedule.step.append(top)
            schedule.ops.append(op)
            for region in op.regions:
                for block in region.blocks:
                    for child in block.ops:
                        visit(child, top)
            schedule.last[op] = len(schedule.step) - 1

        for top, op in enumerate(function.body.block.ops):
            visit(op, top)
        return schedule

    @property
    def step_count(self) -> int:
        return (self.step[-1] + 1) if self.step else 0


@dataclass(frozen=True)
class Lifetime:
    """One scratch buffer: its byte size and live span [first, last] in schedule positions."""

    buffer: DefineLocalOp
    name: str
    size: int
    first: int
    last: int

    def overlaps(self, other: Lifetime) -> bool:
        return self.first <= other.last and other.first <= self.last


def buffer_users(value: SSAValue) -> list[Operation]:
    """Ops that touch a buffer, looking through views (which emit no code)."""
    result = []
    for use in value.uses:
        if isinstance(use.operation, ViewOp):
            result.extend(buffer_users(use.operation.result))
        else:
            result.append(use.operation)
    return result


def use_interval(use: Operation, definition: Operation, schedule: Schedule) -> tuple[int, int]:
    start = end = schedule.position[use]
    parent = use.parent_op()
    while isinstance(parent, RangeOp) and not parent.is_ancestor(definition):
        start, end = schedule.position[parent], schedule.last[parent]
        parent = parent.parent_op()
    return start, end


def scratch_lifetimes(function: func.FuncOp, schedule: Schedule | None = None) -> list[Lifetime]:
    """Every `uop.define_local` of `function` with its live span, in program order."""
    schedule = schedule or Schedule.of(function)
    lifetimes = []
    for op in schedule.ops:  # the function's ops in walk order
        if not isinstance(op, DefineLocalOp):
            continue
        buffer_type = op.result.type
        assert isinstance(buffer_type, BufferType)
        # A user outside the function (a detached copy of a nest a pass keeps to restore) is
        # not part of the program.
        spans = [use_interval(user, op, schedule) for user in buffer_users(op.result) if user in schedule.position]
        if not spans:
            spans = [(schedule.position[op], schedule.position[op])]
        lifetimes.append(
            Lifetime(
                op,
                op.tensor_name.data,
                buffer_type.byte_size,
                min(s for s, _ in spans),
                max(e for _, e in spans),
            )
        )
    return lifetimes


def peak_bytes(spans: Iterable[tuple[int, int, int]]) -> int:
    """Max over time of the sum of `size` over the (first, last, size) spans live at once."""
    events = []
    for first, last, size in spans:
        events.append((first, size))
        events.append((last + 1, -size))
    live = peak = 0
    for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
        live += delta
        peak = max(peak, live)
    return peak


# ---------------------------------------------------------------------------------------------
# In-place legality
# ---------------------------------------------------------------------------------------------


def gep_accesses(value: SSAValue) -> list[tuple[GepOp, ViewType | None]]:
    """Every gep into a buffer, with the view it goes through (None for a direct gep). Views are
    only ever taken of buffers (the verifier's rule), so one view at most lies on the way."""
    result = []
    for use in value.uses:
        user = use.operation
        if isinstance(user, ViewOp):
            result += [(gep, user.result.type) for gep, _ in gep_accesses(user.result)]  # type: ignore[misc]
        elif isinstance(user, GepOp):
            result.append((user, None))
    return result


@dataclass(frozen=True)
class Affine:
    """`offset + Σ coefficient·induction variable`, zero coefficients dropped."""

    offset: int
    terms: frozenset[tuple[SSAValue, int]] = frozenset()

    def scaled(self, factor: int) -> Affine:
        return Affine(self.offset * factor, frozenset((v, c * factor) for v, c in self.terms if c * factor))

    def __add__(self, other: Affine) -> Affine:
        merged = dict(self.terms)
        for value, coefficient in other.terms:
            merged[value] = merged.get(value, 0) + coefficient
        return Affine(self.offset + other.offset, frozenset((v, c) for v, c in merged.items() if c))


def _product(lhs: Affine, rhs: Affine) -> Affine | None:
    if not rhs.terms:
        return lhs.scaled(rhs.offset)
    return rhs.scaled(lhs.offset) if not lhs.terms else None


_INDEX_ALU = {
    ALU_OPS["add"]: lambda a, b: a + b,
    ALU_OPS["sub"]: lambda a, b: a + b.scaled(-1),
    ALU_OPS["mul"]: _product,
}


def affine_index(value: SSAValue) -> Affine | None:
    """`value` as an affine function of loop induction variables (a single-trip loop's variable is
    its start), or None if it is not one (clamps, loaded indices, products of two variables)."""
    owner = value.owner
    if isinstance(owner, Block):
        loop = owner.parent_op()
        if not isinstance(loop, RangeOp):
            return None
        return Affine(loop.start.data) if loop.trip_count == 1 else Affine(0, frozenset({(value, 1)}))
    if isinstance(owner, ConstOp):
        constant = owner.value.value.data  # type: ignore[attr-defined]
        return Affine(constant) if isinstance(constant, int) else None
    combine = _INDEX_ALU.get(type(owner))
    if combine is None:
        return None
    lhs, rhs = (affine_index(operand) for operand in owner.operands)
    return combine(lhs, rhs) if lhs is not None and rhs is not None else None


def flat_index(gep: GepOp, view: ViewType | None) -> Affine | None:
    """The buffer element a gep addresses, `view offset + Σ stride·index`, as an affine function of
    the loop variables; None if an index is not affine."""
    strides: Sequence[int] = view.get_strides() if view is not None else (1,)
    result = Affine(view.offset.data if view is not None else 0)
    for index, stride in zip(gep.indices, strides, strict=True):
        term = affine_index(index)
        if term is None:
            return None
        result = result + term.scaled(stride)
    return result


_LOADS = (LoadOp, VLoadOp)
_STORES = (StoreOp, VStoreOp)


def _word_read(op: Operation) -> bool:
    """Whether `op` reads only through its `ptr` operand, one integer result as wide as a run of
    the pointer's elements (a target's word load, `arm_dsp.load_word`: 4 int8 as one i32)."""
    trait = op.get_trait(Accesses)
    ptr = getattr(op, "ptr", None)
    if trait is None or trait.kind != MemoryEffectKind.READ or trait.value != "ptr" or not isinstance(ptr, SSAValue):
        return False
    element = getattr(ptr.type, "element_type", None)
    return (
        len(op.results) == 1 and isinstance(op.results[0].type, IntegerType) and isinstance(element, IntegerType)
        and op.results[0].type.width.data % element.width.data == 0
    )


def _lane_pattern(access: Operation) -> tuple[int, int]:
    """(lane count, element stride) of a load or store: (1, 1) for a scalar one, (8, S) for a
    `vector<8xT>` access of the elements p, p + S … p + 7·S, (4, 1) for a word read of 4 int8
    (`_word_read`)."""
    if isinstance(access, VLoadOp):
        return lanes(access.result.type), access.element_stride
    if isinstance(access, VStoreOp):
        return lanes(access.value.type), access.element_stride
    if not isinstance(access, LoadOp) and _word_read(access):
        element = access.ptr.type.element_type  # type: ignore[attr-defined]
        return access.results[0].type.width.data // element.width.data, 1  # type: ignore[attr-defined]
    return 1, 1


def _users_in(gep: GepOp, nest: RangeOp, kinds: tuple[type[Operation], ...]) -> list[Operation] | None:
    """The gep's users inside `nest` if all are loads (or all stores through it as the address),
    scalar or vector, else None. The gep itself may sit outside the nest (it is pure and may be
    hoisted)."""
    users = [use.operation for use in gep.result.uses if nest.is_ancestor(use.operation)]
    if kinds is _STORES:
        ok = all(isinstance(u, kinds) and u.ptr is gep.result and u.value is not gep.result for u in users)
    else:
        ok = all(isinstance(u, kinds) or _word_read(u) for u in users)
    return users if ok else None


def _elements_written(store: Operation, index: Affine, nest: RangeOp) -> np.ndarray:
    """Every element index `store` writes over all iterations of the loops around it up to `nest`
    (each lane of a vector store; repeats included: a loop its index does not depend on, or a
    vector tail overlapping the lanes before it, writes the same elements again)."""
    coefficients = dict(index.terms)
    count, stride = _lane_pattern(store)
    elements = index.offset + stride * np.arange(count, dtype=np.int64)
    loop = store.parent_op()
    while True:
        assert isinstance(loop, RangeOp)
        values = np.arange(loop.start.data, loop.end.data, loop.step.data, dtype=np.int64)
        moves = values * coefficients.get(loop.induction_var, 0)
        elements = (elements[:, None] + moves[None, :]).reshape(-1)
        if loop is nest:
            return elements
        loop = loop.parent_op()


def _flat_index(gep: GepOp, view: ViewType | None, schedule: Schedule) -> Affine | None:
    if gep not in schedule.flat_indices:
        schedule.flat_indices[gep] = flat_index(gep, view)
    return schedule.flat_indices[gep]


def in_place_legal(dying: Lifetime, born: Lifetime, schedule: Schedule) -> Operation | None:
    """The loop nest at which `born` may be written over `dying`, or None if that is not legal.

    The rule: both buffers have the same type (so element i of each is the same bytes), `dying`
    ends and `born` starts in the same top-level loop nest, and inside that nest

    1. `dying` is only loaded and `born` only stored (through geps, directly or via views;
       `uop.vload` / `uop.vstore` included);
    2. every index is an affine function of the loop variables, composed through the view's
       strides and offset, and the stores of `born`, over all their iterations and lanes
       together, write each element at most once (checked by enumerating the elements they
       write; more writes than `born` has elements can't be distinct and are refused);
    3. every load of `dying` is followed, in its own block, by a store of `born` at the identical
       affine index with the same lanes: both scalar, or vectors of as many lanes at the same
       element stride, so the store writes exactly the elements the load read.

    Then the element `dying[i]` read by a load is written (as `born[i]`) only by the store that
    follows it in the same iteration (2 makes that store the only write of element i), so every
    read of an element of `dying` happens before its bytes are overwritten, and nothing else in
    the nest touches those bytes. A blocked Conv nest with an epilogue reading its shortcut at the
    output index (many stores, one per output-channel block and border region) qualifies; a
    transposed, shifted or clamped read, or a store ahead of its matching load, does not. Nor
    does the `vectorize` pass's overlapping tail (the last lanes run again): it re-reads elements
    of `dying` already overwritten, and writes them twice, which 2 refuses; a tail that is its own
    top-level loop is refused anyway, `dying` ending in another nest than the one `born` starts in.
    """
    a_type, b_type = dying.buffer.result.type, born.buffer.result.type
    assert isinstance(a_type, BufferType) and isinstance(b_type, BufferType)
    if dying.buffer is born.buffer or dying.first >= born.first:
        return None
    nest = schedule.ops[born.first]
    if not isinstance(nest, RangeOp) or dying.last != schedule.last[nest]:
        return None
    if not isinstance(nest.parent_op(), func.FuncOp):
        return None
    if scheduled_in_place(nest) == (dying.name, born.name):
        return nest if staged_in_place_legal(dying, born, nest, schedule) else None
    if a_type != b_type:
        return None
    inside = [u for life in (dying, born) for u in buffer_users(life.buffer.result) if nest.is_ancestor(u)]
    if not all(isinstance(u, GepOp) for u in inside):
        return None
    stores: list[tuple[Operation, Affine]] = []
    for gep, view in gep_accesses(born.buffer.result):
        users = _users_in(gep, nest, _STORES)
        index = _flat_index(gep, view, schedule)
        if users is None or (users and index is None):
            return None
        stores += [(store, index) for store in users]  # type: ignore[misc]
    if not stores:
        return None
    for gep, view in gep_accesses(dying.buffer.result):
        loads = _users_in(gep, nest, _LOADS)
        index = _flat_index(gep, view, schedule)
        if loads is None or (loads and index is None):
            return None
        for load in loads:
            block = load.parent_block()
            assert block is not None
            # In one block, program (pre-order) positions order the ops as the block does.
            position = schedule.position[load]
            if not any(
                store.parent_block() is block and schedule.position[store] > position
                and store_index == index and _lane_pattern(store) == _lane_pattern(load)
                for store, store_index in stores
            ):
                return None
    count = b_type.size.data
    written: list[np.ndarray] = []
    for store, index in stores:
        written.append(_elements_written(store, index, nest))
        if sum(len(w) for w in written) > count:
            return None
    elements = np.concatenate(written)
    if elements.min() < 0 or elements.max() >= count or len(np.unique(elements)) != len(elements):
        return None
    return nest


# ---------------------------------------------------------------------------------------------
# In-place by schedule: `schedule-in-place` (a line buffer or a plane buffer staged per group)
# ---------------------------------------------------------------------------------------------

IN_PLACE_ATTRIBUTE = "in_place"
"""The attribute `schedule-in-place` sets on a top-level nest: `[dying, born]`, the tensor names
of the buffer written over and of the one written over it."""

STAGED_POINT_LIMIT = 4_000_000
"""Most iteration points the staged rule enumerates for one access (else: not legal)."""


def in_place_mark(dying: str, born: str) -> ArrayAttr:
    """The `IN_PLACE_ATTRIBUTE` value naming the tensor written over (`dying`) and the one
    written over it (`born`)."""
    return ArrayAttr([StringAttr(dying), StringAttr(born)])


def scheduled_in_place(nest: Operation) -> tuple[str, str] | None:
    """The (dying, born) tensor names `schedule-in-place` marked `nest` with, or None."""
    attr = nest.attributes.get(IN_PLACE_ATTRIBUTE)
    if not isinstance(attr, ArrayAttr) or len(attr.data) != 2:
        return None
    names = [a.data for a in attr.data if isinstance(a, StringAttr)]
    return (names[0], names[1]) if len(names) == 2 else None


def loops_around(op: Operation, nest: RangeOp) -> list[RangeOp] | None:
    """The loops from `nest` down to the innermost one holding `op` (outermost first); None if
    `op` is not inside `nest`."""
    chain: list[RangeOp] = []
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, RangeOp):
            chain.append(parent)
            if parent is nest:
                return chain[::-1]
        parent = parent.parent_op()
    return None


def _truncating_divide(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    quotient = np.abs(lhs) // np.abs(rhs)
    return np.sign(lhs) * np.sign(rhs) * quotient


_INDEX_NUMPY = {
    ALU_OPS["div"]: _truncating_divide,
    ALU_OPS["add"]: np.add,
    ALU_OPS["sub"]: np.subtract,
    ALU_OPS["mul"]: np.multiply,
    ALU_OPS["min"]: np.minimum,
    ALU_OPS["max"]: np.maximum,
}


def index_values(value: SSAValue, loops: Sequence[RangeOp]) -> np.ndarray | None:
    """`value` at every iteration of `loops` (axis k: loop k's values), broadcastable to their
    grid; None unless it is built from constants, their induction variables (or those of
    single-trip loops: their start), add, sub, mul, div, min and max."""
    owner = value.owner
    if isinstance(owner, Block):
        loop = owner.parent_op()
        if isinstance(loop, RangeOp) and loop not in loops and loop.trip_count == 1:
            return np.array(loop.start.data, dtype=np.int64).reshape([1] * len(loops))
        if loop not in loops:
            return None
        axis = list(loops).index(loop)
        shape = [1] * len(loops)
        shape[axis] = loop.trip_count
        return np.arange(loop.start.data, loop.end.data, loop.step.data, dtype=np.int64).reshape(shape)
    if isinstance(owner, ConstOp):
        constant = owner.value.value.data  # type: ignore[attr-defined]
        return np.array(constant, dtype=np.int64).reshape([1] * len(loops)) if isinstance(constant, int) else None
    combine = _INDEX_NUMPY.get(type(owner))
    if combine is None:
        return None
    lhs, rhs = (index_values(operand, loops) for operand in owner.operands)
    if lhs is None or rhs is None or (combine is _truncating_divide and (rhs == 0).any()):
        return None
    return combine(lhs, rhs)


def touched_elements(
    access: Operation, gep: GepOp, view: ViewType | None, nest: RangeOp, group: RangeOp
) -> tuple[np.ndarray, np.ndarray] | None:
    """(group iteration, element) of every element `access` (through `gep`) touches: the group
    iteration numbers the iterations of the loops from `nest` down to `group` in program order."""
    loops = loops_around(access, nest)
    if loops is None or group not in loops:
        return None
    if np.prod([loop.trip_count for loop in loops], dtype=np.float64) > STAGED_POINT_LIMIT:
        return None
    strides: Sequence[int] = view.get_strides() if view is not None else (1,)
    grid = tuple(loop.trip_count for loop in loops)
    element = np.full(grid, view.offset.data if view is not None else 0, dtype=np.int64)
    for index, stride in zip(gep.indices, strides, strict=True):
        values = index_values(index, loops)
        if values is None:
            return None
        element = element + stride * values
    depth = loops.index(group) + 1
    order = np.zeros(grid, dtype=np.int64)
    for axis, loop in enumerate(loops[:depth]):
        shape = [1] * len(loops)
        shape[axis] = loop.trip_count
        order = order * loop.trip_count + np.arange(loop.trip_count, dtype=np.int64).reshape(shape)
    count, stride = _lane_pattern(access)
    lanes_ = stride * np.arange(count, dtype=np.int64)
    element = (element.reshape(-1)[:, None] + lanes_[None, :]).reshape(-1)
    order = np.broadcast_to(order, grid).reshape(-1).repeat(count)
    return order, element


def program_order_elements(
    access: Operation, gep: GepOp, view: ViewType | None, nest: RangeOp
) -> tuple[np.ndarray, np.ndarray] | None:
    """(when, element) of every element `access` (through `gep`) touches in `nest`: `when` a row
    of (iteration, op) pairs, one per loop from `nest` down to the access (the loop's iteration
    number, then the index in its body of the op holding the access), so two rows compare
    lexicographically (over the columns both have) as the program runs them."""
    loops = loops_around(access, nest)
    if loops is None:
        return None
    touched = touched_elements(access, gep, view, nest, loops[-1])
    if touched is None:
        return None
    grid = tuple(loop.trip_count for loop in loops)
    count = _lane_pattern(access)[0]
    columns = []
    for axis, loop in enumerate(loops):
        shape = [1] * len(loops)
        shape[axis] = loop.trip_count
        iteration = np.broadcast_to(np.arange(loop.trip_count, dtype=np.int64).reshape(shape), grid)
        child = access
        while child.parent_op() is not loop:
            child = child.parent_op()  # type: ignore[assignment]
        body = loop.body.block
        columns += [iteration.reshape(-1).repeat(count), np.full(iteration.size * count, body.get_operation_index(child), dtype=np.int64)]
    return np.stack(columns, axis=1), touched[1]


def _program_ranks(rows: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Each array of `program_order_elements` rows as one integer per row, ordered as the rows
    (lexicographically, the shorter rows padded with 0: two rows of different accesses differ
    at the op column where their paths part, before any padding)."""
    width = max(r.shape[1] for r in rows)
    padded = [np.pad(r, ((0, 0), (0, width - r.shape[1]))) for r in rows]
    stacked = np.concatenate(padded)
    radices = stacked.max(axis=0) + 1 if len(stacked) else np.ones(width, dtype=np.int64)
    if float(np.prod(radices.astype(np.float64))) < 2.0**62:
        key = np.zeros(len(stacked), dtype=np.int64)
        for column, radix in zip(stacked.T, radices):
            key = key * int(radix) + column
    else:
        key = np.unique(stacked, axis=0, return_inverse=True)[1].reshape(-1)
    bounds = np.cumsum([0, *(len(r) for r in rows)])
    return [key[a:b] for a, b in zip(bounds, bounds[1:])]


def staged_in_place_legal(dying: Lifetime, born: Lifetime, nest: RangeOp, schedule: Schedule) -> bool:
    """Whether `born` may be written over `dying` in `nest` under a staged schedule (a line or
    plane buffer copied per group, a kernel's block of X copied before its outputs are written):
    the rule `verify-arena-plan` checks for a nest marked `in_place`.

    Both buffers hold the same element type (element i of each is the same bytes). Inside the
    nest `dying` is only read (scalar, vector or word loads) and `born` only stored. Enumerating
    every iteration of the loops around each access (indices built from constants, induction
    variables, add, sub, mul, min and max; vector and word lanes included) with its place in the
    program's order (`program_order_elements`), each element of `born` is first written after
    the last read of the same element of `dying`. Then no element of `dying` is overwritten
    before its last read. (In program order rather than by the iterations of one group loop: the
    widened pointwise form's last block, peeled after the loop of the others, is read and
    written outside that loop.)"""
    a_type, b_type = dying.buffer.result.type, born.buffer.result.type
    assert isinstance(a_type, BufferType) and isinstance(b_type, BufferType)
    if a_type.element_type != b_type.element_type:
        return False
    loads: list[tuple[Operation, GepOp, ViewType | None]] = []
    stores: list[tuple[Operation, GepOp, ViewType | None]] = []
    for life, kinds, found in ((dying, _LOADS, loads), (born, _STORES, stores)):
        for user in buffer_users(life.buffer.result):
            if nest.is_ancestor(user) and not isinstance(user, GepOp):
                return False
        for gep, view in gep_accesses(life.buffer.result):
            users = _users_in(gep, nest, kinds)
            if users is None:
                return False
            found += [(user, gep, view) for user in users]
    if not loads or not stores:
        return False
    parts = {}
    for name, accesses in (("read", loads), ("written", stores)):
        found = [program_order_elements(op, gep, view, nest) for op, gep, view in accesses]
        if any(part is None for part in found):
            return False
        parts[name] = found
    ranks = _program_ranks([p[0] for p in parts["read"] + parts["written"]])  # type: ignore[index]
    reads = len(parts["read"])
    read_at, write_at = np.concatenate(ranks[:reads]), np.concatenate(ranks[reads:])
    read = np.concatenate([p[1] for p in parts["read"]])  # type: ignore[index]
    written = np.concatenate([p[1] for p in parts["written"]])  # type: ignore[index]
    count = b_type.size.data
    if written.min() < 0 or written.max() >= count or read.min() < 0 or read.max() >= a_type.size.data:
        return False
    first_write = np.full(count, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first_write, written, write_at)
    shared = read < count
    if not shared.any():
        return True
    last_read = np.full(count, -1, dtype=np.int64)
    np.maximum.at(last_read, read[shared], read_at[shared])
    return not (first_write <= last_read).any()


LegalityMemo = dict[Operation, dict[tuple[DefineLocalOp, DefineLocalOp], bool]]
"""`in_place_legal`'s answers by the nest `born` starts in, then (dying, born): a pass that
asks for the plan's bound many times while it rewrites a few nests (`schedule-in-place`) keeps
one and drops a nest's entries when it changes that nest (the answer reads only the accesses in
that nest and which nest each buffer starts and ends in)."""


def in_place_pairs(
    lifetimes: Sequence[Lifetime], schedule: Schedule, memo: LegalityMemo | None = None,
) -> dict[DefineLocalOp, DefineLocalOp]:
    """born → dying for every buffer written in place over an input that dies there (the first
    legal input in program order; each dying buffer is reused once); `memo`: answers kept from
    an earlier call on the same nests (`LegalityMemo`)."""
    pairs: dict[DefineLocalOp, DefineLocalOp] = {}
    taken: set[DefineLocalOp] = set()

    def legal(dying: Lifetime, born: Lifetime) -> bool:
        if memo is None:
            return in_place_legal(dying, born, schedule) is not None
        known = memo.setdefault(schedule.ops[born.first], {})
        key = (dying.buffer, born.buffer)
        if key not in known:
            known[key] = in_place_legal(dying, born, schedule) is not None
        return known[key]

    for born in lifetimes:
        for dying in lifetimes:
            if dying.buffer in taken or not dying.first < born.first <= dying.last:
                continue
            if legal(dying, born):
                pairs[born.buffer] = dying.buffer
                taken.add(dying.buffer)
                break
    return pairs
