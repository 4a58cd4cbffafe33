"""No silent one-query fallbacks: every path that treats all rows as one
query because it got no query ids says so (SingleQueryWarning), names what
happened and how to pass qid, and stays quiet when qid is given."""

import os
import re
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GroupKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from conftest import RANKER_IDS, RANKERS, fit_labels

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr import metrics
from sklearn_ltr._utils.queries import columns_like_query_ids
from sklearn_ltr.datasets import make_ranking, to_frame
from sklearn_ltr.exceptions import SingleQueryWarning

X, Y, QID = make_ranking(n_queries=30, docs_per_query=10, n_features=5, random_state=0)
Y_BINARY = (Y > 0).astype(float)


def _labels(cls):
    return fit_labels(cls, Y)


def quietly(function, *args, **kwargs):
    """Call and fail on any SingleQueryWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", SingleQueryWarning)
        return function(*args, **kwargs)


@pytest.mark.parametrize("cls", RANKERS, ids=RANKER_IDS)
def test_fit_and_rank_without_qid_warn(cls):
    ranker = cls(n_estimators=3, random_state=0)
    with pytest.warns(SingleQueryWarning, match=rf"{cls.__name__}\.fit got no query ids, so all "
                      rf"{X.shape[0]} rows are treated as one query\. Pass qid="):
        ranker.fit(X, _labels(cls))
    with pytest.warns(SingleQueryWarning, match=rf"{cls.__name__}\.rank got no query ids"):
        ranker.rank(X)
    # Given, in either form, or one query on purpose: no warning.
    quietly(ranker.fit, X, _labels(cls), qid=QID)
    quietly(ranker.fit, to_frame(X, QID), _labels(cls))
    quietly(ranker.fit, X, _labels(cls), qid=np.zeros(X.shape[0]))
    quietly(ranker.rank, X, qid=QID)
    quietly(ranker.fit, X[:1], _labels(cls)[:1])  # one row is one query


METRICS = [getattr(metrics, name) for name in metrics.__all__
           if name.endswith(("_score", "_per_query", "_at_k", "query_ece", "query_log_loss"))
           and not name.endswith("scorer")]


@pytest.mark.parametrize("metric", METRICS, ids=lambda m: m.__name__)
def test_every_metric_without_qid_warns(metric):
    binary = ("log_loss", "ece", "cndcg")
    y = Y_BINARY if any(b in metric.__name__ for b in binary) else Y
    scores = np.linspace(0.01, 0.99, y.shape[0])
    with pytest.warns(SingleQueryWarning,
                      match=rf"{metric.__name__} got no query ids, .*qid=np.zeros\({y.shape[0]}\)"):
        metric(y, scores)
    quietly(metric, y, scores, qid=QID)


def test_the_metric_list_covers_the_public_metrics():
    names = {m.__name__ for m in METRICS}
    assert {"ndcg_score", "err_score_per_query", "precision_at_k", "query_ece",
            "query_log_loss_per_query", "cndcg_score"} <= names and len(names) == 18


def test_a_scaled_qid_column_is_named_in_the_warning():
    """The forgotten exclude_qid: the scaler turns the DataFrame into an array
    whose last column is the scaled qid, and the ranker sees one query."""
    frame = to_frame(X, QID)
    pipe = make_pipeline(StandardScaler(), LambdaMARTRanker(n_estimators=3, random_state=0))
    with pytest.warns(SingleQueryWarning, match=rf"Column {X.shape[1]} of X looks like query "
                      r"ids .*wrap that step with sklearn_ltr\.compose\.exclude_qid"):
        pipe.fit(frame, Y)


def test_query_level_features_are_not_taken_for_query_ids():
    rng = np.random.default_rng(0)
    query_length = rng.integers(1, 4, size=30)[QID - QID.min()]  # constant per query, recurs
    candidates = np.column_stack([X, query_length, QID * 3.0 + 1])
    assert columns_like_query_ids(candidates) == [X.shape[1] + 1]
    shuffled = candidates[rng.permutation(candidates.shape[0])]
    assert columns_like_query_ids(shuffled) == []  # rows not grouped: runs of one row


def test_a_scorer_with_an_unrouted_alias_names_the_alias():
    scorer = None
    try:
        sklearn.set_config(enable_metadata_routing=True)
        scorer = metrics.ndcg_scorer(10).set_score_request(qid="query_id")
        ranker = LambdaMARTRanker(n_estimators=3, random_state=0).fit(X, Y, qid=QID)
        with pytest.raises(ValueError, match=r"requests them under the alias 'query_id'"):
            scorer(ranker, X, Y)
        scores = cross_val_score(ranker, X, Y, scoring=scorer, cv=GroupKFold(3),
                                 params={"qid": QID, "query_id": QID, "groups": QID})
        assert np.isfinite(scores).all()
    finally:
        sklearn.set_config(enable_metadata_routing=False)
    del scorer


def test_the_documented_cost_of_forgetting_exclude_qid():
    """doc/user_guide/queries.rst: in a cross_val_score on the bundled data,
    the forgotten exclude_qid trains on all rows as one query, with the
    scaled ids as a feature, and costs mean NDCG@10; a warning names the
    column. The oracle is the same cross-validation done by hand, without
    pipeline, exclude_qid or routing: scaler and ranker on each fold's
    training rows, the ranker given the query ids, or one query and the ids
    as a scaled column."""
    from sklearn_ltr.compose import exclude_qid
    from sklearn_ltr.datasets import load_example
    from sklearn_ltr.metrics import ndcg_score, ndcg_scorer

    (X_ex, y_ex, qid_ex), _ = load_example()
    frame = to_frame(X_ex, qid_ex)
    folds = list(GroupKFold(5).split(X_ex, y_ex, qid_ex))
    by_hand = {True: [], False: []}
    for train, test in folds:
        for wrapped in (True, False):
            # The frame's columns, as the pipeline scales them (an array's
            # means and variances may differ in the last bits).
            features = frame.drop(columns="qid") if wrapped else frame
            scaler = StandardScaler().fit(features.iloc[train])
            one_query = np.zeros(train.size)
            ranker = LambdaMARTRanker(random_state=0).fit(
                scaler.transform(features.iloc[train]), y_ex[train],
                qid=qid_ex[train] if wrapped else one_query)
            scores = ranker.predict(scaler.transform(features.iloc[test]))
            by_hand[wrapped].append(ndcg_score(y_ex[test], scores, qid=qid_ex[test], k=10))
    for wrapped in (True, False):
        scaler = exclude_qid(StandardScaler()) if wrapped else StandardScaler()
        pipe = make_pipeline(scaler, LambdaMARTRanker(random_state=0))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            folds_scores = cross_val_score(pipe, frame, y_ex, groups=qid_ex, cv=GroupKFold(5),
                                           scoring=ndcg_scorer(10))
        np.testing.assert_allclose(folds_scores, by_hand[wrapped], rtol=1e-12)
        named = [w for w in caught if issubclass(w.category, SingleQueryWarning)
                 and f"Column {X_ex.shape[1]} of X looks like query ids" in str(w.message)]
        assert bool(named) == (not wrapped)
    means = {wrapped: float(np.mean(values)) for wrapped, values in by_hand.items()}
    assert means[False] < means[True]
    # The page quotes the two means as computed here.
    with open(os.path.join(os.path.dirname(__file__), os.pardir, "doc", "user_guide",
                           "queries.rst")) as page:
        quoted = re.search(r"\((\d\.\d+) instead of (\d\.\d+) mean NDCG@10",
                           " ".join(page.read().split()))
    assert quoted, "doc/user_guide/queries.rst no longer quotes the two means"
    assert (float(quoted[1]), float(quoted[2])) == (round(means[False], 3), round(means[True], 3))
