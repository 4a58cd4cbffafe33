"""The ``n_jobs`` parameter: numba threads for fit, predict, staged_predict
and score, scikit-learn's conventions for None and negative values, the
previous thread count restored (also after an error and between stages),
the same model on any number of threads, and persistence.

The oracle for "the same model" is a fit on one thread, which runs the
serial twins of the kernels, against a fit on two threads with the parallel
kernels forced (the data are below the sizes where they run by themselves)
and checked to have run: they must agree bit for bit (trees, baseline,
predictions, stages, scores). The thread counts the kernels ran with are
read inside ``Booster.boost``, ``Booster.predict``,
``Booster.staged_predict`` and ``ndcg_score``.
"""

import contextlib
import io
import os
import threading

import numba
import numpy as np
import pytest
from _threads import (assert_fit_ran_in_parallel, assert_ran_in_parallel, needs_two_threads,
                      parallel_kernels_only)
from conftest import RANKERS, fit_labels
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

import sklearn_ltr._rankers.mixin as base
from sklearn_ltr import CalibratedRanker, LambdaMARTRanker
from sklearn_ltr._utils.threads import _n_threads, numba_threads
from sklearn_ltr._gbdt.booster import Booster
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.persistence import load_model, save_model

SMALL = dict(n_estimators=8, max_leaf_nodes=8, min_samples_leaf=5, random_state=3)
N_THREADS = numba.config.NUMBA_NUM_THREADS
DATA_DIR = os.path.join(os.path.dirname(__file__), "data")


@pytest.fixture(scope="module")
def data():
    # Enough rows and features that the parallel kernels split the work
    # between threads (rows for prediction, features for histograms).
    X, y, qid = make_ranking(
        n_queries=60, docs_per_query=30, n_features=12, missing_rate=0.05, random_state=1
    )
    return X, y, qid


@pytest.fixture(autouse=True)
def restore_threads():
    before = numba.get_num_threads()
    yield
    numba.set_num_threads(before)


def _fit(cls, data, **params):
    X, y, qid = data
    return cls(**{**SMALL, **params}).fit(X, fit_labels(cls, y), qid=qid)


def _threads_seen(monkeypatch):
    """Record numba's thread count inside the kernels' callers."""
    seen = []

    def spy(function):
        def wrapper(*args, **kwargs):
            seen.append((function.__name__, numba.get_num_threads()))
            return function(*args, **kwargs)

        return wrapper

    def spy_stages(function):
        # A generator's kernels run at each next(), not when it is made.
        def wrapper(*args, **kwargs):
            for scores in function(*args, **kwargs):
                seen.append(("staged_predict", numba.get_num_threads()))
                yield scores

        return wrapper

    for name in ("boost", "predict"):
        monkeypatch.setattr(Booster, name, spy(getattr(Booster, name)))
    monkeypatch.setattr(Booster, "staged_predict", spy_stages(Booster.staged_predict))
    monkeypatch.setattr(base, "ndcg_score", spy(base.ndcg_score))
    return seen


# -- the parameter ---------------------------------------------------------------


@pytest.mark.parametrize("cls", RANKERS)
def test_n_jobs_is_a_parameter_defaulting_to_none(cls):
    assert cls().n_jobs is None
    assert cls().get_params()["n_jobs"] is None
    assert clone(cls(n_jobs=2)).get_params()["n_jobs"] == 2
    assert "n_jobs : int or None, default=None" in cls.__doc__


@pytest.mark.parametrize("n_jobs", [0, 1.5, "2"])
def test_invalid_n_jobs_is_refused_by_fit_naming_it(data, n_jobs):
    with pytest.raises(InvalidParameterError, match="'n_jobs' parameter of LambdaMARTRanker"):
        _fit(LambdaMARTRanker, data, n_jobs=n_jobs)


def test_invalid_n_jobs_set_after_fit_is_refused_by_predict(data):
    ranker = _fit(LambdaMARTRanker, data)
    ranker.set_params(n_jobs=0)
    with pytest.raises(ValueError, match="n_jobs must be a positive number of threads.*got 0"):
        ranker.predict(data[0])


