"""This module contains the TreeGrower, which grows one tree.

Three growth policies (``grow_policy``, XGBoost's and CatBoost's names):

- ``"lossguide"``, leaf-wise as in LightGBM: among the current leaves, the
  one whose best split has the largest gain is split next, until
  ``max_leaf_nodes`` leaves exist or no leaf has a valid split;
- ``"depthwise"``, level by level as XGBoost's default: every splittable
  leaf of a level is split, each by its own best split, before any leaf of
  the next level, in the order the leaves were made, until ``max_depth`` or
  ``max_leaf_nodes`` stops it;
- ``"symmetric"``, oblivious trees as CatBoost's default: one split per
  level, shared by every node of the level (:mod:`.symmetric`), to depth
  ``max_depth``.

The per-node work (partition, gather, histogram, split search) runs in
njitted kernels. The loop around them, which picks the next leaf and keeps
the nodes, runs in one compiled call per tree for trees of rows held in
this process (:mod:`.compiled_grower` for leaf-wise and depth-wise trees,
:mod:`.compiled_symmetric` for symmetric ones; both grow the same trees as
the Python loop), and in Python for every other tree (rows on several
workers, constraints, ``max_leaf_nodes=None``, symmetric trees of more
than 11 levels). The grower works from histograms only; the rows of each
node are kept by a row store (:class:`~sklearn_ltr._gbdt.node_rows.RowStore`:
a :class:`~sklearn_ltr._gbdt.node_rows.NodeRows` in this process, or one
whose rows live on several workers for data-parallel training).

Buffers (the histogram pool here, the partitioned row indices and gathered
gradients in NodeRows) are allocated once when the grower is created, so a
booster creates one grower per fit and calls :meth:`TreeGrower.grow` per tree.

Histogram subtraction: when a node is split, only the smaller child's
histogram is built from its rows; the larger child's is the parent's minus
the smaller's, computed in place in the parent's histogram slot by the split
search, feature by feature (see :func:`~.splitting.find_best_splits`). So at most
one histogram per splittable leaf is alive at any time.
"""

import heapq
from time import perf_counter
from typing import NamedTuple

import numpy as np
from numba import njit

from . import compiled_grower, compiled_symmetric
from .categorical import CATEGORY_L2
from .common import BITSET_DTYPE, BITSET_WORDS
from .constraints import InteractionGroups, bounded_value, children_bounds
from .histogram import COUNT, allocate_histograms
from .loop_tree import threshold_table, tree_of_tables
from .node_rows import NodeRows, RowStore
from .scan_parts import any_threshold_leaves_enough_rows
from .splitting import find_best_splits, left_bins, split_scratch
from .symmetric import grow_symmetric_levels

GROW_POLICIES = ("lossguide", "depthwise", "symmetric")


class GrownTree(NamedTuple):
    """A grown tree and the leaf assignment of its training rows.

    Attributes
    ----------
    nodes : ndarray of shape (n_nodes,), dtype NODE_DTYPE
        Flat tree, root at index 0; ``left``/``right`` index into this array.
    partitioned_indices : ndarray of shape (n_used,), dtype int32
        The rows used for this tree, grouped by leaf: the rows of leaf ``k``
        are ``partitioned_indices[leaf_starts[k]:leaf_stops[k]]``.
    leaf_starts, leaf_stops : ndarray of shape (n_leaves,), dtype int64
        Row ranges of each leaf in ``partitioned_indices``.
    leaf_values : ndarray of shape (n_leaves,), dtype float64
        Value of each leaf (shrinkage applied).
    leaf_nodes : ndarray of shape (n_leaves,), dtype int32
        Index in ``nodes`` of each leaf.
    """

    nodes: np.ndarray
    partitioned_indices: np.ndarray
    leaf_starts: np.ndarray
    leaf_stops: np.ndarray
    leaf_values: np.ndarray
    leaf_nodes: np.ndarray


