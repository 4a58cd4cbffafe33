"""Model selection on a dask.distributed cluster, and sklearn_ltr.dask.

The searches run on a real LocalCluster of two worker processes (loopback
only) and must give exactly what the same search gives in this process with
n_jobs=1: the rankers are deterministic and bit-identical on any number of
numba threads, so any difference means that something (query ids, the
scikit-learn config, a fitted model) was lost on the way to or from a worker.
"""

import subprocess
import sys
import warnings
from types import SimpleNamespace

import joblib
import numpy as np
import pytest
import sklearn
from scipy.stats import loguniform, randint
from sklearn.model_selection import (
    GridSearchCV,
    GroupKFold,
    RandomizedSearchCV,
    cross_validate,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.parallel import Parallel, delayed

from sklearn_ltr import CalibratedRanker, LambdaMARTRanker, ListNetRanker, XENDCGRanker
from sklearn_ltr.compose import exclude_qid
from sklearn_ltr.dask import warm_up_workers
from sklearn_ltr.dask._warm_up import _kernel_signatures, _oversubscribed_hosts, _usable_cores
from sklearn_ltr.datasets import make_ranking, to_frame
from sklearn_ltr.metrics import map_scorer, mrr_scorer, ndcg_scorer

from _dask_cluster import FREE_HTTP_PORT, local_cluster

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install sklearn-ltr[dask])"
)
from distributed import Client, LocalCluster, get_task_stream  # noqa: E402

SMALL = dict(n_estimators=8, min_samples_leaf=5, random_state=0)


