"""Data-parallel boosting: the rows live on workers, the trees on the client.

Each worker holds one :class:`TrainingShard` (a Dask actor) with the whole
queries of the partitions stored on it. A shard keeps what a single-process
fit keeps for its rows (binned features, the objective, raw scores,
gradients, and the rows of each node of the tree being grown: a
:class:`~sklearn_ltr._gbdt.booster.TrainingData`). The client runs the usual
boosting loop (:meth:`~sklearn_ltr._gbdt.booster.Booster.boost`) and the
usual grower over :class:`DistributedTrainingData` and
:class:`DistributedNodeRows`, which stand in for their single-process
counterparts: every histogram the grower asks for is the sum of the shards'
histograms, so split choices and leaf values (from summed gradients and
hessians) are those of one process holding all rows; only the order of
floating-point additions differs.

Rows are numbered as a single-process fit numbers them: queries in sorted
query-id order, rows of a query in their input order. A shard knows the
global position of each of its rows; this is how it takes its share of the
objective's random draws and how the client sends it its share of a query
sample or of the binning sample.

Nothing here imports dask: the client side only calls methods of the actor
handles it is given, and the shard is a plain class that Dask runs as an
actor.
"""

import numpy as np

from .._gbdt.booster import TrainingData, objective_generator, small_trainset_groups
from .._gbdt.common import X_DTYPE, Y_DTYPE
from .._gbdt.grower import GrownTree
from .._gbdt.histogram import allocate_histograms
from .._objectives.unbiased_lambdarank import check_positions
from .._rankers.categorical_input import encode_pandas_categories
from .._rankers.input_checks import check_labels, check_numeric_columns
from .._utils.queries import check_qid, group_queries, resolve_qid, rows_of_queries

__all__ = [
    "TrainingShard", "DistributedTrainingData", "DistributedNodeRows", "gather", "make_part",
]

# Histogram fields the workers send: sum of gradients, of hessians, count.
_SENT_FIELDS = 3


def make_part(X, y, qid, sample_weight, label_gain=None, categories=None, position=None):
    """One partition as plain arrays: ``(X, y, qid, sample_weight, position)``.

    Runs on the worker that computes the partition. ``X`` may be a pandas
    DataFrame with a ``"qid"`` column (used when ``qid`` is None) or an array.
    The labels are checked against ``label_gain`` (a checked gain table, or
    None for gains ``2**y - 1``). The pandas category columns of ``X``
    become their positions among ``categories`` (``{column position:
    category values}``, the estimator's ``_pandas_categories``), as a
    single-process fit encodes them.
    """
    X, qid = resolve_qid(X, qid)
    X = encode_pandas_categories(X, categories or {})
    check_numeric_columns(X, "X")
    if hasattr(X, "to_numpy"):
        # pandas' nullable columns hold pd.NA, which only this turns into NaN.
        dtype = np.float32 if all(t == np.float32 for t in X.dtypes) else X_DTYPE
        X = X.to_numpy(dtype=dtype, na_value=np.nan)
    X = np.asarray(X)
    if X.dtype not in (np.float32, X_DTYPE):
        X = X.astype(X_DTYPE)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional; a partition has shape {X.shape}.")
    n = X.shape[0]
    y = check_labels(np.asarray(y).reshape(-1), label_gain=label_gain)
    if y.shape[0] != n:
        raise ValueError(f"a partition of y has {y.shape[0]} labels for {n} rows of X.")
    if qid is None:
        raise ValueError(
            "qid is required: pass qid=... or give X a 'qid' column; a distributed fit "
            "cannot treat all rows as one query."
        )
    qid = check_qid(np.asarray(qid).reshape(-1), n)
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=Y_DTYPE).reshape(-1)
        if sample_weight.shape[0] != n:
            raise ValueError(
                f"a partition of sample_weight has {sample_weight.shape[0]} values for {n} rows."
            )
    if position is not None:
        position = check_positions(np.asarray(position).reshape(-1), n)
    return X, y, qid, sample_weight, position


