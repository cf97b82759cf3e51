"""`vectorize`: unit-stride `uop.range` loops become loops over `vector<width x T>` plus a scalar
tail.

`-p 'vectorize{width=8 min_width=4 only_innermost=false split=true coalesce=true}'`

A loop `uop.range %i = s to e` (step 1, at least `width` iterations; a shorter loop uses width/2,
width/4 … down to `min_width`) is run as `uop.range %i = s to s + ⌊(e - s) / width⌋·width step
width`, each iteration computing lanes %i … %i + width - 1, followed by the remaining iterations
(the tail): one more vector iteration over the last `width` lanes, overlapping the ones before,
when running an iteration twice is harmless (no accumulator is summed over the loop and no
buffer is both stored and loaded in it); otherwise the original scalar loop over the rest.
Inside the vector loop every value is either *uniform* (the same for all lanes: it is kept
scalar, and broadcast where a vector op needs it) or *varying* (one value per lane):

* an index value is affine in %i, `%i·c + uniform` (built from %i by add, sub and mul by a
  constant); a gep through a buffer or view whose address moves by 0 elements per lane reads a
  uniform scalar, by 1 element a `uop.vload` / `uop.vstore` at the lane-0 address, by s > 1
  a `uop.vload … stride s` / `uop.vstore … stride s` (a gather / scatter: an outer loop over
  output channels whose pixels are `s` elements apart);
* a load that varies is a `uop.vload`; ALU ops (`uop.VECTOR_ALU_OPS`) and lossless casts on
  varying values work lane-wise;
* an accumulator defined inside the loop and fed varying values is a vector accumulator (this
  vectorizes an outer loop, e.g. the output pixels of a convolution whose reduction loops are
  nested inside it: the weights are broadcast, the inputs are vector loads);
* an accumulator defined outside the loop and fed by `uop.mulacc` of varying values is a
  reduction: it is accumulated in a fresh vector accumulator, whose lanes are summed with
  `uop.reduce_add` and added to it after the vector loop (floats: in another order than the
  scalar loop, a rounding difference).

Legality (a loop that fails any check is left as it is):

* every index value that depends on %i is affine in it, and used only by geps and affine ops
  (no compare, division, clamp or cast of it: border checks stay scalar);
* every gep moves 0 or more elements per lane: a load moving 1 is a `uop.vload`, more a
  strided one (a gather); every store moves 1 or more (a uniform store would be a loop-carried
  write), more a strided store (a scatter);
* no loop-carried dependence but accumulators: an accumulator from outside the loop is only
  `uop.mulacc`ed of a varying product (or not written at all), a buffer stored at several
  addresses in the loop is stored at ones a constant apart that no two iterations share, and a
  buffer both stored and loaded is loaded only where it is stored (same source and indices);
* no i1 or bitcast values or compares that vary; a `uop.where` may pick varying values, by a
  uniform condition (a padding check of an outer dimension) only.

Loops are visited inner first: the innermost legal loop with enough iterations of each nest
is vectorized (with `only_innermost`, only loops without nested loops are candidates), except
a reduction over fewer than `width` iterations or through strided loads, where the loop around
it (vector accumulators, no horizontal sums) does better.

Loop coalescing (`coalesce`, on by default) runs first: a loop whose whole body is a loop over
whole rows (from 0, step 1) is merged with it when every address moves by one row length per
outer step, the outer index becoming 0 and the inner one running over all the elements; short
image rows (a 1×1 Conv or an element-wise op over 25×5) then make one long vector loop.

Index-set splitting (`split`, on by default): a loop refused because of bounds checks on its
index (the compares and max/min clamps of a padded Conv or pool border row) is split into
before / middle / after, the middle being the longest run of iterations in which every such
check has one outcome (found by interval arithmetic over the loop nest). In the middle the
compares become constants and the clamps disappear, so its loads are unit-stride again and it
is vectorized; the short ends stay scalar, checked as before.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, IntAttr, ModuleOp, VectorType, i1
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects import uop
from zant.analysis.linear_index import Linear, linear_form
from zant.analysis.vectorization import check_lanes



class Refused(Exception):
    """The loop cannot be vectorized; the message says why (for tests and debugging)."""


def _root(value: SSAValue) -> SSAValue:
    """The buffer behind a buffer or view value."""
    owner = value.owner
    return owner.source if isinstance(owner, uop.ViewOp) else value


def _strides(source: SSAValue) -> tuple[int, ...]:
    t = source.type
    return t.get_strides() if isinstance(t, uop.ViewType) else (1,)


def _address(gep: uop.GepOp) -> Linear:
    """The element of its buffer a gep points to, as a linear form."""
    t = gep.source.type
    address: Linear = {None: t.offset.data if isinstance(t, uop.ViewType) else 0}
    for index, stride in zip(gep.indices, _strides(gep.source)):
        for k, c in linear_form(index, lambda v: {v: 1}).items():  # type: ignore[union-attr]
            address[k] = address.get(k, 0) + c * stride
    return {k: c for k, c in address.items() if c or k is None}


def _nested_ops(block: Block) -> Iterator[Operation]:
    for op in block.ops:
        yield op
        for region in op.regions:
            for inner in region.blocks:
                yield from _nested_ops(inner)


@dataclass
class LoopAnalysis:
    """Which values of one loop's body vary by lane; raises `Refused` if the loop is illegal."""

    loop: uop.RangeOp
    coefficient: dict[SSAValue, int] = field(default_factory=dict)
    """Index values inside the loop: elements per lane (0 = uniform)."""
    varying: set[SSAValue] = field(default_factory=set)
    """Non-index values (and accumulators defined inside) with one value per lane."""
    reductions: dict[SSAValue, None] = field(default_factory=dict)
    """Accumulators defined outside the loop that varying products are added into."""

    def __post_init__(self) -> None:
        self.gathers = False
        self.inside = set(_nested_ops(self.loop.body.block))
        # An accumulator may be read before it is written in program order: check again while
        # one read as uniform turned out varying or reduced (usually there is none: one pass).
        while True:
            self.uniform_reads: set[SSAValue] = set()
            self.coefficient = {self.loop.induction_var: 1}
            self._check_block(self.loop.body.block)
            if not self.uniform_reads & (self.varying | self.reductions.keys()):
                break
        self._check_memory()

    def defined_inside(self, value: SSAValue) -> bool:
        owner = value.owner
        if isinstance(owner, Block):
            return owner.parent_op() in self.inside or owner is self.loop.body.block
        return owner in self.inside

    def coef(self, value: SSAValue) -> int:
        return self.coefficient.get(value, 0)

    def is_varying(self, value: SSAValue) -> bool:
        return value in self.varying or self.coef(value) != 0

    def gep_step(self, gep: uop.GepOp) -> int:
        return sum(self.coef(i) * s for i, s in zip(gep.indices, _strides(gep.source)))

    def _check_block(self, block: Block) -> None:
        for op in block.ops:
            self._check(op)

    def _check(self, op: Operation) -> None:
        operands_vary = any(self.is_varying(v) for v in op.operands)
        if isinstance(op, uop.RangeOp):
            self._check_block(op.body.block)
        elif isinstance(op, uop.EndRangeOp | uop.ConstOp):
            pass
        elif isinstance(op, uop.GepOp):
            if self.gep_step(op) < 0:
                raise Refused(f"a gep moves {self.gep_step(op)} elements per lane")
        elif isinstance(op, uop.LoadOp):
            if self.gep_step(_gep(op.ptr)) >= 1:
                self._vary(op.result)
                self.gathers |= self.gep_step(_gep(op.ptr)) > 1
        elif isinstance(op, uop.StoreOp):
            if self.gep_step(_gep(op.ptr)) == 0:
                raise Refused("a uniform store (a loop-carried write)")
            self._check_lane_type(op.value.type)
        elif op.name.removeprefix("uop.") in uop.ALU_OPS and isinstance(op.results[0].type, IndexType):
            self._check_index(op)
        elif not operands_vary and not isinstance(op, uop.MulAccOp | uop.AccSetOp | uop.AccGetOp):
            pass  # uniform: stays scalar
        elif isinstance(op, uop.CastOp):
            if not uop.is_lossless_cast(op.input.type, op.result.type):
                raise Refused(f"a varying cast {op.input.type} to {op.result.type} is not lossless")
            self._vary(op.result)
        elif op.name.removeprefix("uop.") in uop.VECTOR_ALU_OPS and not isinstance(op, uop.CompareOp):
            if op.name == "uop.div" and not uop.is_float_type(op.results[0].type):
                raise Refused("integer division of varying values")
            self._vary(op.results[0])
        elif isinstance(op, uop.WhereOp):
            if self.is_varying(op.condition):
                raise Refused("a uop.where whose condition varies by lane")
            self._vary(op.result)  # one condition picks whole vectors
        elif isinstance(op, uop.DefineAccOp):
            pass
        elif isinstance(op, uop.MulAccOp | uop.AccSetOp):
            self._check_acc_write(op, operands_vary)
        elif isinstance(op, uop.AccGetOp):
            if not self.defined_inside(op.acc):
                if op.acc in self.reductions:
                    raise Refused("an accumulator reduced over the loop is read inside it")
            elif op.acc in self.varying:
                self._vary(op.result)
            if op.acc not in self.varying and op.acc not in self.reductions:
                self.uniform_reads.add(op.acc)
        else:
            raise Refused(f"{op.name} of varying values has no vector form")

    def _vary(self, value: SSAValue) -> None:
        self._check_lane_type(value.type)
        self.varying.add(value)

    @staticmethod
    def _check_lane_type(t) -> None:
        if t == i1 or isinstance(t, IndexType) or not uop.is_scalar_type(t):
            raise Refused(f"no vectors of {t}")

    def _check_index(self, op: Operation) -> None:
        short = op.name.removeprefix("uop.")
        coefs = [self.coef(v) for v in op.operands]
        if not any(coefs):
            return
        if short == "add":
            result = coefs[0] + coefs[1]
        elif short == "sub":
            result = coefs[0] - coefs[1]
        elif short == "mul" and coefs[1] == 0 and isinstance(op.operands[1].owner, uop.ConstOp):
            result = coefs[0] * op.operands[1].owner.value.value.data  # type: ignore[attr-defined]
        else:
            raise Refused(f"uop.{short} of a lane-varying index")
        self.coefficient[op.results[0]] = result

    def _check_acc_write(self, op: uop.MulAccOp | uop.AccSetOp, operands_vary: bool) -> None:
        if self.defined_inside(op.acc):
            if operands_vary or op.acc in self.varying:
                self._check_lane_type(op.acc.type.element_type)  # type: ignore[attr-defined]
                self.varying.add(op.acc)
            return
        if not isinstance(op, uop.MulAccOp) or not operands_vary:
            raise Refused("an accumulator from outside the loop is written with a uniform value")
        self._check_lane_type(op.lhs.type)
        self.reductions[op.acc] = None

    def _check_memory(self) -> None:
        stored: dict[SSAValue, dict] = {}
        loaded: dict[SSAValue, dict] = {}
        for op in self.inside:
            if isinstance(op, uop.StoreOp | uop.LoadOp):
                gep = _gep(op.ptr)
                target = stored if isinstance(op, uop.StoreOp) else loaded
                target.setdefault(_root(gep.source), {})[(gep.source, tuple(gep.indices))] = gep
        for geps in stored.values():
            self._check_disjoint(list(geps.values()))
        for buffer, addresses in loaded.items():
            if buffer in stored and not addresses.keys() <= stored[buffer].keys():
                raise Refused("a buffer is stored and loaded at other addresses in the loop")
        # Running some iterations twice changes nothing when no stored value depends on memory
        # the loop writes, and nothing is summed over the loop.
        self.idempotent = not self.reductions and not stored.keys() & loaded.keys()

    def _check_disjoint(self, geps: list[uop.GepOp]) -> None:
        """Stores of one buffer at several addresses (the channels of a register-blocked Conv)
        must not write an element another iteration writes too: the lanes of a vector store
        would reorder those writes. Each address moves by the same step s ≥ 1 per iteration, so
        two whose difference is a constant d overlap in other iterations iff s divides d and
        |d| < s·trip count; anything else (a difference through an inner loop's index or a
        value computed inside the loop) is refused."""
        if len(geps) < 2:
            return
        iv = self.loop.induction_var
        forms = [_address(g) for g in geps]
        if any(k is not None and k is not iv and self.defined_inside(k) for f in forms for k in f):
            raise Refused("a buffer is stored at several addresses that an inner loop moves")
        for a, b in itertools.combinations(forms, 2):
            if {k: c for k, c in a.items() if k is not None} != {k: c for k, c in b.items() if k is not None}:
                raise Refused("a buffer is stored at several addresses whose distance varies")
            distance, step = b[None] - a[None], a.get(iv, 0)
            if distance and distance % step == 0 and abs(distance) < step * self.loop.trip_count:
                raise Refused("stores of one buffer overlap across iterations")


