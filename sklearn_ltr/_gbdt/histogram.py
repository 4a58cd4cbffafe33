"""This module contains the njitted routines that build gradient histograms.

A node's histogram holds, for every feature and bin, the sum of gradients,
the sum of hessians and the number of rows. It is a plain float64 array of
shape ``(n_features, histogram_bins(n_bins), 4)``, C-ordered, where the last
axis is ``(sum_gradients, sum_hessians, count, unused)``. Why this layout:

- one bin is 32 contiguous bytes, so adding a row to a bin is a single
  4-wide vector read-modify-write of ``(g, h, 1, 0)`` (see
  :func:`.histogram_rows._add_ghc`) instead of three scalar ones; the
  fourth slot is padding for that;
- one feature's histogram is about 8 KB for 256 bins, so the histograms of a
  feature group (below) stay in L1 cache while their columns are scanned.
  Each feature has :data:`~.histogram_rows.PADDING_BINS` bins more than
  ``n_bins``, never used (the missing bin stays bin ``n_bins - 1``,
  :func:`~.histogram_rows.missing_bin_of`): with exactly 8 KB, the first
  bins of all features fell in the same cache sets, and on LightGBM's
  example, whose features have few values, each bin a row updated evicted
  another feature's. Padded, the histograms of 500-tree fits of it take
  about a fifth less time; on ``make_ranking``'s 255-bin features they take
  the same;
- plain float arrays compile in numba to bare pointer arithmetic and let
  NumPy do whole-array operations. Counts are exact in float64 up to 2**53.

Measured on the benchmark data, reading the float32 gradients and hessians
once per feature costs more than the histogram updates themselves. The
kernels therefore scan the rows once per *group of features* (4 in the
general case, 8 of few bins in small data, 8 with constant hessians),
loading a row's gradient once and adding it to the group's histograms.

With constant hessians (e.g. least squares; the objective declares them,
see :class:`~.objective.Objective`) only ``(g, 1)`` is accumulated and the
hessian sums are ``count * hessian``, as LightGBM does.

The kernels run ``prange`` over feature groups, and each feature's sums are
accumulated serially in row order, so results are bit-identical for any
number of threads. Features whose ``feature_mask`` entry is 0 are skipped
and their histogram is left untouched. Of a built feature, only the bins its
values can fall in (its first ``value_bins[f]``, from the bin mapper) and the
missing bin are written; the bins in between keep whatever the reused buffer
held, and no split scan reads them. Histograms of few rows are built by
serial twins of the same kernels (``_MIN_PARALLEL_CELLS``), with the same
results.
"""

import numpy as np
from numba import njit, prange

from .._utils.parallel import pick, serial_twin
from .histogram_rows import (
    GROUP_FEATURES_CONST,
    _feature_groups,
    _hist_rows,
    _hist_rows_const,
    histogram_bins,
    missing_bin_of,
)

# Indices along the last histogram axis.
SUM_G = 0
SUM_H = 1
COUNT = 2
HIST_WIDTH = 4  # (sum_g, sum_h, count, padding)

def allocate_histograms(n_histograms, n_features, n_bins):
    """Allocate a stack of histograms.

    Parameters
    ----------
    n_histograms : int
        Number of histograms.
    n_features : int
        Number of features.
    n_bins : int
        Bins per feature, ``max_bins + 1`` (the last is the missing bin).

    Returns
    -------
    histograms : ndarray of shape (n_histograms, n_features, histogram_bins(n_bins), 4), dtype float64
        Zero-filled buffer; see the module docstring for the layout. The
        bins from ``n_bins`` on are padding.
    """
    return np.zeros((n_histograms, n_features, histogram_bins(n_bins), HIST_WIDTH),
                    dtype=np.float64)


# The root's histogram reads every row directly, a node's reads its rows
# through ``sample_indices``. One kernel per hessian case does both, told
# which by a run-time flag: the flag is tested outside the row loops, so it
# costs nothing there, and each kernel is compiled once instead of twice (a
# parallel kernel takes about a second to compile on a fresh install).
# ``_NO_ROWS`` stands for the unused ``sample_indices`` of the root; it has the
# dtype of the grower's row indices so that both cases share one compiled
# specialisation.
_NO_ROWS = np.zeros(0, dtype=np.int32)

