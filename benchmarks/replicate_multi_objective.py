"""Replicate Svore, Volkovs and Burges, "Learning to Rank with Multiple
Objective Functions" (WWW 2011, ``seeds/002``) with :class:`LambdaMARTRanker`.

The paper uses a commercial web dataset with real click logs. There are no
public click logs here, so the secondary labels are simulated on MQ2008
(5 LETOR folds):

* Clicks (:func:`sklearn_ltr.datasets.simulate_clicks`, ``model="dbn"``):
  every query is shown ``--impressions`` times. Each impression ranks the
  documents by a weak base ranker (BM25 of the whole document, LETOR
  feature 25, plus Gaussian noise per impression) and shows the top 10. A
  cascade user (seed 004, appendix E, after Craswell et al. 2008) scans them
  top-down and clicks a document with probability .05 / .5 / .95 for labels
  0 / 1 / 2 (seed 004's probabilities for grades 0, 2 and 4). After a click
  the user is satisfied and stops with probability .3 / .6 / .9, else reads
  on (``continuation=1``), so a session can have several clicks. The
  secondary label of a document is its last-click rate (seed 002 section
  6): the share of the impressions that showed it in which it was the last
  click. Documents never shown get 0, which lambda(C) ignores (section 4.2).

Experiments (every NDCG skips queries without a relevant document, every
CNDCG queries without a click, ``no_relevant="skip"``):

(a) Table 1: LambdaMART (Newton leaves) against the tiered objective
    ``(1 - w) lambda(L) + w lambda(C)`` for w in {0.01, 0.1, 0.2, 0.3, 0.4,
    0.5}: NDCG@1..10 and CNDCG@1..10 on test with paired t-tests.
(b) Table 2: Newton baseline, gradient-descent baseline, and the
    iteration-dependent ``(1 - w_m) lambda(L) + w_m lambda(S)`` with the
    exponential schedule of the text (cumulative), that of Figure 6
    (``exp(-eta / m)``, non-cumulative) and the linear one (and
    lambda(S@3)): NDCG@1..10.
(c) Figure 7: test NDCG@3 against the share of training queries used.

Model selection as in the paper's section 6: per fold, the configuration and
the number of trees with the best validation NDCG@3 (the tree count is read
off ``staged_predict``, i.e. early stopping without a patience limit).

Run: ``python benchmarks/replicate_multi_objective.py`` (about 15 minutes on
a loaded 2-core machine; writes ``benchmarks/results/multi_objective.md`` and
``multi_objective_*.png``), or ``--quick`` for a 1-2 minute smoke run written
to a temporary directory.
"""

import os

# One numba thread: on the shared, oversubscribed 2-core machine two threads
# per fit made MQ2008 fits 10-20x slower (spinning workers); the kernels give
# bit-identical results on any number of threads. Set before numba loads.
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")  # no display on the benchmark machine
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from _report import (  # noqa: E402
    code_version,
    compare,
    count_sig,
    mean_diff,
    minutes_logger,
    p_row,
    paired,
    table_header,
    table_row,
)

from sklearn_ltr import LambdaMARTRanker  # noqa: E402
from sklearn_ltr._objectives.multi_objective import schedule_weights  # noqa: E402
from sklearn_ltr.datasets import load_letor_folds, simulate_clicks  # noqa: E402
from sklearn_ltr.metrics import (  # noqa: E402
    cndcg_score_per_query,
    ndcg_score,
    ndcg_score_per_query,
)

CUTOFFS = tuple(range(1, 11))
BASE_FEATURE = 24  # LETOR 4.0 feature 25: BM25 of the whole document
P_CLICK = np.array([0.05, 0.5, 0.95])  # click probability for labels 0, 1, 2
P_STOP = np.array([0.3, 0.6, 0.9])  # stop (satisfied) after clicking label 0, 1, 2
SHOWN = 10
SETTINGS = dict(max_leaf_nodes=15, min_samples_leaf=20, early_stopping=False, random_state=0)
WEIGHTS = (0.01, 0.1, 0.2, 0.3, 0.4, 0.5)  # the paper's sweep of w (section 6.1)
W0S = (0.1, 0.25, 0.5)  # the paper's sweep of w_0 (section 6.2)
# Tolerance of the tiered selection: a w qualifies if its validation NDCG@3 is
# at most this far below the baseline's (the graded measure keeps NDCG).
NDCG_TOLERANCE = 0.01
# The text's cumulative exponential, Figure 6's non-cumulative one, and linear.
SCHEDULES = ("exponential", "exponential_noncumulative", "linear")