def _gep(ptr: SSAValue) -> uop.GepOp:
    if not isinstance(ptr.owner, uop.GepOp):
        raise Refused("a pointer that is not a gep")
    return ptr.owner


class LoopVectorizer:
    """Rewrites one legal loop as a vector loop plus a scalar tail."""

    def __init__(self, analysis: LoopAnalysis, width: int):
        self.analysis = analysis
        self.width = width
        self.values: dict[SSAValue, SSAValue] = {}
        self.hoisted: dict[SSAValue, SSAValue] = {}

    def vector_type(self, t) -> VectorType:
        return VectorType(t, [self.width])

    def rewrite(self) -> None:
        loop, width = self.analysis.loop, self.width
        start, end = loop.start.data, loop.end.data
        vector_end = start + loop.trip_count // width * width
        self.preheader: InsertPoint | None = None
        for acc in self.analysis.reductions:
            vacc = uop.DefineAccOp(0, self.vector_type(acc.type.element_type))  # type: ignore[attr-defined]
            Rewriter.insert_op(vacc, InsertPoint.before(loop))
            self.values[acc] = vacc.result
        self.vector_loop(start, vector_end)
        for acc in self.analysis.reductions:
            vector_sum = uop.AccGetOp(self.values[acc])
            total = uop.ReduceAddOp(vector_sum.result)
            old = uop.AccGetOp(acc)
            new = uop.ALU_OPS["add"](old.result, total.result)
            update = uop.AccSetOp(acc, new.results[0])
            Rewriter.insert_op([vector_sum, total, old, new, update], InsertPoint.before(loop))
        if vector_end != end and self.analysis.idempotent:
            self.vector_loop(end - width, end)  # the last lanes again, overlapping the loop's
            vector_end = end
        if vector_end == end:
            Rewriter.erase_op(loop)
        else:
            loop.properties["start"] = IntAttr(vector_end)

    def vector_loop(self, start: int, end: int) -> None:
        """A copy of the loop's body over lanes [start, end), `width` lanes per iteration."""
        loop = self.analysis.loop
        vector_loop = uop.RangeOp(start, end, self.width)
        Rewriter.insert_op(vector_loop, InsertPoint.before(loop))
        if self.preheader is None:  # where broadcasts of values from outside the loop go
            self.preheader = InsertPoint.before(vector_loop)
        self.values[loop.induction_var] = vector_loop.induction_var
        vector_loop.induction_var.name_hint = loop.induction_var.name_hint
        self.copy_block(loop.body.block, vector_loop.body.block)

    def copy_block(self, source: Block, target: Block) -> None:
        for op in source.ops:
            self.copy(op, target)

    def vector(self, value: SSAValue, block: Block) -> SSAValue:
        """The vector form of an operand: its varying copy, or a broadcast of a uniform one
        (hoisted in front of the vector loop when the value is defined outside it)."""
        if self.analysis.is_varying(value):
            return self.values[value]
        if value in self.hoisted:
            return self.hoisted[value]
        broadcast = uop.BroadcastOp(self.values.get(value, value), self.vector_type(value.type))
        if self.analysis.defined_inside(value):
            block.add_op(broadcast)
        else:
            assert self.preheader is not None
            Rewriter.insert_op(broadcast, self.preheader)
            self.hoisted[value] = broadcast.result
        return broadcast.result

    def copy(self, op: Operation, block: Block) -> None:
        """Add the vector-loop form of `op` to `block`."""
        a = self.analysis
        vec = lambda v: self.vector(v, block)  # noqa: E731
        if isinstance(op, uop.RangeOp):
            new: Operation = uop.RangeOp(op.start.data, op.end.data, op.step.data)
            self.values[op.induction_var] = new.induction_var
            new.induction_var.name_hint = op.induction_var.name_hint
            self.copy_block(op.body.block, new.body.block)
        elif isinstance(op, uop.LoadOp) and op.result in a.varying:
            stride = a.gep_step(_gep(op.ptr))
            new = uop.VLoadOp(self.values[op.ptr], self.vector_type(op.result.type), stride)
        elif isinstance(op, uop.StoreOp):
            new = uop.VStoreOp(vec(op.value), self.values[op.ptr], a.gep_step(_gep(op.ptr)))
        elif isinstance(op, uop.DefineAccOp) and op.result in a.varying:
            new = uop.DefineAccOp(op.init.value.data, self.vector_type(op.init.type))
        elif isinstance(op, uop.MulAccOp) and (op.acc in a.varying or op.acc in a.reductions):
            new = uop.MulAccOp(self.values[op.acc], vec(op.lhs), vec(op.rhs))
        elif isinstance(op, uop.AccSetOp) and op.acc in a.varying:
            new = uop.AccSetOp(self.values[op.acc], vec(op.value))
        elif isinstance(op, uop.AccGetOp) and op.acc in a.varying:
            new = uop.AccGetOp(self.values[op.acc])
        elif isinstance(op, uop.WhereOp) and op.result in a.varying:
            condition = self.values.get(op.condition, op.condition)
            new = uop.WhereOp(condition, vec(op.true_value), vec(op.false_value))
        elif isinstance(op, uop.CastOp) and op.result in a.varying:
            new = uop.CastOp(vec(op.input), self.vector_type(op.result.type))
        elif op.results and op.results[0] in a.varying:
            new = type(op)(*(vec(v) for v in op.operands))
        else:
            new = op.clone(value_mapper=self.values)
        block.add_op(new)
        for old, result in zip(op.results, new.results):
            self.values[old] = result
            result.name_hint = old.name_hint


