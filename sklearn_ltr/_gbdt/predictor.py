"""This module contains the njitted routines that predict with an ensemble of trees.

An ensemble is one flat ``NODE_DTYPE`` array, the concatenation of every
tree's nodes, plus ``tree_starts``: the offset of each tree's root. Child
indices (``left``/``right``) are relative to their own tree's start, so a
tree's node array is self-contained and can be concatenated as is.
Predicting with the first ``m`` trees only (``staged_predict``) is
``tree_starts[:m]``.

The kernels run ``prange`` over rows; each row sums its trees in order, so
the result does not depend on the number of threads.
"""

import numpy as np
from numba import njit, prange
from scipy import sparse

from .._parallel import pick, serial_twin
from .common import NODE_DTYPE, X_DTYPE, readonly_view

# Sparse input is densified this many cells at a time (32 MB of float64).
_SPARSE_CHUNK_CELLS = 4_000_000


@njit(inline="always", cache=True)
def _leaf_of_row(nodes, base, X, i):
    """Index in ``nodes`` of the leaf that row ``i`` of raw ``X`` reaches in
    the tree rooted at ``base``: left iff ``x <= num_threshold``, NaN to
    ``missing_go_to_left``'s side."""
    k = base
    while not nodes[k]["is_leaf"]:
        x = X[i, nodes[k]["feature_idx"]]
        if np.isnan(x):
            go_left = nodes[k]["missing_go_to_left"] != 0
        else:
            go_left = x <= nodes[k]["num_threshold"]
        k = base + (nodes[k]["left"] if go_left else nodes[k]["right"])
    return k


@njit(parallel=True, cache=True)
def _predict_raw(nodes, tree_starts, X, out):
    """Add the ensemble's prediction for raw values to ``out``.

    A row goes left at a split iff ``x <= num_threshold``; NaN follows
    ``missing_go_to_left``.

    Parameters
    ----------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
        Concatenated trees.
    tree_starts : ndarray of shape (n_trees,), dtype int64
        Index of each tree's root in ``nodes``.
    X : ndarray of shape (n_rows, n_features), dtype float64
        Raw values (C order is fastest).
    out : ndarray of shape (n_rows,), dtype float64
        Predictions, updated in place.
    """
    n_rows = X.shape[0]
    n_trees = tree_starts.shape[0]
    for i in prange(n_rows):
        acc = 0.0
        for t in range(n_trees):
            acc += nodes[_leaf_of_row(nodes, tree_starts[t], X, i)]["value"]
        out[i] += acc


@njit(parallel=True, cache=True)
def _predict_leaf_nodes(nodes, tree_starts, X, out):
    """Write the leaf each row reaches in each tree, by the rule of
    :func:`_predict_raw`, as the leaf's index within its tree, into
    ``out`` of shape (n_rows, n_trees)."""
    n_rows = X.shape[0]
    n_trees = tree_starts.shape[0]
    for i in prange(n_rows):
        for t in range(n_trees):
            out[i, t] = _leaf_of_row(nodes, tree_starts[t], X, i) - tree_starts[t]


@njit(parallel=True, cache=True)
def _predict_binned_rows(nodes, tree_starts, X_binned, out, missing_values_bin_idx):
    """Add the ensemble's prediction for binned values to ``out``.

    A row goes left at a split iff its bin is ``<= bin_threshold``; the
    missing bin follows ``missing_go_to_left``.

    Parameters
    ----------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
        Concatenated trees.
    tree_starts : ndarray of shape (n_trees,), dtype int64
        Index of each tree's root in ``nodes``.
    X_binned : ndarray of shape (n_rows, n_features), dtype uint8
        Binned values, binned with the mapper used in training.
    out : ndarray of shape (n_rows,), dtype float64
        Predictions, updated in place.
    missing_values_bin_idx : int
        Bin of missing values.
    """
    n_rows = X_binned.shape[0]
    n_trees = tree_starts.shape[0]
    for i in prange(n_rows):
        acc = 0.0
        for t in range(n_trees):
            base = tree_starts[t]
            k = base
            while not nodes[k]["is_leaf"]:
                b = X_binned[i, nodes[k]["feature_idx"]]
                if b == missing_values_bin_idx:
                    go_left = nodes[k]["missing_go_to_left"] != 0
                else:
                    go_left = b <= nodes[k]["bin_threshold"]
                if go_left:
                    k = base + nodes[k]["left"]
                else:
                    k = base + nodes[k]["right"]
            acc += nodes[k]["value"]
        out[i] += acc


_predict_raw_serial = serial_twin(_predict_raw)
_predict_binned_rows_serial = serial_twin(_predict_binned_rows)

# Predictions of fewer (rows x trees) than this run in the serial twin of
# _predict_raw (see sklearn_ltr._parallel): about 20 ns per row and tree of
# 31 leaves, so under 0.4 ms of work, where threads save a fraction of a
# millisecond; and a small fit's first predict compiles no parallel kernel.
_MIN_PARALLEL_ROW_TREES = 20_000


