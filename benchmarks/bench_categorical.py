"""Ranking quality with native categorical features against ordinal codes and LightGBM (issue 18).

Data: ``make_ranking`` with ``--queries`` (750) queries of about
``--docs-per-query`` (60) documents and ``--features`` (60) columns, of which
the last ``len(--n-categories)`` are categorical with ``--n-categories``
(20 100 255 1000) categories: Zipf frequencies, codes in random order, a
shift of the relevance per category and, in the first and third of them, a
category-dependent slope on a hidden factor (see ``make_ranking``). The
first two thirds of the queries train, the last third is held out for test
NDCG@10. Each seed draws a new data set and seeds the models.

``--world catalogue`` replaces ``make_ranking`` with a world of another
structure, built here and nowhere else: each document has 6 numeric
features, a brand (60 categories) and a merchant (the cardinality of the
last ``--n-categories`` entry); relevance is a merchant effect, a
merchant-specific slope on the first numeric feature (what price is worth
depends on the merchant), a brand effect, a saturating and a gated
numeric term, a per-query slope on another feature, and noise; labels 0-4
cut at the 50/80/95/99th percentiles. ``--frequencies`` chooses Zipf or
uniform category usage in both worlds.

Models (``--models``, all by default):

- ``categorical``: ``LambdaMARTRanker(categorical_features=[the categorical
  columns])``;
- ``categorical-ts``: the same with ``target_statistics="ordered"`` (a
  statistic column per categorical column beside the native splits);
- ``categorical-combinations``: the same with
  ``target_statistics="combinations"`` (statistics of each categorical
  column, of pairs of them, and of each with the quartiles of the numeric
  columns a short fit finds most important);
- ``ordinal``: the same ranker on the same codes, nothing declared (the codes
  are ordinary numbers);
- ``numeric-only``: the same ranker without the categorical columns, the
  floor that shows what the categories are worth;
- ``yetirank-categorical``: ``YetiRankRanker`` with the same
  ``categorical_features``, to tell CatBoost's objective from its
  handling of categories (with categorical features it grows leaf-wise
  trees); ``yetirank-categorical-ts``: the same with
  ``target_statistics="ordered"``; ``yetirank-categorical-combinations``:
  with ``target_statistics="combinations"``;
- ``yetirank-symmetric-categorical`` and ``-ts``: the same two with
  ``grow_policy="symmetric"`` (depth 6, one split per level, categorical
  level splits), CatBoost's tree shape, and
  ``yetirank-symmetric-categorical-combinations`` with
  ``target_statistics="combinations"``;
- ``lightgbm-categorical``: ``LGBMRanker(objective="lambdarank")`` with the
  same columns as ``categorical_feature`` in ``fit``;
- ``lightgbm-ordinal``: LightGBM on the same codes, nothing declared;
- ``catboost-categorical``: ``CatBoostRanker(loss_function="YetiRank")``
  with the same columns as ``cat_features`` (its target statistics and
  one-hot splits at CatBoost's defaults), the same trees and learning
  rate, CatBoost's default depth 6 (symmetric trees of 64 leaves);
- ``yetirank-numeric-only`` and ``catboost-numeric-only``: our
  ``YetiRankRanker`` (symmetric trees, its default without categorical
  features) and CatBoost without the categorical columns, beside
  ``numeric-only``: how far apart the engines are where no category is
  involved.

All train ``--trees`` (300) trees without early stopping, with the same
settings: learning rate 0.1, 31 leaves (``max_leaf_nodes``/``num_leaves``),
at least 20 rows per leaf (``min_samples_leaf``/``min_child_samples``), 255
bins (``max_bins``/``max_bin``), 2 threads; the other parameters at each
library's defaults, which agree (``bench_fit.py``'s docstring lists them).
LightGBM's own regularisation of categorical splits stays at its defaults
(``cat_smooth=10``, ``cat_l2=10``, ``max_cat_threshold=32``,
``min_data_per_group=100``, ``max_cat_to_onehot=4``); ours has no such
parameters beyond the ordinary ones. Fixed tree counts rather than early
stopping keep the validation curve's noise out of the comparison (see
``bench_quality.py --curves``).

Test NDCG@10: ``sklearn_ltr.metrics.ndcg_score`` on every library's
predictions, exponential gains, ties averaged, queries without relevant
documents skipped. Printed: a table of test NDCG@10 per model, one column per
seed, their mean and standard deviation, and the median fit time; then the
per-seed differences of the pairs that answer issue 18 (native against
ordinal, ours against LightGBM, each library's gain from declaring the
columns), their mean and standard deviation.

The ``categorical`` model needs a ``sklearn_ltr`` whose ``LambdaMARTRanker``
takes ``categorical_features``; without it the script stops with a message,
and ``--models`` can name the other models only.

``--memory`` runs every fit in a process of its own (spawned) and reports
the peak resident memory the fit added: the process's peak during the fit
(``VmHWM``, reset just before it) minus its resident memory after imports,
data and a warm-up fit of 2 trees on 20 queries (so numba's compilation and
the libraries' first-call setup are not counted). Linux only. The
differences table then carries paired t-tests over seeds where there are
at least 3.

Run: ``python benchmarks/bench_categorical.py [--seeds 5] [--trees 300]
[--models categorical ordinal ...] [--world catalogue] [--frequencies
uniform] [--n-categories 60 10000] [--memory]``. Issue 30's grid: ``--world
make_ranking`` and ``catalogue``, ``--n-categories 60 K`` for K in 300,
1000, 10000, 100000, ``--frequencies`` zipf and uniform, 5 seeds. With the defaults, the four models
other than ``categorical`` took 2 minutes of CPU time in all (6 minutes of
wall time on a shared, loaded 2-core machine).
"""

