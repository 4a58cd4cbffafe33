"""The blocked predictor (``predictor._predict_blocks`` on ``CompactTrees``)
against a plain-Python walk of the ``NODE_DTYPE`` records.

The oracle, :func:`reference_predict`, applies the decision rule one node at
a time: left iff ``x <= num_threshold``, NaN to ``missing_go_to_left``'s
side, the leaf values added in tree order from 0.0, the sum added to the
baseline. Scores must agree bit for bit (compared as integers, so that even
the sign of a zero counts) on models trained with NaN, hand-built trees with
infinite thresholds, sparse input, the first ``n_trees`` trees, 1 and 2
threads, and inputs of every size around the block of rows.
"""

import gc

import numba
import numpy as np
import pytest
from _walk_oracle import assert_bits_equal, reference_predict
from scipy import sparse

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr._gbdt import predictor
from sklearn_ltr._gbdt.common import NODE_DTYPE
from sklearn_ltr._gbdt.ensemble import TreeEnsemble
from sklearn_ltr._gbdt.predictor import compact_trees, concatenate_trees, predict_raw
from sklearn_ltr._utils.parallel import parallel_kernels_only
from sklearn_ltr.datasets import make_ranking

BLOCK = predictor._BLOCK_ROWS
two_threads = pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2,
    reason="numba was started with a single thread (NUMBA_NUM_THREADS=1)",
)


@pytest.fixture(scope="module")
def nan_model():
    """A ranker trained with 20% missing values (learned NaN directions)."""
    X, y, qid = make_ranking(n_queries=40, docs_per_query=30, n_features=12,
                             missing_rate=0.2, random_state=0)
    model = LambdaMARTRanker(n_estimators=25, max_leaf_nodes=31, min_samples_leaf=3,
                             early_stopping=False, random_state=0).fit(X, y, qid=qid)
    return model


def _test_rows(n, n_features=12, seed=1, missing_rate=0.2):
    X = make_ranking(n_queries=n // 10 + 2, docs_per_query=20, n_features=n_features,
                     missing_rate=missing_rate, random_state=seed)[0][:n]
    X = np.array(X)
    X[::7, 0] = np.inf
    X[1::11, 1] = -np.inf
    return X


def _hand_tree(threshold, missing_go_to_left):
    """x0 <= threshold -> (x1 <= 0, NaN left: -1 / 1); else 10. Leaves -1, 1, 10."""
    nodes = np.zeros(5, dtype=NODE_DTYPE)
    nodes["is_leaf"] = [0, 0, 1, 1, 1]
    nodes["feature_idx"] = [0, 1, -1, -1, -1]
    nodes["num_threshold"] = [threshold, 0.0, 0, 0, 0]
    nodes["missing_go_to_left"] = [missing_go_to_left, 1, 0, 0, 0]
    nodes["left"] = [1, 2, -1, -1, -1]
    nodes["right"] = [4, 3, -1, -1, -1]
    nodes["value"] = [0, 0, -1.0, 1.0, 10.0]
    return nodes


def test_model_trained_with_nan(nan_model):
    ens = nan_model._tree_ensemble()
    X = _test_rows(300)
    expected = reference_predict(ens.nodes, ens.tree_starts, X, init=ens.baseline)
    assert_bits_equal(nan_model.predict(X), expected)
    assert_bits_equal(ens.predict(X), expected)


def test_sum_of_applied_leaves(nan_model):
    # apply() walks the NODE_DTYPE records with the row-by-row kernel; its
    # leaves' values, added in tree order, are the scores.
    ens = nan_model._tree_ensemble()
    X = _test_rows(200, seed=5)
    leaves = ens.apply(X)
    acc = np.zeros(X.shape[0])
    for t in range(ens.n_trees):
        acc += ens.nodes["value"][ens.tree_starts[t] + leaves[:, t]]
    assert_bits_equal(ens.predict(X), ens.baseline + acc)


@pytest.mark.parametrize("n_rows", [0, 1, 2, 7, 8, 9, BLOCK - 1, BLOCK, BLOCK + 1,
                                    2 * BLOCK + 3])
def test_any_number_of_rows(nan_model, n_rows):
    ens = nan_model._tree_ensemble()
    X = _test_rows(max(n_rows, 1), seed=2)[:n_rows]
    got = nan_model.predict(X) if n_rows else ens.predict(X)
    assert got.shape == (n_rows,)
    assert_bits_equal(got, reference_predict(ens.nodes, ens.tree_starts, X,
                                             init=ens.baseline))


