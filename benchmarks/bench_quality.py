"""Ranking quality of our rankers against LightGBM on real LTR data.

MQ2008 (all 5 LETOR folds: train on train, early stopping on vali, NDCG on
test) and LightGBM's lambdarank example (early stopping on 20% of the training
queries, held out by query), with the same settings for both libraries:
learning rate 0.1, 31 leaves, at least 20 rows per leaf, 255 bins, up to 500
trees, early stopping after 30 iterations without improvement of validation
NDCG@10.

Test NDCG@k uses exponential gains, tie-averaged scores, and skips queries
without relevant documents (``no_relevant="skip"``, as the papers report).

Run: ``python benchmarks/bench_quality.py [--data ../shared/data]``.
Each model is trained with ``--seeds`` seeds (default 5) and its NDCG averaged
over them: XE-NDCG's targets are random, and on 50-156 test queries one seed's
luck moves NDCG@10 by more than the tolerance. Tree counts are means, fit times
medians.

Acceptance: mean test NDCG@10 of each ranker is at least LightGBM's minus
0.005, per fold and overall.

``--curves`` replaces that table with learning curves on the MQ2008 folds:
LambdaMART and LightGBM's lambdarank, with the same settings but no early
stopping, each grow ``--curve-trees`` trees (default 300), and test NDCG@10
is measured after every iteration. Per fold it prints a Markdown table row:
the mean test NDCG@10 over iterations 20..T of each library, their difference,
the share of those iterations where ours is lower by more than 0.005, and the
test NDCG@10 of each at 50, 100, 200 and 300 trees; the last row averages the
folds. The mode exists because the early-stopping point is itself noisy: on
156-query folds, where the validation curve happens to peak moves test
NDCG@10 by about +-0.02, more than the tolerance, so one fold can fail the
acceptance line by landing on a local dip. The fixed-tree curves show the
engines' quality without that noise. Both libraries compute NDCG here with
``sklearn_ltr.metrics.ndcg_score`` on their predictions, so the metric
convention (ties, queries without relevant documents) is the same.
Run: ``python benchmarks/bench_quality.py --curves [--curve-trees 300]``.

``--nearby`` measures the noise of the acceptance line itself. On each MQ2008
fold both libraries are trained with early stopping, as in the main table, at
each of 9 settings around the benchmark's (learning rate 0.09/0.1/0.11 x
min_samples_leaf 18/20/22). Per fold it prints a Markdown table row: test
NDCG@10 of each library at the benchmark's settings and averaged over the 9
settings, the number of settings where ours is more than 0.005 below
LightGBM, and, as the yardstick, the number of the 8 nearby settings where
LightGBM is more than 0.005 below LightGBM at the benchmark's settings (and
the same for ours). The last row gives the means over folds and, in the last
three columns, how many settings fall short on at least one fold, as the
acceptance line counts. Run: ``python benchmarks/bench_quality.py --nearby``.

``--all-rankers`` (issue #20, code in ``_quality_all_rankers.py``) writes a
Markdown report comparing every ranker of ours (LambdaMART, RankNet,
LambdaMART MAP, XE-NDCG, ListNet, YetiRank, CalibratedRanker) with LightGBM
lambdarank and rank_xendcg, XGBoost rank:ndcg, rank:pairwise and rank:map and
CatBoost YetiRank on MQ2008 (5 folds, test queries pooled), the LightGBM
example data and ``make_ranking`` at 1,000 and 5,000 queries (60/20/20 by
query). Each ranker is fitted once with 500 trees; its staged raw scores
(checked against its full prediction) give test NDCG@10 at 500 trees and at
the iteration the same early-stopping rule on validation NDCG@10 (patience
30) keeps. Every ranker is tested against CatBoost YetiRank by paired t-tests
over per-query NDCG@10, and YetiRankRanker's fit time is timed against
CatBoost's by alternated fits. Run: ``python benchmarks/bench_quality.py
--all-rankers [--datasets mq2008,example,mr1000,mr5000] [--seeds 1]
[--time-repeats 2] [--out benchmarks/results/quality_all_rankers.md]``;
``--quick`` is a smoke run of about a minute (MQ2008 folds 1-2, 30 trees,
small ``make_ranking`` data) that writes to a temporary file.
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

from sklearn_ltr import LambdaMARTRanker, XENDCGRanker
from sklearn_ltr._utils.queries import group_queries, rows_of_queries, split_queries
from sklearn_ltr.datasets import load_letor_folds, load_svmlight_ranking
from sklearn_ltr.metrics import ndcg_score

CUTOFFS = (1, 3, 5, 10)
TOLERANCE = 0.005
SETTINGS = dict(learning_rate=0.1, leaves=31, min_leaf=20, bins=255, trees=500, patience=30)
# --curves: the curve means start at iteration 20 because earlier models are
# underfit ones nobody would stop at; counting them would measure how fast
# each library climbs rather than the quality it reaches.
CURVE_FIRST_ITERATION = 20
CURVE_CHECKPOINTS = (50, 100, 200, 300)
# --nearby: settings a user could equally have picked. The grid was fixed
# before its results were seen, as the one used to judge LightGBM's
# hessian-estimated leaf sizes.
NEARBY_LEARNING_RATES = (0.09, 0.1, 0.11)
NEARBY_MIN_LEAF = (18, 20, 22)

# Objective name in LightGBM for each of our rankers.
OURS = {
    "LambdaMART": (LambdaMARTRanker, "lambdarank"),
    "XE-NDCG": (XENDCGRanker, "rank_xendcg"),
}


def _our_ranker(ranker_class, seed, *, n_estimators, early_stopping, settings=SETTINGS):
    """One of our rankers with the shared SETTINGS.

    Parameters
    ----------
    ranker_class : type
        ``LambdaMARTRanker`` or ``XENDCGRanker``.
    seed : int
        ``random_state`` of the ranker.
    n_estimators : int
        Number of trees (an upper bound when ``early_stopping`` is True).
    early_stopping : bool
        Stop after ``SETTINGS["patience"]`` iterations without improvement
        of validation NDCG@10.
    settings : dict, default=SETTINGS
        Learning rate, leaves, rows per leaf, bins and patience.

    Returns
    -------
    ranker : estimator
        Unfitted ranker.
    """
    s = settings
    return ranker_class(
        n_estimators=n_estimators, learning_rate=s["learning_rate"], max_leaf_nodes=s["leaves"],
        min_samples_leaf=s["min_leaf"], max_bins=s["bins"], n_iter_no_change=s["patience"],
        early_stopping=early_stopping, random_state=seed,
    )


def _lightgbm_ranker(objective, seed, *, n_estimators, settings=SETTINGS):
    """LightGBM's ``LGBMRanker`` with the shared SETTINGS.

    Parameters
    ----------
    objective : str
        LightGBM objective, ``"lambdarank"`` or ``"rank_xendcg"``.
    seed : int
        ``random_state`` of the ranker.
    n_estimators : int
        Number of trees (an upper bound when fitted with early stopping).
    settings : dict, default=SETTINGS
        Learning rate, leaves, rows per leaf and bins.

    Returns
    -------
    ranker : lightgbm.LGBMRanker
        Unfitted ranker.
    """
    import lightgbm

    s = settings
    return lightgbm.LGBMRanker(
        objective=objective, n_estimators=n_estimators, learning_rate=s["learning_rate"],
        num_leaves=s["leaves"], min_child_samples=s["min_leaf"], max_bin=s["bins"],
        random_state=seed, verbose=-1, n_jobs=2,
    )


def _sorted_with_groups(X, y, qid):
    """Rows sorted by query and the query sizes, as LightGBM's ``group`` wants."""
    order = np.argsort(qid, kind="stable")
    return X[order], y[order], np.unique(qid, return_counts=True)[1]


