"""Calibration metrics of ranking scores read as probabilities, per query.

Both follow Bai et al., *Regression Compatible Listwise Objectives for
Calibrated Ranking with Binary Relevance* (CIKM 2023): LogLoss (eq. 24) over
all rows, and the Expected Calibration Error with equal-count bins inside each
query (eq. 25). Labels are binary or in [0, 1]; predictions are probabilities
in [0, 1].
"""

import numpy as np

from ._checks import (
    warns_without_qid,
    check_inputs,
    check_sample_weight,
    group_rows,
    query_weights,
    weighted_mean,
)
from ._ranking_kernels import _ece_per_query

__all__ = [
    "query_log_loss",
    "query_log_loss_per_query",
    "query_ece",
    "query_ece_per_query",
]


def _check_probabilities(y_true, y_prob, qid):
    y_true, y_prob, qid = check_inputs(y_true, y_prob, qid, score_name="y_prob")
    if np.any(y_true < 0) or np.any(y_true > 1):
        raise ValueError("y_true must be binary or lie in [0, 1] for calibration metrics.")
    if np.any(y_prob < 0) or np.any(y_prob > 1):
        raise ValueError(
            "y_prob must hold probabilities in [0, 1] (apply a sigmoid or use "
            "predict_proba first)."
        )
    order, offsets, unique_qids = group_rows(qid, y_true.shape[0])
    return y_true, y_prob, order, offsets, unique_qids


def _row_log_loss(y_true, y_prob):
    # Clip to the float64 resolution, as scikit-learn's log_loss does, so a
    # confident wrong prediction costs ~36 nats instead of infinity.
    eps = np.finfo(np.float64).eps
    p = np.clip(y_prob, eps, 1.0 - eps)
    return -(y_true * np.log(p) + (1.0 - y_true) * np.log1p(-p))


@warns_without_qid
def query_log_loss(y_true, y_prob, *, qid=None, sample_weight=None):
    """Logistic loss over all rows (Bai et al. 2023, eq. 24).

    ``LogLoss = -(1/N) sum_i y_i log p_i + (1 - y_i) log(1 - p_i)`` over all
    ``N`` rows (weighted by ``sample_weight``), so every document counts the
    same whatever the size of its query; ``qid`` is validated and only
    matters for :func:`query_log_loss_per_query`. Probabilities are clipped to
    ``[eps, 1 - eps]`` with the float64 machine epsilon.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels, or soft labels in [0, 1].
    y_prob : array-like of shape (n_samples,)
        Predicted probabilities in [0, 1].
    qid : array-like of shape (n_samples,), default=None
        Query id of every row. None means one query.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights.

    Returns
    -------
    loss : float

    Examples
    --------
    >>> from sklearn_ltr.metrics import query_log_loss
    >>> # -(log(0.8) + log(1 - 0.4)) / 2 = (0.2231 + 0.5108) / 2
    >>> round(query_log_loss([1, 0], [0.8, 0.4], qid=[1, 1]), 4)
    0.367

    Every row counts the same, so ``qid`` does not change the value:

    >>> round(query_log_loss([1, 0, 0], [0.8, 0.4, 0.5], qid=[1, 1, 2]), 4)
    0.4757
    """
    y_true, y_prob, _, _, _ = _check_probabilities(y_true, y_prob, qid)
    sample_weight = check_sample_weight(sample_weight, y_true.shape[0])
    losses = _row_log_loss(y_true, y_prob)
    if sample_weight is None:
        return float(np.mean(losses))
    if sample_weight.sum() <= 0:
        raise ValueError("sample_weight sums to zero, so the weighted mean is undefined.")
    return float(np.average(losses, weights=sample_weight))


