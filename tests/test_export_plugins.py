"""The LTR plugin (xgboost+json, RankLib) and Solr exports, scored by the
engines' own rules (tests/_engine_rules.py, written from their source).

The engines compare and sum in float32, so on float32 inputs every tree must
reach our leaf and the scores must equal ours to 1e-5. The probe rows reach
every split with its feature at the threshold, one float above and below,
NaN and +-inf (tests/_export_cases.py). The last tests show that a wrong
rule (``<`` for ``<=``, no Solr slack, NaN sent one way) fails them.
"""

import io
import json
from dataclasses import replace

import numpy as np
import pytest
from numpy.testing import assert_allclose

import _engine_rules as rules
from _export_cases import (RANKERS, categorical_training_data, edge_rows, fitted,
                           fitted_categorical, probe_rows, solr_reachable, training_data)
from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr._gbdt.common import NODE_DTYPE
from sklearn_ltr._gbdt.ensemble import TreeEnsemble
from sklearn_ltr.export import _ranklib, _solr, _xgboost_dump, export_model
from sklearn_ltr.export._float32 import floor32


def assert_scores_equal(theirs, ours):
    assert_allclose(theirs, ours, rtol=1e-5, atol=1e-5 * np.abs(ours).max())


def assert_our_leaves(outputs, ensemble, X):
    """Each exported tree (after the baseline leaf) gives our leaf's value."""
    assert_allclose(outputs[:, 0], np.float32(ensemble.baseline))
    ours = ensemble.nodes["value"][ensemble.tree_starts + ensemble.apply(X)]
    np.testing.assert_array_equal(outputs[:, 1:], ours.astype(np.float32))


def without_nan(X, value=0.0):
    return np.where(np.isnan(X), value, X)


def case(name, format=None):
    """A fitted ranker, its trees and float32 probe rows; for Solr, without
    the rows Solr's slack documentedly misroutes (see ``solr_reachable``)."""
    model = fitted(name)
    ensemble = model._tree_ensemble()
    X = probe_rows(name, float32=True)
    return model, ensemble, (solr_reachable(ensemble, X) if format == "solr" else X)


WRITERS = {"xgboost-dump": _xgboost_dump.plugin_definition,
           "ranklib": _ranklib.ensemble_text, "solr": _solr.model_json}


def check(format, text, ensemble):
    if format == "xgboost-dump":
        rules.check_xgboost_plugin(text, ensemble.names())
    elif format == "ranklib":
        rules.check_ranklib(text, ensemble.n_features)
    else:
        rules.check_solr(text)


def evaluate(format, text, ensemble, X, **engine):
    if format == "xgboost-dump":
        return rules.xgboost_plugin_scores(text, ensemble.names(), X, **engine)
    if format == "ranklib":
        return rules.ranklib_scores(text, X, **engine)
    return rules.solr_scores(text, X, **engine)


# -- every ranker, every format -------------------------------------------------

# (format, missing_as, what the engine puts for a missing feature)
ENGINES = [
    ("xgboost-dump", None, {}),  # NaN, routed by `missing` (o19s >= 1.5.9)
    ("xgboost-dump", 0.0, {}),  # NaN, `missing` points where 0.0 goes
    ("xgboost-dump", 0.0, {"missing": 0.0}),  # 0.0 (older plugin releases)
    ("ranklib", 0.0, {}),  # 0.0, always
    ("solr", None, {"default_value": np.nan}),  # Solr 9.2+, "defaultValue": "NaN"
    ("solr", 0.0, {"default_value": 0.0}),  # the plain form, defaultValue 0.0
]


@pytest.mark.parametrize("name", RANKERS)
@pytest.mark.parametrize("format, missing_as, engine", ENGINES)
def test_engine_reaches_our_leaves_and_scores(name, format, missing_as, engine):
    """Exactly ours on NaN where the format routes missing values, else ours
    with NaN replaced by ``missing_as``."""
    model, ensemble, X = case(name, format)
    text = WRITERS[format](ensemble, missing_as=missing_as)
    check(format, text, ensemble)
    scores, outputs = evaluate(format, text, ensemble, X, **engine)
    ours = X if missing_as is None else without_nan(X, missing_as)
    assert np.isnan(X).any() and np.isinf(X).any()
    assert_scores_equal(scores, model.predict(ours))
    assert_our_leaves(outputs, ensemble, ours)