def _ours(ranker_class, train, val, seed, settings=SETTINGS):
    model = _our_ranker(
        ranker_class, seed, n_estimators=settings["trees"], early_stopping=True, settings=settings
    )
    model.fit(*train[:2], qid=train[2], X_val=val[0], y_val=val[1], qid_val=val[2])
    return model, model.n_iter_


def _lightgbm(objective, train, val, seed, settings=SETTINGS):
    import lightgbm

    X, y, group = _sorted_with_groups(*train)
    X_val, y_val, group_val = _sorted_with_groups(*val)
    model = _lightgbm_ranker(objective, seed, n_estimators=settings["trees"], settings=settings)
    with warnings.catch_warnings():
        # LightGBM 4.7 renamed eval_set; the old name works on every 4.x.
        warnings.simplefilter("ignore", category=FutureWarning)
        warnings.simplefilter("ignore", category=DeprecationWarning)
        model.fit(
            X, y, group=group, eval_set=[(X_val, y_val)], eval_group=[group_val], eval_at=[10],
            callbacks=[lightgbm.early_stopping(settings["patience"], verbose=False)],
        )
    return model, model.best_iteration_


def _ndcg_of_scores(scores, test, k):
    """Test NDCG@k of ``scores`` with the benchmark's convention."""
    _, y, qid = test
    return ndcg_score(y, scores, qid=qid, k=k, no_relevant="skip")


