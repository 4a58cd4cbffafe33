"""Exact TreeSHAP (sklearn_ltr.inspection, sklearn_ltr._gbdt.treeshap)
against independent oracles.

* A brute-force reference written here: the path-dependent conditional
  expectation ``v(S)`` of every feature subset ``S``, then the Shapley
  formula. Exact by definition, exponential in the number of features, so
  used on small trees and on a few rows of the fitted models (per tree, over
  the features the tree uses: the others are dummy players).
* shap's TreeExplainer on a model dict built from our trees (shap's own C
  implementation of the same algorithm).
* LightGBM's ``predict(pred_contrib=True)`` and shap's TreeExplainer on the
  booster of ``sklearn_ltr.export.to_lightgbm``; for models with categorical
  splits also XGBoost's ``predict(pred_contribs=True)`` on the booster of
  ``to_xgboost`` (float32), the engines fed the category codes.

The rows of the fitted models (tests/_export_cases.py) reach every split with
its feature at the threshold, one float either side, NaN and +-inf, so a
kernel comparing the wrong way or sending NaN the wrong way gets different
contributions on some row; those of the categorical models reach every
categorical split with known, NaN, negative, rare and unseen codes.
"""

import functools
import math

import numba
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import sparse

from _export_cases import (COLUMNS_WITH_NAN, RANKERS, categorical_probe_rows,
                           categorical_training_data, fitted, fitted_categorical,
                           probe_rows, training_data)
from sklearn_ltr import LambdaMARTRanker, XENDCGRanker
from sklearn_ltr._gbdt.common import NODE_DTYPE, bitset_of
from sklearn_ltr._gbdt.ensemble import TreeEnsemble
from sklearn_ltr._gbdt.predictor import concatenate_trees, predict_raw
from sklearn_ltr._gbdt.treeshap import tree_shap
from sklearn_ltr.inspection import explain_pair, feature_contributions

ORACLE_TOL = 1e-8


# -- references ---------------------------------------------------------------


def goes_left(node, x, categories=None):
    """The branch of raw row ``x`` at ``node``, by the rule of the
    TreeEnsemble docstring; ``categories`` as TreeEnsemble's."""
    value = x[node["feature_idx"]]
    if node["is_categorical"]:
        known = categories[node["feature_idx"]]
        bits = np.unpackbits(node["left_categories"].view(np.uint8), bitorder="little")
        if value in known[np.flatnonzero(bits)]:
            return True
        if value in known:
            return False
        return bool(node["missing_go_to_left"])  # NaN, negative, unseen
    if np.isnan(value):
        return bool(node["missing_go_to_left"])
    return bool(value <= node["num_threshold"])


def brute_force_shap(trees, baseline, x, n_features, categories=None, feature_columns=None,
                     players=None):
    """Exact path-dependent SHAP values of one row, by enumeration.

    The players are the columns of ``x``: with ``feature_columns`` (as
    TreeEnsemble's), every split feature reading a column plays for it.
    For each tree and each subset ``S`` of the columns it splits on,
    ``v(S)`` is the expected leaf value when a split on a feature in ``S``
    sends the row down its own branch (NaN: the missing direction;
    categorical splits by the raw category values, ``categories`` as
    TreeEnsemble's) and a split on any other feature sends it down both,
    weighted by ``count(child) / count(node)``. Then
    ``phi_j = sum_S |S|! (m - |S| - 1)! / m! (v(S + j) - v(S))``.
    With ``players`` (the player of each split feature, in
    ``[0, n_features)``), ``x`` is the row as the split features read it,
    one value per split feature.
    Returns the contributions and, last, the expected value.
    """
    phi = np.zeros(n_features + 1)
    phi[-1] = baseline
    if players is not None:
        player = np.asarray(players)
    else:
        player = np.arange(n_features) if feature_columns is None else np.asarray(feature_columns)
        # The row as the split features read it: its columns, each repeated
        # for every feature that reads it.
        x = np.asarray(x)[player]
    for nodes in trees:
        splits = nodes["is_leaf"] == 0
        used = sorted(set(player[nodes["feature_idx"][splits]].tolist()))
        m = len(used)
        bit = {f: b for b, f in enumerate(used)}
        subsets = np.arange(2**m)
        # reach[k][s]: weight with which subset s reaches node k
        reach = {0: np.ones(2**m)}
        v = np.zeros(2**m)
        for k, node in enumerate(nodes):
            if node["is_leaf"]:
                v += reach[k] * node["value"]
                continue
            known = (subsets >> bit[player[node["feature_idx"]]]) & 1 == 1
            hot, cold = (
                (node["left"], node["right"]) if goes_left(node, x, categories)
                else (node["right"], node["left"])
            )
            count = float(node["count"])
            reach[hot] = reach[k] * np.where(known, 1.0, nodes[hot]["count"] / count)
            reach[cold] = reach[k] * np.where(known, 0.0, nodes[cold]["count"] / count)
        sizes = sum((subsets >> b) & 1 for b in range(m))
        # Shapley weight of a subset of size k not containing the feature.
        weight_of_size = np.array(
            [math.factorial(k) * math.factorial(m - k - 1) / math.factorial(m) for k in range(m)]
        )
        for b, f in enumerate(used):
            without = subsets[(subsets >> b) & 1 == 0]
            weight = weight_of_size[sizes[without]]
            phi[f] += np.sum(weight * (v[without | (1 << b)] - v[without]))
        phi[-1] += v[0]
    return phi