# Histograms of fewer (rows x features) than this are built by the serial
# twins of the kernels (see sklearn_ltr._utils.parallel): at about 1 ns per row and
# feature that is under 0.2 ms of work, where two threads save less than
# 0.1 ms once woken (which takes about 0.04 ms), and a small fit then needs
# no parallel kernel compiled.
_MIN_PARALLEL_CELLS = 200_000


@njit(parallel=True, cache=True)
def _build_histogram_of_rows(X_binned, sample_indices, use_indices, gradients, hessians,
                             features, hist, value_bins, ahead):
    """Build a histogram, general hessians (see :func:`_build_histogram_root`
    and :func:`_build_histogram`).

    With ``use_indices`` the rows are ``sample_indices`` and ``gradients``
    and ``hessians`` are gathered (row ``i`` of the node is entry ``i``);
    without, the rows are all rows and ``sample_indices`` is not read.
    ``features`` (int64, ascending) are the features to build, taken four
    at a time. ``ahead``: how many rows ahead to prefetch (see
    :func:`_prefetch_distance`).
    """
    starts = _feature_groups(features, value_bins, X_binned.shape[0])
    for grp in prange(starts.shape[0] - 1):
        _hist_rows(X_binned, sample_indices, use_indices, gradients, hessians, features,
                   starts[grp], starts[grp + 1], hist, value_bins, ahead)


@njit(parallel=True, cache=True)
def _build_histogram_of_rows_const(X_binned, sample_indices, use_indices, gradients, hessian,
                                   features, hist, value_bins, ahead):
    """Build a histogram, constant hessian (see
    :func:`_build_histogram_root_const` and :func:`_build_histogram_const`);
    ``sample_indices``, ``use_indices`` and ``features`` as in
    :func:`_build_histogram_of_rows`, features taken eight at a time."""
    n_active = features.shape[0]
    n_groups = (n_active + GROUP_FEATURES_CONST - 1) // GROUP_FEATURES_CONST
    for grp in prange(n_groups):
        first = grp * GROUP_FEATURES_CONST
        _hist_rows_const(X_binned, sample_indices, use_indices, gradients, hessian, features,
                         first, min(first + GROUP_FEATURES_CONST, n_active), hist, value_bins,
                         ahead)


_build_histogram_of_rows_serial = serial_twin(_build_histogram_of_rows)
_build_histogram_of_rows_const_serial = serial_twin(_build_histogram_of_rows_const)


# The histograms of several nodes in one call: the nodes of a level of a
# symmetric tree, whose rows the per-node kernels would otherwise visit in one
# call (and one wake-up of the threads) each. Each task is one (node, feature
# group) pair, accumulated by the same serial loops as the per-node kernels,
# so every histogram is bit-identical to the one those build. Tasks run
# feature group by feature group, each group's nodes together: a thread's
# share of the tasks is then one share of the features in every node, the
# share of the features it scans next (symmetric._summed_gains_of_each_feature
# splits the features the same way), so the scan finds its histograms in its
# own core's cache. Node by node, the scans of a YetiRank fit on LightGBM's
# example took a tenth longer and its histograms a fifth.
# The gathers run first, serially: they cost a few percent of the
# accumulation.


@njit(parallel=True, cache=True)
def _build_histograms_of_nodes(X_binned, indices, starts, stops, gradients, hessians, features,
                               histograms, slots, value_bins, ordered_g, ordered_h):
    """Build the histograms of several nodes, general hessians.

    Node ``k``'s rows are ``indices[starts[k]:stops[k]]``, gathered into the
    same range of ``ordered_g`` and ``ordered_h``, and its histogram is
    ``histograms[slots[k]]``. ``features`` as in
    :func:`_build_histogram_of_rows`.
    """
    n_nodes = starts.shape[0]
    for k in range(n_nodes):
        for i in range(starts[k], stops[k]):
            j = indices[i]
            ordered_g[i] = gradients[j]
            ordered_h[i] = hessians[j]
    groups = _feature_groups(features, value_bins, X_binned.shape[0])
    n_groups = groups.shape[0] - 1
    n_samples = X_binned.shape[0]
    for task in prange(n_nodes * n_groups):
        grp = task // n_nodes
        k = task - grp * n_nodes
        lo = starts[k]
        hi = stops[k]
        ahead = (_PREFETCH_ROWS_AHEAD if hi - lo < _PREFETCH_MAX_SHARE * n_samples else 0)
        # np.bool_, not a bare True: the per-node kernels pass a bool, and a
        # literal would make numba compile the loops once more for its type.
        _hist_rows(X_binned, indices[lo:hi], np.bool_(True), ordered_g[lo:hi], ordered_h[lo:hi],
                   features, groups[grp], groups[grp + 1], histograms[slots[k]], value_bins,
                   ahead)


