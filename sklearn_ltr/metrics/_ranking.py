"""Query-aware ranking metrics on binary relevance (MRR, MAP, precision@k) and
the cascade metric ERR, as means over queries and per query.

MRR, MAP and precision@k count a document as relevant when its label is at
least ``threshold``; ERR uses graded labels. Inputs, averaging over queries,
tie handling and ``no_relevant`` follow the conventions described in
``_ranking_common.py``; the DCG family is in ``_dcg.py``.
"""

import numpy as np

from ._checks import (
    warns_without_qid,
    apply_no_relevant,
    check_no_relevant,
    check_real,
    effective_k,
)
from ._ranking_common import _PerQuery, _check_exponential_labels, _setup
from ._ranking_kernels import (
    _average_precision_per_query,
    _err_per_query,
    _precision_per_query,
    _reciprocal_rank_per_query,
)

__all__ = [
    "mrr_score",
    "mrr_score_per_query",
    "map_score",
    "map_score_per_query",
    "precision_at_k",
    "precision_at_k_per_query",
    "err_score",
    "err_score_per_query",
]


def _binary_metric(
    kernel, y_true, y_score, qid, k, threshold, ties, no_relevant, divide_by_k=False
):
    """Run a kernel on the 0/1 relevance ``y_true >= threshold``."""
    y_true, y_score, k, order, offsets, uq = _setup(y_true, y_score, qid, k, ties)
    threshold = check_real(threshold, "threshold")
    no_relevant = check_no_relevant(no_relevant)
    relevant = (y_true >= threshold).astype(np.int8)
    values = np.empty(offsets.shape[0] - 1)
    kk = effective_k(k, offsets)
    kernel(relevant[order], y_score[order], offsets, kk, ties == "average", values)
    if divide_by_k:
        # Divide by k even for queries shorter than k (trec_eval's P@k); with
        # k=None each query is divided by its own size.
        values /= np.diff(offsets) if k is None else k
    has_relevant = np.add.reduceat(relevant[order], offsets[:-1]) > 0
    return _PerQuery(uq, apply_no_relevant(values, has_relevant, no_relevant), order, offsets)


@warns_without_qid
def mrr_score(
    y_true,
    y_score,
    *,
    qid=None,
    k=None,
    threshold=1,
    ties="average",
    no_relevant=0.0,
    sample_weight=None,
):
    """Mean Reciprocal Rank over queries.

    The reciprocal rank of a query is ``1 / rank`` of its first document with
    ``y_true >= threshold``, or 0 if none is in the top ``k``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance labels.
    y_score : array-like of shape (n_samples,)
        Predicted scores.
    qid : array-like of shape (n_samples,), default=None
        Query id of every row. None scores all rows as one query.
    k : int or None, default=None
        Cutoff; None means all documents.
    threshold : float, default=1
        Labels ``>= threshold`` are relevant.
    ties : {"average", "stable"}, default="average"
        "average" is the exact expectation over random orders of tied
        documents: if the first tied group holding relevant documents starts
        after ``p`` documents and has ``m`` documents, ``r`` relevant, the
        first relevant one is at group position ``j`` with probability
        ``C(m-j, r-1) / C(m, r)``.
    no_relevant : float or "skip", default=0.0
        Value of a query without any relevant document.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights; a query weighs the mean of its rows' weights.

    Returns
    -------
    score : float

    Examples
    --------
    >>> from sklearn_ltr.metrics import mrr_score
    >>> mrr_score([0, 1, 0], [0.9, 0.5, 0.1], qid=[1, 1, 1])  # the relevant document is at rank 2
    0.5

    With all scores tied, "stable" keeps input order (rank 2 again), while
    "average" takes the mean of 1/1, 1/2 and 1/3 over its equally likely ranks:

    >>> mrr_score([0, 1, 0], [0, 0, 0], qid=[1, 1, 1], ties="stable")
    0.5
    >>> round(mrr_score([0, 1, 0], [0, 0, 0], qid=[1, 1, 1]), 4)
    0.6111
    """
    result = _binary_metric(
        _reciprocal_rank_per_query, y_true, y_score, qid, k, threshold, ties, no_relevant
    )
    return result.mean(sample_weight, "mrr_score")