def _test_ndcg(model, test):
    scores = model.predict(test[0])
    return [_ndcg_of_scores(scores, test, k) for k in CUTOFFS]


def _mq2008_folds(data_dir):
    for fold in range(1, 6):
        train, val, test = load_letor_folds(os.path.join(data_dir, "mq2008"), fold, as_dense=True)
        yield f"MQ2008 Fold{fold}", train, val, test


def _example_split(data_dir):
    """LightGBM's example data: train, validation (20% of training queries) and test."""
    example = os.path.join(data_dir, "lightgbm_lambdarank_example")
    loaded = []
    for part in ("train", "test"):
        X, y, qid = load_svmlight_ranking(
            os.path.join(example, f"rank.{part}.gz"), n_features=300,
            query_file=os.path.join(example, f"rank.{part}.query"),
        )
        loaded.append((X.toarray(), y, qid))
    (X, y, qid), test = loaded
    order, offsets, _ = group_queries(qid)
    train_q, val_q = split_queries(offsets, 0.2, np.random.default_rng(0))
    train_rows, _ = rows_of_queries(offsets, train_q, order)
    val_rows, _ = rows_of_queries(offsets, val_q, order)
    return (
        (X[train_rows], y[train_rows], qid[train_rows]),
        (X[val_rows], y[val_rows], qid[val_rows]),
        test,
    )


def _datasets(data_dir):
    yield from _mq2008_folds(data_dir)
    yield ("LightGBM example", *_example_split(data_dir))


def _over_seeds(fit, test, n_seeds):
    """Mean test NDCG@k and mean tree count over seeds, median fit time."""
    ndcgs, trees, seconds = [], [], []
    for seed in range(n_seeds):
        start = time.perf_counter()
        model, n_trees = fit(seed)
        seconds.append(time.perf_counter() - start)
        trees.append(n_trees)
        ndcgs.append(_test_ndcg(model, test))
    return np.mean(ndcgs, axis=0), np.mean(trees), np.median(seconds)


def _padded(values, n_trees):
    """Curve of length ``n_trees``, repeating the last value if training ended early.

    LightGBM stops adding trees when no leaf can be split any more; its
    model, and so its test NDCG, is then the same for every later iteration.
    """
    values = list(values)
    return np.array(values + values[-1:] * (n_trees - len(values)))