def etas(schedule, n_trees):
    """The paper's eta sweeps for 1000 trees, rescaled to ``n_trees``.

    Exponential {100, 250} and linear {0.1, 0.01, 0.001} (section 6.2) put
    ``w_m`` at 1 after the same share of the training as in the paper.
    Figure 6's ``exp(-eta / m)`` depends on ``m / eta`` only: the text's
    {100, 250} per 1000 trees end at w = 0.90 and 0.78, and Figure 6's
    curves (eta 5-20 over 24 iterations) rise more slowly, ending at
    0.81-0.43, so 500 per 1000 trees (ending at 0.61) is added.
    """
    scale = n_trees / 1000
    if schedule == "exponential":
        return tuple(round(e * scale, 4) for e in (100.0, 250.0))
    if schedule == "exponential_noncumulative":
        return tuple(round(e * scale, 4) for e in (100.0, 250.0, 500.0))
    return tuple(round(e / scale, 6) for e in (0.1, 0.01, 0.001))


# -- click simulation -----------------------------------------------------------


def last_click_rates(y, qid, scores, n_impressions, noise, seed):
    """Last-click rate of every row under the click model of the docstring.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Labels 0, 1, 2.
    qid : ndarray of shape (n_samples,)
    scores : ndarray of shape (n_samples,)
        The base ranker's scores.
    n_impressions : int
    noise : float
        Std of the Gaussian noise added to the base ranker's score per
        impression (MQ2008 features are normalised to [0, 1] per query).
    seed : int

    Returns
    -------
    rates : ndarray of shape (n_samples,)
        Last clicks / impressions showing the row, in [0, 1]; 0 if never shown.
    """
    log = simulate_clicks(
        y, qid, scores=scores, score_noise=noise, model="dbn", n_sessions=n_impressions,
        k=SHOWN, attractiveness=P_CLICK, satisfaction=P_STOP, continuation=1.0,
        random_state=seed,
    )
    clicked = np.flatnonzero(log.click == 1)
    # The log is sorted by session, then position: a session's last click is
    # its last clicked entry.
    session = log.session[clicked]
    last = clicked[np.append(session[1:] != session[:-1], True)]
    n_last = np.bincount(log.row[last], minlength=len(y))
    n_shown = np.bincount(log.row, minlength=len(y))
    return n_last / np.maximum(n_shown, 1)


def load_data(path, folds, n_impressions, noise, seed):
    """Each fold's (X, y, qid, clicks) for train, vali and test.

    The clicks are simulated once for all queries (the three parts of a
    fold hold every MQ2008 query), so a query has the same rates in every
    fold whatever split it is in.
    """
    loaded = {fold: load_letor_folds(path, fold, as_dense=True) for fold in folds}
    X, y, q = (np.concatenate(a) for a in zip(*loaded[folds[0]]))
    rates = last_click_rates(y, q, X[:, BASE_FEATURE], n_impressions, noise, seed)
    # A query's rows come from one LETOR file, in the same order in every fold.
    by_query = {int(k): rates[q == k] for k in np.unique(q)}
    data = {}
    for fold, parts in loaded.items():
        data[fold] = []
        for X, y, q in parts:
            c = np.empty(len(y))
            for k in np.unique(q):
                c[q == k] = by_query[int(k)]
            data[fold].append((X, y, q, c))
    return data


def click_stats(data):
    """Summary of the simulated secondary labels over all queries."""
    seen = {}
    for parts in data.values():
        for X, y, q, c in parts:
            for qq in np.unique(q):
                rows = q == qq
                seen[int(qq)] = (y[rows], c[rows], X[rows, BASE_FEATURE])
    y = np.concatenate([v[0] for v in seen.values()])
    c = np.concatenate([v[1] for v in seen.values()])
    # Pairs lambda(C) can use: same label, both rates > 0 and different.
    usable = 0
    for yy, cc, _ in seen.values():
        for label in np.unique(yy):
            vals = cc[(yy == label) & (cc > 0)]
            counts = np.unique(vals, return_counts=True)[1]
            usable += (len(vals) * (len(vals) - 1) - np.sum(counts * (counts - 1))) // 2
    return dict(
        queries=len(seen), docs=len(y), zero=float(np.mean(c == 0)),
        mean_by_label=[float(c[y == v].mean()) for v in (0, 1, 2)],
        nonzero_by_label=[float(np.mean(c[y == v] > 0)) for v in (0, 1, 2)],
        corr=float(np.corrcoef(y, c)[0, 1]), usable_pairs=int(usable),
        queries_with_clicks=int(sum(np.any(v[1] > 0) for v in seen.values())),
    )


# -- fitting and evaluation --------------------------------------------------------------


