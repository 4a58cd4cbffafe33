"""Query-aware DCG metrics: DCG, NDCG and click-based NDCG (CNDCG), as means
over queries and per query.

Inputs, averaging over queries, tie handling and ``no_relevant`` follow the
conventions described in ``_ranking_common.py``.
"""

import numpy as np

from ._checks import (
    warns_without_qid,
    apply_no_relevant,
    check_choice,
    check_label_gain,
    check_no_relevant,
    effective_k,
    label_gains,
)
from ._ranking_common import _PerQuery, _check_exponential_labels, _setup
from ._ranking_kernels import _dcg_per_query

__all__ = [
    "dcg_score",
    "dcg_score_per_query",
    "ndcg_score",
    "ndcg_score_per_query",
    "cndcg_score",
    "cndcg_score_per_query",
]

_GAINS = ("exponential", "linear")


def _gains(y_true, gain, label_gain, *, allow_negative):
    check_choice(gain, "gain", _GAINS)
    if label_gain is not None:
        if gain != "exponential":
            raise ValueError(
                f"gain={gain!r} and label_gain both set the gains; pass only label_gain "
                "(label_gain=range(n) is the linear gain of labels 0 to n - 1)."
            )
        return label_gains(y_true, check_label_gain(label_gain), "y_true")
    if gain == "exponential":
        _check_exponential_labels(
            y_true, "gain='exponential' (2**y - 1)",
            fix="rescale the labels, or use gain='linear' or a label_gain table",
        )
        return np.exp2(y_true) - 1.0
    if not allow_negative and np.any(y_true < 0):
        raise ValueError("y_true contains negative labels; NDCG needs labels >= 0.")
    return y_true


def _dcg_and_ideal(gains, y_score, k, ties, order, offsets):
    n_queries = offsets.shape[0] - 1
    kk = effective_k(k, offsets)
    longest = int(np.max(np.diff(offsets)))
    # One discount per position of the longest query, cutoff or not, so the
    # kernel never depends on k to stay inside the buffer.
    discount = 1.0 / np.log2(np.arange(longest, dtype=np.float64) + 2.0)
    dcg = np.empty(n_queries)
    ideal = np.empty(n_queries)
    _dcg_per_query(
        gains[order], y_score[order], offsets, kk, discount, ties == "average", dcg, ideal
    )
    return dcg, ideal


def _normalized(gains, y_score, k, ties, no_relevant, order, offsets):
    no_relevant = check_no_relevant(no_relevant)
    dcg, ideal = _dcg_and_ideal(gains, y_score, k, ties, order, offsets)
    has_relevant = ideal > 0
    values = np.divide(dcg, ideal, out=np.zeros_like(dcg), where=has_relevant)
    return apply_no_relevant(values, has_relevant, no_relevant)


def _dcg(y_true, y_score, qid, k, gain, ties, label_gain):
    y_true, y_score, k, order, offsets, uq = _setup(y_true, y_score, qid, k, ties)
    gains = _gains(y_true, gain, label_gain, allow_negative=True)
    dcg, _ = _dcg_and_ideal(gains, y_score, k, ties, order, offsets)
    return _PerQuery(uq, dcg, order, offsets)


