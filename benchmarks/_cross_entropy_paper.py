"""``replicate_cross_entropy.py --paper-settings``: the two cross-entropy
papers' Table 1 rerun on MQ2008 with each paper's own hyper-parameters and
evaluation protocol, instead of the default run's one small-data setting.

* WWW 2020 (Bruch, seeds/004), section 5: LightGBM with learning_rate 0.02,
  num_leaves 400, min_data_in_leaf 50, min_sum_hessian_in_leaf 0, max_bin 255,
  sigma 1, ``lambdamart_norm`` false, no regularisation, NDCG@5 early stopping
  with 50 rounds up to 500 trees (the Web30K column; Yahoo! has 200 leaves and
  100 rows per leaf). Trials: random 60/20/20 splits of the queries, mean NDCG
  per trial, paired t-tests over trials at alpha = .01 (100 trials in the
  paper).
* ICTIR 2019 (Bruch, Wang, Bendersky, Najork, seeds/000), section 4: learning
  rate 0.1, num_leaves 255, min_data_in_leaf 50, min_sum_hessian_in_leaf 100
  (Web30K), NDCG@5 early stopping with 30 rounds up to 500 trees; mean NDCG
  with 95% confidence intervals over 5 trials, graded and binarised labels.

The 95% intervals are ``mean +- 1.96 * sd / sqrt(n)`` over the trials' mean
NDCGs (sd with ddof=1); ICTIR 2019 does not say how it computed its own.
"""

import os
import time

import numpy as np
from scipy.stats import ttest_rel

from _report import code_version, fmt_p
from sklearn_ltr import LambdaMARTRanker, ListNetRanker, XENDCGRanker
from sklearn_ltr.datasets import load_letor_folds
from sklearn_ltr.metrics import ndcg_score_per_query

CUTOFFS = (5, 10)
WWW2020 = dict(
    n_estimators=500, learning_rate=0.02, max_leaf_nodes=400, min_samples_leaf=50,
    min_hessian_to_split=0.0, max_bins=255, l2_regularization=0.0, early_stopping=True,
    n_iter_no_change=50, validation_ndcg_k=5,
)
ICTIR2019 = dict(
    n_estimators=500, learning_rate=0.1, max_leaf_nodes=255, min_samples_leaf=50,
    min_hessian_to_split=100.0, max_bins=255, early_stopping=True, n_iter_no_change=30,
    validation_ndcg_k=5,
)
# The paper's models first; the rows after them are ours.
WWW2020_MODELS = {
    "XE-NDCG": (XENDCGRanker, dict(hessian_terms=2)),
    "LambdaMART": (LambdaMARTRanker, dict(normalize_lambdas=False)),
    "ListNet": (ListNetRanker, dict(label_distribution="exponential", hessian_terms=2)),
    "ListNet, diagonal Newton step": (ListNetRanker, dict(label_distribution="exponential")),
    "LambdaMART, normalised lambdas": (LambdaMARTRanker, dict(normalize_lambdas=True)),
}
ICTIR2019_MODELS = {
    "ListNet": (ListNetRanker, dict(label_distribution="linear")),
    "LambdaMART": (LambdaMARTRanker, dict(normalize_lambdas=True)),
    "ListNet, softmax-of-labels target": (ListNetRanker, dict(label_distribution="exponential")),
    "ListNet, Neumann step": (ListNetRanker, dict(label_distribution="linear", hessian_terms=2)),
}
WWW2020_PAPER = {  # Table 1, NDCG@5 / @10: Web30K, Yahoo!
    "ListNet": ((47.68, 49.76), (71.76, 76.52)),
    "LambdaMART": ((48.08, 49.94), (73.00, 77.49)),
    "XE-NDCG": ((48.23, 50.27), (73.37, 77.84)),
}
ICTIR2019_GAIN = {  # LambdaMART's gain over ListNet (%), @5 / @10
    "graded": "Web30K 5.3 / 4.2, Yahoo! 1.7 / 1.2",
    "binary": "Web30K-b 3.1 / 2.3, Yahoo!-b 0.7 / 0.4",
}


