"""Tests of sklearn_ltr.metrics (ranking and calibration metrics).

Oracles: hand-computed cases, scikit-learn's ndcg_score/dcg_score/log_loss,
LightGBM's own ndcg@k, and a plain-Python reference implementation averaged
by brute force over every order of tied documents.
"""

import gzip
import itertools
import math
import warnings

import numpy as np
import pytest
import sklearn.metrics

from sklearn_ltr.metrics import (
    cndcg_score,
    cndcg_score_per_query,
    dcg_score,
    dcg_score_per_query,
    err_score,
    err_score_per_query,
    map_score,
    map_score_per_query,
    mrr_score,
    mrr_score_per_query,
    ndcg_score,
    ndcg_score_per_query,
    precision_at_k,
    precision_at_k_per_query,
    query_ece,
    query_ece_per_query,
    query_log_loss,
    query_log_loss_per_query,
)

# Many hand-computed cases are single queries scored without qid on purpose; the warning
# that says so is tested in test_single_query.py.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn_ltr.exceptions.SingleQueryWarning")


# --------------------------------------------------------------------------
# Plain-Python reference: each metric of one ranked list of labels.
# --------------------------------------------------------------------------
def _ref_dcg(ranked, k, gain):
    k = len(ranked) if k is None else k
    return sum(gain(y) / math.log2(r + 2) for r, y in enumerate(ranked[:k]))


def _exp_gain(y):
    return 2.0**y - 1.0


def _ref_ndcg(ranked, k, gain, no_relevant):
    ideal = _ref_dcg(sorted(ranked, reverse=True), k, gain)
    return no_relevant if ideal == 0 else _ref_dcg(ranked, k, gain) / ideal


def _ref_rr(ranked, k, threshold=1):
    k = len(ranked) if k is None else k
    for r, y in enumerate(ranked[:k]):
        if y >= threshold:
            return 1.0 / (r + 1)
    return 0.0


def _ref_ap(ranked, k, threshold=1):
    n_rel = sum(y >= threshold for y in ranked)
    if n_rel == 0:
        return 0.0
    k_eff = len(ranked) if k is None else k
    hits, total = 0, 0.0
    for r, y in enumerate(ranked[:k_eff]):
        if y >= threshold:
            hits += 1
            total += hits / (r + 1)
    return total / min(n_rel, k_eff)


def _ref_precision(ranked, k, threshold=1):
    k = len(ranked) if k is None else k
    return sum(y >= threshold for y in ranked[:k]) / k


def _ref_err(ranked, k, max_grade):
    k = len(ranked) if k is None else k
    not_stopped, total = 1.0, 0.0
    for r, y in enumerate(ranked[:k]):
        stop = (2.0**y - 1.0) / 2.0**max_grade
        total += not_stopped * stop / (r + 1)
        not_stopped *= 1.0 - stop
    return total


def _stable_ranking(y, s):
    return [y[i] for i in sorted(range(len(s)), key=lambda i: -s[i])]  # sorted() is stable


def _all_tie_orders(y, s):
    """Every ranking obtained by permuting the documents of each tied group."""
    groups = []
    for value in sorted(set(s), reverse=True):
        groups.append([y[i] for i in range(len(s)) if s[i] == value])
    for parts in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [label for part in parts for label in part]


def _brute_average(metric, y, s):
    values = [metric(ranked) for ranked in _all_tie_orders(list(y), list(s))]
    return float(np.mean(values))


