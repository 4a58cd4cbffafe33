"""Rankers trained data-parallel on a Dask cluster."""

from functools import partial

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from .._gbdt.binning import BinMapper
from .._objectives import OBJECTIVES
from .._rankers import (
    CalibratedRanker,
    LambdaMARTRanker,
    ListNetRanker,
    XENDCGRanker,
    YetiRankRanker,
)
from .._rankers.base import _BINNING_SUBSAMPLE, warn_pooled_categories
from .._rankers.calibrated import _proba_available
from .._rankers.categorical_input import (
    categorical_mask,
    encode_pandas_categories,
    pandas_categories,
)
from .._rankers.docs import _dask_ranker_doc
from .._rankers.input_checks import check_largest_label, check_numeric_columns
from .._rankers.tree_shape import tree_constraints
from .._utils.queries import resolve_qid, rows_of_queries, split_queries
from ._partitions import (
    is_dask_collection,
    partition_tasks,
    query_spanning_partitions,
    whole_rows,
)
from ._shard import DistributedNodeRows, DistributedTrainingData, TrainingShard, gather

__all__ = [
    "DaskLambdaMARTRanker", "DaskXENDCGRanker", "DaskListNetRanker", "DaskYetiRankRanker",
    "DaskCalibratedRanker",
]


def _compute_if_dask(value):
    return value.compute() if is_dask_collection(value) else value


def _global_queries(summaries):
    """The shards' queries in a single-process fit's order (sorted by id).

    Returns
    -------
    order : ndarray of shape (n_queries,)
        Sorts the shards' queries, concatenated shard after shard, by id.
    offsets : ndarray of shape (n_queries + 1,)
        Global query offsets, queries in that sorted order.
    bounds : ndarray of shape (n_shards + 1,)
        Shard ``k``'s queries are ``bounds[k]:bounds[k + 1]`` of the
        concatenation.
    """
    qids = np.concatenate([s["qids"] for s in summaries])
    sizes = np.concatenate([s["sizes"] for s in summaries]).astype(np.int64)
    try:
        order = np.argsort(qids, kind="stable")
    except TypeError as exc:
        raise ValueError(f"qid values must be mutually comparable; got mixed types: {exc}") from None
    offsets = np.concatenate(([0], np.cumsum(sizes[order]))).astype(np.int64)
    bounds = np.cumsum([0] + [len(s["qids"]) for s in summaries])
    return order, offsets, bounds


def _known_categories(X, meta):
    """The categories of the category columns of dask DataFrame ``X``
    (``meta`` is its empty frame without ``qid``), as
    :func:`~sklearn_ltr._rankers.categorical_input.pandas_categories` gives them;
    an error for a column whose categories dask does not know."""
    categories = pandas_categories(meta)
    for j in categories:
        name = meta.columns[j]
        if not X[name].cat.known:
            raise ValueError(
                f"Column {name!r} of X is a category column whose categories dask does not "
                "know, so the partitions could encode them differently. Make them known "
                f"first: X = X.categorize(columns=[{name!r}]) (or "
                f"X[{name!r}].cat.as_known())."
            )
    return categories


def _predict_partition(model, part):
    import pandas as pd

    return pd.Series(model.predict(part), index=part.index, dtype=np.float64)


def _predict_block(model, block):
    return model.predict(block)


def _predict_proba_partition(model, part):
    import pandas as pd

    return pd.DataFrame(model.predict_proba(part), index=part.index, columns=[0, 1])


def _predict_proba_block(model, block):
    return model.predict_proba(block)