@warns_without_qid
def query_log_loss_per_query(y_true, y_prob, *, qid=None, sample_weight=None):
    """Mean logistic loss of every query's rows.

    Parameters are as in :func:`query_log_loss`. A query whose row weights
    are all zero gets NaN.

    Returns
    -------
    unique_qids : ndarray of shape (n_queries,)
    values : ndarray of shape (n_queries,)

    Examples
    --------
    >>> from sklearn_ltr.metrics import query_log_loss_per_query
    >>> y_true, y_prob = [1, 0, 0, 1, 0], [0.8, 0.4, 0.5, 0.5, 0.5]
    >>> qids, values = query_log_loss_per_query(y_true, y_prob, qid=[1, 1, 2, 2, 2])
    >>> # query 1: (0.2231 + 0.5108) / 2; query 2 predicts 0.5 everywhere: log(2)
    >>> qids, values.round(4).tolist()
    (array([1, 2]), [0.367, 0.6931])
    """
    y_true, y_prob, order, offsets, unique_qids = _check_probabilities(y_true, y_prob, qid)
    sample_weight = check_sample_weight(sample_weight, y_true.shape[0])
    losses = _row_log_loss(y_true, y_prob)[order]
    if sample_weight is None:
        return unique_qids, np.add.reduceat(losses, offsets[:-1]) / np.diff(offsets)
    w = sample_weight[order]
    totals = np.add.reduceat(w * losses, offsets[:-1])
    weights = np.add.reduceat(w, offsets[:-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return unique_qids, np.where(weights > 0, totals / weights, np.nan)


def _ece(y_true, y_prob, qid, n_bins):
    if (
        isinstance(n_bins, (bool, np.bool_))
        or not isinstance(n_bins, (int, np.integer))
        or n_bins < 1
    ):
        raise ValueError(f"n_bins must be a positive integer; got {n_bins!r}.")
    y_true, y_prob, order, offsets, unique_qids = _check_probabilities(y_true, y_prob, qid)
    values = np.empty(offsets.shape[0] - 1)
    _ece_per_query(y_true[order], y_prob[order], offsets, int(n_bins), values)
    return unique_qids, values, order, offsets


@warns_without_qid
def query_ece(y_true, y_prob, *, qid=None, n_bins=10, sample_weight=None):
    """Expected Calibration Error with per-query equal-count bins.

    Bai et al. 2023, eq. 25:
    ``ECE = (1/|Q|) sum_q sum_m (|B_m| / |D_q|) |mean_{B_m} y - mean_{B_m} p|``,
    where the documents ``D_q`` of each query are sorted by ``y_prob``
    (ascending, ties in input order) and cut into ``n_bins`` bins of equal
    count (sizes as ``numpy.array_split``: the first ``|D_q| % n_bins`` bins
    hold one more document; a query with fewer documents than bins leaves the
    rest empty, and a one-document query scores ``|y - p|``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels, or soft labels in [0, 1].
    y_prob : array-like of shape (n_samples,)
        Predicted probabilities in [0, 1].
    qid : array-like of shape (n_samples,), default=None
        Query id of every row. None means one query.
    n_bins : int, default=10
        Bins per query (the paper uses 10).
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights. They weight queries in the mean over queries (a query
        weighs the mean of its rows' weights); inside a query, eq. 25 is
        unweighted.

    Returns
    -------
    ece : float

    Examples
    --------
    One query of four documents in two bins of two: the low bin has mean label
    0 and mean probability 0.2, the high bin 1 and 0.7, so
    ``ECE = (2/4) * 0.2 + (2/4) * 0.3``:

    >>> from sklearn_ltr.metrics import query_ece
    >>> round(query_ece([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.8], qid=[1, 1, 1, 1], n_bins=2), 4)
    0.25
    """
    _, values, order, offsets = _ece(y_true, y_prob, qid, n_bins)
    sample_weight = check_sample_weight(sample_weight, order.shape[0])
    weights = query_weights(sample_weight, order, offsets)
    return weighted_mean(values, weights, "query_ece")


@warns_without_qid
def query_ece_per_query(y_true, y_prob, *, qid=None, n_bins=10):
    """ECE of every query; parameters as in :func:`query_ece`.

    Returns
    -------
    unique_qids : ndarray of shape (n_queries,)
    values : ndarray of shape (n_queries,)

    Examples
    --------
    Bins are cut inside each query. With three documents and two bins, the
    bins hold the two lowest probabilities and the highest one:

    >>> from sklearn_ltr.metrics import query_ece_per_query
    >>> y_true = [0, 1, 1, 0, 0, 1]
    >>> y_prob = [0.2, 0.6, 0.9, 0.3, 0.1, 0.5]
    >>> qids, values = query_ece_per_query(y_true, y_prob, qid=[1, 1, 1, 2, 2, 2], n_bins=2)
    >>> # query 1: (2/3)|0.5 - 0.4| + (1/3)|1 - 0.9|; query 2: (2/3)|0 - 0.2| + (1/3)|1 - 0.5|
    >>> qids, values.round(4).tolist()
    (array([1, 2]), [0.1, 0.3])
    """
    unique_qids, values, _, _ = _ece(y_true, y_prob, qid, n_bins)
    return unique_qids, values
