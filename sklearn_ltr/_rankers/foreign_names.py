"""LightGBM, XGBoost and CatBoost names, and what to write instead here.

Users coming from ``LGBMRanker`` or ``XGBRanker`` type ``num_leaves=63``,
``fit(X, y, group=sizes)`` or ``eval_set=[...]``. Python refuses such
keywords with a bare ``TypeError`` before any code of ours runs, so the
rankers check keyword arguments against :data:`FOREIGN_NAMES` first (see
``BaseGBRanker.__init_subclass__``) and name the equivalent. The same table
serves ``set_params``, the command line's ``--param`` and the parameter
checks made by ``fit`` (:func:`foreign_value_hint`).

A name is only looked up when the estimator does not know it: a real
parameter is never intercepted (``CalibratedRanker(objective=...)`` is one).
"""

import functools
import inspect
import json
import re
import reprlib
from numbers import Integral
from typing import NamedTuple

from .._utils.threads import _valid_n_jobs, numba_threads
from .registry import model_classes

__all__ = [
    "FOREIGN_NAMES",
    "Habit",
    "checking_foreign_names",
    "foreign_name_hint",
    "foreign_value_hint",
]

_LGB = "LightGBM's"
_FIXED_CATEGORICAL_RULES = (
    "categorical splits follow scikit-learn's HistGradientBoosting: categories sorted "
    "by sum_g / (sum_h + 10), at least 10 rows per sorted category, at most 32 categories on "
    "the scanned side; none of these is a parameter"
)
_XGB = "XGBoost's"
_BOTH = "LightGBM's and XGBoost's"
_CB = "CatBoost's"


class Habit(NamedTuple):
    """One LightGBM or XGBoost name.

    Attributes
    ----------
    library : str
        Where the name comes from, possessive ("LightGBM's").
    ours : str or None
        Our parameter (``kind="param"``) or ``fit`` argument (``kind="fit"``)
        of the same meaning; None if there is none.
    how : str
        One line on how to get the behaviour here; with ``ours``, a note on a
        difference in meaning (or empty).
    kind : {"param", "fit"}
        Whether ``ours`` is a constructor parameter or a ``fit`` argument.
    """

    library: str
    ours: object = None
    how: str = ""
    kind: str = "param"


_QUERIES_NOT_ROWS = "a fraction of queries, not rows, drawn for every tree"
_FEATURES_PER_TREE = "the fraction of features each tree may split on, drawn per tree"
_NO_L1 = "there is no L1 penalty on leaf values here; l2_regularization is the L2 penalty"
_NO_MIN_GAIN = (
    "there is no minimum split gain here; limit trees with max_leaf_nodes, max_depth, "
    "min_samples_leaf or min_hessian_to_split"
)
_TARGET_STATISTICS = (
    "target_statistics='ordered' adds CatBoost's ordered target statistics, the mean label "
    "of each category, with no choice of CTR types"
)
_COMBINATIONS = (
    "target_statistics='combinations' adds ordered statistics of pairs of categorical "
    "features and of each with numeric quartiles, chosen by a first fit (a fixed number, "
    "not CatBoost's greedy search per tree)"
)
_NO_BYNODE = "there is no per-node or per-level feature sampling here; max_features draws per tree"
_METRIC = (
    "early stopping watches one metric, computed by sklearn_ltr.metrics: 'ndcg@10', "
    "'map@5', 'mrr', 'err@10' or a ranking scorer"
)
_UNWEIGHTED_VALIDATION = (
    "validation rows are unweighted here; every query counts the same in the validation NDCG"
)
_OBJECTIVE_BASELINE = "training always starts from the objective's baseline"
_MONOTONE = "-1, 0 or 1 per feature, or a dict of feature name or index to -1, 0 or 1"
_ONE_MONOTONE_METHOD = (
    "there is one method here, scikit-learn's HistGradientBoosting's: after a split on a "
    "constrained feature, each child's subtree is bounded at the mid-point of the two "
    "children's values (see monotonic_cst)"
)
_NO_MONOTONE_PENALTY = "there is no penalty on splits of constrained features here"
_WARM_START = (
    "continue a fitted model with warm_start=True and a larger n_estimators, then fit "
    "again on the same data"
)

