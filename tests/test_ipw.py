"""Inverse-propensity-weighted LambdaMART (``position_debiasing="ipw"``):
the objective's lambdas against a pair-by-pair formula and a hand-computed
query, and the estimator option with its checks, persistence, warm starts,
routing and Dask."""

import io

import numpy as np
import pytest
from _click_fits import check_grid_search_routes_positions, early_stopped_and_full_fits, same_trees
from _debiased_lambdas import debiased_lambdas_by_pair
from numpy.testing import assert_allclose, assert_array_equal

from sklearn_ltr import LambdaMARTRanker, load_model
from sklearn_ltr._gbdt.common import G_H_DTYPE
from sklearn_ltr._objectives import OBJECTIVES
from sklearn_ltr.datasets import make_ranking


def _reference(y, scores, position, offsets, propensity, clip, **kwargs):
    """IPW lambdas and hessians, one pair at a time: the debiased lambdas
    with ``t+ = max(propensity, clip)`` at the clicked document's position
    and ``t- = 1``, each pair's lambda times ``1 / max(propensity, clip)``."""
    propensity = np.asarray(propensity, dtype=float)
    grad, hess, _ = debiased_lambdas_by_pair(y, scores, position, offsets,
                                             np.maximum(propensity, clip),
                                             np.ones_like(propensity), **kwargs)
    return grad, hess


def _gradients(objective, scores):
    grad = np.empty(scores.shape[0], dtype=G_H_DTYPE)
    hess = np.empty(scores.shape[0], dtype=G_H_DTYPE)
    objective.gradient_hessian(scores, grad, hess)
    return grad.astype(float), hess.astype(float)


def _objective(y, offsets, position, propensity, **kwargs):
    return OBJECTIVES["lambdarank_ipw"](y, offsets, position=position, propensity=propensity,
                                        **kwargs)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("normalize", [True, False])
def test_lambdas_and_hessians_equal_the_pair_by_pair_formula(seed, normalize):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 10, 6)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n = offsets[-1]
    y = rng.integers(0, 3, n).astype(float)
    position = np.concatenate([rng.permutation(s) + 1 for s in sizes])
    scores = np.round(rng.normal(size=n), 1)  # ties
    weights = rng.uniform(0.5, 2.0, n)
    # Some propensities below the clip, so that both branches of the max occur.
    propensity = rng.uniform(0.01, 1.0, position.max())
    objective = _objective(y, offsets, position, propensity, propensity_clip=0.2,
                           sample_weight=weights, sigma=1.5, truncation_level=4,
                           normalize_lambdas=normalize)
    grad, hess = _gradients(objective, scores)
    expected_grad, expected_hess = _reference(
        y, scores, position, offsets, propensity, 0.2, sigma=1.5, truncation=4,
        normalize=normalize, weights=weights)
    assert_allclose(grad, expected_grad, rtol=1e-5, atol=1e-6)
    assert_allclose(hess, expected_hess, rtol=1e-5, atol=1e-6)
    assert objective.iteration_statistics() is None
    assert objective.fitted_attributes() == {}


@pytest.mark.parametrize("propensity, weight", [
    ([1.0, 0.5, 0.2], 5.0),     # 1 / 0.2
    ([1.0, 0.5, 0.001], 100.0),  # 1 / max(0.001, 0.01): the clip caps the weight
])
def test_a_two_document_query_by_hand(propensity, weight):
    # Label 0 at position 1, label 1 (the click) at position 3, equal
    # scores: the stable ranking puts row 0 first, so swapping the two moves
    # gain 1 from rank 2 to rank 1: |delta NDCG| = 1 - 1 / log2(3) (maxDCG
    # is 1), p = 1 / (1 + exp(0)) = 1/2, lambda = sigma * w * p, hessian =
    # sigma * lambda * (1 - p), all times the weight; no normalisation.
    objective = _objective(np.array([0.0, 1.0]), np.array([0, 2]), np.array([1, 3]),
                           propensity, normalize_lambdas=False)
    grad, hess = _gradients(objective, np.zeros(2))
    pair_lambda = (1 - 1 / np.log2(3)) * 0.5 * weight
    assert_allclose(grad, [pair_lambda, -pair_lambda], rtol=1e-6)
    assert_allclose(hess, [pair_lambda / 2, pair_lambda / 2], rtol=1e-6)


