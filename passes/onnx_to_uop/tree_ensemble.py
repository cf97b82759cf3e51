"""The `ai.onnx.ml` tree ensembles: TreeEnsemble, TreeEnsembleRegressor and TreeEnsembleClassifier.

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
from xdsl.dialects.builtin import IndexType, i1, i8, i32
from xdsl.ir import Attribute, Operation, SSAValue
from zant.dialects.onnx import (
    MlTreeEnsembleClassifierOp,
    MlTreeEnsembleOp,
    MlTreeEnsembleRegressorOp,
    get_attr,
    inputs,
)
from zant.ir.types import numpy_dtype
from zant.passes.onnx_to_uop.base import OnnxLowering, result_name
from zant.passes.onnx_to_uop.kernel import (
    KernelBuilder,
    Layout,
    constant_table,
    layout_of,
    tensor_element_type,
    tensor_shape,
)
from zant.passes.onnx_to_uop.ml import (
    POST_TRANSFORMS,
    as_rows,
    fold_alu,
    label_table,
    ml_compute_type,
    post_transform,
    store_labels,
)


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
        post_transform=POST_TRANSFORMS[get_attr(op, "post_transform")],
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
    if ensemble.post_transform not in POST_TRANSFORMS:
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
            outcomes[mode] = hits[0] if len(hits) == 1 else fold_alu(kb, "or", hits)
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


def lower_ensemble(
    op: Operation, kb: KernelBuilder, ensemble: Ensemble, result: int = 0, binary: bool = False
) -> Layout:
    """The scores [N, n_targets] of an ensemble over the rows of X, as `op.results[result]`;
    `binary`: TreeEnsembleClassifier's two-class rule (see `_binary_scores`)."""
    x = as_rows(layout_of(inputs(op)[0]))
    out_type = tensor_element_type(op.results[result])
    compute = ml_compute_type(out_type)
    feature_type = ml_compute_type(x.element_type)
    bad = [f for f in ensemble.feature if not 0 <= f < x.shape[1]]
    if bad:  # the walk reads X's column feature[slot]: one outside the row would read past it
        raise ValueError(f"feature id {bad[0]} is out of range for X's {x.shape[1]} features")
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


class TreeEnsembleLowering(OnnxLowering):
    """TreeEnsemble (opset 5) and TreeEnsembleRegressor: see the module docstring."""

    op_names = frozenset({MlTreeEnsembleOp.name, MlTreeEnsembleRegressorOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        read = ensemble_v5 if isinstance(op, MlTreeEnsembleOp) else ensemble_regressor
        return [lower_ensemble(op, kb, read(op))]


class TreeEnsembleClassifierLowering(OnnxLowering):
    """TreeEnsembleClassifier: class scores summed over the trees (plus base values), the
    binary rule when every leaf weighs one class, the post transform, then the labels."""

    op_names = frozenset({MlTreeEnsembleClassifierOp.name})

    def lower(self, op: Operation, kb: KernelBuilder) -> list[Layout]:
        width = tensor_shape(op.results[1])[-1]
        labels = label_table(op, "classlabels_int64s", width)
        binary = len(set(get_attr(op, "class_ids") or [])) == 1 and width == 2
        scores = lower_ensemble(op, kb, ensemble_classifier(op, width), result=1, binary=binary)
        return [store_labels(kb, op, scores, labels), scores]


PATTERNS = (
    TreeEnsembleLowering(),
    TreeEnsembleClassifierLowering(),
)

__all__ = ["PATTERNS", "TreeEnsembleLowering", "TreeEnsembleClassifierLowering", "Ensemble", "ensemble_classifier", "ensemble_regressor", "ensemble_v5", "lower_ensemble"]
