"""The levels of a symmetric tree in one compiled call.

:func:`~.symmetric.grow_symmetric_levels` grows a symmetric tree level by
level in Python: one search for the level's split, then, node by node, the
split's sums and the children's slots, one partition per node, and one
kernel call for the level's histograms. On small data the Python steps cost
a sixth of a YetiRank fit (``benchmarks/results/fit_small.md``).
:func:`grow_symmetric_tree` runs the same steps in compiled code, with the
same kernels in the same order and the same arguments, so it grows the same
trees bit for bit. :class:`~.grower.TreeGrower` uses it where it uses the
compiled leaf-wise loop (:mod:`.compiled_grower`: rows held in this
process, no constraints), for trees of at most 11 levels, whose histogram
pool never has to grow.

The node tables, the phase clock and the choice between serial and
parallel kernels are those of :mod:`.compiled_grower`.
"""

import numpy as np
from numba import njit

from .._utils.clock import ticks
from .._utils.parallel import count_parallel_runs, may_pick_parallel, parallel_forced
from .categorical import CATEGORY_L2, _fill_left_categories
from .common import BITSET_DTYPE, BITSET_WORDS, in_bitset
from .compiled_grower import (
    CATEGORICAL,
    COUNT,
    COUNT_LEFT,
    FEATURE,
    G_LEFT,
    GAIN,
    H_LEFT,
    HISTOGRAMS,
    LEFT,
    LEVEL_HISTOGRAM_RUNS,
    LEVEL_SCAN_RUNS,
    MISSING_LEFT,
    HISTOGRAM_HELPERS,
    PARTITION,
    RIGHT,
    SLOT,
    SPLIT_FINDING,
    START,
    STOP,
    SUM_G,
    SUM_H,
    BIN,
    _new_leaf,
    _set_left_bins,
    _splittable,
    compiled_variant,
    count_parallel_runs_of_loop,
    variant_suffix,
)
from .histogram import (
    _MIN_PARALLEL_CELLS,
    _MIN_PARALLEL_LEVEL_CELLS,
    _build_histograms_of_nodes,
    _build_histograms_of_nodes_const,
    _build_histograms_of_nodes_const_serial,
    _build_histograms_of_nodes_serial,
)
from .loop_parallelism import (
    LOOP_MIN_PARALLEL_CELLS,
    histograms_may_run_in_parallel,
    min_parallel_wide_cells,
    parallel_from_little_work,
)
from .scan_parts import leaf_term
from .splitting import _first_best_feature, _partition, scanned_bins
from .symmetric import (
    _MIN_PARALLEL_BINS,
    _summed_gains_of_each_feature,
    _summed_gains_of_each_feature_serial,
    _left_sums_of_nodes,
    level_histogram,
)

__all__ = ["LevelBuffers", "MAX_COMPILED_DEPTH", "grow_symmetric_tree"]

# Deeper trees may need more histogram slots than the grower allocates at
# first (see TreeGrower), which only the Python loop can add.
MAX_COMPILED_DEPTH = 11

# The level kernels and the histogram helpers, bound per compiled variant as
# in compiled_grower.
_node_histogram = HISTOGRAM_HELPERS[False]["_node_histogram"]
_wide_histograms = HISTOGRAM_HELPERS[False]["_wide_histograms"]
_LEVEL_SCAN = _summed_gains_of_each_feature_serial
_LEVEL_HISTOGRAMS = _build_histograms_of_nodes_serial
_LEVEL_HISTOGRAMS_CONST = _build_histograms_of_nodes_const_serial