def test_a_constant_propensity_scales_every_unnormalised_lambda():
    # The weighting kernel, with one weight 1 / 0.5 = 2 for every pair, must
    # give twice plain LambdaMART's lambdas.
    rng = np.random.default_rng(5)
    sizes = rng.integers(2, 25, 30)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    y = rng.integers(0, 5, offsets[-1]).astype(float)
    position = np.concatenate([np.arange(1, s + 1) for s in sizes])
    scores = rng.normal(size=offsets[-1])
    ipw = _objective(y, offsets, position, np.full(position.max(), 0.5),
                     normalize_lambdas=False)
    plain = OBJECTIVES["lambdarank"](y, offsets, normalize_lambdas=False)
    for got, expected in zip(_gradients(ipw, scores), _gradients(plain, scores)):
        assert_allclose(got, 2 * expected, rtol=1e-6, atol=1e-7)


def test_the_objective_refuses_bad_propensities_and_uncovered_positions():
    y, offsets, position = np.array([1.0, 0, 0]), np.array([0, 3]), np.array([1, 2, 3])
    for bad, match in [([1.0, 0.0, 0.5], "position 2 has 0.0"),
                       ([1.0, 1.5, 1.0], r"in \(0, 1\]; position 2 has 1.5"),
                       ([1.0, np.nan, 1.0], "position 2 has nan"), ([], "non-empty"),
                       ([[1.0, 0.5, 0.5]], "1-d")]:
        with pytest.raises(ValueError, match=match):
            _objective(y, offsets, position, bad)
    # On a Dask worker only the objective sees the positions: it must refuse too.
    with pytest.raises(ValueError, match=r"position holds 3, but propensity has 2"):
        _objective(y, offsets, position, [1.0, 0.5])
    with pytest.raises(ValueError, match="propensity_clip"):
        _objective(y, offsets, position, [1.0, 0.5, 0.5], propensity_clip=0.0)


# -- the estimator -------------------------------------------------------------

PARAMS = dict(n_estimators=12, max_leaf_nodes=7, min_samples_leaf=5, early_stopping=False,
              random_state=0)
N_SHOWN = 10
PROPENSITY = 1.0 / np.arange(1, N_SHOWN + 1)


@pytest.fixture(scope="module")
def clicks():
    """A position-biased click log: 5 sessions per query, each showing the
    top 10 of a noisy relevance order, clicked with probability
    ``attractiveness / r`` (the position-based model with propensities
    ``1 / r``)."""
    X, y, qid = make_ranking(n_queries=80, docs_per_query=20, n_features=6, random_state=0)
    rng = np.random.default_rng(0)
    attractive = 0.1 + 0.9 * (2.0 ** y - 1) / 15
    rows, sessions, positions = [], [], []
    for q in np.unique(qid):
        query_rows = np.flatnonzero(qid == q)
        for _ in range(5):
            noisy = y[query_rows] + rng.normal(0, 1.5, query_rows.shape[0])
            shown = query_rows[np.argsort(-noisy)][:N_SHOWN]
            rows.append(shown)
            sessions.append(np.full(shown.shape[0], len(sessions)))
            positions.append(np.arange(1, shown.shape[0] + 1))
    rows, session, position = map(np.concatenate, (rows, sessions, positions))
    click = (rng.random(rows.shape[0]) < attractive[rows] / position).astype(float)
    return X[rows], click, session, position


def test_weights_change_the_model_and_learn_no_attributes(clicks):
    X, click, qid, position = clicks
    ranker = LambdaMARTRanker(**PARAMS, position_debiasing="ipw", propensity=PROPENSITY).fit(
        X, click, qid=qid, position=position)
    assert ranker.objective_ == "lambdarank_ipw"
    assert not hasattr(ranker, "position_bias_")
    plain = LambdaMARTRanker(**PARAMS).fit(X, click, qid=qid)
    assert not np.allclose(plain.predict(X), ranker.predict(X))


