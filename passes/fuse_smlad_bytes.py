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

A word whose halves are each read by exactly two such chains (a register tile's two pixels,
`conv_columns`: one weight word for both) becomes one `arm_dsp.smlad_bytes_pair` of both chains,
the word widened once, placed where the later chain ended; the earlier chain's result is read by
its accumulator's `acc_set` only, which moves after the pair (nothing touches that accumulator in
between). Exact: each sum gets the same products in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects import arm_dsp, uop
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


def _chain(first: Operation, even: arm_dsp.Sxtb16Op) -> tuple[arm_dsp.SmladOp, arm_dsp.SmladOp, int] | None:
    """(first, second, side): `second = smlad(·, ·, first)` with `even` on `side` of `first`
    and the word's odd half on the same side of `second`; None otherwise."""
    if not isinstance(first, arm_dsp.SmladOp) or first.addend is even.result:
        return None
    sides = [i for i in (0, 1) if first.operands[i] is even.result]
    if len(sides) != 1 or first.result.uses.get_length() != 1:
        return None
    second = next(iter(first.result.uses)).operation
    if not isinstance(second, arm_dsp.SmladOp) or second.addend is not first.result:
        return None
    odd = second.operands[sides[0]].owner
    if not (isinstance(odd, arm_dsp.Sxtb16Op) and odd.rotation == 8 and odd.input == even.input):
        return None
    return first, second, sides[0]


def fuse_word_pair(even: arm_dsp.Sxtb16Op) -> None:
    """Two chains smlad(xo_k, sxtb16(w ror 8), smlad(xe_k, sxtb16(w), c_k)), k = 0, 1, whose
    halves nothing else reads → one smlad_bytes_pair (module docstring)."""
    if even.rotation != 0 or even.result.uses.get_length() != 2:
        return
    chains = [_chain(use.operation, even) for use in even.result.uses]
    if any(c is None for c in chains) or chains[0][0] is chains[1][0]:  # type: ignore[index]
        return
    block = even.parent_block()
    ops = [op for chain in chains for op in chain[:2]]  # type: ignore[misc]
    if block is None or any(op.parent_block() is not block for op in ops):
        return
    odd = chains[0][1].operands[chains[0][2]].owner  # type: ignore[index]
    if chains[1][1].operands[chains[1][2]].owner is not odd or odd.result.uses.get_length() != 2:  # type: ignore[index, union-attr]
        return
    position = {op: i for i, op in enumerate(block.ops)}
    chains.sort(key=lambda c: position[c[1]])  # type: ignore[index]
    (first0, second0, side0), (first1, second1, side1) = chains  # type: ignore[misc]
    # The earlier chain's sum feeds its accumulator's acc_set alone, with nothing touching that
    # accumulator between it and the later chain's end: it moves after the pair.
    uses = [use.operation for use in second0.result.uses]
    if len(uses) != 1 or not isinstance(uses[0], uop.AccSetOp) or uses[0].parent_block() is not block:
        return
    acc_set = uses[0]
    between = [op for op in block.ops if position[acc_set] < position[op] < position[second1]]
    if any(isinstance(op, uop.AccGetOp | uop.AccSetOp) and op.acc is acc_set.acc for op in between):
        return
    pair = arm_dsp.SmladBytesPairOp(
        first0.operands[1 - side0], second0.operands[1 - side0], first1.operands[1 - side1],
        second1.operands[1 - side1], even.input, first0.addend, first1.addend,
    )
    locate([pair], second1.location)
    Rewriter.insert_op(pair, InsertPoint.before(second1))
    acc_set.detach()
    Rewriter.insert_op(acc_set, InsertPoint.after(pair))
    second0.result.replace_all_uses_with(pair.result0)
    second1.result.replace_all_uses_with(pair.result1)
    for dead in (second1, second0, first1, first0, odd, even):
        Rewriter.erase_op(dead)


@dataclass(frozen=True)
class FuseSmladBytesPass(ModulePass):
    """Each int8 word's two SXTB16 and two SMLAD as one `arm_dsp.smlad_bytes` (or, read by
    two sums, four SMLAD as one `arm_dsp.smlad_bytes_pair`)."""

    name = "fuse-smlad-bytes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # One pass over the SMLADs in order, not a pattern walker: its worklist holds every op of
        # the module (38 ms of ResNet-8's compile for the Cortex-M4, which has no SMLAD). A
        # second's `first` comes before it and is erased only once visited.
        for even in ops_of(op, arm_dsp.Sxtb16Op):
            if even.parent is not None:
                fuse_word_pair(even)
        for second in ops_of(op, arm_dsp.SmladOp):
            if second.parent is not None:
                fuse_word_smlads(second)
