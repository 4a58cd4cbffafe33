"""This module contains the njitted routines that find and apply node splits.

The gain of splitting a node into left (L) and right (R) children is the
usual second-order gain without the 1/2 factor, as in LightGBM::

    gain = G_L**2 / (H_L + l2) + G_R**2 / (H_R + l2) - G**2 / (H + l2)

and a split is kept only if ``gain > min_gain_to_split`` (LightGBM's
``min_gain_to_split`` has the same meaning). Each child must hold at least
``min_samples_leaf`` rows and a sum of hessians of at least
``min_hessian_to_split``.

A split on feature ``f`` at bin ``b`` sends value bins ``<= b`` left. If the
node has rows with missing values for ``f``, both directions of the missing
bin are tried at every threshold, plus "all values left, missing right"
(``b`` is the last value bin); otherwise missing values (at predict time)
go to the child with more training rows.

Features are scanned in parallel, the two children of a split in the same
parallel region (see :func:`find_best_splits`), each feature by the same
serial loops over its bins, so the result does not depend on the number of
threads.

Ties in gain are broken deterministically: lowest feature index, then lowest
bin, then missing-right before missing-left.

Categorical features are scanned by :func:`~.categorical.best_categorical_split`
instead; their best split is a set of categories (bins) that go left.
"""

import numba
import numpy as np
from numba import get_thread_id, njit, prange

from .._utils.parallel import per_thread_scratch, pick, serial_twin
from .categorical import best_categorical_split, left_categories
from .common import BITSET_DTYPE, BITSET_WORDS, bitset_below, in_bitset
from .constraints import _scan_feature_bounded
from .scan_parts import (
    any_threshold_leaves_enough_rows,
    gain_cannot_beat,
    leaf_term,
    screen_bound,
    start_of_left_sums,
    subtract_sibling,
    threshold_gain,
)


# error_model="numpy": a division by a non-positive hessian sum gives inf or
# NaN, which the scan then discards, instead of a check that raises
# ZeroDivisionError.
@njit(cache=True, error_model="numpy")
def _best_split_one_feature(h, n_bins_nm, missing_bin, sum_g, sum_h, count,
                            parent_term, min_samples_leaf, min_hessian_to_split, l2, floor):
    """Scan the histogram of one feature for its best split.

    Parameters
    ----------
    h : ndarray of shape (n_bins, 4), dtype float64
        Histogram of the feature in the node.
    n_bins_nm : int
        Number of value (non-missing) bins of the feature.
    missing_bin : int
        Index of the missing bin.
    sum_g, sum_h, count : float
        Totals of the node.
    parent_term : float
        ``sum_g**2 / (sum_h + l2)``.
    min_samples_leaf : int
        Minimum rows per child.
    min_hessian_to_split : float
        Minimum sum of hessians per child.
    l2 : float
        L2 regularization.
    floor : float
        A gain another feature of the node has reached (``-inf`` for none).
        The thresholds shown to gain less need no gain computed (see
        :func:`~.scan_parts.gain_cannot_beat`), so a feature whose best gain
        is below ``floor`` may report a lower gain, or ``-inf``; a feature
        whose best gain reaches it reports that split exactly, as with
        ``-inf``.

    Returns
    -------
    best : tuple
        ``(gain, bin, missing_go_to_left, g_left, h_left, c_left)``; gain is
        ``-inf`` if no split satisfies the constraints.
    """
    has_missing = h[missing_bin, 2] > 0
    best_gain, best_bin, best_mleft, best_gl, best_hl, best_cl = _best_threshold_one_pass(
        h, n_bins_nm, missing_bin, has_missing, sum_g, sum_h, count, parent_term,
        min_samples_leaf, min_hessian_to_split, l2, floor)
    if not has_missing:
        # No missing value seen here: send NaN to the child with more rows.
        best_mleft = 1 if best_cl >= count - best_cl else 0
    return best_gain, best_bin, best_mleft, best_gl, best_hl, best_cl


