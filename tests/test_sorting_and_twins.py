"""The cold-start replacements give what they replace: the small merge sort
is numpy's stable descending argsort, and the serial copies of the parallel
kernels give the same models."""

import numpy as np
import pytest

from conftest import RANKER_IDS, RANKERS, fit_labels
from sklearn_ltr._utils.parallel import parallel_kernels_only, pick
from sklearn_ltr._utils.sorting import argsort_descending, order_by_counting, sort_in_place
from sklearn_ltr._utils.threads import numba_threads
from sklearn_ltr.datasets import make_ranking


@pytest.mark.parametrize("seed", range(20))
def test_argsort_descending_is_numpys_stable_sort_of_the_negated_values(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 200))
    pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5])
    values = np.where(rng.random(n) < 0.5, rng.choice(pool, n), rng.normal(size=n).round(1))
    expected = np.argsort(-values, kind="mergesort")
    np.testing.assert_array_equal(argsort_descending(values), expected)


# Sizes around the blocks of eight and the merges of equal and unequal runs.
@pytest.mark.parametrize("n", [0, 1, 2, 7, 8, 9, 15, 16, 17, 24, 32, 33, 63, 64, 65, 100, 120,
                               255, 1000])
@pytest.mark.parametrize("distinct", [True, False])
def test_sort_in_place_is_numpys_sort(n, distinct):
    rng = np.random.default_rng(n)
    # Distinct keys, or many duplicates; the int64 extremes included.
    keys = rng.integers(-(2**62), 2**62, n) if distinct else rng.integers(-3, 3, n)
    if n > 2:
        keys[0], keys[-1] = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    expected = np.sort(keys)
    sort_in_place(keys, np.empty(n, dtype=np.int64))
    np.testing.assert_array_equal(keys, expected)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 8, 47, 48, 100])
def test_order_by_counting_is_numpys_argsort_of_distinct_keys(n):
    rng = np.random.default_rng(n)
    keys = rng.choice(np.arange(-(2**40), 2**40, 2**20), n, replace=False)
    if n > 2:
        keys[0], keys[-1] = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    order = np.full(n, -1, dtype=np.int64)
    order_by_counting(keys, order)
    np.testing.assert_array_equal(order, np.argsort(keys))


def test_sort_in_place_sorts_every_block_of_eight_zeros_and_ones():
    # A comparison network that sorts every 0/1 input sorts every input
    # (Knuth's zero-one principle): this checks the blocks' network fully.
    for bits in range(256):
        keys = np.array([(bits >> i) & 1 for i in range(8)], dtype=np.int64)
        expected = np.sort(keys)
        sort_in_place(keys, np.empty(8, dtype=np.int64))
        np.testing.assert_array_equal(keys, expected, err_msg=f"input bits {bits:08b}")


@pytest.mark.parametrize("cls", RANKERS, ids=RANKER_IDS)
def test_serial_copies_give_the_models_of_the_parallel_kernels(cls):
    X, y, qid = make_ranking(n_queries=30, docs_per_query=20, n_features=6, random_state=0)
    y = fit_labels(cls, y)
    params = dict(n_estimators=5, subsample=0.8, max_features=0.8, random_state=0)
    small = cls(**params).fit(X, y, qid=qid)  # small: the serial copies
    with parallel_kernels_only():
        forced = cls(**params).fit(X, y, qid=qid)
        forced_scores = forced.predict(X)
    a, b = small._tree_ensemble().nodes, forced._tree_ensemble().nodes
    for field in a.dtype.names:  # field by field: leaves hold NaN thresholds
        np.testing.assert_array_equal(a[field], b[field], err_msg=field)
    np.testing.assert_array_equal(small.predict(X), forced_scores)


def test_parallel_kernels_only_counts_the_kernels_it_forces_and_their_threads():
    def parallel_kernel():
        pass

    def serial_kernel():
        pass

    huge, small = 10**9, 1
    with numba_threads(1):
        assert pick(parallel_kernel, serial_kernel, huge, 10) is serial_kernel  # one thread
        with parallel_kernels_only() as outer:
            assert pick(parallel_kernel, serial_kernel, small, 10) is parallel_kernel
            with parallel_kernels_only() as inner:
                pick(parallel_kernel, serial_kernel, small, 10)
                pick(parallel_kernel, serial_kernel, small, 10)
            pick(parallel_kernel, serial_kernel, small, 10)
        assert pick(parallel_kernel, serial_kernel, small, 10) is serial_kernel  # flag restored
    assert dict(outer) == {("parallel_kernel", 1): 2}
    assert dict(inner) == {("parallel_kernel", 1): 2}
