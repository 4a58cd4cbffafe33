"""Hyper-parameter search wall time: our rankers against LightGBM's
``LGBMRanker`` in the same ``GridSearchCV`` (issue 31's "a search" target).

A user tunes a ``Pipeline``: here ``StandardScaler`` then a ranker, searched
by ``GridSearchCV`` over 8 candidates (``learning_rate`` 0.05 / 0.1 x 15 / 31
leaves x 10 / 20 rows per leaf, 100 trees each) with 5 ``GroupKFold`` folds
by query, scored by ``sklearn_ltr.metrics.ndcg_scorer(10)``, then refitted on
all rows: 41 fits. Query ids reach the ranker and the scorer through
scikit-learn's metadata routing.

LightGBM's ``LGBMRanker`` takes query *sizes* of rows sorted by query
(``group=``), which ``GridSearchCV`` cannot pass through its folds; the
adapter a user has to write, :class:`LGBMRankerWithQid`, sorts each fold's
rows by query id, computes the sizes and restores the row order of the
scores. Same settings on both sides: 100 trees, the candidate's learning
rate, leaves (``max_leaf_nodes`` / ``num_leaves``) and rows per leaf
(``min_samples_leaf`` / ``min_child_samples``), 255 bins, no early stopping.

Threads. With ``n_jobs=1`` the search runs the fits one after another and
each fit uses 2 threads; with ``n_jobs=-1`` scikit-learn runs fits in
parallel worker processes (joblib's loky) and each fit uses 1 thread, so that
the machine's 2 cores are not oversubscribed. Worker processes start cold:
ours load the compiled kernels from numba's cache, which a warm-up fit in
this process has written.

Data: MQ2008 fold 1's train part and LightGBM's lambdarank example's train
file, from ``--data`` (the shared data directory). Each search is timed from
``fit`` to its return, alternating ours and LightGBM's ``--repeats`` times,
fastest of each; the ratio ours / LightGBM is printed and, with ``--out``,
written as Markdown. The goal of issue 31 is a ratio of at most 0.8.

Run: ``python benchmarks/bench_search.py [--data ../shared/data] [--repeats 2]``.
"""

import argparse
import os
import platform
import time

import numpy as np
import sklearn
from _report import code_version
from sklearn.base import BaseEstimator
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.datasets import load_example, load_letor_folds
from sklearn_ltr.metrics import ndcg_scorer

TREES = 100
GRID = {"learning_rate": [0.05, 0.1], "leaves": [15, 31], "min_leaf": [10, 20]}
GOAL = 0.8


class LGBMRankerWithQid(BaseEstimator):
    """``lightgbm.LGBMRanker`` fitted from per-row query ids, as a search
    needs it: rows sorted by query id (stably) before ``fit``, the sizes of
    the queries as ``group``."""

    __metadata_request__fit = {"qid": True}

    def __init__(self, learning_rate=0.1, leaves=31, min_leaf=20, n_jobs=1):
        self.learning_rate = learning_rate
        self.leaves = leaves
        self.min_leaf = min_leaf
        self.n_jobs = n_jobs

    def fit(self, X, y, qid):
        import lightgbm

        order = np.argsort(qid, kind="stable")
        _, sizes = np.unique(np.asarray(qid)[order], return_counts=True)
        self.model_ = lightgbm.LGBMRanker(
            n_estimators=TREES, learning_rate=self.learning_rate, num_leaves=self.leaves,
            min_child_samples=self.min_leaf, max_bin=255, n_jobs=self.n_jobs, verbose=-1,
            random_state=0,
        ).fit(np.asarray(X)[order], np.asarray(y)[order], group=sizes)
        return self

    def predict(self, X):
        return self.model_.predict(X)


class OurRanker(LambdaMARTRanker):
    """``LambdaMARTRanker`` with the grid's parameter names (the same
    values as LightGBM's adapter), so that one grid serves both."""

    def __init__(self, learning_rate=0.1, leaves=31, min_leaf=20, n_jobs=1):
        super().__init__(n_estimators=TREES, learning_rate=learning_rate,
                         max_leaf_nodes=leaves, min_samples_leaf=min_leaf,
                         early_stopping=False, random_state=0, n_jobs=n_jobs)
        self.leaves = leaves
        self.min_leaf = min_leaf

    def get_params(self, deep=True):
        return {"learning_rate": self.learning_rate, "leaves": self.leaves,
                "min_leaf": self.min_leaf, "n_jobs": self.n_jobs}

    def set_params(self, **params):
        for key, value in params.items():
            setattr(self, key, value)
        self.max_leaf_nodes, self.min_samples_leaf = self.leaves, self.min_leaf
        return self


