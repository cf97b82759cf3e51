"""The `ai.onnx.ml` operators on dense tensors: Binarizer, Scaler, Imputer, Normalizer,
ArrayFeatureExtractor, LabelEncoder and OneHotEncoder (numeric), LinearRegressor/
LinearClassifier, SVMRegressor and the tree ensembles.

Classifiers write their scores, then each row's label: that of its first best score, from a
constant label table (integer labels only: string tensors are out of scope). Scores go through
the post transforms NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO and PROBIT as onnxruntime applies them.

Tree ensembles (TreeEnsemble of ai.onnx.ml opset 5, and the older TreeEnsembleRegressor that
converters still emit) are read at compile time into one `Ensemble`: every branch node and
every leaf gets a slot in a set of constant tables (feature, split, true/false successor …).
A leaf's successors are itself, so the generated walk is a fixed number of steps — the deepest
tree's depth — with no data-dependent loop count:

    slot = root[tree]; repeat depth times: slot = cond(x[feature[slot]], split[slot]) ? true[slot] : false[slot]

then the leaf's weights (a dense [leaf, target] table) are aggregated into the row's scores.
Only what the ensemble uses is emitted: the mode table and its selection when nodes mix
comparison modes, the NaN handling when some node sends missing values another way than its
comparison does, the set-membership table when a node tests membership (its sets read from
`membership_values` in node order, as the specification says).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import AnyFloat, Float64Type, IndexType, i1, i8, i32
from xdsl.ir import Attribute, Operation, SSAValue
from zant.dialects.onnx import ML_DOMAIN, get_attr, inputs, op_name
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    accumulator_type,
    constant_table,
    layout_of,
    tensor_element_type,
    tensor_shape,
)

from zant.ir.types import numpy_dtype


def _ml(*op_types: str) -> frozenset[str]:
    return frozenset(op_name(t, ML_DOMAIN) for t in op_types)


def _compute_type(t: Attribute) -> Attribute:
    """Floats compute in themselves (f16 widened); integer features compare in f64, exactly."""
    return accumulator_type(t) if isinstance(t, AnyFloat) else Float64Type()


def _as_rows(layout: Layout) -> Layout:
    """A [F] feature vector as one row [1, F]; ml operators see batches of rows."""
    if layout.rank == 1:
        return Layout(layout.buffer, (1, *layout.shape), (0, *layout.strides), layout.offset)
    if layout.rank != 2:
        raise NotImplementedError(f"input of rank {layout.rank} (rows [N, F] or one row [F] only)")
    return layout


# -- element-wise ----------------------------------------------------------------------------


class BinarizerLowering(OnnxLowering):
    """Y = X > threshold ? 1 : 0, in X's type (NaN gives 0)."""

    op_names = _ml("Binarizer")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        (x,) = (layout_of(v) for v in inputs(op))
        element_type = x.element_type
        compute = _compute_type(element_type)
        threshold = kb.const(float(get_attr(op, "threshold")), compute)
        one, zero = kb.const(1, element_type), kb.const(0, element_type)
        out = kb.alloc(result_name(op), x.shape, element_type)
        with kb.loop_nest(x.shape) as ivs:
            above = kb.alu("cmplt", threshold, kb.cast(kb.load(x, ivs), compute))
            kb.store(kb.where(above, one, zero), out, ivs)
        return [out]


class ScalerLowering(OnnxLowering):
    """Y = (X - offset) · scale per feature (the last axis); one value broadcasts to all."""

    op_names = _ml("Scaler")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        (x,) = (layout_of(v) for v in inputs(op))
        out_type = tensor_element_type(op.results[0])
        features = x.shape[-1] if x.rank else 1
        tables = []
        for name in ("offset", "scale"):
            values = np.asarray(get_attr(op, name) or [0.0 if name == "offset" else 1.0], np.float32)
            if values.size not in (1, features):
                raise ValueError(f"{name} has {values.size} values for {features} features")
            tables.append(constant_table(op, f"{result_name(op)}_{name}", values, out_type))
        offset, scale = tables
        out = kb.alloc(result_name(op), x.shape, out_type)
        with kb.loop_nest(x.shape) as ivs:
            feature = [ivs[-1] if offset.size > 1 else kb.index(0)]
            centered = kb.alu("sub", kb.cast(kb.load(x, ivs), out_type), kb.load(offset, feature))
            feature = [ivs[-1] if scale.size > 1 else kb.index(0)]
            kb.store(kb.alu("mul", centered, kb.load(scale, feature)), out, ivs)
        return [out]


class ArrayFeatureExtractorLowering(OnnxLowering):
    """Z[..., k] = X[..., Y[k]] over the flattened indices Y (negative ones count from the end);
    a rank-1 X gives one row [1, K], as onnxruntime does."""

    op_names = _ml("ArrayFeatureExtractor")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x, indices = (layout_of(v) for v in inputs(op))
        if x.rank == 1:
            x = _as_rows(x)
        flat = indices.reshape((indices.size,))
        if flat is None:
            raise NotImplementedError("strided indices")
        out_shape = tensor_shape(op.results[0])
        if tuple(out_shape) != (*x.shape[:-1], indices.size):
            raise ValueError(f"output shape {out_shape} does not fit X {x.shape} and {indices.size} indices")
        out = kb.alloc(result_name(op), out_shape, x.element_type)
        width = x.shape[-1]
        index_type = flat.element_type
        with kb.loop_nest(out_shape) as ivs:
            position = kb.load(flat, [ivs[-1]])
            negative = kb.alu("cmplt", position, kb.const(0, index_type))
            wrapped = kb.where(negative, kb.alu("add", position, kb.const(width, index_type)), position)
            column = kb.cast(wrapped, IndexType())
            kb.store(kb.load(x, [*ivs[:-1], column]), out, ivs)
        return [out]


