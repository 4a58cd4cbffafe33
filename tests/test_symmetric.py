"""Symmetric (oblivious) trees: the split shared by a level is the
brute-force best of the gains summed over the level's nodes, computed here
from the rows themselves."""

import numpy as np
import pytest

from sklearn_ltr._gbdt.histogram import allocate_histograms
from sklearn_ltr._gbdt.splitting import split_scratch
from sklearn_ltr._gbdt.symmetric import level_split

MISSING = 255


def _node_gain(g, h, left, l2):
    def term(gs, hs):
        return gs * gs / (hs + l2) if hs + l2 > 0 else 0.0
    gl, hl = g[left].sum(), h[left].sum()
    return term(gl, hl) + term(g.sum() - gl, h.sum() - hl) - term(g.sum(), h.sum())


def _brute_force(Xb, g, h, node_rows, n_bins_nm, min_leaf, min_hess, l2):
    """Every (feature, bin, missing-left) candidate in the tie-break order of
    the scan: feature, then direction, then bin; returns the first with the
    largest summed gain."""
    best, best_gain = None, -np.inf
    for f in range(Xb.shape[1]):
        any_missing = any((Xb[rows, f] == MISSING).any() for rows in node_rows)
        for d in (0, 1) if any_missing else (0,):
            last = n_bins_nm[f] if (any_missing and d == 0) else n_bins_nm[f] - 1
            for b in range(last):
                total = 0.0
                for rows in node_rows:
                    col = Xb[rows, f]
                    left = (col <= b) & (col != MISSING) | ((col == MISSING) & (d == 1))
                    nl, nr = left.sum(), (~left).sum()
                    hl, hr = h[rows][left].sum(), h[rows][~left].sum()
                    if min(nl, nr) >= min_leaf and min(hl, hr) >= min_hess:
                        total += _node_gain(g[rows], h[rows], left, l2)
                if best is None or total > best_gain + 1e-9 * max(1.0, abs(best_gain)):
                    best, best_gain = (f, b, d), total
    return best, best_gain


def _histograms(Xb, g, h, node_rows):
    hists = allocate_histograms(len(node_rows), Xb.shape[1], MISSING + 1)
    hists[:] = 0.0
    for k, rows in enumerate(node_rows):
        for f in range(Xb.shape[1]):
            np.add.at(hists[k, f, :, 0], Xb[rows, f], g[rows])
            np.add.at(hists[k, f, :, 1], Xb[rows, f], h[rows])
            np.add.at(hists[k, f, :, 2], Xb[rows, f], 1.0)
    return hists


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("min_leaf", [1, 8])
def test_level_split_is_the_brute_force_best_of_the_summed_gains(seed, min_leaf):
    rng = np.random.default_rng(seed)
    n, n_features, n_nodes = 240, 4, 3
    n_bins_nm = rng.integers(2, 9, size=n_features).astype(np.uint32)
    Xb = np.column_stack([rng.integers(0, k, size=n) for k in n_bins_nm]).astype(np.uint8)
    if seed % 2:
        Xb[rng.random((n, n_features)) < 0.1] = MISSING
    g = rng.normal(size=n) + (Xb[:, 0] == 1) - 0.5 * (Xb[:, 2] >= 3)
    h = rng.uniform(0.5, 1.5, size=n)
    node_rows = np.array_split(rng.permutation(n), n_nodes)
    hists = _histograms(Xb, g, h, node_rows)
    totals = np.array([[g[r].sum(), h[r].sum(), len(r)] for r in node_rows])
    split = level_split(hists, np.arange(n_nodes, dtype=np.int64), totals, n_bins_nm, MISSING,
                        np.ones(n_features, dtype=np.uint8), min_leaf, 1e-3, 0.0, 0.5,
                        split_scratch(n_features, MISSING + 1))
    (f, b, d), gain = _brute_force(Xb, g, h, node_rows, n_bins_nm, min_leaf, 1e-3, 0.5)
    assert split is not None
    assert split[1:3] == (f, b)
    np.testing.assert_allclose(split[0], gain, rtol=1e-9)
    if (Xb[:, f] == MISSING).any():
        assert split[3] == d