class _DaskRankerMixin:
    """Data-parallel ``fit`` on Dask collections for a ranker class.

    ``fit`` on dask collections runs on the workers that hold the
    partitions; on in-memory data it is the ranker's own ``fit``. Every
    other method is the ranker's.
    """

    _local_class = None

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, qid=None, sample_weight=None, X_val=None, y_val=None, qid_val=None):
        """Fit the ranker on the workers that hold the data.

        Parameters
        ----------
        X : dask DataFrame or dask Array of shape (n_samples, n_features)
            Training rows, partitioned so that no query spans two partitions
            (see :func:`repartition_by_query` and :func:`rechunk_by_query`). A DataFrame may carry the
            query ids in a ``"qid"`` column. In-memory data (NumPy, pandas,
            SciPy) is fitted in this process, as by the ranker's own ``fit``.
        y : dask Series or dask Array of shape (n_samples,)
            Graded, non-negative relevance labels, partitioned like ``X``.
        qid : dask Series or dask Array of shape (n_samples,), default=None
            Query ids, partitioned like ``X``; required unless ``X`` has a
            ``"qid"`` column.
        sample_weight : dask Series or dask Array of shape (n_samples,), default=None
            Per-row weights, partitioned like ``X``.
        X_val, y_val, qid_val : default=None
            Validation set for early stopping, in memory or as dask
            collections (it is brought to the client, which scores it after
            every tree). If not given and early stopping is on, the
            ``validation_fraction`` of the queries a single-process fit would
            hold out are taken out of training on the workers, binned there,
            and sent to the client.

        Returns
        -------
        self : object
            The fitted ranker.
        """
        return self._fit_dask(X, y, qid=qid, sample_weight=sample_weight, X_val=X_val,
                              y_val=y_val, qid_val=qid_val)

    def _fit_dask(self, X, y, *, qid, sample_weight, X_val, y_val, qid_val, **rows):
        """``fit`` with the per-row arrays ``rows`` that only some rankers
        take (LambdaMART's ``position``), partitioned like ``X``."""
        if not is_dask_collection(X):
            return self._local_class.fit(
                self, X, y, qid=qid, sample_weight=sample_weight, X_val=X_val, y_val=y_val,
                qid_val=qid_val, **rows,
            )
        from distributed import default_client

        try:
            client = default_client()
        except ValueError:
            raise ValueError(
                f"{type(self).__name__}.fit on dask collections runs on a Dask cluster: "
                "create a distributed.Client first (e.g. Client(LocalCluster()))."
            ) from None
        self._check_validation_arguments(X_val, y_val, qid_val)
        if self.target_statistics is not None:
            raise ValueError(
                f"{type(self).__name__}.fit on dask collections cannot compute "
                f"target_statistics={self.target_statistics!r}: the order of the queries "
                "spans every worker's partitions. Set target_statistics=None, or fit on "
                "computed (in-memory) arrays."
            )
        if X_val is not None:
            X_val, y_val, qid_val = (_compute_if_dask(v) for v in (X_val, y_val, qid_val))
        warm, nothing_to_add = self._begin_fit()
        if warm and self._fitted_statistics() is not None:
            raise ValueError(
                f"{type(self).__name__}.fit on dask collections cannot add trees to a model "
                "fitted with target statistics (in memory): warm-start it on in-memory arrays, "
                "or fit from scratch on the dask collections."
            )
        if not warm:
            self._target_statistics = None
        if not nothing_to_add:
            self._check_columns(X, reset=not warm)
            tree_constraints(self)  # refuse bad constraints before the workers start
            parts = client.compute(
                partition_tasks(X, y, qid, sample_weight, label_gain=self._gain_table(),
                                categories=self._pandas_categories, **rows)
            )
            shard_futures, shards = self._start_shards(client, parts)
            # The shards hold the partitions now; without the futures the
            # workers' stores drop their references, so what a shard copies or
            # bins is freed.
            del parts
            try:
                self._fit_on_shards(shards, warm, X_val, y_val, qid_val)
            finally:
                # Actor handles sit in reference cycles, so dropping them would
                # leave each fit's shards on the workers until the client's next
                # garbage collection; cancelling releases them now.
                client.cancel(shard_futures)
                del shards, shard_futures
        # With no trees to add, what follows them (Platt scaling) is still
        # refitted on this validation set, as in one process.
        if X_val is not None:
            self._after_boosting(X_val, y_val, qid_val)
        return self

    def _fit_on_shards(self, shards, warm, X_val, y_val, qid_val):
        """Number, bin and boost the rows held by ``shards``, with the
        in-memory validation set (or None)."""
        has_validation_set = X_val is not None
        summaries = gather([shard.summary() for shard in shards])
        self._check_summaries(summaries)
        n_samples = sum(int(s["sizes"].sum()) for s in summaries)
        self._n_training_queries = sum(len(s["qids"]) for s in summaries)
        # Of all rows, held-out ones included, as a single process takes it;
        # the labels are checked elementwise and monotonically
        # (CalibratedRanker's binarize), so checking the largest gives the
        # largest checked label.
        largest_label = self._checked_labels(
            np.array([max(s["largest_label"] for s in summaries)]))[0]
        self.do_early_stopping_ = self._do_early_stopping(n_samples, has_validation_set)
        hold_out = self.do_early_stopping_ and not has_validation_set
        self._note_held_out_queries(warm, hold_out)
        if hold_out:
            summaries = self._hold_out_queries(shards, summaries)
        training_rows, offsets = self._number_rows(shards, summaries)

        if not warm:
            self._bin_mapper = self._fit_bin_mapper_on_shards(training_rows)
            warn_pooled_categories(self._bin_mapper, self)
        # The trees split on binned features: more than the columns if a
        # categorical column is wide.
        training_rows.n_features = self._bin_mapper.n_binned_features_
        infos = gather([
            shard.bin_and_prepare(self._bin_mapper, self._local_class(**self.get_params()),
                                  self._objective_state(warm))
            for shard in shards
        ])
        objective_name = infos[0][0]
        if any(name != objective_name for name, _ in infos):
            raise RuntimeError(f"the shards made different objectives: {[name for name, _ in infos]}")
        baseline = OBJECTIVES[objective_name].init_score_from(sum(stats for _, stats in infos))

        validation = None
        if has_validation_set:
            prepared = self._prepare_validation_data(
                X_val, y_val, qid_val, n_training_queries=self._n_training_queries
            )
            if self.do_early_stopping_:
                validation = self._binned_validation_set(*prepared)
        elif hold_out:
            validation = self._held_out_validation_set(shards)
        if validation is not None:
            largest_label = max(largest_label, validation[1].max())
        self._boost(
            DistributedTrainingData(training_rows, offsets),
            objective_name=objective_name,
            baseline=baseline,
            validation=validation,
            warm=warm,
            largest_label=largest_label,
        )

    def _after_boosting(self, X_val, y_val, qid_val):
        """Fit whatever follows the trees, on the in-memory validation set."""

    def _start_shards(self, client, parts):
        """One TrainingShard actor on each worker that holds partitions, given
        those partitions (which stay where they are).

        Returns
        -------
        shard_futures : list of distributed.Future
            Keep them alive as long as the shards are needed.
        shards : list of distributed.Actor
        """
        from distributed import wait

        wait(parts)
        for part in parts:
            if part.status == "error":
                part.result()  # raises the partition's error here
        holders = client.who_has(parts)
        parts_of_worker = {}
        for part in parts:
            parts_of_worker.setdefault(holders[part.key][0], []).append(part)
        shard_futures = [
            client.submit(TrainingShard, *worker_parts, workers=[worker],
                          allow_other_workers=False, actor=True)
            for worker, worker_parts in sorted(parts_of_worker.items())
        ]
        self._fit_workers = sorted(parts_of_worker)
        return shard_futures, [future.result() for future in shard_futures]

    def _check_columns(self, X, reset):
        """Set ``n_features_in_``, ``feature_names_in_``, the categories of
        the pandas category columns and ``is_categorical_`` from X's columns
        (``reset``), or check X against them (a warm start)."""
        if hasattr(X, "columns"):
            meta, _ = resolve_qid(X._meta, None)
            if reset:
                self._pandas_categories = _known_categories(X, meta)
        else:
            if X.ndim != 2:
                raise ValueError(f"X must be 2-dimensional, got shape {X.shape}.")
            meta = np.empty((0, X.shape[1]))
            if reset:
                self._pandas_categories = {}
        meta = encode_pandas_categories(meta, self._pandas_categories)
        if hasattr(meta, "columns"):
            check_numeric_columns(meta, "X")
            if meta.shape[1] == 0:
                raise ValueError("X has no feature columns (its 'qid' column is not a feature).")
        validate_data(self, meta, reset=reset, ensure_min_samples=0, ensure_all_finite=False)
        if reset:
            self.is_categorical_ = categorical_mask(
                self.categorical_features, meta.shape[1],
                getattr(self, "feature_names_in_", None), self._pandas_categories)

    def _check_summaries(self, summaries):
        spanning = query_spanning_partitions(summaries)
        if spanning is not None:
            raise ValueError(
                f"query {spanning!r} has rows in more than one partition; distributed "
                "training needs whole queries in each partition. Repartition with "
                "sklearn_ltr.dask.repartition_by_query(df) (DataFrames) or "
                "rechunk_by_query(X, y, qid) (Arrays) first."
            )
        n_rows = int(sum(s["sizes"].sum() for s in summaries))
        if n_rows == 0:
            raise ValueError("X has no rows; fit needs at least one query with one row.")
        widths = {s["n_features"] for s in summaries if s["sizes"].size}
        if widths != {self.n_features_in_}:
            raise ValueError(
                f"the partitions of X have {sorted(widths)} columns (without qid), "
                f"expected {self.n_features_in_}."
            )
        # Each partition checked its labels against its own size; the bound
        # that matters is that of all rows.
        check_largest_label(max(s["largest_label"] for s in summaries), n_rows,
                            label_gain=self._gain_table())

    def _hold_out_queries(self, shards, summaries):
        """Take the validation queries a single-process fit would hold out
        (``validation_fraction``) out of the shards' training rows.

        Returns
        -------
        summaries : list of dict
            The shards' summaries of the queries left for training.
        """
        if self.validation_fraction is None:
            raise ValueError(
                f"{type(self).__name__} cannot stop early on its own training data "
                "(validation_fraction=None); pass X_val, y_val, qid_val, set "
                "validation_fraction, or set early_stopping=False."
            )
        order, offsets, bounds = _global_queries(summaries)
        split_rng = np.random.default_rng([self._random_seed, 0])
        _, validation_queries = split_queries(offsets, self.validation_fraction, split_rng)
        held = np.zeros(order.shape[0], dtype=bool)
        held[order[validation_queries]] = True
        return gather([
            shard.hold_out(np.flatnonzero(held[bounds[k]:bounds[k + 1]]))
            for k, shard in enumerate(shards)
        ])

    def _held_out_validation_set(self, shards):
        """The held-out queries, binned, gathered on the client in the order
        of a single-process fit (queries by sorted id)."""
        parts = gather([shard.held_out_rows(self._bin_mapper) for shard in shards])
        qids = np.concatenate([part[0] for part in parts])
        sizes = np.concatenate([part[1] for part in parts]).astype(np.int64)
        X_binned = np.concatenate([part[2] for part in parts])
        y = self._checked_labels(np.concatenate([part[3] for part in parts]))
        order = np.argsort(qids, kind="stable")
        starts = np.concatenate(([0], np.cumsum(sizes)))
        rows, offsets = rows_of_queries(starts, order)
        return np.asfortranarray(X_binned[rows]), y[rows], offsets

    def _number_rows(self, shards, summaries):
        """Number all rows as a single-process fit does (queries in sorted id
        order, rows of a query in input order) and tell each shard where its
        rows are."""
        order, offsets, bounds = _global_queries(summaries)
        shard_of_query = np.repeat(np.arange(len(shards)), np.diff(bounds))
        local_starts = np.concatenate(
            [np.concatenate(([0], np.cumsum(s["sizes"])[:-1])) for s in summaries]
        ).astype(np.int64)
        global_starts = np.empty_like(offsets[:-1])
        global_starts[order] = offsets[:-1]
        n_samples = int(offsets[-1])
        gather([
            shard.set_global_queries(global_starts[bounds[k]:bounds[k + 1]], n_samples)
            for k, shard in enumerate(shards)
        ])
        ordered_sizes = np.diff(offsets)
        shard_of_position = np.repeat(shard_of_query[order], ordered_sizes).astype(np.int32)
        local_of_position = (
            np.repeat(local_starts[order] - offsets[:-1], ordered_sizes) + np.arange(n_samples)
        )
        rows = DistributedNodeRows(shards, n_samples, self.n_features_in_, shard_of_position,
                                   local_of_position)
        return rows, offsets

    def _fit_bin_mapper_on_shards(self, training_rows):
        """Bin thresholds from the rows a single-process fit would sample,
        gathered once from the shards."""
        n_samples = training_rows.n_samples
        positions = np.arange(n_samples)
        if n_samples > _BINNING_SUBSAMPLE:
            rng = np.random.default_rng([self._random_seed, 1])
            positions = np.sort(rng.choice(positions, _BINNING_SUBSAMPLE, replace=False))
        samples = gather([
            shard.rows_at(local)
            for shard, local in zip(training_rows.shards, training_rows.local_positions(positions))
        ])
        return BinMapper(max_bins=self.max_bins, subsample=None,
                         is_categorical=self.is_categorical_).fit(np.concatenate(samples))

    def predict(self, X):
        """Relevance scores, one per row; lazily per partition for dask input.

        Parameters
        ----------
        X : dask DataFrame, dask Array, or in-memory data of shape (n_samples, n_features)
            A ``"qid"`` column of a DataFrame is ignored.

        Returns
        -------
        scores : dask Series, dask Array or ndarray of shape (n_samples,)
            Of the same kind as ``X``.
        """
        if not is_dask_collection(X):
            return super().predict(X)
        model = self.to_local()
        if hasattr(X, "columns"):
            return X.map_partitions(partial(_predict_partition, model),
                                    meta=("score", np.float64))
        # meta given, so that dask does not call predict on an empty block here.
        return whole_rows(X).map_blocks(partial(_predict_block, model), drop_axis=1,
                                        dtype=np.float64, meta=np.empty(0, dtype=np.float64))

    def rank(self, X, *, qid=None):
        """Rank of each row within its query, 1 being the best; in-memory
        data only.

        Parameters
        ----------
        X : in-memory data of shape (n_samples, n_features)
        qid : array-like of shape (n_samples,), default=None

        Returns
        -------
        ranks : ndarray of shape (n_samples,), dtype int64
        """
        if is_dask_collection(X) or is_dask_collection(qid):
            raise TypeError(
                f"{type(self).__name__}.rank needs the rows in memory: a query's ranks need "
                "all its rows at once. Compute X first, or rank within partitions of whole "
                "queries with X.map_partitions(ranker.to_local().rank)."
            )
        return super().rank(X, qid=qid)

    def to_local(self):
        """The fitted model as the ordinary ranker class, with no tie to Dask.

        Returns
        -------
        ranker : LambdaMARTRanker, XENDCGRanker, ListNetRanker, YetiRankRanker or CalibratedRanker
            Same parameters and trees; predictions are identical.
        """
        check_is_fitted(self, "_booster")
        params = self.get_params()
        local = self._local_class(**params)
        for name, value in vars(self).items():
            if name not in params and name != "_fit_workers":
                setattr(local, name, value)
        return local

    def save_model(self, path):
        """Write the model as :meth:`to_local` would; it loads as the ordinary
        ranker class.

        Parameters
        ----------
        path : str, path-like or binary file object
        """
        self.to_local().save_model(path)


