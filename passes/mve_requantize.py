"""`mve-requantize`: the int8 requantization epilogue of four outputs at once, in Helium (MVE)
vector ops, where the scalar epilogue spells it once per output.

The int8 lowerings end each output with the same scalar chain (`quant.py`'s requantization,
after `contract-mulacc`):

    q = clamp(i32((i64(acc) · i64(m) + 2^(s-1)) >> s) + zp, lo, hi)  stored as i8

with `m` the output channel's int32 multiplier (a load), `s` a constant shift, `zp` the output's
zero point and `lo`, `hi` the clamp. On the Cortex-M55 LLVM makes it `SMMUL`, an add, `USAT`
with a shift and an `EOR` per output, plus the multiplier's load and the byte store: about 28
instructions for the four outputs of a pointwise Conv's 4-channel block (the four `VMLAVA` sums
of one pixel), whose multipliers LLVM also spills. Four such chains in a row of one block
become

    %v = arm_mve.vmov_lanes %acc0, %acc1, %acc2, %acc3 : vector<4xi32>   (2 VMOV)
    %m = uop.vload %m0 : vector<4xi32>            (VLDRW; or one multiplier broadcast)
    %h = arm_mve.vmulh %v, %m : vector<4xi32>     (VMULH.S32)
    %r = arm_mve.vrshr %h, s-32 : vector<4xi32>   (VRSHR.S32)
    uop.add / uop.max / uop.min with broadcast zp, lo, hi   (VADD, VMAX, VMIN)
    arm_mve.vstrb_scatter %q, %p [0, d1, d2, d3]  (VSTRB.32 with a vector of byte offsets)

about 9 instructions (the broadcasts and the offset vector are loop-invariant).

Exact: for 33 ≤ s ≤ 62, write the product P = a·m = H·2^32 + L with H = P >> 32 (`vmulh`)
and 0 ≤ L < 2^32, n = s - 32. Then P + 2^(s-1) = (H + 2^(n-1))·2^32 + L, and dividing by 2^s
rounded down gives ⌊(H + 2^(n-1) + L/2^32) / 2^n⌋ = ⌊(H + 2^(n-1)) / 2^n⌋, since H + 2^(n-1)
is an integer and L/2^32 < 1: `vrshr` by n of H. (s ≤ 62 keeps the scalar chain's int64 sum
from wrapping; |P| < 2^62 keeps the result in int32.) The clamp to [lo, hi] within int8 makes
the scalar chain's i32 → i8 cast and the scatter's low byte the same value.

What four chains must share: `s`, the zero point (one SSA value or none) and the clamp bounds;
their multipliers are one (a broadcast) or four consecutive elements of one buffer; their
stores write one buffer at distinct constant distances (the scatter's offsets, counted from the
lowest). The vector code goes where the last chain stored: the three earlier stores move down
past the later chains, so between them only loads of other buffers, accumulator reads and
index, cast and arithmetic ops may stand (anything else: the group is not taken).

Four sums that are lanes 0 to 3 of one vector, in order (`arm_mve.vmov_lane`: the outputs of
`conv_depthwise_mve`), are that vector: no `vmov_lanes`.

Three chains of one channel (one multiplier) left at the end of a run, as the three outputs of
a depthwise Conv's interior row block on KWS's 5-wide rows, take the same form with the fourth
lane a copy of the third: same sum, multiplier and byte, so the scatter writes that byte twice
with one value.

Run it after `mve-dot` (whose `VMLAVA` sums it takes) on cores with MVE (`zant.pipelines`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from zant.analysis.linear_index import affine_terms
from zant.dialects import arm_mve, uop
from zant.dialects.zant import require_feature

LANES = 4
"""Outputs per group: the int32 lanes of a 128-bit vector."""

SHIFTS = range(33, 63)
"""The scalar chain's shifts the vector form computes exactly (see the module docstring)."""

_I8, _I32, _I64 = IntegerType(8), IntegerType(32), IntegerType(64)


def _const(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, uop.ConstOp) and isinstance(value.type, IntegerType | IndexType):
        return owner.value.value.data  # type: ignore[union-attr]
    return None


def _cast(value: SSAValue, source: IntegerType, result: IntegerType) -> SSAValue | None:
    """The input of `value` when it is a `uop.cast` from `source` to `result`."""
    owner = value.owner
    if isinstance(owner, uop.CastOp) and owner.input.type == source and owner.result.type == result:
        return owner.input
    return None


def _distance(a: uop.GepOp, b: uop.GepOp) -> int | None:
    """How many elements `b` addresses after `a` when both index one buffer at a constant
    distance (single, linearized indices); None otherwise."""
    if a.source != b.source or len(a.indices) != 1 or len(b.indices) != 1:
        return None
    (terms_a, const_a), (terms_b, const_b) = affine_terms(a.indices[0]), affine_terms(b.indices[0])
    return const_b - const_a if terms_a == terms_b else None


