"""``label_gain``: a gain per label for LambdaMART and the NDCG/DCG metrics.

Oracles: the default model and metric (a table ``2**i - 1`` must reproduce
them bit for bit, and so must any table whose gains at the labels used are
``2**y - 1``); LightGBM's ``lambdarank`` objective and ``ndcg@k`` metric with
the same ``label_gain``; hand-computed NDCG.
"""

import numpy as np
import pytest

from sklearn_ltr import LambdaMARTRanker, XENDCGRanker
from sklearn_ltr._objectives import LambdaRankObjective
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.metrics import (
    dcg_score,
    dcg_score_per_query,
    ndcg_score,
    ndcg_score_per_query,
    ndcg_scorer,
)
from sklearn_ltr.persistence import load_model, save_model

DEFAULT_TABLE = [0.0, 1.0, 3.0, 7.0, 15.0]
LINEAR = [0.0, 1.0, 2.0, 3.0, 4.0]
# Ties between labels 0 and 1 and between 3 and 4, and label 0 worth more than 0.
IRREGULAR = [0.5, 0.5, 2.0, 7.25, 7.25]
SMALL = dict(n_estimators=8, max_leaf_nodes=7, min_samples_leaf=5, random_state=0)


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=40, docs_per_query=20, n_features=8, random_state=0)
    X_val, y_val, qid_val = make_ranking(n_queries=15, docs_per_query=20, n_features=8,
                                         random_state=1)
    return X, y, qid, X_val, y_val, qid_val


def _assert_same_model(a, b):
    assert a.n_iter_ == b.n_iter_
    for ta, tb in zip(a._booster.trees, b._booster.trees, strict=True):
        assert ta.tobytes() == tb.tobytes()
    np.testing.assert_array_equal(a.train_score_, b.train_score_)
    np.testing.assert_array_equal(a.validation_score_, b.validation_score_)


# The multiple-objective options run the other objective class, whose
# lambda(S) also reads the gains.
OPTIONS = {
    "plain": {},
    "early_stopping": dict(early_stopping=True, n_iter_no_change=3, n_estimators=30),
    "gradient_leaves": dict(leaf_estimation="gradient"),
    "schedule": dict(lambda_schedule="linear", schedule_eta=0.2, leaf_estimation="gradient",
                     sigmoid_truncation=5),
}


# -- the default table is the default model ---------------------------------------------


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize(
    "table",
    [DEFAULT_TABLE, np.array(DEFAULT_TABLE), [2.0**i - 1 for i in range(12)]],
    ids=["list", "array", "longer"],
)
def test_the_default_table_gives_the_default_model_bit_for_bit(data, option, table):
    X, y, qid, X_val, y_val, qid_val = data
    assert set(np.unique(y)) == {0, 1, 2, 3, 4}
    params = {**SMALL, **OPTIONS[option]}
    fit = {} if option != "early_stopping" else dict(X_val=X_val, y_val=y_val, qid_val=qid_val)
    default = LambdaMARTRanker(**params).fit(X, y, qid=qid, **fit)
    tabled = LambdaMARTRanker(label_gain=table, **params).fit(X, y, qid=qid, **fit)
    _assert_same_model(default, tabled)
    np.testing.assert_array_equal(default.predict(X_val), tabled.predict(X_val))
    if option == "early_stopping":
        assert 1 < default.n_iter_ < 30


@pytest.mark.parametrize("option", ["plain", "schedule"])
def test_labels_too_large_for_exponential_gains_train_with_a_table(data, option):
    # Labels 300 * y, beyond the ~1000 where sums of 2**y - 1 overflow, with
    # gains 2**(i / 300) - 1: the gains of the rows are those of the default
    # on y, exactly, so the model must be the default model on y.
    X, y, qid, X_val, y_val, qid_val = data
    params = {**SMALL, **OPTIONS[option], "early_stopping": True, "n_iter_no_change": 50}
    with pytest.raises(ValueError, match=r"overflow float64 .* LambdaMARTRanker\(label_gain=...\) "
                                         "sets the gain of each"):
        LambdaMARTRanker(**params).fit(X, 300 * y, qid=qid)
    table = np.exp2(np.arange(1201) / 300) - 1
    tabled = LambdaMARTRanker(label_gain=table, **params).fit(
        X, 300 * y, qid=qid, X_val=X_val, y_val=300 * y_val, qid_val=qid_val)
    default = LambdaMARTRanker(**params).fit(X, y, qid=qid, X_val=X_val, y_val=y_val,
                                             qid_val=qid_val)
    _assert_same_model(default, tabled)


