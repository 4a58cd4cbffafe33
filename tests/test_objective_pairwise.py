"""Tests for sklearn_ltr._objectives.pairwise (RankNet, LambdaMART for MAP,
and XGBoost's pair methods) and LambdaMARTRanker's target_metric,
pair_method and pairs_per_document.

Oracles: a plain Python loop over pairs whose weights come from swapping the
two documents and recomputing NDCG or average precision from scratch;
XGBoost's rank:pairwise, rank:map and rank:ndcg trees on the same data;
counts of the documents the sampler may draw; and fits that must agree bit
for bit (the default model, thread counts).
"""

import math

import numba
import numpy as np
import pytest
from scipy.special import expit
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr._objectives import OBJECTIVES, LambdaRankObjective, PairwiseLambdaRankObjective
from sklearn_ltr._utils.parallel import parallel_kernels_only
from sklearn_ltr.datasets import make_ranking

METRICS = [None, "ndcg", "map"]
METHODS = ["topk", "all", "mean"]


# -- the reference --------------------------------------------------------------------


def _dcg(gains_in_rank_order):
    return sum(g / math.log2(2 + r) for r, g in enumerate(gains_in_rank_order))


def _average_precision(relevant_in_rank_order):
    hits, total = 0, 0.0
    for r, rel in enumerate(relevant_in_rank_order):
        if rel:
            hits += 1
            total += hits / (r + 1)
    return total / hits if hits else 0.0


def _pair_weight(metric, labels_by_rank, i, j, k):
    """|change of the metric| when ranks i and j swap, recomputed from
    scratch; 1 for RankNet."""
    if metric is None:
        return 1.0
    swapped = labels_by_rank.copy()
    swapped[i], swapped[j] = swapped[j], swapped[i]
    if metric == "map":
        return abs(_average_precision(swapped) - _average_precision(labels_by_rank))
    gains = 2.0 ** labels_by_rank - 1
    ideal = _dcg(np.sort(gains)[::-1][:k])
    return abs(_dcg(2.0 ** swapped - 1) - _dcg(gains)) / ideal if ideal > 0 else 0.0


def _reference_one_query(y, s, metric, method, k, sigma, normalize, partners=None):
    """Lambdas of one query, pair by pair. ``partners[a]`` lists the rows
    drawn for row ``a`` ("mean")."""
    n = len(y)
    grad, hess = np.zeros(n), np.zeros(n)
    if n < 2:
        return grad, hess
    order = np.argsort(-s, kind="stable")
    rank = np.empty(n, dtype=int)
    rank[order] = np.arange(n)
    labels_by_rank = y[order]
    if method == "mean":
        pairs = [(min(rank[a], rank[b]), max(rank[a], rank[b]))
                 for a in range(n) for b in partners[a] if b >= 0]
    else:
        top = k if method == "topk" else n
        pairs = [(i, j) for i in range(min(n - 1, top)) for j in range(i + 1, n)]
    cutoff = k if method == "topk" else n
    divide = normalize and s[order[0]] != s[order[-1]]
    total = 0.0
    for i, j in pairs:
        a, b = order[i], order[j]
        if y[a] == y[b]:
            continue
        high, low = (a, b) if y[a] > y[b] else (b, a)
        w = _pair_weight(metric, labels_by_rank, i, j, cutoff)
        if divide:
            w /= 0.01 + abs(s[a] - s[b])
        p = expit(-sigma * (s[high] - s[low]))
        grad[high] -= sigma * w * p
        grad[low] += sigma * w * p
        hess[high] += sigma**2 * w * p * (1 - p)
        hess[low] += sigma**2 * w * p * (1 - p)
        total += 2 * sigma * w * p
    if normalize:
        if method == "mean":
            factor = 1.0 / len(partners[0])
        else:
            factor = math.log2(1 + total) / total if total > 0 else 1.0
        grad *= factor
        hess *= factor
    return grad, hess


