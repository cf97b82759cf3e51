"""`arm-dsp-requant-sums`: every kernel's requantization chains as `SMMLA` and `SSAT`, where
`arm-dsp-requant` takes only the fully connected blocks' (`arm_dsp.smlad_rows` sums).

The Convs' epilogues (depthwise rows, pointwise and window tiles, first convs: `quant.py`'s
common shift form) are the same chain as a fully connected block's, one per output; the
Cortex-M4 spent five instructions on each (SMMUL, an add of the rounding half, USAT with the
shift, EOR for the zero point -128, the store) and now three (SMMLA, SSAT, the store). The
rewrite is `arm_dsp_requant.rewrite_requant`, applied to each int32 value widened to int64 for
such a chain; where the chain is anything else it changes nothing.

It runs on the outlined kernels, after `mark-hot-kernels`, because a build for size then shares
the kernels alike up to their constants (`share-kernels`: KWS's four depthwise layers are one
function), and SSAT's shift is an immediate (an attribute), which differs between layers.
Kernels that are not hot and are alike keep being alike: rewritten as they are where their
shifts agree, else with the shift apart (`shift_apart`: an ASR by a literal, then SSAT without
shift; four instructions an output), and the rewrite's literals one per value
(`_one_literal_each`). Outlining made the zero point (a literal cast ahead of the loops) an
argument: where the kernel's one call passes a literal, it is one inside for the rewrite, and
an argument left unread leaves the kernel and its call.

Exact as `arm-dsp-requant` states, with one more bound taken here: SMMLA's 32-bit sum of the
product's high word (|hi| ≤ 2^30, an int32 times a multiplier below 2^31) and the addend
2^(r-1) + zp·2^r (r = shift - 32) stays in int32 when r ≤ `MAX_RIGHT` (|addend| < 2^30 for
any 8-bit zero point); a chain with a larger shift (a multiplier below about 2^-54) is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, IntegerAttr, IntegerType, ModuleOp
from xdsl.dialects import func
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.analysis.loop_values import integer_literal
from zant.dialects import arm_dsp, uop
from zant.dialects.zant import HOT
from zant.dialects.uop.alu import constant_of
from zant.ir.locations import locate
from zant.ir.walk import ops_of
from zant.passes.arm_dsp_requant import rewrite_requant
from zant.passes.mark_hot_kernels import is_kernel
from zant.passes.share_kernels import body_shape

I32 = IntegerType(32)
I64 = IntegerType(64)

WINDOW_KERNELS = "kept"
"""The window tiles' kernels (`arm_dsp.smlad_window`, conv_window's 3x3 form) keep their
chains: on ic_int8 (L4R5, at 4c59529) the rewrite took 412 k instructions off but LLVM then
unrolled the 64-channel 8x8 layers' kernels from 1.2 KB to 3.5 KB, past the flash cache, for
518 k more cycles there (+163 k in all)."""

MAX_RIGHT = 22
"""The largest right shift after the high word (shift - 32) taken: 2^21 + 128·2^22 < 2^30."""


def _right_shift(sum_value: SSAValue) -> int | None:
    """The shift after the high word of the chain from `sum_value` (cast, mul, add, shr by a
    literal), or None."""
    uses = [use.operation for use in sum_value.uses]
    if len(uses) != 1 or not isinstance(uses[0], uop.CastOp):
        return None
    value = uses[0].result
    for kind in (uop.MulOp, uop.AddOp, uop.ShrOp):
        users = [use.operation for use in value.uses]
        if len(users) != 1 or not isinstance(users[0], kind):
            return None
        value = users[0].results[0]
    shr = value.owner
    assert isinstance(shr, uop.ShrOp)
    shift = constant_of(shr.rhs)
    return shift.value.data - 32 if isinstance(shift, IntegerAttr) else None


def rewrite_sums(root: Operation) -> None:
    """Every requantization chain under `root` (a kernel) as SMMLA and SSAT (module
    docstring)."""
    for cast in list(ops_of(root, uop.CastOp)):
        if cast.parent is None or cast.input.type != I32 or cast.result.type != I64:
            continue  # erased with an earlier chain, or not a widened sum
        right = _right_shift(cast.input)
        if right is not None and 1 <= right <= MAX_RIGHT:
            rewrite_requant(cast.input)
    _one_literal_each(root)


def _zero_points_inside(kernel: func.FuncOp, calls: list[func.CallOp]) -> list[tuple[uop.ConstOp, SSAValue]]:
    """The kernel's zero point arguments as literals in its body, where its one call passes a
    literal: outlining made each value computed ahead of the loop nest an argument, and the
    rewrite folds the zero point into SMMLA's addend at compile time. Returns each literal
    made and the argument it stands for (`_restore`)."""
    made: list[tuple[uop.ConstOp, SSAValue]] = []
    if len(calls) != 1:
        return made
    block = kernel.body.block
    for argument, given in zip(block.args, calls[0].arguments, strict=True):
        value = integer_literal(given)
        chains = [use.operation for use in argument.uses if isinstance(use.operation, uop.AddOp)]
        if value is None or not chains or not isinstance(argument.type, IntegerType):
            continue
        literal = uop.ConstOp(value, argument.type)
        Rewriter.insert_op(literal, InsertPoint.at_start(block))
        for add in chains:
            add.operands = [literal.result if operand is argument else operand for operand in add.operands]
        made.append((literal, argument))
    return made


def _restore(made: list[tuple[uop.ConstOp, SSAValue]], calls: dict[str, list[func.CallOp]]) -> None:
    """The arguments back where a literal of `_zero_points_inside` is still read (no rewrite
    took its chain), and the literals gone; an argument nothing reads any more leaves the
    kernel, its call and, unread, the caller's literal (Zig rejects an unused constant)."""
    for literal, argument in made:
        literal.result.replace_all_uses_with(argument)
        Rewriter.erase_op(literal)
        if argument.uses:
            continue
        assert isinstance(argument, BlockArgument)
        kernel = argument.block.parent_op()
        assert isinstance(kernel, func.FuncOp)
        call = calls[kernel.sym_name.data][0]
        index = argument.index
        given = call.arguments[index]
        call.operands = [*call.operands[:index], *call.operands[index + 1:]]
        argument.block.erase_arg(argument)
        inputs = list(kernel.function_type.inputs.data)
        kernel.function_type = FunctionType.from_lists([*inputs[:index], *inputs[index + 1:]], kernel.function_type.outputs.data)
        _erase_unread(given.owner)


