"""The gradient-boosted rankers end to end, each test run for every ranker:
determinism, query order, warm start, early stopping, sparse input, staged
prediction, ranks and bad input."""

import io
import math
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from _threads import assert_fit_ran_in_parallel, needs_two_threads, parallel_kernels_only
from scipy import sparse

from conftest import fit_labels
from sklearn_ltr import CalibratedRanker, LambdaMARTRanker, YetiRankRanker, load_model
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.metrics import ndcg_score


@pytest.fixture(scope="module")
def graded_data():
    return make_ranking(n_queries=60, docs_per_query=30, n_features=12, random_state=0)


@pytest.fixture
def data(graded_data, ranker_class):
    X, y, qid = graded_data
    # Binary relevance for CalibratedRanker, so that metrics see its labels.
    return X, fit_labels(ranker_class, y), qid


def _assert_same_trees(a, b):
    assert a.n_iter_ == b.n_iter_
    for ta, tb in zip(a._booster.trees, b._booster.trees):
        # Field by field: leaves hold NaN thresholds, which compare equal only
        # in plain float arrays.
        for field in ta.dtype.names:
            np.testing.assert_array_equal(ta[field], tb[field], err_msg=field)


def _ranker(ranker_class, **params):
    base = dict(n_estimators=20, max_leaf_nodes=15, min_samples_leaf=5, random_state=0)
    if ranker_class is CalibratedRanker:
        base["binarize"] = True  # it takes binary labels; the shared data are graded
    base.update(params)
    return ranker_class(**base)


def test_learns_better_than_chance(ranker_class, data):
    X, y, qid = data
    train, test = qid < 45, qid >= 45
    ranker = _ranker(ranker_class, early_stopping=False).fit(X[train], y[train], qid=qid[train])
    learned = ndcg_score(y[test], ranker.predict(X[test]), qid=qid[test])
    constant = ndcg_score(y[test], np.zeros(test.sum()), qid=qid[test])
    assert learned > constant + 0.1
    # score() is the same metric: mean NDCG@10 with the package defaults.
    assert ranker.score(X[test], y[test], qid=qid[test]) == pytest.approx(learned)


@needs_two_threads
@pytest.mark.parametrize("params", [{}, {"subsample": 0.5, "max_features": 0.5}])
def test_same_trees_on_one_and_two_threads(ranker_class, data, params):
    X, y, qid = data
    one = _ranker(ranker_class, n_jobs=1, **params).fit(X, y, qid=qid)  # the serial twins
    # The parallel kernels, which this small data would not run by themselves.
    with parallel_kernels_only() as picked:
        two = _ranker(ranker_class, n_jobs=2, **params).fit(X, y, qid=qid)
        scores = two.predict(X)
    assert_fit_ran_in_parallel(picked)
    _assert_same_trees(one, two)
    np.testing.assert_array_equal(one.predict(X), scores)


def test_random_state_matters_with_subsampling(ranker_class, data):
    X, y, qid = data
    a = _ranker(ranker_class, subsample=0.5, random_state=0).fit(X, y, qid=qid)
    b = _ranker(ranker_class, subsample=0.5, random_state=1).fit(X, y, qid=qid)
    assert not np.array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("params", [{}, {"subsample": 0.7, "early_stopping": True}])
def test_permuting_whole_queries_gives_identical_trees(ranker_class, data, params):
    X, y, qid = data
    rng = np.random.default_rng(1)
    # Interleave the queries at random, keeping the rows of each query in
    # their relative order (which the model may depend on through ties).
    shuffled = rng.permutation(len(y))
    for q in np.unique(qid):
        members = np.flatnonzero(qid[shuffled] == q)
        shuffled[members] = np.sort(shuffled[members])
    a = _ranker(ranker_class, **params).fit(X, y, qid=qid)
    b = _ranker(ranker_class, **params).fit(X[shuffled], y[shuffled], qid=qid[shuffled])
    _assert_same_trees(a, b)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("cls_name", ["LambdaMARTRanker", "XENDCGRanker"])
