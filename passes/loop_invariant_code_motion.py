"""`licm`: loop-invariant code motion for `uop.range` (and `scf.for`) loops.

xDSL's own `licm` visits `scf.for` only; this pass replaces it under the same name and visits
every op with the `LoopLike` trait as well. An op moves out of a loop body when it has no memory
effects, is speculatable (the loop may run zero times: integer `uop.div` / `uop.rem` by a value
that may be 0 stay) and uses no value defined in the body. Inner loops go first, so an op
invariant in a whole nest climbs to the outermost loop it does not depend on.

    uop.range %i = 0 to 4 {                       %c = uop.const 2.0 : f32
      %c = uop.const 2.0 : f32             →      %k = uop.mul %c, %c : f32
      %k = uop.mul %c, %c : f32                   uop.range %i = 0 to 4 {
      …                                             …
"""

from __future__ import annotations

from collections import deque

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator, is_side_effect_free, is_speculatable
from xdsl.transforms.loop_invariant_code_motion import can_be_hoisted

from zant.dialects.uop import LoopLike


def _loop_body(op: Operation) -> Region | None:
    if (trait := op.get_trait(LoopLike)) is not None:
        return trait.body(op)
    if isinstance(op, scf.ForOp):
        return op.body
    return None


def hoist_invariants(loop: Operation, body: Region, rewriter: PatternRewriter) -> None:
    """Move the invariant, effect-free, speculatable ops of `body` in front of `loop`; the users
    of a moved op are looked at again, since they may have become invariant."""
    worklist = deque(op for block in body.blocks for op in block.ops)
    while worklist:
        op = worklist.popleft()
        if op.parent_region() is not body or op.has_trait(IsTerminator):
            continue
        if not (is_side_effect_free(op) and is_speculatable(op) and can_be_hoisted(op, body)):
            continue
        op.detach()
        rewriter.insert_op(op, InsertPoint.before(loop))
        worklist.extend(
            use.operation for result in op.results for use in result.uses
            if use.operation.parent_region() is body
        )


class HoistLoopInvariants(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if (body := _loop_body(op)) is not None:
            hoist_invariants(op, body, rewriter)


class LoopInvariantCodeMotionPass(ModulePass):
    """Moves effect-free, speculatable ops that use no value of a loop's body out of the loop."""

    name = "licm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            HoistLoopInvariants(), apply_recursively=False, walk_regions_first=True
        ).rewrite_module(op)