def test_other_tables_give_other_models(data):
    X, y, qid, *_ = data
    default = LambdaMARTRanker(**SMALL).fit(X, y, qid=qid).predict(X)
    for table in (LINEAR, IRREGULAR):
        other = LambdaMARTRanker(label_gain=table, **SMALL).fit(X, y, qid=qid).predict(X)
        assert not np.allclose(other, default)


# -- LightGBM's lambdarank with the same label_gain ----------------------------------------


@pytest.mark.parametrize(
    "table",
    [LINEAR, IRREGULAR, list(np.arange(41) ** 1.5)],
    ids=["linear", "irregular", "41-grades"],
)
def test_lambdas_match_lightgbm_leaf_values(table):
    """One LightGBM lambdarank tree with ``label_gain`` (Newton leaves, no
    regularisation, learning rate 1) against our per-leaf sums of the
    lambdas with the same table; as in test_objective_lambdarank, LightGBM's
    sigmoid table sets the tolerance."""
    lgb = pytest.importorskip("lightgbm", reason="LightGBM is the reference")
    rng = np.random.default_rng(5)
    n_queries, size = 60, 25
    n = n_queries * size
    X = rng.normal(size=(n, 3))
    y = rng.integers(0, len(table), n).astype(float)
    init = rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, n)
    offsets = np.arange(0, n + 1, size, dtype=np.int64)
    for k, norm, weights in [(30, True, None), (5, False, w)]:
        params = dict(
            objective="lambdarank", label_gain=list(table), lambdarank_truncation_level=k,
            lambdarank_norm=norm, sigmoid=1.3, num_leaves=6, learning_rate=1.0,
            min_data_in_leaf=1, min_sum_hessian_in_leaf=0.0, lambda_l2=0.0,
            min_data_in_bin=1, verbose=-1, num_threads=1, deterministic=True,
        )
        data = lgb.Dataset(X, y, group=[size] * n_queries, init_score=init, weight=weights)
        booster = lgb.train(params, data, num_boost_round=1)
        leaf = booster.predict(X, pred_leaf=True).ravel()
        value = booster.predict(X, raw_score=True)
        assert len(np.unique(leaf)) > 2

        def leaf_values(label_gain):
            objective = LambdaRankObjective(y, offsets, weights, sigma=1.3, truncation_level=k,
                                            normalize_lambdas=norm, label_gain=label_gain)
            grad = np.empty(n, dtype=np.float32)
            hess = np.empty(n, dtype=np.float32)
            objective.gradient_hessian(init, grad, hess)
            ours = np.empty(n)
            for leaf_id in np.unique(leaf):
                rows = leaf == leaf_id
                ours[rows] = -grad[rows].sum(dtype=np.float64) / hess[rows].sum(dtype=np.float64)
            return ours

        np.testing.assert_allclose(value, leaf_values(table), rtol=2e-3, atol=1e-6)
        # The comparison discriminates: other gains give other leaves.
        other = np.exp2(np.arange(len(table)) / 8.0) - 1
        assert not np.allclose(value, leaf_values(other), rtol=2e-2)


# -- metrics -------------------------------------------------------------------------------


def _metric_data(seed, n_labels, n_queries=25):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 30, n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    y = rng.integers(0, n_labels, qid.shape[0]).astype(float)
    y[qid == 3] = 0  # a query without relevant documents
    s = np.round(rng.normal(size=qid.shape[0]), 1)  # ties
    return y, s, qid


@pytest.mark.parametrize("ties", ["average", "stable"])
@pytest.mark.parametrize("k", [1, 5, None])
def test_the_default_table_gives_the_default_metrics_exactly(ties, k):
    y, s, qid = _metric_data(0, 5)
    common = dict(qid=qid, k=k, ties=ties)
    table = [2**i - 1 for i in range(7)]
    assert ndcg_score(y, s, **common, label_gain=table) == ndcg_score(y, s, **common)
    assert dcg_score(y, s, **common, label_gain=table) == dcg_score(y, s, **common)
    np.testing.assert_array_equal(ndcg_score_per_query(y, s, **common, label_gain=table)[1],
                                  ndcg_score_per_query(y, s, **common)[1])
    np.testing.assert_array_equal(dcg_score_per_query(y, s, **common, label_gain=table)[1],
                                  dcg_score_per_query(y, s, **common)[1])
    # And range(n) is the linear gain.
    assert ndcg_score(y, s, **common, label_gain=range(7)) == ndcg_score(y, s, **common,
                                                                       gain="linear")