#: LightGBM / XGBoost name -> :class:`Habit`. Names that are the same here
#: (``n_estimators``, ``learning_rate``, ``subsample``, ``max_depth``,
#: ``random_state``, ``n_jobs``, ``importance_type``, ``qid``,
#: ``sample_weight``) are not listed; of those, ``subsample`` samples queries
#: rather than rows, ``max_depth`` means no limit with None rather than -1
#: (see :func:`foreign_value_hint`), and ``importance_type`` defaults to
#: "gain" and is normalised.
FOREIGN_NAMES = {
    # -- tree shape ------------------------------------------------------
    "num_leaves": Habit(_LGB, "max_leaf_nodes"),
    "depth": Habit(_CB, "max_depth", "symmetric trees have max_depth levels"),
    "iterations": Habit(_CB, "n_estimators"),
    "l2_leaf_reg": Habit(_CB, "l2_regularization"),
    "border_count": Habit(_CB, "max_bins", "at most 255 here"),
    "thread_count": Habit(_CB, "n_jobs"),
    "num_leaf": Habit(_LGB, "max_leaf_nodes"),
    "max_leaves": Habit(_BOTH, "max_leaf_nodes"),
    "min_child_samples": Habit(_LGB, "min_samples_leaf"),
    "min_data_in_leaf": Habit(_LGB, "min_samples_leaf"),
    "min_data_per_leaf": Habit(_LGB, "min_samples_leaf"),
    "min_data": Habit(_LGB, "min_samples_leaf"),
    "min_child_weight": Habit(_BOTH, "min_hessian_to_split"),
    "min_sum_hessian_in_leaf": Habit(_LGB, "min_hessian_to_split"),
    "min_sum_hessian": Habit(_LGB, "min_hessian_to_split"),
    "min_split_gain": Habit(_LGB, None, _NO_MIN_GAIN),
    "min_gain_to_split": Habit(_LGB, None, _NO_MIN_GAIN),
    "gamma": Habit(_XGB, None, _NO_MIN_GAIN),
    "max_bin": Habit(_BOTH, "max_bins", "at most 255 here"),
    "enable_categorical": Habit(
        _XGB, None, "pandas category columns are categorical by default "
        "(categorical_features='from_dtype'); declare other columns with "
        "categorical_features=[...]",
    ),
    "simple_ctr": Habit(_CB, None, _TARGET_STATISTICS),
    "combinations_ctr": Habit(_CB, None, _COMBINATIONS),
    "max_ctr_complexity": Habit(_CB, None, _COMBINATIONS),
    "cat_smooth": Habit(_LGB, None, _FIXED_CATEGORICAL_RULES),
    "cat_l2": Habit(_LGB, None, _FIXED_CATEGORICAL_RULES),
    "max_cat_threshold": Habit(_LGB, None, _FIXED_CATEGORICAL_RULES),
    "min_data_per_group": Habit(_LGB, None, _FIXED_CATEGORICAL_RULES),
    "max_cat_to_onehot": Habit(_BOTH, None, _FIXED_CATEGORICAL_RULES),
    "tree_method": Habit(_XGB, None, "trees are always histogram-based here (tree_method='hist')"),
    "boosting_type": Habit(_LGB, None, "only gradient boosting ('gbdt') is available here"),
    "boosting": Habit(_LGB, None, "only gradient boosting ('gbdt') is available here"),
    "booster": Habit(_XGB, None, "only gradient-boosted trees ('gbtree') are available here"),
    # -- regularisation and sampling -----------------------------------------
    "reg_lambda": Habit(_BOTH, "l2_regularization"),
    "lambda_l2": Habit(_LGB, "l2_regularization"),
    "lambda": Habit(_BOTH, "l2_regularization"),
    "reg_alpha": Habit(_BOTH, None, _NO_L1),
    "lambda_l1": Habit(_LGB, None, _NO_L1),
    "colsample_bytree": Habit(_BOTH, "max_features", _FEATURES_PER_TREE),
    "feature_fraction": Habit(_LGB, "max_features", _FEATURES_PER_TREE),
    "colsample_bylevel": Habit(_XGB, None, _NO_BYNODE),
    "colsample_bynode": Habit(_BOTH, None, _NO_BYNODE),
    "feature_fraction_bynode": Habit(_LGB, None, _NO_BYNODE),
    "bagging_fraction": Habit(_LGB, "subsample", _QUERIES_NOT_ROWS),
    "subsample_freq": Habit(
        _LGB, None, "subsample draws a new sample of queries for every tree "
        "(LightGBM's subsample_freq=1); subsample=1.0, the default, uses all of them"
    ),
    # -- constraints --------------------------------------------------------
    "monotone_constraints": Habit(_BOTH, "monotonic_cst", _MONOTONE),
    "monotone_constraint": Habit(_LGB, "monotonic_cst", _MONOTONE),
    "mc": Habit(_LGB, "monotonic_cst", _MONOTONE),
    "monotone_constraints_method": Habit(_LGB, None, _ONE_MONOTONE_METHOD),
    "monotone_constraining_method": Habit(_LGB, None, _ONE_MONOTONE_METHOD),
    "mc_method": Habit(_LGB, None, _ONE_MONOTONE_METHOD),
    "monotone_penalty": Habit(_LGB, None, _NO_MONOTONE_PENALTY),
    "monotone_splits_penalty": Habit(_LGB, None, _NO_MONOTONE_PENALTY),
    "ms_penalty": Habit(_LGB, None, _NO_MONOTONE_PENALTY),
    "mc_penalty": Habit(_LGB, None, _NO_MONOTONE_PENALTY),
    "interaction_constraints": Habit(
        _BOTH, "interaction_cst", "a list of groups of feature indices or names; the features "
        "that no group lists form one more group"
    ),
    "bagging_freq": Habit(
        _LGB, None, "subsample draws a new sample of queries for every tree "
        "(LightGBM's bagging_freq=1); subsample=1.0, the default, uses all of them"
    ),
    # -- boosting --------------------------------------------------------
    "num_iterations": Habit(_LGB, "n_estimators"),
    "num_boost_round": Habit(_BOTH, "n_estimators"),
    "num_trees": Habit(_LGB, "n_estimators"),
    "num_round": Habit(_LGB, "n_estimators"),
    "eta": Habit(_BOTH, "learning_rate"),
    "shrinkage_rate": Habit(_LGB, "learning_rate"),
    "objective": Habit(_BOTH, None, "objective= picks the loss; here each loss is a class"),
    "seed": Habit(_BOTH, "random_state"),
    "random_seed": Habit(_LGB, "random_state"),
    "nthread": Habit(_BOTH, "n_jobs"),
    "num_threads": Habit(_LGB, "n_jobs"),
    "verbosity": Habit(_BOTH, "verbose", "0 is silent"),
    "silent": Habit(_BOTH, "verbose", "verbose=0 is silent"),
    "missing": Habit(_XGB, None, "NaN always marks a missing value here"),
    "base_score": Habit(
        _XGB, None, "every objective starts from its own baseline (0, or the log-odds of "
        "the mean label for CalibratedRanker's sigmoid losses)"
    ),
    # -- ranking objectives ----------------------------------------------
    "sigmoid": Habit(_LGB, "sigma"),
    "lambdarank_truncation_level": Habit(_LGB, "truncation_level"),
    "lambdarank_norm": Habit(_LGB, "normalize_lambdas"),
    "lambdarank_unbiased": Habit(
        _XGB, "position_debiasing", "with fit(..., position=displayed_rank): positions are "
        "given, not read from the order of the rows within a query"
    ),
    "lambdarank_bias_norm": Habit(
        _XGB, "position_bias_norm", "read with position_debiasing='unbiased_lambdamart'"
    ),
    "lambdarank_pair_method": Habit(_XGB, "pair_method", "'topk', 'mean', or 'all' for every pair"),
    "lambdarank_num_pair_per_sample": Habit(
        _XGB, "truncation_level", "with pair_method='topk', XGBoost's default; with "
        "pair_method='mean' it is pairs_per_document"
    ),
    "lambdarank_normalization": Habit(
        _XGB, "normalize_lambdas", "which also divides pair weights by the score gap, as "
        "XGBoost's lambdarank_score_normalization"
    ),
    "lambdarank_score_normalization": Habit(
        _XGB, "normalize_lambdas", "which also rescales each query's lambdas, as XGBoost's "
        "lambdarank_normalization"
    ),
    "lambdarank_position_bias_regularization": Habit(
        _LGB, "position_bias_regularization", "read with LightGBM's method of learning an "
        "additive score offset per position, position_debiasing='additive', and fit(..., "
        "position=...)"
    ),
    # The same name, but LambdaMARTRanker's only: the others get a pointer.
    "label_gain": Habit(_LGB, "label_gain"),
    # -- early stopping and metrics (fit arguments in LightGBM) ---------------
    "early_stopping_rounds": Habit(
        _BOTH, "n_iter_no_change", "early stopping is on whenever X_val is given"
    ),
    "early_stopping_round": Habit(
        _LGB, "n_iter_no_change", "early stopping is on whenever X_val is given"
    ),
    "eval_at": Habit(
        _LGB, "validation_ndcg_k", "one cutoff, for early stopping; score other cutoffs with "
        "sklearn_ltr.metrics.ndcg_score(y, ranker.predict(X), qid=qid, k=k)"
    ),
    "ndcg_eval_at": Habit(_LGB, "validation_ndcg_k", "one cutoff, used by early stopping"),
    "eval_metric": Habit(_BOTH, "scoring", _METRIC),
    "metric": Habit(_LGB, "scoring", _METRIC),
    # -- fit arguments ----------------------------------------------------
    "group": Habit(
        _BOTH, "qid", "fit(X, y, qid=qid_from_group_sizes(group)) with "
        "sklearn_ltr.datasets.qid_from_group_sizes: one query id per row, rows of a query "
        "need not be contiguous", kind="fit",
    ),
    "eval_set": Habit(
        _BOTH, "X_val, y_val", "fit(X, y, qid=qid, X_val=X_val, y_val=y_val, qid_val=qid_val) "
        "with one validation set (not a list of pairs)", kind="fit",
    ),
    "eval_group": Habit(
        _BOTH, "qid_val", "fit(..., X_val=X_val, y_val=y_val, "
        "qid_val=qid_from_group_sizes(eval_group[0])) with "
        "sklearn_ltr.datasets.qid_from_group_sizes", kind="fit",
    ),
    "eval_qid": Habit(
        _XGB, "qid_val", "fit(..., X_val=X_val, y_val=y_val, qid_val=eval_qid[0])", kind="fit",
    ),
    "eval_sample_weight": Habit(_LGB, None, _UNWEIGHTED_VALIDATION, kind="fit"),
    "sample_weight_eval_set": Habit(_XGB, None, _UNWEIGHTED_VALIDATION, kind="fit"),
    "eval_names": Habit(_LGB, None, "there is one validation set, scored into "
                        "validation_score_", kind="fit"),
    "init_score": Habit(_LGB, None, _OBJECTIVE_BASELINE, kind="fit"),
    "base_margin": Habit(_XGB, None, _OBJECTIVE_BASELINE, kind="fit"),
    "init_model": Habit(_LGB, None, _WARM_START, kind="fit"),
    "xgb_model": Habit(_XGB, None, _WARM_START, kind="fit"),
    "callbacks": Habit(
        _BOTH, None, "progress is printed with verbose=1 or 2; early stopping is built in "
        "(n_iter_no_change)", kind="fit",
    ),
    "feature_name": Habit(
        _LGB, None, "feature names come from the columns of a DataFrame X "
        "(feature_names_in_)", kind="fit",
    ),
    "categorical_feature": Habit(
        _LGB, "categorical_features", "pandas category columns are categorical by default "
        "(categorical_features='from_dtype')",
    ),
    "feature_weights": Habit(_XGB, None, "features are sampled uniformly (max_features)",
                             kind="fit"),
}

