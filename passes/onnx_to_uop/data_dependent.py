"""Ops whose output size depends on the data: NonZero, Compress, NonMaxSuppression.

The code is compiled for the output shape the model declares (the frontend refuses one left
symbolic, naming the node); `compiled_extent` is where the lowerings read that extent. The data
may select another number of elements, so each lowering works in three steps and no data can
make it touch memory out of bounds:

1. count: a kernel counts what the data select, writing only scratch (or nothing);
2. check: `abi.check` ends NAME_predict with `abi.Status.OUTPUT_SIZE` unless the count is the
   compiled extent (nothing of the output is written yet);
3. write: a kernel appends each selected element at a running position. uop has no conditional
   store, so an element not selected rewrites the slot's own value (`store_if`), and the slot
   is clamped to the extent: in bounds whatever the count, exact once the check has passed.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import Float32Type, IndexType, IntegerType
from xdsl.ir import Operation, SSAValue

from zant.dialects import abi
from zant.dialects.onnx import CompressOp, NonMaxSuppressionOp, NonZeroOp, get_attr, input_value, inputs
from zant.passes.onnx_to_uop.base import OnnxLowering, materialize, result_name
from zant.passes.onnx_to_uop.elementwise import reject_bfloat16
from zant.passes.onnx_to_uop.parameters import I64, all_of, check, constant_array, i64
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    layout_of,
    tensor_element_type,
    tensor_shape,
)


# -- the count, its check and the appending write, shared by the three ops ---------------------


def compiled_extent(op: Operation, axis: int, result: int = 0) -> int:
    """The extent the data-dependent dimension `axis` of result `result` is compiled for: the
    model's declared size (the frontend made it static)."""
    return tensor_shape(op.results[result])[axis]


def count_one(kb: KernelBuilder, acc: SSAValue, selected: SSAValue) -> None:
    """acc += 1 when the i1 `selected` holds."""
    one, zero = kb.const(1, I64), kb.const(0, I64)
    kb.acc_set(acc, kb.alu("add", kb.acc_get(acc), kb.where(selected, one, zero)))


def check_count(kb: KernelBuilder, count: SSAValue, extent: int) -> None:
    """End NAME_predict with STATUS_OUTPUT_SIZE unless the i64 `count` is `extent`."""
    check(kb, kb.alu("cmpeq", count, i64(kb, extent)), abi.Status.OUTPUT_SIZE)


def slot(kb: KernelBuilder, position: SSAValue, extent: int) -> SSAValue:
    """The running i64 `position` as an index clamped to [0, extent): the next free row."""
    low, high = kb.const(0, I64), kb.const(extent - 1, I64)
    return kb.cast(kb.alu("min", kb.alu("max", position, low), high), IndexType())


def store_if(kb: KernelBuilder, selected: SSAValue, value: SSAValue, layout: Layout, indices: Sequence[SSAValue]) -> None:
    """layout[indices] = value when `selected`, else its own value again (no conditional store)."""
    kb.store(kb.where(selected, value, kb.load(layout, indices)), layout, indices)


def nonzero(kb: KernelBuilder, value: SSAValue) -> SSAValue:
    """value != 0 as an i1 (a bool already is one)."""
    if value.type == IntegerType(1):
        return value
    return kb.alu("cmpne", value, kb.const(0, value.type))


# -- the ops -----------------------------------------------------------------------------------


