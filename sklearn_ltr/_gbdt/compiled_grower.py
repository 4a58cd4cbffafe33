"""The loop of a leaf-wise or depth-wise tree in one compiled call.

:class:`~.grower.TreeGrower` orchestrates a tree in Python: for every split
it partitions the rows, builds the smaller child's histogram and scans the
children for their best splits, each a compiled kernel, with Python in
between to pick the next leaf and keep the nodes. On small data those
Python steps and the kernel calls themselves cost a fifth of a fit
(``benchmarks/results/fit_small.md``: LightGBM's example data and MQ2008).
:func:`grow_tree` runs the same loop in compiled code, calling the same
kernels in the same order with the same arguments, so it grows the same
trees bit for bit, and :class:`~.grower.TreeGrower` uses it whenever it
can: rows held in this process (:class:`~.node_rows.NodeRows`),
``lossguide`` or ``depthwise`` trees with ``max_leaf_nodes`` set, and no
monotonic or interaction constraints (symmetric trees have a loop of their
own, :mod:`.compiled_symmetric`). Any other tree is grown by the Python
loop. The blocks of wide categorical columns are built after each node's
other features, as the row store builds them
(:mod:`.wide_histogram`).

The next leaf to split is the one the Python loop's heap would pop: the
largest gain (for ``depthwise``, the smallest depth), the lowest node id
among equals. With at most ``max_leaf_nodes`` candidates a scan of them is
as fast as a heap.

Kernels too small for threads run serially, as :func:`~.._utils.parallel.pick`
chooses for the Python loop. A loop that may call the parallel histogram
kernels, or the parallel scan, compiles them in; one that never does
(small data, or one thread) is a separate compiled variant without them,
so that a fit compiles only the parallel kernels it may run, as before.

For whoever edits the kernels: numba checks a cached function against its
own source file only, and the cached loops here contain the kernels they
call. After editing a kernel in another module, delete the numba cache
files (``__pycache__/*.nbi`` and ``*.nbc``), or the loops may go on running
the old kernel.
"""

import types
from typing import NamedTuple

import numba
import numpy as np
from numba import njit

from .._utils.clock import TICKS_PER_SECOND, ticks
from .._utils.parallel import count_parallel_runs, may_pick_parallel, parallel_forced
from .categorical import CATEGORY_L2, _fill_left_categories
from .common import BITSET_DTYPE, BITSET_WORDS
from .histogram import (
    _MIN_PARALLEL_CELLS,
    _PREFETCH_MAX_SHARE,
    _PREFETCH_ROWS_AHEAD,
    _build_histogram_of_rows,
    _build_histogram_of_rows_const,
    _build_histogram_of_rows_const_serial,
    _build_histogram_of_rows_serial,
    _gather_gradients,
    _gather_gradients_only,
)
from .loop_parallelism import (
    LOOP_MIN_PARALLEL_BINS,
    LOOP_MIN_PARALLEL_CELLS,
    histograms_may_run_in_parallel,
    min_parallel_wide_cells,
    parallel_from_little_work,
)
from .splitting import (
    _MIN_PARALLEL_BINS,
    _best_split_of_each_feature,
    _best_split_of_each_feature_serial,
    _partition,
    scanned_bins,
)
from .wide_histogram import _wide_columns_histograms, _wide_columns_histograms_serial

__all__ = ["GrowSettings", "LoopState", "grow_tree"]

# Columns of the float node table.
N_FLOAT_COLUMNS = 6
SUM_G, SUM_H, L2, GAIN, G_LEFT, H_LEFT = range(N_FLOAT_COLUMNS)
# Columns of the integer node table.
N_INT_COLUMNS = 13
(COUNT, DEPTH, LEFT, RIGHT, START, STOP, SLOT, CANDIDATE, FEATURE, BIN, MISSING_LEFT,
 COUNT_LEFT, CATEGORICAL) = range(N_INT_COLUMNS)