import argparse
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from _memory import peak_rss_bytes, reset_peak_rss, rss_bytes
from _report import fmt_p, paired

from sklearn_ltr import LambdaMARTRanker, YetiRankRanker
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.metrics import ndcg_score_per_query

SETTINGS = dict(learning_rate=0.1, leaves=31, min_leaf=20, bins=255, threads=2)
MODELS = ("categorical", "categorical-ts", "categorical-combinations", "ordinal", "numeric-only",
          "yetirank-categorical", "yetirank-categorical-ts", "yetirank-categorical-combinations",
          "yetirank-symmetric-categorical",
          "yetirank-symmetric-categorical-ts", "yetirank-symmetric-categorical-combinations",
          "lightgbm-categorical", "lightgbm-ordinal",
          "catboost-categorical", "yetirank-numeric-only", "catboost-numeric-only")
LABELS = {
    "categorical": "ours categorical",
    "categorical-ts": "ours categ. + TS",
    "categorical-combinations": "ours categ. + combos",
    "ordinal": "ours ordinal",
    "numeric-only": "ours numeric only",
    "yetirank-categorical": "ours YetiRank categ.",
    "yetirank-categorical-ts": "ours Yeti categ.+TS",
    "yetirank-categorical-combinations": "ours Yeti categ.+combos",
    "yetirank-symmetric-categorical": "ours Yeti sym. categ.",
    "yetirank-symmetric-categorical-ts": "ours Yeti sym.+TS",
    "yetirank-symmetric-categorical-combinations": "ours Yeti sym.+combos",
    "lightgbm-categorical": "LightGBM categorical",
    "lightgbm-ordinal": "LightGBM ordinal",
    "catboost-categorical": "CatBoost categorical",
    "yetirank-numeric-only": "ours Yeti numeric only",
    "catboost-numeric-only": "CatBoost numeric only",
}
# (a, b): rows "a - b" of the differences table, when both were run.
PAIRS = (
    ("categorical", "ordinal"),
    ("categorical", "lightgbm-categorical"),
    ("lightgbm-categorical", "lightgbm-ordinal"),
    ("categorical", "catboost-categorical"),
    ("categorical-ts", "categorical"),
    ("categorical-ts", "lightgbm-categorical"),
    ("categorical-ts", "catboost-categorical"),
    ("categorical-combinations", "categorical-ts"),
    ("categorical-combinations", "lightgbm-categorical"),
    ("categorical-combinations", "catboost-categorical"),
    ("yetirank-categorical-combinations", "lightgbm-categorical"),
    ("yetirank-categorical-combinations", "catboost-categorical"),
    ("yetirank-categorical", "catboost-categorical"),
    ("yetirank-categorical-ts", "catboost-categorical"),
    ("yetirank-symmetric-categorical", "yetirank-categorical"),
    ("yetirank-symmetric-categorical", "catboost-categorical"),
    ("yetirank-symmetric-categorical-ts", "catboost-categorical"),
    ("yetirank-symmetric-categorical-combinations", "catboost-categorical"),
    ("yetirank-symmetric-categorical-combinations", "lightgbm-categorical"),
    ("yetirank-symmetric-categorical-combinations", "yetirank-categorical-combinations"),
    ("ordinal", "lightgbm-ordinal"),
    ("categorical", "numeric-only"),
    ("numeric-only", "catboost-numeric-only"),
    ("yetirank-numeric-only", "catboost-numeric-only"),
    ("ordinal", "numeric-only"),
)
TRAIN_SHARE = 2 / 3