# ---------------------------------------------------------------------------------------------
# Index-set splitting: the iterations where every bounds check of the loop's index is decided
# ---------------------------------------------------------------------------------------------

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


def _index_checks(loop: uop.RangeOp) -> list[Operation]:
    """The compares and clamps of index values in the loop (the bounds checks to decide)."""
    return [
        op
        for op in _nested_ops(loop.body.block)
        if op.name.removeprefix("uop.") in CHECKS and isinstance(op.operands[0].type, IndexType)
    ]


def _depends_on(loop: uop.RangeOp) -> set[SSAValue]:
    """The values inside the loop computed from its induction variable."""
    dependent = {loop.induction_var}
    for op in _nested_ops(loop.body.block):
        if any(v in dependent for v in op.operands):
            dependent.update(op.results)
    return dependent


def checked_run(loop: uop.RangeOp) -> tuple[int, int, dict[int, int]] | None:
    """The longest run [a, b) of the loop's iterations in which every index check that
    depends on its induction variable has one outcome; with the outcomes, keyed by position
    in `_index_checks(loop)`."""
    dependent = _depends_on(loop)
    checks = [(i, op) for i, op in enumerate(_index_checks(loop)) if op.results[0] in dependent]
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
    checks = _index_checks(copy)
    for position, outcome in outcomes.items():
        op = checks[position]
        if op.name in ("uop.cmple", "uop.cmplt"):
            Rewriter.replace_op(op, uop.ConstOp(bool(outcome), i1))
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