@njit(parallel=True, cache=True)
def _build_histograms_of_nodes_const(X_binned, indices, starts, stops, gradients, hessian,
                                     features, histograms, slots, value_bins, ordered_g):
    """Build the histograms of several nodes, constant hessian (see
    :func:`_build_histograms_of_nodes`), features taken eight at a time."""
    n_nodes = starts.shape[0]
    for k in range(n_nodes):
        for i in range(starts[k], stops[k]):
            ordered_g[i] = gradients[indices[i]]
    n_active = features.shape[0]
    n_groups = (n_active + GROUP_FEATURES_CONST - 1) // GROUP_FEATURES_CONST
    n_samples = X_binned.shape[0]
    for task in prange(n_nodes * n_groups):
        grp = task // n_nodes
        k = task - grp * n_nodes
        lo = starts[k]
        hi = stops[k]
        ahead = (_PREFETCH_ROWS_AHEAD if hi - lo < _PREFETCH_MAX_SHARE * n_samples else 0)
        first = grp * GROUP_FEATURES_CONST
        _hist_rows_const(X_binned, indices[lo:hi], np.bool_(True), ordered_g[lo:hi], hessian,
                         features, first, min(first + GROUP_FEATURES_CONST, n_active),
                         histograms[slots[k]], value_bins, ahead)


_build_histograms_of_nodes_serial = serial_twin(_build_histograms_of_nodes)
_build_histograms_of_nodes_const_serial = serial_twin(_build_histograms_of_nodes_const)

# Levels of fewer (rows x features) than this are built serially. With the
# per-node threshold (_MIN_PARALLEL_CELLS) the levels of symmetric depth-6
# fits on LightGBM's example data (300 narrow features, 3,005 rows) took 10
# to 20% longer than node by node, where their small nodes had each run
# serially; from 1,000,000 they took the same time, there and on MQ2008.
_MIN_PARALLEL_LEVEL_CELLS = 1_000_000


def _build_histograms(X_binned, indices, starts, stops, n_rows, gradients, hessians,
                      const_hessian, feature_mask, histograms, slots, value_bins, ordered_g,
                      ordered_h):
    """Build the histograms of several nodes in one kernel call.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, Fortran order
        Binned data.
    indices : ndarray of shape (n_samples,), dtype int32
        Row indices; node ``k``'s rows are ``indices[starts[k]:stops[k]]``,
        the nodes' ranges disjoint.
    starts, stops : ndarray of shape (n_nodes,), dtype int64
        Range of each node's rows in ``indices``.
    n_rows : int
        Rows of all nodes, ``sum(stops - starts)``.
    gradients, hessians : ndarray of shape (n_samples,), dtype float32
        Gradients and hessians of all rows; ``hessians`` is not read with
        ``const_hessian``.
    const_hessian : float or None
        The hessian of every row, or None to read ``hessians``.
    feature_mask : ndarray of shape (n_features,), dtype uint8
        Features to build (non-zero).
    histograms : ndarray of shape (n_slots, n_features, n_bins, 4), dtype float64
        The histogram pool; node ``k``'s histogram is written to
        ``histograms[slots[k]]``, bit for bit as :func:`_build_histogram`
        (or :func:`_build_histogram_const`) writes it.
    slots : ndarray of shape (n_nodes,), dtype int64
        Distinct slots.
    value_bins : ndarray of shape (n_features,), dtype int64, or None
        As in :func:`_build_histogram`.
    ordered_g, ordered_h : ndarray of shape (n_samples,), dtype float32
        Scratch for the gathered gradients and hessians (the same positions
        as ``indices``); ``ordered_h`` is not written with ``const_hessian``.
    """
    features = _masked_in(feature_mask)
    value_bins = _value_bins(value_bins, histograms[0])
    if const_hessian is not None:
        kernel = pick(_build_histograms_of_nodes_const, _build_histograms_of_nodes_const_serial,
                      n_rows * features.shape[0], _MIN_PARALLEL_LEVEL_CELLS)
        kernel(X_binned, indices, starts, stops, gradients, float(const_hessian), features,
               histograms, slots, value_bins, ordered_g)
    else:
        kernel = pick(_build_histograms_of_nodes, _build_histograms_of_nodes_serial,
                      n_rows * features.shape[0], _MIN_PARALLEL_LEVEL_CELLS)
        kernel(X_binned, indices, starts, stops, gradients, hessians, features, histograms,
               slots, value_bins, ordered_g, ordered_h)