def fit_select(params, train, vali, test, n_trees, lr):
    """Fit one configuration and keep the tree count with the best vali NDCG@3.

    Returns
    -------
    result : dict
        ``vali`` (best validation NDCG@3), ``trees``, ``scores`` (test scores
        of the selected model) and ``params``.
    """
    X, y, q, c = train
    model = LambdaMARTRanker(n_estimators=n_trees, learning_rate=lr, **SETTINGS, **params)
    model.fit(X, y, qid=q, y_secondary=c if params.get("secondary_weight", 0) > 0 else None)
    Xv, yv, qv, _ = vali
    staged_vali = list(model.staged_predict(Xv))
    curve = [ndcg_score(yv, s, qid=qv, k=3, no_relevant="skip") for s in staged_vali]
    best = int(np.argmax(curve))
    for i, scores in enumerate(model.staged_predict(test[0])):
        if i == best:
            break
    return dict(vali=curve[best], trees=best + 1, scores=scores, vali_scores=staged_vali[best],
                params=dict(params, learning_rate=lr))


def select(candidates):
    """The candidate with the best validation NDCG@3 (first on ties)."""
    return max(candidates, key=lambda r: r["vali"])


def per_query(result, test, metric="ndcg"):
    """Test metric per query (NaN where skipped), shape (len(CUTOFFS), n_queries)."""
    _, y, q, c = test
    fn, labels = (ndcg_score_per_query, y) if metric == "ndcg" else (cndcg_score_per_query, c)
    return np.array([fn(labels, result["scores"], qid=q, k=k, no_relevant="skip")[1] for k in CUTOFFS])


def pooled(results, data, folds, metric="ndcg"):
    """Per-query values of one model over the test queries of all folds."""
    return np.concatenate([per_query(results[f], data[f][2], metric) for f in folds], axis=1)


def means(values):
    return np.nanmean(values, axis=1)


# -- experiments ----------------------------------------------------------------------


def run_tiered(data, folds, n_trees, lrs, log):
    """(a) Newton baseline and the tiered objective for every w."""
    out = {"baseline": {}, **{w: {} for w in WEIGHTS}, "selected": {}}
    for f in folds:
        train, vali, test = data[f]
        for key, params in [("baseline", {})] + [(w, {"secondary_weight": w}) for w in WEIGHTS]:
            out[key][f] = select([fit_select(params, train, vali, test, n_trees, lr) for lr in lrs])
        base_vali = out["baseline"][f]["vali"]
        ok = [w for w in WEIGHTS if out[w][f]["vali"] >= base_vali - NDCG_TOLERANCE] or list(WEIGHTS)
        # The graded measure: among the w that keep validation NDCG@3, the best
        # validation CNDCG@3.
        _, _, qv, cv = vali
        cndcg = {
            w: np.nanmean(cndcg_score_per_query(cv, out[w][f]["vali_scores"], qid=qv, k=3,
                                                no_relevant="skip")[1])
            for w in ok
        }
        w_best = max(ok, key=lambda w: cndcg[w])
        out["selected"][f] = dict(out[w_best][f], w=w_best)
        log(f"  fold {f}: selected w={w_best}")
    return out


def schedule_grid(schedule, n_trees):
    return [
        dict(leaf_estimation="gradient", lambda_schedule=schedule, schedule_w0=w0, schedule_eta=eta)
        for w0 in W0S for eta in etas(schedule, n_trees)
    ]


def run_iteration_dependent(data, folds, n_trees, lrs, log, baseline=None):
    """(b) Newton and gradient-descent baselines and the three schedules."""
    out = {k: {} for k in ("newton", "gradient", *SCHEDULES, *(f"{s}@3" for s in SCHEDULES))}
    for f in folds:
        train, vali, test = data[f]

        def best(grid):
            return select([fit_select(p, train, vali, test, n_trees, lr) for p in grid for lr in lrs])

        out["newton"][f] = baseline[f] if baseline is not None else best([{}])
        out["gradient"][f] = best([dict(leaf_estimation="gradient")])
        for schedule in SCHEDULES:
            out[schedule][f] = best(schedule_grid(schedule, n_trees))
            # lambda(S@3) with the schedule parameters chosen for lambda(S).
            chosen = dict(out[schedule][f]["params"])
            lr = chosen.pop("learning_rate")
            out[f"{schedule}@3"][f] = fit_select(
                dict(chosen, sigmoid_truncation=3), train, vali, test, n_trees, lr
            )
        log(f"  fold {f}: " + ", ".join(f"{k} {v[f]['vali']:.4f}" for k, v in out.items()))
    return out


