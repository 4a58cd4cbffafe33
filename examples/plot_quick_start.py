"""
===========
Quick start
===========

Train a LambdaMART ranker on the small real dataset bundled with the package
(LightGBM's LambdaRank example: 201 training and 50 test queries, 300
features, relevance grades 0-4), rank the test documents of each query, and
measure NDCG at several cutoffs against two baselines.
"""

# %%
# Load the data
# -------------
# Every row is one (query, document) pair. ``qid`` says which query a row
# belongs to; the rows of a query need not be sorted or contiguous.
import matplotlib.pyplot as plt
import numpy as np

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.datasets import load_example
from sklearn_ltr.metrics import ndcg_score

(X_train, y_train, qid_train), test = load_example()
X_test, y_test, qid_test = test
n_train, n_test = np.unique(qid_train).size, np.unique(qid_test).size
print(f"training: {X_train.shape[0]} documents in {n_train} queries")
print(f"test:     {X_test.shape[0]} documents in {n_test} queries")
print("label counts (grades 0-4):", np.bincount(y_train.astype(int)))

# %%
# Fit and predict
# ---------------
# ``fit`` takes the query ids; ``predict`` does not need them, because it
# scores each document on its own. Scores are only comparable within a query.
ranker = LambdaMARTRanker(
    n_estimators=100, learning_rate=0.1, random_state=0
)
ranker.fit(X_train, y_train, qid=qid_train)
scores = ranker.predict(X_test)

# ``rank`` turns scores into 1-based ranks within each query.
ranks = ranker.rank(X_test, qid=qid_test)
first = qid_test == qid_test[0]
print("ranks of the first test query:", ranks[first])

# %%
# Evaluate
# --------
# :func:`~sklearn_ltr.metrics.ndcg_score` averages ``NDCG@k`` over queries.
# ``ranker.score`` is the same metric at k=10.
test_ndcg = ndcg_score(y_test, scores, qid=qid_test, k=10)
print(f"test NDCG@10: {test_ndcg:.4f}")
print(
    f"ranker.score: {ranker.score(X_test, y_test, qid=qid_test):.4f}"
)

# %%
# Two baselines put the number in context: a random order (tied scores are
# averaged over all orders, so a constant score is exactly the random
# baseline) and the single best feature on the training data.
train_ndcg = [
    ndcg_score(y_train, X_train[:, j], qid=qid_train, k=10)
    for j in range(X_train.shape[1])
]
best_feature = int(np.argmax(train_ndcg))
print(f"best single feature on the training data: {best_feature}")

cutoffs = np.arange(1, 11)
curves = {
    "LambdaMART": scores,
    f"feature {best_feature}": X_test[:, best_feature],
    "random order": np.zeros_like(scores),
}
fig, ax = plt.subplots(figsize=(6, 4))
for name, s in curves.items():
    values = [
        ndcg_score(y_test, s, qid=qid_test, k=k) for k in cutoffs
    ]
    ax.plot(cutoffs, values, marker="o", label=name)
ax.set_xlabel("cutoff k")
ax.set_ylabel("mean test NDCG@k")
ax.set_title("Bundled LightGBM example data, 50 test queries")
ax.set_xticks(cutoffs)
ax.legend()
fig.tight_layout()
plt.show()
