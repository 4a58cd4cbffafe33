"""Ordered target statistics of categorical features, the rankers'
``target_statistics="ordered"`` and ``target_statistics="combinations"``.

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

The same statistic can be taken of a *combination* (the paper's feature
combinations, CatBoost's ``combinations_ctr``): a category together with
another column's value, where the other column is categorical (the pair of
categories) or numeric (the quartile of the training rows its value falls
in). A combination is known if both parts are (a category seen in training
of each categorical part, a non-NaN numeric value) and was seen in
training; any other row gets ``p``. Such statistics let the trees read how
a category's effect changes with another feature, which native splits
cannot learn for categories with few rows. Which combinations, see
:meth:`TargetStatisticsMixin._combinations`.

scikit-learn's :class:`~sklearn.preprocessing.TargetEncoder` computes the
same kind of statistic, but out of fold by *row*, so rows of one query
fall on both sides of a fold and the folds' statistics are drawn from
different category means than prediction's; it also cannot keep queries
together. The permutation by query is what this module adds.

The statistic columns are appended after the input columns: the booster
sees ``n_features_in_ + n_statistics`` columns. ``feature_importances_`` and
TreeSHAP count a statistic of one column as part of that column, and share
a combination's equally between its two columns, as CatBoost does for its
combinations' SHAP values.
"""

import warnings

import numpy as np
from scipy import sparse
from sklearn.base import clone

from .._utils.stacklevel import stacklevel_outside


__all__ = ["OrderedTargetStatistics", "PRIOR_WEIGHT", "TargetStatisticsMixin",
           "constraints_with_statistics"]

# The weight ``a`` of the prior in the paper's ordered TS, as in CatBoost.
PRIOR_WEIGHT = 1.0
# target_statistics="combinations": the trees of the short fit that ranks
# the columns, how many categorical columns are combined (pairwise, and each
# with the numeric columns), how many numeric columns each is combined with,
# and the quantiles that bucket a numeric column.
RANKING_TREES = 30
COMBINED_CATEGORICAL = 4
COMBINED_NUMERIC = 4
NUMERIC_QUANTILES = (0.25, 0.5, 0.75)