@pytest.mark.parametrize(
    "n_jobs, available, expected",
    [
        (None, 8, None),
        (1, 8, 1),
        (3, 8, 3),
        (8, 8, 8),
        (64, 8, 8),  # cut to NUMBA_NUM_THREADS, no error
        (-1, 8, 8),
        (-2, 8, 7),
        (-8, 8, 1),
        (-100, 8, 1),  # never below one thread
        (np.int64(2), 8, 2),
        (-1, 1, 1),
    ],
)
def test_n_jobs_follows_scikit_learn_and_is_cut_to_numba_threads(
    monkeypatch, n_jobs, available, expected
):
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", available)
    assert _n_threads(n_jobs) == expected


# -- the threads the kernels run on --------------------------------------------------


@needs_two_threads
@pytest.mark.parametrize("cls", RANKERS)
def test_fit_predict_stages_and_score_run_on_n_jobs_threads(cls, data, monkeypatch):
    X, y, qid = data
    numba.set_num_threads(2)
    seen = _threads_seen(monkeypatch)
    ranker = _fit(cls, data, n_jobs=1, early_stopping=True)
    ranker.predict(X)
    list(ranker.staged_predict(X))
    ranker.score(X, fit_labels(cls, y), qid=qid)
    ranker.rank(X, qid=qid)
    called = {name for name, _ in seen}
    assert {"boost", "predict", "staged_predict", "ndcg_score"} <= called
    assert {threads for _, threads in seen} == {1}
    assert numba.get_num_threads() == 2  # restored


@needs_two_threads
def test_none_keeps_the_callers_thread_count(data, monkeypatch):
    seen = _threads_seen(monkeypatch)
    numba.set_num_threads(1)
    ranker = _fit(LambdaMARTRanker, data)
    ranker.predict(data[0])
    assert {threads for _, threads in seen} == {1}
    numba.set_num_threads(2)
    seen.clear()
    ranker.predict(data[0])
    assert seen == [("predict", 2)]


@needs_two_threads
def test_minus_one_means_all_numba_threads(data, monkeypatch):
    seen = _threads_seen(monkeypatch)
    numba.set_num_threads(1)
    _fit(LambdaMARTRanker, data, n_jobs=-1).predict(data[0])
    assert {threads for _, threads in seen} == {N_THREADS}
    assert numba.get_num_threads() == 1


def test_more_threads_than_numba_has_are_not_an_error(data):
    ranker = _fit(LambdaMARTRanker, data, n_jobs=N_THREADS + 7)
    assert ranker.predict(data[0]).shape == (data[0].shape[0],)


@needs_two_threads
def test_thread_count_is_restored_after_an_error(data):
    X, y, qid = data
    numba.set_num_threads(2)
    with pytest.raises(ValueError, match="y contains negative"):
        LambdaMARTRanker(n_jobs=1).fit(X, -y - 1, qid=qid)
    assert numba.get_num_threads() == 2
    with numba_threads(1):
        assert numba.get_num_threads() == 1
        with pytest.raises(ZeroDivisionError):
            with numba_threads(2):
                1 / 0
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == 2


@needs_two_threads
def test_staged_predict_sets_threads_for_each_stage_only(data):
    ranker = _fit(LambdaMARTRanker, data, n_jobs=1)
    numba.set_num_threads(2)
    counts = []
    for _ in ranker.staged_predict(data[0]):
        counts.append(numba.get_num_threads())  # the caller's code between stages
    assert counts == [2] * ranker.n_iter_


@needs_two_threads
def test_a_fit_in_another_thread_leaves_this_threads_count_alone(data):
    numba.set_num_threads(2)
    inside = []

    def fit_elsewhere():
        # A new thread starts with NUMBA_NUM_THREADS, whatever this one set.
        inside.append(numba.get_num_threads())
        _fit(LambdaMARTRanker, data, n_jobs=1)
        inside.append(numba.get_num_threads())

    worker = threading.Thread(target=fit_elsewhere)
    worker.start()
    worker.join()
    assert inside == [N_THREADS, N_THREADS]
    assert numba.get_num_threads() == 2


# -- the same model on any number of threads ------------------------------------------

SAMPLED = dict(subsample=0.6, max_features=0.5, early_stopping=True, n_iter_no_change=3)
EXTRA = {
    LambdaMARTRanker: dict(lambda_schedule="linear", leaf_estimation="gradient"),
    CalibratedRanker: dict(calibration="platt"),
}