class NonZeroLowering(OnnxLowering):
    """NonZero: the [rank, N] indices of X's non-zero elements, in row-major order. One pass
    counts them; after the check a second appends each one's coordinates as a column."""

    op_names = frozenset({NonZeroOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        reject_bfloat16(op)
        x = layout_of(inputs(op)[0])
        extent = compiled_extent(op, 1)
        count = kb.define_acc(0, I64)
        with kb.loop_nest(x.shape) as ivs:
            count_one(kb, count, nonzero(kb, kb.load(x, ivs)))
        check_count(kb, kb.acc_get(count), extent)
        out = kb.alloc(result_name(op), tensor_shape(op.results[0]), tensor_element_type(op.results[0]))
        if out.size == 0:
            return [out]
        position = kb.define_acc(0, I64)
        with kb.loop_nest(x.shape) as ivs:
            selected = nonzero(kb, kb.load(x, ivs))
            column = slot(kb, kb.acc_get(position), extent)
            for d, iv in enumerate(ivs):
                store_if(kb, selected, kb.cast(iv, I64), out, [kb.index(d), column])
            count_one(kb, position, selected)
        return [out]


class CompressLowering(OnnxLowering):
    """Compress: the slices of X along `axis` (of X flattened without one) whose condition entry
    is true. A condition shorter than the axis drops the slices after it, as ONNX says."""

    op_names = frozenset({CompressOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x, condition = (layout_of(v) for v in inputs(op)[:2])
        axis = get_attr(op, "axis")
        if axis is None:
            flat = x.reshape((x.size,)) or materialize(kb, x, f"{result_name(op)}_flat").reshape((x.size,))
            x, axis = flat, 0
        elif not -x.rank <= axis < x.rank:
            raise ValueError(f"axis {axis} is out of range for a rank-{x.rank} input")
        axis %= x.rank
        length = condition.shape[0]
        if length > x.shape[axis]:
            raise ValueError(f"condition has {length} entries, the axis only {x.shape[axis]}")
        extent = compiled_extent(op, axis)
        count = kb.define_acc(0, I64)
        with kb.loop(length) as i:
            count_one(kb, count, nonzero(kb, kb.load(condition, [i])))
        check_count(kb, kb.acc_get(count), extent)
        out = kb.alloc(result_name(op), tensor_shape(op.results[0]), tensor_element_type(op.results[0]))
        if out.size == 0:
            return [out]
        # The axis first: one condition entry per outer iteration, its slice inside.
        perm = [axis] + [d for d in range(x.rank) if d != axis]
        rows, out_rows = x.permute(perm), out.permute(perm)
        position = kb.define_acc(0, I64)
        with kb.loop(length) as i:
            selected = nonzero(kb, kb.load(condition, [i]))
            row = slot(kb, kb.acc_get(position), extent)
            with kb.loop_nest(rows.shape[1:]) as ivs:
                store_if(kb, selected, kb.load(rows, [i, *ivs]), out_rows, [row, *ivs])
            count_one(kb, position, selected)
        return [out]


class NonMaxSuppressionLowering(OnnxLowering):
    """NonMaxSuppression: [N, 3] rows (batch, class, box) of the boxes kept per batch and class,
    as onnx's reference keeps them.

    Per batch and class, a sorting network ranks the boxes by score (descending, equal scores
    by ascending index) in scratch; each box, in that order, is kept unless the class
    already kept `max_output_boxes_per_class`, its score is not above `score_threshold` (when
    given) or its IoU with a box it kept before exceeds `iou_threshold`. A scratch table holds
    the boxes each class keeps, in order, and one their counts; the write pass appends them.
    The three parameters are read when NAME_predict runs unless they are constants; absent, the
    maximum is 0 and there is no score threshold.
    """

    op_names = frozenset({NonMaxSuppressionOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        boxes, scores = (layout_of(v) for v in inputs(op)[:2])
        if boxes.element_type != Float32Type() or scores.element_type != Float32Type():
            raise ValueError("boxes and scores must be float32")
        batches, count, _ = boxes.shape
        classes = scores.shape[1]
        if scores.shape != (batches, classes, count) or boxes.shape[2] != 4:
            raise ValueError(f"boxes {boxes.shape} and scores {scores.shape} do not match ([B, N, 4], [B, C, N])")
        center_point_box = get_attr(op, "center_point_box") or 0
        if center_point_box not in (0, 1):
            raise ValueError(f"center_point_box must be 0 or 1, got {center_point_box}")
        f32 = Float32Type()
        limit = _scalar(kb, op, 2, I64)
        limit = kb.const(0, I64) if limit is None else kb.alu("max", limit, kb.const(0, I64))
        iou_threshold = _scalar(kb, op, 3, f32)
        iou_threshold = kb.const(0.0, f32) if iou_threshold is None else iou_threshold
        score_threshold = _scalar(kb, op, 4, f32)
        extent = compiled_extent(op, 0)
        # A class keeps at most `capacity` boxes: all of them, or a constant maximum's worth
        # (which also bounds the IoU loop: boxes × capacity pairs instead of boxes²).
        capacity = min(count, _constant_limit(op))
        if capacity == 0:  # no box to keep: the count is 0
            check_count(kb, kb.const(0, I64), extent)
            return [kb.alloc(result_name(op), tensor_shape(op.results[0]), tensor_element_type(op.results[0]))]

        kept = kb.alloc(f"{result_name(op)}_kept", (batches, classes, capacity), I64)
        kept_counts = kb.alloc(f"{result_name(op)}_kept_counts", (batches, classes), I64)
        width = 1 << max(count - 1, 0).bit_length()  # the sorting network's: a power of two
        ranked_scores = kb.alloc(f"{result_name(op)}_ranked_scores", (width,), f32)
        ranked_boxes = kb.alloc(f"{result_name(op)}_ranked_boxes", (width,), I64)
        total = kb.define_acc(0, I64)
        with kb.loop_nest((batches, classes)) as (b, c):
            # The class's boxes by rank; past the boxes, sentinels that rank last.
            with kb.loop(width) as i:
                real = kb.alu("cmplt", i, kb.index(count))
                score = kb.load(scores, [b, c, kb.alu("min", i, kb.index(count - 1))])
                kb.store(kb.where(real, score, kb.const(float("-inf"), f32)), ranked_scores, [i])
                kb.store(kb.cast(i, I64), ranked_boxes, [i])
            _bitonic_sort(kb, ranked_scores, ranked_boxes, width)
            kept_in_class = kb.define_acc(0, I64)
            with kb.loop(count) as rank:
                score, index = kb.load(ranked_scores, [rank]), kb.load(ranked_boxes, [rank])
                found = kb.alu("cmplt", index, kb.const(count, I64))  # not a sentinel (NaN scores may leave one)
                box = kb.cast(kb.alu("min", index, kb.const(count - 1, I64)), IndexType())
                candidate = self._extents(kb, boxes, b, box, center_point_box)
                suppressed = kb.define_acc(0, IntegerType(1))
                with kb.loop(capacity) as k:
                    valid = kb.alu("cmplt", kb.cast(k, I64), kb.acc_get(kept_in_class))
                    other = kb.cast(kb.where(valid, kb.load(kept, [b, c, k]), kb.const(0, I64)), IndexType())
                    overlap = self._suppresses(kb, candidate, self._extents(kb, boxes, b, other, center_point_box), iou_threshold)
                    kb.acc_set(suppressed, kb.alu("or", kb.acc_get(suppressed), kb.alu("and", valid, overlap)))
                conditions = [found, kb.alu("not", kb.acc_get(suppressed)), kb.alu("cmplt", kb.acc_get(kept_in_class), limit)]
                if score_threshold is not None:
                    conditions.append(kb.alu("cmplt", score_threshold, score))
                keep = all_of(kb, conditions)
                # keep implies kept_in_class < limit <= capacity: the slot is exact then
                store_if(kb, keep, index, kept, [b, c, slot(kb, kb.acc_get(kept_in_class), capacity)])
                count_one(kb, kept_in_class, keep)
                count_one(kb, total, keep)
            kb.store(kb.acc_get(kept_in_class), kept_counts, [b, c])
        check_count(kb, kb.acc_get(total), extent)

        out = kb.alloc(result_name(op), tensor_shape(op.results[0]), tensor_element_type(op.results[0]))
        if out.size == 0:
            return [out]
        position = kb.define_acc(0, I64)
        with kb.loop_nest((batches, classes, capacity)) as (b, c, k):
            selected = kb.alu("cmplt", kb.cast(k, I64), kb.load(kept_counts, [b, c]))
            row = slot(kb, kb.acc_get(position), extent)
            for column, value in enumerate((kb.cast(b, I64), kb.cast(c, I64), kb.load(kept, [b, c, k]))):
                store_if(kb, selected, value, out, [row, kb.index(column)])
            count_one(kb, position, selected)
        return [out]

    @staticmethod
    def _extents(kb, boxes, b, box, center_point_box) -> tuple[SSAValue, ...]:
        """(x_min, x_max, y_min, y_max) of a box, as onnx's reference computes them in f32."""
        v = [kb.load(boxes, [b, box, kb.index(k)]) for k in range(4)]
        if center_point_box:  # [x_center, y_center, width, height]
            two = kb.const(2.0, Float32Type())
            w, h = kb.alu("div", v[2], two), kb.alu("div", v[3], two)
            return kb.alu("sub", v[0], w), kb.alu("add", v[0], w), kb.alu("sub", v[1], h), kb.alu("add", v[1], h)
        # [y1, x1, y2, x2], either corner first
        return kb.alu("min", v[1], v[3]), kb.alu("max", v[1], v[3]), kb.alu("min", v[0], v[2]), kb.alu("max", v[0], v[2])

    @staticmethod
    def _suppresses(kb, first, second, threshold) -> SSAValue:
        """IoU > threshold for two boxes' extents, as onnx's reference decides it: false for
        boxes that do not overlap or have no area."""
        x1_min, x1_max, y1_min, y1_max = first
        x2_min, x2_max, y2_min, y2_max = second
        ix_min, ix_max = kb.alu("max", x1_min, x2_min), kb.alu("min", x1_max, x2_max)
        iy_min, iy_max = kb.alu("max", y1_min, y2_min), kb.alu("min", y1_max, y2_max)
        intersection = kb.alu("mul", kb.alu("sub", ix_max, ix_min), kb.alu("sub", iy_max, iy_min))
        area1 = kb.alu("mul", kb.alu("sub", x1_max, x1_min), kb.alu("sub", y1_max, y1_min))
        area2 = kb.alu("mul", kb.alu("sub", x2_max, x2_min), kb.alu("sub", y2_max, y2_min))
        union = kb.alu("sub", kb.alu("add", area1, area2), intersection)
        f32 = Float32Type()
        zero = kb.const(0.0, f32)
        positive = [kb.alu("cmplt", zero, v) for v in (intersection, area1, area2, union)]
        overlaps = [kb.alu("cmplt", ix_min, ix_max), kb.alu("cmplt", iy_min, iy_max), *positive]
        iou = kb.alu("div", intersection, kb.where(positive[3], union, kb.const(1.0, f32)))
        return all_of(kb, [kb.alu("cmplt", threshold, iou), *overlaps])


def _precedes(kb: KernelBuilder, v: SSAValue, i: SSAValue, w: SSAValue, j: SSAValue) -> SSAValue:
    """Box (score v, index i) ranks before (w, j): a higher score, or an equal one and a lower
    index (the order onnx's reference pops candidates in)."""
    return kb.alu("or", kb.alu("cmplt", w, v), kb.alu("and", kb.alu("cmpeq", v, w), kb.alu("cmplt", i, j)))


def _bitonic_sort(kb: KernelBuilder, scores: Layout, boxes: Layout, width: int) -> None:
    """Sort the (score, box) pairs of two `width`-long buffers (a power of two) by rank, in
    place: a bitonic sorting network, log2(width)·(log2(width)+1)/2 stages of width/2
    compare-exchanges whose positions do not depend on the data (no data-dependent address,
    width·log² width steps instead of a selection's width²)."""
    block = 2
    while block <= width:
        stride = block // 2
        while stride >= 1:
            with kb.loop(width // 2) as pair:
                # The pair's lower position: `pair` with a zero bit inserted at `stride`.
                low = kb.alu("add", kb.alu("mul", kb.alu("div", pair, kb.index(stride)), kb.index(2 * stride)),
                             kb.alu("rem", pair, kb.index(stride)))
                high = kb.alu("add", low, kb.index(stride))
                # Blocks alternate direction until the last merge sorts all in rank order.
                ascending = kb.alu("cmpeq", kb.alu("rem", kb.alu("div", low, kb.index(block)), kb.index(2)), kb.index(0))
                v, i = kb.load(scores, [low]), kb.load(boxes, [low])
                w, j = kb.load(scores, [high]), kb.load(boxes, [high])
                swap = kb.where(ascending, _precedes(kb, w, j, v, i), _precedes(kb, v, i, w, j))
                kb.store(kb.where(swap, w, v), scores, [low])
                kb.store(kb.where(swap, j, i), boxes, [low])
                kb.store(kb.where(swap, v, w), scores, [high])
                kb.store(kb.where(swap, i, j), boxes, [high])
            stride //= 2
        block *= 2


def _constant_limit(op: Operation) -> int | float:
    """NonMaxSuppression's max_output_boxes_per_class when it is a constant (absent: 0), else
    unbounded."""
    value = input_value(op, 2)
    if value is None:
        return 0
    array = constant_array(value)
    if array is None:
        return float("inf")
    return max(int(array.reshape(-1)[0]), 0) if array.size else 0


def _scalar(kb: KernelBuilder, op: Operation, index: int, to) -> SSAValue | None:
    """The first element of optional input `index` (absent or empty: None), converted to `to`.
    Loaded where the op runs: a constant's load folds, a graph input's is read at run time."""
    value = input_value(op, index)
    if value is None or layout_of(value).size == 0:
        return None
    flat = layout_of(value)
    return kb.cast(kb.load(flat, [kb.index(0)] * flat.rank), to)


PATTERNS = (NonZeroLowering(), CompressLowering(), NonMaxSuppressionLowering())

__all__ = ["PATTERNS", "check_count", "compiled_extent", "slot", "store_if"]
