"""`split-index-sets`: a loop whose bounds checks alone keep it from being vectorized is split
around the iterations where every check is decided.

`-p 'split-index-sets{width=8 min-width=4 only-innermost=false}'` (the `vectorize` options it
runs before: it splits exactly the loops `vectorize` would pick if their checks were gone)

A loop `vectorize` would refuse because of bounds checks on its index (the compares and max/min
clamps of a padded Conv or pool border row) is split into before / middle / after, the middle
being the longest run of iterations in which every such check has one outcome (found by interval
arithmetic over the loop nest). In the middle the compares become constants and the clamps
disappear, so its loads are unit-stride again and `vectorize` takes it; the short ends stay
scalar, checked as before. A loop is split only where `vectorize` would then take the middle:
the innermost suitable loop of its nest, legal once its checks are decided, at least
`min_width` iterations long (`zant.analysis.vectorization.select_loops`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, IntAttr, ModuleOp, i1
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.analysis.vectorization import LoopAnalysis, Refused, VectorPolicy, nested_ops, select_loops, vector_width
from zant.dialects import uop


Interval = tuple[int, int]
CHECKS = ("cmple", "cmplt", "max", "min")


class Intervals:
    """Bounds of index values inside a loop nest, with some induction variables pinned."""

    def __init__(self, pinned: dict[SSAValue, Interval]):
        self.pinned = pinned
        self.memo: dict[SSAValue, Interval | None] = {}

    def of(self, value: SSAValue) -> Interval | None:
        if value not in self.memo:
            self.memo[value] = self._compute(value)
        return self.memo[value]

    def _compute(self, value: SSAValue) -> Interval | None:
        if value in self.pinned:
            return self.pinned[value]
        owner = value.owner
        if isinstance(owner, Block):
            loop = owner.parent_op()
            if isinstance(loop, uop.RangeOp) and loop.trip_count:
                last = loop.start.data + (loop.trip_count - 1) * loop.step.data
                return loop.start.data, last
            return None
        if isinstance(owner, uop.ConstOp) and isinstance(value.type, IndexType):
            return owner.value.value.data, owner.value.value.data  # type: ignore[attr-defined]
        short = owner.name.removeprefix("uop.")
        if short not in ("add", "sub", "mul", "max", "min") or not isinstance(value.type, IndexType):
            return None
        a, b = (self.of(v) for v in owner.operands)
        if a is None or b is None:
            return None
        if short == "add":
            return a[0] + b[0], a[1] + b[1]
        if short == "sub":
            return a[0] - b[1], a[1] - b[0]
        if short == "mul":
            products = [x * y for x in a for y in b]
            return min(products), max(products)
        pick = max if short == "max" else min
        return pick(a[0], b[0]), pick(a[1], b[1])

    def decide(self, op: Operation) -> int | None:
        """A compare's constant outcome (1/0), or which operand (0/1) a max/min always picks;
        None if it depends on the pinned values."""
        a, b = (self.of(v) for v in op.operands)
        if a is None or b is None:
            return None
        short = op.name.removeprefix("uop.")
        if short in ("cmple", "cmplt"):
            strict = short == "cmplt"
            if a[1] < b[0] or (not strict and a[1] <= b[0]):
                return 1
            if a[0] > b[1] or (strict and a[0] >= b[1]):
                return 0
            return None
        larger_first = b[1] <= a[0]
        smaller_first = a[1] <= b[0]
        if short == "max":
            return 0 if larger_first else 1 if smaller_first else None
        return 0 if smaller_first else 1 if larger_first else None


def index_checks(loop: uop.RangeOp) -> list[Operation]:
    """The compares and clamps of index values in the loop (the bounds checks to decide)."""
    return [
        op
        for op in nested_ops(loop.body.block)
        if op.name.removeprefix("uop.") in CHECKS and isinstance(op.operands[0].type, IndexType)
    ]


def depends_on(loop: uop.RangeOp) -> set[SSAValue]:
    """The values inside the loop computed from its induction variable."""
    dependent = {loop.induction_var}
    for op in nested_ops(loop.body.block):
        if any(v in dependent for v in op.operands):
            dependent.update(op.results)
    return dependent


def checked_run(loop: uop.RangeOp) -> tuple[int, int, dict[int, int]] | None:
    """The longest run [a, b) of the loop's iterations in which every index check that
    depends on its induction variable has one outcome; with the outcomes, keyed by position
    in `index_checks(loop)`."""
    dependent = depends_on(loop)
    checks = [(i, op) for i, op in enumerate(index_checks(loop)) if op.results[0] in dependent]
    if not checks:
        return None
    iv = loop.induction_var
    best: tuple[int, int, dict[int, int]] | None = None
    run_start, run_key = loop.start.data, None
    for v in [*range(loop.start.data, loop.end.data), None]:
        key = None
        if v is not None:
            intervals = Intervals({iv: (v, v)})
            outcomes = tuple(intervals.decide(op) for _, op in checks)
            key = None if None in outcomes else outcomes
        if v is None or key != run_key:
            end = loop.end.data if v is None else v
            if run_key is not None and (best is None or end - run_start > best[1] - best[0]):
                best = (run_start, end, {i: o for (i, _), o in zip(checks, run_key)})
            run_start, run_key = (v if v is not None else end), key
    return best


def decided_copy(loop: uop.RangeOp, start: int, end: int, outcomes: dict[int, int]) -> uop.RangeOp:
    """A detached copy of `loop` over [start, end) whose index checks have the given outcomes:
    compares become constants, clamps the operand they pick."""
    copy = loop.clone()
    copy.properties["start"] = IntAttr(start)
    copy.properties["end"] = IntAttr(end)
    checks = index_checks(copy)
    for position, outcome in outcomes.items():
        op = checks[position]
        if op.name in ("uop.cmple", "uop.cmplt"):
            decided = uop.ConstOp(bool(outcome), i1)
            decided.location = op.location
            Rewriter.replace_op(op, decided)
        else:
            op.results[0].replace_all_uses_with(op.operands[outcome])
            Rewriter.erase_op(op)
    return copy


def split_checked(loop: uop.RangeOp, min_trip: int, accept: Callable[[LoopAnalysis], None]) -> uop.RangeOp | None:
    """Split `loop` into before / middle / after, the middle the longest run of iterations
    whose bounds checks are decided (and simplified away), if the middle is then legal to
    vectorize (and `accept`ed) and at least `min_trip` long; returns the middle loop."""
    run = checked_run(loop)
    if run is None or run[1] - run[0] < min_trip:
        return None
    start, end, outcomes = run
    middle = decided_copy(loop, start, end, outcomes)
    try:
        accept(LoopAnalysis(middle))
    except Refused:
        middle.erase(safe_erase=False)  # detached: drop its uses of the values around it
        return None
    if start > loop.start.data:
        before = loop.clone()
        before.properties["end"] = IntAttr(start)
        Rewriter.insert_op(before, InsertPoint.before(loop))
    Rewriter.insert_op(middle, InsertPoint.before(loop))
    if end < loop.end.data:
        loop.properties["start"] = IntAttr(end)
    else:
        Rewriter.erase_op(loop)
    return middle


@dataclass(frozen=True)
class SplitIndexSetsPass(ModulePass):
    """Split loops refused for their bounds checks (see the module docstring)."""

    name = "split-index-sets"

    width: int | None = None
    """Lanes per vector; default: the module's target's (`#zant.target`), 8 without one."""
    min_width: int = 4
    only_innermost: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        policy = VectorPolicy(vector_width(op, self.width, self.name), self.min_width, self.only_innermost)
        select_loops(op, policy, lambda loop: split_checked(loop, policy.min_width, policy.accept))