def _histogram_kernel(n_rows, features, const_hessian):
    """The parallel or the serial kernel for a histogram of this size."""
    if const_hessian:
        return pick(_build_histogram_of_rows_const, _build_histogram_of_rows_const_serial,
                    n_rows * features.shape[0], _MIN_PARALLEL_CELLS)
    return pick(_build_histogram_of_rows, _build_histogram_of_rows_serial,
                n_rows * features.shape[0], _MIN_PARALLEL_CELLS)


# A node's rows are a sorted subset of all rows. When they are few, nearly
# every column read lands on a cache line of its own, and the kernel waits on
# memory: prefetching the rows this far ahead overlaps those waits (measured
# on MSLR-shaped data, 1 thread: 40% less time for nodes of under 1,000 rows
# out of 120,000, 30% for 1,000 to 5,000). When a node holds a large share of
# the rows, the reads are nearly sequential, the hardware prefetcher does the
# job, and the hints only cost instructions (30% more time above a sixth).
_PREFETCH_ROWS_AHEAD = 32
_PREFETCH_MAX_SHARE = 1 / 16


def _prefetch_distance(n_node_rows, n_rows):
    """How many rows ahead the kernels prefetch for a node of this size (0:
    no prefetching)."""
    return _PREFETCH_ROWS_AHEAD if n_node_rows < _PREFETCH_MAX_SHARE * n_rows else 0


def _value_bins(value_bins, hist):
    """``value_bins``, or every bin but the missing one for each feature."""
    if value_bins is None:
        return np.full(hist.shape[0], missing_bin_of(hist), dtype=np.int64)
    return value_bins


def _masked_in(feature_mask):
    """The features whose ``feature_mask`` entry is non-zero, ascending, as
    int64. Found here in NumPy rather than in the kernels: a few microseconds
    per histogram, and one compiled helper fewer."""
    return np.flatnonzero(feature_mask).astype(np.int64, copy=False)


def _build_histogram_root(X_binned, gradients, hessians, feature_mask, hist, value_bins=None):
    """Build the histogram of all rows, without gathering.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, Fortran order
        Binned data.
    gradients : ndarray of shape (n_samples,), dtype float32
        Gradients of all rows.
    hessians : ndarray of shape (n_samples,), dtype float32
        Hessians of all rows.
    feature_mask : ndarray of shape (n_features,), dtype uint8
        Features to build (non-zero).
    hist : ndarray of shape (n_features, n_bins, 4), dtype float64
        Output histogram, overwritten for masked-in features.
    value_bins : ndarray of shape (n_features,), dtype int64, default=None
        Bins below which each feature's values fall (besides the missing
        bin): only those and the missing bin are written. None: all bins.
    """
    features = _masked_in(feature_mask)
    kernel = _histogram_kernel(X_binned.shape[0], features, False)
    kernel(X_binned, _NO_ROWS, False, gradients, hessians, features, hist,
           _value_bins(value_bins, hist), 0)


def _build_histogram(X_binned, sample_indices, ordered_gradients, ordered_hessians,
                     feature_mask, hist, value_bins=None, features=None):
    """Build the histogram of a node from its rows.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, Fortran order
        Binned data.
    sample_indices : ndarray of shape (n_node,), dtype int32
        Rows of the node.
    ordered_gradients : ndarray of shape (n_node,), dtype float32
        ``gradients[sample_indices]``, gathered once for all features.
    ordered_hessians : ndarray of shape (n_node,), dtype float32
        ``hessians[sample_indices]``.
    feature_mask : ndarray of shape (n_features,), dtype uint8
        Features to build (non-zero).
    hist : ndarray of shape (n_features, n_bins, 4), dtype float64
        Output histogram, overwritten for masked-in features.
    value_bins : ndarray of shape (n_features,), dtype int64, default=None
        Bins below which each feature's values fall (besides the missing
        bin): only those and the missing bin are written. None: all bins.
    features : ndarray of int64, default=None
        ``np.flatnonzero(feature_mask)``, if the caller keeps it (a row store
        builds many histograms with one mask); None to find it here.
    """
    if features is None:
        features = _masked_in(feature_mask)
    kernel = _histogram_kernel(sample_indices.shape[0], features, False)
    kernel(X_binned, sample_indices, True, ordered_gradients, ordered_hessians, features, hist,
           _value_bins(value_bins, hist),
           _prefetch_distance(sample_indices.shape[0], X_binned.shape[0]))


