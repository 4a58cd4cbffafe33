"""Why a ranker scores, and ranks, a document as it does: exact TreeSHAP.

:func:`feature_contributions` splits each row's score into one contribution
per feature plus the model's expected value, with the exact path-dependent
TreeSHAP algorithm of Lundberg et al. [1]_ (Algorithm 2), run on the
ranker's own trees. The "cover" that weighs the branches a row does not
take is the number of training rows that reached each node, as in
LightGBM's ``predict(X, pred_contrib=True)`` and
``shap.TreeExplainer(model)`` with ``feature_perturbation="tree_path_dependent"``,
which give the same numbers for an exported model
(:func:`sklearn_ltr.export.to_lightgbm`).

A ranker's score means something only relative to the other documents of
the same query, so :func:`feature_contributions` can centre the
contributions per query (``qid=``), and :func:`explain_pair` explains why one
document scores above another.

References
----------
.. [1] S. M. Lundberg, G. Erion, H. Chen, A. DeGrave, J. M. Prutkin, B. Nair,
   R. Katz, J. Himmelfarb, N. Bansal and S.-I. Lee, "From local explanations
   to global understanding with explainable AI for trees", Nature Machine
   Intelligence 2, 56-67 (2020).
"""

import numpy as np
from scipy import sparse

from ._gbdt.treeshap import tree_shap
from ._rankers.base import fitted_tree_ensemble
from ._utils.queries import check_qid, group_queries, resolve_qid
from ._utils.threads import numba_threads

__all__ = ["explain_pair", "feature_contributions"]


def _contributions(model, ensemble, X):
    """TreeSHAP of rows already validated by the model's ``_validate_X``,
    on the model's ``n_jobs`` numba threads. Categorical features are read
    as prediction reads them: as codes, NaN for categories the model does
    not know; a target statistic counts for its categorical feature, and a
    combination's is shared equally by its two features."""
    with numba_threads(model.n_jobs):
        contributions = tree_shap(ensemble.nodes, ensemble.tree_starts, ensemble.baseline,
                                  ensemble.encode(model._model_input(X)),
                                  feature_columns=model._explanation_players(ensemble))
    return model._fold_explanation(contributions)


def feature_contributions(model, X, *, qid=None):
    """Exact TreeSHAP contributions of each feature to each row's score.

    Path-dependent TreeSHAP (Lundberg et al. 2020, Algorithm 2): the
    contribution of feature ``j`` to row ``x`` is its Shapley value in the
    game ``v(S) = E[f(x) | x_S]``, where a split on a feature in ``S``
    sends the row down its own branch and a split on any other feature
    follows both branches, weighted by the number of training rows that
    went each way (the node's cover). The contributions are exact (no
    sampling) and cost ``O(leaves * depth^2)`` per row and tree. A missing
    value (NaN) is routed as :meth:`predict` routes it, so a NaN feature's
    contribution is that of the branch its split's missing direction
    sends it to. So is a categorical feature: a row goes left at a
    categorical split iff its category is one of the split's left
    categories, and a missing, unseen or rare category goes to the
    missing direction's side.

    These are the numbers LightGBM's ``predict(X, pred_contrib=True)`` and
    ``shap.TreeExplainer`` compute for the model exported by
    :func:`sklearn_ltr.export.to_lightgbm`, whose node counts are the
    training row counts.

    With ``target_statistics`` (which no exporter takes), a categorical
    feature's statistic plays with the feature: its splits count as the
    feature's. A combination's statistic
    (``target_statistics="combinations"``) is a player of its own, and its
    contribution is then shared equally by its two features, as CatBoost
    shares a combination's SHAP value; the rows still sum to ``predict``.

    Parameters
    ----------
    model : LambdaMARTRanker, XENDCGRanker, ListNetRanker, YetiRankRanker or CalibratedRanker
        A fitted ranker (or one read by :func:`~sklearn_ltr.load_model`).
    X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
        Rows to explain, validated as :meth:`predict` validates them. A
        DataFrame's ``"qid"`` column gives the query ids and is not a
        feature. Sparse rows are densified a bounded number at a time.
    qid : array-like of shape (n_samples,), default=None
        Query id of each row. If given (or ``X`` has a ``"qid"`` column),
        the contributions are centred per query: each query's mean row is
        subtracted from its rows (see Returns).

    Returns
    -------
    contributions : ndarray of shape (n_samples, n_features + 1), dtype float64
        Without query ids: the contribution of each feature, and in the last
        column the expected value (the baseline plus each tree's mean leaf
        value weighted by the training rows in each leaf), the same for
        every row. Each row sums to ``predict(x)``.

        With query ids: each row minus the mean row of its query. A
        ranking depends only on the differences between the scores of a
        query's documents, not on the scores themselves, so a centred
        contribution says why a document ranks above (positive) or below
        (negative) its query's average document. The last column is then 0,
        each centred row sums to ``predict(x)`` minus the mean score of its
        query, and each column sums to 0 over a query.

    See Also
    --------
    explain_pair : Why one document scores above another.

    References
    ----------
    S. M. Lundberg, G. Erion, H. Chen, A. DeGrave, J. M. Prutkin, B. Nair,
    R. Katz, J. Himmelfarb, N. Bansal and S.-I. Lee, "From local explanations
    to global understanding with explainable AI for trees", Nature Machine
    Intelligence 2, 56-67 (2020).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ltr import LambdaMARTRanker
    >>> from sklearn_ltr.datasets import make_ranking
    >>> from sklearn_ltr.inspection import feature_contributions
    >>> X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=5, random_state=0)
    >>> ranker = LambdaMARTRanker(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    >>> phi = feature_contributions(ranker, X[:4])
    >>> phi.shape
    (4, 6)
    >>> bool(np.allclose(phi.sum(axis=1), ranker.predict(X[:4])))
    True

    Centred per query, each query's contributions sum to 0 in every column:

    >>> centred = feature_contributions(ranker, X, qid=qid)
    >>> bool(np.allclose(centred[qid == qid[0]].sum(axis=0), 0.0))
    True
    """
    ensemble = fitted_tree_ensemble(model, caller="feature_contributions")
    X, qid = resolve_qid(X, qid)
    out = _contributions(model, ensemble, model._validate_X(X))
    if qid is None:
        return out
    n_samples = out.shape[0]
    qid = check_qid(qid, n_samples)
    if n_samples == 0:
        return out
    order, offsets, _ = group_queries(qid)
    sizes = np.diff(offsets)
    # Mean row of each query, summed in row order inside the query.
    means = np.add.reduceat(out[order], offsets[:-1], axis=0) / sizes[:, None]
    query_of_row = np.empty(n_samples, dtype=np.int64)
    query_of_row[order] = np.repeat(np.arange(sizes.shape[0]), sizes)
    out -= means[query_of_row]
    # Every row has the same expected value, whose centred value is 0: not
    # the rounding residue of subtracting its mean.
    out[:, -1] = 0.0
    return out


