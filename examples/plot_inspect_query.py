"""
==================================
Inspecting the ranking of a query
==================================

A mean NDCG hides how single queries fare. This example looks at the
per-query values of a trained ranker, picks a typical query (the median
NDCG), and lays out its documents in a small table: label, score, the rank
the model gives and the rank the labels deserve.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.datasets import load_example
from sklearn_ltr.metrics import ndcg_score_per_query

(X, y, qid), (X_test, y_test, qid_test) = load_example()
ranker = LambdaMARTRanker(n_estimators=100, random_state=0)
ranker.fit(X, y, qid=qid)
scores = ranker.predict(X_test)

# %%
# NDCG per query
# --------------
# The ``*_per_query`` metrics return the query ids (sorted) and one value per
# query, ready for a paired test between two models or for a histogram.
queries, ndcg = ndcg_score_per_query(
    y_test, scores, qid=qid_test, k=10
)
print(
    f"mean NDCG@10 {ndcg.mean():.4f}; median {np.median(ndcg):.4f}; "
    f"worst {ndcg.min():.4f}"
)

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.hist(ndcg, bins=np.linspace(0, 1, 21), edgecolor="white")
ax.set_xlabel("NDCG@10 of a test query")
ax.set_ylabel("number of queries")
ax.set_title("Per-query NDCG@10 on the 50 test queries")
fig.tight_layout()

# %%
# One query, document by document
# -------------------------------
# Take the query with the median NDCG among those with at least ten
# documents: a typical query, not an outlier.
sizes = np.array([np.sum(qid_test == q) for q in queries])
candidates = np.flatnonzero(sizes >= 10)
pick = candidates[np.argsort(ndcg[candidates])[candidates.size // 2]]
query = queries[pick]
rows = np.flatnonzero(qid_test == query)

# Ranks within the query (its qid tells the ranker the rows are one
# query, which it would otherwise warn about).
model_rank = ranker.rank(X_test[rows], qid=qid_test[rows])
# The best possible order sorts by label; equal labels share their
# best rank.
ideal_rank = (
    pd.Series(-y_test[rows]).rank(method="min").astype(int).to_numpy()
)
table = pd.DataFrame(
    {
        "row": rows,
        "label": y_test[rows].astype(int),
        "score": np.round(scores[rows], 3),
        "model rank": model_rank,
        "ideal rank": ideal_rank,
    }
).sort_values("model rank")
print(
    f"query {query}: {rows.size} documents, NDCG@10 {ndcg[pick]:.4f}"
)
print(table.to_string(index=False))

# %%
# The same ranking as a picture: documents in the order the model puts them,
# bars as long as their scores, coloured by their label.
ordered = table.reset_index(drop=True)
colours = plt.cm.viridis(ordered["label"] / 4)
fig, ax = plt.subplots(figsize=(6, 0.3 * len(ordered) + 1.2))
ax.barh(np.arange(len(ordered)), ordered["score"], color=colours)
ax.set_yticks(
    np.arange(len(ordered)), [f"row {r}" for r in ordered["row"]]
)
ax.invert_yaxis()
ax.set_xlabel("score (higher is ranked higher)")
ax.set_title(f"Test query {query}, NDCG@10 = {ndcg[pick]:.3f}")
handles = [
    plt.Rectangle((0, 0), 1, 1, color=plt.cm.viridis(g / 4))
    for g in range(5)
]
ax.legend(
    handles,
    [f"label {g}" for g in range(5)],
    loc="lower right",
    fontsize=8,
)
fig.tight_layout()
plt.show()