def shap_model_dict(ensemble):
    """Our trees in shap's custom model format (a dict of SingleTree dicts).

    shap's tree kernel sends a row left iff ``x <= threshold`` in float64
    (its input and internal dtypes are set to float64 here) and a missing
    value (``np.isnan``) to ``children_default``: our rule exactly, so the
    thresholds are passed unchanged. (shap's XGBoost loader moves each
    threshold one float down because XGBoost goes left iff ``x < t``; ours
    needs no such shift.) Internal nodes carry the count-weighted mean of
    their leaves, which shap reads at the root for the expected value.
    """
    trees = []
    for nodes in ensemble.trees():
        leaf = nodes["is_leaf"] != 0
        left = np.where(leaf, -1, nodes["left"]).astype(np.int32)
        right = np.where(leaf, -1, nodes["right"]).astype(np.int32)
        count = nodes["count"].astype(np.float64)
        weighted = np.where(leaf, nodes["value"], 0.0) * count
        for k in range(len(nodes) - 1, -1, -1):  # children come after parents
            if not leaf[k]:
                weighted[k] = weighted[left[k]] + weighted[right[k]]
        trees.append(
            {
                "children_left": left,
                "children_right": right,
                "children_default": np.where(nodes["missing_go_to_left"] != 0, left, right)
                .astype(np.int32),
                "features": np.where(leaf, -1, nodes["feature_idx"]).astype(np.int32),
                "thresholds": np.where(leaf, 0.0, nodes["num_threshold"]),
                "values": (weighted / count)[:, None],
                "node_sample_weight": count,
            }
        )
    return {
        "trees": trees,
        "base_offset": ensemble.baseline,
        "input_dtype": np.float64,
        "internal_dtype": np.float64,
        "tree_output": "raw_value",
    }


def shap_explainer_output(explainer, X):
    """shap's contributions with the expected value as the last column."""
    values = explainer.shap_values(X, check_additivity=False)
    expected = float(np.ravel(explainer.expected_value)[0])
    return np.hstack([values, np.full((X.shape[0], 1), expected)])


def assert_rows_sum_to(phi, target, rtol=1e-10):
    # Relative to the size of the summed terms, where rounding happens.
    scale = np.abs(phi).sum(axis=1)
    assert np.all(np.abs(phi.sum(axis=1) - target) <= rtol * np.maximum(scale, 1e-300))


def assert_oracle(theirs, ours):
    assert_allclose(theirs, ours, rtol=ORACLE_TOL, atol=ORACLE_TOL * np.abs(ours).max())


# -- small hand-built and random trees ------------------------------------------