class ImputerLowering(OnnxLowering):
    """Y = X with every `replaced_value` (NaN: every NaN) replaced by its column's imputed value
    (one value: every column's)."""

    op_names = _ml("Imputer")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = _as_rows(layout_of(inputs(op)[0]))
        floats = get_attr(op, "imputed_value_floats") or []
        values, replaced = (
            (floats, get_attr(op, "replaced_value_float"))
            if floats
            else (get_attr(op, "imputed_value_int64s") or [], get_attr(op, "replaced_value_int64"))
        )
        if len(values) not in (1, x.shape[1]):
            raise ValueError(f"{len(values)} imputed values for {x.shape[1]} columns")
        element_type = x.element_type
        table = constant_table(op, f"{result_name(op)}_imputed", np.array(values), element_type)
        out = kb.alloc(result_name(op), x.shape, element_type)
        with kb.loop_nest(x.shape) as (row, column):
            value = kb.load(x, [row, column])
            if isinstance(replaced, float) and math.isnan(replaced):
                missing = kb.alu("cmpne", value, value)
            else:
                missing = kb.alu("cmpeq", value, kb.const(replaced, element_type))
            imputed = kb.load(table, [column if len(values) > 1 else kb.index(0)])
            kb.store(kb.where(missing, imputed, value), out, [row, column])
        return [Layout.contiguous(out.buffer, tensor_shape(op.results[0]))]


class LabelEncoderLowering(OnnxLowering):
    """Numeric keys to numeric values (lists or tensors), the default where no key matches; a
    key listed twice maps to its last value, as in ONNX's reference."""

    op_names = _ml("LabelEncoder")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        if any(get_attr(op, f"{kind}_strings") for kind in ("keys", "values")):
            raise NotImplementedError("string keys or values (string tensors are out of scope)")
        keys, values = (self._listed(op, kind) for kind in ("keys", "values"))
        if keys is None or values is None or len(keys) != len(values):
            raise ValueError("keys and values must be given, one value per key")
        x = layout_of(inputs(op)[0])
        out_type = tensor_element_type(op.results[0])
        default = get_attr(op, "default_tensor")
        if default is None:
            default = get_attr(op, "default_float" if isinstance(out_type, AnyFloat) else "default_int64")
        name = result_name(op)
        key_table = constant_table(op, f"{name}_keys", np.asarray(keys), x.element_type)
        value_table = constant_table(op, f"{name}_values", np.asarray(values), out_type)
        out = kb.alloc(name, x.shape, out_type)
        with kb.loop_nest(x.shape) as ivs:
            value = kb.load(x, ivs)
            result = kb.define_acc(float(np.asarray(default).item()) if isinstance(out_type, AnyFloat)
                                   else int(np.asarray(default).item()), out_type)
            with kb.loop(len(keys)) as k:
                hit = kb.alu("cmpeq", value, kb.load(key_table, [k]))
                kb.acc_set(result, kb.where(hit, kb.load(value_table, [k]), kb.acc_get(result)))
            kb.store(kb.acc_get(result), out, ivs)
        return [out]

    @staticmethod
    def _listed(op: Operation, kind: str) -> list | None:
        for suffix in ("tensor", "floats", "int64s"):
            found = get_attr(op, f"{kind}_{suffix}")
            if found is not None and len(found):
                return np.asarray(found).ravel().tolist()
        return None


class OneHotEncoderLowering(OnnxLowering):
    """Y[..., c] = 1.0 where X[...] is category c (`cats_int64s`), else 0.0. With zeros=0 ONNX
    makes an unknown category a run-time error, which generated code cannot raise: refused."""

    op_names = _ml("OneHotEncoder")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        if get_attr(op, "cats_strings"):
            raise NotImplementedError("string categories (string tensors are out of scope)")
        if not get_attr(op, "zeros"):
            raise NotImplementedError("zeros=0 (an unknown category is a run-time error); use zeros=1")
        categories = list(get_attr(op, "cats_int64s") or [])
        x = layout_of(inputs(op)[0])
        out_type = tensor_element_type(op.results[0])
        out_shape = tensor_shape(op.results[0])
        if tuple(out_shape) != (*x.shape, len(categories)):
            raise ValueError(f"output shape {out_shape} for input {x.shape} and {len(categories)} categories")
        table = constant_table(op, f"{result_name(op)}_categories", np.array(categories, np.int64), _compute_type(x.element_type))
        out = kb.alloc(result_name(op), out_shape, out_type)
        one, zero = kb.const(1.0, out_type), kb.const(0.0, out_type)
        with kb.loop_nest(out_shape) as ivs:
            value = kb.cast(kb.load(x, ivs[:-1]), _compute_type(x.element_type))
            kb.store(kb.where(kb.alu("cmpeq", value, kb.load(table, [ivs[-1]])), one, zero), out, ivs)
        return [out]


