"""Tests for the helpers of ``replicate_cross_entropy.py --paper-settings``.

Oracles: the normal-approximation interval written out by hand, and the
split's definition (disjoint query sets of 60/20/20 %, rows kept whole).
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
paper = pytest.importorskip("_cross_entropy_paper", reason="needs the benchmark extras (matplotlib, scipy)")


def test_ci95_is_mean_plus_minus_196_standard_errors():
    values = np.array([[0.5, 0.7], [0.6, 0.9], [0.7, 0.8], [0.4, 0.6], [0.8, 1.0]])
    mean, half = paper.ci95(values)
    for c in range(2):
        col = values[:, c]
        sd = np.sqrt(((col - col.mean()) ** 2).sum() / (len(col) - 1))
        assert mean[c] == pytest.approx(col.mean())
        assert half[c] == pytest.approx(1.96 * sd / np.sqrt(len(col)))


def test_random_split_is_60_20_20_of_whole_queries():
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(100), rng.integers(1, 6, 100))
    X = np.arange(qid.size, dtype=float)[:, None]
    y = rng.integers(0, 3, qid.size).astype(float)
    parts = paper._random_split(X, y, qid, np.random.default_rng(1))
    sets = [set(q.tolist()) for _, _, q in parts]
    assert [len(s) for s in sets] == [60, 20, 20]
    assert not (sets[0] & sets[1] or sets[0] & sets[2] or sets[1] & sets[2])
    rows = np.concatenate([Xp[:, 0] for Xp, _, _ in parts]).astype(int)
    assert sorted(rows.tolist()) == list(range(qid.size))
    for Xp, yp, qp in parts:
        np.testing.assert_array_equal(yp, y[Xp[:, 0].astype(int)])
        np.testing.assert_array_equal(qp, qid[Xp[:, 0].astype(int)])
