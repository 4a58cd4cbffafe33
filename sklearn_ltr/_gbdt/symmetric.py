"""Symmetric (oblivious) trees: one split per level, shared by every node of
the level, as CatBoost grows them by default.

At each level the split ``(feature, bin, missing_go_to_left)`` is the one
whose gain, summed over the nodes of the level, is largest; every node of the
level is then split by it, so a tree of depth ``d`` has ``2**d`` leaves and a
row's leaf is ``d`` comparisons away. The gain of one node is the one of
:mod:`.splitting` (no 1/2 factor).

``min_samples_leaf`` and ``min_hessian_to_split`` keep their meaning: a node
whose share of the level's split would leave a child with fewer rows, or a
smaller sum of hessians, adds nothing to the level's gain and stays a leaf.
The tree predicts as the full symmetric tree in which that leaf's
descendants all take its value, so no leaf value is estimated from fewer
than ``min_samples_leaf`` rows. (CatBoost has no such minimum for its
symmetric trees; its ``min_data_in_leaf`` applies to its other growing
policies only.)

The nodes of a level are split together
(:meth:`~.node_rows.RowStore.split_level`), so the histograms of their
smaller children are built in one pass; each larger child's is its parent's
minus its sibling's.

The level's split search runs in parallel over features, each feature by the
same serial loops over nodes and bins, so the result does not depend on the
number of threads. Ties in summed gain are broken as in :mod:`.splitting`:
lowest feature, then lowest bin, then missing-right before missing-left.

A categorical feature's level split is one set of categories, sent left at
every node of the level. The set is found as for one node
(:mod:`.categorical`, with the same regularisation), from the level's
histogram summed over its nodes: the categories with enough rows in the
level are sorted by their smoothed mean gradient over the level, and each
prefix of that order, from either end, is scored by its gain summed over
the nodes (a node whose share of the split breaks its minimums adds 0, as
for a numeric split). CatBoost's symmetric trees have no set splits (it
turns categories into target statistics and one-hot splits); with them,
native categorical splits and symmetric trees go together.
"""

from time import perf_counter

import numpy as np
from numba import get_thread_id, njit, prange

from .._utils.parallel import pick, serial_twin
from .categorical import (
    CATEGORY_L2,
    MIN_ROWS_PER_GROUP,
    candidates_at_the_ends,
    left_categories,
)
from .common import bins_of
from .scan_parts import leaf_term, start_of_left_sums, subtract_sibling
from .splitting import _first_best_feature, left_bins, scanned_bins

__all__ = ["grow_symmetric_levels", "level_split"]


@njit(cache=True, inline="always", error_model="numpy")
def _add_node_gains(h, n_bins_nm, missing_bin, missing_left, last, sum_g, sum_h, count,
                    min_samples_leaf, min_hessian_to_split, l2, gains):
    """Add one node's gain at every threshold of one scan direction to
    ``gains[:last]``; a threshold that breaks the node's minimums adds 0."""
    parent_term = leaf_term(sum_g, sum_h, l2)
    gl, hl, cl = start_of_left_sums(h, missing_bin, missing_left)
    for b in range(last):
        if b < n_bins_nm:
            gl += h[b, 0]
            hl += h[b, 1]
            cl += h[b, 2]
        gr = sum_g - gl
        hr = sum_h - hl
        cr = count - cl
        valid = ((cl >= min_samples_leaf) & (cr >= min_samples_leaf)
                 & (hl >= min_hessian_to_split) & (hr >= min_hessian_to_split))
        if valid:
            gains[b] += leaf_term(gl, hl, l2) + leaf_term(gr, hr, l2) - parent_term


@njit(cache=True)
def level_histogram(histograms, slots, feature):
    """The histogram of ``feature`` summed over the level's nodes, in node
    order (shape (n_bins, 4)): what a categorical level split sorts."""
    out = np.zeros(histograms.shape[2:])
    for k in range(slots.shape[0]):
        h = histograms[slots[k], feature]
        for b in range(h.shape[0]):
            for j in range(h.shape[1]):
                out[b, j] += h[b, j]
    return out


