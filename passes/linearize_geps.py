"""`linearize-geps`: every `uop.gep` through a view becomes a gep of the flat buffer behind it,
at one index computed with uop index arithmetic.

    %p = uop.gep %v[%i, %j, %k] : !uop.view<2x3x4xf32, strides [12, 0, 1], offset 5>
  → %a = uop.mul %i, %c12 : index
    %b = uop.add %a, %k : index
    %n = uop.add %b, %c5 : index
    %p = uop.gep %buf[%n] : !uop.buffer<24xf32>

The view's strides and offset are multiplied out in index order: a stride-0 (broadcast)
dimension drops its index, a stride-1 one adds it unmultiplied, constant indices fold into the
offset, which comes last (and alone when nothing else is left). `inbounds` is kept: the address
is the same. Views nothing uses any more are erased. A gep of a buffer (one flat index) is left
as it is. Run it last, after `mark-inbounds`: the printer then prints `buf[index]`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects import uop
from zant.ir.locations import locate
from zant.ir.walk import ops_of


def linear_index(gep: uop.GepOp) -> tuple[list[Operation], SSAValue]:
    """The ops computing `gep`'s flat element index (to insert before it) and that index."""
    strides, offset = gep.layout
    ops: list[Operation] = []
    total: SSAValue | None = None
    for index, stride in zip(gep.indices, strides):
        if stride == 0:
            continue
        literal = uop.constant_of(index)
        if literal is not None:
            offset += literal.value.data * stride
            continue
        term = index
        if stride != 1:
            factor = uop.ConstOp(stride, IndexType())
            product = uop.MulOp(index, factor)
            ops += [factor, product]
            term = product.result
        if total is None:
            total = term
        else:
            sum_op = uop.AddOp(total, term)
            ops.append(sum_op)
            total = sum_op.result
    if total is None or offset:
        literal_op = uop.ConstOp(offset, IndexType())
        ops.append(literal_op)
        if total is None:
            total = literal_op.result
        else:
            sum_op = uop.AddOp(total, literal_op)
            ops.append(sum_op)
            total = sum_op.result
    return ops, total


@dataclass(frozen=True)
class LinearizeGepsPass(ModulePass):
    """Rewrite every gep through a view as a gep of its buffer at one linear index."""

    name = "linearize-geps"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        views = set()
        for gep in ops_of(op, uop.GepOp):
            view = gep.source.owner
            if not isinstance(gep.source.type, uop.ViewType):
                continue
            ops, index = linear_index(gep)
            flat = uop.GepOp(gep.buffer, [index], inbounds=gep.inbounds is not None)
            locate([*ops, flat], gep.location)
            Rewriter.insert_op(ops, InsertPoint.before(gep))
            Rewriter.replace_op(gep, flat)
            views.add(view)
        for view in views:
            if isinstance(view, uop.ViewOp) and not view.result.uses:
                Rewriter.erase_op(view)
