"""Dask collections into partitions of whole queries, and back."""

import numpy as np

__all__ = ["rechunk_by_query", "repartition_by_query"]


def _is_dask_dataframe(obj):
    return hasattr(obj, "map_partitions") and hasattr(obj, "npartitions")


def _is_dask_array(obj):
    return hasattr(obj, "map_blocks") and hasattr(obj, "chunks")


def is_dask_collection(obj):
    """True for a dask DataFrame, Series or Array."""
    return _is_dask_dataframe(obj) or _is_dask_array(obj)


def whole_rows(array):
    """A 2-d dask Array with its columns in one chunk, so that each block
    holds whole rows; other arrays as they are."""
    if array.ndim == 2 and len(array.chunks[1]) > 1:
        return array.rechunk({1: -1})
    return array


def _blocks(collection, name):
    """One delayed object per row partition of a dask collection."""
    if collection is None:
        return None
    if _is_dask_dataframe(collection):
        return list(collection.to_delayed())
    if _is_dask_array(collection):
        return list(whole_rows(collection).to_delayed().ravel())
    raise TypeError(
        f"{name} must be a dask DataFrame, Series or Array like X, got {type(collection)}."
    )


def _row_chunks(collection):
    if _is_dask_array(collection):
        return collection.chunks[0]
    return None


def partition_tasks(X, y, qid, sample_weight, label_gain=None, categories=None, position=None):
    """Delayed ``make_part`` tasks, one per partition of ``X``.

    ``y``, ``qid``, ``sample_weight`` and ``position`` must be partitioned like ``X``
    (as they are when they come from the same DataFrame, or from arrays with
    the same row chunks). ``label_gain`` is the ranker's checked gain table
    (or None), against which each partition checks its labels; ``categories``
    are the categories of the pandas category columns of ``X`` (see
    :func:`~._shard.make_part`).
    """
    import dask

    from ._shard import make_part

    blocks = {"X": _blocks(X, "X"), "y": _blocks(y, "y"), "qid": _blocks(qid, "qid"),
              "sample_weight": _blocks(sample_weight, "sample_weight"),
              "position": _blocks(position, "position")}
    n_parts = len(blocks["X"])
    for name, collection in (("y", y), ("qid", qid), ("sample_weight", sample_weight),
                             ("position", position)):
        if collection is None:
            continue
        if len(blocks[name]) != n_parts:
            raise ValueError(
                f"{name} has {len(blocks[name])} partitions but X has {n_parts}; partition "
                "them alike (e.g. take them from one DataFrame)."
            )
        x_chunks, other_chunks = _row_chunks(X), _row_chunks(collection)
        if x_chunks is not None and other_chunks is not None and x_chunks != other_chunks:
            raise ValueError(
                f"{name} is chunked differently from X along the rows; rechunk it with "
                f"{name}.rechunk(X.chunks[0])."
            )
    tasks = []
    for p in range(n_parts):
        tasks.append(dask.delayed(make_part, pure=True)(
            blocks["X"][p], blocks["y"][p],
            None if qid is None else blocks["qid"][p],
            None if sample_weight is None else blocks["sample_weight"][p],
            label_gain,
            categories,
            None if position is None else blocks["position"][p],
        ))
    return tasks