class DaskLambdaMARTRanker(_DaskRankerMixin, LambdaMARTRanker):
    __doc__ = _dask_ranker_doc(
        """LambdaMART trained data-parallel on a Dask cluster.

    Every worker that holds partitions of the training data keeps their
    rows, bins them with thresholds shared by all workers, computes the
    lambda gradients of its own queries and the histograms of its own rows.
    The client adds the workers' histograms, chooses each split, and keeps
    the trees, so the model is the one a single process would fit on all
    rows with the same parameters (only the order of floating-point
    additions differs). Parameters, attributes and methods are those of
    :class:`~sklearn_ltr.LambdaMARTRanker` (the parameters and attributes
    are repeated below); ``fit`` takes dask collections partitioned so that
    every query lies in one partition.

    Differences from the in-memory ranker: early stopping cannot score the
    training data itself (``validation_fraction=None``); ``y_secondary`` and
    sparse input are not supported (``position`` is, partitioned like ``X``,
    and the workers' pair costs are summed to estimate the position
    biases); pandas ``category`` columns must have
    categories known to dask (``ddf.categorize()``); the fit uses the
    current ``distributed.Client``. ``n_jobs`` sets the numba threads of the
    client's share of a fit (bin thresholds, validation scores) and of
    ``predict`` (on the workers too, partition by partition); the workers'
    training kernels run on each worker's own numba threads
    (``NUMBA_NUM_THREADS`` in its environment, see :func:`warm_up_workers`).""",
        LambdaMARTRanker,
        """    See Also
    --------
    sklearn_ltr.LambdaMARTRanker : The same model in one process.
    repartition_by_query : Make DataFrame partitions of whole queries.
    rechunk_by_query : Make dask Array chunks of whole queries.

    Examples
    --------
    >>> import dask.dataframe as dd  # doctest: +SKIP
    >>> from distributed import Client, LocalCluster  # doctest: +SKIP
    >>> from sklearn_ltr.dask import DaskLambdaMARTRanker, repartition_by_query
    >>> from sklearn_ltr.datasets import make_ranking, to_frame
    >>> client = Client(LocalCluster(n_workers=2, threads_per_worker=1))  # doctest: +SKIP
    >>> X, y, qid = make_ranking(n_queries=200, random_state=0)
    >>> frame = to_frame(X, qid).assign(label=y)
    >>> ddf = repartition_by_query(dd.from_pandas(frame, npartitions=4))  # doctest: +SKIP
    >>> ranker = DaskLambdaMARTRanker(n_estimators=50)  # doctest: +SKIP
    >>> ranker.fit(ddf.drop(columns="label"), ddf["label"])  # doctest: +SKIP
    >>> local = ranker.to_local()  # doctest: +SKIP
    """,
    )

    _local_class = LambdaMARTRanker

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, qid=None, sample_weight=None, position=None, X_val=None, y_val=None,
            qid_val=None):
        """Fit the ranker on the workers that hold the data.

        Parameters
        ----------
        X, y, qid, sample_weight, X_val, y_val, qid_val
            As :meth:`_DaskRankerMixin.fit
            <sklearn_ltr.dask.DaskXENDCGRanker.fit>`.
        position : dask Series or dask Array of shape (n_samples,), default=None
            Displayed 1-based ranks for ``position_debiasing``, partitioned
            like ``X`` (see :meth:`LambdaMARTRanker.fit
            <sklearn_ltr.LambdaMARTRanker.fit>`).

        Returns
        -------
        self : object
            The fitted ranker.
        """
        if is_dask_collection(X):
            self._check_pair_options()
            self._check_debiasing(position)
        rows = {} if position is None else {"position": position}
        return self._fit_dask(X, y, qid=qid, sample_weight=sample_weight, X_val=X_val,
                              y_val=y_val, qid_val=qid_val, **rows)