# objective= values, the class with that loss and the parameters that pick
# it in that class (None: its defaults).
_OBJECTIVE_CLASSES = {
    "lambdarank": ("LambdaMARTRanker", None),
    "rank:ndcg": ("LambdaMARTRanker", None),
    "rank:pairwise": ("LambdaMARTRanker", {"target_metric": None}),
    "rank:map": ("LambdaMARTRanker", {"target_metric": "map"}),
    "rank_xendcg": ("XENDCGRanker", None),
    "xendcg": ("XENDCGRanker", None),
    "xe_ndcg": ("XENDCGRanker", None),
    "xe_ndcg_mart": ("XENDCGRanker", None),
    "xendcg_mart": ("XENDCGRanker", None),
    "listnet": ("ListNetRanker", None),
    "softmax": ("ListNetRanker", None),
    "yetirank": ("YetiRankRanker", None),
    "binary": ("CalibratedRanker", {"objective": "sigmoid"}),
    "binary:logistic": ("CalibratedRanker", {"objective": "sigmoid"}),
    "cross_entropy": ("CalibratedRanker", {"objective": "sigmoid"}),
    "xentropy": ("CalibratedRanker", {"objective": "sigmoid"}),
}
_CLASS_LIST = (
    "LambdaMARTRanker (lambdarank, rank:ndcg; target_metric=None for rank:pairwise, 'map' "
    "for rank:map), XENDCGRanker (rank_xendcg), ListNetRanker "
    "(softmax cross entropy), YetiRankRanker (CatBoost's YetiRank) or CalibratedRanker (binary, with objective='rcr', 'sigmoid', "
    "'softmax' or 'sigmoid+softmax')"
)

