"""Where CatBoost YetiRank's lead over YetiRankRanker comes from (issue #20).

``bench_quality.py --all-rankers`` finds CatBoost's YetiRank ahead of
YetiRankRanker on ``make_ranking`` data although both compute the same
gradients (the objective's tests check ours against CatBoost's scheme).
The two differ in the trees they grow: CatBoost grows symmetric (oblivious)
trees of depth 6 and chooses splits by its ``Cosine`` score, with Bayesian
bootstrap weights and random noise on the split scores (``random_strength``);
ours grows 31-leaf leaf-wise trees by the Newton gain. This script fits
CatBoost with each ingredient switched off or swapped for ours and compares
every variant with YetiRankRanker on the same data, with the settings and the
early-stopping rule of ``bench_quality.py --all-rankers``.

Run: ``python benchmarks/bench_yetirank_gap.py [--datasets mr1000,mq2008]
[--out benchmarks/results/yetirank_gap.md]``.
"""

import argparse
import os
import sys
import time

import numpy as np

from _quality_all_rankers import (
    FULL, RANKERS, SHARED, _curves, _fit, _splits, stopping_iteration,
)
from _report import code_version, fmt_p, paired

OURS = "YetiRankRanker"


def _catboost(**changes):
    def make(seed, trees):
        import catboost
        params = dict(loss_function="YetiRank", iterations=trees,
                      learning_rate=SHARED["learning_rate"], border_count=254,
                      thread_count=SHARED["threads"], verbose=0, random_seed=seed,
                      allow_writing_files=False)
        params.update(changes)
        return catboost.CatBoostRanker(**params)
    return make


# name -> (library, factory, what differs from CatBoost's defaults)
VARIANTS = {
    OURS: ("ours", RANKERS[OURS][1], "ours: 31 leaves leaf-wise, Newton gain, no sampling"),
    "CatBoost default": ("catboost", _catboost(),
                         "symmetric depth 6, Cosine score, Bayesian bootstrap, random_strength 1"),
    "CatBoost, no bootstrap, random_strength 0": (
        "catboost", _catboost(bootstrap_type="No", random_strength=0.0),
        "symmetric depth 6, Cosine score, deterministic"),
    "CatBoost, L2 score": ("catboost", _catboost(score_function="L2"),
                           "symmetric depth 6, L2 (Newton) score"),
    "CatBoost, 31 leaves leaf-wise": (
        "catboost", _catboost(grow_policy="Lossguide", max_leaves=SHARED["leaves"],
                              min_data_in_leaf=SHARED["min_leaf"]),
        "our tree shape: Lossguide, 31 leaves, 20 rows per leaf"),
}


def _evaluate(library, factory, splits, trees, patience):
    at_all, at_stop, kept, seconds = [], [], [], []
    for _, train, val, test in splits:
        model = factory(0, trees)
        start = time.perf_counter()
        _fit(library, model, train)
        seconds.append(time.perf_counter() - start)
        val_curve, test_rows = _curves(library, model, val, test, trees)
        n = stopping_iteration(val_curve, patience)
        at_all.append(test_rows[-1])
        at_stop.append(test_rows[n - 1])
        kept.append(n)
    return np.concatenate(at_all), np.concatenate(at_stop), np.mean(kept), np.mean(seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
    parser.add_argument("--data", default=os.path.normpath(default))
    parser.add_argument("--datasets", default="mr1000,mq2008")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                      "yetirank_gap.md"))
    args = parser.parse_args()
    start = time.perf_counter()
    trees, patience = FULL["trees"], FULL["patience"]
    lines = []
    for dataset in args.datasets.split(","):
        splits = list(_splits(dataset, args.data, FULL))
        label = "MQ2008, 5 folds pooled" if dataset == "mq2008" else splits[0][0]
        results = {}
        for name, (library, factory, _) in VARIANTS.items():
            results[name] = _evaluate(library, factory, splits, trees, patience)
            print(f"{label} {name}: {np.nanmean(results[name][0]):.4f} / "
                  f"{np.nanmean(results[name][1]):.4f}", file=sys.stderr, flush=True)
        ours_all, ours_stop = results[OURS][:2]
        lines += [f"## {label}", "",
                  f"| model | trees grown | NDCG@10, {trees} trees | - ours (p) | NDCG@10, early-stopped "
                  "| - ours (p) | trees kept | fit s |",
                  "|---|---|---|---|---|---|---|---|"]
        for name, (at_all, at_stop, kept, seconds) in results.items():
            (d_all, p_all), = paired(at_all[None], ours_all[None])
            (d_stop, p_stop), = paired(at_stop[None], ours_stop[None])
            lines.append(
                f"| {name} | {VARIANTS[name][2]} | {np.nanmean(at_all):.4f} | {d_all:+.4f} "
                f"({fmt_p(p_all)}) | {np.nanmean(at_stop):.4f} | {d_stop:+.4f} ({fmt_p(p_stop)}) "
                f"| {kept:.0f} | {seconds:.1f} |")
        lines.append("")
    header = [
        "# Where CatBoost YetiRank's lead over YetiRankRanker comes from", "",
        f"Command: `python benchmarks/bench_yetirank_gap.py {' '.join(sys.argv[1:])}`  ",
        f"Code: {code_version()}; {(time.perf_counter() - start) / 60:.1f} minutes", "",
        f"Settings of `bench_quality.py --all-rankers`: {trees} trees, learning rate "
        f"{SHARED['learning_rate']}, {SHARED['threads']} threads, seed 0; early-stopped = best "
        f"validation NDCG@10 with patience {patience}. Differences are paired over the test "
        "queries (t-test p in brackets). CatBoost's YetiRank sets l2_leaf_reg to 1e-20, so L2 "
        "is not among the differences.", ""]
    with open(args.out, "w") as f:
        f.write("\n".join(header + lines))
    print("\n".join(header + lines))


if __name__ == "__main__":
    main()