def run_sizes(data, folds, fractions, draws, n_trees, chosen, log):
    """(c) NDCG@3 of the four Table 2 models against the training-set share.

    Returns, per model, one array per share: per-query test NDCG@3 (mean over
    the random subsets), pooled over folds.
    """
    curves = {m: [] for m in chosen}
    for frac in fractions:
        pooled_values = {m: [] for m in chosen}
        for f in folds:
            train, vali, test = data[f]
            queries = np.unique(train[2])
            per_draw = {m: [] for m in chosen}
            for d in range(1 if frac >= 1.0 else draws):
                sub = train
                if frac < 1.0:
                    rng = np.random.default_rng([f, d, int(frac * 1000)])
                    picked = rng.choice(queries, max(2, int(round(frac * len(queries)))), replace=False)
                    keep = np.isin(train[2], picked)
                    sub = tuple(a[keep] for a in train)
                for m, results in chosen.items():
                    params = dict(results[f]["params"])
                    lr = params.pop("learning_rate")
                    result = fit_select(params, sub, vali, test, n_trees, lr)
                    per_draw[m].append(per_query(result, test)[2])  # NDCG@3
            for m in chosen:
                # NaN (no relevant document) at the same queries in every draw.
                pooled_values[m].append(np.mean(per_draw[m], axis=0))
        for m in chosen:
            curves[m].append(np.concatenate(pooled_values[m]))
        log(f"  {frac:.0%}: " + ", ".join(f"{m} {np.nanmean(curves[m][-1]):.4f}" for m in chosen))
    return curves


# -- report ---------------------------------------------------------------------------


def tiered_section(tiered, data, folds):
    base_n = pooled(tiered["baseline"], data, folds)
    base_c = pooled(tiered["baseline"], data, folds, "cndcg")
    sel_n = pooled(tiered["selected"], data, folds)
    sel_c = pooled(tiered["selected"], data, folds, "cndcg")
    t_n, t_c = paired(sel_n, base_n), paired(sel_c, base_c)
    n_q = int(np.sum(~np.isnan(base_n[0])))
    n_qc = int(np.sum(~np.isnan(base_c[0])))
    chosen = ", ".join(f"fold {f}: w={tiered['selected'][f]['w']}" for f in folds)
    lines = [
        "## (a) Tiered objective: NDCG and CNDCG (paper Table 1)",
        "",
        f"Test metrics in percent, pooled over the test queries of folds {folds} ({n_q} queries with "
        f"a relevant document for NDCG, {n_qc} with a click for CNDCG). The tiered model's w is chosen "
        f"per fold on validation: the best validation CNDCG@3 among the w whose validation NDCG@3 is "
        f"at most {NDCG_TOLERANCE} below the baseline's ({chosen}). Bold: paired t-test p < 0.05 (either sign) "
        "against the baseline, italic: p < 0.10.",
        "",
        table_header("model / measure", CUTOFFS),
        table_row("Baseline (N.) NDCG", means(base_n)),
        table_row("lambda(L) + lambda(C) (N.) NDCG", means(sel_n), t_n),
        table_row("Baseline (N.) CNDCG", means(base_c)),
        table_row("lambda(L) + lambda(C) (N.) CNDCG", means(sel_c), t_c),
        "",
        "Differences (tiered - baseline, points) and p-values:",
        "",
        table_header("measure", CUTOFFS),
        p_row("NDCG", t_n),
        p_row("CNDCG", t_c),
        "",
        "Every w of the sweep (learning rate and trees chosen on validation NDCG@3 for each w):",
        "",
        "| w | NDCG@3 | diff (p) | CNDCG@3 | diff (p) | NDCG@10 | diff (p) | CNDCG@10 | diff (p) |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| 0 (baseline) | {100 * means(base_n)[2]:.2f} | | {100 * means(base_c)[2]:.2f} | | "
        f"{100 * means(base_n)[9]:.2f} | | {100 * means(base_c)[9]:.2f} | |",
    ]
    sweep = {}
    for w in WEIGHTS:
        n, c = pooled(tiered[w], data, folds), pooled(tiered[w], data, folds, "cndcg")
        tn, tc = paired(n, base_n), paired(c, base_c)
        sweep[w] = (tn, tc)
        cells = []
        for k in (2, 9):
            cells += [f"{100 * means(n)[k]:.2f}", f"{100 * tn[k][0]:+.2f} ({tn[k][1]:.3f})",
                      f"{100 * means(c)[k]:.2f}", f"{100 * tc[k][0]:+.2f} ({tc[k][1]:.3f})"]
        lines.append(f"| {w} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Paper (web data, clicks from equal queries): NDCG@3 61.66 -> 61.77 (not significant), "
        "CNDCG@3 43.12 -> 46.75 (significant); CNDCG rises by 3-5 points at every cutoff while NDCG "
        "stays within noise.",
        "",
    ]
    return lines, dict(t_n=t_n, t_c=t_c, sweep=sweep)