_repr = reprlib.Repr()
_repr.maxstring = 40
_repr.maxother = 40
_repr.maxlist = _repr.maxtuple = 5


def _spell(name, value, *, estimator, context):
    """How to set our parameter ``name`` to ``value`` in ``context``."""
    if context == "cli":
        return f"--param {name}={value}"
    if context == "set_params":
        return f"set_params({name}={_repr.repr(value)})"
    return f"{estimator}({name}={_repr.repr(value)})"


def _class_of(estimator, ranker_class):
    """Our name for ``ranker_class`` beside ``estimator``: the Dask version
    for a Dask estimator."""
    return "Dask" + ranker_class if estimator.startswith("Dask") else ranker_class


def _objective_hint(value, *, estimator, context, cli_rankers):
    key = value.lower() if isinstance(value, str) else value
    if key not in _OBJECTIVE_CLASSES:
        return (
            f"objective= picks the loss in LightGBM and XGBoost; here each loss is a class: "
            f"{_CLASS_LIST}."
        )
    target, params = _OBJECTIVE_CLASSES[key]
    params = params or {}
    target = _class_of(estimator, target)
    if target == estimator and not params:
        return f"{estimator} already optimises {value!r}: leave out objective."
    if context == "cli" and cli_rankers:
        option = {v: k for k, v in cli_rankers.items()}.get(target.removeprefix("Dask"))
        spelled = " ".join([f"--ranker {option}"] + [
            f"--param {name}={'none' if v is None else v}" for name, v in params.items()
        ])
    else:
        arguments = ", ".join(f"{name}={v!r}" for name, v in params.items())
        spelled = f"{target}({arguments})"
    return f"the loss is chosen by the class here: objective={value!r} is {spelled}."