# Indices of the phase clock.
HISTOGRAMS, SPLIT_FINDING, PARTITION = range(3)
# Indices of the counts of parallel kernel runs: the histograms and scans of
# nodes, of a symmetric level's nodes, and the wide columns' histograms.
HISTOGRAM_RUNS, SCAN_RUNS, LEVEL_HISTOGRAM_RUNS, LEVEL_SCAN_RUNS, WIDE_RUNS = range(5)

# The kernels of large histograms and scans, as the loop's functions name
# them; each compiled variant (see compiled_variant at the end) binds them to
# the parallel kernels or to their serial twins.
_HISTOGRAM = _build_histogram_of_rows_serial
_HISTOGRAM_CONST = _build_histogram_of_rows_const_serial
_SCAN = _best_split_of_each_feature_serial
_WIDE = _wide_columns_histograms_serial


class GrowSettings(NamedTuple):
    """The grower's parameters the loop reads (see :class:`~.grower.TreeGrower`)."""

    max_leaves: int
    max_depth: int  # -1: none
    min_samples_leaf: int
    min_hessian_to_split: float
    l2_regularization: float
    min_gain_to_split: float
    shrinkage: float
    depthwise: bool


class LoopState:
    """The loop's buffers, allocated once per grower: the node tables (for
    at most ``max_nodes`` nodes), each node's features that may still split
    it or its descendants (``node_masks``, of ``n_features``; the symmetric
    loop does not use them), the free histogram slots (for a pool of
    ``n_slots``), and what the last tree leaves for the Python side (its
    phase times, its runs of parallel kernels)."""

    def __init__(self, max_nodes, n_slots, n_features):
        self.floats = np.empty((max_nodes, N_FLOAT_COLUMNS))
        self.ints = np.empty((max_nodes, N_INT_COLUMNS), dtype=np.int64)
        self.bits = np.empty((max_nodes, BITSET_WORDS), dtype=BITSET_DTYPE)
        self.node_masks = np.empty((max_nodes, n_features), dtype=np.uint8)
        self.scan_masks = np.empty((2, n_features), dtype=np.uint8)
        self.node_features = np.empty(n_features, dtype=np.int64)
        self.free_slots = np.empty(n_slots, dtype=np.int64)
        self.phase_ticks = np.zeros(3, dtype=np.int64)
        self.parallel_calls = np.zeros(5, dtype=np.int64)  # by the *_RUNS indices

    def phase_seconds(self):
        """Seconds the last tree spent building histograms, finding splits
        and partitioning rows."""
        return self.phase_ticks / TICKS_PER_SECOND


@njit(cache=True, inline="always")
def _set_left_bins(bits, k, feature_bin, missing_left, categorical, missing_bin, out):
    """The bins that go left at node ``k``'s split, the missing bin included
    (what :func:`~.splitting.left_bins` returns)."""
    if categorical:
        for w in range(BITSET_WORDS):
            out[w] = bits[k, w]
    else:
        full = (feature_bin + 1) >> 5
        rest = (feature_bin + 1) & 31
        for w in range(BITSET_WORDS):
            out[w] = 0
        for w in range(full):
            out[w] = BITSET_DTYPE(0xFFFFFFFF)
        if rest:
            out[full] = BITSET_DTYPE((1 << rest) - 1)
    if missing_left:
        out[missing_bin >> 5] |= BITSET_DTYPE(1) << BITSET_DTYPE(missing_bin & 31)