def _erase_unread(op: Operation | Block) -> None:
    """`op` and the casts and literals that fed only it, once nothing reads them."""
    if not isinstance(op, uop.ConstOp | uop.CastOp) or op.parent is None or any(r.uses for r in op.results):
        return
    operands = list(op.operands)
    Rewriter.erase_op(op)
    for operand in operands:
        _erase_unread(operand.owner)


def shift_apart(root: Operation) -> None:
    """Each `arm_dsp.ssat` under `root` that shifts as a `uop.shr` by a literal, then an ssat
    that does not: the shift a constant `share-kernels` can make a parameter."""
    for sat in list(ops_of(root, arm_dsp.SsatOp)):
        if not sat.shift.data:
            continue
        by = uop.ConstOp(sat.shift.data, I32)
        shifted = uop.ShrOp(sat.input, by.result)
        plain = arm_dsp.SsatOp(shifted.result, sat.bits.data, 0)
        locate([by, shifted, plain], sat.location)  # the profile's node names
        Rewriter.insert_op([by, shifted, plain], InsertPoint.before(sat))
        sat.result.replace_all_uses_with(plain.result)
        Rewriter.erase_op(sat)


def _one_literal_each(kernel: Operation) -> None:
    """One literal per value for the requantizations' operands in `kernel`, at its start: the
    rewrite makes an addend (and a shift) per output, where the chains shared the rounding half
    and the shift made ahead of the loops; `share-kernels` makes each differing literal a
    parameter, and takes no more than a few."""
    block = kernel.regions[0].blocks.first
    assert block is not None
    kept: dict[tuple[int, Attribute], uop.ConstOp] = {}
    users = [*ops_of(kernel, arm_dsp.SmmlaOp), *(s for s in ops_of(kernel, uop.ShrOp) if isinstance(s.lhs.owner, arm_dsp.SmmlaOp))]
    for user in users:
        for operand in user.operands:
            literal = operand.owner
            if not isinstance(literal, uop.ConstOp) or not isinstance(literal.value, IntegerAttr):
                continue
            key = (literal.value.value.data, literal.result.type)
            first = kept.get(key)
            if first is None:
                kept[key] = literal
                literal.detach()
                Rewriter.insert_op(literal, InsertPoint.at_start(block))
            elif first is not literal:
                literal.result.replace_all_uses_with(first.result)
                Rewriter.erase_op(literal)


def _twins_rewrite(kernels: list[func.FuncOp]) -> Callable[[Operation], None] | None:
    """How to rewrite kernels alike up to their constants (`share_kernels.body_shape`) so that
    they stay alike, as a build for size shares them: `rewrite_sums`, else with their shifts
    apart (SSAT's shift is an immediate, an attribute), else None (kept as they are)."""
    def apart(root: Operation) -> None:
        rewrite_sums(root)
        shift_apart(root)
        _one_literal_each(root)

    for rewrite in (rewrite_sums, apart):
        shapes = set()
        for kernel in kernels:
            copy = kernel.clone()
            rewrite(copy)
            shapes.add(body_shape(copy)[0])
        if len(shapes) == 1:
            return rewrite
    return None


@dataclass(frozen=True)
class ArmDspRequantSumsPass(ModulePass):
    """Each kernel's requantizations (a common shift of 33 to 32 + `MAX_RIGHT`) as one
    `arm_dsp.smmla` and one `arm_dsp.ssat` (with the shift apart where kernels `share-kernels`
    could make one have other shifts). Runs on the outlined kernels, after `mark-hot-kernels`."""

    name = "arm-dsp-requant-sums"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        calls: dict[str, list[func.CallOp]] = {}
        for call in ops_of(op, func.CallOp):
            calls.setdefault(call.callee.string_value(), []).append(call)
        twins: dict[Hashable, list[func.FuncOp]] = {}
        made: list[tuple[uop.ConstOp, SSAValue]] = []
        for kernel in [k for k in op.walk() if is_kernel(k)]:
            assert isinstance(kernel, func.FuncOp)
            if any(True for _ in ops_of(kernel, arm_dsp.SmladWindowOp)):
                continue  # `WINDOW_KERNELS`
            made.extend(_zero_points_inside(kernel, calls.get(kernel.sym_name.data, [])))
            if HOT in kernel.attributes:
                rewrite_sums(kernel)
            else:
                twins.setdefault(body_shape(kernel)[0], []).append(kernel)
        for group in twins.values():
            rewrite = rewrite_sums if len(group) == 1 else _twins_rewrite(group)
            for kernel in group if rewrite is not None else ():
                rewrite(kernel)
        _restore(made, calls)
