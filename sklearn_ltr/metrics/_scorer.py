"""Scorers that know about queries, for GridSearchCV, cross_val_score and friends.

scikit-learn hands a scorer only ``(estimator, X, y)`` plus whatever metadata
routing delivers. A ranking metric computed without query ids silently scores
a whole test fold as one query, which gives plausible but wrong numbers. The
scorers here therefore find ``qid`` in one of two places, and refuse to score
otherwise:

1. routed metadata: with ``sklearn.set_config(enable_metadata_routing=True)``
   the scorer requests ``qid`` by default, so ``GridSearchCV(...).fit(X, y,
   qid=qid)`` and ``cross_val_score(..., params={"qid": qid})`` just work;
2. a DataFrame column named ``"qid"`` in ``X`` (the convention XGBoost uses),
   for when routing is off.
"""

import sklearn
from sklearn.utils.metadata_routing import UNCHANGED, MetadataRequest

from .._utils.queries import resolve_qid
from ._dcg import ndcg_score
from ._ranking import map_score, mrr_score

__all__ = ["RankingScorer", "make_ranking_scorer", "ndcg_scorer", "mrr_scorer", "map_scorer"]


def _routing_enabled():
    return bool(sklearn.get_config().get("enable_metadata_routing", False))


class RankingScorer:
    """A query-aware scorer: ``scorer(estimator, X, y_true, qid=None)``.

    Build it with :func:`make_ranking_scorer` or one of the shortcuts
    (:func:`ndcg_scorer`, :func:`mrr_scorer`, :func:`map_scorer`).

    Parameters
    ----------
    score_func : callable
        ``score_func(y_true, y_score, *, qid, sample_weight=None, **kwargs)``
        returning a float, such as :func:`sklearn_ltr.metrics.ndcg_score`.
    greater_is_better : bool, default=True
        If False, the scorer returns the negated metric, so that larger is
        always better for model selection (as in :func:`sklearn.metrics.make_scorer`).
    response_method : {"predict", "predict_proba"}, default="predict"
        Which estimator method gives the scores. With ``"predict_proba"`` the
        probability of the positive class (column 1) is used.
    qid_column : str, default="qid"
        Name of the DataFrame column read when no ``qid`` is routed.
    **kwargs
        Passed to ``score_func``.

    Examples
    --------
    Any estimator with ``predict`` works. A constant predictor ties every row,
    so with ``ties="average"`` P@1 is each query's share of relevant rows. The
    query ids come from the DataFrame's ``"qid"`` column:

    >>> import pandas as pd
    >>> from sklearn.dummy import DummyRegressor
    >>> from sklearn_ltr.metrics import RankingScorer, precision_at_k
    >>> X = pd.DataFrame({"f0": [0.1, 0.2, 0.3, 0.4, 0.5], "qid": [1, 1, 2, 2, 2]})
    >>> y = [1, 0, 1, 1, 0]
    >>> model = DummyRegressor().fit(X, y)
    >>> scorer = RankingScorer(precision_at_k, k=1)
    >>> round(scorer(model, X, y), 4)  # (1/2 + 2/3) / 2
    0.5833
    >>> scorer(model, X[["f0"]], y)  # no qid column and none routed
    Traceback (most recent call last):
    ...
    ValueError: make_ranking_scorer(precision_at_k, k=1) got no query ids, ...
    """

    def __init__(
        self,
        score_func,
        *,
        greater_is_better=True,
        response_method="predict",
        qid_column="qid",
        **kwargs,
    ):
        if response_method not in ("predict", "predict_proba"):
            raise ValueError(
                "response_method must be 'predict' or 'predict_proba'; got "
                f"{response_method!r}."
            )
        self._score_func = score_func
        self._sign = 1 if greater_is_better else -1
        self._response_method = response_method
        self._qid_column = qid_column
        self._kwargs = kwargs
        # Request qid by default so that users never need set_score_request.
        self._metadata_request = MetadataRequest(owner=type(self).__name__)
        self._metadata_request.score.add_request(param="qid", alias=True)

    def __repr__(self):
        args = "".join(f", {k}={v!r}" for k, v in self._kwargs.items())
        sign = "" if self._sign > 0 else ", greater_is_better=False"
        return f"make_ranking_scorer({self._score_func.__name__}{sign}{args})"

    def get_metadata_routing(self):
        """Metadata this scorer requests: ``qid`` by default.

        Returns
        -------
        request : MetadataRequest
        """
        return self._metadata_request

    def set_score_request(self, *, qid=UNCHANGED, sample_weight=UNCHANGED):
        """Change which metadata the scorer requests (routing must be on).

        As in scikit-learn, an argument left out keeps its current request.

        Parameters
        ----------
        qid : bool, str or None, default=sklearn.utils.metadata_routing.UNCHANGED
            True to request ``qid`` (the default of a new scorer); a string
            to request it under another name (an alias such as
            ``"query_id"``).
        sample_weight : bool, str or None, default=sklearn.utils.metadata_routing.UNCHANGED
            True to request per-row sample weights for the metric (not
            requested by a new scorer).

        Returns
        -------
        self : RankingScorer
        """
        if not _routing_enabled():
            raise RuntimeError(
                "set_score_request is only available when metadata routing is enabled: "
                "call sklearn.set_config(enable_metadata_routing=True) first."
            )
        for param, alias in (("qid", qid), ("sample_weight", sample_weight)):
            if alias is not UNCHANGED:
                self._metadata_request.score.add_request(param=param, alias=alias)
        return self

    def __call__(self, estimator, X, y_true, qid=None, sample_weight=None):
        """Score ``estimator`` on ``X`` per query.

        Parameters
        ----------
        estimator : fitted estimator with ``predict`` (or ``predict_proba``)
        X : array-like or DataFrame
            Passed untouched to the estimator, so a pipeline that was fitted
            with a ``qid`` column sees one again.
        y_true : array-like of shape (n_samples,)
        qid : array-like of shape (n_samples,), default=None
            Query ids, usually routed by scikit-learn. If None, ``X[qid_column]``
            is used.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float

        Raises
        ------
        ValueError
            If no query ids can be found.
        """
        _, qid = resolve_qid(X, qid, qid_column=self._qid_column)
        alias = self._metadata_request.score.requests.get("qid")
        if qid is None and _routing_enabled():
            self._raise_not_routed(alias)
        if qid is None:
            raise ValueError(
                f"{self!r} got no query ids, so it cannot score per query (scoring the "
                "whole fold as one query would give a wrong number). Either enable "
                "metadata routing with sklearn.set_config(enable_metadata_routing=True) "
                "and pass qid to fit / cross_val_score(params={'qid': qid}), or pass X "
                f"as a DataFrame with a {self._qid_column!r} column."
            )
        if self._response_method == "predict_proba":
            y_score = estimator.predict_proba(X)[:, 1]
        else:
            y_score = estimator.predict(X)
        value = self._score_func(
            y_true, y_score, qid=qid, sample_weight=sample_weight, **self._kwargs
        )
        return self._sign * value

    def _raise_not_routed(self, alias):
        """The error of a call without query ids while metadata routing is
        on: routing was not the missing piece, what was passed to it was."""
        column = f"or pass X as a DataFrame with a {self._qid_column!r} column."
        if isinstance(alias, str):
            raise ValueError(
                f"{self!r} got no query ids: it requests them under the alias {alias!r} "
                f"(set_score_request(qid={alias!r})), so pass them under that name, e.g. "
                f"cross_val_score(..., params={{'qid': qid, {alias!r}: qid}}) or "
                f"GridSearchCV(...).fit(X, y, qid=qid, {alias}=qid); or call "
                "set_score_request(qid=True) to receive the qid passed to fit."
            )
        if alias is True:
            raise ValueError(
                f"{self!r} got no query ids: metadata routing is on and the scorer requests "
                "qid, but no qid reached it. Pass qid to the call that runs the scorer: "
                "cross_validate(..., params={'qid': qid}) (or cross_val_score), or "
                "GridSearchCV(...).fit(X, y, qid=qid); add groups=qid for a GroupKFold. "
                f"Called directly, the scorer takes scorer(estimator, X, y, qid=qid); {column}"
            )
        raise ValueError(
            f"{self!r} got no query ids: metadata routing is on, but the scorer does not "
            f"request qid (its request is {alias!r}). Call set_score_request(qid=True) on it "
            "and pass qid to cross_validate(..., params={'qid': qid}) or "
            f"GridSearchCV(...).fit(X, y, qid=qid); {column}"
        )


