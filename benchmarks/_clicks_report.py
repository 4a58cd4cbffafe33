"""Report and figure of ``bench_clicks.py``.

``results[world]`` is that script's ``average_seeds`` output: ``production``
(per-query test NDCG@10 of the production ranker), ``stats`` (training log),
``implied`` ((t+, t-) the click model implies at ranks 1-10) and
``models[name]``: a dict (``all``, ``stop``: per-query test NDCG@10; ``trees``
kept; ``biases``: (t+, t-) or None) or an error string.
"""

import matplotlib

matplotlib.use("Agg")  # no display on the benchmark machine
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from _report import fmt_p, paired  # noqa: E402

SHOWN = 10
BIAS_NORM = 1.0  # as bench_clicks.BIAS_NORM
MAE_GOAL = 0.05
# OURS: the default method at the learning rate the clicks guide recommends
# (half the shared one, XGBoost's Newton steps); its debiasing is judged
# against raw clicks at that same rate.
OURS = "LambdaMART unbiased_lambdamart, half learning rate"
OURS_SHARED_LR = "LambdaMART unbiased_lambdamart"
RAW = "LambdaMART clicks, half learning rate"
RAW_SHARED_LR = "LambdaMART clicks"
IPW = "LambdaMART ipw (true propensities), half learning rate"
ADDITIVE = "LambdaMART additive"
XGB_RAW = "XGBoost rank:ndcg clicks"
XGB = "XGBoost lambdarank_unbiased"
LGB_RAW = "LightGBM lambdarank clicks"
LGB = "LightGBM lambdarank position"
CEILING = "LambdaMART true labels (ceiling)"
# (a, b, what a - b measures)
COMPARISONS = ((OURS, RAW, "our debiasing on our engine (both at half the learning rate)"),
               (OURS, RAW_SHARED_LR, "ours against raw clicks at the shared learning rate"),
               (OURS, XGB, "ours against XGBoost's debiasing"),
               (OURS, LGB, "ours against LightGBM's position method"),
               (OURS_SHARED_LR, RAW_SHARED_LR, "our debiasing at the shared learning rate"),
               (IPW, RAW, "IPW with the true propensities (what debiasing can gain here)"),
               (ADDITIVE, RAW_SHARED_LR, "LightGBM's method on our engine"),
               (ADDITIVE, LGB, "LightGBM's method: our engine - LightGBM's"),
               (XGB, XGB_RAW, "XGBoost's debiasing on its engine"),
               (LGB, LGB_RAW, "LightGBM's position method on its engine"),
               (RAW_SHARED_LR, XGB_RAW, "engines on raw clicks: ours - XGBoost"),
               (RAW, XGB_RAW, "engines on raw clicks, ours at half XGBoost's learning "
                "rate (the same Newton steps) - XGBoost"),
               (RAW_SHARED_LR, LGB_RAW, "engines on raw clicks: ours - LightGBM"))
REGIMES = {"stop": "early-stopped on the validation clicks", "all": "all trees"}


def _ok(result, name):
    return isinstance(result["models"].get(name), dict)


def _test(result, a, b, regime):
    """(mean difference a - b, paired t-test p) over the test queries."""
    (d, p), = paired(result["models"][a][regime][None], result["models"][b][regime][None])
    return d, p


def _cell(d, p):
    mark = "**" if p < 0.05 else ""
    return f"{mark}{d:+.4f}{mark} (p={fmt_p(p)})"


def _is_pbm(world):
    return world.startswith("pbm")


def _eta(world):
    return float(world.split("-")[0][3:])


def curves(result):
    """True (implied) t+ and t-, and our and XGBoost's t+^(1+p), t-^(1+p), at ranks 1-10."""
    out = {"true+": result["implied"][0], "true-": result["implied"][1]}
    for key, name in (("ours", OURS), ("xgb", XGB)):
        if _ok(result, name) and result["models"][name]["biases"] is not None:
            plus, minus = result["models"][name]["biases"]
            out[key + "+"] = np.asarray(plus, dtype=float) ** (1 + BIAS_NORM)
            out[key + "-"] = np.asarray(minus, dtype=float) ** (1 + BIAS_NORM)
    return out


def mae(curve, true):
    """Mean absolute error over positions 2-10."""
    n = min(len(curve), len(true), SHOWN)
    return float(np.mean(np.abs(np.asarray(curve[1:n]) - np.asarray(true[1:n]))))