def _classes_with(parameter, estimator):
    """Names of the ranker classes that have ``parameter`` (Dask ones beside
    a Dask ``estimator``)."""
    # From the registry, which the ranker modules fill when they are
    # imported: they import this module, so it cannot import them.
    return [
        _class_of(estimator, name)
        for name, cls in model_classes().items()
        if parameter in cls._get_param_names()
    ]


def _value_for(name, value):
    """A LightGBM/XGBoost value as our parameter takes it, or None if there
    is no direct counterpart."""
    if name in ("eval_at", "ndcg_eval_at"):
        if isinstance(value, (list, tuple)) and value:
            value = value[-1]
        return int(value) if _is_int(value) else None
    if name in ("eval_metric", "metric"):
        if isinstance(value, (list, tuple)) and value:
            value = value[-1]
        # XGBoost's "ndcg@10" and "map@5" are ours. Its trailing "-" (a query
        # without relevant documents counts 0) and LightGBM's names without a
        # cutoff (evaluated at eval_at) have no string of ours.
        if isinstance(value, str) and re.fullmatch(r"(ndcg|map)@[1-9][0-9]*", value.lower()):
            return value.lower()
        return None
    if name == "silent":
        return 0 if value else 1
    if name == "lambdarank_unbiased":
        return "unbiased_lambdamart" if value else None
    if name in ("monotone_constraints", "monotone_constraint", "mc", "interaction_constraints"):
        return _constraints_value(value)
    return value


