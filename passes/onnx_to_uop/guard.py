"""Guard (Zant's own op): NAME_predict returns STATUS_BAD_PARAMETER where Condition is false.

The control-flow unroller makes it of a Loop whose trip count is only known at run time: the
loop is unrolled for the extent its scan outputs declare, and guarded by "the loop runs exactly
that many times" (what the trip count and the initial condition say, before the copies of the
body; what the conditions the body computes say, after them). The lowering loads the
one-element Condition and `abi.check`s it where the op is.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Operation

from zant.dialects.onnx import GuardOp, inputs
from zant.passes.onnx_to_uop.base import OnnxLowering
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, layout_of
from zant.passes.onnx_to_uop.parameters import check


class GuardLowering(OnnxLowering):
    op_names = frozenset({GuardOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        (condition,) = inputs(op)
        assert condition is not None
        holds = layout_of(condition)
        loaded = kb.load(holds, [kb.index(0)] * holds.rank if holds.rank else [])
        check(kb, kb.cast(loaded, IntegerType(1)))
        return []


PATTERNS = (GuardLowering(),)
