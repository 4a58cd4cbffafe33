"""Data-parallel training on a real LocalCluster (sklearn_ltr.dask rankers).

The oracle is the single-process ranker: fitted with the same parameters on
the same rows, it must give the same trees, and predictions equal to within
float summation order (in practice, bit for bit).
"""

import gc
import io
import time

import numpy as np
import pytest

from sklearn_ltr import (
    CalibratedRanker,
    LambdaMARTRanker,
    ListNetRanker,
    XENDCGRanker,
    YetiRankRanker,
    load_model,
)
from sklearn_ltr.datasets import make_ranking, to_frame
from sklearn_ltr.metrics import map_scorer

pytest.importorskip("distributed", reason="needs dask.distributed (pip install sklearn-ltr[dask])")
dd = pytest.importorskip("dask.dataframe", reason="needs dask.dataframe")
import dask  # noqa: E402
import dask.array as da  # noqa: E402
from _dask_cluster import local_cluster  # noqa: E402

from sklearn_ltr.dask import (  # noqa: E402
    DaskCalibratedRanker,
    DaskLambdaMARTRanker,
    DaskListNetRanker,
    DaskXENDCGRanker,
    DaskYetiRankRanker,
    rechunk_by_query,
    repartition_by_query,
)

PAIRS = [
    (DaskLambdaMARTRanker, LambdaMARTRanker),
    (DaskXENDCGRanker, XENDCGRanker),
    (DaskListNetRanker, ListNetRanker),
    (DaskYetiRankRanker, YetiRankRanker),
]
# Column and query sampling exercise the shards' share of a sample and the
# objective's random draws; early stopping off so that the local fit holds
# nothing out.
PARAMS = dict(n_estimators=12, max_leaf_nodes=15, min_samples_leaf=5, subsample=0.7,
              max_features=0.6, early_stopping=False, random_state=0)


@pytest.fixture(scope="module")
def client():
    # Without work stealing, a task runs on a worker that holds its inputs:
    # the partitions _place puts on a worker are read and trained there.
    with local_cluster(work_stealing=False) as client:
        yield client


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=120, docs_per_query=40, n_features=12, random_state=0)
    rng = np.random.default_rng(0)
    X[rng.random(X.shape) < 0.02] = np.nan
    keep = rng.random(len(y)) < 0.7  # queries of different sizes
    X, y, qid = X[keep], y[keep], qid[keep]
    # Query ids out of order and not contiguous in the input: the fits must
    # number rows by sorted query id, rows of a query in input order.
    shuffled = np.random.default_rng(1).permutation(np.unique(qid))
    qid = shuffled[qid] * 7 + 3
    return X, y, qid


def _frame(X, y, qid, npartitions=4, **columns):
    frame = to_frame(X, qid).assign(label=y, **columns)
    return _place(repartition_by_query(dd.from_pandas(frame, npartitions=npartitions,
                                                      sort=False)))


def _workers():
    from distributed import default_client

    return sorted(default_client().nthreads())


def _place(ddf):
    """``ddf`` with partition ``p`` computed and held by the ``p``-th worker
    (modulo their number) only.

    Where the scheduler puts the partitions of a lazy frame is its own
    choice: on a loaded machine all of them may land on one worker, and a
    test that needs every worker to train would fail at random. Placed
    partitions (and the client fixture's cluster, which never steals work)
    make the workers of a fit certain.
    """
    from distributed import default_client

    client, workers = default_client(), _workers()
    parts = dask.compute(*ddf.to_delayed())
    # hash=False: equal partitions of another test must not come back as
    # the futures that test placed, possibly on other workers.
    futures = [client.scatter(part, workers=[workers[p % len(workers)]], hash=False)
               for p, part in enumerate(parts)]
    return dd.from_delayed(futures, meta=ddf._meta, verify_meta=False)


def _placed_arrays(cuts, *arrays):
    """Dask arrays of ``arrays`` cut into chunks at the row positions
    ``cuts`` (from 0 to the number of rows), chunk ``p`` held by the
    ``p``-th worker (modulo their number) only, as :func:`_place` holds
    partitions."""
    from distributed import default_client

    client, workers = default_client(), _workers()
    placed = []
    for array in arrays:
        blocks = []
        for p, (start, stop) in enumerate(zip(cuts[:-1], cuts[1:])):
            block = array[start:stop]
            future = client.scatter(block, workers=[workers[p % len(workers)]], hash=False)
            blocks.append(da.from_delayed(future, shape=block.shape, dtype=block.dtype))
        placed.append(da.concatenate(blocks))
    return placed