def make_nodes(rows):
    """Nodes from tuples (value, count, feature, threshold, missing_left,
    left, right); a leaf has feature -1."""
    nodes = np.zeros(len(rows), dtype=NODE_DTYPE)
    for k, (value, count, feature, threshold, missing_left, left, right) in enumerate(rows):
        nodes[k]["value"] = value
        nodes[k]["count"] = count
        nodes[k]["feature_idx"] = feature
        nodes[k]["num_threshold"] = threshold
        nodes[k]["missing_go_to_left"] = missing_left
        nodes[k]["left"] = left
        nodes[k]["right"] = right
        nodes[k]["is_leaf"] = feature < 0
    return nodes


def two_split_tree(missing_left):
    """Root: x0 <= 0.5 (10 rows) -> leaf 1.0 (4 rows) | node 2;
    node 2: x1 <= 0.5 (6 rows) -> leaf 4.0 (2 rows) | leaf -2.0 (4 rows)."""
    return make_nodes(
        [
            (0.0, 10, 0, 0.5, missing_left, 1, 2),
            (1.0, 4, -1, 0.0, 0, -1, -1),
            (0.0, 6, 1, 0.5, 0, 3, 4),
            (4.0, 2, -1, 0.0, 0, -1, -1),
            (-2.0, 4, -1, 0.0, 0, -1, -1),
        ]
    )


@pytest.mark.parametrize(
    "x, missing_left, expected",
    [
        # E[f] = 0.4 * 1 + 0.6 * (2/6 * 4 + 4/6 * -2) = 0.4, f(x) = 4.
        # v({}) = 0.4, v({0}) = 0, v({1}) = 0.4 * 1 + 0.6 * 4 = 2.8, v({0, 1}) = 4:
        # phi_0 = ((0 - 0.4) + (4 - 2.8)) / 2 = 0.4, phi_1 = ((2.8 - 0.4) + (4 - 0)) / 2 = 3.2.
        ([1.0, 0.0, 7.0], 0, [0.4, 3.2, 0.0, 0.4]),
        # NaN in x0 goes right as x0 = 1 does: the same values.
        ([np.nan, 0.0, 7.0], 0, [0.4, 3.2, 0.0, 0.4]),
        # NaN in x0 goes left: f(x) = 1, v({0}) = 1, v({0, 1}) = 1:
        # phi_0 = ((1 - 0.4) + (1 - 2.8)) / 2 = -0.6, phi_1 = ((2.8 - 0.4) + 0) / 2 = 1.2.
        ([np.nan, 0.0, 7.0], 1, [-0.6, 1.2, 0.0, 0.4]),
        # x0 exactly at the threshold goes left (x <= t).
        ([0.5, 0.0, 7.0], 0, [-0.6, 1.2, 0.0, 0.4]),
    ],
)
def test_hand_computed_two_split_tree(x, missing_left, expected):
    nodes = two_split_tree(missing_left)
    X = np.array([x])
    phi = tree_shap(nodes, np.array([0]), 0.0, X)
    assert_allclose(phi[0], expected, rtol=0, atol=1e-14)
    assert_allclose(brute_force_shap([nodes], 0.0, X[0], 3), expected, rtol=0, atol=1e-14)


def random_tree(rng, n_features, max_depth, thresholds):
    """A random tree in preorder (children after parents), with counts that
    add up (a split's count is its children's), some empty leaves, features
    repeated along paths, and random missing directions."""
    rows = []

    def grow(depth, count):
        k = len(rows)
        rows.append(None)
        if count == 0 or depth == max_depth or rng.random() < 0.2:
            rows[k] = (rng.normal(), count, -1, 0.0, 0, -1, -1)
            return k
        n_left = int(rng.integers(0, count + 1))
        left = grow(depth + 1, n_left)
        right = grow(depth + 1, count - n_left)
        feature = int(rng.integers(n_features))
        rows[k] = (0.0, count, feature, float(rng.choice(thresholds)), int(rng.integers(2)),
                   left, right)
        return k

    grow(0, int(rng.integers(1, 60)))
    return make_nodes(rows)


def random_rows(rng, n_rows, n_features, thresholds):
    values = np.concatenate([thresholds, thresholds + 0.25, [np.nan, np.inf, -np.inf]])
    return rng.choice(values, size=(n_rows, n_features))