@warns_without_qid
def dcg_score(
    y_true,
    y_score,
    *,
    qid=None,
    k=10,
    gain="exponential",
    ties="average",
    sample_weight=None,
    label_gain=None,
):
    """Mean Discounted Cumulative Gain at ``k`` over queries.

    ``DCG@k = sum over ranks r <= k of gain(y_r) / log2(r + 1)``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Graded relevance labels, one per row.
    y_score : array-like of shape (n_samples,)
        Predicted scores; higher ranks first. ``+-inf`` is allowed, NaN is not.
    qid : array-like of shape (n_samples,), default=None
        Query id of every row, in any order. None scores all rows as one query.
    k : int or None, default=10
        Only the top ``k`` ranks count. None means all documents.
    gain : {"exponential", "linear"}, default="exponential"
        ``2**y - 1`` or ``y``.
    ties : {"average", "stable"}, default="average"
        "stable" keeps tied documents in input order; "average" returns the
        expectation over random orders of tied documents.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights; a query weighs the mean of its rows' weights.
    label_gain : array-like of shape (n_labels,), default=None
        Gain of each label, LightGBM's ``label_gain``: ``label_gain[i]`` is
        the gain of label ``i``. It replaces ``gain`` (which must then stay
        "exponential"); labels must be integers in ``[0, n_labels)`` and
        gains finite, non-negative and non-decreasing.

    Returns
    -------
    score : float

    Examples
    --------
    One query of three documents, which the scores rank as labels 2, 1, 0:

    >>> from sklearn_ltr.metrics import dcg_score
    >>> y_true, y_score = [2, 0, 1], [0.9, 0.1, 0.5]
    >>> # (2**2 - 1) / log2(2) + (2**1 - 1) / log2(3) + 0 = 3 + 0.6309
    >>> round(dcg_score(y_true, y_score, qid=[1, 1, 1]), 4)
    3.6309
    >>> round(dcg_score(y_true, y_score, qid=[1, 1, 1], gain="linear"), 4)  # 2 + 1 / log2(3)
    2.6309

    With all scores tied, "stable" ranks in input order (labels 2, 0, 1), while
    "average" gives each rank the mean gain (3 + 0 + 1) / 3:

    >>> dcg_score(y_true, [0, 0, 0], qid=[1, 1, 1], ties="stable")  # 3 + 0 + 1 / log2(4)
    3.5
    >>> round(dcg_score(y_true, [0, 0, 0], qid=[1, 1, 1]), 4)  # 4/3 * (1 + 0.6309 + 0.5)
    2.8412
    """
    result = _dcg(y_true, y_score, qid, k, gain, ties, label_gain)
    return result.mean(sample_weight, "dcg_score")


@warns_without_qid
def dcg_score_per_query(
    y_true, y_score, *, qid=None, k=10, gain="exponential", ties="average", label_gain=None
):
    """DCG@k of every query; parameters as in :func:`dcg_score`.

    Returns
    -------
    unique_qids : ndarray of shape (n_queries,)
        Sorted query ids (``[0]`` when ``qid`` is None).
    values : ndarray of shape (n_queries,)

    Examples
    --------
    Rows need not be sorted by query; values come back in sorted ``qid`` order:

    >>> from sklearn_ltr.metrics import dcg_score_per_query
    >>> qids, values = dcg_score_per_query(
    ...     [1, 3, 0, 0, 1, 0], [0.2, 0.9, 0.1, 0.5, 0.8, 0.3],
    ...     qid=["b", "a", "b", "a", "b", "a"], gain="linear")
    >>> # a ranks labels 3, 0, 0: 3 / log2(2); b ranks 1, 1, 0: 1 + 1 / log2(3)
    >>> qids.tolist(), values.round(4).tolist()
    (['a', 'b'], [3.0, 1.6309])
    """
    result = _dcg(y_true, y_score, qid, k, gain, ties, label_gain)
    return result.unique_qids, result.values


def _ndcg(y_true, y_score, qid, k, gain, ties, no_relevant, label_gain):
    y_true, y_score, k, order, offsets, uq = _setup(y_true, y_score, qid, k, ties)
    gains = _gains(y_true, gain, label_gain, allow_negative=False)
    values = _normalized(gains, y_score, k, ties, no_relevant, order, offsets)
    return _PerQuery(uq, values, order, offsets)