def test_blocks_with_and_without_nan(nan_model):
    # The first block has no NaN (the fast step), the second one NaN in a
    # single row, the third NaN everywhere.
    ens = nan_model._tree_ensemble()
    X = np.nan_to_num(_test_rows(3 * BLOCK, seed=3), nan=0.5, posinf=np.inf, neginf=-np.inf)
    X[BLOCK + 5, 3] = np.nan
    X[2 * BLOCK:] = np.nan
    assert_bits_equal(ens.predict(X), reference_predict(ens.nodes, ens.tree_starts, X,
                                                        init=ens.baseline))


@pytest.mark.parametrize("threshold", [np.inf, -np.inf, 0.25])
@pytest.mark.parametrize("missing_go_to_left", [0, 1])
def test_infinite_thresholds(threshold, missing_go_to_left):
    tree = _hand_tree(threshold, missing_go_to_left)
    single_leaf = np.zeros(1, dtype=NODE_DTYPE)
    single_leaf["is_leaf"] = 1
    single_leaf["value"] = 0.125
    single_leaf["left"] = single_leaf["right"] = single_leaf["feature_idx"] = -1
    nodes, starts = concatenate_trees([tree, single_leaf, tree])
    values = [np.inf, -np.inf, np.nan, 0.25, np.nextafter(0.25, 1), -1e308, 0.0, -0.0]
    X = np.array([[a, b] for a in values for b in values])
    X = np.tile(X, (3, 1))  # several blocks
    for n_trees in (None, 0, 1, 2):
        assert_bits_equal(predict_raw(nodes, starts, X, n_trees=n_trees, init=-0.5),
                          reference_predict(nodes, starts, X, n_trees=n_trees, init=-0.5))
    # +inf threshold: every number goes left, NaN only if missing_go_to_left.
    if threshold == np.inf:
        got = predict_raw(tree, np.zeros(1, np.int64), np.array([[np.inf, 1.0], [np.nan, 1.0]]))
        assert got[0] == 1.0
        assert got[1] == (1.0 if missing_go_to_left else 10.0)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_input(nan_model, fmt, monkeypatch):
    ens = nan_model._tree_ensemble()
    X = np.nan_to_num(_test_rows(250, seed=4), nan=0.0)
    X[np.random.default_rng(0).random(X.shape) < 0.6] = 0.0
    X[3, 2] = np.nan  # an explicit NaN in a sparse matrix is missing too
    Xs = getattr(sparse, f"{fmt}_matrix")(X)
    expected = reference_predict(ens.nodes, ens.tree_starts, X, init=ens.baseline)
    monkeypatch.setattr(predictor, "_SPARSE_CHUNK_CELLS", 37 * X.shape[1])  # ragged chunks
    assert_bits_equal(ens.predict(Xs), expected)
    assert_bits_equal(nan_model.predict(Xs), expected)


def test_first_n_trees_and_staged(nan_model):
    ens = nan_model._tree_ensemble()
    X = _test_rows(150, seed=6)
    for m in (0, 1, 2, 13, ens.n_trees):
        assert_bits_equal(ens.predict(X, n_trees=m),
                          reference_predict(ens.nodes, ens.tree_starts, X, n_trees=m,
                                            init=ens.baseline))
    for m, scores in enumerate(nan_model.staged_predict(X), start=1):
        if m in (1, 7, ens.n_trees):
            np.testing.assert_allclose(
                scores, reference_predict(ens.nodes, ens.tree_starts, X, n_trees=m,
                                          init=ens.baseline), rtol=0, atol=1e-12)


@two_threads
def test_threads_and_serial_twin_agree(nan_model):
    ens = nan_model._tree_ensemble()
    X = _test_rows(4000, seed=7)
    # Enough work for the parallel kernel on 2 threads.
    assert X.shape[0] * ens.n_trees >= predictor._MIN_PARALLEL_BLOCK_ROW_TREES
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = ens.predict(X)
        numba.set_num_threads(2)
        two = ens.predict(X)
        with parallel_kernels_only():
            forced = ens.predict(X[:BLOCK + 1])
    finally:
        numba.set_num_threads(old)
    assert_bits_equal(one, two)
    assert_bits_equal(forced, one[:BLOCK + 1])
    assert_bits_equal(one, reference_predict(ens.nodes, ens.tree_starts, X,
                                             init=ens.baseline))