def test_solr_says_isnullsamezero_false_only_when_routing_missing_values():
    ensemble = fitted("ListNetRanker")._tree_ensemble()
    routed = json.loads(_solr.model_json(ensemble))
    plain = json.loads(_solr.model_json(ensemble, missing_as=0.0, name="plain"))
    assert routed["params"]["isNullSameAsZero"] is False
    assert plain["name"] == "plain" and "isNullSameAsZero" not in plain["params"]
    assert '"missing"' not in json.dumps(plain)
    assert [f["name"] for f in routed["features"]] == ensemble.names()


# -- missing values: refusal, the option, models without them ------------------

def test_ranklib_refuses_a_model_that_learned_missing_values(tmp_path):
    model = fitted("LambdaMARTRanker")
    message = r"'ranklib'.*\['f0', 'f3', 'f7'\].*missing_as=0\.0"
    with pytest.raises(ValueError, match=message):
        _ranklib.ensemble_text(model._tree_ensemble())
    with pytest.raises(ValueError, match=message):
        export_model(model, tmp_path / "model.txt", "ranklib")
    assert not (tmp_path / "model.txt").exists()


@pytest.mark.parametrize("bad", [1.0, 0.1, np.nan, "zero"])
def test_missing_as_must_be_what_the_engine_can_hold(bad):
    ensemble = fitted("LambdaMARTRanker")._tree_ensemble()
    with pytest.raises(ValueError, match="'ranklib'.*missing_as"):
        _ranklib.ensemble_text(ensemble, missing_as=bad)
    if bad != 1.0:  # 1.0 is fine where the engine's value is configurable
        with pytest.raises(ValueError, match="'solr'.*missing_as"):
            _solr.model_json(ensemble, missing_as=bad)


def test_a_model_trained_without_missing_values_exports_without_the_option():
    X, y, qid = training_data()
    model = LambdaMARTRanker(n_estimators=5, random_state=0).fit(without_nan(X), y, qid=qid)
    ensemble = model._tree_ensemble()
    assert not ensemble.missing_in_training.any()
    rows = edge_rows(ensemble, without_nan(X[:100]), float32=True)
    rows = rows[~np.isnan(rows).any(axis=1)]
    ranklib = _ranklib.ensemble_text(ensemble)
    solr = _solr.model_json(ensemble)
    assert "isNullSameAsZero" not in solr and '"missing"' not in solr
    for format, text in (("ranklib", ranklib), ("solr", solr)):
        scores, outputs = evaluate(format, text, ensemble, rows)
        assert_scores_equal(scores, model.predict(rows))
        assert_our_leaves(outputs, ensemble, rows)


# -- categorical splits: refused -------------------------------------------------

@pytest.mark.parametrize("format", ["xgboost-dump", "ranklib", "solr"])
@pytest.mark.parametrize("missing_as", [None, 0.0])
def test_threshold_formats_refuse_categorical_splits(format, missing_as, tmp_path):
    """The message names the categorical features and the formats that can
    write them; nothing is written."""
    model = fitted_categorical()
    message = (rf"'{format}'.*categorical splits.*\['f1', 'f5'\].*'lightgbm', "
               r"'lightgbm-json', 'xgboost' or 'onnx'")
    with pytest.raises(ValueError, match=message):
        WRITERS[format](model._tree_ensemble(), missing_as=missing_as)
    with pytest.raises(ValueError, match=message):
        export_model(model, tmp_path / "model", format, missing_as=missing_as)
    assert not (tmp_path / "model").exists()


@pytest.mark.filterwarnings("ignore:format 'solr'.*slack:UserWarning")
def test_categorical_features_without_categorical_splits_export():
    """A categorical feature that no split tests does not stop a threshold
    format (the refusal is about splits)."""
    X, y, qid = categorical_training_data()
    X = X.copy()
    # Under 10 rows a category: too few for any to go to a side of a split.
    X[:, 1] = np.arange(X.shape[0]) % 500
    model = LambdaMARTRanker(categorical_features=[1], n_estimators=5,
                             random_state=0).fit(X, y, qid=qid)
    ensemble = model._tree_ensemble()
    assert ensemble.is_categorical[1] and not (ensemble.nodes["is_categorical"] != 0).any()
    for format, writer in WRITERS.items():
        check(format, writer(ensemble, missing_as=0.0), ensemble)


# -- Solr's slack ---------------------------------------------------------------

