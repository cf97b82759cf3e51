"""`unroll-dot-loops`: a Cortex-M DSP dot-product loop runs F of its steps per iteration.

After `arm-dsp-dot` (and `fuse-smlad-bytes`), the innermost loop of an int8 Gemm or Conv tile
does 16 multiply-accumulates per step (4 rows × one word) in ~23 instructions, plus the loop's
own: the counter, the compare and branch, and the address arithmetic LLVM does not strength-reduce
into post-incremented pointers (on the Cortex-M4, 4–6 more per step: 1.9 instructions per MAC for
the autoencoder's dense layers). Unrolled, the steps' addresses become immediate offsets of one
base and the overhead is paid once per F steps:

    uop.range %k = 0 to 128 step 4 {             uop.range %k = 0 to 128 step 32 {
      (body of %k)                        →        (body of %k)
    }                                              %k1 = uop.add %k, 4 : index
                                                   (body of %k1)   … up to %k7 = %k + 28
                                                 }

F is the largest power of two up to `max-factor` that divides the trip count and leaves at
least `min-trips` iterations: measured on the Cortex-M4, a dot loop left with 2 longer
iterations (KWS' 64-channel pointwise layers unrolled by 8) got slower than by 4, which LLVM
schedules without spilling; 8 suits the autoencoder's 128- and 640-long rows. Three
iterations are enough: ResNet-8's 16-channel 3x3 layers reduce runs of 3·16 = 48 (12 steps),
which by 4 instead of 2 took ic_int8 on the L4R5 from 27,440,442 to 25,478,512 cycles (LLVM
paired the loads of 2 steps into LDRDs and spilled). A loop of
`smlad_bytes_pair` steps (a 2 x 2 register tile: twice a `smlad_bytes` step's code) takes at
most `pair-max-factor` (4): by 8, VWW's 128- and 256-channel pointwise nests (1.3 KB with their
requantization) outgrew the 1 KB instruction cache of the STM32L4's flash accelerator and
waited for flash on every pass (vww_int8 on the NUCLEO-L4R5ZI: 25.29 M -> 22.97 M cycles by
4). Exact: the same ops in the same order (the accumulators are `uop.acc` cells, read and
written by each copy).

Taken for innermost loops whose body multiply-accumulates with `arm_dsp.smlad` or
`arm_dsp.smlad_bytes` (or `smlad_bytes_pair`) into an accumulator cell defined outside them;
other loops are left as they are (KWS's depthwise border rows, a loop over channels of a
straight-line 5-wide row, by 8 made 2.4 KB kernels that outgrew the flash accelerator's cache). Run it after `interleave-dot-rows`,
which recognizes the dot loops' word addresses by their step-4 induction variable.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, IntAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects import arm_dsp, uop
from zant.ir.locations import locate
from zant.ir.walk import ops_of


def _has_pairs(loop: uop.RangeOp) -> bool:
    return any(isinstance(op, arm_dsp.SmladBytesPairOp) for op in loop.body.block.ops)


def _is_dot_loop(loop: uop.RangeOp) -> bool:
    """An innermost loop that multiply-accumulates with the DSP ops into an accumulator cell
    of the enclosing code (a reduction; not a loop of whole outputs, such as a depthwise
    Conv's channels over a straight-line row, which would only grow)."""
    ops = list(loop.body.block.ops)
    return (
        not any(isinstance(op, uop.RangeOp) for op in ops)
        and any(isinstance(op, arm_dsp.SmladOp | arm_dsp.SmladBytesOp | arm_dsp.SmladBytesPairOp) for op in ops)
        and any(isinstance(op, uop.AccSetOp) and not loop.is_ancestor(op.acc.owner) for op in ops)
    )


def unroll_factor(trip_count: int, max_factor: int, min_trips: int) -> int:
    """The largest power of two F ≤ max_factor dividing trip_count with trip_count / F ≥
    min_trips (1: none)."""
    factor = 1
    while factor * 2 <= max_factor and trip_count % (factor * 2) == 0 and trip_count // (factor * 2) >= min_trips:
        factor *= 2
    return factor


def _unroll(loop: uop.RangeOp, factor: int) -> None:
    block = loop.body.block
    k = loop.induction_var
    body = [op for op in block.ops if not isinstance(op, uop.EndRangeOp)]
    end = block.last_op
    assert isinstance(end, uop.EndRangeOp)
    for copy in range(1, factor):
        offset = uop.ConstOp(copy * loop.step.data, IndexType())
        shifted = uop.AddOp(k, offset)
        added: list[Operation] = [offset, shifted]
        mapping: dict[SSAValue, SSAValue] = {k: shifted.result}
        added += [op.clone(value_mapper=mapping) for op in body]
        locate(added[:2], loop.location)
        for op in added:
            Rewriter.insert_op(op, InsertPoint.before(end))
    loop.step = IntAttr(loop.step.data * factor)


@dataclass(frozen=True)
class UnrollDotLoopsPass(ModulePass):
    """Innermost DSP dot-product loops unrolled by up to `max_factor` (`pair_max_factor` for
    loops of `smlad_bytes_pair`), keeping `min_trips`."""

    name = "unroll-dot-loops"

    max_factor: int = 8
    min_trips: int = 3
    pair_max_factor: int = 4

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in [o for o in ops_of(op, uop.RangeOp) if _is_dot_loop(o)]:
            most = min(self.max_factor, self.pair_max_factor) if _has_pairs(loop) else self.max_factor
            factor = unroll_factor(loop.trip_count, most, self.min_trips)
            if factor > 1:
                _unroll(loop, factor)
