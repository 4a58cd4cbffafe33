"""LightGBM and XGBoost habits: their names given to a ranker's constructor,
``fit``, ``set_params`` or the command line's ``--param`` are refused with
our equivalent (one table, ``sklearn_ltr._rankers.foreign_names.FOREIGN_NAMES``),
while the signatures, ``get_params``, ``clone``, pickling and metadata
routing see only the real parameters.

The oracles are the messages themselves (each must name the foreign name and
a fix that works: the suggested call is run), and the unchanged behaviour of
real parameters and of names outside the table.
"""

import ast
import inspect
import pickle
import re
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from conftest import RANKERS
from sklearn_ltr import CalibratedRanker, LambdaMARTRanker, ListNetRanker, XENDCGRanker
from sklearn_ltr._rankers.foreign_names import FOREIGN_NAMES, foreign_name_hint
from sklearn_ltr.cli import main
from sklearn_ltr.datasets import group_sizes, make_ranking, qid_from_group_sizes
from sklearn_ltr.exceptions import SingleQueryWarning

SMALL = dict(n_estimators=3, min_samples_leaf=2, random_state=0)


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=12, docs_per_query=8, n_features=4, random_state=0)


def _real_params(cls):
    return set(cls._get_param_names())


# -- the table --------------------------------------------------------------------


def test_every_equivalent_in_the_table_exists():
    fit_arguments = set(inspect.signature(LambdaMARTRanker.fit).parameters)
    all_params = set().union(*(_real_params(cls) for cls in RANKERS))
    for name, habit in FOREIGN_NAMES.items():
        assert habit.library in ("LightGBM's", "XGBoost's", "LightGBM's and XGBoost's",
                                 "CatBoost's"), name
        assert habit.kind in ("param", "fit"), name
        assert habit.ours is not None or habit.how, name  # something to say
        if habit.ours is None:
            continue
        targets = set(habit.ours.split(", "))
        assert targets <= (all_params if habit.kind == "param" else fit_arguments), name


@pytest.mark.parametrize("name", sorted(n for n, h in FOREIGN_NAMES.items()
                                         if h.library == "CatBoost's"))
def test_catboost_names_are_catboost_parameters(name):
    catboost = pytest.importorskip("catboost")
    X, y, qid = make_ranking(4, docs_per_query=5, n_features=3, random_state=0)
    value = {"depth": 2, "iterations": 2, "l2_leaf_reg": 1.0, "border_count": 16,
             "thread_count": 1, "simple_ctr": ["Borders"], "combinations_ctr": ["Borders"],
             "max_ctr_complexity": 2}[name]
    params = {"iterations": 2, "verbose": 0, "allow_writing_files": False, name: value}
    # CatBoost's constructor refuses names it does not know.
    assert name in inspect.signature(catboost.CatBoostRanker).parameters
    catboost.CatBoostRanker(**params).fit(X, y, group_id=qid)
    with pytest.raises(TypeError):
        catboost.CatBoostRanker(**{**params, name + "_x": value})


def test_names_that_are_the_same_here_are_not_in_the_table():
    # Intercepting them would hide a real parameter of some class.
    same = {"n_estimators", "learning_rate", "max_depth", "subsample", "random_state",
            "n_jobs", "qid", "sample_weight", "verbose", "importance_type"}
    assert not same & set(FOREIGN_NAMES)


@pytest.mark.parametrize("cls", RANKERS)
@pytest.mark.parametrize("name", sorted(FOREIGN_NAMES))
def test_every_foreign_name_gets_a_how_to_in_the_constructor(cls, name):
    if name in _real_params(cls):  # CalibratedRanker's objective: a real parameter
        assert getattr(cls(**{name: getattr(cls(), name)}), name) == getattr(cls(), name)
        return
    habit = FOREIGN_NAMES[name]
    with pytest.raises(TypeError) as info:
        cls(**{name: 1})
    message = str(info.value)
    assert message.startswith(
        f"{cls.__name__} got an unexpected keyword argument {name!r}; "
    )
    if name != "objective":
        assert f"{habit.library} {name}" in message
        assert habit.ours is None or habit.ours in message


# -- constructor ----------------------------------------------------------------------