@njit(cache=True, error_model="numpy")
def _best_categorical_level_split(histograms, slots, totals, feature, n_categories,
                                  missing_bin, min_samples_leaf, min_hessian_to_split, l2):
    """``(summed gain, n_left, missing_go_to_left)`` of the best level split
    on categorical ``feature``: the set is the first ``n_left`` candidates
    of the level's sorted order (the last ``-n_left`` if negative), as
    :func:`~.categorical.best_categorical_split` returns it for one node."""
    level = level_histogram(histograms, slots, feature)
    front, back = candidates_at_the_ends(level, n_categories, missing_bin)
    n_nodes = slots.shape[0]
    max_left = front.shape[0]
    child_l2 = l2 + CATEGORY_L2
    parent_terms = np.empty(n_nodes)
    for k in range(n_nodes):
        parent_terms[k] = leaf_term(totals[k, 0], totals[k, 1], l2)
    left = np.empty((n_nodes, 3))
    best_gain = -np.inf
    best_n_left = 0
    best_mleft = 0
    level_count = 0.0
    for k in range(n_nodes):
        level_count += totals[k, 2]
    for direction in (1, -1):
        left[:] = 0.0
        level_left = 0.0
        group = 0.0
        missing_left = 0
        for i in range(max_left):
            b = front[i] if direction == 1 else back[i]
            for k in range(n_nodes):
                h = histograms[slots[k], feature]
                left[k, 0] += h[b, 0]
                left[k, 1] += h[b, 1]
                left[k, 2] += h[b, 2]
            level_left += level[b, 2]
            group += level[b, 2]
            if b == missing_bin:
                missing_left = 1
            if level_count - level_left < MIN_ROWS_PER_GROUP:
                break
            if group < MIN_ROWS_PER_GROUP:
                continue
            group = 0.0
            gain = 0.0
            for k in range(n_nodes):
                gl = left[k, 0]
                hl = left[k, 1]
                cl = left[k, 2]
                hr = totals[k, 1] - hl
                cr = totals[k, 2] - cl
                if ((cl >= min_samples_leaf) & (cr >= min_samples_leaf)
                        & (hl >= min_hessian_to_split) & (hr >= min_hessian_to_split)):
                    gain += (leaf_term(gl, hl, child_l2)
                             + leaf_term(totals[k, 0] - gl, hr, child_l2) - parent_terms[k])
            if gain > best_gain:
                best_gain = gain
                best_n_left = (i + 1) * direction
                best_mleft = missing_left
    return best_gain, best_n_left, best_mleft


