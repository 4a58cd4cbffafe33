"""Base classes of the rankers: query handling, scoring, tags, and the shared
gradient-boosting parameters and fit glue.

The estimators in ``_ranker.py`` only choose an objective and its parameters;
everything else (input validation, grouping rows by query, the query-aware
validation split, binning, the boosting loop) lives here and in
``_gbdt/booster.py``.
"""

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import InvalidParameterError, Interval, StrOptions
from sklearn.utils.validation import (
    _check_sample_weight,
    _num_samples,
    check_is_fitted,
    validate_data,
)

from ._categorical_input import categorical_mask, encode_pandas_categories, pandas_categories
from ._gbdt.binning import BinMapper
from ._gbdt.booster import Booster, TrainingData
from ._gbdt.common import X_DTYPE, Y_DTYPE
from ._input_checks import check_labels, check_no_text_labels, check_numeric_columns
from ._lightgbm_names import checking_foreign_names, foreign_name_hint, foreign_value_hint
from ._objectives import OBJECTIVES
from ._objectives.multi_objective import check_secondary_labels
from ._queries import (
    check_qid,
    group_queries,
    resolve_qid,
    rows_of_queries,
    split_queries,
    warn_one_query,
)
from .metrics import ndcg_score
from ._scoring import check_scoring, scoring_metric
from ._threads import numba_threads
from .persistence import save_model as _save_model

__all__ = ["BaseGBRanker", "RankerMixin", "fitted_tree_ensemble"]

# Rows drawn to compute bin thresholds: quantiles of 200k rows are as good as
# those of all rows, and sorting 2M+ rows per feature is not free.
_BINNING_SUBSAMPLE = 200_000
# Rows used to report the training NDCG each iteration (as HistGradientBoosting
# does with its 10k "small trainset"): the full training set would cost more
# than the tree itself on large data.
_SMALL_TRAINSET_ROWS = 10_000


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
            all rows form one query; that is refused for a ranker fitted on
            several queries, where it is almost always a lost ``qid``.
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