@pytest.mark.parametrize("seed", range(4))
def test_level_split_subtracts_siblings_before_it_searches(seed):
    # Nodes 0 and 2 hold their parents' histograms (their own plus a
    # sibling's, kept in slots 3 and 4); the search must find the split of
    # the nodes' own histograms and leave those in the nodes' slots, over
    # the bins a scan reads, for every allowed feature (categorical too).
    rng = np.random.default_rng(seed)
    n, n_features, n_nodes = 300, 4, 3
    n_bins_nm = rng.integers(2, 9, size=n_features).astype(np.uint32)
    Xb = np.column_stack([rng.integers(0, k, size=n) for k in n_bins_nm]).astype(np.uint8)
    Xb[rng.random((n, n_features)) < 0.1] = MISSING
    g = rng.normal(size=n) + (Xb[:, 0] == 1) - 0.5 * (Xb[:, 2] >= 3)
    h = rng.uniform(0.5, 1.5, size=n)
    parts = np.array_split(rng.permutation(n), n_nodes + 2)
    own = _histograms(Xb, g, h, parts)
    pool = own.copy()
    pool[0] += own[3]
    pool[2] += own[4]
    slots = np.arange(n_nodes, dtype=np.int64)
    siblings = np.array([3, -1, 4], dtype=np.int64)
    totals = np.array([[g[r].sum(), h[r].sum(), len(r)] for r in parts[:n_nodes]])
    mask = np.array([1, 1, 1, 0], dtype=np.uint8)
    is_categorical = np.array([0, 1, 0, 0], dtype=np.uint8)
    args = (n_bins_nm, MISSING, mask, 1, 1e-3, 0.0, 0.5)
    expected = level_split(own, slots, totals, *args, split_scratch(n_features, MISSING + 1),
                           is_categorical)
    got = level_split(pool, slots, totals, *args, split_scratch(n_features, MISSING + 1),
                      is_categorical, siblings)
    assert got[1:4] == expected[1:4]
    # (parent - sibling) equals the own sums up to rounding.
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    for k in (0, 2):
        for f in np.flatnonzero(mask):
            read = np.r_[0:n_bins_nm[f], MISSING]
            np.testing.assert_allclose(pool[k, f, read, :3], own[k, f, read, :3], atol=1e-12)
    # A masked-out feature is not touched.
    np.testing.assert_array_equal(pool[0, 3], own[0, 3] + own[3, 3])


def test_a_masked_feature_is_never_chosen_and_no_gain_means_no_split():
    rng = np.random.default_rng(0)
    n = 200
    Xb = rng.integers(0, 5, size=(n, 3)).astype(np.uint8)
    g = np.where(Xb[:, 1] >= 2, 1.0, -1.0)
    h = np.ones(n)
    rows = [np.arange(n)]
    hists = _histograms(Xb, g, h, rows)
    totals = np.array([[g.sum(), h.sum(), n]])
    args = (hists, np.zeros(1, dtype=np.int64), totals, np.full(3, 5, dtype=np.uint32), MISSING)
    scratch = split_scratch(3, MISSING + 1)
    split = level_split(*args, np.ones(3, dtype=np.uint8), 1, 1e-3, 0.0, 0.0, scratch)
    assert split[1:3] == (1, 1)
    masked = level_split(*args, np.array([1, 0, 1], dtype=np.uint8), 1, 1e-3, 0.0, 0.0, scratch)
    assert masked is None or masked[1] != 1
    # Gains all below the bar: no split.
    assert level_split(*args, np.ones(3, dtype=np.uint8), 1, 1e-3, 1e9, 0.0, scratch) is None


# ------------------------------------------------------------------ prediction


def _walk_predict(model, X):
    """The node walk of the predictor (its generic block kernel), the oracle
    of the leaf tables."""
    from sklearn_ltr._gbdt import predictor

    ensemble = model._booster.ensemble()
    trees = predictor.compact_trees(ensemble.nodes, ensemble.tree_starts)
    out = np.full(X.shape[0], ensemble.baseline)
    predictor._predict_blocks_serial(*trees[:7], trees.roots, trees.depths, trees.columns,
                                     np.ascontiguousarray(X, dtype=np.float64), out)
    return out, trees