def check_categorical_support():
    """Stop with a message unless LambdaMARTRanker takes ``categorical_features``."""
    if "categorical_features" not in LambdaMARTRanker().get_params():
        import sklearn_ltr

        sys.exit(
            "bench_categorical.py: LambdaMARTRanker has no categorical_features parameter in "
            f"the sklearn_ltr imported from {os.path.dirname(sklearn_ltr.__file__)}; native "
            "categorical features (issue 18) are needed for the 'categorical' model. Leave it "
            "out with --models to run the others."
        )


def catalogue(seed, n_queries, docs_per_query, n_merchants, frequencies):
    """The ``catalogue`` world (see the module docstring): X (6 numeric
    columns, brand, merchant), y, qid and the categorical columns."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(max(docs_per_query // 2, 2), docs_per_query * 3 // 2 + 1, n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    n = qid.size

    def usage(k):
        if frequencies == "uniform":
            return rng.integers(0, k, n)
        share = 1.0 / np.arange(1, k + 1)
        return rng.permutation(k)[rng.choice(k, n, p=share / share.sum())]

    merchant, brand = usage(n_merchants), usage(60)
    merchant_effect, merchant_slope = rng.normal(0, 1, (2, n_merchants))
    brand_effect = rng.normal(0, 0.7, 60)
    numeric = rng.normal(size=(n, 6))
    query_slope = rng.normal(0, 0.5, n_queries)[qid]
    relevance = (merchant_effect[merchant] + merchant_slope[merchant] * numeric[:, 0]
                 + brand_effect[brand] + 1.2 * np.tanh(numeric[:, 1])
                 + 0.8 * (numeric[:, 2] > 0.5) * numeric[:, 3] + query_slope * numeric[:, 4]
                 + rng.normal(0, 1, n))
    y = np.searchsorted(np.quantile(relevance, [0.5, 0.8, 0.95, 0.99]), relevance).astype(float)
    return np.column_stack([numeric, brand, merchant]).astype(float), y, qid, [6, 7]


def draw(seed, n_queries, docs_per_query, n_features, n_categories, world="make_ranking",
         frequencies="zipf"):
    """Training and test data of one seed, and the categorical columns.

    Returns
    -------
    train, test : tuple of (X, y, qid)
        The first ``TRAIN_SHARE`` of the queries, and the rest.
    columns : list of int
        Indices of the categorical columns.
    """
    if world == "catalogue":
        X, y, qid, columns = catalogue(seed, n_queries, docs_per_query, n_categories[-1],
                                       frequencies)
    else:
        n_categorical = len(n_categories)
        X, y, qid = make_ranking(
            n_queries, docs_per_query=docs_per_query, n_features=n_features,
            n_categorical=n_categorical, n_categories=n_categories,
            category_frequencies=frequencies, random_state=seed,
        )
        columns = list(range(n_features - n_categorical, n_features))
    is_train = qid < int(round(TRAIN_SHARE * n_queries))
    return ((X[is_train], y[is_train], qid[is_train]), (X[~is_train], y[~is_train], qid[~is_train]),
            columns)


def fit_and_score(model, train, test, columns, seed, n_trees):
    """Fit one model and return (test NDCG@10, fit seconds).

    Parameters
    ----------
    model : str
        One of ``MODELS``.
    train, test : tuple of (X, y, qid)
        Rows grouped by query (``make_ranking``'s order), as LightGBM needs.
    columns : list of int
        The categorical columns.
    seed : int
        ``random_state`` of the model.
    n_trees : int
        Number of trees.

    Returns
    -------
    ndcg : ndarray of shape (n_test_queries,)
        Test NDCG@10 of each test query (NaN where the query has no
        relevant document).
    seconds : float
        Fit time.
    """
    X, y, qid = train
    X_test, y_test, qid_test = test
    s = SETTINGS
    if model.endswith("numeric-only"):
        keep = np.setdiff1d(np.arange(X.shape[1]), columns)
        X, X_test = X[:, keep], X_test[:, keep]
        columns = []
    start = time.perf_counter()
    if model.startswith("catboost"):
        import catboost

        def frame(A):  # CatBoost takes categories as integers or text, not floats
            out = A.astype(object)
            for c in columns:
                out[:, c] = A[:, c].astype(np.int64)
            return out

        X, X_test = frame(X), frame(X_test)
        ranker = catboost.CatBoostRanker(
            loss_function="YetiRank", iterations=n_trees, learning_rate=s["learning_rate"],
            max_bin=s["bins"], thread_count=s["threads"], random_seed=seed, verbose=0,
            cat_features=columns, allow_writing_files=False,
        )
        ranker.fit(X, y, group_id=qid)
    elif model.startswith("lightgbm"):
        import lightgbm

        ranker = lightgbm.LGBMRanker(
            objective="lambdarank", n_estimators=n_trees, learning_rate=s["learning_rate"],
            num_leaves=s["leaves"], min_child_samples=s["min_leaf"], max_bin=s["bins"],
            n_jobs=s["threads"], random_state=seed, verbose=-1,
        )
        ranker.fit(
            X, y, group=np.unique(qid, return_counts=True)[1],
            # On NumPy input "auto" declares no column categorical.
            categorical_feature=columns if model == "lightgbm-categorical" else "auto",
        )
    else:
        extra = {"categorical_features": columns} if "categorical" in model else {}
        if model.endswith("-ts"):
            extra["target_statistics"] = "ordered"
        if model.endswith("-combinations"):
            extra["target_statistics"] = "combinations"
        if "symmetric" in model:
            extra["grow_policy"] = "symmetric"
        ranker = (YetiRankRanker if model.startswith("yetirank") else LambdaMARTRanker)(
            n_estimators=n_trees, learning_rate=s["learning_rate"], max_leaf_nodes=s["leaves"],
            min_samples_leaf=s["min_leaf"], max_bins=s["bins"], n_jobs=s["threads"],
            early_stopping=False, random_state=seed, **extra,
        )
        ranker.fit(X, y, qid=qid)
    seconds = time.perf_counter() - start
    _, ndcg = ndcg_score_per_query(y_test, ranker.predict(X_test), qid=qid_test, k=10,
                                   no_relevant="skip")
    return ndcg, seconds


def fit_in_own_process(model, data_args, seed, n_trees):
    """Run in a spawned process: draw the data, warm up on 20 training
    queries with 2 trees (compilation, first-call setup), then fit.

    Returns
    -------
    ndcg, seconds
        As :func:`fit_and_score`.
    added_mb : float
        Peak resident memory during the fit minus the resident memory
        before it.
    """
    train, test, columns = draw(seed, *data_args)
    X, y, qid = train
    few = qid < qid.min() + 20
    fit_and_score(model, (X[few], y[few], qid[few]), test, columns, seed, 2)
    reset_peak_rss()
    before = rss_bytes()
    ndcg, seconds = fit_and_score(model, train, test, columns, seed, n_trees)
    return ndcg, seconds, (peak_rss_bytes() - before) / 2**20


def print_tables(ndcg, seconds, memory, models, n_seeds):
    """The NDCG@10 table per model and the table of differences per pair.

    ``ndcg[m]`` holds one per-query array per seed; a difference's p is a
    paired t-test over the test queries of every seed together.
    """
    seeds = "".join(f"{f'seed {i}':>9}" for i in range(n_seeds))
    header = (f"{'model':<22}{seeds}{'mean':>9}{'sd':>8}{'fit s':>8}"
              + (f"{'MB added':>10}" if memory else ""))
    print("\nTest NDCG@10")
    print(header)
    print("-" * len(header))
    for m in models:
        v = np.array([np.nanmean(q) for q in ndcg[m]])
        print(f"{LABELS[m]:<22}" + "".join(f"{x:>9.4f}" for x in v)
              + f"{v.mean():>9.4f}{v.std(ddof=1) if v.size > 1 else 0.0:>8.4f}"
              + f"{np.median(seconds[m]):>8.2f}"
              + (f"{np.median(memory[m]):>10.0f}" if memory else ""))
    pairs = [(a, b) for a, b in PAIRS if a in models and b in models]
    if not pairs:
        return
    header = f"{'difference':<46}{seeds}{'mean':>9}{'p':>10}"
    print("\nPer-seed differences of test NDCG@10 (p: paired t-test over the test queries of all "
          "seeds)")
    print(header)
    print("-" * len(header))
    for a, b in pairs:
        d = np.array([np.nanmean(x) - np.nanmean(z) for x, z in zip(ndcg[a], ndcg[b])])
        (_, p), = paired(np.concatenate(ndcg[a])[None], np.concatenate(ndcg[b])[None])
        print(f"{LABELS[a] + ' - ' + LABELS[b]:<46}" + "".join(f"{x:>+9.4f}" for x in d)
              + f"{d.mean():>+9.4f}{fmt_p(p):>10}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help="data sets (and model seeds)")
    parser.add_argument("--trees", type=int, default=300, help="trees per model")
    parser.add_argument("--queries", type=int, default=750,
                        help="queries per data set, two thirds for training")
    parser.add_argument("--docs-per-query", type=int, default=60)
    parser.add_argument("--features", type=int, default=60,
                        help="columns, the categorical ones included")
    parser.add_argument("--n-categories", type=int, nargs="+", default=[20, 100, 255, 1000],
                        help="categories of each categorical column (one number per column)")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--world", choices=("make_ranking", "catalogue"), default="make_ranking",
                        help="make_ranking, or the catalogue world of another structure (its "
                             "categorical columns: 60 brands and the last --n-categories merchants)")
    parser.add_argument("--frequencies", choices=("zipf", "uniform"), default="zipf",
                        help="how often each category is used")
    parser.add_argument("--memory", action="store_true",
                        help="every fit in a spawned process of its own, reporting the peak memory "
                             "it added")
    args = parser.parse_args()
    models = [m for m in MODELS if m in args.models]
    if "categorical" in models:
        check_categorical_support()

    if args.world == "catalogue":
        print(f"catalogue world: {args.queries} queries of about {args.docs_per_query} documents, "
              f"6 numeric features, 60 brands and {args.n_categories[-1]} merchants ("
              f"{args.frequencies} usage); {args.trees} trees; test on the last third of the "
              "queries", flush=True)
    else:
        print(f"{args.queries} queries of about {args.docs_per_query} documents, {args.features} "
              f"features, the last {len(args.n_categories)} categorical with {args.n_categories} "
              f"categories ({args.frequencies} usage); {args.trees} trees; test on the last third "
              "of the queries", flush=True)
    data_args = (args.queries, args.docs_per_query, args.features, args.n_categories, args.world,
                 args.frequencies)
    ndcg = {m: [] for m in models}
    seconds = {m: [] for m in models}
    memory = {m: [] for m in models} if args.memory else None
    for seed in range(args.seeds):
        train, test, columns = draw(seed, *data_args)
        for m in models:
            if args.memory:
                # spawn: a fresh interpreter, whose peak memory is this fit's alone
                with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as one:
                    value, secs, added = one.submit(fit_in_own_process, m, data_args, seed,
                                                    args.trees).result()
                memory[m].append(added)
            else:
                value, secs = fit_and_score(m, train, test, columns, seed, args.trees)
            ndcg[m].append(value)
            seconds[m].append(secs)
        print(f"  seed {seed}: " + ", ".join(f"{LABELS[m]} {np.nanmean(ndcg[m][-1]):.4f}"
                                            for m in models), flush=True)
    print_tables(ndcg, seconds, memory, models, args.seeds)
    print("\nNDCG@10 on held-out queries: exponential gain, ties averaged, queries without "
          "relevant documents skipped; sd over seeds.")


if __name__ == "__main__":
    main()