def test_shuffling_rows_within_queries_changes_the_model(cls_name, data):
    """doc/user_guide/queries.rst: row order within a query matters to fit
    (LambdaMART's first tree ranks equal scores by it, XE-NDCG draws its
    gammas in it), while ties="average" metrics ignore it."""
    import sklearn_ltr
    from sklearn_ltr.metrics import ndcg_score

    X, y, qid = data
    rng = np.random.default_rng(3)
    order = np.lexsort((rng.random(len(y)), qid))  # same queries, rows shuffled inside
    cls = getattr(sklearn_ltr, cls_name)
    a = cls(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    b = cls(n_estimators=5, random_state=0).fit(X[order], y[order], qid=qid[order])
    assert not np.array_equal(a.predict(X), b.predict(X))
    scores = a.predict(X)
    assert ndcg_score(y, scores, qid=qid) == ndcg_score(y[order], scores[order], qid=qid[order])


def test_warm_start_equals_one_fit(ranker_class, data):
    X, y, qid = data
    full = _ranker(ranker_class, n_estimators=40, subsample=0.8, early_stopping=False).fit(X, y, qid=qid)
    warm = _ranker(ranker_class, n_estimators=20, subsample=0.8, early_stopping=False, warm_start=True)
    warm.fit(X, y, qid=qid)
    warm.set_params(n_estimators=40).fit(X, y, qid=qid)
    _assert_same_trees(full, warm)
    with pytest.raises(ValueError, match="n_estimators"):
        warm.set_params(n_estimators=10).fit(X, y, qid=qid)


def test_a_refused_warm_start_leaves_the_model_intact(ranker_class, data):
    X, y, qid = data
    ranker = _ranker(ranker_class, n_estimators=5, early_stopping=False, warm_start=True)
    ranker.fit(X, y, qid=qid)
    before = ranker.predict(X)
    ranker.set_params(n_estimators=8)
    with pytest.raises(ValueError, match="X has 11 features, but .* is expecting 12"):
        ranker.fit(X[:, :11], y, qid=qid)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(12)])
    named = _ranker(ranker_class, n_estimators=5, early_stopping=False, warm_start=True)
    named.fit(frame, y, qid=qid).set_params(n_estimators=8)
    with pytest.raises(ValueError, match="same order"):
        named.fit(frame[frame.columns[::-1]], y, qid=qid)
    assert ranker.n_features_in_ == 12 and ranker.n_iter_ == 5
    np.testing.assert_array_equal(ranker.predict(X), before)
    assert list(named.feature_names_in_) == list(frame.columns) and named.n_iter_ == 5


def test_early_stopping_splits_by_query_and_keeps_best(ranker_class, data):
    X, y, qid = data
    rng = np.random.default_rng(0)
    noise_y = rng.integers(0, 3, size=len(y)).astype(float)  # nothing to learn
    ranker = _ranker(ranker_class, n_estimators=200, early_stopping=True, n_iter_no_change=5).fit(X, noise_y, qid=qid)
    assert ranker.do_early_stopping_
    assert ranker.n_iter_ < 200
    scores = ranker.validation_score_
    # The kept model is the best validation iteration (at least one tree);
    # the scores go on to the iteration that stopped the fit.
    assert len(scores) == len(ranker.train_score_) > ranker.n_iter_ + 1
    assert ranker.n_iter_ == 1 + int(np.argmax(scores[1:]))


def _staged_validation_scores(ranker, X_val, y_val, qid_val):
    """NDCG of the fitted model with 0, 1, ..., n_iter_ trees."""
    baseline = np.full(len(y_val), ranker._booster.baseline)
    return [ndcg_score(y_val, s, qid=qid_val, k=10)
            for s in [baseline, *ranker.staged_predict(X_val)]]


