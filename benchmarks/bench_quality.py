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
"""

import argparse
import os
import time
import warnings

import numpy as np

from sklearn_ltr import LambdaMARTRanker, XENDCGRanker
from sklearn_ltr._queries import group_queries, rows_of_queries, split_queries
from sklearn_ltr.datasets import load_letor_folds, load_svmlight_ranking
from sklearn_ltr.metrics import ndcg_score

CUTOFFS = (1, 3, 5, 10)
TOLERANCE = 0.005
SETTINGS = dict(learning_rate=0.1, leaves=31, min_leaf=20, bins=255, trees=500, patience=30)

# Objective name in LightGBM for each of our rankers.
OURS = {
    "LambdaMART": (LambdaMARTRanker, "lambdarank"),
    "XE-NDCG": (XENDCGRanker, "rank_xendcg"),
}


def _ours(ranker_class, train, val, seed):
    s = SETTINGS
    model = ranker_class(
        n_estimators=s["trees"], learning_rate=s["learning_rate"], max_leaf_nodes=s["leaves"],
        min_samples_leaf=s["min_leaf"], max_bins=s["bins"], n_iter_no_change=s["patience"],
        early_stopping=True, random_state=seed,
    )
    model.fit(*train[:2], qid=train[2], X_val=val[0], y_val=val[1], qid_val=val[2])
    return model, model.n_iter_


def _lightgbm(objective, train, val, seed):
    import lightgbm

    s = SETTINGS

    def sorted_with_groups(X, y, qid):
        order = np.argsort(qid, kind="stable")
        return X[order], y[order], np.unique(qid, return_counts=True)[1]

    X, y, group = sorted_with_groups(*train)
    X_val, y_val, group_val = sorted_with_groups(*val)
    model = lightgbm.LGBMRanker(
        objective=objective, n_estimators=s["trees"], learning_rate=s["learning_rate"],
        num_leaves=s["leaves"], min_child_samples=s["min_leaf"], max_bin=s["bins"],
        random_state=seed, verbose=-1, n_jobs=2,
    )
    with warnings.catch_warnings():
        # LightGBM 4.7 renamed eval_set; the old name works on every 4.x.
        warnings.simplefilter("ignore", category=FutureWarning)
        warnings.simplefilter("ignore", category=DeprecationWarning)
        model.fit(
            X, y, group=group, eval_set=[(X_val, y_val)], eval_group=[group_val], eval_at=[10],
            callbacks=[lightgbm.early_stopping(s["patience"], verbose=False)],
        )
    return model, model.best_iteration_


def _test_ndcg(model, test):
    X, y, qid = test
    scores = model.predict(X)
    return [ndcg_score(y, scores, qid=qid, k=k, no_relevant="skip") for k in CUTOFFS]


def _datasets(data_dir):
    for fold in range(1, 6):
        train, val, test = load_letor_folds(os.path.join(data_dir, "mq2008"), fold, as_dense=True)
        yield f"MQ2008 Fold{fold}", train, val, test
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
    yield (
        "LightGBM example",
        (X[train_rows], y[train_rows], qid[train_rows]),
        (X[val_rows], y[val_rows], qid[val_rows]),
        test,
    )


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
    parser.add_argument("--data", default=os.path.normpath(default))
    parser.add_argument(
        "--seeds", type=int, default=5,
        help="seeds per model; NDCG is averaged over them (XE-NDCG draws gamma from its seed)",
    )
    args = parser.parse_args()

    header = f"{'data':<18}{'model':<22}{'trees':>6}{'fit s':>7}" + "".join(
        f"{f'@{k}':>8}" for k in CUTOFFS
    )
    print(header)
    print("-" * len(header))
    results = {name: {"ours": [], "lightgbm": []} for name in OURS}
    mq2008 = {name: {"ours": [], "lightgbm": []} for name in OURS}
    failures = []
    for data_name, train, val, test in _datasets(args.data):
        for name, (ranker_class, lgb_objective) in OURS.items():
            ours, trees, ours_time = _over_seeds(
                lambda seed: _ours(ranker_class, train, val, seed), test, args.seeds
            )
            theirs, lgb_trees, lgb_time = _over_seeds(
                lambda seed: _lightgbm(lgb_objective, train, val, seed), test, args.seeds
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


if __name__ == "__main__":
    main()
