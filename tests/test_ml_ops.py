"""ai.onnx.ml operators end to end: numerics in ReleaseSafe against ONNX's reference evaluator
(numpy on its raw scores where it ignores `post_transform`), the backend suite's ml cases, real
scikit-learn models (when skl2onnx is installed), and the errors for what is not supported."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import onnx
import pytest
from e2e import check_model, compile_and_run
from onnx import TensorProto, helper
from onnx.reference.ops.aionnxml._common_classifier import probit as reference_probit

from zant.errors import ZantError

ML = "ai.onnx.ml"
LEQ, LT, GTE, GT, EQ, NEQ, MEMBER = range(7)
GRID = np.array([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0, np.nan], np.float32)
"""Feature values: few distinct ones, so EQ/NEQ and set membership take both branches; NaN for
the missing-value rules."""


def _model(nodes, inputs, outputs, ml_opset=5, opset=None):
    imports = [helper.make_opsetid(ML, ml_opset)]
    if opset is not None:
        imports.append(helper.make_opsetid("", opset))
    graph = helper.make_graph(nodes, "ml", inputs, outputs)
    return helper.make_model(graph, opset_imports=imports)


def _value(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def _grid_input(rows, features, seed=0):
    return np.random.default_rng(seed).choice(GRID, (rows, features)).astype(np.float32)


# -- the backend suite's ml cases ---------------------------------------------------------------

SUITE_CASES = (
    "test_ai_onnx_ml_binarizer",
    "test_ai_onnx_ml_array_feature_extractor",
    "test_ai_onnx_ml_tree_ensemble_single_tree",
    "test_ai_onnx_ml_tree_ensemble_set_membership",
)


@functools.cache
def _suite_cases() -> dict:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the suite's own generators warn about overflows
        return {c.name: c for c in collect_testcases() if c.name in SUITE_CASES}


@pytest.mark.parametrize("name", SUITE_CASES)
def test_backend_suite_ml_case(name):
    case = _suite_cases()[name]
    for inputs, outputs in case.data_sets:
        feeds = {v.name: x for v, x in zip(case.model.graph.input, inputs, strict=True)}
        got = check_model(case.model, feeds)
        for g, want in zip(got, outputs, strict=True):
            np.testing.assert_allclose(g, want, rtol=1e-6)


# -- element-wise ops, one model ----------------------------------------------------------------


def test_binarizer_scaler_array_feature_extractor():
    nodes = [
        helper.make_node("Binarizer", ["x"], ["bin"], domain=ML, threshold=0.25),
        helper.make_node("Binarizer", ["n"], ["bin_int"], domain=ML, threshold=1.5),
        helper.make_node("Scaler", ["x"], ["scaled"], domain=ML, offset=[0.5, -1.0, 2.0], scale=[2.0, 0.5, -1.0]),
        helper.make_node("Scaler", ["x"], ["scaled_one"], domain=ML, offset=[1.0], scale=[0.5]),
        helper.make_node("ArrayFeatureExtractor", ["x", "idx"], ["picked"], domain=ML),
        helper.make_node("ArrayFeatureExtractor", ["v", "idx"], ["picked_row"], domain=ML),
    ]
    model = _model(
        nodes,
        [_value("x", [4, 3]), _value("n", [4, 3], TensorProto.INT64), _value("v", [3]),
         _value("idx", [1, 4], TensorProto.INT64)],
        [_value("bin", [4, 3]), _value("bin_int", [4, 3], TensorProto.INT64),
         _value("scaled", [4, 3]), _value("scaled_one", [4, 3]),
         _value("picked", [4, 4]), _value("picked_row", [1, 4])],
        ml_opset=1,
    )
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    x[0, 0] = np.nan  # NaN is not above the threshold
    feeds = {
        "x": x,
        "n": rng.integers(-3, 4, (4, 3)).astype(np.int64),
        "v": rng.standard_normal(3).astype(np.float32),
        "idx": np.array([[2, 0, -1, 1]], np.int64),  # -1 counts from the end
    }
    check_model(model, feeds)


def test_normalizer_and_linear_models():
    """Normalizer's three norms, LinearRegressor with two targets, LinearClassifier with three
    classes under SOFTMAX and with one coefficient row for two classes (scores (-s, s))."""
    coefficients = [0.5, -1.0, 2.0, 1.5, 0.0, -0.5, -2.0, 1.0, 0.25]
    nodes = [helper.make_node("Normalizer", ["x"], [f"norm_{n.lower()}"], domain=ML, norm=n) for n in ("MAX", "L1", "L2")]
    nodes += [
        helper.make_node("LinearRegressor", ["x"], ["regressed"], domain=ML, targets=2,
                         coefficients=coefficients[:6], intercepts=[0.5, -0.25]),
        helper.make_node("LinearClassifier", ["x"], ["label3", "scores3"], domain=ML, classlabels_ints=[4, 5, 6],
                         coefficients=coefficients, intercepts=[0.1, 0.2, 0.3], post_transform="SOFTMAX"),
        helper.make_node("LinearClassifier", ["x"], ["label2", "scores2"], domain=ML, classlabels_ints=[0, 1],
                         coefficients=coefficients[:3], intercepts=[0.1]),
    ]
    outputs = [_value(f"norm_{n}", [5, 3]) for n in ("max", "l1", "l2")] + [_value("regressed", [5, 2])]
    outputs += [_value("label3", [5], TensorProto.INT64), _value("scores3", [5, 3]),
                _value("label2", [5], TensorProto.INT64), _value("scores2", [5, 2])]
    model = _model(nodes, [_value("x", [5, 3])], outputs, ml_opset=1)
    x = np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32)
    x[4] = 0.0  # a zero row: the norm's floor 1e-30 keeps it 0
    check_model(model, {"x": x})


def test_imputer_and_svm_regressor():
    """Imputer for NaN, for a value and on int64; SVMRegressor with each kernel, without support
    vectors (linear) and as a one-class SVM: one model."""
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((4, 3)).round(2).ravel().tolist()
    svm = {"n_supports": 4, "support_vectors": vectors, "coefficients": [0.5, -1.0, 0.75, 0.25], "rho": [0.1],
           "kernel_params": [0.3, 0.5, 3.0]}
    nodes = [
        helper.make_node("Imputer", ["x"], ["imputed"], domain=ML, imputed_value_floats=[1.0, 2.0, 3.0],
                         replaced_value_float=float("nan")),
        helper.make_node("Imputer", ["x"], ["imputed_one"], domain=ML, imputed_value_floats=[9.0], replaced_value_float=0.5),
        helper.make_node("Imputer", ["n"], ["imputed_int"], domain=ML, imputed_value_int64s=[7], replaced_value_int64=-1),
        *[helper.make_node("SVMRegressor", ["imputed"], [f"svm_{k.lower()}"], domain=ML, kernel_type=k, **svm)
          for k in ("LINEAR", "POLY", "RBF", "SIGMOID")],
        helper.make_node("SVMRegressor", ["imputed"], ["svm_one_class"], domain=ML, kernel_type="RBF", one_class=1, **svm),
        helper.make_node("SVMRegressor", ["imputed"], ["svm_plain"], domain=ML, coefficients=[1.0, -0.5, 0.25], rho=[0.2]),
    ]
    svm_outputs = [n.output[0] for n in nodes if n.op_type == "SVMRegressor"]
    model = _model(
        nodes, [_value("x", [6, 3]), _value("n", [6, 3], TensorProto.INT64)],
        [_value("imputed", [6, 3]), _value("imputed_one", [6, 3]), _value("imputed_int", [6, 3], TensorProto.INT64)]
        + [_value(o, [6, 1]) for o in svm_outputs],
        ml_opset=1,
    )
    check_model(model, {"x": _grid_input(6, 3, seed=5), "n": rng.integers(-2, 3, (6, 3)).astype(np.int64)})


def test_label_encoder_numeric():
    """int64 → float and float → int64 lists (a repeated key maps to its last value), and
    int64 → int64 tensors (opset 4), each with its default."""
    tensor = lambda name, values, elem: helper.make_tensor(name, elem, [len(values)], values)
    nodes = [
        helper.make_node("LabelEncoder", ["n"], ["to_float"], domain=ML, keys_int64s=[1, 2, 3, 2],
                         values_floats=[0.5, 1.5, 2.5, 9.0], default_float=-1.0),
        helper.make_node("LabelEncoder", ["x"], ["to_int"], domain=ML, keys_floats=[-1.0, 0.5, 2.0],
                         values_int64s=[10, 20, 30], default_int64=-7),
        helper.make_node("LabelEncoder", ["n"], ["to_int_tensor"], domain=ML,
                         keys_tensor=tensor("k", [0, 1], TensorProto.INT64), values_tensor=tensor("v", [5, 6], TensorProto.INT64),
                         default_tensor=helper.make_tensor("d", TensorProto.INT64, [1], [42])),
    ]
    model = _model(
        nodes, [_value("x", [4, 3]), _value("n", [4, 3], TensorProto.INT64)],
        [_value("to_float", [4, 3]), _value("to_int", [4, 3], TensorProto.INT64), _value("to_int_tensor", [4, 3], TensorProto.INT64)],
        ml_opset=4,
    )
    rng = np.random.default_rng(4)
    check_model(model, {"x": _grid_input(4, 3, seed=3), "n": rng.integers(-1, 4, (4, 3)).astype(np.int64)})


def test_one_hot_encoder():
    """Integer and float inputs against int64 categories; an unknown value gives a zero row."""
    nodes = [helper.make_node("OneHotEncoder", [name], [f"{name}_hot"], domain=ML, cats_int64s=[3, 1, 4], zeros=1)
             for name in ("n", "x")]
    model = _model(
        nodes, [_value("n", [2, 3], TensorProto.INT64), _value("x", [4])],
        [_value("n_hot", [2, 3, 3]), _value("x_hot", [4, 3])], ml_opset=1,
    )
    check_model(model, {"n": np.array([[3, 1, 0], [4, 4, 9]], np.int64), "x": np.array([1.0, 4.0, 2.5, 3.0], np.float32)})


def test_one_hot_encoder_without_zeros_is_refused_by_name():
    node = helper.make_node("OneHotEncoder", ["n"], ["y"], domain=ML, cats_int64s=[1, 2], zeros=0, name="hot")
    model = _model([node], [_value("n", [3], TensorProto.INT64)], [_value("y", [3, 2])], ml_opset=1)
    with pytest.raises(ZantError, match=r"node 'hot' \(onnx.ml.OneHotEncoder\): zeros=0"):
        compile_and_run(model, {"n": np.array([1, 2, 1], np.int64)})


# -- TreeEnsemble (ai.onnx.ml opset 5) -----------------------------------------------------------


class RandomEnsemble:
    """Random trees in TreeEnsemble's attributes; nodes numbered in preorder (true branch first),
    the order in which both the specification and the reference evaluator read set members."""

    def __init__(self, seed, trees, depth, features, n_targets, modes):
        self.rng = np.random.default_rng(seed)
        self.features, self.n_targets, self.modes = features, n_targets, modes
        self.nodes: list[dict] = []
        self.leaves: list[tuple[int, float]] = []
        self.members: list[float] = []
        self.roots = [self._grow(depth, root=True)[0] for _ in range(trees)]

    def _grow(self, depth, root=False):
        if depth == 0 or (not root and self.rng.random() < 0.25):
            self.leaves.append((int(self.rng.integers(self.n_targets)), float(self.rng.normal())))
            return len(self.leaves) - 1, 1
        index = len(self.nodes)
        mode = int(self.rng.choice(self.modes))
        node = {"mode": mode, "feature": int(self.rng.integers(self.features)),
                "split": float(self.rng.choice(GRID[:-1])), "tracks": int(self.rng.random() < 0.5)}
        self.nodes.append(node)
        if mode == MEMBER:
            # No member 0.0: the reference evaluator reads 0.0 as the end of a set.
            picked = self.rng.choice(np.array([-1.0, -0.5, 0.5, 1.0, 2.0]), int(self.rng.integers(1, 4)), replace=False)
            self.members += [*picked.tolist(), float("nan")]
        node["true"] = self._grow(depth - 1)
        node["false"] = self._grow(depth - 1)
        return index, 0

    def node(self, inputs, outputs, **attributes):
        n = self.nodes
        return helper.make_node(
            "TreeEnsemble", inputs, outputs, domain=ML,
            n_targets=self.n_targets,
            tree_roots=self.roots,
            nodes_modes=helper.make_tensor("modes", TensorProto.UINT8, [len(n)], [d["mode"] for d in n]),
            nodes_featureids=[d["feature"] for d in n],
            nodes_splits=helper.make_tensor("splits", TensorProto.FLOAT, [len(n)], [d["split"] for d in n]),
            nodes_truenodeids=[d["true"][0] for d in n],
            nodes_trueleafs=[d["true"][1] for d in n],
            nodes_falsenodeids=[d["false"][0] for d in n],
            nodes_falseleafs=[d["false"][1] for d in n],
            nodes_missing_value_tracks_true=[d["tracks"] for d in n],
            leaf_targetids=[t for t, _ in self.leaves],
            leaf_weights=helper.make_tensor("weights", TensorProto.FLOAT, [len(self.leaves)], [w for _, w in self.leaves]),
            **({"membership_values": helper.make_tensor("members", TensorProto.FLOAT, [len(self.members)], self.members)}
               if self.members else {}),
            **attributes,
        )


def test_tree_ensemble_every_mode_and_aggregate():
    """Five trees mixing all seven node modes (set membership included) and missing values
    sent either way, aggregated by AVERAGE, SUM, MIN and MAX over two targets: one model."""
    ensemble = RandomEnsemble(seed=3, trees=5, depth=4, features=4, n_targets=2, modes=list(range(7)))
    assert {d["mode"] for d in ensemble.nodes} == set(range(7))
    nodes = [ensemble.node(["x"], [f"y{a}"], aggregate_function=a) for a in range(4)]
    model = _model(nodes, [_value("x", [16, 4])], [_value(f"y{a}", [16, 2]) for a in range(4)])
    check_model(model, {"x": _grid_input(16, 4)})


def test_tree_ensemble_double_features_and_a_single_mode():
    ensemble = RandomEnsemble(seed=5, trees=3, depth=3, features=3, n_targets=1, modes=[LEQ])
    node = ensemble.node(["x"], ["y"])
    for attribute in node.attribute:  # splits and weights in the input's type
        if attribute.name in ("nodes_splits", "leaf_weights"):
            values = onnx.numpy_helper.to_array(attribute.t).astype(np.float64)
            attribute.t.CopyFrom(onnx.numpy_helper.from_array(values, attribute.t.name))
    model = _model([node], [_value("x", [8, 3], TensorProto.DOUBLE)], [_value("y", [8, 1], TensorProto.DOUBLE)])
    check_model(model, {"x": _grid_input(8, 3, seed=2).astype(np.float64)})


def _softmax(scores, keep_zero=False):
    exp = np.exp(scores - scores.max(axis=1, keepdims=True))
    if keep_zero:
        exp = np.where(scores == 0, 0, exp)
    return exp / exp.sum(axis=1, keepdims=True)


POST_TRANSFORMS = {  # numbered as the TreeEnsemble schema says (onnxruntime swaps 1 and 2)
    "softmax": (1, _softmax),
    "logistic": (2, lambda s: 1 / (1 + np.exp(-s))),
    "softmax_zero": (3, lambda s: _softmax(s, keep_zero=True)),
}


def test_tree_ensemble_post_transforms():
    """ONNX's reference evaluator ignores `post_transform`: the transforms are applied here in
    numpy to its raw scores. Some leaves weigh 0 for a target, which SOFTMAX_ZERO keeps at 0."""
    from onnx.reference import ReferenceEvaluator

    ensemble = RandomEnsemble(seed=7, trees=4, depth=3, features=3, n_targets=3, modes=[LEQ, GT])
    ensemble.leaves[:3] = [(t, 0.0) for t, _ in ensemble.leaves[:3]]
    # PROBIT wants scores in (0, 1): its own trees, weights in (0.05, 0.3) summed over 3 trees.
    probit = RandomEnsemble(seed=8, trees=3, depth=3, features=3, n_targets=3, modes=[LEQ])
    probit.leaves = [(t, 0.05 + abs(w) % 0.25) for t, w in probit.leaves]
    pairs = [(ensemble, "raw", 0)] + [(ensemble, name, t) for name, (t, _) in POST_TRANSFORMS.items()]
    pairs += [(probit, "probit_raw", 0), (probit, "probit", 4)]
    nodes = [e.node(["x"], [name], post_transform=t, aggregate_function=1) for e, name, t in pairs]
    model = _model(nodes, [_value("x", [6, 3])], [_value(n.output[0], [6, 3]) for n in nodes])
    x = _grid_input(6, 3, seed=4)
    got = dict(zip([n.output[0] for n in nodes], compile_and_run(model, {"x": x}), strict=True))
    raw_nodes = [nodes[0], nodes[-2]]
    reference = ReferenceEvaluator(_model(raw_nodes, [_value("x", [6, 3])], [_value(n.output[0], [6, 3]) for n in raw_nodes]))
    want_raw, want_probit_raw = reference.run(None, {"x": x})
    np.testing.assert_allclose(got["raw"], want_raw, rtol=1e-5, atol=1e-6)
    for name, (_, transform) in POST_TRANSFORMS.items():
        np.testing.assert_allclose(got[name], transform(want_raw.astype(np.float64)), rtol=1e-5, atol=1e-6)
    assert ((want_probit_raw >= 0) & (want_probit_raw < 1)).all()  # 0 (no tree names the target): probit 0
    np.testing.assert_allclose(got["probit"], reference_probit(want_probit_raw.astype(np.float64)), rtol=1e-4, atol=1e-5)


def test_tree_ensemble_with_a_cycle_is_refused_by_name():
    """The walk's step count is the trees' depth: a cycle has none (ONNX's checker lets it by)."""
    ensemble = RandomEnsemble(seed=1, trees=1, depth=2, features=2, n_targets=1, modes=[LEQ])
    node = ensemble.node(["x"], ["y"], name="forest")
    for attribute in node.attribute:
        if attribute.name == "nodes_falsenodeids":
            attribute.ints[-1] = 0  # the last branch's false successor: the root
        if attribute.name == "nodes_falseleafs":
            attribute.ints[-1] = 0
    model = _model([node], [_value("x", [2, 2])], [_value("y", [2, 1])])
    with pytest.raises(ZantError, match=r"node 'forest' \(onnx.ml.TreeEnsemble\): the trees have a cycle"):
        compile_and_run(model, {"x": np.zeros((2, 2), np.float32)})


# -- TreeEnsembleRegressor (opsets 1 and 3) -------------------------------------------------------

_MODE_NAMES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]