def test_label_gain_by_hand():
    # One query ranked as labels 2, 0, 3, 1 with gains 0, 1, 1.5, 4: DCG@3 is
    # 1.5 + 0 + 4 / log2(4); the ideal order 3, 2, 1 gives 4 + 1.5 / log2(3)
    # + 1 / log2(4).
    y, s, qid = [2, 0, 3, 1], [0.9, 0.8, 0.7, 0.6], [1, 1, 1, 1]
    table = [0, 1, 1.5, 4]
    dcg = 1.5 + 4 / 2
    ideal = 4 + 1.5 / np.log2(3) + 1 / 2
    assert dcg_score(y, s, qid=qid, k=3, label_gain=table) == pytest.approx(dcg, rel=1e-15)
    assert ndcg_score(y, s, qid=qid, k=3, label_gain=table) == pytest.approx(dcg / ideal,
                                                                            rel=1e-15)
    # With all scores tied, "average" gives each rank the mean gain 6.5 / 4.
    assert ndcg_score(y, [0] * 4, qid=qid, k=3, label_gain=table) == pytest.approx(
        6.5 / 4 * (1 + 1 / np.log2(3) + 1 / 2) / ideal, rel=1e-15)


def test_ndcg_does_not_change_when_gains_are_scaled():
    y, s, qid = _metric_data(1, 6)
    table = np.array([0, 1, 1.5, 4, 4, 11])
    base = ndcg_score(y, s, qid=qid, label_gain=table)
    assert ndcg_score(y, s, qid=qid, label_gain=table * 1e-6) == pytest.approx(base, rel=1e-14)
    assert ndcg_score(y, s, qid=qid, label_gain=table * 3e300 / 11 / len(y)) == pytest.approx(
        base, rel=1e-14)


def test_ndcg_equals_lightgbm_ndcg_with_the_same_label_gain():
    lgb = pytest.importorskip("lightgbm", reason="LightGBM is the reference")
    for table in (IRREGULAR + [30.0], list(np.arange(41) ** 1.5)):
        y, _, qid = _metric_data(2, len(table), n_queries=80)
        y_val, _, qid_val = _metric_data(3, len(table), n_queries=40)
        rng = np.random.default_rng(4)
        X = rng.normal(size=(len(y), 4)) + y[:, None] / len(table)
        X_val = rng.normal(size=(len(y_val), 4)) + y_val[:, None] / len(table)
        params = dict(objective="lambdarank", label_gain=table, metric="ndcg",
                      eval_at=[1, 3, 10], num_leaves=7, min_data_in_leaf=5, verbose=-1,
                      num_threads=1, deterministic=True)
        groups = [np.bincount(qid), np.bincount(qid_val)]
        train = lgb.Dataset(X, y, group=groups[0])
        valid = lgb.Dataset(X_val, y_val, group=groups[1], reference=train)
        evals = {}
        booster = lgb.train(params, train, num_boost_round=5, valid_sets=[valid],
                            valid_names=["val"], callbacks=[lgb.record_evaluation(evals)])
        scores = booster.predict(X_val, raw_score=True)
        for k in (1, 3, 10):
            expected = evals["val"][f"ndcg@{k}"][-1]
            got = ndcg_score(y_val, scores, qid=qid_val, k=k, ties="stable", no_relevant=1.0,
                             label_gain=table)
            assert got == pytest.approx(expected, rel=1e-9), k
            other = np.exp2(np.arange(len(table)) / 8.0) - 1
            assert ndcg_score(y_val, scores, qid=qid_val, k=k, ties="stable",
                              label_gain=other) != pytest.approx(expected, rel=1e-6)