def _fit_and_score(cls, params, seed, train, val, test):
    """Test NDCG@k per query (NaN: no relevant document), one row per cutoff; tree count;
    mean leaves per tree."""
    model = cls(**params, random_state=seed)
    model.fit(train[0], train[1], qid=train[2], X_val=val[0], y_val=val[1], qid_val=val[2])
    scores = model.predict(test[0])
    per_query = [ndcg_score_per_query(test[1], scores, qid=test[2], k=k, no_relevant="skip")[1]
                 for k in CUTOFFS]
    trees = model._booster.trees[: model.n_iter_]
    leaves = float(np.mean([t["is_leaf"].sum() for t in trees])) if trees else 1.0
    return np.array(per_query), model.n_iter_, leaves


def _random_split(X, y, qid, rng):
    """60/20/20 split of the queries (WWW 2020 section 5.1); rows keep their order."""
    queries = rng.permutation(np.unique(qid))
    a, b = int(round(0.6 * queries.size)), int(round(0.8 * queries.size))
    parts = []
    for chosen in (queries[:a], queries[a:b], queries[b:]):
        rows = np.isin(qid, chosen)
        parts.append((X[rows], y[rows], qid[rows]))
    return parts


def _run(models, settings, trials, log):
    """Fit every model on every trial ``(seed, train, val, test)``.

    Returns ``{model: (per-trial means (n_trials, n_cutoffs), pooled per-query
    NDCG (n_cutoffs, n_queries), mean trees, mean leaves per tree, tree
    counts)}``.
    """
    out = {m: ([], [], [], []) for m in models}
    for seed, train, val, test in trials:
        for name, (cls, extra) in models.items():
            start = time.perf_counter()
            per_query, trees, leaves = _fit_and_score(cls, {**settings, **extra}, seed, train, val, test)
            means, pooled, n_trees, n_leaves = out[name]
            means.append(np.nanmean(per_query, axis=1))
            pooled.append(per_query)
            n_trees.append(trees)
            n_leaves.append(leaves)
            print(f"  {log} trial {seed} {name:<32} trees {trees:>3} NDCG@5 {means[-1][0]:.4f} "
                  f"@10 {means[-1][1]:.4f} ({time.perf_counter() - start:.1f} s)", flush=True)
    return {m: (np.array(a), np.concatenate(b, axis=1), float(np.mean(c)), float(np.mean(d)), np.array(c))
            for m, (a, b, c, d) in out.items()}


def ci95(values):
    """Mean and half-width ``1.96 * sd / sqrt(n)`` of the 95% interval, per column."""
    values = np.asarray(values, dtype=float)
    n = values.shape[0]
    half = 1.96 * values.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full(values.shape[1:], np.nan)
    return values.mean(axis=0), half


def _table(result, paper_rows):
    lines = ["| model | NDCG@5 (95% CI) | NDCG@10 (95% CI) | mean trees | runs with < 10 trees "
             "| mean leaves per tree |", "|---|---|---|---|---|---|"]
    for name, (means, _, trees, leaves, counts) in result.items():
        mean, half = ci95(means)
        mark = "" if name in paper_rows else " (ours)"
        lines.append(f"| {name}{mark} | {100 * mean[0]:.2f} (±{100 * half[0]:.2f}) | "
                     f"{100 * mean[1]:.2f} (±{100 * half[1]:.2f}) | {trees:.1f} | {(counts < 10).sum()} of {counts.size} | "
                     f"{leaves:.1f} |")
    return lines


def _trial_tests(result, pairs):
    """Paired t-tests over trials: (pair, diff per cutoff, p per cutoff)."""
    out = []
    for a, b in pairs:
        d = result[a][0] - result[b][0]
        p = [ttest_rel(result[a][0][:, c], result[b][0][:, c]).pvalue for c in range(len(CUTOFFS))]
        out.append(((a, b), d.mean(axis=0), p))
    return out