def verdicts(results, regime):
    """Goal lines of one regime: per PBM world, and averaged over worlds."""
    lines = [f"### Test NDCG@10, {REGIMES[regime]}", ""]
    met_all = True
    for world, r in results.items():
        if not _is_pbm(world):
            continue
        if not all(_ok(r, n) for n in (OURS, RAW, XGB, LGB)):
            lines.append(f"- {world}: no verdict (a fit failed): NOT MET")
            met_all = False
            continue
        d_raw, p_raw = _test(r, OURS, RAW, regime)
        above = d_raw > 0 and p_raw < 0.05
        parts = [f"{OURS} - {RAW} {_cell(d_raw, p_raw)}: "
                 + ("significantly above" if above else "NOT significantly above")]
        ok = above
        for other in (XGB, LGB):
            d, p = _test(r, OURS, other, regime)
            below = d < 0 and p < 0.05
            ok &= not below
            parts.append(f"- {other} {_cell(d, p)}: " + ("SIGNIFICANTLY BELOW" if below
                                                          else "not significantly below"))
        met_all &= ok
        if _ok(r, RAW_SHARED_LR):
            d, p = _test(r, OURS, RAW_SHARED_LR, regime)
            parts.append(f"information: against raw clicks at the shared learning rate "
                         f"{_cell(d, p)}")
        if _ok(r, IPW) and _ok(r, RAW):
            d, p = _test(r, IPW, RAW, regime)
            parts.append(f"information: what the true propensities gain, {IPW} - {RAW} "
                         f"{_cell(d, p)}")
        lines.append(f"- {world}: " + "; ".join(parts) + f": **{'MET' if ok else 'NOT MET'}**")
    for label, chosen in (("all worlds", list(results)),
                          ("PBM worlds", [w for w in results if _is_pbm(w)])):
        usable = [w for w in chosen if all(_ok(results[w], n) for n in (OURS, XGB, LGB))]
        if not chosen:
            continue
        if len(usable) < len(chosen):
            lines.append(f"- Averaged over {label}: a fit failed in {len(chosen) - len(usable)} "
                         "world(s): NOT MET")
            met_all = False
            continue
        means = {n: float(np.mean([np.nanmean(results[w]["models"][n][regime]) for w in usable]))
                 for n in (OURS, XGB, LGB)}
        ok = means[OURS] > means[XGB] and means[OURS] > means[LGB]
        if label == "all worlds":
            met_all &= ok
        lines.append(f"- Averaged over {label} ({len(usable)}): {OURS} {means[OURS]:.4f}, {XGB} "
                     f"{means[XGB]:.4f}, {LGB} {means[LGB]:.4f}: ours "
                     + ("above both" if ok else "NOT above both")
                     + (f": **{'MET' if ok else 'NOT MET'}**" if label == "all worlds"
                        else " (information; the goal counts all worlds)"))
    lines += ["", f"**NDCG goals, {REGIMES[regime]}: {'MET' if met_all else 'NOT MET'}.**", ""]
    return lines, met_all


def curve_verdicts(results):
    lines = ["### Learned propensities, clicked side", "",
             f"Mean absolute error over positions 2-10 of position_bias_^(1+p) (p = {BIAS_NORM:g}) against "
             f"the true (1/r)^eta, goal below {MAE_GOAL}; XGBoost's ti+^(1+p) for reference.", ""]
    met_all = True
    for world, r in results.items():
        if not _is_pbm(world):
            continue
        c = curves(r)
        if "ours+" not in c:
            lines.append(f"- {world}: no estimate (the fit failed): NOT MET")
            met_all = False
            continue
        error = mae(c["ours+"], c["true+"])
        ok = error < MAE_GOAL
        met_all &= ok
        xgb = f"{mae(c['xgb+'], c['true+']):.4f}" if "xgb+" in c else "n/a"
        lines.append(f"- {world}: ours {error:.4f} (XGBoost {xgb}): **{'MET' if ok else 'NOT MET'}**")
    lines += ["", f"**Propensity goal: {'MET' if met_all else 'NOT MET'}.**", ""]
    return lines, met_all


def world_section(world, r):
    prod = np.nanmean(r["production"])
    n_q = int(np.sum(~np.isnan(r["models"][CEILING]["all"]))) if _ok(r, CEILING) else "?"
    st = r["stats"]
    lines = [f"### {world}", "",
             f"Production ranker test NDCG@10 {prod:.4f}; {st['kept']} of {st['sessions']} training "
             f"sessions have a click ({st['clicks']} clicks); {n_q} test queries with a relevant "
             f"document; {r['n_seeds']} seed(s).", "",
             "| model | NDCG@10 early-stopped | trees kept | NDCG@10 all trees |", "|---|---|---|---|"]
    for name, m in r["models"].items():
        if isinstance(m, str):
            lines.append(f"| {name} | failed: {m} | | |")
        else:
            lines.append(f"| {name} | {np.nanmean(m['stop']):.4f} | {m['trees']:.0f} | "
                         f"{np.nanmean(m['all']):.4f} |")
    lines += ["", "| difference | measures | early-stopped | all trees |", "|---|---|---|---|"]
    for a, b, what in COMPARISONS:
        if _ok(r, a) and _ok(r, b):
            lines.append(f"| {a} - {b} | {what} | {_cell(*_test(r, a, b, 'stop'))} | "
                         f"{_cell(*_test(r, a, b, 'all'))} |")
    return lines + [""]


