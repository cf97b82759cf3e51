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

Vectors too, against a splat of such a literal (`uop.broadcast` of a `uop.const`), lane by lane:

    %r = uop.max %x, %s : vector<8xf32>       (%s = uop.broadcast %c : f32 to vector<8xf32>)
  → %lt = uop.cmplt %x, %s : vector<8xf32>
    %r = uop.where %lt, %s, %x : vector<8xi1>, vector<8xf32>

which the Zig printer spells `@select(f32, x < s, s, x)` (one maxps/minps on x86): a NaN lane of
`%x` fails its compare and is kept, as the NaN-propagating `zant_vfmax` would.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import AnyFloat, FloatAttr, ModuleOp, VectorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.ir import SSAValue

from zant.dialects import uop
from zant.ir.locations import located
from zant.ir.walk import ops_of


def _number_literal(value: SSAValue) -> bool:
    """A float literal that is not NaN, or (for a vector) a broadcast of one."""
    if isinstance(value.type, VectorType):
        owner = value.owner
        if not isinstance(owner, uop.BroadcastOp):
            return False
        value = owner.input
    attr = uop.constant_of(value)
    return isinstance(attr, FloatAttr) and attr.value.data == attr.value.data


def _clamp_operands(op: uop.MaxOp | uop.MinOp) -> tuple[SSAValue, SSAValue] | None:
    """(the value, the non-NaN literal bound) of a scalar or vector float max/min, or None."""
    if not isinstance(uop.lane_type(op.result.type), AnyFloat):
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
        rewriter.replace(op, located([below, uop.WhereOp(below, bound, value)], op.location))


class ExpandMinAgainstLiteral(RewritePattern):
    """`min(x, c)` → `where(c < x, c, x)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: uop.MinOp, rewriter: PatternRewriter) -> None:
        operands = _clamp_operands(op)
        if operands is None:
            return
        value, bound = operands
        above = uop.CmpltOp(bound, value)
        rewriter.replace(op, located([above, uop.WhereOp(above, bound, value)], op.location))


@dataclass(frozen=True)
class ExpandFloatMinmaxPass(ModulePass):
    """Rewrite scalar (and vector) float max/min against a non-NaN literal (a splat of one) as
    compare and select."""

    name = "expand-float-minmax"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # One walk over a snapshot of the max/min ops: a rewrite creates no new max/min, so
        # the greedy walker's worklist over every op of the module (MobileNetV2: 0.34 s of CPU)
        # has nothing more to find.
        patterns = GreedyRewritePatternApplier([ExpandMaxAgainstLiteral(), ExpandMinAgainstLiteral()])
        for minmax in ops_of(op, (uop.MaxOp, uop.MinOp)):
            patterns.match_and_rewrite(minmax, PatternRewriter(minmax))