def _regressor(ensemble: RandomEnsemble, inputs, outputs, rng, op_type="TreeEnsembleRegressor", weighs="target", **attributes):
    """The same trees as a TreeEnsembleRegressor (or Classifier, weighs="class"): (tree id,
    node id) names, LEAF nodes, and one or two target weights per leaf."""
    attrs = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_modes", "nodes_featureids",
                             "nodes_values", "nodes_truenodeids", "nodes_falsenodeids",
                             "nodes_missing_value_tracks_true")}
    attrs |= {f"{weighs}_{k}": [] for k in ("treeids", "nodeids", "ids", "weights")}

    def emit(tree, ref, ids):
        index, is_leaf = ref
        node_id = len(ids)
        ids.append(node_id)
        position = len(attrs["nodes_treeids"])
        for key, value in (("nodes_treeids", tree), ("nodes_nodeids", node_id)):
            attrs[key].append(value)
        if is_leaf:
            attrs["nodes_modes"].append("LEAF")
            for key in ("nodes_featureids", "nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true"):
                attrs[key].append(0)
            attrs["nodes_values"].append(0.0)
            target, weight = ensemble.leaves[index]
            for t in sorted({target, int(rng.integers(ensemble.n_targets))}):
                for key, value in (("treeids", tree), ("nodeids", node_id), ("ids", t), ("weights", weight + t)):
                    attrs[f"{weighs}_{key}"].append(value)
            return node_id
        node = ensemble.nodes[index]
        attrs["nodes_modes"].append(_MODE_NAMES[node["mode"]])
        attrs["nodes_featureids"].append(node["feature"])
        attrs["nodes_values"].append(node["split"])
        attrs["nodes_missing_value_tracks_true"].append(node["tracks"])
        for key in ("nodes_truenodeids", "nodes_falsenodeids"):
            attrs[key].append(0)
        attrs["nodes_truenodeids"][position] = emit(tree, node["true"], ids)
        attrs["nodes_falsenodeids"][position] = emit(tree, node["false"], ids)
        return node_id

    for tree, root in enumerate(ensemble.roots):
        emit(tree, (root, 0), [])
    return helper.make_node(op_type, inputs, outputs, domain=ML, **attrs, **attributes)