def test_deep_chain_tree():
    # A leaf-wise tree can be far deeper than log2(leaves): a chain of 40
    # splits on x0 <= -i, each with a leaf -i on its left.
    depth = 40
    nodes = np.zeros(2 * depth + 1, dtype=NODE_DTYPE)
    for i in range(depth):
        k = 2 * i
        nodes[k] = (0, 0, 0, -float(i), 0, i % 2, 2 * i + 1, 2 * i + 2, 0, i, 0, 0, 0)
        nodes[k + 1] = (-float(i), 0, -1, 0.0, 0, 0, -1, -1, 0, i + 1, 1, 0, 0)
    nodes[2 * depth] = (100.0, 0, -1, 0.0, 0, 0, -1, -1, 0, depth, 1, 0, 0)
    assert compact_trees(nodes, np.zeros(1, np.int64)).depths[0] == depth
    X = np.array([[1.0], [-0.5], [-39.0], [-39.5], [-1e9], [np.nan]])
    assert_bits_equal(predict_raw(nodes, np.zeros(1, np.int64), X),
                      reference_predict(nodes, np.zeros(1, np.int64), X))


def test_layout_cached_per_fitted_model(nan_model):
    ens = nan_model._tree_ensemble()
    X = _test_rows(20)
    ens.predict(X)
    first = predictor._cached_compact_trees(ens.nodes, ens.tree_starts)
    again = nan_model._tree_ensemble()  # a new TreeEnsemble, the same node array
    assert predictor._cached_compact_trees(again.nodes, again.tree_starts) is first
    # A writeable node array is never cached: it could change.
    nodes, starts = concatenate_trees([_hand_tree(0.0, 1)])
    predict_raw(nodes, starts, np.zeros((2, 2)))
    assert id(nodes) not in predictor._COMPACT_CACHE
    # The entry goes with its model.
    frozen = TreeEnsemble(nodes=nodes.copy(), tree_starts=starts.copy(), baseline=0.0,
                          n_features=2)
    frozen.predict(np.zeros((2, 2)))
    key = id(frozen.nodes)
    assert key in predictor._COMPACT_CACHE
    del frozen
    gc.collect()
    assert key not in predictor._COMPACT_CACHE


def test_bad_input():
    nodes, starts = concatenate_trees([_hand_tree(0.0, 1)])
    with pytest.raises(ValueError, match="features"):
        predict_raw(nodes, starts, np.zeros((3, 1)))
    with pytest.raises(ValueError, match="2-dimensional"):
        predict_raw(nodes, starts, np.zeros(3))
    broken = nodes.copy()
    broken["right"][0] = 9
    with pytest.raises(ValueError, match="outside its tree"):
        predict_raw(broken, starts, np.zeros((3, 2)))
    # A child before its parent (here a cycle) would stop the kernel's walk
    # too early, or never.
    looped = nodes.copy()
    looped["left"][1] = 0
    with pytest.raises(ValueError, match="not after its parent"):
        predict_raw(looped, starts, np.zeros((3, 2)))


def test_only_split_columns_are_read():
    # The kernel copies only the columns the trees split on (here 3 and 7)
    # into its blocks; the others may hold anything.
    tree = _hand_tree(0.25, 0)
    tree["feature_idx"][:2] = [7, 3]
    nodes, starts = concatenate_trees([tree, tree])
    trees = compact_trees(nodes, starts)
    np.testing.assert_array_equal(trees.columns, [3, 7])
    assert trees.n_features_split == 8
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2 * BLOCK + 5, 8))
    X[rng.random(X.shape) < 0.1] = np.nan
    expected = reference_predict(nodes, starts, X)
    assert_bits_equal(predict_raw(nodes, starts, X), expected)
    X[:, [0, 1, 2, 4, 5, 6]] = np.nan
    assert_bits_equal(predict_raw(nodes, starts, X), expected)
    with pytest.raises(ValueError, match="8 features|feature 7"):
        predict_raw(nodes, starts, X[:, :7])


@pytest.mark.parametrize("missing_go_to_left", [0, 1])
def test_nan_threshold(missing_go_to_left):
    # x <= NaN is false for every x: numbers go right, NaN by its direction.
    tree = _hand_tree(np.nan, missing_go_to_left)
    nodes, starts = concatenate_trees([tree, tree])
    X = np.array([[a, b] for a in (-np.inf, -1.0, 0.0, np.inf, np.nan)
                  for b in (-1.0, np.nan)])
    expected = reference_predict(nodes, starts, X)
    assert_bits_equal(predict_raw(nodes, starts, X), expected)
    assert set(expected[~np.isnan(X[:, 0])]) == {20.0}
    assert_bits_equal(predict_raw(nodes, starts, X[~np.isnan(X).any(axis=1)]),
                      expected[~np.isnan(X).any(axis=1)])
