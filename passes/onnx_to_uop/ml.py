"""What the `ai.onnx.ml` lowerings share: their op names, the rows they read, the scores' post
transforms and the classifiers' labels.

Classifiers write their scores, then each row's label: that of its first best score, from a
constant label table (integers, or strings as NUL-padded fields, `zant.ir.strings`). Scores go through
the post transforms NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO and PROBIT as onnxruntime applies them.

The operators are `ml_features.py`'s (Binarizer, Scaler, Imputer, Normalizer,
ArrayFeatureExtractor, LabelEncoder, OneHotEncoder), `ml_linear.py`'s (LinearRegressor,
LinearClassifier, SVMRegressor) and `tree_ensemble.py`'s.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import AnyFloat, Float64Type, IndexType, IntegerType, Signedness, i32
from xdsl.ir import Attribute, Operation, SSAValue
from zant.dialects.onnx import ML_DOMAIN, get_attr, op_name
from zant.ir.strings import StringType
from zant.passes.onnx_to_uop.base import result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    accumulator_type,
    constant_table,
    tensor_element_type,
)


def ml_op_names(*op_types: str) -> frozenset[str]:
    """The dialect names of `ai.onnx.ml` operators."""
    return frozenset(op_name(t, ML_DOMAIN) for t in op_types)


def ml_compute_type(t: Attribute) -> Attribute:
    """Floats compute in themselves (f16 widened); integer features compare in f64, exactly."""
    return accumulator_type(t) if isinstance(t, AnyFloat) else Float64Type()


def as_rows(layout: Layout) -> Layout:
    """A [F] feature vector as one row [1, F]; ml operators see batches of rows."""
    if layout.rank == 1:
        return Layout(layout.buffer, (1, *layout.shape), (0, *layout.strides), layout.offset)
    if layout.rank != 2:
        raise NotImplementedError(f"input of rank {layout.rank} (rows [N, F] or one row [F] only)")
    return layout


POST_TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


def fold_alu(kb: KernelBuilder, name: str, values: list[SSAValue]) -> SSAValue:
    """values[0] `name` values[1] `name` …, left to right."""
    result = values[0]
    for value in values[1:]:
        result = kb.alu(name, result, value)
    return result


def _logistic(kb: KernelBuilder, value: SSAValue) -> SSAValue:
    one = kb.const(1.0, value.type)
    return kb.alu("recip", kb.alu("add", one, kb.alu("exp", kb.alu("neg", value))))


def _probit(kb: KernelBuilder, value: SSAValue) -> SSAValue:
    """√2·erf⁻¹(2s - 1), erf⁻¹ by Winitzki's approximation (a = 0.147), as onnxruntime and
    ONNX's reference compute it (0 where 2s - 1 is ±1)."""
    c = lambda v: kb.const(v, value.type)
    x = kb.alu("sub", kb.alu("mul", c(2.0), value), c(1.0))
    sign = kb.where(kb.alu("cmplt", x, c(0.0)), c(-1.0), c(1.0))
    square = kb.alu("mul", kb.alu("sub", c(1.0), x), kb.alu("add", c(1.0), x))
    log = kb.alu("log", square)
    a = kb.alu("add", c(2.0 / (math.pi * 0.147)), kb.alu("mul", c(0.5), log))
    root = kb.alu("sqrt", kb.alu("sub", kb.alu("mul", a, a), kb.alu("mul", c(1.0 / 0.147), log)))
    inverse = kb.alu("mul", sign, kb.alu("sqrt", kb.alu("sub", root, a)))
    result = kb.alu("mul", c(1.41421356), inverse)
    return kb.where(kb.alu("cmpeq", square, c(0.0)), c(0.0), result)


_ELEMENTWISE_TRANSFORMS = {"LOGISTIC": _logistic, "PROBIT": _probit}