_NORMS = {"MAX": ("abs", "max"), "L1": ("abs", "add"), "L2": ("square", "add")}
"""Normalizer's norms: (each element's term, how the terms combine)."""


class NormalizerLowering(OnnxLowering):
    """Each row divided by its MAX (largest magnitude), L1 or L2 norm, at least 1e-30."""

    op_names = _ml("Normalizer")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = _as_rows(layout_of(inputs(op)[0]))
        norm = get_attr(op, "norm")
        if norm not in _NORMS:
            raise ValueError(f"norm '{norm}' (MAX, L1 or L2)")
        term, combine = _NORMS[norm]
        out_type = tensor_element_type(op.results[0])
        out = kb.alloc(result_name(op), x.shape, out_type)
        with kb.loop(x.shape[0]) as row:
            total = kb.define_acc(0.0, out_type)
            with kb.loop(x.shape[1]) as column:
                value = kb.cast(kb.load(x, [row, column]), out_type)
                part = kb.alu("mul", value, value) if term == "square" else kb.alu("abs", value)
                kb.acc_set(total, kb.alu(combine, kb.acc_get(total), part))
            size = kb.alu("sqrt", kb.acc_get(total)) if term == "square" else kb.acc_get(total)
            size = kb.alu("max", size, kb.const(1e-30, out_type))
            with kb.loop(x.shape[1]) as column:
                value = kb.cast(kb.load(x, [row, column]), out_type)
                kb.store(kb.alu("div", value, size), out, [row, column])
        return [Layout.contiguous(out.buffer, tensor_shape(op.results[0]))]


# -- linear models ---------------------------------------------------------------------------


def linear_scores(op: Operation, kb: KernelBuilder, result: int, classes: int = 0) -> Layout:
    """scores[n, k] = Σ_f x[n, f]·coefficients[k·F + f] + intercepts[k], then the post
    transform; one score row for two `classes` scores both, (-s, s), as ONNX's reference does."""
    x = _as_rows(layout_of(inputs(op)[0]))
    rows, features = x.shape
    out_type = tensor_element_type(op.results[result])
    coefficients = np.asarray(get_attr(op, "coefficients"), np.float32)
    if features == 0 or coefficients.size % features:
        raise ValueError(f"{coefficients.size} coefficients for {features} features")
    count = coefficients.size // features
    intercepts = np.asarray(get_attr(op, "intercepts") or [0.0] * count, np.float32)
    if intercepts.size != count:
        raise ValueError(f"{intercepts.size} intercepts for {count} score columns")
    transform = get_attr(op, "post_transform")
    if transform not in _POST_TRANSFORMS:
        raise ValueError(f"post_transform {transform}")
    name = result_name(op, result)
    weights = constant_table(op, f"{name}_coefficients", coefficients.reshape(count, features), out_type)
    bias = constant_table(op, f"{name}_intercepts", intercepts, out_type)
    both = count == 1 and classes == 2
    out = kb.alloc(name, (rows, 2 if both else count), out_type)
    with kb.loop(rows) as row:
        with kb.loop(count) as k:
            acc = kb.define_acc(0.0, out_type)
            with kb.loop(features) as f:
                kb.mulacc(acc, kb.load(x, [row, f]), kb.load(weights, [k, f]))
            score = kb.alu("add", kb.acc_get(acc), kb.load(bias, [k]))
            if both:
                kb.store(kb.alu("neg", score), out, [row, kb.index(0)])
                kb.store(score, out, [row, kb.index(1)])
            else:
                kb.store(score, out, [row, k])
        post_transform(kb, transform, out.shape[1], out, lambda t: [row, t], out_type)
    return out


_KERNELS = {
    # (x·v, |x - v|², γ, c0) → the kernel of the SVM ops
    "LINEAR": lambda kb, dot, distance, gamma, coef0, degree: dot,
    "POLY": lambda kb, dot, distance, gamma, coef0, degree: _power(kb, kb.alu("add", kb.alu("mul", gamma, dot), coef0), degree),
    "SIGMOID": lambda kb, dot, distance, gamma, coef0, degree: kb.alu("tanh", kb.alu("add", kb.alu("mul", gamma, dot), coef0)),
    "RBF": lambda kb, dot, distance, gamma, coef0, degree: kb.alu("exp", kb.alu("mul", kb.alu("neg", gamma), distance)),
}


def _power(kb: KernelBuilder, value: SSAValue, degree: int) -> SSAValue:
    """value^degree by repeated products (the degree is an integer attribute)."""
    return _fold(kb, "mul", [value] * degree) if degree > 0 else kb.const(1.0, value.type)


