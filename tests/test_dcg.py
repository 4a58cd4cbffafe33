"""Tests for sklearn_ltr._objectives._dcg against direct numpy computation."""

import numpy as np
import pytest

from sklearn_ltr._objectives._dcg import (
    _discounts,
    _inverse_max_dcg,
    _label_gain,
    _ndcg_at_k,
)


def _random_queries(rng, n_queries=40, max_size=25, max_label=4):
    sizes = rng.integers(0, max_size + 1, n_queries)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    y = rng.integers(0, max_label + 1, offsets[-1]).astype(np.float64)
    # Make some queries all-zero to exercise the max DCG = 0 convention.
    for q in range(0, n_queries, 7):
        y[offsets[q] : offsets[q + 1]] = 0.0
    return y, offsets


def test_discounts_and_gains():
    np.testing.assert_allclose(
        _discounts(5), [1.0, 1 / np.log2(3), 0.5, 1 / np.log2(5), 1 / np.log2(6)]
    )
    np.testing.assert_allclose(_label_gain([0, 1, 2, 4, 0.5]), [0, 1, 3, 15, 2**0.5 - 1])


@pytest.mark.parametrize("k", [1, 3, 10, 100])
def test_inverse_max_dcg_matches_numpy(k):
    rng = np.random.default_rng(k)
    y, offsets = _random_queries(rng)
    out = np.full(offsets.shape[0] - 1, np.nan)
    _inverse_max_dcg(y, offsets, k, out)
    for q in range(offsets.shape[0] - 1):
        labels = y[offsets[q] : offsets[q + 1]]
        ideal = np.sort(2.0**labels - 1.0)[::-1][:k]
        max_dcg = np.sum(ideal / np.log2(np.arange(len(ideal)) + 2.0))
        expected = 1.0 / max_dcg if max_dcg > 0 else 0.0
        np.testing.assert_allclose(out[q], expected, rtol=1e-12)
    # The fixture must contain both cases for the test to mean anything.
    assert np.any(out == 0.0) and np.any(out > 0.0)


def test_inverse_max_dcg_hand_computed():
    # Labels 2, 0, 1: ideal order 2, 1, 0 -> DCG@2 = 3 + 1/log2(3).
    y = np.array([2.0, 0.0, 1.0])
    out = np.empty(1)
    _inverse_max_dcg(y, np.array([0, 3], dtype=np.int64), 2, out)
    assert out[0] == pytest.approx(1.0 / (3.0 + 1.0 / np.log2(3.0)))


@pytest.mark.parametrize("k", [1, 5, 30])
def test_ndcg_at_k_matches_numpy(k):
    rng = np.random.default_rng(100 + k)
    y, offsets = _random_queries(rng)
    # Rounded scores create ties, which must keep the row order.
    scores = np.round(rng.normal(size=y.shape[0]), 1)
    gains = _label_gain(y)
    inv = np.empty(offsets.shape[0] - 1)
    _inverse_max_dcg(y, offsets, k, inv)
    out = np.empty_like(inv)
    _ndcg_at_k(gains, scores, offsets, inv, _discounts(30), k, out)
    for q in range(offsets.shape[0] - 1):
        sl = slice(offsets[q], offsets[q + 1])
        order = np.argsort(-scores[sl], kind="stable")[:k]
        dcg = np.sum(gains[sl][order] / np.log2(np.arange(len(order)) + 2.0))
        ideal = np.sort(gains[sl])[::-1][:k]
        idcg = np.sum(ideal / np.log2(np.arange(len(ideal)) + 2.0))
        expected = dcg / idcg if idcg > 0 else 1.0
        np.testing.assert_allclose(out[q], expected, rtol=1e-12)


def test_ndcg_ties_keep_row_order():
    # All scores tied: the ranking is the row order, labels 0, 1 -> the
    # relevant document sits at rank 1.
    gains = np.array([0.0, 1.0])
    scores = np.zeros(2)
    offsets = np.array([0, 2], dtype=np.int64)
    inv = np.empty(1)
    _inverse_max_dcg(np.array([0.0, 1.0]), offsets, 10, inv)
    out = np.empty(1)
    _ndcg_at_k(gains, scores, offsets, inv, _discounts(2), 10, out)
    assert out[0] == pytest.approx(1.0 / np.log2(3.0))
