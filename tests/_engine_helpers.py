"""Shortcuts into the engine that only the tests use: grow one tree from
binned arrays, find one node's best split, predict binned rows."""

import numpy as np

from sklearn_ltr._gbdt.grower import TreeGrower
from sklearn_ltr._gbdt.node_rows import NodeRows
from sklearn_ltr._gbdt.predictor import _check_ensemble, _predict_binned
from sklearn_ltr._gbdt.splitting import find_best_splits


def grow_tree(X_binned, gradients, hessians, n_bins_non_missing, missing_values_bin_idx,
              sample_indices=None, feature_mask=None, bin_thresholds=None,
              constant_hessian=None, **params):
    """Grow one tree with a fresh :class:`TreeGrower` on a fresh
    :class:`NodeRows` of ``X_binned``.

    ``constant_hessian`` goes to the NodeRows (its constant-hessian
    histograms); ``sample_indices`` and ``feature_mask`` to
    :meth:`TreeGrower.grow`; the other ``params`` (``max_leaf_nodes``, ...)
    to the grower.
    """
    rows = NodeRows(X_binned, missing_values_bin_idx, n_bins_non_missing,
                    constant_hessian=constant_hessian)
    grower = TreeGrower(rows, n_bins_non_missing, missing_values_bin_idx,
                        bin_thresholds=bin_thresholds, **params)
    return grower.grow(gradients, hessians, sample_indices=sample_indices,
                       feature_mask=feature_mask)


def find_best_split(hist, sum_g, sum_h, count, n_bins_non_missing, missing_bin,
                    feature_mask, min_samples_leaf, min_hessian_to_split,
                    min_gain_to_split, l2_regularization, sibling=None, is_categorical=None):
    """``find_best_splits`` of a single node (``hist`` and ``sibling`` as
    there); returns its split tuple."""
    return find_best_splits(
        [(hist, sibling, sum_g, sum_h, count)], n_bins_non_missing, missing_bin, feature_mask,
        min_samples_leaf, min_hessian_to_split, min_gain_to_split, l2_regularization,
        is_categorical=is_categorical)[0]


def predict_binned(nodes, tree_starts, X_binned, missing_values_bin_idx, n_trees=None,
                   init=0.0):
    """Raw scores of binned rows from the first ``n_trees`` trees (all if
    None) of concatenated ``nodes``, plus ``init``."""
    tree_starts = _check_ensemble(nodes, tree_starts, n_trees)
    out = np.full(X_binned.shape[0], init, dtype=np.float64)
    _predict_binned(nodes, tree_starts, X_binned, out, missing_values_bin_idx)
    return out