def propensity_table(results):
    lines = ["## Propensity curves", "",
             "At ranks 1-10: the curve the click model implies on the shown lists (PBM: (1/r)^eta; "
             "cascade and DBN: clicks per relevant document, sum(E_r a) / sum(a), with E_r the "
             "session's examination probability at rank r and a the attractiveness; unclicked side: "
             "mean(1 - E_r a) / mean(1 - a), Hu et al.'s ratio of unclicked to irrelevant documents), "
             "both relative to rank 1; our position_bias_ and position_bias_unclicked_ and XGBoost's "
             f"ti+ and tj-, each raised to 1 + p = {1 + BIAS_NORM:g} (fits with all trees, mean over "
             "seeds). MAE over ranks 2-10.", "",
             "| world | side | curve | r = 1..10 | MAE |", "|---|---|---|---|---|"]
    for world, r in results.items():
        c = curves(r)
        for side, label in (("+", "clicked"), ("-", "unclicked")):
            true = c["true" + side]
            lines.append(f"| {world} | {label} | implied | " + " ".join(f"{v:.3f}" for v in true) + " | |")
            for key, name in (("ours", "ours"), ("xgb", "XGBoost")):
                if key + side in c:
                    v = c[key + side]
                    lines.append(f"| {world} | {label} | {name} | " + " ".join(f"{x:.3f}" for x in v[:SHOWN])
                                 + f" | {mae(v, true):.4f} |")
    return lines + [""]


def summary_table(results, regime):
    names = list(next(iter(results.values()))["models"])
    lines = [f"## Test NDCG@10 per world, {REGIMES[regime]}", "",
             "| model | " + " | ".join(results) + " | mean |", "|---|" + "---|" * (len(results) + 1)]
    for name in names:
        cells, values = [], []
        for r in results.values():
            if _ok(r, name):
                v = float(np.nanmean(r["models"][name][regime]))
                values.append(v)
                cells.append(f"{v:.4f}")
            else:
                cells.append("failed")
        mean = f"{np.mean(values):.4f}" if len(values) == len(results) else "n/a"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {mean} |")
    prod = [f"{np.nanmean(r['production']):.4f}" for r in results.values()]
    lines.append("| production ranker | " + " | ".join(prod) + " | |")
    return lines + [""]


def ctr_table(results):
    lines = ["## Training click logs", "", "Click-through rate at ranks 1-10 (all sessions, seed 0).", "",
             "| world | sessions | with a click | clicks | CTR at r = 1..10 |", "|---|---|---|---|---|"]
    for world, r in results.items():
        st = r["stats"]
        lines.append(f"| {world} | {st['sessions']} | {st['kept']} | {st['clicks']} | "
                     + " ".join(f"{v:.3f}" for v in st["ctr"]) + " |")
    return lines + [""]


def settings(meta):
    c = meta["config"]
    q = "; ".join(f"{k}: {v['trees']} trees on {v['queries']} labelled queries, score noise "
                  f"{v['noise']:g}" for k, v in meta["qualities"].items())
    return [
        "## Settings", "",
        f"- Data: one `make_ranking({c['production'] + c['train'] + c['validation'] + c['test']}, "
        + ", ".join(f"{k}={v}" for k, v in c["data"].items()) + ", dtype=float32, random_state=0)` split "
        f"by query: {c['production']} labelled queries for the production rankers, {c['train']} "
        f"training and {c['validation']} validation queries (clicks only), {c['test']} test queries "
        f"(true labels 0-4; {meta['n_test']} here).",
        f"- Production rankers (LambdaMARTRanker, first queries of the labelled slice): {q}. Scores "
        "standardised on the training queries; each session adds N(0, noise^2) to them "
        "(`simulate_clicks(score_noise=...)`) and shows the top 10.",
        "- Clicks: `simulate_clicks(k=10, max_label=4)` with its default attractiveness 0.1 + 0.9 "
        "(2^y - 1) / 15; PBM at eta 0.5, 1, 2; cascade; DBN with its default satisfaction (2^y - 1) / 15 "
        "and continuation 0.9. Training and validation logs are drawn separately; sessions without a "
        "click are dropped for every model; a session is a query.",
        f"- Every model: {c['trees']} trees, learning rate 0.1 (0.05 for the half learning rate rows), 31 leaves, 20 rows per leaf at least, "
        "255 bins, one thread. Ours: LambdaMARTRanker, early_stopping=False; "
        "unbiased_lambdamart with position_bias_norm=1; additive with position_bias_regularization=0 "
        "(LightGBM's default, as LightGBM's run); ipw gets the implied clicked-side curve as propensity (exactly (1/r)^eta under the PBM; an "
        "approximation for cascade and DBN, where examination depends on the documents above). "
        "XGBoost: rank:ndcg, lambdarank_pair_method=topk, lambdarank_num_pair_per_sample=10, "
        "lambdarank_bias_norm=1, tree_method=hist, grow_policy=lossguide, max_leaves=31, "
        "max_depth=0, max_bin=256; rows sorted by session, then displayed rank (XGBoost reads the "
        "position from a row's place in its query). XGBoost's LambdaMART hessian is twice ours, so "
        "at the same learning rate its steps are about half as long. LightGBM: `lightgbm.train` "
        "(LGBMRanker.fit of 4.7 takes no position) with objective=lambdarank, num_leaves=31, "
        "min_child_samples=20, max_bin=255, deterministic; the position rows pass the displayed rank "
        "as `Dataset(position=...)`. Ceiling: LambdaMARTRanker on the true labels of the documents "
        "of the training log.",
        f"- Regimes: the test NDCG@10 after all trees, and after the tree count early stopping on the "
        f"NDCG@10 of the validation clicks keeps (patience {c['patience']}; first iteration followed by "
        "that many without a strictly higher value, best kept; the ceiling uses the validation labels).",
        f"- NDCG@10: sklearn_ltr.metrics, exponential gain, test queries without a relevant document "
        f"skipped; per-query values averaged over {meta['seeds']} seed(s) (click draws and fits); "
        "paired t-tests (scipy.stats.ttest_rel) over test queries; bold: p < 0.05.", ""]


