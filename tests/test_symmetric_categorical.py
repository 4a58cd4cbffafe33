"""Categorical splits in symmetric trees.

The level's set of categories is checked against a Python statement of the
rule in ``_gbdt/symmetric.py`` (the categories with enough rows over the
level, sorted by their smoothed mean gradient over the level, each prefix
from either end scored by its gain summed over the nodes); then the trees:
one split per level, shared by every node, predictions equal on raw and
binned rows, TreeSHAP, the LightGBM export and a model file agree with
``predict``, and categories the level splits on are told apart.
"""

import io

import numpy as np
import pytest
from _category_worlds import category_effect_world
from _engine_helpers import predict_binned
from conftest import RANKER_IDS, RANKERS, fit_labels

from sklearn_ltr import YetiRankRanker, load_model
from sklearn_ltr._gbdt.categorical import (
    CATEGORY_L2,
    CATEGORY_SMOOTHING,
    MAX_CATEGORIES_LEFT,
    MIN_CATEGORY_SUPPORT,
    MIN_ROWS_PER_GROUP,
)
from sklearn_ltr._gbdt.common import bins_of
from sklearn_ltr._gbdt.splitting import split_scratch
from sklearn_ltr._gbdt.symmetric import _best_categorical_level_split, level_split
from sklearn_ltr.inspection import feature_contributions
from sklearn_ltr.metrics import ndcg_score


def _term(g, h, l2):
    return g * g / (h + l2) if h + l2 > 0 else 0.0