@pytest.mark.parametrize("seed", range(12))
def test_random_small_ensembles_equal_brute_force(seed):
    rng = np.random.default_rng(seed)
    n_features = 4
    thresholds = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    trees = [random_tree(rng, n_features, int(rng.integers(0, 6)), thresholds)
             for _ in range(int(rng.integers(1, 5)))]
    nodes, tree_starts = concatenate_trees(trees)
    baseline = rng.normal()
    X = random_rows(rng, 25, n_features, thresholds)
    phi = tree_shap(nodes, tree_starts, baseline, X)
    reference = np.array([brute_force_shap(trees, baseline, x, n_features) for x in X])
    assert_allclose(phi, reference, rtol=1e-12, atol=1e-12)
    assert_rows_sum_to(phi, predict_raw(nodes, tree_starts, X, init=baseline))


# -- categorical splits ---------------------------------------------------------

CATEGORIES = np.array([2.0, 5.0, 7.0, 11.0, 13.0])  # those of feature 0


def categorical_tree(nodes, rng):
    """``nodes`` with every split on feature 0 made categorical: a random set
    of CATEGORIES goes left (none at all: only the missing side), NaN
    threshold."""
    for k in np.flatnonzero((nodes["is_leaf"] == 0) & (nodes["feature_idx"] == 0)):
        nodes[k]["is_categorical"] = 1
        nodes[k]["num_threshold"] = np.nan
        nodes[k]["left_categories"] = bitset_of(
            np.flatnonzero(rng.random(CATEGORIES.shape[0]) < 0.5))
    return nodes


@pytest.mark.parametrize("x0, missing_left, expected", [
    # The hand-computed cases of the numeric tree above, the root now
    # sending category 5 left and 2, 7, 11, 13 right.
    (7.0, 0, [0.4, 3.2, 0.0, 0.4]),
    (5.0, 0, [-0.6, 1.2, 0.0, 0.4]),
    # NaN, an unseen category and a negative value take the missing side.
    (np.nan, 0, [0.4, 3.2, 0.0, 0.4]),
    (3.0, 0, [0.4, 3.2, 0.0, 0.4]),
    (3.0, 1, [-0.6, 1.2, 0.0, 0.4]),
    (-1.0, 1, [-0.6, 1.2, 0.0, 0.4]),
])
def test_hand_computed_categorical_split(x0, missing_left, expected):
    nodes = two_split_tree(missing_left)
    nodes[0]["is_categorical"] = 1
    nodes[0]["num_threshold"] = np.nan
    nodes[0]["left_categories"] = bitset_of([1])  # CATEGORIES[1] == 5
    ensemble = TreeEnsemble(nodes, np.array([0]), 0.0, 3, categories=(CATEGORIES, None, None))
    X = np.array([[x0, 0.0, 7.0]])
    phi = tree_shap(nodes, np.array([0]), 0.0, ensemble.encode(X))
    assert_allclose(phi[0], expected, rtol=0, atol=1e-14)
    assert_allclose(brute_force_shap([nodes], 0.0, X[0], 3, ensemble.categories), expected,
                    rtol=0, atol=1e-14)


@pytest.mark.parametrize("seed", range(12))
def test_random_ensembles_with_categorical_splits_equal_brute_force(seed):
    rng = np.random.default_rng(100 + seed)
    n_features = 3
    thresholds = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    trees = []
    while not any(tree["is_categorical"].any() for tree in trees):  # some leaf-only draws
        trees = [categorical_tree(random_tree(rng, n_features, int(rng.integers(2, 6)),
                                              thresholds), rng)
                 for _ in range(int(rng.integers(2, 5)))]
    nodes, tree_starts = concatenate_trees(trees)
    baseline = rng.normal()
    ensemble = TreeEnsemble(nodes, tree_starts, baseline, n_features,
                            categories=(CATEGORIES, None, None))
    X = random_rows(rng, 25, n_features, thresholds)
    X[:, 0] = rng.choice(np.r_[CATEGORIES, 3.0, -1.0, np.nan, 2.0**40], size=25)
    phi = tree_shap(nodes, tree_starts, baseline, ensemble.encode(X))
    reference = np.array([brute_force_shap(trees, baseline, x, n_features, ensemble.categories)
                          for x in X])
    assert_allclose(phi, reference, rtol=1e-12, atol=1e-12)
    assert_rows_sum_to(phi, ensemble.predict(X))


