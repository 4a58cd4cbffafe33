"""Query-id helpers: grouping, resolution from DataFrame columns, splits."""

import numpy as np
import pytest

from sklearn_ltr._utils.queries import check_qid, group_queries, resolve_qid, rows_of_queries, split_queries


def _brute_force_groups(qid):
    unique = sorted(set(qid.tolist()))
    return unique, [[i for i in range(len(qid)) if qid[i] == q] for q in unique]


@pytest.mark.parametrize(
    "qid",
    [
        np.array([3, 1, 3, 2, 1, 3]),
        np.array([0, 0, 1, 1, 1, 5]),  # sorted: the no-sort fast path
        np.array(["b", "a", "b", "c", "a"]),
        np.array([2.5, -1.0, 2.5, 7.0]),
        np.array([5]),
    ],
)
def test_group_queries_matches_brute_force(qid):
    order, offsets, unique = group_queries(qid)
    expected_unique, expected_rows = _brute_force_groups(qid)
    assert unique.tolist() == expected_unique
    for q, rows in enumerate(expected_rows):
        # Rows of a query keep their input order.
        assert order[offsets[q] : offsets[q + 1]].tolist() == rows
    assert offsets[-1] == len(qid)


def test_group_queries_random_against_brute_force():
    rng = np.random.default_rng(0)
    qid = rng.integers(0, 50, size=1000)
    order, offsets, unique = group_queries(qid)
    expected_unique, expected_rows = _brute_force_groups(qid)
    assert unique.tolist() == expected_unique
    assert [order[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == expected_rows


def test_group_queries_empty_and_mixed_types():
    order, offsets, unique = group_queries(np.array([], dtype=np.int64))
    assert order.shape == (0,) and offsets.tolist() == [0] and unique.shape == (0,)
    with pytest.raises(ValueError, match="comparable"):
        group_queries(np.array([1, "a", 2], dtype=object))


@pytest.mark.parametrize(
    "qid, n, message",
    [
        (np.array([1, 2]), 3, "2 entries but there are 3 rows"),
        (np.array([[1, 2]]), 2, "1-D"),
        (np.array([1.0, np.nan]), 2, "NaN"),
        (np.array([1, None], dtype=object), 2, "None or NaN"),
    ],
)
def test_check_qid_errors(qid, n, message):
    with pytest.raises(ValueError, match=message):
        check_qid(qid, n)


def test_resolve_qid_rules():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "qid": [7, 7, 8]})
    X, qid = resolve_qid(frame, None)
    assert list(X.columns) == ["a"] and qid.tolist() == [7, 7, 8]
    X, qid = resolve_qid(frame, np.array([7, 7, 8]))  # equal: fine
    assert list(X.columns) == ["a"]
    with pytest.raises(ValueError, match="differ"):
        resolve_qid(frame, np.array([1, 2, 3]))
    array = np.ones((3, 2))
    X, qid = resolve_qid(array, None)
    assert X is array and qid is None


def test_split_queries_is_by_query_and_sized():
    offsets = np.array([0, 3, 5, 9, 10, 12])
    train, val = split_queries(offsets, 0.4, np.random.default_rng(0))
    assert len(val) == 2 and len(train) == 3
    assert set(train).isdisjoint(val) and set(train) | set(val) == set(range(5))
    train, val = split_queries(offsets, 1, np.random.default_rng(0))
    assert len(val) == 1
    with pytest.raises(ValueError, match="queries on both sides"):
        split_queries(np.array([0, 4]), 0.5, np.random.default_rng(0))


def test_rows_of_queries():
    qid = np.array([3, 1, 3, 2, 1, 3])
    order, offsets, _ = group_queries(qid)
    rows, new_offsets = rows_of_queries(offsets, np.array([2, 0]), order)
    # query index 2 is qid 3 (rows 0, 2, 5), query 0 is qid 1 (rows 1, 4)
    assert rows.tolist() == [0, 2, 5, 1, 4]
    assert new_offsets.tolist() == [0, 3, 5]
