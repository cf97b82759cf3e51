"""Unique: the distinct values (or slices along `axis`) of a tensor, with their first indices,
each input slice's index among them and their counts, as onnx's reference computes them.

The number of distinct slices depends on the data. Y, indices and counts are compiled with a
capacity (their size along the counted dimension): the input's extent along the axis (its
element count without one) when the model leaves the size symbolic (`zant.frontend.bounded`
adds the extents output), else the declared size, which an `abi.check` compares with the actual
count (`STATUS_OUTPUT_SIZE`). Entries past the count are zero: the extents output counts the
nonzero `counts`.

Three passes over pairs of slices, O(n²) compares and no data-dependent store:

1. per slice i, the first slice equal to it and how many are (`first`, `count`);
2. per slice i, its rank: how many first occurrences come before its own, by value
   (lexicographic over the slice, `sorted=1`) or by position (`sorted=0`), which is also its
   inverse index; the number of first occurrences is the count of distinct slices (checked
   here against a declared size, before any output is written);
3. per output entry r, the first occurrence of rank r (gathered by a scan, so its index is
   always in range whatever the data), copied out, or zeros when there is none.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation, SSAValue

from zant.dialects.onnx import BOUNDED_ATTR, UniqueOp, get_attr, inputs, outputs
from zant.dialects.uop import is_float_type
from zant.passes.onnx_to_uop.base import OnnxLowering, materialize, result_name
from zant.passes.onnx_to_uop.elementwise import reject_bfloat16
from zant.passes.onnx_to_uop.kernel import KernelBuilder, Layout, layout_of, tensor_element_type, tensor_shape
from zant.passes.onnx_to_uop.data_dependent import I64, check_count

EQUAL, BEFORE, AFTER = 0, 1, 2
"""How slice j compares with slice i (lexicographically, element by element)."""


class UniqueLowering(OnnxLowering):
    """Unique, sorted or in order of first occurrence, with or without `axis`."""

    op_names = frozenset({UniqueOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        reject_bfloat16(op)
        x = inputs(op)[0]
        assert x is not None
        shape = tensor_shape(x)
        axis = get_attr(op, "axis")
        present = {slot: value for slot, value in enumerate(outputs(op)) if value is not None}
        out = {
            slot: kb.alloc(result_name(op, position), tensor_shape(value), tensor_element_type(value))
            for position, (slot, value) in enumerate(present.items())
        }
        if axis is None:  # slices are single elements of the flattened input
            source = layout_of(x)
            flat = source.reshape((source.size,)) or materialize(kb, source, "unique_input").reshape((source.size,))
            rows, y_rows = flat, out[0]
        else:
            axis += len(shape) if axis < 0 else 0
            if not 0 <= axis < len(shape):
                raise ValueError(f"axis {axis} is out of range for rank {len(shape)}")
            perm = [axis] + [d for d in range(len(shape)) if d != axis]
            rows, y_rows = layout_of(x).permute(perm), out[0].permute(perm)
        n, capacity, rest = rows.shape[0], y_rows.shape[0], list(rows.shape[1:])
        if n == 0 or capacity == 0:  # no slices (0 distinct) or a declared 0 (n > 0 distinct): never both
            if capacity != n:
                check_count(kb, kb.const(n, I64), capacity)
            return list(out.values())
        bounded = 0 in list(op.attributes[BOUNDED_ATTR].get_values()) if BOUNDED_ATTR in op.attributes else False

        first = kb.alloc("unique_first", [n], I64)
        count = kb.alloc("unique_count", [n], I64)
        rank = kb.alloc("unique_rank", [n], I64)
        zero, one = kb.const(0, I64), kb.const(1, I64)

        floats = is_float_type(rows.element_type)

        def less(a: SSAValue, b: SSAValue) -> SSAValue:
            """a < b, NaN after every number and equal to NaN (NumPy's sort and unique)."""
            if not floats:
                return kb.alu("cmplt", a, b)
            nan_after = kb.alu("and", kb.alu("cmpeq", a, a), kb.alu("cmpne", b, b))  # x != x: NaN
            return kb.alu("or", kb.alu("cmplt", a, b), nan_after)

        def order(j: SSAValue, i: SSAValue) -> SSAValue:
            """EQUAL, BEFORE or AFTER: slice j against slice i, at their first differing element."""
            state = kb.define_acc(EQUAL, I64)
            with kb.loop_nest(rest) as e:
                a, b = kb.load(rows, [j, *e]), kb.load(rows, [i, *e])
                here = kb.where(
                    less(a, b),
                    kb.const(BEFORE, I64),
                    kb.where(less(b, a), kb.const(AFTER, I64), kb.const(EQUAL, I64)),
                )
                decided = kb.acc_get(state)
                kb.acc_set(state, kb.where(kb.alu("cmpeq", decided, kb.const(EQUAL, I64)), here, decided))
            return kb.acc_get(state)

        def one_if(condition: SSAValue) -> SSAValue:
            return kb.where(condition, one, zero)

        with kb.loop(n) as i:  # 1: first occurrence and count of each slice
            earliest, same = kb.define_acc(n, I64), kb.define_acc(0, I64)
            with kb.loop(n) as j:
                equal = kb.alu("cmpeq", order(j, i), kb.const(EQUAL, I64))
                kb.acc_set(earliest, kb.alu("min", kb.acc_get(earliest), kb.where(equal, kb.cast(j, I64), kb.const(n, I64))))
                kb.acc_set(same, kb.alu("add", kb.acc_get(same), one_if(equal)))
            kb.store(kb.acc_get(earliest), first, [i])
            kb.store(kb.acc_get(same), count, [i])

        distinct = kb.define_acc(0, I64)
        with kb.loop(n) as i:  # 2: rank (= inverse index) of each slice
            own_first = kb.load(first, [i])
            before = kb.define_acc(0, I64)
            with kb.loop(n) as j:
                j_first = kb.alu("cmpeq", kb.load(first, [j]), kb.cast(j, I64))
                if get_attr(op, "sorted"):
                    precedes = kb.alu("cmpeq", order(j, i), kb.const(BEFORE, I64))
                else:
                    precedes = kb.alu("cmplt", kb.cast(j, I64), own_first)
                kb.acc_set(before, kb.alu("add", kb.acc_get(before), one_if(kb.alu("and", j_first, precedes))))
            kb.store(kb.acc_get(before), rank, [i])
            is_first = kb.alu("cmpeq", own_first, kb.cast(i, I64))
            kb.acc_set(distinct, kb.alu("add", kb.acc_get(distinct), one_if(is_first)))
        if not bounded:  # a declared size: the data must have exactly that many distinct slices
            check_count(kb, kb.acc_get(distinct), capacity)
        if 2 in out:  # outputs are written only once the check has passed
            with kb.loop(n) as i:
                kb.store(kb.cast(kb.load(rank, [i]), out[2].element_type), out[2], [i])

        with kb.loop(capacity) as r:  # 3: gather the first occurrence of each rank
            pick = kb.define_acc(n, I64)
            with kb.loop(n) as i:
                index = kb.cast(i, I64)
                hit = kb.alu(
                    "and",
                    kb.alu("cmpeq", kb.load(first, [i]), index),
                    kb.alu("cmpeq", kb.load(rank, [i]), kb.cast(r, I64)),
                )
                kb.acc_set(pick, kb.where(hit, index, kb.acc_get(pick)))
            picked = kb.acc_get(pick)
            found = kb.alu("cmplt", picked, kb.const(n, I64))
            at = kb.cast(kb.alu("min", picked, kb.const(n - 1, I64)), IndexType())
            padding = kb.const(0.0 if floats else 0, rows.element_type)
            with kb.loop_nest(rest) as e:
                kb.store(kb.where(found, kb.load(rows, [at, *e]), padding), y_rows, [r, *e])
            for slot, value in ((1, picked), (3, kb.load(count, [at]))):
                if slot in out:
                    target_type = out[slot].element_type
                    kb.store(kb.cast(kb.where(found, value, zero), target_type), out[slot], [r])
        return list(out.values())


PATTERNS = (UniqueLowering(),)

__all__ = ["PATTERNS", "UniqueLowering"]
