"""Replicate Hu, Wang, Peng and Li, "Unbiased LambdaMART: An Unbiased Pairwise
Learning-to-Rank Algorithm" (WWW 2019) with :class:`LambdaMARTRanker`.

The paper simulates clicks on the Yahoo! LTR set with the protocol of Ai et
al. (SIGIR 2018); here the same protocol runs on MQ2008 (5 LETOR folds) and
on LightGBM's lambdarank example (its test set, with validation queries split
off its training set, several repeats):

* Production ranker: a linear Ranking SVM (``LinearSVC`` on pairwise feature
  differences of standardised features) trained on ``--production-queries``
  labelled training queries, scoring every training and validation document.
* Clicks: ``simulate_clicks(model="pbm")``: each query is shown
  ``--sessions`` times, always the production ranker's top 10; the document
  at rank r is clicked with probability ``(1/r)**eta * (0.1 + 0.9 * (2**y -
  1) / (2**max_label - 1))`` for eta in ``--etas``. Sessions without a click
  are dropped (they carry no pair; Hu et al.'s script redraws them).
  Validation queries get their own click log the same way.
* Models, all on the same click log of a split and eta: (a) LambdaMART on
  the clicks; (b) ``LambdaMARTRanker(position_debiasing="unbiased_lambdamart")``;
  (c) XGBoost ``rank:ndcg`` with ``lambdarank_unbiased=True``; (d) the same
  without debiasing (engine reference for (a)); (e) LambdaMART on the true
  labels of all training documents (the ceiling).
* Trees: every model grows ``--trees`` trees at ``--lr`` (XGBoost at twice
  that, since its LambdaMART hessian is twice ours); the tree count is then
  chosen by the early-stopping rule of our engine (``n_iter_no_change``
  ``--patience``) applied to the validation NDCG@10 of every tree count,
  for every model alike: on the validation *clicks* (the primary rule, as in
  production, where no labels exist) and, as a diagnostic, on the validation
  *labels*. (e) uses the validation labels.
* Metrics: test NDCG@1/3/5/10 on the true labels, skipping queries without a
  relevant document; paired t-tests (scipy.stats.ttest_rel) per query pooled
  over folds (the example: per-query values averaged over repeats first).
  Learned propensities ``position_bias_ ** (p + 1)`` (and XGBoost's
  ``ti+ ** (p + 1)``) against the true ``(1/r)**eta``, with Spearman
  correlations.

Run: ``python benchmarks/replicate_unbiased_lambdamart.py`` (about 11 minutes
on an idle 2-core machine, 15-20 on a loaded one; writes ``benchmarks/results/unbiased_lambdamart.md``
and ``unbiased_lambdamart_*.png``), or ``--quick`` for a 1-2 minute smoke run
written to a temporary directory.
"""

import os

# One numba thread: on the shared, oversubscribed 2-core machine two threads
# per fit made small fits many times slower (spinning workers); the kernels
# give bit-identical results on any number of threads. Set before numba loads.
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import xgboost as xgb  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import LinearSVC  # noqa: E402

from sklearn_ltr import LambdaMARTRanker  # noqa: E402
from sklearn_ltr.datasets import load_example, load_letor_folds, simulate_clicks  # noqa: E402
from sklearn_ltr.metrics import ndcg_score, ndcg_score_per_query  # noqa: E402

from _report import code_version, minutes_logger  # noqa: E402
from _unbiased_lambdamart_report import (  # noqa: E402
    BIAS_NORM, BIASED, CUTOFFS, MODELS, NAMES, SHOWN, plot_curves,
    plot_propensities, write_report,
)

MAX_LABEL = {"mq2008": 2, "example": 4}
# Shared tree settings. Sessions show 10 documents, so truncation 10 (ours)
# and lambdarank_num_pair_per_sample=10 (XGBoost's top-k) give the same pairs.
OURS = dict(max_leaf_nodes=31, min_samples_leaf=20, min_hessian_to_split=1e-3,
            l2_regularization=0.0, max_bins=255, truncation_level=SHOWN, early_stopping=False)
