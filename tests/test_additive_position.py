"""LambdaMART with an additive offset per displayed position
(``position_debiasing="additive"``, LightGBM's ``Dataset(position=...)``):
the offsets against LightGBM's own, iteration by iteration; the lambdas and
the Newton step against their formulas; and the estimator option with its
checks, persistence, warm starts, routing and Dask."""

import io
import json
import logging
import re
import zipfile

import numpy as np
import pytest
from _click_fits import check_grid_search_routes_positions, early_stopped_and_full_fits, same_trees
from numpy.testing import assert_allclose, assert_array_equal

from sklearn_ltr import LambdaMARTRanker, load_model
from sklearn_ltr._gbdt.common import G_H_DTYPE
from sklearn_ltr._objectives import OBJECTIVES
from sklearn_ltr.datasets import make_ranking, simulate_clicks

PARAMS = dict(n_estimators=8, max_leaf_nodes=7, min_samples_leaf=5, early_stopping=False,
              random_state=0)


def _click_log(n_queries, seed, n_sessions=3):
    """Position-based clicks (examination 1/r) on the top 10 of a noisy
    production order; rows in session order."""
    X, y, qid = make_ranking(n_queries=n_queries, docs_per_query=30, n_features=8,
                             random_state=seed)
    rng = np.random.default_rng(seed)
    log = simulate_clicks(y.astype(int), qid, scores=X[:, 0] + rng.normal(size=y.shape[0]),
                          n_sessions=n_sessions, k=10, max_label=4, random_state=seed,
                          model="pbm", eta=1.0)
    return X[log.row], log.click.astype(float), log.session, log.position


@pytest.fixture(scope="module")
def clicks():
    return _click_log(60, seed=1)


def _offsets_of(qid):
    return np.concatenate([[0], np.flatnonzero(np.diff(qid)) + 1, [qid.shape[0]]])


def _gradients(objective, scores):
    grad = np.empty(scores.shape[0], dtype=G_H_DTYPE)
    hess = np.empty(scores.shape[0], dtype=G_H_DTYPE)
    objective.gradient_hessian(scores, grad, hess)
    return grad, hess