def _query_tests(result, pairs):
    """Paired t-tests over the pooled test queries of all trials."""
    out = []
    for a, b in pairs:
        qa, qb = result[a][1], result[b][1]
        ok = ~np.isnan(qa[0])
        d = [float((qa[c, ok] - qb[c, ok]).mean()) for c in range(len(CUTOFFS))]
        p = [ttest_rel(qa[c, ok], qb[c, ok]).pvalue for c in range(len(CUTOFFS))]
        out.append(((a, b), d, p))
    return out


def _tests_table(tests):
    lines = ["| pair | diff @5 | p @5 | diff @10 | p @10 |", "|---|---|---|---|---|"]
    for (a, b), d, p in tests:
        lines.append(f"| {a} - {b} | {100 * d[0]:+.2f} | {fmt_p(p[0])} | {100 * d[1]:+.2f} | {fmt_p(p[1])} |")
    return lines


def _order_verdict(result, tests):
    order = sorted(("XE-NDCG", "LambdaMART", "ListNet"), key=lambda m: -result[m][0][:, 0].mean())
    sig = {pair: p for pair, _, p in tests}
    claims = []
    for a, b in (("XE-NDCG", "LambdaMART"), ("LambdaMART", "ListNet"), ("XE-NDCG", "ListNet")):
        diff = result[a][0].mean(axis=0) - result[b][0].mean(axis=0)
        p = sig[a, b]
        if all(d > 0 for d in diff) and max(p) < 0.01:
            verdict = "agrees (significant at .01 at both cutoffs)"
        elif diff[0] > 0 and diff[1] > 0:
            verdict = f"same direction, not significant at .01 (p = {fmt_p(p[0])} @5, {fmt_p(p[1])} @10)"
        elif diff[0] > 0 or diff[1] > 0:
            verdict = (f"mixed: {a} - {b} = {100 * diff[0]:+.2f} @5, {100 * diff[1]:+.2f} @10 "
                       f"(p = {fmt_p(p[0])}, {fmt_p(p[1])})")
        else:
            verdict = (f"does not agree: {a} - {b} = {100 * diff[0]:+.2f} @5, {100 * diff[1]:+.2f} @10 "
                       f"(p = {fmt_p(p[0])}, {fmt_p(p[1])})")
        claims.append(f"{a} > {b}: {verdict}")
    text = (f"Our NDCG@5 order of the paper's three models is {' > '.join(order)}"
            + (", the paper's order. " if order == ["XE-NDCG", "LambdaMART", "ListNet"] else
               ", not the paper's XE-NDCG > LambdaMART > ListNet. "))
    return text + "; ".join(claims) + "."


def run_paper_settings(args, out_dir):
    """Run both papers' settings and write ``cross_entropy_paper_settings.md``."""
    start = time.perf_counter()
    folds = {f: load_letor_folds(args.data, f, as_dense=True) for f in sorted({1, *args.folds})}
    # All of MQ2008: fold 1's train (S1-S3), vali (S4) and test (S5).
    X, y, qid = (np.concatenate([part[i] for part in folds[1]]) for i in range(3))
    print(f"WWW 2020 settings: {args.trials} random 60/20/20 splits", flush=True)
    trials = [(t, *_random_split(X, y, qid, np.random.default_rng([t, 2020]))) for t in range(args.trials)]
    for t, *parts in trials:
        # Printed so that a reader sees whole queries in disjoint parts: they add up to the totals.
        queries = " / ".join(str(np.unique(q).size) for _, _, q in parts)
        rows = " / ".join(str(q.size) for _, _, q in parts)
        print(f"  trial {t}: train / validation / test {queries} of {np.unique(qid).size} queries, "
              f"{rows} of {qid.size} rows", flush=True)
    www = _run(WWW2020_MODELS, WWW2020, trials, "WWW2020")
    www_pairs = [("XE-NDCG", "LambdaMART"), ("XE-NDCG", "ListNet"), ("LambdaMART", "ListNet"),
                 ("ListNet", "ListNet, diagonal Newton step"),
                 ("LambdaMART", "LambdaMART, normalised lambdas")]
    www_tests = _trial_tests(www, www_pairs)

    print(f"ICTIR 2019 settings: folds {args.folds} as trials", flush=True)
    ictir = {}
    for labels in ("graded", "binary"):
        fold_trials = []
        for f in args.folds:
            parts = folds[f]
            if labels == "binary":
                parts = tuple((Xp, (yp > 0).astype(np.float64), qp) for Xp, yp, qp in parts)
            fold_trials.append((f, *parts))
        ictir[labels] = _run(ICTIR2019_MODELS, ICTIR2019, fold_trials, f"ICTIR2019 {labels}")
    ictir_pairs = [("LambdaMART", "ListNet"), ("ListNet, softmax-of-labels target", "ListNet"),
                   ("ListNet, Neumann step", "ListNet")]
    ictir_tests = {lab: _query_tests(ictir[lab], ictir_pairs) for lab in ictir}
    elapsed = time.perf_counter() - start
    path = os.path.join(out_dir, "cross_entropy_paper_settings.md")
    _write(path, args, np.unique(qid).size, www, www_tests, ictir, ictir_tests, elapsed)
    print(f"wrote {path} ({elapsed / 60:.1f} min)")