def test_warm_start_then_early_stopping_keeps_the_fitted_trees(ranker_class, data):
    # The first fit records no validation scores; the second must score the
    # 15 trees it starts from, not take the first new score for 0 trees.
    X, y, qid = data
    train, val = qid < 45, qid >= 45
    ranker = _ranker(ranker_class, n_estimators=15, early_stopping=False, warm_start=True)
    ranker.fit(X[train], y[train], qid=qid[train])
    ranker.set_params(n_estimators=60, early_stopping=True, n_iter_no_change=3)
    ranker.fit(X[train], y[train], qid=qid[train], X_val=X[val], y_val=y[val], qid_val=qid[val])
    assert ranker.n_iter_ >= 15
    staged = _staged_validation_scores(ranker, X[val], y[val], qid[val])
    np.testing.assert_allclose(ranker.validation_score_[:ranker.n_iter_ + 1], staged, rtol=1e-12)
    assert ranker.n_iter_ == 15 + int(np.argmax(ranker.validation_score_[15:]))
    assert np.isnan(ranker.train_score_[:15]).all() and not np.isnan(ranker.train_score_[15:]).any()


def test_early_stopping_twice_keeps_scores_aligned_with_trees(ranker_class, data):
    X, y, qid = data
    rng = np.random.default_rng(0)
    noise_y = rng.permutation(y)  # little to learn: stops early and drops trees
    train, val = qid < 45, qid >= 45
    fit_args = (X[train], noise_y[train])
    val_args = dict(X_val=X[val], y_val=noise_y[val], qid_val=qid[val])
    ranker = _ranker(ranker_class, n_estimators=200, early_stopping=True, n_iter_no_change=2,
                     warm_start=True)
    ranker.fit(*fit_args, qid=qid[train], **val_args)
    first = ranker.n_iter_
    assert len(ranker.validation_score_) > first + 1
    ranker.set_params(n_iter_no_change=10).fit(*fit_args, qid=qid[train], **val_args)
    assert ranker.n_iter_ >= first
    staged = _staged_validation_scores(ranker, X[val], noise_y[val], qid[val])
    # Entry i is the kept model's first i trees, the dropped tail of the
    # first fit included in neither.
    np.testing.assert_allclose(ranker.validation_score_[:ranker.n_iter_ + 1], staged, rtol=1e-12)
    assert len(ranker.train_score_) == len(ranker.validation_score_) >= ranker.n_iter_ + 1


