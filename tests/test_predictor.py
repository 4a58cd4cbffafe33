"""Tests of ensemble prediction from raw and binned values."""

import numpy as np
import pytest
from _threads import assert_ran_in_parallel, needs_two_threads, parallel_kernels_only
from scipy import sparse

from sklearn_ltr._gbdt import predictor
from sklearn_ltr._gbdt.binning import BinMapper
from sklearn_ltr._gbdt.common import NODE_DTYPE
from sklearn_ltr._gbdt.grower import TreeGrower, _update_raw_predictions
from sklearn_ltr._gbdt.node_rows import NodeRows
from sklearn_ltr._gbdt.predictor import (
    concatenate_trees,
    predict_raw,
)
from sklearn_ltr._utils.threads import numba_threads

from _engine_helpers import predict_binned


def _boost(X, y, n_trees=8, sample_rate=1.0, seed=0):
    """A tiny least-squares boosting loop; returns trees and training scores."""
    assert np.isfinite(y).all(), "NaN targets would give trees of one leaf"
    mapper = BinMapper(max_bins=31, random_state=0).fit(X)
    Xb = mapper.transform(X)
    grower = TreeGrower(NodeRows(Xb, mapper.missing_values_bin_idx_), mapper.n_bins_non_missing_,
                        mapper.missing_values_bin_idx_, bin_thresholds=mapper.bin_thresholds_,
                        max_leaf_nodes=15, min_samples_leaf=10, shrinkage=0.3)
    rng = np.random.default_rng(seed)
    raw = np.zeros(len(y))
    trees, staged = [], []
    for _ in range(n_trees):
        g = (raw - y).astype(np.float32)
        h = np.ones_like(g)
        rows = None
        if sample_rate < 1:
            rows = np.flatnonzero(rng.random(len(y)) < sample_rate)
        tree = grower.grow(g, h, sample_indices=rows)
        if rows is None:
            _update_raw_predictions(raw, tree.partitioned_indices, tree.leaf_starts,
                                    tree.leaf_stops, tree.leaf_values)
        else:
            # Rows outside the sample must be scored by prediction.
            raw += predict_raw(tree.nodes, np.zeros(1, np.int64), X)
        trees.append(tree.nodes)
        staged.append(raw.copy())
    return trees, raw, staged, mapper, Xb


def _data(n=2000, seed=0, sparse_zeros=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    X[:, 4] = rng.integers(0, 3, n)
    if sparse_zeros:
        X[rng.random(X.shape) < 0.6] = 0.0
    else:
        X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) * 2 + (np.nan_to_num(X[:, 1]) > 0) + np.nan_to_num(X[:, 4])
         + rng.standard_normal(n))
    return X, y


def test_raw_binned_and_training_assignment_agree():
    X, y = _data()
    trees, raw, _, mapper, Xb = _boost(X, y)
    nodes, starts = concatenate_trees(trees)
    np.testing.assert_allclose(predict_raw(nodes, starts, X), raw, rtol=0, atol=1e-12)
    np.testing.assert_allclose(predict_binned(nodes, starts, Xb, mapper.missing_values_bin_idx_),
                               raw, rtol=0, atol=1e-12)
    # C-ordered binned data gives the same.
    np.testing.assert_allclose(
        predict_binned(nodes, starts, np.ascontiguousarray(Xb), mapper.missing_values_bin_idx_),
        raw, rtol=0, atol=1e-12)


def test_new_data_raw_equals_binned():
    X, y = _data()
    trees, _, _, mapper, _ = _boost(X, y, sample_rate=0.7)
    X_new, _ = _data(n=1000, seed=1)
    X_new[:5, 0] = [np.inf, -np.inf, 1e300, -1e300, 0.0]
    nodes, starts = concatenate_trees(trees)
    np.testing.assert_allclose(
        predict_raw(nodes, starts, X_new),
        predict_binned(nodes, starts, mapper.transform(X_new), mapper.missing_values_bin_idx_),
        rtol=0, atol=1e-12)