# ---------------------------------------------------------------------------------------------
# Loop coalescing: rows of an image as one long loop
# ---------------------------------------------------------------------------------------------


def affine_coefficients(iv: SSAValue, block: Block) -> dict[SSAValue, int] | None:
    """Elements per unit of `iv` of every index value and gep in `block` that depends on it,
    or None if `iv` reaches anything but affine index ops (add, sub, mul by a constant) and
    gep indices."""
    coefficient = {iv: 1}
    geps: dict[SSAValue, int] = {}
    for op in _nested_ops(block):
        if not any(v in coefficient for v in op.operands):
            continue
        short = op.name.removeprefix("uop.")
        if isinstance(op, uop.GepOp):
            strides = _strides(op.source)
            geps[op.result] = sum(coefficient.get(i, 0) * s for i, s in zip(op.indices, strides))
            continue
        if len(op.results) != 1 or not isinstance(op.results[0].type, IndexType) or len(op.operands) != 2:
            return None  # also an index picked by `uop.where` or negated: not affine
        a, b = (coefficient.get(v, 0) for v in op.operands)
        if short == "add":
            coefficient[op.results[0]] = a + b
        elif short == "sub":
            coefficient[op.results[0]] = a - b
        elif short == "mul" and b == 0 and isinstance(op.operands[1].owner, uop.ConstOp):
            coefficient[op.results[0]] = a * op.operands[1].owner.value.value.data  # type: ignore[attr-defined]
        else:
            return None
    return coefficient | geps