def _curves(train, test, n_trees):
    """Test NDCG@10 after each iteration of LambdaMART and of LightGBM.

    Parameters
    ----------
    train, test : tuple of (X, y, qid)
        Training and test data.
    n_trees : int
        Number of trees; neither library stops early.

    Returns
    -------
    ours, lightgbm : ndarray of shape (n_trees,)
        Test NDCG@10 of the first 1, 2, ..., ``n_trees`` trees.
    """
    ranker_class, objective = OURS["LambdaMART"]
    # LambdaMART without subsampling ignores its seed on MQ2008 (too few rows
    # for the binning subsample), so one seed is the whole curve.
    model = _our_ranker(ranker_class, 0, n_estimators=n_trees, early_stopping=False)
    model.fit(*train[:2], qid=train[2])
    ours = [_ndcg_of_scores(scores, test, 10) for scores in model.staged_predict(test[0])]

    X, y, group = _sorted_with_groups(*train)
    booster = _lightgbm_ranker(objective, 0, n_estimators=n_trees).fit(X, y, group=group).booster_
    # LightGBM's own eval would use its NDCG convention (stable ties, queries
    # without relevant documents count as 1), so score its predictions with
    # the same metric as ours instead.
    theirs = [
        _ndcg_of_scores(booster.predict(test[0], num_iteration=i), test, 10)
        for i in range(1, booster.current_iteration() + 1)
    ]
    return _padded(ours, n_trees), _padded(theirs, n_trees)