def test_warm_start_warns_when_held_out_queries_were_trained_on(ranker_class, data):
    X, y, qid = data
    ranker = _ranker(ranker_class, n_estimators=5, early_stopping=False, warm_start=True)
    ranker.fit(X, y, qid=qid)
    ranker.set_params(n_estimators=10, early_stopping=True)
    with pytest.warns(UserWarning, match="5 trees already fitted were trained on them"):
        ranker.fit(X, y, qid=qid)
    # Held out from the start: the same queries stay out, nothing to warn about.
    clean = _ranker(ranker_class, n_estimators=5, early_stopping=True, n_iter_no_change=50,
                    warm_start=True).fit(X, y, qid=qid)
    buffer = io.BytesIO()
    clean.save_model(buffer)
    buffer.seek(0)
    for model in (clean, load_model(buffer)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model.set_params(n_estimators=10).fit(X, y, qid=qid)


def test_explicit_validation_set(ranker_class, data):
    X, y, qid = data
    train, val = qid < 45, qid >= 45
    ranker = _ranker(ranker_class, n_estimators=30).fit(
        X[train], y[train], qid=qid[train], X_val=X[val], y_val=y[val], qid_val=qid[val]
    )
    assert ranker.do_early_stopping_
    staged = list(ranker.staged_predict(X[val]))
    expected = [ndcg_score(y[val], s, qid=qid[val]) for s in staged]
    # validation_score_[i] is the model with i trees; the staged scores are
    # the models with 1, 2, ... trees.
    np.testing.assert_allclose(ranker.validation_score_[1 : len(expected) + 1], expected)


def test_staged_predict_ends_at_predict(ranker_class, data):
    X, y, qid = data
    ranker = _ranker(ranker_class, early_stopping=False).fit(X, y, qid=qid)
    staged = list(ranker.staged_predict(X))
    assert len(staged) == ranker.n_iter_
    np.testing.assert_allclose(staged[-1], ranker.predict(X), rtol=1e-12, atol=1e-12)


def test_sparse_equals_dense(ranker_class, data):
    X, y, qid = data
    X = X.copy()
    X[X < np.quantile(X, 0.4)] = 0.0
    dense = _ranker(ranker_class, early_stopping=False).fit(X, y, qid=qid)
    csr = _ranker(ranker_class, early_stopping=False).fit(sparse.csr_matrix(X), y, qid=qid)
    _assert_same_trees(dense, csr)
    np.testing.assert_array_equal(dense.predict(X), csr.predict(sparse.csr_matrix(X)))


def test_missing_values_are_accepted_and_used(ranker_class, data):
    X, y, qid = data
    X = X.copy()
    rng = np.random.default_rng(0)
    X[rng.random(X.shape) < 0.2] = np.nan
    ranker = _ranker(ranker_class, early_stopping=False).fit(X, y, qid=qid)
    pred = ranker.predict(X)
    assert np.all(np.isfinite(pred))
    assert ranker.score(X, y, qid=qid) > ndcg_score(y, np.zeros(len(y)), qid=qid)


def test_rank_within_queries(ranker_class):
    X, y, qid = make_ranking(n_queries=5, docs_per_query=8, n_features=4, random_state=3)
    perm = np.random.default_rng(0).permutation(len(y))
    X, y, qid = X[perm], y[perm], qid[perm]
    ranker = _ranker(ranker_class, early_stopping=False, min_samples_leaf=2).fit(X, y, qid=qid)
    ranks = ranker.rank(X, qid=qid)
    scores = ranker.predict(X)
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        expected = np.empty(len(rows), dtype=int)
        expected[np.argsort(-scores[rows], kind="stable")] = np.arange(1, len(rows) + 1)
        np.testing.assert_array_equal(ranks[rows], expected)


def test_feature_importances(ranker_class, data):
    X, y, qid = data
    ranker = _ranker(ranker_class, early_stopping=False).fit(X, y, qid=qid)
    importances = ranker.feature_importances_
    assert importances.shape == (X.shape[1],)
    assert importances.sum() == pytest.approx(1.0)
    gains = np.zeros(X.shape[1])
    for tree in ranker._booster.trees:
        for node in tree[tree["is_leaf"] == 0]:
            gains[node["feature_idx"]] += max(node["gain"], 0.0)
    np.testing.assert_allclose(importances, gains / gains.sum())


def test_negative_node_gains_of_symmetric_trees_add_nothing(graded_data):
    # With an L2 penalty, a node of a symmetric tree can have a negative gain
    # of its own (the level's split is chosen by the summed gain); LightGBM
    # counts only positive gains, so importances stay non-negative.
    X, y, qid = graded_data
    ranker = YetiRankRanker(n_estimators=10, grow_policy="symmetric", max_depth=6,
                            min_samples_leaf=1, l2_regularization=5.0, early_stopping=False,
                            random_state=0).fit(X, y, qid=qid)
    splits = np.concatenate([t[t["is_leaf"] == 0] for t in ranker._booster.trees])
    assert (splits["gain"] < 0).any()
    positive = np.bincount(splits["feature_idx"], weights=np.maximum(splits["gain"], 0.0),
                           minlength=X.shape[1])
    np.testing.assert_allclose(ranker.feature_importances_, positive / positive.sum())
    assert (ranker.feature_importances_ >= 0).all()


def test_verbose_prints_one_line_per_iteration(ranker_class, data, capsys):
    X, y, qid = data
    _ranker(ranker_class, n_estimators=5, verbose=1, early_stopping=False).fit(X, y, qid=qid)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")]
    assert len(lines) == 5
    assert "train NDCG" in lines[0] and "elapsed" in lines[0]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("verbose", [1, 2])
def test_verbose_on_a_terminal_updates_one_line(data, monkeypatch, verbose):
    X, y, qid = data
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    LambdaMARTRanker(n_estimators=4, verbose=verbose, early_stopping=True,
                     validation_fraction=0.2, random_state=0).fit(X, y, qid=qid)
    out = terminal.getvalue()
    lines = out.split("\n")
    assert lines[0].startswith("Early stopping is on (early_stopping=True)")
    if verbose == 1:
        # The plan, four updates of one line, each starting with a carriage
        # return, then one newline before the summary.
        assert out.count("\r[") == 4 and out.count("\n") == 3
        assert lines[2].startswith("Reached n_estimators=4 before early stopping fired. Kept ")
        assert "[4/4]" in out.split("\r")[-1]
    else:  # every second iteration, a line each
        assert "\r" not in out
        assert [line[:5] for line in lines[1:3]] == ["[2/4]", "[4/4]"]


def test_verbose_says_why_early_stopping_runs_and_ends(capsys):
    X, y, qid = make_ranking(n_queries=150, docs_per_query=80, n_features=10, random_state=0)
    ranker = LambdaMARTRanker(n_estimators=200, verbose=5, random_state=0).fit(X, y, qid=qid)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        f"Early stopping is on (early_stopping='auto' and {X.shape[0]:,} rows > 10,000): "
        "validation NDCG@10 on 15 of 150 queries held out of training "
        "(validation_fraction=0.1); it stops after n_iter_no_change=10 iterations without "
        "an improvement above tol=1e-07."
    )
    n_grown = len(ranker.validation_score_) - 1
    assert n_grown < 200  # it did stop early
    iterations = [int(line[1:line.index("/")]) for line in lines if line.startswith("[")]
    assert iterations == [i for i in range(5, n_grown + 1, 5)] + (
        [n_grown] if n_grown % 5 else [])
    assert "(early stopping may end it sooner)" in lines[1]
    assert lines[-1] == (
        f"Stopped early after {n_grown} trees: the validation NDCG@10 did not improve by more "
        "than tol=1e-07 in the last 10 iterations (n_iter_no_change). Kept "
        f"{ranker.n_iter_} trees: best validation NDCG@10 "
        f"{ranker.validation_score_[ranker.n_iter_]:.5f} at iteration {ranker.n_iter_}."
    )
    LambdaMARTRanker(n_estimators=2, verbose=1).fit(X[:3000], y[:3000], qid=qid[:3000])
    assert capsys.readouterr().out.splitlines()[0] == (
        "Early stopping is off (early_stopping='auto' and 3,000 rows <= 10,000): "
        "fitting 2 trees.")