@warns_without_qid
def mrr_score_per_query(
    y_true, y_score, *, qid=None, k=None, threshold=1, ties="average", no_relevant=0.0
):
    """Reciprocal rank of every query; parameters as in :func:`mrr_score`.

    Returns
    -------
    unique_qids : ndarray of shape (n_queries,)
    values : ndarray of shape (n_queries,)

    Examples
    --------
    Graded labels: ``threshold`` sets which grades count as relevant.

    >>> from sklearn_ltr.metrics import mrr_score_per_query
    >>> y_true, y_score = [0, 2, 1, 1, 0, 0], [3, 2, 1, 3, 2, 1]
    >>> qid = [1, 1, 1, 2, 2, 2]
    >>> mrr_score_per_query(y_true, y_score, qid=qid)  # labels >= 1: ranks 2 and 1
    (array([1, 2]), array([0.5, 1. ]))
    >>> # labels >= 2: query 2 has none, and "skip" marks it NaN instead of 0
    >>> mrr_score_per_query(y_true, y_score, qid=qid, threshold=2, no_relevant="skip")
    (array([1, 2]), array([0.5, nan]))
    """
    result = _binary_metric(
        _reciprocal_rank_per_query, y_true, y_score, qid, k, threshold, ties, no_relevant
    )
    return result.unique_qids, result.values


@warns_without_qid
def map_score(
    y_true,
    y_score,
    *,
    qid=None,
    k=None,
    threshold=1,
    ties="average",
    no_relevant=0.0,
    sample_weight=None,
):
    """Mean Average Precision over queries.

    Average precision of a query is the sum of precision@r over the ranks
    ``r <= k`` that hold a relevant document (``y_true >= threshold``),
    divided by the number of relevant documents ``R`` (by ``min(R, k)`` when
    ``k`` is given, so a perfect top-k list scores 1).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance labels.
    y_score : array-like of shape (n_samples,)
        Predicted scores.
    qid : array-like of shape (n_samples,), default=None
        Query id of every row. None scores all rows as one query.
    k : int or None, default=None
        Cutoff; None means all documents.
    threshold : float, default=1
        Labels ``>= threshold`` are relevant.
    ties : {"average", "stable"}, default="average"
        "average" is the exact expectation over random orders of tied
        documents (a closed form per tied group).
    no_relevant : float or "skip", default=0.0
        Value of a query without any relevant document.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights; a query weighs the mean of its rows' weights.

    Returns
    -------
    score : float

    Examples
    --------
    The relevant documents are at ranks 1 and 3, so the average precision is
    ``(1/1 + 2/3) / 2``:

    >>> from sklearn_ltr.metrics import map_score
    >>> y_true, y_score = [1, 0, 1, 0], [0.9, 0.8, 0.7, 0.6]
    >>> round(map_score(y_true, y_score, qid=[1, 1, 1, 1]), 4)
    0.8333
    >>> map_score(y_true, y_score, qid=[1, 1, 1, 1], k=1)  # a perfect top 1: (1/1) / min(2, 1)
    1.0
    """
    result = _binary_metric(
        _average_precision_per_query, y_true, y_score, qid, k, threshold, ties, no_relevant
    )
    return result.mean(sample_weight, "map_score")


@warns_without_qid
def map_score_per_query(
    y_true, y_score, *, qid=None, k=None, threshold=1, ties="average", no_relevant=0.0
):
    """Average precision of every query; parameters as in :func:`map_score`.

    Returns
    -------
    unique_qids : ndarray of shape (n_queries,)
    values : ndarray of shape (n_queries,)

    Examples
    --------
    The rows of the two queries are interleaved:

    >>> from sklearn_ltr.metrics import map_score_per_query
    >>> y_true = [2, 0, 1, 0, 2, 1]
    >>> y_score = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    >>> qid = [1, 2, 1, 2, 1, 2]
    >>> # labels >= 1: query 1 is all relevant (1); query 2's one relevant is at rank 3 (1/3)
    >>> map_score_per_query(y_true, y_score, qid=qid)[1].round(4)
    array([1.    , 0.3333])
    >>> # labels >= 2: query 1 has them at ranks 1 and 3; query 2 has none (no_relevant)
    >>> map_score_per_query(y_true, y_score, qid=qid, threshold=2)[1].round(4)
    array([0.8333, 0.    ])
    """
    result = _binary_metric(
        _average_precision_per_query, y_true, y_score, qid, k, threshold, ties, no_relevant
    )
    return result.unique_qids, result.values