class DaskXENDCGRanker(_DaskRankerMixin, XENDCGRanker):
    __doc__ = _dask_ranker_doc(
        """XE-NDCG ranker trained data-parallel on a Dask cluster.

    As :class:`DaskLambdaMARTRanker`, with the objective of
    :class:`~sklearn_ltr.XENDCGRanker`. Each worker draws the random targets
    (gamma) of its own rows as a single process would draw them for those
    rows, so the model is again the single-process one.""",
        XENDCGRanker,
        """    See Also
    --------
    sklearn_ltr.XENDCGRanker : The same model in one process.
    """,
    )

    _local_class = XENDCGRanker


class DaskListNetRanker(_DaskRankerMixin, ListNetRanker):
    __doc__ = _dask_ranker_doc(
        """ListNet ranker trained data-parallel on a Dask cluster.

    As :class:`DaskLambdaMARTRanker`, with the objective of
    :class:`~sklearn_ltr.ListNetRanker`.""",
        ListNetRanker,
        """    See Also
    --------
    sklearn_ltr.ListNetRanker : The same model in one process.
    """,
    )

    _local_class = ListNetRanker


class DaskYetiRankRanker(_DaskRankerMixin, YetiRankRanker):
    __doc__ = _dask_ranker_doc(
        """YetiRank ranker trained data-parallel on a Dask cluster.

    As :class:`DaskLambdaMARTRanker`, with the objective of
    :class:`~sklearn_ltr.YetiRankRanker`. Each worker draws the noise of its
    own rows as a single process would draw it for those rows, so the model
    is again the single-process one.""",
        YetiRankRanker,
        """    See Also
    --------
    sklearn_ltr.YetiRankRanker : The same model in one process.
    """,
    )

    _local_class = YetiRankRanker