class OrderedTargetStatistics:
    """The statistic columns of a ranker's categorical features.

    Parameters
    ----------
    columns : ndarray of shape (n_statistics,), dtype int64
        The categorical input column of each statistic: first one statistic
        of each categorical column alone, increasing, then the
        combinations.
    partners : ndarray of shape (n_statistics,), dtype int64, default=None
        For each statistic, -1 if it is of its column alone, else the
        column combined with it: categorical if it has a statistic of its
        own, numeric (bucketed by ``edges_``) otherwise. None for
        ``target_statistics="ordered"`` (no combination).

    Attributes
    ----------
    prior_ : float
        Mean label of the training rows.
    categories_ : list of ndarray
        For each statistic, its increasing keys seen in training: the
        categories of a column alone, and ``i * n + b`` for a combination,
        where ``i`` is the position of the category among its column's
        ``categories_``, ``b`` that of the partner's category (or the
        number of ``edges_`` at or below its value), and ``n`` how many
        values ``b`` takes.
    values_ : list of ndarray
        For each statistic, its value for each key over all training rows.
    edges_ : list of ndarray
        For each statistic with a numeric partner, the quantiles
        ``NUMERIC_QUANTILES`` of the partner's finite values over the
        training rows (distinct, increasing);
        empty for the others. Set by :meth:`fit_edges`.
    """

    def __init__(self, columns, partners=None):
        self.columns = np.asarray(columns, dtype=np.int64)
        self.partners = None if partners is None else np.asarray(partners, dtype=np.int64)
        self.edges_ = [np.zeros(0) for _ in self.columns]

    @property
    def kind(self):
        """The ``target_statistics`` that made these statistics."""
        return "ordered" if self.partners is None else "combinations"

    def _partner(self, k):
        return -1 if self.partners is None else int(self.partners[k])

    def fit_edges(self, X, rows):
        """The quantile edges of each numeric partner over the training
        ``rows`` of ``X``."""
        for k in range(self.columns.shape[0]):
            partner = self._partner(k)
            if partner >= 0 and self._single(partner) is None:
                values = _dense_column(X, partner)[rows]
                # Quantiles of the finite values: ±inf fall in the end
                # buckets, and every edge is a number a model file can hold.
                values = values[np.isfinite(values)]
                self.edges_[k] = (np.unique(np.quantile(values, NUMERIC_QUANTILES))
                                  if values.shape[0] else np.zeros(0))

    def fit_ordered(self, X, y, rows, offsets, rng, sample_weight=None):
        """Fit the per-key tables on the training rows and return the
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
        parts = _Parts(X, rows)
        for k in range(self.columns.shape[0]):
            # A combination's key reads the categories_ of its columns'
            # statistics, which come first and are fitted by now.
            keys = self._keys(parts, k)
            known = ~np.isnan(keys)
            categories, category = np.unique(keys[known], return_inverse=True)
            n_categories = categories.shape[0]
            sums = np.bincount(category, weights=(w * y)[known], minlength=n_categories)
            weights = np.bincount(category, weights=w[known], minlength=n_categories)
            self.categories_.append(categories)
            self.values_.append(self._smoothed(sums, weights))
            out[known, k] = self._ordered(category, query_rank[known], y[known], w[known])
        return out

    def _keys(self, parts, k):
        """Statistic ``k``'s key of each row of ``parts`` (:class:`_Parts`),
        NaN where it has none (a value that is not a category, or a
        combination with an unknown part)."""
        column = self.columns[k]
        partner = self._partner(k)
        if partner < 0:
            values = parts.values(column)
            return np.where(_is_category(values), values, np.nan)
        first = parts.positions(column, self.categories_[self._single(column)])
        if self._single(partner) is not None:
            partner_categories = self.categories_[self._single(partner)]
            second = parts.positions(partner, partner_categories)
            n_second = partner_categories.shape[0]
        else:
            partner_values = parts.values(partner)
            second = np.searchsorted(self.edges_[k], partner_values, side="right")
            second[np.isnan(partner_values)] = -1
            n_second = self.edges_[k].shape[0] + 1
        known = (first >= 0) & (second >= 0)
        # Exact in float64: both factors count values seen in training.
        return np.where(known, first * float(n_second) + second, np.nan)

    def _single(self, column):
        """The statistic of ``column`` alone, or None if it has none."""
        for k in range(self.columns.shape[0]):
            if self.columns[k] == column and self._partner(k) < 0:
                return k
        return None

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
        """The statistic of each row's key over all training rows; the prior
        for a row without a key seen in training (NaN, negative or
        fractional values included).

        Returns
        -------
        statistics : ndarray of shape (n_rows, n_statistics), dtype float64
        """
        out = np.full((X.shape[0], self.columns.shape[0]), self.prior_)
        parts = _Parts(X)
        for k in range(self.columns.shape[0]):
            position = _position(self.categories_[k], self._keys(parts, k))
            known = position >= 0
            out[known, k] = self.values_[k][position[known]]
        return out

    def append_to(self, X, statistics):
        """``X`` with the statistic columns after its own (sparse stays sparse)."""
        if sparse.issparse(X):
            return sparse.hstack([X, sparse.csr_matrix(statistics)], format=X.format)
        return np.hstack([np.asarray(X), statistics.astype(X.dtype, copy=False)])

    def explanation_players(self, n_features):
        """The TreeSHAP player of each of the booster's ``n_features +
        n_statistics`` columns: an input column is its own, a statistic of
        one column is that column's, and a combination is a player of its
        own, ``n_features + k``, which :meth:`fold` shares out."""
        partners = (np.full(self.columns.shape[0], -1) if self.partners is None
                    else self.partners)
        own = n_features + np.arange(self.columns.shape[0])
        return np.concatenate([np.arange(n_features),
                               np.where(partners < 0, self.columns, own)])

    def fold(self, values, n_features):
        """Per-input-column values from per-booster-column ``values`` (the
        last axis of length ``n_features + n_statistics``, or ``n_features``
        where no combination has a column): a statistic's value added to
        its column's, a combination's shared equally by its two columns."""
        out = values[..., :n_features].copy()
        for k in range(min(self.columns.shape[0], values.shape[-1] - n_features)):
            partner = self._partner(k)
            share = values[..., n_features + k] / (1.0 if partner < 0 else 2.0)
            out[..., self.columns[k]] += share
            if partner >= 0:
                out[..., partner] += share
        return out

    def names(self, feature_names):
        """The booster's column names: the input's, then each statistic's."""
        def name(k):
            partner = self._partner(k)
            parts = feature_names[self.columns[k]] + (
                "" if partner < 0 else f"&{feature_names[partner]}")
            return f"{parts}:target_statistic"

        return [*feature_names, *(name(k) for k in range(self.columns.shape[0]))]


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

        A warm start keeps the fitted statistics (their tables, and which
        combinations with which quantile edges), so that the fitted trees
        predict as before; its training rows get ordered statistics of its
        own data, drawn with the seed of the first fit (on the same data,
        the first fit's). It refuses a change of ``target_statistics``."""
        warm = self._adds_to_fitted_model()
        fitted_kind = None if self._fitted_statistics() is None else self._fitted_statistics().kind
        if warm and fitted_kind != self.target_statistics:
            raise ValueError(
                f"target_statistics={self.target_statistics!r}, but the fitted trees were "
                f"grown with target_statistics={fitted_kind!r}, and a warm start adds trees to "
                "them: set target_statistics back, or fit from scratch (warm_start=False)."
            )
        if not warm:
            self._target_statistics = self._new_statistics(X, y, train_rows, train_offsets,
                                                           sample_weight)
        statistics = self._target_statistics
        if statistics is None:
            return X
        rng = np.random.default_rng([self._random_seed, 3])
        fitted = (statistics.prior_, statistics.categories_, statistics.values_) if warm else None
        ordered = statistics.fit_ordered(X, y, train_rows, train_offsets, rng, sample_weight)
        if warm:
            statistics.prior_, statistics.categories_, statistics.values_ = fitted
        values = np.empty((X.shape[0], ordered.shape[1]))
        values[train_rows] = ordered
        held_out = np.setdiff1d(np.arange(X.shape[0]), train_rows)
        if held_out.shape[0]:
            values[held_out] = statistics.transform(X[held_out])
        return statistics.append_to(X, values)

    def _new_statistics(self, X, y, train_rows, train_offsets, sample_weight):
        """The unfitted statistics that ``target_statistics`` asks for."""
        if self.target_statistics is None:
            return None
        columns = np.flatnonzero(self.is_categorical_)
        if columns.shape[0] == 0:
            raise ValueError(
                f"target_statistics={self.target_statistics!r} adds statistics of the "
                "categorical features, but X has none: declare them with categorical_features "
                "(or pass pandas category columns), or set target_statistics=None."
            )
        if self.target_statistics == "ordered":
            return OrderedTargetStatistics(columns)
        if self.interaction_cst is not None:
            raise ValueError(
                "target_statistics='combinations' adds statistics of two columns at once, "
                "which interaction_cst may forbid to interact: use target_statistics='ordered' "
                "with interaction constraints, or interaction_cst=None."
            )
        first, partners = self._combinations(X, y, train_rows, train_offsets, sample_weight)
        statistics = OrderedTargetStatistics(np.concatenate([columns, first]),
                                             np.concatenate([np.full(columns.shape[0], -1),
                                                             partners]))
        statistics.fit_edges(X, train_rows)
        return statistics

    def _combinations(self, X, y, train_rows, train_offsets, sample_weight):
        """The combinations of ``target_statistics="combinations"``, as the
        first column and the partner of each.

        A fit of ``RANKING_TREES`` trees (this ranker's parameters, without
        statistics, early stopping or constraints; without the routed fit
        arguments such as ``position``) on the training rows ranks the
        columns by ``feature_importances_``. The
        ``COMBINED_CATEGORICAL`` most important categorical columns are
        combined pairwise, and each with the ``COMBINED_NUMERIC`` most
        important numeric columns (those the trees split on at all); ties
        go to the lower column.
        """
        sizes = np.diff(train_offsets)
        qid = np.repeat(np.arange(sizes.shape[0]), sizes)
        ranking = clone(self).set_params(
            n_estimators=RANKING_TREES, target_statistics=None, early_stopping=False,
            warm_start=False, verbose=0, categorical_features=self.is_categorical_,
            monotonic_cst=None, interaction_cst=None)
        with warnings.catch_warnings():
            # What this fit could warn of (pooled categories, positions
            # that position debiasing misses here), the fit itself says.
            warnings.simplefilter("ignore")
            ranking.fit(X[train_rows], np.asarray(y)[train_rows], qid=qid,
                        sample_weight=None if sample_weight is None else sample_weight[train_rows])
        importance = ranking.feature_importances_

        def most_important(candidates, n):
            order = np.argsort(-importance[candidates], kind="stable")
            return candidates[order[:n]]

        categorical = np.sort(most_important(np.flatnonzero(self.is_categorical_),
                                             COMBINED_CATEGORICAL))
        numeric = np.flatnonzero(~self.is_categorical_ & (importance > 0))
        numeric = np.sort(most_important(numeric, COMBINED_NUMERIC))
        pairs = [(a, b) for i, a in enumerate(categorical) for b in categorical[i + 1:]]
        pairs += [(a, b) for a in categorical for b in numeric]
        names = getattr(self, "feature_names_in_", None)

        def listed(columns):
            return [str(names[c]) if names is not None else int(c) for c in columns]

        if self.verbose:
            print(f"target statistics: {len(pairs)} combinations of categorical features "
                  f"{listed(categorical)} and numeric features {listed(numeric)}")
        if not pairs:
            warnings.warn(
                f"target_statistics='combinations' found nothing to combine: one categorical "
                f"feature ({listed(categorical)[0]!r}) and no numeric feature that the trees "
                "split on, so the model is that of target_statistics='ordered', which says so "
                "(and saves a smaller file).",
                UserWarning,
                stacklevel=stacklevel_outside(("sklearn_ltr", "sklearn")),
            )
        pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        return pairs[:, 0], pairs[:, 1]

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
        """Importances of the booster's columns folded onto the input
        columns (:meth:`OrderedTargetStatistics.fold`)."""
        statistics = self._fitted_statistics()
        if statistics is None:
            return importances
        return statistics.fold(importances, self.n_features_in_)

    def _explanation_players(self, ensemble):
        """The TreeSHAP player of each split feature of ``ensemble`` (this
        ranker's tree ensemble): its column, a statistic's categorical
        column, or a combination's own player; None if every split feature
        is a column of its own."""
        statistics = self._fitted_statistics()
        if statistics is None:
            return ensemble.feature_columns
        return statistics.explanation_players(self.n_features_in_)[
            ensemble.column_of(np.arange(ensemble.n_split_features))]

    def _fold_explanation(self, contributions):
        """TreeSHAP contributions per player (the expected value last) as
        contributions per input column: a combination's shared equally by
        its two columns."""
        statistics = self._fitted_statistics()
        if statistics is None or contributions.shape[1] == self.n_features_in_ + 1:
            return contributions
        folded = statistics.fold(contributions[:, :-1], self.n_features_in_)
        return np.column_stack([folded, contributions[:, -1]])


def constraints_with_statistics(tree_params, statistics, n_features):
    """``tree_params`` with ``monotonic_cst`` and ``interaction_cst`` (given
    per input column) extended to the statistic columns: none is monotonic,
    and each is in the interaction groups of its categorical column
    (combinations and interaction constraints do not go together)."""
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


def _position(categories, values):
    """The position of each value among the increasing ``categories``, -1
    where it is not one of them."""
    if categories.shape[0] == 0:
        return np.full(values.shape[0], -1, dtype=np.int64)
    position = np.minimum(np.searchsorted(categories, values), categories.shape[0] - 1)
    return np.where(categories[position] == values, position, -1)


class _Parts:
    """The columns that statistics' keys read, of some rows of ``X`` (all if
    ``rows`` is None), each read once per call however many statistics
    combine it, and each categorical column's positions among its
    categories found once."""

    def __init__(self, X, rows=None):
        self._X, self._rows = X, rows
        self._values, self._positions = {}, {}

    def values(self, column):
        if column not in self._values:
            values = _dense_column(self._X, column)
            self._values[column] = values if self._rows is None else values[self._rows]
        return self._values[column]

    def positions(self, column, categories):
        """The position of each value of the categorical ``column`` among
        its own statistic's ``categories``, -1 where it is none of them."""
        if column not in self._positions:
            self._positions[column] = _position(categories, self.values(column))
        return self._positions[column]


def _dense_column(X, column):
    if sparse.issparse(X):
        return np.asarray(X[:, [column]].toarray()).ravel().astype(np.float64)
    return np.asarray(X[:, column], dtype=np.float64)