@functools.lru_cache(maxsize=None)
def categorical_model(kind):
    """A ranker fitted on training_data() plus a column of category codes
    (0..29, NaN missing; max_bins=20 makes it a wide column, split on through
    two features of 20 and 10 categories) and, for
    kind "frame", a pandas category column of strings; and test rows with
    unseen, negative and missing categories."""
    pd = pytest.importorskip("pandas")
    X, y, qid = training_data()
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 30, size=y.shape[0]).astype(np.float64)
    codes[rng.random(y.shape[0]) < 0.1] = np.nan
    brand = np.array([f"b{b}" for b in rng.integers(0, 8, size=y.shape[0])], dtype=object)
    y = y + (codes % 3 == 0) + (np.char.endswith(brand.astype(str), "1"))
    X = np.column_stack([X, codes])
    rows = X[:300].copy()
    rows[:40, -1] = rng.choice([99.0, -1.0, np.nan, 2.5], size=40)
    params = dict(n_estimators=20, max_bins=20, early_stopping=False, random_state=0)
    if kind == "codes":
        model = LambdaMARTRanker(categorical_features=[12], **params).fit(X, y, qid=qid)
        return model, rows
    columns = [f"f{i}" for i in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=columns).assign(brand=pd.Categorical(brand))
    rows_brand = brand[:300].copy()
    rows_brand[40:80] = rng.choice(["zz", None], size=40)
    rows_frame = pd.DataFrame(rows, columns=columns).assign(brand=pd.Categorical(rows_brand))
    model = XENDCGRanker(categorical_features=["f12", "brand"], **params).fit(frame, y, qid=qid)
    return model, rows_frame


@pytest.mark.parametrize("kind", ["codes", "frame"])
def test_categorical_models_sum_to_predict_and_equal_brute_force(kind):
    model, rows = categorical_model(kind)
    ensemble = model._tree_ensemble()
    assert (ensemble.nodes["is_categorical"] != 0).sum() > 10
    phi = feature_contributions(model, rows)
    assert_rows_sum_to(phi, model.predict(rows))
    # The brute force reads the rows as the model's trees do: pandas
    # categories as their positions, then by the raw category values.
    validated = model._validate_X(rows)
    picks = np.r_[0:12, 40:46, 100:106]  # unseen, negative, NaN, fractional, new strings
    reference = np.array([
        brute_force_shap(list(ensemble.trees()), ensemble.baseline, x, ensemble.n_features,
                         ensemble.categories, ensemble.feature_columns)
        for x in validated[picks]])
    assert_allclose(phi[picks], reference, rtol=1e-10, atol=1e-10 * np.abs(reference).max())
    why = explain_pair(model, rows.iloc[:5] if kind == "frame" else rows[:5],
                       rows.iloc[40:45] if kind == "frame" else rows[40:45])
    assert_allclose(why, phi[:5] - phi[40:45], atol=1e-15)
    assert_array_equal(why[:, -1], 0.0)


def test_a_leaf_only_tree_and_empty_input():
    nodes = make_nodes([(2.5, 7, -1, 0.0, 0, -1, -1)])
    phi = tree_shap(nodes, np.array([0]), 1.0, np.array([[np.nan, 3.0]]))
    assert_array_equal(phi, [[0.0, 0.0, 3.5]])
    assert tree_shap(nodes, np.array([0]), 1.0, np.zeros((0, 2))).shape == (0, 3)


def test_out_argument_is_filled_and_checked():
    nodes = two_split_tree(0)
    X = np.array([[1.0, 0.0, 7.0]])
    out = np.full((1, 4), 99.0)
    assert tree_shap(nodes, np.array([0]), 0.0, X, out=out) is out
    assert_allclose(out[0], [0.4, 3.2, 0.0, 0.4], atol=1e-14)
    with pytest.raises(ValueError, match="out must be"):
        tree_shap(nodes, np.array([0]), 0.0, X, out=np.zeros((1, 3)))


# -- the fitted rankers -----------------------------------------------------