def test_the_issue_example_word_for_word():
    with pytest.raises(TypeError) as info:
        LambdaMARTRanker(num_leaves=63)
    assert str(info.value) == (
        "LambdaMARTRanker got an unexpected keyword argument 'num_leaves'; LightGBM's "
        "num_leaves is max_leaf_nodes here: LambdaMARTRanker(max_leaf_nodes=63)."
    )


@pytest.mark.parametrize(
    "kwargs, fix",
    [
        (dict(num_leaves=63), dict(max_leaf_nodes=63)),
        (dict(min_child_samples=5), dict(min_samples_leaf=5)),
        (dict(min_data_in_leaf=5), dict(min_samples_leaf=5)),
        (dict(min_child_weight=0.5), dict(min_hessian_to_split=0.5)),
        (dict(colsample_bytree=0.8), dict(max_features=0.8)),
        (dict(feature_fraction=0.8), dict(max_features=0.8)),
        (dict(bagging_fraction=0.7), dict(subsample=0.7)),
        (dict(reg_lambda=2.0), dict(l2_regularization=2.0)),
        (dict(lambda_l2=2.0), dict(l2_regularization=2.0)),
        (dict(max_bin=63), dict(max_bins=63)),
        (dict(seed=7), dict(random_state=7)),
        (dict(random_seed=7), dict(random_state=7)),
        (dict(nthread=1), dict(n_jobs=1)),
        (dict(early_stopping_rounds=5), dict(n_iter_no_change=5)),
        (dict(eval_at=[1, 3, 5]), dict(validation_ndcg_k=5)),
        (dict(eval_metric="ndcg@3"), dict(scoring="ndcg@3")),
        (dict(metric="MAP@5"), dict(scoring="map@5")),
        (dict(sigmoid=2.0), dict(sigma=2.0)),
        (dict(lambdarank_truncation_level=10), dict(truncation_level=10)),
        (dict(lambdarank_pair_method="mean"), dict(pair_method="mean")),
        (dict(lambdarank_num_pair_per_sample=8), dict(truncation_level=8)),
        (dict(lambdarank_normalization=False), dict(normalize_lambdas=False)),
        (dict(lambdarank_score_normalization=False), dict(normalize_lambdas=False)),
        (dict(monotone_constraints=[1, 0, -1, 0]), dict(monotonic_cst=[1, 0, -1, 0])),
        (dict(monotone_constraints="(1,0,-1,0)"), dict(monotonic_cst=[1, 0, -1, 0])),
        (dict(mc=(0, 1, 0, 0)), dict(monotonic_cst=[0, 1, 0, 0])),
        (dict(interaction_constraints=[(0, 1), (2, 3)]), dict(interaction_cst=[[0, 1], [2, 3]])),
        (dict(interaction_constraints="[[0, 1], [2]]"), dict(interaction_cst=[[0, 1], [2]])),
    ],
)
def test_the_suggested_call_works(kwargs, fix, data):
    with pytest.raises(TypeError) as info:
        LambdaMARTRanker(**kwargs)
    (name, value), = fix.items()
    suggested = f"LambdaMARTRanker({name}={value!r})"
    assert str(info.value).endswith(suggested + ".")
    ranker = eval(suggested, {"LambdaMARTRanker": LambdaMARTRanker})
    assert getattr(ranker, name) == value
    X, y, qid = data
    ranker.set_params(**SMALL).fit(X, y, qid=qid)


@pytest.mark.parametrize(
    "name, message",
    [
        ("subsample_freq", "subsample_freq has no equivalent here: subsample draws a new "
                           "sample of queries for every tree"),
        ("reg_alpha", "no L1 penalty"),
        ("monotone_constraints_method", "one method here, scikit-learn's HistGradientBoosting's"),
        ("mc_penalty", "no penalty on splits of constrained features"),
        ("min_split_gain", "no minimum split gain"),
        ("colsample_bynode", "max_features draws per tree"),
        ("boosting_type", "only gradient boosting"),
    ],
)
def test_names_without_an_equivalent_say_so(name, message):
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{name}'; .*{message}"):
        LambdaMARTRanker(**{name: 1})