class LevelBuffers:
    """The per-level arrays of the loop, allocated once per grower for
    levels of at most ``n_slots`` nodes (the histogram pool's size: every
    node of a level holds a slot)."""

    def __init__(self, n_slots):
        self.nodes = np.empty((2, n_slots), dtype=np.int64)  # this level, the next
        self.siblings = np.empty((2, n_slots), dtype=np.int64)
        self.slots = np.empty(n_slots, dtype=np.int64)
        self.totals = np.empty((n_slots, 3))
        # The level's splits: the split node, the child whose histogram is
        # built (-1: none) and its slot; the slots freed after the search.
        self.splits = np.empty((3, n_slots), dtype=np.int64)
        self.pending = np.empty(n_slots, dtype=np.int64)
        self.ranges = np.empty((2, n_slots), dtype=np.int64)


def _grow_symmetric_loop(X_binned, indices, partition_buffer, gradients, hessians, const_hessian,
                         ordered_g, ordered_h, sampled, n_used, sum_g, sum_h, features, wide,
                         feature_mask, value_bins, n_bins_non_missing, missing_bin,
                         is_categorical, histograms, per_feature, work, max_depth,
                         min_samples_leaf, min_hessian_to_split, l2_regularization,
                         min_gain_to_split, scan_bins, min_parallel_cells, min_parallel_bins,
                         min_parallel_level_cells, min_parallel_wide_cells, floats, ints, bits,
                         free_slots, level_nodes, level_siblings, level_slots, totals,
                         splits, pending, ranges, phase_ticks, parallel_calls):
    """Grow one symmetric tree; return its number of nodes.

    The tables are those of :func:`~.compiled_grower._grow_tree_loop`
    (``CANDIDATE`` unused). Each step is the one of
    :func:`~.symmetric.grow_symmetric_levels` at the same place: the same
    node ids, slots taken and freed in the same order.
    """
    n_free = 0
    for s in range(histograms.shape[0] - 1, -1, -1):
        free_slots[n_free] = s
        n_free += 1
    left_bins = np.empty(BITSET_WORDS, dtype=BITSET_DTYPE)
    categories = np.empty(BITSET_WORDS, dtype=BITSET_DTYPE)
    _new_leaf(ints, floats, np.int64(0), n_used, sum_g, sum_h, np.int64(0), l2_regularization)
    ints[0, START] = 0
    ints[0, STOP] = n_used
    n_nodes = np.int64(1)
    n_level = 0
    current = 0  # which row of level_nodes holds this level
    if _splittable(n_used, sum_h, 0, max_depth, min_samples_leaf, min_hessian_to_split):
        n_free -= 1
        ints[0, SLOT] = free_slots[n_free]
        tic = ticks()
        _node_histogram(
            X_binned, indices, np.int64(0), n_used, sampled, gradients, hessians, const_hessian,
            ordered_g, ordered_h, features, wide, histograms[ints[0, SLOT]], value_bins,
            min_parallel_cells, min_parallel_wide_cells, parallel_calls)
        phase_ticks[HISTOGRAMS] += ticks() - tic
        level_nodes[current, 0] = 0
        level_siblings[current, 0] = -1
        n_level = 1
    n_pending = 0

    for depth in range(max_depth):
        if n_level == 0:
            break
        tic = ticks()
        for k in range(n_level):
            node = level_nodes[current, k]
            level_slots[k] = ints[node, SLOT]
            totals[k, 0] = floats[node, SUM_G]
            totals[k, 1] = floats[node, SUM_H]
            totals[k, 2] = float(ints[node, COUNT])
        slots = level_slots[:n_level]
        found, feature, categorical, bin_threshold, missing_left, left_value_bins = _level_split(
            histograms, slots, level_siblings[current, :n_level], totals[:n_level],
            n_bins_non_missing, missing_bin, feature_mask, is_categorical, min_samples_leaf,
            min_hessian_to_split, l2_regularization, min_gain_to_split, per_feature, work,
            scan_bins, min_parallel_bins, categories, parallel_calls)
        phase_ticks[SPLIT_FINDING] += ticks() - tic
        for i in range(n_pending):
            free_slots[n_free] = pending[i]
            n_free += 1
        n_pending = 0
        if not found:
            break

        # Split the level's nodes by it (the node loop of grow_symmetric_levels).
        _set_left_bins(categories.reshape(1, BITSET_WORDS), np.int64(0), bin_threshold,
                       missing_left, categorical, missing_bin, left_bins)
        child_l2 = l2_regularization + (CATEGORY_L2 if categorical else 0.0)
        last_level = depth + 1 == max_depth
        left_sums = _left_sums_of_nodes(histograms, slots, feature, left_value_bins,
                                        missing_left == 1, missing_bin)
        following = 1 - current
        n_next = 0
        n_splits = 0
        for k in range(n_level):
            node = level_nodes[current, k]
            parent_slot = ints[node, SLOT]
            ints[node, SLOT] = -1
            gl = left_sums[k, 0]
            hl = left_sums[k, 1]
            count_left = int(left_sums[k, 2] + 0.5)
            count_right = ints[node, COUNT] - count_left
            gr = floats[node, SUM_G] - gl
            hr = floats[node, SUM_H] - hl
            if (min(count_left, count_right) < min_samples_leaf
                    or min(hl, hr) < min_hessian_to_split):
                free_slots[n_free] = parent_slot
                n_free += 1
                continue
            floats[node, GAIN] = (leaf_term(gl, hl, child_l2) + leaf_term(gr, hr, child_l2)
                                  - leaf_term(floats[node, SUM_G], floats[node, SUM_H],
                                              l2_regularization))
            ints[node, FEATURE] = feature
            ints[node, BIN] = bin_threshold
            ints[node, MISSING_LEFT] = missing_left
            floats[node, G_LEFT] = gl
            floats[node, H_LEFT] = hl
            ints[node, COUNT_LEFT] = count_left
            ints[node, CATEGORICAL] = 1 if categorical else 0
            if categorical:
                bits[node, :] = categories
            left = n_nodes
            right = n_nodes + 1
            n_nodes += 2
            _new_leaf(ints, floats, left, count_left, gl, hl, depth + 1, child_l2)
            _new_leaf(ints, floats, right, count_right, gr, hr, depth + 1, child_l2)
            ints[node, LEFT] = left
            ints[node, RIGHT] = right
            left_ok = not last_level and _splittable(count_left, hl, depth + 1, max_depth,
                                                     min_samples_leaf, min_hessian_to_split)
            right_ok = not last_level and _splittable(count_right, hr, depth + 1, max_depth,
                                                      min_samples_leaf, min_hessian_to_split)
            left_is_small = count_left <= count_right
            small = left if left_is_small else right
            large = right if left_is_small else left
            small_ok = left_ok if left_is_small else right_ok
            large_ok = right_ok if left_is_small else left_ok
            small_slot = -1
            if left_ok or right_ok:
                n_free -= 1
                small_slot = free_slots[n_free]
                if large_ok:
                    ints[large, SLOT] = parent_slot
                else:
                    free_slots[n_free] = parent_slot
                    n_free += 1
                if small_ok:
                    ints[small, SLOT] = small_slot
                else:
                    pending[n_pending] = small_slot
                    n_pending += 1
            else:
                free_slots[n_free] = parent_slot
                n_free += 1
            splits[0, n_splits] = node
            splits[1, n_splits] = small if (left_ok or right_ok) else -1
            splits[2, n_splits] = small_slot
            n_splits += 1
            for child, ok in ((left, left_ok), (right, right_ok)):
                if ok:
                    level_nodes[following, n_next] = child
                    level_siblings[following, n_next] = small_slot if child == large else -1
                    n_next += 1

        # Partition the split nodes' rows, then build the smaller children's
        # histograms in one call (NodeRows.split_level).
        tic = ticks()
        for s in range(n_splits):
            node = splits[0, s]
            start = ints[node, START]
            stop = ints[node, STOP]
            n_left = _partition(indices[start:stop], X_binned, feature, left_bins,
                                partition_buffer)
            ints[ints[node, LEFT], START] = start
            ints[ints[node, LEFT], STOP] = start + n_left
            ints[ints[node, RIGHT], START] = start + n_left
            ints[ints[node, RIGHT], STOP] = stop
        phase_ticks[PARTITION] += ticks() - tic
        n_built = 0
        n_rows = np.int64(0)
        for s in range(n_splits):
            child = splits[1, s]
            if child >= 0:
                ranges[0, n_built] = ints[child, START]
                ranges[1, n_built] = ints[child, STOP]
                level_slots[n_built] = splits[2, s]
                n_rows += ints[child, STOP] - ints[child, START]
                n_built += 1
        if n_built:
            tic = ticks()
            _level_histograms(X_binned, indices, ranges[0, :n_built], ranges[1, :n_built], n_rows,
                              gradients, hessians, const_hessian, ordered_g, ordered_h, features,
                              wide, histograms, level_slots[:n_built], value_bins,
                              min_parallel_level_cells, min_parallel_wide_cells, parallel_calls)
            phase_ticks[HISTOGRAMS] += ticks() - tic
        current = following
        n_level = n_next
    return n_nodes


