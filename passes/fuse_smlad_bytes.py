"""`fuse-smlad-bytes`: a word's two `SXTB16` and the two `SMLAD` that read them become one
`arm_dsp.smlad_bytes`.

After `arm-dsp-dot`, each int8 word `w` of a dot product is widened and accumulated as

    %we = arm_dsp.sxtb16 %w : i32
    %wo = arm_dsp.sxtb16 %w ror 8 : i32                %r = arm_dsp.smlad_bytes %xe, %xo, %w, %c : i32
    %s = arm_dsp.smlad %xe, %we, %c : i32        →
    %r = arm_dsp.smlad %xo, %wo, %s : i32

where `%xe`, `%xo` are the halves of the other operand (the input word shared by a tile's rows).
The fused op is the same four instructions through one scratch register, printed as one
inline-assembly block: LLVM's scheduler then cannot widen the weight words of several rows
ahead of their `SMLAD` (on the Cortex-M4 that held ~8 more values live and spilled accumulators
of an unrolled dot loop). Exact: the same products and wrapping sums, in the same order.

Taken when `%we` and `%wo` are read only by these two `SMLAD` and `%s` only by the second; either
operand of the `SMLAD` may be the word's. Run it after `arm-dsp-dot` (and `interleave-dot-rows`,
which reads the word loads, not these ops).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from zant.dialects import arm_dsp
from zant.ir.locations import locate
from zant.ir.walk import ops_of


def _widened(value: SSAValue, rotation: int) -> arm_dsp.Sxtb16Op | None:
    """The `sxtb16 … ror rotation` that alone makes `value` for one reader, or None."""
    owner = value.owner
    if isinstance(owner, arm_dsp.Sxtb16Op) and owner.rotation == rotation and value.uses.get_length() == 1:
        return owner
    return None


def fuse_word_smlads(second: arm_dsp.SmladOp) -> None:
    """smlad(xo, sxtb16(w ror 8), smlad(xe, sxtb16(w), c)) → smlad_bytes(xe, xo, w, c)."""
    first = second.addend.owner
    if not isinstance(first, arm_dsp.SmladOp) or first.result.uses.get_length() != 1:
        return
    for word_side in (1, 0):  # whichever side's halves are single-use: the word's
        even, odd = _widened(first.operands[word_side], 0), _widened(second.operands[word_side], 8)
        if even is None or odd is None or even.input != odd.input:
            continue
        other = 1 - word_side
        fused = arm_dsp.SmladBytesOp(first.operands[other], second.operands[other], even.input, first.addend)
        locate([fused], second.location)
        Rewriter.replace_op(second, fused)
        for dead in (first, even, odd):
            Rewriter.erase_op(dead)
        return


@dataclass(frozen=True)
class FuseSmladBytesPass(ModulePass):
    """Each int8 word's two SXTB16 and two SMLAD as one `arm_dsp.smlad_bytes`."""

    name = "fuse-smlad-bytes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # One pass over the SMLADs in order, not a pattern walker: its worklist holds every op of
        # the module (38 ms of ResNet-8's compile for the Cortex-M4, which has no SMLAD). A
        # second's `first` comes before it and is erased only once visited.
        for second in ops_of(op, arm_dsp.SmladOp):
            if second.parent is not None:
                fuse_word_smlads(second)
