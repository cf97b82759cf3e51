"""`arm-dsp-dot`: int8 dot-product loops as Cortex-M DSP multiply-accumulates (`arm_dsp`).

A loop `uop.range %k = s to e` (step 1) whose body, seen through its nested single-iteration
loops, only computes indices and addresses, loads int8 through `uop.gep`s of flat buffers whose
index moves by exactly one element per `k` (or a constant stride: see below), casts them to i32
and multiply-accumulates pairs of them into `!uop.acc<i32>` accumulators (the integer
Conv/Gemm/MatMul reductions after `linearize-geps`; several accumulators may share a load)
becomes a loop of step 4 over the first `4·⌊(e-s)/4⌋` values of `k`: each int8 load becomes
one `arm_dsp.load_word` of the 4 elements at `k .. k+3` and two `arm_dsp.sxtb16` (bytes 0,2
and, rotated by 8, bytes 1,3), each multiply-accumulate two `arm_dsp.smlad` between an
`acc_get` and an `acc_set`. The original loop, started at the first value left over, keeps the
1–3 remaining values of `k` (it goes when none remain).

An operand whose index moves by a constant other than one element per `k` (an NCHW activation
read along its channels by a pointwise Conv: stride H·W) is loaded byte by byte instead, at the
original loop's own addresses `k, k+s, k+2s, k+3s`, and packed into the lanes the other
operand's `sxtb16` pair has, elements (0, 2) and (1, 3), as `(lo & 0xffff) | (hi << 16)` (one
`PKHBT` after LLVM); the packs are shared by every multiply-accumulate that reads that operand,
and each multiply-accumulate must have one contiguous operand (two strided ones would gain
nothing). Per 4 `k` and n accumulators sharing the strided operand: 4 byte loads + 2 packs +
n·(1 word load + 2 sxtb16 + 2 smlad), against 4·(1 + 2n) before (n = 4: 26 against 36). Each
word operand's load and sxtb16 are emitted just before its first smlad, which keeps LLVM's
schedule from holding every word at once (on Cortex-M4 it spilled accumulators otherwise).

16x8 quantization (int16 activations, int8 weights): an operand may be int16. Strided, it is
loaded element by element and packed as above (a 16-bit element is its own half: no
`SXTB16`). Contiguous, its 4 elements are two `arm_dsp.load_word`s of an i16 pointer (elements
0, 1 and 2, 3, each pair as `SMLAD` takes it) repacked into the (0, 2) and (1, 3) halves the
int8 operand's `sxtb16` pair has (`PKHBT` / `PKHTB` after LLVM: `(w01 & 0xffff) | (w23 << 16)`
and `((w01 >> 16) & 0xffff) | (w23 & 0xffff0000)`); two int16 operands take the word pairs as
they are. So a 16x8 product costs no `SXTB16` on the activation, as CMSIS-NN's s16 kernels
read it (`arm_nn_read_q15x2`). A 16x8 product is below 2^22 in magnitude and SMLAD adds two,
so the accumulator is int32 as for int8 (the lowering chose int32 because the sum fits).

Exact: integer multiply-accumulates wrap modulo 2^32, so regrouping the sum changes nothing,
and every byte a word load reads is one the original loop loaded. Only `inbounds` geps (proven
by `mark-inbounds`) qualify: a checked gep would trap on its own element only, not on the three
after it. Run it after `linearize-geps`, on cores with the DSP extension (Cortex-M4, M7, M33,
M55: `zant.pipelines`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, IntAttr, IntegerType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.analysis.loop_values import INDEX_OPS
from zant.dialects import arm_dsp, uop
from zant.dialects.zant import require_feature
from zant.ir.locations import locate
from zant.ir.walk import ops_of

LANES = 4
"""int8 elements per word load (the elements of `k` one step of the rewritten loop covers)."""

DOT_ELEMENTS = (IntegerType(8), IntegerType(16))
"""The element types a dot product's operands may load: int8, and int16 (16x8 quantization)."""


def element_type(load: uop.LoadOp):
    """The element type `load` reads (i8 or i16 in a matched dot loop)."""
    return load.results[0].type


def _flat_body(loop: uop.RangeOp) -> list[Operation] | None:
    """The ops of `loop`'s body with every nested single-iteration loop replaced by its body, in
    order (terminators left out); None if some nested loop runs more than once."""
    ops: list[Operation] = []
    for op in loop.body.block.ops:
        if isinstance(op, uop.EndRangeOp):
            continue
        if isinstance(op, uop.RangeOp):
            if op.trip_count != 1:
                return None
            inner = _flat_body(op)
            if inner is None:
                return None
            ops.append(op)  # stands for its induction variable's value, `start`
            ops += inner
            continue
        ops.append(op)
    return ops