@njit(cache=True, inline="always", error_model="numpy")
def _best_threshold_one_pass(h, n_bins_nm, missing_bin, has_missing, sum_g, sum_h, count,
                             parent_term, min_samples_leaf, min_hessian_to_split, l2, floor):
    """The best threshold of one feature, in one pass over its bins (see
    :func:`_best_split_one_feature`): the left sums grow bin by bin, and a
    threshold's gain is computed only where a child may hold enough rows
    and the screen of :func:`~.scan_parts.gain_cannot_beat` cannot rule it
    out; it is compared as soon as it is computed.

    Every feature takes this scan. It replaced, for features of more than
    32 bins, one that computed every threshold's gain on SIMD lanes and
    then took the first largest; with the screen this one takes less time
    at every number of bins measured (``benchmarks/results/fit_small.md``).
    """
    best_gain, best_bin, best_mleft, best_gl, best_hl, best_cl = -np.inf, 0, 0, 0.0, 0.0, 0.0
    bound = screen_bound(floor, parent_term, sum_h, l2, min_hessian_to_split)
    for d in range(2 if has_missing else 1):
        # d == 0: missing (if any) goes right; d == 1: missing goes left.
        gl, hl, cl = start_of_left_sums(h, missing_bin, d == 1)
        # With missing values and the missing bin right, "all values left"
        # is a threshold too (as in left_sums).
        last = n_bins_nm if has_missing and d == 0 else n_bins_nm - 1
        # The thresholds whose left child has fewer than min_samples_leaf
        # rows come first, those whose right child has too few last (the
        # left child's rows grow with the threshold): their gain is -inf,
        # so only their sums are accumulated, in the same order.
        b = 0
        while b < last:
            gl += h[b, 0]
            hl += h[b, 1]
            cl += h[b, 2]
            if cl >= min_samples_leaf:
                break
            b += 1
        while b < last and count - cl >= min_samples_leaf:
            if not gain_cannot_beat(gl, hl, sum_g, sum_h, l2, bound):
                gain = threshold_gain(gl, hl, cl, sum_g, sum_h, count, parent_term,
                                      min_samples_leaf, min_hessian_to_split, l2)
                if gain > best_gain:
                    best_gain, best_bin, best_mleft, best_gl, best_hl, best_cl = (
                        gain, b, d, gl, hl, cl)
                    bound = screen_bound(max(best_gain, floor), parent_term, sum_h, l2,
                                         min_hessian_to_split)
            b += 1
            if b < last:
                gl += h[b, 0]
                hl += h[b, 1]
                cl += h[b, 2]
    return best_gain, best_bin, best_mleft, best_gl, best_hl, best_cl


# The row of a thread's work space (see split_scratch) that holds the best
# gain it has found so far in each node being scanned.
_REACHED_ROW = 4

# Features scanned by one parallel item: one feature's scan (about 1 us) is
# too little work to be handed out alone.
_FEATURES_PER_ITEM = 4