def level_split_oracle(hists, totals, n_categories, missing_bin, min_leaf, min_hess, l2):
    """The rule of symmetric.py, one loop at a time, for one categorical
    feature: ``hists[k]`` is node ``k``'s histogram (n_bins, 4)."""
    level = hists.sum(axis=0)
    candidates = [b for b in range(n_categories) if level[b, 2] >= MIN_CATEGORY_SUPPORT]
    if level[missing_bin, 2] >= MIN_CATEGORY_SUPPORT:
        candidates.append(missing_bin)
    keys = [level[b, 0] / (level[b, 1] + CATEGORY_SMOOTHING) for b in candidates]
    order = [candidates[i] for i in sorted(range(len(candidates)), key=lambda i: keys[i])]
    n = len(order)
    best = (-np.inf, 0, 0)
    for direction in (1, -1):
        chosen = []
        group = 0.0
        for i in range(min(MAX_CATEGORIES_LEFT, (n + 1) // 2)):
            chosen.append(order[i] if direction == 1 else order[n - 1 - i])
            group += level[chosen[-1], 2]
            if totals[:, 2].sum() - level[chosen, 2].sum() < MIN_ROWS_PER_GROUP:
                break
            if group < MIN_ROWS_PER_GROUP:
                continue
            group = 0.0
            gain = 0.0
            for k, h in enumerate(hists):
                gl, hl, cl = h[chosen, 0].sum(), h[chosen, 1].sum(), h[chosen, 2].sum()
                g, hh, c = totals[k]
                if min(cl, c - cl) >= min_leaf and min(hl, hh - hl) >= min_hess:
                    gain += (_term(gl, hl, l2 + CATEGORY_L2) + _term(g - gl, hh - hl,
                                                                    l2 + CATEGORY_L2)
                             - _term(g, hh, l2))
            if gain > best[0]:
                best = (gain, (i + 1) * direction, int(missing_bin in chosen))
    return best, order


def _random_level(seed, n_nodes=3, n_categories=40, n_bins=64):
    rng = np.random.default_rng(seed)
    missing_bin = n_bins - 1
    hists = np.zeros((n_nodes, n_bins, 4))
    for k in range(n_nodes):
        counts = rng.integers(0, 60, n_categories).astype(float)
        counts[rng.random(n_categories) < 0.2] = rng.integers(0, 12)
        hists[k, :n_categories, 2] = counts
        hists[k, :n_categories, 1] = counts * rng.uniform(0.1, 0.3, n_categories)
        hists[k, :n_categories, 0] = counts * rng.normal(0, 0.5, n_categories)
        hists[k, missing_bin, 2] = rng.integers(0, 40)
        hists[k, missing_bin, 1] = hists[k, missing_bin, 2] * 0.2
        hists[k, missing_bin, 0] = hists[k, missing_bin, 2] * rng.normal()
    totals = hists.sum(axis=1)[:, :3]
    return hists, totals, n_categories, missing_bin


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("min_leaf, l2", [(1, 0.0), (50, 1.0)])
def test_level_set_equals_the_rule(seed, min_leaf, l2):
    hists, totals, n_categories, missing_bin = _random_level(seed)
    (gain, n_left, mleft), order = level_split_oracle(hists, totals, n_categories, missing_bin,
                                                      min_leaf, 1e-3, l2)
    # The pool layout of the grower: slots of a histogram pool of one feature.
    pool = hists[:, None]
    slots = np.arange(hists.shape[0], dtype=np.int64)
    got = _best_categorical_level_split(pool, slots, totals, 0, n_categories, missing_bin,
                                        min_leaf, 1e-3, l2)
    assert got[1:] == (n_left, mleft)
    np.testing.assert_allclose(got[0], gain, rtol=1e-12)
    # level_split turns it into the set of the left categories.
    scratch = split_scratch(1, hists.shape[1])
    split = level_split(pool, slots, totals, np.array([n_categories], dtype=np.uint32),
                        missing_bin, np.ones(1, dtype=np.uint8), min_leaf, 1e-3, 0.0, l2,
                        scratch, np.ones(1, dtype=np.uint8))
    if not gain > 0:
        assert split is None
        return
    _, feature, bin_threshold, missing_left, categories, left_value_bins = split
    chosen = order[:n_left] if n_left > 0 else order[n_left:]
    assert (feature, bin_threshold) == (0, 0)
    assert bins_of(categories).tolist() == sorted(b for b in chosen if b != missing_bin)
    assert left_value_bins.tolist() == bins_of(categories).tolist()
    if hists[:, missing_bin, 2].sum() > 0:
        assert missing_left == mleft


def categories_world(seed=0, n_queries=150):
    """Relevance from a category effect and one numeric feature; a column
    of noise; 3% of the categories missing."""
    return category_effect_world(seed, n_queries, 30, 60, effect=1.5, slope=0.5, noise=0.3,
                                 missing=0.03)


@pytest.mark.parametrize("cls", RANKERS, ids=RANKER_IDS)
def test_every_level_shares_one_categorical_split(cls):
    X, y, qid = categories_world()
    y = fit_labels(cls, y)
    ranker = cls(grow_policy="symmetric", max_depth=4, categorical_features=[2],
                 n_estimators=8, early_stopping=False, random_state=0).fit(X, y, qid=qid)
    assert ranker.grow_policy_ == "symmetric"
    n_categorical = 0
    for tree in ranker._booster.trees:
        for depth in range(int(tree["depth"].max())):
            split = tree[(tree["depth"] == depth) & (tree["is_leaf"] == 0)]
            keys = {(int(s["feature_idx"]), int(s["is_categorical"]), int(s["bin_threshold"]),
                     s["left_categories"].tobytes(), int(s["missing_go_to_left"]))
                    for s in split}
            assert len(keys) <= 1
            n_categorical += int(split["is_categorical"].sum())
    assert n_categorical > 0
    scores = ranker.predict(X)
    ensemble = ranker._tree_ensemble()
    binned = predict_binned(ensemble.nodes, ensemble.tree_starts,
                            ranker._bin_mapper.transform(X),
                            ranker._bin_mapper.missing_values_bin_idx_, init=ensemble.baseline)
    np.testing.assert_allclose(binned, scores, rtol=0, atol=1e-12)
    phi = feature_contributions(ranker, X[:40])
    np.testing.assert_allclose(phi.sum(axis=1), scores[:40], rtol=0, atol=1e-10)
    buffer = io.BytesIO()
    ranker.save_model(buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(load_model(buffer).predict(X), scores)


def test_the_lightgbm_export_agrees():
    lightgbm = pytest.importorskip("lightgbm")
    from sklearn_ltr.export import to_lightgbm

    X, y, qid = categories_world(1)
    ranker = YetiRankRanker(grow_policy="symmetric", categorical_features=[2], n_estimators=20,
                            early_stopping=False, random_state=0).fit(X, y, qid=qid)
    booster = to_lightgbm(ranker)
    assert isinstance(booster, lightgbm.Booster)
    probe = np.vstack([X[:300], [[0.0, 0.0, 500.0], [0.0, 0.0, -1.0], [0.0, 0.0, np.nan]]])
    np.testing.assert_allclose(booster.predict(probe, raw_score=True), ranker.predict(probe),
                               rtol=1e-12, atol=1e-12)


def test_categories_are_told_apart_where_codes_as_numbers_are_not():
    X, y, qid = categories_world(2, n_queries=300)
    train = qid < 200
    scores = {}
    for declared in ([2], None):
        ranker = YetiRankRanker(grow_policy="symmetric", categorical_features=declared,
                                n_estimators=60, early_stopping=False, random_state=0)
        ranker.fit(X[train], y[train], qid=qid[train])
        scores[declared is not None] = ndcg_score(y[~train], ranker.predict(X[~train]),
                                                  qid=qid[~train], k=10)
    assert scores[True] > scores[False] + 0.05, scores