def _level_split(histograms, slots, siblings, totals, n_bins_non_missing, missing_bin,
                 feature_mask, is_categorical, min_samples_leaf, min_hessian_to_split,
                 l2_regularization, min_gain_to_split, per_feature, work, scan_bins,
                 min_parallel_bins, categories, parallel_calls):
    """:func:`~.symmetric.level_split` of the level's nodes: return
    ``(found, feature, categorical, bin_threshold, missing_left,
    left_value_bins)``, with the left categories of a categorical split in
    ``categories``."""
    n_level = slots.shape[0]
    if n_level * scan_bins >= min_parallel_bins:
        parallel_calls[LEVEL_SCAN_RUNS] += 1
        _LEVEL_SCAN(histograms, slots, siblings, totals, n_bins_non_missing, missing_bin,
                    feature_mask, is_categorical, min_samples_leaf, min_hessian_to_split,
                    l2_regularization, per_feature, work)
    else:
        _summed_gains_of_each_feature_serial(
            histograms, slots, siblings, totals, n_bins_non_missing, missing_bin, feature_mask,
            is_categorical, min_samples_leaf, min_hessian_to_split, l2_regularization,
            per_feature, work)
    best = _first_best_feature(per_feature)
    found = best >= 0 and per_feature[best, 0] > min_gain_to_split
    feature = max(best, 0)
    categorical = found and is_categorical[feature] != 0
    bin_threshold = 0
    missing_left = 0
    left_value_bins = np.empty(0, dtype=np.int64)
    if found:
        missing_left = int(per_feature[feature, 2])
        if categorical:
            _fill_left_categories(level_histogram(histograms, slots, feature),
                                  np.int64(n_bins_non_missing[feature]), missing_bin,
                                  int(per_feature[feature, 1]), categories)
        else:
            bin_threshold = int(per_feature[feature, 1])
        left_value_bins = _left_value_bins(categorical, bin_threshold, categories, missing_bin)
        any_missing = False
        for k in range(n_level):
            if histograms[slots[k], feature, missing_bin, 2] > 0:
                any_missing = True
        if not any_missing:
            # Missing values (at predict time) go to the side with more
            # training rows over the level.
            left_sums = _left_sums_of_nodes(histograms, slots, feature, left_value_bins,
                                            np.bool_(False), missing_bin)
            left_rows = 0.0
            level_rows = 0.0
            for k in range(n_level):
                left_rows += left_sums[k, 2]
                level_rows += totals[k, 2]
            missing_left = 1 if left_rows >= level_rows - left_rows else 0
    return found, feature, categorical, bin_threshold, missing_left, left_value_bins