@njit(parallel=True, cache=True, error_model="numpy")
def _summed_gains_of_each_feature(histograms, slots, siblings, totals, n_bins_non_missing,
                                  missing_bin, feature_mask, is_categorical, min_samples_leaf,
                                  min_hessian_to_split, l2, per_feature, work):
    """Row ``f`` of ``per_feature`` receives ``(summed gain, bin,
    missing_go_to_left)`` of feature ``f``'s best level split over the nodes
    whose histograms are ``histograms[slots]`` and totals ``totals``
    (``(sum_g, sum_h, count)`` each); the gain is ``-inf`` for a feature
    masked out. For a categorical feature ``bin`` is the ``n_left`` of
    :func:`_best_categorical_level_split`. ``work[t]`` is thread ``t``'s
    space for the summed gains of the two scan directions (its first two
    rows; it may have more).

    A node with ``siblings[k] >= 0`` holds its parent's histogram: each
    allowed feature of it first becomes the node's own, the parent's minus
    the sibling's in slot ``siblings[k]``, over the bins a scan reads (as
    the leaf-wise scan subtracts). Done here, feature by feature, the
    subtraction finds the histograms in cache for the scan; as a pass of
    its own over the level's nodes it took a tenth of a YetiRank fit on
    LightGBM's example data."""
    n_features = per_feature.shape[0]
    n_nodes = slots.shape[0]
    for f in prange(n_features):
        per_feature[f, 0] = -np.inf
        per_feature[f, 1] = 0.0
        per_feature[f, 2] = 0.0
        if not feature_mask[f]:
            continue
        n_bins_nm = n_bins_non_missing[f]
        for k in range(n_nodes):
            if siblings[k] >= 0:
                subtract_sibling(histograms[slots[k], f], histograms[siblings[k], f], n_bins_nm,
                                 missing_bin)
        if is_categorical[f]:
            gain, n_left, mleft = _best_categorical_level_split(
                histograms, slots, totals, f, n_bins_nm, missing_bin, min_samples_leaf,
                min_hessian_to_split, l2)
            per_feature[f, 0] = gain
            per_feature[f, 1] = n_left
            per_feature[f, 2] = mleft
            continue
        any_missing = False
        for k in range(n_nodes):
            if histograms[slots[k], f, missing_bin, 2] > 0:
                any_missing = True
        # Direction 0 sends missing values right, direction 1 left. With
        # missing values somewhere in the level, "all values left, missing
        # right" is a threshold too.
        n_dirs = 2 if any_missing else 1
        gains = work[get_thread_id()]
        for d in range(n_dirs):
            last = n_bins_nm if (any_missing and d == 0) else n_bins_nm - 1
            for b in range(last):
                gains[d, b] = 0.0
            for k in range(n_nodes):
                _add_node_gains(histograms[slots[k], f], n_bins_nm, missing_bin, d == 1, last,
                                totals[k, 0], totals[k, 1], totals[k, 2], min_samples_leaf,
                                min_hessian_to_split, l2, gains[d])
            for b in range(last):
                if gains[d, b] > per_feature[f, 0]:
                    per_feature[f, 0] = gains[d, b]
                    per_feature[f, 1] = b
                    per_feature[f, 2] = d


_summed_gains_of_each_feature_serial = serial_twin(_summed_gains_of_each_feature)

# As for the leaf-wise scan (see splitting.py): fewer bins than this over all
# nodes and features are scanned serially.
_MIN_PARALLEL_BINS = 16_000


@njit(cache=True)
def _left_sums_of_nodes(histograms, slots, feature, left_value_bins, missing_left,
                        missing_bin):
    """Gradient, hessian and row sums of the left child of each node
    (histogram ``histograms[slots[k]]``) split on ``feature``, the value
    bins ``left_value_bins`` (increasing) going left, accumulated in bin
    order as the numeric scan does; an array of shape (n_nodes, 3). One call
    for a level's nodes rather than one per node."""
    out = np.empty((slots.shape[0], 3))
    for k in range(slots.shape[0]):
        h = histograms[slots[k], feature]
        gl, hl, cl = start_of_left_sums(h, missing_bin, missing_left)
        for b in left_value_bins:
            gl += h[b, 0]
            hl += h[b, 1]
            cl += h[b, 2]
        out[k, 0] = gl
        out[k, 1] = hl
        out[k, 2] = cl
    return out


