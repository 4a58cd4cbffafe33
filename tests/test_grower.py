"""Tests of the TreeGrower: limits, leaf values, leaf assignment, determinism."""

import numba
import numpy as np
import pytest

from sklearn_ltr._gbdt import node_rows
from sklearn_ltr._gbdt.binning import BinMapper
from sklearn_ltr._gbdt.grower import TreeGrower, _update_raw_predictions
from sklearn_ltr._gbdt.histogram import _build_histogram, allocate_histograms
from sklearn_ltr._gbdt.node_rows import NodeRows

from _engine_helpers import find_best_split, grow_tree


def _problem(n=3000, n_features=6, seed=0, nan_rate=0.05):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_features))
    X[:, 3] = rng.integers(0, 5, n)
    y = X[:, 0] + 2 * (X[:, 1] > 0.5) + X[:, 3] * X[:, 2] + 0.3 * rng.standard_normal(n)
    X[rng.random(X.shape) < nan_rate] = np.nan
    mapper = BinMapper(max_bins=63, random_state=0).fit(X)
    Xb = mapper.transform(X)
    g = (0.0 - y).astype(np.float32)
    h = rng.uniform(0.5, 1.5, n).astype(np.float32)
    return X, Xb, g, h, mapper


def _grow(Xb, g, h, mapper, **kw):
    return grow_tree(Xb, g, h, mapper.n_bins_non_missing_, mapper.missing_values_bin_idx_,
                     bin_thresholds=mapper.bin_thresholds_, **kw)


def _route(nodes, Xb, missing_bin):
    """Oracle in plain Python: the node path of every row."""
    paths = []
    for row in Xb:
        k, path = 0, [0]
        while not nodes[k]["is_leaf"]:
            b = row[nodes[k]["feature_idx"]]
            left = nodes[k]["missing_go_to_left"] if b == missing_bin else b <= nodes[k]["bin_threshold"]
            k = nodes[k]["left"] if left else nodes[k]["right"]
            path.append(k)
        paths.append(path)
    return paths