def index_stride(value: SSAValue, k: SSAValue, inside: set[Operation], memo: dict[SSAValue, int | None]) -> int | None:
    """How much `value` (an index) grows per step of `k`; None when not affine in `k` with a
    constant coefficient or not computed by plain index arithmetic."""
    if value in memo:
        return memo[value]
    owner = value.owner
    result: int | None
    if value is k:
        result = 1
    elif not isinstance(owner, Operation) or owner not in inside:
        result = 0  # defined outside the loop, or a single-iteration loop's variable: invariant
    elif isinstance(owner, uop.ConstOp):
        result = 0
    elif isinstance(owner, uop.AddOp | uop.SubOp):
        a, b = (index_stride(v, k, inside, memo) for v in owner.operands)
        result = None if a is None or b is None else (a + b if isinstance(owner, uop.AddOp) else a - b)
    elif isinstance(owner, uop.MulOp):
        a, b = (index_stride(v, k, inside, memo) for v in owner.operands)
        if a is None or b is None:
            result = None
        elif a == 0 and b == 0:
            result = 0
        else:
            const = owner.rhs if b == 0 else owner.lhs if a == 0 else None
            if const is None or not isinstance(const.owner, uop.ConstOp):
                result = None
            else:
                result = (a or b) * const.owner.value.value.data  # type: ignore[union-attr]
    else:
        result = None
    memo[value] = result
    return result


I4 = IntegerType(4)
"""Packed int4 weights: a contiguous operand may be int4 (`arm_dsp.load_s4x4`)."""


def _parity(value: SSAValue, k: SSAValue, k_parity: int, memo: dict[SSAValue, int | None]) -> int | None:
    """`value` (an index) mod 2 wherever the rewritten loop reads it (`k` stepping by 4 from a
    start of parity `k_parity`), or None when not known: sums and products of constants and of
    loop variables whose start and step fix their parity."""
    if value in memo:
        return memo[value]
    owner = value.owner
    result: int | None = None
    if value is k:
        result = k_parity
    elif isinstance(owner, uop.ConstOp):
        result = owner.value.value.data % 2  # type: ignore[union-attr]
    elif isinstance(owner, uop.AddOp | uop.SubOp | uop.MulOp):
        a, b = (_parity(v, k, k_parity, memo) for v in owner.operands)
        if isinstance(owner, uop.MulOp) and 0 in (a, b):
            result = 0
        elif a is not None and b is not None:
            result = (a * b if isinstance(owner, uop.MulOp) else a + b) % 2
    elif isinstance(value, BlockArgument) and isinstance(loop := value.block.parent_op(), uop.RangeOp):
        if loop.trip_count == 1 or loop.step.data % 2 == 0:
            result = loop.start.data % 2
    memo[value] = result
    return result


@dataclass
class DotLoop:
    """An int8 dot-product loop this pass (and `mve-dot`) rewrites: `match_dot_loop`'s answer."""

    loop: uop.RangeOp
    ops: list[Operation]
    mulaccs: list[uop.MulAccOp]
    loads: dict[uop.LoadOp, int]
    """The int8 / int16 loads and their strides along `k` (1: contiguous)."""


def match_dot_loop(loop: uop.RangeOp, int4: bool = False) -> DotLoop | None:
    """`loop` as an int8 dot product (the form the module docstring describes), or None; with
    `int4`, a contiguous operand may be packed int4 (this pass's `load_s4x4`; `mve-dot` has no
    such load and leaves those loops alone)."""
    if loop.step.data != 1 or loop.trip_count < LANES:
        return None
    ops = _flat_body(loop)
    if ops is None:
        return None
    inside = set(ops)
    k = loop.induction_var
    i32 = IntegerType(32)
    mulaccs: list[uop.MulAccOp] = []
    loads: dict[uop.LoadOp, int] = {}  # each load's stride along k
    memo: dict[SSAValue, int | None] = {}
    for op in ops:
        if isinstance(op, uop.RangeOp | uop.GepOp | uop.LoadOp | uop.CastOp):
            continue  # checked through the multiply-accumulates that use them
        if isinstance(op, INDEX_OPS) and isinstance(op.results[0].type, IndexType):
            continue
        if not isinstance(op, uop.MulAccOp) or op.acc.type != uop.AccType(i32):
            return None
        for operand in (op.lhs, op.rhs):
            cast = operand.owner
            if not (isinstance(cast, uop.CastOp) and cast in inside and cast.input.type in ((*DOT_ELEMENTS, I4) if int4 else DOT_ELEMENTS)):
                return None
            load = cast.input.owner
            if not (isinstance(load, uop.LoadOp) and load in inside):
                return None
            gep = load.ptr.owner
            if not (isinstance(gep, uop.GepOp) and gep.inbounds is not None and isinstance(gep.source.type, uop.BufferType)):
                return None
            if len(gep.indices) != 1:
                return None
            stride = index_stride(gep.indices[0], k, inside, memo)
            if not stride:  # None (not affine in k) or 0 (invariant)
                return None
            loads[load] = stride
            if load.results[0].type == I4 and (stride != 1 or _parity(gep.indices[0], k, loop.start.data % 2, {}) != 0):
                return None  # packed int4: whole bytes only, two of them per step (`load_s4x4`)
        if all(loads[operand.owner.input.owner] != 1 for operand in (op.lhs, op.rhs)):  # type: ignore[union-attr]
            return None  # two strided operands: 8 byte loads and 4 packs save nothing
        mulaccs.append(op)
    if not mulaccs:
        return None
    # Every load, cast and gep of the body must feed only what is rewritten (nothing else reads
    # the int8 values), and casts must be i8 → i32.
    for op in ops:
        if isinstance(op, uop.LoadOp) and op not in loads:
            return None
        if isinstance(op, uop.CastOp) and (op.result.type != i32 or op.input.owner not in loads):
            return None
        if isinstance(op, uop.GepOp) and not all(isinstance(u.operation, uop.LoadOp) for u in op.result.uses):
            return None
    return DotLoop(loop, ops, mulaccs, loads)