# (name, per-query function, kwargs, reference on a ranked list, label sampler)
def _metric_cases(k):
    graded = lambda rng, n: rng.integers(0, 4, n).astype(float)  # noqa: E731
    clicks = lambda rng, n: rng.choice([0.0, 0.25, 0.5, 1.0], n)  # noqa: E731
    kk = 10 if k is None else k  # ndcg/dcg/err/precision: None = all docs
    return [
        ("dcg", dcg_score_per_query, dict(k=k), lambda r: _ref_dcg(r, k, _exp_gain), graded),
        (
            "dcg_linear",
            dcg_score_per_query,
            dict(k=k, gain="linear"),
            lambda r: _ref_dcg(r, k, float),
            graded,
        ),
        (
            "ndcg",
            ndcg_score_per_query,
            dict(k=k),
            lambda r: _ref_ndcg(r, k, _exp_gain, 1.0),
            graded,
        ),
        (
            "cndcg",
            cndcg_score_per_query,
            dict(k=k),
            lambda r: _ref_ndcg(r, k, lambda c: 2.0 ** (4 * c) - 1, 1.0),
            clicks,
        ),
        ("mrr", mrr_score_per_query, dict(k=k), lambda r: _ref_rr(r, k), graded),
        ("map", map_score_per_query, dict(k=k), lambda r: _ref_ap(r, k), graded),
        (
            "map_threshold2",
            map_score_per_query,
            dict(k=k, threshold=2),
            lambda r: _ref_ap(r, k, 2),
            graded,
        ),
        (
            "precision",
            precision_at_k_per_query,
            dict(k=kk),
            lambda r: _ref_precision(r, kk),
            graded,
        ),
        (
            "err",
            err_score_per_query,
            dict(k=k, max_grade=3),
            lambda r: _ref_err(r, k, 3),
            graded,
        ),
    ]


def _random_queries(rng, n_queries, max_size, n_score_values):
    sizes = rng.integers(1, max_size + 1, n_queries)
    qid = np.repeat(np.arange(n_queries) * 7 + 3, sizes)
    scores = rng.integers(0, n_score_values, qid.shape[0]).astype(float)
    return qid, scores


# --------------------------------------------------------------------------
# Tie averaging and stable order against brute force
# --------------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 2, 3, None])
def test_average_ties_equal_brute_force_over_tied_orders(k):
    rng = np.random.default_rng(0)
    qid, scores = _random_queries(rng, 40, 6, 3)
    for name, per_query, kwargs, reference, labels in _metric_cases(k):
        y = labels(rng, qid.shape[0])
        uq, got = per_query(y, scores, qid=qid, ties="average", **kwargs)
        expected = [
            _brute_average(reference, y[qid == q], scores[qid == q]) for q in uq
        ]
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14, err_msg=name)


@pytest.mark.parametrize("k", [1, 3, None])
def test_stable_ties_follow_input_order(k):
    rng = np.random.default_rng(1)
    qid, scores = _random_queries(rng, 40, 8, 3)
    for name, per_query, kwargs, reference, labels in _metric_cases(k):
        y = labels(rng, qid.shape[0])
        uq, got = per_query(y, scores, qid=qid, ties="stable", **kwargs)
        expected = [reference(_stable_ranking(y[qid == q], scores[qid == q])) for q in uq]
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14, err_msg=name)


def test_err_average_ties_large_group_is_stable_and_bounded():
    # A constant predictor on 300 documents: the elementary-symmetric DP must
    # neither overflow nor leave [0, 1]. Oracle: the expectation equals the
    # mean over many random orders (Monte Carlo, loose tolerance).
    rng = np.random.default_rng(2)
    y = rng.integers(0, 5, 300).astype(float)
    s = np.zeros(300)
    got = err_score(y, s, k=None, max_grade=4)
    samples = [_ref_err(list(rng.permutation(y)), None, 4) for _ in range(3000)]
    assert 0 <= got <= 1
    assert abs(got - np.mean(samples)) < 4 * np.std(samples) / np.sqrt(3000) + 1e-9


# --------------------------------------------------------------------------
# scikit-learn and LightGBM as oracles
# --------------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 3, 5, 10, None])
def test_linear_average_ndcg_and_dcg_equal_sklearn_per_query(k):
    rng = np.random.default_rng(3)
    sizes = rng.integers(2, 15, 60)  # sklearn needs >= 2 documents per query
    qid = rng.permutation(np.repeat(np.arange(60), sizes))  # unsorted qid
    y = rng.integers(0, 4, qid.shape[0]).astype(float)
    y[qid == 5] = 0  # a query without relevant documents
    s = rng.integers(0, 4, qid.shape[0]).astype(float)  # many ties
    uq, got = ndcg_score_per_query(
        y, s, qid=qid, k=k, gain="linear", ties="average", no_relevant=0.0
    )
    _, got_dcg = dcg_score_per_query(y, s, qid=qid, k=k, gain="linear", ties="average")
    expected = [sklearn.metrics.ndcg_score([y[qid == q]], [s[qid == q]], k=k) for q in uq]
    expected_dcg = [sklearn.metrics.dcg_score([y[qid == q]], [s[qid == q]], k=k) for q in uq]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(got_dcg, expected_dcg, rtol=1e-12)
    mean = ndcg_score(y, s, qid=qid, k=k, gain="linear", ties="average", no_relevant=0.0)
    assert mean == pytest.approx(np.mean(expected), rel=1e-12)


