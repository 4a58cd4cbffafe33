"""QuickScorer's lists (``_gbdt/quickscorer.py``): hand-computed masks and
leaf order, and scores bit for bit equal to the plain-Python walk of
``_walk_oracle`` on fitted models of every leaf count it holds, with NaN,
infinities and any number of rows; models it cannot hold, or would not
score faster, are walked."""

import numba
import numpy as np
import pytest
from _threads import assert_ran_in_parallel, needs_two_threads, parallel_kernels_only
from _walk_oracle import assert_bits_equal, reference_predict

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr._gbdt import predictor, quickscorer
from sklearn_ltr._gbdt.common import NODE_DTYPE
from sklearn_ltr._gbdt.predictor import compact_trees, concatenate_trees, predict_raw
from sklearn_ltr._gbdt.quickscorer import LANES
from sklearn_ltr.datasets import make_ranking

CHUNK = predictor._QUICKSCORER_CHUNK_ROWS


@pytest.fixture
def any_number_of_trees(monkeypatch):
    """Lists for hand-built ensembles of a few trees too."""
    monkeypatch.setattr(quickscorer, "MIN_TREES", 1)


def _tree(thresholds, missing_left):
    """x0 <= t0 -> (x1 <= t1 -> leaf 1 | leaf 2) | (x0 <= t2 -> leaf 3 | leaf 4),
    stored root, right split, leaves in a scrambled order."""
    nodes = np.zeros(7, dtype=NODE_DTYPE)
    #                  0  1  2  3  4  5  6
    nodes["is_leaf"] = [0, 0, 1, 0, 1, 1, 1]
    nodes["feature_idx"] = [0, 0, -1, 1, -1, -1, -1]
    nodes["num_threshold"] = [thresholds[0], thresholds[2], 0, thresholds[1], 0, 0, 0]
    nodes["missing_go_to_left"] = [missing_left[0], missing_left[2], 0, missing_left[1], 0, 0, 0]
    nodes["left"] = [3, 5, -1, 4, -1, -1, -1]
    nodes["right"] = [1, 2, -1, 6, -1, -1, -1]
    nodes["value"] = [0, 0, 4.0, 0, 1.0, 3.0, 2.0]
    return nodes


def test_masks_and_leaf_order_by_hand(any_number_of_trees):
    tree = _tree([0.5, -1.0, 2.0], [1, 0, 0])
    single_leaf = np.zeros(1, dtype=NODE_DTYPE)
    single_leaf["is_leaf"] = 1
    single_leaf["value"] = -7.0
    nodes, starts = concatenate_trees([tree, single_leaf, tree])
    tables = compact_trees(nodes, starts).quickscorer
    # Leaves from the left: 1, 2, 3, 4 (nodes 4, 6, 5, 2); the single leaf.
    assert tables.split_masks.dtype == np.uint32
    np.testing.assert_array_equal(tables.leaf_values.reshape(3, 32)[:, :4],
                                  [[1, 2, 3, 4], [-7, 0, 0, 0], [1, 2, 3, 4]])
    # Column 0: the root (threshold 0.5, clears leaves 1 and 2) and its right
    # split (2.0, clears leaf 3), of trees 0 and 2, by threshold; column 1:
    # the left split (-1.0, clears leaf 1).
    np.testing.assert_array_equal(tables.feature_starts, [0, 4, 6])
    np.testing.assert_array_equal(tables.thresholds, [0.5, 0.5, 2.0, 2.0, -1.0, -1.0])
    np.testing.assert_array_equal(tables.split_trees, [0, 2, 0, 2, 0, 2])
    full = 0xFFFFFFFF
    np.testing.assert_array_equal(tables.split_masks, [full & ~0b011] * 2 + [full & ~0b100] * 2
                                  + [full & ~0b001] * 2)
    # NaN goes right at the left split (column 1) and the right split (column 0).
    np.testing.assert_array_equal(tables.missing_starts, [0, 2, 4])
    np.testing.assert_array_equal(tables.missing_trees, [0, 2, 0, 2])
    np.testing.assert_array_equal(tables.missing_masks, [full & ~0b100] * 2 + [full & ~0b001] * 2)
    values = [-np.inf, -1.0, np.nextafter(-1.0, 0), 0.5, np.nextafter(0.5, 1), 2.0, 3.0,
              np.inf, np.nan]
    X = np.array([[a, b] for a in values for b in values])
    expected = reference_predict(nodes, starts, X, init=0.25)
    assert_bits_equal(predict_raw(nodes, starts, X, init=0.25), expected)
    # Spot checks of the rule: (0.5, -1.0) -> leaf 1, (0.5, NaN) -> leaf 2,
    # (2.0, .) -> leaf 3, (NaN, .) -> left at the root, (3.0, .) -> leaf 4.
    row = {(a, b): i for i, (a, b) in enumerate(map(tuple, X))}
    assert expected[row[0.5, -1.0]] == 0.25 + 2 * 1.0 - 7.0
    assert expected[[i for (a, b), i in row.items() if a == 0.5 and np.isnan(b)][0]] == 0.25 + 2 * 2.0 - 7.0
    assert expected[row[2.0, 3.0]] == 0.25 + 2 * 3.0 - 7.0
    assert expected[row[3.0, 3.0]] == 0.25 + 2 * 4.0 - 7.0


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=60, docs_per_query=40, n_features=10,
                             missing_rate=0.15, random_state=3)
    rng = np.random.default_rng(0)
    X_test = make_ranking(n_queries=30, docs_per_query=20, n_features=10, missing_rate=0.15,
                          random_state=4)[0]
    X_test[rng.random(X_test.shape) < 0.02] = np.inf
    X_test[rng.random(X_test.shape) < 0.02] = -np.inf
    return X, y, qid, X_test


