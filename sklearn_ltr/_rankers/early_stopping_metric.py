"""What early stopping watches: the rankers' ``scoring`` parameter.

Boosting scores the model after every tree on the validation rows and on a
sample of training queries (``validation_score_``, ``train_score_``). It
keeps the raw scores of those rows up to date tree by tree, so a metric is
computed from them and the query offsets of the rows, without predicting
again: :class:`GroupedMetric` does that with a metric of
:mod:`sklearn_ltr.metrics`, :class:`GroupedScorer` with a
:class:`~sklearn_ltr.metrics.RankingScorer`, which it hands a stand-in
model whose ``predict`` returns those scores.
"""

import re

import numpy as np
from sklearn.utils._param_validation import InvalidParameterError

from ..metrics import err_score, map_score, mrr_score, ndcg_score
from ..metrics._scorer import RankingScorer

__all__ = ["GroupedMetric", "GroupedScorer", "check_scoring", "scoring_metric"]

# The cutoff validation_ndcg_k has by default; any other value together with
# an explicit scoring would be a second, contradicting choice of metric.
_DEFAULT_NDCG_K = 10

_METRICS = {"ndcg": ndcg_score, "map": map_score, "mrr": mrr_score, "err": err_score}
_NAME = re.compile(r"(ndcg|map|mrr|err)(?:@([1-9][0-9]*))?", re.IGNORECASE)
_VALID_FORMS = (
    "None (NDCG@validation_ndcg_k); 'ndcg@k', 'map@k', 'mrr@k' or 'err@k' for a cutoff "
    "k >= 1, or 'ndcg', 'map', 'mrr', 'err' for none; or a ranking scorer of "
    "sklearn_ltr.metrics such as ndcg_scorer(10) or make_ranking_scorer(err_score, k=10, "
    "max_grade=4)"
)


def check_scoring(estimator):
    """Refuse a ``scoring`` that early stopping cannot use, or that
    contradicts ``validation_ndcg_k``.

    Raises
    ------
    InvalidParameterError
        Naming the valid forms, or how to settle the contradiction.
    """
    scoring = estimator.scoring
    owner = type(estimator).__name__
    if scoring is None:
        return
    if isinstance(scoring, str):
        if _NAME.fullmatch(scoring) is None:
            raise InvalidParameterError(
                f"The 'scoring' parameter of {owner} must be {_VALID_FORMS}. Got {scoring!r}."
            )
    elif isinstance(scoring, RankingScorer):
        if scoring._response_method != "predict":
            raise InvalidParameterError(
                f"The 'scoring' parameter of {owner} got {scoring!r}, which scores "
                f"{scoring._response_method}; early stopping scores the raw scores of the "
                "model being boosted (there are no probabilities before the fit ends), so "
                "make the scorer with response_method='predict'."
            )
    else:
        raise InvalidParameterError(
            f"The 'scoring' parameter of {owner} must be {_VALID_FORMS}. Got {scoring!r}; "
            "a metric that takes qid becomes a ranking scorer with "
            "sklearn_ltr.metrics.make_ranking_scorer (scikit-learn's scorers do not know "
            "about queries)."
        )
    if estimator.validation_ndcg_k != _DEFAULT_NDCG_K:
        fix = f"'ndcg@{estimator.validation_ndcg_k}'"
        raise InvalidParameterError(
            f"{owner} got scoring={scoring!r} and validation_ndcg_k="
            f"{estimator.validation_ndcg_k}, but validation_ndcg_k only sets the cutoff of "
            f"the default metric (scoring=None). Leave validation_ndcg_k at "
            f"{_DEFAULT_NDCG_K}, or set scoring={fix} for NDCG at that cutoff."
        )


def scoring_metric(scoring, validation_ndcg_k, largest_label=None, label_gain=None):
    """The metric that ``scoring`` names, as boosting calls it.

    Parameters
    ----------
    scoring : str, RankingScorer or None
        A checked ``scoring`` (:func:`check_scoring`).
    validation_ndcg_k : int
        The NDCG cutoff of ``scoring=None``.
    largest_label : float, default=None
        The largest label of the fit (training and validation rows): ERR's
        ``max_grade``, so that every score of a fit uses the same stop
        probabilities. Only needed for ``"err"``.
    label_gain : array-like or None, default=None
        The gains of the labels (LambdaMART's ``label_gain``) for NDCG, the
        metric the objective optimises; None for ``2**y - 1``. The other
        metrics, and a scorer, keep their own conventions.

    Returns
    -------
    metric : GroupedMetric or GroupedScorer
    """
    if isinstance(scoring, RankingScorer):
        return GroupedScorer(scoring)
    if scoring is None:
        return GroupedMetric("ndcg", validation_ndcg_k, label_gain=label_gain)
    match = _NAME.fullmatch(scoring)
    family, k = match.group(1).lower(), match.group(2)
    return GroupedMetric(family, None if k is None else int(k), largest_label, label_gain)


def _query_of_rows(offsets):
    return np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))


class GroupedMetric:
    """``metric(y, raw_scores, offsets)``: a metric of :mod:`sklearn_ltr.metrics`
    with its defaults, on rows grouped by query.

    Parameters
    ----------
    family : {"ndcg", "map", "mrr", "err"}
    k : int or None
        Cutoff; None for none.
    max_grade : float, default=None
        ERR's ``max_grade``.
    label_gain : array-like or None, default=None
        NDCG's ``label_gain`` (ignored by the other metrics).

    Attributes
    ----------
    name, label : str
        How messages name the metric ("MAP@5"); the same for both.
    """

    def __init__(self, family, k, max_grade=None, label_gain=None):
        self.family = family
        self.kwargs = {"k": k}
        if family == "err":
            self.kwargs["max_grade"] = max_grade
        if family == "ndcg" and label_gain is not None:
            self.kwargs["label_gain"] = label_gain
        self.name = self.label = family.upper() + ("" if k is None else f"@{k}")

    def __call__(self, y, raw_scores, offsets):
        return _METRICS[self.family](y, raw_scores, qid=_query_of_rows(offsets), **self.kwargs)


class GroupedScorer:
    """``metric(y, raw_scores, offsets)``: a ranking scorer's value for the
    model whose raw scores on those rows are ``raw_scores``.

    Attributes
    ----------
    name : str
        The scorer's repr, for the lines that say what early stopping watches.
    label : str
        "score", for the progress lines.
    """

    label = "score"

    def __init__(self, scorer):
        self.scorer = scorer
        self.name = repr(scorer)

    def __call__(self, y, raw_scores, offsets):
        # A scorer reads query ids and calls predict(X); X has no columns,
        # as only the stand-in model below ever sees it.
        X = np.empty((raw_scores.shape[0], 0))
        # A copy: the boosting loop goes on updating its own scores in place.
        model = _ScoredModel(X, raw_scores.copy())
        return float(self.scorer(model, X, y, qid=_query_of_rows(offsets)))


class _ScoredModel:
    """Stands in for the ranker being boosted: ``predict`` gives its current
    raw scores on the rows being scored."""

    def __init__(self, X, scores):
        self._X = X
        self._scores = scores

    def predict(self, X):
        if X is not self._X:
            raise RuntimeError(
                "During boosting a scorer can only score the rows it is given; it called "
                "predict on other rows."
            )
        return self._scores
