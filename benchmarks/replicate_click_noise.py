"""Replicate Bruch, "An Alternative Cross Entropy Loss for Learning-to-Rank"
(WWW 2020, ``seeds/004``), appendix E and Figure 4: robustness to click noise.

Protocol of the paper: every training and validation query is shown to
simulated users in a random order (a random base ranker); a cascade user
(Craswell et al. 2008) scans it from the top and clicks a document of label
0-4 with probability .05, .3, .5, .7, .95, persistent until the first click.
The list up to and including the first click is an "impression", whose
labels are the clicks (1 for the clicked document, 0 above it); 10
impressions per query form the click data set. XE-NDCG MART, LambdaMART and
ListNet are trained on the clicks and evaluated by NDCG@5 on the original
test set (true labels). Noise: the click probability of label-0 documents
rises from .05 in steps of .05 (the x-axis of Figure 4). The paper's claim:
XE-NDCG beats LambdaMART at every noise level and degrades more slowly.

Here, on two public data sets:

* MQ2008, the five LETOR folds (labels 0-2, which take the paper's
  probabilities for grades 0, 2 and 4: .05, .5, .95), ``--trials`` click
  draws per fold;
* LightGBM's lambdarank example (labels 0-4, the paper's probabilities),
  ``--example-trials`` draws, each with its own 80/20 split of the training
  queries into train and validation (the test set is fixed).

Sessions without a click (every document of the list shown, none clicked)
have no relevant label, so they carry no pair information for LambdaMART and
ListNet, and would give XE-NDCG a random target; they are dropped from the
training and validation clicks of every model.

Clicks come from :func:`sklearn_ltr.datasets.simulate_clicks`
(``model="cascade"``, ``scores=None``, all documents shown). The models use
the fixed settings of ``replicate_cross_entropy.py`` (early stopping on the
validation clicks' NDCG@5). Per noise level, per-query test NDCG is averaged
over the trials of a fold and the test queries of all folds are pooled for
paired t-tests (scipy.stats.ttest_rel).

Run: ``python benchmarks/replicate_click_noise.py`` (about 15 minutes on a
shared 2-core machine; writes ``benchmarks/results/click_noise.md`` and
``click_noise.png``), or ``--quick`` for a smoke run of about a minute
written to a temporary directory.
"""

import os

# One numba thread: on the shared 2-core machine two threads per fit of these
# small data sets only spin (see replicate_multi_objective.py). Before numba loads.
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")  # no display on the benchmark machine
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from _report import code_version, fmt_p, minutes_logger  # noqa: E402
from replicate_cross_entropy import (  # noqa: E402
    COLORS,
    METHODS,
    SETTINGS,
    fit,
    per_query_ndcg,
    summarize,
)
from scipy.stats import ttest_rel  # noqa: E402

from sklearn_ltr.datasets import load_example, load_letor_folds, simulate_clicks  # noqa: E402

LEVELS = (0.05, 0.10, 0.15, 0.20, 0.25, 0.30)  # click probability of label-0 documents
P_CLICK = (0.05, 0.3, 0.5, 0.7, 0.95)  # seed 004 appendix E, labels 0-4
P_CLICK_MQ2008 = (0.05, 0.5, 0.95)  # MQ2008 grades 0-2 as the paper's grades 0, 2, 4
N_SESSIONS = 10  # impressions per query (appendix E)
VALIDATION_SHARE = 0.2  # of the example's training queries, per trial
DATASETS = ("MQ2008", "LightGBM example")


# -- click data ------------------------------------------------------------------


def _seed(*keys):
    """An integer seed from a tuple of keys (dataset, fold, trial, part)."""
    return int(np.random.SeedSequence(list(keys)).generate_state(1)[0])