def write_report(path, results, meta):
    lines = ["# Learning to rank from clicks", ""]
    if meta["quick"]:
        lines += ["QUICK SMOKE RUN: tiny worlds and few trees, for checking the script, not for results.", ""]
    lines += [f"Command: `{' '.join(meta['argv'])}`  ",
              f"Code: {meta['version']}; {meta['versions']}  ",
              "Load average (1, 5, 15 min) at start: " + ", ".join(f"{v:.2f}" for v in meta["load_start"])
              + "; at end: " + ", ".join(f"{v:.2f}" for v in meta["load_end"]) + "  ",
              f"Total: {meta['minutes']:.1f} minutes", "",
              "## Verdicts", "",
              f"Goals: in every PBM world, {OURS} (our default method at the learning rate the "
              f"clicks guide recommends) significantly above {RAW} (what debiasing adds at the same "
              "steps) and "
              f"not significantly below {XGB} or {LGB} (test NDCG@10, paired t-test, p < 0.05); "
              "averaged over all worlds above both; clicked-side propensity MAE over positions 2-10 "
              f"below {MAE_GOAL} in every PBM world.", ""]
    met = True
    for regime in REGIMES:
        part, ok = verdicts(results, regime)
        lines += part
        met &= ok
    part, ok = curve_verdicts(results)
    lines += part
    lines += [f"**All goals {'MET' if met and ok else 'NOT MET'}.**", ""]
    lines += settings(meta)
    for regime in REGIMES:
        lines += summary_table(results, regime)
    lines += ["## Worlds", ""]
    for world, r in results.items():
        lines += world_section(world, r)
    lines += propensity_table(results)
    lines += [f"![propensity curves]({meta['png']})", "",
              "Left: clicked side, right: unclicked side; black the curve the click model implies.", ""]
    lines += ctr_table(results)
    failures = [f"- {w} {n}: {m}" for w, r in results.items() for n, m in r["models"].items()
                if isinstance(m, str)]
    if failures:
        lines += ["## Failures", ""] + failures + [""]
    text = "\n".join(lines) + "\n"
    with open(path, "w") as fh:
        fh.write(text)
    return text


def plot_propensities(results, path):
    """Per world: the clicked side (left) and the unclicked side (right)."""
    n = len(results)
    fig, axes = plt.subplots(n, 2, figsize=(9, 2.8 * n), squeeze=False)
    ranks = np.arange(1, SHOWN + 1)
    for row, (world, r) in zip(axes, results.items()):
        c = curves(r)
        for ax, side, title in ((row[0], "+", "clicked t+^(1+p)"), (row[1], "-", "unclicked t-^(1+p)")):
            ax.plot(ranks, c["true" + side][:SHOWN], "k-o", ms=3, label="implied by the click model")
            for key, label, color in (("ours", "ours (unbiased_lambdamart)", "tab:blue"),
                                      ("xgb", "XGBoost lambdarank_unbiased", "tab:green")):
                if key + side in c:
                    ax.plot(ranks, c[key + side][:SHOWN], "--o", ms=3, color=color, label=label)
            ax.set(title=f"{world}: {title}", xlabel="displayed rank")
            ax.set_xticks(ranks)
        row[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
