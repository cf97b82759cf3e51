"""Parameter inputs read at run time: axes, k, pads ... that are graph inputs, not constants.

A lowering that takes such an input keeps the shapes it was compiled for (declared in the model
or inferred without the value) and reads the value when the generated code runs: it loads the
(small, statically shaped) tensor's elements at the function's top level, checks them against
the compiled shapes, and ends `NAME_predict` with `abi.Status.BAD_PARAMETER` through a
`abi.check` when they disagree, before any kernel of the node has run. The helpers here build
those loads and conditions; the decisions (which values are consistent) stay in each lowering.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

import numpy as np
from xdsl.dialects.builtin import IndexType, IntegerType, UnrealizedConversionCastOp
from xdsl.ir import Attribute, Operation, SSAValue

from zant.dialects import abi, uop
from zant.dialects.onnx import input_value
from zant.ir.resources import attr_to_array
from zant.passes.onnx_to_uop.kernel import KernelBuilder, layout_of, tensor_shape

I64 = IntegerType(64)


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The value of a tensor a constant produced, else None (a run-time value)."""
    owner = layout_of(value).buffer.owner
    if isinstance(owner, uop.DefineGlobalOp) and owner.value is not None:
        return attr_to_array(owner.value)
    return None


def runtime_input(op: Operation, index: int) -> SSAValue | None:
    """ONNX input `index` when present and only known at run time, else None."""
    value = input_value(op, index)
    if value is None or constant_array(value) is not None:
        return None
    return value


def guard_builder(kb: KernelBuilder, op: Operation, indices: Sequence[int]) -> KernelBuilder:
    """Where a lowering reads and checks its parameters (ONNX inputs `indices`): at the
    function's entry when each present one is a graph input, so that a contradicting value ends NAME_predict
    before any kernel of the graph has run (no output written); else in front of `op`, with
    `kb`. Values made there (the loaded parameters, what the kernels compute from them) dominate
    every kernel."""
    for index in indices:
        value = input_value(op, index)
        if value is None:
            continue
        # A constant's buffer may be defined after the entry: read there, each must be an input.
        owner = layout_of(value).buffer.owner
        if not (isinstance(owner, uop.DefineGlobalOp) and owner.role.data == uop.BufferRole.INPUT):
            return kb
    block = op.parent_block()
    if block is None:
        return kb
    # After the graph inputs' buffers (and the casts that stand for their tensors), so that every
    # input is defined there.
    anchor = block.first_op
    while isinstance(anchor, uop.DefineGlobalOp | abi.ArenaOp | UnrealizedConversionCastOp):
        anchor = anchor.next_op
    return kb if anchor is None or anchor is op else KernelBuilder(anchor)


def load_all(kb: KernelBuilder, value: SSAValue, to: Attribute = I64) -> list[SSAValue]:
    """Every element of the (small) tensor `value`, in row-major order, loaded at the function's
    top level and converted to `to` (i64 unless told)."""
    count = int(np.prod(tensor_shape(value)))
    flat = layout_of(value).reshape((count,))
    assert flat is not None, "a graph input is contiguous"
    return [kb.cast(kb.load(flat, [kb.index(j)]), to) for j in range(count)]


def i64(kb: KernelBuilder, value: int) -> SSAValue:
    return kb.const(value, I64)


def all_of(kb: KernelBuilder, conditions: Sequence[SSAValue]) -> SSAValue:
    """The conjunction of i1 values (true when there are none)."""
    if not conditions:
        return kb.const(1, IntegerType(1))
    return reduce(lambda a, b: kb.alu("and", a, b), conditions)


def any_of(kb: KernelBuilder, conditions: Sequence[SSAValue]) -> SSAValue:
    """The disjunction of i1 values (false when there are none)."""
    if not conditions:
        return kb.const(0, IntegerType(1))
    return reduce(lambda a, b: kb.alu("or", a, b), conditions)


def check(kb: KernelBuilder, condition: SSAValue, status: int = abi.Status.BAD_PARAMETER) -> None:
    """End the entry point with `status` (a parameter that contradicts the compiled shapes, by
    default) unless `condition` holds."""
    kb.insert(abi.CheckOp(condition, status))