def _load_letor(directory, name):
    from sklearn.datasets import load_svmlight_file

    with gzip.open(directory / name, "rb") as fh:
        return load_svmlight_file(fh, n_features=46, query_id=True)


def test_stable_ndcg_equals_lightgbm_ndcg_on_mq2008(mq2008_dir):
    lightgbm = pytest.importorskip("lightgbm")
    parts = [_load_letor(mq2008_dir, f"S{i}.txt.gz") for i in (1, 2, 3)]
    X = np.vstack([p[0].toarray() for p in parts])
    y = np.concatenate([p[1] for p in parts])
    qid = np.concatenate([p[2] for p in parts])
    X_test, y_test, qid_test = _load_letor(mq2008_dir, "S5.txt.gz")
    X_test = X_test.toarray()

    def sizes(q):
        return np.unique(q, return_counts=True)[1][np.argsort(np.unique(q, return_index=True)[1])]

    ranker = lightgbm.LGBMRanker(n_estimators=20, num_leaves=15, verbose=-1, n_jobs=1)
    with warnings.catch_warnings():
        # lightgbm 4.7 renames eval_set (eval_X/eval_y); 4.0-4.6 only know eval_set.
        warnings.simplefilter("ignore")
        ranker.fit(
            X,
            y,
            group=sizes(qid),
            eval_set=[(X_test, y_test)],
            eval_group=[sizes(qid_test)],
            eval_at=[1, 3, 5, 10],
        )
    scores = ranker.predict(X_test)
    for k in (1, 3, 5, 10):
        expected = ranker.evals_result_["valid_0"][f"ndcg@{k}"][-1]
        got = ndcg_score(y_test, scores, qid=qid_test, k=k, ties="stable", no_relevant=1.0)
        assert got == pytest.approx(expected, rel=1e-9), k
        # The oracle discriminates: the other conventions give other numbers.
        assert ndcg_score(y_test, scores, qid=qid_test, k=k, no_relevant=0.0) != (
            pytest.approx(expected, rel=1e-6)
        )
    # The file order (labels are not sorted) with a constant predictor shows
    # why "stable" is not the default: it rewards input order.
    const = np.zeros_like(y_test)
    assert ndcg_score(y_test, const, qid=qid_test, ties="average") != ndcg_score(
        y_test, const, qid=qid_test, ties="stable"
    )


def test_stable_ndcg_equals_xgboost_ndcg_on_mq2008(mq2008_dir):
    xgboost = pytest.importorskip("xgboost")
    X, y, qid = _load_letor(mq2008_dir, "S1.txt.gz")
    X_test, y_test, qid_test = _load_letor(mq2008_dir, "S5.txt.gz")
    # XGBoost wants rows sorted by query.
    order, order_test = np.argsort(qid, kind="stable"), np.argsort(qid_test, kind="stable")
    X, y, qid = X[order], y[order], qid[order]
    X_test, y_test, qid_test = X_test[order_test], y_test[order_test], qid_test[order_test]
    ranker = xgboost.XGBRanker(n_estimators=10, max_depth=3, tree_method="hist", n_jobs=1,
                               eval_metric=["ndcg@1", "ndcg@5", "ndcg@10", "ndcg@10-"])
    ranker.fit(X, y, qid=qid, eval_set=[(X_test, y_test)], eval_qid=[qid_test], verbose=False)
    scores = ranker.predict(X_test)
    history = ranker.evals_result()["validation_0"]
    # "ndcg@k" counts queries without relevant documents as 1, "ndcg@k-" as 0.
    for name, k, no_relevant in (("ndcg@1", 1, 1.0), ("ndcg@5", 5, 1.0), ("ndcg@10", 10, 1.0),
                                 ("ndcg@10-", 10, 0.0)):
        expected = history[name][-1]
        got = ndcg_score(y_test, scores, qid=qid_test, k=k, ties="stable", no_relevant=no_relevant)
        # XGBoost reports its metrics in float32.
        assert got == pytest.approx(expected, rel=1e-6), name
    assert ndcg_score(y_test, scores, qid=qid_test, k=10, ties="stable", no_relevant=0.0) != (
        pytest.approx(history["ndcg@10"][-1], rel=1e-4))


