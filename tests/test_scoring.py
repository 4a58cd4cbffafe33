"""The rankers' ``scoring`` (what early stopping watches and what
``train_score_``/``validation_score_`` record) and ``importance_type``.

Oracles: the public metrics of :mod:`sklearn_ltr.metrics` applied to
``staged_predict`` of a model fitted without early stopping, the stopping
rule written out here from its documentation, and LightGBM's own
``feature_importance`` of the exported model.
"""

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.metrics import make_scorer, mean_squared_error
from sklearn.utils._param_validation import InvalidParameterError

from conftest import RANKER_IDS, RANKERS, fit_labels
from sklearn_ltr import CalibratedRanker, LambdaMARTRanker, load_model
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.metrics import (
    err_score,
    make_ranking_scorer,
    map_score,
    map_scorer,
    mrr_score,
    mrr_scorer,
    ndcg_score,
    ndcg_scorer,
)

PARAMS = dict(n_estimators=80, learning_rate=0.3, max_leaf_nodes=15, min_samples_leaf=5,
              random_state=0)


@pytest.fixture(scope="module")
def split():
    """Training and validation rows; the validation rows are shuffled, so
    queries interleave, and their labels stop at 2 while training labels
    reach 4 (so ERR's max_grade shows)."""
    X, y, qid = make_ranking(n_queries=70, docs_per_query=25, n_features=10, random_state=1)
    train, val = qid < 50, qid >= 50
    perm = np.random.default_rng(0).permutation(val.sum())
    X_val, y_val, qid_val = X[val][perm], np.minimum(y[val][perm], 2.0), qid[val][perm]
    assert y[train].max() == 4 and y_val.max() == 2
    return (X[train], y[train], qid[train]), (X_val, y_val, qid_val)


def _documented_stop(curve, n_iter_no_change, tol):
    """Where the documented rule stops on ``curve`` (entry i: the model with
    i trees) and which model it keeps: (trees grown, trees kept)."""
    grown = len(curve) - 1
    for i in range(n_iter_no_change, len(curve)):
        window = curve[i - n_iter_no_change + 1:i + 1]
        if max(window) <= curve[i - n_iter_no_change] + tol:
            grown = i
            break
    return grown, 1 + int(np.argmax(curve[1:grown + 1]))


def _curve(metric, model, X, y, qid):
    """``metric`` of the model with 0, 1, ..., n_iter_ trees; no trees tie
    every row, which any constant score does too."""
    stages = [np.zeros(len(y)), *model.staged_predict(X)]
    return np.array([metric(y, s, qid) for s in stages])


# scoring -> the same metric through the public function (y, scores, qid).
CASES = {
    "map@5": lambda y, s, q: map_score(y, s, qid=q, k=5),
    "mrr": lambda y, s, q: mrr_score(y, s, qid=q),
    "ERR@10": lambda y, s, q: err_score(y, s, qid=q, k=10, max_grade=4),
    "ndcg": lambda y, s, q: ndcg_score(y, s, qid=q, k=None),
    "map_scorer": lambda y, s, q: map_score(y, s, qid=q, k=3, threshold=2),
    "negated_mrr_scorer": lambda y, s, q: -mrr_score(y, s, qid=q, k=5),
}
SCORERS = {
    "map_scorer": map_scorer(k=3, threshold=2),
    "negated_mrr_scorer": make_ranking_scorer(mrr_score, greater_is_better=False, k=5),
}


@pytest.mark.parametrize("case", CASES)
def test_early_stopping_stops_and_keeps_where_the_documented_rule_says(case, split):
    (X, y, qid), (X_val, y_val, qid_val) = split
    scoring = SCORERS.get(case, case)
    n_iter_no_change, tol = 4, 1e-3
    stopped = LambdaMARTRanker(**PARAMS, scoring=scoring, n_iter_no_change=n_iter_no_change,
                               tol=tol)
    stopped.fit(X, y, qid=qid, X_val=X_val, y_val=y_val, qid_val=qid_val)
    full = LambdaMARTRanker(**PARAMS, early_stopping=False).fit(X, y, qid=qid)

    curve = _curve(CASES[case], full, X_val, y_val, qid_val)
    grown, kept = _documented_stop(curve, n_iter_no_change, tol)
    assert grown < PARAMS["n_estimators"]  # it did stop early
    assert stopped.n_iter_ == kept
    assert_array_equal(stopped.validation_score_, curve[:grown + 1])
    # Below 10,000 rows the training sample is every training query.
    assert_array_equal(stopped.train_score_, _curve(CASES[case], full, X, y, qid)[:grown + 1])


