"""Determinism: the same data and random_state give bit-identical models.

Across repeated fits, the serial kernels and the parallel ones on two threads
(forced on this small data, and checked to have run), query/feature
subsampling, pickle, joblib and save_model round trips, and predictions made
from several Python threads at once. The oracle is always a second computation that must agree
bit for bit; the seed-sensitivity test checks that the comparisons can fail.
"""

import pickle
from concurrent.futures import ThreadPoolExecutor

import joblib
import numba
import numpy as np
import pytest
from _threads import (assert_fit_ran_in_parallel, assert_ran_in_parallel, needs_two_threads,
                      parallel_kernels_only)
from numpy.testing import assert_array_equal
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from conftest import RANKERS, fit_labels
from sklearn_ltr import CalibratedRanker, LambdaMARTRanker
from sklearn_ltr._objectives import OBJECTIVES
from sklearn_ltr._rankers.calibrated import fit_platt
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.metrics import ndcg_score
from sklearn_ltr.persistence import load_model, save_model

SMALL = dict(n_estimators=8, max_leaf_nodes=8, min_samples_leaf=5, random_state=3)
CLASSES = RANKERS
SAMPLING = {"full": {}, "sampled": dict(subsample=0.6, max_features=0.5)}
CASES = [(cls, s) for cls in CLASSES for s in SAMPLING]
IDS = [f"{cls.__name__}-{s}" for cls, s in CASES]


@pytest.fixture(scope="module")
def data():
    # Enough rows and features that the parallel kernels split the work
    # between threads (rows for prediction, features for histograms).
    X, y, qid = make_ranking(
        n_queries=60, docs_per_query=30, n_features=12, missing_rate=0.05, random_state=1
    )
    return X, y, qid


def _make(cls, sampling, **extra):
    return cls(**SMALL, **SAMPLING[sampling], **extra)


def _fit(ranker, data):
    X, y, qid = data
    return ranker.fit(X, fit_labels(type(ranker), y), qid=qid)


def _trees_bytes(ranker):
    return [t.tobytes() for t in ranker._booster.trees]


def _assert_identical(a, b, X):
    assert _trees_bytes(a) == _trees_bytes(b)
    assert a._booster.baseline == b._booster.baseline
    assert_array_equal(a.predict(X), b.predict(X))
    if isinstance(a, CalibratedRanker):
        assert_array_equal(a.predict_proba(X), b.predict_proba(X))


@pytest.fixture
def restore_threads():
    before = numba.get_num_threads()
    yield
    numba.set_num_threads(before)


@pytest.mark.parametrize("cls, sampling", CASES, ids=IDS)
def test_two_fits_are_bit_identical(cls, sampling, data):
    a = _fit(_make(cls, sampling), data)
    b = _fit(_make(cls, sampling), data)
    _assert_identical(a, b, data[0])


@needs_two_threads
@pytest.mark.parametrize("cls, sampling", CASES, ids=IDS)
def test_serial_and_two_threads_give_the_same_model(cls, sampling, data, restore_threads):
    X = data[0]
    serial = _fit(_make(cls, sampling, n_jobs=1), data)  # n_jobs=1: the serial twins
    with parallel_kernels_only() as picked:
        parallel = _fit(_make(cls, sampling, n_jobs=2), data)
        scores = parallel.predict(X)
    assert_fit_ran_in_parallel(picked)
    assert_ran_in_parallel(picked, ("_predict_blocks", "_predict_oblivious_blocks",
                                    "_predict_quickscorer_blocks"))
    _assert_identical(serial, parallel, X)
    assert_array_equal(scores, serial.predict(X))


@pytest.mark.parametrize("cls", CLASSES)
def test_the_seed_matters_when_sampling(cls, data):
    """Guards the tests above: with subsampling, another seed gives another model."""
    a = _fit(_make(cls, "sampled"), data)
    b = _fit(_make(cls, "sampled").set_params(random_state=4), data)
    assert _trees_bytes(a) != _trees_bytes(b)


@pytest.mark.parametrize("cls", CLASSES)
def test_pickle_joblib_and_save_model_round_trips(cls, data, tmp_path):
    X = data[0]
    ranker = _fit(_make(cls, "sampled"), data)
    expected = ranker.predict(X)
    copies = [pickle.loads(pickle.dumps(ranker))]
    joblib.dump(ranker, tmp_path / "model.joblib")
    copies.append(joblib.load(tmp_path / "model.joblib"))
    save_model(ranker, tmp_path / "model.npz")
    copies.append(load_model(tmp_path / "model.npz"))
    for copy in copies:
        _assert_identical(ranker, copy, X)
    assert_array_equal(ranker.predict(X), expected)  # the original is untouched