def _build_histogram_root_const(X_binned, gradients, hessian, feature_mask, hist,
                                value_bins=None):
    """Build the root histogram when every row has the same hessian.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, Fortran order
        Binned data.
    gradients : ndarray of shape (n_samples,), dtype float32
        Gradients of all rows.
    hessian : float
        The hessian of every row.
    feature_mask : ndarray of shape (n_features,), dtype uint8
        Features to build (non-zero).
    hist : ndarray of shape (n_features, n_bins, 4), dtype float64
        Output histogram (hessian sums are ``count * hessian``).
    value_bins : ndarray of shape (n_features,), dtype int64, default=None
        Bins below which each feature's values fall (besides the missing
        bin): only those and the missing bin are written. None: all bins.
    """
    features = _masked_in(feature_mask)
    kernel = _histogram_kernel(X_binned.shape[0], features, True)
    kernel(X_binned, _NO_ROWS, False, gradients, float(hessian), features, hist,
           _value_bins(value_bins, hist), 0)


def _build_histogram_const(X_binned, sample_indices, ordered_gradients, hessian,
                           feature_mask, hist, value_bins=None, features=None):
    """Build a node's histogram when every row has the same hessian.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, Fortran order
        Binned data.
    sample_indices : ndarray of shape (n_node,), dtype int32
        Rows of the node.
    ordered_gradients : ndarray of shape (n_node,), dtype float32
        ``gradients[sample_indices]``.
    hessian : float
        The hessian of every row.
    feature_mask : ndarray of shape (n_features,), dtype uint8
        Features to build (non-zero).
    hist : ndarray of shape (n_features, n_bins, 4), dtype float64
        Output histogram (hessian sums are ``count * hessian``).
    value_bins : ndarray of shape (n_features,), dtype int64, default=None
        Bins below which each feature's values fall (besides the missing
        bin): only those and the missing bin are written. None: all bins.
    features : ndarray of int64, default=None
        ``np.flatnonzero(feature_mask)``, if the caller keeps it (a row store
        builds many histograms with one mask); None to find it here.
    """
    if features is None:
        features = _masked_in(feature_mask)
    kernel = _histogram_kernel(sample_indices.shape[0], features, True)
    kernel(X_binned, sample_indices, True, ordered_gradients, float(hessian), features, hist,
           _value_bins(value_bins, hist),
           _prefetch_distance(sample_indices.shape[0], X_binned.shape[0]))


@njit(cache=True)
def _gather_gradients(sample_indices, gradients, hessians, ordered_gradients,
                      ordered_hessians):
    """Gather the gradients and hessians of a node's rows into contiguous buffers.

    Parameters
    ----------
    sample_indices : ndarray of shape (n_node,), dtype int32
        Rows of the node.
    gradients, hessians : ndarray of shape (n_samples,), dtype float32
        Gradients and hessians of all rows.
    ordered_gradients, ordered_hessians : ndarray of shape (>= n_node,), dtype float32
        Output buffers; the first ``n_node`` entries are written.
    """
    for i in range(sample_indices.shape[0]):
        j = sample_indices[i]
        ordered_gradients[i] = gradients[j]
        ordered_hessians[i] = hessians[j]


@njit(cache=True)
def _gather_gradients_only(sample_indices, gradients, ordered_gradients):
    """Gather the gradients of a node's rows (constant-hessian case).

    Parameters
    ----------
    sample_indices : ndarray of shape (n_node,), dtype int32
        Rows of the node.
    gradients : ndarray of shape (n_samples,), dtype float32
        Gradients of all rows.
    ordered_gradients : ndarray of shape (>= n_node,), dtype float32
        Output buffer; the first ``n_node`` entries are written.
    """
    for i in range(sample_indices.shape[0]):
        ordered_gradients[i] = gradients[sample_indices[i]]

