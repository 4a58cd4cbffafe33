"""Monotonic and interaction constraints (``monotonic_cst``, ``interaction_cst``).

Oracles: scikit-learn's HistGradientBoosting, whose semantics these are
(its TreeGrower grows the reference tree from the same binned rows,
gradients and hessians; its estimators refuse the same bad values); a
brute-force split search in plain Python; trees computed by hand; and the
properties themselves, each shown to fail without the constraint: scores
monotonic along a grid of a constrained feature, root-to-leaf paths inside
one interaction group.
"""

import io
import json
import zipfile

import numba
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.ensemble._hist_gradient_boosting.grower import TreeGrower as HGBTreeGrower

from conftest import RANKERS as RANKER_CLASSES
from conftest import fit_labels

from sklearn_ltr import LambdaMARTRanker, load_model
from sklearn_ltr._gbdt.constraints import check_interaction_cst
from sklearn_ltr._gbdt.histogram import _build_histogram, allocate_histograms
from sklearn_ltr._gbdt.predictor import _predict_binned
from sklearn_ltr._gbdt.splitting import find_best_splits

from _engine_helpers import grow_tree

# The engine's kernels index work space by numba's thread id, which needs
# numba's thread pool started (the estimators start it in fit).
numba.get_num_threads()

MISSING = 255

# Every ranker, plus LambdaMART with a lambda schedule and gradient leaf
# values: another objective (lambdarank_multi) and leaves that are mean
# lambdas rather than Newton steps, which the constraints must bound too.
RANKERS = {cls.__name__: cls() for cls in RANKER_CLASSES}
RANKERS["LambdaMARTRanker-multi"] = LambdaMARTRanker(lambda_schedule="linear",
                                                     leaf_estimation="gradient")
FIT = dict(n_estimators=30, max_leaf_nodes=15, min_samples_leaf=5, early_stopping=False,
           random_state=0)


def _ranking_data(seed=0, n_queries=40, docs=30):
    """Four features in [0, 1]; relevance rises and falls with features 0
    and 1 (a full sine period each) and depends on products of 0, 1 and of
    2, 3, so an unconstrained model is not monotonic in 0 and 1 and mixes
    the features on its paths."""
    rng = np.random.default_rng(seed)
    n = n_queries * docs
    X = rng.random((n, 4))
    score = (np.sin(2 * np.pi * X[:, 0]) - np.sin(2 * np.pi * X[:, 1])
             + 2 * X[:, 0] * X[:, 1] + 2 * X[:, 2] * X[:, 3] + 0.3 * rng.standard_normal(n))
    qid = np.repeat(np.arange(n_queries), docs)
    y = np.digitize(score, np.quantile(score, [0.5, 0.75, 0.9, 0.97])).astype(float)
    return X, y, qid


def _grid_scores(model, X, feature, n_rows=40, n_grid=61, seed=1):
    """Scores of ``n_rows`` random rows with ``feature`` set to each of
    ``n_grid`` values spanning (and passing) its range, shape (rows, grid)."""
    rows = X[np.random.default_rng(seed).choice(len(X), n_rows, replace=False)]
    grid = np.linspace(X[:, feature].min() - 0.1, X[:, feature].max() + 0.1, n_grid)
    batch = np.repeat(rows, n_grid, axis=0)
    batch[:, feature] = np.tile(grid, n_rows)
    return model.predict(batch).reshape(n_rows, n_grid)


def _paths_features(model):
    """The set of split features of every root-to-leaf path of every tree."""
    paths = []
    for tree in model._tree_ensemble().trees():
        stack = [(0, frozenset())]
        while stack:
            k, used = stack.pop()
            if tree["is_leaf"][k]:
                paths.append(used)
                continue
            used = used | {int(tree["feature_idx"][k])}
            stack.extend([(tree["left"][k], used), (tree["right"][k], used)])
    return paths


# -- the split search: bounded scan against brute force --------------------------


