"""The ``demo`` command: every ranker on the bundled LightGBM lambdarank
example data, with early stopping on held-out training queries, printed as a
table of test NDCG@k and fit times beside LightGBM when it is installed.

It is the README's main job (``python -m sklearn_ltr demo``).
"""

import importlib.util
import time
import warnings

import numpy as np

from .._utils.queries import group_queries, rows_of_queries, split_queries
from ..datasets import load_example
from ..metrics import ndcg_score

_CUTOFFS = (1, 3, 5, 10)


def _holdout_queries(X, y, qid, fraction, seed):
    """Split rows into training and validation sets by query."""
    order, offsets, _ = group_queries(qid)
    train_q, val_q = split_queries(offsets, fraction, np.random.default_rng(seed))
    train_rows, _ = rows_of_queries(offsets, train_q, order)
    val_rows, _ = rows_of_queries(offsets, val_q, order)
    return (X[train_rows], y[train_rows], qid[train_rows]), (X[val_rows], y[val_rows], qid[val_rows])


def _our_rankers(args):
    from .._rankers import (
        CalibratedRanker,
        LambdaMARTRanker,
        ListNetRanker,
        XENDCGRanker,
        YetiRankRanker,
    )

    params = dict(
        n_estimators=args.n_estimators,
        learning_rate=0.1,
        max_leaf_nodes=31,
        min_samples_leaf=20,
        n_iter_no_change=args.patience,
        random_state=args.seed,
    )
    return {
        "LambdaMARTRanker": LambdaMARTRanker(**params),
        "XENDCGRanker": XENDCGRanker(**params),
        "ListNetRanker": ListNetRanker(**params),
        "YetiRankRanker": YetiRankRanker(**params),
        # Trained on binarised labels (y > 0), evaluated on the graded ones.
        "CalibratedRanker": CalibratedRanker(binarize=True, **params),
    }


def _fit_ours(model, train, val):
    X, y, qid = train
    X_val, y_val, qid_val = val
    model.fit(X, y, qid=qid, X_val=X_val, y_val=y_val, qid_val=qid_val)
    return model, model.n_iter_


def _fit_lightgbm(train, val, args):
    import lightgbm

    X, y, qid = train
    X_val, y_val, qid_val = val
    # LightGBM wants rows sorted by query and group sizes; ours does not.
    order = np.argsort(qid, kind="stable")
    val_order = np.argsort(qid_val, kind="stable")
    model = lightgbm.LGBMRanker(
        objective="lambdarank",
        n_estimators=args.n_estimators,
        learning_rate=0.1,
        num_leaves=31,
        min_child_samples=20,
        max_bin=255,
        random_state=args.seed,
        verbose=-1,
    )
    with warnings.catch_warnings():
        # LightGBM 4.7 renamed eval_set; the old name works on every 4.x.
        warnings.simplefilter("ignore", category=FutureWarning)
        warnings.simplefilter("ignore", category=DeprecationWarning)
        model.fit(
            X[order],
            y[order],
            group=np.unique(qid, return_counts=True)[1],
            eval_set=[(X_val[val_order], y_val[val_order])],
            eval_group=[np.unique(qid_val, return_counts=True)[1]],
            eval_at=[10],
            callbacks=[lightgbm.early_stopping(args.patience, verbose=False)],
        )
    return model, model.best_iteration_


def _evaluate(model, test):
    X, y, qid = test
    scores = model.predict(X)
    return [ndcg_score(y, scores, qid=qid, k=k) for k in _CUTOFFS]


def demo(args):
    """Train on the bundled example data and print a results table."""
    train_full, test = load_example()
    train, val = _holdout_queries(*train_full, fraction=0.2, seed=args.seed)
    print(
        f"Bundled LightGBM lambdarank example: {len(train[1])} training rows "
        f"({len(np.unique(train[2]))} queries), {len(val[1])} validation rows "
        f"({len(np.unique(val[2]))} queries, for early stopping), {len(test[1])} test rows "
        f"({len(np.unique(test[2]))} queries)."
    )
    rows = []
    for name, model in _our_rankers(args).items():
        _fit_ours(model, train, val)  # compiles the numba kernels (cached on disk)
        start = time.perf_counter()
        model, n_trees = _fit_ours(model, train, val)
        rows.append((name, n_trees, time.perf_counter() - start, _evaluate(model, test)))
    if importlib.util.find_spec("lightgbm") is None:
        print("(LightGBM is not installed: install it to see its numbers beside ours.)")
    else:
        start = time.perf_counter()
        model, n_trees = _fit_lightgbm(train, val, args)
        rows.append(("LightGBM lambdarank", n_trees, time.perf_counter() - start, _evaluate(model, test)))

    header = f"{'model':<22}{'trees':>7}{'fit (s)':>9}" + "".join(f"{f'NDCG@{k}':>9}" for k in _CUTOFFS)
    print()
    print(header)
    print("-" * len(header))
    for name, n_trees, seconds, ndcgs in rows:
        print(f"{name:<22}{n_trees:>7}{seconds:>9.2f}" + "".join(f"{v:>9.4f}" for v in ndcgs))
    print(
        "\nTest NDCG@k: exponential gain 2**y - 1, tied scores averaged, queries without "
        "relevant documents count 1 (sklearn_ltr.metrics.ndcg_score defaults)."
    )
    return rows