def first_click_impressions(X, y, qid, p_click, seed):
    """Click training data: 10 cascade sessions per query, cut at the first click.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        True labels, used only to draw the clicks.
    qid : ndarray of shape (n_samples,)
    p_click : sequence of float
        Click probability of each label.
    seed : int

    Returns
    -------
    (X_clicks, clicks, session) : tuple of ndarrays
        One row per document of an impression that ends in a click; labels
        are the clicks (0/1); ``session`` is the query id to train on.
    stats : dict
        ``clicked`` (share of sessions with a click), ``length`` (mean
        impression length) and ``label0`` (share of the clicks on label-0
        documents).
    """
    log = simulate_clicks(y, qid, model="cascade", n_sessions=N_SESSIONS, k=None,
                          attractiveness=list(p_click), random_state=seed)
    n_sessions = int(log.session.max()) + 1
    clicked = log.click == 1
    none = np.iinfo(np.int64).max
    first = np.full(n_sessions, none)
    np.minimum.at(first, log.session[clicked], log.position[clicked])
    has_click = first < none
    keep = has_click[log.session] & (log.position <= first[log.session])
    rows = log.row[keep]
    stats = dict(
        clicked=float(has_click.mean()),
        length=float(keep.sum() / max(has_click.sum(), 1)),
        label0=float(np.mean(y[log.row[clicked]] == 0)) if clicked.any() else float("nan"),
    )
    return (X[rows], log.click[keep].astype(np.float64), log.session[keep]), stats


def mq2008_splits(path, folds, n_trials):
    """``{fold: [(train, vali, test)] * n_trials}``: the LETOR folds, same split each trial."""
    splits = {}
    for fold in folds:
        parts = load_letor_folds(path, fold, as_dense=True)
        splits[fold] = [parts] * n_trials
    return splits


def example_splits(n_trials):
    """``{0: [(train, vali, test), ...]}``: a new 80/20 split of the training queries per trial."""
    (X, y, qid), test = load_example()
    queries = np.unique(qid)
    n_val = int(round(VALIDATION_SHARE * queries.shape[0]))
    trials = []
    for trial in range(n_trials):
        val_queries = np.random.default_rng(_seed(1, trial, 9)).choice(queries, n_val, replace=False)
        is_val = np.isin(qid, val_queries)
        trials.append(((X[~is_val], y[~is_val], qid[~is_val]),
                       (X[is_val], y[is_val], qid[is_val]), test))
    return {0: trials}


def run_level(splits, dataset, p_click, log):
    """Fit the three models on the clicks of every (fold, trial) at one noise level.

    The clicks of a (fold, trial) use the same seeds at every level, so the
    levels differ only by the extra label-0 clicks (common random numbers).
    The XE-NDCG gamma draws use the trial as seed.

    Returns
    -------
    summary : dict
        :func:`replicate_cross_entropy.summarize` of the runs.
    stats : dict
        Mean click statistics of the training clicks.
    """
    d = DATASETS.index(dataset)
    result = {m: [] for m in METHODS}
    result["trees"] = {m: [] for m in METHODS}
    stats = []
    for fold, trials in splits.items():
        per_trial = {m: [] for m in METHODS}
        for trial, (train, vali, test) in enumerate(trials):
            start = time.perf_counter()
            clicks_train, s = first_click_impressions(*train, p_click, _seed(d, fold, trial, 0))
            clicks_vali, _ = first_click_impressions(*vali, p_click, _seed(d, fold, trial, 1))
            stats.append(s)
            for method in METHODS:
                model = fit(method, clicks_train, clicks_vali, trial)
                per_trial[method].append(per_query_ndcg(model, test))
                result["trees"][method].append(model.n_iter_)
            log(f"  {dataset} p0={p_click[0]:.2f} fold {fold} trial {trial}: "
                + ", ".join(f"{m} {np.nanmean(per_trial[m][-1][0]):.4f}" for m in METHODS)
                + f" ({time.perf_counter() - start:.1f} s)")
        for method in METHODS:
            result[method].append(np.array(per_trial[method]))
    return summarize(result), {k: float(np.mean([s[k] for s in stats])) for k in stats[0]}


# -- report ----------------------------------------------------------------------


def _xe_minus_lm(summary):
    """Per-query test NDCG@5, XE-NDCG minus LambdaMART (pooled over folds)."""
    return summary["query"]["XE-NDCG"][0] - summary["query"]["LambdaMART"][0]