def coalesce(outer: uop.RangeOp) -> uop.RangeOp | None:
    """Merge `outer` and the loop that is its whole body into one loop, when the inner loop
    covers whole rows (from 0, step 1) and every address moves by one row length per step of
    `outer`: then `(o, i)` and `(0, o·rows + i)` are the same addresses, and the merged loop
    runs the inner body with the outer index 0 and the inner one over every element. A 1×1
    Conv or an element-wise op over a 25×5 image becomes one unit-stride loop of 125."""
    ops = [op for op in outer.body.block.ops if not isinstance(op, uop.EndRangeOp)]
    if len(ops) != 1 or not isinstance(ops[0], uop.RangeOp):
        return None
    inner = ops[0]
    if outer.step.data != 1 or inner.step.data != 1 or inner.start.data != 0:
        return None
    row = inner.end.data
    outer_coefficients = affine_coefficients(outer.induction_var, outer.body.block)
    inner_coefficients = affine_coefficients(inner.induction_var, inner.body.block)
    if outer_coefficients is None or inner_coefficients is None:
        return None
    for op in _nested_ops(inner.body.block):
        if isinstance(op, uop.GepOp):
            if outer_coefficients.get(op.result, 0) != row * inner_coefficients.get(op.result, 0):
                return None
    merged = uop.RangeOp(outer.start.data * row, outer.end.data * row)
    merged.induction_var.name_hint = inner.induction_var.name_hint
    zero = uop.ConstOp(0, IndexType())
    merged.body.block.add_op(zero)
    outer.induction_var.replace_all_uses_with(zero.result)
    inner.induction_var.replace_all_uses_with(merged.induction_var)
    for op in list(inner.body.block.ops):
        op.detach()
        merged.body.block.add_op(op)
    Rewriter.replace_op(outer, merged, [])
    return merged


