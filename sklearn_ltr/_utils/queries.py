"""Query ids: validation, grouping rows into queries, and query-aware splits.

Rows of a query need not be sorted or contiguous anywhere in the package. Every
consumer calls :func:`group_queries`, which orders rows by query with a stable
sort, so rows keep their input order inside each query (the order that
``ties="stable"`` metrics and LightGBM's tie-breaking rely on).
"""

import numbers
import warnings

import numpy as np
from scipy import sparse

from ..exceptions import SingleQueryWarning
from .frames import column_values, drop_column
from .groups import rows_of_groups

__all__ = [
    "check_per_row_weights",
    "check_qid",
    "columns_like_query_ids",
    "group_queries",
    "resolve_qid",
    "rows_of_queries",
    "split_queries",
    "warn_one_query",
]


def check_qid(qid, n_samples, *, name="qid"):
    """Validate a per-row query id array.

    Parameters
    ----------
    qid : array-like of shape (n_samples,)
        One query id per row. Any mutually comparable values (integers,
        floats, strings) are accepted.
    n_samples : int
        The number of rows the ids must match.
    name : str, default="qid"
        The argument name used in error messages.

    Returns
    -------
    qid : ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        If ``qid`` is not one-dimensional, has the wrong length, or holds
        missing values (NaN or None).
    """
    if hasattr(qid, "to_numpy"):  # pandas Series / Index
        qid = qid.to_numpy()
    qid = np.asarray(qid)
    if qid.ndim != 1:
        raise ValueError(
            f"{name} must be a 1-D array with one query id per row; got an array of "
            f"shape {qid.shape}."
        )
    if qid.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {qid.shape[0]} entries but there are {n_samples} rows; "
            f"{name} must give one query id per row (LightGBM-style group sizes can be "
            "converted with sklearn_ltr.datasets.qid_from_group_sizes)."
        )
    if qid.dtype.kind == "f":
        if np.isnan(qid).any():
            raise ValueError(f"{name} contains NaN; every row needs a query id.")
    elif qid.dtype.kind == "O":
        missing = [v is None or (isinstance(v, float) and v != v) for v in qid]
        if any(missing):
            raise ValueError(f"{name} contains None or NaN; every row needs a query id.")
    elif qid.dtype.kind not in "iubUSM":
        raise ValueError(f"{name} has unsupported dtype {qid.dtype}.")
    return qid


def check_per_row_weights(sample_weight, qid, *, name="sample_weight"):
    """Refuse one weight per query where one per row is due, with the fix.

    LightGBM takes one weight per query in ranking; here ``sample_weight``
    has one per row, and scikit-learn's check of its length would only
    report the two lengths.

    Parameters
    ----------
    sample_weight : array-like or None
        The weights as the caller passed them.
    qid : ndarray of shape (n_samples,)
        Validated query ids (see :func:`check_qid`).
    name : str, default="sample_weight"
        The argument name used in the message.

    Raises
    ------
    ValueError
        If ``sample_weight`` is 1-D with one entry per query, there are at
        least two queries, and the rows are more than the queries.
    """
    if sample_weight is None:
        return
    # np.asarray, not np.ndim: array-likes need not implement NumPy's functions.
    weights = np.asarray(sample_weight)
    if weights.ndim != 1:
        return
    n_weights, n_samples = weights.shape[0], qid.shape[0]
    if n_weights == n_samples:
        return
    n_queries = group_queries(qid)[1].shape[0] - 1
    if n_weights != n_queries or n_queries < 2:
        return
    raise ValueError(
        f"{name} has {n_weights} entries, one per query, but weights are per row and "
        f"there are {n_samples} rows. Give every row the weight of its query: "
        f"{name} = np.asarray({name})[np.unique(qid, return_inverse=True)[1]], which "
        "reads the weights in the order of the sorted query ids (LightGBM's order of "
        "groups when the rows are sorted by query id)."
    )


def _is_non_decreasing(qid):
    if qid.dtype.kind not in "iuf":
        return False
    return bool(np.all(qid[1:] >= qid[:-1]))


def group_queries(qid):
    """Order rows by query, stably.

    Parameters
    ----------
    qid : ndarray of shape (n_samples,)
        Validated query ids (see :func:`check_qid`).

    Returns
    -------
    order : ndarray of shape (n_samples,), dtype int64
        Row indices grouped by query. Inside a query, rows keep their input
        order. Query ``q`` owns rows ``order[offsets[q]:offsets[q + 1]]``.
    offsets : ndarray of shape (n_queries + 1,), dtype int64
        Start of each query in ``order``, and ``n_samples`` at the end.
    unique_qids : ndarray of shape (n_queries,)
        The query id of each group, in sorted order.
    """
    n_samples = qid.shape[0]
    if n_samples == 0:
        return (np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64), qid[:0])
    if _is_non_decreasing(qid):
        # Already grouped and sorted (the usual svmlight layout): no sort needed.
        order = np.arange(n_samples, dtype=np.int64)
        starts = np.flatnonzero(qid[1:] != qid[:-1]) + 1
        offsets = np.concatenate(([0], starts, [n_samples])).astype(np.int64)
        return order, offsets, qid[offsets[:-1]]
    try:
        # One stable sort gives both the grouping and the unique ids.
        order = np.argsort(qid, kind="stable").astype(np.int64)
    except TypeError as exc:
        raise ValueError(
            "qid values must be mutually comparable (for example all integers or all "
            f"strings); got mixed types: {exc}"
        ) from None
    sorted_qid = qid[order]
    starts = np.flatnonzero(sorted_qid[1:] != sorted_qid[:-1]) + 1
    offsets = np.concatenate(([0], starts, [n_samples])).astype(np.int64)
    unique_qids = sorted_qid[offsets[:-1]]
    return order, offsets, unique_qids