def level_split(histograms, slots, totals, n_bins_non_missing, missing_bin, feature_mask,
                min_samples_leaf, min_hessian_to_split, min_gain_to_split, l2_regularization,
                scratch, is_categorical=None, siblings=None):
    """The best split shared by the nodes of one level.

    Parameters
    ----------
    histograms : ndarray of shape (n_slots, n_features, n_bins, 4), dtype float64
        The histogram pool; node ``k``'s histogram is ``histograms[slots[k]]``.
    slots : ndarray of shape (n_nodes,), dtype int64
        Slots of the nodes that take part in the search.
    totals : ndarray of shape (n_nodes, 3), dtype float64
        ``(sum_g, sum_h, count)`` of each node.
    n_bins_non_missing : ndarray of shape (n_features,), dtype uint32
        Number of value bins of each feature.
    missing_bin : int
        Index of the missing-value bin.
    feature_mask : ndarray of shape (n_features,), dtype uint8
        Features allowed for this tree (non-zero).
    min_samples_leaf : int
        Minimum rows per child of a node that counts towards the gain.
    min_hessian_to_split : float
        Minimum sum of hessians per child of a node that counts.
    min_gain_to_split : float
        The level is split only if the summed gain is strictly larger.
    l2_regularization : float
        L2 regularization of leaf values.
    scratch : tuple
        The grower's work space (:func:`~.splitting.split_scratch`, allocated
        once per fit): its per-feature results and per-thread rows.
    is_categorical : ndarray of shape (n_features,), dtype uint8, default=None
        Which features are categorical (non-zero); None means none.
    siblings : ndarray of shape (n_nodes,), dtype int64, default=None
        For a node whose slot holds its parent's histogram, the slot of its
        sibling's, which the search subtracts first (the node's histogram
        is then its own); -1 for a node that holds its own. None: -1 for
        every node.

    Returns
    -------
    split : tuple or None
        ``(summed_gain, feature, bin_threshold, missing_go_to_left,
        left_categories, left_value_bins)``, or None if no split's summed
        gain exceeds ``min_gain_to_split``. Value bins ``<= bin_threshold``
        go left; for a categorical feature ``bin_threshold`` is 0 and
        ``left_categories`` the bitset of the categories that go left (None
        for a numeric feature). ``left_value_bins`` lists the value bins
        that go left either way. If no node of the level has missing values
        for ``feature``, they go (at predict time) to the side with more
        training rows over the level.
    """
    per_feature, work = scratch[0][0], scratch[1]
    if is_categorical is None:
        is_categorical = np.zeros(per_feature.shape[0], dtype=np.uint8)
    scan = pick(_summed_gains_of_each_feature, _summed_gains_of_each_feature_serial,
                slots.shape[0] * scanned_bins(feature_mask, n_bins_non_missing),
                _MIN_PARALLEL_BINS)
    if siblings is None:
        siblings = np.full(slots.shape[0], -1, dtype=np.int64)
    scan(histograms, slots, siblings, totals, n_bins_non_missing, missing_bin, feature_mask,
         is_categorical, int(min_samples_leaf), float(min_hessian_to_split),
         float(l2_regularization), per_feature, work)
    best = _first_best_feature(per_feature)
    if best < 0 or not per_feature[best, 0] > min_gain_to_split:
        return None
    best_gain = per_feature[best, 0]
    missing_left = int(per_feature[best, 2])
    if is_categorical[best]:
        categories = left_categories(level_histogram(histograms, slots, best),
                                     n_bins_non_missing[best], missing_bin,
                                     int(per_feature[best, 1]))
        bin_threshold = 0
        left_value_bins = bins_of(categories)
    else:
        categories = None
        bin_threshold = int(per_feature[best, 1])
        left_value_bins = np.arange(bin_threshold + 1)
    if not np.any(histograms[slots, best, missing_bin, 2] > 0):
        left_rows = sum(_left_sums_of_nodes(histograms, slots, best, left_value_bins, False,
                                            missing_bin)[:, 2].tolist())
        missing_left = int(left_rows >= totals[:, 2].sum() - left_rows)
    return float(best_gain), best, bin_threshold, missing_left, categories, left_value_bins