_SCHEDULE_NAMES = {"exponential": "Exponential", "exponential_noncumulative": "Exponential (Fig. 6)",
                   "linear": "Linear"}
TABLE2 = (
    ("newton", "Baseline (Newton)"),
    ("gradient", "Baseline (Gradient Descent)"),
    *((s, f"lambda(L) + lambda(S), {_SCHEDULE_NAMES[s]}") for s in SCHEDULES),
    *((f"{s}@3", f"lambda(L) + lambda(S@3), {_SCHEDULE_NAMES[s]}") for s in SCHEDULES),
)


def iteration_section(itdep, data, folds, n_trees):
    values = {k: pooled(itdep[k], data, folds) for k, _ in TABLE2}
    ref = {"gradient": "newton", **{s: "gradient" for s in SCHEDULES},
           **{f"{s}@3": s for s in SCHEDULES}}
    tests = {k: paired(values[k], values[r]) for k, r in ref.items()}
    # The paper also reports the schedules significantly above the Newton baseline.
    extra = {s: paired(values[s], values["newton"]) for s in SCHEDULES}
    ok = ~np.isnan(values["newton"][2])
    # Standard error of a paired NDCG@3 difference between the two baselines:
    # the size of difference this test set can resolve.
    diff3 = values["gradient"][2][ok] - values["newton"][2][ok]
    se3 = float(np.std(diff3, ddof=1) / np.sqrt(ok.sum()))
    lines = [
        "## (b) Iteration-dependent objective (paper Table 2)",
        "",
        "Test NDCG in percent, pooled over folds. Bold / italic: p < 0.05 / 0.10 (either sign; the "
        "differences table below gives the signs) of a paired t-test "
        "of gradient descent over Newton, of each lambda(L) + lambda(S) model over gradient descent, "
        "and of each lambda(S@3) model over its lambda(S) model.",
        "",
        table_header("method", CUTOFFS),
    ]
    lines += [table_row(name, means(values[k]), tests.get(k)) for k, name in TABLE2]
    lines += ["", "Differences and p-values:", "", table_header("comparison", CUTOFFS)]
    names = dict(TABLE2)
    lines += [p_row(f"{names[k]} - {names[ref[k]]}", t) for k, t in tests.items()]
    lines += [p_row(f"{names[k]} - {names['newton']}", t) for k, t in extra.items()]
    lines += ["", "Selected configuration per fold (validation NDCG@3, trees of at most "
              f"{n_trees}):", "", "| method | fold | learning rate | w0 | eta | trees | vali NDCG@3 |",
              "|---|---|---|---|---|---|---|"]
    for k, name in TABLE2:
        for f in folds:
            r = itdep[k][f]
            p = r["params"]
            lines.append(f"| {name} | {f} | {p['learning_rate']} | {p.get('schedule_w0', '')} | "
                         f"{p.get('schedule_eta', '')} | {r['trees']} | {r['vali']:.4f} |")
    lines += [
        "",
        "Paper NDCG@3: Newton 61.66, gradient descent 61.94 (significant), exponential 62.15 and "
        "linear 62.19 (significant over gradient descent), lambda(S@3) 61.75 / 61.82 (worse than "
        "lambda(S)). The paper reports one exponential schedule; which of the two forms it ran is not "
        "stated beyond the text's recursion and Figure 6's curves.",
        "",
    ]
    return lines, dict(tests, **{f"{k} vs newton": t for k, t in extra.items()}, se3=se3)


