"""`coalesce-loops`: a loop over rows whose whole body is a loop over whole rows becomes one
loop over every element, when the addresses allow it.

`-p coalesce-loops` (no options; the host pipeline runs it before `split-index-sets` and
`vectorize`, which then see one long unit-stride loop)

A loop whose whole body is a loop over whole rows (from 0, step 1) is merged with it when every
address moves by one row length per outer step, the outer index becoming 0 and the inner one
running over all the elements; short image rows (a 1×1 Conv or an element-wise op over 25×5)
then make one long vector loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from zant.analysis.vectorization import nested_ops, view_strides
from zant.dialects import uop


def affine_coefficients(iv: SSAValue, block: Block) -> dict[SSAValue, int] | None:
    """Elements per unit of `iv` of every index value and gep in `block` that depends on it,
    or None if `iv` reaches anything but affine index ops (add, sub, mul by a constant) and
    gep indices."""
    coefficient = {iv: 1}
    geps: dict[SSAValue, int] = {}
    for op in nested_ops(block):
        if not any(v in coefficient for v in op.operands):
            continue
        short = op.name.removeprefix("uop.")
        if isinstance(op, uop.GepOp):
            strides = view_strides(op.source)
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
    for op in nested_ops(inner.body.block):
        if isinstance(op, uop.GepOp):
            if outer_coefficients.get(op.result, 0) != row * inner_coefficients.get(op.result, 0):
                return None
    merged = uop.RangeOp(outer.start.data * row, outer.end.data * row)
    merged.induction_var.name_hint = inner.induction_var.name_hint
    zero = uop.ConstOp(0, IndexType())
    merged.location = zero.location = outer.location
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
class CoalesceLoopsPass(ModulePass):
    """Merge loop nests over whole rows into one loop (see the module docstring)."""

    name = "coalesce-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        coalesce_all(op)