def test_lightgbm_ranks_the_ideal_order_by_label_hence_non_decreasing_tables():
    # With the decreasing table 0, 5, 1, LightGBM's ideal DCG puts label 2
    # first although label 1 is worth more, and its NDCG exceeds 1; we refuse
    # such tables rather than give another number.
    lgb = pytest.importorskip("lightgbm", reason="LightGBM is the reference")
    X, y = np.zeros((4, 1)), np.array([1.0, 2.0, 1.0, 0.0])
    init = np.array([1.0, 0.0, 1.0, 0.0])  # the scores: no tree can split
    params = dict(objective="lambdarank", label_gain=[0, 5, 1], metric="ndcg", eval_at=[2],
                  min_data_in_leaf=100, verbose=-1, num_threads=1)
    train = lgb.Dataset(X, y, group=[2, 2], init_score=init)
    valid = lgb.Dataset(X, y, group=[2, 2], init_score=init, reference=train)
    evals = {}
    lgb.train(params, train, num_boost_round=1, valid_sets=[valid], valid_names=["v"],
              callbacks=[lgb.record_evaluation(evals)])
    by_label = (5 + 1 / np.log2(3)) / (1 + 5 / np.log2(3))  # query 0; query 1 counts 1
    assert evals["v"]["ndcg@2"][-1] == pytest.approx((by_label + 1) / 2, rel=1e-12)
    assert by_label > 1
    with pytest.raises(ValueError, match="label_gain must be non-decreasing"):
        ndcg_score(y, init, qid=[0, 0, 1, 1], k=2, label_gain=[0, 5, 1])


def test_labels_above_the_exponential_limit_score_with_a_table():
    y = np.array([2000.0, 0.0, 1000.0, 5.0])
    s = [0.1, 0.2, 0.3, 0.4]
    with pytest.raises(ValueError, match="overflow float64 .* or a label_gain table"):
        ndcg_score(y, s, qid=[1] * 4)
    # Linear gains: DCG 5 + 1000 / log2(3) + 2000 / log2(5) of the ideal 2000
    # + 1000 / log2(3) + 5 / 2.
    got = ndcg_score(y, s, qid=[1] * 4, label_gain=np.arange(2001))
    expected = (5 + 1000 / np.log2(3) + 2000 / np.log2(5)) / (2000 + 1000 / np.log2(3) + 5 / 2)
    assert got == pytest.approx(expected, rel=1e-14)


def test_ndcg_scorer_takes_label_gain(data):
    X, y, qid, X_val, y_val, qid_val = data
    ranker = LambdaMARTRanker(label_gain=LINEAR, **SMALL).fit(X, y, qid=qid)
    scorer = ndcg_scorer(5, label_gain=LINEAR)
    expected = ndcg_score(y_val, ranker.predict(X_val), qid=qid_val, k=5, label_gain=LINEAR)
    assert scorer(ranker, X_val, y_val, qid=qid_val) == expected
    assert expected != ndcg_score(y_val, ranker.predict(X_val), qid=qid_val, k=5)


# -- the estimator's own NDCG ---------------------------------------------------------------


def test_early_stopping_uses_the_gains_and_score_keeps_the_exponential_gain(data):
    X, y, qid, X_val, y_val, qid_val = data
    ranker = LambdaMARTRanker(label_gain=IRREGULAR, validation_ndcg_k=5,
                              **{**SMALL, "n_estimators": 6}).fit(
        X, y, qid=qid, X_val=X_val, y_val=y_val, qid_val=qid_val)
    staged = list(ranker.staged_predict(X_val))
    expected = [ndcg_score(y_val, s, qid=qid_val, k=5, label_gain=IRREGULAR) for s in staged]
    np.testing.assert_allclose(ranker.validation_score_[1:len(expected) + 1], expected,
                               rtol=1e-12)
    exponential = [ndcg_score(y_val, s, qid=qid_val, k=5) for s in staged]
    assert not np.allclose(ranker.validation_score_[1:len(expected) + 1], exponential)
    predicted = ranker.predict(X_val)
    assert ranker.score(X_val, y_val, qid=qid_val) == ndcg_score(y_val, predicted, qid=qid_val)
    assert ranker.score(X_val, y_val, qid=qid_val) != ndcg_score(
        y_val, predicted, qid=qid_val, label_gain=IRREGULAR)


# -- persistence -----------------------------------------------------------------------------