def sizes_section(curves, fractions, train_queries):
    lines = [
        "## (c) NDCG@3 against training-set size (paper Figure 7)",
        "",
        f"Share of the ~{train_queries} training queries of each fold (random subsets, the "
        "configuration chosen in (b) for each model and fold, trees chosen on the full validation "
        "set). Test NDCG@3 in percent, pooled over folds; p-values of paired t-tests against the "
        "gradient-descent baseline.",
        "",
        "| share | " + " | ".join(dict(TABLE2)[m] for m in curves) + " |",
        "|---|" + "---|" * len(curves),
    ]
    for i, frac in enumerate(fractions):
        cells = []
        for m in curves:
            v = curves[m][i]
            if m == "gradient":
                cells.append(f"{100 * np.nanmean(v):.2f}")
            else:
                (d, p), = paired(v[None, :], curves["gradient"][i][None, :])
                cells.append(f"{100 * np.nanmean(v):.2f} (p={p:.3f})")
        lines.append(f"| {frac:.0%} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def verdicts(tiered_tests, it_tests, curves, fractions, n_queries):
    t_n, t_c = tiered_tests["t_n"], tiered_tests["t_c"]
    c_up, n_down = count_sig(t_c, +1), count_sig(t_n, -1)
    lines = ["## Findings", ""]
    lines.append(
        f"* Tiered objective (Table 1): CNDCG is significantly higher than the baseline's at "
        f"{c_up} of 10 cutoffs (mean {mean_diff(t_c):+.2f} points, paper +3 to +5) and NDCG is "
        f"significantly lower at {n_down} and higher at {count_sig(t_n, +1)} of 10 (mean "
        f"{mean_diff(t_n):+.2f} points). "
        + ("This agrees with the paper: CNDCG rises and NDCG does not fall (the paper's NDCG stayed "
           "within noise)."
           if c_up >= 5 and n_down == 0 else
           "This does not fully reproduce the paper's pattern (CNDCG up at every cutoff, NDCG unchanged).")
    )
    up = [w for w, (tn, tc) in tiered_tests["sweep"].items() if count_sig(tc, +1) >= 5]
    down = [w for w, (tn, tc) in tiered_tests["sweep"].items() if count_sig(tn, -1) > 0]
    lines.append(
        f"* Along the w sweep, CNDCG is significantly higher at 5 or more cutoffs for w in {up or 'none'}, "
        f"and NDCG is significantly lower at one cutoff or more for w in {down or 'none'} of "
        f"{list(WEIGHTS)}. The simulated clicks order documents of equal label mostly by the base "
        "ranker's position (position bias) and that ranker's BM25 score is a model feature, so "
        "lambda(C) can learn the within-label order from the features, much as the paper's click "
        "features allowed."
    )
    lines.append("* Gradient descent vs Newton leaves: "
                 + compare(it_tests["gradient"], "significantly better at @3-@10") + ".")
    for k in SCHEDULES:
        lines.append(f"* lambda(L) + lambda(S), {_SCHEDULE_NAMES[k]}, vs the gradient-descent baseline: "
                     + compare(it_tests[k], "significantly better at @3-@10") + "; vs the Newton "
                     "baseline: " + compare(it_tests[f"{k} vs newton"], "significantly better at "
                                             "@3-@10") + ".")
    for k in SCHEDULES:
        lines.append(f"* lambda(S@3) vs lambda(S), {_SCHEDULE_NAMES[k]}: "
                     + compare(it_tests[f"{k}@3"], "lambda(S@3) consistently worse", -1) + ".")
    wins = {m: [frac for i, frac in enumerate(fractions)
                if np.nanmean(curves[m][i]) > np.nanmean(curves["gradient"][i])] for m in SCHEDULES}
    lines.append(
        "* Training-set size: the schedules beat the gradient-descent baseline's mean NDCG@3 at "
        + "; ".join(f"{_SCHEDULE_NAMES[m]} {len(w)} of {len(fractions)} shares "
                    f"({', '.join(f'{f:.0%}' for f in w) or 'none'})" for m, w in wins.items())
        + "; the paper reports gains at every share."
    )
    lines.append(
        f"* Power: the t-tests pool {n_queries} MQ2008 test queries with a relevant document; the "
        "standard error of a paired NDCG@3 difference (gradient descent - Newton) is "
        f"{100 * it_tests['se3']:.2f} points, so only differences of about "
        f"{200 * it_tests['se3']:.1f} points or more can be significant. The paper tested on 13.5K "
        "queries, where its Table 2 differences of 0.2-0.3 points were significant; at that size "
        "the ordering (Newton < gradient descent < schedules, lambda(S@3) < lambda(S)) is what can "
        "be compared here."
    )
    lines.append("")
    return lines


def plot_tiered(tiered, data, folds, path):
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for key, label, color in (("baseline", "Baseline (Newton)", "tab:gray"),
                              ("selected", "lambda(L) + lambda(C)", "tab:blue")):
        axes[0].plot(CUTOFFS, 100 * means(pooled(tiered[key], data, folds)), "o-", color=color, label=label)
        axes[1].plot(CUTOFFS, 100 * means(pooled(tiered[key], data, folds, "cndcg")), "o-", color=color,
                     label=label)
    for ax, title in zip(axes[:2], ("test NDCG@k", "test CNDCG@k")):
        ax.set_xlabel("k")
        ax.set_title(title)
        ax.legend()
    ws = [0.0, *WEIGHTS]
    n3 = [100 * means(pooled(tiered["baseline"], data, folds))[2]]
    c3 = [100 * means(pooled(tiered["baseline"], data, folds, "cndcg"))[2]]
    for w in WEIGHTS:
        n3.append(100 * means(pooled(tiered[w], data, folds))[2])
        c3.append(100 * means(pooled(tiered[w], data, folds, "cndcg"))[2])
    axes[2].plot(ws, n3, "o-", label="NDCG@3")
    axes[2].plot(ws, c3, "s-", label="CNDCG@3")
    axes[2].set_xlabel("secondary_weight w")
    axes[2].set_title("w sweep (test)")
    axes[2].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_iteration(curves, fractions, n_trees, path):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    m = np.arange(n_trees)
    for schedule, style in zip(SCHEDULES, ("-", "-.", "--")):
        for eta in etas(schedule, n_trees):
            axes[0].plot(m, schedule_weights(schedule, 0.0, eta, n_trees), style,
                         label=f"{schedule}, eta={eta:g}")
    axes[0].set_xlabel("tree m")
    axes[0].set_ylabel("w_m (w_0 = 0)")
    axes[0].set_title("schedules (paper Figure 6)")
    axes[0].legend(fontsize=8)
    colors = {"newton": "tab:gray", "gradient": "tab:orange", "exponential": "tab:blue",
              "exponential_noncumulative": "tab:purple", "linear": "tab:green"}
    for key, values in curves.items():
        axes[1].plot([100 * f for f in fractions], [100 * np.nanmean(v) for v in values], "o-",
                     color=colors[key], label=dict(TABLE2)[key])
    axes[1].set_xscale("log")
    axes[1].set_xticks([100 * f for f in fractions], [f"{100 * f:g}" for f in fractions])
    axes[1].minorticks_off()
    axes[1].set_xlabel("% of training queries")
    axes[1].set_ylabel("test NDCG@3 (%)")
    axes[1].set_title("training-set size (paper Figure 7b)")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(path, args, stats, sections, elapsed, version):
    lines = [
        "# Multiple objectives in LambdaMART on MQ2008: replicating Svore, Volkovs and Burges (WWW 2011)",
        "",
        f"Generated by `python benchmarks/replicate_multi_objective.py{' --quick' if args.quick else ''}` "
        f"at {version} in {elapsed / 60:.1f} minutes on a shared 2-core machine (one numba "
        "thread).",
        "",
        "## Settings",
        "",
        "* Data: LETOR 4.0 MQ2008, LETOR folds (train 3 parts, vali 1, test 1), labels 0-2, 46 features. "
        f"Folds {args.folds}.",
        f"* Simulated clicks (no public click logs), `simulate_clicks(model=\"dbn\", continuation=1)`: "
        f"{args.impressions} impressions per query, each "
        f"ranking the documents by BM25 (feature 25) plus N(0, {args.noise}^2) noise and showing the top "
        f"{SHOWN}; cascade user clicking with probability {P_CLICK.tolist()} for labels 0/1/2 (seed 004 "
        f"appendix E) and stopping after a click with probability {P_STOP.tolist()}; secondary label = "
        "last-click rate (last clicks / impressions showing the document; 0 if never shown). Clicks are "
        "simulated once for all queries, so train, vali and test get them alike and a query has the same "
        "rates in every fold.",
        f"* Click statistics over the {stats['queries']} queries ({stats['docs']} documents): "
        f"{100 * stats['zero']:.1f}% of documents have a zero rate; mean rate by label 0/1/2 "
        f"{', '.join(f'{v:.3f}' for v in stats['mean_by_label'])}; share with a non-zero rate "
        f"{', '.join(f'{v:.2f}' for v in stats['nonzero_by_label'])}; correlation with the label "
        f"{stats['corr']:.2f}; {stats['queries_with_clicks']} queries have a click; "
        f"{stats['usable_pairs']} pairs qualify for lambda(C) (same label, both rates non-zero and "
        "different).",
        f"* Models: `LambdaMARTRanker` with max_leaf_nodes={SETTINGS['max_leaf_nodes']}, "
        f"min_samples_leaf={SETTINGS['min_samples_leaf']}, up to {args.trees} trees, learning rate in "
        f"{list(args.lrs)}; everything else at its default (LightGBM-style lambdas, "
        "normalize_lambdas=True, truncation_level=30, sigma=1). Per fold the configuration and the "
        "number of trees with the best validation NDCG@3 are kept, as in the paper (which swept "
        "learning rate and leaf size with 1000 trees on 108K training queries).",
        f"* Schedules: w_0 in {list(W0S)}; eta swept over the paper's values rescaled from 1000 to "
        f"{args.trees} trees (exponential {list(etas('exponential', args.trees))}, linear "
        f"{list(etas('linear', args.trees))}), so w_m reaches 1 after the same share of the training. "
        "With the recursion w_m = w_(m-1) + exp(-eta/m) of the paper's text (\"Exponential\"), the "
        "schedule saturates early (eta = 100 from w_0 = 0.25 hits 1 at tree 39 of 1000). The paper's "
        "Figure 6 plots exp(-eta/t) itself: \"Exponential (Fig. 6)\" is w_m = max(w_0, exp(-eta/m)), "
        "which depends on m/eta only; its eta sweep "
        f"{list(etas('exponential_noncumulative', args.trees))} is the text's 100 and 250 per 1000 trees "
        "(w at the last tree 0.90 and 0.78) plus 500 per 1000 (0.61), the slower rise of Figure 6's "
        "curves (0.81-0.43 at its last iteration). lambda(S) uses mu = 0 and gradient-descent leaves "
        "(per-query std-normalised lambdas, section 5.3).",
        "* Metrics: NDCG@k with gains 2^y - 1 skipping queries without a relevant document; CNDCG@k "
        "(eq. 9, gains 2^(4c) - 1) skipping queries without clicks. Paired t-tests "
        "(scipy.stats.ttest_rel) over the pooled test queries of all folds.",
        "",
    ]
    for section in sections:
        lines += section
    with open(path, "w") as fh:
        fh.write("\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--data", default=os.path.normpath(os.path.join(here, "..", "..", "shared", "data", "mq2008")))
    parser.add_argument("--out", default=None, help="output directory (default benchmarks/results)")
    parser.add_argument("--folds", type=int, nargs="+", default=None, help="LETOR folds (default 1-5)")
    parser.add_argument("--trees", type=int, default=None, help="trees per model (default 300)")
    parser.add_argument("--impressions", type=int, default=100, help="simulated impressions per query")
    parser.add_argument("--noise", type=float, default=0.1, help="std of the base ranker's noise")
    parser.add_argument("--draws", type=int, default=None, help="random subsets per share in (c) (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the click simulation")
    parser.add_argument("--quick", action="store_true", help="small smoke run into a temp directory")
    args = parser.parse_args(argv)
    quick = args.quick
    args.folds = args.folds or ([1, 2] if quick else [1, 2, 3, 4, 5])
    args.trees = args.trees or (60 if quick else 300)
    args.draws = args.draws or (1 if quick else 2)
    args.lrs = (0.1,) if quick else (0.05, 0.1)
    fractions = (0.25, 1.0) if quick else (0.1, 0.25, 0.5, 1.0)
    if args.out is None:
        args.out = (os.path.join(tempfile.gettempdir(), "replicate_multi_objective_quick") if quick
                    else os.path.join(here, "results"))
    if any(not 1 <= f <= 5 for f in args.folds):
        raise ValueError(f"--folds must be in 1..5, got {args.folds}.")
    os.makedirs(args.out, exist_ok=True)
    start = time.perf_counter()
    version = code_version()  # the code the fits below run, not what is checked out at the end

    log = minutes_logger(start)

    data = load_data(args.data, args.folds, args.impressions, args.noise, args.seed)
    stats = click_stats(data)
    log(f"clicks simulated: {stats}")
    log("(a) tiered objective")
    tiered = run_tiered(data, args.folds, args.trees, args.lrs, log)
    log("(b) iteration-dependent objective")
    itdep = run_iteration_dependent(data, args.folds, args.trees, args.lrs, log, baseline=tiered["baseline"])
    log("(c) training-set size")
    chosen = {k: itdep[k] for k in ("newton", "gradient", *SCHEDULES)}
    curves = run_sizes(data, args.folds, fractions, args.draws, args.trees, chosen, log)

    tiered_lines, tiered_tests = tiered_section(tiered, data, args.folds)
    it_lines, it_tests = iteration_section(itdep, data, args.folds, args.trees)
    train_queries = int(np.mean([len(np.unique(data[f][0][2])) for f in args.folds]))
    n_queries = int(np.sum(~np.isnan(pooled(itdep["newton"], data, args.folds)[0])))
    sections = [
        verdicts(tiered_tests, it_tests, curves, fractions, n_queries),
        tiered_lines, it_lines, sizes_section(curves, fractions, train_queries),
        ["Figures: `multi_objective_tiered.png` (Table 1 and the w sweep), "
         "`multi_objective_iteration.png` (schedules and Figure 7b).", ""],
    ]
    plot_tiered(tiered, data, args.folds, os.path.join(args.out, "multi_objective_tiered.png"))
    plot_iteration(curves, fractions, args.trees, os.path.join(args.out, "multi_objective_iteration.png"))
    report = os.path.join(args.out, "multi_objective.md")
    write_report(report, args, stats, sections, time.perf_counter() - start, version)
    log(f"wrote {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