XGB = dict(objective="rank:ndcg", lambdarank_pair_method="topk",
           lambdarank_num_pair_per_sample=SHOWN, lambdarank_bias_norm=BIAS_NORM,
           reg_lambda=0.0, max_leaves=31, grow_policy="lossguide", max_depth=0,
           min_child_weight=2e-3, max_bin=255, tree_method="hist", n_jobs=1)


# -- data, production ranker and clicks ----------------------------------------------


def load_splits(dataset, args):
    """``[(name, train, vali, test), ...]``, each part ``(X, y, qid)``."""
    if dataset == "mq2008":
        return [(f"fold {f}", *load_letor_folds(args.data, f, as_dense=True)) for f in args.folds]
    (X, y, q), test = load_example()
    splits = []
    for r in range(args.repeats):
        queries = np.unique(q)
        rng = np.random.default_rng([args.seed, 7, r])
        vali_q = rng.choice(queries, int(round(args.example_vali * len(queries))), replace=False)
        is_vali = np.isin(q, vali_q)
        splits.append((f"repeat {r + 1}", (X[~is_vali], y[~is_vali], q[~is_vali]),
                       (X[is_vali], y[is_vali], q[is_vali]), test))
    return splits


def rank_svm(X, y, qid):
    """Weights of a linear Ranking SVM: ``LinearSVC`` (C=1, no intercept) on
    the differences of every pair of a query with different labels."""
    diffs, signs = [], []
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        i, j = np.triu_indices(rows.shape[0], 1)
        i, j = rows[i], rows[j]
        keep = y[i] != y[j]
        diffs.append(X[i[keep]] - X[j[keep]])
        signs.append(np.sign(y[i[keep]] - y[j[keep]]))
    diffs, signs = np.concatenate(diffs), np.concatenate(signs)
    flip = np.arange(signs.shape[0]) % 2 == 1  # both classes for the SVM
    diffs[flip] *= -1
    signs[flip] *= -1
    return LinearSVC(C=1.0, fit_intercept=False, max_iter=20000).fit(diffs, signs).coef_.ravel()


def production_ranker(train, n_queries, seed):
    """Scoring function of a Ranking SVM fitted on ``n_queries`` random
    training queries that have at least two different labels."""
    X, y, q = train
    usable = [u for u in np.unique(q) if np.unique(y[q == u]).shape[0] > 1]
    picked = np.random.default_rng([seed, 11]).choice(usable, n_queries, replace=False)
    keep = np.isin(q, picked)
    scaler = StandardScaler().fit(X)
    weights = rank_svm(scaler.transform(X[keep]), y[keep], q[keep])
    return lambda Z: scaler.transform(Z) @ weights


def click_log(part, scores, eta, n_sessions, max_label, seed):
    """PBM click log of ``part`` shown by ``scores`` (None: uniformly random
    rankings), sessions with a click only.

    Returns
    -------
    log : dict
        ``X``, ``click``, ``session``, ``position`` (rows sorted by session,
        then position, as XGBoost's lambdarank_unbiased needs) and ``stats``.
    """
    X, y, q = part
    log = simulate_clicks(y.astype(int), q, scores=scores, model="pbm", n_sessions=n_sessions,
                          k=SHOWN, eta=eta, max_label=max_label, random_state=seed)
    clicks_per_session = np.bincount(log.session, weights=log.click)
    keep = clicks_per_session[log.session] > 0
    shown = np.bincount(log.position, minlength=SHOWN + 1)[1:]
    ctr = np.bincount(log.position, weights=log.click, minlength=SHOWN + 1)[1:] / np.maximum(shown, 1)
    stats = dict(sessions=int(clicks_per_session.shape[0]), kept=int(np.sum(clicks_per_session > 0)),
                 clicks=int(log.click.sum()), ctr=ctr)
    return dict(X=X[log.row[keep]], click=log.click[keep], session=log.session[keep],
                position=log.position[keep], stats=stats)


# -- fitting and tree-count selection -------------------------------------------------


def should_stop(scores, patience, tol=1e-7):
    """Our engine's early-stopping test (``_gbdt.booster._should_stop``,
    scikit-learn's rule): none of the last ``patience`` scores beats the one
    before them by more than ``tol``."""
    if len(scores) <= patience:
        return False
    reference = scores[-(patience + 1)] + tol
    return not any(s > reference for s in scores[-patience:])