@pytest.mark.parametrize("value", ["ndcg@10-", "ndcg", ["map", "ndcg"]])
def test_metrics_without_an_equal_scoring_string_get_no_suggested_value(value):
    # XGBoost's "-" counts queries without relevant documents 0 (ours 1);
    # LightGBM's bare names are cut at eval_at: no string of ours is equal.
    with pytest.raises(TypeError) as info:
        LambdaMARTRanker(eval_metric=value)
    message = str(info.value)
    assert "eval_metric is scoring here" in message and "scoring=" not in message


@pytest.mark.parametrize(
    "cls, value, message",
    [
        (LambdaMARTRanker, "rank_xendcg", "objective='rank_xendcg' is XENDCGRanker()"),
        (LambdaMARTRanker, "binary", "objective='binary' is CalibratedRanker(objective='sigmoid')"),
        (XENDCGRanker, "lambdarank", "objective='lambdarank' is LambdaMARTRanker()"),
        (XENDCGRanker, "rank:ndcg", "objective='rank:ndcg' is LambdaMARTRanker()"),
        (LambdaMARTRanker, "lambdarank", "LambdaMARTRanker already optimises 'lambdarank': "
                                         "leave out objective"),
        (ListNetRanker, "rank:map", "objective='rank:map' is LambdaMARTRanker(target_metric='map')"),
        (LambdaMARTRanker, "rank:pairwise",
         "objective='rank:pairwise' is LambdaMARTRanker(target_metric=None)"),
        (LambdaMARTRanker, "huber", "here each loss is a class: LambdaMARTRanker"),
    ],
)
def test_objective_names_the_class_to_use(cls, value, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        cls(objective=value)


def test_a_real_parameter_is_never_intercepted(data):
    # CalibratedRanker has an objective of its own; LightGBM's values are
    # refused by its parameter validation, not by the table.
    assert CalibratedRanker(objective="sigmoid").objective == "sigmoid"
    X, y, qid = data
    with pytest.raises(InvalidParameterError, match="'objective' parameter of CalibratedRanker"):
        CalibratedRanker(objective="lambdarank").fit(X, (y > 0).astype(float), qid=qid)


def test_names_outside_the_table_keep_pythons_error():
    with pytest.raises(TypeError, match=r"__init__\(\) got an unexpected keyword argument "
                                        r"'n_estimator'$"):
        LambdaMARTRanker(n_estimator=5)
    with pytest.raises(TypeError, match="positional"):
        LambdaMARTRanker(5)


# -- the estimator stays a scikit-learn estimator -------------------------------------------


def _documented_defaults(cls):
    """The class docstring's Parameters section (numpydoc, written by hand):
    ``{name: default}``, each default read from its ``default=...`` text."""
    doc = inspect.cleandoc(cls.__doc__)
    section = doc.split("Parameters\n----------\n", 1)[1]
    section = re.split(r"\n\S[^\n]*\n-{3,}\n", section)[0]  # up to the next section
    entries = re.findall(r"^(\w+) : (.*(?:\\\n.*)?)$", section, flags=re.M)
    assert entries, f"no parameters found in {cls.__name__}'s docstring"
    defaults = {}
    for name, kind in entries:
        default = re.search(r"default=(.*)$", kind.replace("\\\n", ""))
        assert default, f"{cls.__name__}'s docstring gives {name} no default"
        defaults[name] = ast.literal_eval(default.group(1))
    return defaults


@pytest.mark.parametrize("cls", RANKERS)
def test_signatures_list_only_the_real_parameters(cls):
    # The real parameters are those the docstring documents and the
    # parameter validation declares, with the documented defaults.
    documented = _documented_defaults(cls)
    init = inspect.signature(cls)
    assert set(init.parameters) == set(documented) == set(cls._parameter_constraints)
    assert all(p.kind is p.KEYWORD_ONLY for p in init.parameters.values())
    assert {name: p.default for name, p in init.parameters.items()} == documented
    assert cls().get_params() == documented
    fit = inspect.signature(cls.fit)
    assert list(fit.parameters)[:3] == ["self", "X", "y"]
    assert "qid" in fit.parameters and "sample_weight" in fit.parameters  # DESIGN.md section 3
    assert not any(p.kind is p.VAR_KEYWORD for p in fit.parameters.values())
    # The wrappers are installed once per method, and keep the docstrings.
    assert not hasattr(cls.__init__.__wrapped__, "_checks_foreign_names")
    assert cls.fit.__doc__.startswith("Fit the ranker")


@pytest.mark.parametrize("cls", RANKERS)
def test_clone_pickle_and_routing_are_unchanged(cls, data):
    # What must come back is what was set, and the documented defaults for
    # the rest; a fitted copy predicts what the original predicts.
    X, y, qid = data
    y = (y > 0).astype(float) if cls is CalibratedRanker else y
    ranker = cls(max_leaf_nodes=7, n_jobs=1, **SMALL)
    expected = {**_documented_defaults(cls), "max_leaf_nodes": 7, "n_jobs": 1, **SMALL}
    assert clone(ranker).get_params() == expected
    assert pickle.loads(pickle.dumps(ranker)).get_params() == expected
    ranker.fit(X, y, qid=qid)
    copy = pickle.loads(pickle.dumps(ranker))
    assert copy.get_params() == expected
    np.testing.assert_array_equal(copy.predict(X), ranker.predict(X))
    # DESIGN.md section 2: fit and score take qid by metadata routing without
    # set_*_request calls; sample_weight is routed as scikit-learn routes it.
    routing = ranker.get_metadata_routing()
    assert routing.fit.requests["qid"] is True
    assert routing.score.requests["qid"] is True
    assert "sample_weight" in routing.fit.requests


def test_warnings_of_fit_still_point_at_the_caller(data):
    X, y, _ = data
    with pytest.warns(SingleQueryWarning, match="got no query ids") as record:
        LambdaMARTRanker(**SMALL).fit(X, y)
    assert {w.filename for w in record if w.category is SingleQueryWarning} == {__file__}


# -- fit --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (lambda X, y, q: dict(group=group_sizes(q)),
         "group is fit's qid here: fit(X, y, qid=qid_from_group_sizes(group))"),
        (lambda X, y, q: dict(eval_set=[(X, y)]),
         "eval_set is fit's X_val, y_val here: fit(X, y, qid=qid, X_val=X_val, y_val=y_val, "
         "qid_val=qid_val)"),
        (lambda X, y, q: dict(eval_group=[group_sizes(q)]),
         "eval_group is fit's qid_val here"),
        (lambda X, y, q: dict(eval_qid=[q]), "eval_qid is fit's qid_val here"),
        (lambda X, y, q: dict(eval_at=[1, 3, 5]),
         "eval_at is validation_ndcg_k here (one cutoff, for early stopping; score other "
         "cutoffs with sklearn_ltr.metrics.ndcg_score(y, ranker.predict(X), qid=qid, k=k)), "
         "a parameter of the ranker, not of fit: LambdaMARTRanker(validation_ndcg_k=5)."),
        (lambda X, y, q: dict(eval_metric="ndcg@10"), "LambdaMARTRanker(scoring='ndcg@10')"),
        (lambda X, y, q: dict(early_stopping_rounds=20),
         "not of fit: LambdaMARTRanker(n_iter_no_change=20)"),
        (lambda X, y, q: dict(callbacks=[]), "callbacks has no equivalent here"),
        (lambda X, y, q: dict(init_model="model.txt"), "warm_start=True"),
        (lambda X, y, q: dict(categorical_feature=[0]),
         "not of fit: LambdaMARTRanker(categorical_features=[0])"),
        (lambda X, y, q: dict(n_estimators=5),
         "n_estimators is a parameter of LambdaMARTRanker, not of fit"),
    ],
    ids=["group", "eval_set", "eval_group", "eval_qid", "eval_at", "eval_metric",
         "early_stopping_rounds", "callbacks", "init_model", "categorical_feature",
         "our-parameter"],
)
def test_fit_names_the_fit_argument_or_parameter_to_use(kwargs, message, data):
    X, y, qid = data
    ranker = LambdaMARTRanker(**SMALL)
    with pytest.raises(TypeError, match=r"^LambdaMARTRanker\.fit\(\) got an unexpected "
                                        r"keyword argument '\w+'; .*" + re.escape(message)):
        ranker.fit(X, y, qid=qid, **kwargs(X, y, qid))
    assert not hasattr(ranker, "n_iter_")  # refused before anything was fitted