@njit(cache=True)
def _update_raw_predictions(raw_predictions, partitioned_indices, leaf_starts,
                            leaf_stops, leaf_values):
    """Add each leaf's value to the raw predictions of its training rows.

    Parameters
    ----------
    raw_predictions : ndarray of shape (n_samples,), dtype float64
        Updated in place.
    partitioned_indices : ndarray of shape (n_used,), dtype int32
        Rows grouped by leaf (:attr:`GrownTree.partitioned_indices`).
    leaf_starts, leaf_stops : ndarray of shape (n_leaves,), dtype int64
        Row ranges of the leaves.
    leaf_values : ndarray of shape (n_leaves,), dtype float64
        Leaf values.
    """
    # Serial: one add per row, about a millisecond per million rows, while a
    # parallel loop would add about 0.5 s to the compile time of a fresh
    # install.
    for k in range(leaf_starts.shape[0]):
        v = leaf_values[k]
        for i in range(leaf_starts[k], leaf_stops[k]):
            raw_predictions[partitioned_indices[i]] += v


def _as_mask(feature_mask, n_features):
    if feature_mask is None:
        return np.ones(n_features, dtype=np.uint8)
    mask = np.asarray(feature_mask)
    if mask.shape != (n_features,):
        raise ValueError(
            f"feature_mask must have shape ({n_features},), got {mask.shape}."
        )
    return mask.astype(np.uint8)