@warns_without_qid
def ndcg_score(
    y_true,
    y_score,
    *,
    qid=None,
    k=10,
    gain="exponential",
    ties="average",
    no_relevant=1.0,
    sample_weight=None,
    label_gain=None,
):
    """Mean Normalized DCG at ``k`` over queries.

    NDCG@k of a query is its DCG@k divided by the DCG@k of the labels sorted
    in decreasing order (the ideal DCG).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Non-negative graded relevance labels (for exponential gain, at most
        1023 - ceil(log2(n_samples)), so that sums of gains stay finite;
        with ``label_gain``, integers below its length).
    y_score : array-like of shape (n_samples,)
        Predicted scores. ``+-inf`` is allowed, NaN is not.
    qid : array-like of shape (n_samples,), default=None
        Query id of every row, in any order. None scores all rows as one query.
    k : int or None, default=10
        Cutoff; None means all documents.
    gain : {"exponential", "linear"}, default="exponential"
        ``2**y - 1`` (LightGBM, XGBoost) or ``y`` (scikit-learn, trec_eval).
    ties : {"average", "stable"}, default="average"
        See the module docstring. ``ties="stable", no_relevant=1.0`` equals
        LightGBM's and XGBoost's ``ndcg@k``; ``gain="linear", ties="average",
        no_relevant=0.0`` equals :func:`sklearn.metrics.ndcg_score` per query.
    no_relevant : float or "skip", default=1.0
        Value of a query whose ideal DCG is 0 (every label 0). 1.0 is
        LightGBM's and XGBoost's choice, 0.0 scikit-learn's; "skip" leaves such
        queries out of the mean.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights; a query weighs the mean of its rows' weights.
    label_gain : array-like of shape (n_labels,), default=None
        Gain of each label, LightGBM's ``label_gain``: ``label_gain[i]`` is
        the gain of label ``i``, and the ideal DCG ranks labels by
        decreasing gain. It replaces ``gain`` (which must then stay
        "exponential"). Labels must be integers in ``[0, n_labels)``; gains
        must be finite, non-negative and non-decreasing. With
        ``ties="stable", no_relevant=1.0`` this is LightGBM's ``ndcg@k`` with
        the same ``label_gain``; ``label_gain=[2**i - 1 for i in range(n)]``
        is the default gain on labels below ``n``. A table also scores
        labels too large for the exponential gain.

    Returns
    -------
    score : float

    Raises
    ------
    ValueError
        On malformed input, or if ``no_relevant="skip"`` leaves no query.

    Examples
    --------
    Two queries of three documents. Query 7 is ranked perfectly (NDCG 1);
    query 8's only relevant document comes last, so its NDCG is
    ``(1 / log2(4)) / (1 / log2(2)) = 0.5``:

    >>> from sklearn_ltr.metrics import ndcg_score
    >>> y_true = [2, 0, 1, 0, 1, 0]
    >>> y_score = [0.9, 0.1, 0.5, 0.9, 0.1, 0.5]
    >>> qid = [7, 7, 7, 8, 8, 8]
    >>> ndcg_score(y_true, y_score, qid=qid)
    0.75
    >>> ndcg_score(y_true, y_score, qid=qid, k=2)  # query 8 gains nothing in its top 2
    0.5

    Without ``qid`` all rows would be scored as one query (0.7948 here), and
    a :class:`~sklearn_ltr.exceptions.SingleQueryWarning` says so.

    ``label_gain`` sets the gain of each label. A query ranked as labels 1,
    2, 0 has NDCG ``(1 + 3 / log2(3)) / (3 + 1 / log2(3))`` with the
    default gains 0, 1, 3; with gains 0, 1, 1 swapping labels 1 and 2
    costs nothing:

    >>> round(ndcg_score([2, 1, 0], [0.5, 0.9, 0.1], qid=[1, 1, 1]), 4)
    0.7967
    >>> ndcg_score([2, 1, 0], [0.5, 0.9, 0.1], qid=[1, 1, 1], label_gain=[0, 1, 1])
    1.0
    """
    result = _ndcg(y_true, y_score, qid, k, gain, ties, no_relevant, label_gain)
    return result.mean(sample_weight, "ndcg_score")


@warns_without_qid
def ndcg_score_per_query(
    y_true,
    y_score,
    *,
    qid=None,
    k=10,
    gain="exponential",
    ties="average",
    no_relevant=1.0,
    label_gain=None,
):
    """NDCG@k of every query; parameters as in :func:`ndcg_score`.

    Returns
    -------
    unique_qids : ndarray of shape (n_queries,)
        Sorted query ids (``[0]`` when ``qid`` is None).
    values : ndarray of shape (n_queries,)
        NaN for queries skipped by ``no_relevant="skip"``.

    Examples
    --------
    Query 8 has no relevant document, so ``no_relevant`` decides its value:

    >>> from sklearn_ltr.metrics import ndcg_score_per_query
    >>> y_true = [2, 0, 1, 0, 0, 0]
    >>> y_score = [0.9, 0.1, 0.5, 0.9, 0.1, 0.5]
    >>> qid = [7, 7, 7, 8, 8, 8]
    >>> ndcg_score_per_query(y_true, y_score, qid=qid)  # LightGBM's and XGBoost's 1.0
    (array([7, 8]), array([1., 1.]))
    >>> ndcg_score_per_query(y_true, y_score, qid=qid, no_relevant=0.0)[1]  # scikit-learn's
    array([1., 0.])
    >>> ndcg_score_per_query(y_true, y_score, qid=qid, no_relevant="skip")[1]
    array([ 1., nan])
    """
    result = _ndcg(y_true, y_score, qid, k, gain, ties, no_relevant, label_gain)
    return result.unique_qids, result.values