def _level_histograms(X_binned, indices, starts, stops, n_rows, gradients, hessians,
                      const_hessian, ordered_g, ordered_h, features, wide, histograms, slots,
                      value_bins, min_parallel_level_cells, min_parallel_wide_cells,
                      parallel_calls):
    """:meth:`~.node_rows.NodeRows.split_level`'s histograms: node ``k``'s
    rows ``indices[starts[k]:stops[k]]`` into ``histograms[slots[k]]``, all
    ``n_rows`` of them in one call, then the blocks of the wide columns
    node by node, from the gradients that call gathered at the nodes'
    rows."""
    parallel = n_rows * features.shape[0] >= min_parallel_level_cells
    if parallel:
        parallel_calls[LEVEL_HISTOGRAM_RUNS] += 1
    if const_hessian is None:
        if parallel:
            _LEVEL_HISTOGRAMS(X_binned, indices, starts, stops, gradients, hessians, features,
                              histograms, slots, value_bins, ordered_g, ordered_h)
        else:
            _build_histograms_of_nodes_serial(X_binned, indices, starts, stops, gradients,
                                              hessians, features, histograms, slots,
                                              value_bins, ordered_g, ordered_h)
        wide_hessian = -1.0  # read the hessians
    else:
        if parallel:
            _LEVEL_HISTOGRAMS_CONST(X_binned, indices, starts, stops, gradients, const_hessian,
                                    features, histograms, slots, value_bins, ordered_g)
        else:
            _build_histograms_of_nodes_const_serial(X_binned, indices, starts, stops, gradients,
                                                    const_hessian, features, histograms, slots,
                                                    value_bins, ordered_g)
        wide_hessian = const_hessian
    for k in range(starts.shape[0]):
        lo = starts[k]
        hi = stops[k]
        _wide_histograms(wide, indices[lo:hi], np.bool_(True), ordered_g[lo:hi], ordered_h[lo:hi],
                         wide_hessian, histograms[slots[k]], value_bins, hi - lo,
                         min_parallel_wide_cells, parallel_calls)


