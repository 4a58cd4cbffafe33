"""
=========================================
Why a document ranks where it does
=========================================

:func:`~sklearn_ltr.inspection.feature_contributions` splits every score into
one exact contribution per feature (path-dependent TreeSHAP, what LightGBM's
``pred_contrib`` computes) plus the model's expected score. A ranking only
depends on score differences within a query, so with ``qid`` the
contributions are centred per query: a bar then says how much a feature lifts
a document above, or pushes it below, the average document of its own query.
:func:`~sklearn_ltr.inspection.explain_pair` answers the question users ask
most: why is A ranked above B?
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.datasets import load_example
from sklearn_ltr.inspection import explain_pair, feature_contributions

(X, y, qid), (X_test, y_test, qid_test) = load_example()
ranker = LambdaMARTRanker(n_estimators=100, random_state=0)
ranker.fit(X, y, qid=qid)
names = np.array([f"f{j}" for j in range(X.shape[1])])

# %%
# One query, centred contributions
# --------------------------------
# Take the test query with the most documents. Each row of the centred
# contributions sums to the document's score minus the query's mean score.
query = np.bincount(qid_test.astype(np.int64)).argmax()
rows = np.flatnonzero(qid_test == query)
X_query = X_test[rows]
scores = ranker.predict(X_query)
centred = feature_contributions(ranker, X_query, qid=qid_test[rows])
assert np.allclose(centred.sum(axis=1), scores - scores.mean())

order = np.argsort(-scores, kind="stable")
top = order[0]
lead = scores[top] - scores.mean()
print(
    f"query {query} ({rows.size} documents): top document, label "
    f"{y_test[rows][top]:g}, {lead:+.3f} above the mean"
)

# The features that move the top document most, and the same features
# for every document of the query (one dot per document).
strongest = np.argsort(-np.abs(centred[top, :-1]))[:8][::-1]
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 4), sharey=True)
left.barh(
    names[strongest],
    centred[top, strongest],
    color=np.where(
        centred[top, strongest] > 0, "tab:green", "tab:red"
    ),
)
left.axvline(0, color="black", linewidth=0.8)
left.set_xlabel(
    "contribution to the top document's score\n"
    "(relative to its query's mean)"
)
for position, feature in enumerate(strongest):
    right.scatter(
        centred[:, feature],
        np.full(rows.size, position),
        s=12,
        alpha=0.6,
        c=y_test[rows],
        cmap="viridis",
        vmin=0,
        vmax=y_test.max(),
    )
right.axvline(0, color="black", linewidth=0.8)
right.set_xlabel(
    "the same feature's contribution\n"
    "for every document (colour: label)"
)
fig.suptitle(f"Why the top document of query {query} ranks first")
fig.tight_layout()

# %%
# Why A above B
# -------------
# ``explain_pair`` returns the difference of two documents' contributions:
# it sums to the difference of their scores, and its largest entries are
# the features that put the first above the second.
a, b = X_query[order[0]], X_query[order[1]]
difference = explain_pair(ranker, a, b)
assert np.isclose(
    difference.sum(), scores[order[0]] - scores[order[1]]
)
for feature in np.argsort(-np.abs(difference[:-1]))[:5]:
    print(
        f"{names[feature]:>4}: A={a[feature]:.3f}  "
        f"B={b[feature]:.3f}  adds {difference[feature]:+.4f} "
        "to A's lead over B"
    )