@dataclass
class _Chain:
    """One output's scalar requantization, matched from its store."""

    store: uop.StoreOp
    acc: SSAValue
    """The int32 sum (a `VMLAVA`'s, an accumulator's)."""
    multiplier: uop.LoadOp
    shift: int
    zero_point: SSAValue | None
    clamp: tuple[type[Operation], int, int]
    """The first clamp op's class (max or min) and the bounds lo, hi."""
    bound_values: tuple[SSAValue, SSAValue]
    """The SSA values of lo and hi."""

    @property
    def store_gep(self) -> uop.GepOp | None:
        gep = self.store.ptr.owner
        return gep if isinstance(gep, uop.GepOp) and gep.inbounds is not None else None

    @property
    def multiplier_gep(self) -> uop.GepOp | None:
        gep = self.multiplier.ptr.owner
        return gep if isinstance(gep, uop.GepOp) and gep.inbounds is not None else None

    def key(self) -> tuple:
        return (self.shift, self.zero_point, self.clamp)


def _match(store: uop.StoreOp) -> _Chain | None:
    clamped = _cast(store.value, _I32, _I8)
    if clamped is None:
        return None
    outer = clamped.owner
    if not isinstance(outer, uop.MinOp | uop.MaxOp):
        return None
    inner = outer.lhs.owner
    if not isinstance(inner, uop.MinOp | uop.MaxOp) or type(inner) is type(outer):
        return None
    inner_bound, outer_bound = _const(inner.rhs), _const(outer.rhs)
    if inner_bound is None or outer_bound is None:
        return None
    lo, hi = (inner_bound, outer_bound) if isinstance(inner, uop.MaxOp) else (outer_bound, inner_bound)
    if not -128 <= lo <= hi <= 127:
        return None
    bounds = (inner.rhs, outer.rhs) if isinstance(inner, uop.MaxOp) else (outer.rhs, inner.rhs)
    value, zero_point = inner.lhs, None
    if isinstance(value.owner, uop.AddOp) and value.type == _I32:
        add = value.owner
        value, zero_point = (add.lhs, add.rhs) if _cast(add.lhs, _I64, _I32) is not None else (add.rhs, add.lhs)
    shifted = _cast(value, _I64, _I32)
    if shifted is None or not isinstance(shr := shifted.owner, uop.ShrOp):
        return None
    shift = _const(shr.rhs)
    if shift not in SHIFTS or not isinstance(rounded := shr.lhs.owner, uop.AddOp):
        return None
    if _const(rounded.rhs) == 1 << (shift - 1):
        product = rounded.lhs
    elif _const(rounded.lhs) == 1 << (shift - 1):
        product = rounded.rhs
    else:
        return None
    if not isinstance(mul := product.owner, uop.MulOp):
        return None
    a, b = _cast(mul.lhs, _I32, _I64), _cast(mul.rhs, _I32, _I64)
    if a is None or b is None:
        return None
    if isinstance(b.owner, uop.LoadOp):
        acc, multiplier = a, b.owner
    elif isinstance(a.owner, uop.LoadOp):
        acc, multiplier = b, a.owner
    else:
        return None
    return _Chain(store, acc, multiplier, shift, zero_point, (type(inner), lo, hi), bounds)


_BETWEEN = (
    uop.ConstOp, uop.AddOp, uop.SubOp, uop.MulOp, uop.ShrOp, uop.MaxOp, uop.MinOp, uop.CastOp, uop.GepOp,
    uop.AccGetOp, uop.LoadOp, arm_mve.VmovLaneOp,
)
"""What may stand between the group's first store and its last: nothing that writes memory."""


def _group(chains: list[_Chain], block: Block) -> tuple[list[_Chain], list[int], uop.GepOp, list[int]] | None:
    """For four chains of `block` in order, or three of one channel (the fourth lane a copy of
    the third: same sum, multiplier and byte, so the scatter writes that byte twice with one
    value): the lanes, the multiplier distances (all 0, or 0..3), the store gep the scatter is
    based at and the lanes' byte offsets from it; None when they do not share what the vector
    form needs."""
    if len({c.key() for c in chains}) != 1:
        return None
    lanes = chains + chains[-1:] * (LANES - len(chains))
    geps = [c.store_gep for c in lanes]
    multipliers = [c.multiplier_gep for c in lanes]
    if any(g is None for g in geps) or any(m is None for m in multipliers):
        return None
    first = multipliers[0]
    assert first is not None
    steps = [_distance(first, m) for m in multipliers]  # type: ignore[arg-type]
    if steps != [0] * LANES and (steps != list(range(LANES)) or len(chains) != LANES):
        return None
    distances = [_distance(geps[0], g) for g in geps]  # type: ignore[arg-type]
    if any(d is None for d in distances) or len(set(distances)) != len(chains):
        return None
    low = min(distances)  # type: ignore[type-var]
    base = geps[distances.index(low)]
    assert base is not None
    offsets = [d - low for d in distances]  # type: ignore[operator]
    if max(offsets) > arm_mve.MAX_SCATTER_OFFSET:
        return None
    target = geps[0].source  # type: ignore[union-attr]
    ops = list(block.ops)
    start, end = ops.index(chains[0].store), ops.index(chains[-1].store)
    stores = {c.store for c in chains}
    for op in ops[start + 1:end]:
        if op in stores:
            continue
        if not isinstance(op, _BETWEEN):
            return None
        if isinstance(op, uop.LoadOp) and isinstance(op.ptr.owner, uop.GepOp) and op.ptr.owner.source == target:
            return None
        if isinstance(op, uop.LoadOp) and not isinstance(op.ptr.owner, uop.GepOp):
            return None
    return lanes, steps, base, offsets


