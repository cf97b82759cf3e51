"""`arm-dsp-tile-rows`: a row of requantized 2 x 2 register tiles as one `arm_dsp.smlad_tile_row`.

A pointwise Conv's tiles over a channels-last X (`conv_columns._pointwise_channels_last`) are,
once `arm-dsp-tile-loops` made each reduction one `arm_dsp.smlad_tile` and `arm-dsp-requant-sums`
each epilogue one SMMLA and one SSAT, a loop over the pixel pairs of one pair of output channels:

    uop.range %q = 0 to Q {
      c_ij = bias[m + i]                                  (acc_set of loads the loop does not move)
      %r00, %r10, %r01, %r11 = arm_dsp.smlad_tile &W[m], &X[… + q·b_pair], c00, c10, c01, c11
      Y[… + q·y_pair + i·y_next + j·y_pixel] = int8(ssat(smmla(r_ij, mult[m + i], C), 8, H))
    }
        →
    arm_dsp.smlad_tile_row &W[m], &X[…], &Y[…], bias[m], bias[m + 1], mult[m], mult[m + 1] {…}

The op is the whole loop in one asm block (`zant_smlad_tile_row`). LLVM compiled the loop
around `smlad_tile`'s 13-register assembly with a dozen spills and reloads and the epilogue's
addresses recomputed each tile: VWW's 8 -> 16 channel layer on the L4R5 took ~100 cycles a tile
(32 products), 40 of them the reduction. In the asm the biases, multipliers, Y's pointer and X's
end live on the stack, reloaded once a tile.

Taken where the reduction is straight-line (at most `arm_dsp.SMLAD_TILE_STRAIGHT` steps: up to
32 input channels), one operand's address does not move with the loop (the channels': a_i,
with bias and multiplier alike for its two sums) and the other moves by a constant (the
pixels'), the four outputs are int8 stores at one affine address plus constants (a ReLU at
-128 on the way is nothing), the SMMLA addend and SSAT shift are literals shared by the four,
and the loop holds nothing else. The loads it hoists (biases, multipliers) read buffers the
loop does not write. Exact: the same instructions on the same values in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from zant.analysis.loop_values import holds_only, loop_address, loop_invariant
from zant.dialects import arm_dsp, uop
from zant.ir.walk import ops_of
from zant.passes.arm_dsp_requant import int8_store_of
from zant.passes.arm_dsp_tile_loops import LOAD_OFFSETS, fold_row

IMMEDIATE = range(1, 4096)
"""The advances per tile the asm adds as immediates (`ADDW`)."""


@dataclass
class _Sum:
    """One of the tile's four sums, from its bias to its store."""

    init: SSAValue  # the value the accumulator starts from (a bias)
    multiplier: SSAValue
    addend: int
    shift: int
    store: uop.StoreOp
    ops: list[Operation]  # the ops of the body it alone takes


def _follow(tile: arm_dsp.SmladTileOp, k: int, body: list[Operation], loop: uop.RangeOp) -> _Sum | None:
    """Sum k of the tile (r00, r10, r01, r11) from its accumulator's start to its store."""
    get = tile.operands[2 + k].owner
    result = tile.results[k]
    if not isinstance(get, uop.AccGetOp) or get.result.uses.get_length() != 1:
        return None
    acc = get.acc
    define = acc.owner
    uses = [u.operation for u in acc.uses]
    sets = [op for op in uses if isinstance(op, uop.AccSetOp)]
    gets = [op for op in uses if isinstance(op, uop.AccGetOp)]
    if not isinstance(define, uop.DefineAccOp) or define not in body or len(sets) != 2 or len(gets) != 2 or len(uses) != 4:
        return None
    init, final = sorted(sets, key=body.index)
    after = next(op for op in gets if op is not get)
    if not (body.index(init) < body.index(get) < body.index(tile) < body.index(final) < body.index(after)):
        return None
    if final.value is not result or result.uses.get_length() != 1:
        return None
    chain = int8_store_of(after.result)
    if chain is None:
        return None
    return _Sum(init.value, chain.multiplier, chain.addend, chain.shift, chain.store, [define, init, get, final, after, *chain.ops])


