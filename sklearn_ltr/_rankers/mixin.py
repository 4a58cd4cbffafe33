"""The query-aware interface every ranker of the package offers.

:class:`RankerMixin` adds, on top of an estimator's ``predict``: ``score``
(mean NDCG@10 over queries), ``rank`` (the rank of each row within its
query), the ``qid`` metadata requests of ``fit`` and ``score``, and the
scikit-learn tags of a ranker.
"""

import numpy as np

from .._utils.queries import check_qid, group_queries, resolve_qid, warn_one_query
from .._utils.threads import numba_threads
from ..metrics import ndcg_score

__all__ = ["RankerMixin"]


class RankerMixin:
    """Mixin for rankers: query-aware ``score`` and ``rank``, and tags.

    ``fit`` and ``score`` request ``qid`` through scikit-learn's metadata
    routing by default, so with routing enabled users never call
    ``set_fit_request`` or ``set_score_request``.
    """

    __metadata_request__fit = {"qid": True}
    __metadata_request__score = {"qid": True}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "ranker"
        tags.target_tags.required = True
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = True
        return tags

    def score(self, X, y, *, qid=None, sample_weight=None):
        """Mean ``NDCG@10`` over queries.

        Uses :func:`sklearn_ltr.metrics.ndcg_score` with its defaults
        (exponential gain, tie-averaged, queries without relevant documents
        count 1).

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            A DataFrame may carry the query ids in a ``"qid"`` column.
        y : array-like of shape (n_samples,)
            Graded relevance labels.
        qid : array-like of shape (n_samples,), default=None
            Query id of each row. If None and ``X`` has no ``"qid"`` column,
            all rows form one query: that is refused for a ranker fitted on
            several queries, where it is almost always a lost ``qid``, and
            done with a :class:`~sklearn_ltr.exceptions.SingleQueryWarning`
            otherwise.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row weights; a query's weight is the mean of its rows'.

        Returns
        -------
        score : float

        Raises
        ------
        ValueError
            If no query ids are found and the ranker was fitted on more than
            one query: for instance ``GridSearchCV`` or ``cross_val_score``
            with ``scoring=None`` and metadata routing off, which pass
            ``qid`` to ``fit`` but not to ``score``.

        Warns
        -----
        SingleQueryWarning
            If no query ids are found and the ranker was fitted on one
            query: the rows are scored as one query.
        """
        X, qid = resolve_qid(X, qid)
        n_training_queries = getattr(self, "_n_training_queries", 1)
        if qid is None and n_training_queries > 1:
            raise ValueError(
                f"score() got no qid, but this ranker was fitted on {n_training_queries} "
                "queries: all rows would be scored as one query. Pass qid= (or a 'qid' "
                "column of X). In GridSearchCV or cross_val_score, turn on metadata routing "
                "(sklearn.set_config(enable_metadata_routing=True)), or use "
                "scoring=ndcg_scorer(10) with a DataFrame qid column. To score the rows as "
                "one query, pass qid=np.zeros(len(X))."
            )
        with numba_threads(getattr(self, "n_jobs", None)):
            y_score = self.predict(X)
            if qid is None:
                # A ranker fitted without qid (one query) scores as it was
                # fitted, but says so, as rank() does: a search that routes
                # qid to neither fit nor score would otherwise rank its folds
                # by one-list NDCG without a word.
                warn_one_query(f"{type(self).__name__}.score", len(y_score), X=X)
                qid = np.zeros(len(y_score), dtype=np.int64)
            return ndcg_score(y, y_score, qid=qid, k=10, sample_weight=sample_weight)

    def rank(self, X, *, qid=None):
        """Rank of each row within its query, 1 being the best.

        Ties in the predicted scores are broken by row order.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
        qid : array-like of shape (n_samples,), default=None
            Query id of each row. If None and ``X`` has no ``"qid"`` column,
            all rows form one query.

        Returns
        -------
        ranks : ndarray of shape (n_samples,), dtype int64
            In the caller's row order.
        """
        X, qid = resolve_qid(X, qid)
        scores = self.predict(X)
        n_samples = scores.shape[0]
        if qid is None:
            warn_one_query(f"{type(self).__name__}.rank", n_samples, X=X)
            qid = np.zeros(n_samples, dtype=np.int64)
        qid = check_qid(qid, n_samples)
        order, offsets, _ = group_queries(qid)
        ranks = np.empty(n_samples, dtype=np.int64)
        # Sort all queries at once: primary key query position, secondary the
        # score (descending), and the stable sort keeps row order on ties.
        query_of_row = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
        within = np.lexsort((-scores[order], query_of_row))
        sorted_rows = order[within]
        ranks[sorted_rows] = np.arange(n_samples) - offsets[query_of_row] + 1
        return ranks