@dataclass
class SteppedLoop:
    """A loop over a dot loop's whole steps of `step` iterations, inserted before it: `end` is
    where the dot loop's remainder starts, `mapping` takes the dot loop's index and address
    values to their clones in the new body (`add` appends an op to it)."""

    range: uop.RangeOp
    end: int
    mapping: dict[SSAValue, SSAValue]

    def add(self, op: Operation) -> Operation:
        self.range.body.block.add_op(op)
        return op


def open_stepped_loop(dot: DotLoop, step: int) -> SteppedLoop:
    """The stepped loop of `dot` with the index and address computations its loads need cloned
    in order (a single-iteration loop's variable is its start); shared with mve-dot."""
    loop = dot.loop
    end = loop.start.data + (loop.trip_count // step) * step
    block = Block(arg_types=[IndexType()])
    stepped = SteppedLoop(uop.RangeOp(loop.start.data, end, step, block), end, {loop.induction_var: block.args[0]})
    Rewriter.insert_op(stepped.range, InsertPoint.before(loop))
    needed: set[Operation] = set()
    work = [load.ptr.owner for load in dot.loads]
    while work:
        op = work.pop()
        if isinstance(op, Operation) and op in dot.ops and op not in needed:
            needed.add(op)
            work += [v.owner for v in op.operands]
    for op in dot.ops:
        if isinstance(op, uop.RangeOp):
            if any(u.operation in needed for u in op.induction_var.uses):
                stepped.mapping[op.induction_var] = stepped.add(uop.ConstOp(op.start.data, IndexType())).results[0]
        elif op in needed:
            clone = stepped.add(op.clone(value_mapper=stepped.mapping))
            for old, cloned in zip(op.results, clone.results):
                stepped.mapping[old] = cloned
    return stepped


def _rewrite(dot: DotLoop) -> None:
    loop = dot.loop
    stepped = open_stepped_loop(dot, LANES)
    new, words_end, mapping, add = stepped.range, stepped.end, stepped.mapping, stepped.add
    i32 = IntegerType(32)
    halves: dict[uop.LoadOp, tuple[SSAValue, SSAValue]] = {}
    def halves_of(load: uop.LoadOp) -> tuple[SSAValue, SSAValue]:
        """The (elements 0, 2) and (1, 3) of `load` at k .. k+3 as 16-bit halves, made at first use
        (so each weight word is loaded next to the multiply-accumulates that read it)."""
        if load in halves:
            return halves[load]
        stride = dot.loads[load]
        if load.results[0].type == I4:  # packed int4 (contiguous, from an even element)
            unpacked = add(arm_dsp.LoadS4x4Op(mapping[load.ptr]))
            halves[load] = (unpacked.even, unpacked.odd)
            return halves[load]
        gep = load.ptr.owner
        assert isinstance(gep, uop.GepOp)
        if stride == 1 and element_type(load) == IntegerType(16):
            halves[load] = _int16_halves(add, mapping, load, gep, natural=pairs_natural)
            return halves[load]
        if stride == 1:
            word = add(arm_dsp.LoadWordOp(mapping[load.ptr]))
            even = add(arm_dsp.Sxtb16Op(word))  # bytes 0 and 2
            odd = add(arm_dsp.Sxtb16Op(word, rotate=8))  # bytes 1 and 3
            halves[load] = (even.results[0], odd.results[0])
            return halves[load]
        # A strided operand: its 4 elements one by one (the original loop's own addresses),
        # packed as the sxtb16 halves of a word are, elements (0, 2) and (1, 3).
        index = mapping[gep.indices[0]]
        values: list[SSAValue] = []
        for j in range(LANES):
            if j == 0:
                ptr = mapping[load.ptr]
            else:
                at = add(uop.AddOp(index, add(uop.ConstOp(j * stride, IndexType()))))
                ptr = add(uop.GepOp(mapping.get(gep.source, gep.source), [at], inbounds=True)).results[0]
            values.append(add(uop.CastOp(add(uop.LoadOp(ptr)), i32)).results[0])
        low_half = add(uop.ConstOp(0xFFFF, i32))
        sixteen = add(uop.ConstOp(16, i32))

        def pack(lo: SSAValue, hi: SSAValue) -> SSAValue:
            """lo's low 16 bits below hi's (PKHBT lo, hi, lsl #16)."""
            low = add(uop.AndOp(lo, low_half))
            high = add(uop.ShlOp(hi, sixteen))
            return add(uop.OrOp(low, high)).results[0]

        if pairs_natural:
            halves[load] = (pack(values[0], values[1]), pack(values[2], values[3]))
        else:
            halves[load] = (pack(values[0], values[2]), pack(values[1], values[3]))
        return halves[load]

    # Every operand int16 (no sxtb16 pair to match): the halves pair elements (0, 1) and (2, 3),
    # a contiguous operand's two words as they are. Else (0, 2) and (1, 3), as sxtb16 gives them.
    pairs_natural = all(element_type(load) == IntegerType(16) for load in dot.loads)

    for mulacc in dot.mulaccs:
        (a_even, a_odd), (b_even, b_odd) = (halves_of(v.owner.input.owner) for v in (mulacc.lhs, mulacc.rhs))  # type: ignore[union-attr]
        acc = add(uop.AccGetOp(mulacc.acc))
        first = add(arm_dsp.SmladOp(a_even, b_even, acc.results[0]))
        second = add(arm_dsp.SmladOp(a_odd, b_odd, first.results[0]))
        add(uop.AccSetOp(mulacc.acc, second.results[0]))
    add(uop.EndRangeOp())
    locate([new], loop.location)
    if words_end == loop.end.data:
        Rewriter.erase_op(loop)
    else:
        loop.start = IntAttr(words_end)


def _int16_halves(add, mapping: dict[SSAValue, SSAValue], load: uop.LoadOp, gep: uop.GepOp, natural: bool) -> tuple[SSAValue, SSAValue]:
    """A contiguous int16 operand's elements k .. k+3 as two i32 of 16-bit halves: its two words
    (0, 1) and (2, 3) when `natural`, else repacked into (0, 2) and (1, 3), the halves an int8
    operand's `sxtb16` pair has."""
    i32 = IntegerType(32)
    low = add(arm_dsp.LoadWordOp(mapping[load.ptr])).results[0]  # elements 0 (low half), 1
    at = add(uop.AddOp(mapping[gep.indices[0]], add(uop.ConstOp(2, IndexType())).results[0])).results[0]
    ptr = add(uop.GepOp(mapping.get(gep.source, gep.source), [at], inbounds=True)).results[0]
    high = add(arm_dsp.LoadWordOp(ptr)).results[0]  # elements 2, 3
    if natural:
        return low, high
    low_half = add(uop.ConstOp(0xFFFF, i32)).results[0]
    high_half = add(uop.ConstOp(-0x10000, i32)).results[0]
    sixteen = add(uop.ConstOp(16, i32)).results[0]
    # PKHBT low, high, lsl #16: elements 0 and 2.
    even = add(uop.OrOp(add(uop.AndOp(low, low_half)).results[0], add(uop.ShlOp(high, sixteen)).results[0])).results[0]
    # PKHTB high, low, asr #16: elements 1 and 3.
    shifted = add(uop.AndOp(add(uop.ShrOp(low, sixteen)).results[0], low_half)).results[0]
    odd = add(uop.OrOp(shifted, add(uop.AndOp(high, high_half)).results[0])).results[0]
    return even, odd


@dataclass(frozen=True)
class ArmDspDotPass(ModulePass):
    """int8 dot-product loops as word loads, `SXTB16` and `SMLAD` (`arm_dsp`)."""

    name = "arm-dsp-dot"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_feature(op, self.name, "dsp", "DSP extension (SXTB16, SMLAD)")
        loops = ops_of(op, uop.RangeOp)
        for loop in loops:
            dot = match_dot_loop(loop, int4=True)
            if dot is not None:
                _rewrite(dot)