def match_row(tile: arm_dsp.SmladTileOp) -> arm_dsp.SmladTileRowOp | None:
    """The op that replaces the loop around `tile` (module docstring), its operands computed
    before the loop and the loop erased; None, unchanged, where the loop is not such a row."""
    loop = tile.parent_op()
    if not isinstance(loop, uop.RangeOp) or loop.start.data != 0 or loop.step.data != 1 or loop.end.data < 1:
        return None
    if tile.steps.data > arm_dsp.SMLAD_TILE_STRAIGHT:
        return None
    body = [op for op in loop.body.block.ops if not isinstance(op, uop.EndRangeOp)]
    sums = [_follow(tile, k, body, loop) for k in range(4)]
    if any(s is None for s in sums):
        return None
    operands = [loop_address(tile.pa, loop), loop_address(tile.pb, loop)]
    if any(a is None for a in operands):
        return None
    (a_source, (a_moves, _, _)), (b_source, (b_moves, _, _)) = operands  # type: ignore[misc]
    a_props = (tile.a_step.data, tile.a_next.data)
    b_props = (tile.b_step.data, tile.b_next.data)
    order = [0, 1, 2, 3]  # r_ij as (i, j): (0, 0), (1, 0), (0, 1), (1, 1)
    fixed, moving = tile.pa, tile.pb
    if a_moves and not b_moves:  # the channels are b's: the tile transposed
        a_props, b_props, fixed, moving, b_moves = b_props, a_props, tile.pb, tile.pa, a_moves
        order = [0, 2, 1, 3]
    elif a_moves or not b_moves:
        return None
    s00, s10, s01, s11 = (sums[k] for k in order)  # type: ignore[misc]
    inits = [loop_invariant(s.init, loop) for s in (s00, s10, s01, s11)]  # type: ignore[union-attr]
    mults = [loop_invariant(s.multiplier, loop) for s in (s00, s10, s01, s11)]  # type: ignore[union-attr]
    if None in inits or None in mults or inits[0] != inits[2] or inits[1] != inits[3] or mults[0] != mults[2] or mults[1] != mults[3]:
        return None
    if len({(s.addend, s.shift) for s in sums}) != 1:  # type: ignore[union-attr]
        return None
    places = [loop_address(s.store.ptr, loop) for s in (s00, s10, s01, s11)]  # type: ignore[union-attr]
    if any(p is None for p in places) or len({(p[0], p[1][0], p[1][1]) for p in places}) != 1:  # type: ignore[index]
        return None
    target = places[0][0]  # type: ignore[index]
    y_pair = places[0][1][0]  # type: ignore[index]
    c = [p[1][2] for p in places]  # type: ignore[index]
    y_next, y_pixel = c[1] - c[0], c[2] - c[0]
    if c[3] - c[0] != y_next + y_pixel:
        return None
    # The hoisted loads read what the loop does not write; the asm's immediates fit.
    hoisted = [v.owner for s in (s00, s10) for v in (s.init, s.multiplier) if isinstance(v.owner, uop.LoadOp)]  # type: ignore[union-attr]
    if any(isinstance(l.ptr.owner, uop.GepOp) and l.ptr.owner.source is target for l in hoisted):  # type: ignore[union-attr]
        return None
    if not (b_moves in IMMEDIATE and y_pair in IMMEDIATE and arm_dsp.stores_in_reach(y_next, y_pixel)):
        return None
    steps = tile.steps.data
    offsets = [i * a_props[0] + d for i in range(steps) for d in (0, a_props[1])]
    offsets += [i * b_props[0] + d for i in range(steps) for d in (0, b_props[1])]
    if any(o not in LOAD_OFFSETS for o in offsets):
        return None
    # Every other op of the body is index arithmetic, a gep, or a load only the matched ops read.
    loads = [v.owner for s in sums for v in (s.init, s.multiplier) if isinstance(v.owner, uop.LoadOp)]  # type: ignore[union-attr]
    if not holds_only(loop, [tile, *(op for s in sums for op in s.ops), *loads], any_gep=True):  # type: ignore[union-attr]
        return None
    return fold_row(
        loop, arm_dsp.SmladTileRowOp, (fixed, moving, s00.store.ptr), (s00.init, s10.init), (s00.multiplier, s10.multiplier),  # type: ignore[union-attr]
        steps=steps, a_step=a_props[0], a_next=a_props[1], b_step=b_props[0], b_next=b_props[1], pairs=loop.end.data,
        b_pair=b_moves, y_pair=y_pair, y_next=y_next, y_pixel=y_pixel, addend=sums[0].addend, shift=sums[0].shift,  # type: ignore[union-attr]
    )


@dataclass(frozen=True)
class ArmDspTileRowsPass(ModulePass):
    """Each loop of requantized 2 x 2 tiles along a row of pixel pairs as one
    `arm_dsp.smlad_tile_row`."""

    name = "arm-dsp-tile-rows"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for tile in ops_of(op, arm_dsp.SmladTileOp):
            if tile.parent is not None:
                match_row(tile)


__all__ = ["ArmDspTileRowsPass", "IMMEDIATE", "match_row"]