def _as_rows(x, name):
    """One row (1-d array or pandas Series) as a one-row 2-d input; 2-d
    inputs as they are. Returns the rows and whether ``x`` was one row."""
    if hasattr(x, "to_frame") and getattr(x, "ndim", None) == 1:  # pandas Series
        return x.to_frame().T, True
    if sparse.issparse(x) or hasattr(x, "columns"):
        return x, False
    array = np.asarray(x)
    if array.ndim == 1:
        return array.reshape(1, -1), True
    if array.ndim != 2:
        raise ValueError(f"{name} must be one row (1-d) or rows (2-d); got shape {array.shape}.")
    return x, False


def explain_pair(model, x_a, x_b):
    """Why document ``a`` scores above (or below) document ``b``.

    The difference of the exact TreeSHAP contributions
    (:func:`feature_contributions`) of the two documents: entry ``j`` is how
    much feature ``j`` adds to ``predict(a) - predict(b)``. Within a query
    the ranker puts ``a`` above ``b`` iff that difference is positive, so
    the large positive entries are the features that rank ``a`` above
    ``b``. The cover weighing the branches a row does not take is the
    training row count of each node, as in LightGBM's ``pred_contrib``.

    Parameters
    ----------
    model : LambdaMARTRanker, XENDCGRanker, ListNetRanker, YetiRankRanker or CalibratedRanker
        A fitted ranker.
    x_a, x_b : array-like, pandas Series, DataFrame or sparse matrix
        The documents: each one row (1-d, or a Series) or several rows
        (2-d) of features, validated as :meth:`predict` validates them. With
        several rows, pair ``i`` is row ``i`` of ``x_a`` against row ``i`` of
        ``x_b``, and a single row on one side is compared with every row of
        the other.

    Returns
    -------
    difference : ndarray of shape (n_features + 1,) or (n_pairs, n_features + 1)
        The contributions of ``a`` minus those of ``b``, laid out as in
        :func:`feature_contributions`: one entry per feature, then the
        difference of the expected values, which is always 0 (both rows
        share it). Each pair's entries sum to ``predict(a) - predict(b)``.
        One-dimensional if both ``x_a`` and ``x_b`` are single rows.

    See Also
    --------
    feature_contributions : The contributions of single rows.

    References
    ----------
    S. M. Lundberg, G. Erion, H. Chen et al., "From local explanations to
    global understanding with explainable AI for trees", Nature Machine
    Intelligence 2, 56-67 (2020).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ltr import LambdaMARTRanker
    >>> from sklearn_ltr.datasets import make_ranking
    >>> from sklearn_ltr.inspection import explain_pair
    >>> X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=5, random_state=0)
    >>> ranker = LambdaMARTRanker(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    >>> why = explain_pair(ranker, X[0], X[1])
    >>> why.shape
    (6,)
    >>> scores = ranker.predict(X[:2])
    >>> bool(np.isclose(why.sum(), scores[0] - scores[1]))
    True
    >>> explain_pair(ranker, X[:3], X[3:6]).shape
    (3, 6)
    """
    ensemble = fitted_tree_ensemble(model, caller="explain_pair")
    a, a_is_row = _as_rows(x_a, "x_a")
    b, b_is_row = _as_rows(x_b, "x_b")
    # As predict: a DataFrame's "qid" column is not a feature.
    a = model._validate_X(resolve_qid(a, None)[0], name="x_a")
    b = model._validate_X(resolve_qid(b, None)[0], name="x_b")
    n_a, n_b = a.shape[0], b.shape[0]
    if n_a != n_b and n_a != 1 and n_b != 1:
        raise ValueError(
            f"x_a has {n_a} rows and x_b has {n_b}; pass as many rows in each (pair i "
            "is row i of both), or a single row on one side."
        )
    difference = _contributions(model, ensemble, a) - _contributions(model, ensemble, b)
    # Both share the expected value: make its difference exactly 0.
    difference[:, -1] = 0.0
    if a_is_row and b_is_row:
        return difference[0]
    return difference