def test_tree_ensemble_regressor_aggregates_and_base_values():
    """The older regressor with a default-domain opset to convert beside it (as converters
    emit): NaN follows `missing_value_tracks_true` whatever the mode, base values are added."""
    ensemble = RandomEnsemble(seed=11, trees=4, depth=4, features=4, n_targets=2, modes=list(range(6)))
    rng = np.random.default_rng(0)
    nodes = [
        _regressor(ensemble, ["x"], [f"y_{a.lower()}"], rng, n_targets=2, aggregate_function=a,
                   base_values=[0.5, -1.0])
        for a in ("SUM", "AVERAGE", "MIN", "MAX")
    ]
    names = [n.output[0] for n in nodes]
    model = _model(nodes, [_value("x", [12, 4])], [_value(n, [12, 2]) for n in names], ml_opset=3, opset=17)
    check_model(model, {"x": _grid_input(12, 4, seed=6)})


def test_tree_ensemble_classifier_labels_and_post_transforms():
    """Three classes under NONE, LOGISTIC and SOFTMAX (the reference applies them for the
    classifier), labels from `classlabels_int64s`; and a binary one (every leaf weighs class 0)."""
    ensemble = RandomEnsemble(seed=13, trees=3, depth=3, features=3, n_targets=3, modes=[LEQ, LT, GTE])
    rng = np.random.default_rng(1)
    nodes = [
        _regressor(ensemble, ["x"], [f"label_{t.lower()}", f"scores_{t.lower()}"], rng, "TreeEnsembleClassifier", "class",
                   classlabels_int64s=[10, 20, 30], post_transform=t, base_values=[0.1, 0.0, -0.1])
        for t in ("NONE", "LOGISTIC", "SOFTMAX")
    ]
    binary = RandomEnsemble(seed=17, trees=2, depth=3, features=3, n_targets=1, modes=[LEQ])
    nodes.append(_regressor(binary, ["x"], ["label_binary", "scores_binary"], rng, "TreeEnsembleClassifier", "class",
                            classlabels_int64s=[0, 1], post_transform="LOGISTIC", base_values=[0.25]))
    outputs = [_value(o, [8] if o.startswith("label") else [8, 3 if "binary" not in o else 2],
                      TensorProto.INT64 if o.startswith("label") else TensorProto.FLOAT)
               for n in nodes for o in n.output]
    model = _model(nodes, [_value("x", [8, 3])], outputs, ml_opset=3, opset=17)
    check_model(model, {"x": np.nan_to_num(_grid_input(8, 3, seed=9))})