def _grow_tree_loop(X_binned, indices, partition_buffer, gradients, hessians, const_hessian,
                    ordered_g, ordered_h, sampled, n_used, sum_g, sum_h, features, wide,
                    feature_mask, value_bins, n_bins_non_missing, missing_bin, is_categorical,
                    histograms, per_feature, work, best_features, order, max_leaves, max_depth,
                    min_samples_leaf, min_hessian_to_split, l2_regularization,
                    min_gain_to_split, depthwise, scan_bins, min_parallel_cells,
                    min_parallel_bins, min_parallel_wide_cells, floats, ints, bits, node_masks,
                    scan_masks, node_features, free_slots, phase_ticks, parallel_calls):
    """Grow one tree; return its number of nodes (see the module docstring).

    Node ``k``'s row is ``floats[k]`` and ``ints[k]`` (columns named at the
    top of the module) and, for a categorical split, ``bits[k]``. Leaves have
    ``LEFT`` -1; splits have their ``FEATURE``, ``BIN`` (0 for a
    categorical split, whose left categories are ``bits[k]``),
    ``MISSING_LEFT`` and ``GAIN``. ``START`` and ``STOP`` are a leaf's rows
    in ``indices``. ``const_hessian`` None: hessians are read (numba
    compiles the loop once with None, once with a float, each with the
    histogram kernels of its case only).
    ``wide`` is :attr:`~.node_rows.TreeRows.wide`; ``per_feature``, ``work``,
    ``best_features`` and ``order`` are :func:`~.splitting.split_scratch`.
    ``min_parallel_cells``, ``min_parallel_bins`` and
    ``min_parallel_wide_cells``: the work from which the parallel kernels
    run (those of this variant; 0 forces them).

    ``node_masks[k]`` holds the features that may split node ``k``: the
    tree's ``feature_mask`` at the root, then what the scan of the node's
    parent left of its parent's (see
    :func:`~.splitting._best_split_of_each_feature`). A node's histogram is
    built, and its scan run, for those features only; the trees are the
    same as with every feature of ``feature_mask``, which is what the
    Python loop scans. ``scan_masks`` and ``node_features`` are work space.
    """
    use_rows = np.bool_(True)
    n_free = 0
    for s in range(histograms.shape[0] - 1, -1, -1):
        free_slots[n_free] = s
        n_free += 1
    subtract = np.zeros(2, dtype=np.uint8)
    totals = np.empty((2, 3))
    left_bins = np.empty(BITSET_WORDS, dtype=BITSET_DTYPE)
    scan_nodes = np.empty(2, dtype=np.int64)
    scan_siblings = np.empty(2, dtype=np.int64)

    # Constants passed to compiled functions are written np.int64(...) and
    # np.bool_(...): a bare literal would make numba compile the callee once
    # more, for that literal's own type.
    _new_leaf(ints, floats, np.int64(0), n_used, sum_g, sum_h, np.int64(0), l2_regularization)
    ints[0, START] = 0
    ints[0, STOP] = n_used
    n_nodes = np.int64(1)
    n_leaves = np.int64(1)
    node_masks[0] = feature_mask

    if _splittable(n_used, sum_h, 0, max_depth, min_samples_leaf, min_hessian_to_split):
        n_free -= 1
        ints[0, SLOT] = free_slots[n_free]
        tic = ticks()
        # Sampled rows are gathered; all rows are read in place.
        _node_histogram(
            X_binned, indices, np.int64(0), n_used, sampled, gradients, hessians, const_hessian,
            ordered_g, ordered_h, features, wide, histograms[ints[0, SLOT]], value_bins,
            min_parallel_cells, min_parallel_wide_cells, parallel_calls)
        phase_ticks[HISTOGRAMS] += ticks() - tic
        scan_nodes[0] = 0
        scan_siblings[0] = -1
        n_free = _find_splits(scan_nodes, scan_siblings, np.int64(1), histograms, subtract, totals,
                              n_bins_non_missing, missing_bin, feature_mask, is_categorical,
                              min_samples_leaf, min_hessian_to_split, l2_regularization,
                              min_gain_to_split, per_feature, work, best_features, order, scan_bins,
                              min_parallel_bins, floats, ints, bits, node_masks, scan_masks,
                              free_slots, n_free, phase_ticks, parallel_calls)

    while n_leaves < max_leaves:
        node = _next_leaf(ints, floats, n_nodes, depthwise)
        if node < 0:
            break
        ints[node, CANDIDATE] = 0
        depth = ints[node, DEPTH] + 1
        categorical = ints[node, CATEGORICAL]
        # The children of a categorical split get the extra L2 its gain was
        # computed with.
        l2 = l2_regularization + (CATEGORY_L2 if categorical else 0.0)
        left = n_nodes
        right = n_nodes + 1
        n_nodes += 2
        count_left = ints[node, COUNT_LEFT]
        _new_leaf(ints, floats, left, count_left, floats[node, G_LEFT], floats[node, H_LEFT],
                  depth, l2)
        _new_leaf(ints, floats, right, ints[node, COUNT] - count_left,
                  floats[node, SUM_G] - floats[node, G_LEFT],
                  floats[node, SUM_H] - floats[node, H_LEFT], depth, l2)
        ints[node, LEFT] = left
        ints[node, RIGHT] = right
        node_masks[left] = node_masks[node]
        node_masks[right] = node_masks[node]
        n_leaves += 1
        parent_slot = ints[node, SLOT]
        ints[node, SLOT] = -1
        _set_left_bins(bits, node, ints[node, BIN], ints[node, MISSING_LEFT], categorical,
                       missing_bin, left_bins)
        tic = ticks()
        start = ints[node, START]
        stop = ints[node, STOP]
        n_left = _partition(indices[start:stop], X_binned, ints[node, FEATURE], left_bins,
                            partition_buffer)
        phase_ticks[PARTITION] += ticks() - tic
        ints[left, START] = start
        ints[left, STOP] = start + n_left
        ints[right, START] = start + n_left
        ints[right, STOP] = stop
        if n_leaves >= max_leaves:
            # No further split will happen: no histogram for the children.
            break
        if ints[left, COUNT] <= ints[right, COUNT]:
            small, large = left, right
        else:
            small, large = right, left
        small_ok = _splittable(ints[small, COUNT], floats[small, SUM_H], depth, max_depth,
                               min_samples_leaf, min_hessian_to_split)
        large_ok = _splittable(ints[large, COUNT], floats[large, SUM_H], depth, max_depth,
                               min_samples_leaf, min_hessian_to_split)
        n_scan = 0
        small_slot = -1
        if large_ok:
            # The smaller child's histogram is built; the larger one's is
            # the parent's minus it, made in the parent's slot by the scan.
            n_free -= 1
            small_slot = free_slots[n_free]
            ints[large, SLOT] = parent_slot
            scan_nodes[0] = large
            scan_siblings[0] = small_slot
            n_scan = 1
            if small_ok:
                ints[small, SLOT] = small_slot
                scan_nodes[1] = small
                scan_siblings[1] = -1
                n_scan = 2
        elif small_ok:
            small_slot = parent_slot
            ints[small, SLOT] = parent_slot
            scan_nodes[0] = small
            scan_siblings[0] = -1
            n_scan = 1
        else:
            free_slots[n_free] = parent_slot
            n_free += 1
        if n_scan:
            tic = ticks()
            n_node_features = _features_of_node(node_masks[small], features, node_features)
            _node_histogram(
                X_binned, indices, ints[small, START], ints[small, STOP], use_rows, gradients,
                hessians, const_hessian, ordered_g, ordered_h, node_features[:n_node_features],
                wide,
                histograms[small_slot], value_bins, min_parallel_cells, min_parallel_wide_cells,
                parallel_calls)
            phase_ticks[HISTOGRAMS] += ticks() - tic
            n_free = _find_splits(scan_nodes, scan_siblings, n_scan, histograms, subtract, totals,
                                  n_bins_non_missing, missing_bin, feature_mask, is_categorical,
                                  min_samples_leaf, min_hessian_to_split, l2_regularization,
                                  min_gain_to_split, per_feature, work, best_features, order,
                                  scan_bins, min_parallel_bins, floats, ints, bits, node_masks,
                                  scan_masks, free_slots, n_free, phase_ticks, parallel_calls)
        if large_ok and not small_ok:
            free_slots[n_free] = small_slot
            n_free += 1
    return n_nodes


