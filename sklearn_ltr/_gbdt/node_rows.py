"""The training rows of the tree being grown, grouped by node.

:class:`TreeGrower` decides the shape of a tree from histograms alone: which
leaf to split next, on which feature and bin, and with what leaf values. The
rows themselves (which rows sit in which node, and the histograms built from
them) are kept by a *row store*, an object implementing :class:`RowStore`.
:class:`NodeRows` keeps them in this process. A data-parallel fit gives the
grower a row store whose rows live on several workers and whose histograms
are the sums of the workers' histograms (``sklearn_ltr.dask._shard``); the
grower cannot tell the difference.
"""

from time import perf_counter
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from .common import G_H_DTYPE, X_BINNED_DTYPE
from .histogram import (
    _build_histogram,
    _build_histogram_const,
    _build_histogram_root,
    _build_histogram_root_const,
    _build_histograms,
    _gather_gradients,
    _gather_gradients_only,
    _masked_in,
)
from .splitting import _partition
from .wide_histogram import WideColumns

__all__ = ["NodeRows", "RowStore", "TreeRows"]


@runtime_checkable
class RowStore(Protocol):
    """The rows of the tree being grown, as :class:`TreeGrower` uses them.

    For one tree the grower calls :meth:`start`, then :meth:`root_histogram`
    if the root may be split, :meth:`split` for every split (or, for the
    nodes of a level of a symmetric tree, :meth:`split_level` once), and
    :meth:`leaf_assignment` at the end. ``isinstance(obj, RowStore)``
    checks that every member exists; their signatures are checked by the
    tests (``tests/test_interfaces.py``).

    Attributes
    ----------
    n_samples : int
        Number of training rows (the length of the gradients).
    n_features : int
        Number of features.
    time_histograms, time_partition : float
        Seconds spent in this process, summed over all trees, building
        histograms and partitioning rows (reported by the booster).
    """

    n_samples: int
    n_features: int
    time_histograms: float
    time_partition: float

    def start(self, gradients: np.ndarray | None, hessians: np.ndarray | None,
              sample_indices: np.ndarray | None,
              feature_mask: np.ndarray) -> tuple[int, float, float]:
        """Put the rows used by the next tree in its root (node 0).

        Parameters
        ----------
        gradients, hessians : ndarray of shape (n_samples,), dtype float32, or None
            Gradients and hessians of all rows; None for a store that keeps
            its own (a data-parallel one, whose workers hold them).
        sample_indices : ndarray of int or None
            Rows used by the tree (possibly none), or None for all rows.
        feature_mask : ndarray of shape (n_features,), dtype uint8
            Features the tree may split on: histograms may skip the others.

        Returns
        -------
        n_used : int
        sum_gradients, sum_hessians : float
            Sums over the used rows, in float64.
        """

    def root_histogram(self, hist: np.ndarray) -> None:
        """Fill ``hist``, of shape (n_features, n_bins, HIST_WIDTH), with the
        histogram of the root's rows."""

    def split(self, node_id: int, feature: int, left_bins: np.ndarray, left_id: int,
              right_id: int, histogram_of: int = -1, hist: np.ndarray | None = None) -> None:
        """Move the rows of ``node_id`` into its children ``left_id`` (the
        rows whose bin of ``feature`` is in the bitset ``left_bins``) and
        ``right_id``; if ``histogram_of`` is one of the children, fill
        ``hist`` with its histogram (-1: none)."""

    def split_level(self, node_ids, features, left_bins, left_ids, right_ids, histogram_of,
                    histograms: np.ndarray, slots) -> None:
        """:meth:`split` several nodes, as many calls of it in this order
        would, each ``histogram_of[k] >= 0`` filling ``histograms[slots[k]]``
        (the slots distinct). The arguments are sequences of one entry per
        node."""

    def leaf_assignment(self, leaf_ids) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows of each leaf of the finished tree.

        Parameters
        ----------
        leaf_ids : sequence of int
            Node ids of the leaves.

        Returns
        -------
        partitioned_indices : ndarray of shape (n_used,), dtype int32
            The used rows held in this process, grouped by leaf.
        leaf_starts, leaf_stops : ndarray of shape (n_leaves,), dtype int64
            Range of each leaf's rows in ``partitioned_indices``.
        """


class TreeRows(NamedTuple):
    """The buffers of a :class:`NodeRows` for the tree it started last, as
    the compiled loop (:mod:`.compiled_grower`) reads and writes them."""

    X_binned: np.ndarray  # (n_samples, n_features) uint8, Fortran order
    indices: np.ndarray  # rows of the tree, partitioned in place; int32
    partition_buffer: np.ndarray  # scratch of the partitions; int32
    gradients: np.ndarray  # of all rows; float32
    hessians: np.ndarray  # of all rows (not read with const_hessian); float32
    const_hessian: float | None  # every row's hessian, or None to read them
    ordered_g: np.ndarray  # scratch of the gathers; float32
    ordered_h: np.ndarray
    sampled: bool  # whether the tree uses some of the rows only
    features: np.ndarray  # the features whose histograms are built; int64
    value_bins: np.ndarray  # bins written for each feature, besides the missing one; int64
    missing_bin: int
    # The wide columns, whose blocks are built apart from ``features``
    # (WideColumns.arrays), or None if there are none.
    wide: tuple | None

    @property
    def n_wide_columns(self):
        return 0 if self.wide is None else self.wide[0].shape[1]


class NodeRows:
    """Rows of the tree being grown, grouped by node, held in this process:
    the :class:`RowStore` of a single-process fit.

    Row indices live in one buffer, partitioned in place: the rows of a node
    are a contiguous range of it, and splitting a node reorders its range so
    that the left child's rows come first (as in LightGBM's data partition).

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8
        Binned training data, Fortran-ordered (as returned by
        :meth:`BinMapper.transform`); a C-ordered array is copied.
    missing_values_bin_idx : int
        Bin of missing values.
    n_bins_non_missing : array-like of shape (n_features,), default=None
        An upper bound of each feature's value bins (the bin mapper's
        ``n_bins_non_missing_``): histograms then write only those bins and
        the missing one, and leave the others, which no split scan reads,
        as they were. Narrow features cost a few bins instead of
        ``max_bins``: on LightGBM's example data (300 features, a median of
        9 distinct values) zeroing whole histograms took longer than
        filling them. None: every bin is written.
    constant_hessian : float or None, default=None
        The value of every hessian, if the caller guarantees they are all
        equal (the objective's ``constant_hessian``): histograms then
        accumulate only gradients and counts, which is faster, and give the
        same sums. Not checked. None: hessians are read.
    feature_columns : ndarray of shape (n_features,), dtype int64, default=None
        The input column of each feature (``BinMapper.feature_columns_``), if
        some column is wide (binned as several blocks): the blocks of a
        column are then built in one pass over its rows
        (:mod:`.wide_histogram`). None: every feature is built on its own.

    Attributes
    ----------
    time_histograms, time_partition : float
        Seconds spent, summed over all trees, in building histograms
        (gathers included) and in partitioning rows.
    """

    def __init__(self, X_binned, missing_values_bin_idx, n_bins_non_missing=None,
                 constant_hessian=None, feature_columns=None):
        X_binned = np.asarray(X_binned)
        if X_binned.ndim != 2 or X_binned.dtype != X_BINNED_DTYPE:
            raise ValueError("X_binned must be a 2-d uint8 array.")
        if not X_binned.flags.f_contiguous:
            X_binned = np.asfortranarray(X_binned)
        n_samples = X_binned.shape[0]
        if n_samples >= 2**31:
            raise ValueError("X_binned has too many rows (at most 2**31 - 1).")
        self.X_binned = X_binned
        self.missing_values_bin_idx = int(missing_values_bin_idx)
        self._value_bins = (None if n_bins_non_missing is None
                            else np.asarray(n_bins_non_missing, dtype=np.int64).copy())
        if self._value_bins is not None and (
                self._value_bins.shape != (X_binned.shape[1],)
                or np.any(self._value_bins > self.missing_values_bin_idx)):
            raise ValueError("n_bins_non_missing must have one entry per feature, each at most "
                             "missing_values_bin_idx.")
        self._const_hessian = None if constant_hessian is None else float(constant_hessian)
        self._wide = (None if feature_columns is None
                      else WideColumns(X_binned, np.asarray(feature_columns),
                                       self.missing_values_bin_idx))
        # Buffers reused by every tree.
        self._indices = np.empty(n_samples, dtype=np.int32)
        self._scratch = np.empty(n_samples, dtype=np.int32)
        self._ordered_g = np.empty(n_samples, dtype=G_H_DTYPE)
        self._ordered_h = np.empty(n_samples, dtype=G_H_DTYPE)
        self._all_rows = np.arange(n_samples, dtype=np.int32)
        self.time_histograms = 0.0
        self.time_partition = 0.0

    @property
    def n_samples(self):
        return self.X_binned.shape[0]

    def tree_rows(self):
        """The buffers for the tree started last (:class:`TreeRows`); the
        compiled loop that grows it gives the tree back with
        :meth:`record_compiled_tree`."""
        value_bins = self._value_bins
        if value_bins is None:
            value_bins = np.full(self.n_features, self.missing_values_bin_idx, dtype=np.int64)
        wide = None if self._wide is None else self._wide.arrays(self._wide_active)
        return TreeRows(self.X_binned, self._indices, self._scratch, self._gradients,
                        self._hessians, self._const_hessian, self._ordered_g, self._ordered_h,
                        self._sampled, self._features, value_bins, self.missing_values_bin_idx,
                        wide)

    def record_compiled_tree(self, leaf_ids, starts, stops, histogram_seconds,
                             partition_seconds):
        """Take back a tree that the compiled loop grew on :meth:`tree_rows`:
        where each leaf's rows are in the partitioned indices (for
        :meth:`leaf_assignment`), and the time it spent building histograms
        and partitioning rows."""
        self._ranges = dict(zip(leaf_ids, zip(starts, stops)))
        self.time_histograms += histogram_seconds
        self.time_partition += partition_seconds

    @property
    def n_features(self):
        return self.X_binned.shape[1]

    def start(self, gradients, hessians, sample_indices, feature_mask):
        """Put the rows used by the next tree in its root.

        Parameters
        ----------
        gradients, hessians : ndarray of shape (n_samples,), dtype float32
            Gradients and hessians of all rows.
        sample_indices : ndarray of int or None
            Rows used by the tree (possibly none), or None for all rows.
        feature_mask : ndarray of shape (n_features,), dtype uint8
            Features the tree may split on (histograms skip the others).

        Returns
        -------
        n_used : int
        sum_gradients, sum_hessians : float
            Sums over the used rows, in float64.
        """
        n_samples = self.n_samples
        gradients = np.asarray(gradients)
        hessians = np.asarray(hessians)
        if gradients.shape != (n_samples,) or hessians.shape != (n_samples,):
            raise ValueError(
                f"gradients and hessians must have shape ({n_samples},), got "
                f"{gradients.shape} and {hessians.shape}."
            )
        self._gradients = np.ascontiguousarray(gradients, dtype=G_H_DTYPE)
        self._hessians = np.ascontiguousarray(hessians, dtype=G_H_DTYPE)
        self._mask = feature_mask
        # The feature kernels build the features that are not blocks of a
        # wide column; WideColumns builds those.
        self._narrow_mask = feature_mask
        if self._wide is not None:
            self._narrow_mask = np.where(self._wide.is_block, 0, feature_mask).astype(np.uint8)
            self._wide_active = self._wide.active(feature_mask)
        self._features = _masked_in(self._narrow_mask)
        if sample_indices is None:
            n_used = n_samples
            self._indices[:] = self._all_rows
            g_used, h_used = self._gradients, self._hessians
        else:
            sample_indices = np.asarray(sample_indices)
            if sample_indices.ndim != 1 or sample_indices.dtype.kind not in "iu":
                raise ValueError("sample_indices must be a 1-d integer array.")
            n_used = sample_indices.shape[0]
            # An empty sample is valid: a worker may own none of the groups
            # sampled for a tree; it then contributes empty histograms.
            if n_used and (sample_indices.min() < 0 or sample_indices.max() >= n_samples):
                raise ValueError("sample_indices has rows out of range [0, n_samples).")
            self._indices[:n_used] = sample_indices
            _gather_gradients(self._indices[:n_used], self._gradients, self._hessians,
                              self._ordered_g, self._ordered_h)
            g_used, h_used = self._ordered_g[:n_used], self._ordered_h[:n_used]
        self._sampled = sample_indices is not None
        self._n_used = n_used
        self._ranges = {0: (0, n_used)}
        sum_g = float(np.sum(g_used, dtype=np.float64))
        sum_h = float(np.sum(h_used, dtype=np.float64))
        return n_used, sum_g, sum_h

    def root_histogram(self, hist):
        """Fill ``hist`` with the histogram of the root's rows."""
        tic = perf_counter()
        if self._sampled:
            self._node_histogram(0, hist)
        else:
            if self._const_hessian is not None:
                _build_histogram_root_const(self.X_binned, self._gradients, self._const_hessian,
                                            self._narrow_mask, hist, self._value_bins)
            else:
                _build_histogram_root(self.X_binned, self._gradients, self._hessians,
                                      self._narrow_mask, hist, self._value_bins)
            self._wide_histograms(None, self._gradients, self._hessians, hist)
        self.time_histograms += perf_counter() - tic

    def split(self, node_id, feature, left_bins, left_id, right_id, histogram_of=-1, hist=None):
        """Move the rows of ``node_id`` into its children.

        Parameters
        ----------
        node_id, left_id, right_id : int
            The node split and the ids given to its children.
        feature : int
            The split feature.
        left_bins : ndarray of shape (BITSET_WORDS,), dtype uint32
            The bins of ``feature`` that go left, the missing bin included
            (:func:`~.splitting.left_bins`).
        histogram_of : int, default=-1
            ``left_id`` or ``right_id`` to fill ``hist`` with that child's
            histogram; -1 for none.
        hist : ndarray of shape (n_features, n_bins, 4), dtype float64, default=None
            Output histogram.
        """
        start, stop = self._ranges.pop(node_id)
        tic = perf_counter()
        n_left = _partition(self._indices[start:stop], self.X_binned, feature, left_bins,
                            self._scratch)
        self.time_partition += perf_counter() - tic
        self._ranges[left_id] = (start, start + n_left)
        self._ranges[right_id] = (start + n_left, stop)
        if histogram_of >= 0:
            tic = perf_counter()
            self._node_histogram(histogram_of, hist)
            self.time_histograms += perf_counter() - tic

    def split_level(self, node_ids, features, left_bins, left_ids, right_ids, histogram_of,
                    histograms, slots):
        """Move the rows of several nodes into their children, then build the
        histograms asked for in one kernel call.

        The histograms are those :meth:`split` builds, bit for bit; one call
        for all nodes saves a call (and a wake-up of the threads) per node.

        Parameters
        ----------
        node_ids, features, left_bins, left_ids, right_ids, histogram_of : sequence
            One entry per node, as the arguments of :meth:`split`.
        histograms : ndarray of shape (n_slots, n_features, n_bins, 4), dtype float64
            Histogram pool.
        slots : sequence of int
            ``histograms[slots[k]]`` receives the histogram of child
            ``histogram_of[k]`` where that is not -1; distinct slots.
        """
        for k, node_id in enumerate(node_ids):
            self.split(node_id, features[k], left_bins[k], left_ids[k], right_ids[k])
        built = [k for k, child in enumerate(histogram_of) if child >= 0]
        if not built:
            return
        tic = perf_counter()
        ranges = [self._ranges[histogram_of[k]] for k in built]
        _build_histograms(self.X_binned, self._indices,
                          np.array([r[0] for r in ranges], dtype=np.int64),
                          np.array([r[1] for r in ranges], dtype=np.int64),
                          sum(r[1] - r[0] for r in ranges), self._gradients, self._hessians,
                          self._const_hessian, self._narrow_mask, histograms,
                          np.array([slots[k] for k in built], dtype=np.int64), self._value_bins,
                          self._ordered_g, self._ordered_h)
        if self._wide is not None:
            # The kernel left each node's gathered gradients at its rows' positions.
            for k, (start, stop) in zip(built, ranges):
                self._wide_histograms(self._indices[start:stop], self._ordered_g[start:stop],
                                      self._ordered_h[start:stop], histograms[slots[k]])
        self.time_histograms += perf_counter() - tic

    def _node_histogram(self, node_id, hist):
        start, stop = self._ranges[node_id]
        rows = self._indices[start:stop]
        og = self._ordered_g
        oh = self._ordered_h
        if self._const_hessian is not None:
            _gather_gradients_only(rows, self._gradients, og)
            _build_histogram_const(self.X_binned, rows, og, self._const_hessian,
                                   self._narrow_mask, hist, self._value_bins, self._features)
        else:
            _gather_gradients(rows, self._gradients, self._hessians, og, oh)
            _build_histogram(self.X_binned, rows, og, oh, self._narrow_mask, hist,
                             self._value_bins, self._features)
        self._wide_histograms(rows, og[:rows.shape[0]], oh[:rows.shape[0]], hist)

    def _wide_histograms(self, rows, gradients, hessians, hist):
        """The histograms of the blocks of wide columns (none if there are
        none) of ``rows`` (None: every row, gradients not gathered)."""
        if self._wide is not None:
            self._wide.build(self._wide_active, rows, gradients, hessians, self._const_hessian,
                             hist, self._value_bins)

    def leaf_assignment(self, leaf_ids):
        """Rows of each leaf of the finished tree.

        Parameters
        ----------
        leaf_ids : sequence of int
            Node ids of the leaves.

        Returns
        -------
        partitioned_indices : ndarray of shape (n_used,), dtype int32
            The used rows, grouped by leaf (a copy).
        leaf_starts, leaf_stops : ndarray of shape (n_leaves,), dtype int64
            Range of each leaf's rows in ``partitioned_indices``.
        """
        ranges = np.array([self._ranges[leaf] for leaf in leaf_ids], dtype=np.int64)
        ranges = ranges.reshape(len(leaf_ids), 2)
        return self._indices[:self._n_used].copy(), ranges[:, 0].copy(), ranges[:, 1].copy()