def test_solr_slack_compensation_gives_back_floor32_of_each_threshold():
    # Every other float32 in [2.9e-6, 3.8e-6] is out of reach (ties to even).
    three = np.float32(3e-6)
    t = np.array([0.0, 5e-7, 1e-6, 2e-6, 0.25, -3.0, 1e3, 123456.7, 1e30, -1e30,
                  np.inf, -np.inf, 1e-7, -1e-7, 1e-30,
                  np.nextafter(three, np.float32(1)), -32.0, three])
    S, gap = _solr.slack_compensated(t)
    assert S.dtype == np.float32
    with np.errstate(over="ignore"):
        stored = S + _solr.NODE_SPLIT_SLACK
    exact = gap == 0
    np.testing.assert_array_equal(stored[exact], floor32(t)[exact])
    # Large thresholds absorb the slack: they are written as they are.
    big = np.abs(t) >= 1e3
    np.testing.assert_array_equal(S[big], floor32(t)[big])
    # Near zero the slack's rounding leaves some unreachable: those are
    # counted and as near as can be.
    assert exact[:12].all() and not exact[12:17].any() and exact[17]
    assert (gap[12:15] <= 1.2e-13).all()
    assert gap[15] == np.spacing(three)  # one float32 step, as at -32:
    assert gap[16] == np.nextafter(np.float32(-32.0), np.float32(0)) + 32
    np.testing.assert_allclose(np.abs(stored[~exact] - floor32(t)[~exact]), gap[~exact])


def stumps(thresholds):
    """One stump per threshold on feature 0, NaN going left."""
    nodes = np.zeros(3 * len(thresholds), dtype=NODE_DTYPE)
    nodes["feature_idx"], nodes["left"], nodes["right"], nodes["is_leaf"] = -1, -1, -1, 1
    roots = nodes[::3]
    roots["is_leaf"], roots["feature_idx"], roots["left"], roots["right"] = 0, 0, 1, 2
    roots["num_threshold"], roots["missing_go_to_left"] = thresholds, 1
    nodes[::3] = roots
    nodes["value"][1::3], nodes["value"][2::3] = -1.0, 1.0
    return TreeEnsemble(nodes=nodes, tree_starts=np.arange(0, nodes.shape[0], 3),
                        baseline=0.5, n_features=1,
                        missing_in_training=np.zeros(1, dtype=bool))


def test_solr_warns_with_the_number_of_inexact_thresholds_and_only_they_differ():
    thresholds = np.array([1e-7, 0.5, -1e-7, 0.0, 1e-30, 7.25])
    ensemble = stumps(thresholds)
    with pytest.warns(UserWarning, match=r"'solr': 3 of 6 thresholds .* within 3.55e-14"):
        text = _solr.model_json(ensemble)
    rules.check_solr(text)
    t32 = floor32(thresholds)
    X = np.concatenate([t32, np.nextafter(t32, np.float32(np.inf)),
                        np.nextafter(t32, np.float32(-np.inf)), [0.0, -0.0, 1.0]])
    X = X.astype(np.float64)[:, None]
    _, outputs = rules.solr_scores(text, X)
    ours = ensemble.nodes["value"][ensemble.tree_starts + ensemble.apply(X)]
    differ = outputs[:, 1:] != ours
    exact = np.array([False, True, False, True, False, True])
    assert not differ[:, exact].any() and differ[:, ~exact].any()
    # Only inputs within the reported distance of a threshold differ.
    _, gap = _solr.slack_compensated(thresholds)
    rows, trees = np.nonzero(differ)
    assert (np.abs(X[rows, 0] - t32[trees]) <= gap[trees]).all()
    assert not differ[X[:, 0] == 0.0].any()  # zeros stay on their side


def test_solr_keeps_zero_on_its_side_at_thresholds_just_below_zero():
    # Between a tiny negative value and 0 the nearest reachable threshold is
    # 0 itself, which would send 0.0 left; the one below 0 is written, so
    # that 0.0 goes right as in our model (an outside check found 0.0
    # misrouted at -5e-34), at the cost of the inputs within 1.2e-13 below 0.
    thresholds = np.array([-5e-34, -1e-30, -1e-20, -1e-14, -1e-35])
    ensemble = stumps(thresholds)
    with pytest.warns(UserWarning, match=r"'solr': 5 of 5 thresholds"):
        text = _solr.model_json(ensemble)
    X = np.array([[0.0], [-0.0], [1e-40], [-1e-40], [-2e-13], [1.0], [-1.0]])
    _, outputs = rules.solr_scores(text, X)
    ours = ensemble.nodes["value"][ensemble.tree_starts + ensemble.apply(X)]
    np.testing.assert_array_equal(outputs[:, 1:], ours)
    _, gap = _solr.slack_compensated(thresholds)
    assert (gap <= 1.2e-13).all()


# -- export_model through files -------------------------------------------------