class BaseGBRanker(RankerMixin, BaseEstimator):
    """Shared parameters and fit logic of the gradient-boosted rankers.

    Subclasses set ``_objective_name`` and implement ``_objective_params``.
    """

    _parameter_constraints = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_leaf_nodes": [Interval(Integral, 2, None, closed="left")],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "min_hessian_to_split": [Interval(Real, 0, None, closed="left")],
        "l2_regularization": [Interval(Real, 0, None, closed="left")],
        "max_bins": [Interval(Integral, 2, 255, closed="both")],
        "categorical_features": [StrOptions({"from_dtype"}), "array-like", None],
        "max_features": [Interval(Real, 0, 1, closed="right")],
        "subsample": [Interval(Real, 0, 1, closed="right")],
        "early_stopping": [StrOptions({"auto"}), "boolean"],
        "validation_fraction": [
            Interval(Real, 0, 1, closed="neither"),
            Interval(Integral, 1, None, closed="left"),
            None,
        ],
        "validation_ndcg_k": [Interval(Integral, 1, None, closed="left")],
        "scoring": [str, callable, None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "warm_start": ["boolean"],
        "importance_type": [StrOptions({"gain", "split"})],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "n_jobs": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Integral, None, -1, closed="right"),
            None,
        ],
    }

    def __init__(
        self,
        *,
        n_estimators,
        learning_rate,
        max_leaf_nodes,
        max_depth,
        min_samples_leaf,
        min_hessian_to_split,
        l2_regularization,
        max_bins,
        categorical_features,
        max_features,
        subsample,
        early_stopping,
        validation_fraction,
        validation_ndcg_k,
        scoring,
        n_iter_no_change,
        tol,
        warm_start,
        importance_type,
        verbose,
        random_state,
        n_jobs,
    ):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.min_hessian_to_split = min_hessian_to_split
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins
        self.categorical_features = categorical_features
        self.max_features = max_features
        self.subsample = subsample
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.validation_ndcg_k = validation_ndcg_k
        self.scoring = scoring
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.warm_start = warm_start
        self.importance_type = importance_type
        self.verbose = verbose
        self.random_state = random_state
        self.n_jobs = n_jobs

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Every ranker class's own __init__ and fit, and the fit it inherits
        # (a Dask mixin's), once: Python refuses an unknown keyword before any
        # code of the method runs, so the check must sit in front of it.
        for name, context in (("__init__", "init"), ("fit", "fit")):
            method = getattr(cls, name)
            if not getattr(method, "_checks_foreign_names", False):
                setattr(cls, name, checking_foreign_names(method, context))

    def set_params(self, **params):
        """Set the parameters of this estimator.

        As :meth:`sklearn.base.BaseEstimator.set_params`; a LightGBM or
        XGBoost name (``num_leaves``) is refused with its equivalent here.

        Parameters
        ----------
        **params : dict
            Estimator parameters.

        Returns
        -------
        self : estimator instance
            Estimator instance.
        """
        valid = self._get_param_names()
        for name, value in params.items():
            if name in valid:
                continue
            hint = foreign_name_hint(
                name, value, estimator=type(self).__name__, valid=valid, context="set_params"
            )
            if hint is not None:
                raise ValueError(
                    f"Invalid parameter {name!r} for estimator {type(self).__name__}; {hint}"
                )
        return super().set_params(**params)

    def _validate_params(self):
        # Values that mean something else in LightGBM or XGBoost (max_depth=-1)
        # fail validation here; say what they are called.
        try:
            super()._validate_params()
        except InvalidParameterError as exc:
            hint = foreign_value_hint(self.get_params(deep=False))
            if hint is None:
                raise
            raise InvalidParameterError(f"{exc} {hint}") from None
        check_scoring(self)

    # -- input handling -------------------------------------------------

    # NaN means missing; +-inf are the largest and smallest values, which
    # binning (thresholds are finite) and prediction (x <= threshold) both
    # order correctly, as LightGBM does.
    def _validate_X(self, X, *, name="X", allow_empty=True):
        """Check X against the fitted features. Scoring an empty batch is not
        an error; a validation set without rows is."""
        X = encode_pandas_categories(X, getattr(self, "_pandas_categories", {}), name)
        check_numeric_columns(X, name)
        if not allow_empty and _num_samples(X) == 0:
            raise ValueError(f"{name} has no rows; a validation set needs at least one query.")
        return validate_data(
            self,
            X,
            reset=False,
            accept_sparse=("csr", "csc"),
            dtype=[X_DTYPE, np.float32],
            ensure_all_finite=False,
            ensure_min_samples=0,
        )

    def _gain_table(self):
        """The checked ``label_gain`` table of a ranker that has one, else
        None (gains ``2**y - 1``)."""
        return None

    def _checked_labels(self, y, name="y"):
        """Labels as the objective needs them (finite and non-negative here)."""
        return check_labels(y, name=name, label_gain=self._gain_table())

    def _prepare_training_data(self, X, y, qid, sample_weight):
        X, qid = resolve_qid(X, qid)
        warm = self._adds_to_fitted_model()
        category_columns = self._pandas_categories if warm else pandas_categories(X)
        X = encode_pandas_categories(X, category_columns)
        check_numeric_columns(X, "X")
        # Before validate_data, which would read "1.5" as 1.5.
        check_no_text_labels(y, "y")
        if _num_samples(X) == 0:
            raise ValueError("X has no rows; fit needs at least one query with one row.")
        if hasattr(X, "columns") and X.shape[1] == 0:
            raise ValueError("X has no feature columns (its 'qid' column is not a feature).")
        # A warm start checks X against the fitted columns and leaves them
        # alone, so a refused X does not spoil the model.
        X, y = validate_data(
            self,
            X,
            y,
            reset=not self._adds_to_fitted_model(),
            accept_sparse=("csr", "csc"),
            dtype=[X_DTYPE, np.float32],
            ensure_all_finite=False,
            y_numeric=True,
        )
        y = self._checked_labels(y)
        if not warm:
            self._pandas_categories = category_columns
            self.is_categorical_ = categorical_mask(
                self.categorical_features, X.shape[1],
                getattr(self, "feature_names_in_", None), category_columns)
        n_samples = X.shape[0]
        if qid is None:
            # Frames above: _fit, fit, scikit-learn's _fit_context, the keyword
            # check of BaseGBRanker.__init_subclass__, then the caller.
            warn_one_query(f"{type(self).__name__}.fit", n_samples, X=X, stacklevel=7)
            qid = np.zeros(n_samples, dtype=np.int64)
        qid = check_qid(qid, n_samples)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=Y_DTYPE)
        return X, y, qid, sample_weight

    def _validation_set_used_otherwise(self):
        """True if ``fit`` uses ``X_val`` for more than early stopping."""
        return False

    def _check_validation_arguments(self, X_val, y_val, qid_val):
        """Refuse validation arguments that ``fit`` would ignore."""
        if X_val is None:
            if y_val is not None or qid_val is not None:
                raise ValueError("y_val or qid_val was given without X_val.")
        elif self.early_stopping is False and not self._validation_set_used_otherwise():
            raise ValueError(
                "X_val was given but early_stopping=False, so it would not be used. Set "
                "early_stopping=True (or 'auto'), or leave out X_val, y_val and qid_val."
            )

    def _prepare_validation_data(self, X_val, y_val, qid_val, n_training_queries):
        X_val, qid_val = resolve_qid(X_val, qid_val)
        if y_val is None:
            raise ValueError("X_val was given without y_val; pass both (and qid_val).")
        X_val = self._validate_X(X_val, name="X_val", allow_empty=False)
        y_val = self._checked_labels(y_val, name="y_val")
        if y_val.shape[0] != X_val.shape[0]:
            raise ValueError(
                f"y_val has {y_val.shape[0]} labels but X_val has {X_val.shape[0]} rows."
            )
        n_val = X_val.shape[0]
        if qid_val is None:
            if n_training_queries > 1 and self.early_stopping is not False:
                raise ValueError(
                    f"qid_val is required: the training data has {n_training_queries} "
                    "queries, and without qid_val all validation rows would be scored as "
                    "one query. Pass qid_val, or give X_val a 'qid' column."
                )
            qid_val = np.zeros(n_val, dtype=np.int64)
        qid_val = check_qid(qid_val, n_val, name="qid_val")
        return X_val, y_val, qid_val

    def _early_stopping_plan(self, n_samples, has_validation_set, n_queries, n_held_out):
        """One line for ``verbose``: whether early stopping is on, why, and on
        which queries it validates."""
        if self.early_stopping == "auto":
            reason = ("X_val was given" if has_validation_set
                      else f"{n_samples:,} rows {'>' if n_samples > 10_000 else '<='} 10,000")
            why = f"early_stopping='auto' and {reason}"
        else:
            why = f"early_stopping={self.early_stopping}"
        if not self.do_early_stopping_:
            return f"Early stopping is off ({why}): fitting {self.n_estimators} trees."
        if has_validation_set:
            source = "on X_val"
        elif n_held_out is not None:
            source = (f"on {n_held_out} of {n_queries} queries held out of training "
                      f"(validation_fraction={self.validation_fraction})")
        else:
            source = "on the training data (validation_fraction=None)"
        metric = scoring_metric(self.scoring, self.validation_ndcg_k).name
        return (f"Early stopping is on ({why}): validation {metric} "
                f"{source}; it stops after n_iter_no_change={self.n_iter_no_change} "
                f"iterations without an improvement above tol={self.tol:g}.")

    def _do_early_stopping(self, n_samples, has_validation_set):
        if self.early_stopping == "auto":
            return has_validation_set or n_samples > 10_000
        return bool(self.early_stopping)

    # -- fit --------------------------------------------------------------

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, qid=None, sample_weight=None, X_val=None, y_val=None, qid_val=None):
        """Fit the ranker.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Training rows. NaN marks a missing value. A DataFrame may carry the
            query ids in a ``"qid"`` column, which is never used as a feature.
        y : array-like of shape (n_samples,)
            Graded, non-negative relevance labels.
        qid : array-like of shape (n_samples,), default=None
            Query id of each row, of any comparable type. Rows need not be
            sorted or contiguous. If None (and no ``"qid"`` column), all rows
            form one query.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row weights; they scale each row's gradient and hessian.
        X_val, y_val, qid_val : default=None
            A validation set for early stopping. If not given and early
            stopping is on, ``validation_fraction`` of the queries is held out.

        Returns
        -------
        self : object
            The fitted ranker.
        """
        return self._fit(
            X, y, qid=qid, sample_weight=sample_weight, X_val=X_val, y_val=y_val, qid_val=qid_val
        )

    def _fit(self, X, y, *, qid, sample_weight, X_val, y_val, qid_val, y_secondary=None):
        """The body of ``fit``; ``y_secondary`` (per-row secondary labels in
        [0, 1], only LambdaMARTRanker exposes them) reaches the objective in
        the training rows' query order."""
        X, y, qid, sample_weight = self._prepare_training_data(X, y, qid, sample_weight)
        if y_secondary is not None:
            y_secondary = check_secondary_labels(y_secondary, X.shape[0])
        self._check_validation_arguments(X_val, y_val, qid_val)
        has_validation_set = X_val is not None

        warm, nothing_to_add = self._begin_fit()
        if nothing_to_add:
            return self

        order, offsets, _ = group_queries(qid)
        self._n_training_queries = offsets.shape[0] - 1
        if has_validation_set:
            X_val, y_val, qid_val = self._prepare_validation_data(
                X_val, y_val, qid_val, n_training_queries=self._n_training_queries
            )
        n_samples = X.shape[0]
        self.do_early_stopping_ = self._do_early_stopping(n_samples, has_validation_set)
        split_rng = np.random.default_rng([self._random_seed, 0])
        hold_out = (self.do_early_stopping_ and not has_validation_set
                    and self.validation_fraction is not None)
        self._note_held_out_queries(warm, hold_out)
        if hold_out:
            train_queries, val_queries = split_queries(offsets, self.validation_fraction, split_rng)
        else:
            train_queries, val_queries = np.arange(offsets.shape[0] - 1), None
        if self.verbose:
            print(self._early_stopping_plan(
                n_samples, has_validation_set, offsets.shape[0] - 1,
                None if val_queries is None else val_queries.shape[0],
            ))
        if val_queries is None:
            # Every query trains: its rows are ``order`` itself, not a copy of it.
            train_rows, train_offsets = order, offsets
        else:
            train_rows, train_offsets = rows_of_queries(offsets, train_queries, order)

        tic = time.perf_counter()
        if not warm:
            self._bin_mapper = self._fit_bin_mapper(X, train_rows)
        bin_mapper = self._bin_mapper
        X_binned = bin_mapper.transform(X, row_order=train_rows)
        binning_seconds = time.perf_counter() - tic
        y_train = y[train_rows]
        weight_train = None if sample_weight is None else sample_weight[train_rows]

        validation = None
        if self.do_early_stopping_:
            if has_validation_set:
                validation = self._binned_validation_set(X_val, y_val, qid_val)
            elif val_queries is not None:
                val_rows, val_offsets = rows_of_queries(offsets, val_queries, order)
                validation = (bin_mapper.transform(X, row_order=val_rows), y[val_rows], val_offsets)
                del val_rows
            else:  # validation_fraction=None: stop on the training data itself
                validation = (X_binned, y_train, train_offsets)

        largest_label = y.max() if validation is None else max(y.max(), validation[1].max())
        extra = {} if y_secondary is None else {"y_secondary": y_secondary[train_rows]}
        objective = self._make_objective(y_train, train_offsets, weight_train, **extra)
        # Boosting reads only the binned rows and the objective: drop this
        # frame's references to the rest, so that what validation copied or
        # converted (a DataFrame, a list or integers in X: a float64 copy of
        # the whole matrix) is freed before the boosting loop allocates.
        del X, y, qid, sample_weight, y_secondary, X_val, y_val, qid_val, order, train_rows, extra
        self._boost(
            TrainingData(X_binned, objective, bin_mapper.missing_values_bin_idx_),
            objective_name=objective.name,
            baseline=objective.init_score(),
            validation=validation,
            warm=warm,
            largest_label=largest_label,
        )
        self._booster.phase_seconds["binning"] = binning_seconds
        return self

    def _adds_to_fitted_model(self):
        """True if ``fit`` is a warm start that adds trees to a fitted model."""
        return self.warm_start and hasattr(self, "_booster")

    def _begin_fit(self):
        """Check a warm start and draw the fit's seed.

        Returns
        -------
        warm : bool
            True if trees are added to a fitted model.
        nothing_to_add : bool
            True if a warm start already has ``n_estimators`` trees.
        """
        warm = self._adds_to_fitted_model()
        if warm:
            if self.n_estimators < self.n_iter_:
                raise ValueError(
                    f"n_estimators={self.n_estimators} must be at least the number of "
                    f"trees already fitted ({self.n_iter_}) when warm_start=True."
                )
            return True, self.n_estimators == self.n_iter_
        # Seeds are drawn once, at the first fit, and reused on warm starts,
        # so that 50 + 50 trees reproduce 100 trees exactly.
        rng = check_random_state(self.random_state)
        self._random_seed = int(rng.randint(np.iinfo(np.int32).max))
        return False, False

    def _note_held_out_queries(self, warm, hold_out):
        """Remember whether the validation queries were held out from every
        fit so far, and warn when a warm start holds out queries that the
        trees it already has were trained on."""
        unseen_so_far = not warm or getattr(self, "_validation_queries_unseen", False)
        if warm and hold_out and not unseen_so_far:
            warnings.warn(
                f"This warm start stops early on held-out queries (validation_fraction), but "
                f"the {self.n_iter_} trees already fitted were trained on them, so the "
                "validation scores favour those trees. Pass X_val, y_val, qid_val, or fit "
                "from scratch with early stopping on.",
                UserWarning,
                stacklevel=6,
            )
        self._validation_queries_unseen = hold_out and unseen_so_far

    def _binned_validation_set(self, X_val, y_val, qid_val):
        """A validated validation set as the booster takes it: binned rows
        grouped by query, labels, offsets."""
        val_order, val_offsets, _ = group_queries(qid_val)
        return (
            self._bin_mapper.transform(X_val, row_order=val_order),
            y_val[val_order],
            val_offsets,
        )

    def _boost(self, training, *, objective_name, baseline, validation, warm, largest_label):
        """Run the boosting loop on prepared training data (in this process or
        on Dask workers) and set the fitted attributes. ``largest_label`` is
        that of all training and validation rows (ERR's ``max_grade``)."""
        bin_mapper = self._bin_mapper
        if not warm:
            self._booster = Booster(
                objective_name=objective_name,
                baseline=baseline,
                n_features=self.n_features_in_,
                missing_values_bin_idx=bin_mapper.missing_values_bin_idx_,
            )
        self._booster.boost(
            training,
            n_iterations=self.n_estimators,
            bin_mapper=bin_mapper,
            tree_params=self._tree_params(),
            learning_rate=self.learning_rate,
            max_features=self.max_features,
            subsample=self.subsample,
            random_seed=self._random_seed,
            validation=validation,
            metric=scoring_metric(self.scoring, self.validation_ndcg_k, float(largest_label),
                                  self._gain_table()),
            n_iter_no_change=self.n_iter_no_change if self.do_early_stopping_ else None,
            tol=self.tol,
            verbose=self.verbose,
            small_trainset_rows=_SMALL_TRAINSET_ROWS,
        )
        self.n_iter_ = self._booster.n_trees
        self.train_score_ = self._booster.train_scores
        self.validation_score_ = self._booster.validation_scores
        self.objective_ = objective_name
        return self

    def _fit_bin_mapper(self, X, train_rows):
        rng = np.random.default_rng([self._random_seed, 1])
        rows = train_rows
        if rows.shape[0] > _BINNING_SUBSAMPLE:
            rows = np.sort(rng.choice(rows, _BINNING_SUBSAMPLE, replace=False))
        # The subsample is drawn here, from query-ordered training rows, so that
        # permuting whole queries in the input gives the same thresholds.
        return BinMapper(max_bins=self.max_bins, subsample=None,
                         is_categorical=self.is_categorical_).fit(X, sample_rows=rows)

    def _tree_params(self):
        return dict(
            max_leaf_nodes=self.max_leaf_nodes,
            max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf,
            min_hessian_to_split=self.min_hessian_to_split,
            l2_regularization=self.l2_regularization,
        )

    def _make_objective(self, y, offsets, sample_weight, **row_params):
        objective_class = OBJECTIVES[self._objective_name]
        return objective_class(y, offsets, sample_weight, **self._objective_params(), **row_params)

    # -- prediction -------------------------------------------------------

    def predict(self, X):
        """Relevance scores, one per row; higher means ranked higher.

        Scores are comparable only within a query; ``predict`` needs no query
        ids (use :meth:`rank` for per-query ranks).

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            A ``"qid"`` column of a DataFrame is ignored.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "_booster")
        X, _ = resolve_qid(X, None)
        X = self._validate_X(X)
        with numba_threads(self.n_jobs):
            return self._booster.predict(X)

    def _tree_ensemble(self):
        """The fitted trees as the neutral :class:`TreeEnsemble` view."""
        check_is_fitted(self, "_booster")
        return self._booster.ensemble(
            feature_names=getattr(self, "feature_names_in_", None),
            missing_in_training=self._bin_mapper.has_missing_values_,
        )

    def save_model(self, path):
        """Write the fitted ranker to a file, without pickle.

        The file is a zip of ``model.json`` and plain ``.npy`` arrays that
        :func:`sklearn_ltr.load_model` reads back without executing code; see
        :mod:`sklearn_ltr.persistence` for the format.

        Parameters
        ----------
        path : str, path-like or binary file object
            Where to write the model.
        """
        _save_model(self, path)

    def staged_predict(self, X):
        """Scores after each boosting iteration.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)

        Yields
        ------
        scores : ndarray of shape (n_samples,)
            Scores of the model made of the first 1, 2, ... trees.
        """
        check_is_fitted(self, "_booster")
        X, _ = resolve_qid(X, None)
        X = self._validate_X(X)
        stages = self._booster.staged_predict(X)
        # Numba's threads are set for each stage only: between stages the
        # caller's code runs with its own.
        while True:
            with numba_threads(self.n_jobs):
                scores = next(stages, None)
            if scores is None:
                return
            yield scores

    @property
    def feature_importances_(self):
        """Importance of each feature, normalised to sum to 1 (all zeros
        without any split): by ``importance_type``, its total split gain
        ("gain") or its number of splits ("split").

        Returns
        -------
        importances : ndarray of shape (``n_features_in_``,)
        """
        check_is_fitted(self, "_booster")
        return self._booster.feature_importances(self.importance_type)


def fitted_tree_ensemble(model, *, caller):
    """The :class:`TreeEnsemble` of a fitted ranker of ours, for the
    exporters and inspection; a clear error for anything else."""
    if not isinstance(model, BaseGBRanker):
        hint = ""
        if hasattr(model, "steps"):
            hint = (
                " For a Pipeline, pass its last step (pipeline[-1]) and apply the other "
                "steps before the model where it is served."
            )
        raise TypeError(
            f"{caller} takes a fitted LambdaMARTRanker, XENDCGRanker, ListNetRanker or "
            f"CalibratedRanker (or one read by load_model); got {type(model).__name__}.{hint}"
        )
    return model._tree_ensemble()