def coalesce_all(module: ModuleOp) -> None:
    """Coalesce every loop nest, inner pairs first (a merged loop may merge with its parent)."""
    for loop in reversed([o for o in module.walk() if isinstance(o, uop.RangeOp)]):
        if loop.parent is not None and loop.parent_op() is not None:
            coalesce(loop)


@dataclass(frozen=True)
class VectorizePass(ModulePass):
    """Vectorize unit-stride loops (see the module docstring)."""

    name = "vectorize"

    width: int = 8
    min_width: int = 4
    """Loops shorter than `width` use the widest power-of-two fraction of it down to this."""
    only_innermost: bool = False
    split: bool = True
    """Split a loop refused for its bounds checks around the iterations where they are decided."""
    coalesce: bool = True
    """Merge a loop over rows with its loop over whole rows when every address allows it."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.width < 2:
            raise ValueError(f"vectorize width must be at least 2, got {self.width}")
        check_lanes(op, self.width, self.name)
        if self.coalesce:
            coalesce_all(op)
        for loop in self.candidates(op):
            LoopVectorizer(LoopAnalysis(loop), self.loop_width(loop)).rewrite()

    def candidates(self, module: ModuleOp) -> list[uop.RangeOp]:
        """Loops to vectorize, inner first: each legal-looking loop without a chosen loop inside."""
        chosen: list[uop.RangeOp] = []

        def visit(loop: uop.RangeOp) -> bool:
            """Visit the nest under `loop`; True if a loop in it was chosen."""
            inner = [o for o in loop.body.block.ops if isinstance(o, uop.RangeOp)]
            found = any([visit(o) for o in inner])
            if found or (self.only_innermost and inner) or not self.suitable(loop):
                return found
            try:
                self.accept(LoopAnalysis(loop))
            except Refused:
                middle = split_checked(loop, self.min_width, self.accept) if self.split else None
                if middle is None:
                    return False
                loop = middle
            chosen.append(loop)
            return True

        tops = [o for o in module.walk() if isinstance(o, uop.RangeOp)]
        for top in tops:
            # (a loop erased by a split before its turn has no parent)
            if top.parent is not None and not isinstance(top.parent_op(), uop.RangeOp):
                visit(top)
        return chosen

    def accept(self, analysis: LoopAnalysis) -> None:
        """Legal loops that are still not worth it: a reduction over fewer than `width`
        iterations or through strided loads (the loop around it is a better choice)."""
        if analysis.reductions and (analysis.loop.trip_count < self.width or analysis.gathers):
            raise Refused("a short or strided reduction")

    def loop_width(self, loop: uop.RangeOp) -> int:
        """`width`, halved (down to `min_width`) while the loop is shorter than one vector."""
        width = self.width
        while loop.trip_count < width and width // 2 >= self.min_width:
            width //= 2
        return width

    def suitable(self, loop: uop.RangeOp) -> bool:
        return loop.step.data == 1 and loop.trip_count >= self.loop_width(loop)