@pytest.mark.parametrize("weights_of_one", [
    dict(propensity=np.ones(N_SHOWN)),
    # Every propensity clipped up to 1.
    dict(propensity=PROPENSITY, propensity_clip=1.0),
])
def test_weights_of_one_give_plain_lambdamart_bit_for_bit(clicks, weights_of_one):
    X, click, qid, position = clicks
    plain = LambdaMARTRanker(**PARAMS).fit(X, click, qid=qid)
    ipw = LambdaMARTRanker(**PARAMS, position_debiasing="ipw", **weights_of_one).fit(
        X, click, qid=qid, position=position)
    assert same_trees(plain, ipw)


def test_without_positions_it_warns_and_is_plain_lambdamart(clicks):
    X, click, qid, _ = clicks
    plain = LambdaMARTRanker(**PARAMS).fit(X, click, qid=qid)
    with pytest.warns(UserWarning, match="position=") as record:
        ranker = LambdaMARTRanker(**PARAMS, position_debiasing="ipw",
                                  propensity=PROPENSITY).fit(X, click, qid=qid)
    assert record[0].filename == __file__
    assert ranker.objective_ == "lambdarank"
    assert same_trees(plain, ranker)


def test_the_estimator_refuses_missing_ignored_or_short_propensities(clicks):
    X, click, qid, position = clicks
    with pytest.raises(ValueError, match=r"position_debiasing='ipw' needs .*propensity="):
        LambdaMARTRanker(position_debiasing="ipw").fit(X, click, qid=qid, position=position)
    for debiasing in (None, "unbiased_lambdamart"):
        with pytest.raises(ValueError, match="propensity is read by position_debiasing='ipw'"):
            LambdaMARTRanker(position_debiasing=debiasing, propensity=PROPENSITY).fit(
                X, click, qid=qid, position=position)
        with pytest.raises(ValueError, match="propensity_clip=0.5 is read by"):
            LambdaMARTRanker(position_debiasing=debiasing, propensity_clip=0.5).fit(
                X, click, qid=qid, position=position)
    ranker = LambdaMARTRanker(**PARAMS, position_debiasing="ipw", propensity=PROPENSITY[:7])
    with pytest.raises(ValueError, match=r"position holds 10, but propensity has 7 value"):
        ranker.fit(X, click, qid=qid, position=position)
    with pytest.raises(ValueError, match=r"propensity must hold .* position 3 has -0.1"):
        ranker.set_params(propensity=[1.0, 0.5, -0.1]).fit(X, click, qid=qid, position=position)
    with pytest.raises(ValueError, match="propensity_clip"):
        LambdaMARTRanker(position_debiasing="ipw", propensity=PROPENSITY,
                         propensity_clip=0.0).fit(X, click, qid=qid, position=position)


def test_held_out_rows_beyond_the_propensities_are_refused_too(clicks):
    # Early stopping holds out queries before the objective sees the rows:
    # the check must cover those rows as well.
    X, click, qid, position = clicks
    position = position.copy()
    position[qid == qid.max()] += 5
    ranker = LambdaMARTRanker(**dict(PARAMS, early_stopping=True, validation_fraction=0.5),
                              position_debiasing="ipw", propensity=PROPENSITY)
    with pytest.raises(ValueError, match="position holds 15"):
        ranker.fit(X, click, qid=qid, position=position)


def test_early_stopping_on_held_out_sessions_keeps_the_best_trees(clicks):
    stopped, full = early_stopped_and_full_fits(
        clicks, dict(PARAMS, n_estimators=200, position_debiasing="ipw", propensity=PROPENSITY))
    # The kept trees are the first n_iter_ of a fit that grows them all.
    assert all(a.tobytes() == b.tobytes()
               for a, b in zip(stopped._booster.trees, full._booster.trees[:stopped.n_iter_]))
    best = int(np.argmax(stopped.validation_score_[1:])) + 1
    assert stopped.n_iter_ == best


