"""Tests for sklearn_ltr.datasets.simulate_clicks.

The oracles are the click models' closed forms: on a query shown in a fixed
order, the click rate at each rank over many seeded sessions must match the
model's click probability within 3 standard errors; the random and noisy
production rankers must show documents as often as a uniform permutation and
a Gaussian comparison predict. The structure of the log is checked row by row
against an order computed here, and doc/user_guide/clicks.rst runs as written.
"""

import os
import re

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy.stats import norm, spearmanr

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.datasets import _clicks, make_ranking, simulate_clicks
from sklearn_ltr.metrics import ndcg_score

PAGE = os.path.join(os.path.dirname(__file__), os.pardir, "doc", "user_guide", "clicks.rst")

# One query of 6 documents; the scores put them on screen in the order of
# SHOWN (rows 1, 3, 5, 0, 4, 2), so the labels by rank are [0, 1, 0, 4, 3, 2].
LABELS = np.array([4, 0, 2, 1, 3, 0])
SCORES = np.array([3.0, 6.0, 1.0, 5.0, 2.0, 4.0])
SHOWN = np.array([1, 3, 5, 0, 4, 2])
QID = np.full(6, 7)
N = 20_000


def default_attractiveness(labels, click_noise=0.1, max_label=None):
    max_label = labels.max() if max_label is None else max_label
    return click_noise + (1 - click_noise) * (2.0**labels - 1) / (2.0**max_label - 1)


def click_rates(log, n_positions):
    assert_array_equal(np.bincount(log.position)[1:], np.full(n_positions, N))
    return np.bincount(log.position, weights=log.click)[1:] / N


def assert_within_3_se(observed, expected, n=N):
    expected = np.asarray(expected, dtype=float)
    se = np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(observed - expected) <= 3 * se), (observed, expected, se)


def pbm_oracle(a, eta):
    return (1.0 / np.arange(1, a.size + 1)) ** eta * a


def dbn_oracle(a, s, gamma):
    examined = np.ones(a.size)
    for r in range(1, a.size):
        examined[r] = examined[r - 1] * gamma * (1 - a[r - 1] * s[r - 1])
    return examined * a


def cascade_oracle(a):
    return a * np.concatenate(([1.0], np.cumprod(1 - a)[:-1]))


# -- click rates by position -------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, a",
    [
        (dict(eta=0.0), default_attractiveness(LABELS[SHOWN])),
        (dict(eta=1.0), default_attractiveness(LABELS[SHOWN])),
        (dict(eta=2.0), default_attractiveness(LABELS[SHOWN])),
        (dict(eta=0.5, attractiveness=[0.05, 0.3, 0.5, 0.7, 0.95]),
         np.array([0.05, 0.3, 0.5, 0.7, 0.95])[LABELS[SHOWN]]),
        (dict(click_noise=0.3, max_label=5),
         default_attractiveness(LABELS[SHOWN], click_noise=0.3, max_label=5)),
    ],
)
def test_pbm_click_rate_by_position(kwargs, a):
    log = simulate_clicks(LABELS, QID, scores=SCORES, model="pbm", n_sessions=N,
                          random_state=0, **kwargs)
    assert_within_3_se(click_rates(log, 6), pbm_oracle(a, kwargs.get("eta", 1.0)))


@pytest.mark.parametrize(
    "kwargs, a",
    [
        (dict(), default_attractiveness(LABELS[SHOWN])),
        (dict(attractiveness=[0.05, 0.3, 0.5, 0.7, 0.95]),
         np.array([0.05, 0.3, 0.5, 0.7, 0.95])[LABELS[SHOWN]]),
        (dict(click_noise=0.0), default_attractiveness(LABELS[SHOWN], click_noise=0.0)),
    ],
)
def test_cascade_click_rate_by_position(kwargs, a):
    log = simulate_clicks(LABELS, QID, scores=SCORES, model="cascade", n_sessions=N,
                          random_state=1, **kwargs)
    assert_within_3_se(click_rates(log, 6), cascade_oracle(a))


def test_cascade_clicks_at_most_once_per_session_and_only_on_the_top_k():
    log = simulate_clicks(LABELS, QID, scores=SCORES, model="cascade", n_sessions=N,
                          k=4, random_state=2)
    a = default_attractiveness(LABELS[SHOWN])[:4]
    assert_within_3_se(click_rates(log, 4), cascade_oracle(a))
    assert np.bincount(log.session, weights=log.click).max() == 1