@needs_two_threads
@pytest.mark.parametrize("cls", RANKERS)
@pytest.mark.parametrize("options", ["plain", "sampled", "extra"])
def test_one_and_two_threads_give_bit_identical_models(cls, options, data):
    X, y, qid = data
    labels = fit_labels(cls, y)
    params = {"plain": {}, "sampled": SAMPLED, "extra": EXTRA.get(cls, SAMPLED)}[options]
    one = _fit(cls, data, n_jobs=1, **params)  # one thread: the serial twins of the kernels
    # The data are too small for the parallel kernels to run by themselves.
    with parallel_kernels_only() as picked:
        two = _fit(cls, data, n_jobs=2, **params)
    assert_fit_ran_in_parallel(picked)
    assert len(one._booster.trees) == len(two._booster.trees) > 0
    for a, b in zip(one._booster.trees, two._booster.trees):
        assert a.tobytes() == b.tobytes()
    assert one._booster.baseline == two._booster.baseline
    assert_array_equal(one.validation_score_, two.validation_score_)
    # Predict each model on the other's thread count too: serial on one
    # thread, the parallel kernels on two.
    for n_jobs, forced in ((1, False), (2, True)):
        one.set_params(n_jobs=n_jobs)
        with parallel_kernels_only() if forced else contextlib.nullcontext() as picked:
            scores = one.predict(X), two.predict(X)
            stages = list(zip(one.staged_predict(X), two.staged_predict(X)))
            score = one.score(X, labels, qid=qid), two.score(X, labels, qid=qid)
            ranks = one.rank(X, qid=qid), two.rank(X, qid=qid)
            if cls is CalibratedRanker:
                probas = one.predict_proba(X), two.predict_proba(X)
        if forced:
            assert_ran_in_parallel(picked, ("_predict_blocks", "_predict_oblivious_blocks",
                                    "_predict_quickscorer_blocks"),
                                   "_dcg_per_query")
        assert_array_equal(*scores)
        assert len(stages) == one.n_iter_
        for a, b in stages:
            assert_array_equal(a, b)
        assert score[0] == score[1]
        assert_array_equal(*ranks)
        if cls is CalibratedRanker:
            assert_array_equal(*probas)


# -- persistence --------------------------------------------------------------------------


@pytest.mark.parametrize("cls", RANKERS)
def test_n_jobs_survives_save_and_load(cls, data):
    ranker = _fit(cls, data, n_jobs=1)
    buffer = io.BytesIO()
    save_model(ranker, buffer)
    loaded = load_model(io.BytesIO(buffer.getvalue()))
    assert loaded.n_jobs == 1
    assert_array_equal(loaded.predict(data[0]), ranker.predict(data[0]))


@pytest.mark.parametrize("name", ["lambdamart", "xendcg", "listnet", "calibrated_platt"])
def test_files_written_before_n_jobs_load_with_the_default(name):
    # These files predate n_jobs: their params have no such key.
    model = load_model(os.path.join(DATA_DIR, "persistence_v1", f"{name}.npz"))
    assert model.get_params()["n_jobs"] is None


# -- Dask: the parameter passes through ----------------------------------------------------


def test_dask_rankers_take_n_jobs_and_pass_it_on(data):
    pytest.importorskip("dask")
    from sklearn_ltr.dask import (
        DaskCalibratedRanker,
        DaskLambdaMARTRanker,
        DaskListNetRanker,
        DaskXENDCGRanker,
        DaskYetiRankRanker,
    )

    X, y, qid = data
    for cls in (DaskLambdaMARTRanker, DaskXENDCGRanker, DaskListNetRanker, DaskYetiRankRanker,
                DaskCalibratedRanker):
        assert cls().n_jobs is None and cls(n_jobs=2).get_params()["n_jobs"] == 2
    # In-memory data is fitted in this process; the local model keeps n_jobs.
    ranker = DaskLambdaMARTRanker(**SMALL, n_jobs=1).fit(X, y, qid=qid)
    local = ranker.to_local()
    assert type(local) is LambdaMARTRanker and local.n_jobs == 1
    assert_array_equal(local.predict(X), _fit(LambdaMARTRanker, data, n_jobs=2).predict(X))