def test_time_left_counts_the_patience_early_stopping_still_needs():
    from sklearn_ltr._gbdt.booster import _patience_left, _should_stop, _time_left

    scores = [0.1, 0.2, 0.3, 0.3, 0.25]  # best at index 2, two iterations without gain
    assert _patience_left(scores, 3, 0.0) == 1
    assert _should_stop(scores + [0.0], 3, 0.0)
    assert _patience_left([0.1, 0.5], 3, 0.0) == 3
    assert _time_left(2.0, 10, 3) == "left 6.00-20.00s (early stopping may end it sooner)"
    assert _time_left(2.0, 2, 3) == "left ~4.00s"
    assert _time_left(2.0, 10, None) == "left ~20.00s"


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda X, y, q: (X, y[:-1], q), "inconsistent numbers of samples"),
        (lambda X, y, q: (X, y, q[:-1]), "qid has"),
        (lambda X, y, q: (X, np.where(np.arange(len(y)) == 3, np.nan, y), q), r"y contains (NaN|infinity)"),
        (lambda X, y, q: (X, np.where(np.arange(len(y)) == 3, np.inf, y), q), r"y contains (NaN|infinity)"),
        (lambda X, y, q: (X, y - 1, q), "negative"),
        (lambda X, y, q: (X, y, np.where(np.arange(len(y)) == 3, np.nan, q.astype(float))), "qid contains NaN"),
        (lambda X, y, q: (X, y + 2000, q), "overflow float64"),
    ],
)
def test_bad_input_errors(ranker_class, data, change, message):
    X, y, qid = change(*data)
    with pytest.raises(ValueError, match=message):
        _ranker(ranker_class).fit(X, y, qid=qid)