def _constraints_value(value):
    """XGBoost's constraints as a string ("(1,0,-1)", "[[0, 1], [2]]") or
    tuples, as lists; None if a string does not read as one."""
    if isinstance(value, str):
        try:
            value = json.loads(value.replace("(", "[").replace(")", "]"))
        except ValueError:
            return None
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, list):
        return [list(v) if isinstance(v, tuple) else v for v in value]
    return value


def foreign_name_hint(name, value, *, estimator, valid, context, cli_rankers=None):
    """The how-to for a LightGBM or XGBoost keyword, or None if ``name`` is
    not one.

    Parameters
    ----------
    name : str
        The unknown keyword.
    value : object
        Its value (only short values are repeated in the hint).
    estimator : str
        Class name of the estimator that refused it.
    valid : collection of str
        The estimator's parameter names, to tell whether our equivalent
        exists on this class.
    context : {"init", "set_params", "fit", "cli"}
        Where the keyword was given: the hint spells the fix for that place.
    cli_rankers : dict of str to str, default=None
        The command line's ``--ranker`` choices (option -> class name), to
        spell ``objective=`` as ``--ranker``.

    Returns
    -------
    hint : str or None
    """
    habit = FOREIGN_NAMES.get(name)
    if habit is None:
        return None
    origin = f"{habit.library} {name}"
    if name == "objective":
        return _objective_hint(value, estimator=estimator, context=context,
                               cli_rankers=cli_rankers)
    if habit.kind == "fit":
        here = f" is fit's {habit.ours} here" if habit.ours else " has no equivalent here"
        return f"{origin}{here}: {habit.how}."
    if habit.ours is None:
        return f"{origin} has no equivalent here: {habit.how}."
    if habit.ours not in valid:
        owners = " and ".join(_classes_with(habit.ours, estimator))
        return f"{origin} is {habit.ours} here, a parameter of {owners}; {estimator} has none."
    note = f" ({habit.how})" if habit.how else ""
    ours_value = _value_for(name, value)
    if ours_value is None:
        return f"{origin} is {habit.ours} here{note}."
    spelled = _spell(habit.ours, ours_value, estimator=estimator, context=context)
    if context == "fit":
        return (
            f"{origin} is {habit.ours} here{note}, a parameter of the ranker, not of fit: "
            f"{spelled}."
        )
    return f"{origin} is {habit.ours} here{note}: {spelled}."


