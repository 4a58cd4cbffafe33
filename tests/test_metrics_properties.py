"""Property-based tests of sklearn_ltr.metrics (hypothesis).

Properties: bounded metrics stay in [0, 1]; a perfect ranking scores 1
(NDCG, CNDCG, MRR, MAP) or is the best order (ERR); strictly increasing
transforms of the scores change nothing, with either tie convention.
"""

import itertools

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from sklearn_ltr.metrics import (  # noqa: E402
    cndcg_score_per_query,
    err_score_per_query,
    map_score_per_query,
    mrr_score_per_query,
    ndcg_score_per_query,
    precision_at_k_per_query,
)

# Many generated cases are single queries scored without qid on purpose; the warning
# that says so is tested in test_single_query.py.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn_ltr.exceptions.SingleQueryWarning")

SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def ranking_data(draw, max_rows=24):
    """Labels 0..4, integer scores with many ties, up to four queries."""
    n = draw(st.integers(1, max_rows))
    y = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=float)
    s = np.array(draw(st.lists(st.integers(-4, 4), min_size=n, max_size=n)), dtype=float)
    qid = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    k = draw(st.sampled_from([1, 2, 5, None]))
    return y, s, qid, k


def _bounded_calls(y, s, qid, k, ties):
    kk = 3 if k is None else k
    common = dict(qid=qid, ties=ties)
    yield "ndcg", ndcg_score_per_query(y, s, k=k, **common)[1]
    yield "cndcg", cndcg_score_per_query(y / 4, s, k=k, **common)[1]
    yield "mrr", mrr_score_per_query(y, s, k=k, **common)[1]
    yield "map", map_score_per_query(y, s, k=k, **common)[1]
    yield "precision", precision_at_k_per_query(y, s, k=kk, **common)[1]
    yield "err", err_score_per_query(y, s, k=k, max_grade=4, **common)[1]


@SETTINGS
@given(data=ranking_data(), ties=st.sampled_from(["average", "stable"]))
def test_bounded_metrics_lie_in_unit_interval(data, ties):
    y, s, qid, k = data
    for name, values in _bounded_calls(y, s, qid, k, ties):
        assert np.all(values >= -1e-12) and np.all(values <= 1 + 1e-12), name


@SETTINGS
@given(data=ranking_data(), ties=st.sampled_from(["average", "stable"]))
def test_perfect_ranking_scores_one(data, ties):
    y, _, qid, k = data
    # Scoring by the label itself is a perfect ranking; ties only join
    # documents of equal label, which no metric can tell apart.
    s = y.copy()
    ndcg = ndcg_score_per_query(y, s, qid=qid, k=k, ties=ties, no_relevant="skip")[1]
    cndcg = cndcg_score_per_query(y / 4, s, qid=qid, k=k, ties=ties, no_relevant="skip")[1]
    mrr = mrr_score_per_query(y, s, qid=qid, k=k, ties=ties, no_relevant="skip")[1]
    ap = map_score_per_query(y, s, qid=qid, k=k, ties=ties, no_relevant="skip")[1]
    for name, values in [("ndcg", ndcg), ("cndcg", cndcg), ("mrr", mrr), ("map", ap)]:
        kept = values[~np.isnan(values)]
        np.testing.assert_allclose(kept, 1.0, rtol=1e-12, err_msg=name)


@settings(max_examples=40, deadline=None)
@given(
    labels=st.lists(st.integers(0, 4), min_size=1, max_size=5),
    k=st.sampled_from([1, 3, None]),
)
def test_perfect_ranking_maximises_err(labels, k):
    # ERR is not normalised (its maximum is below 1), so "perfect scores 1"
    # becomes "the ideal order beats every other order".
    y = np.array(labels, dtype=float)
    best = err_score_per_query(y, y, k=k, max_grade=4, ties="stable")[1][0]
    for perm in itertools.permutations(range(len(y))):
        scores = -np.array(perm, dtype=float)  # ranks the rows in order perm
        value = err_score_per_query(y, scores, k=k, max_grade=4, ties="stable")[1][0]
        assert value <= best + 1e-12


_TRANSFORMS = [
    lambda s: 3.0 * s + 1.0,
    lambda s: np.exp(s),
    lambda s: s**3 - 7.0,
]


@SETTINGS
@given(
    data=ranking_data(),
    ties=st.sampled_from(["average", "stable"]),
    transform=st.sampled_from(_TRANSFORMS),
)
def test_strictly_increasing_transform_of_scores_changes_nothing(data, ties, transform):
    y, s, qid, k = data
    before = dict(_bounded_calls(y, s, qid, k, ties))
    after = dict(_bounded_calls(y, transform(s), qid, k, ties))
    for name in before:
        np.testing.assert_array_equal(after[name], before[name], err_msg=name)