def _brute_force_bounded(X, g, h, n_bins_nm, mask, cst, lower, upper, value, msl, l2):
    """Every (feature, threshold, missing direction) with HistGradientBoosting's
    bounded values and value-based gain."""
    g = g.astype(np.float64)
    h = h.astype(np.float64)
    G, H = g.sum(), h.sum()

    def node_value(gs, hs):
        return min(max(-gs / (hs + l2), lower), upper)

    best = None
    for f in np.flatnonzero(mask):
        col = X[:, f]
        missing = col == MISSING
        for b in range(int(n_bins_nm[f])):
            for mleft in ([False, True] if missing.any() else [False]):
                left = ((col <= b) & ~missing) | (missing & mleft)
                if min(left.sum(), (~left).sum()) < msl:
                    continue
                gl, hl = g[left].sum(), h[left].sum()
                vl, vr = node_value(gl, hl), node_value(G - gl, H - hl)
                if (cst[f] == 1 and vl > vr) or (cst[f] == -1 and vl < vr):
                    continue
                gain = G * value - gl * vl - (G - gl) * vr
                if gain > 0 and (best is None or gain > best[0]):
                    best = (gain, f, b, mleft)
    return best


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("features", [[0, 1, 2, 3], [0], [1], [2]])
def test_bounded_split_search_equals_brute_force(seed, features):
    rng = np.random.default_rng(seed)
    n, n_features, n_bins = 300, 4, 9
    n_bins_nm = np.full(n_features, n_bins, dtype=np.uint32)
    X = rng.integers(0, n_bins, (n, n_features)).astype(np.uint8)
    X[rng.random(n) < 0.15, 1] = MISSING
    X = np.asfortranarray(X)
    # Newton values fall with feature 0 (constrained to rise) and rise with
    # feature 1 (constrained to fall): their best free splits are refused.
    g = (rng.standard_normal(n) + 0.3 * X[:, 0] - 0.3 * np.minimum(X[:, 1], 8)
         + np.sin(X[:, 2])).astype(np.float32)
    h = rng.uniform(0.3, 1.5, n).astype(np.float32)
    cst = np.array([1, -1, 0, 1], dtype=np.int8)
    G, H = float(g.astype(np.float64).sum()), float(h.astype(np.float64).sum())
    l2 = 0.5
    # Bounds that bind for some thresholds: around the node's Newton step.
    newton = -G / (H + l2)
    lower, upper = newton - 0.05, newton + 0.1 + 0.05 * seed
    value = min(max(newton, lower), upper)
    hist = allocate_histograms(1, n_features, MISSING + 1)[0]
    _build_histogram(X, np.arange(n, dtype=np.int32), g, h, np.ones(n_features, np.uint8), hist)
    mask = np.zeros(n_features, np.uint8)
    mask[features] = 1
    got = find_best_splits([(hist, None, G, H, n)], n_bins_nm, MISSING, mask, 5, 0.0, 0.0, l2,
                           monotonic_cst=cst, node_bounds=np.array([[lower, upper, value]]))[0]
    expected = _brute_force_bounded(X, g, h, n_bins_nm, mask, cst, lower, upper, value, 5, l2)
    if expected is None:
        assert got[1] == -1
    else:
        assert got[:3] == (pytest.approx(expected[0], rel=1e-9), expected[1], expected[2])
        if expected[1] == 1:  # the feature with missing values: a learned direction
            assert got[3] == expected[3]
    # The unbounded search would split elsewhere or with another gain: the
    # bounds matter in this case.
    plain = find_best_splits([(hist, None, G, H, n)], n_bins_nm, MISSING, mask, 5, 0.0, 0.0,
                             l2)[0]
    assert plain[1] >= 0
    assert plain[:3] != got[:3] or plain[0] != pytest.approx(got[0], rel=1e-9)


# -- the grower against HistGradientBoosting's ---------------------------------------


def _binned_problem(seed, missing):
    rng = np.random.default_rng(seed)
    n, n_features, n_bins = 400, 4, 12
    X = rng.integers(0, n_bins, (n, n_features)).astype(np.uint8)
    g = (rng.standard_normal(n) + np.sin(X[:, 0]) - np.cos(X[:, 1])
         + 0.3 * X[:, 2] * (X[:, 3] > 5)).astype(np.float32)
    if missing:
        X[:, 1:][rng.random((n, n_features - 1)) < 0.1] = MISSING
    h = rng.uniform(0.5, 1.5, n).astype(np.float32)
    return np.asfortranarray(X), g, h, np.full(n_features, n_bins, np.uint32)