class _RowShareGenerator:
    """A generator that hands an objective this shard's share of the draws
    the whole training set would get.

    Objectives draw one value per row (``rng.random(out=...)``, in row
    order); the shard draws them for all rows of the fit and keeps those at
    its rows' global positions, so the values match a single-process fit.
    """

    def __init__(self, rng, n_total, global_positions):
        self._rng = rng
        self._n_total = n_total
        self._positions = global_positions

    def random(self, size=None, out=None):
        n_rows = self._positions.shape[0]
        wanted = out.shape[0] if out is not None else size
        if wanted != n_rows:
            raise ValueError(
                f"a shard can only draw one value per row ({n_rows}), not {wanted}."
            )
        draws = self._rng.random(self._n_total)[self._positions]
        if out is None:
            return draws
        out[:] = draws
        return out


class TrainingShard:
    """The training rows held by one worker (run as a Dask actor).

    Parameters
    ----------
    *parts : tuple of (X, y, qid, sample_weight, position)
        The partitions stored on this worker (see :func:`make_part`), in
        partition order. No query may span two partitions.
    """

    def __init__(self, *parts):
        self.n_features = parts[0][0].shape[1] if parts else 0
        self._set_parts(parts)
        self._held_out = None
        self.training = None

    def _set_parts(self, parts):
        self._parts = [part for part in parts if part[0].shape[0] > 0]
        if any(part[0].shape[1] != self.n_features for part in self._parts):
            raise ValueError("the partitions of X have different numbers of columns.")
        self._qid = (np.concatenate([part[2] for part in self._parts]) if self._parts
                     else np.zeros(0, dtype=np.int64))
        self._order, self._offsets, self._unique_qids = group_queries(self._qid)
        labels = [part[1] for part in self._parts]
        self._y = np.concatenate(labels)[self._order] if labels else np.zeros(0)
        self._weights = self._optional_column(3, "sample_weight")
        self._position = self._optional_column(4, "position")

    def _optional_column(self, index, name):
        """Column ``index`` of the parts in query order, or None if no part
        has it; an error if only some have it."""
        given = [part[index] is not None for part in self._parts]
        if not any(given):
            return None
        if not all(given):
            raise ValueError(f"{name} is missing for some partitions.")
        return np.concatenate([part[index] for part in self._parts])[self._order]

    # -- set-up -------------------------------------------------------------

    def summary(self):
        """Queries and sizes, for the client's global numbering.

        Returns
        -------
        summary : dict
            ``part_qids``: the distinct query ids of each partition;
            ``qids`` and ``sizes``: this shard's queries (sorted) and their
            numbers of rows; ``n_features``; ``largest_label``.
        """
        return dict(
            part_qids=[np.unique(part[2]) for part in self._parts],
            qids=self._unique_qids,
            sizes=np.diff(self._offsets),
            n_features=self.n_features,
            largest_label=float(self._y.max()) if self._y.size else 0.0,
        )

    def hold_out(self, queries):
        """Take some of this shard's queries out of training, for validation.

        Parameters
        ----------
        queries : ndarray of int
            Indices into this shard's sorted query ids (``summary()["qids"]``).

        Returns
        -------
        summary : dict
            :meth:`summary` of the queries left for training.
        """
        held_query = np.zeros(self._unique_qids.shape[0], dtype=bool)
        held_query[np.asarray(queries, dtype=np.int64)] = True
        held_ids = self._unique_qids[held_query]
        held_parts, kept_parts = [], []
        # Part by part, so that at most one partition is copied at a time.
        while self._parts:
            X, y, qid, weight, position = self._parts.pop(0)
            held = np.isin(qid, held_ids)
            held_parts.append((X[held], y[held], qid[held]))
            kept = ~held
            kept_parts.append((X[kept], y[kept], qid[kept],
                               None if weight is None else weight[kept],
                               None if position is None else position[kept]))
            del X, y, qid, weight, position
        if not held_parts:  # a shard without rows
            held_parts = [(np.zeros((0, self.n_features), dtype=X_DTYPE), np.zeros(0),
                           self._qid)]
        self._held_out = [np.concatenate(columns) for columns in zip(*held_parts)]
        self._set_parts(kept_parts)
        return self.summary()

    def held_out_rows(self, bin_mapper):
        """The held-out queries, binned: ``(qids, sizes, X_binned, y)``,
        queries sorted by id and the rows of a query in input order."""
        X, y, qid = self._held_out
        self._held_out = None
        order, offsets, unique_qids = group_queries(qid)
        return unique_qids, np.diff(offsets), bin_mapper.transform(X, row_order=order), y[order]

    def set_global_queries(self, global_query_starts, n_total):
        """Receive where each of this shard's queries starts in the global
        row order (query-ordered, as a single-process fit orders rows), and
        the number of rows over all shards."""
        self._n_total = int(n_total)
        sizes = np.diff(self._offsets)
        starts = np.asarray(global_query_starts, dtype=np.int64)
        self._global_positions = (
            np.repeat(starts - self._offsets[:-1], sizes) + np.arange(self._offsets[-1])
        )

    def rows_at(self, local_positions):
        """Raw feature values of some rows given by local (query-ordered)
        positions, for the binning sample."""
        sources = self._order[np.asarray(local_positions, dtype=np.int64)]
        out = np.empty((sources.shape[0], self.n_features), dtype=X_DTYPE)
        ends = np.cumsum([part[0].shape[0] for part in self._parts])
        part_of = np.searchsorted(ends, sources, side="right")
        starts = ends - [part[0].shape[0] for part in self._parts]
        for p, part in enumerate(self._parts):
            mask = part_of == p
            out[mask] = part[0][sources[mask] - starts[p]]
        return out

    def bin_and_prepare(self, bin_mapper, estimator, objective_state):
        """Bin this shard's rows (in query order), drop the raw values, and
        make the objective ``estimator`` would use for these queries,
        starting from ``objective_state`` (the fitted estimator's
        ``_objective_state``: a warm start's position biases).

        Returns
        -------
        objective_name : str
        init_score_statistics : ndarray
            This shard's part of the sums the baseline score depends on
            (:meth:`~sklearn_ltr._objectives.BaseObjective.init_score_statistics`).
        """
        n_rows = self._qid.shape[0]
        n_binned = bin_mapper.n_binned_features_
        X_binned = np.empty((n_rows, n_binned), dtype=np.uint8, order="F")
        destination = np.empty(n_rows, dtype=np.int64)
        destination[self._order] = np.arange(n_rows)
        start = 0
        for part in self._parts:
            n = part[0].shape[0]
            X_binned[destination[start:start + n]] = bin_mapper.transform(part[0])
            start += n
        self._parts = None  # the raw values are no longer needed
        y = estimator._checked_labels(self._y)
        rows = {} if self._position is None else {"position": self._position}
        objective = estimator._make_objective(y, self._offsets, self._weights, **rows,
                                              **objective_state)
        self.training = TrainingData(X_binned, objective, bin_mapper.missing_values_bin_idx_,
                                     bin_mapper.n_bins_non_missing_,
                                     bin_mapper.wide_feature_columns())
        # One histogram buffer, reused for every histogram this shard sends.
        n_bins = bin_mapper.missing_values_bin_idx_ + 1
        self._hist = allocate_histograms(1, n_binned, n_bins)[0]
        return objective.name, objective.init_score_statistics()

    # -- boosting -------------------------------------------------------------

    def start_scores(self, baseline, trees):
        self.training.start_scores(baseline, trees)

    def compute_gradients(self, iteration, random_seed):
        rng = _RowShareGenerator(
            objective_generator(random_seed, iteration), self._n_total, self._global_positions
        )
        return self.training.compute_gradients(iteration, random_seed, rng=rng, shared=True)

    def end_iteration(self, statistics):
        self.training.end_iteration(statistics)

    def fitted_attributes(self):
        return self.training.fitted_attributes()

    def start_tree(self, local_sample, feature_mask):
        """Put this tree's rows in the root; return their count and sums."""
        training = self.training
        return training.node_rows.start(
            training.gradients, training.hessians, local_sample, feature_mask
        )

    def root_histogram(self):
        self.training.node_rows.root_histogram(self._hist)
        return self._hist[:, :, :_SENT_FIELDS].copy()

    def split(self, node_id, feature, left_bins, left_id, right_id, histogram_of):
        hist = self._hist if histogram_of >= 0 else None
        self.training.node_rows.split(node_id, feature, left_bins, left_id, right_id,
                                      histogram_of, hist)
        return None if hist is None else hist[:, :, :_SENT_FIELDS].copy()

    def add_tree(self, nodes, leaf_ids, leaf_values, sampled):
        """Add the tree the client grew to this shard's raw scores."""
        indices, starts, stops = self.training.node_rows.leaf_assignment(leaf_ids)
        tree = GrownTree(nodes, indices, starts, stops, leaf_values, leaf_ids)
        self.training.add_tree(tree, sampled)

    def choose_small_trainset(self, local_rows):
        """Score the queries of these rows (local positions of whole queries)
        in :meth:`small_trainset_score`; return how many there are."""
        offsets = self.training.offsets
        queries = np.unique(np.searchsorted(offsets, local_rows, side="right") - 1)
        self._n_small_queries = self.training.use_small_trainset(queries)
        return self._n_small_queries

    def small_trainset_score(self, metric):
        # A shard with no queries in the sample has weight 0 in the client's mean.
        return self.training.small_trainset_score(metric) if self._n_small_queries else 0.0