class TreeGrower:
    """Grow regression trees on binned data.

    Parameters
    ----------
    rows : RowStore
        The training rows: a :class:`~sklearn_ltr._gbdt.node_rows.NodeRows`
        made from the binned data (``NodeRows(X_binned,
        missing_values_bin_idx, n_bins_non_missing)``), or a data-parallel
        fit's store whose rows live on several workers.
    n_bins_non_missing : ndarray of shape (n_features,)
        Number of value bins of each feature.
    missing_values_bin_idx : int
        Bin of missing values (``max_bins``).
    bin_thresholds : list of ndarray, default=None
        Raw-value thresholds of each feature (``BinMapper.bin_thresholds_``),
        used to fill ``num_threshold`` of split nodes. If None,
        ``num_threshold`` is NaN and only binned prediction is possible.
    max_leaf_nodes : int or None, default=31
        Maximum number of leaves; None for no limit. Not used by symmetric
        trees, whose size is set by ``max_depth``.
    max_depth : int or None, default=None
        Maximum depth of leaves (the root has depth 0); None for no limit.
        Symmetric trees need it: they have ``max_depth`` levels unless no
        split of a level has a gain above ``min_gain_to_split``.
    min_samples_leaf : int, default=20
        Minimum number of rows in a leaf.
    min_hessian_to_split : float, default=1e-3
        Minimum sum of hessians in each child of a split.
    l2_regularization : float, default=0.0
        L2 regularization of leaf values.
    min_gain_to_split : float, default=0.0
        A split is made only if its gain is strictly larger.
    shrinkage : float, default=1.0
        Multiplies every leaf value (the learning rate).
    is_categorical : ndarray of shape (n_features,), dtype bool, default=None
        Which features are categorical (their bins are categories, see
        :mod:`~.categorical`); None means none.
    monotonic_cst : array-like of int of shape (n_features,), default=None
        Monotonic constraint of each feature: 1 increasing, -1 decreasing, 0
        none (see :mod:`.constraints`). None or all 0 for no constraint.
    interaction_cst : list of sets of int, default=None
        Groups of features that may interact, every feature in at least one
        group (:func:`~.constraints.check_interaction_cst` adds the group of
        the features the user left out); None for no constraint.
    grow_policy : {"lossguide", "depthwise", "symmetric"}, default="lossguide"
        How the tree grows (see the module docstring). Symmetric trees take
        no constraints.
    compiled_loop : bool, default=True
        Grow each tree in one compiled call (:mod:`.compiled_grower`,
        :mod:`.compiled_symmetric`) where that loop applies; False always
        runs the Python loop, which grows the same trees more slowly (for
        tests that compare the two).

    Attributes
    ----------
    rows : RowStore
        The training rows, grouped by node of the tree being grown.
    time_find_split : float
        Seconds spent finding splits, summed over all :meth:`grow` calls
        (``rows`` times histograms and partitions).

    Notes
    -----
    If every hessian is the same (the objective's ``constant_hessian``,
    given to :class:`~sklearn_ltr._gbdt.node_rows.NodeRows`), the histograms
    accumulate only gradients and counts, which is faster.

    The first :meth:`grow` finds the features that no node can split (fewer
    than ``min_samples_leaf`` rows on one side of every threshold, over all
    training rows); every tree leaves them out of its histograms and split
    search, which changes no tree. The compiled loops of ``lossguide`` and
    ``depthwise`` trees do the same below each node: a feature with no such
    threshold among a node's rows is left out of the nodes under it.
    """

    def __init__(self, rows, n_bins_non_missing, missing_values_bin_idx, bin_thresholds=None,
                 max_leaf_nodes=31, max_depth=None, min_samples_leaf=20,
                 min_hessian_to_split=1e-3, l2_regularization=0.0, min_gain_to_split=0.0,
                 shrinkage=1.0, is_categorical=None, monotonic_cst=None, interaction_cst=None,
                 grow_policy="lossguide", compiled_loop=True):
        if not isinstance(rows, RowStore):
            raise TypeError(
                f"rows must implement the RowStore protocol (wrap binned data in "
                f"NodeRows), got {type(rows).__name__}."
            )
        if not 1 <= missing_values_bin_idx <= 255:
            raise ValueError("missing_values_bin_idx must be in [1, 255].")
        n_features = rows.n_features
        n_bins_non_missing = np.asarray(n_bins_non_missing, dtype=np.uint32)
        if n_bins_non_missing.shape != (n_features,):
            raise ValueError("n_bins_non_missing must have one entry per feature.")
        if np.any(n_bins_non_missing > missing_values_bin_idx):
            raise ValueError("n_bins_non_missing must not exceed missing_values_bin_idx.")
        if max_leaf_nodes is not None and max_leaf_nodes < 2:
            raise ValueError(f"max_leaf_nodes must be >= 2 or None, got {max_leaf_nodes}.")
        if max_depth is not None and max_depth < 0:
            raise ValueError(f"max_depth must be >= 0 or None, got {max_depth}.")
        if min_samples_leaf < 1:
            raise ValueError(f"min_samples_leaf must be >= 1, got {min_samples_leaf}.")
        if min_hessian_to_split < 0:
            raise ValueError(f"min_hessian_to_split must be >= 0, got {min_hessian_to_split}.")
        if l2_regularization < 0:
            raise ValueError(f"l2_regularization must be >= 0, got {l2_regularization}.")
        if min_gain_to_split < 0:
            raise ValueError(f"min_gain_to_split must be >= 0, got {min_gain_to_split}.")
        if shrinkage <= 0:
            raise ValueError(f"shrinkage must be > 0, got {shrinkage}.")
        if grow_policy not in GROW_POLICIES:
            raise ValueError(f"grow_policy must be one of {GROW_POLICIES}, got {grow_policy!r}.")
        if grow_policy == "symmetric":
            if max_depth is None or max_depth < 1:
                raise ValueError("Symmetric trees need max_depth >= 1 (their number of levels), "
                                 f"got {max_depth}.")
            if interaction_cst or (monotonic_cst is not None
                                   and np.any(np.asarray(monotonic_cst) != 0)):
                raise ValueError("Symmetric trees take no monotonic or interaction constraints.")
        if bin_thresholds is not None and len(bin_thresholds) != n_features:
            raise ValueError("bin_thresholds must have one array per feature.")
        if is_categorical is None:
            is_categorical = np.zeros(n_features, dtype=bool)
        is_categorical = np.asarray(is_categorical, dtype=bool)
        if is_categorical.shape != (n_features,):
            raise ValueError("is_categorical must have one entry per feature.")
        self.is_categorical = is_categorical.astype(np.uint8)
        self.rows = rows
        self.n_bins_non_missing = n_bins_non_missing
        self.missing_values_bin_idx = int(missing_values_bin_idx)
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.min_samples_leaf = int(min_samples_leaf)
        self.min_hessian_to_split = float(min_hessian_to_split)
        self.l2_regularization = float(l2_regularization)
        self.min_gain_to_split = float(min_gain_to_split)
        self.shrinkage = float(shrinkage)
        self.grow_policy = grow_policy
        # The histogram pool, reused by every tree: a slot for each leaf that
        # may wait for its split, at most a level's nodes for symmetric trees.
        n_bins = self.missing_values_bin_idx + 1
        if grow_policy == "symmetric":
            n_hist = 2 ** min(max_depth - 1, 10)
        else:
            n_hist = max_leaf_nodes if max_leaf_nodes is not None else 32
        self._histograms = allocate_histograms(n_hist, n_features, n_bins)
        self._split_scratch = split_scratch(n_features, n_bins, self.is_categorical)
        self._set_constraints(monotonic_cst, interaction_cst, n_features)
        self.time_find_split = 0.0
        self._can_split = None  # found by the first grow(), see _features_that_can_split
        self._loop = None
        self._levels = None
        compiled = (compiled_loop and isinstance(rows, NodeRows) and self.monotonic_cst is None
                    and self._groups is None)
        if grow_policy == "symmetric":
            if compiled and max_depth <= compiled_symmetric.MAX_COMPILED_DEPTH:
                self._loop = compiled_grower.LoopState(2 ** (max_depth + 1) - 1, n_hist, n_features)
                self._levels = compiled_symmetric.LevelBuffers(n_hist)
        elif compiled and max_leaf_nodes is not None:
            self._loop = compiled_grower.LoopState(2 * max_leaf_nodes - 1, max_leaf_nodes, n_features)
        self._thresholds = threshold_table(bin_thresholds, n_features)
        if self._loop is not None:
            self._loop_settings = compiled_grower.GrowSettings(
                -1 if max_leaf_nodes is None else max_leaf_nodes,
                -1 if max_depth is None else max_depth, self.min_samples_leaf,
                self.min_hessian_to_split, self.l2_regularization, self.min_gain_to_split,
                self.shrinkage, grow_policy == "depthwise")

    def _set_constraints(self, monotonic_cst, interaction_cst, n_features):
        self.monotonic_cst = None
        if monotonic_cst is not None:
            cst = np.asarray(monotonic_cst)
            if cst.shape != (n_features,) or not np.all(np.isin(cst, (-1, 0, 1))):
                raise ValueError(
                    f"monotonic_cst must hold -1, 0 or 1 for each of the {n_features} features."
                )
            if np.any(cst != 0):
                self.monotonic_cst = cst.astype(np.int8)
        self._groups = (None if interaction_cst is None
                        else InteractionGroups(interaction_cst, n_features))

    def _constrain_children(self, node, left, right, feature):
        """Give the children of ``node``, split on ``feature``, their values
        and bounds (monotonic constraints) and the groups and features they
        may still use (interaction constraints)."""
        if self.monotonic_cst is not None:
            lower, upper = node["lower"], node["upper"]
            for child in (left, right):
                child["value"] = bounded_value(child["sum_g"], child["sum_h"], child["l2"], lower,
                                               upper)
            (left["lower"], left["upper"]), (right["lower"], right["upper"]) = children_bounds(
                self.monotonic_cst[feature], lower, upper, left["value"], right["value"])
        if self._groups is not None:
            groups, allowed = self._groups.after_split(node["groups"], feature)
            for child in (left, right):
                child["groups"] = groups
                child["allowed"] = allowed

    @property
    def time_histograms(self):
        """Seconds the row store spent building histograms."""
        return self.rows.time_histograms

    @property
    def time_partition(self):
        """Seconds the row store spent partitioning rows."""
        return self.rows.time_partition

    # -- histogram slot pool ------------------------------------------------
    def _take_slot(self):
        if self._free_slots:
            return self._free_slots.pop()
        # Only reachable with max_leaf_nodes=None: grow the pool.
        old = self._histograms
        self._histograms = np.concatenate([old, np.zeros_like(old)])
        self._free_slots.extend(range(2 * old.shape[0] - 1, old.shape[0], -1))
        return old.shape[0]

    def _splittable(self, count, sum_h, depth):
        if self.max_depth is not None and depth >= self.max_depth:
            return False
        if count < 2 * self.min_samples_leaf:
            return False
        return sum_h >= 2 * self.min_hessian_to_split

    def _find_splits(self, *children):
        """Find the best split of one node or of both children of a split,
        each given as ``(node, sibling_slot)``: with ``sibling_slot >= 0``,
        the node's slot holds its parent's histogram, which becomes the
        node's by subtracting the sibling's on the way."""
        tic = perf_counter()
        hists = self._histograms
        mask, bounds = self._mask, None
        if self._groups is not None and children[0][0]["allowed"] is not None:
            # Siblings: the same features are open to both.
            mask = np.minimum(mask, children[0][0]["allowed"])
        if self.monotonic_cst is not None:
            bounds = np.array([[node["lower"], node["upper"], node["value"]]
                               for node, _ in children])
        results = find_best_splits(
            [(hists[node["slot"]], None if sibling < 0 else hists[sibling], node["sum_g"],
              node["sum_h"], node["count"]) for node, sibling in children],
            self.n_bins_non_missing, self.missing_values_bin_idx, mask,
            self.min_samples_leaf, self.min_hessian_to_split, self.min_gain_to_split,
            self.l2_regularization, self._split_scratch, self.is_categorical,
            self.monotonic_cst, bounds)
        self.time_find_split += perf_counter() - tic
        for (node, _), res in zip(children, results):
            node["split"] = res
            if res[1] >= 0:
                # Depth-wise trees split the shallower leaves first, in the
                # order they were made; leaf-wise ones the largest gain.
                key = node["depth"] if self.grow_policy == "depthwise" else -res[0]
                heapq.heappush(self._heap, (key, node["id"]))
            else:
                self._free_slots.append(node["slot"])
                node["slot"] = -1

    def grow(self, gradients, hessians, sample_indices=None, feature_mask=None):
        """Grow one tree.

        Parameters
        ----------
        gradients : ndarray of shape (n_samples,), dtype float32
            Gradients of all rows (rows outside ``sample_indices`` are ignored).
            None when ``rows`` keeps the gradients itself.
        hessians : ndarray of shape (n_samples,), dtype float32
            Hessians of all rows.
        sample_indices : ndarray of shape (n_used,) of int, default=None
            Rows used to grow this tree (e.g. the rows of sampled groups),
            preferably ascending for cache locality. None means all rows.
        feature_mask : ndarray of shape (n_features,) of bool, default=None
            Features allowed for this tree (column sampling). None allows all.

        Returns
        -------
        tree : GrownTree
            The nodes and the leaf assignment of the rows in ``sample_indices``.
        """
        # The parallel loops keep numba's default schedule, one equal share
        # of a loop per thread. A chunk size of 1 (tried) does not balance
        # the work on numba's OpenMP layer, which hands the chunks out
        # statically, and each chunk is a call that unpacks every argument
        # of the loop again: on LightGBM's example (150 chunks of 4
        # features a scan of two nodes) the scan took as long as the serial
        # one, and fits of the shipped data took 1.1 to 1.2 times as long
        # (idle; up to 1.12 times beside a busy process).
        return self._grow(gradients, hessians, sample_indices, feature_mask)

    def _features_that_can_split(self, gradients, hessians):
        """Which features have a split with at least ``min_samples_leaf``
        rows on each side among all training rows (uint8 mask).

        A feature without one has none in any node either (a node's rows
        are some of the training rows), and its best split would always be
        "no split": leaving it out of histograms and scans changes no tree.
        LightGBM drops such features when it builds its Dataset
        (``feature_pre_filter``). On LightGBM's example data they are 85
        of the 300 features, most of them constant.

        The bin counts come from a histogram of every row, built by the row
        store as for a root, so a store whose rows live on several workers
        answers too. A categorical feature is kept if two of its bins hold
        rows: its splits are sets of categories, and this cheap test never
        leaves out one that could split.
        """
        n_features = self.rows.n_features
        self.rows.start(gradients, hessians, None, np.ones(n_features, dtype=np.uint8))
        hist = self._histograms[0]
        self.rows.root_histogram(hist)
        missing_bin = self.missing_values_bin_idx
        n_value_bins = self.n_bins_non_missing.astype(np.int64)
        # Only a feature's first n_value_bins bins and its missing bin were
        # written; the bins in between hold whatever the buffer held.
        in_use = np.arange(missing_bin) < n_value_bins[:, None]
        value_counts = np.where(in_use, hist[:, :missing_bin, COUNT], 0.0)
        missing_counts = hist[:, missing_bin, COUNT]
        total = value_counts.sum(axis=1) + missing_counts
        # The rule the compiled loops apply below each node, here at the root.
        numeric_ok = np.array([
            any_threshold_leaves_enough_rows(hist[f], n_value_bins[f], missing_bin, total[f],
                                             self.min_samples_leaf)
            for f in range(n_features)], dtype=bool)
        categorical_ok = ((value_counts > 0).sum(axis=1) + (missing_counts > 0)) >= 2
        return np.where(self.is_categorical, categorical_ok, numeric_ok).astype(np.uint8)

    def _grow(self, gradients, hessians, sample_indices, feature_mask):
        rows = self.rows
        if self._can_split is None:
            self._can_split = self._features_that_can_split(gradients, hessians)
        self._mask = _as_mask(feature_mask, rows.n_features) & self._can_split
        n_used, sum_g, sum_h = rows.start(gradients, hessians, sample_indices, self._mask)
        if self._loop is not None:
            return self._grow_compiled(n_used, sum_g, sum_h)
        self._heap = []
        self._free_slots = list(range(self._histograms.shape[0] - 1, -1, -1))
        hists = self._histograms

        root = dict(id=0, count=n_used, sum_g=sum_g, sum_h=sum_h, depth=0, slot=-1,
                    split=None, left=-1, right=-1, l2=self.l2_regularization)
        if self.monotonic_cst is not None:
            root.update(lower=-np.inf, upper=np.inf,
                        value=bounded_value(sum_g, sum_h, self.l2_regularization,
                                            -np.inf, np.inf))
        if self._groups is not None:
            root.update(groups=self._groups.all_groups, allowed=None)
        if self.grow_policy == "symmetric":
            return self._finalize(grow_symmetric_levels(self, root, self.max_depth))
        nodes = [root]
        n_leaves = 1
        max_leaves = self.max_leaf_nodes
        if self._splittable(n_used, sum_h, 0):
            root["slot"] = self._take_slot()
            rows.root_histogram(hists[root["slot"]])
            self._find_splits((root, -1))

        while self._heap and (max_leaves is None or n_leaves < max_leaves):
            _, node_id = heapq.heappop(self._heap)
            node = nodes[node_id]
            gain, feat, bin_thr, mleft, gl, hl, cl, categories = node["split"]
            depth = node["depth"] + 1
            # The children of a categorical split get the extra L2 its gain
            # was computed with (LightGBM's cat_l2 does the same).
            l2 = self.l2_regularization + (CATEGORY_L2 if categories is not None else 0.0)
            left = dict(id=len(nodes), count=int(cl), sum_g=gl, sum_h=hl, depth=depth,
                        slot=-1, split=None, left=-1, right=-1, l2=l2)
            right = dict(id=len(nodes) + 1, count=node["count"] - int(cl),
                         sum_g=node["sum_g"] - gl, sum_h=node["sum_h"] - hl, depth=depth,
                         slot=-1, split=None, left=-1, right=-1, l2=l2)
            nodes.append(left)
            nodes.append(right)
            node["left"], node["right"] = left["id"], right["id"]
            if self.monotonic_cst is not None or self._groups is not None:
                self._constrain_children(node, left, right, feat)
            n_leaves += 1
            parent_slot = node["slot"]
            node["slot"] = -1
            split = (node_id, feat,
                     left_bins(bin_thr, mleft, categories, self.missing_values_bin_idx),
                     left["id"], right["id"])
            if max_leaves is not None and n_leaves >= max_leaves:
                # No further split will happen: skip the children's histograms.
                rows.split(*split)
                self._free_slots.append(parent_slot)
                break
            # The split's counts come from the histogram, so the smaller child
            # is known before any row moves.
            if left["count"] <= right["count"]:
                small, large = left, right
            else:
                small, large = right, left
            small_ok = self._splittable(small["count"], small["sum_h"], depth)
            large_ok = self._splittable(large["count"], large["sum_h"], depth)
            if large_ok:
                # Build the smaller child; the larger one's histogram is the
                # parent's minus it, made in the parent's slot while its best
                # split is searched.
                small_slot = self._take_slot()
                rows.split(*split, small["id"], hists[small_slot])
                large["slot"] = parent_slot
                if small_ok:
                    small["slot"] = small_slot
                    self._find_splits((large, small_slot), (small, -1))
                else:
                    self._find_splits((large, small_slot))
                    self._free_slots.append(small_slot)
            elif small_ok:
                rows.split(*split, small["id"], hists[parent_slot])
                small["slot"] = parent_slot
                self._find_splits((small, -1))
            else:
                rows.split(*split)
                self._free_slots.append(parent_slot)
        return self._finalize(nodes)

    def _grow_compiled(self, n_used, sum_g, sum_h):
        """Grow the started tree with the compiled loop (leaf-wise and
        depth-wise, or symmetric) and build its :class:`GrownTree` from the
        loop's node tables."""
        state = self._loop
        rows = self.rows
        args = (self._histograms, self._split_scratch, self._mask, self.n_bins_non_missing,
                self.is_categorical, n_used, sum_g, sum_h)
        tree_rows = rows.tree_rows()
        if self._levels is not None:
            n_nodes = compiled_symmetric.grow_symmetric_tree(
                tree_rows, self._loop_settings, state, self._levels, *args)
        else:
            n_nodes = compiled_grower.grow_tree(tree_rows, self._loop_settings, state, *args)
        histogram_s, split_s, partition_s = state.phase_seconds().tolist()
        self.time_find_split += split_s
        nodes, leaf_nodes, leaf_values, leaf_starts, leaf_stops = tree_of_tables(
            state.ints, state.floats, state.bits, n_nodes, self.shrinkage, *self._thresholds)
        rows.record_compiled_tree(leaf_nodes.tolist(), leaf_starts.tolist(), leaf_stops.tolist(),
                                  histogram_s, partition_s)
        return GrownTree(nodes=nodes, partitioned_indices=tree_rows.indices[:n_used].copy(),
                         leaf_starts=leaf_starts, leaf_stops=leaf_stops,
                         leaf_values=leaf_values, leaf_nodes=leaf_nodes)

    def _finalize(self, nodes):
        """The :class:`GrownTree` of the Python loop's node dicts (list
        index = node id), made as the compiled loops' trees are: the dicts
        written into the loops' node tables, then
        :func:`~.loop_tree.tree_of_tables`. With monotonic constraints the
        leaves take their bounded values (see :mod:`.constraints`) instead."""
        g = compiled_grower
        n_nodes = len(nodes)
        ints = np.zeros((n_nodes, g.N_INT_COLUMNS), dtype=np.int64)
        floats = np.zeros((n_nodes, g.N_FLOAT_COLUMNS))
        bits = np.zeros((n_nodes, BITSET_WORDS), dtype=BITSET_DTYPE)
        # A column at a time, each from one list: NumPy then converts the
        # values in one call rather than one call a node and field.
        for column, key in ((g.COUNT, "count"), (g.DEPTH, "depth"), (g.LEFT, "left"),
                            (g.RIGHT, "right")):
            ints[:, column] = [nd[key] for nd in nodes]
        floats[:, g.SUM_G] = [nd["sum_g"] for nd in nodes]
        floats[:, g.SUM_H] = [nd["sum_h"] for nd in nodes]
        floats[:, g.L2] = [nd["l2"] for nd in nodes]
        splits = [nd for nd in nodes if nd["left"] >= 0]
        if splits:
            split_ids = [nd["id"] for nd in splits]
            gains, features, bins, missing_left = zip(*(nd["split"][:4] for nd in splits))
            floats[split_ids, g.GAIN] = gains
            ints[split_ids, g.FEATURE] = features
            ints[split_ids, g.BIN] = bins
            ints[split_ids, g.MISSING_LEFT] = missing_left
            for nd in splits:
                categories = nd["split"][7]
                if categories is not None:
                    ints[nd["id"], g.CATEGORICAL] = 1
                    bits[nd["id"]] = categories
        out, leaf_nodes, leaf_values, _, _ = tree_of_tables(
            ints, floats, bits, n_nodes, self.shrinkage, *self._thresholds)
        if self.monotonic_cst is not None:
            # Clipped to the bounds, then shrunk: the bounds are in the unit
            # of the Newton steps, as the mid-points.
            leaf_values = np.array([nodes[k]["value"] for k in leaf_nodes.tolist()],
                                   dtype=np.float64)
            leaf_values *= self.shrinkage
            out["value"][leaf_nodes] = leaf_values
        partitioned_indices, leaf_starts, leaf_stops = self.rows.leaf_assignment(
            leaf_nodes.tolist())
        return GrownTree(
            nodes=out,
            partitioned_indices=partitioned_indices,
            leaf_starts=leaf_starts,
            leaf_stops=leaf_stops,
            leaf_values=leaf_values,
            leaf_nodes=leaf_nodes,
        )