def level_table(levels, summaries, stats):
    lines = [
        "| p(click \\| label 0) | sessions with a click | impression length | clicks on label 0 | "
        + " | ".join(METHODS) + " | XE-NDCG - LambdaMART | p | mean trees (XE / LM / ListNet) |",
        "|---" * (len(METHODS) + 7) + "|",
    ]
    for level, s, st in zip(levels, summaries, stats):
        d, p = _xe_minus_lm(s).mean(), s["p"]["XE-NDCG", "LambdaMART"][0]
        lines.append(
            f"| {level:.2f} | {100 * st['clicked']:.1f}% | {st['length']:.2f} | {100 * st['label0']:.1f}% | "
            + " | ".join(f"{s['mean'][m][0]:.4f}" for m in METHODS)
            + f" | {d:+.4f} | {fmt_p(p)} | "
            + " / ".join(f"{s['trees'][m]:.0f}" for m in METHODS) + " |"
        )
    return lines


def findings(name, levels, summaries):
    """Verdicts on the paper's two claims, for one data set."""
    diffs = [(_xe_minus_lm(s).mean(), s["p"]["XE-NDCG", "LambdaMART"][0]) for s in summaries]
    sig_up = sum(1 for d, p in diffs if d > 0 and p < 0.01)
    up = sum(1 for d, _ in diffs if d > 0)
    sig_down = sum(1 for d, p in diffs if d < 0 and p < 0.01)
    n = len(levels)
    if sig_up == n:
        verdict = "This agrees with the paper (all differences significant at alpha = .01)."
    elif sig_down > 0:
        verdict = "This disagrees with the paper: LambdaMART is significantly better at some levels."
    elif up == n:
        verdict = ("The sign agrees with the paper at every level, but not the significance "
                   f"(the paper: all at alpha = .01; here {sig_up} of {n}).")
    else:
        verdict = (f"This does not reproduce the paper: XE-NDCG is ahead at only {up} of {n} levels "
                   f"({sig_up} significant at .01), and no level shows LambdaMART significantly ahead.")
    lines = [
        f"**{name}, XE-NDCG better than LambdaMART at every noise level.** XE-NDCG minus LambdaMART "
        "(test NDCG@5) is " + ", ".join(f"{d:+.4f} (p = {fmt_p(p)})" for d, p in diffs)
        + f" at p0 = {', '.join(f'{v:.2f}' for v in levels)}: ahead at {up} of {n} levels, "
        f"significantly (p < .01) at {sig_up}. " + verdict
    ]
    drops = {m: summaries[0]["mean"][m][0] - summaries[-1]["mean"][m][0] for m in METHODS}
    first = _xe_minus_lm(summaries[0])
    rest = np.mean([_xe_minus_lm(s) for s in summaries[1:]], axis=0)
    growth, p_growth = rest.mean() - first.mean(), ttest_rel(rest, first).pvalue
    slope = np.polyfit(levels, [d for d, _ in diffs], 1)[0]
    if growth > 0 and p_growth < 0.05 and drops["LambdaMART"] > drops["XE-NDCG"]:
        verdict = "This agrees with the paper."
    elif growth > 0 and drops["LambdaMART"] > drops["XE-NDCG"]:
        verdict = "This points the paper's way but is not significant."
    elif growth < 0 and p_growth < 0.05:
        verdict = "This disagrees with the paper: XE-NDCG's lead shrinks significantly as noise rises."
    else:
        verdict = "This does not support the paper's claim here (no growing lead beyond noise)."
    lines.append(
        f"**{name}, XE-NDCG degrades more slowly than LambdaMART.** From p0 = {levels[0]:.2f} to "
        f"{levels[-1]:.2f}, test NDCG@5 changes by {-drops['XE-NDCG']:+.4f} for XE-NDCG, "
        f"{-drops['LambdaMART']:+.4f} for LambdaMART and {-drops['ListNet']:+.4f} for ListNet. XE-NDCG's lead "
        f"over LambdaMART averaged over the noisier levels is {growth:+.4f} above its value at p0 = "
        f"{levels[0]:.2f} (paired t-test over queries, p = {fmt_p(p_growth)}); a line through the "
        f"level means has slope {slope:+.3f} NDCG@5 per unit of p0. " + verdict
    )
    return lines


