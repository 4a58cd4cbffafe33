"""A grown tree made from node tables in one call.

The compiled loops (:mod:`.compiled_grower`, :mod:`.compiled_symmetric`)
leave a tree as rows of two node tables, one of integers and one of floats
(the columns named in :mod:`.compiled_grower`), plus the left categories of
categorical splits. :func:`tree_of_tables` turns them into the flat
``NODE_DTYPE`` tree and its leaves. Made with NumPy, column by column, the
Python around each compiled tree took 256 us (LightGBM's example; 180 us on
MQ2008), a tenth of a 500-tree fit of that data; with this call, 114 us
(82 us). The Python loop of :class:`~.grower.TreeGrower` writes its nodes
into the same tables and calls it too (``TreeGrower._finalize``), so there
is one place where a tree's fields are filled.
"""

import numpy as np
from numba import njit

from .common import BITSET_WORDS, NODE_DTYPE
from .compiled_grower import (
    BIN,
    CATEGORICAL,
    COUNT,
    DEPTH,
    FEATURE,
    GAIN,
    L2,
    LEFT,
    MISSING_LEFT,
    RIGHT,
    START,
    STOP,
    SUM_G,
    SUM_H,
)

__all__ = ["threshold_table", "tree_of_tables"]


def threshold_table(bin_thresholds, n_features):
    """The raw-value thresholds of every feature as one padded table.

    Parameters
    ----------
    bin_thresholds : list of ndarray or None
        ``BinMapper.bin_thresholds_``: feature ``f``'s bin ``b`` holds
        values up to ``bin_thresholds[f][b]``.
    n_features : int

    Returns
    -------
    table : ndarray of shape (n_features, max thresholds), dtype float64
        Row ``f`` starts with ``bin_thresholds[f]``.
    lengths : ndarray of shape (n_features,), dtype int64
        How many thresholds each feature has; -1 for every feature if
        ``bin_thresholds`` is None (the splits then keep a NaN threshold).
    """
    if bin_thresholds is None:
        return np.zeros((n_features, 0)), np.full(n_features, -1, dtype=np.int64)
    lengths = np.array([len(t) for t in bin_thresholds], dtype=np.int64)
    table = np.zeros((n_features, max(1, int(lengths.max(initial=0)))))
    for f, thresholds in enumerate(bin_thresholds):
        table[f, :lengths[f]] = thresholds
    return table, lengths


@njit(cache=True)
def tree_of_tables(ints, floats, bits, n_nodes, shrinkage, thresholds, n_thresholds):
    """The tree in the first ``n_nodes`` rows of a loop's node tables.

    Parameters
    ----------
    ints, floats, bits : ndarray
        The loop's node tables (:class:`~.compiled_grower.LoopState`).
    n_nodes : int
    shrinkage : float
        The learning rate, applied to the leaf values.
    thresholds, n_thresholds : ndarray
        :func:`threshold_table`.

    Returns
    -------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
    leaf_nodes : ndarray of shape (n_leaves,), dtype int32
        The leaves' node ids, ascending.
    leaf_values : ndarray of shape (n_leaves,), dtype float64
        ``-sum_g / (sum_h + l2) * shrinkage``, 0 where the denominator is
        not positive.
    leaf_starts, leaf_stops : ndarray of shape (n_leaves,), dtype int64
        Each leaf's range of rows in the loop's partitioned indices.
    """
    nodes = np.zeros(n_nodes, dtype=NODE_DTYPE)
    n_leaves = 0
    for k in range(n_nodes):
        if ints[k, LEFT] < 0:
            n_leaves += 1
    leaf_nodes = np.empty(n_leaves, dtype=np.int32)
    leaf_values = np.empty(n_leaves)
    leaf_starts = np.empty(n_leaves, dtype=np.int64)
    leaf_stops = np.empty(n_leaves, dtype=np.int64)
    leaf = 0
    for k in range(n_nodes):
        node = nodes[k]
        node["count"] = ints[k, COUNT]
        node["depth"] = ints[k, DEPTH]
        node["num_threshold"] = np.nan
        if ints[k, LEFT] < 0:
            node["is_leaf"] = 1
            node["feature_idx"] = -1
            node["left"] = -1
            node["right"] = -1
            den = floats[k, SUM_H] + floats[k, L2]
            value = -floats[k, SUM_G] / den * shrinkage if den > 0 else 0.0
            node["value"] = value
            leaf_nodes[leaf] = k
            leaf_values[leaf] = value
            leaf_starts[leaf] = ints[k, START]
            leaf_stops[leaf] = ints[k, STOP]
            leaf += 1
            continue
        feature = ints[k, FEATURE]
        bin_threshold = ints[k, BIN]
        node["gain"] = floats[k, GAIN]
        node["feature_idx"] = feature
        node["bin_threshold"] = bin_threshold
        node["missing_go_to_left"] = ints[k, MISSING_LEFT]
        node["left"] = ints[k, LEFT]
        node["right"] = ints[k, RIGHT]
        if ints[k, CATEGORICAL] != 0:
            node["is_categorical"] = 1
            for w in range(BITSET_WORDS):
                node["left_categories"][w] = bits[k, w]
        elif n_thresholds[feature] >= 0:
            # The last value bin as threshold means "all values left".
            node["num_threshold"] = (thresholds[feature, bin_threshold]
                                     if bin_threshold < n_thresholds[feature] else np.inf)
    return nodes, leaf_nodes, leaf_values, leaf_starts, leaf_stops
