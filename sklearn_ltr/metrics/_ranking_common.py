"""Shared plumbing of the query-aware ranking metrics.

All metrics take one value per row (``y_true``, ``y_score``) and a per-row
query id ``qid``; rows need not be sorted or contiguous, and ``qid=None``
scores all rows as one query. Each metric is computed per query, then averaged
over queries (weighted by the mean row weight of each query when
``sample_weight`` is given). The ``*_per_query`` variants return
``(unique_qids, values)`` for paired significance tests.

Conventions (see the package design, section 5):

* Ranks are 1-based; the DCG discount of rank ``r`` is ``1 / log2(r + 1)``.
* ``ties="stable"`` sorts by descending score and keeps tied documents in
  input order, which reproduces LightGBM's and XGBoost's ``ndcg@k``.
  ``ties="average"`` (default) returns the exact expected metric when every
  group of tied scores is put in a uniformly random order, so a constant
  predictor cannot score well because the file happens to be sorted by label.
  For DCG this is scikit-learn's tie-averaged DCG.
* A query without relevant documents (ideal DCG 0, or no label >=
  ``threshold``) gets ``no_relevant``: a number, or ``"skip"`` to leave it out
  of the mean (NaN in the per-query values).

This module holds what the metric modules (``_dcg.py`` for DCG, NDCG and
CNDCG; ``_ranking.py`` for MRR, MAP, precision@k and ERR) share: the checked
inputs grouped by query (``_setup``), the per-query values and their weighted
mean (``_PerQuery``), and the overflow check of exponential gains.
"""

import numpy as np

from ._checks import (
    check_choice,
    check_inputs,
    check_k,
    check_sample_weight,
    group_rows,
    max_exponential_label,
    query_weights,
    weighted_mean,
)

_TIES = ("average", "stable")


class _PerQuery:
    """Per-query values plus the grouping needed to weight them."""

    def __init__(self, unique_qids, values, order, offsets):
        self.unique_qids = unique_qids
        self.values = values
        self.order = order
        self.offsets = offsets

    def mean(self, sample_weight, metric):
        sample_weight = check_sample_weight(sample_weight, self.order.shape[0])
        weights = query_weights(sample_weight, self.order, self.offsets)
        return weighted_mean(self.values, weights, metric)


def _setup(y_true, y_score, qid, k, ties):
    y_true, y_score, qid = check_inputs(y_true, y_score, qid)
    k = check_k(k)
    check_choice(ties, "ties", _TIES)
    order, offsets, unique_qids = group_rows(qid, y_true.shape[0])
    return y_true, y_score, k, order, offsets, unique_qids


def _check_exponential_labels(y_true, what, fix="rescale the labels or use gain='linear'"):
    if np.any(y_true < 0):
        raise ValueError(f"y_true contains negative labels; {what} needs labels >= 0.")
    limit = max_exponential_label(y_true.shape[0])
    if np.max(y_true) > limit:
        raise ValueError(
            f"y_true contains a label of {np.max(y_true):g}; over {y_true.shape[0]} rows, "
            f"sums of gains 2**y - 1 overflow float64 for labels above {limit}, so {what} "
            f"cannot use them ({fix})."
        )