def _predict_ours(tree, X):
    out = np.zeros(X.shape[0])
    _predict_binned(tree.nodes, np.zeros(1, np.int64), X, out, MISSING)
    return out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("monotonic_cst, interaction_cst", [
    ([1, -1, 0, 0], None),
    ([1, 1, 1, -1], None),
    (None, [[0, 1], [2, 3]]),
    (None, [[0, 2]]),
    ([1, 0, -1, 0], [[0, 2], [1, 3], [0, 3]]),
    ([0, 0, 1, 0], "no_interactions"),
    (None, "pairwise"),
])
def test_grower_grows_histgradientboostings_tree(seed, missing, monotonic_cst, interaction_cst):
    X, g, h, n_bins_nm = _binned_problem(seed, missing)
    has_missing = (X == MISSING).any(axis=0)
    groups = check_interaction_cst(interaction_cst, X.shape[1])
    params = dict(max_leaf_nodes=16, min_samples_leaf=5, l2_regularization=0.5 * (seed % 2))
    ours = grow_tree(X, g, h, n_bins_nm, MISSING, monotonic_cst=monotonic_cst,
                     interaction_cst=groups, **params)
    reference = HGBTreeGrower(
        X, g, h, n_bins=MISSING + 1, n_bins_non_missing=n_bins_nm, has_missing_values=has_missing,
        monotonic_cst=monotonic_cst,
        interaction_cst=None if groups is None else [set(group) for group in groups], **params)
    reference.grow()
    thresholds = [np.arange(b - 1, dtype=float) for b in n_bins_nm]
    expected = reference.make_predictor(thresholds).predict_binned(X, MISSING, 1)
    # HistGradientBoosting adds 1e-15 to the leaf denominators; nothing else differs.
    np.testing.assert_allclose(_predict_ours(ours, X), expected, rtol=0, atol=1e-12)
    # The constraints bind: the unconstrained tree is another tree.
    free = grow_tree(X, g, h, n_bins_nm, MISSING, **params)
    assert not np.allclose(_predict_ours(free, X), expected, rtol=0, atol=1e-6)


# -- trees by hand -------------------------------------------------------------------


def _one_feature_problem():
    # Bins 0, 1, 2 with two rows each and gradient sums -4, 6, -10 (hessians
    # 1): Newton values 2, -3, 5, which go down then up.
    X = np.asfortranarray(np.repeat([0, 1, 2], 2).astype(np.uint8)[:, None])
    g = np.repeat([-2.0, 3.0, -5.0], 2).astype(np.float32)
    h = np.ones(6, dtype=np.float32)
    return X, g, h


def _leaf_values(tree):
    return sorted(tree.nodes["value"][tree.nodes["is_leaf"] == 1].tolist())


@pytest.mark.parametrize("cst, leaves", [
    # Free: all three bins apart.
    (0, [-3.0, 2.0, 5.0]),
    # Increasing: the root's best split, bins {0, 1} | {2} (values -0.5 <= 5,
    # gain 4 / 4 + 100 / 2 - 64 / 6), is allowed; splitting {0, 1} into
    # 2 and -3 would decrease, so it is refused.
    (1, [-0.5, 5.0]),
    # Decreasing: {0, 1} | {2} increases and is refused; {0} | {1, 2}
    # (values 2 >= 1) is made; splitting {1, 2} into -3 and 5 would increase.
    (-1, [1.0, 2.0]),
])
def test_a_split_against_the_constraint_is_refused(cst, leaves):
    X, g, h = _one_feature_problem()
    tree = grow_tree(X, g, h, np.array([3], np.uint32), MISSING,
                     min_samples_leaf=1, min_hessian_to_split=0.0, monotonic_cst=[cst])
    assert _leaf_values(tree) == leaves


def test_a_child_value_is_clipped_at_the_mid_point_and_the_gain_uses_it():
    # Feature 0 increasing, feature 1 free. Rows (f0, f1, g): four rows
    # f0=0 with g=0; f0=1, f1=0: two rows g=-1; f0=1, f1=1: two rows g=-5.
    # Root: sum g = -12, h = 8, value 1.5. Split on f0 (gain 0 + 144/4 - 144/8
    # = 18, more than f1's 4/4 + 100/4 - 18 = 8): children 0 and 3, mid 1.5.
    # The right child may not go below 1.5: splitting it on f1 gives values
    # 1 -> clipped to 1.5, and 5. Its gain from the clipped values is
    # G * v - G_L * v_L - G_R * v_R = -12 * 3 + 2 * 1.5 + 10 * 5 = 17 (16
    # unclipped). The left child (all g = 0) has no split with a positive gain.
    X = np.asfortranarray(np.array(
        [[0, 0], [0, 0], [0, 1], [0, 1], [1, 0], [1, 0], [1, 1], [1, 1]], dtype=np.uint8))
    g = np.array([0, 0, 0, 0, -1, -1, -5, -5], dtype=np.float32)
    h = np.ones(8, dtype=np.float32)
    tree = grow_tree(X, g, h, np.array([2, 2], np.uint32), MISSING,
                     min_samples_leaf=1, min_hessian_to_split=0.0, monotonic_cst=[1, 0],
                     shrinkage=0.1)
    nodes = tree.nodes
    splits = nodes[nodes["is_leaf"] == 0]
    assert splits["feature_idx"].tolist() == [0, 1]
    assert splits["gain"].tolist() == [18.0, 17.0]
    # Leaf values are clipped first, then shrunk.
    assert _leaf_values(tree) == pytest.approx([0.0, 0.15, 0.5], rel=1e-12)
    free = grow_tree(X, g, h, np.array([2, 2], np.uint32), MISSING,
                     min_samples_leaf=1, min_hessian_to_split=0.0, shrinkage=0.1)
    assert _leaf_values(free) == pytest.approx([0.0, 0.1, 0.5], rel=1e-12)