def _erase_dead(op: Operation) -> None:
    """Erase `op` and then each op feeding it that is left without uses (the scalar chain)."""
    work = [op]
    while work:
        op = work.pop()
        if op.parent is None or any(r.uses for r in op.results):
            continue
        feeding = [v.owner for v in op.operands if isinstance(v.owner, Operation)]
        Rewriter.erase_op(op)
        work += [f for f in feeding if not isinstance(f, uop.RangeOp) and _erasable(f)]


_ERASABLE = (uop.CastOp, uop.MulOp, uop.AddOp, uop.ShrOp, uop.MaxOp, uop.MinOp, uop.LoadOp, uop.GepOp, arm_mve.VmovLaneOp)
"""What a scalar chain is made of: pure ops, and loads through inbounds geps (the multipliers);
its sum may be a lane taken out of a vector (`arm_mve.vmov_lane`)."""


def _erasable(op: Operation) -> bool:
    if isinstance(op, uop.LoadOp):  # a checked load's trap is kept
        return isinstance(gep := op.ptr.owner, uop.GepOp) and gep.inbounds is not None
    return isinstance(op, _ERASABLE)


def _vector_of(lanes: list[_Chain]) -> SSAValue | None:
    """The vector whose lanes 0 to 3 the sums are, in order (four `arm_mve.vmov_lane` of it:
    `conv_depthwise_mve`'s outputs), else None."""
    owners = [c.acc.owner for c in lanes]
    if not all(isinstance(o, arm_mve.VmovLaneOp) for o in owners):
        return None
    vectors = {o.input for o in owners}  # type: ignore[union-attr]
    if len(vectors) != 1 or [o.lane.data for o in owners] != list(range(LANES)):  # type: ignore[union-attr]
        return None
    return vectors.pop()


def _rewrite(chains: list[_Chain], lanes: list[_Chain], steps: list[int], base: uop.GepOp, offsets: list[int]) -> None:
    last = chains[-1].store
    at = InsertPoint.before(last)

    def add(op: Operation) -> SSAValue:
        op.location = last.location
        Rewriter.insert_op(op, at)
        return op.results[0]

    quad = arm_mve.QUAD_TYPE
    sums = _vector_of(lanes) or add(arm_mve.VmovLanesOp([c.acc for c in lanes]))
    first = chains[0]
    if steps == [0] * LANES:
        multipliers = add(uop.BroadcastOp(first.multiplier.result, quad))
    else:
        multipliers = add(uop.VLoadOp(first.multiplier.ptr, quad))
    value = add(arm_mve.VrshrOp(add(arm_mve.VmulhOp(sums, multipliers)), first.shift - 32))
    if first.zero_point is not None:
        value = add(uop.AddOp(value, add(uop.BroadcastOp(first.zero_point, quad))))
    lo, hi = first.bound_values
    bounds = (lo, hi) if first.clamp[0] is uop.MaxOp else (hi, lo)
    for clamp, bound in zip((first.clamp[0], uop.MinOp if first.clamp[0] is uop.MaxOp else uop.MaxOp), bounds):
        value = add(clamp(value, add(uop.BroadcastOp(bound, quad))))
    scatter = arm_mve.VstrbScatterOp(value, base.result, offsets)
    scatter.location = last.location
    Rewriter.insert_op(scatter, at)
    for chain in chains:
        _erase_dead(chain.store)


def _requantize_block(block: Block) -> None:
    runs: list[list[_Chain]] = [[]]
    for op in block.ops:
        if isinstance(op, uop.StoreOp) and (chain := _match(op)) is not None:
            runs[-1].append(chain)
        elif isinstance(op, uop.RangeOp | uop.StoreOp | uop.VStoreOp):
            runs.append([])  # a loop or another store between chains: a group never spans it
    for run in runs:
        i = 0
        while i + LANES <= len(run):
            group = _group(run[i:i + LANES], block)
            if group is None:
                i += 1
                continue
            _rewrite(run[i:i + LANES], *group)
            i += LANES
        if len(run) - i == LANES - 1 and (group := _group(run[i:], block)) is not None:
            _rewrite(run[i:], *group)  # three outputs of one channel (a depthwise Conv's row)


@dataclass(frozen=True)
class MveRequantizePass(ModulePass):
    """Four int8 requantization epilogues at once: VMULH, VRSHR, VMAX/VMIN and one VSTRB."""

    name = "mve-requantize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_feature(op, self.name, "mve", "Helium (MVE)")
        blocks = [region_op_block for o in op.walk() for region in o.regions for region_op_block in region.blocks]
        for block in blocks:
            _requantize_block(block)