@njit(cache=True, inline="always")
def _new_leaf(ints, floats, k, count, sum_g, sum_h, depth, l2):
    """Make node ``k`` a leaf of ``count`` rows with these sums (its row
    range is set by the partition that makes it)."""
    ints[k, COUNT] = count
    ints[k, DEPTH] = depth
    ints[k, LEFT] = -1
    ints[k, RIGHT] = -1
    ints[k, SLOT] = -1
    ints[k, CANDIDATE] = 0
    floats[k, SUM_G] = sum_g
    floats[k, SUM_H] = sum_h
    floats[k, L2] = l2


@njit(cache=True, inline="always")
def _features_of_node(node_mask, features, node_features):
    """Write the features of ``features`` that ``node_mask`` keeps into
    ``node_features``; return how many."""
    n = 0
    for f in features:
        if node_mask[f]:
            node_features[n] = f
            n += 1
    return n


@njit(cache=True, inline="always")
def _splittable(count, sum_h, depth, max_depth, min_samples_leaf, min_hessian_to_split):
    """:meth:`~.grower.TreeGrower._splittable`."""
    if max_depth >= 0 and depth >= max_depth:
        return False
    if count < 2 * min_samples_leaf:
        return False
    return sum_h >= 2 * min_hessian_to_split


@njit(cache=True)
def _next_leaf(ints, floats, n_nodes, depthwise):
    """The candidate the Python loop's heap would pop: the smallest key
    (``-gain``, or the depth for depth-wise trees), then the smallest id;
    -1 if there is none."""
    best = -1
    best_key = 0.0
    for k in range(n_nodes):
        if not ints[k, CANDIDATE]:
            continue
        key = float(ints[k, DEPTH]) if depthwise else -floats[k, GAIN]
        if best < 0 or key < best_key:
            best = k
            best_key = key
    return best