# --------------------------------------------------------------------------
# Hand-computed cases
# --------------------------------------------------------------------------
def test_dcg_ndcg_hand_computed():
    # Ranked labels 3, 2, 0, 1; exponential gains 7, 3, 0, 1.
    y, s = [3, 2, 0, 1], [4, 3, 2, 1]
    dcg = 7 / 1 + 3 / np.log2(3) + 0 / 2 + 1 / np.log2(5)
    ideal = 7 / 1 + 3 / np.log2(3) + 1 / 2
    assert dcg_score(y, s, k=None) == pytest.approx(dcg)
    assert ndcg_score(y, s, k=None) == pytest.approx(dcg / ideal)
    # k=2 keeps the first two ranks, which are ideal.
    assert ndcg_score(y, s, k=2) == pytest.approx(1.0)
    # Linear gains: 3 + 2/log2(3) + 0 + 1/log2(5) over 3 + 2/log2(3) + 1/2.
    assert ndcg_score(y, s, k=None, gain="linear") == pytest.approx(
        (3 + 2 / np.log2(3) + 1 / np.log2(5)) / (3 + 2 / np.log2(3) + 0.5)
    )
    # Two tied docs, labels 1 and 0, k=1: average gain 0.5 at rank 1; stable
    # order puts the first input row (label 0) first.
    assert dcg_score([0, 1], [0, 0], k=1, gain="linear") == pytest.approx(0.5)
    assert dcg_score([0, 1], [0, 0], k=1, gain="linear", ties="stable") == 0.0
    assert ndcg_score([1, 0], [0, 0], k=1, ties="stable") == 1.0


def test_no_relevant_options_and_query_weights():
    # q1 perfect (1.0), q2 all labels 0.
    y = [2, 0, 0, 0]
    s = [1, 0, 1, 0]
    qid = [1, 1, 2, 2]
    assert ndcg_score(y, s, qid=qid) == 1.0  # default no_relevant=1.0
    assert ndcg_score(y, s, qid=qid, no_relevant=0.0) == 0.5
    assert ndcg_score(y, s, qid=qid, no_relevant="skip") == 1.0
    uq, v = ndcg_score_per_query(y, s, qid=qid, no_relevant="skip")
    assert list(uq) == [1, 2] and v[0] == 1.0 and np.isnan(v[1])
    # Query weights are the mean row weight: q1 -> (3 + 1) / 2 = 2, q2 -> 1.
    w = [3, 1, 1, 1]
    assert ndcg_score(y, s, qid=qid, no_relevant=0.0, sample_weight=w) == pytest.approx(
        (2 * 1.0 + 1 * 0.0) / 3
    )
    with pytest.raises(ValueError, match="no_relevant='skip'"):
        ndcg_score([0, 0], [1, 2], no_relevant="skip")


def test_mrr_hand_computed():
    # First relevant document at rank 3.
    assert mrr_score([0, 0, 1, 0], [4, 3, 2, 1]) == pytest.approx(1 / 3)
    assert mrr_score([0, 0, 1, 0], [4, 3, 2, 1], k=2) == 0.0
    # Five tied documents, two relevant: P(first relevant at j) =
    # C(5-j, 1)/C(5, 2) = 4/10, 3/10, 2/10, 1/10 for j = 1..4.
    expected = 0.4 / 1 + 0.3 / 2 + 0.2 / 3 + 0.1 / 4
    assert mrr_score([0, 1, 1, 0, 0], [0] * 5) == pytest.approx(expected)
    assert mrr_score([0, 1, 1, 0, 0], [0] * 5, ties="stable") == 0.5
    assert mrr_score([1, 2, 0], [3, 2, 1], threshold=2) == 0.5