GAIN = (2.0 ** LABELS[SHOWN] - 1) / 15


@pytest.mark.parametrize(
    "kwargs, a, s, gamma",
    [
        (dict(), default_attractiveness(LABELS[SHOWN]), GAIN, 1.0),
        (dict(continuation=0.7), default_attractiveness(LABELS[SHOWN]), GAIN, 0.7),
        (dict(continuation=0.9, attractiveness=[0.05, 0.3, 0.5, 0.7, 0.95],
              satisfaction=[0.0, 0.2, 0.4, 0.6, 0.8]),
         np.array([0.05, 0.3, 0.5, 0.7, 0.95])[LABELS[SHOWN]],
         np.array([0.0, 0.2, 0.4, 0.6, 0.8])[LABELS[SHOWN]], 0.9),
        (dict(max_label=6, click_noise=0.2), default_attractiveness(LABELS[SHOWN], 0.2, 6),
         (2.0 ** LABELS[SHOWN] - 1) / 63, 1.0),
    ],
)
def test_dbn_click_rate_by_position(kwargs, a, s, gamma):
    log = simulate_clicks(LABELS, QID, scores=SCORES, model="dbn", n_sessions=N,
                          random_state=3, **kwargs)
    assert_within_3_se(click_rates(log, 6), dbn_oracle(a, s, gamma))


def test_cascade_is_the_dbn_with_certain_satisfaction_and_continuation():
    X, y, qid = make_ranking(n_queries=30, docs_per_query=12, n_features=3,
                             shuffle_rows=True, random_state=0)
    cascade = simulate_clicks(y, qid, model="cascade", n_sessions=7, random_state=5)
    dbn = simulate_clicks(y, qid, model="dbn", satisfaction=np.ones(5), n_sessions=7,
                          random_state=5)
    for key in cascade:
        assert_array_equal(cascade[key], dbn[key])
    assert cascade.click.sum() > 0


def test_label_zero_only_gives_click_noise():
    log = simulate_clicks(np.zeros(6), QID, scores=SCORES, eta=0.0, n_sessions=N,
                          click_noise=0.25, random_state=4)
    assert_within_3_se(click_rates(log, 6), np.full(6, 0.25))


# -- which documents are shown where -------------------------------------------


def test_random_ranker_shows_every_document_at_every_position_equally_often():
    log = simulate_clicks(LABELS, QID, n_sessions=N, k=None, random_state=6)
    counts = np.zeros((6, 6))
    np.add.at(counts, (log.row, log.position - 1), 1)
    assert_within_3_se(counts / N, np.full((6, 6), 1 / 6))


def test_score_noise_swaps_pairs_as_often_as_gaussian_noise_predicts():
    sigma = 1.5
    log = simulate_clicks(LABELS, QID, scores=SCORES, score_noise=sigma, n_sessions=N,
                          k=None, random_state=7)
    position = log.position.reshape(N, 6)[np.arange(N)[:, None], np.argsort(
        log.row.reshape(N, 6), axis=1)]  # position[session, row]
    for i in range(6):
        for j in range(i + 1, 6):
            above = np.mean(position[:, i] < position[:, j])
            # s_i + e_i > s_j + e_j with e ~ N(0, sigma^2) independently.
            p = norm.cdf((SCORES[i] - SCORES[j]) / (sigma * np.sqrt(2)))
            assert_within_3_se(above, p)


def expected_order(scores, rows, m):
    """The first m rows by decreasing score, ties in row order (Python's stable sort)."""
    return sorted(rows, key=lambda r: -scores[r])[:m]


