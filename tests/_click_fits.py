"""Checks that every click-debiasing option of LambdaMARTRanker shares: the
same trees, positions routed to each fold of a GridSearchCV, and early
stopping on held-out sessions."""

import warnings

import pytest
from sklearn import config_context
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold

import numpy as np

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.metrics import ndcg_score, ndcg_scorer


def same_trees(a, b):
    """Whether two fitted rankers hold the same trees, bit for bit."""
    return len(a._booster.trees) == len(b._booster.trees) and all(
        x.tobytes() == y.tobytes() for x, y in zip(a._booster.trees, b._booster.trees))


def early_stopped_and_full_fits(clicks, params):
    """Fit ``params`` (with ``n_estimators`` set) on three quarters of the
    sessions, early-stopped on the clicks of the other quarter, and, without
    early stopping, with as many trees as the stopped fit grew. Checks that
    early stopping stopped before ``n_estimators`` and kept fewer trees than
    it grew.

    Returns
    -------
    stopped, full : LambdaMARTRanker
    """
    X, click, qid, position = clicks
    held_out = np.isin(qid, np.unique(qid)[::4])
    train = ~held_out
    stopped = LambdaMARTRanker(**dict(params, early_stopping=True, n_iter_no_change=3)).fit(
        X[train], click[train], qid=qid[train], position=position[train],
        X_val=X[held_out], y_val=click[held_out], qid_val=qid[held_out])
    grown = stopped.validation_score_.shape[0] - 1
    assert stopped.n_iter_ < grown < params["n_estimators"]
    full = LambdaMARTRanker(**dict(params, n_estimators=grown)).fit(
        X[train], click[train], qid=qid[train], position=position[train])
    return stopped, full


def check_grid_search_routes_positions(clicks, base, name, values):
    """A GridSearchCV over ``name`` in ``values`` of ``base``, with metadata
    routing: no fold is fitted without positions (it would warn), and each
    candidate's first-fold score is that of a fit by hand on that fold's
    rows and positions."""
    X, click, qid, position = clicks
    search = GridSearchCV(base, {name: values}, scoring=ndcg_scorer(10), cv=GroupKFold(3))
    with config_context(enable_metadata_routing=True), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, click, qid=qid, groups=qid, position=position)
    assert not [w for w in caught if "position=" in str(w.message)]
    train, test = next(GroupKFold(3).split(X, click, groups=qid))
    for value in values:
        by_hand = clone(base).set_params(**{name: value}).fit(
            X[train], click[train], qid=qid[train], position=position[train])
        expected = ndcg_score(click[test], by_hand.predict(X[test]), qid=qid[test], k=10)
        candidate = search.cv_results_["params"].index({name: value})
        assert search.cv_results_["split0_test_score"][candidate] == pytest.approx(
            expected, abs=1e-12)