def gather(futures):
    """Results of actor calls made at once (they run concurrently), in order."""
    return [future.result() for future in futures]


class DistributedNodeRows:
    """The rows of the tree being grown, spread over shards: a
    :class:`~sklearn_ltr._gbdt.node_rows.RowStore` whose histograms are
    summed over the shards.

    Parameters
    ----------
    shards : list of actor handles of TrainingShard
    n_samples, n_features : int
        Rows over all shards, and features (binned features once the bin
        mapper is fitted: a wide categorical column is several).
    shard_of_position, local_of_position : ndarray of shape (n_samples,)
        For each global row position, its shard and its position there.

    Attributes
    ----------
    time_histograms, time_partition : float
        Always 0: the shards build histograms and partition rows, and the
        client, which only waits for them, cannot tell the two apart.
    """

    time_histograms = 0.0
    time_partition = 0.0

    def __init__(self, shards, n_samples, n_features, shard_of_position, local_of_position):
        self.shards = shards
        self.n_samples = n_samples
        self.n_features = n_features
        self._shard_of_position = shard_of_position
        self._local_of_position = local_of_position

    def _sum_into(self, histograms, hist):
        hist[:, :, :_SENT_FIELDS] = histograms[0]
        for other in histograms[1:]:
            hist[:, :, :_SENT_FIELDS] += other

    def start(self, gradients, hessians, sample_indices, feature_mask):
        # The shards start the tree on their own gradients and hessians.
        if sample_indices is None:
            local_samples = [None] * len(self.shards)
        else:
            local_samples = self.local_positions(sample_indices)
        results = gather([
            shard.start_tree(sample, feature_mask)
            for shard, sample in zip(self.shards, local_samples)
        ])
        n_used = sum(r[0] for r in results)
        sum_g = float(sum(r[1] for r in results))
        sum_h = float(sum(r[2] for r in results))
        return n_used, sum_g, sum_h

    def root_histogram(self, hist):
        self._sum_into(gather([shard.root_histogram() for shard in self.shards]), hist)

    def split(self, node_id, feature, left_bins, left_id, right_id, histogram_of=-1, hist=None):
        args = (int(node_id), int(feature), left_bins, int(left_id), int(right_id),
                int(histogram_of))
        histograms = gather([shard.split(*args) for shard in self.shards])
        if histogram_of >= 0:
            self._sum_into(histograms, hist)

    def split_level(self, node_ids, features, left_bins, left_ids, right_ids, histogram_of,
                    histograms, slots):
        # One round of shard calls per node, as the grower's per-node splits.
        for k, node_id in enumerate(node_ids):
            hist = histograms[slots[k]] if histogram_of[k] >= 0 else None
            self.split(node_id, features[k], left_bins[k], left_ids[k], right_ids[k],
                       histogram_of[k], hist)

    def leaf_assignment(self, leaf_ids):
        # The shards keep their own rows' leaves; the client holds no rows.
        no_rows = np.zeros(len(leaf_ids), dtype=np.int64)
        return np.zeros(0, dtype=np.int32), no_rows, no_rows.copy()

    def local_positions(self, positions):
        """Split global row positions by shard.

        Returns
        -------
        local : list of ndarray
            For each shard, the local positions of its rows among
            ``positions``, in the order they appear there.
        """
        positions = np.asarray(positions)
        owner = self._shard_of_position[positions]
        local = self._local_of_position[positions]
        return [local[owner == k] for k in range(len(self.shards))]


