"""`check-data-indices`: every index read from the data is checked before its kernel runs.

The lowerings mark each address computed from input values (Gather's indices, a Scatter's,
MaxUnpool's, ArrayFeatureExtractor's ...) with `uop.bound_index %v, n`: valid values are
[-n, n), negative ones counting from the end (`nonnegative`: [0, n)). This pass makes two things
of each, so that no input value can make the generated code read or write outside its buffers,
in every build mode:

1. a check, before the loop nest (the kernel) the op is in: a copy of the loops the index
   depends on and of the code computing it (loads of the indices, casts, arithmetic) that
   folds "every value is valid" into an `i1` accumulator, then `abi.check %ok, 6`
   (`abi.Status.BAD_INDEX`). The copy goes as early as the values it reads allow: right after
   the declarations at the function's entry when the indices are a graph input (no kernel of
   the graph has run, no output is written when it fails), else right after the kernel that
   last writes them; always before the indexed op's own kernel.
2. in the kernel, the index itself: negative values wrapped, then clamped to [0, n - 1] (an
   unsigned min, in 32 bits where n allows; the check has already passed, so this changes no
   valid index, but the address stays inside the buffer even if it had not).

A `uop.bound_index` whose value depends on something the check cannot recompute ahead of the
kernel (an accumulator, a buffer the kernel itself writes) is an error naming it: the lowerings
only mark indices loaded from buffers the kernel reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp, Signedness
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from zant.dialects import abi, uop
from zant.errors import ZantError
from zant.ir.walk import ops_of
from zant.passes.onnx_to_uop.kernel import KernelBuilder

I1 = IntegerType(1)
I32 = IntegerType(32)
I64 = IntegerType(64)
U32 = IntegerType(32, Signedness.UNSIGNED)
U64 = IntegerType(64, Signedness.UNSIGNED)


@dataclass(frozen=True)
class CheckDataIndicesPass(ModulePass):
    """Check every `uop.bound_index` ahead of its kernel (status 6) and clamp it in the kernel."""

    name = "check-data-indices"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in ops_of(op, func.FuncOp):
            if not function.body.blocks:
                continue
            block = function.body.block
            for top in list(block.ops):
                bounds = [o for o in top.walk() if isinstance(o, uop.BoundIndexOp)]
                if not bounds:
                    continue
                _check_ahead(block, top, bounds)
                for bound in bounds:
                    _clamp(bound)


def _check_ahead(block: Block, top: Operation, bounds: list[uop.BoundIndexOp]) -> None:
    """Insert, before `top`, the checks of the `bounds` inside it: one loop nest per set of
    loops the indices depend on."""
    written = _written_buffers(top)
    groups: dict[tuple[uop.RangeOp, ...], list[tuple[uop.BoundIndexOp, set[Operation]]]] = {}
    for bound in bounds:
        ops, loops = _slice(top, bound, written)
        groups.setdefault(loops, []).append((bound, ops))
    order = {o: i for i, o in enumerate(top.walk())}
    for loops, members in groups.items():
        ops = sorted(set().union(*(m for _, m in members)), key=order.__getitem__)
        values = [bound.value for bound, _ in members]
        kb = KernelBuilder(_insertion_point(block, top, ops, values, _loaded_buffers(ops)))
        mapping: dict[SSAValue, SSAValue] = {}
        if not loops:
            for o in ops:
                kb.insert(o.clone(value_mapper=mapping))
            oks = [_valid(kb, bound, mapping.get(bound.value, bound.value)) for bound, _ in members]
            for ok in oks:
                kb.insert(abi.CheckOp(ok, abi.Status.BAD_INDEX))
            continue
        acc = kb.define_acc(1, I1)
        _nest(kb, list(loops), mapping, ops, members, acc)
        kb.insert(abi.CheckOp(kb.acc_get(acc), abi.Status.BAD_INDEX))


def _nest(
    kb: KernelBuilder, loops: list[uop.RangeOp], mapping: dict[SSAValue, SSAValue],
    ops: list[Operation], members: list[tuple[uop.BoundIndexOp, set[Operation]]], acc: SSAValue,
) -> None:
    """The copied loops (outermost first), the copied index code in the innermost, and the
    accumulator's `and` of each index's validity."""
    if loops:
        loop = loops[0]
        with kb.loop(loop.end.data, loop.start.data, loop.step.data) as iv:
            mapping[loop.induction_var] = iv
            _nest(kb, loops[1:], mapping, ops, members, acc)
        return
    for o in ops:
        kb.insert(o.clone(value_mapper=mapping))
    for bound, _ in members:
        ok = _valid(kb, bound, mapping.get(bound.value, bound.value))
        kb.acc_set(acc, kb.alu("and", kb.acc_get(acc), ok))


def _valid(kb: KernelBuilder, bound: uop.BoundIndexOp, value: SSAValue) -> SSAValue:
    """lowest <= value < extent, as an i1: value - lowest < extent - lowest compared unsigned
    in 64 bits (the subtraction wraps, so a value outside lands above), one add and one
    compare."""
    value = kb.cast(value, I64)
    extent, lowest = bound.extent.value.data, bound.lowest
    if lowest:
        value = kb.alu("sub", value, kb.const(lowest, I64))
    return kb.alu("cmplt", kb.cast(value, U64), kb.const(extent - lowest, U64))


def _slice(top: Operation, bound: uop.BoundIndexOp, written: set[SSAValue]) -> tuple[set[Operation], tuple[uop.RangeOp, ...]]:
    """The ops inside `top` that compute `bound`'s value, and the loops around `bound` (outermost
    first) whose induction variables they use."""
    ops: set[Operation] = set()
    used_ivs: set[SSAValue] = set()
    pending = [bound.value]
    while pending:
        value = pending.pop()
        owner = value.owner
        if isinstance(owner, Block):
            if _inside(owner.parent_op(), top):
                used_ivs.add(value)
            continue
        if not _inside(owner, top) or owner in ops:
            continue
        if owner.regions or not _recomputable(owner, written):
            raise ZantError(
                f"check-data-indices: the index of {bound.name} (extent {bound.extent.value.data}) depends on "
                f"{owner.name}, which cannot be recomputed before its kernel"
            )
        ops.add(owner)
        pending.extend(owner.operands)
    loops = []
    parent = bound.parent_op()
    while parent is not None and _inside(parent, top):
        if isinstance(parent, uop.RangeOp) and parent.induction_var in used_ivs:
            loops.append(parent)
        parent = parent.parent_op()
    return ops, tuple(reversed(loops))


def _recomputable(op: Operation, written: set[SSAValue]) -> bool:
    """A pure op, or a load from a buffer the kernel does not write."""
    if isinstance(op, uop.LoadOp):
        gep = op.ptr.owner
        return isinstance(gep, uop.GepOp) and gep.buffer not in written
    return isinstance(op, (uop.GepOp, uop.ConstOp, uop.CastOp, uop.WhereOp, *uop.ALU_OPS.values()))


def _inside(op: Operation | None, top: Operation) -> bool:
    while op is not None:
        if op is top:
            return True
        op = op.parent_op()
    return False


def _written_buffers(top: Operation) -> set[SSAValue]:
    """The buffers `top` stores into (through any view)."""
    written = set()
    for o in top.walk():
        if isinstance(o, uop.StoreOp | uop.VStoreOp):
            gep = o.ptr.owner
            if isinstance(gep, uop.GepOp):
                written.add(gep.buffer)
            else:
                raise ZantError(f"check-data-indices: a {o.name} through a pointer that is not a uop.gep")
    return written


def _loaded_buffers(ops: list[Operation]) -> set[SSAValue]:
    return {o.ptr.owner.buffer for o in ops if isinstance(o, uop.LoadOp)}  # type: ignore[union-attr]


def _insertion_point(
    block: Block, top: Operation, ops: list[Operation], values: list[SSAValue], loaded: set[SSAValue]
) -> Operation:
    """The top-level op before which the check goes: after every top-level op defining a value
    the copied code (`ops`) or the check (`values`) uses and every earlier kernel writing a
    buffer it loads, after the declarations at the function's entry, and before `top`."""
    inside = set(ops)
    needed: set[Operation] = set()
    for operand in [*values, *(v for o in ops for v in o.operands)]:
        owner = operand.owner
        if isinstance(owner, Operation) and owner not in inside and not _inside(owner, top):
            needed.add(_top_level(owner, block))
    latest = None
    op = block.first_op
    while op is not None and op is not top:
        if op in needed or (loaded and _written_buffers(op) & loaded):
            latest = op
        op = op.next_op
    position = latest.next_op if latest is not None else block.first_op
    while position is not top and isinstance(position, uop.DefineGlobalOp | abi.ArenaOp):
        position = position.next_op
    assert position is not None
    return position


def _top_level(op: Operation, block: Block) -> Operation:
    while op.parent_block() is not block:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


def _clamp(bound: uop.BoundIndexOp) -> None:
    """Replace `bound` by its value wrapped (negative ones count from the end) and clamped to
    [0, extent - 1]: an index inside its dimension whatever the value. The check has passed, so
    the value fits 32 bits and the clamp changes nothing; the arithmetic is done on its low 32
    bits (64-bit arithmetic takes two or more instructions per op on a 32-bit core), and the
    clamp is one unsigned min (a negative value is a large unsigned one)."""
    kb = KernelBuilder(bound)
    extent = bound.extent.value.data
    signed, unsigned = (I32, U32) if extent < 2**31 else (I64, U64)
    value = kb.cast(bound.value, signed)
    if bound.nonnegative is None:
        negative = kb.alu("cmplt", value, kb.const(0, signed))
        value = kb.where(negative, kb.alu("add", value, kb.const(extent, signed)), value)
    value = kb.alu("min", kb.cast(value, unsigned), kb.const(max(extent - 1, 0), unsigned))
    index = kb.cast(value, IndexType())
    bound.result.replace_all_uses_with(index)
    bound.detach()
    bound.erase()