@pytest.mark.parametrize("name", RANKERS)
def test_rows_sum_to_predict(name):
    model = fitted(name)
    X = probe_rows(name)
    phi = feature_contributions(model, X)
    assert phi.shape == (X.shape[0], X.shape[1] + 1)
    assert_rows_sum_to(phi, model.predict(X))
    # The expected value: baseline plus each tree's count-weighted mean leaf.
    ensemble = model._tree_ensemble()
    expected = ensemble.baseline
    for nodes in ensemble.trees():
        leaves = nodes[nodes["is_leaf"] != 0]
        expected += np.sum(leaves["value"] * leaves["count"]) / nodes[0]["count"]
    assert_allclose(phi[:, -1], expected, rtol=1e-12)


@pytest.mark.parametrize("name", RANKERS)
def test_equal_to_brute_force_on_rows_with_nan_and_thresholds(name):
    model = fitted(name)
    ensemble = model._tree_ensemble()
    X = probe_rows(name)
    rng = np.random.default_rng(0)
    # Some rows with NaN in each column that has missing values in training,
    # and some at a threshold (the first block of the probe rows).
    nan_rows = [rng.choice(np.flatnonzero(np.isnan(X[:, c])), 4, replace=False)
                for c in COLUMNS_WITH_NAN]
    rows = np.concatenate(nan_rows + [np.arange(8)])
    phi = feature_contributions(model, X[rows])
    reference = np.array(
        [brute_force_shap(list(ensemble.trees()), ensemble.baseline, x, ensemble.n_features)
         for x in X[rows]]
    )
    assert_allclose(phi, reference, rtol=1e-10, atol=1e-10 * np.abs(reference).max())


@pytest.mark.parametrize("name", RANKERS)
def test_equal_to_shap_on_our_trees(name):
    shap = pytest.importorskip("shap")
    model = fitted(name)
    X = probe_rows(name)
    explainer = shap.TreeExplainer(shap_model_dict(model._tree_ensemble()))
    assert_oracle(shap_explainer_output(explainer, X), feature_contributions(model, X))


@pytest.mark.parametrize("name", RANKERS)
def test_equal_to_lightgbm_pred_contrib_and_shap_on_the_exported_booster(name):
    pytest.importorskip("lightgbm")
    shap = pytest.importorskip("shap")
    from sklearn_ltr.export import to_lightgbm

    model = fitted(name)
    X = probe_rows(name)
    ours = feature_contributions(model, X)
    booster = to_lightgbm(model)
    assert_oracle(booster.predict(X, pred_contrib=True), ours)
    assert_oracle(shap_explainer_output(shap.TreeExplainer(booster), X), ours)


def category_kinds(X, f, ensemble):
    """Masks of the rows of X whose categorical feature f is NaN, negative,
    a training category too rare to be kept, or a code never seen in fit."""
    X_train, _, _ = categorical_training_data()
    seen = np.unique(X_train[:, f][X_train[:, f] >= 0])
    value = X[:, f]
    known = np.isin(value, ensemble.column_categories(f))
    return {"nan": np.isnan(value), "negative": value < 0,
            "rare": np.isin(value, seen) & ~known,
            "unseen": (value >= 0) & ~np.isin(value, seen)}


@pytest.mark.parametrize("name", RANKERS)
def test_categorical_models_equal_lightgbm_pred_contrib_and_shap_on_the_exported_booster(name):
    """Rankers fitted on category codes with max_bins=16 (so column 1 is a
    wide column of two blocks, and its categories seen once are merged with
    missing values), explained on rows that reach every
    categorical split with NaN, negative, rare, unseen and known codes; the
    exported booster is fed the same codes. (shap's TreeExplainer on a
    LightGBM booster returns LightGBM's pred_contrib: checked as the call
    users make, not as a second implementation.)"""
    pytest.importorskip("lightgbm")
    shap = pytest.importorskip("shap")
    from sklearn_ltr.export import to_lightgbm

    model = fitted_categorical(name)
    ensemble = model._tree_ensemble()
    X = categorical_probe_rows(name=name)
    ours = feature_contributions(model, X)
    booster = to_lightgbm(model)
    theirs = booster.predict(X, pred_contrib=True)
    assert_oracle(theirs, ours)
    assert_oracle(shap_explainer_output(shap.TreeExplainer(booster), X[::10]), ours[::10])
    # Each kind of code the missing side takes is explained, and moves the
    # score through its feature on some row (column 5 has no rare codes).
    split_on = ensemble.nodes[ensemble.splits & (ensemble.nodes["is_categorical"] != 0)]
    moved = {kind: False for kind in ("nan", "negative", "rare", "unseen")}
    for f in np.unique(split_on["feature_idx"]):
        for kind, rows in category_kinds(X, f, ensemble).items():
            moved[kind] |= bool((theirs[rows, f] != 0).any())
    assert all(moved.values()), moved