# -- every ranker: monotonic scores -----------------------------------------------


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_scores_are_monotonic_in_constrained_features(name):
    X, y, qid = _ranking_data()
    y = fit_labels(type(RANKERS[name]), y)
    free = clone(RANKERS[name]).set_params(**FIT).fit(X, y, qid=qid)
    constrained = clone(RANKERS[name]).set_params(**FIT, monotonic_cst=[1, -1, 0, 0])
    constrained.fit(X, y, qid=qid)
    for feature, sign in ((0, 1), (1, -1)):
        steps = sign * np.diff(_grid_scores(constrained, X, feature), axis=1)
        assert steps.min() >= 0, (feature, steps.min())
        # Without the constraint the same rows go the other way somewhere.
        assert (sign * np.diff(_grid_scores(free, X, feature), axis=1)).min() < 0
    # The unconstrained features are still used.
    used = set(constrained._booster.trees[0]["feature_idx"].tolist()) - {-1}
    assert used & {2, 3}


def test_monotonic_cst_by_name_or_index_in_a_dict_is_the_same_model():
    X, y, qid = _ranking_data()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    by_list = LambdaMARTRanker(**FIT, monotonic_cst=[1, -1, 0, 0]).fit(frame, y, qid=qid)
    for cst in ({"a": 1, "b": -1}, {0: 1, "b": -1, "c": 0}, np.array([1, -1, 0, 0])):
        model = LambdaMARTRanker(**FIT, monotonic_cst=cst).fit(frame, y, qid=qid)
        for a, b in zip(model._booster.trees, by_list._booster.trees):
            assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("params", [
    dict(monotonic_cst=[0, 0, 0, 0]),
    dict(monotonic_cst={}),
    dict(interaction_cst=[[0, 1, 2, 3]]),
    dict(interaction_cst=[[3, 2], [1, 0], [0, 1, 2, 3]]),
])
def test_constraints_that_constrain_nothing_give_the_unconstrained_trees(params):
    X, y, qid = _ranking_data()
    free = LambdaMARTRanker(**FIT).fit(X, y, qid=qid)
    model = LambdaMARTRanker(**FIT, **params).fit(X, y, qid=qid)
    for a, b in zip(model._booster.trees, free._booster.trees):
        assert a.tobytes() == b.tobytes()


# -- every ranker: interaction groups ------------------------------------------------


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_paths_stay_in_one_interaction_group(name):
    X, y, qid = _ranking_data()
    y = fit_labels(type(RANKERS[name]), y)
    groups = [{0, 1}, {2, 3}]
    free = clone(RANKERS[name]).set_params(**FIT).fit(X, y, qid=qid)
    assert any(not any(path <= group for group in groups) for path in _paths_features(free))
    # Column sampling too: each node's features are the tree's sample within the groups.
    for extra in ({}, dict(max_features=0.75)):
        model = clone(RANKERS[name]).set_params(**FIT, **extra, interaction_cst=[[0, 1], (2, 3)])
        model.fit(X, y, qid=qid)
        paths = _paths_features(model)
        assert all(any(path <= group for group in groups) for path in paths)
        assert {f for path in paths for f in path} == {0, 1, 2, 3}


def test_features_no_group_lists_form_one_more_group():
    X, y, qid = _ranking_data()
    listed = LambdaMARTRanker(**FIT, interaction_cst=[[0, 2]]).fit(X, y, qid=qid)
    explicit = LambdaMARTRanker(**FIT, interaction_cst=[[0, 2], [1, 3]]).fit(X, y, qid=qid)
    for a, b in zip(listed._booster.trees, explicit._booster.trees):
        assert a.tobytes() == b.tobytes()
    assert all(path <= {0, 2} or path <= {1, 3} for path in _paths_features(listed))