def early_stopping_choice(curve, patience):
    """Trees kept by our engine's early stopping for a validation curve
    ``curve[m]`` (the model with m trees): grow until :func:`should_stop`,
    keep the best tree count seen (at least one tree)."""
    for n in range(2, len(curve) + 1):
        if should_stop(curve[:n], patience):
            break
    else:
        n = len(curve)
    return 1 + int(np.argmax(curve[1:n]))


def xgb_staged(booster, X):
    """Scores after each tree, shape (n_trees, n_rows), from the leaf values:
    one pass instead of one ``predict`` per tree count."""
    leaves = booster.predict(xgb.DMatrix(X), pred_leaf=True).astype(np.int64)
    values = np.zeros((leaves.shape[1], leaves.max() + 1))
    for t, dump in enumerate(booster.get_dump(dump_format="json")):
        stack = [json.loads(dump)]
        while stack:
            node = stack.pop()
            if "leaf" in node:
                values[t, node["nodeid"]] = node["leaf"]
            stack.extend(node.get("children", ()))
    staged = np.cumsum(values[np.arange(leaves.shape[1]), leaves].T, axis=0)
    full = booster.predict(xgb.DMatrix(X), output_margin=True)
    # base_score shifts every score alike; check the leaf sums reproduce predict.
    assert np.allclose(staged[-1] - staged[-1].mean(), full - full.mean(), atol=1e-3)
    return staged


def fit_model(name, train, tr_log, lr, n_trees, seed):
    """Fit one model of ``MODELS``; return ``(staged(X), biases)`` where
    ``staged(X)`` gives the scores after each tree and ``biases`` is ``(t+,
    t-)`` or None."""
    if name == "labels":
        model = LambdaMARTRanker(n_estimators=n_trees, learning_rate=lr, random_state=seed, **OURS)
        model.fit(train[0], train[1], qid=train[2])
        return (lambda X: np.array(list(model.staged_predict(X)))), None
    if name in ("clicks", "unbiased"):
        debias = "unbiased_lambdamart" if name == "unbiased" else None
        model = LambdaMARTRanker(n_estimators=n_trees, learning_rate=lr, random_state=seed,
                                 position_debiasing=debias, position_bias_norm=BIAS_NORM, **OURS)
        model.fit(tr_log["X"], tr_log["click"], qid=tr_log["session"],
                  position=tr_log["position"] if debias else None)
        biases = (model.position_bias_, model.position_bias_unclicked_) if debias else None
        return (lambda X: np.array(list(model.staged_predict(X)))), biases
    unbiased = name == "xgb_unbiased"
    model = xgb.XGBRanker(n_estimators=n_trees, learning_rate=2 * lr, random_state=seed,
                          lambdarank_unbiased=unbiased, **XGB)
    model.fit(tr_log["X"], tr_log["click"], qid=tr_log["session"])
    booster = model.get_booster()
    biases = None
    if unbiased:
        objective = json.loads(booster.save_config())["learner"]["objective"]
        biases = (np.array(objective["ti+"], dtype=float), np.array(objective["tj-"], dtype=float))
    return (lambda X: xgb_staged(booster, X)), biases


def curve(staged, y, qid, **kw):
    """NDCG@10 of the model with 0, 1, ... trees (0 trees: all scores tied)."""
    first = ndcg_score(y, np.zeros(len(y)), qid=qid, k=10, **kw)
    return np.array([first] + [ndcg_score(y, s, qid=qid, k=10, **kw) for s in staged])