@pytest.mark.parametrize("table", [IRREGULAR, np.array(IRREGULAR)], ids=["list", "array"])
def test_label_gain_survives_save_and_load(data, table, tmp_path):
    X, y, qid, *_ = data
    ranker = LambdaMARTRanker(label_gain=table, **SMALL).fit(X, y, qid=qid)
    save_model(ranker, tmp_path / "model.zip")
    loaded = load_model(tmp_path / "model.zip")
    assert loaded.label_gain == IRREGULAR and isinstance(loaded.label_gain, list)
    np.testing.assert_array_equal(loaded.predict(X), ranker.predict(X))
    # A warm start of the loaded model trains on with the same gains: its
    # 8 + 4 trees are the 12 of one fit.
    loaded.set_params(n_estimators=12, warm_start=True).fit(X, y, qid=qid)
    longer = LambdaMARTRanker(label_gain=IRREGULAR, **{**SMALL, "n_estimators": 12})
    np.testing.assert_array_equal(loaded.predict(X), longer.fit(X, y, qid=qid).predict(X))


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "table, message",
    [
        ([], "label_gain must be a non-empty 1-d array"),
        ([[0, 1], [3, 7]], "label_gain must be a non-empty 1-d array"),
        ([0, 1, np.nan, 7, 15], "label_gain contains NaN or infinity"),
        ([0, 1, np.inf, 7, 15], "label_gain contains NaN or infinity"),
        ([-1, 1, 3, 7, 15], "label_gain contains negative gains"),
        ([0, 3, 1, 7, 15], "label_gain must be non-decreasing .* label 2 has the gain 1, "
                           "below the 3 of label 1"),
        (["0", "1", "3", "7", "15"], "label_gain must be a 1-d array of numbers"),
        ([True, True, True, True, True], "label_gain must be a 1-d array of numbers"),
        ("0,1,3,7,15", "'label_gain' parameter of LambdaMARTRanker must be an array-like"),
    ],
)
def test_bad_label_gain_is_refused_naming_it(data, table, message):
    X, y, qid, *_ = data
    with pytest.raises(ValueError, match=message):
        LambdaMARTRanker(label_gain=table, n_estimators=2).fit(X, y, qid=qid)
    if not isinstance(table, str):
        with pytest.raises(ValueError, match=message):
            ndcg_score(y, np.zeros(len(y)), qid=qid, label_gain=table)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda y: np.where(y == 4, 5.0, y),
         r"y has a label of 5, but with label_gain \(of length 5\) labels must be integers in "
         r"\[0, 5\)"),
        (lambda y: np.where(y == 1, 1.5, y), "y has a label of 1.5, but with label_gain"),
        (lambda y: np.where(y == 0, -1.0, y), "y has a label of -1, but with label_gain"),
    ],
)
def test_labels_that_do_not_index_label_gain_are_refused(data, change, message):
    X, y, qid, X_val, y_val, qid_val = data
    ranker = LambdaMARTRanker(label_gain=DEFAULT_TABLE, n_estimators=2)
    with pytest.raises(ValueError, match=message):
        ranker.fit(X, change(y), qid=qid)
    with pytest.raises(ValueError, match=message.replace("y has", "y_val has")):
        ranker.fit(X, y, qid=qid, X_val=X_val, y_val=change(y_val), qid_val=qid_val)
    with pytest.raises(ValueError, match=message.replace("y has", "y_true has")):
        ndcg_score(change(y), np.zeros(len(y)), qid=qid, label_gain=DEFAULT_TABLE)
    with pytest.raises(ValueError, match=message):
        LambdaRankObjective(change(y), np.array([0, len(y)]), label_gain=DEFAULT_TABLE)


def test_gains_whose_sums_overflow_are_refused(data):
    X, y, qid, *_ = data
    table = [0, 1, 2, 3, 1e306]
    with pytest.raises(ValueError, match=f"label_gain gives y a gain of 1e.306; over {len(y)} "
                                         "rows, sums of gains overflow float64. Scale label_gain "
                                         "down"):
        LambdaMARTRanker(label_gain=table, n_estimators=2).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="label_gain gives y_true a gain of 1e.306"):
        ndcg_score(y, np.zeros(len(y)), qid=qid, label_gain=table)


def test_gain_and_label_gain_together_are_refused():
    with pytest.raises(ValueError, match="gain='linear' and label_gain both set the gains"):
        ndcg_score([1, 0], [0, 1], qid=[1, 1], gain="linear", label_gain=[0, 1])
    with pytest.raises(ValueError, match="gain='linear' and label_gain both set the gains"):
        dcg_score([1, 0], [0, 1], qid=[1, 1], gain="linear", label_gain=[0, 1])


def test_other_rankers_point_to_lambdamart():
    with pytest.raises(TypeError, match="LightGBM's label_gain is label_gain here, a parameter "
                                        "of LambdaMARTRanker; XENDCGRanker has none"):
        XENDCGRanker(label_gain=[0, 1, 3])