def _assert_nodes_equal(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    for name in a.dtype.names:  # field by field, so NaN thresholds compare equal
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def _leaf_of_rows(tree, n):
    leaf = np.full(n, -1)
    for node, a, b in zip(tree.leaf_nodes, tree.leaf_starts, tree.leaf_stops):
        leaf[tree.partitioned_indices[a:b]] = node
    return leaf


def _check_tree(tree, Xb, g, h, mapper, rows, l2=0.0, shrinkage=1.0):
    nodes = tree.nodes
    paths = _route(nodes, Xb[rows], mapper.missing_values_bin_idx_)
    # The leaf assignment covers the rows exactly once and matches routing.
    assert np.array_equal(np.sort(tree.partitioned_indices), np.sort(rows))
    leaf = _leaf_of_rows(tree, len(Xb))
    np.testing.assert_array_equal(leaf[rows], [p[-1] for p in paths])
    # Children partition their parent's rows.
    members = {}
    for r, p in zip(rows, paths):
        for k in p:
            members.setdefault(k, set()).add(r)
    for k, nd in enumerate(nodes):
        assert nd["count"] == len(members.get(k, ()))
        if not nd["is_leaf"]:
            left, right = members[nd["left"]], members[nd["right"]]
            assert not left & right and left | right == members[k]
            assert nodes[nd["left"]]["depth"] == nd["depth"] + 1
    # Newton leaf values from the leaf's rows.
    for node, a, b in zip(tree.leaf_nodes, tree.leaf_starts, tree.leaf_stops):
        idx = tree.partitioned_indices[a:b]
        G = g[idx].astype(np.float64).sum()
        H = h[idx].astype(np.float64).sum()
        assert nodes[node]["value"] == pytest.approx(-G / (H + l2) * shrinkage, rel=1e-6, abs=1e-9)
    # Raw thresholds are the mapper's thresholds at the bin threshold.
    for nd in nodes[nodes["is_leaf"] == 0]:
        thr = mapper.bin_thresholds_[nd["feature_idx"]]
        expected = thr[nd["bin_threshold"]] if nd["bin_threshold"] < len(thr) else np.inf
        assert nd["num_threshold"] == expected
    return members


@pytest.mark.parametrize("max_leaf_nodes", [2, 7, 31])
def test_max_leaf_nodes(max_leaf_nodes):
    _, Xb, g, h, mapper = _problem()
    tree = _grow(Xb, g, h, mapper, max_leaf_nodes=max_leaf_nodes, min_samples_leaf=5)
    assert tree.nodes["is_leaf"].sum() == max_leaf_nodes
    _check_tree(tree, Xb, g, h, mapper, np.arange(len(g)))


@pytest.mark.parametrize("max_depth", [0, 1, 3])
def test_max_depth(max_depth):
    _, Xb, g, h, mapper = _problem()
    tree = _grow(Xb, g, h, mapper, max_leaf_nodes=None, max_depth=max_depth, min_samples_leaf=1)
    assert tree.nodes["depth"].max() == max_depth
    assert tree.nodes["is_leaf"].sum() == 2**max_depth  # enough rows to fill every level
    _check_tree(tree, Xb, g, h, mapper, np.arange(len(g)))


@pytest.mark.parametrize("min_samples_leaf", [1, 50, 400])
def test_min_samples_leaf(min_samples_leaf):
    _, Xb, g, h, mapper = _problem()
    tree = _grow(Xb, g, h, mapper, max_leaf_nodes=64, min_samples_leaf=min_samples_leaf)
    leaves = tree.nodes[tree.nodes["is_leaf"] == 1]
    assert leaves["count"].min() >= min_samples_leaf
    assert len(leaves) > 1


@pytest.mark.parametrize("min_hessian", [1e-3, 30.0, 200.0])
def test_min_hessian_to_split(min_hessian):
    _, Xb, g, h, mapper = _problem()
    tree = _grow(Xb, g, h, mapper, max_leaf_nodes=64, min_samples_leaf=1,
                 min_hessian_to_split=min_hessian)
    for node, a, b in zip(tree.leaf_nodes, tree.leaf_starts, tree.leaf_stops):
        assert h[tree.partitioned_indices[a:b]].astype(np.float64).sum() >= min_hessian * (1 - 1e-6)


@pytest.mark.parametrize("l2,shrinkage", [(0.0, 1.0), (5.0, 0.1)])
def test_leaf_values_and_partition_with_sample_indices(l2, shrinkage):
    _, Xb, g, h, mapper = _problem(seed=1)
    rows = np.flatnonzero(np.random.default_rng(2).random(len(g)) < 0.6)
    tree = _grow(Xb, g, h, mapper, sample_indices=rows, max_leaf_nodes=15, min_samples_leaf=10,
                 l2_regularization=l2, shrinkage=shrinkage)
    assert tree.nodes[0]["count"] == len(rows)
    _check_tree(tree, Xb, g, h, mapper, rows, l2=l2, shrinkage=shrinkage)
    raw = np.zeros(len(g))
    _update_raw_predictions(raw, tree.partitioned_indices, tree.leaf_starts, tree.leaf_stops,
                            tree.leaf_values)
    leaf = _leaf_of_rows(tree, len(g))
    expected = np.zeros(len(g))
    expected[rows] = tree.nodes["value"][leaf[rows]]
    np.testing.assert_array_equal(raw, expected)


def test_root_split_is_the_best_split_and_gains_positive():
    _, Xb, g, h, mapper = _problem(seed=3)
    tree = _grow(Xb, g, h, mapper, max_leaf_nodes=8, min_samples_leaf=20)
    hist = allocate_histograms(1, Xb.shape[1], 64)[0]
    rows = np.arange(len(g), dtype=np.int32)
    mask = np.ones(Xb.shape[1], np.uint8)
    _build_histogram(Xb, rows, g, h, mask, hist)
    res = find_best_split(hist, float(g.astype(np.float64).sum()), float(h.astype(np.float64).sum()),
                          len(g), mapper.n_bins_non_missing_, 63, mask, 20, 1e-3, 0.0, 0.0)
    root = tree.nodes[0]
    assert (root["feature_idx"], root["bin_threshold"]) == (res[1], res[2])
    assert root["gain"] == pytest.approx(res[0])
    splits = tree.nodes[tree.nodes["is_leaf"] == 0]
    assert np.all(splits["gain"] > 0)


def test_best_first_order_splits_largest_gain_first():
    # With max_leaf_nodes=3 the second split must be the better of the two
    # children's best splits.
    _, Xb, g, h, mapper = _problem(seed=4)
    full = _grow(Xb, g, h, mapper, max_leaf_nodes=3, min_samples_leaf=20)
    root = full.nodes[0]
    two = _grow(Xb, g, h, mapper, max_leaf_nodes=2, min_samples_leaf=20)
    assert two.nodes[0]["feature_idx"] == root["feature_idx"]
    members = _check_tree(two, Xb, g, h, mapper, np.arange(len(g)))
    gains = []
    for child in (1, 2):
        rows = np.array(sorted(members[child]), dtype=np.int32)
        hist = allocate_histograms(1, Xb.shape[1], 64)[0]
        _build_histogram(Xb, rows, g[rows], h[rows], np.ones(Xb.shape[1], np.uint8), hist)
        res = find_best_split(hist, float(g[rows].astype(np.float64).sum()),
                              float(h[rows].astype(np.float64).sum()), len(rows),
                              mapper.n_bins_non_missing_, 63, np.ones(Xb.shape[1], np.uint8),
                              20, 1e-3, 0.0, 0.0)
        gains.append(res[0])
    split_child = [k for k in (1, 2) if not full.nodes[k]["is_leaf"]]
    assert len(split_child) == 1
    assert split_child[0] == 1 + int(np.argmax(gains))
    assert full.nodes[split_child[0]]["gain"] == pytest.approx(max(gains), rel=1e-6)


def test_feature_mask_is_respected():
    _, Xb, g, h, mapper = _problem(seed=5)
    mask = np.array([False, True, False, True, True, False])
    tree = _grow(Xb, g, h, mapper, feature_mask=mask, max_leaf_nodes=31, min_samples_leaf=5)
    used = tree.nodes["feature_idx"][tree.nodes["is_leaf"] == 0]
    assert len(used) and np.all(mask[used])


def test_grower_reuse_across_trees_and_unlimited_leaves():
    _, Xb, g, h, mapper = _problem(seed=6, n=1500)
    rows = NodeRows(Xb, mapper.missing_values_bin_idx_, mapper.n_bins_non_missing_)
    grower = TreeGrower(rows, mapper.n_bins_non_missing_, mapper.missing_values_bin_idx_,
                        bin_thresholds=mapper.bin_thresholds_,
                        max_leaf_nodes=None, min_samples_leaf=30)
    first = grower.grow(g, h)
    assert first.nodes["is_leaf"].sum() > 32  # the histogram pool had to grow
    again = grower.grow(g, h)
    _assert_nodes_equal(first.nodes, again.nodes)
    fresh = _grow(Xb, g, h, mapper, max_leaf_nodes=None, min_samples_leaf=30)
    _assert_nodes_equal(first.nodes, fresh.nodes)
    _check_tree(first, Xb, g, h, mapper, np.arange(len(g)))


def test_same_tree_on_one_and_two_threads():
    _, Xb, g, h, mapper = _problem(seed=7, n=20000)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = _grow(Xb, g, h, mapper, max_leaf_nodes=31)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = _grow(Xb, g, h, mapper, max_leaf_nodes=31)
    finally:
        numba.set_num_threads(old)
    _assert_nodes_equal(one.nodes, two.nodes)
    np.testing.assert_array_equal(one.partitioned_indices, two.partitioned_indices)


def test_unsplittable_root_is_a_leaf():
    _, Xb, g, h, mapper = _problem(n=30)
    tree = _grow(Xb, g, h, mapper, min_samples_leaf=20)
    assert len(tree.nodes) == 1 and tree.nodes[0]["is_leaf"]
    G, H = g.astype(np.float64).sum(), h.astype(np.float64).sum()
    assert tree.leaf_values[0] == pytest.approx(-G / H)


def test_invalid_parameters():
    _, Xb, g, h, mapper = _problem(n=100)
    args = (NodeRows(Xb, 63), mapper.n_bins_non_missing_, 63)
    for kw, word in [(dict(max_leaf_nodes=1), "max_leaf_nodes"), (dict(max_depth=-1), "max_depth"),
                     (dict(min_samples_leaf=0), "min_samples_leaf"),
                     (dict(l2_regularization=-1), "l2_regularization"),
                     (dict(min_hessian_to_split=-1), "min_hessian_to_split"),
                     (dict(shrinkage=0), "shrinkage")]:
        with pytest.raises(ValueError, match=word):
            TreeGrower(*args, **kw)
    grower = TreeGrower(*args)
    with pytest.raises(ValueError, match="gradients"):
        grower.grow(g[:5], h)
    with pytest.raises(ValueError, match="sample_indices"):
        grower.grow(g, h, sample_indices=np.array([0, 1000]))
    with pytest.raises(ValueError, match="feature_mask"):
        grower.grow(g, h, feature_mask=np.ones(2, bool))


@pytest.mark.parametrize("with_sample_indices", [False, True])
def test_constant_hessian_path(with_sample_indices, monkeypatch):
    # A declared constant hessian takes the (gradient, count) histogram
    # kernels. Their hessian sums, count * h, equal the general kernels' sums
    # of h exactly, so the tree is the same bit for bit. The Python loop, whose
    # calls into the row store can be watched (the compiled loop grows the
    # same trees: test_compiled_grower.py).
    _, Xb, g, _, mapper = _problem(seed=8)
    h = np.full(len(g), 0.5, np.float32)
    rows = np.arange(0, len(g), 3) if with_sample_indices else np.arange(len(g))
    sample = rows if with_sample_indices else None
    params = dict(max_leaf_nodes=20, min_samples_leaf=15, l2_regularization=1.0,
                  compiled_loop=False)
    calls = []

    def spy_on(name):
        kernel = getattr(node_rows, name)

        def spy(*args):
            calls.append(name)
            return kernel(*args)
        monkeypatch.setattr(node_rows, name, spy)

    constant = {"_build_histogram_const", "_build_histogram_root_const"}
    for name in constant | {"_build_histogram", "_build_histogram_root"}:
        spy_on(name)
    tree = _grow(Xb, g, h, mapper, sample_indices=sample, constant_hessian=0.5, **params)
    assert calls and set(calls) <= constant
    assert tree.nodes["is_leaf"].sum() == 20
    _check_tree(tree, Xb, g, h, mapper, rows, l2=1.0)
    calls.clear()
    general = _grow(Xb, g, h, mapper, sample_indices=sample, **params)
    # Undeclared, nothing scans the hessians for constancy.
    assert calls and not set(calls) & constant
    _assert_nodes_equal(tree.nodes, general.nodes)
    np.testing.assert_array_equal(tree.partitioned_indices, general.partitioned_indices)


def _features_that_can_split(Xb, mapper, is_categorical=None, constant_hessian=None, **kw):
    rows = NodeRows(Xb, mapper.missing_values_bin_idx_, mapper.n_bins_non_missing_,
                    constant_hessian=constant_hessian)
    grower = TreeGrower(rows, mapper.n_bins_non_missing_, mapper.missing_values_bin_idx_,
                        is_categorical=is_categorical, **kw)
    n = Xb.shape[0]
    return grower._features_that_can_split(np.zeros(n, np.float32), np.ones(n, np.float32))


@pytest.mark.parametrize("constant_hessian", [None, 1.0])
def test_features_that_can_split_by_hand(constant_hessian):
    # Each column's rows outside its most common value decide: a split needs
    # min_samples_leaf (20) rows on each side.
    n = 100
    X = np.zeros((n, 7))
    X[:19, 1] = 1.0                  # 19 rows differ: no split has 20 each side
    X[:20, 2] = 1.0                  # 20 rows differ: splittable
    X[:20, 3] = np.nan               # 20 missing rows: value bin against missing bin
    X[:10, 4] = 1.0                  # 10 + 10 rows differ, on either side of the
    X[10:20, 4] = -1.0               # mode: no threshold has 20 on each side
    X[:10, 5] = np.nan               # 10 missing and 10 below the mode: missing
    X[10:20, 5] = -1.0               # sent left with the low bin gives 20
    X[:1, 6] = 1.0                   # categorical, two categories used: kept
    is_categorical = np.array([0, 0, 0, 0, 0, 0, 1], dtype=bool)
    mapper = BinMapper(max_bins=63, is_categorical=is_categorical).fit(X)
    can_split = _features_that_can_split(mapper.transform(X), mapper, is_categorical=is_categorical,
                                         constant_hessian=constant_hessian, min_samples_leaf=20)
    np.testing.assert_array_equal(can_split, [0, 0, 1, 1, 0, 1, 1])
    can_split = _features_that_can_split(mapper.transform(X), mapper, is_categorical=is_categorical,
                                         constant_hessian=constant_hessian, min_samples_leaf=10)
    np.testing.assert_array_equal(can_split, [0, 1, 1, 1, 1, 1, 1])


@pytest.mark.parametrize("grow_policy", ["lossguide", "depthwise", "symmetric"])
def test_leaving_out_features_that_cannot_split_changes_no_tree(grow_policy, monkeypatch):
    # Sparse columns, some constant, some with too few rows off their mode:
    # the trees are those of a grower that scans every feature.
    rng = np.random.default_rng(3)
    n = 2000
    X = rng.standard_normal((n, 12))
    X[rng.random(X.shape) < np.linspace(0.0, 0.995, 12)] = 0.0
    X[:, 4] = 1.0
    X[rng.random(n) < 0.1, 7] = np.nan
    mapper = BinMapper(max_bins=63, random_state=0).fit(X)
    Xb = mapper.transform(X)
    g = (X[:, 0] - np.nan_to_num(X[:, 11]) * 3).astype(np.float32)
    h = rng.uniform(0.5, 1.5, n).astype(np.float32)
    kw = dict(max_leaf_nodes=31, min_samples_leaf=20, grow_policy=grow_policy, max_depth=6)
    assert not _features_that_can_split(Xb, mapper, **kw).all()
    tree = _grow(Xb, g, h, mapper, **kw)
    assert (tree.nodes["is_leaf"] == 0).sum() >= 5
    monkeypatch.setattr(TreeGrower, "_features_that_can_split",
                        lambda self, g, h: np.ones(self.rows.n_features, dtype=np.uint8))
    every_feature = _grow(Xb, g, h, mapper, **kw)
    _assert_nodes_equal(tree.nodes, every_feature.nodes)
    np.testing.assert_array_equal(tree.partitioned_indices, every_feature.partitioned_indices)
