"""
==================================
Early stopping and staged scores
==================================

Boosting adds trees until ``n_estimators`` unless early stopping watches the
NDCG of held-out queries and stops once it has not improved by more than
``tol`` for ``n_iter_no_change`` iterations. The model then keeps the trees
up to the best validation score.

The held-out queries come either from the training data
(``validation_fraction`` of the *queries*, never a split of a query's rows),
or from an explicit ``X_val, y_val, qid_val``. ``early_stopping="auto"`` turns
early stopping on when a validation set is given or the training data has
more than 10,000 rows; the bundled data has 3,005, so the first model asks
for it explicitly.

The bundled data is small, and that shows: 20% of its training queries is
about 40 queries, whose ``NDCG@10`` jumps from tree to tree. Early stopping then
reacts to noise, and the last section measures what that costs on the test
queries. On large data, where it is on by default, the validation curve is
smooth and the stop is reliable; on small data, cross-validating
``n_estimators`` (see the grid-search example) is the safer choice.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import GroupShuffleSplit

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.datasets import load_example
from sklearn_ltr.metrics import ndcg_score

(X, y, qid), (X_test, y_test, qid_test) = load_example()


def trees(n):
    """'1 tree', '42 trees'."""
    return f"{n} tree" if n == 1 else f"{n} trees"


# %%
# Holding out a fraction of the training queries
# ----------------------------------------------
# ``train_score_`` and ``validation_score_`` hold the NDCG at cutoff
# ``validation_ndcg_k`` (10) after every iteration, the first entry for
# the model with no trees.
ranker = LambdaMARTRanker(
    n_estimators=300,
    learning_rate=0.05,
    early_stopping=True,
    validation_fraction=0.2,
    n_iter_no_change=50,
    random_state=0,
)
ranker.fit(X, y, qid=qid)
iterations = np.arange(ranker.validation_score_.size)
print(
    f"iterations run: {iterations[-1]}, trees kept: {ranker.n_iter_}"
)
print(
    f"best validation NDCG@10: {ranker.validation_score_.max():.4f}"
)

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(
    iterations, ranker.train_score_, label="training queries (80%)"
)
ax.plot(
    iterations,
    ranker.validation_score_,
    label="held-out queries (20%)",
)
ax.axvline(
    ranker.n_iter_,
    color="gray",
    linestyle="--",
    label=f"kept: {trees(ranker.n_iter_)}",
)
ax.set_xlabel("iteration")
ax.set_ylabel("NDCG@10")
ax.set_title("validation_fraction=0.2: about 40 held-out queries")
ax.legend(loc="lower right")
fig.tight_layout()

# %%
# An explicit validation set
# --------------------------
# Split the training queries yourself (here with ``GroupShuffleSplit``, so a
# query stays on one side) and pass the held-out part as ``X_val, y_val,
# qid_val``; early stopping then turns on by itself.
train_idx, val_idx = next(
    GroupShuffleSplit(test_size=0.2, random_state=0).split(X, y, qid)
)
X_tr, y_tr, qid_tr = X[train_idx], y[train_idx], qid[train_idx]
X_val, y_val, qid_val = X[val_idx], y[val_idx], qid[val_idx]

stopped = LambdaMARTRanker(
    n_estimators=300,
    learning_rate=0.05,
    n_iter_no_change=50,
    random_state=0,
)
stopped.fit(
    X_tr, y_tr, qid=qid_tr, X_val=X_val, y_val=y_val, qid_val=qid_val
)
print(
    f"early stopping on: {stopped.do_early_stopping_}, "
    f"trees kept: {stopped.n_iter_}"
)

# %%
# Forty validation queries give a noisy NDCG, which is why ``n_iter_no_change``
# is 50 here: with a patience of 20 at ``learning_rate=0.05`` the run stops
# after a lucky early peak. ``tol`` sets how much of an improvement counts, so
# a larger value ends the run sooner; the trees kept are still those up to the
# best validation score seen before the stop.
settings = [(20, 0.0), (50, 0.0), (50, 1e-3), (50, 1e-2)]
for n_iter_no_change, tol in settings:
    model = LambdaMARTRanker(
        n_estimators=300,
        learning_rate=0.05,
        n_iter_no_change=n_iter_no_change,
        tol=tol,
        random_state=0,
    )
    model.fit(X_tr, y_tr, qid=qid_tr,
              X_val=X_val, y_val=y_val, qid_val=qid_val)
    print(
        f"n_iter_no_change={n_iter_no_change}, tol={tol:g}: "
        f"{model.validation_score_.size - 1} iterations run, "
        f"{trees(model.n_iter_)} kept"
    )

# %%
# What early stopping gives up, seen with ``staged_predict``
# ----------------------------------------------------------
# Train the same model without early stopping and score every prefix of its
# trees on the test queries, which neither model has seen. ``staged_predict``
# yields the scores after 1, 2, ... trees, so one fit gives the whole curve.
full = LambdaMARTRanker(
    n_estimators=300,
    learning_rate=0.05,
    early_stopping=False,
    random_state=0,
)
full.fit(X_tr, y_tr, qid=qid_tr)
test_curve = np.array(
    [
        ndcg_score(y_test, s, qid=qid_test, k=10)
        for s in full.staged_predict(X_test)
    ]
)
stopped_test = ndcg_score(
    y_test, stopped.predict(X_test), qid=qid_test, k=10
)
print(
    f"test NDCG@10, early-stopped model ({trees(stopped.n_iter_)}): "
    f"{stopped_test:.4f}"
)
print(f"test NDCG@10, all 300 trees: {test_curve[-1]:.4f}")
best_prefix = int(np.argmax(test_curve)) + 1
print(
    f"best prefix on test ({trees(best_prefix)}): "
    f"{test_curve.max():.4f}"
)

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(
    np.arange(1, test_curve.size + 1),
    test_curve,
    label="300-tree model, staged",
)
ax.plot(
    stopped.n_iter_,
    stopped_test,
    "o",
    markersize=9,
    label="early-stopped model",
)
ax.set_xlabel("number of trees")
ax.set_ylabel("test NDCG@10")
ax.set_title("Test NDCG of every prefix of a 300-tree model")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