@pytest.mark.parametrize("cls", CLASSES)
def test_refit_of_a_clone_is_identical(cls, data):
    ranker = _fit(_make(cls, "sampled"), data)
    _assert_identical(ranker, _fit(clone(ranker), data), data[0])


@pytest.mark.parametrize("cls", [LambdaMARTRanker, CalibratedRanker])
def test_predict_from_several_threads_matches_sequential(cls, data):
    X, _, qid = data
    ranker = _fit(_make(cls, "full"), data)
    chunks = np.array_split(np.arange(X.shape[0]), 6)
    jobs = [X[rows] for rows in chunks] * 4
    sequential = [ranker.predict(Xc) for Xc in jobs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        concurrent = list(pool.map(ranker.predict, jobs))
        ranks = list(pool.map(lambda _: ranker.rank(X, qid=qid), range(4)))
        if cls is CalibratedRanker:
            probas = list(pool.map(ranker.predict_proba, jobs))
    for got, want in zip(concurrent, sequential, strict=True):
        assert_array_equal(got, want)
    for got in ranks:
        assert_array_equal(got, ranker.rank(X, qid=qid))
    if cls is CalibratedRanker:
        for got, Xc in zip(probas, jobs, strict=True):
            assert_array_equal(got, ranker.predict_proba(Xc))


def test_fresh_model_predicts_from_several_threads_at_once(data):
    """The first predict builds the cached ensemble; several threads may race to do it."""
    X = data[0]
    reference = _fit(_make(LambdaMARTRanker, "full"), data).predict(X)
    for _ in range(3):  # a fresh model each round
        ranker = _fit(_make(LambdaMARTRanker, "full"), data)
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(lambda _: ranker.predict(X), range(8)))
        for got in results:
            assert_array_equal(got, reference)


# --- BLAS threads ---------------------------------------------------------
# OpenBLAS splits a long dot product between its threads, so np.dot's last
# bits depend on their number, which joblib lowers in a search's workers.

N_LONG = 50_000  # past OpenBLAS's threshold for splitting a dot product


def _under_blas_threads(n_threads, compute):
    with threadpool_limits(limits=n_threads, user_api="blas"):
        return compute()


@pytest.fixture(scope="module")
def blas_threads_change_dot():
    """Skip unless np.dot's bits change with BLAS's thread count here (else
    the tests below could not fail)."""
    rng = np.random.default_rng(0)
    pairs = [(rng.standard_normal(N_LONG), rng.standard_normal(N_LONG)) for _ in range(5)]
    one = _under_blas_threads(1, lambda: [np.dot(a, b) for a, b in pairs])
    two = _under_blas_threads(2, lambda: [np.dot(a, b) for a, b in pairs])
    if one == two:
        pytest.skip("np.dot gives the same bits on 1 and 2 BLAS threads here")


def _long_weighted_data():
    rng = np.random.default_rng(1)
    scores = rng.standard_normal(N_LONG)
    labels = (rng.random(N_LONG) < 1.0 / (1.0 + np.exp(-scores))).astype(np.float64)
    weights = rng.uniform(0.5, 2.0, N_LONG)
    return scores, labels, weights


def test_platt_scaling_does_not_depend_on_blas_threads(blas_threads_change_dot):
    scores, labels, weights = _long_weighted_data()
    fit = lambda: fit_platt(scores, labels, weights)  # noqa: E731
    assert _under_blas_threads(1, fit) == _under_blas_threads(2, fit)


def test_weighted_metric_means_do_not_depend_on_blas_threads(blas_threads_change_dot):
    scores, labels, weights = _long_weighted_data()
    qid = np.repeat(np.arange(N_LONG // 2), 2)  # 25,000 queries of 2 documents
    query_weights = np.repeat(weights[::2], 2)
    score = lambda: ndcg_score(labels, scores, qid=qid, sample_weight=query_weights)  # noqa: E731
    assert _under_blas_threads(1, score) == _under_blas_threads(2, score)


def test_objective_losses_do_not_depend_on_blas_threads(blas_threads_change_dot):
    scores, labels, weights = _long_weighted_data()
    offsets = np.arange(0, N_LONG + 1, 2)
    row_weights = np.repeat(weights[::2], 2)
    for name in ("lambdarank", "xendcg", "listnet", "yetirank"):
        objective = OBJECTIVES[name](labels, offsets, row_weights)
        loss = lambda: objective.loss(scores)  # noqa: E731
        assert _under_blas_threads(1, loss) == _under_blas_threads(2, loss), name
