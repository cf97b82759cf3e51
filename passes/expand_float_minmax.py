"""`expand-float-minmax`: a float `uop.max` / `uop.min` against a literal that is not NaN becomes
one compare and one select.

    %r = uop.max %x, %c : f32        (%c = uop.const 0.0 : f32, a Relu or Clip bound)
  → %lt = uop.cmplt %x, %c : f32
    %r = uop.where %lt, %c, %x : f32

    %r = uop.min %x, %c : f32
  → %gt = uop.cmplt %c, %x : f32
    %r = uop.where %gt, %c, %x : f32

`uop.max` and `uop.min` propagate NaN. With a non-NaN literal only `%x` can be NaN, and then the
compare is false and `%x` (the NaN) is the result: the same value as the NaN-tested form, in one
compare and one select (the printer's general form tests both operands for NaN). A signed zero
compares equal to the other, so `%x` is returned, as before.

Scalars only: uop compares and `uop.where` take a scalar condition, so a vector clamp keeps its
`uop.max` / `uop.min` (lane-wise compare and select are not in the dialect yet).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import AnyFloat, FloatAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.ir import SSAValue

from zant.dialects import uop


def _number_literal(value: SSAValue) -> bool:
    attr = uop.constant_of(value)
    return isinstance(attr, FloatAttr) and attr.value.data == attr.value.data


def _clamp_operands(op: uop.MaxOp | uop.MinOp) -> tuple[SSAValue, SSAValue] | None:
    """(the value, the non-NaN literal bound) of a scalar float max/min, or None."""
    if not isinstance(op.result.type, AnyFloat):
        return None
    if _number_literal(op.rhs):
        return op.lhs, op.rhs
    if _number_literal(op.lhs):
        return op.rhs, op.lhs
    return None


class ExpandMaxAgainstLiteral(RewritePattern):
    """`max(x, c)` → `where(x < c, c, x)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: uop.MaxOp, rewriter: PatternRewriter) -> None:
        operands = _clamp_operands(op)
        if operands is None:
            return
        value, bound = operands
        below = uop.CmpltOp(value, bound)
        rewriter.replace(op, [below, uop.WhereOp(below, bound, value)])


class ExpandMinAgainstLiteral(RewritePattern):
    """`min(x, c)` → `where(c < x, c, x)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: uop.MinOp, rewriter: PatternRewriter) -> None:
        operands = _clamp_operands(op)
        if operands is None:
            return
        value, bound = operands
        above = uop.CmpltOp(bound, value)
        rewriter.replace(op, [above, uop.WhereOp(above, bound, value)])


@dataclass(frozen=True)
class ExpandFloatMinmaxPass(ModulePass):
    """Rewrite scalar float max/min against a non-NaN literal as compare and select."""

    name = "expand-float-minmax"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([ExpandMaxAgainstLiteral(), ExpandMinAgainstLiteral()])
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