def test_staged_prediction_with_first_trees():
    X, y = _data(seed=2)
    trees, _, staged, _, _ = _boost(X, y, n_trees=5)
    nodes, starts = concatenate_trees(trees)
    for m in range(6):
        expected = staged[m - 1] if m else np.zeros(len(y))
        np.testing.assert_allclose(predict_raw(nodes, starts, X, n_trees=m), expected, atol=1e-12)
    np.testing.assert_allclose(predict_raw(nodes, starts, X, n_trees=2, init=1.5),
                               staged[1] + 1.5, atol=1e-12)
    with pytest.raises(ValueError, match="n_trees"):
        predict_raw(nodes, starts, X, n_trees=6)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_prediction_matches_dense(fmt, monkeypatch):
    X, y = _data(sparse_zeros=True, seed=3)
    trees, raw, _, _, _ = _boost(X, y)
    nodes, starts = concatenate_trees(trees)
    Xs = getattr(sparse, f"{fmt}_matrix")(X)
    monkeypatch.setattr(predictor, "_SPARSE_CHUNK_CELLS", 7 * X.shape[1])  # many chunks
    np.testing.assert_allclose(predict_raw(nodes, starts, Xs), raw, atol=1e-12)


def test_hand_built_tree():
    # Root: x0 <= 0.5 (NaN right); left leaf -1; right: x1 <= 2 (NaN left) -> 2 / 3.
    nodes = np.zeros(5, dtype=NODE_DTYPE)
    nodes["is_leaf"] = [0, 1, 0, 1, 1]
    nodes["feature_idx"] = [0, -1, 1, -1, -1]
    nodes["num_threshold"] = [0.5, np.nan, 2.0, np.nan, np.nan]
    nodes["bin_threshold"] = [0, 0, 1, 0, 0]
    nodes["missing_go_to_left"] = [0, 0, 1, 0, 0]
    nodes["left"] = [1, -1, 3, -1, -1]
    nodes["right"] = [2, -1, 4, -1, -1]
    nodes["value"] = [0, -1, 0, 2, 3]
    X = np.array([[0.5, 9], [0.6, 2.0], [0.6, 2.1], [np.nan, np.nan], [-1, np.nan]])
    expected = np.array([-1, 2, 3, 2, -1.0])
    two, starts = concatenate_trees([nodes, nodes])
    np.testing.assert_array_equal(predict_raw(nodes, np.zeros(1, np.int64), X), expected)
    np.testing.assert_array_equal(predict_raw(two, starts, X), 2 * expected)
    Xb = np.array([[0, 0], [1, 1], [1, 2], [7, 7], [0, 7]], dtype=np.uint8)
    np.testing.assert_array_equal(predict_binned(two, starts, Xb, 7), 2 * expected)


@needs_two_threads
def test_same_predictions_on_one_and_two_threads():
    X, y = _data(n=5000, seed=4)
    trees, _, _, mapper, Xb = _boost(X, y)
    nodes, starts = concatenate_trees(trees)
    missing_bin = mapper.missing_values_bin_idx_

    def predictions():
        # All trees by QuickScorer's lists; the first ones only by the walk.
        return (predict_raw(nodes, starts, X), predict_raw(nodes, starts, sparse.csr_matrix(X)),
                predict_raw(nodes, starts, X, n_trees=starts.shape[0] - 1),
                predict_binned(nodes, starts, Xb, missing_bin))

    with numba_threads(1):  # the serial twins
        serial = predictions()
    # 5000 rows and 8 trees are too few for the raw kernel to go parallel by itself.
    with numba_threads(2), parallel_kernels_only() as picked:
        parallel = predictions()
    assert_ran_in_parallel(picked, "_predict_blocks", "_predict_quickscorer_blocks",
                           "_predict_binned_rows")
    for one, two in zip(serial, parallel, strict=True):
        np.testing.assert_array_equal(one, two)


def test_bad_nodes_dtype():
    with pytest.raises(ValueError, match="NODE_DTYPE"):
        predict_raw(np.zeros(3), np.zeros(1, np.int64), np.zeros((2, 2)))