def foreign_value_hint(params, *, context="init"):
    """A hint for parameter values that mean something else in LightGBM or
    XGBoost, or None.

    Parameters
    ----------
    params : dict
        ``get_params(deep=False)`` of the estimator whose parameters failed
        validation.
    context : {"init", "cli"}, default="init"
        How to spell the fix.

    Returns
    -------
    hint : str or None
    """
    cli = context == "cli"
    hints = []
    max_depth = params.get("max_depth")
    if _is_int(max_depth) and max_depth <= 0:
        fix = "--param max_depth=none" if cli else "max_depth=None"
        hints.append(
            f"LightGBM's max_depth=-1 (and XGBoost's 0 with grow_policy='lossguide') mean no "
            f"limit; here that is {fix}."
        )
    early_stopping = params.get("early_stopping")
    if _is_int(early_stopping):
        fix = (f"--param early_stopping=true --param n_iter_no_change={early_stopping}" if cli
               else f"early_stopping=True, n_iter_no_change={early_stopping}")
        hints.append(
            f"LightGBM's early_stopping={early_stopping} counts rounds; here that is {fix}."
        )
    verbose = params.get("verbose")
    if _is_int(verbose) and verbose < 0:
        fix = "--param verbose=0" if cli else "verbose=0"
        hints.append(f"LightGBM's verbose={verbose} is silence; here that is {fix}.")
    grow_policy = params.get("grow_policy")
    ours = {"symmetrictree": "symmetric", "depthwise": "depthwise", "lossguide": "lossguide"}
    if isinstance(grow_policy, str) and grow_policy.lower() in ours \
            and grow_policy != ours[grow_policy.lower()]:
        value = ours[grow_policy.lower()]
        fix = f"--param grow_policy={value}" if cli else f"grow_policy={value!r}"
        hints.append(f"CatBoost's grow_policy={grow_policy!r} is {fix} here.")
    max_bins = params.get("max_bins")
    if _is_int(max_bins) and max_bins > 255:
        hints.append(
            "LightGBM's and XGBoost's max_bin may exceed 255; max_bins is at most 255 here "
            "(bins are stored in one byte; NaN gets a bin of its own)."
        )
    return " ".join(hints) or None


def _is_int(value):
    return isinstance(value, Integral) and not isinstance(value, bool)


def checking_foreign_names(method, context):
    """Wrap ``__init__`` or ``fit`` so that LightGBM and XGBoost keywords
    get a how-to instead of Python's bare ``TypeError``; a ``fit`` also runs
    on ``n_jobs`` numba threads.

    The wrapper keeps the method's signature (``functools.wraps`` sets
    ``__wrapped__``, which ``inspect.signature``, scikit-learn's
    ``_get_param_names`` and metadata routing follow), so ``get_params``,
    ``clone`` and ``set_fit_request`` see only the real parameters.
    """
    known = frozenset(inspect.signature(method).parameters)

    def check(estimator, kwargs):
        for name in kwargs:
            if name not in known:
                _refuse_foreign_keyword(estimator, name, kwargs[name], context)

    if context == "fit":
        @functools.wraps(method)
        def fit(self, *args, **kwargs):
            check(self, kwargs)
            with numba_threads(_valid_n_jobs(getattr(self, "n_jobs", None))):
                return method(self, *args, **kwargs)

        wrapper = fit
    else:
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            check(self, kwargs)
            method(self, *args, **kwargs)

    wrapper._checks_foreign_names = True
    return wrapper


def _refuse_foreign_keyword(estimator, name, value, context):
    """Raise Python's ``TypeError`` for an unknown keyword, with a how-to when
    it is a LightGBM or XGBoost name (or, given to ``fit``, a parameter of
    the ranker). Return silently otherwise: the call then raises Python's
    own error."""
    owner = type(estimator).__name__
    valid = estimator._get_param_names()
    hint = foreign_name_hint(name, value, estimator=owner, valid=valid, context=context)
    if hint is None and context == "fit" and name in valid:
        hint = (
            f"{name} is a parameter of {owner}, not of fit: {owner}({name}=...) or "
            f"ranker.set_params({name}=...)."
        )
    if hint is not None:
        where = f"{owner}.fit()" if context == "fit" else owner
        raise TypeError(f"{where} got an unexpected keyword argument {name!r}; {hint}")
