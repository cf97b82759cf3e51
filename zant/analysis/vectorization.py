"""What the vector passes (`coalesce-loops`, `split-index-sets`, `vectorize`) need to know about
uop loops: which values of a loop vary by lane and whether the loop may run as vectors
(`LoopAnalysis`, raising `Refused`), which loops of a module `vectorize` would pick
(`select_loops`), and the width they run at (`vector_width`: the module's target's lanes).

The legality rules are the `vectorize` pass's (see its module docstring); `split-index-sets`
asks the same questions to find the loops whose bounds checks alone refuse them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from xdsl.dialects.builtin import IndexType, ModuleOp, VectorType, i1
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from zant.analysis.linear_index import Linear, linear_form
from zant.dialects import uop
from zant.dialects.zant import module_target
from zant.ir.types import is_packed

DEFAULT_WIDTH = 8
"""The vector passes' width in a module without a target (a hand-written one)."""


def vector_width(module: ModuleOp, width: int | None, pass_name: str) -> int:
    """The width a vector pass runs at: its `width` option when given, else the lanes of the
    module's target (`#zant.target`: the width the lowering shaped its Convs for), else
    `DEFAULT_WIDTH`; a target without vector lanes (the microcontrollers) needs the option."""
    if width is None:
        target = module_target(module)
        if target is None:
            width = DEFAULT_WIDTH
        elif not (width := target.parameters.vector_lanes):
            raise PassFailedException(
                f"the module's target {target} has no vector lanes; give "
                f"{pass_name}{{width=W}} to vectorize for it anyway"
            )
    if width < 2:
        raise PassFailedException(f"{pass_name} width must be at least 2, got {width}")
    return width


class Refused(Exception):
    """The loop cannot be vectorized; the message says why (for tests and debugging)."""


def buffer_root(value: SSAValue) -> SSAValue:
    """The buffer behind a buffer or view value."""
    owner = value.owner
    return owner.source if isinstance(owner, uop.ViewOp) else value


def view_strides(source: SSAValue) -> tuple[int, ...]:
    t = source.type
    return t.get_strides() if isinstance(t, uop.ViewType) else (1,)


def gep_address(gep: uop.GepOp) -> Linear:
    """The element of its buffer a gep points to, as a linear form."""
    t = gep.source.type
    address: Linear = {None: t.offset.data if isinstance(t, uop.ViewType) else 0}
    for index, stride in zip(gep.indices, view_strides(gep.source)):
        for k, c in linear_form(index, lambda v: {v: 1}).items():  # type: ignore[union-attr]
            address[k] = address.get(k, 0) + c * stride
    return {k: c for k, c in address.items() if c or k is None}


def nested_ops(block: Block) -> Iterator[Operation]:
    for op in block.ops:
        yield op
        for region in op.regions:
            for inner in region.blocks:
                yield from nested_ops(inner)


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
        self.inside = set(nested_ops(self.loop.body.block))
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
        return sum(self.coef(i) * s for i, s in zip(gep.indices, view_strides(gep.source)))

    def _check_block(self, block: Block) -> None:
        for op in block.ops:
            self._check(op)

    def _check(self, op: Operation) -> None:
        if any(isinstance(v.type, VectorType) for v in (*op.operands, *op.results)):
            # Its lanes are not the loop's: vectorizing the loop would leave the op as it is
            # and run it for one iteration in `width`.
            raise Refused(f"{op.name} already works on vectors")
        operands_vary = any(self.is_varying(v) for v in op.operands)
        if isinstance(op, uop.RangeOp):
            self._check_block(op.body.block)
        elif isinstance(op, uop.EndRangeOp | uop.ConstOp):
            pass
        elif isinstance(op, uop.GepOp):
            if self.gep_step(op) < 0:
                raise Refused(f"a gep moves {self.gep_step(op)} elements per lane")
        elif isinstance(op, uop.LoadOp):
            if self.gep_step(gep_of(op.ptr)) >= 1:
                self._vary(op.result)
                self.gathers |= self.gep_step(gep_of(op.ptr)) > 1
        elif isinstance(op, uop.StoreOp):
            if self.gep_step(gep_of(op.ptr)) == 0:
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
        elif isinstance(op, uop.BitcastOp):
            self._vary(op.result)  # lane by lane, same width
        elif isinstance(op, uop.CompareOp):
            # A lane mask (vector<N x i1>), only ever the condition of a uop.where.
            if any(not isinstance(u.operation, uop.WhereOp) or u.index != 0 for u in op.result.uses):
                raise Refused("a varying compare used other than as a uop.where condition")
            self._check_lane_type(op.lhs.type)
            self.varying.add(op.result)
        elif isinstance(op, uop.WhereOp):
            self._vary(op.result)  # a uniform condition picks whole vectors, a mask lane by lane
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
        if t == i1 or isinstance(t, IndexType) or not uop.is_scalar_type(t) or is_packed(t):
            raise Refused(f"no vectors of {t}")  # int4 …: several to a byte in memory

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
                gep = gep_of(op.ptr)
                target = stored if isinstance(op, uop.StoreOp) else loaded
                target.setdefault(buffer_root(gep.source), {})[(gep.source, tuple(gep.indices))] = gep
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
        forms = [gep_address(g) for g in geps]
        if any(k is not None and k is not iv and self.defined_inside(k) for f in forms for k in f):
            raise Refused("a buffer is stored at several addresses that an inner loop moves")
        for a, b in itertools.combinations(forms, 2):
            if {k: c for k, c in a.items() if k is not None} != {k: c for k, c in b.items() if k is not None}:
                raise Refused("a buffer is stored at several addresses whose distance varies")
            distance, step = b[None] - a[None], a.get(iv, 0)
            if distance and distance % step == 0 and abs(distance) < step * self.loop.trip_count:
                raise Refused("stores of one buffer overlap across iterations")


def gep_of(ptr: SSAValue) -> uop.GepOp:
    if not isinstance(ptr.owner, uop.GepOp):
        raise Refused("a pointer that is not a gep")
    return ptr.owner


@dataclass(frozen=True)
class VectorPolicy:
    """Which loops are worth vectorizing `width` lanes wide (the `vectorize` options)."""

    width: int = 8
    min_width: int = 4
    only_innermost: bool = False

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


def select_loops(
    module: ModuleOp,
    policy: VectorPolicy,
    on_refused: Callable[[uop.RangeOp], uop.RangeOp | None] = lambda loop: None,
) -> list[uop.RangeOp]:
    """The loops to vectorize, inner first: in each nest the innermost suitable loop that is
    legal and `accept`ed (with `only_innermost`, only loops without nested loops). A refused
    loop is given to `on_refused`, which may return a loop to take instead (`split-index-sets`
    returns the middle of the loop it split)."""
    chosen: list[uop.RangeOp] = []

    def visit(loop: uop.RangeOp) -> bool:
        """Visit the nest under `loop`; True if a loop in it was chosen."""
        inner = [o for o in loop.body.block.ops if isinstance(o, uop.RangeOp)]
        found = any([visit(o) for o in inner])
        if found or (policy.only_innermost and inner) or not policy.suitable(loop):
            return found
        try:
            policy.accept(LoopAnalysis(loop))
        except Refused:
            replacement = on_refused(loop)
            if replacement is None:
                return False
            loop = replacement
        chosen.append(loop)
        return True

    tops = [o for o in module.walk() if isinstance(o, uop.RangeOp)]
    for top in tops:
        # (a loop erased by `on_refused` before its turn has no parent)
        if top.parent is not None and not isinstance(top.parent_op(), uop.RangeOp):
            visit(top)
    return chosen