def _reference(y, s, offsets, w=None, partners=None, **params):
    grad, hess = np.zeros(len(y)), np.zeros(len(y))
    for q in range(len(offsets) - 1):
        sl = slice(offsets[q], offsets[q + 1])
        local = None if partners is None else partners[sl]
        grad[sl], hess[sl] = _reference_one_query(y[sl], s[sl], partners=local, **params)
    if w is not None:
        grad *= w
        hess *= w
    return grad, hess


def _compute(objective, s, seed=0):
    objective.prepare_iteration(np.random.default_rng(seed))
    grad = np.full(len(s), np.nan, dtype=np.float32)
    hess = np.full(len(s), np.nan, dtype=np.float32)
    objective.gradient_hessian(np.asarray(s, dtype=np.float64), grad, hess)
    return grad, hess


def _random_data(seed, n_queries=25, max_size=14, max_label=3):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size + 1, n_queries)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, max_label + 1, offsets[-1]).astype(np.float64)
    # Rounded scores tie; few labels tie; equal scores in a query happen.
    s = np.round(rng.normal(size=offsets[-1]), 1)
    s[offsets[1]:offsets[2]] = 0.5
    return y, s, offsets


def _params(method, k, m):
    if method == "topk":
        return dict(truncation_level=k)
    return dict(pairs_per_document=m) if method == "mean" else {}


# -- gradients against the pair-by-pair reference -----------------------------------


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("normalize, sigma, k, m, weighted",
                         [(True, 1.0, 5, 1, False), (False, 1.7, 3, 3, True),
                          (True, 0.6, 30, 2, True)])
