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

A Conv's weights, repacked `W'[m, k…, c]` by the lowering (channels innermost), are the same
matrix with rows of K = taps·C: the column is `Σ taps·c_tap + k`, and each word stays in its row
when the channels are a multiple of 4; the index becomes `m·K + R·col + 4r`.

Taken only when every use of an int8 constant buffer is such a word load (affine index `K·m +
col + r·K` with `m` the induction variable of a loop `0 to M step R` and the largest
coefficient, `M·K` the buffer's size, `0 ≤ r < R`, `K` a multiple of 4, the column an affine
function of loop variables whose every value is a multiple of 4, its word inside the row): any
other reader (a remainder loop, a vector load) would see the permuted bytes. Run it after
`arm-dsp-dot`.
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
from zant.ir.walk import ops_of

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
    columns: tuple[tuple[SSAValue, int], ...]
    """The loop variables of the column within the row (`k`, a Conv's taps) and their coefficients."""
    column: int
    """The column's constant part."""
    r: int


def _values(value: SSAValue) -> tuple[int, int] | None:
    """(first, last) value of loop variable `value`, or None when it is not one."""
    loop = _loop_of(value)
    if loop is None or loop.trip_count < 1:
        return None
    start, step = loop.start.data, loop.step.data
    return start, start + (loop.trip_count - 1) * step


def _read(gep: uop.GepOp, memo: dict) -> tuple[_Read, tuple[int, int, int]] | None:
    """`gep` as the word of row `m + r` at column `Σ c·v + column` of an (M, K) matrix read R rows
    at a time: `m` the variable of a loop `0 to M step R` with coefficient K (the largest), every
    column value a multiple of 4 with its word inside the row. None otherwise."""
    terms = _affine(gep.indices[0], memo)
    leaves = [key for key in terms if key is not None]
    if len(leaves) < 2:
        return None
    m = max(leaves, key=lambda v: terms[v])
    K, m_loop = terms[m], _loop_of(m)
    if m_loop is None or m_loop.start.data != 0:
        return None
    M, R = m_loop.end.data, m_loop.step.data
    offset = terms.get(None, 0)
    r, column = divmod(offset, K)
    columns = tuple((v, terms[v]) for v in leaves if v is not m)
    last = column
    for v, c in columns:
        values = _values(v)
        step = _loop_of(v).step.data if values is not None else 0  # type: ignore[union-attr]
        if values is None or c <= 0 or values[0] < 0 or (c * values[0]) % WORD or (c * step) % WORD:
            return None
        last += c * values[1]
    if K % WORD or M % R or R < 2 or not 0 <= r < R or column % WORD or last + WORD > K:
        return None
    return _Read(gep, m, columns, column, r), (M, K, R)


def _reads(buffer: uop.DefineGlobalOp, memo: dict) -> tuple[list[_Read], int, int, int] | None:
    """Every read of `buffer` as a word of row `m + r` at a word-aligned column (`_read`), with
    the shared (M, K, R); None when some use is anything else."""
    size = buffer.result.type.size.data  # type: ignore[attr-defined]
    reads: list[_Read] = []
    shape: tuple[int, int, int] | None = None
    for use in buffer.result.uses:
        gep = use.operation
        if not (isinstance(gep, uop.GepOp) and gep.source is buffer.result and len(gep.indices) == 1):
            return None
        if not gep.result.uses or not all(isinstance(u.operation, arm_dsp.LoadWordOp) for u in gep.result.uses):
            return None
        found = _read(gep, memo)
        if found is None or (shape is not None and found[1] != shape) or found[1][0] * found[1][1] != size:
            return None
        read, shape = found
        reads.append(read)
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
        # (m + r)·K + col  →  m·K + R·col + 4r: the word of row r among the R interleaved ones.
        new: list[Operation] = [k_const := uop.ConstOp(K, index), base := uop.MulOp(read.m, k_const)]
        for v, c in read.columns:
            new += [scale := uop.ConstOp(R * c, index), col := uop.MulOp(v, scale)]
            new += [base := uop.AddOp(base, col)]
        new += [word := uop.ConstOp(R * read.column + WORD * read.r, index), uop.AddOp(base, word)]
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
        for buffer in ops_of(op, uop.DefineGlobalOp):
            if buffer.value is None or buffer.result.type.element_type != i8:  # type: ignore[attr-defined]
                continue
            found = _reads(buffer, memo)
            if found is not None:
                _interleave(buffer, *found)