def _node_histogram(X_binned, indices, start, stop, use_rows, gradients, hessians,
                    const_hessian, ordered_g, ordered_h, features, wide, hist, value_bins,
                    min_parallel_cells, min_parallel_wide_cells, parallel_calls):
    """:meth:`~.node_rows.NodeRows._node_histogram` of the rows
    ``indices[start:stop]``, their gradients gathered, or with ``use_rows``
    False the histogram of every row, read in place
    (:meth:`~.node_rows.NodeRows.root_histogram`), the blocks of the wide
    columns (``wide``) included; count the parallel kernels it ran in
    ``parallel_calls``."""
    rows = indices[start:stop]
    n = stop - start if use_rows else X_binned.shape[0]
    ahead = _PREFETCH_ROWS_AHEAD if n < _PREFETCH_MAX_SHARE * X_binned.shape[0] else 0
    parallel = n * features.shape[0] >= min_parallel_cells
    if parallel:
        parallel_calls[HISTOGRAM_RUNS] += 1
    if const_hessian is None:
        g, h = gradients, hessians
        if use_rows:
            _gather_gradients(rows, gradients, hessians, ordered_g, ordered_h)
            g, h = ordered_g, ordered_h
        if parallel:
            _HISTOGRAM(X_binned, rows, use_rows, g, h, features, hist, value_bins, ahead)
        else:
            _build_histogram_of_rows_serial(X_binned, rows, use_rows, g, h, features, hist,
                                            value_bins, ahead)
        _wide_histograms(wide, rows, use_rows, g, h, -1.0, hist, value_bins, n,
                         min_parallel_wide_cells, parallel_calls)
    else:
        g = gradients
        if use_rows:
            _gather_gradients_only(rows, gradients, ordered_g)
            g = ordered_g
        if parallel:
            _HISTOGRAM_CONST(X_binned, rows, use_rows, g, const_hessian, features, hist,
                             value_bins, ahead)
        else:
            _build_histogram_of_rows_const_serial(X_binned, rows, use_rows, g, const_hessian,
                                                  features, hist, value_bins, ahead)
        _wide_histograms(wide, rows, use_rows, g, hessians, const_hessian, hist, value_bins, n,
                         min_parallel_wide_cells, parallel_calls)