@pytest.mark.parametrize("leaves, mask_dtype", [(2, np.uint32), (31, np.uint32), (32, np.uint32),
                                                (33, np.uint64), (64, np.uint64), (65, None)])
def test_fitted_models_of_every_width(data, leaves, mask_dtype):
    X, y, qid, X_test = data
    model = LambdaMARTRanker(n_estimators=12, max_leaf_nodes=leaves, min_samples_leaf=2,
                             early_stopping=False, random_state=0).fit(X, y, qid=qid)
    ens = model._tree_ensemble()
    grown = np.diff(np.append(ens.tree_starts, ens.nodes.shape[0])) // 2 + 1
    assert grown.max() == leaves  # the widest tree has all its leaves
    tables = compact_trees(ens.nodes, ens.tree_starts).quickscorer
    if mask_dtype is None:
        assert tables is None  # walked
    else:
        assert tables.split_masks.dtype == mask_dtype
    expected = reference_predict(ens.nodes, ens.tree_starts, X_test, init=ens.baseline)
    assert_bits_equal(model.predict(X_test), expected)


@pytest.mark.parametrize("n_rows", [1, LANES - 1, LANES, LANES + 1, 3 * LANES + 5, CHUNK - 1,
                                    CHUNK, CHUNK + LANES + 2])
def test_any_number_of_rows(data, n_rows):
    X, y, qid, X_test = data
    model = LambdaMARTRanker(n_estimators=8, early_stopping=False, random_state=0).fit(
        X, y, qid=qid)
    ens = model._tree_ensemble()
    rows = np.resize(X_test, (n_rows, X_test.shape[1]))
    assert_bits_equal(model.predict(rows),
                      reference_predict(ens.nodes, ens.tree_starts, rows, init=ens.baseline))


def test_only_leaves_and_a_column_of_nan(any_number_of_trees):
    single_leaf = np.zeros(1, dtype=NODE_DTYPE)
    single_leaf["is_leaf"] = 1
    single_leaf["value"] = 0.5
    nodes, starts = concatenate_trees([single_leaf, single_leaf])
    assert compact_trees(nodes, starts).quickscorer.thresholds.shape == (0,)
    assert_bits_equal(predict_raw(nodes, starts, np.zeros((3, 0))), np.ones(3))
    # Every lane NaN, or all but one: NaN's directions only.
    tree = _tree([0.5, -1.0, 2.0], [0, 1, 0])
    nodes, starts = concatenate_trees([tree])
    X = np.full((LANES + 3, 2), np.nan)
    X[5] = [1.0, 1.0]
    assert_bits_equal(predict_raw(nodes, starts, X), reference_predict(nodes, starts, X))


def test_walked_instead(any_number_of_trees):
    tree = _tree([0.5, np.nan, 2.0], [1, 1, 0])  # a NaN threshold
    assert compact_trees(*concatenate_trees([tree])).quickscorer is None
    tree = _tree([0.5, -1.0, 2.0], [1, 1, 0])
    tree["is_categorical"][3] = 1
    assert compact_trees(*concatenate_trees([tree])).quickscorer is None


def test_walked_where_no_faster(data):
    X, y, qid, X_test = data
    # Fewer than MIN_TREES trees (staged_predict's single trees).
    tree = _tree([0.5, -1.0, 2.0], [1, 0, 0])
    nodes, starts = concatenate_trees([tree] * (quickscorer.MIN_TREES - 1))
    assert compact_trees(nodes, starts).quickscorer is None
    assert compact_trees(*concatenate_trees([tree] * quickscorer.MIN_TREES)).quickscorer is not None
    # 64-bit masks on trees of depth 6 (full depth-wise trees: 64 leaves).
    shallow = LambdaMARTRanker(n_estimators=quickscorer.MIN_TREES, grow_policy="depthwise",
                               max_depth=6, max_leaf_nodes=64, min_samples_leaf=2,
                               early_stopping=False, random_state=0).fit(X, y, qid=qid)
    ens = shallow._tree_ensemble()
    trees = compact_trees(ens.nodes, ens.tree_starts)
    assert trees.depths.mean() < quickscorer.MIN_DEPTH_64
    assert np.diff(np.append(ens.tree_starts, ens.nodes.shape[0])).max() > 2 * 32 - 1
    assert trees.quickscorer is None
    assert_bits_equal(shallow.predict(X_test), reference_predict(
        ens.nodes, ens.tree_starts, X_test, init=ens.baseline))


@needs_two_threads
def test_one_and_two_threads(data):
    X, y, qid, X_test = data
    model = LambdaMARTRanker(n_estimators=10, early_stopping=False, random_state=0).fit(
        X, y, qid=qid)
    ens = model._tree_ensemble()
    rows = np.resize(X_test, (3 * CHUNK + 7, X_test.shape[1]))
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = ens.predict(rows)
        numba.set_num_threads(2)
        with parallel_kernels_only() as picked:
            two = ens.predict(rows)
    finally:
        numba.set_num_threads(old)
    assert_ran_in_parallel(picked, "_predict_quickscorer_blocks")
    assert_bits_equal(one, two)
    assert_bits_equal(one, reference_predict(ens.nodes, ens.tree_starts, rows,
                                             init=ens.baseline))
