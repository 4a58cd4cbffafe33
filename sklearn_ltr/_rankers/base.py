"""The shared base class of the gradient-boosted rankers: parameters, the fit
glue, prediction and the persistence hook.

The rankers (``lambdamart.py``, ``listwise.py``, ``yetirank.py``,
``calibrated.py``) only choose an objective and its parameters; everything
else (grouping rows by query, the query-aware validation split, binning, the
boosting loop) lives here and in ``_gbdt/booster.py``. Input validation and
preparation are in ``input.py``, the query-aware ``score`` and ``rank`` in
``mixin.py``.
"""

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._gbdt.binning import BinMapper
from .._gbdt.booster import Booster, TrainingData
from .._gbdt.category_bins import MIN_CATEGORY_ROWS
from .._gbdt.grower import GROW_POLICIES
from .._objectives import OBJECTIVES
from .._objectives.multi_objective import check_secondary_labels
from .._objectives.unbiased_lambdarank import check_positions
from .._utils.queries import (
    group_queries,
    resolve_qid,
    rows_of_queries,
    split_queries,
)
from .._utils.stacklevel import stacklevel_outside
from .._utils.threads import numba_threads
from ..exceptions import CategoryPoolingWarning
from .early_stopping_metric import check_scoring, scoring_metric
from .foreign_names import checking_foreign_names, foreign_name_hint, foreign_value_hint
from .input import RankerInputMixin
from .mixin import RankerMixin
from .model_file import save_ranker
from .registry import model_classes
from .target_statistics import TargetStatisticsMixin
from .tree_shape import LEAF_WISE_LEAVES, check_warm_start_constraints, tree_params

__all__ = ["BaseGBRanker", "RankerMixin", "fitted_tree_ensemble"]

# Rows drawn to compute bin thresholds: quantiles of 200k rows are as good as
# those of all rows, and sorting 2M+ rows per feature is not free.
_BINNING_SUBSAMPLE = 200_000
# Rows used to report the training NDCG each iteration (as HistGradientBoosting
# does with its 10k "small trainset"): the full training set would cost more
# than the tree itself on large data.
_SMALL_TRAINSET_ROWS = 10_000