def test_predict_with_wrong_number_of_features(ranker_class, data):
    X, y, qid = data
    ranker = _ranker(ranker_class, n_estimators=2).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="features"):
        ranker.predict(X[:, :-1])


def test_validation_set_needs_labels(ranker_class, data):
    X, y, qid = data
    with pytest.raises(ValueError, match="y_val"):
        _ranker(ranker_class).fit(X, y, qid=qid, X_val=X)


# -- LambdaMARTRanker's multiple-objective options (Svore et al., WWW 2011) ----


@pytest.fixture(scope="module")
def click_data(graded_data):
    """Graded data plus secondary labels in [0, 1], a third of them zero."""
    X, y, qid = graded_data
    rng = np.random.default_rng(5)
    clicks = np.round(rng.uniform(size=len(y)), 2) * (rng.random(len(y)) > 0.3)
    return X, y, qid, clicks


def _lambdamart(**params):
    base = dict(n_estimators=15, max_leaf_nodes=15, min_samples_leaf=5, random_state=0,
                early_stopping=False)
    base.update(params)
    return LambdaMARTRanker(**base)


@pytest.mark.parametrize("params", [{}, {"subsample": 0.7, "early_stopping": True}])
def test_lambdamart_secondary_weight_zero_is_plain_lambdamart(click_data, params):
    X, y, qid, clicks = click_data
    plain = _lambdamart(**params).fit(X, y, qid=qid)
    with_clicks = _lambdamart(secondary_weight=0.0, **params).fit(X, y, qid=qid, y_secondary=clicks)
    _assert_same_trees(plain, with_clicks)
    np.testing.assert_array_equal(plain.predict(X), with_clicks.predict(X))
    assert with_clicks.objective_ == "lambdarank"


def test_lambdamart_secondary_labels_raise_training_cndcg(click_data):
    from sklearn_ltr.metrics import cndcg_score

    X, y, qid, clicks = click_data
    plain = _lambdamart().fit(X, y, qid=qid)
    tiered = _lambdamart(secondary_weight=0.5).fit(X, y, qid=qid, y_secondary=clicks)
    assert tiered.objective_ == "lambdarank_multi"
    assert cndcg_score(clicks, tiered.predict(X), qid=qid) > cndcg_score(
        clicks, plain.predict(X), qid=qid
    ) + 0.02


def test_lambdamart_y_secondary_is_reordered_with_the_queries(click_data):
    X, y, qid, clicks = click_data
    perm = np.random.default_rng(2).permutation(len(y))
    # Keep each query's rows in their relative order (ties may depend on it).
    for q in np.unique(qid):
        members = np.flatnonzero(qid[perm] == q)
        perm[members] = np.sort(perm[members])
    params = dict(secondary_weight=0.4, subsample=0.8, early_stopping=True)
    a = _lambdamart(**params).fit(X, y, qid=qid, y_secondary=clicks)
    b = _lambdamart(**params).fit(X[perm], y[perm], qid=qid[perm], y_secondary=clicks[perm])
    _assert_same_trees(a, b)