def _lightgbm_offsets_per_iteration(lgb, X, click, session, position, weight, regularization,
                                    learning_rate, n_iterations):
    """LightGBM's position bias factors after each of its iterations, read
    from its debug log (it has no API for them), and the booster."""
    messages = []

    class Collect(logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    logger = logging.getLogger("sklearn_ltr_tests.lightgbm_debug")
    logger.setLevel(logging.DEBUG)
    handler = Collect()
    logger.addHandler(handler)
    lgb.register_logger(logger)
    try:
        booster = lgb.train(
            dict(objective="lambdarank", learning_rate=learning_rate, num_leaves=31,
                 num_threads=1, deterministic=True, verbosity=2,
                 lambdarank_position_bias_regularization=regularization),
            lgb.Dataset(X, click, group=np.bincount(session), position=position, weight=weight),
            n_iterations,
        )
    finally:
        logger.removeHandler(handler)
        lgb.register_logger(logging.getLogger("lightgbm"))
    tables = []
    for message in messages:
        if "bias_factor" in message:
            tables.append({})
            continue
        row = re.match(r"\[LightGBM\] \[Debug\]\s+(\d+)\s+(\S+)\s*$", message)
        if tables and row:
            tables[-1][int(row.group(1))] = float(row.group(2))
    return booster, tables


@pytest.mark.parametrize("regularization, weighted", [(0.0, False), (0.5, True)])
def test_offsets_are_lightgbms_iteration_by_iteration(regularization, weighted):
    # At every iteration the objective is given LightGBM's own scores (its
    # trees so far), so the comparison isolates the offsets' update from
    # any difference between the trees. LightGBM prints 6 significant
    # digits and reads its sigmoid from a table.
    lgb = pytest.importorskip("lightgbm", reason="LightGBM is the reference")
    X, click, session, position = _click_log(200, seed=0)
    weight = np.random.default_rng(2).uniform(0.5, 2.0, click.shape[0]) if weighted else None
    n_iterations, learning_rate = 5, 0.3
    booster, tables = _lightgbm_offsets_per_iteration(
        lgb, X, click, session, position, weight, regularization, learning_rate, n_iterations)
    assert len(tables) == n_iterations
    objective = OBJECTIVES["lambdarank_additive"](
        click, _offsets_of(session), weight, position=position, learning_rate=learning_rate,
        position_bias_regularization=regularization)
    for iteration, theirs in enumerate(tables):
        scores = (booster.predict(X, raw_score=True, num_iteration=iteration) if iteration
                  else np.zeros(click.shape[0]))
        _gradients(objective, scores)
        objective.end_iteration(objective.iteration_statistics())
        expected = np.array([theirs[r] for r in range(1, 11)])
        assert_allclose(objective.position_offset, expected, rtol=5e-5, atol=1e-5,
                        err_msg=f"iteration {iteration}")
    assert np.abs(expected).max() > 0.1  # the offsets moved


def test_lambdas_are_lambdamarts_at_the_shifted_scores_and_the_step_is_newtons():
    rng = np.random.default_rng(0)
    sizes = np.array([5, 1, 7, 4])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n = offsets[-1]
    y = rng.integers(0, 3, n).astype(float)
    position = np.concatenate([rng.permutation(s) + 1 for s in sizes])
    weight = rng.uniform(0.5, 2.0, n)
    scores = rng.normal(size=n)
    start = np.array([0.4, -0.2, 0.1, 0.0, 0.3, -0.5, 0.25], dtype=np.float32)
    lr, reg = 0.3, 0.7
    objective = OBJECTIVES["lambdarank_additive"](
        y, offsets, weight, position=position, learning_rate=lr,
        position_bias_regularization=reg, initial_position_offset=start, truncation_level=4)
    grad, hess = _gradients(objective, scores)
    plain = OBJECTIVES["lambdarank"](y, offsets, weight, truncation_level=4)
    plain_grad, plain_hess = _gradients(plain, scores + start[position - 1])
    assert_array_equal(grad, plain_grad)
    assert_array_equal(hess, plain_hess)
    objective.end_iteration(objective.iteration_statistics())
    for r in range(1, 8):
        at = position == r
        count = at.sum()
        first = -grad[at].astype(float).sum() - float(start[r - 1]) * reg * count
        second = -hess[at].astype(float).sum() - reg * count
        expected = np.float32(float(start[r - 1]) + lr * first / (abs(second) + 0.001))
        assert objective.position_offset[r - 1] == expected, r
    assert not np.array_equal(objective.position_offset, start)


def test_a_position_nobody_was_shown_at_keeps_its_offset():
    y = np.array([1.0, 0.0, 0.0])
    objective = OBJECTIVES["lambdarank_additive"](
        y, np.array([0, 3]), position=np.array([1, 2, 4]), learning_rate=0.1,
        initial_position_offset=np.array([0.0, 0.0, 0.7]))
    _gradients(objective, np.zeros(3))
    objective.end_iteration(objective.iteration_statistics())
    assert objective.position_offset[2] == np.float32(0.7)
    assert objective.position_offset[0] > 0 > objective.position_offset[1]


@pytest.mark.parametrize("bad, match", [
    (dict(learning_rate=-1.0), "learning_rate must be a finite number >= 0"),
    (dict(position_bias_regularization=np.nan), "position_bias_regularization must be"),
    (dict(position=np.array([0, 1, 2])), "position must be 1-based"),
])
def test_the_objective_refuses_bad_values(bad, match):
    kwargs = {"position": np.array([1, 2, 3]), "learning_rate": 0.1, **bad}
    with pytest.raises(ValueError, match=match):
        OBJECTIVES["lambdarank_additive"](np.array([1.0, 0.0, 0.0]), np.array([0, 3]), **kwargs)


def test_the_offsets_fall_with_position_and_change_the_model(clicks):
    X, click, qid, position = clicks
    plain = LambdaMARTRanker(**PARAMS).fit(X, click, qid=qid)
    additive = LambdaMARTRanker(**PARAMS, position_debiasing="additive").fit(
        X, click, qid=qid, position=position)
    assert additive.objective_ == "lambdarank_additive"
    assert not hasattr(additive, "position_bias_")
    offset = additive.position_offset_
    assert offset.shape == (10,) and offset.dtype == np.float64
    # Clicks fall with position (examination 1/r): so do the offsets.
    assert offset[0] > offset[4] > offset[9]
    assert not same_trees(plain, additive)
    # The first tree is grown before any offset is learned: plain LambdaMART's.
    one = LambdaMARTRanker(**dict(PARAMS, n_estimators=1), position_debiasing="additive")
    assert same_trees(one.fit(X, click, qid=qid, position=position),
                       LambdaMARTRanker(**dict(PARAMS, n_estimators=1)).fit(X, click, qid=qid))
    # A penalty keeps the offsets nearer 0.
    penalised = LambdaMARTRanker(**PARAMS, position_debiasing="additive",
                                 position_bias_regularization=5.0).fit(
        X, click, qid=qid, position=position)
    assert np.abs(penalised.position_offset_).sum() < np.abs(offset).sum()


def test_regularization_without_additive_is_refused(clicks):
    X, click, qid, position = clicks
    for debiasing in (None, "unbiased_lambdamart"):
        ranker = LambdaMARTRanker(**PARAMS, position_debiasing=debiasing,
                                  position_bias_regularization=1.0)
        with pytest.raises(ValueError, match="read by position_debiasing='additive' only"):
            ranker.fit(X, click, qid=qid, position=position)


def test_without_positions_it_warns_and_is_plain_lambdamart(clicks):
    X, click, qid, _ = clicks
    with pytest.warns(UserWarning, match="needs the displayed positions"):
        ranker = LambdaMARTRanker(**PARAMS, position_debiasing="additive").fit(X, click, qid=qid)
    assert same_trees(ranker, LambdaMARTRanker(**PARAMS).fit(X, click, qid=qid))
    assert not hasattr(ranker, "position_offset_")


def test_warm_start_continues_the_trees_and_the_offsets(clicks):
    X, click, qid, position = clicks
    params = dict(PARAMS, position_debiasing="additive")
    whole = LambdaMARTRanker(**params).fit(X, click, qid=qid, position=position)
    warm = LambdaMARTRanker(**dict(params, n_estimators=3, warm_start=True))
    warm.fit(X, click, qid=qid, position=position)
    warm.set_params(n_estimators=PARAMS["n_estimators"]).fit(X, click, qid=qid,
                                                             position=position)
    assert same_trees(whole, warm)
    assert_array_equal(warm.position_offset_, whole.position_offset_)


def test_early_stopping_on_held_out_sessions_learns_offsets_from_training_rows_only(clicks):
    stopped, full = early_stopped_and_full_fits(
        clicks, dict(PARAMS, n_estimators=200, position_debiasing="additive"))
    # The offsets are those after the last tree grown, from the training rows.
    assert_array_equal(stopped.position_offset_, full.position_offset_)


def test_save_and_load_keep_the_offsets_and_a_warm_start_continues(clicks):
    X, click, qid, position = clicks
    params = dict(PARAMS, position_debiasing="additive", position_bias_regularization=0.25)
    first = LambdaMARTRanker(**dict(params, n_estimators=3, warm_start=True)).fit(
        X, click, qid=qid, position=position)
    buffer = io.BytesIO()
    first.save_model(buffer)
    buffer.seek(0)
    loaded = load_model(buffer)
    assert loaded.position_debiasing == "additive"
    assert loaded.position_bias_regularization == 0.25
    assert loaded.objective_ == "lambdarank_additive"
    assert_array_equal(loaded.position_offset_, first.position_offset_)
    assert_array_equal(loaded.predict(X), first.predict(X))
    loaded.set_params(n_estimators=PARAMS["n_estimators"]).fit(X, click, qid=qid,
                                                               position=position)
    whole = LambdaMARTRanker(**params).fit(X, click, qid=qid, position=position)
    assert same_trees(loaded, whole)
    assert_array_equal(loaded.position_offset_, whole.position_offset_)


def test_grid_search_routes_positions_to_fit(clicks):
    base = LambdaMARTRanker(**PARAMS, position_debiasing="additive")
    check_grid_search_routes_positions(clicks, base, "position_bias_regularization", [0.0, 2.0])


def test_dask_training_gives_the_single_process_model(clicks):
    pytest.importorskip("distributed")
    dd = pytest.importorskip("dask.dataframe")
    from _dask_cluster import local_cluster

    from sklearn_ltr.dask import DaskLambdaMARTRanker, repartition_by_query
    from sklearn_ltr.datasets import to_frame

    X, click, qid, position = clicks
    params = dict(PARAMS, n_estimators=5, position_debiasing="additive",
                  position_bias_regularization=0.5)
    local = LambdaMARTRanker(**params).fit(X, click, qid=qid, position=position)
    frame = to_frame(X, qid).assign(label=click, position=position)
    ddf = repartition_by_query(dd.from_pandas(frame, npartitions=3, sort=False))
    features = ddf.drop(columns=["label", "position"])
    with local_cluster() as client:  # noqa: F841 (the default client of the fit)
        distributed = DaskLambdaMARTRanker(**params).fit(features, ddf["label"],
                                                         position=ddf["position"])
    assert distributed.objective_ == "lambdarank_additive"
    # The workers' sums by position are added in another order: offsets
    # agree to float32 rounding, trees in structure.
    assert_allclose(distributed.position_offset_, local.position_offset_, rtol=1e-5, atol=1e-7)
    for got, expected in zip(distributed._booster.trees, local._booster.trees):
        for field in ("feature_idx", "bin_threshold", "missing_go_to_left", "left", "count"):
            assert_array_equal(got[field], expected[field], err_msg=field)
        assert_allclose(got["value"], expected["value"], rtol=1e-5, atol=1e-9)


def _resaved(path, edit):
    """A copy of the model file at ``path`` with its JSON edited."""
    with zipfile.ZipFile(path) as source:
        members = {name: source.read(name) for name in source.namelist()}
    doc = json.loads(members["model.json"])
    edit(doc["fitted"])
    members["model.json"] = json.dumps(doc).encode()
    edited = path.with_name("edited.npz")
    with zipfile.ZipFile(edited, "w") as target:
        for name, data in members.items():
            target.writestr(name, data)
    return edited


def test_model_files_with_missing_foreign_or_bad_offsets_are_refused(clicks, tmp_path):
    X, click, qid, position = clicks
    path = tmp_path / "additive.npz"
    LambdaMARTRanker(**PARAMS, position_debiasing="additive").fit(
        X, click, qid=qid, position=position).save_model(path)
    plain_path = tmp_path / "plain.npz"
    LambdaMARTRanker(**PARAMS).fit(X, click, qid=qid).save_model(plain_path)
    cases = [
        (path, lambda fitted: fitted.pop("position_offset_"), "belongs to models of the "
         "lambdarank_additive objective"),
        (path, lambda fitted: fitted.update(position_offset_=[0.1, "nan"]), "finite numbers"),
        (path, lambda fitted: fitted.update(position_bias_=[1.0], position_bias_unclicked_=[1.0]),
         "lambdarank_unbiased objective"),
        (plain_path, lambda fitted: fitted.update(position_offset_=[0.5]),
         "lambdarank_additive objective"),
    ]
    for source, edit, problem in cases:
        with pytest.raises(ValueError, match=problem):
            load_model(_resaved(source, edit))
