"""Ordered target statistics of categorical features, the rankers'
``target_statistics="ordered"``.

CatBoost's answer to categories too rare to split on (Prokhorenkova et al.,
"CatBoost: unbiased boosting with categorical features", NeurIPS 2018, the
"ordered TS" of its section on target statistics): replace a category by
the mean label of its rows, but give each training row only the labels of
rows that come *before* it in a random order, so that no row's statistic
holds its own label (the "target leakage" of a plain mean, which lets
trees memorise rare categories). For ranking, the order is one of whole
queries: a row sees the labels of its category in the queries drawn before
its own, never those of its own query, whose labels the objective compares
with each other. The statistic is smoothed towards the prior ``p`` (the
mean label of all training rows) with weight ``a = 1``, as in the paper::

    statistic = (sum of the earlier labels + a * p) / (number of earlier rows + a)

so a row whose category was not seen before gets ``p``. With sample
weights, the sums and the number of rows are weighted. After fitting, a
category's statistic over *all* training rows is what prediction, the
validation rows of early stopping and every later ``predict`` read. Any
value that is not a category seen in training gets ``p``, in training and
in prediction alike: an unseen category, and the values that categorical
splits treat as missing (NaN, negative or fractional values; a pandas
category not among the training column's categories arrives as NaN).

scikit-learn's :class:`~sklearn.preprocessing.TargetEncoder` computes the
same kind of statistic, but out of fold by *row*, so rows of one query
fall on both sides of a fold and the folds' statistics are drawn from
different category means than prediction's; it also cannot keep queries
together. The permutation by query is what this module adds.

Each categorical input column gets one statistic column, appended after
the input columns: the booster sees ``n_features_in_ + n_statistics``
columns, and the rankers count each statistic column as part of its
categorical column in ``feature_importances_`` and TreeSHAP.
"""

import numpy as np
from scipy import sparse

__all__ = ["OrderedTargetStatistics", "PRIOR_WEIGHT", "TargetStatisticsMixin",
           "constraints_with_statistics"]

# The weight ``a`` of the prior in the paper's ordered TS, as in CatBoost.
PRIOR_WEIGHT = 1.0


