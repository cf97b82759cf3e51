"""`arm-dsp-block-rows`: a row of requantized 4 x 2 register blocks as one `arm_dsp.smlad_block_row`
(or, the block's operands exchanged, as one `arm_dsp.smlad_quad_row`: `match_quad_row`).

The first convs' blocks (`conv_first`: 4 output channels x a pixel pair over a column of int16
pairs), once `arm-dsp-requant-sums` made each epilogue one SMMLA and one SSAT, are a loop over
the pixel pairs of one block of output channels:

    uop.range %q = 0 to Q {
      %r00, %r01 … %r31 = arm_dsp.smlad_block &col[q·a_pair], &W''[m], 0, … 0
      Y[… + q·y_pair + i·y_next + j·y_pixel] = int8(ssat(smmla(r_ij + bias[m + i], mult[m + i], C), 8, H))
    }
        →
    arm_dsp.smlad_block_row &col[0], &W''[m], &Y[…], bias[m] … bias[m + 3], mult[m] … mult[m + 3] {…}

The op is the whole loop in one asm block (`zant_smlad_block_row`). The block's assembly takes
14 registers, every one LLVM has: around it the compiled loop spilled and reloaded the sums'
biases, the multipliers and Y's addresses, ~130 cycles a pixel pair on VWW's first conv beside
the block's ~230. In the asm they live on the stack, read once a block.

Taken where the block's addends are 0 and each sum's only use is the add of its channel's
bias (a value the loop does not change, the same for both pixels), then SMMLA by the channel's
multiplier (likewise) and a literal addend, SSAT to 8 bits by a literal shift (the addend and
shift one for all 8), an int8 cast (a ReLU at -128 after it is nothing) and a store at one affine
address plus constants; the column's pointer moves by a constant per pair, the weights' does
not, and the loop holds nothing else. Exact: int32 sums wrap, so a sum started at the bias is
the sum with the bias added after.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from zant.analysis.loop_values import holds_only, integer_literal, loop_address, loop_invariant, only_use
from zant.dialects import arm_dsp, uop
from zant.ir.walk import ops_of
from zant.passes.arm_dsp_requant import int8_store_of
from zant.passes.arm_dsp_tile_loops import LOAD_OFFSETS, fold_row
from zant.passes.arm_dsp_tile_rows import IMMEDIATE

ROWS = arm_dsp.SMLAD_BLOCK_ROWS


@dataclass
class _Sum:
    """One of the block's 8 sums, from its bias add to its store."""

    bias: SSAValue
    multiplier: SSAValue
    addend: int
    shift: int
    store: uop.StoreOp
    ops: list[Operation]  # the ops of the body it alone takes


def _follow(result: SSAValue) -> _Sum | None:
    add = only_use(result, uop.AddOp)
    if add is None:
        return None
    bias = add.operands[1] if add.operands[0] is result else add.operands[0]
    chain = int8_store_of(add.result)
    if chain is None:
        return None
    return _Sum(bias, chain.multiplier, chain.addend, chain.shift, chain.store, [add, *chain.ops])


@dataclass
class _Row:
    """What both row forms take from the loop around one block: its 8 sums (row-major, k = 2i +
    j), pa's and pb's addresses per iteration (`loop_address`), Y's, and the sums' stores as a
    grid: sum 2i + j stored at i·row_step + j·column_step from sum 0's."""

    loop: uop.RangeOp
    sums: list[_Sum]
    pa: tuple
    pb: tuple
    y_step: int
    row_step: int
    column_step: int


def _row_of(block: arm_dsp.SmladBlockOp, owner: Callable[[int], int]) -> _Row | None:
    """The loop around `block` as a row of requantized blocks (module docstring), where sum k's
    bias and multiplier are sum `owner(k)`'s (a row's for smlad_block_row, a column's for
    smlad_quad_row): values the loop does not change, one addend and shift for all 8, the stores
    a grid on one base, the hoisted loads reading nothing the loop writes, and the loop holding
    nothing else; None where it is not."""
    loop = block.parent_op()
    if not isinstance(loop, uop.RangeOp) or loop.start.data != 0 or loop.step.data != 1 or loop.end.data < 1:
        return None
    if any(integer_literal(a) != 0 for a in block.addends):
        return None
    followed = [_follow(r) for r in block.sums]
    if any(s is None for s in followed):
        return None
    sums: list[_Sum] = followed  # type: ignore[assignment]
    a, b = loop_address(block.pa, loop), loop_address(block.pb, loop)
    if a is None or b is None:
        return None
    biases = [loop_invariant(s.bias, loop) for s in sums]
    mults = [loop_invariant(s.multiplier, loop) for s in sums]
    if None in biases or None in mults or any(
        biases[k] != biases[owner(k)] or mults[k] != mults[owner(k)] for k in range(2 * ROWS)
    ):
        return None
    if len({(s.addend, s.shift) for s in sums}) != 1:
        return None
    places = [loop_address(s.store.ptr, loop) for s in sums]
    if any(p is None for p in places) or len({(p[0], p[1][0], p[1][1]) for p in places}) != 1:  # type: ignore[index]
        return None
    target, (y_step, _, first) = places[0]  # type: ignore[misc]
    offsets = [p[1][2] - first for p in places]  # type: ignore[index]
    if any(offsets[2 * i + j] != i * offsets[2] + j * offsets[1] for i in range(ROWS) for j in range(2)):
        return None
    # The hoisted loads read what the loop does not write; every other op of the body is index
    # arithmetic, a gep, or a load only the matched ops read.
    hoisted = [v.owner for s in sums for v in (s.bias, s.multiplier) if isinstance(v.owner, uop.LoadOp)]
    if any(isinstance(l.ptr.owner, uop.GepOp) and l.ptr.owner.source is target for l in hoisted):
        return None
    if not holds_only(loop, [block, *(op for s in sums for op in s.ops), *hoisted], any_gep=True):
        return None
    return _Row(loop, sums, a, b, y_step, offsets[2], offsets[1])