def resolve_qid(X, qid, *, qid_column="qid"):
    """Find the query ids for ``X`` following the package's rules.

    An explicit ``qid`` wins. Otherwise a DataFrame column named
    ``qid_column`` is used (of a pandas or a polars DataFrame). The column is
    always removed from ``X`` so that it never becomes a feature. If both are
    given and differ, an error is raised.

    Parameters
    ----------
    X : array-like or DataFrame
        The input rows.
    qid : array-like of shape (n_samples,) or None
        Explicitly passed query ids.
    qid_column : str, default="qid"
        Name of the DataFrame column that carries query ids.

    Returns
    -------
    X : array-like or DataFrame
        ``X`` without the query id column.
    qid : ndarray of shape (n_samples,) or None
        The query ids, or None when there are none (the caller then treats all
        rows as one query, or raises).
    """
    column = None
    columns = getattr(X, "columns", None)
    if columns is not None and qid_column in list(columns):
        column = column_values(X, qid_column)
        X = drop_column(X, qid_column)
    if qid is None:
        return X, column
    if hasattr(qid, "to_numpy"):
        qid = qid.to_numpy()
    qid = np.asarray(qid)
    if column is not None:
        same = column.shape == qid.shape and np.array_equal(column, qid)
        if not same:
            raise ValueError(
                f"qid was passed explicitly and X also has a {qid_column!r} column, "
                "and the two differ. Pass only one of them."
            )
    return X, qid


def split_queries(offsets, validation_fraction, rng):
    """Split queries (not rows) into a training and a validation set.

    Parameters
    ----------
    offsets : ndarray of shape (n_queries + 1,)
        Query offsets from :func:`group_queries`.
    validation_fraction : float in (0, 1) or int >= 1
        Fraction of the queries, or number of queries, held out.
    rng : numpy.random.Generator
        The source of randomness.

    Returns
    -------
    train_queries, validation_queries : ndarray of int64
        Sorted indices of the queries in each part.

    Raises
    ------
    ValueError
        If fewer than two queries are available, so that one side would be
        empty.
    """
    n_queries = offsets.shape[0] - 1
    if isinstance(validation_fraction, numbers.Integral):
        n_validation = int(validation_fraction)
    else:
        n_validation = int(np.ceil(validation_fraction * n_queries))
    if n_queries < 2 or n_validation >= n_queries:
        raise ValueError(
            f"Cannot hold out {n_validation} of {n_queries} queries for validation: "
            "early stopping splits by query and needs queries on both sides. Pass "
            "qid, X_val/y_val/qid_val, or set early_stopping=False."
        )
    permuted = rng.permutation(n_queries)
    return np.sort(permuted[n_validation:]), np.sort(permuted[:n_validation])


# Queries are row groups, so the rows of some queries are the rows of those
# groups; the engine knows the same function by its neutral name.
rows_of_queries = rows_of_groups


def columns_like_query_ids(X):
    """Columns of ``X`` that look like query ids: constant over runs of
    consecutive rows, with a value of their own in every run.

    That is the shape of a query id column in rows grouped by query, also
    after a scaler transformed it (any strictly monotone map keeps it), and
    not the shape of a query-level feature, whose values recur in other
    queries.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)

    Returns
    -------
    columns : list
        Names (DataFrame) or indices of such columns, with at least two runs
        of two rows on average; empty for sparse input.
    """
    if sparse.issparse(X):
        return []
    names = list(getattr(X, "columns", []))
    try:
        values = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        return []
    if values.ndim != 2 or values.shape[0] < 4:
        return []
    n_rows = values.shape[0]
    new_run = values[1:] != values[:-1]
    n_runs = new_run.sum(axis=0) + 1
    found = []
    for j in np.flatnonzero((n_runs >= 2) & (2 * n_runs <= n_rows)):
        column = values[:, j]
        if np.isnan(column).any():
            continue
        if np.unique(column).shape[0] == n_runs[j]:
            found.append(names[j] if names else int(j))
    return found


def warn_one_query(caller, n_samples, *, X=None, stacklevel=3):
    """Warn that ``caller`` treats its ``n_samples`` rows as one query.

    Parameters
    ----------
    caller : str
        What got no query ids, e.g. ``"LambdaMARTRanker.fit"``.
    n_samples : int
        Number of rows; nothing is said for fewer than two.
    X : array-like, default=None
        The rows, when the caller takes a DataFrame ``qid`` column: the
        message then says so, and names columns that look like query ids
        (a ``qid`` column that a pipeline step transformed).
    stacklevel : int, default=3
        Passed to :func:`warnings.warn`.
    """
    if n_samples < 2:
        return
    where = "qid= (one query id per row)"
    suspects = ""
    if X is not None:
        where += " or a DataFrame X with a 'qid' column"
        found = columns_like_query_ids(X)
        if found:
            listed = ", ".join(repr(c) for c in found[:5])
            suspects = (
                f" Column{'s' if len(found) > 1 else ''} {listed} of X "
                f"look{'' if len(found) > 1 else 's'} like query ids "
                "(constant within runs of rows, a new value for each run): if a pipeline "
                "step transformed the 'qid' column, wrap that step with "
                "sklearn_ltr.compose.exclude_qid so that the column reaches the ranker."
            )
    warnings.warn(
        f"{caller} got no query ids, so all {n_samples} rows are treated as one query. "
        f"Pass {where}; to treat the rows as one query on purpose, pass "
        f"qid=np.zeros({n_samples}).{suspects}",
        SingleQueryWarning,
        stacklevel=stacklevel,
    )