def _curve_table(data_dir, n_trees):
    """Print the ``--curves`` Markdown table, one row per MQ2008 fold and their mean."""
    first = CURVE_FIRST_ITERATION
    checkpoints = [c for c in CURVE_CHECKPOINTS if c <= n_trees]
    columns = [
        "fold", f"ours mean {first}-{n_trees}", f"LightGBM mean {first}-{n_trees}",
        "ours - LightGBM", f"ours lower by > {TOLERANCE}",
    ]
    for c in checkpoints:
        columns += [f"ours @{c}", f"LightGBM @{c}"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))

    def row(label, values):
        mean_ours, mean_theirs, share, *at = values
        cells = [label, f"{mean_ours:.4f}", f"{mean_theirs:.4f}", f"{mean_ours - mean_theirs:+.4f}",
                 f"{share:.0%}"] + [f"{v:.4f}" for v in at]
        print("| " + " | ".join(cells) + " |", flush=True)

    rows = []
    for data_name, train, _, test in _mq2008_folds(data_dir):
        start = time.perf_counter()
        ours, theirs = _curves(train, test, n_trees)
        window = slice(first - 1, n_trees)
        values = [ours[window].mean(), theirs[window].mean(),
                  np.mean(ours[window] < theirs[window] - TOLERANCE)]
        for c in checkpoints:
            values += [ours[c - 1], theirs[c - 1]]
        rows.append(values)
        row(data_name.removeprefix("MQ2008 "), values)
        print(f"{data_name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    row("mean", np.mean(rows, axis=0))


def _nearby_table(data_dir):
    """Print the ``--nearby`` Markdown table, one row per MQ2008 fold and their mean."""
    grid = [
        dict(SETTINGS, learning_rate=lr, min_leaf=min_leaf)
        for lr in NEARBY_LEARNING_RATES for min_leaf in NEARBY_MIN_LEAF
    ]
    benchmark = grid.index(SETTINGS)
    columns = [
        "fold", "ours", "LightGBM", "ours, mean of 9", "LightGBM, mean of 9", "ours - LightGBM",
        f"settings where ours < LightGBM - {TOLERANCE}",
        f"nearby settings where LightGBM < itself - {TOLERANCE}",
        f"nearby settings where ours < itself - {TOLERANCE}",
    ]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    ranker_class, objective = OURS["LambdaMART"]
    folds_ours, folds_theirs = [], []
    for data_name, train, val, test in _mq2008_folds(data_dir):
        ours, theirs = [], []
        for settings in grid:
            # Both libraries are deterministic here (no sampling, fewer rows
            # than the binning subsample), so one seed per setting.
            ours.append(_ndcg_of_scores(_ours(ranker_class, train, val, 0, settings)[0].predict(test[0]), test, 10))
            theirs.append(
                _ndcg_of_scores(_lightgbm(objective, train, val, 0, settings)[0].predict(test[0]), test, 10)
            )
        ours, theirs = np.array(ours), np.array(theirs)
        folds_ours.append(ours)
        folds_theirs.append(theirs)
        nearby = np.arange(len(grid)) != benchmark
        cells = [
            data_name.removeprefix("MQ2008 "), f"{ours[benchmark]:.4f}", f"{theirs[benchmark]:.4f}",
            f"{ours.mean():.4f}", f"{theirs.mean():.4f}", f"{ours.mean() - theirs.mean():+.4f}",
            f"{np.sum(ours < theirs - TOLERANCE)} of {len(grid)}",
            f"{np.sum(theirs[nearby] < theirs[benchmark] - TOLERANCE)} of {nearby.sum()}",
            f"{np.sum(ours[nearby] < ours[benchmark] - TOLERANCE)} of {nearby.sum()}",
        ]
        print("| " + " | ".join(cells) + " |", flush=True)
    # The last row: the mean over folds in the first columns; in the last
    # three, the settings that would fail the per-fold line on some fold.
    folds_ours, folds_theirs = np.array(folds_ours), np.array(folds_theirs)

    def failing(worse, better):
        short = (worse < better - TOLERANCE).any(axis=0)
        return f"{short.sum()} of {short.size} short on a fold"

    ours, theirs = folds_ours.mean(axis=0), folds_theirs.mean(axis=0)
    nearby = np.arange(len(grid)) != benchmark
    cells = [
        "mean", f"{ours[benchmark]:.4f}", f"{theirs[benchmark]:.4f}", f"{ours.mean():.4f}",
        f"{theirs.mean():.4f}", f"{ours.mean() - theirs.mean():+.4f}", failing(folds_ours, folds_theirs),
        failing(folds_theirs[:, nearby], folds_theirs[:, [benchmark]]),
        failing(folds_ours[:, nearby], folds_ours[:, [benchmark]]),
    ]
    print("| " + " | ".join(cells) + " |")


def _early_stopping_table(data_dir, n_seeds):
    """Print the early-stopping comparison and its acceptance verdict."""
    header = f"{'data':<18}{'model':<22}{'trees':>6}{'fit s':>7}" + "".join(
        f"{f'@{k}':>8}" for k in CUTOFFS
    )
    print(header)
    print("-" * len(header))
    results = {name: {"ours": [], "lightgbm": []} for name in OURS}
    mq2008 = {name: {"ours": [], "lightgbm": []} for name in OURS}
    failures = []
    for data_name, train, val, test in _datasets(data_dir):
        for name, (ranker_class, lgb_objective) in OURS.items():
            ours, trees, ours_time = _over_seeds(
                lambda seed: _ours(ranker_class, train, val, seed), test, n_seeds
            )
            theirs, lgb_trees, lgb_time = _over_seeds(
                lambda seed: _lightgbm(lgb_objective, train, val, seed), test, n_seeds
            )
            for label, t, secs, values in (
                (f"ours {name}", trees, ours_time, ours),
                (f"LightGBM {lgb_objective}", lgb_trees, lgb_time, theirs),
            ):
                print(f"{data_name:<18}{label:<22}{t:>6.0f}{secs:>7.2f}" + "".join(f"{v:>8.4f}" for v in values))
            results[name]["ours"].append(ours)
            results[name]["lightgbm"].append(theirs)
            if data_name.startswith("MQ2008"):
                mq2008[name]["ours"].append(ours)
                mq2008[name]["lightgbm"].append(theirs)
            if ours[-1] < theirs[-1] - TOLERANCE:
                failures.append(f"{data_name} {name}: {ours[-1]:.4f} < {theirs[-1]:.4f} - {TOLERANCE}")

    print("-" * len(header))
    for summary_name, table in (("MQ2008 mean", mq2008), ("all mean", results)):
        for name, (_, lgb_objective) in OURS.items():
            ours = np.mean(table[name]["ours"], axis=0)
            theirs = np.mean(table[name]["lightgbm"], axis=0)
            print(f"{summary_name:<18}{'ours ' + name:<22}{'':>13}" + "".join(f"{v:>8.4f}" for v in ours))
            print(f"{summary_name:<18}{'LightGBM ' + lgb_objective:<22}{'':>13}" + "".join(f"{v:>8.4f}" for v in theirs))
            if ours[-1] < theirs[-1] - TOLERANCE:
                failures.append(f"{summary_name} {name}: {ours[-1]:.4f} < {theirs[-1]:.4f} - {TOLERANCE}")
    print("\nNDCG@k on test: exponential gain, ties averaged, queries without relevant documents skipped.")
    if failures:
        print("BELOW TARGET (ours < LightGBM - 0.005 in NDCG@10):")
        for failure in failures:
            print("  " + failure)
    else:
        print(f"TARGET MET: NDCG@10 of ours >= LightGBM's - {TOLERANCE} on every fold and overall.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
    parser.add_argument("--data", default=os.path.normpath(default))
    parser.add_argument(
        "--seeds", type=int, default=None,
        help="seeds per model; NDCG is averaged over them (XE-NDCG draws gamma from its seed); "
        "default 5, and 1 with --all-rankers",
    )
    parser.add_argument(
        "--seeds-make-ranking", type=int, default=None,
        help="with --all-rankers: seeds on the make_ranking datasets (default: --seeds)",
    )
    parser.add_argument(
        "--curves", action="store_true",
        help="instead of the early-stopping table, print test NDCG@10 curves of LambdaMART and "
        "LightGBM lambdarank trained without early stopping on each MQ2008 fold (Markdown table)",
    )
    parser.add_argument(
        "--curve-trees", type=int, default=300,
        help=f"trees per model with --curves (default %(default)s, at least {CURVE_FIRST_ITERATION})",
    )
    parser.add_argument(
        "--nearby", action="store_true",
        help="instead of the early-stopping table, train both libraries with early stopping at 9 "
        "settings around the benchmark's on each MQ2008 fold and compare each with itself too "
        "(Markdown table)",
    )
    parser.add_argument(
        "--all-rankers", action="store_true",
        help="instead of the early-stopping table, compare every ranker of ours with LightGBM, "
        "XGBoost and CatBoost rankers at fixed trees and early-stopped (Markdown report, issue #20)",
    )
    parser.add_argument(
        "--datasets", default="mq2008,example,mr1000,mr5000",
        help="with --all-rankers: comma-separated subset of mq2008,example,mr1000,mr5000",
    )
    parser.add_argument(
        "--rankers", default=None,
        help="with --all-rankers: comma-separated subset of the table's rankers (YetiRankRanker "
        "and CatBoost YetiRank are always in)",
    )
    parser.add_argument(
        "--time-repeats", type=int, default=2,
        help="with --all-rankers: alternated fits of YetiRankRanker and CatBoost timed per dataset",
    )
    parser.add_argument(
        "--quick", action="store_true",
        help="with --all-rankers: smoke run (MQ2008 folds 1-2, 30 trees, small make_ranking data), "
        "report written to a temporary file unless --out is given",
    )
    parser.add_argument(
        "--out", default=None,
        help="with --all-rankers: report path (default benchmarks/results/quality_all_rankers.md)",
    )
    args = parser.parse_args()
    if args.seeds is None:
        args.seeds = 1 if args.all_rankers else 5
    if args.all_rankers:
        from _quality_all_rankers import run

        run(args, ["python", "benchmarks/bench_quality.py", *sys.argv[1:]])
    elif args.nearby:
        _nearby_table(args.data)
    elif args.curves:
        if args.curve_trees < CURVE_FIRST_ITERATION:
            parser.error(f"--curve-trees must be at least {CURVE_FIRST_ITERATION}")
        _curve_table(args.data, args.curve_trees)
    else:
        _early_stopping_table(args.data, args.seeds)


if __name__ == "__main__":
    main()