def make_ranking_scorer(
    score_func, *, greater_is_better=True, response_method="predict", qid_column="qid", **kwargs
):
    """Make a query-aware scorer from a metric that takes ``qid``.

    Parameters
    ----------
    score_func : callable
        ``score_func(y_true, y_score, *, qid, sample_weight=None, **kwargs)``.
    greater_is_better : bool, default=True
        Whether larger metric values are better. If False the scorer negates
        the metric.
    response_method : {"predict", "predict_proba"}, default="predict"
        Estimator method that produces the scores.
    qid_column : str, default="qid"
        DataFrame column used for query ids when none are routed.
    **kwargs
        Fixed keyword arguments of ``score_func`` (for example ``k=5``).

    Returns
    -------
    scorer : RankingScorer
        A callable ``scorer(estimator, X, y_true, qid=None, sample_weight=None)``
        that requests ``qid`` through metadata routing by default.

    Examples
    --------
    >>> from sklearn_ltr.metrics import make_ranking_scorer, ndcg_score
    >>> make_ranking_scorer(ndcg_score, k=5, gain="linear")
    make_ranking_scorer(ndcg_score, k=5, gain='linear')
    """
    return RankingScorer(
        score_func,
        greater_is_better=greater_is_better,
        response_method=response_method,
        qid_column=qid_column,
        **kwargs,
    )