@pytest.mark.parametrize("k", [3, 10, None])
@pytest.mark.parametrize("batch_cells", [None, 7])
def test_log_structure(k, batch_cells, monkeypatch):
    if batch_cells is not None:  # many small batches, sessions of one query split
        monkeypatch.setattr(_clicks, "_BATCH_CELLS", batch_cells)
    X, y, qid = make_ranking(n_queries=25, docs_per_query=6, n_features=3,
                             shuffle_rows=True, random_state=1)
    qid = np.array([f"q{q:03d}" for q in qid])  # strings, unsorted rows
    scores = np.round(X[:, 0], 1)  # ties
    n_sessions = 4
    log = simulate_clicks(y, qid, scores=scores, model="dbn", continuation=0.8,
                          n_sessions=n_sessions, k=k, random_state=0)
    assert all(log[key].dtype == np.int64 for key in ("row", "session", "position", "click"))
    assert log.qid.dtype == qid.dtype
    assert set(np.unique(log.click)) <= {0, 1}
    assert_array_equal(log.qid, qid[log.row])
    assert np.all(np.diff(log.session) >= 0)
    unique_qids = np.unique(qid)
    assert_array_equal(np.unique(log.session), np.arange(unique_qids.size * n_sessions))
    for session in range(unique_qids.size * n_sessions):
        in_session = log.session == session
        rows = log.row[in_session]
        q = unique_qids[session // n_sessions]  # consecutive sessions, sorted qids
        query_rows = np.flatnonzero(qid == q)
        m = query_rows.size if k is None else min(k, query_rows.size)
        assert_array_equal(log.position[in_session], np.arange(1, m + 1))
        assert_array_equal(rows, expected_order(scores, query_rows, m))


def test_ties_are_shown_in_row_order_in_long_queries():
    # NumPy's default sort is stable only on short arrays.
    scores = np.arange(300) % 3
    qid = np.arange(300) % 2
    log = simulate_clicks(np.zeros(300), qid, scores=scores, k=None, n_sessions=2,
                          random_state=0)
    for session in range(4):
        rows = np.flatnonzero(qid == session // 2)
        assert_array_equal(log.row[log.session == session], expected_order(scores, rows, 150))
    # Noise leaves infinite scores tied.
    scores = np.where(np.arange(300) % 3 == 0, np.inf, 0.0)
    log = simulate_clicks(np.zeros(300), np.zeros(300), scores=scores, score_noise=1.0, k=100,
                          n_sessions=3, random_state=0)
    assert_array_equal(log.row.reshape(3, 100), np.tile(np.arange(0, 300, 3), (3, 1)))


def test_random_orders_are_permutations_of_the_query():
    X, y, qid = make_ranking(n_queries=20, docs_per_query=8, n_features=3,
                             shuffle_rows=True, random_state=2)
    log = simulate_clicks(y, qid, n_sessions=3, k=5, random_state=0)
    for session in np.unique(log.session):
        rows = log.row[log.session == session]
        assert np.unique(rows).size == rows.size == min(5, np.sum(qid == qid[rows[0]]))
        assert np.all(qid[rows] == qid[rows[0]])
    assert_array_equal(np.bincount(log.session), [
        min(5, np.sum(qid == q)) for q in np.unique(qid) for _ in range(3)])


def test_empty_input_gives_an_empty_log():
    log = simulate_clicks(np.zeros(0), np.zeros(0, dtype=np.int64))
    assert all(log[key].size == 0 for key in log)


# -- reproducibility -----------------------------------------------------------------


@pytest.mark.parametrize("model", ["pbm", "cascade", "dbn"])
def test_same_seed_same_log_other_seed_other_log(model):
    X, y, qid = make_ranking(n_queries=10, docs_per_query=10, n_features=3, random_state=0)
    kwargs = dict(scores=X[:, 0], score_noise=0.5, model=model, n_sessions=20)
    a = simulate_clicks(y, qid, random_state=0, **kwargs)
    b = simulate_clicks(y, qid, random_state=0, **kwargs)
    c = simulate_clicks(y, qid, random_state=np.random.RandomState(0), **kwargs)
    d = simulate_clicks(y, qid, random_state=1, **kwargs)
    for key in a:
        assert_array_equal(a[key], b[key])
        assert_array_equal(a[key], c[key])
    assert not (np.array_equal(a.row, d.row) and np.array_equal(a.click, d.click))


# -- bad input -----------------------------------------------------------------


@pytest.mark.parametrize(
    "y, kwargs, message",
    [
        (LABELS, dict(model="ubm"), r"model must be one of 'pbm', 'cascade', 'dbn'; got 'ubm'"),
        (LABELS, dict(eta=-0.5), r"eta must be a finite number >= 0; got -0.5"),
        (LABELS, dict(eta=np.nan), r"eta must be a finite number >= 0"),
        (LABELS, dict(attractiveness=[0.1, 0.5, 0.9]),
         r"y holds label 4 but attractiveness has 3 entries \(labels 0 to 2\)"),
        (LABELS, dict(max_label=3), r"y holds label 4 > max_label=3"),
        (LABELS, dict(max_label=-1), r"max_label must be a non-negative integer"),
        (LABELS + 0.5, dict(), r"y must hold integer relevance labels .*got 4.5 at row 0"),
        (LABELS - 1, dict(), r"y must hold non-negative relevance labels; got -1 at row 1"),
        (np.where(LABELS == 2, np.nan, LABELS), dict(), r"y contains NaN \(row 2\)"),
        (LABELS.astype(str), dict(), r"y must hold integer relevance labels"),
        (LABELS, dict(attractiveness=[0.1, 0.2, 0.3, 0.4, 0.5], click_noise=0.1),
         r"click_noise only applies to the default attractiveness"),
        (LABELS, dict(attractiveness=[0.1, 0.2, 0.3, 0.4, 1.5]),
         r"attractiveness must hold probabilities in \[0, 1\]"),
        (LABELS, dict(attractiveness=[0.1, 0.2, np.nan, 0.4, 0.5]),
         r"attractiveness contains NaN"),
        (LABELS, dict(attractiveness=[[0.1, 0.2]]), r"attractiveness must be a non-empty 1-d"),
        (LABELS, dict(click_noise=1.2), r"click_noise must be a probability in \[0, 1\]"),
        (LABELS, dict(satisfaction=[0, 0.2, 0.4, 0.6, 0.8]),
         r"satisfaction only applies to model='dbn'; with model='pbm'"),
        (LABELS, dict(model="cascade", continuation=0.5),
         r"continuation only applies to model='dbn'; with model='cascade'"),
        (LABELS, dict(model="dbn", eta=2.0), r"eta=2.0 only applies to model='pbm'"),
        (LABELS, dict(model="cascade", eta=0), r"eta=0 only applies to model='pbm'"),
        (LABELS, dict(model="dbn", continuation=1.5),
         r"continuation must be a probability in \[0, 1\]"),
        (LABELS, dict(model="dbn", satisfaction=[0, 0.2, 0.4, 0.6, -0.1]),
         r"satisfaction must hold probabilities in \[0, 1\]"),
        (LABELS, dict(model="dbn", satisfaction=[0, 0.2]),
         r"y holds label 4 but satisfaction has 2 entries"),
        (LABELS, dict(n_sessions=0), r"n_sessions must be a positive integer; got 0"),
        (LABELS, dict(n_sessions=2.0), r"n_sessions must be a positive integer; got 2.0"),
        (LABELS, dict(k=0), r"k must be a positive integer or None; got 0"),
        (LABELS, dict(scores=SCORES[:5]), r"scores must have one score per row: shape \(6,\)"),
        (LABELS, dict(scores=np.where(SCORES == 1, np.nan, SCORES)), r"scores contains NaN"),
        (LABELS, dict(score_noise=1.0), r"score_noise=1.0 perturbs scores, but scores=None"),
        (LABELS, dict(scores=SCORES, score_noise=-1.0),
         r"score_noise must be a finite number >= 0"),
    ],
)
def test_bad_input_raises_naming_the_argument(y, kwargs, message):
    with pytest.raises(ValueError, match=message):
        simulate_clicks(y, QID, **kwargs)


def test_bad_qid_raises():
    with pytest.raises(ValueError, match=r"qid has 5 entries but there are 6 rows"):
        simulate_clicks(LABELS, QID[:5])
    with pytest.raises(ValueError, match=r"qid contains NaN"):
        simulate_clicks(LABELS, np.array([0, 0, 1, np.nan, 1, 1]))


@pytest.mark.parametrize("model, defaults", [
    ("cascade", dict(eta=1.0, continuation=1.0, satisfaction=None)),
    ("pbm", dict(continuation=1, satisfaction=None)),
    ("dbn", dict(eta=1)),
])
def test_defaults_of_other_models_are_accepted(model, defaults):
    # Explicitly passing another model's parameter at its documented default
    # is not a mistake, and must be the same as leaving it out: the same log,
    # draw for draw.
    common = dict(model=model, n_sessions=50, random_state=0)
    left_out = simulate_clicks(LABELS, QID, **common)
    explicit = simulate_clicks(LABELS, QID, **common, **defaults)
    assert sorted(explicit) == sorted(left_out)
    for key in left_out:
        assert_array_equal(explicit[key], left_out[key], err_msg=key)
    # The comparison can fail: the log has clicks, and another seed changes it.
    assert 0 < left_out.click.sum() < left_out.click.size
    other_seed = simulate_clicks(LABELS, QID, **{**common, "random_state": 1}, **defaults)
    assert not np.array_equal(other_seed.click, left_out.click)


# -- training on a click log -----------------------------------------------------


def test_a_ranker_trained_on_clicks_beats_random_on_the_true_labels():
    X, y, qid = make_ranking(n_queries=80, docs_per_query=20, n_features=10,
                             random_state=0)
    train, test = qid < 60, qid >= 60
    log = simulate_clicks(y[train], qid[train], model="pbm", n_sessions=20, k=10,
                          random_state=0)
    X_train = X[train]
    ranker = LambdaMARTRanker(n_estimators=30, early_stopping=False, random_state=0)
    ranker.fit(X_train[log.row], log.click, qid=log.session)
    learned = ndcg_score(y[test], ranker.predict(X[test]), qid=qid[test], k=10)
    rng = np.random.default_rng(0)
    random = [ndcg_score(y[test], rng.random(test.sum()), qid=qid[test], k=10)
              for _ in range(50)]
    assert learned > np.mean(random) + 0.05, (learned, np.mean(random))


# -- doc/user_guide/clicks.rst ---------------------------------------------------------


def python_blocks(path):
    """The bodies of the page's ``.. code-block:: python`` directives."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    blocks = []
    for match in re.finditer(r"\.\. code-block:: python\n\n((?:    .*\n|\n)+)", text):
        blocks.append("\n".join(line[4:] for line in match.group(1).splitlines()))
    return blocks


def test_the_page_runs_and_its_claims_hold():
    blocks = python_blocks(PAGE)
    assert len(blocks) == 5
    ns = {}
    exec(compile(blocks[0], PAGE, "exec"), ns)
    X, y, qid, log = ns["X"], ns["y"], ns["qid"], ns["log"]
    X_test, y_test, qid_test = ns["X_test"], ns["y_test"], ns["qid_test"]
    on_clicks = ndcg_score(y_test, ns["ranker"].predict(X_test), qid=qid_test, k=10)
    # "far better than chance, though not as well as ... trained on the labels"
    rng = np.random.default_rng(0)
    chance = np.mean([ndcg_score(y_test, rng.random(y_test.size), qid=qid_test, k=10)
                      for _ in range(50)])
    on_labels = ndcg_score(
        y_test,
        LambdaMARTRanker(early_stopping=False, random_state=0).fit(X, y, qid=qid).predict(X_test),
        qid=qid_test, k=10)
    assert chance + 0.05 < on_clicks < on_labels, (chance, on_clicks, on_labels)
    # "more than 10,000 rows, so the default early_stopping='auto' would stop"
    assert log.row.size > 10_000
    default = LambdaMARTRanker(n_estimators=1, random_state=0)
    assert default.fit(X[log.row], log.click, qid=log.session).do_early_stopping_

    exec(compile(blocks[1], PAGE, "exec"), ns)
    log = ns["log"]
    assert np.bincount(log.session, weights=log.click).max() == 1  # one click at most
    assert log.session.max() + 1 == 100 * np.unique(qid).size

    # "Correcting position bias": position_bias_ falls from 1 in the order
    # of 1 / r, and its square is within a factor of two of 1 / r.
    exec(compile(blocks[2], PAGE, "exec"), ns)
    bias = ns["ranker"].position_bias_
    examination = 1.0 / np.arange(1, 11)
    assert bias[0] == 1.0
    assert spearmanr(bias, examination).statistic >= 0.9
    ratio = bias ** 2 / examination
    assert np.all((ratio > 0.5) & (ratio < 2.0)), ratio

    # "Known propensities": the block fits, with no fitted position_bias_.
    exec(compile(blocks[3], PAGE, "exec"), ns)
    ipw = ns["ranker"]
    assert ipw.n_iter_ == 30 and not hasattr(ipw, "position_bias_")
    assert ipw.predict(X_test).shape == y_test.shape

    # "LightGBM's method": offsets per position, highest at the top (where
    # documents are clicked more than their scores explain).
    exec(compile(blocks[4], PAGE, "exec"), ns)
    additive = ns["ranker"]
    offset = additive.position_offset_
    assert offset.shape == (10,) and offset[0] == offset.max() and offset[0] > offset[-1]
    assert not hasattr(additive, "position_bias_")