def test_map_hand_computed():
    # Ranked relevance 1, 0, 1, 0: AP = (1/1 + 2/3) / 2.
    y, s = [1, 0, 1, 0], [4, 3, 2, 1]
    assert map_score(y, s) == pytest.approx((1 + 2 / 3) / 2)
    # k=2: only rank 1 counts, divisor min(R=2, k=2) = 2.
    assert map_score(y, s, k=2) == pytest.approx(0.5)
    # k=1: divisor min(2, 1) = 1, so a relevant top document scores 1.
    assert map_score(y, s, k=1) == 1.0
    # One relevant tied with one irrelevant: AP is 1 or 1/2, each w.p. 1/2.
    assert map_score([0, 1], [5, 5]) == pytest.approx(0.75)


def test_precision_hand_computed():
    # Ranked relevance 1, 0, 1, 0, 1: two relevant in the top 3.
    assert precision_at_k([1, 0, 1, 0, 1], [5, 4, 3, 2, 1], k=3) == pytest.approx(2 / 3)
    # Divided by k even when the query is shorter: 2 relevant / k=10.
    assert precision_at_k([1, 1, 0], [3, 2, 1], k=10) == pytest.approx(0.2)
    # k=None divides each query by its own size: 2/3 and 1/2.
    _, per = precision_at_k_per_query(
        [1, 1, 0, 0, 1], [3, 2, 1, 0, 0], qid=[0, 0, 0, 1, 1], k=None
    )
    np.testing.assert_allclose(per, [2 / 3, 1 / 2])
    # Rank 1 irrelevant; ranks 2-4 tied with one relevant among three, and
    # one of their positions is inside k=2: expected hits 1/3, P@2 = 1/6.
    assert precision_at_k([0, 1, 0, 0], [3, 2, 2, 2], k=2) == pytest.approx(1 / 6)


def test_err_hand_computed():
    # max_grade 2: R = 3/4, 1/4, 0. ERR = 3/4 + (1 - 3/4) * (1/4) / 2.
    assert err_score([2, 1, 0], [3, 2, 1]) == pytest.approx(0.78125)
    assert err_score([2, 1, 0], [3, 2, 1], k=1) == pytest.approx(0.75)
    # Labels 2 and 1 tied: orders give 0.78125 and 1/4 + (3/4)(3/4)/2 = 0.53125.
    assert err_score([2, 1], [0, 0]) == pytest.approx((0.78125 + 0.53125) / 2)
    # max_grade=3 divides by 8: R = 7/8 for a single grade-3 document.
    assert err_score([3], [0], max_grade=3) == pytest.approx(7 / 8)


def test_cndcg_hand_computed():
    # Seed 002 eq. 9: gains 2**(4c) - 1 -> c=0.5: 3, c=1: 15.
    c, s = [0.5, 1.0], [1, 0]
    expected = (3 + 15 / np.log2(3)) / (15 + 3 / np.log2(3))
    assert cndcg_score(c, s) == pytest.approx(expected)


def test_ece_and_log_loss_hand_computed():
    # Sorted by p: bins {0.1, 0.2} with y {0, 1} and {0.3, 0.9} with y {0, 1}:
    # (2/4)|1/2 - 0.15| + (2/4)|1/2 - 0.6| = 0.175 + 0.05 = 0.225.
    y, p = [1, 0, 1, 0], [0.2, 0.3, 0.9, 0.1]
    assert query_ece(y, p, n_bins=2) == pytest.approx(0.225)
    # Five documents in two bins: sizes 3 and 2 (np.array_split).
    y5, p5 = [0, 0, 1, 1, 1], [0.1, 0.2, 0.3, 0.4, 0.5]
    assert query_ece(y5, p5, n_bins=2) == pytest.approx(
        (abs(1 - 0.6) + abs(2 - 0.9)) / 5
    )
    # Mean over queries, each query weighing the same.
    qid = [0, 0, 0, 0, 1, 1, 1, 1, 1]
    _, per = query_ece_per_query(y + y5, p + p5, qid=qid, n_bins=2)
    np.testing.assert_allclose(per, [0.225, 0.3])
    assert query_ece(y + y5, p + p5, qid=qid, n_bins=2) == pytest.approx(0.2625)
    # Soft labels: -(0.3 log 0.6 + 0.7 log 0.4).
    assert query_log_loss([0.3], [0.6]) == pytest.approx(-(0.3 * np.log(0.6) + 0.7 * np.log(0.4)))