class OrderedTargetStatistics:
    """The statistic columns of a ranker's categorical features.

    Parameters
    ----------
    columns : ndarray of shape (n_statistics,), dtype int64
        The categorical input columns, increasing.

    Attributes
    ----------
    prior_ : float
        Mean label of the training rows.
    categories_ : list of ndarray
        For each column, its increasing categories seen in training.
    values_ : list of ndarray
        For each column, the statistic of each category over all training
        rows.
    """

    def __init__(self, columns):
        self.columns = np.asarray(columns, dtype=np.int64)

    def fit_ordered(self, X, y, rows, offsets, rng, sample_weight=None):
        """Fit the per-category tables on the training rows and return the
        ordered statistics of those rows.

        Parameters
        ----------
        X : ndarray or sparse matrix of shape (n_samples, n_features)
        y : ndarray of shape (n_samples,)
        rows : ndarray of shape (n_rows,)
            The training rows of ``X``, grouped by query.
        offsets : ndarray of shape (n_queries + 1,)
            Where each query's rows start in ``rows``.
        rng : numpy.random.Generator
            Draws the order of the queries.
        sample_weight : ndarray of shape (n_samples,) or None
            Row weights: the means are weighted means, and the prior weighs
            as much as one row of weight 1.

        Returns
        -------
        statistics : ndarray of shape (n_rows, n_statistics), dtype float64
            In the order of ``rows``.
        """
        y = np.asarray(y, dtype=np.float64)[rows]
        w = (np.ones_like(y) if sample_weight is None
             else np.asarray(sample_weight, dtype=np.float64)[rows])
        n_rows = y.shape[0]
        self.prior_ = float(np.sum(w * y) / np.sum(w))
        sizes = np.diff(offsets)
        query_rank = np.repeat(rng.permutation(sizes.shape[0]), sizes)
        self.categories_, self.values_ = [], []
        out = np.full((n_rows, self.columns.shape[0]), self.prior_)
        for j, column in enumerate(self.columns):
            values = _dense_column(X, column)[rows]
            known = _is_category(values)
            categories, category = np.unique(values[known], return_inverse=True)
            n_categories = categories.shape[0]
            sums = np.bincount(category, weights=(w * y)[known], minlength=n_categories)
            weights = np.bincount(category, weights=w[known], minlength=n_categories)
            self.categories_.append(categories)
            self.values_.append(self._smoothed(sums, weights))
            out[known, j] = self._ordered(category, query_rank[known], y[known], w[known])
        return out

    def _smoothed(self, sums, weights):
        return (sums + PRIOR_WEIGHT * self.prior_) / (weights + PRIOR_WEIGHT)

    def _ordered(self, category, query_rank, y, w):
        """Each row's statistic over the rows of its category in queries of
        a lower rank: rows sorted by (category, query rank) and cumulative
        sums taken up to the start of each row's (category, query) run."""
        order = np.lexsort((query_rank, category))
        c, r = category[order], query_rank[order]
        n = order.shape[0]
        starts_run = np.ones(n, dtype=bool)
        starts_run[1:] = (c[1:] != c[:-1]) | (r[1:] != r[:-1])
        starts_category = np.ones(n, dtype=bool)
        starts_category[1:] = c[1:] != c[:-1]
        index = np.arange(n)
        run_start = np.maximum.accumulate(np.where(starts_run, index, 0))
        category_start = np.maximum.accumulate(np.where(starts_category, index, 0))

        def earlier(values):
            before = np.concatenate(([0.0], np.cumsum(values[order])))
            return before[run_start] - before[category_start]

        statistics = np.empty(n)
        statistics[order] = self._smoothed(earlier(w * y), earlier(w))
        return statistics

    def transform(self, X):
        """The statistic of each row's category over all training rows; the
        prior for a value that is not a category seen in training (NaN,
        negative or fractional values included).

        Returns
        -------
        statistics : ndarray of shape (n_rows, n_statistics), dtype float64
        """
        out = np.full((X.shape[0], self.columns.shape[0]), self.prior_)
        for j, column in enumerate(self.columns):
            values = _dense_column(X, column)
            categories = self.categories_[j]
            if categories.shape[0]:
                position = np.minimum(np.searchsorted(categories, values),
                                      categories.shape[0] - 1)
                known = categories[position] == values
                out[known, j] = self.values_[j][position[known]]
        return out

    def append_to(self, X, statistics):
        """``X`` with the statistic columns after its own (sparse stays sparse)."""
        if sparse.issparse(X):
            return sparse.hstack([X, sparse.csr_matrix(statistics)], format=X.format)
        return np.hstack([np.asarray(X), statistics.astype(X.dtype, copy=False)])

    def input_columns(self, n_features):
        """The input column of each of the booster's ``n_features +
        n_statistics`` columns: its own, or a statistic's categorical
        column."""
        return np.concatenate([np.arange(n_features), self.columns])


