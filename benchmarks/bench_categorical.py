"""Ranking quality with native categorical features against ordinal codes and LightGBM (issue 18).

Data: ``make_ranking`` with ``--queries`` (750) queries of about
``--docs-per-query`` (60) documents and ``--features`` (60) columns, of which
the last ``len(--n-categories)`` are categorical with ``--n-categories``
(20 100 255 1000) categories: Zipf frequencies, codes in random order, a
shift of the relevance per category and, in the first and third of them, a
category-dependent slope on a hidden factor (see ``make_ranking``). The
first two thirds of the queries train, the last third is held out for test
NDCG@10. Each seed draws a new data set and seeds the models.

Models (``--models``, all by default):

- ``categorical``: ``LambdaMARTRanker(categorical_features=[the categorical
  columns])``;
- ``ordinal``: the same ranker on the same codes, nothing declared (the codes
  are ordinary numbers);
- ``numeric-only``: the same ranker without the categorical columns, the
  floor that shows what the categories are worth;
- ``lightgbm-categorical``: ``LGBMRanker(objective="lambdarank")`` with the
  same columns as ``categorical_feature`` in ``fit``;
- ``lightgbm-ordinal``: LightGBM on the same codes, nothing declared.

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

Run: ``python benchmarks/bench_categorical.py [--seeds 5] [--trees 300]
[--models categorical ordinal ...]``. With the defaults, the four models
other than ``categorical`` took 2 minutes of CPU time in all (6 minutes of
wall time on a shared, loaded 2-core machine).
"""

import argparse
import os
import sys
import time

import numpy as np

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.metrics import ndcg_score

SETTINGS = dict(learning_rate=0.1, leaves=31, min_leaf=20, bins=255, threads=2)
MODELS = ("categorical", "ordinal", "numeric-only", "lightgbm-categorical", "lightgbm-ordinal")
LABELS = {
    "categorical": "ours categorical",
    "ordinal": "ours ordinal",
    "numeric-only": "ours numeric only",
    "lightgbm-categorical": "LightGBM categorical",
    "lightgbm-ordinal": "LightGBM ordinal",
}
# (a, b): rows "a - b" of the differences table, when both were run.
PAIRS = (
    ("categorical", "ordinal"),
    ("categorical", "lightgbm-categorical"),
    ("lightgbm-categorical", "lightgbm-ordinal"),
    ("ordinal", "lightgbm-ordinal"),
    ("categorical", "numeric-only"),
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


def draw(seed, n_queries, docs_per_query, n_features, n_categories):
    """Training and test data of one seed, and the categorical columns.

    Returns
    -------
    train, test : tuple of (X, y, qid)
        The first ``TRAIN_SHARE`` of the queries, and the rest.
    columns : list of int
        Indices of the categorical columns, the last ones of X.
    """
    n_categorical = len(n_categories)
    X, y, qid = make_ranking(
        n_queries, docs_per_query=docs_per_query, n_features=n_features,
        n_categorical=n_categorical, n_categories=n_categories, random_state=seed,
    )
    is_train = qid < int(round(TRAIN_SHARE * n_queries))
    columns = list(range(n_features - n_categorical, n_features))
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
    ndcg : float
        Test NDCG@10.
    seconds : float
        Fit time.
    """
    X, y, qid = train
    X_test, y_test, qid_test = test
    s = SETTINGS
    if model == "numeric-only":
        keep = np.setdiff1d(np.arange(X.shape[1]), columns)
        X, X_test = X[:, keep], X_test[:, keep]
    start = time.perf_counter()
    if model.startswith("lightgbm"):
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
        extra = {"categorical_features": columns} if model == "categorical" else {}
        ranker = LambdaMARTRanker(
            n_estimators=n_trees, learning_rate=s["learning_rate"], max_leaf_nodes=s["leaves"],
            min_samples_leaf=s["min_leaf"], max_bins=s["bins"], n_jobs=s["threads"],
            early_stopping=False, random_state=seed, **extra,
        )
        ranker.fit(X, y, qid=qid)
    seconds = time.perf_counter() - start
    ndcg = ndcg_score(y_test, ranker.predict(X_test), qid=qid_test, k=10, no_relevant="skip")
    return ndcg, seconds


def print_tables(ndcg, seconds, models, n_seeds):
    """The NDCG@10 table per model and the table of differences per pair."""
    seeds = "".join(f"{f'seed {i}':>9}" for i in range(n_seeds))
    header = f"{'model':<22}{seeds}{'mean':>9}{'sd':>8}{'fit s':>8}"
    print("\nTest NDCG@10")
    print(header)
    print("-" * len(header))
    for m in models:
        v = np.array(ndcg[m])
        print(f"{LABELS[m]:<22}" + "".join(f"{x:>9.4f}" for x in v)
              + f"{v.mean():>9.4f}{v.std(ddof=1) if v.size > 1 else 0.0:>8.4f}"
              + f"{np.median(seconds[m]):>8.2f}")
    pairs = [(a, b) for a, b in PAIRS if a in models and b in models]
    if not pairs:
        return
    header = f"{'difference':<46}{seeds}{'mean':>9}{'sd':>8}"
    print("\nPer-seed differences of test NDCG@10")
    print(header)
    print("-" * len(header))
    for a, b in pairs:
        d = np.array(ndcg[a]) - np.array(ndcg[b])
        print(f"{LABELS[a] + ' - ' + LABELS[b]:<46}" + "".join(f"{x:>+9.4f}" for x in d)
              + f"{d.mean():>+9.4f}{d.std(ddof=1) if d.size > 1 else 0.0:>8.4f}")


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
    args = parser.parse_args()
    models = [m for m in MODELS if m in args.models]
    if "categorical" in models:
        check_categorical_support()

    print(f"{args.queries} queries of about {args.docs_per_query} documents, {args.features} "
          f"features, the last {len(args.n_categories)} categorical with {args.n_categories} "
          f"categories; {args.trees} trees; test on the last third of the queries", flush=True)
    ndcg = {m: [] for m in models}
    seconds = {m: [] for m in models}
    for seed in range(args.seeds):
        train, test, columns = draw(seed, args.queries, args.docs_per_query, args.features,
                                    args.n_categories)
        for m in models:
            value, secs = fit_and_score(m, train, test, columns, seed, args.trees)
            ndcg[m].append(value)
            seconds[m].append(secs)
        print(f"  seed {seed}: " + ", ".join(f"{LABELS[m]} {ndcg[m][-1]:.4f}" for m in models),
              flush=True)
    print_tables(ndcg, seconds, models, args.seeds)
    print("\nNDCG@10 on held-out queries: exponential gain, ties averaged, queries without "
          "relevant documents skipped; sd over seeds.")


if __name__ == "__main__":
    main()
