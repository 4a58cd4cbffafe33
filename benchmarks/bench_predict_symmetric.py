"""Prediction throughput of symmetric trees against leaf-wise trees of the
same leaf count.

Two ``LambdaMARTRanker(n_estimators=--trees, early_stopping=False,
random_state=0)`` models are fitted on ``make_ranking(n_queries=
--train-queries, random_state=0)`` (MSLR-shaped, 136 features): one with
``grow_policy="symmetric", max_depth=5, min_samples_leaf=1`` (32 leaves a
tree, predicted through leaf tables, see ``sklearn_ltr/_gbdt/oblivious.py``)
and one leaf-wise with ``max_leaf_nodes=32, min_samples_leaf=1``
(predicted by the block walk). Each predicts ``--rows`` rows of other
queries (``random_state=1``) on 1 and 2 threads, alternating between the two
models, fastest of ``--repeats`` calls. Both models' scores equal the node
walk's (checked). The target (issue 28) is symmetric at least 2x leaf-wise
rows per second at both thread counts; the last line says MET or MISSED.

Run: ``python benchmarks/bench_predict_symmetric.py [--rows 200000]
[--trees 500] [--train-queries 300] [--repeats 7]``; ``--quick`` is a smoke
run (20,000 rows, 50 trees, 3 repeats).
"""

import argparse
import time

import numpy as np

from _alternate import fastest_alternating

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
    args = parser.parse_args()
    if args.quick:
        args.rows, args.trees, args.repeats = 20_000, 50, 3
    X, y, qid = make_ranking(n_queries=args.train_queries, random_state=0)
    models = {}
    for name, shape in SHAPES.items():
        start = time.perf_counter()
        models[name] = LambdaMARTRanker(n_estimators=args.trees, min_samples_leaf=1,
                                        early_stopping=False, random_state=0,
                                        **shape).fit(X, y, qid=qid)
        leaves = np.mean([t["is_leaf"].sum() for t in models[name]._booster.trees])
        print(f"{name}: fitted in {time.perf_counter() - start:.1f} s, "
              f"{leaves:.1f} leaves a tree on average", flush=True)
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
    print(f"{X_test.shape[0]:,} rows, {args.trees} trees, fastest of {args.repeats}")
    print("| trees | " + " | ".join(f"rows/s, {t} thread(s)" for t in THREADS) + " |")
    print("|---|" + "---:|" * len(THREADS))
    for name in runtimes:
        print(f"| {name} | " + " | ".join(f"{X_test.shape[0] / best[name, t]:,.0f}"
                                          for t in THREADS) + " |")
    sym, leaf = SHAPES
    ratios = [best[leaf, t] / best[sym, t] for t in THREADS]
    print("| symmetric / leaf-wise | " + " | ".join(f"{r:.2f}" for r in ratios) + " |")
    met = all(r >= 2.0 for r in ratios)
    print(f"{'MET' if met else 'MISSED'}: symmetric >= 2x leaf-wise throughput at "
          + " and ".join(f"{t} thread(s) ({r:.2f}x)" for t, r in zip(THREADS, ratios)))


if __name__ == "__main__":
    main()