class TargetStatisticsMixin:
    """How :class:`~sklearn_ltr._rankers.base.BaseGBRanker` adds the
    statistic columns of ``target_statistics``: in ``fit``
    (:meth:`_with_target_statistics`), wherever rows meet the booster
    (:meth:`_model_input`), and in the masks, constraints and TreeSHAP
    players that count the booster's columns. The fitted statistics are
    ``_target_statistics`` (None without them)."""

    def _with_target_statistics(self, X, y, train_rows, train_offsets, sample_weight):
        """``X`` with the statistic columns appended: the training rows'
        ordered statistics, and for held-out validation rows the statistics
        over all training rows, as prediction reads them.

        A warm start keeps the fitted per-category statistics, so that the
        fitted trees predict as before; its training rows get ordered
        statistics of its own data, drawn with the seed of the first fit
        (on the same data, the first fit's). It refuses a change of
        ``target_statistics``."""
        warm = self._adds_to_fitted_model()
        if warm and (self._fitted_statistics() is None) != (self.target_statistics is None):
            fitted = "without" if self._fitted_statistics() is None else "with"
            raise ValueError(
                f"target_statistics={self.target_statistics!r}, but the fitted trees were "
                f"grown {fitted} target statistics, and a warm start adds trees to them: set "
                "target_statistics back, or fit from scratch (warm_start=False)."
            )
        if not warm:
            columns = np.flatnonzero(self.is_categorical_)
            if self.target_statistics is not None and columns.shape[0] == 0:
                raise ValueError(
                    "target_statistics='ordered' adds a statistic for each categorical "
                    "feature, but X has none: declare them with categorical_features (or "
                    "pass pandas category columns), or set target_statistics=None."
                )
            self._target_statistics = (None if self.target_statistics is None
                                       else OrderedTargetStatistics(columns))
        statistics = self._target_statistics
        if statistics is None:
            return X
        rng = np.random.default_rng([self._random_seed, 3])
        fitted = (statistics.prior_, statistics.categories_, statistics.values_) if warm else None
        ordered = statistics.fit_ordered(X, y, train_rows, train_offsets, rng, sample_weight)
        if warm:
            statistics.prior_, statistics.categories_, statistics.values_ = fitted
        values = statistics.transform(X)
        values[train_rows] = ordered
        return statistics.append_to(X, values)

    def _fitted_statistics(self):
        return getattr(self, "_target_statistics", None)

    def _model_input(self, X):
        """Validated ``X`` as the booster reads it: with the statistic
        columns, if the ranker has them."""
        statistics = self._fitted_statistics()
        return X if statistics is None else statistics.append_to(X, statistics.transform(X))

    def _n_model_columns(self):
        """Columns the booster reads: the input's and the statistics'."""
        statistics = self._fitted_statistics()
        return self.n_features_in_ + (0 if statistics is None else statistics.columns.shape[0])

    def _model_categorical_mask(self):
        """``is_categorical_`` over the booster's columns (the statistics
        are numbers)."""
        statistics = self._fitted_statistics()
        if statistics is None:
            return self.is_categorical_
        return np.append(self.is_categorical_, np.zeros(statistics.columns.shape[0], bool))

    def _model_tree_params(self, tree_params):
        """``tree_params`` with constraints over the booster's columns."""
        return constraints_with_statistics(tree_params, self._fitted_statistics(),
                                           self.n_features_in_)

    def _model_feature_importances(self, importances):
        """Importances of the booster's columns, each statistic's added to
        its categorical column."""
        statistics = self._fitted_statistics()
        if statistics is None:
            return importances
        return np.bincount(statistics.input_columns(self.n_features_in_), weights=importances,
                           minlength=self.n_features_in_)

    def _explanation_players(self, ensemble):
        """The input column that each split feature of ``ensemble`` (this
        ranker's tree ensemble) counts for in TreeSHAP: its column, or a
        statistic's categorical column; None if every split feature is a
        column of its own."""
        statistics = self._fitted_statistics()
        if statistics is None:
            return ensemble.feature_columns
        return statistics.input_columns(self.n_features_in_)[
            ensemble.column_of(np.arange(ensemble.n_split_features))]


def constraints_with_statistics(tree_params, statistics, n_features):
    """``tree_params`` with ``monotonic_cst`` and ``interaction_cst`` (given
    per input column) extended to the statistic columns: none is monotonic,
    and each is in the interaction groups of its categorical column."""
    if statistics is None:
        return tree_params
    params = dict(tree_params)
    columns = statistics.columns
    if params.get("monotonic_cst") is not None:
        params["monotonic_cst"] = np.append(params["monotonic_cst"],
                                            np.zeros(columns.shape[0], dtype=np.int64))
    if params.get("interaction_cst") is not None:
        params["interaction_cst"] = [
            frozenset(group) | {n_features + j for j, c in enumerate(columns) if c in group}
            for group in params["interaction_cst"]
        ]
    return params


def _is_category(values):
    """Which values are categories: the others (NaN, negative, fractional)
    are missing values for the trees' categorical splits, and get the prior
    here."""
    with np.errstate(invalid="ignore"):
        return (values >= 0) & (values == np.floor(values))


def _dense_column(X, column):
    if sparse.issparse(X):
        return np.asarray(X[:, [column]].toarray()).ravel().astype(np.float64)
    return np.asarray(X[:, column], dtype=np.float64)