def _settings_line(settings):
    return ", ".join(f"{k}={v}" for k, v in settings.items())


def _write(path, args, n_queries, www, www_tests, ictir, ictir_tests, elapsed):
    n_q = int((~np.isnan(www["XE-NDCG"][1][0])).sum()) // args.trials
    lines = [
        "# Cross-entropy ranking losses on MQ2008 at the papers' own settings",
        "",
        "Generated by `python benchmarks/replicate_cross_entropy.py --paper-settings"
        + (" --quick" if args.quick else "") + f" --trials {args.trials}` at {code_version()} in "
        f"{elapsed / 60:.1f} minutes on a shared 2-core machine. The default run "
        "(one small-data setting for all models) is in [cross_entropy.md](cross_entropy.md).",
        "",
        "Test NDCG@k uses the gain 2^y - 1 and skips queries without a relevant document, as both papers do. "
        "95% confidence intervals are mean ± 1.96 sd / sqrt(n) over the trials' mean NDCG (sd with ddof=1). "
        "Rows marked (ours) are not in the paper.",
        "",
        "## 1. WWW 2020 Table 1 (Bruch, seeds/004) at its section 5 settings",
        "",
        f"* Settings (the paper's Web30K column): {_settings_line(WWW2020)}; all models alike. "
        "LambdaMART without lambda normalisation (`normalize_lambdas=False`, LightGBM's `lambdarank_norm=false`) "
        "and sigma 1; XE-NDCG with the paper's Neumann step (`hessian_terms=2`) and fresh gamma ~ U[0, 1] "
        "every iteration; ListNet with the paper's eq. 3 target exp(y_i) / sum_j exp(y_j) "
        "(`label_distribution=\"exponential\"`) and, as section 4.4 says the paper did for ListNet too, "
        "the same Neumann step (`hessian_terms=2`).",
        f"* Protocol: {args.trials} trials (the paper: 100); each draws a random 60/20/20 train/validation/test "
        f"split of MQ2008's {n_queries} queries (seed = trial); mean test NDCG per trial. Paired t-tests over the "
        "trials' means, significance level .01, as the paper.",
        "",
    ]
    lines += _table(www, WWW2020_PAPER)
    lines += ["", f"Paired t-tests over the {args.trials} trials (differences in NDCG points):", ""]
    lines += _tests_table(www_tests)
    lines += ["", "Paper (NDCG@5 / @10, mean of 100 trials; every difference significant at .01): "
              + "; ".join(f"{m} Web30K {w[0]:.2f} / {w[1]:.2f}, Yahoo! {yv[0]:.2f} / {yv[1]:.2f}"
                          for m, (w, yv) in WWW2020_PAPER.items()) + ".", "",
              "## 2. ICTIR 2019 Table 1 (Bruch, Wang, Bendersky, Najork, seeds/000) at its section 4 settings", "",
              f"* Settings (the paper's Web30K column): {_settings_line(ICTIR2019)}. The paper does not say "
              "whether its LambdaMART normalised the lambdas; we keep LightGBM's default (normalised, "
              "`normalize_lambdas=True`). ListNet with the paper's eq. 6 target y_i / sum_j y_j "
              "(`label_distribution=\"linear\"`) and the diagonal Newton step.",
              f"* Protocol: the paper's 5 trials are MQ2008's LETOR folds {args.folds} here (train 3 parts, "
              "vali 1, test 1). Binary: train, vali and test labels y > 0 -> 1. The intervals are over these "
              f"{len(args.folds)} trials as in the paper; the significance tests pool the folds' disjoint test "
              "queries (per-query paired t-tests), which have more power than 5 trial means.",
              ""]
    for labels in ("graded", "binary"):
        res = ictir[labels]
        lm, ln = res["LambdaMART"][0].mean(axis=0), res["ListNet"][0].mean(axis=0)
        gain = 100 * (lm / ln - 1)
        lines += [f"### {labels.capitalize()} labels", ""] + _table(res, ("ListNet", "LambdaMART"))
        lines += ["", f"LambdaMART's gain over ListNet: {gain[0]:+.1f}% @5, {gain[1]:+.1f}% @10 "
                  f"(paper: {ICTIR2019_GAIN[labels]}). Paired t-tests over "
                  f"{int((~np.isnan(res['ListNet'][1][0])).sum())} pooled test queries:", ""]
        lines += _tests_table(ictir_tests[labels]) + [""]
    lines += ["## What we find", ""]
    lines += ["**WWW 2020 Table 1 (XE-NDCG > LambdaMART > ListNet, all significant at .01).** "
              + _order_verdict(www, www_tests), ""]
    tests = {pair: (d, p) for pair, d, p in www_tests}
    d, p = tests["ListNet", "ListNet, diagonal Newton step"]
    lines += [f"**Neumann step against the diagonal Newton step for ListNet (our extra row).** With the "
              "paper's section 4.4 step ListNet scores "
              f"{100 * d[0]:+.2f} NDCG@5 / {100 * d[1]:+.2f} @10 points against the diagonal Newton step "
              f"(p = {fmt_p(p[0])}, {fmt_p(p[1])} over trials).", ""]
    d, p = tests["LambdaMART", "LambdaMART, normalised lambdas"]
    lines += [f"**Lambda normalisation (our extra row).** The paper's unnormalised LambdaMART minus the normalised one "
              f"(the default run's): {100 * d[0]:+.2f} NDCG@5 / {100 * d[1]:+.2f} @10 points "
              f"(p = {fmt_p(p[0])}, {fmt_p(p[1])}).", ""]
    # Absolute gaps as the pooled per-query differences of the t-tests; relative ones from the trial means.
    g = {lab: np.array({pair: d for pair, d, _ in ictir_tests[lab]}["LambdaMART", "ListNet"]) for lab in ictir}
    rel = {lab: 100 * (ictir[lab]["LambdaMART"][0].mean(axis=0) / ictir[lab]["ListNet"][0].mean(axis=0) - 1)
           for lab in ictir}
    pg = {lab: {pair: p for pair, _, p in ictir_tests[lab]}["LambdaMART", "ListNet"] for lab in ictir}
    # Difference in differences per query: graded and binary share folds and test queries.
    diffs = {lab: ictir[lab]["LambdaMART"][1] - ictir[lab]["ListNet"][1] for lab in ictir}
    ok = ~np.isnan(diffs["graded"][0])
    p_gap = ttest_rel(diffs["graded"][0, ok], diffs["binary"][0, ok]).pvalue
    narrows = rel["graded"][0] > rel["binary"][0]
    lines += [
        "**ICTIR 2019 Table 1 (LambdaMART significantly above ListNet; the gap narrows on binary labels).** "
        "LambdaMART - ListNet (pooled per-query difference; relative gain of the trial means): "
        f"graded {100 * g['graded'][0]:+.2f} @5 ({rel['graded'][0]:+.1f}%, "
        f"p = {fmt_p(pg['graded'][0])}), {100 * g['graded'][1]:+.2f} @10 ({rel['graded'][1]:+.1f}%, "
        f"p = {fmt_p(pg['graded'][1])}); binary {100 * g['binary'][0]:+.2f} @5 ({rel['binary'][0]:+.1f}%, "
        f"p = {fmt_p(pg['binary'][0])}), {100 * g['binary'][1]:+.2f} @10 ({rel['binary'][1]:+.1f}%, "
        f"p = {fmt_p(pg['binary'][1])}). "
        + ("LambdaMART is significantly better (p < .05) on both label sets at @5, as in the paper. "
           if max(pg["graded"][0], pg["binary"][0]) < 0.05 and g["graded"][0] > 0 and g["binary"][0] > 0 else
           "LambdaMART is not significantly better (p < .05) on both label sets at @5, unlike the paper. ")
        + ("The relative gap at @5 is narrower on binary labels, as in the paper"
           if narrows else "The relative gap at @5 does not narrow on binary labels, unlike the paper")
        + f" (per-query difference in differences of the absolute gap, p = {fmt_p(p_gap)}"
        + ("; not significant)." if p_gap >= 0.05 else ")."),
        "",
        "## Where our settings differ from the papers'",
        "",
        "* Data: MQ2008 (784 queries, about 19 documents per query, labels 0-2, 46 features) instead of "
        "Web30K / Yahoo! (about 30,000 queries, 120 / 24 documents per query, labels 0-4). A 60/20/20 split "
        f"leaves about 157 test queries per trial ({n_q} on average with a relevant document) "
        "against about 6,000 in the papers, so the per-trial means are far noisier.",
        "* Leaves: with about 470 training queries (about 9,000 rows) and min_samples_leaf=50 a tree can "
        "have at most about 180-190 leaves, so max_leaf_nodes=400 (WWW 2020) and 255 (ICTIR 2019) cannot "
        "bind; the trees are as large as the data and the split gains allow (WWW 2020 settings, mean leaves "
        "per tree: " + ", ".join(f"{m} {www[m][3]:.0f}" for m in www) + ").",
        "* min_sum_hessian_in_leaf=100 (ICTIR 2019, Web30K): a query's softmax hessians rho(1 - rho) sum to "
        "less than 1, so on about 470 training queries this floor leaves ListNet a handful of leaves per "
        "tree, where on Web30K's ~19,000 training queries it allowed the full 255. Mean leaves per tree at "
        "these settings (graded): " + ", ".join(f"{m} {ictir['graded'][m][3]:.1f}" for m in ictir["graded"])
        + ". We keep the paper's value, which constrains the trees far more here than there.",
        f"* Trials: {args.trials} random splits instead of 100 (WWW 2020), and the 5 LETOR folds instead of 5 "
        "trials on Web30K Fold 1 (ICTIR 2019, which does not say what varied between its trials).",
        "* The papers ran LightGBM; we run our own leaf-wise histogram trees ("
        "`min_hessian_to_split` = `min_sum_hessian_in_leaf`, `min_samples_leaf` = `min_data_in_leaf`). "
        "The papers' ListNet and XE-NDCG were their own LightGBM patches, not released.",
        "* Model selection: the papers' early stopping picks the best of up to 500 trees on about 6,000 "
        "validation queries; here on about 157 (a 20% split) it is noisy, and at learning rate 0.02 some runs "
        "keep only a few trees (runs with fewer than 10 trees, WWW 2020 settings: "
        + ", ".join(f"{m} {(www[m][4] < 10).sum()} of {www[m][4].size}" for m in www) + ").",
        "* Early stopping counts validation queries without a relevant document as NDCG 1 (a constant "
        "shift that does not move the selected iteration); the test metric skips them as the papers do.",
    ]
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