def _precision(y_true, y_score, qid, k, threshold, ties, no_relevant):
    return _binary_metric(
        _precision_per_query, y_true, y_score, qid, k, threshold, ties, no_relevant, True
    )


@warns_without_qid
def precision_at_k(
    y_true,
    y_score,
    *,
    qid=None,
    k=10,
    threshold=1,
    ties="average",
    no_relevant=0.0,
    sample_weight=None,
):
    """Mean precision at ``k`` over queries.

    Precision@k of a query is the number of relevant documents
    (``y_true >= threshold``) in its top ``k`` divided by ``k``, also when the
    query has fewer than ``k`` documents.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance labels.
    y_score : array-like of shape (n_samples,)
        Predicted scores.
    qid : array-like of shape (n_samples,), default=None
        Query id of every row. None scores all rows as one query.
    k : int or None, default=10
        Cutoff; None divides by the query's size.
    threshold : float, default=1
        Labels ``>= threshold`` are relevant.
    ties : {"average", "stable"}, default="average"
        With "average", each rank of a tied group that straddles the cutoff
        counts the group's fraction of relevant documents.
    no_relevant : float or "skip", default=0.0
        Value of a query without any relevant document (its precision is 0
        anyway; use "skip" to leave it out).
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights; a query weighs the mean of its rows' weights.

    Returns
    -------
    score : float

    Examples
    --------
    >>> from sklearn_ltr.metrics import precision_at_k
    >>> precision_at_k([1, 0, 1], [0.9, 0.8, 0.7], qid=[1, 1, 1], k=2)  # 1 relevant in the top 2
    0.5
    >>> precision_at_k([1, 1], [0.9, 0.8], qid=[1, 1], k=5)  # a short query is still divided by k
    0.4
    >>> precision_at_k([1, 1], [0.9, 0.8], qid=[1, 1], k=None)  # k=None divides by its size
    1.0
    """
    result = _precision(y_true, y_score, qid, k, threshold, ties, no_relevant)
    return result.mean(sample_weight, "precision_at_k")


@warns_without_qid
def precision_at_k_per_query(
    y_true, y_score, *, qid=None, k=10, threshold=1, ties="average", no_relevant=0.0
):
    """Precision@k of every query; parameters as in :func:`precision_at_k`.

    Returns
    -------
    unique_qids : ndarray of shape (n_queries,)
    values : ndarray of shape (n_queries,)

    Examples
    --------
    In query 1, rank 2 falls inside a tie of three documents, one relevant.
    "average" counts 1/3 of a relevant document there, "stable" the first
    tied row (not relevant):

    >>> from sklearn_ltr.metrics import precision_at_k_per_query
    >>> y_true = [1, 0, 0, 1, 1, 0]
    >>> y_score = [0.9, 0.5, 0.5, 0.5, 0.2, 0.1]
    >>> qid = [1, 1, 1, 1, 2, 2]
    >>> precision_at_k_per_query(y_true, y_score, qid=qid, k=2)[1].round(4)  # (1 + 1/3) / 2
    array([0.6667, 0.5   ])
    >>> precision_at_k_per_query(y_true, y_score, qid=qid, k=2, ties="stable")[1]
    array([0.5, 0.5])
    """
    result = _precision(y_true, y_score, qid, k, threshold, ties, no_relevant)
    return result.unique_qids, result.values


def _err(y_true, y_score, qid, k, max_grade, ties, no_relevant):
    y_true, y_score, k, order, offsets, uq = _setup(y_true, y_score, qid, k, ties)
    no_relevant = check_no_relevant(no_relevant)
    _check_exponential_labels(y_true, "err_score (2**y - 1)")
    if max_grade is None:
        max_grade = float(np.max(y_true))
    else:
        max_grade = check_real(max_grade, "max_grade")
        if max_grade >= 1024 or max_grade < 0:
            raise ValueError(f"max_grade must lie in [0, 1024); got {max_grade}.")
        if np.max(y_true) > max_grade:
            raise ValueError(
                f"y_true contains labels above max_grade={max_grade}; raise max_grade."
            )
    stop = (np.exp2(y_true) - 1.0) / np.exp2(max_grade)
    values = np.empty(offsets.shape[0] - 1)
    kk = effective_k(k, offsets)
    _err_per_query(stop[order], y_score[order], offsets, kk, ties == "average", values)
    has_relevant = np.add.reduceat(stop[order], offsets[:-1]) > 0
    return _PerQuery(uq, apply_no_relevant(values, has_relevant, no_relevant), order, offsets)