# -- a real scikit-learn model ------------------------------------------------------------------


def test_scikit_learn_forest_pipeline():
    skl2onnx = pytest.importorskip("skl2onnx", reason="skl2onnx converts scikit-learn models to ONNX")
    from skl2onnx.common.data_types import FloatTensorType
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 5)).astype(np.float32)
    y = x[:, 0] * 2 - x[:, 1] ** 2 + np.sin(3 * x[:, 2])
    forest = make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=6, max_depth=5, random_state=0)).fit(x, y)
    boosted = GradientBoostingRegressor(n_estimators=8, max_depth=3, random_state=0).fit(x, y)
    test = rng.standard_normal((16, 5)).astype(np.float32)
    for estimator in (forest, boosted):
        model = skl2onnx.to_onnx(
            estimator, initial_types=[("x", FloatTensorType([16, 5]))],
            target_opset={"": 17, ML: 3},
        )
        assert any(n.op_type == "TreeEnsembleRegressor" for n in model.graph.node)
        (got,) = check_model(model, {"x": test})
        np.testing.assert_allclose(got.ravel(), estimator.predict(test), rtol=1e-4, atol=1e-4)


def test_scikit_learn_linear_models():
    """LinearRegression and LogisticRegression (binary; three classes, whose probabilities
    skl2onnx computes with a Normalizer), behind a Normalizer."""
    skl2onnx = pytest.importorskip("skl2onnx", reason="skl2onnx converts scikit-learn models to ONNX")
    from skl2onnx.common.data_types import FloatTensorType
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer

    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 4)).astype(np.float32)
    test = rng.standard_normal((16, 4)).astype(np.float32)
    convert = lambda estimator, options=None: skl2onnx.to_onnx(
        estimator, initial_types=[("x", FloatTensorType([16, 4]))], target_opset={"": 17, ML: 3}, options=options)
    regression = make_pipeline(Normalizer(), LinearRegression()).fit(x, x @ np.array([1, -2, 0.5, 3.0]))
    (got,) = check_model(convert(regression), {"x": test})
    np.testing.assert_allclose(got.ravel(), regression.predict(test), rtol=1e-4, atol=1e-5)
    for y in ((x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5), (x[:, 0] + x[:, 2] > 0).astype(int)):
        classifier = LogisticRegression().fit(x, y)
        labels, probabilities = check_model(convert(classifier, {id(classifier): {"zipmap": False}}), {"x": test})
        np.testing.assert_array_equal(labels, classifier.predict(test))
        np.testing.assert_allclose(probabilities, classifier.predict_proba(test), rtol=1e-4, atol=1e-5)


