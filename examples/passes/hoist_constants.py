"""An out-of-tree pass for Zant: hoist `uop.const` out of `uop.range` loops.

It shows what a researcher's pass needs and nothing more: a `ModulePass` subclass with a
kebab-case `name`, defined in a plain Python file that Zant loads at run time:

    zant-opt model.onnx --load-passes examples/passes/hoist_constants.py \
        -p 'fold-constants,onnx-to-uop,example-hoist-constants,plan-arenas,linearize-geps' -t zig
    zant compile model.onnx --load-passes examples/passes/hoist_constants.py \
        --pipeline 'fold-constants,onnx-to-uop,example-hoist-constants,plan-arenas,verify-arena-plan,fold-constant-loads,mark-inbounds,contract-mulacc,expand-float-minmax,linearize-geps'

The transformation itself is real and small: a literal defined inside a loop body is the same on
every iteration, so it moves in front of the loop (out of each enclosing loop in turn). The
generated Zig then declares it once instead of in every iteration's scope.

Its FileCheck test is tests/filecheck/examples/hoist-constants.mlir.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from zant.dialects import uop


class HoistConstantOutOfLoop(RewritePattern):
    """Move a `uop.const` from a loop body to just before that loop."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: uop.ConstOp, rewriter: PatternRewriter) -> None:
        loop = op.parent_op()
        if not isinstance(loop, uop.RangeOp):
            return
        op.detach()
        rewriter.insert(op, InsertPoint.before(loop))


@dataclass(frozen=True)
class HoistConstantsPass(ModulePass):
    """Hoist every loop-invariant literal out of all its enclosing loops."""

    name = "example-hoist-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # apply_recursively: a hoisted constant is revisited and climbs out of the next loop too.
        PatternRewriteWalker(HoistConstantOutOfLoop(), apply_recursively=True).rewrite_module(op)