def test_gradients_match_the_pair_by_pair_reference(metric, method, normalize, sigma, k, m,
                                                    weighted):
    y, s, offsets = _random_data(k + m)
    if metric == "map":
        y = (y >= 2).astype(float)
    w = np.random.default_rng(1).uniform(0.2, 2.0, len(y)) if weighted else None
    objective = OBJECTIVES["lambdarank_pairwise"](
        y, offsets, w, target_metric=metric, pair_method=method, sigma=sigma,
        normalize_lambdas=normalize, **_params(method, k, m))
    grad, hess = _compute(objective, s)
    partners = objective.partners if method == "mean" else None
    ref_grad, ref_hess = _reference(y, s, offsets, w, partners, metric=metric, method=method,
                                    k=k, sigma=sigma, normalize=normalize)
    assert np.abs(ref_grad).max() > 0.05  # pairs were formed
    np.testing.assert_allclose(grad, ref_grad, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(hess, ref_hess, rtol=2e-5, atol=1e-6)


def test_ranknet_and_map_weights_differ_from_ndcg():
    # The three metrics give three different sets of lambdas on one query.
    y = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    s = np.array([0.1, 0.5, -0.3, 0.9, 0.2, -1.0])
    offsets = np.array([0, 6])
    grads = [_compute(PairwiseLambdaRankObjective(y, offsets, target_metric=t,
                                                  pair_method="all"), s)[0]
             for t in METRICS]
    assert not np.allclose(grads[0], grads[1]) and not np.allclose(grads[1], grads[2])
    assert not np.allclose(grads[0], grads[2])


def test_delta_map_is_the_change_of_average_precision():
    # Hand-computed: relevant at ranks 1 and 3 (1-based) of 4; AP = (1 + 2/3) / 2.
    # Swapping ranks 1 and 2 gives relevant at 2 and 3: AP = (1/2 + 2/3) / 2.
    y = np.array([1.0, 0.0, 1.0, 0.0])
    s = np.array([4.0, 3.0, 2.0, 1.0])
    objective = PairwiseLambdaRankObjective(
        y, np.array([0, 4]), target_metric="map", pair_method="topk", truncation_level=1,
        normalize_lambdas=False)
    grad, hess = _compute(objective, s)
    delta = (1 + 2 / 3) / 2 - (1 / 2 + 2 / 3) / 2
    # Pairs of rank 1 with ranks 2 and 4 (rank 3 has the same label).
    delta_4 = (1 + 2 / 3) / 2 - (1 / 3 + 2 / 4) / 2
    p2, p4 = expit(-(4.0 - 3.0)), expit(-(4.0 - 1.0))
    np.testing.assert_allclose(grad, [-(delta * p2 + delta_4 * p4), delta * p2, 0, delta_4 * p4],
                               rtol=1e-6)


def test_gradients_sum_to_zero_and_do_not_depend_on_the_order_of_rows():
    y, s, offsets = _random_data(3)
    for metric in METRICS:
        labels = (y >= 2).astype(float) if metric == "map" else y
        objective = PairwiseLambdaRankObjective(labels, offsets, target_metric=metric,
                                                pair_method="all")
        grad, hess = _compute(objective, s)
        assert np.all(hess >= 0)
        for q in range(len(offsets) - 1):
            assert abs(grad[offsets[q]:offsets[q + 1]].sum()) < 1e-5


# -- "ndcg" with "topk" and "all" is LambdaMART ----------------------------------------


def test_ndcg_topk_and_all_are_lambdamarts_lambdas():
    y, s, offsets = _random_data(4)
    for method, k in [("topk", 4), ("all", 10**6)]:
        objective = PairwiseLambdaRankObjective(y, offsets, pair_method=method,
                                                **_params(method, 4, 1))
        expected = LambdaRankObjective(y, offsets, truncation_level=k)
        for got, want in zip(_compute(objective, s), _compute(expected, s)):
            np.testing.assert_array_equal(got, want)


# -- the sampler of "mean" --------------------------------------------------------------


def test_mean_draws_pairs_of_different_labels_in_the_same_query():
    y, _, offsets = _random_data(5, n_queries=40)
    m = 3
    objective = PairwiseLambdaRankObjective(y, offsets, pair_method="mean",
                                            pairs_per_document=m)
    assert np.all(objective.partners == -1)  # nothing drawn yet
    default = PairwiseLambdaRankObjective(y, offsets, pair_method="mean")
    assert default.pairs_per_document == 1 and default.partners.shape == (len(y), 1)
    objective.prepare_iteration(np.random.default_rng(0))
    partners = objective.partners
    assert partners.shape == (len(y), m)
    for q in range(len(offsets) - 1):
        a, b = offsets[q], offsets[q + 1]
        labels = y[a:b]
        for row in range(b - a):
            drawn = partners[a + row]
            if np.all(labels == labels[row]):
                assert np.all(drawn == -1)  # no candidate: no pair
            else:
                assert np.all((drawn >= 0) & (drawn < b - a))
                assert np.all(labels[drawn] != labels[row])


def test_mean_draws_uniformly_and_each_document_gets_the_expected_pair_count():
    """Each row draws ``m`` partners uniformly among the rows of its query
    with another label, so row ``d`` is in ``m + sum over rows e with
    another label of m / n_other(e)`` pairs on average."""
    y = np.array([0, 0, 0, 1, 1, 2, 0, 1, 3, 3, 3], dtype=float)
    offsets = np.array([0, 6, 11])
    m, n_draws = 2, 3000
    objective = PairwiseLambdaRankObjective(y, offsets, pair_method="mean",
                                            pairs_per_document=m)
    rng = np.random.default_rng(7)
    picked = np.zeros((len(y), len(y)))  # picked[row, partner], query-local to global
    in_pairs = np.zeros(len(y))
    for _ in range(n_draws):
        objective.prepare_iteration(rng)
        for row in range(len(y)):
            start = offsets[np.searchsorted(offsets, row, side="right") - 1]
            for partner in objective.partners[row]:
                picked[row, start + partner] += 1
                in_pairs[row] += 1
                in_pairs[start + partner] += 1
    expected_pairs = np.zeros(len(y))
    for q in range(2):
        a, b = offsets[q], offsets[q + 1]
        for d in range(a, b):
            other = [e for e in range(a, b) if y[e] != y[d]]
            # Uniform over the candidates: counts within 5 standard errors.
            share = 1.0 / len(other)
            expected = m * n_draws * share
            tolerance = 5 * math.sqrt(m * n_draws * share * (1 - share))
            assert np.all(np.abs(picked[d, other] - expected) <= tolerance + 1e-9)
            assert picked[d].sum() == m * n_draws
            expected_pairs[d] = m + sum(
                m / sum(y[f] != y[e] for f in range(a, b)) for e in other)
    np.testing.assert_allclose(in_pairs / n_draws, expected_pairs, rtol=0.05)


def test_mean_draws_come_from_the_generator_only():
    y, s, offsets = _random_data(6)
    objective = PairwiseLambdaRankObjective(y, offsets, pair_method="mean",
                                            pairs_per_document=2)
    first = _compute(objective, s, seed=1)
    again = _compute(objective, s, seed=1)
    other = _compute(objective, s, seed=2)
    np.testing.assert_array_equal(first[0], again[0])
    assert not np.array_equal(first[0], other[0])
    # The kernel draws nothing: the same partners give the same lambdas.
    grad = np.empty(len(y), dtype=np.float32)
    hess = np.empty(len(y), dtype=np.float32)
    objective.gradient_hessian(s, grad, hess)
    np.testing.assert_array_equal(grad, other[0])


def test_mean_takes_one_double_per_row_per_partner():
    # What lets a Dask shard take its rows' share of the draws.
    y, _, offsets = _random_data(8)

    class Recorder:
        def __init__(self):
            self.calls = []

        def random(self, size=None, out=None):
            self.calls.append(out.shape)
            out[:] = 0.5
            return out

    recorder = Recorder()
    PairwiseLambdaRankObjective(y, offsets, pair_method="mean",
                                pairs_per_document=3).prepare_iteration(recorder)
    assert recorder.calls == [(len(y),)] * 3
    recorder.calls.clear()
    PairwiseLambdaRankObjective(y, offsets, pair_method="all").prepare_iteration(recorder)
    assert recorder.calls == []


# -- XGBoost ----------------------------------------------------------------------------


def _xgboost_leaves(xgb, X, y, init, sizes, objective, **params):
    """Leaf of each row and its value, from one XGBoost tree grown on top of
    the scores ``init`` with learning rate 1 and L2 penalty 1."""
    dmatrix = xgb.DMatrix(X, y, base_margin=init, group=sizes)
    booster = xgb.train(
        dict(objective=objective, eta=1.0, reg_lambda=1.0, min_child_weight=0.0,
             grow_policy="lossguide", max_leaves=6, max_depth=0, tree_method="hist",
             nthread=1, base_score=0.0, **params),
        dmatrix, num_boost_round=1)
    leaf = booster.predict(dmatrix, pred_leaf=True).ravel()
    return leaf, booster.predict(dmatrix, output_margin=True) - init


XGBOOST_OBJECTIVES = {None: "rank:pairwise", "map": "rank:map", "ndcg": "rank:ndcg"}


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("method, n_pairs, normalize",
                         [("topk", None, True), ("topk", 30, True), ("topk", 5, False),
                          ("topk", 10, True), ("all", 40, True), ("all", 40, False),
                          ("mean", 1, True), ("mean", 3, True), ("mean", 3, False)])
def test_leaf_values_match_xgboost(metric, method, n_pairs, normalize):
    """One XGBoost tree of ``rank:pairwise`` / ``rank:map`` / ``rank:ndcg``
    (learning rate 1, ``reg_lambda=1``) against our gradients summed over
    its leaves.

    XGBoost's sigmoid has no steepness (``sigma=1``), and its per-pair
    hessian is ``2 * p * (1 - p) * w``, twice ours, so its Newton leaf
    ``-G / (2 H + 1)`` is ``(-G / (H + 0.5)) / 2`` with our ``G`` and ``H``:
    this checks the scale of gradients and hessians, not only their ratio.
    ``normalize_lambdas`` is XGBoost's ``lambdarank_normalization`` and
    ``lambdarank_score_normalization`` together. "all" is XGBoost's "topk"
    with ``lambdarank_num_pair_per_sample`` the query size. For "mean", the
    two libraries draw from different generators, so the queries here have
    two documents: each one's only candidate is the other, and both
    samplers must draw it ``n_pairs`` times (then the ``1 / n_pairs``
    normalisation and the double counting of pairs show in the leaves).
    Queries whose labels are equal form no pair in either library.
    ``n_pairs=None`` leaves XGBoost's default, the top 32 positions.
    The remaining difference is float32 rounding (XGBoost computes the
    sigmoid from float32 scores and casts each pair's lambda to float32).
    """
    xgb = pytest.importorskip("xgboost", reason="XGBoost is the reference")
    rng = np.random.default_rng(23)
    size = 2 if method == "mean" else 40
    n_queries = 400 if method == "mean" else 60
    n = n_queries * size
    X = rng.normal(size=(n, 3))
    y = rng.integers(0, 2 if metric == "map" else 4, n).astype(float)
    init = rng.normal(size=n)
    offsets = np.arange(0, n + 1, size, dtype=np.int64)
    given = {} if n_pairs is None else {"lambdarank_num_pair_per_sample": n_pairs}
    leaf, value = _xgboost_leaves(
        xgb, X, y, init, [size] * n_queries, XGBOOST_OBJECTIVES[metric],
        lambdarank_pair_method="mean" if method == "mean" else "topk",
        lambdarank_normalization=normalize, lambdarank_score_normalization=normalize, **given)
    n_pairs = 32 if n_pairs is None else n_pairs
    objective = PairwiseLambdaRankObjective(
        y, offsets, target_metric=metric, pair_method=method, normalize_lambdas=normalize,
        **_params(method, n_pairs, n_pairs))
    grad, hess = _compute(objective, init)
    assert len(np.unique(leaf)) == 6
    worst = 0.0
    if method == "topk" and n_pairs < size:
        # The truncation matters: all pairs give other lambdas.
        every = PairwiseLambdaRankObjective(y, offsets, target_metric=metric,
                                            pair_method="all", normalize_lambdas=normalize)
        assert np.abs(_compute(every, init)[0] - grad).max() > 1e-3
    for leaf_id in np.unique(leaf):
        rows = leaf == leaf_id
        ours = -grad[rows].sum(dtype=np.float64) / (hess[rows].sum(dtype=np.float64) + 0.5) / 2
        worst = max(worst, np.abs(value[rows] - ours).max())
    assert worst < 1e-6 * max(1.0, np.abs(value).max())


# -- the ranker ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=40, docs_per_query=20, n_features=6, random_state=0)
    return X, y, qid


SMALL = dict(n_estimators=8, max_leaf_nodes=8, min_samples_leaf=5, random_state=3)


def _trees(ranker):
    return [t.tobytes() for t in ranker._booster.trees]


def test_the_default_is_lambdamart_bit_for_bit(data):
    X, y, qid = data
    default = LambdaMARTRanker(**SMALL).fit(X, y, qid=qid)
    assert (default.target_metric, default.pair_method, default.pairs_per_document) == (
        "ndcg", "topk", None)
    assert default.objective_ == "lambdarank"
    explicit = LambdaMARTRanker(target_metric="ndcg", pair_method="topk", **SMALL)
    assert _trees(explicit.fit(X, y, qid=qid)) == _trees(default)


def test_all_pairs_of_ndcg_is_lambdamart_without_truncation(data):
    X, y, qid = data
    every = LambdaMARTRanker(pair_method="all", **SMALL).fit(X, y, qid=qid)
    assert every.objective_ == "lambdarank_pairwise"
    untruncated = LambdaMARTRanker(truncation_level=10**6, **SMALL).fit(X, y, qid=qid)
    assert _trees(every) == _trees(untruncated)


@pytest.mark.parametrize("metric", METRICS)
def test_mean_gives_the_same_model_on_one_and_two_threads(data, metric):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip(reason="numba was started with a single thread (NUMBA_NUM_THREADS=1)")
    X, y, qid = data
    y = (y >= 1).astype(float) if metric == "map" else y
    params = dict(SMALL, target_metric=metric, pair_method="mean", pairs_per_document=2,
                  subsample=0.8)
    one = LambdaMARTRanker(n_jobs=1, **params).fit(X, y, qid=qid)
    with parallel_kernels_only():
        two = LambdaMARTRanker(n_jobs=2, **params).fit(X, y, qid=qid)
    assert _trees(one) == _trees(two)
    # The draws matter: another seed gives another model.
    other = LambdaMARTRanker(n_jobs=1, **dict(params, random_state=4)).fit(X, y, qid=qid)
    assert _trees(other) != _trees(one)


def test_each_option_changes_the_model(data):
    X, y, qid = data
    binary = (y >= 1).astype(float)
    # Queries have at most 30 documents: "topk" must cut lower to differ from "all".
    models = {
        (metric, method): _trees(LambdaMARTRanker(
            target_metric=metric, pair_method=method, **_params(method, 5, 1), **SMALL,
        ).fit(X, binary, qid=qid))
        for metric in METRICS for method in METHODS
    }
    assert len(set(map(tuple, models.values()))) == len(models)


@pytest.mark.parametrize(
    "params, error, match",
    [
        (dict(target_metric="mrr"), InvalidParameterError, "'target_metric' parameter"),
        (dict(pair_method="random"), InvalidParameterError, "'pair_method' parameter"),
        (dict(pairs_per_document=0), InvalidParameterError, "'pairs_per_document' parameter"),
        (dict(pairs_per_document=2), ValueError,
         "pairs_per_document=2 is the number of partners drawn per document by "
         "pair_method='mean'; with pair_method='topk'"),
        (dict(pair_method="all", pairs_per_document=2), ValueError,
         "pairs_per_document=2 .* with pair_method='all'"),
        (dict(pair_method="mean", truncation_level=10), ValueError,
         "truncation_level=10 is read by pair_method='topk' only"),
        (dict(target_metric=None, secondary_weight=0.5), ValueError,
         "target_metric=None, pair_method='topk' cannot be combined with secondary_weight"),
        (dict(pair_method="mean", leaf_estimation="gradient"), ValueError,
         "cannot be combined with secondary_weight, lambda_schedule or leaf_estimation"),
        (dict(target_metric="map", position_debiasing="unbiased_lambdamart"), ValueError,
         "cannot be combined with position_debiasing='unbiased_lambdamart'"),
    ],
)
def test_bad_values_and_conflicts_raise_naming_the_argument(data, params, error, match):
    X, y, qid = data
    kwargs = {"y_secondary": np.full(len(y), 0.5)} if "secondary_weight" in params else {}
    with pytest.raises(error, match=match):
        LambdaMARTRanker(**SMALL, **params).fit(X, (y >= 1).astype(float), qid=qid, **kwargs)


def test_map_refuses_graded_labels(data):
    X, y, qid = data
    with pytest.raises(ValueError, match="target_metric='map' needs binary labels"):
        LambdaMARTRanker(target_metric="map", **SMALL).fit(X, y, qid=qid)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(target_metric="err"), "target_metric must be 'ndcg', 'map' or None"),
        (dict(pair_method="any"), "pair_method must be 'topk', 'all' or 'mean'"),
        (dict(pair_method="mean", pairs_per_document=0), "pairs_per_document must be >= 1"),
        (dict(pair_method="mean", pairs_per_document=1.5), "pairs_per_document must be an "
                                                           "integer"),
        (dict(pairs_per_document=3), "pairs_per_document=3 is read by pair_method='mean'"),
        (dict(pair_method="all", truncation_level=5), "truncation_level is read by "
                                                      "pair_method='topk' only"),
    ],
)
def test_objective_refuses_bad_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PairwiseLambdaRankObjective(np.array([1.0, 0.0]), np.array([0, 2]), **kwargs)


def test_registry():
    assert OBJECTIVES["lambdarank_pairwise"] is PairwiseLambdaRankObjective
    assert PairwiseLambdaRankObjective.name == "lambdarank_pairwise"