def axis_membership(kb: KernelBuilder, axes: Sequence[SSAValue], rank: int) -> tuple[list[SSAValue], SSAValue]:
    """For loaded axis values (negative ones counting from the end): per dimension d of a
    rank-`rank` tensor whether some value names d, and whether the values are valid: each in
    [-rank, rank), no dimension named twice."""
    counts = []
    for d in range(rank):
        hits = [kb.alu("or", kb.alu("cmpeq", a, i64(kb, d)), kb.alu("cmpeq", a, i64(kb, d - rank))) for a in axes]
        one, zero = i64(kb, 1), i64(kb, 0)
        counts.append(reduce(lambda s, h: kb.alu("add", s, kb.where(h, one, zero)), hits, zero))
    named = [kb.alu("cmpeq", c, i64(kb, 1)) for c in counts]
    total = reduce(lambda s, c: kb.alu("add", s, c), counts, i64(kb, 0))
    valid = all_of(kb, [kb.alu("cmple", c, i64(kb, 1)) for c in counts] + [kb.alu("cmpeq", total, i64(kb, len(axes)))])
    return named, valid


def check_values(kb: KernelBuilder, op: Operation, index: int, expected: Sequence[int], what: str) -> None:
    """When ONNX input `index` is only known at run time: `check` that its values are
    `expected` (the ones the compiled shapes imply)."""
    value = runtime_input(op, index)
    if value is None:
        return
    kb = guard_builder(kb, op, [index])
    loaded = load_all(kb, value)
    if len(loaded) != len(expected):
        raise ValueError(f"{what} has {len(loaded)} values, the shapes need {len(expected)}")
    check(kb, all_of(kb, [kb.alu("cmpeq", v, kb.const(int(e), I64)) for v, e in zip(loaded, expected)]))


def check_axis_sets(kb: KernelBuilder, axes: Sequence[SSAValue], rank: int, sets: Sequence[frozenset[int]]) -> None:
    """`check` that run-time axes (negative ones counting from the end of `rank`) are valid and
    name exactly one of `sets`."""
    named, valid = axis_membership(kb, axes, rank)
    matches = [all_of(kb, [named[d] if d in s else kb.alu("not", named[d]) for d in range(rank)]) for s in sets]
    check(kb, kb.alu("and", valid, any_of(kb, matches)))


def constant_indices(op: Operation, index: int, extents: int | Sequence[int], nonnegative: bool = False) -> bool:
    """Whether ONNX input `index` of `op` (indices into data) is a constant; if it is, each
    value must be valid (a compile error, naming the value and the range, otherwise). `extents`:
    the size of the dimension the values index, or one per position along the last axis (GatherND's
    and ScatterND's index tuples). Valid values are [-extent, extent) (negative ones count from
    the end), [0, extent) when `nonnegative`."""
    value = input_value(op, index)
    array = None if value is None else constant_array(value)
    if array is None:
        return False
    array = np.asarray(array).astype(np.int64)
    limits = np.broadcast_to(np.asarray(extents, dtype=np.int64), array.shape) if array.size else array
    lowest = np.zeros_like(limits) if nonnegative else -limits
    bad = np.argwhere((array < lowest) | (array >= limits)) if array.size else []
    if len(bad):
        where = tuple(int(i) for i in bad[0])
        position = f" at {list(where)}" if where else ""
        raise ValueError(
            f"constant index {int(array[where])}{position} is out of range: the valid ones are "
            f"[{int(lowest[where])}, {int(limits[where])}) for a dimension of {int(limits[where])}"
        )
    return True


def data_index(kb: KernelBuilder, value: SSAValue, extent: int, known: bool, nonnegative: bool = False) -> SSAValue:
    """An integer read from an indices input as an index into a dimension of `extent`: negative
    ones count from the end unless `nonnegative`. `known`: the indices are a constant that
    `constant_indices` checked, so the value only needs wrapping; otherwise it is only known
    at run time and `uop.bound_index` marks it for `check-data-indices`."""
    if not known:
        return kb.insert(uop.BoundIndexOp(value, extent, nonnegative)).result
    value = kb.cast(value, I64)
    if not nonnegative:
        negative = kb.alu("cmplt", value, i64(kb, 0))
        value = kb.where(negative, kb.alu("add", value, i64(kb, extent)), value)
    return kb.cast(value, IndexType())


__all__ = [
    "I64",
    "all_of",
    "any_of",
    "axis_membership",
    "check",
    "check_axis_sets",
    "check_values",
    "constant_array",
    "constant_indices",
    "data_index",
    "guard_builder",
    "load_all",
    "runtime_input",
]