def test_warm_start_continues_the_trees(clicks):
    X, click, qid, position = clicks
    params = dict(PARAMS, position_debiasing="ipw", propensity=PROPENSITY)
    whole = LambdaMARTRanker(**params).fit(X, click, qid=qid, position=position)
    warm = LambdaMARTRanker(**dict(params, n_estimators=5, warm_start=True))
    warm.fit(X, click, qid=qid, position=position)
    warm.set_params(n_estimators=PARAMS["n_estimators"]).fit(X, click, qid=qid,
                                                             position=position)
    assert same_trees(whole, warm)
    # After Unbiased LambdaMART, a warm start with "ipw" uses the given
    # propensities (not the estimated biases) and drops them.
    unbiased = LambdaMARTRanker(**dict(PARAMS, n_estimators=5, warm_start=True),
                                position_debiasing="unbiased_lambdamart")
    unbiased.fit(X, click, qid=qid, position=position)
    unbiased.set_params(position_debiasing="ipw", propensity=PROPENSITY, n_estimators=8).fit(
        X, click, qid=qid, position=position)
    assert unbiased.n_iter_ == 8 and not hasattr(unbiased, "position_bias_")


def test_save_and_load_keep_the_parameters_and_a_warm_start_continues(clicks):
    X, click, qid, position = clicks
    params = dict(PARAMS, position_debiasing="ipw", propensity=PROPENSITY, propensity_clip=0.15)
    first = LambdaMARTRanker(**dict(params, n_estimators=5, warm_start=True)).fit(
        X, click, qid=qid, position=position)
    buffer = io.BytesIO()
    first.save_model(buffer)
    buffer.seek(0)
    loaded = load_model(buffer)
    assert loaded.position_debiasing == "ipw"
    assert_array_equal(loaded.propensity, PROPENSITY)
    assert loaded.propensity_clip == 0.15
    assert loaded.objective_ == "lambdarank_ipw"
    assert_array_equal(loaded.predict(X), first.predict(X))
    loaded.set_params(n_estimators=PARAMS["n_estimators"]).fit(X, click, qid=qid,
                                                               position=position)
    whole = LambdaMARTRanker(**params).fit(X, click, qid=qid, position=position)
    assert same_trees(loaded, whole)


def test_grid_search_routes_positions_to_fit(clicks):
    base = LambdaMARTRanker(**PARAMS, position_debiasing="ipw", propensity=PROPENSITY)
    check_grid_search_routes_positions(clicks, base, "propensity_clip", [0.01, 0.5])


def test_dask_training_gives_the_single_process_model(clicks):
    pytest.importorskip("distributed")
    dd = pytest.importorskip("dask.dataframe")
    from _dask_cluster import local_cluster

    from sklearn_ltr.dask import DaskLambdaMARTRanker, repartition_by_query
    from sklearn_ltr.datasets import to_frame

    X, click, qid, position = clicks
    params = dict(PARAMS, n_estimators=6, position_debiasing="ipw", propensity=PROPENSITY)
    local = LambdaMARTRanker(**params).fit(X, click, qid=qid, position=position)
    frame = to_frame(X, qid).assign(label=click, position=position)
    ddf = repartition_by_query(dd.from_pandas(frame, npartitions=3, sort=False))
    features = ddf.drop(columns=["label", "position"])
    with local_cluster() as client:  # noqa: F841 (the default client of the fit)
        distributed = DaskLambdaMARTRanker(**params).fit(features, ddf["label"],
                                                         position=ddf["position"])
        # Positions beyond the propensities are refused on the workers.
        short = DaskLambdaMARTRanker(**dict(params, propensity=PROPENSITY[:4]))
        with pytest.raises(ValueError, match="but propensity has 4 value"):
            short.fit(features, ddf["label"], position=ddf["position"])
    assert distributed.objective_ == "lambdarank_ipw"
    for got, expected in zip(distributed._booster.trees, local._booster.trees):
        for field in ("feature_idx", "bin_threshold", "missing_go_to_left", "left", "count"):
            assert_array_equal(got[field], expected[field], err_msg=field)
        assert_allclose(got["value"], expected["value"], rtol=0, atol=1e-12)
