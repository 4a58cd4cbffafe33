"""Conversions between the package's per-row ``qid`` and other layouts.

LightGBM describes queries by the sizes of contiguous row blocks (``group``),
XGBoost wants rows sorted by ``qid``, and the no-routing path of this package
carries ``qid`` as a DataFrame column. These helpers convert between them and
refuse inputs that would silently regroup rows.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import _safe_indexing

from .._utils.queries import check_qid, group_queries

__all__ = ["group_sizes", "qid_from_group_sizes", "sort_by_qid", "to_frame"]


def _n_rows(X, name="X"):
    if hasattr(X, "shape") and len(X.shape) >= 1:
        return X.shape[0]
    try:
        return len(X)
    except TypeError:
        raise ValueError(f"{name} must be array-like with one row per sample.") from None


def group_sizes(qid):
    """Sizes of the contiguous query blocks, in row order (LightGBM's ``group``).

    Parameters
    ----------
    qid : array-like of shape (n_samples,)
        Query id of each row. The rows of a query must be contiguous; they
        need not be sorted.

    Returns
    -------
    sizes : ndarray of shape (n_queries,), dtype int64
        Number of rows of each query, in the order the queries appear.

    Raises
    ------
    ValueError
        If a query id appears in two separate blocks. Sizes would then describe
        different queries than ``qid`` does; sort the rows first with
        :func:`sort_by_qid`.

    Examples
    --------
    >>> from sklearn_ltr.datasets import group_sizes
    >>> group_sizes([7, 7, 7, 3, 3, 9])
    array([3, 2, 1])
    """
    if hasattr(qid, "to_numpy"):
        qid = qid.to_numpy()
    qid = np.asarray(qid)
    qid = check_qid(qid, qid.shape[0] if qid.ndim else 1)
    n_samples = qid.shape[0]
    if n_samples == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.concatenate(([0], np.flatnonzero(qid[1:] != qid[:-1]) + 1))
    sizes = np.diff(np.append(starts, n_samples)).astype(np.int64)
    block_ids = qid[starts]
    try:
        unique_ids, counts = np.unique(block_ids, return_counts=True)
    except TypeError as exc:
        raise ValueError(f"qid values must be mutually comparable: {exc}") from None
    if unique_ids.shape[0] != block_ids.shape[0]:
        repeated = unique_ids[counts > 1][0]
        raise ValueError(
            f"qid is not contiguous: query {repeated!r} appears in more than one "
            "block of rows, so group sizes cannot describe it. Sort the rows by query "
            "first, e.g. X, y, qid = sort_by_qid(X, y, qid)."
        )
    return sizes


def qid_from_group_sizes(sizes):
    """Per-row query ids (``0`` to ``n_queries - 1``) from LightGBM-style group sizes.

    Parameters
    ----------
    sizes : array-like of shape (n_queries,)
        Number of rows of each query, in row order. Positive integers
        (integral floats, as read by ``np.loadtxt``, are accepted).

    Returns
    -------
    qid : ndarray of shape (sum(sizes),), dtype int64
        ``q`` repeated ``sizes[q]`` times.

    Raises
    ------
    ValueError
        If ``sizes`` is not 1-D or holds values that are not positive integers.

    Examples
    --------
    >>> from sklearn_ltr.datasets import qid_from_group_sizes
    >>> qid_from_group_sizes([3, 2, 1])
    array([0, 0, 0, 1, 1, 2])
    """
    sizes = np.asarray(sizes)
    if sizes.ndim == 0:
        sizes = sizes.reshape(1)
    if sizes.ndim != 1:
        raise ValueError(
            f"sizes must be a 1-D array of query sizes; got shape {sizes.shape}."
        )
    if sizes.dtype.kind not in "iuf":
        raise ValueError(f"sizes must be numeric query sizes; got dtype {sizes.dtype}.")
    if sizes.dtype.kind == "f":
        if not np.all(np.isfinite(sizes)) or np.any(sizes != np.round(sizes)):
            raise ValueError("sizes must hold whole numbers of rows per query.")
    if sizes.size and sizes.min() < 1:
        raise ValueError(
            f"sizes must be positive (every query has at least one row); got a size of "
            f"{sizes.min()!r}."
        )
    sizes = sizes.astype(np.int64)
    return np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)


def sort_by_qid(X, y, qid, *others):
    """Stably sort rows by query id (the layout XGBoost and LightGBM need).

    Rows of one query keep their relative order, so ties and file order are
    preserved.

    Parameters
    ----------
    X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
        Features; sparse matrices and DataFrames are indexed by row.
    y : array-like of shape (n_samples,) or None
        Labels.
    qid : array-like of shape (n_samples,)
        Query id of each row.
    *others : array-like of shape (n_samples, ...) or None
        More per-row arrays (sample weights, document ids, ...).

    Returns
    -------
    X_sorted, y_sorted, qid_sorted, ``*others_sorted``
        Row-reordered copies, in the same order as the arguments; ``None``
        stays ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ltr.datasets import sort_by_qid
    >>> X = np.array([[0.], [1.], [2.], [3.]])
    >>> Xs, ys, qs = sort_by_qid(X, [1, 2, 3, 4], [5, 2, 5, 2])
    >>> Xs.ravel(), ys, qs
    (array([1., 3., 0., 2.]), array([2, 4, 1, 3]), array([2, 2, 5, 5]))
    """
    n_samples = _n_rows(X)
    qid = check_qid(qid, n_samples)
    order, _, _ = group_queries(qid)
    out = []
    for name, arr in [("X", X), ("y", y), ("qid", qid)] + [
        (f"others[{i}]", a) for i, a in enumerate(others)
    ]:
        if arr is None:
            out.append(None)
            continue
        if _n_rows(arr, name) != n_samples:
            raise ValueError(
                f"{name} has {_n_rows(arr, name)} rows but qid has {n_samples}; all "
                "arrays must have one entry per row."
            )
        if sp.issparse(arr):
            arr = arr.tocsr()
        elif isinstance(arr, (list, tuple)):
            arr = np.asarray(arr)
        out.append(_safe_indexing(arr, order))
    return tuple(out)


def to_frame(X, qid, feature_names=None):
    """A pandas DataFrame of the features with a ``"qid"`` column added last.

    This is the input format for the no-routing usage: rankers and scorers
    find the ``qid`` column, and :func:`sklearn_ltr.compose.exclude_qid` keeps
    transformers away from it.

    Parameters
    ----------
    X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
        Features. A sparse matrix is densified (zeros become explicit),
        so mind the memory for large sparse data.
    qid : array-like of shape (n_samples,)
        Query id of each row.
    feature_names : list of str of length n_features, default=None
        Column names. Default: the DataFrame's own columns, else
        ``"f0", "f1", ...``.

    Returns
    -------
    frame : pandas.DataFrame of shape (n_samples, n_features + 1)
        The features followed by the ``"qid"`` column.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ltr.datasets import to_frame
    >>> to_frame(np.array([[1.0, 2.0], [3.0, 4.0]]), qid=[7, 7])
        f0   f1  qid
    0  1.0  2.0    7
    1  3.0  4.0    7
    """
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "to_frame requires pandas; install it with `pip install pandas`."
        ) from None
    if isinstance(X, pd.DataFrame):
        columns = list(X.columns)
        index = X.index
        values = X
    else:
        if sp.issparse(X):
            X = X.toarray()
        values = np.asarray(X)
        if values.ndim != 2:
            raise ValueError(f"X must be 2-D; got an array of shape {values.shape}.")
        columns = [f"f{j}" for j in range(values.shape[1])]
        index = None
    n_samples, n_features = values.shape
    if feature_names is not None:
        feature_names = [str(name) for name in feature_names]
        if len(feature_names) != n_features:
            raise ValueError(
                f"feature_names has {len(feature_names)} names but X has {n_features} "
                "columns."
            )
        columns = feature_names
    if "qid" in columns:
        raise ValueError(
            "X already has a feature named 'qid'; rename it, since to_frame adds the "
            "query ids under that name."
        )
    qid = check_qid(qid, n_samples)
    if isinstance(values, pd.DataFrame):
        frame = values.copy()
        frame.columns = columns
    else:
        frame = pd.DataFrame(values, columns=columns, index=index)
    frame["qid"] = qid if index is None else pd.Series(qid, index=index)
    return frame