def post_transform(kb: KernelBuilder, kind: str, count: int, scores: Layout, score_at, compute: Attribute) -> None:
    """NONE, LOGISTIC (1 / (1 + e^-s)), PROBIT, SOFTMAX, SOFTMAX_ZERO over one row, in place."""
    c = lambda v: kb.const(v, compute)
    if kind == "NONE":
        return
    if kind in _ELEMENTWISE_TRANSFORMS:
        with kb.loop(count) as t:
            value = kb.load(scores, score_at(t))
            kb.store(_ELEMENTWISE_TRANSFORMS[kind](kb, value), scores, score_at(t))
        return
    if kind not in ("SOFTMAX", "SOFTMAX_ZERO"):
        raise NotImplementedError(f"post_transform {kind}")
    keep_zero = kind == "SOFTMAX_ZERO"
    peak = kb.define_acc(float("-inf"), compute)
    with kb.loop(count) as t:
        kb.acc_set(peak, kb.alu("max", kb.acc_get(peak), kb.load(scores, score_at(t))))
    total = kb.define_acc(0.0, compute)
    with kb.loop(count) as t:
        value = kb.load(scores, score_at(t))
        exp = kb.alu("exp", kb.alu("sub", value, kb.acc_get(peak)))
        if keep_zero:
            # As onnxruntime: a score within 1e-7 of 0 is scaled by e^-max (about 0), not exp'ed.
            near_zero = kb.alu("cmple", kb.alu("abs", value), c(1e-7))
            scaled = kb.alu("mul", value, kb.alu("exp", kb.alu("neg", kb.acc_get(peak))))
            exp = kb.where(near_zero, scaled, exp)
        kb.store(exp, scores, score_at(t))
        kb.acc_set(total, kb.alu("add", kb.acc_get(total), exp))
    empty = kb.alu("cmpeq", kb.acc_get(total), c(0.0))  # all scores 0 under SOFTMAX_ZERO: 0.5 each
    with kb.loop(count) as t:
        share = kb.alu("div", kb.load(scores, score_at(t)), kb.acc_get(total))
        kb.store(kb.where(empty, c(0.5), share) if keep_zero else share, scores, score_at(t))


# -- classifiers: scores, then the label of the best score ---------------------------------------


def label_table(op: Operation, labels_attribute: str, width: int) -> Layout:
    """The label of each score column, as a constant table: the class labels, or for a single
    label 1 the columns (0, 1) of a binary classifier, as ONNX's reference labels them. String
    labels are a [width, CAP] table of NUL-padded fields, CAP the label output's capacity
    (`zant.ir.strings`: the importer gives it the longest label's bytes)."""
    strings = get_attr(op, "classlabels_strings")
    if strings:
        label_type = tensor_element_type(op.results[0])
        if not isinstance(label_type, StringType):
            raise ValueError(f"string class labels, but the label output holds {label_type}")
        if len(strings) != width:
            raise NotImplementedError(f"{len(strings)} class labels for {width} score columns")
        table = np.zeros((width, label_type.capacity.data), np.uint8)
        for row, label in enumerate(strings):
            data = label.encode("utf-8")
            if len(data) > table.shape[1] or b"\0" in data:
                raise ValueError(f"class label {label!r} does not fit a field of {table.shape[1]} bytes without NUL")
            table[row, : len(data)] = np.frombuffer(data, np.uint8)
        return constant_table(op, f"{result_name(op, 0)}_labels", table, IntegerType(8, Signedness.UNSIGNED))
    labels = list(get_attr(op, labels_attribute) or [])
    if labels == [1] and width == 2:
        labels = [0, 1]
    if len(labels) != width:
        raise NotImplementedError(f"{len(labels)} class labels for {width} score columns")
    return constant_table(op, f"{result_name(op, 0)}_labels", np.array(labels, np.int64), tensor_element_type(op.results[0]))


def store_labels(kb: KernelBuilder, op: Operation, scores: Layout, labels: Layout) -> Layout:
    """Each row's label: that of its first highest score (a string label: its whole field)."""
    fields = labels.shape[1:]  # (CAP,) for string labels, () for numbers
    out = kb.alloc(result_name(op, 0), (scores.shape[0], *fields), labels.element_type)
    compute = scores.element_type
    with kb.loop(scores.shape[0]) as row:
        best = kb.define_acc(0, i32)
        peak = kb.define_acc(float("-inf"), compute)
        with kb.loop(scores.shape[1]) as column:
            value = kb.load(scores, [row, column])
            better = kb.alu("cmplt", kb.acc_get(peak), value)
            kb.acc_set(peak, kb.where(better, value, kb.acc_get(peak)))
            kb.acc_set(best, kb.where(better, kb.cast(column, i32), kb.acc_get(best)))
        label = kb.cast(kb.acc_get(best), IndexType())
        with kb.loop_nest(fields) as byte:
            kb.store(kb.load(labels, [label, *byte]), out, [row, *byte])
    return out


__all__ = [
    "POST_TRANSFORMS",
    "as_rows",
    "fold_alu",
    "label_table",
    "ml_compute_type",
    "ml_op_names",
    "post_transform",
    "store_labels",
]
