"""make_ranking's documented way to get training and test sets: one call,
split by query with GroupShuffleSplit. The recipe is run as the docstring
writes it, and its output checked against the call's own rows."""

import doctest

import numpy as np

from sklearn_ltr.datasets import make_ranking


def _documented_split():
    """The namespace after running the docstring example that uses
    GroupShuffleSplit (and the calls before it in that example)."""
    examples = doctest.DocTestParser().get_examples(make_ranking.__doc__)
    start = next(i for i, e in enumerate(examples) if "GroupShuffleSplit" in e.source)
    namespace = {"make_ranking": make_ranking}
    for example in examples[start:]:
        exec(example.source, namespace)
    return namespace


def test_the_documented_split_gives_disjoint_whole_queries():
    ns = _documented_split()
    X, y, qid = ns["X"], ns["y"], ns["qid"]
    train, test = set(ns["qid_train"]), set(ns["qid_test"])
    assert train and test
    assert train.isdisjoint(test)
    assert train | test == set(qid)
    # Every row is on exactly one side, each with its own features and label.
    assert len(ns["qid_train"]) + len(ns["qid_test"]) == len(qid)
    for part in ("train", "test"):
        rows = ns[part]
        np.testing.assert_array_equal(ns[f"X_{part}"], X[rows])
        np.testing.assert_array_equal(ns[f"y_{part}"], y[rows])
        part_qid = ns[f"qid_{part}"]
        # Whole queries: all of a query's rows on this side, and together
        # (one run of rows per query, in the input order).
        for q in set(part_qid):
            assert (part_qid == q).sum() == (qid == q).sum()
        runs = np.flatnonzero(part_qid[1:] != part_qid[:-1]).size + 1
        assert runs == len(set(part_qid))
        assert np.all(np.diff(rows) > 0)