def test_a_stop_on_another_metric_keeps_another_model(split):
    # The cases above could pass with one shared curve if the metric were
    # ignored; here the kept models differ.
    (X, y, qid), (X_val, y_val, qid_val) = split
    val = dict(X_val=X_val, y_val=y_val, qid_val=qid_val)
    kept = {scoring: LambdaMARTRanker(**PARAMS, scoring=scoring, n_iter_no_change=4, tol=1e-3)
            .fit(X, y, qid=qid, **val).n_iter_ for scoring in ("map@5", "mrr", "err@10")}
    assert len(set(kept.values())) > 1, kept


@pytest.mark.parametrize("ranker_class", RANKERS, ids=RANKER_IDS)
def test_every_ranker_records_its_scoring(ranker_class, split):
    (X, y, qid), (X_val, y_val, qid_val) = split
    y, y_val = fit_labels(ranker_class, y), fit_labels(ranker_class, y_val)
    params = dict(PARAMS, n_estimators=15, n_iter_no_change=50)
    ranker = ranker_class(**params, scoring="map@3")
    ranker.fit(X, y, qid=qid, X_val=X_val, y_val=y_val, qid_val=qid_val)
    full = ranker_class(**params, early_stopping=False).fit(X, y, qid=qid)
    metric = CASES["map@5"]
    expected = _curve(lambda y, s, q: map_score(y, s, qid=q, k=3), full, X_val, y_val, qid_val)
    assert_array_equal(ranker.validation_score_, expected)
    assert not np.array_equal(expected, _curve(metric, full, X_val, y_val, qid_val))


def test_held_out_queries_are_scored_with_the_scoring_too(split):
    (X, y, qid), _ = split
    params = dict(PARAMS, n_estimators=10, early_stopping=True, n_iter_no_change=50)
    ndcg = LambdaMARTRanker(**params).fit(X, y, qid=qid)
    mrr = LambdaMARTRanker(**params, scoring="mrr").fit(X, y, qid=qid)
    # The same held-out queries and trees (each keeps those up to its best
    # score), another metric of them.
    for a, b in zip(mrr.staged_predict(X), ndcg.staged_predict(X)):
        assert_array_equal(a, b)
    assert not np.array_equal(mrr.validation_score_, ndcg.validation_score_)
    assert mrr.validation_score_.shape == ndcg.validation_score_.shape == (11,)


@pytest.mark.parametrize("scoring, same", [
    (None, "ndcg@10"), (None, "NDCG@10"), (None, ndcg_scorer(10)), ("map@5", "MAP@5"),
    ("mrr", mrr_scorer()), ("err", "Err"),
])
def test_spellings_of_the_same_metric_give_the_same_fit(scoring, same, split):
    (X, y, qid), (X_val, y_val, qid_val) = split
    val = dict(X_val=X_val, y_val=y_val, qid_val=qid_val)
    a = LambdaMARTRanker(**PARAMS, scoring=scoring, n_iter_no_change=3).fit(X, y, qid=qid, **val)
    b = LambdaMARTRanker(**PARAMS, scoring=same, n_iter_no_change=3).fit(X, y, qid=qid, **val)
    assert a.n_iter_ == b.n_iter_
    assert_array_equal(a.validation_score_, b.validation_score_)
    assert_array_equal(a.train_score_, b.train_score_)


def test_none_means_ndcg_at_validation_ndcg_k(split):
    (X, y, qid), (X_val, y_val, qid_val) = split
    val = dict(X_val=X_val, y_val=y_val, qid_val=qid_val)
    params = dict(PARAMS, n_estimators=12, n_iter_no_change=50)
    by_k = LambdaMARTRanker(**params, validation_ndcg_k=3).fit(X, y, qid=qid, **val)
    by_name = LambdaMARTRanker(**params, scoring="ndcg@3").fit(X, y, qid=qid, **val)
    assert_array_equal(by_k.validation_score_, by_name.validation_score_)
    at_10 = LambdaMARTRanker(**params).fit(X, y, qid=qid, **val)
    assert not np.array_equal(by_k.validation_score_, at_10.validation_score_)


# -- refused values ------------------------------------------------------------------------


@pytest.mark.parametrize("scoring", [
    "ndcg@0", "ndcg@", "ndcg@-1", "ndcg@5.0", "map5", " ndcg@10", "precision@5", "auc",
    "neg_mean_squared_error",
])
def test_invalid_names_list_the_valid_forms(scoring, split):
    (X, y, qid), _ = split
    with pytest.raises(InvalidParameterError,
                       match=r"The 'scoring' parameter of LambdaMARTRanker must be None "
                             r"\(NDCG@validation_ndcg_k\); 'ndcg@k', 'map@k', 'mrr@k' or "
                             r"'err@k' for a cutoff k >= 1.*Got '"):
        LambdaMARTRanker(scoring=scoring).fit(X, y, qid=qid)