@njit(cache=True)
def _left_value_bins(categorical, bin_threshold, categories, missing_bin):
    """The value bins that go left in a level's split, increasing: those up
    to ``bin_threshold``, or the ``categories`` of a categorical split
    (what :func:`~.symmetric.level_split` returns as ``left_value_bins``)."""
    if not categorical:
        return np.arange(bin_threshold + 1)
    out = np.empty(missing_bin, dtype=np.int64)
    n = 0
    for b in range(missing_bin):
        if in_bitset(categories, b):
            out[n] = b
            n += 1
    return out[:n]


# The level helpers with the serial kernels (False) or the parallel ones
# (True), and the loop in the four combinations, as in compiled_grower.
_LEVEL_HISTOGRAM_HELPERS = {
    parallel: compiled_variant(
        (_level_histograms,), "_parallel" if parallel else "_serial",
        dict(HISTOGRAM_HELPERS[parallel],
             _LEVEL_HISTOGRAMS=(_build_histograms_of_nodes if parallel
                                else _build_histograms_of_nodes_serial),
             _LEVEL_HISTOGRAMS_CONST=(_build_histograms_of_nodes_const if parallel
                                      else _build_histograms_of_nodes_const_serial)))
    for parallel in (False, True)
}
_LEVEL_SCAN_HELPERS = {
    parallel: compiled_variant(
        (_level_split,), "_parallel" if parallel else "_serial",
        dict(_LEVEL_SCAN=(_summed_gains_of_each_feature if parallel
                          else _summed_gains_of_each_feature_serial)))
    for parallel in (False, True)
}
LOOPS = {
    (histograms, scans): compiled_variant(
        (_grow_symmetric_loop,), variant_suffix(histograms, scans),
        {**HISTOGRAM_HELPERS[histograms], **_LEVEL_HISTOGRAM_HELPERS[histograms],
         **_LEVEL_SCAN_HELPERS[scans]})["_grow_symmetric_loop"]
    for histograms in (False, True) for scans in (False, True)
}