@pytest.mark.parametrize("min_samples_leaf", [1, 60])
def test_symmetric_models_predict_through_leaf_tables_bit_identically(min_samples_leaf):
    from scipy import sparse

    from sklearn_ltr import LambdaMARTRanker
    from sklearn_ltr.datasets import make_ranking

    X, y, qid = make_ranking(n_queries=80, docs_per_query=25, n_features=10, missing_rate=0.1,
                             random_state=1)
    model = LambdaMARTRanker(n_estimators=25, grow_policy="symmetric", max_depth=5,
                             min_samples_leaf=min_samples_leaf, early_stopping=False,
                             random_state=0).fit(X, y, qid=qid)
    expected, trees = _walk_predict(model, X)
    assert trees.oblivious is not None
    if min_samples_leaf == 60:
        # Some branches stopped early: their leaves fill several table entries.
        assert any(t["is_leaf"][t["depth"] < t["depth"].max()].any()
                   for t in model._booster.trees)
    np.testing.assert_array_equal(model.predict(X), expected)
    np.testing.assert_array_equal(model.predict(X[:3]), expected[:3])
    zeroed = X.copy()
    zeroed[np.isnan(zeroed)] = 0.0
    np.testing.assert_array_equal(model.predict(sparse.csr_matrix(zeroed)),
                                  model.predict(zeroed))
    staged = list(model.staged_predict(X))
    np.testing.assert_array_equal(staged[-1], expected)
    first = LambdaMARTRanker(n_estimators=7, grow_policy="symmetric", max_depth=5,
                             min_samples_leaf=min_samples_leaf, early_stopping=False,
                             random_state=0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(staged[6], first.predict(X))


def test_leaf_wise_trees_are_walked():
    from sklearn_ltr import LambdaMARTRanker
    from sklearn_ltr.datasets import make_ranking

    X, y, qid = make_ranking(n_queries=40, docs_per_query=20, n_features=6, random_state=0)
    model = LambdaMARTRanker(n_estimators=5, early_stopping=False, random_state=0).fit(
        X, y, qid=qid)
    expected, trees = _walk_predict(model, X)
    assert trees.oblivious is None
    np.testing.assert_array_equal(model.predict(X), expected)


@pytest.mark.parametrize("ranker, params", [
    ("YetiRankRanker", {}),
    ("LambdaMARTRanker", {"subsample": 0.7, "max_features": 0.8}),
    ("LambdaMARTRanker", {"leaf_estimation": "gradient"}),  # constant hessians
])
def test_levels_built_in_one_pass_give_the_node_by_node_trees(ranker, params, monkeypatch):
    import sklearn_ltr
    from sklearn_ltr._gbdt.node_rows import NodeRows
    from sklearn_ltr.datasets import make_ranking

    X, y, qid = make_ranking(n_queries=60, docs_per_query=30, n_features=12, missing_rate=0.1,
                             random_state=3)
    cls = getattr(sklearn_ltr, ranker)

    def fit():
        return cls(n_estimators=8, grow_policy="symmetric", max_depth=6, min_samples_leaf=5,
                   early_stopping=False, random_state=0, **params).fit(X, y, qid=qid)

    def split_node_by_node(self, node_ids, features, left_bins, left_ids, right_ids,
                           histogram_of, histograms, slots):
        # What split_level promises: the effect of one split() per node.
        for k, node_id in enumerate(node_ids):
            self.split(node_id, features[k], left_bins[k], left_ids[k], right_ids[k],
                       histogram_of[k], histograms[slots[k]] if histogram_of[k] >= 0 else None)

    one_pass = fit()
    monkeypatch.setattr(NodeRows, "split_level", split_node_by_node)
    node_by_node = fit()
    assert max(t["depth"].max() for t in one_pass._booster.trees) == 6
    for a, b in zip(one_pass._booster.trees, node_by_node._booster.trees, strict=True):
        # Bytes, not values: leaves hold NaN thresholds.
        assert a.tobytes() == b.tobytes()
    np.testing.assert_array_equal(one_pass.predict(X), node_by_node.predict(X))
