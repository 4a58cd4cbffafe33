"""
=====================================================
Grid search with GroupKFold in a Pipeline, two ways
=====================================================

Model selection for rankers needs the query ids in three places: the
ranker's ``fit`` (to form the lists it learns from), the scorer (to compute
NDCG per query instead of over a whole fold) and the splitter (so that a
query's documents never end up on both sides of a split). This example tunes
a :class:`~sklearn_ltr.LambdaMARTRanker` behind a ``StandardScaler`` both
ways the package supports:

* **metadata routing on**: pass ``qid=qid, groups=qid`` to
  ``GridSearchCV.fit`` and scikit-learn routes ``qid`` to the ranker and the
  scorer and ``groups`` to :class:`~sklearn.model_selection.GroupKFold`;
* **routing off** (scikit-learn's default): put the query ids in a DataFrame
  column named ``"qid"``, and wrap the scaler with
  :func:`~sklearn_ltr.compose.exclude_qid` so that it leaves the column alone.

Both give the same folds and, up to rounding in the scaler, the same models
and scores. (Trees need no feature scaling; the scaler stands for any
transformer you put in front of a ranker.)
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ltr import LambdaMARTRanker
from sklearn_ltr.compose import exclude_qid
from sklearn_ltr.datasets import load_example, to_frame
from sklearn_ltr.metrics import ndcg_score, ndcg_scorer

(X, y, qid), (X_test, y_test, qid_test) = load_example()
param_grid = {"lambdamartranker__max_leaf_nodes": [3, 7, 31]}
cv = GroupKFold(n_splits=3)


def make_ranker():
    return LambdaMARTRanker(n_estimators=40, random_state=0)


# %%
# Routing on
# ----------
# The rankers and the package's scorers request ``qid`` by default, so no
# ``set_fit_request`` or ``set_score_request`` calls are needed. Always pass an
# explicit ranking scorer: with scikit-learn 1.6 and 1.7, ``scoring=None``
# inside a ``Pipeline`` loses the query ids.
sklearn.set_config(enable_metadata_routing=True)

pipe = make_pipeline(StandardScaler(), make_ranker())
search_routed = GridSearchCV(
    pipe, param_grid, scoring=ndcg_scorer(10), cv=cv
)
search_routed.fit(X, y, qid=qid, groups=qid)
print("best parameters (routing on): ", search_routed.best_params_)
test_scores = search_routed.predict(X_test)
test_ndcg = ndcg_score(y_test, test_scores, qid=qid_test)
print(f"test NDCG@10: {test_ndcg:.4f}")

sklearn.set_config(enable_metadata_routing=False)

# %%
# Routing off: a ``qid`` column
# -----------------------------
# :func:`~sklearn_ltr.datasets.to_frame` appends the ``"qid"`` column. The
# ranker and the scorer find it there, and the ranker never uses it as a
# feature. ``groups`` still goes to ``fit`` for the splitter.
frame = to_frame(X, qid)
frame_test = to_frame(X_test, qid_test)

pipe = make_pipeline(exclude_qid(StandardScaler()), make_ranker())
search_frame = GridSearchCV(
    pipe, param_grid, scoring=ndcg_scorer(10), cv=cv
)
search_frame.fit(frame, y, groups=qid)
print("best parameters (qid column):", search_frame.best_params_)
test_scores = search_frame.predict(frame_test)
test_ndcg = ndcg_score(y_test, test_scores, qid=qid_test)
print(f"test NDCG@10: {test_ndcg:.4f}")

# The fitted ranker saw 300 features: the qid column went around it.
print(
    "features seen by the ranker:",
    search_frame.best_estimator_[-1].n_features_in_,
)

# %%
# Same folds, same scores
# -----------------------
# The scaler sees a NumPy array in one case and a DataFrame in the other,
# which can change the last digits of the scaled features (around 1e-13
# here); that is enough to flip a near-tie between two splits now and then,
# so the scores agree to a few decimals rather than bit for bit.
routed = search_routed.cv_results_
column = search_frame.cv_results_
gap = np.max(
    np.abs(routed["mean_test_score"] - column["mean_test_score"])
)
print(
    "largest difference of mean CV NDCG@10 between the two ways: "
    f"{gap:.1e}"
)

leaves = np.array(param_grid["lambdamartranker__max_leaf_nodes"])
x = np.arange(leaves.size)
fig, ax = plt.subplots(figsize=(6, 4))
searches = [("routing on", routed), ("qid column", column)]
for offset, (name, res) in zip((-0.2, 0.2), searches):
    ax.bar(
        x + offset,
        res["mean_test_score"],
        width=0.4,
        yerr=res["std_test_score"],
        capsize=4,
        label=name,
    )
ax.set_xticks(x, [str(v) for v in leaves])
ax.set_xlabel("max_leaf_nodes")
ax.set_ylabel("NDCG@10, mean over 3 GroupKFold folds")
ax.set_ylim(0.5, 0.8)
ax.set_title("Grid search: both ways agree")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