def _assert_same_model(distributed, local, X, X_distributed=None):
    """Same trees, same predictions; ``X_distributed`` is ``X`` as the
    distributed model was fitted on it (with column names), if different."""
    assert distributed.n_iter_ == local.n_iter_
    for got, expected in zip(distributed._booster.trees, local._booster.trees):
        for field in ("feature_idx", "bin_threshold", "missing_go_to_left", "left", "count",
                      "is_categorical", "left_categories"):
            np.testing.assert_array_equal(got[field], expected[field], err_msg=field)
        np.testing.assert_allclose(got["value"], expected["value"], rtol=0, atol=1e-12)
    X_distributed = X if X_distributed is None else X_distributed
    np.testing.assert_allclose(distributed.predict(X_distributed), local.predict(X),
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize("dask_class, local_class", PAIRS)
def test_distributed_model_equals_single_process_model(client, data, dask_class, local_class):
    X, y, qid = data
    ddf = _frame(X, y, qid)
    distributed = dask_class(**PARAMS).fit(ddf.drop(columns="label"), ddf["label"])
    # The rows were really split: both workers held a shard.
    assert distributed._fit_workers == _workers()
    local = local_class(**PARAMS).fit(X, y, qid=qid)
    _assert_same_model(distributed, local, X, to_frame(X, qid))
    np.testing.assert_array_equal(distributed._bin_mapper.n_bins_non_missing_,
                                  local._bin_mapper.n_bins_non_missing_)
    for got, expected in zip(distributed._bin_mapper.bin_thresholds_,
                             local._bin_mapper.bin_thresholds_):
        np.testing.assert_array_equal(got, expected)


def test_target_statistics_are_refused_on_dask_collections(client, data):
    X, y, qid = data
    ddf = _frame(X, y, qid)
    ranker = DaskLambdaMARTRanker(n_estimators=2, categorical_features=[0],
                                  target_statistics="ordered")
    with pytest.raises(ValueError, match="cannot compute target_statistics='ordered'.*None"):
        ranker.fit(ddf.drop(columns="label"), ddf["label"])
    assert not hasattr(ranker, "_booster")


@pytest.mark.parametrize("objective", ["rcr", "sigmoid", "softmax"])
def test_calibrated_ranker_equals_single_process_model(client, data, objective):
    # The sigmoid objectives start from the log-odds of the weighted mean
    # label of all rows, which no single worker holds.
    X, y, qid = data
    weight = np.random.default_rng(3).uniform(0.5, 2.0, size=y.shape[0])
    params = dict(PARAMS, objective=objective, binarize=True)
    ddf = _frame(X, y, qid, weight=weight)
    distributed = DaskCalibratedRanker(**params).fit(
        ddf.drop(columns=["label", "weight"]), ddf["label"], sample_weight=ddf["weight"])
    local = CalibratedRanker(**params).fit(X, y, qid=qid, sample_weight=weight)
    assert distributed._fit_workers == _workers()
    expected_baseline = 0.0 if objective == "softmax" else np.log(
        np.average(y > 0, weights=weight) / (1 - np.average(y > 0, weights=weight)))
    np.testing.assert_allclose(distributed._booster.baseline, expected_baseline, rtol=1e-12)
    np.testing.assert_allclose(local._booster.baseline, expected_baseline, rtol=1e-12)
    _assert_same_model(distributed, local, X, to_frame(X, qid))
    if objective != "softmax":
        np.testing.assert_allclose(distributed.predict_proba(to_frame(X, qid)),
                                   local.predict_proba(X), rtol=0, atol=1e-12)


def test_calibrated_ranker_platt_scaling_on_the_validation_set(client, data):
    X, y, qid = data
    X_val, y_val, qid_val = make_ranking(n_queries=30, docs_per_query=40, n_features=12,
                                         random_state=5)
    params = dict(PARAMS, objective="softmax", calibration="platt", binarize=True)
    ddf = _frame(X, y, qid)
    features, labels = ddf.drop(columns="label"), ddf["label"]
    distributed = DaskCalibratedRanker(**params).fit(
        features, labels, X_val=to_frame(X_val, qid_val), y_val=y_val)
    local = CalibratedRanker(**params).fit(X, y, qid=qid, X_val=X_val, y_val=y_val,
                                           qid_val=qid_val)
    _assert_same_model(distributed, local, X, to_frame(X, qid))
    np.testing.assert_allclose(
        [distributed.platt_coef_, distributed.platt_intercept_],
        [local.platt_coef_, local.platt_intercept_], rtol=1e-9)
    assert type(distributed.to_local()) is CalibratedRanker
    np.testing.assert_allclose(distributed.to_local().predict_proba(to_frame(X_val, qid_val)),
                               local.predict_proba(X_val), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="X_val"):
        DaskCalibratedRanker(**params).fit(features, labels)
    # Graded labels without binarize are refused on the worker that sees them.
    with pytest.raises(ValueError, match="binarize=True"):
        DaskCalibratedRanker(**PARAMS).fit(features, labels)


def test_calibrated_ranker_refits_like_the_in_memory_one(client, data):
    # A refit without Platt scaling drops the old one; a warm start with no
    # trees to add still refits the Platt scaling on the new validation set.
    X, y, qid = data
    X_val, y_val, qid_val = make_ranking(n_queries=30, docs_per_query=40, n_features=12,
                                         random_state=5)
    params = dict(PARAMS, objective="rcr", calibration="platt", binarize=True, warm_start=True)
    ddf = _frame(X, y, qid)
    features, labels = ddf.drop(columns="label"), ddf["label"]
    distributed = DaskCalibratedRanker(**params)
    local = CalibratedRanker(**params)
    for val_rows in (slice(0, 600), slice(600, 1200)):
        distributed.fit(features, labels, X_val=to_frame(X_val[val_rows], qid_val[val_rows]),
                        y_val=y_val[val_rows])
        local.fit(X, y, qid=qid, X_val=X_val[val_rows], y_val=y_val[val_rows],
                  qid_val=qid_val[val_rows])
        assert distributed.platt_coef_ == pytest.approx(local.platt_coef_, rel=1e-9)
    distributed.set_params(calibration=None, warm_start=False).fit(features, labels)
    assert not hasattr(distributed, "platt_coef_")
    frame = to_frame(X, qid)
    np.testing.assert_allclose(distributed.predict_proba(frame)[:, 1],
                               1 / (1 + np.exp(-distributed.predict(frame))), rtol=1e-12)


def test_calibrated_predict_proba_on_dask_collections(client, data):
    X, y, qid = data
    ddf = _frame(X, y, qid)
    features = ddf.drop(columns="label")
    ranker = DaskCalibratedRanker(**dict(PARAMS, binarize=True)).fit(features, ddf["label"])
    expected = ranker.to_local().predict_proba(to_frame(X, qid))
    lazy = ranker.predict_proba(features)
    assert isinstance(lazy, dd.DataFrame)
    frame = features.compute()
    got = lazy.compute()
    assert list(got.columns) == [0, 1] and got.index.equals(frame.index)
    np.testing.assert_array_equal(got.to_numpy(), ranker.to_local().predict_proba(frame))
    # The model was fitted on named columns; an Array has none (a warning on
    # the workers), and gives the same numbers.
    array = da.from_array(frame.drop(columns="qid").to_numpy(), chunks=(500, 5))
    np.testing.assert_array_equal(ranker.predict_proba(array).compute(),
                                  ranker.to_local().predict_proba(frame))
    assert expected.shape == (len(y), 2)


def test_dataframe_inputs_the_in_memory_ranker_accepts_or_refuses(client, data):
    import pandas as pd

    X, y, qid = data
    frame = to_frame(X, qid)
    # pandas' nullable dtypes with <NA>: missing values, as in one process.
    frame["f1"] = pd.array(frame["f1"], dtype="Float64")
    frame.loc[frame.index[::7], "f1"] = pd.NA
    ddf = repartition_by_query(dd.from_pandas(frame.assign(label=y), npartitions=3, sort=False))
    distributed = DaskLambdaMARTRanker(**PARAMS).fit(ddf.drop(columns="label"), ddf["label"])
    local = LambdaMARTRanker(**PARAMS).fit(frame, y)
    _assert_same_model(distributed, local, frame)
    with pytest.raises(ValueError, match="no feature columns"):
        DaskLambdaMARTRanker(**PARAMS).fit(ddf[["qid"]], ddf["label"])
    with pytest.raises(ValueError, match="non-numeric columns 'when'"):
        dated = ddf.assign(when=dd.to_datetime(ddf["qid"], unit="s"))
        DaskLambdaMARTRanker(**PARAMS).fit(dated.drop(columns="label"), dated["label"])
    empty = ddf[ddf["label"] > 100]
    with pytest.raises(ValueError, match="X has no rows"):
        DaskLambdaMARTRanker(**PARAMS).fit(empty.drop(columns="label"), empty["label"])
    # The label bound is that of all rows, not of one partition.
    n_rows = len(y)
    top = 1023 - int(np.ceil(np.log2(n_rows))) + 1
    high = ddf.assign(label=ddf["label"] + top - 4)
    with pytest.raises(ValueError, match=f"over {n_rows} rows"):
        DaskLambdaMARTRanker(**PARAMS).fit(high.drop(columns="label"), high["label"])
    with pytest.raises(TypeError, match="rank needs the rows in memory"):
        distributed.rank(ddf.drop(columns="label"))


def _categorical_frame(X, y, qid):
    """``to_frame(X, qid)`` with a column of category codes (NaN and -1
    missing) and a pandas category column of strings, and labels that
    depend on both."""
    import pandas as pd

    rng = np.random.default_rng(4)
    codes = rng.integers(0, 20, size=y.shape[0]).astype(np.float64)
    codes[rng.random(y.shape[0]) < 0.05] = np.nan
    codes[rng.random(y.shape[0]) < 0.03] = -1
    brand = rng.integers(0, 12, size=y.shape[0])
    frame = to_frame(X, qid)
    frame["code"] = codes
    frame["brand"] = pd.Categorical(np.array([f"b{b}" for b in brand], dtype=object))
    frame.loc[frame.index[::37], "brand"] = None
    y = y + (codes % 4 == 1) + (brand % 5 == 2)
    return frame, y


@pytest.mark.parametrize("categorical_features, max_bins",
                         [("names", 255), ("indices_on_arrays", 255), ("names", 8)],
                         ids=["names", "indices_on_arrays", "names_wide_column"])
def test_categorical_features_give_the_single_process_model(client, data, categorical_features,
                                                            max_bins, monkeypatch):
    # max_bins=8: the 20 codes make a wide column, binned as 3 features.
    X, y, qid = data
    frame, y = _categorical_frame(X, y, qid)
    # Fewer binning rows than rows: the categories come from the sample too.
    monkeypatch.setattr("sklearn_ltr._rankers.base._BINNING_SUBSAMPLE", 1500)
    monkeypatch.setattr("sklearn_ltr.dask._estimators._BINNING_SUBSAMPLE", 1500)
    if categorical_features == "names":
        params = dict(PARAMS, categorical_features=["code", "brand"], max_bins=max_bins)
        ddf = _place(repartition_by_query(dd.from_pandas(frame.assign(label=y), npartitions=4,
                                                         sort=False)))
        distributed = DaskLambdaMARTRanker(**params).fit(ddf.drop(columns="label"), ddf["label"])
        local = LambdaMARTRanker(**params).fit(frame, y)
        rows = frame
    else:
        order = np.argsort(qid, kind="stable")
        X_codes = frame.drop(columns=["qid", "brand"]).to_numpy()[order]
        y, qid = y[order], qid[order]
        params = dict(PARAMS, categorical_features=[X_codes.shape[1] - 1])
        starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
        dX, dy, dqid = _placed_arrays([0, starts[len(starts) // 2], len(qid)], X_codes, y, qid)
        distributed = DaskLambdaMARTRanker(**params).fit(dX, dy, qid=dqid)
        local = LambdaMARTRanker(**params).fit(X_codes, y, qid=qid)
        rows = X_codes
    np.testing.assert_array_equal(distributed.is_categorical_, local.is_categorical_)
    assert distributed.is_categorical_.sum() == (2 if categorical_features == "names" else 1)
    assert sum(int(tree["is_categorical"].sum()) for tree in local._booster.trees) > 5
    assert distributed._fit_workers == _workers()
    assert local._bin_mapper.has_wide_columns() == (max_bins == 8)
    np.testing.assert_array_equal(distributed._bin_mapper.feature_columns_,
                                  local._bin_mapper.feature_columns_)
    for got, expected in zip(distributed._bin_mapper.bin_thresholds_,
                             local._bin_mapper.bin_thresholds_):
        np.testing.assert_array_equal(got, expected)
    _assert_same_model(distributed, local, rows)
    # Unseen, missing and rare categories at predict time, on the workers.
    unseen = frame.iloc[:200].copy()
    unseen.loc[unseen.index[:50], "code"] = 99
    unseen["brand"] = unseen["brand"].cat.add_categories(["new"])
    unseen.loc[unseen.index[50:100], "brand"] = "new"
    if categorical_features == "names":
        predicted = distributed.predict(dd.from_pandas(unseen, npartitions=2)).compute()
        np.testing.assert_allclose(predicted.to_numpy(), local.predict(unseen), rtol=0,
                                   atol=1e-9)


def test_category_columns_dask_does_not_know_are_refused(client, data):
    X, y, qid = data
    frame, y = _categorical_frame(X, y, qid)
    ddf = repartition_by_query(dd.from_pandas(frame.assign(label=y), npartitions=2,
                                              sort=False))
    ddf["brand"] = ddf["brand"].cat.as_unknown()
    with pytest.raises(ValueError, match=r"categories dask does not know.*categorize"):
        DaskLambdaMARTRanker(**PARAMS).fit(ddf.drop(columns="label"), ddf["label"])


def test_a_fit_leaves_no_shards_on_the_workers(client, data):
    # Actor handles sit in reference cycles; without an explicit release each
    # fit's shards (binned rows, gradients) stayed until a garbage collection.
    X, y, qid = data
    ddf = _frame(X, y, qid)
    gc.disable()
    try:
        for _ in range(2):
            DaskLambdaMARTRanker(**PARAMS).fit(ddf.drop(columns="label"), ddf["label"])
        deadline = time.monotonic() + 10
        while True:
            counts = client.run(lambda dask_worker: len(dask_worker.state.actors))
            if sum(counts.values()) == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    finally:
        gc.enable()
    assert sum(counts.values()) == 0, counts


def _hold(event_name):
    from distributed import Event

    Event(event_name).wait()


def test_a_busy_worker_still_trains_its_partitions(client, data):
    # How the tests flaked before their partitions were placed: with one
    # worker busy when a fit started, the scheduler computed every partition
    # on the other, and one worker trained. A placed partition waits for its
    # worker instead. The timer only ends the wait; the workers of the fit
    # do not depend on when.
    import threading

    from distributed import Event

    X, y, qid = data
    workers = _workers()
    event = Event(f"release-{id(data)}")
    busy = client.submit(_hold, event.name, workers=[workers[0]], pure=False)
    timer = threading.Timer(2.0, event.set)
    timer.start()
    try:
        ddf = _frame(X, y, qid)
        distributed = DaskLambdaMARTRanker(**PARAMS).fit(ddf.drop(columns="label"),
                                                         ddf["label"])
    finally:
        timer.join()
        busy.result()
    assert distributed._fit_workers == workers


def test_a_worker_without_sampled_queries_contributes_nothing(client, data):
    # One query per tree: every tree is grown on one worker's rows only, and
    # the other worker's histograms must be empty, not stale.
    X, y, qid = data
    params = dict(PARAMS, subsample=0.005, min_samples_leaf=2)
    ddf = _frame(X, y, qid)
    distributed = DaskLambdaMARTRanker(**params).fit(ddf.drop(columns="label"), ddf["label"])
    local = LambdaMARTRanker(**params).fit(X, y, qid=qid)
    assert distributed._fit_workers == _workers()
    _assert_same_model(distributed, local, X, to_frame(X, qid))


def test_dask_arrays_weights_and_the_binning_sample(client, data, monkeypatch):
    X, y, qid = data
    order = np.argsort(qid, kind="stable")
    X, y, qid = X[order], y[order], qid[order]
    weight = np.random.default_rng(2).uniform(0.5, 2.0, size=y.shape[0])
    # Chunks cut at query boundaries, 3 of them.
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    cuts = [0, starts[len(starts) // 3], starts[2 * len(starts) // 3], len(qid)]
    chunks = (tuple(np.diff(cuts)),)
    # Fewer binning rows than rows: the thresholds come from a sample that
    # the client gathers from the shards, the same rows a local fit samples.
    monkeypatch.setattr("sklearn_ltr._rankers.base._BINNING_SUBSAMPLE", 1000)
    monkeypatch.setattr("sklearn_ltr.dask._estimators._BINNING_SUBSAMPLE", 1000)
    distributed = DaskLambdaMARTRanker(**PARAMS).fit(
        da.from_array(X, chunks=chunks + (X.shape[1],)), da.from_array(y, chunks=chunks),
        qid=da.from_array(qid, chunks=chunks), sample_weight=da.from_array(weight, chunks=chunks),
    )
    local = LambdaMARTRanker(**PARAMS).fit(X, y, qid=qid, sample_weight=weight)
    _assert_same_model(distributed, local, X)
    unweighted = LambdaMARTRanker(**PARAMS).fit(X, y, qid=qid)
    assert not np.allclose(unweighted.predict(X), local.predict(X))


def test_early_stopping_and_warm_start_match_single_process(client, data):
    X, y, qid = data
    X_val, y_val, qid_val = make_ranking(n_queries=30, docs_per_query=40, n_features=12,
                                         random_state=5)
    params = dict(PARAMS, n_estimators=60, early_stopping=True, n_iter_no_change=3,
                  subsample=1.0, max_features=1.0)
    ddf = _frame(X, y, qid)
    fit_args = (ddf.drop(columns="label"), ddf["label"])
    distributed = DaskLambdaMARTRanker(**params).fit(
        *fit_args, X_val=to_frame(X_val, qid_val), y_val=y_val)
    local = LambdaMARTRanker(**params).fit(X, y, qid=qid, X_val=X_val, y_val=y_val,
                                           qid_val=qid_val)
    assert distributed.n_iter_ < 60
    _assert_same_model(distributed, local, X, to_frame(X, qid))
    np.testing.assert_allclose(distributed.validation_score_, local.validation_score_)

    warm = DaskLambdaMARTRanker(**dict(PARAMS, n_estimators=6, warm_start=True))
    warm.fit(*fit_args).set_params(n_estimators=12).fit(*fit_args)
    cold = LambdaMARTRanker(**PARAMS).fit(X, y, qid=qid)
    _assert_same_model(warm, cold, X, to_frame(X, qid))


@pytest.mark.parametrize("validation_fraction", [0.2, 7])
def test_early_stopping_on_held_out_queries_matches_single_process(client, data,
                                                                    validation_fraction,
                                                                    monkeypatch):
    # Without X_val the shards hold out the queries a single process would
    # (validation_fraction of them, by the fit's seed), and the client scores
    # them after every tree. train_score_ is scored on a sample of whole
    # queries (made smaller than the data here): the single-process sample.
    monkeypatch.setattr("sklearn_ltr._rankers.base._SMALL_TRAINSET_ROWS", 1000)
    X, y, qid = data
    params = dict(PARAMS, n_estimators=80, early_stopping=True, n_iter_no_change=3,
                  validation_fraction=validation_fraction)
    ddf = _frame(X, y, qid)
    distributed = DaskLambdaMARTRanker(**params).fit(ddf.drop(columns="label"), ddf["label"])
    local = LambdaMARTRanker(**params).fit(X, y, qid=qid)
    assert distributed._fit_workers == _workers()
    assert distributed.n_iter_ < 80
    _assert_same_model(distributed, local, X, to_frame(X, qid))
    np.testing.assert_allclose(distributed.validation_score_, local.validation_score_,
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(distributed.train_score_, local.train_score_, rtol=0, atol=1e-12)
    # The held-out queries did not train: the model differs from one fitted
    # on all queries for the same number of trees.
    every_query = LambdaMARTRanker(**dict(PARAMS, n_estimators=distributed.n_iter_)).fit(
        X, y, qid=qid)
    assert not np.allclose(every_query.predict(X), distributed.predict(to_frame(X, qid)))


@pytest.mark.parametrize("classes, scoring, extra", [
    ((DaskLambdaMARTRanker, LambdaMARTRanker), "err@5", {}),
    ((DaskCalibratedRanker, CalibratedRanker), "err@5", {"binarize": True}),
    ((DaskLambdaMARTRanker, LambdaMARTRanker), map_scorer(k=3, threshold=2), {}),
], ids=["err", "err_binarized", "map_scorer"])
def test_scoring_matches_single_process(client, data, classes, scoring, extra, monkeypatch):
    # ERR's max_grade is the largest label of the fit (4, of a training row;
    # 1 once binarized): the validation labels stop at 2, so a wrong one
    # shows. The training sample is scored by both workers and averaged.
    monkeypatch.setattr("sklearn_ltr._rankers.base._SMALL_TRAINSET_ROWS", 1000)
    X, y, qid = data
    X_val, y_val, qid_val = make_ranking(n_queries=30, docs_per_query=40, n_features=12,
                                         random_state=5)
    y_val = np.minimum(y_val, 2.0)
    assert y.max() == 4
    dask_class, local_class = classes
    params = dict(PARAMS, n_estimators=60, early_stopping=True, n_iter_no_change=3,
                  scoring=scoring, **extra)
    ddf = _frame(X, y, qid)
    distributed = dask_class(**params).fit(
        ddf.drop(columns="label"), ddf["label"], X_val=to_frame(X_val, qid_val), y_val=y_val)
    local = local_class(**params).fit(X, y, qid=qid, X_val=X_val, y_val=y_val, qid_val=qid_val)
    assert distributed._fit_workers == _workers()
    _assert_same_model(distributed, local, X, to_frame(X, qid))
    np.testing.assert_allclose(distributed.validation_score_, local.validation_score_,
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(distributed.train_score_, local.train_score_, rtol=0, atol=1e-12)


def test_label_gain_reaches_the_workers_and_the_client(client, data):
    # Labels 300 * y with the gains 2**(i / 300) - 1 give every row the
    # default gain of y, beyond the labels (about 1000) whose default gains
    # overflow: the workers' lambdas and the client's validation NDCG on
    # the held-out queries must be those of the default model on y.
    X, y, qid = data
    table = list(np.exp2(np.arange(1201) / 300) - 1)
    params = dict(PARAMS, n_estimators=30, early_stopping=True, n_iter_no_change=3,
                  subsample=1.0, max_features=1.0)
    ddf = _frame(X, 300 * y, qid)
    distributed = DaskLambdaMARTRanker(label_gain=table, **params).fit(
        ddf.drop(columns="label"), ddf["label"])
    local = LambdaMARTRanker(**params).fit(X, y, qid=qid)
    assert distributed.n_iter_ < 30
    _assert_same_model(distributed, local, X, to_frame(X, qid))
    np.testing.assert_allclose(distributed.validation_score_, local.validation_score_,
                               rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="overflow float64"):
        DaskLambdaMARTRanker(**PARAMS).fit(ddf.drop(columns="label"), ddf["label"])
    bad = _frame(X, np.where(y == 4, 1201.0, 300 * y), qid)
    with pytest.raises(ValueError, match=r"label of 1201, but with label_gain \(of length 1201"):
        DaskLambdaMARTRanker(label_gain=table, **PARAMS).fit(
            bad.drop(columns="label"), bad["label"])


def test_predict_on_dask_collections_and_to_local(client, data):
    X, y, qid = data
    ddf = _frame(X, y, qid)
    features = ddf.drop(columns="label")
    ranker = DaskLambdaMARTRanker(**PARAMS).fit(features, ddf["label"])
    local = ranker.to_local()
    assert type(local) is LambdaMARTRanker
    assert local.get_params() == ranker.get_params()
    frame = features.compute()
    np.testing.assert_array_equal(ranker.predict(features).compute().to_numpy(),
                                  local.predict(frame))
    array = da.from_array(frame.drop(columns="qid").to_numpy(), chunks=(500, 5))
    np.testing.assert_array_equal(ranker.predict(array).compute(), local.predict(frame))
    buffer = io.BytesIO()
    ranker.save_model(buffer)
    buffer.seek(0)
    loaded = load_model(buffer)
    assert type(loaded) is LambdaMARTRanker
    np.testing.assert_array_equal(loaded.predict(frame), local.predict(frame))


def test_constraints_hold_in_a_distributed_fit(client, data):
    # Features by column name: the distributed fit reads them from the dask
    # DataFrame's columns. Its model is the single-process one, scores rise
    # with f6 and fall with f2 (the free model's do not), and every path
    # stays in one interaction group.
    X, y, qid = data
    ddf = _frame(X, y, qid)
    params = dict(PARAMS, monotonic_cst={"f6": 1, "f2": -1},
                  interaction_cst=[["f6", "f1", "f2"], ["f10", "f0"]])
    distributed = DaskLambdaMARTRanker(**params).fit(ddf.drop(columns="label"), ddf["label"])
    frame = to_frame(X, qid)
    local = LambdaMARTRanker(**params).fit(frame, y)
    _assert_same_model(distributed, local, frame)
    free = LambdaMARTRanker(**PARAMS).fit(frame, y)

    rows = X[~np.isnan(X).any(axis=1)][:40]

    def steps(model, feature):
        grid = np.linspace(np.nanmin(X[:, feature]), np.nanmax(X[:, feature]), 61)
        batch = np.repeat(rows, grid.size, axis=0)
        batch[:, feature] = np.tile(grid, rows.shape[0])
        scores = model.predict(to_frame(batch, np.zeros(batch.shape[0])))
        return np.diff(scores.reshape(rows.shape[0], grid.size), axis=1)

    model = distributed.to_local()
    assert steps(model, 6).min() >= 0 > steps(free, 6).min()
    assert steps(model, 2).max() <= 0 < steps(free, 2).max()
    groups = [{6, 1, 2}, {10, 0}, {3, 4, 5, 7, 8, 9, 11}]
    for tree in model._tree_ensemble().trees():
        stack = [(0, set())]
        while stack:
            k, used = stack.pop()
            if tree["is_leaf"][k]:
                assert any(used <= group for group in groups), used
                continue
            used = used | {int(tree["feature_idx"][k])}
            stack.extend([(tree["left"][k], used), (tree["right"][k], used)])
    with pytest.raises(ValueError, match="monotonic_cst refers to feature 'f99'"):
        DaskLambdaMARTRanker(monotonic_cst={"f99": 1}).fit(ddf.drop(columns="label"),
                                                           ddf["label"])


def test_in_memory_input_fits_locally(data):
    X, y, qid = data
    ranker = DaskLambdaMARTRanker(**PARAMS).fit(X, y, qid=qid)
    local = LambdaMARTRanker(**PARAMS).fit(X, y, qid=qid)
    np.testing.assert_array_equal(ranker.predict(X), local.predict(X))


def test_a_query_split_across_partitions_is_refused(client, data):
    X, y, qid = data
    order = np.argsort(qid, kind="stable")
    frame = to_frame(X[order], qid[order]).assign(label=y[order])
    # Equal-sized partitions of query-sorted rows cut queries in two.
    ddf = dd.from_pandas(frame, npartitions=5, sort=False)
    with pytest.raises(ValueError, match="repartition_by_query"):
        DaskLambdaMARTRanker(**PARAMS).fit(ddf.drop(columns="label"), ddf["label"])


def test_bad_dask_input_is_refused(client, data):
    X, y, qid = data
    ddf = _frame(X, y, qid)
    features, labels = ddf.drop(columns=["label", "qid"]), ddf["label"]
    with pytest.raises(ValueError, match="qid is required"):
        DaskLambdaMARTRanker(**PARAMS).fit(features, labels)
    with pytest.raises(ValueError, match="validation_fraction=None"):
        DaskLambdaMARTRanker(**dict(PARAMS, early_stopping=True, validation_fraction=None)).fit(
            ddf.drop(columns="label"), labels)
    bad = ddf.assign(label=ddf["label"] - 5)
    with pytest.raises(ValueError, match="negative"):
        DaskLambdaMARTRanker(**PARAMS).fit(bad.drop(columns="label"), bad["label"])
    with pytest.raises(ValueError, match="chunked differently"):
        n = len(y)
        DaskLambdaMARTRanker(**PARAMS).fit(
            da.from_array(X, chunks=((1000, n - 1000), (12,))),
            da.from_array(y, chunks=((n - 1000, 1000),)),
            qid=da.from_array(qid, chunks=((1000, n - 1000),)))


def test_repartition_by_query_keeps_queries_whole_and_rows_in_order(client, data):
    X, y, qid = data
    frame = to_frame(X, qid).assign(label=y, row=np.arange(len(y)))
    ddf = repartition_by_query(dd.from_pandas(frame, npartitions=6, sort=False),
                               npartitions=3)
    parts = [ddf.get_partition(p).compute() for p in range(ddf.npartitions)]
    assert len(parts) == 3
    seen = [set(part["qid"]) for part in parts]
    assert sum(len(s) for s in seen) == len(set().union(*seen)) == len(np.unique(qid))
    assert sum(len(part) for part in parts) == len(qid)
    for part in parts:
        for _, rows in part.groupby("qid"):
            assert np.all(np.diff(rows["row"].to_numpy()) > 0)
    with pytest.raises(ValueError, match="no 'query' column"):
        repartition_by_query(ddf, qid_column="query")


def test_rechunk_by_query_cuts_arrays_at_query_starts(client, data):
    X, y, qid = data
    order = np.argsort(qid, kind="stable")
    X, y, qid = X[order], y[order], qid[order]
    arrays = [da.from_array(a, chunks=500) for a in (y, qid)]
    dX = da.from_array(X, chunks=(500, 12))
    dX, dy, dqid = rechunk_by_query(dX, *arrays)
    assert dX.chunks[0] == dy.chunks[0] == dqid.chunks[0]
    cuts = np.cumsum(dX.chunks[0])[:-1]
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    assert np.isin(cuts, starts).all()
    assert abs(len(dX.chunks[0]) - int(np.ceil(len(y) / 500))) <= 1
    ranker = DaskLambdaMARTRanker(**PARAMS).fit(dX, dy, qid=dqid)
    np.testing.assert_array_equal(ranker.predict(X),
                                  LambdaMARTRanker(**PARAMS).fit(X, y, qid=qid).predict(X))
    interleaved = da.from_array(np.tile([1, 2], len(y) // 2 + 1)[: len(y)], chunks=500)
    with pytest.raises(ValueError, match="not contiguous"):
        rechunk_by_query(da.from_array(X, chunks=(500, 12)), arrays[0], interleaved)
    # Boolean indexing with a dask mask leaves the chunk lengths unknown.
    unknown = da.from_array(X, chunks=(500, 12))[da.ones(len(y), chunks=500, dtype=bool)]
    assert np.isnan(unknown.shape[0])
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        rechunk_by_query(unknown, *arrays)


def _displayed_positions(qid, seed):
    """A 1-based position for every row: its place in a random order of its
    query's rows."""
    rng = np.random.default_rng(seed)
    position = np.empty(qid.shape[0], dtype=np.int64)
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        position[rows] = rng.permutation(rows.shape[0]) + 1
    return position


def test_position_debiasing_matches_single_process(client, data):
    # The workers' pair costs are summed before the biases are re-estimated,
    # so every shard debiases with the biases of the single-process fit.
    X, y, qid = data
    clicks = (y > 1).astype(float)
    position = _displayed_positions(qid, 0)
    params = dict(PARAMS, position_debiasing="unbiased_lambdamart")
    ddf = _frame(X, clicks, qid, position=position)
    distributed = DaskLambdaMARTRanker(**params).fit(
        ddf.drop(columns=["label", "position"]), ddf["label"], position=ddf["position"])
    local = LambdaMARTRanker(**params).fit(X, clicks, qid=qid, position=position)
    assert local.objective_ == distributed.objective_ == "lambdarank_unbiased"
    _assert_same_model(distributed, local, X, to_frame(X, qid))
    np.testing.assert_allclose(distributed.position_bias_, local.position_bias_, rtol=1e-9)
    np.testing.assert_allclose(distributed.position_bias_unclicked_,
                               local.position_bias_unclicked_, rtol=1e-9)
    # Debiasing changed the model: the plain fit differs.
    plain = LambdaMARTRanker(**PARAMS).fit(X, clicks, qid=qid)
    assert not np.allclose(plain.predict(X), local.predict(X))
    buffer = io.BytesIO()
    distributed.save_model(buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(load_model(buffer).position_bias_, distributed.position_bias_)
    # A warm start continues the biases on the workers too.
    warm = DaskLambdaMARTRanker(**dict(params, n_estimators=6, warm_start=True))
    fit_args = (ddf.drop(columns=["label", "position"]), ddf["label"])
    warm.fit(*fit_args, position=ddf["position"]).set_params(n_estimators=12)
    warm.fit(*fit_args, position=ddf["position"])
    _assert_same_model(warm, local, X, to_frame(X, qid))
    np.testing.assert_allclose(warm.position_bias_, local.position_bias_, rtol=1e-9)


@pytest.mark.parametrize("target_metric", [None, "map"])
def test_sampled_pairs_match_single_process(client, data, target_metric):
    # A shard takes its rows' share of the draws (one double per row and
    # partner, in the global row order), and its queries are whole, so its
    # rows draw the partners they draw in one process.
    X, y, qid = data
    labels = (y > 1).astype(float) if target_metric == "map" else y
    params = dict(PARAMS, target_metric=target_metric, pair_method="mean", pairs_per_document=2)
    ddf = _frame(X, labels, qid)
    distributed = DaskLambdaMARTRanker(**params).fit(ddf.drop(columns="label"), ddf["label"])
    local = LambdaMARTRanker(**params).fit(X, labels, qid=qid)
    assert local.objective_ == distributed.objective_ == "lambdarank_pairwise"
    _assert_same_model(distributed, local, X, to_frame(X, qid))
    with pytest.raises(ValueError, match="pairs_per_document=2 is the number of partners"):
        DaskLambdaMARTRanker(**dict(params, pair_method="all")).fit(
            ddf.drop(columns="label"), ddf["label"])


def test_a_model_with_target_statistics_is_not_warm_started_on_dask_collections(client, data):
    X, y, qid = data
    X = X.copy()
    X[:, 0] = np.nan_to_num(np.abs(np.round(X[:, 0] * 3)))
    ranker = DaskLambdaMARTRanker(n_estimators=2, categorical_features=[0],
                                  target_statistics="ordered", warm_start=True,
                                  early_stopping=False, random_state=0).fit(X, y, qid=qid)
    ddf = _frame(X, y, qid)
    ranker.set_params(n_estimators=3, target_statistics=None)
    with pytest.raises(ValueError, match="cannot add trees to a model fitted with target"):
        ranker.fit(ddf.drop(columns="label"), ddf["label"])
    assert ranker.n_iter_ == 2