@njit(parallel=True, cache=True)
def _best_split_of_each_feature(hist0, hist1, sibling0, sibling1, subtract, totals,
                                n_bins_non_missing, missing_bin, feature_mask, is_categorical,
                                min_samples_leaf, min_hessian_to_split, l2_regularization,
                                per_feature, scratch, order, monotonic_cst, node_bounds,
                                best_features, node_masks):
    """Scan every allowed feature of one or two nodes for its best split, in
    parallel over (block of features, node) pairs: one parallel region for
    both children of a split. The pairs run block by block, both nodes of a
    block together, so that a thread scans, in both nodes, the features
    whose histogram it has just built or subtracted (the histogram kernels
    split the built features between the threads in the same order; the
    blocks here also count features left out, so the shares match closely,
    not exactly: 105 against 112 features of 218 on LightGBM's example). Node by
    node, each thread read half of its histograms from the other core's
    cache, and the scans of LightGBM's example took 1.3 times as long.

    Node ``k`` (``k < per_feature.shape[0]``) has histogram ``hist<k>`` and
    totals ``totals[k] = (sum_g, sum_h, count)``. With ``subtract[k]``,
    ``hist<k>`` holds the parent's histogram and each allowed feature of it
    first becomes ``hist<k> - sibling<k>``, the node's own (see
    :func:`find_best_splits`; the other bins, never read, are left as they
    are). Row ``f`` of ``per_feature[k]`` receives
    ``(gain, bin, missing_go_to_left, g_left, h_left, c_left)`` of feature
    ``f``'s best split; the gain is ``-inf`` for features masked out or
    without a valid split (for a categorical feature, ``bin`` is the
    ``n_left`` of :func:`~.categorical.best_categorical_split`). Each
    thread passes the best gain it has found so far in the node to the
    next numeric scan as its ``floor`` (see :func:`_best_split_one_feature`):
    a feature whose best gain is below it may report a lower gain, or
    ``-inf``. The node's best split is the same as if every gain were
    computed, and on any number of threads; which of the other rows are
    exact depends on the threads, and nothing reads them.
    ``scratch[t]`` is thread ``t``'s work space (see :func:`split_scratch`):
    the constrained scan's, and, in row ``_REACHED_ROW``, its best gain so
    far in each node.
    ``order``: the features in the order the items take them
    (:func:`scan_order`; every feature once, -1 for an empty slot).
    Then ``best_features[k]`` receives node ``k``'s best feature
    (:func:`_first_best_feature`), found here rather than by a call per
    node.
    With monotonic constraints, ``monotonic_cst[f]`` is feature ``f``'s and
    ``node_bounds[k]`` is node ``k``'s ``(lower, upper, value)`` (see
    :mod:`.constraints`); without, both are None and the constrained scan is
    not compiled in.
    ``node_masks`` None: every node scans the features of ``feature_mask``.
    Otherwise node ``k`` scans those of ``node_masks[k]`` instead, and the
    scan clears there each numeric feature that has no threshold leaving
    both children ``min_samples_leaf`` rows
    (:func:`~.scan_parts.any_threshold_leaves_enough_rows`): no descendant
    of the node can split on it, so the nodes below need neither its
    histogram nor its scan. LightGBM skips such features in the same way
    (``is_splittable`` in its ``FeatureHistogram``, which also drops
    features whose best split gains nothing: that changes trees, this
    does not).
    """
    n_blocks = order.shape[0] // _FEATURES_PER_ITEM
    n_nodes = per_feature.shape[0]
    for t in range(scratch.shape[0]):
        for k in range(n_nodes):
            scratch[t, _REACHED_ROW, k] = -np.inf
    for item in prange(n_nodes * n_blocks):
        k = item % n_nodes
        first = (item // n_nodes) * _FEATURES_PER_ITEM
        work = scratch[get_thread_id()]
        reached = work[_REACHED_ROW]
        for slot in range(first, first + _FEATURES_PER_ITEM):
            f = order[slot]
            if f < 0:
                continue
            # Checked here rather than in the scans: an inlined scan that
            # returns at once still cost about 25 ns a feature, a third of
            # the scan time when most features are left out.
            if node_masks is None:
                allowed = feature_mask[f]
            else:
                allowed = node_masks[k, f]
            if not allowed:
                per_feature[k, f, 0] = -np.inf
                continue
            # numba prunes the branch a None argument rules out, so each
            # specialisation holds one scan only.
            if node_bounds is None:
                _scan_feature(hist0[f] if k == 0 else hist1[f],
                              sibling0[f] if k == 0 else sibling1[f], subtract[k],
                              n_bins_non_missing[f], missing_bin, is_categorical[f],
                              totals[k, 0], totals[k, 1], totals[k, 2], min_samples_leaf,
                              min_hessian_to_split, l2_regularization, per_feature[k, f],
                              reached[k])
                reached[k] = max(reached[k], per_feature[k, f, 0])
            else:
                _scan_feature_bounded(hist0[f] if k == 0 else hist1[f],
                                      sibling0[f] if k == 0 else sibling1[f], subtract[k],
                                      n_bins_non_missing[f], missing_bin, is_categorical[f],
                                      totals[k, 0], totals[k, 1], totals[k, 2],
                                      monotonic_cst[f], node_bounds[k, 0], node_bounds[k, 1],
                                      node_bounds[k, 2], min_samples_leaf, min_hessian_to_split,
                                      l2_regularization, per_feature[k, f], work)
            if (node_masks is not None and per_feature[k, f, 0] == -np.inf
                    and not is_categorical[f]
                    and not any_threshold_leaves_enough_rows(
                        hist0[f] if k == 0 else hist1[f], n_bins_non_missing[f], missing_bin,
                        totals[k, 2], min_samples_leaf)):
                node_masks[k, f] = 0
    for k in range(per_feature.shape[0]):
        best_features[k] = _first_best_feature(per_feature[k])


@njit(cache=True, inline="always")
def _scan_feature(hf, sf, subtract, n_bins_nm, missing_bin, categorical, sum_g, sum_h, count,
                  min_samples_leaf, min_hessian_to_split, l2_regularization, out, floor):
    """One allowed feature of :func:`_best_split_of_each_feature`: subtract
    the sibling's bins if asked (only the bins a scan reads: the value bins
    and the missing bin), then write its best split into ``out`` (exactly
    if its gain reaches ``floor``, see :func:`_best_split_one_feature`)."""
    if subtract:
        subtract_sibling(hf, sf, n_bins_nm, missing_bin)
    parent_term = leaf_term(sum_g, sum_h, l2_regularization)
    if categorical:
        gain, bin_, mleft, gl, hl, cl = best_categorical_split(
            hf, n_bins_nm, missing_bin, sum_g, sum_h, count, parent_term, min_samples_leaf,
            min_hessian_to_split, l2_regularization, -np.inf, np.inf)
    else:
        gain, bin_, mleft, gl, hl, cl = _best_split_one_feature(
            hf, n_bins_nm, missing_bin, sum_g, sum_h, count, parent_term, min_samples_leaf,
            min_hessian_to_split, l2_regularization, floor)
    out[0] = gain
    out[1] = bin_
    out[2] = mleft
    out[3] = gl
    out[4] = hl
    out[5] = cl


@njit(cache=True)
def _first_best_feature(per_feature):
    """The feature with the largest gain in ``per_feature``, the lowest index
    among equal gains (as a serial scan that replaces only on a strictly
    larger gain), or -1 if no gain exceeds ``-inf``."""
    best = -1
    best_gain = -np.inf
    for f in range(per_feature.shape[0]):
        if per_feature[f, 0] > best_gain:
            best = f
            best_gain = per_feature[f, 0]
    return best


_best_split_of_each_feature_serial = serial_twin(_best_split_of_each_feature)

# Scans of histograms with fewer bins than this (all nodes and features)
# run serially, and a small fit then compiles no parallel scan. On a 2-core
# machine a second thread did not make a scan faster even at 35,000-77,000
# bins a node (make_ranking 1,000 queries, LightGBM's example), and at
# 16,000 it made MQ2008 fold 1's scans slower (0.96 s against 0.70 s in a
# 500-tree fit, most of them two sibling nodes of 46 features x 256 bins):
# waking it costs about what a scan of that size does.
_MIN_PARALLEL_BINS = 64_000

_NO_SPLIT = (-np.inf, -1, 0, 0, 0.0, 0.0, 0, None)


def split_scratch(n_features, n_bins, is_categorical=None):
    """Work space of :func:`find_best_splits`, allocated once per grower:
    each node's per-feature results; for every thread numba may start
    (``NUMBA_NUM_THREADS``), indexed by thread id, the left sums and gains
    of one feature (rows 0 to 3, for the constrained scan of
    :mod:`.constraints`; the symmetric scans use rows 0 and 1) and the
    best gain so far in each node (row ``_REACHED_ROW``); each node's best
    feature, so the scan allocates nothing; and the order the parallel
    scan takes the features in (:func:`scan_order`, for numba's current
    number of threads)."""
    if is_categorical is None:
        is_categorical = np.zeros(n_features, dtype=np.uint8)
    return (np.empty((2, n_features, 6)),
            per_thread_scratch((_REACHED_ROW + 1, max(n_bins, 2))),
            np.empty(2, dtype=np.int64),
            scan_order(is_categorical, numba.get_num_threads()))


def scan_order(is_categorical, n_threads):
    """The order in which :func:`_best_split_of_each_feature` takes the
    features, ``_FEATURES_PER_ITEM`` to a parallel item, -1 for a slot left
    empty.

    Without categorical features it is every feature in turn. With them,
    each thread's share of the items (numba hands a thread a contiguous
    share) holds a contiguous share of the numeric features, as the
    histogram kernels split them, and a share of the categorical ones: a
    categorical feature's scan sorts its categories and costs several
    numeric scans, and categorical columns are often the last ones (8
    columns of 500 categories, the last of ``make_ranking``'s 136: 150
    LambdaMART trees on 2 threads spent 1.08 to 1.19 s in split finding
    against 1.41 s on one, all the categorical scans falling to one
    thread). The shares are padded to the same number of items. The order
    changes which thread scans a feature, never a result.

    Parameters
    ----------
    is_categorical : ndarray of shape (n_features,), dtype uint8
    n_threads : int

    Returns
    -------
    order : ndarray of shape (n_slots,), dtype int64
        A multiple of ``_FEATURES_PER_ITEM`` long.
    """
    numeric = np.flatnonzero(is_categorical == 0)
    categorical = np.flatnonzero(is_categorical)
    if categorical.shape[0] == 0 or n_threads < 2:
        shares = [np.arange(is_categorical.shape[0])]
    else:
        shares = [np.concatenate(parts) for parts in zip(np.array_split(numeric, n_threads),
                                                        np.array_split(categorical, n_threads))]
    width = max(-(-share.shape[0] // _FEATURES_PER_ITEM) for share in shares) * _FEATURES_PER_ITEM
    order = np.full(max(len(shares) * width, _FEATURES_PER_ITEM), -1, dtype=np.int64)
    for t, share in enumerate(shares):
        order[t * width:t * width + share.shape[0]] = share
    return order


def scanned_bins(feature_mask, n_bins_non_missing):
    """The bins a split scan of one node reads: the value bins of the
    allowed features, plus one per feature (its missing bin, or the check
    that skips it). This, not the size of the histograms, is the work that
    chooses the serial or the parallel scan: on LightGBM's example (300
    features, 21 value bins each on average, a third of them unsplittable)
    the two differ 17-fold."""
    return int(np.dot(feature_mask, n_bins_non_missing)) + feature_mask.shape[0]


def find_best_splits(nodes, n_bins_non_missing, missing_bin, feature_mask, min_samples_leaf,
                     min_hessian_to_split, min_gain_to_split, l2_regularization,
                     scratch=None, is_categorical=None, monotonic_cst=None,
                     node_bounds=None):
    """Find the best split of one or two nodes over all allowed features.

    Parameters
    ----------
    nodes : sequence of one or two tuples ``(hist, sibling, sum_g, sum_h, count)``
        Each node's histogram (ndarray of shape (n_features, n_bins, 4),
        dtype float64, see :mod:`.histogram`), sums of gradients and
        hessians and number of rows. If ``sibling`` is not None, ``hist``
        holds the parent's histogram and is turned in place into the node's,
        ``hist - sibling`` (the subtraction trick), feature by feature just
        before each is scanned, while it is in cache; only the bins that
        scans read (each feature's value bins and the missing bin) are
        subtracted, and features masked out are left as they are.
    n_bins_non_missing : ndarray of shape (n_features,), dtype uint32
        Number of value bins of each feature.
    missing_bin : int
        Index of the missing-value bin.
    feature_mask : ndarray of shape (n_features,), dtype uint8
        Features allowed for this tree (non-zero).
    min_samples_leaf : int
        Minimum rows per child.
    min_hessian_to_split : float
        Minimum sum of hessians per child.
    min_gain_to_split : float
        A split is valid only if its gain is strictly larger.
    l2_regularization : float
        L2 regularization of leaf values.
    scratch : tuple, default=None
        Work space from :func:`split_scratch` (allocated if None).
    is_categorical : ndarray of shape (n_features,), dtype uint8, default=None
        Which features are categorical (non-zero); None means none.
    monotonic_cst : ndarray of shape (n_features,), dtype int8, default=None
        Monotonic constraint of each feature (-1, 0, 1); with ``node_bounds``.
    node_bounds : ndarray of shape (n_nodes, 3), dtype float64, default=None
        Each node's ``(lower, upper, value)``: the bounds of its children's
        values and its own value (see :mod:`.constraints`). If given, the
        scan clips the children's values to the bounds, computes gains from
        the clipped values and refuses splits against ``monotonic_cst``;
        if None (no monotonic constraint), it is the plain scan.

    Returns
    -------
    splits : list of tuple
        One per node: ``(gain, feature_idx, bin_threshold,
        missing_go_to_left, sum_g_left, sum_h_left, count_left,
        left_categories)``: the gain (``-inf`` and feature -1 if there is no
        valid split), the feature, value bins ``<= bin_threshold`` go left,
        1 if missing values go left, sums and rows of the left child; for a
        categorical feature ``bin_threshold`` is 0 and ``left_categories``
        is the bitset (ndarray of BITSET_WORDS uint32) of the bins that go
        left, None otherwise.
    """
    n_nodes = len(nodes)
    hist0 = nodes[0][0]
    n_features = hist0.shape[0]
    if is_categorical is None:
        is_categorical = np.zeros(n_features, dtype=np.uint8)
    per_feature, work, best_features, order = (
        split_scratch(n_features, hist0.shape[1], is_categorical) if scratch is None else scratch)
    per_feature = per_feature[:n_nodes]
    hist1 = nodes[-1][0]
    siblings = [hist if sibling is None else sibling for hist, sibling, *_ in nodes]
    subtract = np.array([sibling is not None for _, sibling, *_ in nodes], dtype=np.uint8)
    totals = np.array([[float(g), float(h), float(c)] for *_, g, h, c in nodes])
    scan = pick(_best_split_of_each_feature, _best_split_of_each_feature_serial,
                n_nodes * scanned_bins(feature_mask, n_bins_non_missing), _MIN_PARALLEL_BINS)
    scan(hist0, hist1, siblings[0], siblings[-1], subtract, totals, n_bins_non_missing,
         missing_bin, feature_mask, is_categorical, int(min_samples_leaf),
         float(min_hessian_to_split), float(l2_regularization), per_feature, work, order,
         monotonic_cst, node_bounds, best_features, None)
    splits = []
    # Python numbers from tolist(): reading NumPy scalars one by one cost
    # several microseconds a split.
    for k, best in enumerate(best_features[:n_nodes].tolist()):
        if best < 0:
            splits.append(_NO_SPLIT)
            continue
        gain, bin_threshold, mleft, sum_g_left, sum_h_left, count_left = \
            per_feature[k, best].tolist()
        if not gain > min_gain_to_split:
            splits.append(_NO_SPLIT)
            continue
        categories = None
        if is_categorical[best]:
            # The scan kept the size of the set; the set itself is made for
            # the chosen feature only.
            categories = left_categories(nodes[k][0][best], n_bins_non_missing[best],
                                         missing_bin, int(bin_threshold))
            bin_threshold = 0
        splits.append((gain, best, int(bin_threshold), int(mleft), sum_g_left, sum_h_left,
                       int(count_left + 0.5), categories))
    return splits


def left_bins(bin_threshold, missing_go_to_left, categories, missing_bin):
    """The bitset of the bins that go left in a split, the missing bin
    included: ``categories`` (a categorical split's bitset) or the value bins
    ``<= bin_threshold``, plus the missing bin if ``missing_go_to_left``.

    Returns
    -------
    bitset : ndarray of shape (BITSET_WORDS,), dtype uint32
    """
    if categories is not None:
        bitset = np.array(categories, dtype=BITSET_DTYPE)
    else:
        # From a table: made for every split grown, and building it with
        # NumPy took 13 us, a tenth of a small node's split.
        bitset = _BINS_BELOW[int(bin_threshold) + 1].copy()
    if missing_go_to_left:
        bitset[missing_bin >> 5] |= BITSET_DTYPE(1 << (missing_bin & 31))
    return bitset


# Row k: the bitset of bins 0 .. k - 1.
_BINS_BELOW = np.array([bitset_below(k) for k in range(BITSET_WORDS * 32 + 1)])


@njit(cache=True)
def _partition(sample_indices, X_binned, feature_idx, left_bins, buffer):
    """Stable in-place partition of a node's rows into left then right.

    Keeping the relative order makes every child's rows ascending if the
    parent's were, which keeps later gathers cache friendly, and makes the
    result deterministic.

    The loop is branch-free: every row is written at the next left position
    and only that position advances when the row goes left; a second pass
    does the same for the right rows. About 2.5 ns per row, so serial: a
    parallel two-pass version was slower on 2 cores and much slower when
    the cores are shared.

    Parameters
    ----------
    sample_indices : ndarray of shape (n_node,), dtype int32
        Rows of the node; reordered in place so that the left child's rows
        come first.
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, Fortran order
        Binned data.
    feature_idx : int
        Split feature.
    left_bins : ndarray of shape (BITSET_WORDS,), dtype uint32
        The bins that go left (see :func:`left_bins`): one test serves
        numeric and categorical splits, and a bit test costs what the
        comparisons with a threshold and the missing bin did.
    buffer : ndarray of shape (>= n_node,), dtype int32
        Scratch space.

    Returns
    -------
    n_left : int
        Number of rows that went left.
    """
    col = X_binned[:, feature_idx]
    n = sample_indices.shape[0]
    n_left = 0
    for i in range(n):
        j = sample_indices[i]
        buffer[n_left] = j
        n_left += in_bitset(left_bins, col[j])
    # Right rows. Stop once the last one is placed, so that the throw-away
    # writes of left rows never land past the end of the node.
    pos = n_left
    if pos < n:
        for i in range(n):
            j = sample_indices[i]
            buffer[pos] = j
            pos += not in_bitset(left_bins, col[j])
            if pos == n:
                break
    # An explicit loop, not ``sample_indices[:] = buffer[:n]``: numba
    # compiles a slice assignment with a shape check whose error message
    # formatting took 2.5 s of a 3 s compile.
    for i in range(n):
        sample_indices[i] = buffer[i]
    return n_left