def search(make_ranker, X, y, qid, n_jobs):
    """One GridSearchCV over the pipeline; returns (seconds, best score)."""
    inner_threads = 2 if n_jobs == 1 else 1
    pipeline = make_pipeline(StandardScaler(), make_ranker(inner_threads))
    grid = {f"{pipeline.steps[-1][0]}__{key}": values for key, values in GRID.items()}
    searcher = GridSearchCV(pipeline, grid, scoring=ndcg_scorer(10), cv=GroupKFold(5),
                            n_jobs=n_jobs)
    start = time.perf_counter()
    searcher.fit(X, y, qid=qid, groups=qid)
    return time.perf_counter() - start, searcher.best_score_


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "data"))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default=None, help="write the Markdown report here")
    args = parser.parse_args()
    sklearn.set_config(enable_metadata_routing=True)
    datasets = {
        "MQ2008 fold 1 (train)": load_letor_folds(os.path.join(args.data, "mq2008"), 1,
                                                  as_dense=True)[0],
        "LightGBM example (train)": load_example()[0],
    }
    rankers = {
        "ours (LambdaMARTRanker)": lambda threads: OurRanker(n_jobs=threads),
        "LightGBM (LGBMRanker + adapter)": lambda threads: LGBMRankerWithQid(n_jobs=threads),
    }
    # Warm numba's cache (compiled kernels), so no search pays compilation.
    X, y, qid = datasets["MQ2008 fold 1 (train)"]
    OurRanker(n_jobs=2).fit(X[:2000], y[:2000], qid=qid[:2000])
    rows = []
    for data_name, (X, y, qid) in datasets.items():
        X = np.asarray(X, dtype=np.float64)
        for n_jobs in (1, -1):
            best = {name: (np.inf, None) for name in rankers}
            for repeat in range(args.repeats):
                names = list(rankers)
                for name in names[repeat % 2:] + names[:repeat % 2]:
                    seconds, score = search(rankers[name], X, y, qid, n_jobs)
                    print(f"{data_name}, n_jobs={n_jobs}, {name}: {seconds:.2f} s "
                          f"(best NDCG@10 {score:.4f})", flush=True)
                    best[name] = min(best[name], (seconds, score), key=lambda t: t[0])
            ours, theirs = (best[name][0] for name in rankers)
            rows.append((data_name, n_jobs, ours, theirs, ours / theirs,
                         *(best[name][1] for name in rankers)))
    lines = [
        "# Grid search wall time: ours against LightGBM's LGBMRanker", "",
        f"Command: `python benchmarks/bench_search.py --repeats {args.repeats}`  ",
        f"Code: {code_version()}; scikit-learn {sklearn.__version__}, "
        f"lightgbm {__import__('lightgbm').__version__}, numpy {np.__version__}; "
        f"Python {platform.python_version()}; {os.cpu_count()} cores  ", "",
        "GridSearchCV of 8 candidates x 5 GroupKFold folds (+ refit) over "
        "StandardScaler -> ranker, 100 trees per fit; fastest of "
        f"{args.repeats} alternated searches. Goal: ours / LightGBM <= {GOAL}.", "",
        "| data | n_jobs | ours (s) | LightGBM (s) | ours / LightGBM | goal | best CV NDCG@10 "
        "ours | LightGBM |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for data_name, n_jobs, ours, theirs, ratio, score_ours, score_theirs in rows:
        verdict = "met" if ratio <= GOAL else "NOT MET"
        lines.append(f"| {data_name} | {n_jobs} | {ours:.2f} | {theirs:.2f} | {ratio:.2f} | "
                     f"{verdict} | {score_ours:.4f} | {score_theirs:.4f} |")
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(report)


if __name__ == "__main__":
    main()