def _wide_histograms(wide, rows, use_rows, gradients, hessians, hessian, hist, value_bins, n,
                     min_parallel_wide_cells, parallel_calls):
    """:meth:`~.wide_histogram.WideColumns.build` of the active wide
    columns of ``wide`` for ``n`` rows, as
    :meth:`~.node_rows.NodeRows._wide_histograms` calls it; ``hessian`` < 0
    reads ``hessians``. ``wide`` None (no wide column): nothing to do, and
    numba then compiles no wide kernel into the loop."""
    if wide is None:
        return
    codes, firsts, n_blocks, active = wide
    if active.shape[0] == 0:
        return
    if n * codes.shape[1] >= min_parallel_wide_cells:
        parallel_calls[WIDE_RUNS] += 1
        _WIDE(codes, rows, use_rows, gradients, hessians, hessian, firsts, n_blocks, active,
              hist, value_bins)
    else:
        _wide_columns_histograms_serial(codes, rows, use_rows, gradients, hessians, hessian,
                                        firsts, n_blocks, active, hist, value_bins)


def _find_splits(scan_nodes, scan_siblings, n_scan, histograms, subtract, totals,
                 n_bins_non_missing, missing_bin, feature_mask, is_categorical,
                 min_samples_leaf, min_hessian_to_split, l2_regularization, min_gain_to_split,
                 per_feature, work, best_features, order, scan_bins, min_parallel_bins, floats,
                 ints, bits, node_masks, scan_masks, free_slots, n_free, phase_ticks,
                 parallel_calls):
    """:meth:`~.grower.TreeGrower._find_splits` with
    :func:`~.splitting.find_best_splits` of the ``n_scan`` nodes
    ``scan_nodes`` (each with its sibling's slot, or -1), each over the
    features of its row of ``node_masks``, which the scan narrows; return
    the number of free slots after the nodes without a split gave theirs
    back."""
    tic = ticks()
    for k in range(n_scan):
        node = scan_nodes[k]
        scan_masks[k] = node_masks[node]
        subtract[k] = scan_siblings[k] >= 0
        totals[k, 0] = floats[node, SUM_G]
        totals[k, 1] = floats[node, SUM_H]
        totals[k, 2] = float(ints[node, COUNT])
    hist0 = histograms[ints[scan_nodes[0], SLOT]]
    hist1 = histograms[ints[scan_nodes[n_scan - 1], SLOT]]
    sibling0 = hist0 if scan_siblings[0] < 0 else histograms[scan_siblings[0]]
    sibling1 = (hist1 if scan_siblings[n_scan - 1] < 0
                else histograms[scan_siblings[n_scan - 1]])
    nodes_features = per_feature[:n_scan]
    if n_scan * scan_bins >= min_parallel_bins:
        parallel_calls[SCAN_RUNS] += 1
        _SCAN(hist0, hist1, sibling0, sibling1, subtract, totals, n_bins_non_missing,
              missing_bin, feature_mask, is_categorical, min_samples_leaf, min_hessian_to_split,
              l2_regularization, nodes_features, work, order, None, None, best_features,
              scan_masks[:n_scan])
    else:
        _best_split_of_each_feature_serial(
            hist0, hist1, sibling0, sibling1, subtract, totals, n_bins_non_missing, missing_bin,
            feature_mask, is_categorical, min_samples_leaf, min_hessian_to_split,
            l2_regularization, nodes_features, work, order, None, None, best_features,
            scan_masks[:n_scan])
    for k in range(n_scan):
        node = scan_nodes[k]
        node_masks[node] = scan_masks[k]
        best = best_features[k]
        gain = per_feature[k, best, 0] if best >= 0 else -np.inf
        if best < 0 or not gain > min_gain_to_split:
            free_slots[n_free] = ints[node, SLOT]
            n_free += 1
            ints[node, SLOT] = -1
            continue
        ints[node, CANDIDATE] = 1
        ints[node, FEATURE] = best
        floats[node, GAIN] = gain
        ints[node, MISSING_LEFT] = int(per_feature[k, best, 2])
        floats[node, G_LEFT] = per_feature[k, best, 3]
        floats[node, H_LEFT] = per_feature[k, best, 4]
        ints[node, COUNT_LEFT] = int(per_feature[k, best, 5] + 0.5)
        if is_categorical[best]:
            # The scan kept the size of the set; the set is made for the
            # chosen feature only.
            ints[node, CATEGORICAL] = 1
            ints[node, BIN] = 0
            _fill_left_categories(histograms[ints[node, SLOT]][best], n_bins_non_missing[best],
                                  missing_bin, int(per_feature[k, best, 1]), bits[node])
        else:
            ints[node, CATEGORICAL] = 0
            ints[node, BIN] = int(per_feature[k, best, 1])
    phase_ticks[SPLIT_FINDING] += ticks() - tic
    return n_free


