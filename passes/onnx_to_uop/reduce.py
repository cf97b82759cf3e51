"""Reductions: the Reduce* family, ArgMax / ArgMin, CumSum / CumProd.

Every Reduce* op is one kernel, parameterized by a table entry: an element-wise `map` applied
to each input element, an initial value and a `combine` for the accumulator, and a `finalize`
applied to the accumulated value (ReduceL2 = sqrt ∘ Σ x², ReduceLogSumExp = log ∘ Σ exp, ...).
The input is read through a permuted view with the reduced axes innermost; a loop nest walks
the kept axes, and inside it one accumulator (`uop.define_acc`) runs over the reduced axes.

Float16/bfloat16 accumulate in f32. ReduceLogSumExp is stabilized by a first pass for the
maximum. Empty `axes` reduce every axis, unless `noop_with_empty_axes`: then nothing is reduced
and the kernel is the element-wise map/finalize (ReduceSumSquare gives x², as ONNX says).

ArgMax / ArgMin, TopK and the cumulative ops work along one axis moved last; a reversed view (a
negative stride) gives CumSum/CumProd `reverse`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, Operation, SSAValue
from zant.dialects import uop
from zant.dialects.onnx import (
    ArgMaxOp,
    ArgMinOp,
    CumProdOp,
    CumSumOp,
    ReduceL1Op,
    ReduceL2Op,
    ReduceLogSumExpOp,
    ReduceLogSumOp,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceMinOp,
    ReduceProdOp,
    ReduceSumOp,
    ReduceSumSquareOp,
    TopKOp,
    get_attr,
    input_value,
    inputs,
)
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.elementwise import reject_bfloat16
from zant.dialects.uop import is_float_type
from zant.passes.onnx_to_uop.kernel import (
    highest_value,
    lowest_value,
    KernelBuilder,
    Layout,
    accumulator_type,
    layout_of,
    tensor_element_type,
    tensor_shape,
)

from zant.ir.resources import attr_to_array
from zant.passes.onnx_to_uop.parameters import (
    I64,
    all_of,
    any_of,
    axis_membership,
    check,
    check_values,
    constant_array,
    guard_builder,
    load_all,
    runtime_input,
)


def constant_input(op: Operation, index: int) -> np.ndarray | None:
    """The value of ONNX input `index` when a constant produced it; None when absent."""
    value = input_value(op, index)
    if value is None:
        return None
    owner = layout_of(value).buffer.owner
    if isinstance(owner, uop.DefineGlobalOp) and owner.value is not None:
        return attr_to_array(owner.value)
    raise NotImplementedError(f"input {index} must be a constant")


def normalize_axes(axes: Sequence[int], rank: int) -> list[int]:
    result = []
    for axis in axes:
        axis = int(axis)
        if not -rank <= axis < rank:
            raise ValueError(f"axis {axis} out of range for rank {rank}")
        if axis % rank in result:
            raise ValueError(f"axis {axis} repeated")
        result.append(axis % rank)
    return sorted(result)


def _is_bool(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


Unary = Callable[[KernelBuilder, SSAValue], SSAValue]


def _identity(kb: KernelBuilder, x: SSAValue) -> SSAValue:
    return x


def _square(kb: KernelBuilder, x: SSAValue) -> SSAValue:
    return kb.alu("mul", x, x)


def _unary(name: str) -> Unary:
    return lambda kb, x: kb.alu(name, x)


@dataclass(frozen=True)
class Reduction:
    """How one Reduce* op folds: acc = init; acc = combine(acc, map(x)) …; y = finalize(acc)."""

    init: Callable[[Attribute], int | float]
    combine: str
    map: Unary = _identity
    finalize: Unary = _identity
    mean: bool = False  # divide by the number of reduced elements before `finalize`
    float_only: bool = False
    shift_by_max: bool = False  # log-sum-exp: subtract the maximum first, add it back at the end


REDUCTIONS: dict[str, Reduction] = {
    ReduceSumOp.name: Reduction(lambda t: 0, "add"),
    ReduceMeanOp.name: Reduction(lambda t: 0, "add", mean=True),
    ReduceProdOp.name: Reduction(lambda t: 1, "mul"),
    ReduceMaxOp.name: Reduction(lowest_value, "max"),
    ReduceMinOp.name: Reduction(highest_value, "min"),
    ReduceL1Op.name: Reduction(lambda t: 0, "add", map=_unary("abs")),
    ReduceL2Op.name: Reduction(lambda t: 0, "add", map=_square, finalize=_unary("sqrt"), float_only=True),
    ReduceSumSquareOp.name: Reduction(lambda t: 0, "add", map=_square),
    ReduceLogSumOp.name: Reduction(lambda t: 0, "add", finalize=_unary("log"), float_only=True),
    ReduceLogSumExpOp.name: Reduction(
        lambda t: 0, "add", map=_unary("exp"), finalize=_unary("log"), float_only=True, shift_by_max=True
    ),
}

_BOOL_COMBINE = {"max": "or", "min": "and"}


def reduce_axes(op: Operation, rank: int) -> list[int]:
    """The reduced axes (sorted, non-negative) from the `axes` input or attribute; [] = none.
    An `axes` input known only at run time must be empty (its shape says so)."""
    axes_input = input_value(op, 1) if len(inputs(op)) > 1 else None
    if axes_input is not None and constant_array(axes_input) is None:
        assert not int(np.prod(tensor_shape(axes_input))), "non-empty run-time axes: runtime_reduce_axes"
        axes = None
    else:
        axes = constant_input(op, 1) if axes_input is not None else None
    if axes is None:
        try:
            axes = get_attr(op, "axes")
        except KeyError:
            axes = None
    axes = [] if axes is None else list(np.asarray(axes).reshape(-1))
    if not axes:
        noop = get_attr(op, "noop_with_empty_axes")
        return [] if noop else list(range(rank))
    return normalize_axes(axes, rank)


def _reduced_sets(in_shape: Sequence[int], out_shape: Sequence[int], keepdims: bool) -> list[frozenset[int]]:
    """Every set of axes whose reduction turns `in_shape` into `out_shape` (keepdims or not)."""
    rank = len(in_shape)
    if keepdims:
        if len(out_shape) != rank:
            return []
        # A size-1 dimension may be reduced or kept alike; count it kept.
        reduced = frozenset(d for d in range(rank) if out_shape[d] != in_shape[d])
        if any(out_shape[d] != 1 for d in reduced):
            return []
        free = [d for d in range(rank) if in_shape[d] == 1]
        return [reduced | frozenset(c) for n in range(len(free) + 1) for c in combinations(free, n)]
    count = rank - len(out_shape)
    if count < 0:
        return []
    return [
        frozenset(c)
        for c in combinations(range(rank), count)
        if [in_shape[d] for d in range(rank) if d not in c] == list(out_shape)
    ]


@dataclass(frozen=True)
class RuntimeAxes:
    """The reduction a run-time `axes` input may ask for: `candidates` (the sets consistent
    with the compiled shapes, each reduced axes ordered alike by size) and, when more than one
    reduces different data, the i1 `selects` saying which one the value names (else [])."""

    candidates: list[list[int]]
    selects: list[SSAValue]


def runtime_reduce_axes(
    kb: KernelBuilder, axes_input: SSAValue, in_shape: Sequence[int], out_shape: Sequence[int], keepdims: bool
) -> RuntimeAxes:
    """Read a run-time `axes` input and check it against the compiled shapes.

    The shapes decide the reduced axes up to size-1 dimensions (reducing one changes no
    value); what they leave open, keepdims=0 dropping one of several equal dimensions, is
    chosen at run time. The value is checked exactly: every axis in range, none twice, and
    the set one that turns `in_shape` into `out_shape`, else the entry point returns
    `abi.Status.BAD_PARAMETER`.
    """
    rank = len(in_shape)
    sets = _reduced_sets(in_shape, out_shape, keepdims)
    count = int(np.prod(tensor_shape(axes_input)))
    sets = [s for s in sets if len(s) == count]
    if not sets:
        raise ValueError(
            f"no {count} axes reduce shape {list(in_shape)} to {list(out_shape)}"
            f" with keepdims={int(keepdims)}; freeze the axes input"
        )
    named, valid = axis_membership(kb, load_all(kb, axes_input), rank)

    def matches(s: frozenset[int]) -> SSAValue:
        return all_of(kb, [named[d] if d in s else kb.alu("not", named[d]) for d in range(rank)])

    match = {s: matches(s) for s in sets}
    check(kb, kb.alu("and", valid, any_of(kb, list(match.values()))))
    # Sets differing only in size-1 dimensions reduce the same data: one of each kind.
    kinds: dict[frozenset[int], frozenset[int]] = {}
    for s in sets:
        kinds.setdefault(frozenset(d for d in s if in_shape[d] != 1), s)
    # Reduced axes ordered by size, so every kind's loops have the same bounds.
    candidates = [sorted((d for d in s if in_shape[d] != 1), key=lambda d: (in_shape[d], d)) for s in kinds]
    if len(candidates) == 1:
        return RuntimeAxes(candidates, [])
    if len({tuple(in_shape[d] for d in c) for c in candidates}) != 1:
        raise ValueError(
            f"the axes reducing shape {list(in_shape)} to {list(out_shape)} are only known at run "
            "time, and the possible reductions loop differently; freeze the axes input"
        )
    selects = [any_of(kb, [match[s] for s in sets if frozenset(d for d in s if in_shape[d] != 1) == kind]) for kind in kinds]
    return RuntimeAxes(candidates, selects)


def _runtime_strides(kb: KernelBuilder, x: Layout, choice: RuntimeAxes) -> list[SSAValue]:
    """The strides of the kept-then-reduced view of `x` for the candidate the value chose, as
    index values picked at run time (the last candidate when no select holds: the check failed)."""
    per_candidate = []
    for candidate in choice.candidates:
        kept = [d for d in range(x.rank) if d not in candidate]
        per_candidate.append(x.permute(kept + candidate).strides)
    strides: list[SSAValue] = []
    for position in range(x.rank):
        values = [s[position] for s in per_candidate]
        picked = kb.index(values[-1])
        for value, select in zip(reversed(values[:-1]), reversed(choice.selects[:-1])):
            if value != values[-1]:
                picked = kb.where(select, kb.index(value), picked)
        strides.append(picked)
    return strides


def _kept_view(out: Layout, kept: Sequence[int], keepdims: bool) -> Layout:
    """The output read with only the kept axes (the reduced ones have size 1 with keepdims)."""
    if not keepdims:
        return out
    return Layout(out.buffer, tuple(out.shape[k] for k in kept), tuple(out.strides[k] for k in kept), out.offset)


class ReduceLowering(OnnxLowering):
    """Every Reduce* op: one accumulator per output element, looping over the reduced axes."""

    op_names = frozenset(REDUCTIONS)

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        reduction = REDUCTIONS[op.name]
        x = inputs(op)[0]
        assert x is not None
        in_shape = tensor_shape(x)
        rank = len(in_shape)
        element_type = tensor_element_type(op.results[0])
        if reduction.float_only and not is_float_type(element_type):
            raise ValueError(f"{op.name} on {element_type} is not supported")
        keepdims = bool(get_attr(op, "keepdims"))
        out_shape = tensor_shape(op.results[0])
        axes_input = runtime_input(op, 1)
        choice = None
        if axes_input is not None and int(np.prod(tensor_shape(axes_input))):
            choice = runtime_reduce_axes(guard_builder(kb, op, [1]), axes_input, in_shape, out_shape, keepdims)
            axes = choice.candidates[0]
        else:
            axes = reduce_axes(op, rank)
        kept = [d for d in range(rank) if d not in axes]
        out = kb.alloc(result_name(op), out_shape, element_type)
        if out.size == 0:
            return [out]
        x_view = layout_of(x).permute(kept + axes)
        if choice is not None and choice.selects:
            # Which equal-sized axes are reduced is known at run time: index x with its strides.
            strides = _runtime_strides(kb, layout_of(x), choice)
            flat = layout_of(x)
            flat = Layout(flat.buffer, (flat.buffer.type.size.data,), (1,), 0)  # type: ignore[attr-defined]
            offset = layout_of(x).offset

            def read(ivs: Sequence[SSAValue]) -> SSAValue:
                terms = [kb.alu("mul", iv, stride) for iv, stride in zip(ivs, strides)]
                address = kb.index(offset)
                for term in terms:
                    address = kb.alu("add", address, term)
                return kb.load(flat, [address])
        else:

            def read(ivs: Sequence[SSAValue]) -> SSAValue:
                return kb.load(x_view, ivs)

        kept_shape = [in_shape[k] for k in kept]
        out_view = _kept_view(out, kept, keepdims) if keepdims else out.reshape(kept_shape)
        assert out_view is not None
        reduced_shape = [in_shape[a] for a in axes]
        count = int(np.prod(reduced_shape)) if reduced_shape else 1

        combine = reduction.combine
        acc_type = accumulator_type(element_type)
        if _is_bool(element_type):
            combine = _BOOL_COMBINE.get(combine, combine)
            if combine not in ("or", "and"):
                raise ValueError(f"{op.name} on booleans is not supported")

        with kb.loop_nest(kept_shape) as outer:
            shift = None
            if reduction.shift_by_max and count > 0:
                maximum = kb.define_acc(lowest_value(acc_type), acc_type)
                with kb.loop_nest(reduced_shape) as inner:
                    value = kb.cast(read([*outer, *inner]), acc_type)
                    kb.acc_set(maximum, kb.alu("max", kb.acc_get(maximum), value))
                shift = kb.acc_get(maximum)
                # An all -inf (or inf) slice: shift by 0, so the result is exp/log of it unshifted.
                finite = kb.alu("cmpeq", kb.alu("sub", shift, shift), kb.const(0.0, acc_type))
                shift = kb.where(finite, shift, kb.const(0.0, acc_type))

            acc = kb.define_acc(reduction.init(acc_type), acc_type)
            if count:  # an empty reduction is the initial value; no loop reads the empty input
                with kb.loop_nest(reduced_shape) as inner:
                    value = kb.cast(read([*outer, *inner]), acc_type)
                    if shift is not None:
                        value = kb.alu("sub", value, shift)
                    kb.acc_set(acc, kb.alu(combine, kb.acc_get(acc), reduction.map(kb, value)))
            result = kb.acc_get(acc)
            if reduction.mean:
                result = kb.alu("div", result, kb.const(count, acc_type))
            result = reduction.finalize(kb, result)
            if shift is not None:
                result = kb.alu("add", result, shift)
            kb.store(kb.cast(result, element_type), out_view, outer)
        return [out]


class ArgLowering(OnnxLowering):
    """ArgMax / ArgMin along `axis`: the first (or, with select_last_index, last) extremum."""

    op_names = frozenset({ArgMaxOp.name, ArgMinOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        (x,) = inputs(op)
        assert x is not None
        in_shape = tensor_shape(x)
        rank = len(in_shape)
        (axis,) = normalize_axes([get_attr(op, "axis")], rank)
        keepdims = bool(get_attr(op, "keepdims"))
        last = bool(get_attr(op, "select_last_index"))
        out_type = tensor_element_type(op.results[0])
        out = kb.alloc(result_name(op), tensor_shape(op.results[0]), out_type)
        n = in_shape[axis]
        if out.size == 0:
            return [out]
        if n == 0:
            raise ValueError("ArgMax/ArgMin over an empty axis")
        kept = [d for d in range(rank) if d != axis]
        x_view = layout_of(x).permute(kept + [axis])
        out_view = _kept_view(out, kept, keepdims)
        element_type = x_view.element_type
        is_max = isinstance(op, ArgMaxOp)

        with kb.loop_nest([in_shape[k] for k in kept]) as outer:
            best = kb.define_acc(0, element_type)
            kb.acc_set(best, kb.load(x_view, [*outer, kb.index(0)]))
            best_index = kb.define_acc(0, out_type)
            with kb.loop(n, start=1) as k:
                value = kb.load(x_view, [*outer, k])
                current = kb.acc_get(best)
                lhs, rhs = (current, value) if is_max else (value, current)
                # max: current < value (first) or current <= value (last); min mirrored.
                better = kb.alu("cmple" if last else "cmplt", lhs, rhs)
                kb.acc_set(best, kb.where(better, value, current))
                kb.acc_set(best_index, kb.where(better, kb.cast(k, out_type), kb.acc_get(best_index)))
            kb.store(kb.acc_get(best_index), out_view, outer)
        return [out]


class CumulativeLowering(OnnxLowering):
    """CumSum / CumProd along the `axis` input, with `exclusive` and `reverse`.

    An `axis` only known at run time (on a tensor of rank > 1: rank 1 has one axis) cannot
    change the result's shape, so the shapes do not choose it: there is one kernel per axis,
    each storing only when the value names its axis (the others write back what is there), and
    `abi.check` returns STATUS_BAD_PARAMETER for an axis out of range.
    """

    op_names = frozenset({CumSumOp.name, CumProdOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = inputs(op)[0]
        assert x is not None
        shape = tensor_shape(x)
        rank = len(shape)
        element_type = tensor_element_type(op.results[0])
        axis_input = runtime_input(op, 1) if rank > 1 else None
        if axis_input is not None:
            gb = guard_builder(kb, op, [1])
            (axis_value,) = load_all(gb, axis_input)
            selects = [
                gb.alu("or", gb.alu("cmpeq", axis_value, gb.const(d, I64)), gb.alu("cmpeq", axis_value, gb.const(d - rank, I64)))
                for d in range(rank)
            ]
            check(gb, any_of(gb, selects))
            out = kb.alloc(result_name(op), shape, element_type)
            if out.size:
                for axis, select in enumerate(selects):
                    self.cumulate(kb, op, layout_of(x), out, axis, select)
            return [out]
        if rank == 1:
            axis = 0  # the only axis, whether or not `axis` is a constant
        else:
            axis_value = constant_input(op, 1)
            assert axis_value is not None
            (axis,) = normalize_axes([int(np.asarray(axis_value).reshape(-1)[0])], rank)
        out = kb.alloc(result_name(op), shape, element_type)
        if out.size:
            self.cumulate(kb, op, layout_of(x), out, axis)
        return [out]

    @staticmethod
    def cumulate(
        kb: KernelBuilder, op: Operation, x_layout: Layout, out_layout: Layout, axis: int, select: SSAValue | None = None
    ) -> None:
        """The kernel along `axis`; with `select`, each store keeps the old value unless it holds."""
        rank, n = x_layout.rank, x_layout.shape[axis]
        element_type = out_layout.element_type
        if get_attr(op, "reverse"):
            x_layout = x_layout.slice(axis, n - 1, -1, n)
            out_layout = out_layout.slice(axis, n - 1, -1, n)
        perm = [d for d in range(rank) if d != axis] + [axis]
        x_rows, out_rows = x_layout.permute(perm), out_layout.permute(perm)
        exclusive = bool(get_attr(op, "exclusive"))
        combine, init = ("add", 0) if isinstance(op, CumSumOp) else ("mul", 1)
        acc_type = accumulator_type(element_type)

        def store(value: SSAValue, at: list[SSAValue]) -> None:
            value = kb.cast(value, element_type)
            if select is not None:
                value = kb.where(select, value, kb.load(out_rows, at))
            kb.store(value, out_rows, at)

        with kb.loop_nest(x_rows.shape[:-1]) as outer:
            acc = kb.define_acc(init, acc_type)
            with kb.loop(n) as k:
                value = kb.cast(kb.load(x_rows, [*outer, k]), acc_type)
                if exclusive:
                    store(kb.acc_get(acc), [*outer, k])
                kb.acc_set(acc, kb.alu(combine, kb.acc_get(acc), value))
                if not exclusive:
                    store(kb.acc_get(acc), [*outer, k])


class TopKLowering(OnnxLowering):
    """TopK along `axis`: K selection passes over each slice, without scratch memory.

    Elements are totally ordered by value (descending for `largest`, else ascending), then by
    index (ascending), which is the order the spec gives equal values. Pass k picks the first
    element, in that order, that comes after the one pass k-1 picked; the passes start after a
    sentinel (the type's extreme value at index -1) that precedes every element. The results
    are therefore always sorted, which `sorted=0` allows too.
    """

    op_names = frozenset({TopKOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        reject_bfloat16(op)
        x = inputs(op)[0]
        assert x is not None
        shape = tensor_shape(x)
        (axis,) = normalize_axes([get_attr(op, "axis")], len(shape))
        values, indices = op.results
        k = tensor_shape(values)[axis]
        check_values(kb, op, 1, [k], "k")
        element_type, index_type = tensor_element_type(values), tensor_element_type(indices)
        largest = bool(get_attr(op, "largest"))
        out_values = kb.alloc(result_name(op, 0), tensor_shape(values), element_type)
        out_indices = kb.alloc(result_name(op, 1), tensor_shape(indices), index_type)
        if out_values.size == 0:
            return [out_values, out_indices]
        perm = [d for d in range(len(shape)) if d != axis] + [axis]
        rows = layout_of(x).permute(perm)
        value_rows, index_rows = out_values.permute(perm), out_indices.permute(perm)
        first, last = (highest_value, lowest_value) if largest else (lowest_value, highest_value)

        def precedes(v: SSAValue, i: SSAValue, w: SSAValue, j: SSAValue) -> SSAValue:
            """(v, i) comes before (w, j): v is better than w, or equal to it at a lower index."""
            strictly = kb.alu("cmplt", w, v) if largest else kb.alu("cmplt", v, w)
            tie = kb.alu("and", kb.alu("cmpeq", v, w), kb.alu("cmplt", i, j))
            return kb.alu("or", strictly, tie)

        with kb.loop_nest(rows.shape[:-1]) as outer:
            previous_value = kb.define_acc(first(element_type), element_type)
            previous_index = kb.define_acc(-1, index_type)
            with kb.loop(k) as rank:
                best_value = kb.define_acc(last(element_type), element_type)
                best_index = kb.define_acc(rows.shape[-1], index_type)
                with kb.loop(rows.shape[-1]) as position:
                    value = kb.load(rows, [*outer, position])
                    index = kb.cast(position, index_type)
                    after = precedes(kb.acc_get(previous_value), kb.acc_get(previous_index), value, index)
                    wins = precedes(value, index, kb.acc_get(best_value), kb.acc_get(best_index))
                    take = kb.alu("and", after, wins)
                    kb.acc_set(best_value, kb.where(take, value, kb.acc_get(best_value)))
                    kb.acc_set(best_index, kb.where(take, index, kb.acc_get(best_index)))
                kb.store(kb.acc_get(best_value), value_rows, [*outer, rank])
                kb.store(kb.acc_get(best_index), index_rows, [*outer, rank])
                kb.acc_set(previous_value, kb.acc_get(best_value))
                kb.acc_set(previous_index, kb.acc_get(best_index))
        return [out_values, out_indices]


PATTERNS = (ReduceLowering(), ArgLowering(), CumulativeLowering(), TopKLowering())

__all__ = ["PATTERNS", "REDUCTIONS", "constant_input", "normalize_axes", "reduce_axes"]