@warns_without_qid
def err_score(
    y_true,
    y_score,
    *,
    qid=None,
    k=10,
    max_grade=None,
    ties="average",
    no_relevant=0.0,
    sample_weight=None,
):
    """Mean Expected Reciprocal Rank at ``k`` over queries.

    From Chapelle, Metzler, Zhang and Grinspan, *Expected Reciprocal Rank for
    Graded Relevance* (CIKM 2009): a user scans down the list and stops at
    rank ``r`` with probability ``R_r = (2**y_r - 1) / 2**max_grade``;
    ``ERR@k = sum_{r <= k} (1/r) R_r prod_{i < r} (1 - R_i)``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Non-negative graded labels (below 1024).
    y_score : array-like of shape (n_samples,)
        Predicted scores.
    qid : array-like of shape (n_samples,), default=None
        Query id of every row. None scores all rows as one query.
    k : int or None, default=10
        Cutoff; None means all documents.
    max_grade : float, default=None
        The largest possible grade. None takes the largest label of the whole
        input, so a query's value then depends on the other queries passed
        with it: set it (for example 4 for MSLR-WEB and Yahoo, 2 for MQ2008)
        when comparing numbers across calls.
    ties : {"average", "stable"}, default="average"
        "average" is the exact expectation over random orders of tied
        documents, computed per tied group with elementary symmetric
        polynomials of ``1 - R`` (quadratic in the group size, not factorial).
    no_relevant : float or "skip", default=0.0
        Value of a query whose labels are all 0 (its ERR is 0 anyway).
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights; a query weighs the mean of its rows' weights.

    Returns
    -------
    score : float

    Examples
    --------
    With ``max_grade=2``, labels 2, 1, 0 stop the user with probabilities
    ``R`` = 3/4, 1/4, 0:

    >>> from sklearn_ltr.metrics import err_score
    >>> # ranked 2, 1, 0: 3/4 + (1/2)(1/4)(1 - 3/4)
    >>> err_score([2, 1, 0], [0.9, 0.5, 0.1], qid=[1, 1, 1], max_grade=2)
    0.78125
    >>> # ranked 0, 1, 2: 0 + (1/2)(1/4) + (1/3)(3/4)(1 - 1/4)
    >>> err_score([2, 1, 0], [0.1, 0.5, 0.9], qid=[1, 1, 1], max_grade=2)
    0.3125
    """
    result = _err(y_true, y_score, qid, k, max_grade, ties, no_relevant)
    return result.mean(sample_weight, "err_score")


@warns_without_qid
def err_score_per_query(
    y_true, y_score, *, qid=None, k=10, max_grade=None, ties="average", no_relevant=0.0
):
    """ERR@k of every query; parameters as in :func:`err_score`.

    Returns
    -------
    unique_qids : ndarray of shape (n_queries,)
    values : ndarray of shape (n_queries,)

    Examples
    --------
    With ``max_grade=None`` the largest label passed sets the stop
    probabilities, so the same query scores differently in different calls:

    >>> from sklearn_ltr.metrics import err_score_per_query
    >>> y_true, y_score = [1, 0, 0], [0.9, 0.5, 0.1]
    >>> err_score_per_query(y_true, y_score, qid=[1, 1, 1])  # max_grade=1: R = (2 - 1) / 2
    (array([1]), array([0.5]))
    >>> err_score_per_query(y_true, y_score, qid=[1, 1, 1], max_grade=2)  # R = (2 - 1) / 4
    (array([1]), array([0.25]))
    """
    result = _err(y_true, y_score, qid, k, max_grade, ties, no_relevant)
    return result.unique_qids, result.values