def _cndcg(y_true, y_score, qid, k, ties, no_relevant):
    y_true, y_score, k, order, offsets, uq = _setup(y_true, y_score, qid, k, ties)
    if np.any(y_true < 0) or np.any(y_true > 1):
        raise ValueError("y_true holds click labels for CNDCG and must lie in [0, 1].")
    gains = np.exp2(4.0 * y_true) - 1.0
    values = _normalized(gains, y_score, k, ties, no_relevant, order, offsets)
    return _PerQuery(uq, values, order, offsets)


@warns_without_qid
def cndcg_score(
    y_true, y_score, *, qid=None, k=10, ties="average", no_relevant=1.0, sample_weight=None
):
    """Mean click-based NDCG (CNDCG@k) over queries.

    Defined in Svore, Volkovs and Burges, *Learning to Rank with Multiple
    Objective Functions* (WWW 2011), eq. 9:
    ``CNDCG@T = (1/N) sum_{t=1..T} (2**(4 c(t)) - 1) / log(1 + t)`` with click
    labels ``c`` in [0, 1] (the factor 4, the largest human label, puts the
    gains on the NDCG scale) and ``N`` the ideal value, so it is NDCG with
    gains ``2**(4c) - 1``. The base of the log cancels in the ratio.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Click labels (for example click-through rates) in [0, 1].
    y_score : array-like of shape (n_samples,)
        Predicted scores.
    qid : array-like of shape (n_samples,), default=None
        Query id of every row. None scores all rows as one query.
    k : int or None, default=10
        The truncation ``T``; None means all documents.
    ties : {"average", "stable"}, default="average"
        Tie handling, as in :func:`ndcg_score`.
    no_relevant : float or "skip", default=1.0
        Value of a query with no clicks at all.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights; a query weighs the mean of its rows' weights.

    Returns
    -------
    score : float

    Examples
    --------
    Click-through rates 0.5, 0, 0.25 give gains ``2**(4c) - 1`` = 3, 0, 1. The
    scores below rank the gains 1, 3, 0, so CNDCG is
    ``(1 + 3 / log2(3)) / (3 + 1 / log2(3)) = 2.8928 / 3.6309``:

    >>> from sklearn_ltr.metrics import cndcg_score
    >>> round(cndcg_score([0.5, 0.0, 0.25], [0.2, 0.1, 0.9], qid=[1, 1, 1]), 4)
    0.7967
    """
    result = _cndcg(y_true, y_score, qid, k, ties, no_relevant)
    return result.mean(sample_weight, "cndcg_score")


@warns_without_qid
def cndcg_score_per_query(y_true, y_score, *, qid=None, k=10, ties="average", no_relevant=1.0):
    """CNDCG@k of every query; parameters as in :func:`cndcg_score`.

    Returns
    -------
    unique_qids : ndarray of shape (n_queries,)
    values : ndarray of shape (n_queries,)

    Examples
    --------
    CNDCG of click rates ``c`` is the NDCG of the labels ``4c``:

    >>> import numpy as np
    >>> from sklearn_ltr.metrics import cndcg_score_per_query, ndcg_score_per_query
    >>> ctr = np.array([0.5, 0.0, 0.25, 0.1, 0.3])
    >>> y_score, qid = [0.2, 0.1, 0.9, 0.4, 0.6], [1, 1, 1, 2, 2]
    >>> qids, values = cndcg_score_per_query(ctr, y_score, qid=qid)
    >>> qids, values.round(4)
    (array([1, 2]), array([0.7967, 1.    ]))
    >>> bool(np.allclose(values, ndcg_score_per_query(4 * ctr, y_score, qid=qid)[1]))
    True
    """
    result = _cndcg(y_true, y_score, qid, k, ties, no_relevant)
    return result.unique_qids, result.values