@pytest.mark.parametrize("shorthand, largest_path", [("no_interactions", 1), ("pairwise", 2)])
def test_interaction_shorthands(shorthand, largest_path):
    X, y, qid = _ranking_data()
    free = LambdaMARTRanker(**FIT).fit(X, y, qid=qid)
    assert max(len(path) for path in _paths_features(free)) > largest_path
    model = LambdaMARTRanker(**FIT, interaction_cst=shorthand).fit(X, y, qid=qid)
    assert max(len(path) for path in _paths_features(model)) == largest_path


def test_interaction_cst_by_name():
    X, y, qid = _ranking_data()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    by_index = LambdaMARTRanker(**FIT, interaction_cst=[[0, 1], [2, 3]]).fit(frame, y, qid=qid)
    by_name = LambdaMARTRanker(**FIT, interaction_cst=[["a", "b"], {"c", 3}]).fit(frame, y, qid=qid)
    for a, b in zip(by_name._booster.trees, by_index._booster.trees):
        assert a.tobytes() == b.tobytes()


def test_both_constraints_together_and_a_warm_start():
    X, y, qid = _ranking_data()
    params = dict(FIT, n_estimators=15, monotonic_cst=[1, -1, 0, 0],
                  interaction_cst=[[0, 2], [1, 3]])
    model = LambdaMARTRanker(**params, warm_start=True).fit(X, y, qid=qid)
    model.set_params(n_estimators=30).fit(X, y, qid=qid)
    once = LambdaMARTRanker(**dict(params, n_estimators=30)).fit(X, y, qid=qid)
    for a, b in zip(model._booster.trees, once._booster.trees):
        assert a.tobytes() == b.tobytes()
    assert np.diff(_grid_scores(model, X, 0), axis=1).min() >= 0
    assert np.diff(_grid_scores(model, X, 1), axis=1).max() <= 0
    assert all(path <= {0, 2} or path <= {1, 3} for path in _paths_features(model))


# -- validation --------------------------------------------------------------------


# (params, message, whether HistGradientBoostingRegressor refuses it too)
BAD = [
    (dict(monotonic_cst=[1, 0]), "monotonic_cst has 2 values but X has 4 features", True),
    (dict(monotonic_cst=[1, 0, 2, 0]), r"monotonic_cst must contain only -1, 0 or 1; got the "
                                       r"values \[2\]", True),
    (dict(monotonic_cst=[0.5, 0, 0, 0]), "monotonic_cst must contain only -1, 0 or 1", True),
    (dict(monotonic_cst=[[1, 0, 0, 0]]), "monotonic_cst must be a 1-d array-like", True),
    (dict(monotonic_cst={"zz": 1}), "monotonic_cst refers to feature 'zz', which is not a "
                                    "column of X", True),
    (dict(monotonic_cst={"a": 2}), r"monotonic_cst\['a'\] must be -1, 0 or 1, got 2", True),
    (dict(monotonic_cst={7: 1}), "monotonic_cst refers to feature index 7, but X has 4", False),
    (dict(monotonic_cst={0: 1, "a": -1}), "monotonic_cst gives feature 0 twice", False),
    (dict(monotonic_cst="increasing"), "'monotonic_cst' parameter", True),
    (dict(interaction_cst=[[0, 5]]), "interaction_cst refers to feature index 5, but X has 4",
     True),
    (dict(interaction_cst=[[-1]]), "interaction_cst refers to feature index -1", True),
    (dict(interaction_cst=[[0.5]]), "interaction_cst must refer to features by column index "
                                    r"\(int\) or name \(str\), got 0.5", True),
    (dict(interaction_cst=[0, 1]), "interaction_cst must be a list of groups", True),
    (dict(interaction_cst=["ab"]), "interaction_cst must be a list of groups", False),
    (dict(interaction_cst=[["a", "zz"]]), "interaction_cst refers to feature 'zz'", False),
    (dict(interaction_cst="all"), "'interaction_cst' parameter", True),
]


@pytest.mark.parametrize("params, message, hgb_refuses", BAD)
def test_bad_constraints_are_refused_naming_the_parameter(params, message, hgb_refuses):
    X, y, qid = _ranking_data(n_queries=4, docs=10)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    with pytest.raises(ValueError, match=message):
        LambdaMARTRanker(n_estimators=2, **params).fit(frame, y, qid=qid)
    if hgb_refuses:
        with pytest.raises(ValueError):
            HistGradientBoostingRegressor(max_iter=2, **params).fit(frame, y)