class SVMRegressorLowering(OnnxLowering):
    """Y[n] = Σ_j coefficients[j]·K(x[n], support_vectors[j]) + rho (linear without support
    vectors: x[n]·coefficients + rho); a one-class SVM answers ±1."""

    op_names = _ml("SVMRegressor")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        x = _as_rows(layout_of(inputs(op)[0]))
        rows, features = x.shape
        out_type = tensor_element_type(op.results[0])
        supports = get_attr(op, "n_supports") or 0
        kernel = get_attr(op, "kernel_type") if supports else "LINEAR"
        if kernel not in _KERNELS:
            raise ValueError(f"kernel_type {kernel}")
        if get_attr(op, "post_transform") != "NONE":
            raise NotImplementedError(f"post_transform {get_attr(op, 'post_transform')} for SVMRegressor")
        coefficients = np.asarray(get_attr(op, "coefficients"), np.float32)
        vectors = (
            np.asarray(get_attr(op, "support_vectors"), np.float32).reshape(supports, features)
            if supports
            else coefficients.reshape(1, features)
        )
        weights = coefficients if supports else np.ones(1, np.float32)
        if weights.size != vectors.shape[0]:
            raise ValueError(f"{coefficients.size} coefficients for {supports} support vectors")
        params = list(get_attr(op, "kernel_params") or [0.0, 0.0, 0.0])
        name = result_name(op)
        vector_table = constant_table(op, f"{name}_vectors", vectors, out_type)
        weight_table = constant_table(op, f"{name}_weights", weights, out_type)
        out = kb.alloc(name, (rows, 1), out_type)
        c = lambda v: kb.const(float(v), out_type)
        rho = float((get_attr(op, "rho") or [0.0])[0])
        with kb.loop(rows) as row:
            total = kb.define_acc(0.0, out_type)
            with kb.loop(vectors.shape[0]) as j:
                dot, distance = kb.define_acc(0.0, out_type), kb.define_acc(0.0, out_type)
                with kb.loop(features) as f:
                    value, support = kb.cast(kb.load(x, [row, f]), out_type), kb.load(vector_table, [j, f])
                    kb.mulacc(dot, value, support)
                    difference = kb.alu("sub", value, support)
                    kb.mulacc(distance, difference, difference)
                similarity = _KERNELS[kernel](kb, kb.acc_get(dot), kb.acc_get(distance), c(params[0]), c(params[1]), int(params[2]))
                kb.mulacc(total, kb.load(weight_table, [j]), similarity)
            score = kb.alu("add", kb.acc_get(total), c(rho))
            if get_attr(op, "one_class"):
                score = kb.where(kb.alu("cmplt", c(0.0), score), c(1.0), c(-1.0))
            kb.store(score, out, [row, kb.index(0)])
        return [Layout.contiguous(out.buffer, tensor_shape(op.results[0]))]


class LinearRegressorLowering(OnnxLowering):
    """Y = X·coefficientsᵀ + intercepts, `targets` columns, then the post transform."""

    op_names = _ml("LinearRegressor")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        return [linear_scores(op, kb, 0)]


class LinearClassifierLowering(OnnxLowering):
    """Scores as LinearRegressor's (two classes from one row: (-s, s)), labels of the best."""

    op_names = _ml("LinearClassifier")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        width = tensor_shape(op.results[1])[-1]
        if width < 2:
            raise NotImplementedError("a single score column (labels by threshold)")
        labels = label_table(op, "classlabels_ints", width)
        scores = linear_scores(op, kb, 1, len(get_attr(op, "classlabels_ints") or []))
        return [store_labels(kb, op, scores, labels), scores]


# -- tree ensembles --------------------------------------------------------------------------

LEQ, LT, GTE, GT, EQ, NEQ, MEMBER = range(7)
"""Node comparison modes, numbered as TreeEnsemble's `nodes_modes`."""

_MODE_NAMES = {
    "BRANCH_LEQ": LEQ, "BRANCH_LT": LT, "BRANCH_GTE": GTE, "BRANCH_GT": GT,
    "BRANCH_EQ": EQ, "BRANCH_NEQ": NEQ, "BRANCH_MEMBER": MEMBER,
}


@dataclass
class Ensemble:
    """Trees as slots: branch nodes 0 … K-1, leaves K … K+L-1 (their successors are themselves)."""

    feature: list[int] = field(default_factory=list)
    split: list[float] = field(default_factory=list)
    mode: list[int] = field(default_factory=list)
    true: list[int] = field(default_factory=list)
    false: list[int] = field(default_factory=list)
    nan_true: list[bool] = field(default_factory=list)
    """Where a NaN feature goes at each branch (it compares false, except with NEQ)."""
    members: list[tuple[float, ...]] = field(default_factory=list)
    leaf_weights: list[dict[int, float]] = field(default_factory=list)
    """Per leaf: target → weight (a target a leaf does not name is not aggregated)."""
    roots: list[int] = field(default_factory=list)
    n_targets: int = 1
    aggregate: str = "SUM"
    post_transform: str = "NONE"
    base_values: list[float] | None = None

    @property
    def branches(self) -> int:
        return len(self.feature)

    def add_leaf(self) -> int:
        self.leaf_weights.append({})
        return self.branches + len(self.leaf_weights) - 1

    def depth(self) -> int:
        """The most branches on any root-to-leaf path; a cycle is an error."""
        memo: dict[int, int] = {}

        def walk(slot: int, seen: frozenset[int]) -> int:
            if slot >= self.branches:
                return 0
            if slot in seen:
                raise ValueError(f"the trees have a cycle through node {slot}")
            if slot not in memo:
                inner = seen | {slot}
                memo[slot] = 1 + max(walk(self.true[slot], inner), walk(self.false[slot], inner))
            return memo[slot]

        return max((walk(root, frozenset()) for root in self.roots), default=0)


_AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")
_POST_TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


def _tensor_or_list(op: Operation, name: str) -> list:
    """An attribute given as a list or as `<name>_as_tensor`, whichever is set ([] if neither)."""
    value = get_attr(op, name)
    if value is None and f"{name}_as_tensor" in op.spec().schema.attributes:
        value = get_attr(op, f"{name}_as_tensor")
    return [] if value is None else np.asarray(value).ravel().tolist()


def _check_lengths(what: str, lists: dict[str, Sequence]) -> None:
    lengths = {name: len(values) for name, values in lists.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{what} attributes differ in length: {lengths}")


def ensemble_v5(op: Operation) -> Ensemble:
    """TreeEnsemble (opset 5): branch nodes in `nodes_*`, leaves in `leaf_*`, roots given;
    set members listed in node order, each set ended by a NaN."""
    modes = _tensor_or_list(op, "nodes_modes")
    node_lists = {
        "nodes_featureids": get_attr(op, "nodes_featureids"),
        "nodes_splits": _tensor_or_list(op, "nodes_splits"),
        "nodes_modes": modes,
        "nodes_truenodeids": get_attr(op, "nodes_truenodeids"),
        "nodes_falsenodeids": get_attr(op, "nodes_falsenodeids"),
        "nodes_trueleafs": get_attr(op, "nodes_trueleafs"),
        "nodes_falseleafs": get_attr(op, "nodes_falseleafs"),
    }
    _check_lengths("node", node_lists)
    weights = _tensor_or_list(op, "leaf_weights")
    targets = get_attr(op, "leaf_targetids")
    _check_lengths("leaf", {"leaf_weights": weights, "leaf_targetids": targets})
    tracks = get_attr(op, "nodes_missing_value_tracks_true") or [0] * len(modes)
    members = iter(_member_sets(_tensor_or_list(op, "membership_values"), modes.count(MEMBER)))
    ensemble = Ensemble(
        n_targets=get_attr(op, "n_targets") or 1,
        aggregate=_AGGREGATES[get_attr(op, "aggregate_function")],
        post_transform=_POST_TRANSFORMS[get_attr(op, "post_transform")],
        roots=list(get_attr(op, "tree_roots")),
    )
    count = len(modes)
    for index in range(count):
        mode = int(modes[index])
        if mode not in range(7):
            raise ValueError(f"node {index}: unknown mode {mode}")
        ensemble.feature.append(node_lists["nodes_featureids"][index])
        ensemble.split.append(float(node_lists["nodes_splits"][index]))
        ensemble.mode.append(mode)
        ensemble.nan_true.append(bool(tracks[index]) or mode == NEQ)
        ensemble.members.append(next(members) if mode == MEMBER else ())
    for index in range(count):
        for successors, ids, leafs in (
            (ensemble.true, "nodes_truenodeids", "nodes_trueleafs"),
            (ensemble.false, "nodes_falsenodeids", "nodes_falseleafs"),
        ):
            target = node_lists[ids][index]
            is_leaf = node_lists[leafs][index]
            bound = len(weights) if is_leaf else count
            if not 0 <= target < bound:
                raise ValueError(f"node {index}: {ids} {target} out of range")
            successors.append(count + target if is_leaf else target)
    for weight, target in zip(weights, targets, strict=True):
        leaf = ensemble.add_leaf() - count
        ensemble.leaf_weights[leaf][target] = float(weight)
    if any(not 0 <= r < count for r in ensemble.roots):
        raise ValueError("tree_roots names a node that does not exist")
    return ensemble


def _member_sets(values: Sequence[float], count: int) -> list[tuple[float, ...]]:
    """`membership_values` split at its NaNs into one set per BRANCH_MEMBER node."""
    sets: list[tuple[float, ...]] = []
    current: list[float] = []
    for value in values:
        if math.isnan(value):
            sets.append(tuple(current))
            current = []
        else:
            current.append(float(value))
    if current or len(sets) != count:
        raise ValueError(f"membership_values holds {len(sets)} NaN-ended sets for {count} BRANCH_MEMBER nodes")
    return sets


def ensemble_classifier(op: Operation, n_scores: int) -> Ensemble:
    """TreeEnsembleClassifier (opsets 1 and 3): see `_ensemble_v3`; weights per class, summed."""
    return _ensemble_v3(op, "class", n_scores)


def ensemble_regressor(op: Operation) -> Ensemble:
    """TreeEnsembleRegressor (opsets 1 and 3): see `_ensemble_v3`; weights per target."""
    ensemble = _ensemble_v3(op, "target", get_attr(op, "n_targets") or 1)
    ensemble.aggregate = get_attr(op, "aggregate_function")
    if ensemble.aggregate not in _AGGREGATES:
        raise ValueError(f"aggregate_function {ensemble.aggregate}")
    return ensemble


def _ensemble_v3(op: Operation, weighs: str, n_targets: int) -> Ensemble:
    """The older tree ensembles: nodes named by (tree id, node id), leaves are the nodes of
    mode LEAF, each tree's root its first node, weights listed per (tree, leaf node) in the
    `<weighs>_*` attributes (`target_*` or `class_*`); a NaN feature follows
    `nodes_missing_value_tracks_true` whatever the mode."""
    modes = get_attr(op, "nodes_modes")
    tree_ids, node_ids = get_attr(op, "nodes_treeids"), get_attr(op, "nodes_nodeids")
    node_lists = {
        "nodes_treeids": tree_ids,
        "nodes_nodeids": node_ids,
        "nodes_modes": modes,
        "nodes_featureids": get_attr(op, "nodes_featureids"),
        "nodes_values": _tensor_or_list(op, "nodes_values"),
        "nodes_truenodeids": get_attr(op, "nodes_truenodeids"),
        "nodes_falsenodeids": get_attr(op, "nodes_falsenodeids"),
    }
    _check_lengths("node", node_lists)
    tracks = get_attr(op, "nodes_missing_value_tracks_true") or [0] * len(modes)
    unknown = sorted(set(modes) - {*_MODE_NAMES, "LEAF"} | ({"BRANCH_MEMBER"} & set(modes)))
    if unknown:
        raise NotImplementedError(f"node modes {unknown}")
    ensemble = Ensemble(
        n_targets=n_targets,
        post_transform=get_attr(op, "post_transform"),
        base_values=_tensor_or_list(op, "base_values") or None,
    )
    if ensemble.post_transform not in _POST_TRANSFORMS:
        raise ValueError(f"post_transform {ensemble.post_transform}")
    branches = [i for i, m in enumerate(modes) if m != "LEAF"]
    leaves = [i for i, m in enumerate(modes) if m == "LEAF"]
    slot = {(tree_ids[i], node_ids[i]): s for s, i in enumerate(branches)}
    slot.update({(tree_ids[i], node_ids[i]): len(branches) + s for s, i in enumerate(leaves)})
    if len(slot) != len(modes):
        raise ValueError("two nodes share a (tree id, node id)")

    def successor(index: int, ids: str) -> int:
        key = (tree_ids[index], node_lists[ids][index])
        if key not in slot:
            raise ValueError(f"node {key[1]} of tree {key[0]} does not exist")
        return slot[key]

    for index in branches:
        ensemble.feature.append(node_lists["nodes_featureids"][index])
        ensemble.split.append(float(node_lists["nodes_values"][index]))
        ensemble.mode.append(_MODE_NAMES[modes[index]])
        ensemble.nan_true.append(bool(tracks[index]))
        ensemble.members.append(())
        ensemble.true.append(successor(index, "nodes_truenodeids"))
        ensemble.false.append(successor(index, "nodes_falsenodeids"))
    for _ in leaves:
        ensemble.add_leaf()
    first: dict[int, int] = {}
    for index, tree in enumerate(tree_ids):
        first.setdefault(tree, index)
    ensemble.roots = [slot[(tree, node_ids[first[tree]])] for tree in sorted(first)]
    target_lists = {
        f"{weighs}_{key}": (_tensor_or_list if key == "weights" else get_attr)(op, f"{weighs}_{key}")
        for key in ("treeids", "nodeids", "ids", "weights")
    }
    _check_lengths(weighs, target_lists)
    for tree, node, target, weight in zip(*target_lists.values(), strict=True):
        leaf = slot.get((tree, node), -1) - len(branches)
        if leaf < 0:
            raise ValueError(f"a target weight names node {node} of tree {tree}, not a leaf")
        weights = ensemble.leaf_weights[leaf]
        weights[target] = weights.get(target, 0.0) + float(weight)
    return ensemble


def _tables(
    op: Operation, ensemble: Ensemble, feature_type: Attribute, score_type: Attribute, name: str
) -> dict[str, Layout]:
    """The constant tables the walk reads (splits in the features' type, weights in the scores'),
    optional ones only when the ensemble needs them."""
    slots = ensemble.branches + len(ensemble.leaf_weights)
    leaf_slots = range(ensemble.branches, slots)
    index = lambda values: np.array(values, np.int32)
    tables = {
        "root": index(ensemble.roots),
        "feature": index(ensemble.feature + [0] * len(leaf_slots)),
        "split": np.array(ensemble.split + [0.0] * len(leaf_slots)),
        "true": index(ensemble.true + list(leaf_slots)),
        "false": index(ensemble.false + list(leaf_slots)),
    }
    types = {"split": feature_type}
    if len(set(ensemble.mode)) > 1:
        tables["mode"], types["mode"] = np.array(ensemble.mode + [LEQ] * len(leaf_slots), np.int8), i8
    if any(t != (m == NEQ) for t, m in zip(ensemble.nan_true, ensemble.mode)):
        tables["nan_true"], types["nan_true"] = np.array(ensemble.nan_true + [False] * len(leaf_slots)), i1
    if MEMBER in ensemble.mode:
        width = max(len(m) for m in ensemble.members)
        members = np.full((slots, width), np.nan)
        for slot, values in enumerate(ensemble.members):
            members[slot, : len(values)] = values
        tables["members"] = members
        types["members"] = feature_type
    weights = np.zeros((len(ensemble.leaf_weights), ensemble.n_targets))
    named = np.zeros(weights.shape, bool)
    for leaf, by_target in enumerate(ensemble.leaf_weights):
        for target, weight in by_target.items():
            if not 0 <= target < ensemble.n_targets:
                raise ValueError(f"leaf target {target} out of range (n_targets = {ensemble.n_targets})")
            weights[leaf, target], named[leaf, target] = weight, True
    tables["weight"], types["weight"] = weights, score_type
    if ensemble.aggregate in ("MIN", "MAX") and not named.all():
        tables["named"], types["named"] = named, i1
    return {
        key: constant_table(op, f"{name}_{key}", array, types.get(key, i32))
        for key, array in tables.items()
    }


_COMPARE: dict[int, Callable[[KernelBuilder, SSAValue, SSAValue], SSAValue]] = {
    LEQ: lambda kb, x, s: kb.alu("cmple", x, s),
    LT: lambda kb, x, s: kb.alu("cmplt", x, s),
    GTE: lambda kb, x, s: kb.alu("cmple", s, x),
    GT: lambda kb, x, s: kb.alu("cmplt", s, x),
    EQ: lambda kb, x, s: kb.alu("cmpeq", x, s),
    NEQ: lambda kb, x, s: kb.alu("cmpne", x, s),
}


def _goes_true(kb: KernelBuilder, ensemble: Ensemble, tables: dict[str, Layout], x: SSAValue, at: list[SSAValue]) -> SSAValue:
    """Whether the branch at slot `at` sends feature value `x` to its true successor."""
    split = kb.load(tables["split"], at)
    outcomes: dict[int, SSAValue] = {}
    for mode in sorted(set(ensemble.mode)):
        if mode == MEMBER:
            members = tables["members"]
            hits = [kb.alu("cmpeq", x, kb.load(members, [*at, kb.index(k)])) for k in range(members.shape[1])]
            outcomes[mode] = hits[0] if len(hits) == 1 else _fold(kb, "or", hits)
        else:
            outcomes[mode] = _COMPARE[mode](kb, x, split)
    modes = sorted(outcomes)
    condition = outcomes[modes[-1]]
    if len(modes) > 1:
        mode = kb.load(tables["mode"], at)
        for m in reversed(modes[:-1]):
            condition = kb.where(kb.alu("cmpeq", mode, kb.const(m, i8)), outcomes[m], condition)
    if "nan_true" in tables:
        is_nan = kb.alu("cmpne", x, x)  # uop.isnan answers in x's type, not i1
        condition = kb.where(is_nan, kb.load(tables["nan_true"], at), condition)
    return condition


def _fold(kb: KernelBuilder, name: str, values: list[SSAValue]) -> SSAValue:
    result = values[0]
    for value in values[1:]:
        result = kb.alu(name, result, value)
    return result


def lower_ensemble(
    op: Operation, kb: KernelBuilder, ensemble: Ensemble, result: int = 0, binary: bool = False
) -> Layout:
    """The scores [N, n_targets] of an ensemble over the rows of X, as `op.results[result]`;
    `binary`: TreeEnsembleClassifier's two-class rule (see `_binary_scores`)."""
    x = _as_rows(layout_of(inputs(op)[0]))
    out_type = tensor_element_type(op.results[result])
    compute = _compute_type(out_type)
    feature_type = _compute_type(x.element_type)
    name = result_name(op, result)
    tables = _tables(op, ensemble, feature_type, compute, name)
    rows, targets = x.shape[0], ensemble.n_targets
    out = kb.alloc(name, (rows, targets), out_type)
    scores = out if compute == out_type else kb.alloc(f"{name}_scores", (targets,), compute)
    depth = ensemble.depth()
    extreme = float(np.finfo(numpy_dtype(out_type)).max)
    initial = {"MIN": extreme, "MAX": -extreme}.get(ensemble.aggregate, 0.0)
    combine = {"MIN": "min", "MAX": "max"}.get(ensemble.aggregate, "add")
    with kb.loop(rows) as row:
        score_at = (lambda t: [row, t]) if scores is out else (lambda t: [t])
        with kb.loop(targets) as t:
            kb.store(kb.const(initial, compute), scores, score_at(t))
        with kb.loop(len(ensemble.roots)) as tree:
            slot = kb.define_acc(0, i32)
            kb.acc_set(slot, kb.load(tables["root"], [tree]))
            with kb.loop(depth):
                at = [kb.cast(kb.acc_get(slot), IndexType())]
                column = kb.cast(kb.load(tables["feature"], at), IndexType())
                value = kb.cast(kb.load(x, [row, column]), feature_type)
                goes_true = _goes_true(kb, ensemble, tables, value, at)
                kb.acc_set(slot, kb.where(goes_true, kb.load(tables["true"], at), kb.load(tables["false"], at)))
            leaf = kb.cast(kb.alu("sub", kb.acc_get(slot), kb.const(ensemble.branches, i32)), IndexType())
            with kb.loop(targets) as t:
                old = kb.load(scores, score_at(t))
                new = kb.alu(combine, old, kb.load(tables["weight"], [leaf, t]))
                if "named" in tables:
                    new = kb.where(kb.load(tables["named"], [leaf, t]), new, old)
                kb.store(new, scores, score_at(t))
        _finish_row(kb, ensemble, scores, score_at, compute, binary)
        if scores is not out:
            with kb.loop(targets) as t:
                kb.store(kb.cast(kb.load(scores, [t]), out_type), out, [row, t])
    return out


def _finish_row(
    kb: KernelBuilder, ensemble: Ensemble, scores: Layout, score_at, compute: Attribute, binary: bool
) -> None:
    """Average, base values, the binary rule, then the post transform, over one row's scores
    in place."""
    targets = ensemble.n_targets
    base = ensemble.base_values
    if base is not None and len(base) == 1:
        base = base * targets  # one base value is every target's, as numpy broadcasts it
    if base is not None and len(base) != targets:
        raise ValueError(f"{len(base)} base values for {targets} targets")
    if ensemble.aggregate == "AVERAGE":
        trees = kb.const(float(len(ensemble.roots)), compute)
        with kb.loop(targets) as t:
            kb.store(kb.alu("div", kb.load(scores, score_at(t)), trees), scores, score_at(t))
    for target, offset in enumerate(base or ()):
        at = score_at(kb.index(target))
        kb.store(kb.alu("add", kb.load(scores, at), kb.const(float(offset), compute)), scores, at)
    if binary:
        _binary_scores(kb, ensemble.post_transform, scores, score_at, compute)
    post_transform(kb, ensemble.post_transform, targets, scores, score_at, compute)


def _binary_scores(kb: KernelBuilder, transform: str, scores: Layout, score_at, compute: Attribute) -> None:
    """A classifier whose leaves all weigh one class scores s for it: the row becomes
    (1 - s, s) before NONE (and PROBIT), (-s, s) before the other transforms."""
    first, second = score_at(kb.index(0)), score_at(kb.index(1))
    score = kb.load(scores, first)
    kb.store(score, scores, second)
    if transform in ("NONE", "PROBIT"):
        other = kb.alu("sub", kb.const(1.0, compute), score)
    else:
        other = kb.alu("neg", score)
    kb.store(other, scores, first)


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


class TreeEnsembleLowering(OnnxLowering):
    """TreeEnsemble (opset 5) and TreeEnsembleRegressor: see the module docstring."""

    op_names = _ml("TreeEnsemble", "TreeEnsembleRegressor")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        read = ensemble_v5 if op.name == op_name("TreeEnsemble", ML_DOMAIN) else ensemble_regressor
        return [lower_ensemble(op, kb, read(op))]


# -- classifiers: scores, then the label of the best score ---------------------------------------


def label_table(op: Operation, labels_attribute: str, width: int) -> Layout:
    """The label of each score column, as a constant table: the class labels, or for a single
    label 1 the columns (0, 1) of a binary classifier, as ONNX's reference labels them."""
    if get_attr(op, "classlabels_strings"):
        raise NotImplementedError("string class labels (string tensors are out of scope)")
    labels = list(get_attr(op, labels_attribute) or [])
    if labels == [1] and width == 2:
        labels = [0, 1]
    if len(labels) != width:
        raise NotImplementedError(f"{len(labels)} class labels for {width} score columns")
    return constant_table(op, f"{result_name(op, 0)}_labels", np.array(labels, np.int64), tensor_element_type(op.results[0]))


def store_labels(kb: KernelBuilder, op: Operation, scores: Layout, labels: Layout) -> Layout:
    """Each row's label: that of its first highest score."""
    out = kb.alloc(result_name(op, 0), (scores.shape[0],), labels.element_type)
    compute = scores.element_type
    with kb.loop(scores.shape[0]) as row:
        best = kb.define_acc(0, i32)
        peak = kb.define_acc(float("-inf"), compute)
        with kb.loop(scores.shape[1]) as column:
            value = kb.load(scores, [row, column])
            better = kb.alu("cmplt", kb.acc_get(peak), value)
            kb.acc_set(peak, kb.where(better, value, kb.acc_get(peak)))
            kb.acc_set(best, kb.where(better, kb.cast(column, i32), kb.acc_get(best)))
        kb.store(kb.load(labels, [kb.cast(kb.acc_get(best), IndexType())]), out, [row])
    return out


class TreeEnsembleClassifierLowering(OnnxLowering):
    """TreeEnsembleClassifier: class scores summed over the trees (plus base values), the
    binary rule when every leaf weighs one class, the post transform, then the labels."""

    op_names = _ml("TreeEnsembleClassifier")

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        width = tensor_shape(op.results[1])[-1]
        labels = label_table(op, "classlabels_int64s", width)
        binary = len(set(get_attr(op, "class_ids") or [])) == 1 and width == 2
        scores = lower_ensemble(op, kb, ensemble_classifier(op, width), result=1, binary=binary)
        return [store_labels(kb, op, scores, labels), scores]


PATTERNS = (
    BinarizerLowering(),
    ScalerLowering(),
    ArrayFeatureExtractorLowering(),
    TreeEnsembleLowering(),
    TreeEnsembleClassifierLowering(),
    NormalizerLowering(),
    LinearRegressorLowering(),
    LinearClassifierLowering(),
    ImputerLowering(),
    SVMRegressorLowering(),
    LabelEncoderLowering(),
    OneHotEncoderLowering(),
)