class DistributedTrainingData:
    """The training data of a fit spread over shards: the interface of
    :class:`~sklearn_ltr._gbdt.booster.TrainingData` for
    :meth:`~sklearn_ltr._gbdt.booster.Booster.boost`.

    Parameters
    ----------
    node_rows : DistributedNodeRows
    offsets : ndarray of shape (n_queries + 1,)
        Global query offsets (queries in sorted query-id order).
    """

    gradients = None  # the shards keep their own
    hessians = None

    def __init__(self, node_rows, offsets):
        self.node_rows = node_rows
        self.shards = node_rows.shards
        self.offsets = offsets

    def start_scores(self, baseline, trees):
        gather([shard.start_scores(baseline, trees) for shard in self.shards])

    def compute_gradients(self, iteration, random_seed):
        statistics = gather([shard.compute_gradients(iteration, random_seed)
                             for shard in self.shards])
        if statistics[0] is not None:
            # Every shard updates its objective's estimates from the sums
            # over all rows, as the objective of a single process would. A
            # shard's sums stop at its own largest position: pad with zeros.
            width = max(s.shape[-1] for s in statistics)
            total = sum(np.pad(s, [(0, 0)] * (s.ndim - 1) + [(0, width - s.shape[-1])])
                        for s in statistics)
            gather([shard.end_iteration(total) for shard in self.shards])

    def fitted_attributes(self):
        # The shards' objectives agree: they were given the same totals.
        return gather([self.shards[0].fitted_attributes()])[0]

    def add_tree(self, tree, sampled):
        leaf_ids = tree.leaf_nodes
        gather([shard.add_tree(tree.nodes, leaf_ids, tree.leaf_values, sampled)
                 for shard in self.shards])

    def choose_small_trainset(self, max_rows, random_seed):
        # The queries a single process would score; each shard scores those
        # it holds, and their scores are averaged weighted by query counts.
        queries = small_trainset_groups(self.offsets, max_rows, random_seed)
        rows, _ = rows_of_queries(self.offsets, queries)
        self._small_queries = np.asarray(gather([
            shard.choose_small_trainset(local)
            for shard, local in zip(self.shards, self.node_rows.local_positions(rows))
        ]), dtype=np.float64)

    def small_trainset_score(self, metric):
        scores = np.asarray(gather([shard.small_trainset_score(metric)
                                     for shard in self.shards]))
        return float(np.dot(scores, self._small_queries) / self._small_queries.sum())