@pytest.mark.parametrize("schedule", ["linear", "exponential", "exponential_noncumulative"])
def test_lambdamart_warm_start_continues_the_schedule(click_data, schedule):
    X, y, qid, clicks = click_data
    params = dict(lambda_schedule=schedule, schedule_w0=0.1, leaf_estimation="gradient",
                  schedule_eta=0.05 if schedule == "linear" else 8.0, secondary_weight=0.2)
    full = _lambdamart(n_estimators=20, **params).fit(X, y, qid=qid, y_secondary=clicks)
    warm = _lambdamart(n_estimators=10, warm_start=True, **params)
    warm.fit(X, y, qid=qid, y_secondary=clicks)
    warm.set_params(n_estimators=20).fit(X, y, qid=qid, y_secondary=clicks)
    _assert_same_trees(full, warm)


def test_lambdamart_booster_passes_tree_indices_to_the_objective(click_data, monkeypatch):
    from sklearn_ltr._objectives import LambdaRankMultiObjective

    X, y, qid, _ = click_data
    seen = []
    original = LambdaRankMultiObjective.set_iteration

    def spy(self, iteration):
        seen.append(iteration)
        original(self, iteration)

    monkeypatch.setattr(LambdaRankMultiObjective, "set_iteration", spy)
    ranker = _lambdamart(n_estimators=4, warm_start=True, lambda_schedule="linear",
                         leaf_estimation="gradient")
    ranker.fit(X, y, qid=qid)
    ranker.set_params(n_estimators=7).fit(X, y, qid=qid)
    assert seen == [0, 1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("eta, expected_eta", [(6.0, 6.0), (None, 100.0)])
def test_lambdamart_noncumulative_schedule_weights_each_tree_by_exp_minus_eta_over_m(
    click_data, monkeypatch, eta, expected_eta
):
    # Figure 6 of Svore et al.: tree m >= 1 weighs lambda(S) by exp(-eta / m)
    # (w0 = 0 is no floor), tree 0 by w0; None is eta = 100.
    from sklearn_ltr._objectives import LambdaRankMultiObjective

    X, y, qid, _ = click_data
    seen = []
    original = LambdaRankMultiObjective.current_weight

    def spy(self):
        w = original(self)
        seen.append((self._iteration, w))
        return w

    monkeypatch.setattr(LambdaRankMultiObjective, "current_weight", spy)
    _lambdamart(n_estimators=6, lambda_schedule="exponential_noncumulative", schedule_w0=0.0,
                schedule_eta=eta, leaf_estimation="gradient").fit(X, y, qid=qid)
    assert [m for m, _ in seen] == list(range(6))
    expected = [0.0] + [math.exp(-expected_eta / m) for m in range(1, 6)]
    np.testing.assert_allclose([w for _, w in seen], expected, rtol=1e-15)


def test_lambdamart_gradient_leaves_are_mean_normalised_lambdas():
    from sklearn_ltr._objectives import LambdaRankObjective

    X, y, qid = make_ranking(n_queries=25, docs_per_query=20, n_features=5, random_state=4)
    assert np.all(np.diff(qid) >= 0)  # rows already in query order
    lr = 0.3
    ranker = _lambdamart(n_estimators=1, learning_rate=lr, max_leaf_nodes=6,
                         leaf_estimation="gradient").fit(X, y, qid=qid)
    # The first tree sees the plain lambdas at score 0, each query's divided
    # by its standard deviation.
    offsets = np.concatenate([[0], np.flatnonzero(np.diff(qid)) + 1, [len(qid)]])
    grad = np.empty(len(y), dtype=np.float32)
    LambdaRankObjective(y, offsets).gradient_hessian(np.zeros(len(y)), grad, grad.copy())
    lam = -grad.astype(np.float64)
    for a, b in zip(offsets[:-1], offsets[1:]):
        if lam[a:b].std() > 0:
            lam[a:b] /= lam[a:b].std()
    pred = ranker.predict(X)
    leaves = np.unique(pred)
    assert len(leaves) == 6
    for value in leaves:
        rows = pred == value
        assert value == pytest.approx(lr * lam[rows].mean(), rel=1e-5)


def test_lambdamart_newton_and_gradient_leaves_differ(click_data):
    X, y, qid, _ = click_data
    newton = _lambdamart().fit(X, y, qid=qid)
    gradient = _lambdamart(leaf_estimation="gradient").fit(X, y, qid=qid)
    assert gradient.objective_ == "lambdarank_multi"
    assert not np.allclose(newton.predict(X), gradient.predict(X))


def test_lambdamart_grid_search_routes_y_secondary(click_data):
    import sklearn
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, GroupKFold

    from sklearn_ltr.metrics import ndcg_scorer

    X, y, qid, clicks = click_data
    model = _lambdamart(n_estimators=5)
    grid = {"secondary_weight": [0.0, 0.5]}
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(model, grid, scoring=ndcg_scorer(10), cv=GroupKFold(3))
        search.fit(X, y, qid=qid, groups=qid, y_secondary=clicks)
        # y_secondary is requested but optional: without it w = 0 still fits.
        GridSearchCV(model, {"secondary_weight": [0.0]}, scoring=ndcg_scorer(10),
                     cv=GroupKFold(3)).fit(X, y, qid=qid, groups=qid)
    for i, w in enumerate(grid["secondary_weight"]):
        for f, (train, test) in enumerate(GroupKFold(3).split(X, y, groups=qid)):
            fitted = clone(model).set_params(secondary_weight=w).fit(
                X[train], y[train], qid=qid[train], y_secondary=clicks[train]
            )
            expected = ndcg_score(y[test], fitted.predict(X[test]), qid=qid[test], k=10)
            assert search.cv_results_[f"split{f}_test_score"][i] == pytest.approx(expected, rel=1e-12)
    # The two weights give different models, so routing did reach fit.
    assert search.cv_results_["mean_test_score"][0] != search.cv_results_["mean_test_score"][1]


@pytest.mark.parametrize(
    "params, fit_secondary, match",
    [
        (dict(secondary_weight=0.5), None, "needs secondary labels"),
        (dict(secondary_weight=0.5), "short", r"y_secondary must have shape"),
        (dict(secondary_weight=0.5), "nan", "y_secondary contains NaN"),
        (dict(secondary_weight=0.5), "big", r"y_secondary must lie in \[0, 1\]"),
        (dict(), "big", r"y_secondary must lie in \[0, 1\]"),  # checked even when unused
        (dict(lambda_schedule="linear"), None, "leaf_estimation='gradient'"),
        (dict(secondary_weight=1.5), None, "secondary_weight"),
        (dict(lambda_schedule="cosine"), None, "lambda_schedule"),
        (dict(schedule_eta=0.0), None, "schedule_eta"),
        (dict(sigmoid_truncation=0), None, "sigmoid_truncation"),
        (dict(leaf_estimation="exact"), None, "leaf_estimation"),
    ],
)
def test_lambdamart_multi_objective_errors(click_data, params, fit_secondary, match):
    X, y, qid, clicks = click_data
    secondary = {
        None: None,
        "short": clicks[:-1],
        "nan": np.where(np.arange(len(y)) == 4, np.nan, clicks),
        "big": clicks + 1.0,
    }[fit_secondary]
    with pytest.raises(ValueError, match=match):
        _lambdamart(**params).fit(X, y, qid=qid, y_secondary=secondary)


def test_phase_seconds_account_for_the_fit(graded_data):
    # bench_fit.py --profile prints these; they must cover the fit's phases
    # without counting any twice.
    import time

    X, y, qid = graded_data
    ranker = LambdaMARTRanker(n_estimators=5, early_stopping=True, random_state=0)
    start = time.perf_counter()
    ranker.fit(X, y, qid=qid)
    elapsed = time.perf_counter() - start
    phases = ranker._booster.phase_seconds
    assert set(phases) == {"binning", "gradients", "histograms", "split_finding", "partition",
                           "tree_other", "score_update", "tracking"}
    assert all(seconds >= 0 for seconds in phases.values())
    assert phases["histograms"] > 0 and phases["split_finding"] > 0
    assert sum(phases.values()) <= elapsed