def _passes_fit(block: arm_dsp.SmladBlockOp, advance: int) -> bool:
    """Whether the row asm of `block` (`zant_smlad_block_steps_text`) reaches its words and moves
    its pointers by immediates: the moving pointer on by `advance` words a block (less the passes'
    own advance, which a loop of passes has made), the passes' advance and every load's offset
    within an LDR's reach."""
    steps = block.steps.data
    moved = 4 * advance - (0 if steps <= arm_dsp.SMLAD_TILE_STRAIGHT else 4 * steps)
    reach = 4 * (max(block.a_next.data, (ROWS - 1) * block.b_next.data) + steps)
    return abs(moved) < 4096 and 4 * steps < 4096 and reach in LOAD_OFFSETS


def match_row(block: arm_dsp.SmladBlockOp) -> arm_dsp.SmladBlockRowOp | None:
    """The op that replaces the loop around `block` (module docstring), its operands computed
    before the loop and the loop erased; None, unchanged, where the loop is not such a row."""
    row = _row_of(block, lambda k: k - k % 2)  # (i, j) = divmod(k, 2): channel i's bias
    if row is None or row.pb[1][0] != 0:
        return None
    a_pair, y_pair, y_next, y_pixel = row.pa[1][0], row.y_step, row.row_step, row.column_step
    steps, a_next, b_next = block.steps.data, block.a_next.data, block.b_next.data
    if not (y_pair in IMMEDIATE and a_pair > 0 and _passes_fit(block, a_pair) and arm_dsp.stores_in_reach(y_next, y_pixel)):
        return None
    sums = row.sums
    return fold_row(
        row.loop, arm_dsp.SmladBlockRowOp, (block.pa, block.pb, sums[0].store.ptr),
        [sums[2 * i].bias for i in range(ROWS)], [sums[2 * i].multiplier for i in range(ROWS)],
        steps=steps, a_next=a_next, b_next=b_next, pairs=row.loop.end.data, a_pair=a_pair, y_pair=y_pair, y_next=y_next,
        y_pixel=y_pixel, addend=sums[0].addend, shift=sums[0].shift,
    )


def match_quad_row(block: arm_dsp.SmladBlockOp) -> arm_dsp.SmladQuadRowOp | None:
    """The `arm_dsp.smlad_quad_row` that replaces the loop around `block` where its operands'
    roles are exchanged (`conv_columns._quads_of`: pa one pair of output channels' weight rows,
    fixed, pb a quad of pixels moving by a constant per iteration): as `match_row`, but each
    sum's bias and multiplier are its column's (the channel, pa's word j), the same for the 4
    rows (pixels); None, unchanged, where the loop is not such a row."""
    row = _row_of(block, lambda k: k % 2)  # (pixel r, channel k) = divmod(i, 2): channel k's bias
    if row is None or row.pa[1][0] != 0 or row.pb[1][0] <= 0:
        return None
    b_quad, y_quad, y_pixel, y_next = row.pb[1][0], row.y_step, row.row_step, row.column_step
    steps, a_next, b_next = block.steps.data, block.a_next.data, block.b_next.data
    if not (
        y_quad in IMMEDIATE and _passes_fit(block, b_quad)
        and all(o in LOAD_OFFSETS for o in ((ROWS - 1) * y_pixel, y_next))
    ):
        return None
    sums = row.sums
    return fold_row(
        row.loop, arm_dsp.SmladQuadRowOp, (block.pa, block.pb, sums[0].store.ptr),
        [sums[k].bias for k in range(2)], [sums[k].multiplier for k in range(2)],
        steps=steps, a_next=a_next, b_next=b_next, quads=row.loop.end.data, b_quad=b_quad, y_quad=y_quad, y_next=y_next,
        y_pixel=y_pixel, addend=sums[0].addend, shift=sums[0].shift,
    )


@dataclass(frozen=True)
class ArmDspBlockRowsPass(ModulePass):
    """Each loop of requantized 4 x 2 blocks along a row of pixel pairs as one
    `arm_dsp.smlad_block_row`."""

    name = "arm-dsp-block-rows"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for block in ops_of(op, arm_dsp.SmladBlockOp):
            if block.parent is not None and match_row(block) is None:
                match_quad_row(block)


__all__ = ["ArmDspBlockRowsPass", "match_quad_row", "match_row"]