def compiled_variant(helpers, suffix, bindings):
    """Compiled copies of the plain functions ``helpers``, in which each
    global named in ``bindings`` (the kernels of large histograms and
    scans) is bound to its value there, and each helper calls the copies
    of the helpers before it; a dict of them by name, each cached under its
    name plus ``suffix``."""
    compiled = {}
    for helper in helpers:
        namespace = dict(helper.__globals__)
        namespace.update(bindings)
        namespace.update(compiled)
        function = types.FunctionType(helper.__code__, namespace, helper.__name__ + suffix)
        function.__qualname__ = helper.__qualname__ + suffix
        function.__module__ = helper.__module__
        function.__doc__ = helper.__doc__
        compiled[helper.__name__] = njit(cache=True)(function)
    return compiled


def variant_suffix(parallel_histograms, parallel_scans):
    """The name suffix of the compiled variant with these kernels."""
    return (("_parallel" if parallel_histograms else "_serial") + "_histograms"
            + ("_parallel" if parallel_scans else "_serial") + "_scans")


# The histogram helpers (the symmetric loop calls them too) and the scan
# helper, each with the serial kernels (False) or the parallel ones (True),
# and the loop in the four combinations. A variant is compiled on its first
# call: a fit compiles the parallel kernels only of the work that may run
# in parallel (on small data, the scans of a symmetric level but not its
# histograms), as pick() does for the Python loop.
HISTOGRAM_HELPERS = {
    False: compiled_variant((_wide_histograms, _node_histogram), "_serial",
                            dict(_HISTOGRAM=_build_histogram_of_rows_serial,
                                 _HISTOGRAM_CONST=_build_histogram_of_rows_const_serial,
                                 _WIDE=_wide_columns_histograms_serial)),
    True: compiled_variant((_wide_histograms, _node_histogram), "_parallel",
                           dict(_HISTOGRAM=_build_histogram_of_rows,
                                _HISTOGRAM_CONST=_build_histogram_of_rows_const,
                                _WIDE=_wide_columns_histograms)),
}
_SCAN_HELPERS = {
    False: compiled_variant((_find_splits,), "_serial",
                            dict(_SCAN=_best_split_of_each_feature_serial)),
    True: compiled_variant((_find_splits,), "_parallel", dict(_SCAN=_best_split_of_each_feature)),
}
LOOPS = {
    (histograms, scans): compiled_variant(
        (_grow_tree_loop,), variant_suffix(histograms, scans),
        {**HISTOGRAM_HELPERS[histograms], **_SCAN_HELPERS[scans]})["_grow_tree_loop"]
    for histograms in (False, True) for scans in (False, True)
}