def test_scorers_without_queries_or_of_probabilities_are_refused(split):
    (X, y, qid), _ = split
    with pytest.raises(InvalidParameterError, match="make_ranking_scorer"):
        LambdaMARTRanker(scoring=make_scorer(mean_squared_error)).fit(X, y, qid=qid)
    with pytest.raises(InvalidParameterError, match="must be an instance of 'str'"):
        LambdaMARTRanker(scoring=5).fit(X, y, qid=qid)
    proba = make_ranking_scorer(map_score, response_method="predict_proba")
    with pytest.raises(InvalidParameterError, match="response_method='predict'"):
        CalibratedRanker(scoring=proba, binarize=True).fit(X, y, qid=qid)


def test_an_explicit_scoring_and_another_ndcg_cutoff_are_refused(split):
    (X, y, qid), _ = split
    with pytest.raises(InvalidParameterError,
                       match=r"scoring='map@5' and validation_ndcg_k=5, .* Leave "
                             r"validation_ndcg_k at 10, or set scoring='ndcg@5'"):
        LambdaMARTRanker(scoring="map@5", validation_ndcg_k=5).fit(X, y, qid=qid)
    # validation_ndcg_k at its default goes with any scoring.
    LambdaMARTRanker(n_estimators=2, scoring="map@5", validation_ndcg_k=10).fit(X, y, qid=qid)


# -- scorers --------------------------------------------------------------------------------


def _recording_metric(calls):
    def metric(y_true, y_score, *, qid, sample_weight=None):
        calls.append((np.array(qid), np.array(y_score), sample_weight))
        return map_score(y_true, y_score, qid=qid)
    return metric


def test_a_scorer_gets_query_ids_and_the_scores_of_the_model_being_boosted(split):
    (X, y, qid), (X_val, y_val, qid_val) = split
    calls = []
    scorer = make_ranking_scorer(_recording_metric(calls))
    ranker = LambdaMARTRanker(**dict(PARAMS, n_estimators=5), scoring=scorer,
                              n_iter_no_change=50)
    ranker.fit(X, y, qid=qid, X_val=X_val, y_val=y_val, qid_val=qid_val)
    # Per tree (and for no trees): the training sample, then the validation rows.
    assert len(calls) == 2 * 6
    val_calls = calls[1::2]
    order = np.argsort(qid_val, kind="stable")
    sizes = np.unique(qid_val, return_counts=True)[1]
    for call_qid, _, weight in val_calls:
        assert weight is None
        # One id per query, its rows together, as grouped by sorted query id.
        assert_array_equal(np.unique(call_qid, return_counts=True)[1], sizes)
        assert np.all(np.diff(call_qid) >= 0)
    assert np.ptp(val_calls[0][1]) == 0  # no trees: one score for all rows
    for (_, call_scores, _), stage in zip(val_calls[1:], ranker.staged_predict(X_val),
                                          strict=True):
        assert_array_equal(call_scores, stage[order])


def test_a_scorer_that_writes_into_the_scores_changes_nothing(split):
    (X, y, qid), (X_val, y_val, qid_val) = split

    def vandal(y_true, y_score, *, qid, sample_weight=None):
        value = map_score(y_true, y_score, qid=qid)
        y_score[:] = 0.0
        return value

    params = dict(PARAMS, n_estimators=5, n_iter_no_change=50)
    ranker = LambdaMARTRanker(**params, scoring=make_ranking_scorer(vandal))
    ranker.fit(X, y, qid=qid, X_val=X_val, y_val=y_val, qid_val=qid_val)
    # Had the writes reached the boosting loop's scores, each value would be
    # that of the last tree alone.
    full = LambdaMARTRanker(**params, early_stopping=False).fit(X, y, qid=qid)
    curve = _curve(lambda y, s, q: map_score(y, s, qid=q), full, X_val, y_val, qid_val)
    assert_array_equal(ranker.validation_score_, curve)


# -- messages ----------------------------------------------------------------------------------