def ndcg_scorer(k=10, **kwargs):
    """Scorer for mean NDCG@k over queries (see :func:`ndcg_score`).

    Parameters
    ----------
    k : int or None, default=10
        Cutoff.
    **kwargs
        Other :func:`ndcg_score` parameters (``gain``, ``ties``, ``no_relevant``,
        ``label_gain``). ``ndcg_scorer(10, label_gain=ranker.label_gain)``
        scores with the gains a :class:`~sklearn_ltr.LambdaMARTRanker` was
        trained with, where its ``score`` keeps the exponential gain.

    Returns
    -------
    scorer : RankingScorer

    Examples
    --------
    With metadata routing on, ``fit(..., qid=qid)`` hands the query ids of each
    fold to the ranker and to the scorer (``groups`` goes to the splitter):

    >>> import sklearn
    >>> from sklearn.model_selection import GridSearchCV, GroupKFold
    >>> from sklearn_ltr import LambdaMARTRanker
    >>> from sklearn_ltr.datasets import make_ranking
    >>> from sklearn_ltr.metrics import ndcg_scorer
    >>> X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=5, random_state=0)
    >>> ranker = LambdaMARTRanker(n_estimators=5, random_state=0)
    >>> search = GridSearchCV(ranker, {"max_leaf_nodes": [3, 7]}, scoring=ndcg_scorer(k=5),
    ...                       cv=GroupKFold(3))
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     search = search.fit(X, y, qid=qid, groups=qid)
    >>> search.best_params_
    {'max_leaf_nodes': ...}
    """
    return make_ranking_scorer(ndcg_score, k=k, **kwargs)


def mrr_scorer(**kwargs):
    """Scorer for mean reciprocal rank over queries (see :func:`mrr_score`).

    Parameters
    ----------
    **kwargs
        :func:`mrr_score` parameters (``k``, ``threshold``, ``ties``).

    Returns
    -------
    scorer : RankingScorer

    Examples
    --------
    With routing off (scikit-learn's default), the query ids travel in ``X`` as
    a DataFrame column named ``"qid"``, which the ranker and the scorer both
    find; ``groups`` still goes to the splitter:

    >>> from sklearn.model_selection import GroupKFold, cross_val_score
    >>> from sklearn_ltr import LambdaMARTRanker
    >>> from sklearn_ltr.datasets import make_ranking, to_frame
    >>> from sklearn_ltr.metrics import mrr_scorer
    >>> X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=5, random_state=0)
    >>> ranker = LambdaMARTRanker(n_estimators=5, random_state=0)
    >>> scores = cross_val_score(ranker, to_frame(X, qid), y, groups=qid, cv=GroupKFold(3),
    ...                          scoring=mrr_scorer(threshold=2))
    >>> scores.shape
    (3,)
    """
    return make_ranking_scorer(mrr_score, **kwargs)


def map_scorer(**kwargs):
    """Scorer for mean average precision over queries (see :func:`map_score`).

    Parameters
    ----------
    **kwargs
        :func:`map_score` parameters (``k``, ``threshold``, ``ties``).

    Returns
    -------
    scorer : RankingScorer

    Examples
    --------
    A scorer is the metric applied to the estimator's predictions:

    >>> from sklearn_ltr import LambdaMARTRanker
    >>> from sklearn_ltr.datasets import make_ranking
    >>> from sklearn_ltr.metrics import map_score, map_scorer
    >>> X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=5, random_state=0)
    >>> ranker = LambdaMARTRanker(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    >>> scorer = map_scorer(threshold=2)  # labels >= 2 are relevant
    >>> scorer
    make_ranking_scorer(map_score, threshold=2)
    >>> scorer(ranker, X, y, qid=qid) == map_score(y, ranker.predict(X), qid=qid, threshold=2)
    True
    """
    return make_ranking_scorer(map_score, **kwargs)