class BaseGBRanker(RankerMixin, RankerInputMixin, TargetStatisticsMixin, BaseEstimator):
    """Shared parameters and fit logic of the gradient-boosted rankers.

    Subclasses set ``_objective_name`` and implement ``_objective_params``.
    The defaults of ``__init__`` are the shared ones: each ranker's
    ``__init__`` repeats them (scikit-learn reads an estimator's parameters
    from its own signature), and ``tests/test_signatures.py`` keeps the
    copies equal to these.
    """

    _parameter_constraints = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_leaf_nodes": [Interval(Integral, 2, None, closed="left")],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "grow_policy": [StrOptions({"auto", *GROW_POLICIES})],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "min_hessian_to_split": [Interval(Real, 0, None, closed="left")],
        "l2_regularization": [Interval(Real, 0, None, closed="left")],
        "max_bins": [Interval(Integral, 2, 255, closed="both")],
        "categorical_features": [StrOptions({"from_dtype"}), "array-like", None],
        "target_statistics": [StrOptions({"ordered", "combinations"}), None],
        "max_features": [Interval(Real, 0, 1, closed="right")],
        "subsample": [Interval(Real, 0, 1, closed="right")],
        "monotonic_cst": ["array-like", dict, None],
        "interaction_cst": [list, tuple, StrOptions({"pairwise", "no_interactions"}), None],
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
        n_estimators=100,
        learning_rate=0.1,
        max_leaf_nodes=LEAF_WISE_LEAVES,
        max_depth=None,
        grow_policy="lossguide",
        min_samples_leaf=20,
        min_hessian_to_split=1e-3,
        l2_regularization=0.0,
        max_bins=255,
        categorical_features="from_dtype",
        target_statistics=None,
        max_features=1.0,
        subsample=1.0,
        monotonic_cst=None,
        interaction_cst=None,
        early_stopping="auto",
        validation_fraction=0.1,
        validation_ndcg_k=10,
        scoring=None,
        n_iter_no_change=10,
        tol=1e-7,
        warm_start=False,
        importance_type="gain",
        verbose=0,
        random_state=None,
        n_jobs=None,
    ):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.grow_policy = grow_policy
        self.min_samples_leaf = min_samples_leaf
        self.min_hessian_to_split = min_hessian_to_split
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins
        self.categorical_features = categorical_features
        self.target_statistics = target_statistics
        self.max_features = max_features
        self.subsample = subsample
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
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

    # -- early stopping -------------------------------------------------

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

    def _fit(self, X, y, *, qid, sample_weight, X_val, y_val, qid_val, y_secondary=None,
             position=None):
        """The body of ``fit``; ``y_secondary`` (per-row secondary labels in
        [0, 1]) and ``position`` (displayed ranks), which only
        LambdaMARTRanker exposes, reach the objective in the training rows'
        query order."""
        X, y, qid, sample_weight = self._prepare_training_data(X, y, qid, sample_weight)
        tree_params(self)  # refuse bad constraints and tree shapes before any binning
        if y_secondary is not None:
            y_secondary = check_secondary_labels(y_secondary, X.shape[0])
        if position is not None:
            position = check_positions(position, X.shape[0])
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
        X = self._with_target_statistics(X, y, train_rows, train_offsets, sample_weight)
        if not warm:
            self._bin_mapper = self._fit_bin_mapper(X, train_rows)
            warn_pooled_categories(self._bin_mapper, self)
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
        extra = {name: values[train_rows]
                 for name, values in (("y_secondary", y_secondary), ("position", position))
                 if values is not None}
        objective = self._make_objective(y_train, train_offsets, weight_train, **extra,
                                         **self._objective_state(warm))
        # Boosting reads only the binned rows and the objective: drop this
        # frame's references to the rest, so that what validation copied or
        # converted (a DataFrame, a list or integers in X: a float64 copy of
        # the whole matrix) is freed before the boosting loop allocates.
        del X, y, qid, sample_weight, y_secondary, position, X_val, y_val, qid_val, order
        del train_rows, extra
        self._boost(
            TrainingData(X_binned, objective, bin_mapper.missing_values_bin_idx_,
                         bin_mapper.n_bins_non_missing_, bin_mapper.wide_feature_columns()),
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
            self._bin_mapper.transform(self._model_input(X_val), row_order=val_order),
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
                n_features=self._n_model_columns(),
                missing_values_bin_idx=bin_mapper.missing_values_bin_idx_,
            )
        params = tree_params(self)
        check_warm_start_constraints(self, warm, params)
        self.grow_policy_ = params["grow_policy"]
        self._booster.boost(
            training,
            n_iterations=self.n_estimators,
            bin_mapper=bin_mapper,
            tree_params=self._model_tree_params(params),
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
        self._set_objective_attributes(training.fitted_attributes())
        return self

    def _set_objective_attributes(self, learned):
        """Set the attributes the objective learned (``position_bias_``) and
        drop those an earlier fit's objective set."""
        for name in getattr(self, "_objective_attributes", ()):
            if name not in learned and hasattr(self, name):
                delattr(self, name)
        for name, value in learned.items():
            setattr(self, name, value)
        self._objective_attributes = tuple(learned)

    def _fit_bin_mapper(self, X, train_rows):
        rng = np.random.default_rng([self._random_seed, 1])
        rows = train_rows
        if rows.shape[0] > _BINNING_SUBSAMPLE:
            rows = np.sort(rng.choice(rows, _BINNING_SUBSAMPLE, replace=False))
        # The subsample is drawn here, from query-ordered training rows, so that
        # permuting whole queries in the input gives the same thresholds.
        return BinMapper(max_bins=self.max_bins, subsample=None,
                         is_categorical=self._model_categorical_mask()).fit(X, sample_rows=rows)

    def _objective_state(self, warm):
        """What the objective of a fit starts from besides the data (keyword
        arguments of :meth:`_make_objective`): nothing, unless a subclass's
        objective learns estimates that a warm start continues."""
        return {}

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
        X = self._model_input(self._validate_X(X))
        with numba_threads(self.n_jobs):
            return self._booster.predict(X)

    def _tree_ensemble(self):
        """The fitted trees as the neutral :class:`TreeEnsemble` view."""
        check_is_fitted(self, "_booster")
        names = getattr(self, "feature_names_in_", None)
        statistics = self._fitted_statistics()
        if names is not None and statistics is not None:
            names = statistics.names(list(names))
        return self._booster.ensemble(
            feature_names=names,
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
        save_ranker(self, path)

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
        X = self._model_input(self._validate_X(X))
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
        return self._model_feature_importances(
            self._booster.feature_importances(self.importance_type))


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
        # From the registry, so that a new ranker is named without an edit here.
        names = sorted(model_classes())
        listed = f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else "".join(names)
        raise TypeError(
            f"{caller} takes a fitted {listed} (or one read by load_model); got "
            f"{type(model).__name__}.{hint}"
        )
    if model._fitted_statistics() is not None and caller not in _READS_TARGET_STATISTICS:
        raise ValueError(
            f"{caller} cannot serve a ranker fitted with target_statistics="
            f"{model.target_statistics!r}: its trees split on the mean label of each "
            "category, which no serving format holds. Fit with target_statistics=None to export the model."
        )
    return model._tree_ensemble()


# Readers of fitted_tree_ensemble that compute the target statistics of
# their rows through the ranker (the exporters cannot).
_READS_TARGET_STATISTICS = ("feature_contributions", "explain_pair")


def warn_pooled_categories(mapper, estimator):
    """Say which categorical features had rare categories pooled with the
    missing values (:class:`~sklearn_ltr.exceptions.CategoryPoolingWarning`),
    by the rule of :mod:`sklearn_ltr._gbdt.binning`, pointing at the first
    frame outside this package and scikit-learn: the user's ``fit`` call,
    however many wrappers lie between."""
    stacklevel = stacklevel_outside(("sklearn_ltr", "sklearn"))
    advice = (f"Their target statistics (target_statistics={estimator.target_statistics!r}) "
              "still tell them apart."
              if getattr(estimator, "target_statistics", None) is not None
              else "Group rare categories yourself if you want another rule.")
    for f, (n_categories, n_pooled, pooled_rows, rows) in mapper.pooled_categories_.items():
        names = getattr(estimator, "feature_names_in_", None)
        name = f"{names[f]!r} (column {f})" if names is not None else f"{f}"
        warnings.warn(
            f"Categorical feature {name} has {n_categories} categories; {n_pooled} of them "
            f"({pooled_rows} of the {rows} rows binned, {100 * pooled_rows / max(rows, 1):.1f}%) "
            f"are treated as missing values, which trees cannot tell apart: those beyond its "
            f"max_bins={mapper.max_bins} most frequent that were seen in fewer than "
            f"{MIN_CATEGORY_ROWS} rows. {advice}",
            CategoryPoolingWarning,
            stacklevel=stacklevel,
        )