def test_group_sizes_become_qid_as_the_hint_says(data):
    X, y, qid = data
    sizes = group_sizes(qid)
    a = LambdaMARTRanker(**SMALL).fit(X, y, qid=qid_from_group_sizes(sizes))
    b = LambdaMARTRanker(**SMALL).fit(X, y, qid=qid)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("cls", RANKERS)
def test_every_ranker_fit_checks_names(cls, data):
    X, y, qid = data
    with pytest.raises(TypeError, match=rf"{cls.__name__}\.fit\(\) .*'group'; .*qid"):
        cls(**SMALL).fit(X, y, qid=qid, group=group_sizes(qid))
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'bogus'$"):
        cls(**SMALL).fit(X, y, qid=qid, bogus=1)


# -- set_params ---------------------------------------------------------------------------------


def test_set_params_names_the_equivalent():
    with pytest.raises(ValueError, match=re.escape(
        "Invalid parameter 'num_leaves' for estimator LambdaMARTRanker; LightGBM's num_leaves "
        "is max_leaf_nodes here: set_params(max_leaf_nodes=15)."
    )):
        LambdaMARTRanker().set_params(num_leaves=15)
    # Names outside the table: scikit-learn's own message.
    with pytest.raises(ValueError, match="Invalid parameter 'n_estimator' for estimator"):
        LambdaMARTRanker().set_params(n_estimator=5)
    ranker = LambdaMARTRanker().set_params(max_leaf_nodes=15, n_jobs=1)
    assert ranker.max_leaf_nodes == 15 and ranker.n_jobs == 1