def run_split(dataset, split, eta, eta_index, args, log):
    """All models on one split and eta; per-query test NDCG under each rule."""
    name, train, vali, test = split
    index = int(name.split()[-1])
    seed = args.seed * 1000 + index
    score = production_ranker(train, args.production_queries, seed)
    max_label = MAX_LABEL[dataset]
    click_seed = seed * 10 + eta_index
    tr_log = click_log(train, score(train[0]), eta, args.sessions, max_label, click_seed * 10 + 1)
    va_log = click_log(vali, score(vali[0]), eta, args.sessions, max_label, click_seed * 10 + 2)
    Xt, yt, qt = test
    out = dict(production=ndcg_score_per_query(yt, score(Xt), qid=qt, k=10, no_relevant="skip")[1],
               stats=tr_log["stats"], rows=len(tr_log["click"]), models={})
    for model_name in MODELS:
        start = time.perf_counter()
        staged, biases = fit_model(model_name, train, tr_log, args.lr, args.trees, seed)
        test_staged = staged(Xt)
        curves = {"labels": curve(staged(vali[0]), vali[1], vali[2])}
        if model_name != "labels":
            curves["clicks"] = curve(staged(va_log["X"]), va_log["click"], va_log["session"])
        result = dict(biases=biases, test_curve=curve(test_staged, yt, qt, no_relevant="skip"),
                      val_curves=curves, trees={}, per_query={})
        for rule, val_curve in curves.items():
            m = early_stopping_choice(val_curve, args.patience)
            result["trees"][rule] = m
            result["per_query"][rule] = np.array(
                [ndcg_score_per_query(yt, test_staged[m - 1], qid=qt, k=k, no_relevant="skip")[1]
                 for k in CUTOFFS])
        if biases is not None:
            # The biases of the model kept: those of a fit stopped at its tree count.
            result["biases_kept"] = fit_model(model_name, train, tr_log, args.lr,
                                              result["trees"]["clicks"], seed)[1]
        out["models"][model_name] = result
        main_rule = "clicks" if model_name != "labels" else "labels"
        log(f"  {NAMES[dataset]} {name} eta {eta:g} {model_name:<12} trees {result['trees'][main_rule]:>3} "
            f"test NDCG@10 {np.nanmean(result['per_query'][main_rule][-1]):.4f} "
            f"({time.perf_counter() - start:.1f} s)")
    # Control: the same clicks model on random rankings, where position and
    # relevance are independent; only the estimated biases are kept.
    random_log = click_log(train, None, eta, args.sessions, max_label, click_seed * 10 + 3)
    out["control"] = {m: fit_model(m, train, random_log, args.lr, args.control_trees, seed)[1]
                      for m in BIASED}
    return out


def pair_by_pair_update(log, scores, t_plus, t_minus, eps=float(np.float32(0.01))):
    """One re-estimate of (t+, t-) by Hu et al.'s eqs. 30-31, pair by pair,
    with our pairs and weights: within each session sorted by score, the top
    ``SHOWN`` ranks against all lower ones, |delta NDCG| / (0.01 + score gap),
    cost = weight * log(1 + exp(-(s_h - s_l)))."""
    costs = np.zeros((2, t_plus.shape[0]))
    gains, positions = 2.0 ** log["click"] - 1, log["position"] - 1
    bounds = np.flatnonzero(np.diff(log["session"])) + 1
    for rows in np.split(np.arange(len(gains)), bounds):
        order = rows[np.argsort(-scores[rows], kind="stable")]
        g, s, pos = gains[order], scores[order], positions[order]
        ideal = np.sort(g)[::-1][:SHOWN]
        max_dcg = np.sum(ideal / np.log2(np.arange(2, ideal.shape[0] + 2)))
        if max_dcg == 0:
            continue
        discount = 1 / np.log2(np.arange(2, g.shape[0] + 2))
        for i in range(min(g.shape[0] - 1, SHOWN)):
            for j in range(i + 1, g.shape[0]):
                if g[i] == g[j]:
                    continue
                h, lo = (i, j) if g[i] > g[j] else (j, i)
                w = abs(g[i] - g[j]) * (discount[i] - discount[j]) / max_dcg
                if s[0] != s[-1]:
                    w /= eps + (s[i] - s[j])
                cost = w * np.log1p(np.exp(-(s[h] - s[lo])))
                costs[0, pos[h]] += cost / t_minus[pos[lo]]
                costs[1, pos[lo]] += cost / t_plus[pos[h]]
    exponent = 1 / (1 + BIAS_NORM)
    return (costs[0] / costs[0, 0]) ** exponent, (costs[1] / costs[1, 0]) ** exponent