@pytest.fixture(scope="module", autouse=True)
def one_numba_thread_here():
    # The local searches run in this process while the workers idle-spin or
    # other jobs load the machine; numba's threads then wait on each other
    # and a search of a few hundred milliseconds takes seconds. One thread
    # gives the same models (the kernels are bit-identical on any number).
    import numba

    saved = numba.get_num_threads()
    numba.set_num_threads(1)
    yield
    numba.set_num_threads(saved)


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes, warmed up; also what the warm-up returned and warned,
    and the kernels each worker had right after it."""
    with local_cluster() as client:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            seconds = warm_up_workers(client)
        yield SimpleNamespace(
            client=client,
            warm_up_seconds=seconds,
            warm_up_warnings=[w for w in caught if issubclass(w.category, UserWarning)],
            kernels_after_warm_up=client.run(_kernel_signatures),
        )


@pytest.fixture(scope="module")
def client(cluster):
    return cluster.client


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=40, docs_per_query=20, n_features=8, random_state=0)
    X_test, _, _ = make_ranking(n_queries=5, docs_per_query=20, n_features=8, random_state=1)
    return X, y, qid, X_test


def _on_cluster(client, run):
    """``run()`` under the dask joblib backend; checks that tasks reached the workers."""
    with get_task_stream(client) as stream, joblib.parallel_backend("dask"):
        result = run()
    workers = {task["worker"] for task in stream.data}
    assert stream.data, "nothing ran on the cluster"
    assert workers <= set(client.nthreads())
    return result


def _assert_same_cv_results(local, remote):
    assert remote.cv_results_.keys() == local.cv_results_.keys()
    for key, expected in local.cv_results_.items():
        got = remote.cv_results_[key]
        if key.endswith("_time"):
            continue
        if key == "params" or key.startswith("param_"):
            assert list(got) == list(expected), key
        else:
            np.testing.assert_array_equal(got, expected, err_msg=key)
    assert remote.best_params_ == local.best_params_


def test_import_does_not_import_dask():
    code = (
        "import sys, sklearn_ltr, sklearn_ltr.metrics, sklearn_ltr.datasets, sklearn_ltr.dask; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_sklearn_config_reaches_the_workers(client):
    # sklearn.utils.parallel.delayed carries the caller's config into each
    # task; the searches' metadata routing inside a Pipeline relies on it.
    for routing in (True, False):
        with sklearn.config_context(enable_metadata_routing=routing):
            configs = _on_cluster(
                client, lambda: Parallel(n_jobs=-1)(delayed(sklearn.get_config)() for _ in range(4))
            )
        assert [c["enable_metadata_routing"] for c in configs] == [routing] * 4


def test_grid_search_with_routing_matches_local(client, data):
    X, y, qid, X_test = data
    # With routing on, qid reaches the ranker inside the Pipeline and the
    # scorer; the Pipeline only accepts it if the config reached the worker.
    pipe = make_pipeline(StandardScaler(), LambdaMARTRanker(**SMALL))
    grid = {"lambdamartranker__max_leaf_nodes": [3, 7], "lambdamartranker__learning_rate": [0.1, 0.3]}

    def search(n_jobs):
        gs = GridSearchCV(pipe, grid, scoring=ndcg_scorer(10), cv=GroupKFold(3), n_jobs=n_jobs)
        return gs.fit(X, y, qid=qid, groups=qid)

    with sklearn.config_context(enable_metadata_routing=True):
        local = search(1)
        remote = _on_cluster(client, lambda: search(-1))
    _assert_same_cv_results(local, remote)
    np.testing.assert_array_equal(
        remote.best_estimator_.predict(X_test), local.best_estimator_.predict(X_test)
    )


def test_grid_search_with_qid_column_matches_local(client, data):
    X, y, qid, X_test = data
    # Routing off: the query ids travel as a DataFrame column.
    frame, frame_test = to_frame(X, qid), to_frame(X_test, np.zeros(len(X_test)))
    pipe = make_pipeline(exclude_qid(StandardScaler()), XENDCGRanker(**SMALL))
    grid = {"xendcgranker__max_leaf_nodes": [3, 7], "xendcgranker__subsample": [0.5, 1.0]}
    scoring = {"ndcg": ndcg_scorer(5), "mrr": mrr_scorer(threshold=2), "map": map_scorer()}

    def search(n_jobs):
        gs = GridSearchCV(pipe, grid, scoring=scoring, refit="ndcg", cv=GroupKFold(3),
                          n_jobs=n_jobs)
        return gs.fit(frame, y, groups=qid)

    with sklearn.config_context(enable_metadata_routing=False):
        local = search(1)
        remote = _on_cluster(client, lambda: search(-1))
    _assert_same_cv_results(local, remote)
    np.testing.assert_array_equal(
        remote.best_estimator_.predict(frame_test), local.best_estimator_.predict(frame_test)
    )


def test_randomized_search_matches_local(client, data):
    X, y, qid, X_test = data
    distributions = {
        "learning_rate": loguniform(0.03, 0.5),
        "max_leaf_nodes": randint(3, 16),
        "l2_regularization": loguniform(1e-3, 1.0),
    }

    def search(n_jobs):
        rs = RandomizedSearchCV(ListNetRanker(**SMALL), distributions, n_iter=5,
                                scoring=ndcg_scorer(10), cv=GroupKFold(3), random_state=0,
                                n_jobs=n_jobs)
        return rs.fit(X, y, qid=qid, groups=qid)

    with sklearn.config_context(enable_metadata_routing=True):
        local = search(1)
        remote = _on_cluster(client, lambda: search(-1))
    _assert_same_cv_results(local, remote)
    np.testing.assert_array_equal(
        remote.best_estimator_.predict(X_test), local.best_estimator_.predict(X_test)
    )


@pytest.mark.parametrize(
    "ranker",
    [LambdaMARTRanker(**SMALL), CalibratedRanker(binarize=True, calibration="platt", **SMALL)],
    ids=["lambdamart", "calibrated"],
)
def test_cross_validate_returns_models_fitted_on_workers(client, data, ranker):
    X, y, qid, X_test = data

    def run(n_jobs):
        return cross_validate(ranker, X, y, params={"qid": qid, "groups": qid},
                              cv=GroupKFold(3), scoring=ndcg_scorer(10),
                              return_estimator=True, n_jobs=n_jobs)

    with sklearn.config_context(enable_metadata_routing=True):
        local = run(1)
        remote = _on_cluster(client, lambda: run(-1))
    np.testing.assert_array_equal(remote["test_score"], local["test_score"])
    assert len(remote["estimator"]) == 3
    for got, expected in zip(remote["estimator"], local["estimator"]):
        assert got is not ranker
        np.testing.assert_array_equal(got.predict(X_test), expected.predict(X_test))
        if hasattr(expected, "predict_proba"):
            np.testing.assert_array_equal(got.predict_proba(X_test), expected.predict_proba(X_test))


def test_warm_up_workers_times_every_worker(cluster):
    assert set(cluster.warm_up_seconds) == set(cluster.client.nthreads())
    assert all(isinstance(s, float) and s >= 0 for s in cluster.warm_up_seconds.values())
    # One single-threaded worker per core and NUMBA_NUM_THREADS=1: nothing
    # to warn about (this also shows that the setting reached numba).
    assert cluster.warm_up_warnings == []


def test_warm_up_loads_every_kernel_a_search_needs(cluster, data):
    # A kernel gains a type signature when it is compiled or loaded from the
    # cache; once the workers are warm, no search task should add any. This
    # compares with right after the warm-up, so the searches of the other
    # tests count too.
    client = cluster.client
    X, y, qid, _ = data
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_pipeline(StandardScaler(), LambdaMARTRanker(**SMALL))
        _on_cluster(client, lambda: GridSearchCV(
            pipe, {"lambdamartranker__max_leaf_nodes": [3, 7]}, scoring=ndcg_scorer(10),
            cv=GroupKFold(3), n_jobs=-1,
        ).fit(X, y, qid=qid, groups=qid))
    with sklearn.config_context(enable_metadata_routing=False):
        for ranker in (XENDCGRanker(**SMALL), ListNetRanker(**SMALL),
                       CalibratedRanker(binarize=True, **SMALL)):
            _on_cluster(client, lambda: cross_validate(
                make_pipeline(exclude_qid(StandardScaler()), ranker), to_frame(X, qid), y,
                groups=qid, cv=GroupKFold(3), n_jobs=-1,
                scoring={"ndcg": ndcg_scorer(5), "mrr": mrr_scorer(), "map": map_scorer()},
            ))
    before = cluster.kernels_after_warm_up
    after = client.run(_kernel_signatures)
    assert before.keys() == after.keys()
    for worker, signatures in after.items():
        new = {
            kernel: sigs - before[worker].get(kernel, set())
            for kernel, sigs in signatures.items()
            if sigs - before[worker].get(kernel, set())
        }
        assert new == {}, f"{worker} compiled or loaded kernels after the warm-up: {new}"


def test_warm_up_workers_rejects_unknown_workers(client):
    with pytest.raises(ValueError, match="workers has addresses .*tcp://127.0.0.1:1"):
        warm_up_workers(client, workers=["tcp://127.0.0.1:1"])


def test_warm_up_workers_warns_about_oversubscription():
    # Two workers inside this process (cheaper than two more processes)
    # share its numba, with numba's default of one thread per core.
    import numba

    numba_threads = numba.config.NUMBA_NUM_THREADS
    expect_warning = numba_threads > 1 and 2 * numba_threads > _usable_cores()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, host="127.0.0.1",
                      protocol="tcp://", dashboard_address=None,
                      scheduler_kwargs=FREE_HTTP_PORT) as cluster, Client(cluster) as local_client:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            seconds = warm_up_workers(local_client)
        workers = set(local_client.nthreads())
    assert set(seconds) == workers and len(workers) == 2
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    if expect_warning:
        assert len(messages) == 1
        assert f"{2 * numba_threads} threads on {_usable_cores()} cores" in messages[0]
        assert "NUMBA_NUM_THREADS" in messages[0]
    else:
        assert messages == []


def test_oversubscribed_hosts():
    def report(numba_threads, cores=4):
        return {"seconds": 0.0, "numba_threads": numba_threads, "cores": cores}

    hosts = {"tcp://a:1": "a", "tcp://a:2": "a", "tcp://b:1": "b"}
    # a: 2 workers x 1 task x 2 numba threads = 4 threads on 4 cores: fine.
    # b: 1 worker x 3 tasks x 2 numba threads = 6 threads on 4 cores.
    problems = _oversubscribed_hosts(
        hosts,
        {"tcp://a:1": 1, "tcp://a:2": 1, "tcp://b:1": 3},
        {"tcp://a:1": report(2), "tcp://a:2": report(2), "tcp://b:1": report(2)},
    )
    assert len(problems) == 1
    assert problems[0].startswith("on b,")
    assert "6 threads on 4 cores" in problems[0]
    # Many single-threaded tasks per core is dask's choice, not numba's.
    assert _oversubscribed_hosts(
        {"tcp://a:1": "a"}, {"tcp://a:1": 8}, {"tcp://a:1": report(1)}
    ) == []
    # a: 3 workers x 1 task x 2 threads = 6 on 4 cores.
    hosts["tcp://a:3"] = "a"
    problems = _oversubscribed_hosts(
        hosts,
        {"tcp://a:1": 1, "tcp://a:2": 1, "tcp://a:3": 1, "tcp://b:1": 1},
        {k: report(2) for k in hosts},
    )
    assert problems == ["on a, 3 worker(s) run up to 3 task(s) at once, each with up to 2 "
                        "numba threads: 6 threads on 4 cores"]