def test_set_params_through_a_pipeline_and_a_search(data):
    pipe = make_pipeline(StandardScaler(), LambdaMARTRanker())
    with pytest.raises(ValueError, match="num_leaves is max_leaf_nodes here"):
        pipe.set_params(lambdamartranker__num_leaves=15)
    X, y, qid = data
    search = sklearn.model_selection.GridSearchCV(
        LambdaMARTRanker(**SMALL), {"colsample_bytree": [0.5]},
        cv=sklearn.model_selection.GroupKFold(2),
    )
    with pytest.raises(ValueError, match="colsample_bytree is max_features here"):
        search.fit(X, y, groups=qid, qid=qid)


# -- values that mean something else -------------------------------------------------------------


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(max_depth=-1), "LightGBM's max_depth=-1 .* mean no limit; here that is "
                             "max_depth=None"),
        (dict(max_depth=0), "here that is max_depth=None"),
        (dict(early_stopping=50), "here that is early_stopping=True, n_iter_no_change=50"),
        (dict(verbose=-1), "LightGBM's verbose=-1 is silence; here that is verbose=0"),
        (dict(max_bins=1023), "max_bins is at most 255 here"),
    ],
)
def test_lightgbm_values_fail_validation_with_a_hint(params, message, data):
    X, y, qid = data
    with pytest.raises(InvalidParameterError, match=f"parameter of LambdaMARTRanker must .*"
                                                    f"{message}"):
        LambdaMARTRanker(**params).fit(X, y, qid=qid)


def test_other_invalid_values_keep_scikit_learns_message(data):
    X, y, qid = data
    with pytest.raises(InvalidParameterError, match=r"Got 0 instead\.$"):
        LambdaMARTRanker(n_estimators=0).fit(X, y, qid=qid)


# -- command line ----------------------------------------------------------------------------------


def _cli_error(args, capsys, tmp_path):
    capsys.readouterr()
    # The parameters are checked before the (missing) training file is read.
    code = main(["fit", str(tmp_path / "absent.txt"), "-o", str(tmp_path / "m.model"), *args])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    return err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--param", "num_leaves=63"],
         "--param num_leaves: LambdaMARTRanker has no parameter 'num_leaves'; LightGBM's "
         "num_leaves is max_leaf_nodes here: --param max_leaf_nodes=63."),
        (["--param", "colsample_bytree=0.5"], "--param max_features=0.5"),
        (["--param", "objective=rank_xendcg"], "objective='rank_xendcg' is --ranker xendcg."),
        (["--param", "objective=binary"],
         "is --ranker calibrated --param objective=sigmoid."),
        (["--ranker", "xendcg", "--param", "objective=lambdarank"], "is --ranker lambdamart."),
        (["--param", "objective=rank:pairwise"],
         "is --ranker lambdamart --param target_metric=none."),
        (["--ranker", "xendcg", "--param", "objective=rank:map"],
         "is --ranker lambdamart --param target_metric=map."),
        (["--param", "max_depth=-1"], "here that is --param max_depth=none."),
        (["--param", "early_stopping=50"],
         "here that is --param early_stopping=true --param n_iter_no_change=50."),
        (["--param", "n_jobs=0"], "'n_jobs' parameter of LambdaMARTRanker must be"),
    ],
)
def test_command_line_params_name_the_equivalent(args, message, capsys, tmp_path):
    assert message in _cli_error(args, capsys, tmp_path)