def check_bias_update(split, dataset, args, n_trees=20):
    """Largest difference between the biases our objective fits after
    ``n_trees + 1`` trees and :func:`pair_by_pair_update` of the scores and
    biases after ``n_trees`` (first split, eta 1)."""
    _, train, _, _ = split
    seed = args.seed * 1000 + 1
    score = production_ranker(train, args.production_queries, seed)
    log = click_log(train, score(train[0]), 1.0, args.sessions, MAX_LABEL[dataset], seed)
    fits = [LambdaMARTRanker(n_estimators=n, learning_rate=args.lr, random_state=0,
                             position_debiasing="unbiased_lambdamart", **OURS)
            .fit(log["X"], log["click"], qid=log["session"], position=log["position"])
            for n in (n_trees, n_trees + 1)]
    t_plus, t_minus = pair_by_pair_update(log, fits[0].predict(log["X"]), fits[0].position_bias_,
                                          fits[0].position_bias_unclicked_)
    return max(np.max(np.abs(t_plus - fits[1].position_bias_)),
               np.max(np.abs(t_minus - fits[1].position_bias_unclicked_)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--data", default=os.path.normpath(os.path.join(here, "..", "..", "shared", "data", "mq2008")))
    parser.add_argument("--out", default=None, help="output directory (default benchmarks/results)")
    parser.add_argument("--datasets", nargs="+", default=["mq2008", "example"], choices=["mq2008", "example"])
    parser.add_argument("--folds", type=int, nargs="+", default=None, help="MQ2008 folds (default 1-5)")
    parser.add_argument("--repeats", type=int, default=None, help="splits of the example (default 3)")
    parser.add_argument("--example-vali", type=float, default=0.25, help="share of example training queries for validation")
    parser.add_argument("--etas", type=float, nargs="+", default=None, help="PBM bias strengths (default 0.5 1 2)")
    parser.add_argument("--sessions", type=int, default=None, help="sessions per query (default 32)")
    parser.add_argument("--trees", type=int, default=None, help="trees per model (default 200)")
    parser.add_argument("--control-trees", type=int, default=None,
                        help="trees of the random-ranking control fits (default 50)")
    parser.add_argument("--lr", type=float, default=0.05, help="our learning rate (XGBoost gets twice)")
    parser.add_argument("--patience", type=int, default=30, help="n_iter_no_change of the tree-count rule")
    parser.add_argument("--production-queries", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small smoke run into a temp directory")
    args = parser.parse_args(argv)
    quick = args.quick
    args.folds = args.folds or ([1] if quick else [1, 2, 3, 4, 5])
    args.repeats = args.repeats or (1 if quick else 3)
    args.etas = args.etas or ([1.0] if quick else [0.5, 1.0, 2.0])
    args.sessions = args.sessions or (8 if quick else 32)
    args.trees = args.trees or (60 if quick else 200)
    args.control_trees = args.control_trees or (20 if quick else 50)
    if args.out is None:
        args.out = (os.path.join(tempfile.gettempdir(), "replicate_unbiased_lambdamart_quick") if quick
                    else os.path.join(here, "results"))
    os.makedirs(args.out, exist_ok=True)
    start = time.perf_counter()
    version = code_version()

    log = minutes_logger(start)

    results = {}
    update_error = None
    for dataset in args.datasets:
        splits = load_splits(dataset, args)
        if update_error is None:
            update_error = check_bias_update(splits[0], dataset, args)
            log(f"bias update against the pair-by-pair formulas: largest difference {update_error:.1e}")
        results[dataset] = {}
        for e, eta in enumerate(args.etas):
            runs = [run_split(dataset, split, eta, e, args, log) for split in splits]
            for run in runs:
                run["same_test"] = dataset == "example"
            results[dataset][eta] = runs
    plot_propensities(results, args.datasets, args.etas,
                      os.path.join(args.out, "unbiased_lambdamart_propensities.png"))
    plot_curves(results, args.datasets, args.etas, os.path.join(args.out, "unbiased_lambdamart_curves.png"))
    report = os.path.join(args.out, "unbiased_lambdamart.md")
    write_report(report, args, args.datasets, args.etas, results, time.perf_counter() - start, version,
                 update_error)
    log(f"wrote {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