def _predict_binned(nodes, tree_starts, X_binned, out, missing_values_bin_idx):
    """:func:`_predict_binned_rows` in its parallel or serial version (by the
    size of the work, as in :func:`predict_raw`), on read-only views of the
    trees: one compiled specialisation serves the booster's growing trees
    and a fitted model's frozen ones."""
    predict = pick(_predict_binned_rows, _predict_binned_rows_serial,
                   X_binned.shape[0] * tree_starts.shape[0], _MIN_PARALLEL_ROW_TREES)
    predict(readonly_view(nodes), readonly_view(tree_starts), X_binned, out,
            missing_values_bin_idx)


def concatenate_trees(trees):
    """Concatenate node arrays of several trees into one ensemble.

    Parameters
    ----------
    trees : list of ndarray of dtype NODE_DTYPE
        Node arrays, one per tree (e.g. ``GrownTree.nodes``).

    Returns
    -------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
        All nodes.
    tree_starts : ndarray of shape (n_trees,), dtype int64
        Offset of each tree's root in ``nodes``.
    """
    sizes = np.array([len(t) for t in trees], dtype=np.int64)
    tree_starts = np.zeros(len(trees), dtype=np.int64)
    if len(trees) > 1:
        tree_starts[1:] = np.cumsum(sizes[:-1])
    if len(trees):
        nodes = np.concatenate(trees).astype(NODE_DTYPE, copy=False)
    else:
        nodes = np.zeros(0, dtype=NODE_DTYPE)
    return nodes, tree_starts


def _check_ensemble(nodes, tree_starts, n_trees):
    if nodes.dtype != NODE_DTYPE:
        raise ValueError("nodes must have dtype NODE_DTYPE.")
    tree_starts = np.asarray(tree_starts, dtype=np.int64)
    if n_trees is not None:
        if not 0 <= n_trees <= tree_starts.shape[0]:
            raise ValueError(
                f"n_trees must be in [0, {tree_starts.shape[0]}], got {n_trees}."
            )
        tree_starts = tree_starts[:n_trees]
    return tree_starts


def predict_raw(nodes, tree_starts, X, n_trees=None, init=0.0):
    """Predict raw scores from raw feature values.

    Parameters
    ----------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
        Concatenated trees (see :func:`concatenate_trees`).
    tree_starts : ndarray of shape (n_trees_total,), dtype int64
        Offset of each tree's root.
    X : ndarray or scipy sparse matrix of shape (n_rows, n_features)
        Raw values; NaN is missing, sparse implicit entries are 0.0. Sparse
        input is densified a bounded number of rows at a time.
    n_trees : int, default=None
        Use only the first ``n_trees`` trees; None uses all.
    init : float, default=0.0
        Baseline added to every prediction.

    Returns
    -------
    raw : ndarray of shape (n_rows,), dtype float64
        Raw scores.
    """
    tree_starts = _check_ensemble(nodes, tree_starts, n_trees)
    # Read-only views whatever the caller's arrays are (a fitted model's
    # frozen nodes, a single tree of staged_predict, the user's X): one
    # compiled specialisation of _predict_raw serves them all.
    nodes = readonly_view(nodes)
    tree_starts = readonly_view(tree_starts)
    n_rows = X.shape[0]
    out = np.full(n_rows, init, dtype=np.float64)
    predict = pick(_predict_raw, _predict_raw_serial, n_rows * tree_starts.shape[0],
                   _MIN_PARALLEL_ROW_TREES)
    if sparse.issparse(X):
        X = X.tocsr()
        chunk = max(1, _SPARSE_CHUNK_CELLS // max(1, X.shape[1]))
        for start in range(0, n_rows, chunk):
            stop = min(start + chunk, n_rows)
            dense = X[start:stop].toarray().astype(X_DTYPE, copy=False)
            predict(nodes, tree_starts, readonly_view(dense), out[start:stop])
    else:
        X = np.ascontiguousarray(X, dtype=X_DTYPE)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}.")
        predict(nodes, tree_starts, readonly_view(X), out)
    return out


def predict_binned(nodes, tree_starts, X_binned, missing_values_bin_idx, n_trees=None,
                   init=0.0):
    """Predict raw scores from binned feature values.

    Parameters
    ----------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
        Concatenated trees.
    tree_starts : ndarray of shape (n_trees_total,), dtype int64
        Offset of each tree's root.
    X_binned : ndarray of shape (n_rows, n_features), dtype uint8
        Binned values (either memory order).
    missing_values_bin_idx : int
        Bin of missing values.
    n_trees : int, default=None
        Use only the first ``n_trees`` trees; None uses all.
    init : float, default=0.0
        Baseline added to every prediction.

    Returns
    -------
    raw : ndarray of shape (n_rows,), dtype float64
        Raw scores.
    """
    tree_starts = _check_ensemble(nodes, tree_starts, n_trees)
    out = np.full(X_binned.shape[0], init, dtype=np.float64)
    _predict_binned(nodes, tree_starts, X_binned, out, missing_values_bin_idx)
    return out