def plot(levels, results, path):
    """Figure 4's layout: mean NDCG@5 per model and, on a second axis, XE-NDCG minus LambdaMART."""
    fig, axes = plt.subplots(1, len(results), figsize=(5.5 * len(results), 4.2), squeeze=False)
    for ax, (name, (summaries, _)) in zip(axes[0], results.items()):
        for method in METHODS:
            ax.plot(levels, [s["mean"][method][0] for s in summaries], "o--", color=COLORS[method],
                    label=method)
        ax.set(xlabel="click probability of label-0 documents", ylabel="mean test NDCG@5", title=name)
        diff = ax.twinx()
        diff.plot(levels, [_xe_minus_lm(s).mean() for s in summaries], "-", color="tab:green", lw=2,
                  label="XE-NDCG - LambdaMART")
        diff.axhline(0, color="tab:green", lw=0.6, ls=":")
        diff.set_ylabel("XE-NDCG - LambdaMART", color="tab:green")
        if ax is axes[0][0]:
            handles = ax.get_legend_handles_labels()
            extra = diff.get_legend_handles_labels()
            ax.legend(handles[0] + extra[0], handles[1] + extra[1], fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(path, args, results, elapsed, version):
    s = SETTINGS
    lines = [
        "# Click noise: replicating Bruch (WWW 2020) appendix E, Figure 4",
        "",
        f"Generated by `python benchmarks/replicate_click_noise.py{' --quick' if args.quick else ''}` at "
        f"{version} in {elapsed / 60:.1f} minutes on a shared 2-core machine (one numba thread).",
        "",
        "## Protocol",
        "",
        f"* Clicks: `simulate_clicks(model=\"cascade\", scores=None, k=None, n_sessions={N_SESSIONS})` on "
        "every training and validation query: a random order (random base ranker), all documents shown, a "
        "cascade user persistent until the first click. Each session is cut after its first click (the "
        "paper's impression); the clicked document gets label 1, those above it 0, and the session is the "
        "query id. Sessions without a click have no relevant label and are dropped from training and "
        "validation for all three models (the table gives the share kept).",
        f"* Click probabilities: LightGBM example (labels 0-4) {list(P_CLICK)} as in the paper; MQ2008 "
        f"(labels 0-2) {list(P_CLICK_MQ2008)}, the paper's values for grades 0, 2 and 4. The label-0 "
        f"probability p0 takes the values {list(args.levels)} (the paper's start and step).",
        f"* Models: `XENDCGRanker`, `LambdaMARTRanker`, `ListNetRanker` with the settings of "
        f"`replicate_cross_entropy.py`: learning_rate={s['learning_rate']}, max_leaf_nodes="
        f"{s['max_leaf_nodes']}, min_samples_leaf={s['min_samples_leaf']}, max_bins={s['max_bins']}, up to "
        f"{s['n_estimators']} trees, early stopping on the validation clicks' NDCG@5 (n_iter_no_change="
        f"{s['n_iter_no_change']}), everything else at its default.",
        f"* Trials: MQ2008 folds {args.folds} x {args.trials} click draws each ({len(args.folds) * args.trials} "
        f"trials per level); LightGBM example {args.example_trials} draws, each with a new random "
        f"{100 * (1 - VALIDATION_SHARE):.0f}/{100 * VALIDATION_SHARE:.0f} split of its 201 training queries "
        "into train and validation (its 50 test queries are fixed). A trial uses the same seeds at every "
        "level, so the levels differ only by the extra label-0 clicks.",
        "* Test metric: NDCG@5 on the original test set with its true labels (gain 2^y - 1), skipping queries "
        "without a relevant document. Paired t-tests (scipy.stats.ttest_rel): each test query's NDCG@5 is "
        "averaged over the trials of its fold, and the test queries of all folds are pooled.",
        "",
        "## Where our settings differ from the paper's",
        "",
        "* Data: the paper used Web30K and Yahoo! (thousands of test queries per split, 20 random splits); we "
        "use MQ2008 (5 LETOR folds, about 110 test queries with a relevant document per fold, labels 0-2) "
        "and LightGBM's lambdarank example (50 test queries). Small test sets make differences of about "
        "0.01 NDCG@5 hard to resolve.",
        f"* Trials: the paper ran 20 per level on random splits; we run {len(args.folds) * args.trials} on "
        f"MQ2008 ({len(args.folds)} fixed LETOR folds x {args.trials} click draws) and "
        f"{args.example_trials} on the LightGBM example.",
        "* Models: one small-data setting for all models (above) instead of the paper's LightGBM setup "
        "(learning rate 0.02, 400 or 200 leaves, min_data_in_leaf 50 or 100, early-stopping patience 50).",
        "* Noise range: the text gives the start (.05) and step (.05) of the x-axis but not its end; we stop at "
        f"{args.levels[-1]:.2f}, the click probability of label 1 on the 0-4 scale.",
        "* Sessions without a click: the paper does not say what it does with them; we drop them (above).",
        "* MQ2008's three grades are mapped onto the paper's five-grade probabilities (0, 2, 4).",
        "",
    ]
    verdicts = []
    for name, (summaries, stats) in results.items():
        lines += [f"## {name}", "",
                  "Mean test NDCG@5 per model (true labels), the XE-NDCG - LambdaMART difference over the "
                  "pooled test queries with its paired t-test p-value, and statistics of the training clicks "
                  "(mean over trials):", ""]
        lines += level_table(args.levels, summaries, stats)
        n_q = summaries[0]["query"]["XE-NDCG"].shape[1]
        lines += ["", f"({n_q} pooled test queries with a relevant document.)", ""]
        verdicts += findings(name, args.levels, summaries)
    lines += ["![NDCG@5 against click noise](click_noise.png)", "",
              "Dashed: mean test NDCG@5 of each model; solid green (right axis): XE-NDCG minus LambdaMART, "
              "as in the paper's Figure 4.", "", "## What we find", ""]
    for paragraph in verdicts:
        lines += [paragraph, ""]
    lines.append(
        "Paper (Figure 4, Web30K and Yahoo!): XE-NDCG above LambdaMART at every level, every difference "
        "significant (paired t-test, alpha = .01), and XE-NDCG degrading more slowly as p0 rises."
    )
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--data", default=os.path.normpath(os.path.join(here, "..", "..", "shared", "data", "mq2008")))
    parser.add_argument("--out", default=None, help="output directory (default benchmarks/results)")
    parser.add_argument("--folds", type=int, nargs="+", default=None, help="MQ2008 folds (default 1-5)")
    parser.add_argument("--trials", type=int, default=None, help="click draws per MQ2008 fold (default 4)")
    parser.add_argument("--example-trials", type=int, default=None,
                        help="click draws (and validation splits) of the LightGBM example (default 20)")
    parser.add_argument("--quick", action="store_true", help="small smoke run into a temp directory")
    args = parser.parse_args(argv)
    quick = args.quick
    args.folds = args.folds or ([1] if quick else [1, 2, 3, 4, 5])
    args.trials = args.trials or (1 if quick else 4)
    args.example_trials = args.example_trials or (1 if quick else 20)
    args.levels = (LEVELS[0], LEVELS[3]) if quick else LEVELS
    if args.out is None:
        args.out = (os.path.join(tempfile.gettempdir(), "replicate_click_noise_quick") if quick
                    else os.path.join(here, "results"))
    if any(not 1 <= f <= 5 for f in args.folds):
        raise ValueError(f"--folds must be in 1..5, got {args.folds}.")
    os.makedirs(args.out, exist_ok=True)
    start = time.perf_counter()
    version = code_version()

    log = minutes_logger(start)

    results = {}
    for name, splits, rest in (
        ("MQ2008", mq2008_splits(args.data, args.folds, args.trials), P_CLICK_MQ2008[1:]),
        ("LightGBM example", example_splits(args.example_trials), P_CLICK[1:]),
    ):
        runs = [run_level(splits, name, (level, *rest), log) for level in args.levels]
        results[name] = ([r[0] for r in runs], [r[1] for r in runs])
    plot(args.levels, results, os.path.join(args.out, "click_noise.png"))
    report = os.path.join(args.out, "click_noise.md")
    write_report(report, args, results, time.perf_counter() - start, version)
    log(f"wrote {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