def test_log_loss_equals_sklearn_and_per_query_pools():
    rng = np.random.default_rng(4)
    qid = rng.integers(0, 20, 300)
    y = rng.integers(0, 2, 300)
    p = rng.uniform(0.01, 0.99, 300)
    w = rng.uniform(0.5, 2, 300)
    assert query_log_loss(y, p, qid=qid, sample_weight=w) == pytest.approx(
        sklearn.metrics.log_loss(y, p, sample_weight=w), rel=1e-12
    )
    uq, per = query_log_loss_per_query(y, p, qid=qid)
    expected = [sklearn.metrics.log_loss(y[qid == q], p[qid == q], labels=[0, 1]) for q in uq]
    np.testing.assert_allclose(per, expected, rtol=1e-12)


# --------------------------------------------------------------------------
# Query handling: row order, alignment, weights
# --------------------------------------------------------------------------
_ALL_PER_QUERY = [
    (dcg_score_per_query, {}),
    (ndcg_score_per_query, {}),
    (mrr_score_per_query, {}),
    (map_score_per_query, {}),
    (precision_at_k_per_query, {"k": 3}),
    (err_score_per_query, {"max_grade": 3}),
]


@pytest.mark.parametrize("per_query, kwargs", _ALL_PER_QUERY)
@pytest.mark.parametrize("ties", ["average", "stable"])
def test_per_query_aligns_with_unique_qids_and_ignores_row_order(per_query, kwargs, ties):
    rng = np.random.default_rng(5)
    qid = rng.choice(np.array(["b", "a", "zz", "c", "q"]), 60)
    y = rng.integers(0, 4, 60).astype(float)
    s = rng.integers(0, 5, 60).astype(float)
    uq, values = per_query(y, s, qid=qid, ties=ties, **kwargs)
    assert list(uq) == sorted(set(qid))
    for q, v in zip(uq, values):
        _, alone = per_query(y[qid == q], s[qid == q], ties=ties, **kwargs)
        assert v == pytest.approx(alone[0], rel=1e-12)
    if ties == "average":  # stable order depends on row order by design
        perm = rng.permutation(60)
        uq2, values2 = per_query(y[perm], s[perm], qid=qid[perm], ties=ties, **kwargs)
        assert list(uq2) == list(uq)
        np.testing.assert_allclose(values2, values, rtol=1e-12)


@pytest.mark.parametrize(
    "func", [ndcg_score, dcg_score, mrr_score, map_score, precision_at_k, err_score, cndcg_score]
)
def test_shuffling_rows_keeps_the_mean(func):
    # Any shuffle keeps the tie-averaged mean; "stable" keeps its value when
    # each query's rows stay in their relative order.
    rng = np.random.default_rng(6)
    qid = np.repeat(np.arange(30), 7)
    y = rng.integers(0, 3, qid.shape[0]) / (2 if func is cndcg_score else 1)
    s = rng.integers(0, 4, qid.shape[0]).astype(float)
    perm = rng.permutation(qid.shape[0])
    assert func(y[perm], s[perm], qid=qid[perm]) == pytest.approx(func(y, s, qid=qid), rel=1e-12)
    # Interleave queries but keep each query's rows in their input order.
    interleaved = perm.copy()
    for q in range(30):
        slots = np.flatnonzero(qid[perm] == q)
        interleaved[slots] = np.sort(perm[slots])
    assert func(y[interleaved], s[interleaved], qid=qid[interleaved], ties="stable") == (
        pytest.approx(func(y, s, qid=qid, ties="stable"), rel=1e-12)
    )