def grow_symmetric_levels(grower, root, max_depth):
    """Grow the levels of a symmetric tree below ``root`` with ``grower``'s
    rows, histogram pool and parameters; return the list of node dicts (in
    the form :meth:`TreeGrower._finalize` reads).

    A node where the level's split would leave a child below
    ``min_samples_leaf`` or ``min_hessian_to_split`` (or that cannot be split
    at all) stays a leaf. Predictions are those of the full symmetric tree in
    which such a leaf's descendants all take its value, and every split node
    of a level has the level's split.
    """
    rows = grower.rows
    missing_bin = grower.missing_values_bin_idx
    nodes = [root]
    level = []
    # The slots of smaller children that are not in the level but whose
    # histograms its search still subtracts from their larger siblings'.
    freed_after_search = []
    if grower._splittable(root["count"], root["sum_h"], 0):
        root["slot"] = grower._take_slot()
        rows.root_histogram(grower._histograms[root["slot"]])
        level = [root]
    for depth in range(max_depth):
        if not level:
            break
        hists = grower._histograms
        slots = np.array([nd["slot"] for nd in level], dtype=np.int64)
        totals = np.array([[nd["sum_g"], nd["sum_h"], float(nd["count"])] for nd in level])
        siblings = np.array([nd.pop("sibling_slot", -1) for nd in level], dtype=np.int64)
        tic = perf_counter()
        split = level_split(hists, slots, totals, grower.n_bins_non_missing, missing_bin,
                            grower._mask, grower.min_samples_leaf, grower.min_hessian_to_split,
                            grower.min_gain_to_split, grower.l2_regularization,
                            grower._split_scratch, grower.is_categorical, siblings)
        grower.time_find_split += perf_counter() - tic
        grower._free_slots.extend(freed_after_search)
        freed_after_search = []
        if split is None:
            break
        _, feature, bin_threshold, missing_left, categories, left_value_bins = split
        bins_left = left_bins(bin_threshold, missing_left, categories, missing_bin)
        # The children of a categorical split, and their terms of its gain,
        # take the extra L2 of categorical splits, as in leaf-wise trees.
        child_l2 = grower.l2_regularization + (CATEGORY_L2 if categories is not None else 0.0)
        last_level = depth + 1 == max_depth
        next_level = []
        # The level's nodes are split by one call of the row store, which
        # builds the histograms of the smaller children together; the larger
        # children keep their parents' histograms, which the next level's
        # search turns into theirs by subtracting their siblings'.
        splits = []
        left_sums = _left_sums_of_nodes(hists, slots, feature, left_value_bins,
                                        bool(missing_left), missing_bin).tolist()
        for nd, (gl, hl, cl) in zip(level, left_sums):
            parent_slot = nd["slot"]
            nd["slot"] = -1
            counts = (int(cl + 0.5), nd["count"] - int(cl + 0.5))
            sums_g = (gl, nd["sum_g"] - gl)
            sums_h = (hl, nd["sum_h"] - hl)
            if min(counts) < grower.min_samples_leaf or min(sums_h) < grower.min_hessian_to_split:
                grower._free_slots.append(parent_slot)
                continue
            gain = (leaf_term(gl, hl, child_l2) + leaf_term(sums_g[1], sums_h[1], child_l2)
                    - leaf_term(nd["sum_g"], nd["sum_h"], grower.l2_regularization))
            nd["split"] = (gain, feature, bin_threshold, missing_left, gl, hl, counts[0],
                           categories)
            left, right = (dict(id=len(nodes) + i, count=counts[i], sum_g=sums_g[i],
                                sum_h=sums_h[i], depth=depth + 1, slot=-1, split=None, left=-1,
                                right=-1, l2=child_l2) for i in range(2))
            nodes += [left, right]
            nd["left"], nd["right"] = left["id"], right["id"]
            wanted = [child for child in (left, right) if not last_level
                      and grower._splittable(child["count"], child["sum_h"], depth + 1)]
            small, large = (left, right) if left["count"] <= right["count"] else (right, left)
            small_slot = -1
            if wanted:
                small_slot = grower._take_slot()
                if large in wanted:
                    large["slot"] = parent_slot
                    large["sibling_slot"] = small_slot
                else:
                    grower._free_slots.append(parent_slot)
                if small in wanted:
                    small["slot"] = small_slot
                else:
                    freed_after_search.append(small_slot)
            else:
                grower._free_slots.append(parent_slot)
            splits.append((nd["id"], feature, bins_left, left["id"], right["id"],
                           small["id"] if wanted else -1, small_slot))
            next_level += [child for child in (left, right) if child in wanted]
        # Taken after every slot of the level: taking one may grow the pool.
        hists = grower._histograms
        if splits:
            node_ids, features, bins, left_ids, right_ids, histogram_of, small_slots = zip(*splits)
            rows.split_level(node_ids, features, bins, left_ids, right_ids, histogram_of, hists,
                             small_slots)
        level = next_level
    for nd in level:
        grower._free_slots.append(nd["slot"])
        nd["slot"] = -1
    return nodes