class DaskCalibratedRanker(_DaskRankerMixin, CalibratedRanker):
    __doc__ = _dask_ranker_doc(
        """Calibrated ranker trained data-parallel on a Dask cluster.

    As :class:`DaskLambdaMARTRanker`, with the objectives of
    :class:`~sklearn_ltr.CalibratedRanker`. The sigmoid-based objectives
    start from the log-odds of the mean label over all workers' rows, so the
    model is again the single-process one. ``calibration="platt"`` fits the
    Platt scaling on ``X_val, y_val, qid_val``, which it then requires: on
    Dask no training queries are held out for it.""",
        CalibratedRanker,
        """    See Also
    --------
    sklearn_ltr.CalibratedRanker : The same model in one process.
    """,
    )

    _local_class = CalibratedRanker

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, qid=None, sample_weight=None, X_val=None, y_val=None, qid_val=None):
        """Fit the ranker on the workers that hold the data, then the Platt
        scaling (with ``calibration="platt"``) on the validation set.

        Parameters
        ----------
        X : dask DataFrame or dask Array of shape (n_samples, n_features)
            Training rows, partitioned so that no query spans two partitions.
            In-memory data is fitted in this process, as by
            :meth:`CalibratedRanker.fit <sklearn_ltr.CalibratedRanker.fit>`.
        y : dask Series or dask Array of shape (n_samples,)
            Labels in [0, 1], or graded labels with ``binarize=True``.
        qid : dask Series or dask Array of shape (n_samples,), default=None
            Query ids; required unless ``X`` has a ``"qid"`` column.
        sample_weight : dask Series or dask Array of shape (n_samples,), default=None
            Per-row weights, partitioned like ``X``.
        X_val, y_val, qid_val : default=None
            Validation set for early stopping and for the Platt scaling;
            required with ``calibration="platt"``.

        Returns
        -------
        self : object
            The fitted ranker.
        """
        if is_dask_collection(X):
            if self.calibration == "platt" and X_val is None:
                raise ValueError(
                    "DaskCalibratedRanker with calibration='platt' fits the Platt scaling on "
                    "X_val, y_val, qid_val; pass them (no training queries are held out on Dask)."
                )
            if self.calibration is None:
                self._forget_platt_scaling()
        return super().fit(
            X, y, qid=qid, sample_weight=sample_weight, X_val=X_val, y_val=y_val, qid_val=qid_val
        )

    def _after_boosting(self, X_val, y_val, qid_val):
        if self.calibration == "platt":
            self._fit_platt_on_validation_set(X_val, y_val, qid_val)

    @available_if(_proba_available)
    def predict_proba(self, X):
        """Probability that each row is relevant; lazily per partition for
        dask input.

        Parameters
        ----------
        X : dask DataFrame, dask Array, or in-memory data of shape (n_samples, n_features)
            A ``"qid"`` column of a DataFrame is ignored.

        Returns
        -------
        proba : dask DataFrame, dask Array or ndarray of shape (n_samples, 2)
            Column 0 is ``P(not relevant)``, column 1 ``P(relevant)``, as
            :meth:`CalibratedRanker.predict_proba
            <sklearn_ltr.CalibratedRanker.predict_proba>` gives them; a dask
            DataFrame's columns are named 0 and 1 and keep its index.
        """
        if not is_dask_collection(X):
            return super().predict_proba(X)
        model = self.to_local()
        if hasattr(X, "columns"):
            import pandas as pd

            meta = pd.DataFrame({0: np.zeros(0), 1: np.zeros(0)})
            return X.map_partitions(partial(_predict_proba_partition, model), meta=meta)
        rows = whole_rows(X)
        return rows.map_blocks(partial(_predict_proba_block, model), chunks=(rows.chunks[0], (2,)),
                               dtype=np.float64, meta=np.empty((0, 2)))