def test_scikit_learn_imputer_and_support_vector_regression():
    skl2onnx = pytest.importorskip("skl2onnx", reason="skl2onnx converts scikit-learn models to ONNX")
    from skl2onnx.common.data_types import FloatTensorType
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import SVR

    rng = np.random.default_rng(0)
    x = rng.standard_normal((100, 4)).astype(np.float32)
    y = x @ np.array([1, -2, 0.5, 3.0]) + np.sin(x[:, 0])
    test = rng.standard_normal((16, 4)).astype(np.float32)
    test[0, 1] = test[3, 2] = np.nan  # imputed with the training means
    for kernel in ("rbf", "poly"):
        estimator = make_pipeline(SimpleImputer(), SVR(kernel=kernel)).fit(x, y)
        model = skl2onnx.to_onnx(estimator, initial_types=[("x", FloatTensorType([16, 4]))], target_opset={"": 17, ML: 3})
        (got,) = check_model(model, {"x": test})
        np.testing.assert_allclose(got.ravel(), estimator.predict(test), rtol=1e-4, atol=1e-4)


def test_scikit_learn_forest_classifiers():
    """A three-class random forest and a binary gradient-boosted classifier (LOGISTIC, one base
    value), converted without ZipMap: labels and probabilities as scikit-learn predicts them."""
    skl2onnx = pytest.importorskip("skl2onnx", reason="skl2onnx converts scikit-learn models to ONNX")
    from skl2onnx.common.data_types import FloatTensorType
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 4)).astype(np.float32)
    three = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5).astype(int)
    two = (x[:, 0] + x[:, 2] > 0).astype(int)
    test = rng.standard_normal((16, 4)).astype(np.float32)
    for estimator, y in (
        (RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0), three),
        (GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0), two),
    ):
        estimator.fit(x, y)
        model = skl2onnx.to_onnx(
            estimator, initial_types=[("x", FloatTensorType([16, 4]))],
            target_opset={"": 17, ML: 3}, options={id(estimator): {"zipmap": False}},
        )
        labels, probabilities = check_model(model, {"x": test})
        np.testing.assert_array_equal(labels, estimator.predict(test))
        np.testing.assert_allclose(probabilities, estimator.predict_proba(test), rtol=1e-4, atol=1e-5)