@pytest.mark.parametrize("name", RANKERS)
def test_categorical_models_equal_xgboost_pred_contribs_on_the_exported_booster(name):
    """XGBoost's own TreeSHAP (its cover is our row count, as LightGBM's),
    on float32 rows, in float32 arithmetic: equal to 1e-5 of the largest
    contribution."""
    xgboost = pytest.importorskip("xgboost")
    from sklearn_ltr.export import to_xgboost

    model = fitted_categorical(name)
    X = categorical_probe_rows(float32=True, name=name)
    X = X[~np.isinf(X).any(axis=1)]  # XGBoost refuses infinite values
    ours = feature_contributions(model, X)
    theirs = to_xgboost(model).predict(xgboost.DMatrix(X.astype(np.float32)),
                                       pred_contribs=True)
    assert_allclose(theirs, ours, rtol=0, atol=1e-5 * np.abs(ours).max())


def test_a_pandas_category_model_equals_lightgbm_pred_contrib_on_its_codes():
    """The XENDCGRanker of categorical_model("frame"): the booster is fed the
    documented codes, each brand's position among the categories of fit (-1
    for a string not seen in fit, or None) and the code column with a
    fractional value as NaN (a non-integer is a missing value to the
    ranker; LightGBM would read its integer part)."""
    pytest.importorskip("lightgbm")
    from sklearn_ltr.export import to_lightgbm

    model, rows = categorical_model("frame")
    brand = rows["brand"].cat.set_categories([f"b{b}" for b in range(8)]).cat.codes
    codes = rows.assign(brand=brand).to_numpy(np.float64)
    codes[:, 12] = np.where(codes[:, 12] % 1 == 0, codes[:, 12], np.nan)
    assert (rows["f12"] % 1 != 0).any() and (brand == -1).sum() > 10
    assert_oracle(to_lightgbm(model).predict(codes, pred_contrib=True),
                  feature_contributions(model, rows))


def test_nan_contribution_follows_the_missing_direction():
    # The same fitted trees with every missing direction flipped: rows
    # without NaN keep their contributions, rows with NaN change, and both
    # match the brute force, which routes NaN by the flipped directions.
    name = "LambdaMARTRanker"
    ensemble = fitted(name)._tree_ensemble()
    X = probe_rows(name)
    has_nan = np.isnan(X).any(axis=1)
    nodes = ensemble.nodes.copy()
    nodes["missing_go_to_left"] = 1 - nodes["missing_go_to_left"]
    phi = tree_shap(ensemble.nodes, ensemble.tree_starts, ensemble.baseline, X)
    flipped = tree_shap(nodes, ensemble.tree_starts, ensemble.baseline, X)
    assert_array_equal(flipped[~has_nan], phi[~has_nan])
    assert np.abs(flipped[has_nan] - phi[has_nan]).max() > 1e-3
    trees = [nodes[start:stop] for start, stop in zip(ensemble.tree_starts, ensemble.tree_stops)]
    row = np.flatnonzero(has_nan)[0]
    reference = brute_force_shap(trees, ensemble.baseline, X[row], ensemble.n_features)
    assert_allclose(flipped[row], reference, rtol=1e-10, atol=1e-12)
    assert_rows_sum_to(flipped, predict_raw(nodes, ensemble.tree_starts, X,
                                            init=ensemble.baseline))