def load_every_variant(loops):
    """Compile, or load from the cache, every variant in ``loops`` (the
    compiled variants of one loop, as :data:`LOOPS`) for each argument types
    any of them has run with in this process. A process warmed up on small
    data, whose fits pick some variants only, then runs the variants larger
    data pick without compiling (``sklearn_ltr.dask.warm_up_workers``)."""
    signatures = {sig for loop in loops.values() for sig in loop.signatures}
    for (parallel_histograms, parallel_scans), loop in loops.items():
        if (parallel_histograms or parallel_scans) and numba.get_num_threads() == 1:
            continue  # never picked on one thread
        for sig in signatures.difference(loop.signatures):
            loop.compile(sig)


def grow_tree(rows, settings, state, histograms, split_scratch, feature_mask, n_bins_non_missing,
              is_categorical, n_used, sum_g, sum_h):
    """Grow one tree in one compiled call.

    Parameters
    ----------
    rows : TreeRows
        The row store's buffers for this tree (:meth:`~.node_rows.NodeRows.tree_rows`).
    settings : GrowSettings
    state : LoopState
        Receives the nodes, and the phase times and parallel kernel runs
        of this tree.
    histograms : ndarray of shape (n_slots, n_features, n_bins, 4)
        The grower's histogram pool.
    split_scratch : tuple
        :func:`~.splitting.split_scratch`.
    feature_mask, n_bins_non_missing, is_categorical : ndarray
        As the grower gives them to :func:`~.splitting.find_best_splits`.
    n_used : int
    sum_g, sum_h : float
        What :meth:`~.node_rows.NodeRows.start` returned.

    Returns
    -------
    n_nodes : int
        The tree's nodes are the first ``n_nodes`` rows of the state's tables.
    """
    per_feature, work, best_features, order = split_scratch
    scan_bins = scanned_bins(feature_mask, n_bins_non_missing)
    little_work = parallel_from_little_work(rows, n_used)
    if little_work:
        min_cells, min_bins = LOOP_MIN_PARALLEL_CELLS, LOOP_MIN_PARALLEL_BINS
    else:
        min_cells, min_bins = _MIN_PARALLEL_CELLS, _MIN_PARALLEL_BINS
    # The variant with parallel kernels only where they may run: two
    # siblings' scans are the largest scan work.
    parallel_scans = may_pick_parallel(2 * scan_bins, min_bins)
    thresholds = ((0, 0, 0) if parallel_forced()
                  else (min_cells, min_bins, min_parallel_wide_cells(rows, little_work)))
    state.phase_ticks[:] = 0
    state.parallel_calls[:] = 0
    loop = LOOPS[histograms_may_run_in_parallel(rows, n_used), parallel_scans]
    n_nodes = loop(
        rows.X_binned, rows.indices, rows.partition_buffer, rows.gradients, rows.hessians,
        rows.const_hessian, rows.ordered_g, rows.ordered_h, rows.sampled, n_used, sum_g, sum_h,
        rows.features, rows.wide, feature_mask, rows.value_bins, n_bins_non_missing,
        rows.missing_bin, is_categorical, histograms, per_feature, work, best_features, order,
        settings.max_leaves, settings.max_depth, settings.min_samples_leaf,
        settings.min_hessian_to_split, settings.l2_regularization, settings.min_gain_to_split,
        settings.depthwise, scan_bins, *thresholds, state.floats, state.ints, state.bits,
        state.node_masks, state.scan_masks, state.node_features, state.free_slots,
        state.phase_ticks, state.parallel_calls)
    count_parallel_runs_of_loop(state, rows)
    return n_nodes


def count_parallel_runs_of_loop(state, rows):
    """Record the parallel kernels of nodes and wide columns that the last
    tree's loop ran (see :func:`~.._utils.parallel.count_parallel_runs`);
    the symmetric loop records its level kernels itself."""
    const = rows.const_hessian is not None
    runs = state.parallel_calls.tolist()
    count_parallel_runs(_build_histogram_of_rows_const if const else _build_histogram_of_rows,
                        runs[HISTOGRAM_RUNS])
    count_parallel_runs(_best_split_of_each_feature, runs[SCAN_RUNS])
    count_parallel_runs(_wide_columns_histograms, runs[WIDE_RUNS])