def test_sample_weight_is_mean_row_weight_per_query():
    rng = np.random.default_rng(7)
    qid = np.repeat([4, 1, 9], [5, 6, 4])
    y = rng.integers(0, 3, 15)
    s = rng.normal(size=15)
    w = rng.uniform(0, 3, 15)
    _, per = map_score_per_query(y, s, qid=qid)
    qw = [w[qid == q].mean() for q in (1, 4, 9)]
    assert map_score(y, s, qid=qid, sample_weight=w) == pytest.approx(np.average(per, weights=qw))


def test_infinite_scores_rank_first_and_last():
    y = [0, 1, 2]
    assert ndcg_score(y, [-np.inf, 0.0, np.inf], ties="stable") == 1.0
    assert mrr_score(y, [np.inf, 0.0, -np.inf]) == 0.5


# --------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------
_Y, _S, _Q = [0, 1, 2], [0.1, 0.2, 0.3], [1, 1, 2]

_BAD = [
    (ndcg_score, dict(y_true=_Y, y_score=_S, qid=[1, 1]), "qid"),
    (ndcg_score, dict(y_true=_Y, y_score=[0.1, 0.2]), "y_score"),
    (ndcg_score, dict(y_true=[0, np.nan, 1], y_score=_S), "y_true"),
    (ndcg_score, dict(y_true=_Y, y_score=[0.1, np.nan, 0.3]), "y_score"),
    (ndcg_score, dict(y_true=_Y, y_score=_S, qid=[1.0, np.nan, 2.0]), "qid"),
    (ndcg_score, dict(y_true=_Y, y_score=_S, k=0), "k"),
    (ndcg_score, dict(y_true=_Y, y_score=_S, k=2.5), "k"),
    (mrr_score, dict(y_true=_Y, y_score=_S, k=-1), "k"),
    (ndcg_score, dict(y_true=[0, -1, 2], y_score=_S), "y_true"),
    (ndcg_score, dict(y_true=[0, 1, 1024], y_score=_S), "y_true"),
    (err_score, dict(y_true=[0, 1, 1024], y_score=_S), "y_true"),
    (err_score, dict(y_true=[0, 1, 5], y_score=_S, max_grade=4), "max_grade"),
    (ndcg_score, dict(y_true=_Y, y_score=_S, gain="log"), "gain"),
    (dcg_score, dict(y_true=_Y, y_score=_S, ties="random"), "ties"),
    (ndcg_score, dict(y_true=_Y, y_score=_S, no_relevant="zero"), "no_relevant"),
    (map_score, dict(y_true=_Y, y_score=_S, no_relevant=np.nan), "no_relevant"),
    (ndcg_score, dict(y_true=_Y, y_score=_S, sample_weight=[1, -1, 1]), "sample_weight"),
    (ndcg_score, dict(y_true=_Y, y_score=_S, sample_weight=[1, np.nan, 1]), "sample_weight"),
    (ndcg_score, dict(y_true=_Y, y_score=_S, sample_weight=[1, 1]), "sample_weight"),
    (mrr_score, dict(y_true=[], y_score=[]), "empty"),
    (ndcg_score, dict(y_true=[[0, 1]], y_score=[[0.1, 0.2]]), "y_true"),
    (mrr_score, dict(y_true=_Y, y_score=_S, threshold=np.nan), "threshold"),
    (cndcg_score, dict(y_true=[0, 1, 2], y_score=_S), "y_true"),
    (query_ece, dict(y_true=[0, 1, 1], y_prob=[0.1, 1.2, 0.5]), "y_prob"),
    (query_ece, dict(y_true=[0, 2, 1], y_prob=[0.1, 0.2, 0.5]), "y_true"),
    (query_ece, dict(y_true=[0, 1, 1], y_prob=[0.1, 0.2, 0.5], n_bins=0), "n_bins"),
    (query_log_loss, dict(y_true=[0, 1, 1], y_prob=[0.1, -0.2, 0.5]), "y_prob"),
    (query_log_loss, dict(y_true=[0, 1], y_prob=[0.1, 0.2, 0.5]), "y_prob"),
]


@pytest.mark.parametrize("func, kwargs, name", _BAD)
def test_bad_input_raises_value_error_naming_the_argument(func, kwargs, name):
    with pytest.raises(ValueError, match=name):
        func(**kwargs)