def test_command_line_typos_still_get_close_matches(capsys, tmp_path):
    err = _cli_error(["--param", "n_estimator=5"], capsys, tmp_path)
    assert "did you mean n_estimators" in err


def test_the_hint_function_spells_the_fix_for_its_context():
    common = dict(estimator="ListNetRanker", valid=ListNetRanker._get_param_names())
    assert foreign_name_hint("num_leaves", 7, context="init", **common).endswith(
        "ListNetRanker(max_leaf_nodes=7).")
    assert foreign_name_hint("num_leaves", 7, context="set_params", **common).endswith(
        "set_params(max_leaf_nodes=7).")
    assert foreign_name_hint("num_leaves", 7, context="cli", **common).endswith(
        "--param max_leaf_nodes=7.")
    assert foreign_name_hint("not_a_lightgbm_name", 7, context="init", **common) is None
    long = foreign_name_hint("num_leaves", "x" * 1000, context="init", **common)
    assert len(long) < 200  # long values are shortened


# -- Dask ----------------------------------------------------------------------------------------


def test_dask_rankers_name_themselves_and_their_dask_equivalents(data):
    pytest.importorskip("dask")
    from sklearn_ltr.dask import DaskLambdaMARTRanker, DaskXENDCGRanker

    with pytest.raises(TypeError, match=re.escape(
        "DaskLambdaMARTRanker got an unexpected keyword argument 'num_leaves'; LightGBM's "
        "num_leaves is max_leaf_nodes here: DaskLambdaMARTRanker(max_leaf_nodes=63)."
    )):
        DaskLambdaMARTRanker(num_leaves=63)
    with pytest.raises(TypeError, match=re.escape("is DaskXENDCGRanker()")):
        DaskLambdaMARTRanker(objective="rank_xendcg")
    X, y, qid = data
    with pytest.raises(TypeError, match=r"DaskXENDCGRanker\.fit\(\) .*'eval_set'; .*X_val"):
        DaskXENDCGRanker(**SMALL).fit(X, y, qid=qid, eval_set=[(X, y)])
    assert set(inspect.signature(DaskLambdaMARTRanker).parameters) == _real_params(
        LambdaMARTRanker)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DaskLambdaMARTRanker(**SMALL).fit(X, y, qid=qid)  # in memory: the local fit


@pytest.mark.parametrize("name, ours, method", [
    ("lambdarank_position_bias_regularization", "position_bias_regularization", "additive"),
    ("lambdarank_bias_norm", "position_bias_norm", "unbiased_lambdamart"),
])
def test_position_bias_parameters_name_the_method_that_reads_them(name, ours, method, data):
    with pytest.raises(TypeError) as info:
        LambdaMARTRanker(**{name: 2.0})
    message = str(info.value)
    assert f"position_debiasing='{method}'" in message
    assert message.endswith(f"LambdaMARTRanker({ours}=2.0).")
    X, y, qid = data
    position = np.arange(y.shape[0]) % 10 + 1
    # With the method named, the suggested value fits; without it, it is refused.
    LambdaMARTRanker(**SMALL, position_debiasing=method, **{ours: 2.0}).fit(
        X, y, qid=qid, position=position)
    with pytest.raises(ValueError, match=f"read by position_debiasing='{method}' only"):
        LambdaMARTRanker(**SMALL, **{ours: 2.0}).fit(X, y, qid=qid, position=position)


def test_xgboost_unbiased_lambdarank_names_the_option_and_the_positions():
    with pytest.raises(TypeError) as info:
        LambdaMARTRanker(lambdarank_unbiased=True)
    assert "fit(..., position=displayed_rank)" in str(info.value)
    assert str(info.value).endswith(
        "LambdaMARTRanker(position_debiasing='unbiased_lambdamart').")
