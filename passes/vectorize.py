"""`vectorize`: unit-stride `uop.range` loops become loops over `vector<width x T>` plus a scalar
tail.

`-p 'vectorize{width=8 min-width=4 only-innermost=false}'`

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
* no i1 values that vary but compares used only as `uop.where` conditions (a lane mask: the
  where picks lane by lane); a uniform condition (a padding check of an outer dimension) picks
  whole vectors; bit casts work lane by lane.

Loops are visited inner first: the innermost legal loop with enough iterations of each nest
is vectorized (with `only_innermost`, only loops without nested loops are candidates), except
a reduction over fewer than `width` iterations or through strided loads, where the loop around
it (vector accumulators, no horizontal sums) does better (`zant.analysis.vectorization`).

Two passes before it give it longer and cleaner loops: `coalesce-loops` (rows of an image as
one loop) and `split-index-sets` (a padded border's bounds checks decided away in the middle
iterations); the host pipeline runs `coalesce-loops,split-index-sets,vectorize`, all three (and
`onnx-to-uop`, which shapes the Convs for it) at the width of the module's target (`#zant.target`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntAttr, ModuleOp, VectorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.analysis.vectorization import LoopAnalysis, VectorPolicy, gep_of, select_loops, vector_width
from zant.dialects import uop
from zant.ir.locations import located


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
            vacc.location = loop.location
            Rewriter.insert_op(vacc, InsertPoint.before(loop))
            self.values[acc] = vacc.result
        self.vector_loop(start, vector_end)
        for acc in self.analysis.reductions:
            vector_sum = uop.AccGetOp(self.values[acc])
            total = uop.ReduceAddOp(vector_sum.result)
            old = uop.AccGetOp(acc)
            new = uop.ALU_OPS["add"](old.result, total.result)
            update = uop.AccSetOp(acc, new.results[0])
            Rewriter.insert_op(located([vector_sum, total, old, new, update], loop.location), InsertPoint.before(loop))
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
        vector_loop.location = loop.location
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
        broadcast.location = self.analysis.loop.location
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
            stride = a.gep_step(gep_of(op.ptr))
            new = uop.VLoadOp(self.values[op.ptr], self.vector_type(op.result.type), stride)
        elif isinstance(op, uop.StoreOp):
            new = uop.VStoreOp(vec(op.value), self.values[op.ptr], a.gep_step(gep_of(op.ptr)))
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
        elif isinstance(op, uop.BitcastOp) and op.result in a.varying:
            new = uop.BitcastOp(vec(op.input), self.vector_type(op.result.type))
        elif op.results and op.results[0] in a.varying:
            new = type(op)(*(vec(v) for v in op.operands))
        else:
            new = op.clone(value_mapper=self.values)
        new.location = op.location
        block.add_op(new)
        for old, result in zip(op.results, new.results):
            self.values[old] = result
            result.name_hint = old.name_hint


@dataclass(frozen=True)
class VectorizePass(ModulePass):
    """Vectorize unit-stride loops (see the module docstring)."""

    name = "vectorize"

    width: int | None = None
    """Lanes per vector; default: the module's target's (`#zant.target`), 8 without one."""
    min_width: int = 4
    """Loops shorter than `width` use the widest power-of-two fraction of it down to this."""
    only_innermost: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        policy = VectorPolicy(vector_width(op, self.width, self.name), self.min_width, self.only_innermost)
        for loop in select_loops(op, policy):
            LoopVectorizer(LoopAnalysis(loop), policy.loop_width(loop)).rewrite()
