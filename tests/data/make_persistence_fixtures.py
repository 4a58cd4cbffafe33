"""Write the model files that every later version of sklearn-ltr must still load.

Run once per model file ``format_version``, from the repository root::

    python tests/data/make_persistence_fixtures.py

It fits one small model of each ranker (CalibratedRanker with Platt
scaling), saves them with :func:`sklearn_ltr.persistence.save_model` as
``tests/data/persistence_v<N>/<name>.npz``, and stores in ``expected.npz``
the rows they are evaluated on (with missing values) and what this version
predicts for them. ``tests/test_persistence.py`` loads the files and checks
the predictions. Never regenerate the files of a released format version:
their point is to catch a later version that can no longer read them, or
reads them differently.
"""

import os

import numpy as np

from sklearn_ltr import CalibratedRanker, LambdaMARTRanker, ListNetRanker, XENDCGRanker
from sklearn_ltr.datasets import make_ranking
from sklearn_ltr.persistence import save_model

HERE = os.path.dirname(os.path.abspath(__file__))

MODELS = {
    "lambdamart": LambdaMARTRanker(n_estimators=6, max_leaf_nodes=5, random_state=0),
    "xendcg": XENDCGRanker(n_estimators=6, max_leaf_nodes=5, subsample=0.8, random_state=0),
    "listnet": ListNetRanker(n_estimators=6, max_leaf_nodes=5, max_features=0.7, random_state=0),
    "calibrated_platt": CalibratedRanker(
        n_estimators=6, max_leaf_nodes=5, calibration="platt", random_state=0
    ),
}


def main():
    X, y, qid = make_ranking(
        n_queries=30, docs_per_query=10, n_features=6, missing_rate=0.1, random_state=0
    )
    # A single ranker is written as format 1 (format 2 adds pipelines).
    out_dir = os.path.join(HERE, "persistence_v1")
    os.makedirs(out_dir, exist_ok=True)
    rows = X[:12].copy()
    rows[0, :] = np.nan  # every split's missing-value branch
    expected = {"X": rows}
    for name, model in MODELS.items():
        labels = (y > 0).astype(np.float64) if name.startswith("calibrated") else y
        model.fit(X, labels, qid=qid)
        save_model(model, os.path.join(out_dir, f"{name}.npz"))
        expected[f"{name}_predict"] = model.predict(rows)
        expected[f"{name}_feature_importances"] = model.feature_importances_
        if hasattr(model, "predict_proba"):
            expected[f"{name}_predict_proba"] = model.predict_proba(rows)
    np.savez(os.path.join(out_dir, "expected.npz"), **expected)


if __name__ == "__main__":
    main()
