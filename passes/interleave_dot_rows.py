"""`interleave-dot-rows`: an int8 weight matrix read R rows at a time by word dot products is
stored with those R rows interleaved, word by word, so one pointer walks all of them.

After `arm-dsp-dot`, a Gemm's or a pointwise Conv's weights `W[M][K]` are read in a loop over the
output channels `m = 0, R, 2R … < M` (the channel block) by a dot-product loop over `k = 0, 4 …
< K` that loads the words at `(m + r)·K + k` for `r < R`. LLVM keeps a pointer per row (R + 1
live pointers beside R accumulators: on the Cortex-M4 the accumulators spilled). Stored as
`W'[M/R][K/4][R][4]`, the R words of one step are adjacent:

    %i = (m + r)·K + k                          %i' = m·K + R·k + 4r
    %p = uop.gep inbounds %w[%i]           →    %p = uop.gep inbounds %w[%i']
    %v = arm_dsp.load_word %p                   %v = arm_dsp.load_word %p

and the loop reads `4R` consecutive bytes per step through one pointer (immediate offsets 0, 4 …
4(R-1)). The constant's bytes are permuted at compile time: same size, same flash.

Taken only when every use of an int8 constant buffer is such a word load (affine index `K·m +
k + r·K` with `m` the induction variable of a loop `0 to M step R`, `M·K` the buffer's size,
`k` that of a loop `0 to K step 4`, `0 ≤ r < R`, `K` a multiple of 4): any other reader (a
remainder loop, a vector load) would see the permuted bytes. Run it after `arm-dsp-dot`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.dialects import arm_dsp, uop
from zant.ir.locations import located
from zant.ir.resources import attr_to_array, make_constant_attr

WORD = 4
"""int8 elements per word load."""


def _affine(value: SSAValue, memo: dict[SSAValue, dict[SSAValue | None, int]]) -> dict[SSAValue | None, int]:
    """`value` (an index) as coefficients of leaf values (None: the constant term), through index
    adds, subtracts, constants and multiplies by a constant."""
    if value in memo:
        return memo[value]
    owner = value.owner
    terms: dict[SSAValue | None, int] | None = None
    if isinstance(value.type, IndexType) and isinstance(owner, uop.ConstOp):
        terms = {None: owner.value.value.data}  # type: ignore[union-attr]
    elif isinstance(value.type, IndexType) and isinstance(owner, uop.AddOp | uop.SubOp):
        a, b = (_affine(v, memo) for v in owner.operands)
        sign = 1 if isinstance(owner, uop.AddOp) else -1
        terms = dict(a)
        for key, c in b.items():
            terms[key] = terms.get(key, 0) + sign * c
    elif isinstance(value.type, IndexType) and isinstance(owner, uop.MulOp):
        a, b = (_affine(v, memo) for v in owner.operands)
        if set(b) == {None}:
            terms = {key: c * b[None] for key, c in a.items()}
        elif set(a) == {None}:
            terms = {key: c * a[None] for key, c in b.items()}
    if terms is None:
        terms = {value: 1}
    memo[value] = {key: c for key, c in terms.items() if c or key is None}
    return memo[value]


def _loop_of(value: SSAValue) -> uop.RangeOp | None:
    """The loop whose induction variable `value` is, or None."""
    if isinstance(value, BlockArgument) and isinstance(value.block.parent_op(), uop.RangeOp):
        return value.block.parent_op()  # type: ignore[return-value]
    return None


@dataclass(frozen=True)
class _Read:
    gep: uop.GepOp
    m: SSAValue
    k: SSAValue
    r: int


def _reads(buffer: uop.DefineGlobalOp, memo: dict) -> tuple[list[_Read], int, int, int] | None:
    """Every read of `buffer` as a word of row `m + r` at column `k`, with the shared (M, K, R);
    None when some use is anything else."""
    size = buffer.result.type.size.data  # type: ignore[attr-defined]
    reads: list[_Read] = []
    shape: tuple[int, int, int] | None = None
    for use in buffer.result.uses:
        gep = use.operation
        if not (isinstance(gep, uop.GepOp) and gep.source is buffer.result and len(gep.indices) == 1):
            return None
        if not gep.result.uses or not all(isinstance(u.operation, arm_dsp.LoadWordOp) for u in gep.result.uses):
            return None
        terms = _affine(gep.indices[0], memo)
        leaves = [key for key in terms if key is not None]
        if len(leaves) != 2:
            return None
        k = next((v for v in leaves if terms[v] == 1), None)
        m = next((v for v in leaves if v is not k), None)
        if k is None or m is None:
            return None
        k_loop, m_loop = _loop_of(k), _loop_of(m)
        if k_loop is None or m_loop is None:
            return None
        K = terms[m]
        if (k_loop.start.data, k_loop.end.data, k_loop.step.data) != (0, K, WORD) or K % WORD:
            return None
        M, R = m_loop.end.data, m_loop.step.data
        if m_loop.start.data != 0 or M % R or M * K != size or R < 2:
            return None
        offset = terms.get(None, 0)
        if offset % K or not 0 <= offset // K < R:
            return None
        if shape is not None and shape != (M, K, R):
            return None
        shape = (M, K, R)
        reads.append(_Read(gep, m, k, offset // K))
    if shape is None:
        return None
    return reads, *shape


def _erase_dead(value: SSAValue) -> None:
    """Erase the index arithmetic that computed `value` once nothing reads it."""
    owner = value.owner
    if isinstance(owner, uop.AddOp | uop.SubOp | uop.MulOp | uop.ConstOp) and not any(r.uses for r in owner.results):
        operands = list(owner.operands)
        Rewriter.erase_op(owner)
        for operand in operands:
            _erase_dead(operand)


def _interleave(buffer: uop.DefineGlobalOp, reads: list[_Read], M: int, K: int, R: int) -> None:
    value = attr_to_array(buffer.value)  # type: ignore[arg-type]
    permuted = value.reshape(M // R, R, K // WORD, WORD).transpose(0, 2, 1, 3).reshape(value.shape)
    buffer.value = make_constant_attr(np.ascontiguousarray(permuted), buffer.tensor_name.data)
    index = IndexType()
    for read in reads:
        at = InsertPoint.before(read.gep)
        new: list[Operation] = [
            k_const := uop.ConstOp(K, index), row := uop.MulOp(read.m, k_const),
            r_const := uop.ConstOp(R, index), col := uop.MulOp(read.k, r_const),
            word := uop.ConstOp(WORD * read.r, index), base := uop.AddOp(row, col), uop.AddOp(base, word),
        ]
        Rewriter.insert_op(located(new, read.gep.location), at)
        old = read.gep.indices[0]
        read.gep.operands = [read.gep.source, new[-1].results[0]]
        _erase_dead(old)


@dataclass(frozen=True)
class InterleaveDotRowsPass(ModulePass):
    """int8 weight rows read R at a time by word dot products, stored interleaved word by word."""

    name = "interleave-dot-rows"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        memo: dict = {}
        i8 = IntegerType(8)
        for buffer in [o for o in op.walk() if isinstance(o, uop.DefineGlobalOp)]:
            if buffer.value is None or buffer.result.type.element_type != i8:  # type: ignore[attr-defined]
                continue
            found = _reads(buffer, memo)
            if found is not None:
                _interleave(buffer, *found)
