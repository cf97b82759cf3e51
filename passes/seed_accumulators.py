"""`seed-accumulators`: an integer accumulator that starts at 0 and has a constant added to its
sum starts at that constant instead.

    %acc = uop.define_acc 0 : i32                %acc = uop.define_acc 0 : i32
    (multiply-accumulates into %acc)             %p' = uop.gep inbounds %bias[%m] : …
    %s = uop.acc_get %acc : !uop.acc<i32>, i32   %b' = uop.load %p' : i32
    %p = uop.gep inbounds %bias[%m] : …     →    uop.acc_set %acc, %b' : !uop.acc<i32>, i32
    %b = uop.load %p : i32                       (multiply-accumulates into %acc)
    %t = uop.add %s, %b : i32                    %t = uop.acc_get %acc : !uop.acc<i32>, i32

The integer Convs' epilogue adds each output channel's bias to the sum (`onnx-to-uop`); seeded,
the bias is the accumulator's first value: no zero to set and no add per output (on a Cortex-M
two instructions of each output's ~8 after `mve-dot`). Exact: integer sums wrap modulo 2^32,
so adding the bias first or last gives the same value.

Taken when the acc_get is the accumulator's last use in its own block (every multiply-accumulate
before it), its value's only use is the add, and the other operand is a load through a gep of a
constant buffer (nothing writes it) whose index is computed before the accumulator is defined.
Run it after `linearize-geps` (geps of flat buffers).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects import uop
from zant.ir.locations import located
from zant.ir.walk import ops_of


def _available_at(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined before `op` in `op`'s block or one around it."""
    block: Block | None = value.block if isinstance(value, BlockArgument) else value.owner.parent_block()  # type: ignore[union-attr]
    ancestor: Operation | None = op
    while ancestor is not None and ancestor.parent_block() is not block:
        ancestor = ancestor.parent_op()
    if ancestor is None:
        return False
    return isinstance(value, BlockArgument) or value.owner.is_before_in_block(ancestor)  # type: ignore[union-attr]


def _constant_load(value: SSAValue) -> tuple[uop.GepOp, uop.LoadOp] | None:
    load = value.owner
    if not isinstance(load, uop.LoadOp):
        return None
    gep = load.ptr.owner
    if not isinstance(gep, uop.GepOp):
        return None
    source = gep.source.owner
    if not (isinstance(source, uop.DefineGlobalOp) and source.role.data == uop.BufferRole.CONSTANT):
        return None
    return gep, load


def _seed(acc: uop.DefineAccOp) -> bool:
    element_type = acc.result.type.element_type  # type: ignore[attr-defined]
    if not (isinstance(element_type, IntegerType) and isinstance(acc.init, IntegerAttr) and acc.init.value.data == 0):
        return False
    block = acc.parent_block()
    gets = [u.operation for u in acc.result.uses if isinstance(u.operation, uop.AccGetOp) and u.operation.parent_block() is block]
    if len(gets) != 1:
        return False
    get = gets[0]
    # Every other use (the multiply-accumulates) before the acc_get: it reads the final sum.
    for use in acc.result.uses:
        user = use.operation
        while user is not None and user.parent_block() is not block:
            user = user.parent_op()
        if user is None or (user is not get and not user.is_before_in_block(get)):
            return False
    if get.result.uses.get_length() != 1:
        return False
    add = next(iter(get.result.uses)).operation
    if not isinstance(add, uop.AddOp):
        return False
    addend = add.rhs if add.lhs is get.result else add.lhs
    found = _constant_load(addend)
    if found is None:
        return False
    gep, load = found
    if not all(_available_at(index, acc) for index in gep.indices):
        return False
    seed_gep = gep.clone()
    seed_load = uop.LoadOp(seed_gep)
    Rewriter.insert_op(located([seed_gep, seed_load, uop.AccSetOp(acc, seed_load)], add.location), InsertPoint.after(acc))
    add.results[0].replace_all_uses_with(get.result)
    Rewriter.erase_op(add)
    if not load.result.uses:
        Rewriter.erase_op(load)
        if not gep.result.uses:
            Rewriter.erase_op(gep)
    return True


@dataclass(frozen=True)
class SeedAccumulatorsPass(ModulePass):
    """Integer accumulators start at the constant added to their sum."""

    name = "seed-accumulators"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for acc in ops_of(op, uop.DefineAccOp):
            _seed(acc)