def grow_symmetric_tree(rows, settings, state, buffers, histograms, split_scratch, feature_mask,
                        n_bins_non_missing, is_categorical, n_used, sum_g, sum_h):
    """Grow one symmetric tree in one compiled call.

    Parameters
    ----------
    rows : TreeRows
        The row store's buffers for this tree (:meth:`~.node_rows.NodeRows.tree_rows`).
    settings : GrowSettings
        ``max_depth`` is the number of levels; ``max_leaves`` and
        ``depthwise`` are not read.
    state : LoopState
        For ``2 ** (max_depth + 1) - 1`` nodes and the pool's slots.
    buffers : LevelBuffers
        For the pool's slots.
    histograms : ndarray of shape (n_slots, n_features, n_bins, 4)
        The grower's histogram pool, of ``2 ** (max_depth - 1)`` slots.
    split_scratch : tuple
        :func:`~.splitting.split_scratch`.
    feature_mask, n_bins_non_missing, is_categorical : ndarray
        As the grower gives them to :func:`~.symmetric.level_split`.
    n_used : int
    sum_g, sum_h : float
        What :meth:`~.node_rows.NodeRows.start` returned.

    Returns
    -------
    n_nodes : int
        The tree's nodes are the first ``n_nodes`` rows of the state's tables.
    """
    per_feature, work = split_scratch[0][0], split_scratch[1]
    scan_bins = scanned_bins(feature_mask, n_bins_non_missing)
    n_slots = histograms.shape[0]
    # The largest scan: that of a level whose nodes fill the pool.
    parallel_scans = may_pick_parallel(n_slots * scan_bins, _MIN_PARALLEL_BINS)
    # Where a node's histogram runs in parallel from little work, a level's,
    # one parallel region as a node's, does too. A level's scan keeps
    # symmetric.py's threshold: its parallel units are single features, too
    # little work each for a lower one (2,000 rows of 800 features with 2 to
    # 5 values: split finding 0.37 -> 0.69 s at LOOP_MIN_PARALLEL_BINS).
    little_work = parallel_from_little_work(rows, n_used)
    if little_work:
        min_cells = level_cells = LOOP_MIN_PARALLEL_CELLS
    else:
        min_cells, level_cells = _MIN_PARALLEL_CELLS, _MIN_PARALLEL_LEVEL_CELLS
    thresholds = ((0, 0, 0, 0) if parallel_forced()
                  else (min_cells, _MIN_PARALLEL_BINS, level_cells,
                        min_parallel_wide_cells(rows, little_work)))
    state.phase_ticks[:] = 0
    state.parallel_calls[:] = 0
    loop = LOOPS[histograms_may_run_in_parallel(rows, n_used), parallel_scans]
    n_nodes = loop(
        rows.X_binned, rows.indices, rows.partition_buffer, rows.gradients, rows.hessians,
        rows.const_hessian, rows.ordered_g, rows.ordered_h, rows.sampled, n_used, sum_g, sum_h,
        rows.features, rows.wide, feature_mask, rows.value_bins, n_bins_non_missing,
        rows.missing_bin, is_categorical, histograms, per_feature, work, settings.max_depth,
        settings.min_samples_leaf, settings.min_hessian_to_split, settings.l2_regularization,
        settings.min_gain_to_split, scan_bins, *thresholds, state.floats, state.ints,
        state.bits, state.free_slots, buffers.nodes, buffers.siblings, buffers.slots,
        buffers.totals, buffers.splits, buffers.pending, buffers.ranges,
        state.phase_ticks, state.parallel_calls)
    count_parallel_runs_of_loop(state, rows)
    runs = state.parallel_calls
    count_parallel_runs(_build_histograms_of_nodes if rows.const_hessian is None
                        else _build_histograms_of_nodes_const, int(runs[LEVEL_HISTOGRAM_RUNS]))
    count_parallel_runs(_summed_gains_of_each_feature, int(runs[LEVEL_SCAN_RUNS]))
    return n_nodes