@pytest.mark.parametrize("params, message", [
    (dict(monotonic_cst={"a": 1}), "monotonic_cst refers to feature 'a' by name, but X had "
                                   "no feature names"),
    (dict(interaction_cst=[["a", "b"]]), "interaction_cst refers to feature 'a' by name"),
])
def test_names_need_a_dataframe(params, message):
    X, y, qid = _ranking_data(n_queries=4, docs=10)
    with pytest.raises(ValueError, match=message):
        LambdaMARTRanker(n_estimators=2, **params).fit(X, y, qid=qid)


def test_bad_constraints_are_refused_before_binning(monkeypatch):
    X, y, qid = _ranking_data(n_queries=4, docs=10)

    def fail(*args, **kwargs):
        raise AssertionError("binned before checking the constraints")

    monkeypatch.setattr(LambdaMARTRanker, "_fit_bin_mapper", fail)
    with pytest.raises(ValueError, match="monotonic_cst has 3 values"):
        LambdaMARTRanker(monotonic_cst=[1, 0, 0]).fit(X, y, qid=qid)


# -- persistence -----------------------------------------------------------------


@pytest.mark.parametrize("monotonic_cst, interaction_cst", [
    ({"a": 1, 1: -1}, [{0, 2}, ("b", "d")]),
    (np.array([1, 0, 0, -1]), "pairwise"),
    ([0, -1, 1, 0], ((0, 1), (2, 3))),
])
def test_constraints_survive_save_and_load(monotonic_cst, interaction_cst):
    X, y, qid = _ranking_data(n_queries=20)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    params = dict(FIT, n_estimators=6, warm_start=True, monotonic_cst=monotonic_cst,
                  interaction_cst=interaction_cst)
    model = LambdaMARTRanker(**params).fit(frame, y, qid=qid)
    buffer = io.BytesIO()
    model.save_model(buffer)
    buffer.seek(0)
    loaded = load_model(buffer)
    # Lists for tuples, sets and arrays; dicts keep their int keys.
    if isinstance(monotonic_cst, dict):
        assert loaded.monotonic_cst == monotonic_cst
        assert isinstance(next(k for k in loaded.monotonic_cst if k == 1), int)
    else:
        assert loaded.monotonic_cst == np.asarray(monotonic_cst).tolist()
    if isinstance(interaction_cst, str):
        assert loaded.interaction_cst == interaction_cst
    else:
        # Sets come back as sorted lists.
        assert loaded.interaction_cst == [
            sorted(group) if isinstance(group, set) else list(group) for group in interaction_cst]
    np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))
    # A warm start of the loaded model grows the trees the saved one would.
    loaded.set_params(n_estimators=12).fit(frame, y, qid=qid)
    model.set_params(n_estimators=12).fit(frame, y, qid=qid)
    for a, b in zip(loaded._booster.trees, model._booster.trees):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("value", [{"0": 1}, {"items": [[0]]}, {"items": [[True, 1]]},
                                   {"items": [[0, 1]], "other": 1}])
def test_a_damaged_dict_parameter_is_refused(value):
    X, y, qid = _ranking_data(n_queries=4, docs=10)
    model = LambdaMARTRanker(n_estimators=2, monotonic_cst={0: 1}).fit(X, y, qid=qid)
    buffer = io.BytesIO()
    model.save_model(buffer)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as zin, \
            zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "model.json":
                document = json.loads(data)
                assert document["params"]["monotonic_cst"] == {"items": [[0, 1]]}
                document["params"]["monotonic_cst"] = value
                data = json.dumps(document).encode()
            zout.writestr(info, data)
    out.seek(0)
    message = r"Cannot load model file .*params\[.monotonic_cst.\] must be"
    with pytest.raises(ValueError, match=message):
        load_model(out)


def test_the_grower_checks_its_constraints():
    X, g, h = _one_feature_problem()
    args = (X, g, h, np.array([3], np.uint32), MISSING)
    with pytest.raises(ValueError, match="monotonic_cst must hold -1, 0 or 1 for each of the 1"):
        grow_tree(*args, monotonic_cst=[1, 0])
    with pytest.raises(ValueError, match="monotonic_cst must hold"):
        grow_tree(*args, monotonic_cst=[2])
    with pytest.raises(ValueError, match=r"interaction_cst has feature index 3, outside \[0, 0\]"):
        grow_tree(*args, interaction_cst=[{0, 3}])
