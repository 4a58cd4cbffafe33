"""
=========================================================
LambdaMART, XE-NDCG and ListNet: NDCG against the trees
=========================================================

The three rankers share one tree engine and differ only in the loss whose
gradients the trees fit:

* :class:`~sklearn_ltr.LambdaMARTRanker`: pairwise RankNet gradients, each
  pair weighted by how much swapping it would change NDCG;
* :class:`~sklearn_ltr.XENDCGRanker`: a listwise softmax cross entropy
  against a target built from ``2**y`` with random jitter (Bruch, WWW 2020),
  a convex bound on NDCG;
* :class:`~sklearn_ltr.ListNetRanker`: the listwise softmax cross entropy
  against ``y / sum(y)`` (Bruch et al., ICTIR 2019).

``staged_predict`` yields the scores after each tree, so one fit per model
gives the whole curve of test NDCG against the number of trees. On such a
small dataset (50 test queries) differences of a few thousandths are noise;
see :ref:`benchmarks` for the five-fold MQ2008 comparison with t-tests.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from sklearn_ltr import LambdaMARTRanker, ListNetRanker, XENDCGRanker
from sklearn_ltr.datasets import load_example
from sklearn_ltr.metrics import ndcg_score

(X_train, y_train, qid_train), (X_test, y_test, qid_test) = (
    load_example()
)

n_trees = 150
common = dict(
    n_estimators=n_trees,
    learning_rate=0.1,
    early_stopping=False,
    random_state=0,
)
rankers = {
    "LambdaMART": LambdaMARTRanker(**common),
    "XE-NDCG": XENDCGRanker(**common),
    "ListNet": ListNetRanker(**common),
}

# %%
# Fit each ranker once and score every prefix of its trees on the training
# and the test queries.
curves = {}
for name, ranker in rankers.items():
    ranker.fit(X_train, y_train, qid=qid_train)
    train = [
        ndcg_score(y_train, s, qid=qid_train, k=10)
        for s in ranker.staged_predict(X_train)
    ]
    test = [
        ndcg_score(y_test, s, qid=qid_test, k=10)
        for s in ranker.staged_predict(X_test)
    ]
    curves[name] = (np.array(train), np.array(test))
    best = int(np.argmax(test))
    print(
        f"{name:11s} test NDCG@10 after {n_trees} trees "
        f"{test[-1]:.4f}; best {test[best]:.4f} at {best + 1} trees"
    )

# %%
# Training NDCG keeps climbing while test NDCG levels off: the gap is what
# early stopping (next example) watches on held-out queries.
trees = np.arange(1, n_trees + 1)
fig, (ax_train, ax_test) = plt.subplots(
    1, 2, figsize=(10, 4), sharex=True
)
for name, (train, test) in curves.items():
    ax_train.plot(trees, train, label=name)
    ax_test.plot(trees, test, label=name)
ax_train.set_title("training queries")
ax_test.set_title("test queries")
for ax in (ax_train, ax_test):
    ax.set_xlabel("number of trees")
    ax.set_ylabel("mean NDCG@10")
    ax.grid(alpha=0.3)
ax_test.legend(loc="lower right")
fig.tight_layout()
plt.show()