@pytest.mark.parametrize("scoring, name, label", [
    (None, "NDCG@10", "NDCG@10"),
    ("map@5", "MAP@5", "MAP@5"),
    ("err", "ERR", "ERR"),
    (map_scorer(k=3), "make_ranking_scorer(map_score, k=3)", "score"),
])
def test_verbose_names_the_metric(scoring, name, label, split, capsys):
    (X, y, qid), (X_val, y_val, qid_val) = split
    ranker = LambdaMARTRanker(**PARAMS, scoring=scoring, n_iter_no_change=2, verbose=1)
    ranker.fit(X, y, qid=qid, X_val=X_val, y_val=y_val, qid_val=qid_val)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(
        f"Early stopping is on (early_stopping='auto' and X_val was given): validation {name} "
        "on X_val;")
    progress = [line for line in lines if line.startswith("[")]
    best = ranker.validation_score_[-1]
    assert progress[-1].startswith(
        f"[{len(ranker.validation_score_) - 1}/80] train {label}: "
        f"{ranker.train_score_[-1]:.5f}, validation {label}: {best:.5f}, leaves")
    assert lines[-1].startswith(f"Stopped early after {len(progress)} trees: the validation "
                                f"{name} did not improve")
    assert lines[-1].endswith(f"best validation {name} "
                              f"{ranker.validation_score_[ranker.n_iter_]:.5f} at iteration "
                              f"{ranker.n_iter_}.")


# -- importance_type ----------------------------------------------------------------------------


def test_split_importances_are_lightgbms_split_counts_normalised(split):
    pytest.importorskip("lightgbm", reason="the oracle is LightGBM's feature_importance")
    from sklearn_ltr.export import to_lightgbm

    (X, y, qid), _ = split
    gain = LambdaMARTRanker(**dict(PARAMS, n_estimators=20), early_stopping=False)
    gain.fit(X, y, qid=qid)
    booster = to_lightgbm(gain)
    counts = booster.feature_importance("split").astype(float)
    gains = booster.feature_importance("gain")
    assert counts.sum() > 0
    split_model = clone(gain).set_params(importance_type="split").fit(X, y, qid=qid)
    assert_array_equal(split_model.feature_importances_, counts / counts.sum())
    # The model text holds gains to about 8 digits.
    np.testing.assert_allclose(gain.feature_importances_, gains / gains.sum(), rtol=1e-6)
    # The parameter is read when the attribute is, not at fit.
    assert_array_equal(gain.set_params(importance_type="split").feature_importances_,
                       split_model.feature_importances_)
    assert not np.allclose(split_model.feature_importances_, gains / gains.sum())


@pytest.mark.parametrize("importance_type", ["gain", "split"])
def test_importances_without_any_split_are_zero(importance_type):
    X = np.ones((40, 3))
    y = np.tile([0.0, 1.0], 20)
    qid = np.repeat(np.arange(4), 10)
    ranker = LambdaMARTRanker(n_estimators=3, importance_type=importance_type).fit(X, y, qid=qid)
    assert_array_equal(ranker.feature_importances_, np.zeros(3))


def test_invalid_importance_type_is_refused(split):
    (X, y, qid), _ = split
    with pytest.raises(InvalidParameterError, match="'importance_type' parameter .* among {'(gain|split)', '(gain|split)'}"):
        LambdaMARTRanker(importance_type="weight").fit(X, y, qid=qid)


# -- warm start ---------------------------------------------------------------------------------


@pytest.mark.parametrize("reload", [False, True], ids=["in_memory", "loaded"])
def test_a_warm_start_with_another_scoring_does_not_mix_metrics(reload, split, tmp_path):
    (X, y, qid), (X_val, y_val, qid_val) = split
    val = dict(X_val=X_val, y_val=y_val, qid_val=qid_val)
    params = dict(PARAMS, n_estimators=6, n_iter_no_change=50)

    def first_fit(name):
        ranker = LambdaMARTRanker(**params, scoring="map@5", warm_start=True)
        ranker.fit(X, y, qid=qid, **val)
        if reload:
            ranker.save_model(tmp_path / name)
            ranker = load_model(tmp_path / name)
        return ranker

    same, changed = first_fit("same.model"), first_fit("changed.model")
    n_first = changed.n_iter_
    same.set_params(n_estimators=12).fit(X, y, qid=qid, **val)
    changed.set_params(n_estimators=12, scoring="mrr").fit(X, y, qid=qid, **val)

    full = LambdaMARTRanker(**dict(params, n_estimators=12), early_stopping=False)
    full.fit(X, y, qid=qid)
    recorded = changed.train_score_
    assert np.isnan(recorded[:n_first]).all()
    assert_array_equal(recorded[n_first:], _curve(CASES["mrr"], full, X, y, qid)[n_first:])
    # Without a change the first fit's entries stay.
    assert_array_equal(same.train_score_[:n_first + 1],
                       _curve(CASES["map@5"], full, X, y, qid)[:n_first + 1])