def test_centred_per_query():
    model = fitted("XENDCGRanker")
    X = probe_rows("XENDCGRanker")[:300]
    rng = np.random.default_rng(3)
    qid = rng.choice(["b", "a", "c", "d"], size=X.shape[0])  # unsorted, interleaved
    centred = feature_contributions(model, X, qid=qid)
    raw = feature_contributions(model, X)
    scores = model.predict(X)
    for q in np.unique(qid):
        rows = qid == q
        assert_allclose(centred[rows].sum(axis=0), 0.0, atol=1e-10)
        assert_allclose(centred[rows], raw[rows] - raw[rows].mean(axis=0), atol=1e-12)
        assert_rows_sum_to(centred[rows], scores[rows] - scores[rows].mean(), rtol=1e-9)
    assert np.all(centred[:, -1] == 0.0)  # exactly, as documented


def test_a_dataframe_qid_column_is_the_query_ids():
    pd = pytest.importorskip("pandas")
    model = fitted("LambdaMARTRanker")
    X = probe_rows("LambdaMARTRanker")[:50]
    qid = np.repeat([3, 1], 25)
    frame = pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])])
    with_column = frame.assign(qid=qid)
    # The model was fitted without names, so validation warns about them.
    with pytest.warns(UserWarning):
        got = feature_contributions(model, with_column)
    assert_allclose(got, feature_contributions(model, X, qid=qid), rtol=0, atol=0)


def test_sparse_and_float32_inputs_match_dense():
    model = fitted("ListNetRanker")
    X = probe_rows("ListNetRanker")[:200]
    X = np.where(np.isnan(X), 0.0, X)
    X[:, 5] = 0.0
    assert_array_equal(feature_contributions(model, sparse.csr_matrix(X)),
                       feature_contributions(model, X))
    X32 = X.astype(np.float32)
    X32[~np.isfinite(X32)] = 0.0
    assert_array_equal(feature_contributions(model, X32),
                       feature_contributions(model, X32.astype(np.float64)))


def test_explain_pair_sums_to_the_score_difference():
    model = fitted("CalibratedRanker")
    X = probe_rows("CalibratedRanker")
    a, b = X[:40], X[-40:]
    why = explain_pair(model, a, b)
    assert why.shape == (40, X.shape[1] + 1)
    assert_array_equal(why[:, -1], 0.0)
    difference = model.predict(a) - model.predict(b)
    assert_rows_sum_to(why, difference)
    assert_allclose(why, feature_contributions(model, a) - feature_contributions(model, b),
                    atol=1e-15)
    one = explain_pair(model, a[0], b[0])
    assert one.shape == (X.shape[1] + 1,)
    assert_array_equal(one, why[0])
    # One row against many.
    assert_array_equal(explain_pair(model, a[0], b[:3]), explain_pair(model, a[[0, 0, 0]], b[:3]))
    with pytest.raises(ValueError, match="rows"):
        explain_pair(model, a[:3], b[:2])


def test_same_result_with_one_and_two_threads():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip(reason="numba has a single thread")
    model = fitted("LambdaMARTRanker")
    X = probe_rows("LambdaMARTRanker")
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = feature_contributions(model, X)
        numba.set_num_threads(2)
        two = feature_contributions(model, X)
    finally:
        numba.set_num_threads(before)
    assert_array_equal(one, two)


def test_bad_input_is_refused():
    from sklearn.exceptions import NotFittedError
    from sklearn.linear_model import LinearRegression

    from sklearn_ltr import LambdaMARTRanker

    X, y, _ = training_data()
    with pytest.raises(TypeError, match="feature_contributions takes a fitted"):
        feature_contributions(LinearRegression().fit(np.ones((3, 12)), [0, 1, 2]), X)
    with pytest.raises(NotFittedError):
        feature_contributions(LambdaMARTRanker(), X)
    model = fitted("LambdaMARTRanker")
    with pytest.raises(ValueError, match="features"):
        feature_contributions(model, X[:, :5])
    with pytest.raises(ValueError, match="qid"):
        feature_contributions(model, X[:10], qid=np.zeros(9))
    with pytest.raises(TypeError, match="explain_pair takes a fitted"):
        explain_pair(object(), X[0], X[1])