def repartition_by_query(df, npartitions=None, *, qid_column="qid"):
    """Repartition a dask DataFrame so that every query lies in one partition.

    Distributed training (:class:`DaskLambdaMARTRanker` and the other Dask
    rankers) needs each query's rows in a single partition. This hashes the
    query ids to partitions (a shuffle) and then restores, inside each
    partition, the input order of the rows of each query, which ``ties``
    in metrics and LightGBM-style tie-breaking depend on.

    Parameters
    ----------
    df : dask.dataframe.DataFrame
        The rows, with the query ids in column ``qid_column``; the labels
        (and weights) can be columns of it too.
    npartitions : int, default=None
        Number of output partitions; None keeps ``df.npartitions``.
    qid_column : str, default="qid"
        Name of the query id column.

    Returns
    -------
    df : dask.dataframe.DataFrame
        The same rows, each query in one partition, queries sorted by id
        inside a partition and rows of a query in their input order. The
        index is reset (0, 1, ... within each partition).

    Examples
    --------
    >>> import dask.dataframe as dd  # doctest: +SKIP
    >>> from sklearn_ltr.datasets import make_ranking, to_frame
    >>> X, y, qid = make_ranking(n_queries=20, random_state=0)
    >>> frame = to_frame(X, qid).assign(label=y)
    >>> ddf = dd.from_pandas(frame.sample(frac=1, random_state=0), npartitions=3)  # doctest: +SKIP
    >>> ddf = repartition_by_query(ddf)  # doctest: +SKIP
    >>> parts = [set(p["qid"]) for p in ddf.partitions.compute()]  # doctest: +SKIP
    """
    if not _is_dask_dataframe(df) or not hasattr(df, "columns"):
        raise TypeError(
            f"repartition_by_query takes a dask DataFrame, got {type(df)}. For dask "
            "Arrays use rechunk_by_query."
        )
    if qid_column not in df.columns:
        raise ValueError(f"df has no {qid_column!r} column.")
    if npartitions is None:
        npartitions = df.npartitions
    row_key = "__sklearn_ltr_row__"
    numbered = df.assign(**{row_key: 1})
    numbered = numbered.assign(**{row_key: numbered[row_key].cumsum()})
    shuffled = numbered.shuffle(on=qid_column, npartitions=npartitions)

    def _order_rows(part):
        part = part.sort_values([qid_column, row_key], kind="stable")
        return part.drop(columns=[row_key]).reset_index(drop=True)

    return shuffled.map_partitions(_order_rows, meta=df._meta.reset_index(drop=True))


def rechunk_by_query(X, y, qid, sample_weight=None):
    """Rechunk dask Arrays along the rows so that no query spans two chunks.

    The array counterpart of :func:`repartition_by_query`, for arrays whose
    rows are grouped by query (each query's rows contiguous, as in svmlight
    files): every chunk boundary moves to the nearest start of a query, so
    the number of chunks stays about the same and no row moves between
    queries. ``qid`` is computed (one value per row) to find the query starts.

    Parameters
    ----------
    X : dask Array of shape (n_samples, n_features)
    y : dask Array of shape (n_samples,)
    qid : dask Array of shape (n_samples,)
        Query ids, each query's rows contiguous.
    sample_weight : dask Array of shape (n_samples,), default=None

    Returns
    -------
    X, y, qid[, sample_weight] : dask Arrays
        Rechunked alike (``sample_weight`` only if given).

    Raises
    ------
    ValueError
        If some query's rows are not contiguous; use a DataFrame and
        :func:`repartition_by_query` then.
    """
    arrays = [X, y, qid] + ([sample_weight] if sample_weight is not None else [])
    if not all(_is_dask_array(a) for a in arrays):
        raise TypeError("rechunk_by_query takes dask Arrays; for a DataFrame use "
                        "repartition_by_query.")
    if any(np.isnan(a.shape[0]) for a in arrays):
        raise ValueError(
            "rechunk_by_query needs the row counts of the chunks, and some are unknown "
            "(nan): call .compute_chunk_sizes() on the arrays first, or make them with "
            "ddf.to_dask_array(lengths=True)."
        )
    ids = np.asarray(qid.compute())
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    if np.unique(ids[starts]).shape[0] != starts.shape[0]:
        raise ValueError(
            "some query's rows are not contiguous in qid; sort the rows by query, or put "
            "them in a dask DataFrame and use repartition_by_query."
        )
    n_samples = ids.shape[0]
    wanted = np.cumsum(X.chunks[0])[:-1]
    # The query start nearest to each current boundary, duplicates dropped.
    nearest = np.clip(np.searchsorted(starts, wanted), 1, max(1, starts.shape[0] - 1))
    before, after = starts[nearest - 1], starts[np.minimum(nearest, starts.shape[0] - 1)]
    cuts = np.where(wanted - before <= after - wanted, before, after)
    cuts = np.unique(cuts[(cuts > 0) & (cuts < n_samples)])
    rows = tuple(int(n) for n in np.diff(np.concatenate(([0], cuts, [n_samples]))))
    return tuple(a.rechunk({0: rows}) for a in arrays)


def query_spanning_partitions(summaries):
    """A query id found in more than one partition, or None if there is none.

    ``summaries`` are the shards' :meth:`TrainingShard.summary` results.
    """
    part_qids = [qids for summary in summaries for qids in summary["part_qids"]]
    if len(part_qids) < 2:
        return None
    values, counts = np.unique(np.concatenate(part_qids), return_counts=True)
    spanning = values[counts > 1]
    return spanning[0] if spanning.size else None