@pytest.mark.parametrize("format, options, engine", [
    ("xgboost-dump", {}, {}),
    ("ranklib", {"missing_as": 0.0}, {}),
    ("solr", {"name": "ranker-v1"}, {"default_value": np.nan}),
])
def test_export_model_round_trips_through_files(format, options, engine, tmp_path):
    model, ensemble, X = case("CalibratedRanker", format)
    names = [f"feature_{i}" for i in range(ensemble.n_features)]
    export_model(model, tmp_path / "model", format, feature_names=names, **options)
    text = (tmp_path / "model").read_text()
    buffer = io.BytesIO()
    export_model(model, buffer, format, feature_names=names, **options)
    assert buffer.getvalue().decode() == text
    scores, outputs = evaluate(format, text, replace(ensemble, feature_names=tuple(names)), X,
                               **engine)
    ours = without_nan(X) if format == "ranklib" else X
    assert_scores_equal(scores, model.predict(ours))
    assert_our_leaves(outputs, ensemble, ours)
    if format == "solr":
        assert json.loads(text)["name"] == "ranker-v1"
        assert [f["name"] for f in json.loads(text)["features"]] == names
    if format == "xgboost-dump":
        assert {"feature_0", "feature_3"} <= set(text.split('"')[1::2])


def test_export_model_rejects_options_a_format_does_not_take(tmp_path):
    model = fitted("LambdaMARTRanker")
    with pytest.raises(ValueError, match="'ranklib'.*missing_as"):
        export_model(model, tmp_path / "m", "ranklib", missing_as=0.0, name="x")


# -- the checks can fail --------------------------------------------------------

WRONG_RULES = {
    "xgboost-dump": lambda x, node: np.where(np.isnan(x), node[4], x <= node[1]),
    "ranklib": lambda x, node: x < node[1],
    "solr": lambda x, node: (x < node[1]) | (np.isnan(x) & (node[4] == "left")),
}


@pytest.mark.parametrize("format", WRONG_RULES)
def test_a_wrong_comparison_fails(format):
    model, ensemble, X = case("LambdaMARTRanker")
    text = WRITERS[format](ensemble, missing_as=0.0)
    scores, outputs = evaluate(format, text, ensemble, X, rule=WRONG_RULES[format])
    with pytest.raises(AssertionError):
        assert_our_leaves(outputs, ensemble, without_nan(X))


def test_no_slack_a_floor32_threshold_or_nan_sent_right_fails(monkeypatch):
    model, ensemble, X = case("ListNetRanker")
    names = ensemble.names()
    wrong = [  # the engine without its slack, on a compensated file
        rules.solr_scores(_solr.model_json(ensemble), X, default_value=np.nan, slack=0),
        # OpenSearch LTR 3.2 to 3.6: NaN fails `T > x` and goes to `no`
        rules.xgboost_plugin_scores(_xgboost_dump.plugin_definition(ensemble), names, X,
                                    rule=lambda x, node: node[1] > x),
    ]
    # Files written without slack compensation, or with floor32 for `<`:
    monkeypatch.setattr(_solr, "slack_compensated", lambda t: (floor32(t), np.zeros(len(t))))
    monkeypatch.setattr(_xgboost_dump, "strict_threshold32", floor32)
    wrong += [rules.solr_scores(_solr.model_json(ensemble), X, default_value=np.nan),
              rules.xgboost_plugin_scores(_xgboost_dump.plugin_definition(ensemble), names, X)]
    for _, outputs in wrong:
        with pytest.raises(AssertionError):
            assert_our_leaves(outputs, ensemble, X)


def test_checks_reject_what_the_parsers_reject():
    ensemble = fitted("LambdaMARTRanker")._tree_ensemble()
    plugin = json.loads(_xgboost_dump.plugin_definition(ensemble))
    del plugin[1]["missing"]  # o19s unboxes it into an int
    ranklib = _ranklib.ensemble_text(ensemble, missing_as=0.0)
    solr = json.loads(_solr.model_json(ensemble))
    solr["params"]["trees"][1]["root"]["threshold"] = 0.5  # a number, not a string
    broken = [
        (rules.check_xgboost_plugin, json.dumps(plugin), ensemble.names()),
        (rules.check_xgboost_plugin, _xgboost_dump.plugin_definition(ensemble),
         ensemble.names()[1:]),  # f0 not in the feature set
        (rules.check_ranklib, ranklib.replace("<feature> 1 </feature>", "<feature> 0 </feature>"),
         ensemble.n_features),  # ids are 1-based
        (rules.check_ranklib, ranklib.replace("## LambdaMART", "## Trees", 1), ensemble.n_features),
        (rules.check_solr, json.dumps(solr)),
        (rules.check_solr, _solr.model_json(ensemble).replace('"missing": "left",', "", 1)),
    ]
    for checker, *args in broken:
        with pytest.raises(AssertionError):
            checker(*args)
