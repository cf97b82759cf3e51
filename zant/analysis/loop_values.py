"""What a `uop.range` loop does to the values its body reads: which are defined inside it, which
are integer literals, how an index moves with the induction variable, and which loads the loop
does not move. Shared by the passes that turn a loop of DSP steps into one asm op
(`arm-dsp-requant`, `arm-dsp-tile-rows`, `arm-dsp-block-rows`, `arm-dsp-depthwise-rows`)."""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue

from zant.analysis.linear_index import Linear, linear_form
from zant.dialects import uop
from zant.dialects.uop.alu import constant_of, fold_cast

LoopIndex = tuple[int, frozenset[tuple[SSAValue, int]], int]
"""An index in a loop: (its coefficient of the induction variable, the other terms as (atom,
coefficient) pairs, the constant)."""


def integer_literal(value: SSAValue) -> int | None:
    """The integer literal `value` is (or an exact cast of one: the zero point, an i8 literal
    widened), or None."""
    owner = value.owner
    if isinstance(owner, uop.CastOp):
        inner = constant_of(owner.input)
        attr = None if inner is None else fold_cast(inner, value.type)
    else:
        attr = constant_of(value)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def literal_or_atom(value: SSAValue) -> Linear:
    """`linear_form`'s opaque: an integer literal (`integer_literal`) is a constant, any other
    value an atom."""
    k = integer_literal(value)
    return {value: 1} if k is None else {None: k}


def encloses(loop: Operation, op: Operation | None) -> bool:
    """Whether `op` is `loop` or nested in it."""
    while op is not None:
        if op is loop:
            return True
        op = op.parent_op()
    return False


def defined_inside(value: SSAValue, loop: Operation) -> bool:
    """Whether `value` is a result or block argument of `loop` or of an op nested in it (so it
    may differ from one iteration to the next)."""
    owner = value.owner
    return encloses(loop, owner if isinstance(owner, Operation) else owner.parent_op())


def only_use(value: SSAValue, kind: type[Operation]) -> Operation | None:
    """The op reading `value` when it is its only use and a `kind`, else None."""
    if value.uses.get_length() != 1:
        return None
    user = next(iter(value.uses)).operation
    return user if isinstance(user, kind) else None


def loop_index(value: SSAValue, loop: uop.RangeOp) -> LoopIndex | None:
    """`value` (an index) as a `LoopIndex` of `loop`, every atom but the induction variable
    defined outside the loop; None otherwise."""
    form = linear_form(value, literal_or_atom)
    if form is None:
        return None
    constant = form.pop(None, 0)
    step = form.pop(loop.induction_var, 0)
    if any(defined_inside(a, loop) for a, k in form.items() if k):
        return None
    return step, frozenset((a, k) for a, k in form.items() if k), constant


def loop_address(value: SSAValue, loop: uop.RangeOp) -> tuple[SSAValue, LoopIndex] | None:
    """(buffer, index) of a pointer made by a one-index gep of a buffer defined outside `loop`,
    its index a `LoopIndex`; None otherwise."""
    gep = value.owner
    if not isinstance(gep, uop.GepOp) or len(gep.indices) != 1 or defined_inside(gep.source, loop):
        return None
    index = loop_index(gep.indices[0], loop)
    return None if index is None else (gep.source, index)


def loop_invariant(value: SSAValue, loop: uop.RangeOp) -> tuple | None:
    """A key for `value` when `loop` does not change it (defined outside, a literal, or a load
    of an address the loop does not move): two values with one key are equal in every
    iteration; None when the loop may change it."""
    if not defined_inside(value, loop):
        return ("value", value)
    literal = integer_literal(value)
    if literal is not None:
        return ("literal", literal)
    load = value.owner
    if isinstance(load, uop.LoadOp):
        address = loop_address(load.ptr, loop)
        if address is not None and address[1][0] == 0:
            return ("load", address)
    return None


INDEX_OPS = (uop.ConstOp, uop.AddOp, uop.SubOp, uop.MulOp)
"""The ops an index is computed with (what a loop body holds beside its steps)."""


def holds_only(loop: uop.RangeOp, taken: Iterable[Operation], any_gep: bool = False) -> bool:
    """Whether the body of `loop` holds nothing but the ops in `taken` (those a pass folds into
    one op: its steps, their epilogues and stores, the geps it reads through), index arithmetic
    (`INDEX_OPS`) and, with `any_gep`, geps of any address (ones the folded op recomputes from
    its own strides); so that erasing the loop loses nothing else."""
    taken = set(taken)
    kinds = (*INDEX_OPS, uop.EndRangeOp, *((uop.GepOp,) if any_gep else ()))
    return all(op in taken or isinstance(op, kinds) for op in loop.body.block.ops)
